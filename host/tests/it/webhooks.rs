//! Webhooks against a receiver on loopback: signed deliveries of a turn's
//! end and a session's status changes, a receiver that fails then recovers,
//! the delivery log, redelivery, and the addresses a tenant may not reach.

use crate::support;

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cinch_fake_cli::Script;
use hmac::{Hmac, Mac as _};
use serde_json::{Value, json};
use support::*;

const SECRET: &str = "whsec-0123456789abcdef";

/// One request the receiver got.
#[derive(Debug, Clone)]
struct Received {
    headers: BTreeMap<String, String>,
    body: String,
}

/// An HTTP receiver that answers its first `failures` requests 500, then 200.
struct Receiver {
    url: String,
    seen: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    fn start(failures: usize) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hooks/cinch", listener.local_addr().unwrap());
        let seen: Arc<Mutex<Vec<Received>>> = Arc::default();
        let record = seen.clone();
        std::thread::spawn(move || {
            for (n, stream) in listener.incoming().enumerate() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut headers = BTreeMap::new();
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                loop {
                    line.clear();
                    reader.read_line(&mut line).unwrap();
                    let Some((name, value)) = line.trim_end().split_once(": ") else {
                        break;
                    };
                    headers.insert(name.to_ascii_lowercase(), value.to_owned());
                }
                let length: usize = headers["content-length"].parse().unwrap();
                let mut body = vec![0; length];
                reader.read_exact(&mut body).unwrap();
                record.lock().unwrap().push(Received {
                    headers,
                    body: String::from_utf8(body).unwrap(),
                });
                let status = if n < failures { "500 Oops" } else { "200 OK" };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                );
            }
        });
        Self { url, seen }
    }

    /// Waits until a request satisfies `found`, and returns it.
    fn wait_for(&self, what: &str, found: impl Fn(&Received) -> bool) -> Received {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(hit) = self.seen.lock().unwrap().iter().find(|r| found(r)) {
                return hit.clone();
            }
            assert!(
                Instant::now() < deadline,
                "no {what}: {:#?}",
                self.seen.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn event_type(received: &Received) -> String {
    serde_json::from_str::<Value>(&received.body).unwrap()["type"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Checks `X-Cinch-Signature` the way a receiver would.
/// Starts a task whose session runs one turn, and waits for it to be idle:
/// the task's and the session's ids.
fn one_turn_to_idle(api: &Api) -> (String, String) {
    let task = api.post("/tasks", json!({"prompt": "hi"}));
    assert_eq!(task.status, 201, "{task:?}");
    let task = task.data()["id"].as_str().unwrap().to_owned();
    let session = api.first_session(&task)["id"].as_str().unwrap().to_owned();
    api.wait_status(&task, &session, "idle");
    (task, session)
}

fn signature_holds(received: &Received, secret: &str) -> bool {
    let header = &received.headers["x-cinch-signature"];
    let (t, v1) = header
        .strip_prefix("t=")
        .and_then(|rest| rest.split_once(",v1="))
        .unwrap_or_else(|| panic!("a malformed signature: {header}"));
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{t}.{}", received.body).as_bytes());
    let expected: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    expected == v1
}

#[test]
fn a_turn_and_its_session_reach_a_webhook_that_fails_then_recovers() {
    let world = World::new();
    let server = world.serve_with(&["--webhook-allow-private"]);
    let api = Api::new(&server, &world.admin_token());
    let receiver = Receiver::start(1);
    assert_eq!(api.get("/webhooks").data(), json!([]));
    let created = api.post("/webhooks", json!({"url": receiver.url, "secret": SECRET}));
    assert_eq!(created.status, 201, "{created:?}");
    assert!(!created.text.contains(SECRET));
    let webhook = created.data()["id"].as_str().unwrap().to_owned();
    assert_eq!(api.get("/webhooks").data()[0]["url"], json!(receiver.url));

    world.script(Script {
        lines: claude_turn("w-1", "done"),
        ..Script::default()
    });
    let (_, session) = one_turn_to_idle(&api);

    // The turn's end, signed with the webhook's secret, after one failure.
    let ended = receiver.wait_for("turn.ended", |r| event_type(r) == "turn.ended");
    assert!(signature_holds(&ended, SECRET), "{ended:?}");
    assert!(!signature_holds(&ended, "another-secret-value"));
    assert_eq!(ended.headers["x-cinch-event"], "turn.ended");
    let body: Value = serde_json::from_str(&ended.body).unwrap();
    assert_eq!(body["data"]["run_id"], json!(session));
    assert_eq!(body["data"]["result"]["status"], "completed");
    assert_eq!(body["account_id"], json!(api.account));
    // Session status changes came too, idle among them.
    receiver.wait_for("the session going idle", |r| {
        event_type(r) == "session.status_changed"
            && serde_json::from_str::<Value>(&r.body).unwrap()["data"]["status"] == "idle"
    });
    assert!(
        !receiver
            .seen
            .lock()
            .unwrap()
            .iter()
            .any(|r| r.body.contains(SECRET)),
        "the secret went out in a body"
    );

    // The log: the first attempt was answered 500, and it was retried.
    let deadline = Instant::now() + Duration::from_secs(60);
    let deliveries = loop {
        let page = api.get(&format!("/webhooks/{webhook}/deliveries"));
        assert_eq!(page.status, 200, "{page:?}");
        let deliveries = page.data().as_array().unwrap().clone();
        if deliveries.iter().all(|d| d["state"] == "delivered") {
            break deliveries;
        }
        assert!(Instant::now() < deadline, "undelivered: {deliveries:#?}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let retried: Vec<&Value> = deliveries.iter().filter(|d| d["attempts"] == 2).collect();
    assert_eq!(retried.len(), 1, "{deliveries:#?}");
    assert_eq!(retried[0]["last_status"], 200);
    assert_eq!(
        receiver
            .seen
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.headers["x-cinch-delivery"] == retried[0]["id"].as_str().unwrap())
            .count(),
        2
    );

    // Redelivery: the same event again, as a new delivery.
    let turn_delivery = deliveries
        .iter()
        .find(|d| d["event"] == "turn.ended")
        .unwrap();
    let again = api.post(
        &format!(
            "/webhooks/{webhook}/deliveries/{}/redeliver",
            turn_delivery["id"].as_str().unwrap()
        ),
        json!({}),
    );
    assert_eq!(again.status, 202, "{again:?}");
    let new_id = again.data()["id"].as_str().unwrap().to_owned();
    let redelivered = receiver.wait_for("the redelivery", |r| {
        r.headers["x-cinch-delivery"] == new_id
    });
    assert_eq!(redelivered.body, ended.body);

    // Gone with its log.
    let gone = server.request(
        "DELETE",
        &api.path(&format!("/webhooks/{webhook}")),
        Some(&api.token),
        None,
    );
    assert_eq!(gone.status, 204, "{gone:?}");
    assert_eq!(api.get("/webhooks").data(), json!([]));
    assert_eq!(
        api.get(&format!("/webhooks/{webhook}/deliveries")).status,
        404
    );
}

/// The server looks an account's webhooks up as last read (on SQLite): one
/// made after the account's events found none must still get the next ones.
#[test]
fn a_webhook_made_after_events_found_none_gets_the_next_ones() {
    let world = World::new();
    let server = world.serve_with(&["--webhook-allow-private"]);
    let api = Api::new(&server, &world.admin_token());
    world.script(Script {
        lines: claude_turn("w-2", "done"),
        ..Script::default()
    });
    // A turn, its session's changes of status: events of an account
    // with no webhook.
    let (task, session) = one_turn_to_idle(&api);
    assert_eq!(api.get("/webhooks").data(), json!([]));

    let receiver = Receiver::start(0);
    let created = api.post("/webhooks", json!({"url": receiver.url, "secret": SECRET}));
    assert_eq!(created.status, 201, "{created:?}");
    let webhook = created.data()["id"].as_str().unwrap().to_owned();
    let sent = api.post(
        &format!("/tasks/{task}/sessions/{session}/messages"),
        json!({"message": "again"}),
    );
    assert_eq!(sent.status, 201, "{sent:?}");
    let ended = receiver.wait_for("the second turn's end", |r| event_type(r) == "turn.ended");
    let body: Value = serde_json::from_str(&ended.body).unwrap();
    assert_eq!(body["data"]["run_id"], json!(session));
    let deliveries = api.get(&format!("/webhooks/{webhook}/deliveries")).data();
    assert!(
        deliveries
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["event"] == "turn.ended"),
        "{deliveries:#?}"
    );
}

#[test]
fn a_tenant_cannot_point_a_webhook_at_the_servers_network() {
    let world = World::new();
    let server = world.serve();
    let api = Api::new(&server, &world.admin_token());
    for (url, secret, field) in [
        ("http://127.0.0.1:8080/x", SECRET, "url"),
        ("http://localhost/x", SECRET, "url"),
        ("http://10.0.0.7/x", SECRET, "url"),
        ("http://169.254.169.254/latest", SECRET, "url"),
        ("http://[::1]:9/", SECRET, "url"),
        ("ftp://hooks.example.invalid/", SECRET, "url"),
        ("https://hooks.example.invalid/", "short", "secret"),
    ] {
        let refused = api.post("/webhooks", json!({"url": url, "secret": secret}));
        assert_eq!(refused.status, 422, "{url}: {refused:?}");
        assert_eq!(refused.field_errors(), [field], "{url}");
        assert!(!refused.text.contains(SECRET));
    }
    assert_eq!(api.get("/webhooks").data(), json!([]));

    // Agents do not manage webhooks; other accounts do not see them.
    let agent = world.agent_token("agent");
    let by_agent = server.post(
        &api.path("/webhooks"),
        &agent,
        &json!({"url": "https://hooks.example.invalid/", "secret": SECRET}),
    );
    assert_eq!(by_agent.status, 403, "{by_agent:?}");
    let made = api.post(
        "/webhooks",
        json!({"url": "https://hooks.example.invalid/", "secret": SECRET}),
    );
    assert_eq!(made.status, 201, "{made:?}");
    let (_, other) = world.second_account();
    assert_eq!(server.get(&api.path("/webhooks"), &other).status, 404);
}
