#!/usr/bin/env python3
"""Benchmark: turns per minute with the fake CLI on 1, 2 and 3 `cinch serve`
nodes over one PostgreSQL database, each node with its own home, address and
id, and the ratio of each to one node.

    cargo build --release -p cinch -p cinch-fake-cli
    python3 tests/bench/nodes.py --postgres postgres://user:password@host/db
        [--target-dir target] [--profile release] [--nodes 1 2 3] [--sessions-per-node 8]
        [--max-turns 4] [--turn-ms 500] [--duration 60]

For each node count, a fresh database: the nodes start, sessions are created
round robin through the nodes (each runs on the node it was created on), and
for `--duration` seconds every session that is idle gets its next message,
posted through any node. A turn of the fake CLI prints two lines
`--turn-ms` apart. Counted: the turns that ended within the window. The nodes
share this machine's cores, so the figure says how the nodes divide one
machine's work, not what separate machines would add. Each session has a
repository of its own. A node count may be given twice (`--nodes 1 2 3 1`)
to see the machine's drift within the run. `--postgres` names a
role that may create databases (CREATEDB).
"""

import argparse
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from messages import (call, create_database, drop_database, free_port,  # noqa: E402
                      wait_listening, write_operator_config)


def start_node(cinch, world, name, bin_dir, script, database, max_turns):
    """Starts node `name` on `database` and returns (process, base URL,
    token or None): only the first node on an empty database prints one."""
    home = os.path.join(world, f"home-{name}")
    os.makedirs(home)
    write_operator_config(home, world)
    port = free_port()
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": world, "CINCH_HOME": home,
           "FAKE_CLI_SCRIPT": script, "ANTHROPIC_API_KEY": "sk-bench-000000",
           "CINCH_DATABASE": database}
    server = subprocess.Popen(
        [cinch, "serve", "--listen", f"127.0.0.1:{port}", "--node-id", name,
         "--max-turns", str(max_turns), "--retry-seconds", "1"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    wait_listening(base, f"node {name}", server, seconds=120)
    token_file = os.path.join(home, "admin-token")
    if not os.path.exists(token_file):
        return server, base, None
    with open(token_file) as file:
        return server, base, file.read().strip()


def measure(cinch, world, bin_dir, script, database, label, nodes, sessions_per_node,
            max_turns, duration):
    """Runs `nodes` nodes on `database` and returns the turns that ended in
    `duration` seconds. Each session works in a repository of its own: git
    work on one repository is serialised on each node, which would be the
    figure instead."""
    servers = []
    try:
        bases, token = [], None
        for n in range(nodes):
            server, base, printed = start_node(cinch, world, f"{label}-{n + 1}", bin_dir,
                                               script, database, max_turns)
            servers.append(server)
            bases.append(base)
            token = token or printed
        account = call(bases[0], token, "GET", "/v1/accounts")["data"][0]["id"]
        prefix = f"/v1/accounts/{account}"
        sessions = []
        for n in range(nodes * sessions_per_node):
            base = bases[n % nodes]
            repo = new_repository(os.path.join(world, f"repo-{label}-{n}"))
            environment = call(base, token, "POST", f"{prefix}/environments",
                               {"name": f"bench-{n}", "repository": repo})["data"]["id"]
            task = call(base, token, "POST", f"{prefix}/tasks",
                        {"prompt": "Warm up.", "environment_id": environment})["data"]["id"]
            session = call(base, token, "GET", f"{prefix}/tasks/{task}/sessions")["data"][0]["id"]
            sessions.append(f"{prefix}/tasks/{task}/sessions/{session}")
        # Every session's first turn (its workspace's boot) before the window.
        wait_all_idle(bases[0], token, sessions, 300)
        ended_before = count_turns(bases[0], token, sessions)
        rotation = itertools.cycle(bases)
        start = time.time()
        with ThreadPoolExecutor(max_workers=8) as pool:
            while time.time() - start < duration:
                states = list(pool.map(lambda path: status(bases[0], token, path), sessions))
                idle = [path for path, state in zip(sessions, states) if state == "idle"]
                posts = [(next(rotation), path) for path in idle]
                list(pool.map(lambda post: call(post[0], token, "POST", f"{post[1]}/messages",
                                                {"message": "Next."}), posts))
                time.sleep(0.1)
        elapsed = time.time() - start
        ended = count_turns(bases[0], token, sessions) - ended_before
        return ended, elapsed
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            server.wait()


def new_repository(path):
    os.makedirs(path)
    subprocess.run(["git", "init", "-q", path], check=True)
    subprocess.run(["git", "-C", path, "-c", "user.name=b", "-c", "user.email=b@b", "commit",
                    "-q", "--allow-empty", "-m", "init"], check=True)
    return path


def status(base, token, path):
    return call(base, token, "GET", path)["data"]["status"]


def wait_all_idle(base, token, sessions, seconds):
    deadline = time.time() + seconds
    while any(status(base, token, path) != "idle" for path in sessions):
        if time.time() > deadline:
            sys.exit("the sessions never all came to idle")
        time.sleep(0.2)


def count_turns(base, token, sessions):
    """The turns of `sessions` that ended."""
    ended = 0
    for path in sessions:
        messages = call(base, token, "GET", f"{path}/messages?limit=200")["data"]
        ended += sum(m["type"] == "assistant" and m["turn"]["status"] != "running"
                     for m in messages)
    return ended


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--postgres", required=True,
                        help="a PostgreSQL URL whose role may create databases")
    parser.add_argument("--target-dir", default=os.environ.get("CARGO_TARGET_DIR", "target"))
    parser.add_argument("--profile", default="release")
    parser.add_argument("--nodes", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--sessions-per-node", type=int, default=8)
    parser.add_argument("--max-turns", type=int, default=4)
    parser.add_argument("--turn-ms", type=int, default=500)
    parser.add_argument("--duration", type=int, default=60)
    args = parser.parse_args()
    if shutil.which("psql") is None:
        sys.exit("psql is not installed: apt-get install postgresql-client")
    build = os.path.abspath(os.path.join(args.target_dir, args.profile))
    for binary in ("cinch", "fake-cli"):
        if not os.path.exists(os.path.join(build, binary)):
            sys.exit(f"{build}/{binary} is missing: cargo build --release -p cinch -p cinch-fake-cli")

    world = tempfile.mkdtemp(prefix="cinch-bench-nodes-")
    script = os.path.join(world, "script.json")
    with open(script, "w") as file:
        json.dump({"line_delay_ms": args.turn_ms, "lines": [
            {"type": "system", "subtype": "init", "session_id": "bench", "model": "m"},
            {"type": "result", "subtype": "success", "is_error": False,
             "result": "Done.", "session_id": "bench"},
        ]}, file)
    bin_dir = os.path.join(world, "bin")
    os.makedirs(bin_dir)
    os.symlink(os.path.join(build, "fake-cli"), os.path.join(bin_dir, "claude"))
    rows = []
    try:
        for run, nodes in enumerate(args.nodes):
            label = f"r{run}n{nodes}"
            name, url = create_database(args.postgres, f"cinch_bench_nodes_{label}")
            try:
                ended, elapsed = measure(os.path.join(build, "cinch"), world, bin_dir, script,
                                         url, label, nodes, args.sessions_per_node,
                                         args.max_turns, args.duration)
            finally:
                drop_database(args.postgres, name)
            per_minute = ended * 60 / elapsed
            rows.append((nodes, ended, elapsed, per_minute))
            print(f"RESULT nodes={nodes} turns={ended} seconds={elapsed:.1f} "
                  f"turns_per_minute={per_minute:.0f}", flush=True)
    finally:
        shutil.rmtree(world, ignore_errors=True)
    one = next((row[3] for row in rows if row[0] == 1), None)
    print(f"\n{args.profile} build; {args.sessions_per_node} sessions and --max-turns "
          f"{args.max_turns} per node; turns of {args.turn_ms} ms")
    print("| nodes | turns | seconds | turns/min | / one node |")
    print("|---|---|---|---|---|")
    for nodes, ended, elapsed, per_minute in rows:
        ratio = f"{per_minute / one:.2f}" if one else ""
        print(f"| {nodes} | {ended} | {elapsed:.0f} | {per_minute:.0f} | {ratio} |")


if __name__ == "__main__":
    main()
