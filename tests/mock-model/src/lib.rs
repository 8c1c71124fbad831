//! A scripted mock model server for driving the real agent CLIs (Claude Code, Codex, Gemini
//! CLI) offline in tests, and the pieces to run those CLIs against it.
//!
//! The server speaks Anthropic Messages, OpenAI Responses, OpenAI Chat Completions and the
//! Gemini API on 127.0.0.1. A request picks its [`Scenario`] through its URL path prefix
//! `/sc/<name>/` (no prefix: `s1`) and gets the scenario's turn numbered by how many model
//! turns its history already holds. Requests that offer no tools or constrain the answer to a
//! JSON schema are side requests (titles, routing) and get a harmless answer instead, unless
//! the turn is an error; a [`Turn::Sleep`] delays them too.
//!
//! ```no_run
//! use cinch_mock_model::{Cli, MockServer, cli_args, cli_bin_dir, cli_env, write_cli_config};
//! let server = MockServer::start(Vec::new());
//! let home = std::path::Path::new("/tmp/some-home");
//! write_cli_config(Cli::Codex, &server, "s1", home).unwrap();
//! let status = std::process::Command::new(cli_bin_dir().join("codex"))
//!     .args(cli_args(Cli::Codex, "Reply with the word done", None))
//!     .env_clear()
//!     .envs(cli_env(Cli::Codex, &server, "s1", home))
//!     .status();
//! ```

mod apis;
mod cli;
mod http;
mod repo;
mod run;
mod scenario;

use std::collections::HashMap;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};

use serde_json::Value;

pub use apis::Api;
pub use cli::{Cli, cli_args, cli_bin_dir, cli_env, session_id, write_cli_config};
pub use repo::{git, new_repo};
pub use run::{RunOutput, run_with_timeout};
pub use scenario::{
    S2_ANSWER, S4_RESUMED, SHELL_COMMAND, SLOW_WAIT, Scenario, Turn, builtin_scenarios,
};

use apis::{Call, Reply};
use http::{Conn, ConnError, Request, Response};

/// The scenario of requests whose path has no `/sc/<name>/` prefix.
const DEFAULT_SCENARIO: &str = "s1";

/// One request the server received, as the tests see it.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    /// The HTTP method.
    pub method: String,
    /// The request target as sent, with the scenario prefix and the query.
    pub path: String,
    /// The scenario it addressed.
    pub scenario: String,
    /// The model API it called; `None` for probes (`HEAD`), model lists and unknown routes.
    pub api: Option<Api>,
    /// Whether it was a side request (no tools offered, or a JSON-schema answer wanted).
    pub side: bool,
    /// For model calls: the model turns in its history, which is the script turn it got.
    pub turn: Option<usize>,
    /// Its headers, in order, as sent (API keys included: they never leave the test).
    pub headers: Vec<(String, String)>,
    /// Its body parsed as JSON, when it was JSON.
    pub body: Option<Value>,
}

impl RecordedRequest {
    /// The first header of that name, compared case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// State shared by the accept loop and the connection threads.
struct Shared {
    scenarios: HashMap<String, Scenario>,
    requests: Mutex<Vec<RecordedRequest>>,
    stopped: AtomicBool,
    in_flight: AtomicUsize,
    connections: Mutex<Vec<JoinHandle<()>>>,
}

/// A panic in one connection thread must not hide the other requests from the test.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A running mock model server on 127.0.0.1. Dropping it stops it: the port closes, waiting
/// model calls end without an answer, and every thread is joined.
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl MockServer {
    /// Starts a server on a free port with the [built-in scenarios](builtin_scenarios) plus
    /// `extra` (an extra scenario replaces a built-in one of the same name).
    ///
    /// # Panics
    /// When no loopback port can be bound, which leaves a test nothing to do.
    pub fn start(extra: impl IntoIterator<Item = Scenario>) -> MockServer {
        MockServer::start_on(0, extra).expect("binding a port on 127.0.0.1")
    }

    /// Like [`MockServer::start`], on a given port (0 for any free one).
    pub fn start_on(
        port: u16,
        extra: impl IntoIterator<Item = Scenario>,
    ) -> io::Result<MockServer> {
        let listener = TcpListener::bind(("127.0.0.1", port))?;
        let addr = listener.local_addr()?;
        let scenarios = builtin_scenarios()
            .into_iter()
            .chain(extra)
            .map(|s| (s.name.clone(), s))
            .collect();
        let shared = Arc::new(Shared {
            scenarios,
            requests: Mutex::new(Vec::new()),
            stopped: AtomicBool::new(false),
            in_flight: AtomicUsize::new(0),
            connections: Mutex::new(Vec::new()),
        });
        let accept = {
            let shared = Arc::clone(&shared);
            thread::Builder::new()
                .name("mock-model-accept".into())
                .spawn(move || accept_loop(listener, shared))?
        };
        Ok(MockServer {
            addr,
            shared,
            accept: Some(accept),
        })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The base URL that selects `scenario`: `http://127.0.0.1:PORT/sc/<scenario>`. A CLI's
    /// API paths go after it.
    pub fn scenario_url(&self, scenario: &str) -> String {
        format!("{}/sc/{scenario}", self.base_url())
    }

    /// Every request received so far, in order of arrival.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// How many requests are being answered right now. A test that stops a CLI during a slow
    /// turn can watch this fall to 0 to know the model call was abandoned, not just orphaned.
    pub fn in_flight(&self) -> usize {
        self.shared.in_flight.load(Ordering::SeqCst)
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.shared.stopped.store(true, Ordering::SeqCst);
        // The accept loop blocks in accept(); a connection of our own wakes it to see the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
        let connections = std::mem::take(&mut *lock(&self.shared.connections));
        for c in connections {
            let _ = c.join();
        }
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.stopped.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { continue };
        let conn_shared = Arc::clone(&shared);
        let spawned = thread::Builder::new()
            .name("mock-model-conn".into())
            .spawn(move || serve_connection(stream, &conn_shared));
        if let Ok(handle) = spawned {
            let mut connections = lock(&shared.connections);
            connections.retain(|h| !h.is_finished());
            connections.push(handle);
        }
    }
}

fn serve_connection(stream: TcpStream, shared: &Shared) {
    let Ok(mut conn) = Conn::new(stream, &shared.stopped) else {
        return;
    };
    loop {
        let req = match conn.read_request() {
            Ok(Some(req)) => req,
            Ok(None) | Err(ConnError::Closed | ConnError::Stopped) => return,
            Err(ConnError::Bad(status, message)) => {
                let body = serde_json::json!({ "error": { "message": message } });
                let _ = conn.write_response(&Response::json(status, &body), false, false);
                return;
            }
        };
        let keep_alive = req.keep_alive();
        shared.in_flight.fetch_add(1, Ordering::SeqCst);
        let written = respond(shared, &mut conn, &req).is_some_and(|resp| {
            conn.write_response(&resp, req.method == "HEAD", keep_alive)
                .is_ok()
        });
        shared.in_flight.fetch_sub(1, Ordering::SeqCst);
        if !written || !keep_alive {
            return;
        }
    }
}

/// Which endpoint a path names.
enum Endpoint {
    Model(Api),
    CountTokens(Api),
    ListModels,
    Unknown,
}

fn endpoint(method: &str, path: &str) -> Endpoint {
    match method {
        "POST" if path.ends_with("/messages/count_tokens") => Endpoint::CountTokens(Api::Anthropic),
        "POST" if path.ends_with("/messages") => Endpoint::Model(Api::Anthropic),
        "POST" if path.ends_with("/responses") => Endpoint::Model(Api::OpenAiResponses),
        "POST" if path.ends_with("/chat/completions") => Endpoint::Model(Api::OpenAiChat),
        "POST" if path.contains(":streamGenerateContent") || path.contains(":generateContent") => {
            Endpoint::Model(Api::Gemini)
        }
        "POST" if path.contains(":countTokens") => Endpoint::CountTokens(Api::Gemini),
        "GET" if path.trim_end_matches('/').ends_with("/models") => Endpoint::ListModels,
        _ => Endpoint::Unknown,
    }
}

/// Splits a request target into its scenario and the API path (without the query).
fn route(target: &str) -> (String, String) {
    let path = target.split(['?', '#']).next().unwrap_or("");
    if let Some(rest) = path.strip_prefix("/sc/") {
        let (name, api_path) = rest.split_once('/').unwrap_or((rest, ""));
        return (name.to_string(), format!("/{api_path}"));
    }
    (DEFAULT_SCENARIO.to_string(), path.to_string())
}

/// The answer to one request; `None` to close the connection without one (a slow turn whose
/// client left, or a server shutting down).
fn respond(shared: &Shared, conn: &mut Conn, req: &Request) -> Option<Response> {
    let (scenario_name, path) = route(&req.target);
    let mut rec = RecordedRequest {
        method: req.method.clone(),
        path: req.target.clone(),
        scenario: scenario_name.clone(),
        api: None,
        side: false,
        turn: None,
        headers: req.headers.clone(),
        body: None,
    };
    let record = |rec: RecordedRequest| lock(&shared.requests).push(rec);
    if req.method == "HEAD" {
        // Claude Code probes its base URL before the first call.
        record(rec);
        return Some(Response::empty(200));
    }
    let (api, count_tokens) = match endpoint(&req.method, &path) {
        Endpoint::Model(api) => (api, false),
        Endpoint::CountTokens(api) => (api, true),
        Endpoint::ListModels => {
            record(rec);
            let models = serde_json::json!({
                "object": "list", "models": [],
                "data": [{ "id": "mock-model", "object": "model", "created": 0, "owned_by": "mock" }],
            });
            return Some(Response::json(200, &models));
        }
        Endpoint::Unknown => {
            record(rec);
            let body = serde_json::json!({ "error": {
                "message": format!("cinch mock model: no route for {} {path}", req.method),
                "type": "not_found_error",
            }});
            return Some(Response::json(404, &body));
        }
    };
    rec.api = Some(api);
    let body = match decode_json(req) {
        Ok(body) => body,
        Err((status, message)) => {
            record(rec);
            return Some(apis::error(api, status, Some(&message)));
        }
    };
    rec.body = Some(body.clone());
    if count_tokens {
        record(rec);
        let count = match api {
            Api::Gemini => serde_json::json!({ "totalTokens": 123 }),
            _ => serde_json::json!({ "input_tokens": 123 }),
        };
        return Some(Response::json(200, &count));
    }
    let history = apis::history(api, &body);
    let tools = apis::tool_names(api, &body);
    let schema = apis::json_schema(api, &body);
    rec.side = tools.is_empty() || schema.is_some();
    rec.turn = Some(history.model_turns);
    let side = rec.side;
    record(rec);
    let Some(scenario) = shared.scenarios.get(&scenario_name) else {
        let message = format!("cinch mock model: no scenario named {scenario_name:?}");
        return Some(apis::error(api, 404, Some(&message)));
    };
    let Some(mut turn) = scenario.turn(history.model_turns) else {
        let message = format!("cinch mock model: scenario {scenario_name:?} has no turns");
        return Some(apis::error(api, 500, Some(&message)));
    };
    while let Turn::Sleep(wait, then) = turn {
        if !conn.wait_for_client(*wait) {
            return None;
        }
        turn = then;
    }
    let reply = match turn {
        Turn::Error(status) => return Some(apis::error(api, *status, None)),
        Turn::Sleep(..) => unreachable!("sleeps were waited out above"),
        _ if side => match schema {
            Some(schema) => Reply::Text(apis::fill_schema(schema).to_string()),
            None => Reply::Text("ok".into()),
        },
        Turn::Text(text) => Reply::Text(
            text.replace("{n_model}", &history.model_turns.to_string())
                .replace("{n_user}", &history.user_messages.to_string()),
        ),
        Turn::Shell(command) => match apis::shell_call(api, &tools, command) {
            Some(call) => call,
            None => {
                let message = format!(
                    "cinch mock model: none of the offered tools runs shell commands: {tools:?}"
                );
                return Some(apis::error(api, 400, Some(&message)));
            }
        },
        Turn::Tool { suffix, args } => match tools.iter().find(|t| t.ends_with(suffix.as_str())) {
            Some(name) => Reply::Tool {
                name: name.clone(),
                args: args.clone(),
            },
            None => {
                let message = format!(
                    "cinch mock model: no offered tool's name ends with {suffix:?}: {tools:?}"
                );
                return Some(apis::error(api, 400, Some(&message)));
            }
        },
    };
    let model = match api {
        Api::Gemini => path
            .rsplit_once("/models/")
            .map(|(_, m)| m.split(':').next().unwrap_or(m))
            .unwrap_or("mock-model")
            .to_string(),
        _ => body["model"].as_str().unwrap_or("mock-model").to_string(),
    };
    let call = Call {
        api,
        stream: match api {
            Api::Gemini => path.contains(":streamGenerateContent"),
            _ => body["stream"].as_bool().unwrap_or(false),
        },
        model,
        history,
    };
    Some(apis::answer(&call, reply))
}

/// The request body as a JSON object, or the status and message to refuse it with. None of
/// the CLIs compresses what it sends (they only accept compressed answers), so a compressed
/// body is refused by name rather than decoded.
fn decode_json(req: &Request) -> Result<Value, (u16, String)> {
    if let Some(encoding) = req.header("content-encoding")
        && !encoding.eq_ignore_ascii_case("identity")
    {
        return Err((415, format!("unsupported content-encoding {encoding}")));
    }
    match serde_json::from_slice::<Value>(&req.body) {
        Ok(v) if v.is_object() => Ok(v),
        Ok(_) => Err((400, "the request body is not a JSON object".into())),
        Err(e) => Err((400, format!("the request body is not JSON: {e}"))),
    }
}
