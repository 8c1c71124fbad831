#!/usr/bin/env python3
"""Benchmark: the time from a fork request to the fork's first turn
starting, on a repository of 20,000 files, beside a new session of the same
task started from its base (the same request minus the fork), so that what
the fork itself adds shows.

    cargo build [--release] -p cinch -p cinch-fake-cli
    python3 tests/bench/fork.py [--target-dir target] [--profile debug|release]
        [--files 20000] [--rounds 5]

One `cinch serve` (SQLite) with the fake CLI as claude. The task's first
session runs one turn that changes a file, so its end checkpoint differs
from the base. Then, `--rounds` times each, alternating: a fork at that turn
with a message, and a new session with a prompt. Measured from the request
to the fake CLI starting (its record file appears) and to the session
showing `running`.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from messages import call, free_port, wait_listening, write_operator_config  # noqa: E402


def make_repo(repo, files):
    """A git repository of `files` small files in 100 folders, committed."""
    os.makedirs(repo)
    for n in range(files):
        folder = os.path.join(repo, f"dir{n % 100:03}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"file{n:05}.txt"), "w") as file:
            file.write(f"line one of file {n}\nline two\n")
    subprocess.run(["git", "init", "-q", repo], check=True)
    subprocess.run(["git", "-C", repo, "add", "-A"], check=True)
    subprocess.run(["git", "-C", repo, "-c", "user.name=b", "-c", "user.email=b@b", "commit",
                    "-q", "-m", "init"], check=True)


def write_script(path, record):
    with open(path, "w") as file:
        json.dump({
            "lines": [
                {"type": "system", "subtype": "init", "session_id": "bench", "model": "m"},
                {"type": "result", "subtype": "success", "is_error": False,
                 "result": "Done.", "session_id": "bench"},
            ],
            "write_files": {"dir000/file00000.txt": "changed\n"},
            "record": record,
        }, file)


def wait_for(what, check, seconds=120):
    deadline = time.time() + seconds
    while True:
        value = check()
        if value:
            return value
        if time.time() > deadline:
            sys.exit(f"timed out waiting for {what}")
        time.sleep(0.005)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--target-dir", default=os.environ.get("CARGO_TARGET_DIR", "target"))
    parser.add_argument("--profile", default="release")
    parser.add_argument("--files", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    build = os.path.abspath(os.path.join(args.target_dir, args.profile))
    for binary in ("cinch", "fake-cli"):
        if not os.path.exists(os.path.join(build, binary)):
            sys.exit(f"{build}/{binary} is missing: cargo build -p cinch -p cinch-fake-cli")

    world = tempfile.mkdtemp(prefix="cinch-bench-fork-")
    server = None
    try:
        repo = os.path.join(world, "repo")
        made = time.time()
        make_repo(repo, args.files)
        print(f"a repository of {args.files} files in {time.time() - made:.1f} s")
        bin_dir = os.path.join(world, "bin")
        os.makedirs(bin_dir)
        os.symlink(os.path.join(build, "fake-cli"), os.path.join(bin_dir, "claude"))
        script = os.path.join(world, "script.json")
        home = os.path.join(world, "home")
        os.makedirs(home)
        records = os.path.join(world, "records")
        os.makedirs(records)
        write_operator_config(home, world)
        with open(os.path.join(home, "config.toml"), "a") as file:
            # The fake CLI writes its records there: when one appears, the harness started.
            file.write(f"read_write = [{json.dumps(records)}]\n")
        port = free_port()
        env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": world, "CINCH_HOME": home,
               "FAKE_CLI_SCRIPT": script, "ANTHROPIC_API_KEY": "sk-bench-000000"}
        server = subprocess.Popen(
            [os.path.join(build, "cinch"), "serve", "--listen", f"127.0.0.1:{port}",
             "--repository-root", world],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"
        wait_listening(base, "cinch serve", server, seconds=120)
        with open(os.path.join(home, "admin-token")) as file:
            token = file.read().strip()
        account = call(base, token, "GET", "/v1/accounts")["data"][0]["id"]
        root = f"/v1/accounts/{account}"
        environment = call(base, token, "POST", f"{root}/environments",
                           {"name": "big", "repository": repo})["data"]["id"]
        write_script(script, os.path.join(records, "source.json"))
        task = call(base, token, "POST", f"{root}/tasks",
                    {"prompt": "Change a file.", "environment_id": environment})["data"]["id"]
        source = call(base, token, "GET", f"{root}/tasks/{task}/sessions")["data"][0]["id"]
        session_path = lambda sid: f"{root}/tasks/{task}/sessions/{sid}"  # noqa: E731
        wait_for("the source's turn", lambda: call(base, token, "GET", session_path(source))
                 ["data"]["usage"]["turns"] == 1)

        samples = {"fork": ([], []), "new session": ([], [])}
        for round_ in range(args.rounds):
            for kind in ("fork", "new session"):
                record = os.path.join(records, f"{kind.replace(' ', '-')}-{round_}.json")
                write_script(script, record)
                asked = time.time()
                if kind == "fork":
                    made = call(base, token, "POST", f"{session_path(source)}/fork",
                                {"message": "Try another way."})["data"]
                else:
                    made = call(base, token, "POST", f"{root}/tasks/{task}/sessions",
                                {"prompt": "Try another way."})["data"]
                wait_for("the harness to start", lambda: os.path.exists(record))
                started = time.time() - asked
                wait_for("the session to show running", lambda: call(
                    base, token, "GET", session_path(made["id"]))["data"]["status"] == "running"
                    or call(base, token, "GET", session_path(made["id"]))["data"]["usage"]["turns"])
                running = time.time() - asked
                samples[kind][0].append(started)
                samples[kind][1].append(running)
                wait_for("the turn's end", lambda: call(base, token, "GET", session_path(made["id"]))
                         ["data"]["usage"]["turns"] >= 1)
        print(f"{args.profile} build, {args.files} files, {args.rounds} rounds (seconds, median / max):")
        for kind, (started, running) in samples.items():
            print(f"  {kind:12} harness started {statistics.median(started):.3f} / {max(started):.3f}"
                  f"   session running {statistics.median(running):.3f} / {max(running):.3f}")
        ratio = statistics.median(samples["fork"][0]) / statistics.median(samples["new session"][0])
        print(f"RESULT fork_to_first_turn_s={statistics.median(samples['fork'][0]):.3f} "
              f"new_session_s={statistics.median(samples['new session'][0]):.3f} ratio={ratio:.2f}")
    finally:
        if server is not None:
            server.terminate()
            server.wait()
        shutil.rmtree(world, ignore_errors=True)


if __name__ == "__main__":
    main()
