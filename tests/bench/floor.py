#!/usr/bin/env python3
"""Benchmark: the kernel's own cost of what `cinch serve` must do for one line
of live progress, each step alone, with no cinch code: the floor under
`sse.py`'s figure of the server's CPU a line.

    python3 tests/bench/floor.py [--streams 200] [--rate 2000] [--lines 20000]

`sse.py`'s load is 200 sessions at 10 lines a second: 2,000 lines a second,
each arriving alone, a few hundred microseconds after the last. For each
line the server at least

1. wakes for it: waiting in poll() on an inotify descriptor that watches the
   turns' logs, it reads the event, then the new bytes of the log;
2. stores it as a run event: a row in a table keyed as `run_events` is, in
   SQLite's write-ahead log, the runs' rows interleaved, two lines to a
   transaction (about what cinch's writer gathers in its millisecond);
3. sends it to the session's SSE client over loopback TCP, the client
   waiting in epoll.

Each step runs in a process of its own, the other end of it in another, at
the given rate on average, the gaps random as independent streams' are.
What is measured is the time spent inside the step's system calls (for the
first and third: each returns at once, so that is the kernel's CPU; the
wake-up itself is left out, so the first is a floor), and for the second,
which is as much SQLite's own code as the kernel's, the process's system
CPU time from getrusage (sampled at the kernel's clock tick, so it stores
five times the lines, to be good to a tenth or so; SQLite copies its log
into the database as it fills, as cinch's checkpointer thread does). Python's
own time is in none of them, beyond a fraction of a microsecond.

Handing a line from one thread to the next inside the server (three threads
in cinch: the watcher, the events writer, the stream's task) costs a wake-up
each, not counted in the line's floor; it is measured on its own: two
processes hand a byte back and forth over pipes, each waiting in read()
between, first on one CPU, then on two. The CPU both spend a hand-over,
less what the same writes and reads cost when nobody waits, is a wake-up's.
On two CPUs the waker also has to interrupt the other CPU, which a virtual
machine's hypervisor emulates: on the machines these benchmarks ran on, a
wake-up across CPUs cost several times one on the same CPU.

And the floor under a turn's start: the kernel's CPU to create a file in the
temporary folder the benchmarks' homes and repositories are made in (the
same file system as `sse.py`'s), times the files and folders a turn start
creates there. Counted with strace for a session's turn once its home and
repository have had one (the fake CLI as claude, an empty repository), 39
from the task's request to the harness running: 11 in the turn's folder
(itself, its temporary folder, its records, locks and log of stderr), 4 for
its run (its folder, owner, log and index entry), its kept secrets, its
worktree record and a lock, the session's 2 folders, and 19 by git: 8 for
the worktree's link, 3 for its branch, 3 locks checking it out, 5 for the
start's checkpoint ref and objects. A repository with files adds one for
each file the worktree checks out; a turn's end creates about 4 more. On
a file system without a journal, ext4 skips the inodes deleted in the last
minute or so when it allocates one, reading each skipped inode's block:
after much churn (builds, earlier runs' clean-ups) a creation then costs far
more than on a journaled or fresh one.

And the CPU to start a program and wait for it (`true`, dynamically linked
as git and most CLIs are), times the four processes a turn start runs (the
sandbox's helper for git's worktree and for the supervisor, git, the CLI).
In a virtual machine much of it is the C library's start-up asking the CPU
for its caches' sizes (`cpuid`, which the hypervisor answers): in a
profile of starting `true` again and again on the machines these
benchmarks ran on, more than half of the samples were there.
"""

import argparse
import ctypes
import os
import random
import resource
import selectors
import shutil
import socket
import sqlite3
import struct
import sys
import tempfile
import time
import traceback

LINE = (b'{"type":"assistant","session_id":"bench","message":{"content":'
        b'[{"type":"text","text":"tick 123 1764000000000000"}]}}\n')
EVENT = (b"id: 123\nevent: progress\ndata: "
         b'{"seq":123,"kind":"progress","line":"tick 123 1764000000000000"}\n\n')

IN_MODIFY = 0x2
IN_NONBLOCK = os.O_NONBLOCK


def cpu_seconds(who=resource.RUSAGE_SELF):
    """User and system CPU seconds of this process (or, given
    RUSAGE_CHILDREN, of its children waited for)."""
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def paced(count, rate):
    """Yields 0..count at `rate` a second on average, sleeping between,
    the gaps random: even ones would fall in step with the kernel's clock
    tick, which samples whether a process is in the kernel."""
    gaps = random.Random(1)
    for n in range(count):
        time.sleep(gaps.expovariate(rate))
        yield n


def in_child(run):
    """Runs `run` in a child process; its id. The child prints what went
    wrong, if anything did, before it exits."""
    pid = os.fork()
    if pid == 0:
        try:
            run()
            os._exit(0)
        except BaseException:
            traceback.print_exc()
            os._exit(1)
    return pid


def watcher_step(streams, rate, lines):
    """Time a line inside the reads of a process woken by inotify for
    each line appended to one of `streams` logs: the event's, then the
    line's."""
    folder = tempfile.mkdtemp(prefix="cinch-floor-")
    paths = [os.path.join(folder, f"log{n}") for n in range(streams)]
    for path in paths:
        open(path, "wb").close()
    ready_read, ready_write = os.pipe()

    def watch():
        libc = ctypes.CDLL(None, use_errno=True)
        inotify = libc.inotify_init1(IN_NONBLOCK)
        if inotify < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        logs = {}
        for path in paths:
            watch_id = libc.inotify_add_watch(inotify, path.encode(), IN_MODIFY)
            if watch_id < 0:
                raise OSError(ctypes.get_errno(), f"inotify_add_watch {path}")
            logs[watch_id] = os.open(path, os.O_RDONLY)
        poller = selectors.DefaultSelector()
        poller.register(inotify, selectors.EVENT_READ)
        os.write(ready_write, b"x")
        inside = 0.0
        seen = 0
        while seen < lines:
            poller.select()
            started = time.perf_counter()
            try:
                events = os.read(inotify, 1 << 16)
            except BlockingIOError:
                continue
            finally:
                inside += time.perf_counter() - started
            offset = 0
            while offset < len(events):
                watch_id, _, _, length = struct.unpack_from("iIII", events, offset)
                offset += 16 + length
                started = time.perf_counter()
                read = os.read(logs[watch_id], 1 << 16)
                inside += time.perf_counter() - started
                seen += read.count(b"\n")
        os.write(ready_write, struct.pack("d", inside))

    def watch_alone():
        os.close(ready_read)
        watch()

    pid = in_child(watch_alone)
    # The child's end only: its exit, however it ends, then reads as the end.
    os.close(ready_write)
    if os.read(ready_read, 1) != b"x":
        sys.exit("the watching process ended before it watched (its error is above)")
    writers = [os.open(path, os.O_WRONLY | os.O_APPEND) for path in paths]
    for n in paced(lines, rate):
        os.write(writers[n % streams], LINE)
    answer = os.read(ready_read, 8)
    os.waitpid(pid, 0)
    if len(answer) != 8:
        sys.exit("the watching process ended before it read every line (its error is above)")
    spent = struct.unpack("d", answer)[0]
    for path in paths:
        os.unlink(path)
    os.rmdir(folder)
    return spent / lines


def store_step(streams, lines, per_transaction=2):
    """System CPU a line of storing lines as rows of a `run_events`-like
    table in SQLite's write-ahead log, `per_transaction` to a commit, the
    streams' rows interleaved."""
    with tempfile.TemporaryDirectory(prefix="cinch-floor-") as folder:
        db = sqlite3.connect(os.path.join(folder, "events.db"), isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        # The log copied into the database as it fills (SQLite's default):
        # cinch copies it once a second, on a thread of its own, and that
        # is the server's CPU too.
        db.execute("CREATE TABLE run_events (account_id TEXT NOT NULL, run_id TEXT NOT NULL, "
                   "seq INTEGER NOT NULL, name TEXT NOT NULL, data TEXT NOT NULL, "
                   "created_at TEXT NOT NULL, PRIMARY KEY (account_id, run_id, seq))")
        account = "acc_01JQ3M8V2K5N7P9R1T3W5Y7Z9B"
        runs = [f"ses_01JQ3M8V2K5N7P9R1T3W{n:06d}" for n in range(streams)]
        data = EVENT.decode()
        start = resource.getrusage(resource.RUSAGE_SELF).ru_stime
        for first in range(0, lines, per_transaction):
            db.execute("BEGIN IMMEDIATE")
            for n in range(first, min(first + per_transaction, lines)):
                db.execute("INSERT INTO run_events VALUES (?, ?, ?, ?, ?, ?)",
                           (account, runs[n % streams], n // streams, "progress", data,
                            "2026-12-05T12:00:00Z"))
            db.execute("COMMIT")
        spent = resource.getrusage(resource.RUSAGE_SELF).ru_stime - start
        db.close()
    return spent / lines


def send_step(streams, rate, lines):
    """Time a line inside the call sending it to one of `streams`
    loopback TCP clients, each waiting in epoll."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(streams)
    port = listener.getsockname()[1]

    def receive():
        poller = selectors.DefaultSelector()
        for _ in range(streams):
            connection = socket.create_connection(("127.0.0.1", port))
            poller.register(connection, selectors.EVENT_READ)
        received = 0
        while received < lines * len(EVENT):
            for key, _ in poller.select():
                received += len(key.fileobj.recv(1 << 16))

    def receive_alone():
        listener.close()
        receive()

    pid = in_child(receive_alone)
    # A receiver that failed never connects: waiting for it ends.
    listener.settimeout(60)
    connections = [listener.accept()[0] for _ in range(streams)]
    for connection in connections:
        connection.settimeout(None)
    order = random.Random(2)
    spent = 0.0
    for _ in paced(lines, rate):
        connection = connections[order.randrange(streams)]
        started = time.perf_counter()
        connection.sendall(EVENT)
        spent += time.perf_counter() - started
    os.waitpid(pid, 0)
    for connection in connections:
        connection.close()
    listener.close()
    return spent / lines


def wake_step(hand_overs):
    """CPU of a wake-up: (on one CPU, across two) two processes pass a byte
    back and forth over two pipes, each blocked in read() until the other
    writes. Each side's CPU is its own getrusage, which counts the kernel's
    scheduling of it; the writes and reads themselves, timed where nothing
    waits, are taken off."""
    cpus = sorted(os.sched_getaffinity(0))

    def unblocked():
        read_end, write_end = os.pipe()
        started = cpu_seconds()
        for _ in range(hand_overs):
            os.write(write_end, b"x")
            os.read(read_end, 1)
        spent = cpu_seconds() - started
        os.close(read_end)
        os.close(write_end)
        return spent / hand_overs

    def ping_pong(parent_cpu, child_cpu):
        from_parent, to_child = os.pipe()
        from_child, to_parent = os.pipe()
        report_read, report_write = os.pipe()

        def echo():
            os.sched_setaffinity(0, {child_cpu})
            started = cpu_seconds()
            for _ in range(hand_overs):
                os.read(from_parent, 1)
                os.write(to_parent, b"x")
            os.write(report_write, struct.pack("d", cpu_seconds() - started))

        pid = in_child(echo)
        os.sched_setaffinity(0, {parent_cpu})
        started = cpu_seconds()
        for _ in range(hand_overs):
            os.write(to_child, b"x")
            os.read(from_child, 1)
        spent = cpu_seconds() - started
        child_spent = struct.unpack("d", os.read(report_read, 8))[0]
        os.waitpid(pid, 0)
        os.sched_setaffinity(0, set(cpus))
        for fd in (to_child, from_parent, from_child, to_parent, report_read, report_write):
            os.close(fd)
        # Each hand-over is one write and one read on each side, and one
        # wake-up of each side.
        return (spent + child_spent) / (2 * hand_overs)

    alone = unblocked()
    same = ping_pong(cpus[0], cpus[0]) - alone
    across = ping_pong(cpus[0], cpus[-1]) - alone if len(cpus) > 1 else float("nan")
    return same, across


# Files and folders one turn start creates (counted with strace; see above).
FILES_A_START = 39


def create_step(files):
    """Time creating a file in a new folder of the temporary folder."""
    folder = tempfile.mkdtemp(prefix="cinch-bench-floor-")
    try:
        started = time.process_time()
        for n in range(files):
            os.close(os.open(os.path.join(folder, f"f{n}"), os.O_CREAT | os.O_EXCL | os.O_WRONLY,
                             0o600))
        return (time.process_time() - started) / files
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# Processes one turn start runs: the sandbox's helper twice (for git's
# worktree and for the turn's supervisor), git, and the harness's CLI.
PROCESSES_A_START = 4


def process_step(starts):
    """The CPU of starting a small program (`true`, linked as git and most
    CLIs are) and waiting for it: the kernel's exec and exit, the dynamic
    loader and the C library's start-up, in the child; the spawn and wait
    in the parent."""
    program = shutil.which("true") or "/bin/true"
    children = resource.RUSAGE_CHILDREN
    before_children, before_parent = cpu_seconds(children), cpu_seconds()
    for _ in range(starts):
        pid = os.posix_spawn(program, [program], {})
        os.waitpid(pid, 0)
    return ((cpu_seconds(children) - before_children) / starts,
            (cpu_seconds() - before_parent) / starts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--rate", type=float, default=2000.0, help="lines a second, in all")
    parser.add_argument("--lines", type=int, default=20000)
    parser.add_argument("--files", type=int, default=5000, help="files created to time one")
    parser.add_argument("--wakes", type=int, default=50000, help="hand-overs to time a wake-up")
    parser.add_argument("--processes", type=int, default=2000,
                        help="programs started to time one")
    args = parser.parse_args()
    steps = [
        ("woken by inotify: read the event, the line", watcher_step(args.streams, args.rate, args.lines)),
        # Not paced, so quick: more lines for the kernel's tick to sample.
        ("store it (SQLite WAL, 2 a transaction)", store_step(args.streams, 5 * args.lines)),
        ("send it over loopback TCP", send_step(args.streams, args.rate, args.lines)),
    ]
    print(f"The kernel's CPU a line, each step alone: {args.streams} streams, "
          f"{args.rate:.0f} lines a second in all, {args.lines} lines")
    for name, seconds in steps:
        print(f"  {name:<42} {seconds * 1e6:6.1f} us")
    total = sum(seconds for _, seconds in steps)
    print(f"  {'in all':<42} {total * 1e6:6.1f} us")
    same_cpu, across_cpus = wake_step(args.wakes)
    print(f"The CPU of a wake-up (a hand-over between threads): {same_cpu * 1e6:.1f} us "
          f"on the same CPU, {across_cpus * 1e6:.1f} us across two")
    create = create_step(args.files)
    print(f"The kernel's CPU to create a file in {tempfile.gettempdir()}: {create * 1e6:.1f} us; "
          f"a turn start's {FILES_A_START} files: {create * FILES_A_START * 1e3:.2f} ms")
    child, spawner = process_step(args.processes)
    started = child + spawner
    print(f"The CPU to start a small program and wait for it: {started * 1e6:.0f} us "
          f"({child * 1e6:.0f} in the program, {spawner * 1e6:.0f} in the spawner); "
          f"a turn start's {PROCESSES_A_START} processes: {started * PROCESSES_A_START * 1e3:.2f} ms")
    print("RESULT " + " ".join(
        f"{key}_us={seconds * 1e6:.1f}"
        for key, seconds in zip(("wake_read", "store", "send"), (s for _, s in steps)))
        + f" kernel_floor_us={total * 1e6:.1f}"
        + f" wake_same_cpu_us={same_cpu * 1e6:.1f} wake_across_cpus_us={across_cpus * 1e6:.1f}"
        + f" create_file_us={create * 1e6:.1f}"
        + f" start_files={FILES_A_START} start_files_ms={create * FILES_A_START * 1e3:.2f}"
        + f" process_us={started * 1e6:.0f} start_processes={PROCESSES_A_START}"
        + f" start_processes_ms={started * PROCESSES_A_START * 1e3:.2f}")


if __name__ == "__main__":
    main()
