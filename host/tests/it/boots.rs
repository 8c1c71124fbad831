//! Many sessions booting at once on one environment: cinch's git operations
//! on one repository take turns, so every worktree is made.

use crate::support;
use crate::support::gate::{self, Load};

use cinch_fake_cli::Script;
use serde_json::json;
use support::*;

#[test]
fn fifty_sessions_at_once_on_one_environment_all_reach_idle() {
    let _machine = gate::hold(Load::Machine);
    const SESSIONS: usize = 50;
    let world = World::new();
    world.script(Script {
        lines: claude_turn("boot-1", "ready"),
        ..Script::default()
    });
    let server = world.serve_with(&["--max-turns", "8", "--retry-seconds", "1"]);
    let api = Api::new(&server, &world.admin_token());
    let environment = api.environment(json!({
        "name": "shared",
        "repository": world.path("repo").display().to_string(),
        "setup": ["test -f readme.txt"],
    }));
    assert_eq!(api.get("/tasks").data(), json!([]));
    let tasks: Vec<String> = std::thread::scope(|scope| {
        let starts: Vec<_> = (0..SESSIONS)
            .map(|n| {
                let api = &api;
                let environment = &environment;
                scope.spawn(move || {
                    let created = api.post(
                        "/tasks",
                        json!({"prompt": format!("task {n}"), "environment_id": environment}),
                    );
                    assert_eq!(created.status, 201, "{created:?}");
                    created.data()["id"].as_str().unwrap().to_owned()
                })
            })
            .collect();
        starts
            .into_iter()
            .map(|start| start.join().unwrap())
            .collect()
    });
    assert_eq!(
        api.get("/tasks?limit=200").data().as_array().unwrap().len(),
        SESSIONS
    );
    let mut branches = std::collections::BTreeSet::new();
    for task in &tasks {
        let session = api.first_session(task)["id"].as_str().unwrap().to_owned();
        let settled = api.wait(task, &session, "idle or closed", |s| {
            s["status"] == "idle" || s["status"] == "closed"
        });
        assert_eq!(settled["status"], "idle", "{settled:#}");
        let message = assistant(&api.messages(task, &session, "").data());
        assert_eq!(message["turn"]["status"], "completed", "{message:#}");
        branches.insert(settled["branch_name"].as_str().unwrap().to_owned());
    }
    assert_eq!(branches.len(), SESSIONS);
    let worktrees = std::process::Command::new("git")
        .args(["worktree", "list", "--porcelain"])
        .current_dir(world.path("repo"))
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&worktrees.stdout)
        .lines()
        .filter(|line| line.starts_with("worktree "))
        .count();
    assert_eq!(listed, SESSIONS + 1);
}
