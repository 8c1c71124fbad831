//! `fake-cli`: a harness CLI that does what the script in `FAKE_CLI_SCRIPT`
//! says. The script's schema is in the `cinch_fake_cli` crate documentation.

use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use cinch_fake_cli::{Record, SCRIPT_ENV, Script};

/// The exit status when fake-cli itself fails (no script, bad script, I/O).
const OWN_FAILURE: i32 = 2;

fn main() {
    let args: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let spec = std::env::var(SCRIPT_ENV).ok();
    if asks_version(&args) {
        // The host asks for the CLI's version with its own environment,
        // which may name no script, so a version answer needs none; a
        // script that names one wins.
        let version = match spec.as_deref().map(Script::load) {
            Some(Ok(script)) => script.version,
            Some(Err(why)) => fail(&why),
            None => Script::default().version,
        };
        println!("{version}");
        return;
    }
    let Some(spec) = spec else {
        fail(&format!("{SCRIPT_ENV} is not set"));
    };
    let script = Script::load(&spec).unwrap_or_else(|why| fail(&why));
    if let Err(why) = run(&script, args) {
        fail(&why);
    }
    std::process::exit(script.exit_code);
}

/// Whether the arguments ask for the version, the way the real CLIs take it.
fn asks_version(args: &[String]) -> bool {
    args.iter().skip(1).any(|a| a == "--version" || a == "-v")
        || args.get(1).is_some_and(|a| a == "version")
}

/// Reports fake-cli's own failure as one JSON line on stderr, and exits.
fn fail(why: &str) -> ! {
    eprintln!("{}", serde_json::json!({ "fake_cli_error": why }));
    std::process::exit(OWN_FAILURE);
}

/// Does everything the script asks but exiting, in the documented order.
fn run(script: &Script, args: Vec<String>) -> Result<(), String> {
    if script.ignore_sigterm {
        // SAFETY: setting a signal's disposition to SIG_IGN installs no
        // handler code, and no other thread is running yet.
        unsafe { libc::signal(libc::SIGTERM, libc::SIG_IGN) };
    }
    let mut stdin = Vec::new();
    if script.read_stdin {
        io::stdin()
            .read_to_end(&mut stdin)
            .map_err(|e| format!("reading stdin: {e}"))?;
    }
    if let Some(path) = &script.record {
        record(path, args, &stdin)?;
    }
    if let Some(text) = &script.stderr {
        let mut err = io::stderr().lock();
        err.write_all(text.as_bytes())
            .and_then(|()| err.flush())
            .map_err(|e| format!("writing stderr: {e}"))?;
    }
    for (path, content) in &script.write_files {
        write_file(Path::new(path), content.as_bytes())?;
    }
    for path in &script.delete_files {
        match fs::remove_file(path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                return Err(format!("deleting {path}: {e}"));
            }
            _ => {}
        }
    }
    for probe in &script.probes {
        let line = serde_json::to_string(&probe.run()).map_err(|e| e.to_string())?;
        let mut out = io::stdout().lock();
        writeln!(out, "{line}")
            .and_then(|()| out.flush())
            .map_err(|e| format!("writing stdout: {e}"))?;
    }
    if script.grandchild {
        spawn_grandchild(script)?;
    }
    print_lines(script)?;
    print_ticks(script)?;
    keep_busy(Duration::from_millis(script.busy_ms));
    match script.hang_ms {
        0 => {}
        ms if ms < 0 => loop {
            thread::sleep(Duration::from_secs(3600));
        },
        ms => thread::sleep(Duration::from_millis(ms.unsigned_abs())),
    }
    Ok(())
}

/// Spins on the CPU for `how_long`.
fn keep_busy(how_long: Duration) {
    let start = Instant::now();
    let mut state = 0u64;
    while start.elapsed() < how_long {
        for _ in 0..10_000 {
            state = std::hint::black_box(
                state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1),
            );
        }
    }
}

/// Writes the [`Record`] of this invocation.
fn record(path: &Path, argv: Vec<String>, stdin: &[u8]) -> Result<(), String> {
    let rec = Record {
        argv,
        cwd: std::env::current_dir().map_err(|e| format!("reading the cwd: {e}"))?,
        env: std::env::vars_os()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.to_string_lossy().into_owned(),
                )
            })
            .collect(),
        stdin: String::from_utf8_lossy(stdin).into_owned(),
        pid: std::process::id(),
        // SAFETY: both calls only read the calling process's ids.
        pgid: unsafe { libc::getpgrp() },
        sid: unsafe { libc::getsid(0) },
        autogroup: std::fs::read_to_string("/proc/self/autogroup")
            .ok()
            .map(|line| line.trim_end().to_owned()),
    };
    let json = serde_json::to_vec_pretty(&rec).map_err(|e| e.to_string())?;
    write_atomically(path, &json)
}

/// Writes a file of the working tree, creating its parent directories.
fn write_file(path: &Path, content: &[u8]) -> Result<(), String> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(|e| format!("creating {}: {e}", parent.display()))?;
    }
    fs::write(path, content).map_err(|e| format!("writing {}: {e}", path.display()))
}

/// Writes a file through a temporary name, so a test that polls for it never
/// reads it half written.
fn write_atomically(path: &Path, content: &[u8]) -> Result<(), String> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    fs::write(&tmp, content).map_err(|e| format!("writing {}: {e}", path.display()))?;
    fs::rename(&tmp, path).map_err(|e| format!("writing {}: {e}", path.display()))
}

/// Starts a copy of this binary that sleeps forever and ignores SIGTERM, the
/// way a harness's stray background process outlives a polite stop.
fn spawn_grandchild(script: &Script) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("finding myself: {e}"))?;
    let orders = Script {
        read_stdin: false,
        ignore_sigterm: true,
        hang_ms: -1,
        ..Script::default()
    };
    let mut cmd = Command::new(exe);
    cmd.env(
        SCRIPT_ENV,
        serde_json::to_string(&orders).map_err(|e| e.to_string())?,
    )
    .stdin(Stdio::null());
    if !script.grandchild_inherits_stdio {
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
    }
    let setsid = script.grandchild_setsid;
    // SAFETY: between fork and exec the closure calls only signal() and
    // setsid(), both async-signal-safe, and allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            // Ignoring SIGTERM before exec (the disposition survives it) means
            // the grandchild is immune from the moment its pid is known, with
            // no window in which a test's SIGTERM would still kill it.
            libc::signal(libc::SIGTERM, libc::SIG_IGN);
            if setsid && libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd
        .spawn()
        .map_err(|e| format!("spawning the grandchild: {e}"))?;
    if let Some(path) = &script.grandchild_pid_file {
        write_atomically(path, child.id().to_string().as_bytes())?;
    }
    // Never waited for: once this process exits, init reaps it.
    Ok(())
}

/// Prints the replayed log and then the inline lines, paced as the script says.
fn print_lines(script: &Script) -> Result<(), String> {
    let mut lines: Vec<Vec<u8>> = Vec::new();
    if let Some(path) = &script.replay {
        let log = fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        lines.extend(split_lines(&log).map(<[u8]>::to_vec));
    }
    for line in &script.lines {
        lines.push(match line {
            serde_json::Value::String(s) => s.clone().into_bytes(),
            other => other.to_string().into_bytes(),
        });
    }
    let mut out = io::stdout().lock();
    // Sleeping to deadlines on one clock keeps a long replay from drifting
    // by the time each write takes.
    let mut due = Instant::now();
    let mut previous: Option<Option<i64>> = None;
    for line in &lines {
        let stamp = if script.use_timestamps {
            timestamp_ms(line)
        } else {
            None
        };
        if let Some(before) = previous {
            let gap = match (before, stamp) {
                (Some(a), Some(b)) => (b - a).clamp(0, script.max_gap_ms as i64) as u64,
                _ => script.line_delay_ms,
            };
            due += Duration::from_millis(gap);
            sleep_until(due);
        }
        previous = Some(stamp);
        print(&mut out, line)?;
    }
    Ok(())
}

/// Prints `{"type":"tick","n":N}` lines (or the script's `tick_line`) at the
/// script's steady rate for its duration.
fn print_ticks(script: &Script) -> Result<(), String> {
    let Some(rate) = script.lines_per_second.filter(|r| *r > 0.0) else {
        return Ok(());
    };
    let start = Instant::now();
    let count = (rate * script.duration_ms as f64 / 1000.0).floor() as u64;
    let mut out = io::stdout().lock();
    for n in 1..=count {
        sleep_until(start + Duration::from_secs_f64((n - 1) as f64 / rate));
        let line = match &script.tick_line {
            Some(template) => template
                .replace("{n}", &n.to_string())
                .replace("{now_us}", &now_us().to_string()),
            None => format!(r#"{{"type":"tick","n":{n}}}"#),
        };
        print(&mut out, line.as_bytes())?;
    }
    sleep_until(start + Duration::from_millis(script.duration_ms));
    Ok(())
}

/// The wall-clock time in microseconds since the Unix epoch.
fn now_us() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_micros())
}

/// Writes one line and flushes it, so a follower sees it at once.
fn print(out: &mut impl Write, line: &[u8]) -> Result<(), String> {
    out.write_all(line)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush())
        .map_err(|e| format!("writing stdout: {e}"))
}

/// Sleeps until `deadline`, or not at all when it has passed.
fn sleep_until(deadline: Instant) {
    let now = Instant::now();
    if deadline > now {
        thread::sleep(deadline - now);
    }
}

/// A log's lines, byte for byte, without their newlines; a final newline
/// ends the last line rather than starting an empty one.
fn split_lines(log: &[u8]) -> impl Iterator<Item = &[u8]> {
    log.strip_suffix(b"\n")
        .unwrap_or(log)
        .split(|b| *b == b'\n')
        .filter(move |_| !log.is_empty())
}

/// The time a recorded line carries, in milliseconds: cursor's
/// `timestamp_ms`, or gemini's ISO 8601 `timestamp`.
fn timestamp_ms(line: &[u8]) -> Option<i64> {
    let value: serde_json::Value = serde_json::from_slice(line).ok()?;
    if let Some(ms) = value
        .get("timestamp_ms")
        .and_then(serde_json::Value::as_f64)
    {
        return Some(ms as i64);
    }
    iso8601_ms(value.get("timestamp")?.as_str()?)
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fraction][Z|±HH:MM]` into milliseconds since
/// the Unix epoch; no offset means UTC.
fn iso8601_ms(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    // All ASCII, so every byte index below is a character boundary.
    let shape_ok = s.is_ascii()
        && b.len() >= 19
        && b[4] == b'-'
        && b[7] == b'-'
        && matches!(b[10], b'T' | b't' | b' ')
        && b[13] == b':'
        && b[16] == b':';
    if !shape_ok {
        return None;
    }
    let (year, month, day) = (digits(&s[0..4])?, digits(&s[5..7])?, digits(&s[8..10])?);
    let (hour, minute, second) = (
        digits(&s[11..13])?,
        digits(&s[14..16])?,
        digits(&s[17..19])?,
    );
    let mut rest = &s[19..];
    let mut millis = 0;
    if let Some(fraction) = rest.strip_prefix('.') {
        let len = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if len == 0 {
            return None;
        }
        let kept = &fraction[..len.min(3)];
        millis = digits(kept)? * 10_i64.pow(3 - kept.len() as u32);
        rest = &fraction[len..];
    }
    let offset_minutes = match rest {
        "" | "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let hhmm = rest[1..].replace(':', "");
            if hhmm.len() != 4 {
                return None;
            }
            sign * (digits(&hhmm[0..2])? * 60 + digits(&hhmm[2..4])?)
        }
    };
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    Some(seconds * 1000 + millis)
}

/// A run of ASCII digits as a number (no sign, unlike `str::parse`).
fn digits(s: &str) -> Option<i64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_timestamps_parse_to_epoch_millis() {
        assert_eq!(iso8601_ms("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(iso8601_ms("2000-03-01T00:00:00.5Z"), Some(951_868_800_500));
        assert_eq!(
            iso8601_ms("2026-12-02T07:52:37.301Z").unwrap()
                - iso8601_ms("2026-12-02T07:52:37.270Z").unwrap(),
            31
        );
        assert_eq!(iso8601_ms("1970-01-01T01:00:00+01:00"), Some(0));
        assert_eq!(
            iso8601_ms("1970-01-01T00:00:00.123456-0030"),
            Some(1_800_123)
        );
        assert_eq!(iso8601_ms("1970-01-01"), None);
        assert_eq!(iso8601_ms("1970-01-01T00:00:00+1"), None);
    }

    #[test]
    fn timestamps_come_from_either_field() {
        assert_eq!(timestamp_ms(br#"{"timestamp_ms":1234}"#), Some(1234));
        assert_eq!(
            timestamp_ms(br#"{"timestamp":"1970-01-01T00:00:01Z"}"#),
            Some(1000)
        );
        assert_eq!(timestamp_ms(br#"{"type":"x"}"#), None);
        assert_eq!(timestamp_ms(b"not json"), None);
    }

    #[test]
    fn lines_split_byte_for_byte() {
        let split = |s: &'static [u8]| split_lines(s).collect::<Vec<_>>();
        assert_eq!(split(b""), Vec::<&[u8]>::new());
        assert_eq!(split(b"a\n\nb\n"), vec![&b"a"[..], b"", b"b"]);
        assert_eq!(split(b"a\r\nb"), vec![&b"a\r"[..], b"b"]);
    }
}
