#!/usr/bin/env python3
"""Benchmark: GET a page of 50 messages from a real `cinch serve` on SQLite,
and beside it on PostgreSQL when given one, loaded by wrk from another process.

    cargo build --release -p cinch -p cinch-fake-cli
    python3 tests/bench/messages.py [--target-dir target] [--duration 10] [--connections 32]
        [--postgres postgres://user:password@host/empty_db]

Seeds one session with 50+ messages through the API (turns of the fake CLI)
on each backend, then runs wrk against `.../messages?limit=50` on each in
turn and prints requests per second, latency percentiles and, with
PostgreSQL, its ratio to SQLite. The figure to reach on SQLite: 5,000
requests a second with p99 under 10 ms.
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


def wait_turns(base, token, path, turns):
    """Waits until the session is idle with `turns` assistant messages."""
    deadline = time.time() + 60
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
    parser.add_argument("--postgres", help="an empty PostgreSQL database's URL, to compare")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed: apt-get install wrk")
    release = os.path.abspath(os.path.join(args.target_dir, "release"))
    cinch, fake = os.path.join(release, "cinch"), os.path.join(release, "fake-cli")
    for binary in (cinch, fake):
        if not os.path.exists(binary):
            sys.exit(f"{binary} is missing: cargo build --release -p cinch -p cinch-fake-cli")

    world = tempfile.mkdtemp(prefix="cinch-bench-")
    repo, bin_dir = (os.path.join(world, name) for name in ("repo", "bin"))
    for folder in (repo, bin_dir):
        os.makedirs(folder)
    os.symlink(fake, os.path.join(bin_dir, "claude"))
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
    results = {}
    servers = []
    try:
        backends = [("sqlite", None)] + ([("postgres", args.postgres)] if args.postgres else [])
        urls = {}
        for name, database in backends:
            server, url, token = seed(cinch, world, name, bin_dir, repo, script, database)
            servers.append(server)
            urls[name] = (url, token)
        for connections in args.connections:
            for name, (url, token) in urls.items():
                output = subprocess.run(
                    ["wrk", "-t2", f"-c{connections}", f"-d{args.duration}s", "--latency",
                     "-H", f"Authorization: Bearer {token}", url],
                    check=True, capture_output=True, text=True).stdout
                print(output)
                rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
                p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", output)
                p99_ms = float(p99.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[p99.group(2)]
                errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
                results[(name, connections)] = rps
                ratio = ""
                if name != "sqlite":
                    ratio = f" ratio_to_sqlite={rps / results[('sqlite', connections)]:.2f}"
                print(f"RESULT backend={name} connections={connections} requests/s={rps:.0f} "
                      f"p99_ms={p99_ms:.2f} non_2xx={errors.group(1) if errors else 0}{ratio} "
                      "(target on SQLite: >= 5000 requests/s, p99 < 10 ms)")
    finally:
        for server in servers:
            server.terminate()
            server.wait()
        shutil.rmtree(world, ignore_errors=True)


def seed(cinch, world, name, bin_dir, repo, script, database):
    """Starts `cinch serve` on `database` (its home's SQLite file when None)
    with a home of its own, seeds a session with 26 turns, and returns the
    server, the page's URL and the admin's token."""
    home = os.path.join(world, f"home-{name}")
    os.makedirs(home)
    # The operator passes the fake CLI its script and key, and lets it read them.
    with open(os.path.join(home, "config.toml"), "w") as file:
        file.write('[serve]\npass_env = ["FAKE_CLI_SCRIPT", "ANTHROPIC_API_KEY"]\n\n'
                   f'[sandbox]\nread_only = [{json.dumps(world)}]\n')
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
    deadline = time.time() + 60
    while True:
        try:
            urllib.request.urlopen(f"{base}/openapi.json", timeout=5).close()
            break
        except OSError:
            if time.time() > deadline:
                sys.exit(f"cinch serve on {name} never listened")
            time.sleep(0.1)
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
    return server, f"{base}{session_path}/messages?limit=50", token


if __name__ == "__main__":
    main()
