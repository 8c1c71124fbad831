//! Several `cinch serve` nodes, each with its own home and address, over
//! one PostgreSQL database. These run when `CINCH_TEST_DATABASE` names a
//! PostgreSQL server (`.ci/run` starts one); without it there is no second
//! backend to share and they say they were skipped.

use cinch_fake_cli::Script;
use serde_json::json;

mod support;

use support::*;

/// A fresh database on the test server, or `None` (said on stderr).
fn shared_database() -> Option<String> {
    let database = test_database();
    if database.is_none() {
        eprintln!("skipped: CINCH_TEST_DATABASE names no PostgreSQL server");
    }
    database
}

#[test]
fn nodes_starting_together_make_one_account_and_later_nodes_none() {
    let Some(database) = shared_database() else {
        return;
    };
    let worlds: Vec<World> = (0..3)
        .map(|_| World::with_database(Some(database.clone())))
        .collect();
    let servers: Vec<Server> = std::thread::scope(|scope| {
        let starting: Vec<_> = worlds
            .iter()
            .map(|world| scope.spawn(|| world.serve()))
            .collect();
        starting
            .into_iter()
            .map(|node| node.join().unwrap())
            .collect()
    });
    let made: Vec<&World> = worlds
        .iter()
        .filter(|world| world.path("home/admin-token").exists())
        .collect();
    assert_eq!(made.len(), 1, "exactly one node writes the admin's token");
    let token = made[0].admin_token();
    for server in &servers {
        let accounts = server.get("/v1/accounts", &token);
        assert_eq!(accounts.status, 200, "{accounts:?}");
        assert_eq!(accounts.data().as_array().unwrap().len(), 1, "{accounts:?}");
    }

    // A node that starts later on the same database creates nothing either.
    let later = World::with_database(Some(database));
    let server = later.serve();
    assert!(!later.path("home/admin-token").exists());
    assert_eq!(std::fs::read_to_string(&server.stdout).unwrap(), "");
    let accounts = server.get("/v1/accounts", &token);
    assert_eq!(accounts.data().as_array().unwrap().len(), 1, "{accounts:?}");
}

#[test]
fn any_node_answers_for_what_another_wrote() {
    let Some(database) = shared_database() else {
        return;
    };
    let first = World::with_database(Some(database.clone()));
    let second = World::with_database(Some(database));
    let one = first.serve();
    let two = second.serve();
    let token = first.admin_token();
    let on_one = Api::new(&one, &token);
    let on_two = Api::new(&two, &token);
    assert_eq!(on_one.account, on_two.account);

    // A token made on one node's command line works on the other.
    let agent = second.agent_token("ci");
    assert_eq!(one.get("/v1/accounts", &agent).status, 200);

    let environment = on_one.environment(json!({
        "name": "shop",
        "repository": first.path("repo").display().to_string(),
    }));
    let read = on_two.get(&format!("/environments/{environment}"));
    assert_eq!(read.status, 200, "{read:?}");
    assert_eq!(read.data()["name"], "shop");

    first.script(Script {
        lines: claude_turn("sess-n", "Done on node one."),
        ..Script::default()
    });
    let created = on_one.post(
        "/tasks",
        json!({"prompt": "Say hello", "environment_id": environment}),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let task = created.data()["id"].as_str().unwrap().to_owned();
    let session = on_one.first_session(&task)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    on_one.wait_status(&task, &session, "idle");

    // Node two reads the same conversation, page for page, and sees a
    // message posted on node one at once (it keeps no page of its own).
    let before = on_two.messages(&task, &session, "").data();
    assert_eq!(before, on_one.messages(&task, &session, "").data());
    assert_eq!(assistant(&before)["content"], "Done on node one.");
    let tasks = on_two.get("/tasks").data();
    assert_eq!(tasks[0]["id"], json!(task), "{tasks:#}");
    first.script(Script {
        lines: claude_turn("sess-n", "Again on node one."),
        ..Script::default()
    });
    let sent = on_one.post(
        &format!("/tasks/{task}/sessions/{session}/messages"),
        json!({"message": "once more"}),
    );
    assert_eq!(sent.status, 201, "{sent:?}");
    let after = on_two.messages(&task, &session, "").data();
    assert!(
        after
            .as_array()
            .unwrap()
            .iter()
            .any(|message| message["content"] == "once more"),
        "{after:#}"
    );
}
