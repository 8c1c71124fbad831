#!/usr/bin/env python3
"""Benchmark: live progress end to end through the API. A real `cinch serve`
runs N sessions at once, each turn a fake CLI writing ticks at R lines a
second; a stream of each session's events is read over SSE, all streams on
one client thread.

    cargo build --release -p cinch -p cinch-fake-cli
    python3 tests/bench/sse.py [--target-dir target] [--sessions 200] [--rate 10] [--seconds 10]

Each tick carries the microsecond it was written, so the client times every
line from the CLI's write to its arrival over SSE. Prints lines lost, latency
percentiles, the CPU of `cinch serve` per delivered line, and the client's
own CPU (it must keep up for the latencies to mean anything). Targets: 0 lost,
p99 <= 5 ms, server CPU <= 10 us a line.
"""

import argparse
import json
import os
import queue
import resource
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from messages import (call, free_port, wait_listening, wait_turns,  # noqa: E402
                      write_operator_config)

TICK = ('{"type":"assistant","session_id":"bench","message":{"content":'
        '[{"type":"text","text":"tick {n} {now_us}"}]}}')


def run_one_turn(base, token, prefix, environment, seconds):
    """Creates a task in `environment` and waits, at most `seconds`, until its
    session's turn has ended."""
    task = call(base, token, "POST", f"{prefix}/tasks",
                {"prompt": "Warm up", "environment_id": environment})["data"]["id"]
    session = call(base, token, "GET", f"{prefix}/tasks/{task}/sessions")["data"][0]["id"]
    wait_turns(base, token, f"{prefix}/tasks/{task}/sessions/{session}", 1, seconds)


def machine_cpu():
    """Busy seconds of every CPU of the machine (all processes, the kernel too)."""
    with open("/proc/stat") as stat:
        fields = [int(field) for field in stat.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def process_cpu(pid):
    """User+sys seconds of process `pid`, all its threads."""
    return sum(process_user_system(pid))


def resident_mib(pid):
    """The resident memory of process `pid` now, and its peak since it began, in MiB."""
    fields = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            fields[name] = value.split()
    return int(fields["VmRSS"][0]) / 1024, int(fields["VmHWM"][0]) / 1024


def process_user_system(pid):
    """User and system (kernel) seconds of process `pid`, all its threads."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) / os.sysconf("SC_CLK_TCK"), int(fields[12]) / os.sysconf("SC_CLK_TCK")


class Stream:
    """One session's SSE stream: its bytes as they come, parsed into events."""

    def __init__(self, sock):
        self.sock = sock
        self.buffer = b""
        self.headers_done = False
        self.chunk_left = 0
        self.body = b""
        self.name, self.data = "", []
        self.latencies_us, self.arrivals_us = [], []
        self.ticks, self.in_order, self.error = 0, True, None
        self.ended_us = None

    def take(self, received, now):
        """Parses what came in one receive; every event it completes arrived
        at `now`. Returns whether the stream is over."""
        self.buffer += received
        if not self.headers_done:
            head, found, rest = self.buffer.partition(b"\r\n\r\n")
            if not found:
                return False
            status = head.split(b"\r\n", 1)[0]
            if status.split(b" ")[1:2] != [b"200"]:
                raise RuntimeError(f"status line {status!r}")
            self.headers_done, self.buffer = True, rest
        # Chunked framing: a hex size line, the chunk, a CRLF.
        while True:
            if self.chunk_left == 0:
                size_line, found, rest = self.buffer.partition(b"\r\n")
                if not found:
                    break
                if size_line == b"":
                    self.buffer = rest
                    continue
                self.chunk_left = int(size_line.split(b";")[0], 16)
                if self.chunk_left == 0:
                    raise RuntimeError(f"the stream ended after {self.ticks} ticks, "
                                       "before its turn did")
                self.buffer = rest
            piece = self.buffer[:self.chunk_left]
            self.body += piece
            self.buffer = self.buffer[len(piece):]
            self.chunk_left -= len(piece)
            if self.chunk_left > 0:
                break
        lines = self.body.split(b"\n")
        self.body = lines.pop()
        for raw in lines:
            if self.line(raw.decode().rstrip("\r"), now):
                return True
        return False

    def line(self, line, now):
        if line.startswith("event:"):
            self.name = line[6:].strip()
        elif line.startswith("data:"):
            self.data.append(line[5:].strip())
        elif line == "" and self.data:
            payload = json.loads("".join(self.data))
            self.data = []
            if self.name == "tool.progress":
                for text in payload.get("lines", []):
                    parts = text.split(" ")
                    if len(parts) == 3 and parts[0] == "tick":
                        n, written = int(parts[1]), int(parts[2])
                        self.in_order &= n == self.ticks + 1
                        self.ticks += 1
                        self.latencies_us.append(now - written)
                        self.arrivals_us.append(now)
            elif self.name == "tool.ended":
                self.ended_us = now
                return True
        return False


class Client(threading.Thread):
    """Reads every session's SSE stream on one thread (a thread a stream
    measured Python's lock hand-overs, not the server), stamping each event
    with the time the bytes that completed it were received."""

    def __init__(self, port, token):
        super().__init__(daemon=True)
        self.port, self.token = port, token
        self.streams, self.stop, self.done_adding = [], False, False
        self.added = queue.Queue()
        self.selector = selectors.DefaultSelector()

    def open(self, path):
        """Opens a stream of `path`; it is read from now on."""
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        sock.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      f"Authorization: Bearer {self.token}\r\n"
                      "Accept: text/event-stream\r\n\r\n").encode())
        sock.setblocking(False)
        stream = Stream(sock)
        self.streams.append(stream)
        self.added.put(stream)

    def run(self):
        open_streams = 0
        while not self.stop:
            while not self.added.empty():
                stream = self.added.get()
                self.selector.register(stream.sock, selectors.EVENT_READ, stream)
                open_streams += 1
            for key, _ in self.selector.select(timeout=0.05):
                stream = key.data
                try:
                    received = stream.sock.recv(1 << 16)
                    now = time.time_ns() // 1000
                    if not received:
                        raise RuntimeError(f"the stream ended after {stream.ticks} ticks, "
                                           "before its turn did")
                    over = stream.take(received, now)
                except Exception as error:  # reported, not raised: the others go on
                    stream.error, over = repr(error), True
                if over:
                    self.selector.unregister(stream.sock)
                    stream.sock.close()
                    open_streams -= 1
            if open_streams == 0 and self.added.empty() and self.streams and self.done_adding:
                return


class Sampler(threading.Thread):
    """Samples the server's CPU and the lines delivered so far, twice a
    second, so that the cost of a line can be read over the time every turn
    ran (no turn starting or finishing)."""

    def __init__(self, pid, clients):
        super().__init__(daemon=True)
        self.pid, self.clients, self.samples, self.stop = pid, clients, [], False
        self.rss_peak = 0.0

    def run(self):
        while not self.stop:
            # Not the kernel's peak (VmHWM): start-up, compiling the drivers,
            # holds more than the turns do.
            self.rss_peak = max(self.rss_peak, resident_mib(self.pid)[0])
            user, system = process_user_system(self.pid)
            self.samples.append((time.time_ns() // 1000, user + system, system,
                                 sum(client.ticks for client in self.clients)))
            time.sleep(0.5)

    def while_all_ran(self, clients):
        """The server's CPU seconds, the part of them spent in the kernel,
        and the lines delivered between the first sample after every turn's
        first tick and the last sample before any turn ended."""
        window = all_ran(clients)
        if not window:
            return 0.0, 0.0, 0
        inside = [s for s in self.samples if window[0] <= s[0] <= window[1]]
        if len(inside) < 2:
            return 0.0, 0.0, 0
        first, last = inside[0], inside[-1]
        return last[1] - first[1], last[2] - first[2], last[3] - first[3]


def start_and_end_cpu(sampler, clients, cpu_before, cpu_after, line_cpu):
    """`cinch serve`'s CPU seconds for the sessions' starts (from the first
    request until every turn ticked) and for the turns' ends (from the first
    end on), each less the lines delivered meanwhile at `line_cpu` seconds a
    line (the cost while every turn ran); None without such a time."""
    window = all_ran(clients)
    if not window or line_cpu <= 0:
        return None
    started = [s for s in sampler.samples if s[0] >= window[0]]
    ending = [s for s in sampler.samples if s[0] <= window[1]]
    if not started or not ending:
        return None
    received = sum(client.ticks for client in clients)
    starts = started[0][1] - cpu_before - started[0][3] * line_cpu
    ends = cpu_after - ending[-1][1] - (received - ending[-1][3]) * line_cpu
    return starts, ends


def all_ran(clients):
    """From the last turn's first tick to the first turn's end, in
    microseconds since the epoch; None when there was no such time."""
    first_ticks = [c.arrivals_us[0] for c in clients if c.arrivals_us]
    ends = [c.ended_us for c in clients if c.ended_us]
    if len(first_ticks) < len(clients) or not ends or max(first_ticks) >= min(ends):
        return None
    return max(first_ticks), min(ends)


def timeline(clients, seconds):
    """Each window's p99/p50 latency in ms, from the first arrival on."""
    pairs = [(arrival, latency) for c in clients
             for latency, arrival in zip(c.latencies_us, c.arrivals_us)]
    if not pairs:
        return "(no lines)"
    first = min(arrival for arrival, _ in pairs)
    windows = {}
    for arrival, latency in pairs:
        windows.setdefault(int((arrival - first) / 1e6 / seconds), []).append(latency)
    return " ".join(f"{n * seconds:g}s:{percentile(w, 0.99) / 1000:.0f}/{percentile(w, 0.5) / 1000:.0f}"
                    for n, w in sorted(windows.items()))


def percentile(values, q):
    values = sorted(values)
    return values[round((len(values) - 1) * q)] if values else 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--target-dir", default=os.environ.get("CARGO_TARGET_DIR", "target"))
    parser.add_argument("--cinch", help="the cinch binary (default: <target-dir>/release/cinch)")
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--rate", type=float, default=10.0)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--timeline", type=float, metavar="SECONDS",
                        help="also print the p99 and p50 of each window of this many seconds, "
                             "by arrival: a stall that comes back at an interval shows as a beat")
    parser.add_argument("--busy", type=int, default=0,
                        help="turns started first whose CLI keeps a CPU busy for the whole run "
                             "(as CLIs running builds), their events not read")
    parser.add_argument("--warm", type=int, default=0, metavar="TURNS",
                        help="run this many turns like the others, one after another, to their "
                             "ends before measuring: the memory a turn then grows serve by is its "
                             "own, not the server's caches (SQLite's pages, the allocator's), "
                             "which its first turns fill")
    args = parser.parse_args()
    release = os.path.abspath(os.path.join(args.target_dir, "release"))
    cinch = os.path.abspath(args.cinch or os.path.join(release, "cinch"))
    fake = os.path.join(release, "fake-cli")
    # Without a cinch-helper beside it, cinch starts its sandboxed commands and
    # supervisors as itself, a binary twenty times the size: the starts would
    # be measured dearer than they are (a copied binary is the usual cause).
    helper = os.path.join(os.path.dirname(cinch), "cinch-helper")
    for binary in (cinch, helper, fake):
        if not os.path.exists(binary):
            sys.exit(f"{binary} is missing: cargo build --release -p cinch -p cinch-fake-cli "
                     "(with --cinch, copy cinch-helper of the same build beside it)")

    world = tempfile.mkdtemp(prefix="cinch-bench-sse-")
    home, repo, bin_dir = (os.path.join(world, name) for name in ("home", "repo", "bin"))
    for folder in (home, repo, bin_dir):
        os.makedirs(folder)
    os.symlink(fake, os.path.join(bin_dir, "claude"))
    subprocess.run(["git", "init", "-q", repo], check=True)
    subprocess.run(["git", "-C", repo, "-c", "user.name=b", "-c", "user.email=b@b", "commit",
                    "-q", "--allow-empty", "-m", "init"], check=True)
    script = os.path.join(world, "script.json")
    with open(script, "w") as file:
        json.dump({"lines_per_second": args.rate, "duration_ms": args.seconds * 1000,
                   "tick_line": TICK}, file)
    write_operator_config(home, world)
    port = free_port()
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": world, "CINCH_HOME": home,
           "FAKE_CLI_SCRIPT": script, "ANTHROPIC_API_KEY": "sk-bench-000000"}
    server = subprocess.Popen([cinch, "serve", "--listen", f"127.0.0.1:{port}",
                               "--max-turns", str(args.sessions)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        token = server.stdout.readline().strip()
        if not token:
            sys.exit("cinch serve printed no token")
        base = f"http://127.0.0.1:{port}"
        # The token is printed before the server listens.
        wait_listening(base, "cinch serve", server)
        account = call(base, token, "GET", "/v1/accounts")["data"][0]["id"]
        prefix = f"/v1/accounts/{account}"
        environment = call(base, token, "POST", f"{prefix}/environments",
                           {"name": "bench", "repository": repo})["data"]["id"]
        if args.busy:
            busy_script = json.dumps({"busy_ms": (args.seconds + 3) * 1000})
            busy = call(base, token, "POST", f"{prefix}/environments",
                        {"name": "busy", "repository": repo,
                         "env": {"FAKE_CLI_SCRIPT": busy_script}})["data"]["id"]
            for n in range(args.busy):
                call(base, token, "POST", f"{prefix}/tasks",
                     {"prompt": f"Build {n}", "environment_id": busy})
        expected = int(args.rate * args.seconds)
        # What each turn run before the measured ones grew serve by, in MiB.
        warm_mib = []
        for _ in range(args.warm):
            before_mib, _ = resident_mib(server.pid)
            run_one_turn(base, token, prefix, environment, args.seconds + 60)
            warm_mib.append(resident_mib(server.pid)[0] - before_mib)
        reader = Client(port, token)
        rss_idle, _ = resident_mib(server.pid)
        cpu_before, client_before = process_cpu(server.pid), resource.getrusage(
            resource.RUSAGE_SELF)
        machine_before = machine_cpu()
        wall = wall_start = time.time()
        reader.start()
        # How long each set-up request took to answer, in µs: the set-up is
        # one request after another, so these bound how soon all can run.
        creating_us, listing_us = [], []
        for n in range(args.sessions):
            asked = time.perf_counter()
            task = call(base, token, "POST", f"{prefix}/tasks",
                        {"prompt": f"Tick {n}", "environment_id": environment})["data"]["id"]
            listed = time.perf_counter()
            session = call(base, token, "GET", f"{prefix}/tasks/{task}/sessions")["data"][0]["id"]
            creating_us.append((listed - asked) * 1e6)
            listing_us.append((time.perf_counter() - listed) * 1e6)
            reader.open(f"{prefix}/tasks/{task}/sessions/{session}/events")
        reader.done_adding = True
        clients = reader.streams
        started = time.time() - wall
        setup_cpu = machine_cpu() - machine_before
        steady_cpu, steady_from_us = process_cpu(server.pid), time.time_ns() // 1000
        sampler = Sampler(server.pid, clients)
        sampler.start()
        reader.join(timeout=args.seconds + 300)
        reader.stop = True
        sampler.stop = True
        sampler.join()
        running_cpu, running_system, running_lines = sampler.while_all_ran(clients)
        rss_peak = sampler.rss_peak
        first_ticks = [c.arrivals_us[0] for c in clients if c.arrivals_us]
        all_running_s = ((max(first_ticks) / 1e6 - wall_start)
                         if len(first_ticks) == len(clients) else float("nan"))
        wall = time.time() - wall
        server_cpu = process_cpu(server.pid) - cpu_before
        steady_cpu = server_cpu - (steady_cpu - cpu_before)
        steady_lines = sum(us >= steady_from_us for c in clients for us in c.arrivals_us)
        client_after = resource.getrusage(resource.RUSAGE_SELF)
        client_cpu = (client_after.ru_utime - client_before.ru_utime
                      + client_after.ru_stime - client_before.ru_stime)
        received = sum(client.ticks for client in clients)
        lost = expected * args.sessions - received
        latencies = [us for client in clients for us in client.latencies_us]
        errors = [client.error for client in clients if client.error]
        print(f"{args.sessions} sessions, {args.rate} lines/s each for {args.seconds} s: "
              f"started in {started:.1f} s, wall {wall:.1f} s")
        print(f"  set-up requests, answered in: POST tasks p50 "
              f"{percentile(creating_us, 0.5) / 1000:.2f} ms, p99 "
              f"{percentile(creating_us, 0.99) / 1000:.2f} ms, "
              f"{sum(creating_us) / 1e6:.1f} s in all; GET its sessions p50 "
              f"{percentile(listing_us, 0.5) / 1000:.2f} ms, "
              f"{sum(listing_us) / 1e6:.1f} s in all")
        print(f"  lines: {received} of {expected * args.sessions} received, {lost} lost; "
              f"{sum(not c.in_order for c in clients)} streams out of order; errors {errors[:3]}")

        def spread(latencies):
            return (f"p50 {percentile(latencies, 0.5) / 1000:.2f} ms"
                    f"  p99 {percentile(latencies, 0.99) / 1000:.2f} ms"
                    f"  max {percentile(latencies, 1.0) / 1000:.2f} ms ({len(latencies)} lines)")

        def arriving(when):
            return [latency for c in clients
                    for latency, arrival in zip(c.latencies_us, c.arrivals_us) if when(arrival)]

        print(f"  latency CLI write -> SSE client: {spread(latencies)}")
        if args.timeline:
            print(f"  p99/p50 in ms by {args.timeline} s window of arrival: "
                  + timeline(clients, args.timeline))
        window = all_ran(clients)

        firsts = [c.latencies_us[0] for c in clients if c.latencies_us]
        print(f"  the same, each stream's first line: {spread(firsts)}")
        starting = arriving(lambda arrival: arrival < steady_from_us)
        print(f"  the same, while the sessions were set up: {spread(starting)}; "
              f"the machine's CPU meanwhile {setup_cpu:.2f} s, every process included")
        if window:
            ramping = arriving(lambda arrival: steady_from_us <= arrival < window[0])
            running = arriving(lambda arrival: window[0] <= arrival <= window[1])
            finishing = arriving(lambda arrival: arrival > window[1])
            print(f"  the same, from then until every turn had ticked: {spread(ramping)}")
            print(f"  the same, while every turn ran: {spread(running)}")
            print(f"  the same, once the first turn had ended: {spread(finishing)}")
        else:
            after = arriving(lambda arrival: arrival >= steady_from_us)
            print("  no moment when every turn ran (the first turn ended before the last one "
                  f"ticked); the same, after the set-up: {spread(after)}")
        print(f"  cinch serve CPU {server_cpu:.2f} s over {wall:.1f} s = "
              f"{server_cpu * 1e6 / max(received, 1):.1f} us a delivered line "
              f"(setting up the sessions included); once all had started "
              f"{steady_cpu * 1e6 / max(steady_lines, 1):.1f} us a line "
              f"({steady_lines} lines, finishing the turns included)")
        running_system_us = running_system * 1e6 / max(running_lines, 1)
        print(f"  while every turn ran (from the last first tick to the first turn's end): "
              f"{running_cpu * 1e6 / max(running_lines, 1):.1f} us a line, "
              f"{running_system_us:.1f} of them in the kernel "
              f"({running_lines} lines, {running_cpu:.2f} s of CPU)")
        print(f"  the client's CPU {client_cpu:.2f} s = {100 * client_cpu / wall:.0f}% of a core")
        mib_per_turn = (rss_peak - rss_idle) / args.sessions
        print(f"  every turn's first line in {all_running_s:.1f} s from the first request; "
              f"cinch serve's memory {rss_idle:.0f} MiB before the turns, at most "
              f"{rss_peak:.0f} MiB: {mib_per_turn:.2f} MiB a turn")
        if warm_mib:
            print("  the turns run to their ends before them (--warm) grew it by "
                  + ", ".join(f"{mib:.2f}" for mib in warm_mib) + " MiB")
        line_cpu = running_cpu / running_lines if running_lines else 0.0
        phases = start_and_end_cpu(sampler, clients, cpu_before, cpu_before + server_cpu,
                                   line_cpu)
        start_ms, end_ms = ((phases[0] * 1e3 / args.sessions, phases[1] * 1e3 / args.sessions)
                            if phases else (float("nan"), float("nan")))
        print(f"  cinch serve CPU a session's start (its requests, stream and turn start) "
              f"{start_ms:.2f} ms, a turn's end {end_ms:.2f} ms (each less the lines "
              f"delivered meanwhile, at the cost a line while every turn ran)")
        print(f"RESULT lost={lost} p99_ms={percentile(latencies, 0.99) / 1000:.2f} "
              f"whole_us_per_line={server_cpu * 1e6 / max(received, 1):.1f} "
              f"serve_us_per_line={steady_cpu * 1e6 / max(steady_lines, 1):.1f} "
              f"running_us_per_line={running_cpu * 1e6 / max(running_lines, 1):.1f} "
              f"running_kernel_us_per_line={running_system_us:.1f} "
              f"all_running_s={all_running_s:.1f} mib_per_turn={mib_per_turn:.3f} "
              f"start_ms={start_ms:.2f} end_ms={end_ms:.2f} "
              + (f"warm_mib={','.join(f'{mib:.2f}' for mib in warm_mib)} " if warm_mib else "") +
              "(targets: 0, <= 5 ms, <= 10 us)")
    finally:
        server.terminate()
        server.wait()
        # Left for whoever set it to delete later (targets.py, at the end of
        # its sitting): deleting files makes the next run's creations dearer.
        if not os.environ.get("CINCH_BENCH_KEEP_SCRATCH"):
            shutil.rmtree(world, ignore_errors=True)


if __name__ == "__main__":
    main()
