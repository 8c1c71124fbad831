//! Helpers of the fork tests (real_clis and real_acp): turns through the
//! API, and the mock model's requests that show what history a turn had.

use std::time::{Duration, Instant};

use cinch_mock_model::MockServer;
use serde_json::{Value, json};

use crate::support;

/// What the fork test's mock model answers every turn: how much history it was sent.
pub const HISTORY_ANSWER: &str = "history of {n_model} model turn(s)";

/// Sends `message` to the session and waits for its turn to end: the turn's assistant message.
pub fn exchange(api: &support::Api, task: &str, session: &str, message: &str) -> Value {
    let before = own_turn(api, task, session);
    let sent = api.post(
        &format!("/tasks/{task}/sessions/{session}/messages"),
        json!({"message": message}),
    );
    assert_eq!(sent.status, 201, "{sent:?}");
    ended_turn(api, task, session, before.as_ref())
}

/// The session's latest turn of its own (not one a fork inherited).
pub fn own_turn(api: &support::Api, task: &str, session: &str) -> Option<Value> {
    let page = api.walk(task, session, "desc", 100);
    page.into_iter()
        .find(|message| message["type"] == "assistant" && message["forked_from"].is_null())
}

/// Waits for a turn of the session other than `before` to end: its assistant message.
/// The message is read before the session, so that idle means that turn had started and is
/// done; it is read again after, since the turn may have ended between the two reads (cinch
/// records a turn's end in its message before it marks the session idle).
pub fn ended_turn(api: &support::Api, task: &str, session: &str, before: Option<&Value>) -> Value {
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let latest = own_turn(api, task, session);
        let current = api.session(task, session);
        if let Some(latest) = latest
            && before.is_none_or(|before| latest["id"] != before["id"])
            && current["status"] == "idle"
        {
            let ended = own_turn(api, task, session).expect("the turn's message");
            assert_eq!(ended["id"], latest["id"], "{ended:#}");
            assert_eq!(ended["turn"]["status"], "completed", "{ended:#}");
            return ended;
        }
        assert!(
            Instant::now() < deadline,
            "the session's turn never ended: {current:#}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// How long after `asked` the session's first turn started (its assistant message appeared).
pub fn first_turn_after(api: &support::Api, task: &str, session: &str, asked: Instant) -> Duration {
    loop {
        if own_turn(api, task, session).is_some() {
            return asked.elapsed();
        }
        assert!(
            asked.elapsed() < Duration::from_secs(300),
            "the fork's turn never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The one model request (not a side request) whose body holds `text`, as its body's text
/// and the model turns of its history.
pub fn request_with(server: &MockServer, text: &str) -> (String, Option<usize>) {
    let found: Vec<(String, Option<usize>)> = server
        .requests()
        .into_iter()
        .filter(|request| !request.side && request.turn.is_some())
        .filter_map(|request| {
            let body = request.body?.to_string();
            body.contains(text).then_some((body, request.turn))
        })
        .collect();
    assert!(!found.is_empty(), "no model request holds {text:?}");
    found.into_iter().last().unwrap()
}
