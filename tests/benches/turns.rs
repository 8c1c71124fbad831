//! The turn engine, measured in one run against its targets:
//!
//! 1. how long a line the CLI writes takes to reach a subscriber as a
//!    progress event (target: p99 under 10 ms);
//! 2. a start plus an end checkpoint of a 20,000-file repository with 10
//!    files changed, against `git add -A` + `git write-tree` into a scratch
//!    index on the same repository, side by side (target: no slower than git);
//! 3. 200 concurrent turns of a CLI writing 50 lines a second each: every line
//!    reaches its subscriber, in order, with contiguous sequence numbers; the
//!    host's own CPU, its peak memory and the wall time.
//!
//! The CLI is the fake one (`cinch-fake-cli`) installed as `codex`; its ticks
//! are Codex agent messages carrying the time they were written. Supervisors
//! are the `cinch` binary of the same profile (built with cargo when needed),
//! or `CINCH_BIN`.
//!
//! `cargo bench -p cinch-tests --bench turns`; `CINCH_BENCH_TURNS`,
//! `CINCH_BENCH_RATE` (lines a second per turn) and `CINCH_BENCH_SECONDS`
//! change the size of the third (default 200, 50 and 10; the issue's second
//! size is 1000 turns at 10 lines a second; the idle turns are measured for
//! half those seconds),
//! `CINCH_BENCH_ONLY=latency,checkpoints,load,sandbox,retention,idle,tracing`
//! runs only those named (`idle`: that many turns running silent, the CPU they
//! cost; `retention`: pruning a home that holds many agents' runs;
//! `tracing`: turns with their spans exported over OTLP and without), and
//! `CINCH_BENCH_DUMP=<file>` writes the third's latencies there, a tick a line,
//! and `CINCH_BENCH_SUBSCRIBERS=threads` gives the third's turns a
//! subscriber thread each instead of a listener (as `cinch serve` has).
//! `CINCH_BENCH_SANDBOX=off` runs the turns unsandboxed (as `--no-sandbox`
//! does), so that valgrind, which does not know the Landlock system calls,
//! can profile the bench; the sandbox's own cost (the fourth) is then skipped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cinch_engine::engine::events::{Next, Subscription, TurnEvent, TurnEventKind};
use cinch_engine::engine::{Engine, StartError, Turn, TurnRequest};
use cinch_engine::home::Home;
use cinch_engine::sandbox::Mode;
use cinch_fake_cli::Script;
use cinch_runtime::Runtime;

/// A Codex agent message per tick; the host renders its text as a progress
/// line, `tick <n> <microseconds since the epoch when written>`.
const TICK_LINE: &str = r#"{"type":"item.completed","item":{"id":"i{n}","type":"agent_message","text":"tick {n} {now_us}"}}"#;

/// The first benchmark: lines a second ...
const LATENCY_RATE: f64 = 200.0;
/// ... for this long (3,000 lines).
const LATENCY_MS: u64 = 15_000;

/// The second: files, in this many leaf folders, of which this many change.
const FILES: usize = 20_000;
const TOP_DIRS: usize = 20;
const SUB_DIRS: usize = 15;
const CHANGED: usize = 10;
/// Each checkpoint timing is the median of this many rounds.
const ROUNDS: usize = 7;

/// The third: lines a second per turn, unless `CINCH_BENCH_RATE` says.
const LOAD_RATE: f64 = 50.0;
/// A turn whose median latency is over this (µs) is reported apart as slow:
/// its lines wait as a rule, not now and then (no turn is on a timer, so
/// such a turn shows the followers falling behind).
const SLOW_TURN_US: u64 = 50_000;
/// Threads starting the turns.
const STARTERS: usize = 4;

/// The dummy credential; never appears in a line, so redaction changes nothing.
const API_KEY: &str = "sk-cinch-bench-not-a-key";

fn main() {
    let turns: usize = env_number("CINCH_BENCH_TURNS").unwrap_or(200);
    let seconds: u64 = env_number("CINCH_BENCH_SECONDS").unwrap_or(10);
    let rate: f64 = env_number("CINCH_BENCH_RATE").unwrap_or(LOAD_RATE);
    let (soft, hard) = raise_fd_limit();
    let mut scratch = tempfile::Builder::new()
        .prefix("cinch-bench-turns-")
        .tempdir()
        .expect("a scratch directory");
    // Left for whoever set it to delete later, as tests/bench/targets.py
    // does: deleting files makes the next run's creations dearer.
    scratch.disable_cleanup(std::env::var_os("CINCH_BENCH_KEEP_SCRATCH").is_some());
    let root = scratch.path();
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    cinch_fake_cli::install(&bin, "codex");
    let cinch = cinch_engine::helper::program(&cinch_binary());
    let runtime = cinch_tests::runtime(&root.join("cache"));

    println!(
        "cinch turn engine: {} CPUs; open files limit {soft} (soft raised to the hard {hard}); inotify max_user_instances {}",
        std::thread::available_parallelism().map_or(0, usize::from),
        read_trimmed("/proc/sys/fs/inotify/max_user_instances").unwrap_or_else(|| "?".into()),
    );
    println!("supervisor: {}", cinch.display());
    if sandbox_mode() == Mode::Disabled {
        println!("turns run unsandboxed (CINCH_BENCH_SANDBOX=off)");
    }
    println!();

    let only = std::env::var("CINCH_BENCH_ONLY").unwrap_or_default();
    let runs = |name: &str| only.is_empty() || only.split(',').any(|one| one == name);
    let latency = runs("latency").then(|| bench_latency(root, &bin, &cinch, &runtime));
    let checkpoints = runs("checkpoints").then(|| bench_checkpoints(root));
    let load = runs("load").then(|| bench_load(root, &bin, &cinch, &runtime, turns, rate, seconds));
    if runs("sandbox") && sandbox_mode() == Mode::Enforced {
        bench_sandbox(root, &bin, &cinch, &runtime);
    }
    let idle = runs("idle").then(|| {
        let over = Duration::from_secs(seconds.div_ceil(2));
        bench_idle(root, &bin, &cinch, &runtime, turns, over)
    });
    let retention = runs("retention").then(|| bench_retention(root, &bin, &cinch, &runtime));
    // Last: it installs the process's one subscriber.
    let tracing = runs("tracing").then(|| bench_tracing(root, &bin, &cinch, &runtime));

    println!("Against the targets");
    // Each scenario also gives a `RESULT` line of `key=value` pairs, which
    // `tests/bench/targets.py` reads.
    if let Some((latency, problem)) = latency {
        println!(
            "  progress latency p99 {:>8.2} ms  (target < 10 ms)   {}",
            ms(latency.p99),
            verdict(latency.p99 < 10_000 && problem.is_none())
        );
        println!(
            "RESULT bench=latency p99_ms={:.2} whole={}",
            ms(latency.p99),
            problem.is_none()
        );
    }
    if let Some(ratio) = checkpoints {
        println!(
            "  checkpoints vs git   {ratio:>8.2}x     (target <= 1.00x)  {}",
            verdict(ratio <= 1.0)
        );
        println!("RESULT bench=checkpoints ratio={ratio:.2}");
    }
    if let Some((host, supervisors)) = idle {
        println!(
            "  {turns} silent turns: host {host:.2}% + supervisors {supervisors:.2}% of a core (target < 1%)  {}",
            verdict(host + supervisors < 1.0)
        );
        println!(
            "RESULT bench=idle turns={turns} host_percent={host:.2} supervisors_percent={supervisors:.2}"
        );
    }
    if let Some((in_full, in_empty)) = retention {
        let ratio = in_full.as_secs_f64() / in_empty.as_secs_f64();
        println!(
            "  a turn's host CPU in a home holding {RETENTION_AGENTS} agents' runs: {ratio:.2}x an empty home's  (no target; its end prunes the home)",
        );
        println!("RESULT bench=retention ratio={ratio:.2}");
    }
    if let Some(tracing) = tracing {
        println!(
            "  a turn's host CPU with its spans exported: {:.2}x without  (no target)",
            tracing.cpu_ratio
        );
        println!(
            "RESULT bench=tracing cpu_ratio={:.3} start_ms_on={:.2} start_ms_off={:.2} wall_ms_on={:.2} wall_ms_off={:.2}",
            tracing.cpu_ratio,
            ms(tracing.start_on),
            ms(tracing.start_off),
            ms(tracing.wall_on),
            ms(tracing.wall_off)
        );
    }
    if let Some(load) = load {
        println!(
            "  {turns} turns: {} lines lost, {} turns out of order, gapped or not completed (target 0)  {}",
            load.lost,
            load.bad_turns,
            verdict(load.lost == 0 && load.bad_turns == 0)
        );
        println!(
            "  {turns} turns: p99 CLI write -> subscriber {:>8.2} ms  (target <= 5 ms)   {}",
            ms(load.p99),
            verdict(load.p99 <= 5_000)
        );
        println!(
            "  {turns} turns at {rate} lines/s: host CPU {:.1} µs a line, {:.1} while all ran  (target <= 10 µs at 200 x 50)   {}",
            load.cpu_per_line_us,
            load.steady_cpu_per_line_us,
            verdict(load.cpu_per_line_us <= 10.0)
        );
        println!(
            "RESULT bench=load turns={turns} rate={rate} lost={} bad_turns={} p99_ms={:.2} cpu_us_per_line={:.1} steady_cpu_us_per_line={:.1} peak_mib={:.1} before_mib={:.1}",
            load.lost,
            load.bad_turns,
            ms(load.p99),
            load.cpu_per_line_us,
            load.steady_cpu_per_line_us,
            load.peak_mib,
            load.before_mib
        );
    }
}

/// The first tick, its time left out: the one line of a turn that shows
/// it has started.
fn first_tick() -> serde_json::Value {
    TICK_LINE
        .replace("{n}", "1")
        .replace("{now_us}", "0")
        .into()
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "NOT MET" }
}

// ---------------------------------------------------------------------------
// 1. Latency

/// Returns the percentiles, and what went wrong with the turn if anything did.
fn bench_latency(
    root: &Path,
    bin: &Path,
    cinch: &Path,
    runtime: &Runtime,
) -> (Percentiles, Option<String>) {
    let lines = (LATENCY_RATE * LATENCY_MS as f64 / 1000.0) as u64;
    println!(
        "1. Progress latency: the CLI writes a line -> a subscriber has its event ({lines} lines at {LATENCY_RATE}/s, one turn)"
    );
    let dir = root.join("latency");
    let engine = engine(&dir, bin, cinch, runtime, LATENCY_RATE, LATENCY_MS);
    let repo = small_repo(&dir.join("repo"));
    let mut turn = Turns::default();
    turn.0
        .push(engine.start(request(&repo)).expect("starting the turn"));
    let seen = follow(
        turn.0[0].subscribe(),
        TurnFiles::of(&turn.0[0], &dir),
        lines,
        deadline_after(LATENCY_MS),
    );
    let result = turn.0.pop().unwrap().wait();
    let problem = problem(&seen, lines, result.status.as_str());
    if let Some(problem) = &problem {
        println!("   !! {problem}");
    }
    let stats = Percentiles::of(seen.latencies_us.clone());
    println!(
        "   p50 {:.2} ms   p99 {:.2} ms   max {:.2} ms   ({} of {lines} lines seen, status {})",
        ms(stats.p50),
        ms(stats.p99),
        ms(stats.max),
        seen.ticks,
        result.status.as_str()
    );
    println!();
    (stats, problem)
}

// ---------------------------------------------------------------------------
// 4. The sandbox's cost

/// Short turns one after another, sandboxed and not, alternating so that
/// both see the same machine: the time `start` takes (the supervisor applies
/// the sandbox before the CLI's exec) and the whole turn's wall time.
fn bench_sandbox(root: &Path, bin: &Path, cinch: &Path, runtime: &Runtime) {
    const ROUNDS: usize = 30;
    println!(
        "4. The sandbox's cost: {ROUNDS} turns of 10 lines each, sandboxed and not, alternating"
    );
    let dir = root.join("sandbox");
    let sandboxed = engine(&dir, bin, cinch, runtime, 1000.0, 10);
    let open = engine(&dir, bin, cinch, runtime, 1000.0, 10).with_sandbox(Mode::Disabled);
    let repo = small_repo(&dir.join("repo"));
    let mut starts = [Vec::new(), Vec::new()];
    let mut walls = [Vec::new(), Vec::new()];
    for _ in 0..ROUNDS {
        for (which, engine) in [&sandboxed, &open].into_iter().enumerate() {
            let began = Instant::now();
            let turn = engine.start(request(&repo)).expect("starting the turn");
            starts[which].push(began.elapsed().as_micros() as u64);
            let result = turn.wait();
            assert_eq!(
                result.status.as_str(),
                "completed",
                "{}",
                result.result_text
            );
            walls[which].push(began.elapsed().as_micros() as u64);
        }
    }
    let [start_on, start_off] = starts.map(|times| Percentiles::of(times).p50);
    let [wall_on, wall_off] = walls.map(|times| Percentiles::of(times).p50);
    println!(
        "   start (median): sandboxed {:.2} ms, unsandboxed {:.2} ms: +{:.2} ms, {:.2}x",
        ms(start_on),
        ms(start_off),
        ms(start_on.saturating_sub(start_off)),
        start_on as f64 / start_off.max(1) as f64
    );
    println!(
        "   turn wall time (median): sandboxed {:.2} ms, unsandboxed {:.2} ms: {:.2}x",
        ms(wall_on),
        ms(wall_off),
        wall_on as f64 / wall_off.max(1) as f64
    );
    println!();
}

// ---------------------------------------------------------------------------
// 5. Idle

/// `count` turns running but writing nothing: the host's CPU and their
/// supervisors', in percent of one core, over `over`.
fn bench_idle(
    root: &Path,
    bin: &Path,
    cinch: &Path,
    runtime: &Runtime,
    count: usize,
    over: Duration,
) -> (f64, f64) {
    println!("5. Idle: {count} turns running, each silent after its first line");
    let dir = root.join("idle");
    let script = Script {
        lines: vec![first_tick()],
        hang_ms: -1,
        ..Script::default()
    };
    let engine = engine_with(&dir, bin, cinch, runtime, script);
    let template = small_repo(&dir.join("template"));
    let mut turns = Turns::default();
    for n in 0..count {
        let repo = dir.join(format!("repo{n:03}"));
        copy_dir(&template, &repo);
        turns
            .0
            .push(engine.start(request(&repo)).expect("starting a turn"));
    }
    // Every turn has shown its line: all are followed and settled.
    for turn in &turns.0 {
        let mut subscription = turn.subscribe();
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline {
            if let Next::Events(_) = subscription.next(Duration::from_millis(100)) {
                break;
            }
        }
    }
    std::thread::sleep(Duration::from_secs(1));
    let home = dir.join("cinch-home");
    let supervisors: Vec<i32> = turns
        .0
        .iter()
        .filter_map(|turn| {
            read_trimmed(home.join("turns").join(turn.id()).join("supervisor.pid"))?
                .parse()
                .ok()
        })
        .collect();
    let supervisors_cpu = |pids: &[i32]| -> Duration {
        pids.iter()
            .filter_map(|pid| process_cpu(*pid).map(|(cpu, _)| cpu))
            .sum()
    };
    let (host_before, sup_before, began) =
        (own_cpu(), supervisors_cpu(&supervisors), Instant::now());
    std::thread::sleep(over);
    let (host_after, sup_after, over) = (own_cpu(), supervisors_cpu(&supervisors), began.elapsed());
    let share = |cpu: Duration| 100.0 * cpu.as_secs_f64() / over.as_secs_f64();
    let host = share(host_after.saturating_sub(host_before));
    let sup = share(sup_after.saturating_sub(sup_before));
    println!(
        "   over {:.1} s: host {host:.2}% of a core; {} supervisors {sup:.2}%",
        over.as_secs_f64(),
        supervisors.len()
    );
    println!();
    (host, sup)
}

// ---------------------------------------------------------------------------
// 6. Retention

/// Agents whose runs fill the home the sixth measures in: each keeps its
/// [`cinch_engine::turn_dir::RUNS_KEPT`] most recent runs.
const RETENTION_AGENTS: usize = 50;

/// Fills a home as a team's server holds it in the steady state (every agent
/// at its quota of kept runs, one turn each), then runs one agent's turns
/// there and in an empty home, one after the other: a turn's end prunes its
/// home's runs, which should not cost more in a full home. Returns the
/// median host CPU of a turn in each, the full home's first.
fn bench_retention(
    root: &Path,
    bin: &Path,
    cinch: &Path,
    runtime: &Runtime,
) -> (Duration, Duration) {
    let runs = RETENTION_AGENTS * cinch_engine::turn_dir::RUNS_KEPT;
    println!(
        "6. Retention: a turn's end in a home holding {RETENTION_AGENTS} agents x {} runs ({runs} turns), and in an empty one",
        cinch_engine::turn_dir::RUNS_KEPT
    );
    let script = Script {
        lines: vec![first_tick()],
        ..Script::default()
    };
    let agent_turn = |repo: &Path, n: usize| TurnRequest {
        agent: Some(format!("agent-{:02}", n % RETENTION_AGENTS)),
        ..request(repo)
    };
    let full = root.join("retention-full");
    let engine = engine_with(&full, bin, cinch, runtime, script.clone());
    let template = small_repo(&full.join("template"));
    let next = AtomicUsize::new(0);
    let filling = Instant::now();
    std::thread::scope(|scope| {
        for starter in 0..STARTERS {
            let repo = full.join(format!("repo{starter}"));
            copy_dir(&template, &repo);
            let (engine, next) = (&engine, &next);
            scope.spawn(move || {
                loop {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    if n >= runs {
                        break;
                    }
                    let turn = engine.start(agent_turn(&repo, n)).expect("starting a turn");
                    assert_eq!(turn.wait().status.as_str(), "completed");
                }
            });
        }
    });
    let count = |dir: &Path| std::fs::read_dir(dir).map_or(0, Iterator::count);
    println!(
        "   filled in {:.1} s: {} run folders, {} turn folders",
        filling.elapsed().as_secs_f64(),
        count(&full.join("cinch-home/runs")),
        count(&full.join("cinch-home/turns")),
    );
    let empty = root.join("retention-empty");
    let empty_engine = engine_with(&empty, bin, cinch, runtime, script);
    copy_dir(&template, &empty.join("repo0"));
    // One agent's turns, in each home in turn: a turn's host CPU, all threads.
    let (mut in_full, mut in_empty) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS * 3 {
        for (engine, dir, cpus) in [
            (&engine, &full, &mut in_full),
            (&empty_engine, &empty, &mut in_empty),
        ] {
            let cpu = own_cpu();
            let turn = engine
                .start(agent_turn(&dir.join("repo0"), 7))
                .expect("starting a turn");
            assert_eq!(turn.wait().status.as_str(), "completed");
            cpus.push(own_cpu() - cpu);
        }
    }
    let (in_full, in_empty) = (median(in_full), median(in_empty));
    println!(
        "   a turn of one line, start to result: median {:.2} ms of host CPU in the full home, {:.2} ms in the empty one ({} turns each); {} run folders left in the full one",
        ms_of(in_full),
        ms_of(in_empty),
        ROUNDS * 3,
        count(&full.join("cinch-home/runs")),
    );
    println!();
    (in_full, in_empty)
}

// ---------------------------------------------------------------------------
// 7. Tracing's cost

/// What exporting a turn's spans costs, in medians (µs) but for the ratio.
struct TracingCost {
    /// The host's CPU for a traced turn, the exporter's share included,
    /// over an untraced one's.
    cpu_ratio: f64,
    start_on: u64,
    start_off: u64,
    wall_on: u64,
    wall_off: u64,
}

/// Short turns one after another, their spans exported over OTLP (to a
/// collector on loopback that takes them and drops them) and not,
/// alternating so that both see the same machine: the start, the turn's
/// wall time and the host's CPU for it. The exporter sends its batches from
/// a thread of its own every few seconds, so its CPU is counted apart and
/// shared among the traced turns.
fn bench_tracing(root: &Path, bin: &Path, cinch: &Path, runtime: &Runtime) -> TracingCost {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::filter::LevelFilter;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    const ROUNDS: usize = 30;
    const RATE: f64 = 1000.0;
    const MS: u64 = 300;
    let lines = (RATE * MS as f64 / 1000.0) as u64;
    println!(
        "7. Tracing's cost: {ROUNDS} turns of {lines} lines each, their spans exported over OTLP and not, alternating"
    );
    let collector = Collector::start();
    let traces = cinch_server::Traces {
        endpoint: Some(collector.url.clone()),
        include_content: false,
    };
    let (exporter, layer) = cinch_server::exporter(&traces)
        .expect("the exporter")
        .expect("an endpoint");
    // Off, no subscriber wants the spans, as in a server without the option.
    let (switch, handle) = tracing_subscriber::reload::Layer::new(LevelFilter::OFF);
    tracing_subscriber::registry()
        .with(layer.with_filter(switch))
        .init();
    let dir = root.join("tracing");
    let engine = engine(&dir, bin, cinch, runtime, RATE, MS);
    let repo = small_repo(&dir.join("repo"));
    let (mut starts, mut walls, mut cpus) = ([vec![], vec![]], [vec![], vec![]], [vec![], vec![]]);
    // A first round, not counted, does what happens once (the exporter's
    // first connection, the first spans' allocations).
    for round in 0..=ROUNDS {
        for (which, traced) in [true, false].into_iter().enumerate() {
            let level = if traced {
                LevelFilter::TRACE
            } else {
                LevelFilter::OFF
            };
            handle.reload(level).expect("switching the exporter");
            let cpu = own_cpu();
            let began = Instant::now();
            let turn = engine.start(request(&repo)).expect("starting the turn");
            if round > 0 {
                starts[which].push(began.elapsed().as_micros() as u64);
            }
            let result = turn.wait();
            assert_eq!(
                result.status.as_str(),
                "completed",
                "{}",
                result.result_text
            );
            if round == 0 {
                continue;
            }
            walls[which].push(began.elapsed().as_micros() as u64);
            cpus[which].push((own_cpu() - cpu).as_micros() as u64);
        }
    }
    // What the exporter's thread spent during the turns is in their CPU;
    // what it still has to send is the traced turns' too.
    let cpu = own_cpu();
    drop(exporter);
    let flush = (own_cpu() - cpu).as_micros() as u64;
    let cpu_medians = cpus.clone().map(|times| Percentiles::of(times).p50);
    let [cpu_on, cpu_off] = [
        cpus[0].iter().sum::<u64>() + flush,
        cpus[1].iter().sum::<u64>(),
    ]
    .map(|total| total / ROUNDS as u64);
    let [start_on, start_off] = starts.map(|times| Percentiles::of(times).p50);
    let [wall_on, wall_off] = walls.map(|times| Percentiles::of(times).p50);
    let (exports, bytes) = collector.received();
    println!(
        "   start (median): traced {:.2} ms, untraced {:.2} ms; turn wall time (median): traced {:.2} ms, untraced {:.2} ms",
        ms(start_on),
        ms(start_off),
        ms(wall_on),
        ms(wall_off),
    );
    println!(
        "   host CPU a turn, mean (the exporter's included): traced {:.2} ms, untraced {:.2} ms: {:+.1} µs, {:.3}x",
        ms(cpu_on),
        ms(cpu_off),
        cpu_on as f64 - cpu_off as f64,
        cpu_on as f64 / cpu_off.max(1) as f64
    );
    println!(
        "   host CPU a turn, median: traced {:.2} ms, untraced {:.2} ms: {:+.1} µs; {exports} exports, {bytes} bytes of spans",
        ms(cpu_medians[0]),
        ms(cpu_medians[1]),
        cpu_medians[0] as f64 - cpu_medians[1] as f64,
    );
    assert!(exports > 0, "no spans reached the collector");
    println!();
    TracingCost {
        cpu_ratio: cpu_on as f64 / cpu_off.max(1) as f64,
        start_on,
        start_off,
        wall_on,
        wall_off,
    }
}

/// An OTLP/HTTP collector on loopback that answers 200 and counts what it
/// was sent.
struct Collector {
    url: String,
    received: Arc<Mutex<(usize, usize)>>,
}

impl Collector {
    fn start() -> Self {
        use std::io::{BufRead as _, Read as _, Write as _};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let received: Arc<Mutex<(usize, usize)>> = Arc::default();
        let counts = received.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
                let mut length = 0;
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|read| read > 2) {
                    if let Some((name, value)) = line.trim_end().split_once(": ")
                        && name.eq_ignore_ascii_case("content-length")
                    {
                        length = value.parse().unwrap_or(0);
                    }
                    line.clear();
                }
                let mut body = vec![0; length];
                if reader.read_exact(&mut body).is_ok() {
                    let mut counts = counts.lock().unwrap();
                    counts.0 += 1;
                    counts.1 += length;
                }
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                );
            }
        });
        Self { url, received }
    }

    /// Exports and bytes received so far.
    fn received(&self) -> (usize, usize) {
        *self.received.lock().unwrap()
    }
}

// ---------------------------------------------------------------------------
// 2. Checkpoints

/// Returns cinch's time over git's.
fn bench_checkpoints(root: &Path) -> f64 {
    let repo = root.join("big-repo");
    let made = Instant::now();
    let dirs = big_repo(&repo);
    println!(
        "2. Checkpoints: start + end on {FILES} files in {dirs} folders, {CHANGED} changed (median of {ROUNDS}; repository made in {:.1} s)",
        made.elapsed().as_secs_f64()
    );
    let scratch_index = root.join("scratch-index");
    let cinch_pair = |round: usize| {
        let started = Instant::now();
        let mut trees = Vec::new();
        for which in ["start", "end"] {
            let refname = format!("refs/cinch/runs/bench/tasks/r{round}/{which}");
            let checkpoint = cinch_engine::checkpoint::take(&repo, &refname, "cinch: bench")
                .expect("taking a checkpoint");
            trees.push(checkpoint.tree);
        }
        (started.elapsed(), trees)
    };
    let git_pair = || {
        let started = Instant::now();
        let mut trees = Vec::new();
        for _ in 0..2 {
            std::fs::copy(repo.join(".git/index"), &scratch_index).unwrap();
            let index = [("GIT_INDEX_FILE", scratch_index.as_os_str())];
            git_with(&repo, &["add", "-A"], &index);
            trees.push(git_with(&repo, &["write-tree"], &index).trim().to_owned());
        }
        (started.elapsed(), trees)
    };
    // Once each to warm the page cache, and to compare what they wrote.
    let (_, ours) = cinch_pair(0);
    let (_, theirs) = git_pair();
    assert_eq!(ours, theirs, "cinch and git wrote different trees");
    let mut cinch_times = Vec::new();
    let mut git_times = Vec::new();
    // Alternate the two so that machine noise hits both alike.
    for round in 1..=ROUNDS {
        cinch_times.push(cinch_pair(round).0);
        git_times.push(git_pair().0);
    }
    let cinch_median = median(cinch_times);
    let git_median = median(git_times);
    let ratio = cinch_median.as_secs_f64() / git_median.as_secs_f64();
    println!(
        "   cinch_engine::checkpoint::take x2 (commit and ref included)   {:>8.1} ms",
        ms_of(cinch_median)
    );
    println!(
        "   git add -A + git write-tree x2, scratch index          {:>8.1} ms",
        ms_of(git_median)
    );
    println!("   cinch/git {ratio:.2}x; both wrote the same tree");
    println!();
    ratio
}

/// A committed repository of `FILES` files, then `CHANGED` of them changed
/// (modified, one added, one deleted). Returns how many folders it has.
fn big_repo(repo: &Path) -> usize {
    std::fs::create_dir_all(repo).unwrap();
    git(repo, &["init", "-q", "-b", "main"]);
    // Written an hour ago as far as stat can tell, so no index entry is
    // racily clean and both sides trust the stat data, as on a real tree.
    let old = SystemTime::now() - Duration::from_secs(3600);
    let mut random = 0x9e37_79b9_7f4a_7c15_u64;
    let leaves = TOP_DIRS * SUB_DIRS;
    for n in 0..FILES {
        let leaf = n % leaves;
        let dir = repo
            .join(format!("pkg{:02}", leaf / SUB_DIRS))
            .join(format!("mod{:02}", leaf % SUB_DIRS));
        if n < leaves {
            std::fs::create_dir_all(&dir).unwrap();
        }
        let size = 200 + (next_random(&mut random) % 3800) as usize;
        let mut text = String::with_capacity(size + 80);
        while text.len() < size {
            text.push_str(&format!(
                "let value_{:x} = compute({});\n",
                next_random(&mut random),
                n
            ));
        }
        let path = dir.join(format!("file{n:05}.rs"));
        std::fs::write(&path, &text).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&path)
            .and_then(|file| file.set_modified(old))
            .unwrap();
    }
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "initial"]);
    // The turn's changes: modified files, one new, one deleted.
    let leaf_dir = |n: usize| {
        repo.join(format!("pkg{:02}", (n % leaves) / SUB_DIRS))
            .join(format!("mod{:02}", (n % leaves) % SUB_DIRS))
    };
    for k in 0..CHANGED - 2 {
        let n = k * (FILES / CHANGED) + 7;
        let path = leaf_dir(n).join(format!("file{n:05}.rs"));
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("// changed by the turn\n");
        std::fs::write(&path, text).unwrap();
    }
    std::fs::write(leaf_dir(3).join("new_file.rs"), "fn new() {}\n").unwrap();
    let gone = FILES - 1;
    std::fs::remove_file(leaf_dir(gone).join(format!("file{gone:05}.rs"))).unwrap();
    leaves + TOP_DIRS
}

fn next_random(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

// ---------------------------------------------------------------------------
// 3. Concurrent turns

/// What the load test found.
struct Load {
    lost: u64,
    bad_turns: usize,
    /// Latency CLI write -> subscriber over the whole run, µs.
    p99: u64,
    /// The host's CPU per line received, following to subscribers and
    /// finishing the turns, µs.
    cpu_per_line_us: f64,
    /// The same while every turn ran: per line only, no turn starting or
    /// finishing.
    steady_cpu_per_line_us: f64,
    /// Peak resident memory over the run, and resident memory before the
    /// turns started, MiB.
    peak_mib: f64,
    before_mib: f64,
}

fn bench_load(
    root: &Path,
    bin: &Path,
    cinch: &Path,
    runtime: &Runtime,
    count: usize,
    rate: f64,
    seconds: u64,
) -> Load {
    let duration_ms = seconds * 1000;
    let per_turn = (rate * duration_ms as f64 / 1000.0) as u64;
    println!(
        "3. {count} concurrent turns, {rate} lines/s each for {seconds} s ({per_turn} lines a turn, {} in all), one engine",
        per_turn * count as u64
    );
    let subscribers = Subscribers::from_env();
    println!("   subscribers: {}", subscribers.describe());
    let dir = root.join("load");
    let engine = engine(&dir, bin, cinch, runtime, rate, duration_ms);
    let template = small_repo(&dir.join("template"));
    let repos: Vec<PathBuf> = (0..count)
        .map(|n| {
            let repo = dir.join(format!("repo{n:03}"));
            copy_dir(&template, &repo);
            repo
        })
        .collect();

    let peak_reset = reset_peak_memory();
    let rss_before = status_kib("VmRSS:");
    let monitor = Monitor::start();
    let cpu_before = own_cpu();
    let wall = Instant::now();
    let wall_epoch_us = now_us();

    // Started from a few threads at once, as a server's requests would.
    let next = AtomicUsize::new(0);
    let started: Mutex<Vec<Started>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..STARTERS {
            scope.spawn(|| {
                loop {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    let Some(repo) = repos.get(n) else { break };
                    let (at, cpu) = (Instant::now(), thread_cpu());
                    let turn = engine.start(request(repo));
                    let (time, cpu) = (at.elapsed(), thread_cpu() - cpu);
                    let one = turn.map(|turn| {
                        let files = TurnFiles::of(&turn, &dir);
                        let deadline = deadline_after(duration_ms);
                        let follower =
                            Follower::start(subscribers, &turn, files, per_turn, deadline);
                        (turn, follower)
                    });
                    started.lock().unwrap().push(Started { n, one, time, cpu });
                }
            });
        }
    });
    let started_all = wall.elapsed();
    let mut started = started.into_inner().unwrap();
    started.sort_by_key(|one| one.n);
    let start_times: Vec<Duration> = started.iter().map(|one| one.time).collect();
    let start_cpu: Duration = started.iter().map(|one| one.cpu).sum();
    let mut turns = Turns::default();
    let mut followers: Vec<Follower> = Vec::new();
    let mut failures = Vec::new();
    for one in started {
        match one.one {
            Ok((turn, follower)) => {
                turns.0.push(turn);
                followers.push(follower);
            }
            Err(error) => failures.push(format!("turn {}: {error:#}", one.n)),
        }
    }
    assert!(failures.is_empty(), "turns did not start: {failures:#?}");

    // While they run: how long all of them run at once, and the CPU of their
    // supervisors and CLIs.
    let mut children = ChildrenCpu::default();
    let mut sampled = false;
    let mut all_running = Duration::ZERO;
    // The host's CPU at the first and the last look with every turn running
    // (past the first second), and when: the cost of a line alone.
    let mut steady_cpu: Option<((u64, Duration), (u64, Duration))> = None;
    while followers.iter().any(|follower| !follower.is_finished()) {
        std::thread::sleep(Duration::from_millis(200));
        let running: Vec<&Turn> = turns
            .0
            .iter()
            .zip(&followers)
            .filter(|(_, follower)| !follower.is_finished())
            .map(|(turn, _)| turn)
            .collect();
        if running.len() == count {
            all_running = wall.elapsed().saturating_sub(started_all);
            if wall.elapsed() > started_all + Duration::from_secs(1) {
                let now = (now_us(), own_cpu());
                steady_cpu = Some((steady_cpu.map_or(now, |(first, _)| first), now));
            }
        }
        if !sampled
            && running.len() == count
            && wall.elapsed() > started_all + Duration::from_secs(1)
        {
            // With every turn running for a while, sample their processes.
            children.sample(&running, &dir.join("cinch-home"));
            sampled = true;
        }
    }
    let seen: Vec<Seen> = followers.into_iter().map(Follower::into_seen).collect();
    let results: Vec<String> = std::mem::take(&mut turns.0)
        .into_iter()
        .zip(&seen)
        .map(|(turn, seen)| {
            if !seen.closed {
                // Its subscriber gave up waiting: stop it rather than wait on.
                turn.cancel();
            }
            turn
        })
        .map(|turn| turn.wait().status.as_str().to_owned())
        .collect();
    let wall_time = wall.elapsed();
    let cpu_after = own_cpu();
    let monitor = monitor.stop();
    let mib = |kib: Option<u64>| kib.unwrap_or(0) as f64 / 1024.0;
    let (peak_mib, before_mib) = (mib(status_kib("VmHWM:")), mib(rss_before));

    let mut lost = 0;
    let mut bad_turns = 0;
    // Which turns were slow as a rule, by their median latency.
    let mut slow = vec![false; count];
    for ((seen, status), slow) in seen.iter().zip(&results).zip(&mut slow) {
        lost += per_turn.saturating_sub(seen.ticks);
        bad_turns += usize::from(problem(seen, per_turn, status).is_some());
        *slow = Percentiles::of(seen.latencies_us.clone()).p50 > SLOW_TURN_US;
    }
    let completed = results.iter().filter(|s| *s == "completed").count();
    let received: u64 = seen.iter().map(|seen| seen.ticks).sum();
    println!(
        "   lines: {} of {} received; {} turns whole (every line, in order, seq numbers contiguous, completed); {completed} of {count} completed",
        received,
        per_turn * count as u64,
        count - bad_turns,
    );
    for (n, (seen, status)) in seen.iter().zip(&results).enumerate() {
        if let Some(problem) = problem(seen, per_turn, status) {
            println!("   !! turn {n}: {problem}");
        }
    }
    let starts = Percentiles::of(start_times.iter().map(|t| t.as_micros() as u64).collect());
    println!(
        "   wall {:.1} s; starting them from {STARTERS} threads took {:.1} s (Engine::start p50 {:.1} ms, max {:.1} ms, {:.1} ms of CPU each); all {count} running at once for {:.1} s",
        wall_time.as_secs_f64(),
        started_all.as_secs_f64(),
        ms(starts.p50),
        ms(starts.max),
        ms_of(start_cpu) / count as f64,
        all_running.as_secs_f64()
    );
    let cpu = (cpu_after - cpu_before).saturating_sub(monitor.own_cpu);
    let rest = cpu.saturating_sub(start_cpu);
    let cpu_per_line_us = rest.as_secs_f64() * 1e6 / received.max(1) as f64;
    println!(
        "   host CPU (user+sys of this process, children excluded): {:.2} s over {:.1} s = {:.0}% of one core",
        cpu.as_secs_f64(),
        wall_time.as_secs_f64(),
        100.0 * cpu.as_secs_f64() / wall_time.as_secs_f64()
    );
    println!(
        "     Engine::start's own {:.2} s; following, finishing and the {count} subscribers {:.2} s = {cpu_per_line_us:.1} µs a line",
        start_cpu.as_secs_f64(),
        rest.as_secs_f64(),
    );
    let steady_cpu_per_line_us = steady_cpu.map_or(f64::NAN, |(first, last)| {
        let written: usize = seen
            .iter()
            .map(|seen| {
                seen.written_us
                    .iter()
                    .filter(|written| (first.0..last.0).contains(*written))
                    .count()
            })
            .sum();
        (last.1 - first.1).as_secs_f64() * 1e6 / written.max(1) as f64
    });
    println!(
        "     while all {count} ran (no turn starting or finishing): {steady_cpu_per_line_us:.1} µs a line"
    );
    if let Some(line) = children.describe() {
        println!("   {line}");
    }
    println!(
        "   peak memory (VmHWM{}): {:.1} MiB; {:.1} MiB before the turns started",
        if peak_reset {
            ", reset before the turns"
        } else {
            " since the bench started"
        },
        peak_mib,
        before_mib
    );
    println!(
        "   at most {} threads, {} open files, {} inotify instances in this process",
        monitor.threads, monitor.fds, monitor.inotify
    );
    // The whole run, and the window in which every turn was running (no
    // turn starting or finishing).
    let steady_from = wall_epoch_us + started_all.as_micros() as u64;
    let steady_to = steady_from + all_running.as_micros() as u64;
    let latencies = |slow_ones: Option<bool>, steady: bool| {
        let mut out = Vec::new();
        for (seen, slow) in seen.iter().zip(&slow) {
            if slow_ones.is_some_and(|slow_ones| slow_ones != *slow) {
                continue;
            }
            for (written, latency) in seen.written_us.iter().zip(&seen.latencies_us) {
                if !steady || (steady_from..steady_to).contains(written) {
                    out.push(*latency);
                }
            }
        }
        Percentiles::of(out)
    };
    let slow_turns = slow.iter().filter(|slow| **slow).count();
    println!("   latency, CLI write -> subscriber:");
    for (what, steady) in [
        ("the whole run".to_owned(), false),
        (
            format!("while all {count} ran ({:.1} s)", all_running.as_secs_f64()),
            true,
        ),
    ] {
        let all = latencies(None, steady);
        println!(
            "     {what}: p50 {:.2} ms   p99 {:.2} ms   max {:.2} ms",
            ms(all.p50),
            ms(all.p99),
            ms(all.max)
        );
        for (group, turns, slow_ones) in [
            ("with a median under 50 ms", count - slow_turns, false),
            ("with a median over 50 ms (slow)", slow_turns, true),
        ] {
            if turns > 0 && slow_turns > 0 {
                let stats = latencies(Some(slow_ones), steady);
                println!(
                    "       {turns:>3} turns {group}: p50 {:.2} ms   p99 {:.2} ms   max {:.2} ms",
                    ms(stats.p50),
                    ms(stats.p99),
                    ms(stats.max)
                );
            }
        }
    }
    if let Ok(path) = std::env::var("CINCH_BENCH_DUMP") {
        dump(Path::new(&path), &seen);
    }
    let logs_deleted = seen.iter().filter(|seen| seen.log_deleted).count();
    let runs_left = std::fs::read_dir(dir.join("cinch-home/runs")).map_or(0, |dir| dir.count());
    println!(
        "   raw logs deleted while their turn still ran: {logs_deleted} of {count}; {runs_left} run folders left after the run"
    );
    println!();
    Load {
        lost,
        bad_turns,
        p99: latencies(None, false).p99,
        cpu_per_line_us,
        steady_cpu_per_line_us,
        peak_mib,
        before_mib,
    }
}

/// Writes every tick as `turn written_us latency_us`, one a line.
fn dump(path: &Path, seen: &[Seen]) {
    let mut text = String::new();
    for (turn, seen) in seen.iter().enumerate() {
        for (written, latency) in seen.written_us.iter().zip(&seen.latencies_us) {
            text.push_str(&format!("{turn} {written} {latency}\n"));
        }
    }
    std::fs::write(path, text).expect("writing the dump");
    println!("   every tick's latency written to {}", path.display());
}

/// One turn as a starter thread left it.
struct Started {
    n: usize,
    one: Result<(Turn, Follower), StartError>,
    time: Duration,
    cpu: Duration,
}

/// What one subscriber saw.
#[derive(Default)]
struct Seen {
    files: TurnFiles,
    last_tick: u64,
    /// The sequence number of the last event taken.
    ticks_seq: u64,
    ticks: u64,
    in_order: bool,
    seq_contiguous: bool,
    closed: bool,
    /// The raw log was gone while the turn ran.
    log_deleted: bool,
    latencies_us: Vec<u64>,
    /// When each tick was written, microseconds since the epoch.
    written_us: Vec<u64>,
    other: Vec<String>,
}

/// A turn's raw log, and the result written once it has ended.
#[derive(Default)]
struct TurnFiles {
    log: PathBuf,
    result: PathBuf,
}

impl TurnFiles {
    /// The files of `turn`, run by the engine whose world is `dir`.
    fn of(turn: &Turn, dir: &Path) -> Self {
        Self {
            log: turn.log_path().to_path_buf(),
            result: dir
                .join("cinch-home/turns")
                .join(turn.id())
                .join("result.json"),
        }
    }
}

/// Reads a turn's events to its end (or `deadline`) on a thread of its own,
/// as a subscriber.
fn follow(
    mut subscription: Subscription,
    files: TurnFiles,
    last_tick: u64,
    deadline: Instant,
) -> Seen {
    let mut seen = Seen::new(files, last_tick);
    loop {
        match subscription.next(Duration::from_millis(500)) {
            Next::Events(events) => seen.take(&events),
            Next::Idle if Instant::now() > deadline => return seen,
            Next::Idle => {}
            Next::Closed => {
                seen.closed = true;
                return seen;
            }
        }
    }
}

impl Seen {
    fn new(files: TurnFiles, last_tick: u64) -> Self {
        Self {
            in_order: true,
            seq_contiguous: true,
            files,
            last_tick,
            ..Self::default()
        }
    }

    /// Takes events as they reach the subscriber: checks that ticks come in
    /// order and sequence numbers without a gap, times each tick, and
    /// checks that the turn's raw log is still there when its last tick
    /// comes, unless the turn has ended by then (its run may then be
    /// pruned: a subscriber far behind reads its last tick late).
    fn take(&mut self, events: &[TurnEvent]) {
        let now = now_us();
        for event in events {
            self.seq_contiguous &= event.seq == self.ticks_seq + 1;
            self.ticks_seq = event.seq;
            match &event.kind {
                TurnEventKind::Progress { line } => match parse_tick(line) {
                    Some((n, written)) => {
                        self.in_order &= n == self.ticks + 1;
                        self.ticks += 1;
                        if n == self.last_tick {
                            self.log_deleted =
                                !self.files.log.exists() && !self.files.result.exists();
                        }
                        self.latencies_us.push(now.saturating_sub(written));
                        self.written_us.push(written);
                    }
                    None => self.other.push(line.clone()),
                },
                TurnEventKind::Ended { status } => self.other.push(status.as_str().to_owned()),
                TurnEventKind::Session { .. } | TurnEventKind::Approval { .. } => {}
            }
        }
    }
}

/// How the load's subscribers take their turns' events.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Subscribers {
    /// Handed them by the thread that read them, as `cinch serve` is.
    Listeners,
    /// A thread each, woken for them.
    Threads,
}

impl Subscribers {
    fn from_env() -> Self {
        match std::env::var("CINCH_BENCH_SUBSCRIBERS").as_deref() {
            Ok("threads") => Self::Threads,
            Ok("listeners") | Err(_) => Self::Listeners,
            Ok(other) => panic!("CINCH_BENCH_SUBSCRIBERS: listeners or threads, not {other}"),
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Self::Listeners => {
                "listeners, handed the events by the thread that read them (as cinch serve)"
            }
            Self::Threads => "a thread each, woken for its events",
        }
    }
}

/// One turn's subscriber, of either kind.
enum Follower {
    Thread(JoinHandle<Seen>),
    Listener {
        seen: Arc<Mutex<Seen>>,
        deadline: Instant,
    },
}

impl Follower {
    fn start(
        kind: Subscribers,
        turn: &Turn,
        files: TurnFiles,
        last_tick: u64,
        deadline: Instant,
    ) -> Self {
        match kind {
            Subscribers::Threads => {
                let subscription = turn.subscribe();
                Self::Thread(std::thread::spawn(move || {
                    follow(subscription, files, last_tick, deadline)
                }))
            }
            Subscribers::Listeners => {
                let seen = Arc::new(Mutex::new(Seen::new(files, last_tick)));
                let into = seen.clone();
                turn.listen(Box::new(move |events| {
                    let mut seen = into.lock().unwrap();
                    seen.take(events);
                    seen.closed |= events
                        .last()
                        .is_some_and(|event| matches!(event.kind, TurnEventKind::Ended { .. }));
                }));
                Self::Listener { seen, deadline }
            }
        }
    }

    fn is_finished(&self) -> bool {
        match self {
            Self::Thread(thread) => thread.is_finished(),
            Self::Listener { seen, deadline } => {
                seen.lock().unwrap().closed || Instant::now() > *deadline
            }
        }
    }

    fn into_seen(self) -> Seen {
        match self {
            Self::Thread(thread) => thread.join().expect("a subscriber thread"),
            Self::Listener { seen, .. } => std::mem::take(&mut *seen.lock().unwrap()),
        }
    }
}

fn parse_tick(line: &str) -> Option<(u64, u64)> {
    let (n, written) = line.strip_prefix("tick ")?.split_once(' ')?;
    Some((n.parse().ok()?, written.parse().ok()?))
}

/// What went wrong with a turn that should have shown `lines` ticks and
/// completed, if anything.
fn problem(seen: &Seen, lines: u64, status: &str) -> Option<String> {
    let whole = seen.ticks == lines && seen.in_order && seen.seq_contiguous && seen.closed;
    (!whole || status != "completed").then(|| {
        format!(
            "{} of {lines} lines, in order {}, seq numbers contiguous {}, closed {}, status {status}; other events {:?}",
            seen.ticks, seen.in_order, seen.seq_contiguous, seen.closed, seen.other
        )
    })
}

/// Running turns; cancelled and waited for if the bench stops early, so no
/// turn outlives it.
#[derive(Default)]
struct Turns(Vec<Turn>);

impl Drop for Turns {
    fn drop(&mut self) {
        for turn in &self.0 {
            turn.cancel();
        }
        for turn in self.0.drain(..) {
            let _ = turn.wait();
        }
    }
}

/// The CPU time of the turns' supervisors and CLIs, sampled over a second
/// while all of them run (they are not this process's children).
#[derive(Default)]
struct ChildrenCpu {
    supervisors: Option<(usize, Duration)>,
    clis: Option<(usize, Duration)>,
    over: Duration,
}

impl ChildrenCpu {
    fn sample(&mut self, turns: &[&Turn], home: &Path) {
        let pids = |turn: &Turn| -> Option<(i32, i32)> {
            let cli: i32 = read_trimmed(home.join("turns").join(turn.id()).join("pid"))?
                .parse()
                .ok()?;
            let (_, parent) = process_cpu(cli)?;
            Some((parent, cli))
        };
        let pairs: Vec<(i32, i32)> = turns.iter().filter_map(|turn| pids(turn)).collect();
        let total = |pids: &mut dyn Iterator<Item = i32>| -> (usize, Duration) {
            pids.filter_map(|pid| process_cpu(pid).map(|(cpu, _)| cpu))
                .fold((0, Duration::ZERO), |(n, sum), cpu| (n + 1, sum + cpu))
        };
        let before_sup = total(&mut pairs.iter().map(|p| p.0));
        let before_cli = total(&mut pairs.iter().map(|p| p.1));
        let started = Instant::now();
        std::thread::sleep(Duration::from_secs(1));
        let after_sup = total(&mut pairs.iter().map(|p| p.0));
        let after_cli = total(&mut pairs.iter().map(|p| p.1));
        self.over = started.elapsed();
        self.supervisors = Some((after_sup.0, after_sup.1.saturating_sub(before_sup.1)));
        self.clis = Some((after_cli.0, after_cli.1.saturating_sub(before_cli.1)));
    }

    fn describe(&self) -> Option<String> {
        let ((sups, sup_cpu), (clis, cli_cpu)) = (self.supervisors?, self.clis?);
        let share = |cpu: Duration| 100.0 * cpu.as_secs_f64() / self.over.as_secs_f64();
        Some(format!(
            "other processes, sampled over {:.1} s with all turns running: {sups} supervisors {:.0}% of one core, {clis} fake CLIs {:.0}%",
            self.over.as_secs_f64(),
            share(sup_cpu),
            share(cli_cpu)
        ))
    }
}

/// A process's CPU time and its parent, from /proc: `schedstat`'s time on
/// the CPU in nanoseconds (`stat`'s user+sys is counted in clock ticks,
/// too coarse for processes that each run a few milliseconds a second).
fn process_cpu(pid: i32) -> Option<(Duration, i32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat[stat.rfind(')')? + 2..].split_whitespace().collect();
    // After the name: state(0) ppid(1) ... utime(11) stime(12).
    let parent = fields.get(1)?.parse().ok()?;
    let on_cpu = std::fs::read_to_string(format!("/proc/{pid}/schedstat"))
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse().ok())
        .map(Duration::from_nanos);
    let cpu = match on_cpu {
        Some(cpu) => cpu,
        None => {
            let ticks =
                fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
            // SAFETY: sysconf only reads a configuration value.
            let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
            Duration::from_secs_f64(ticks as f64 / per_second)
        }
    };
    Some((cpu, parent))
}

/// Samples this process's threads, open files and inotify instances.
struct Monitor {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<MonitorReport>,
}

#[derive(Default)]
struct MonitorReport {
    threads: u64,
    fds: usize,
    inotify: usize,
    /// The monitor's own CPU, not the host's.
    own_cpu: Duration,
}

impl Monitor {
    fn start() -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut report = MonitorReport::default();
            while !flag.load(Ordering::Relaxed) {
                report.threads = report.threads.max(status_kib("Threads:").unwrap_or(0));
                let (fds, inotify) = open_files();
                report.fds = report.fds.max(fds);
                report.inotify = report.inotify.max(inotify);
                std::thread::sleep(Duration::from_millis(500));
            }
            report.own_cpu = thread_cpu();
            report
        });
        Self { stop, thread }
    }

    fn stop(self) -> MonitorReport {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().expect("the monitor thread")
    }
}

/// How many files this process has open, and how many are inotify instances.
fn open_files() -> (usize, usize) {
    let Ok(listing) = std::fs::read_dir("/proc/self/fd") else {
        return (0, 0);
    };
    let mut fds = 0;
    let mut inotify = 0;
    for entry in listing.filter_map(Result::ok) {
        fds += 1;
        if std::fs::read_link(entry.path())
            .is_ok_and(|target| target.as_os_str() == "anon_inode:inotify")
        {
            inotify += 1;
        }
    }
    (fds, inotify)
}

// ---------------------------------------------------------------------------
// Setting up

/// An engine on a home of its own under `dir`, whose `codex` is the fake CLI
/// printing ticks at `rate` for `duration_ms`.
fn engine(
    dir: &Path,
    bin: &Path,
    cinch: &Path,
    runtime: &Runtime,
    rate: f64,
    duration_ms: u64,
) -> Engine {
    let script = Script {
        lines_per_second: Some(rate),
        duration_ms,
        tick_line: Some(TICK_LINE.into()),
        ..Script::default()
    };
    engine_with(dir, bin, cinch, runtime, script)
}

/// An engine on a home of its own under `dir`, whose `codex` is the fake CLI
/// running `script`.
fn engine_with(dir: &Path, bin: &Path, cinch: &Path, runtime: &Runtime, script: Script) -> Engine {
    let user_home = dir.join("home");
    std::fs::create_dir_all(&user_home).unwrap();
    // Beside the CLI: the sandbox lets a harness read its installation.
    let name = dir.file_name().expect("a named folder").to_string_lossy();
    let script_path = bin.join(format!("script-{name}.json"));
    script.write_to(&script_path).unwrap();
    let script = script_path;
    let env: BTreeMap<String, String> = [
        ("PATH", format!("{}:/usr/bin:/bin", bin.display())),
        ("HOME", user_home.display().to_string()),
        (cinch_fake_cli::SCRIPT_ENV, script.display().to_string()),
        ("OPENAI_API_KEY", API_KEY.to_owned()),
    ]
    .into_iter()
    .map(|(name, value)| (name.to_owned(), value))
    .collect();
    let home = Home::open(dir.join("cinch-home")).expect("cinch's home");
    Engine::new(home, runtime, cinch.to_path_buf(), env)
        .expect("the engine")
        .with_sandbox(sandbox_mode())
}

/// Whether turns run sandboxed: `CINCH_BENCH_SANDBOX=off` turns it off.
fn sandbox_mode() -> Mode {
    match std::env::var("CINCH_BENCH_SANDBOX").as_deref() {
        Err(_) | Ok("on") => Mode::Enforced,
        Ok("off") => Mode::Disabled,
        Ok(other) => panic!("CINCH_BENCH_SANDBOX is `on` or `off`, not `{other}`"),
    }
}

fn request(repo: &Path) -> TurnRequest {
    TurnRequest {
        harness: "codex".into(),
        repo: repo.to_path_buf(),
        brief: "Print ticks.".into(),
        notes: Vec::new(),
        model: None,
        effort: None,
        session_id: None,
        timeout: Duration::from_secs(10 * 60),
        idle_limit: None,
        run: None,
        env: Default::default(),
        secrets: Vec::new(),
        tcp_ports: None,
        allowed_hosts: None,
        agent: None,
        mcp_servers: Vec::new(),
        ask: false,
        trace_parent: None,
        fork: false,
    }
}

/// A repository with a few committed files.
fn small_repo(repo: &Path) -> PathBuf {
    std::fs::create_dir_all(repo.join("src")).unwrap();
    git(repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("README.md"), "# bench\n").unwrap();
    std::fs::write(repo.join("src/main.rs"), "fn main() {}\n").unwrap();
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "initial"]);
    repo.to_path_buf()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().filter_map(Result::ok) {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    git_with(dir, args, &[])
}

/// Runs git in `dir` with no user or system configuration; it must succeed.
fn git_with(dir: &Path, args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> String {
    let output = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .envs(env.iter().copied())
        .output()
        .expect("running git");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The `cinch` binary supervisors run: `CINCH_BIN`, or `<target>/<profile>/cinch`
/// beside this executable, built (or brought up to date) with cargo first.
fn cinch_binary() -> PathBuf {
    if let Some(bin) = std::env::var_os("CINCH_BIN") {
        return PathBuf::from(bin);
    }
    let exe = std::env::current_exe().expect("the bench executable's path");
    let deps = exe.parent().expect("the bench executable's folder");
    let profile_dir = if deps.file_name().is_some_and(|name| name == "deps") {
        deps.parent().expect("the profile folder")
    } else {
        deps
    };
    let bin = profile_dir.join("cinch");
    let profile = match profile_dir.file_name().and_then(|name| name.to_str()) {
        Some("debug") => "dev",
        Some(other) => other,
        None => panic!("no profile folder above {}", exe.display()),
    };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let built = Command::new(cargo)
        .args(["build", "--quiet", "-p", "cinch", "--bin", "cinch"])
        .arg("--manifest-path")
        .arg(cinch_tests::crate_dir().join("../Cargo.toml"))
        .arg("--target-dir")
        .arg(profile_dir.parent().expect("the target folder"))
        .args(["--profile", profile])
        .status();
    match built {
        Ok(status) if status.success() => bin,
        _ if bin.exists() => {
            eprintln!("could not build cinch; using {} as is", bin.display());
            bin
        }
        other => panic!("no cinch binary at {}: {other:?}", bin.display()),
    }
}

// ---------------------------------------------------------------------------
// Measuring

/// Percentiles of microsecond figures.
#[derive(Debug, Clone, Copy, Default)]
struct Percentiles {
    p50: u64,
    p99: u64,
    max: u64,
}

impl Percentiles {
    fn of(mut values: Vec<u64>) -> Self {
        if values.is_empty() {
            return Self::default();
        }
        values.sort_unstable();
        let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize];
        Self {
            p50: at(0.50),
            p99: at(0.99),
            max: *values.last().unwrap(),
        }
    }
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(micros: u64) -> f64 {
    micros as f64 / 1000.0
}

fn ms_of(time: Duration) -> f64 {
    time.as_secs_f64() * 1e3
}

fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_micros() as u64)
}

/// When a subscriber gives up on a turn meant to last `ms`.
fn deadline_after(ms: u64) -> Instant {
    Instant::now() + Duration::from_millis(ms + 60_000)
}

/// This process's user+sys CPU time, every thread, children excluded.
fn own_cpu() -> Duration {
    rusage(libc::RUSAGE_SELF)
}

/// The calling thread's user+sys CPU time.
fn thread_cpu() -> Duration {
    rusage(libc::RUSAGE_THREAD)
}

fn rusage(who: libc::c_int) -> Duration {
    // SAFETY: getrusage fills the struct it is given; zeroed is a valid start.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid `who` and a pointer to a live struct.
    unsafe { libc::getrusage(who, &mut usage) };
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// A number from /proc/self/status (`VmHWM:` and `VmRSS:` are in KiB).
fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with(field))?;
    line[field.len()..].split_whitespace().next()?.parse().ok()
}

/// Resets VmHWM to the current RSS (Linux 4.0 and later).
fn reset_peak_memory() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Raises the soft limit on open files to the hard one; returns both.
fn raise_fd_limit() -> (u64, u64) {
    // SAFETY: getrlimit and setrlimit read and write the struct given.
    unsafe {
        let mut limit: libc::rlimit = std::mem::zeroed();
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
        limit.rlim_cur = limit.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
        (limit.rlim_cur as u64, limit.rlim_max as u64)
    }
}

fn read_trimmed(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|text| text.trim().to_owned())
}

fn env_number<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok()?.parse().ok()
}
