//! Driver throughput, natively and as sandboxed components, measured side by
//! side in one run; plus the cost of loading a driver from the compile cache
//! and of instantiating one for a turn.
//!
//! Throughput is measured twice: `feed` hands the driver the same batches of
//! lines on both sides (the driver and the boundary alone); `replay` runs the
//! whole log as `cinch driver test` does (line splitting, batching and
//! progress rendering included).
//!
//! `cargo bench -p cinch-tests --bench drivers` (set `CINCH_BENCH_MB` to
//! change the size of the generated logs; default 32). With
//! `CINCH_BENCH_COMPONENT=FILE.wasm`, a driver component reading Claude
//! Code's format from elsewhere (the TypeScript port built by
//! host/tests/it/scaffold.rs) is measured beside the claude driver, on the same
//! log in the same run.

use std::time::{Duration, Instant};

use cinch_engine::drivers::Registry;
use cinch_engine::reading::parse::TurnParser;
use cinch_engine::reading::replay::Exit;
use cinch_runtime::Runtime;
use cinch_tests::{
    DRIVERS, Transcript, acp_dir, crate_dir, native_parser, recorded_dir, registry, replay_native,
    replay_wasm, runtime,
};

/// Each timing is the median of this many runs.
const ROUNDS: usize = 5;
/// Lines per call, as the host batches them.
const BATCH: usize = 256;

fn main() {
    let megabytes: usize = std::env::var("CINCH_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(32);
    let cache = tempfile::tempdir().unwrap();
    let runtime = runtime(cache.path());
    let registry = registry(&runtime);

    println!(
        "Throughput in MB/s over a generated log of about {megabytes} MB per driver (median of {ROUNDS}, batches of {BATCH} lines)"
    );
    println!(
        "{:<8} {:>11} {:>11} {:>11} {:>13} {:>13} {:>13}",
        "driver",
        "feed native",
        "feed wasm",
        "wasm/native",
        "replay native",
        "replay wasm",
        "wasm/native"
    );
    let exit = Exit {
        code: Some(0),
        stderr_tail: String::new(),
    };
    for name in DRIVERS {
        let batches = generated_log(name, megabytes << 20);
        let log: Vec<u8> = batches
            .iter()
            .flatten()
            .flat_map(|line| [line.as_bytes(), b"\n"])
            .flatten()
            .copied()
            .collect();
        let driver = registry.get(name).unwrap();
        let mut times = [const { Vec::new() }; 4];
        // Alternate the four so that machine noise hits them alike.
        for _ in 0..ROUNDS {
            times[0].push(time_feed(native_parser(name).as_mut(), &batches));
            times[1].push(time_feed(&mut driver.session().unwrap(), &batches));
            times[2].push(time(|| replay_native(name, &log, &exit)));
            times[3].push(time(|| replay_wasm(&registry, name, &log, &exit)));
        }
        let [feed_native, feed_wasm, log_native, log_wasm] = times.map(median);
        let rate = |time: Duration| log.len() as f64 / time.as_secs_f64() / 1e6;
        let ratio = |wasm: Duration, native: Duration| wasm.as_secs_f64() / native.as_secs_f64();
        println!(
            "{name:<8} {:>11.0} {:>11.0} {:>10.2}x {:>13.0} {:>13.0} {:>12.2}x",
            rate(feed_native),
            rate(feed_wasm),
            ratio(feed_wasm, feed_native),
            rate(log_native),
            rate(log_wasm),
            ratio(log_wasm, log_native),
        );
        // For `tests/bench/targets.py`.
        println!(
            "RESULT driver={name} feed_ratio={:.2} replay_ratio={:.2}",
            ratio(feed_wasm, feed_native),
            ratio(log_wasm, log_native),
        );
    }

    if let Some(component) = std::env::var_os("CINCH_BENCH_COMPONENT") {
        compare_component(&registry, std::path::Path::new(&component), megabytes);
    }

    println!();
    let claude = cinch_engine::drivers::BUILTIN
        .iter()
        .find(|b| b.name == "claude")
        .unwrap();
    let cold = {
        let fresh = tempfile::tempdir().unwrap();
        let runtime = cinch_tests::runtime(fresh.path());
        let started = Instant::now();
        runtime
            .load("claude", claude.wasm, Some(claude.sha256))
            .unwrap();
        started.elapsed()
    };
    let warm = median_of(200, || {
        let started = Instant::now();
        runtime
            .load("claude", claude.wasm, Some(claude.sha256))
            .unwrap();
        started.elapsed()
    });
    println!(
        "load a driver, compiling (cold cache):          {:>9.1} ms",
        cold.as_secs_f64() * 1e3
    );
    println!(
        "load a driver from the cache (incl. describe):  {:>9.1} µs",
        micros(warm)
    );
    let driver = registry.get("claude").unwrap();
    let instantiate = median_of(2000, || {
        let started = Instant::now();
        let session = driver.session().unwrap();
        let elapsed = started.elapsed();
        drop(session);
        elapsed
    });
    println!(
        "instantiate a driver for a turn (with parser):  {:>9.1} µs",
        micros(instantiate)
    );
    report_limits(&runtime);
}

/// Feed throughput of the component at `path` against the claude driver,
/// natively and as a component, on Claude Code's generated log; and the
/// component's compile and cached-load times.
fn compare_component(registry: &Registry, path: &std::path::Path, megabytes: usize) {
    let wasm = std::fs::read(path).expect("reading CINCH_BENCH_COMPONENT");
    let cache = tempfile::tempdir().unwrap();
    let runtime = runtime(cache.path());
    let origin = path.display().to_string();
    let started = Instant::now();
    let component = runtime
        .load(&origin, &wasm, None)
        .expect("loading the component");
    let compile = started.elapsed();
    let load = median_of(5, || {
        let started = Instant::now();
        runtime.load(&origin, &wasm, None).unwrap();
        started.elapsed()
    });
    let instantiate = median_of(20, || {
        let started = Instant::now();
        drop(component.session().unwrap());
        started.elapsed()
    });
    let batches = generated_log("claude", megabytes << 20);
    let lines: usize = batches.iter().map(Vec::len).sum();
    let claude = registry.get("claude").unwrap();
    let mut times = [const { Vec::new() }; 3];
    for _ in 0..ROUNDS {
        times[0].push(time_feed(native_parser("claude").as_mut(), &batches));
        times[1].push(time_feed(&mut claude.session().unwrap(), &batches));
        times[2].push(time_feed(&mut component.session().unwrap(), &batches));
    }
    let [native, rust_wasm, other] = times.map(median);
    let name = &component.info().name;
    println!();
    println!(
        "{name} ({origin}, {:.1} MB) on Claude Code's log of {lines} lines, feed (median of {ROUNDS}):",
        wasm.len() as f64 / 1e6
    );
    for (label, time) in [
        ("claude native", native),
        ("claude wasm", rust_wasm),
        (name.as_str(), other),
    ] {
        println!(
            "  {label:<16} {:>10.0} lines/s {:>8.2} µs/line",
            lines as f64 / time.as_secs_f64(),
            micros(time) / lines as f64
        );
    }
    println!(
        "  {name} / claude wasm: {:.1}x the time a line; / claude native: {:.1}x",
        other.as_secs_f64() / rust_wasm.as_secs_f64(),
        other.as_secs_f64() / native.as_secs_f64()
    );
    let size: u64 = std::fs::read_dir(cache.path())
        .unwrap()
        .filter_map(|entry| entry.ok()?.metadata().ok())
        .map(|meta| meta.len())
        .sum();
    println!(
        "  compile {:.1} s (cold cache), compiled size {:.1} MB, load from the cache {:.1} ms, instantiate for a turn {:.1} ms",
        compile.as_secs_f64(),
        size as f64 / 1e6,
        load.as_secs_f64() * 1e3,
        instantiate.as_secs_f64() * 1e3
    );
    println!(
        "RESULT component={name} feed_ratio_vs_wasm={:.2} feed_ratio_vs_native={:.2}",
        other.as_secs_f64() / rust_wasm.as_secs_f64(),
        other.as_secs_f64() / native.as_secs_f64()
    );
}

fn report_limits(runtime: &Runtime) {
    let limits = runtime.limits();
    println!(
        "sandbox limits on: {} ms per call (epoch interruption), {} MiB memory",
        limits.call_timeout.as_millis(),
        limits.memory_bytes >> 20
    );
}

/// A log of about `size` bytes in `name`'s format: the recorded tool-use run
/// (for Cursor, which cannot run here, a synthetic one; for ACP, the agent's
/// side of claude-agent-acp's, with a permission request to answer) with its
/// middle repeated, split into batches.
fn generated_log(name: &str, size: usize) -> Vec<Vec<String>> {
    let text = if name == "acp" {
        let transcript = acp_dir()
            .expect("../shared/fixtures/acp beside the checkout")
            .join("claude-agent-acp/s2.jsonl");
        String::from_utf8(Transcript::read(&transcript).agent_log()).unwrap()
    } else {
        let recorded = recorded_dir().join(name).join("s2.jsonl");
        let synthetic = crate_dir()
            .join("fixtures/synthetic")
            .join(format!("{name}.jsonl"));
        std::fs::read_to_string(&recorded)
            .or_else(|_| std::fs::read_to_string(&synthetic))
            .expect("a log to grow")
    };
    let lines: Vec<&str> = text.lines().collect();
    let (first, rest) = lines.split_first().unwrap();
    let (last, middle) = rest.split_last().unwrap();
    let mut out = vec![first.to_string()];
    let mut total = first.len();
    while total < size {
        for line in middle {
            out.push(line.to_string());
            total += line.len() + 1;
        }
    }
    out.push(last.to_string());
    out.chunks(BATCH).map(<[String]>::to_vec).collect()
}

fn time_feed(parser: &mut dyn TurnParser, batches: &[Vec<String>]) -> Duration {
    let started = Instant::now();
    for batch in batches {
        std::hint::black_box(parser.feed(batch).unwrap());
    }
    std::hint::black_box(parser.finish(Some(0), "").unwrap());
    started.elapsed()
}

fn time<R>(run: impl FnOnce() -> R) -> Duration {
    let started = Instant::now();
    std::hint::black_box(run());
    started.elapsed()
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn median_of(count: usize, mut measure: impl FnMut() -> Duration) -> Duration {
    median((0..count).map(|_| measure()).collect())
}

fn micros(time: Duration) -> f64 {
    time.as_secs_f64() * 1e6
}
