//! A turn's supervisor sleeps until something happens, however many turns
//! run: it needs no inotify instance (a user has 128 by default, one per
//! supervisor was too few past that many turns, and those without one
//! looked at their files 40 times a second), and a stop still reaches it.
//! Alone in its binary: it takes every inotify instance its user has left.

#[path = "it/support/mod.rs"]
mod support;

use std::os::fd::{FromRawFd as _, OwnedFd};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use cinch_fake_cli::Script;
use support::World;

#[test]
fn a_silent_turns_supervisor_sleeps_without_inotify_and_still_stops() {
    let world = World::new();
    world.script(Script {
        lines: vec![
            serde_json::json!({"type": "system", "subtype": "init", "session_id": "quiet", "model": "m"}),
        ],
        hang_ms: -1,
        ..Script::default()
    });
    let held = take_every_inotify_instance();
    let run = world
        .cinch()
        .args(["run", "--harness", "claude", "--json", "--repo"])
        .arg(world.path("repo"))
        .arg("Say nothing for a while.")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (turn, supervisor) = running_supervisor(&world);
    // Past the CLI's start and its line.
    std::thread::sleep(Duration::from_millis(500));

    let woken_before = wakeups(supervisor);
    std::thread::sleep(Duration::from_secs(2));
    let woken = wakeups(supervisor) - woken_before;
    // Polling every 25 ms would be some 80.
    assert!(
        woken <= 4,
        "the supervisor of a silent turn woke {woken} times in 2 s"
    );

    let stopped = world.cinch().args(["stop", &turn]).output().unwrap();
    assert!(stopped.status.success(), "{stopped:?}");
    let output = run.wait_with_output().unwrap();
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["status"], "cancelled", "{result:#}");
    drop(held);
}

/// Opens inotify instances until the kernel refuses one, after raising this
/// process's open-file limit so that the user's instance limit is what
/// stops it.
fn take_every_inotify_instance() -> Vec<OwnedFd> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: reading and raising this process's own limit.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
        limit.rlim_cur = limit.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
    }
    let most: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_user_instances")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        (most as u64) < limit.rlim_cur.saturating_sub(64),
        "this process may open too few files to take all {most} inotify instances"
    );
    let mut held = Vec::new();
    loop {
        // SAFETY: a plain syscall; a descriptor it returns is owned at once.
        let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC) };
        if fd < 0 {
            return held;
        }
        held.push(unsafe { OwnedFd::from_raw_fd(fd) });
    }
}

/// The running turn's id and its supervisor's pid, once its CLI runs.
fn running_supervisor(world: &World) -> (String, i32) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let turns = std::fs::read_dir(world.path("home/turns"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path())
            .collect::<Vec<PathBuf>>();
        for dir in turns {
            let pid = std::fs::read_to_string(dir.join("supervisor.pid"));
            let cli_started = dir.join("pid").exists();
            if let (Ok(pid), true) = (pid, cli_started) {
                let turn = dir.file_name().unwrap().to_string_lossy().into_owned();
                return (turn, pid.trim().parse().unwrap());
            }
        }
        assert!(Instant::now() < deadline, "the turn never started");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// How many times the process `pid` has been scheduled to run.
fn wakeups(pid: i32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/schedstat")).unwrap();
    stat.split_whitespace().nth(2).unwrap().parse().unwrap()
}
