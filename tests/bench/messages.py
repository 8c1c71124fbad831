#!/usr/bin/env python3
"""Benchmark: GET a page of 50 messages from a real `cinch serve`, loaded by
wrk from another process: on SQLite with the page cache (a page is kept
until the session's messages change) and without it (`[serve]
page_cache_mib = 0`: every request reads the database), and, when given a
server, on PostgreSQL (which reads every page afresh).

    cargo build --release -p cinch -p cinch-fake-cli
    python3 tests/bench/messages.py [--target-dir target] [--duration 10] [--connections 16 32]
        [--postgres postgres://user:password@host/db] [--baseline other-build/release]
        [--read messages|session|task]

Seeds one session with 50+ messages through the API (turns of the fake CLI)
for each server, then runs wrk against `.../messages?limit=50` on each in
turn and prints requests per second and latency percentiles, with each
backend's ratio to SQLite's uncached figure. `--postgres` names a role that
may create databases (CREATEDB): each server gets a database of its own.
`--baseline` runs another build's release folder (its `cinch` and
`fake-cli`) beside this one, in the same run, for a before/after table.
The figures to reach uncached: 10,000 requests a second with p99 at most 10 ms.
`--read session` (or `task`) GETs that session (its task) instead of the
page: one row with its usage rolled up, read every time.
"""

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def call(base, token, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method)
    request.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)


def write_operator_config(home, world, serve_extra=""):
    """The config.toml of a benchmark's server: the operator passes the fake
    CLI its script and key, and lets it read them (they are under `world`)."""
    with open(os.path.join(home, "config.toml"), "w") as file:
        file.write('[serve]\npass_env = ["FAKE_CLI_SCRIPT", "ANTHROPIC_API_KEY"]\n'
                   + serve_extra
                   + f'\n[sandbox]\nread_only = [{json.dumps(world)}]\n')


def wait_listening(base, what, server=None, seconds=60):
    """Waits until the server at `base` answers; exits when it does not
    within `seconds` or `server` (its process) ends first."""
    deadline = time.time() + seconds
    while True:
        try:
            urllib.request.urlopen(f"{base}/openapi.json", timeout=5).close()
            return
        except OSError:
            if (server is not None and server.poll() is not None) or time.time() > deadline:
                sys.exit(f"{what} never listened")
            time.sleep(0.1)


def wait_turns(base, token, path, turns, seconds=60):
    """Waits until the session is idle with `turns` assistant messages, for
    at most `seconds`."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        idle = call(base, token, "GET", path)["data"]["status"] == "idle"
        messages = call(base, token, "GET", f"{path}/messages?limit=200")["data"]
        if idle and sum(m["type"] == "assistant" for m in messages) == turns:
            return
        time.sleep(0.05)
    session = call(base, token, "GET", path)["data"]
    sys.exit(f"the session at {path} never finished turn {turns}: {json.dumps(session)}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--target-dir", default=os.environ.get("CARGO_TARGET_DIR", "target"))
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--connections", type=int, nargs="+", default=[16, 32])
    parser.add_argument("--postgres", help="a PostgreSQL URL whose role may create databases")
    parser.add_argument("--baseline", help="another build's release folder, to run beside")
    parser.add_argument("--read", choices=["messages", "session", "task"], default="messages",
                        help="what is read: the page of messages, or its session or task")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed: apt-get install wrk")
    builds = [("this", os.path.abspath(os.path.join(args.target_dir, "release")))]
    if args.baseline:
        builds.insert(0, ("baseline", os.path.abspath(args.baseline)))
    for _, release in builds:
        for binary in ("cinch", "fake-cli"):
            if not os.path.exists(os.path.join(release, binary)):
                sys.exit(f"{release}/{binary} is missing: cargo build --release -p cinch -p cinch-fake-cli")
    if args.postgres and shutil.which("psql") is None:
        sys.exit("psql is not installed: apt-get install postgresql-client")

    world = tempfile.mkdtemp(prefix="cinch-bench-")
    repo = os.path.join(world, "repo")
    os.makedirs(repo)
    subprocess.run(["git", "init", "-q", repo], check=True)
    subprocess.run(["git", "-C", repo, "-c", "user.name=b", "-c", "user.email=b@b", "commit",
                    "-q", "--allow-empty", "-m", "init"], check=True)
    script = os.path.join(world, "script.json")
    with open(script, "w") as file:
        json.dump({"lines": [
            {"type": "system", "subtype": "init", "session_id": "bench", "model": "m"},
            {"type": "result", "subtype": "success", "is_error": False,
             "result": "Done: a reply of a typical length, with **some** markdown in it.",
             "session_id": "bench"},
        ]}, file)
    servers, databases, rows = [], [], []
    try:
        # (build, backend, cache) -> (url, token)
        targets = {}
        for build, release in builds:
            bin_dir = os.path.join(world, f"bin-{build}")
            os.makedirs(bin_dir)
            os.symlink(os.path.join(release, "fake-cli"), os.path.join(bin_dir, "claude"))
            cinch = os.path.join(release, "cinch")
            runs = [("sqlite", "cached", None), ("sqlite", "uncached", None)]
            if args.postgres:
                database = create_database(args.postgres, f"cinch_bench_{build}")
                databases.append(database)
                runs.append(("postgres", "uncached", database[1]))
            for backend, cache, url in runs:
                label = f"{build}-{backend}-{cache}"
                server, page, token = seed(cinch, world, label, bin_dir, repo, script, url,
                                           cache == "cached", args.read)
                servers.append(server)
                targets[(build, backend, cache)] = (page, token)
        for connections in args.connections:
            for (build, backend, cache), (url, token) in targets.items():
                output = subprocess.run(
                    ["wrk", "-t2", f"-c{connections}", f"-d{args.duration}s", "--latency",
                     "-H", f"Authorization: Bearer {token}", url],
                    check=True, capture_output=True, text=True).stdout
                print(output)
                rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
                p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", output)
                p99_ms = float(p99.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[p99.group(2)]
                errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
                row = (build, backend, cache, connections, rps, p99_ms,
                       int(errors.group(1)) if errors else 0)
                rows.append(row)
                print("RESULT build={} backend={} cache={} connections={} requests/s={:.0f} "
                      "p99_ms={:.2f} non_2xx={}".format(*row))
    finally:
        for server in servers:
            server.terminate()
            server.wait()
        for database in databases:
            drop_database(args.postgres, database[0])
        shutil.rmtree(world, ignore_errors=True)
    table(rows)


def table(rows):
    """Prints the results side by side, each with its ratio to the same
    build's uncached SQLite figure at the same load (and, with a baseline,
    this build's ratio to the baseline's)."""
    sqlite = {(r[0], r[3]): r[4] for r in rows if r[1] == "sqlite" and r[2] == "uncached"}
    before = {(r[1], r[2], r[3]): r[4] for r in rows if r[0] == "baseline"}
    print("\n| build | backend | page cache | connections | requests/s | p99 ms | non-2xx "
          "| / SQLite uncached | / baseline |")
    print("|---|---|---|---|---|---|---|---|---|")
    for build, backend, cache, connections, rps, p99_ms, errors in rows:
        ratio = rps / sqlite[(build, connections)]
        baseline = ""
        if build != "baseline" and (backend, cache, connections) in before:
            baseline = f"{rps / before[(backend, cache, connections)]:.2f}"
        print(f"| {build} | {backend} | {cache} | {connections} | {rps:.0f} | {p99_ms:.2f} "
              f"| {errors} | {ratio:.2f} | {baseline} |")
    print("\n(target uncached: >= 10000 requests/s with p99 <= 10 ms)")


def create_database(server, name):
    """Creates the database `name` on the server `server` names (dropping a
    leftover of an earlier run) and returns its name and URL."""
    for statement in (f"DROP DATABASE IF EXISTS {name}", f"CREATE DATABASE {name}"):
        subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", server, "-c", statement],
                       check=True)
    base, _, query = server.partition("?")
    url = base[:base.rindex("/")] + "/" + name + (f"?{query}" if query else "")
    return name, url


def drop_database(server, name):
    subprocess.run(["psql", "-q", server, "-c", f"DROP DATABASE IF EXISTS {name}"], check=False)


def seed(cinch, world, name, bin_dir, repo, script, database, page_cache, what):
    """Starts `cinch serve` on `database` (its home's SQLite file when None)
    with a home of its own, with or without the page cache, seeds a session
    with 26 turns, and returns the server, the URL of `what` to read (the
    page, the session or the task) and the admin's
    token."""
    home = os.path.join(world, f"home-{name}")
    os.makedirs(home)
    write_operator_config(home, world, "" if page_cache else "page_cache_mib = 0\n")
    port = free_port()
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": world, "CINCH_HOME": home,
           "FAKE_CLI_SCRIPT": script, "ANTHROPIC_API_KEY": "sk-bench-000000"}
    if database:
        env["CINCH_DATABASE"] = database
    server = subprocess.Popen([cinch, "serve", "--listen", f"127.0.0.1:{port}"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    token = server.stdout.readline().strip()
    if not token:
        server.wait()
        sys.exit(f"cinch serve on {name} printed no token: give it an empty database")
    base = f"http://127.0.0.1:{port}"
    # The token is printed before the server listens.
    wait_listening(base, f"cinch serve on {name}")
    account = call(base, token, "GET", "/v1/accounts")["data"][0]["id"]
    prefix = f"/v1/accounts/{account}"
    environment = call(base, token, "POST", f"{prefix}/environments",
                       {"name": "bench", "repository": repo})["data"]["id"]
    task = call(base, token, "POST", f"{prefix}/tasks",
                {"prompt": "Message 0", "environment_id": environment})["data"]["id"]
    session = call(base, token, "GET", f"{prefix}/tasks/{task}/sessions")["data"][0]["id"]
    session_path = f"{prefix}/tasks/{task}/sessions/{session}"
    wait_turns(base, token, session_path, 1)
    for n in range(1, 26):
        call(base, token, "POST", f"{session_path}/messages", {"message": f"Message {n}"})
        wait_turns(base, token, session_path, n + 1)
    page = call(base, token, "GET", f"{session_path}/messages?limit=50")
    print(f"seeded {name}: a page holds {len(page['data'])} messages, "
          f"{len(json.dumps(page))} bytes")
    read = {"messages": f"{session_path}/messages?limit=50", "session": session_path,
            "task": f"{prefix}/tasks/{task}"}[what]
    return server, f"{base}{read}", token


if __name__ == "__main__":
    main()
