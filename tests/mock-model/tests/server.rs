//! The mock model server over raw HTTP: each API's answers, tool calls, errors and side
//! answers, turn selection from the history, the HTTP plumbing, and slow turns ending early.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::thread;
use std::time::{Duration, Instant};

use cinch_mock_model::{Api, MockServer, S2_ANSWER, SHELL_COMMAND, Scenario, Turn};
use serde_json::{Value, json};

struct Resp {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Resp {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    /// The `data:` payloads of a server-sent event stream.
    fn events(&self) -> Vec<Value> {
        String::from_utf8_lossy(&self.body)
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter(|d| *d != "[DONE]")
            .map(|d| serde_json::from_str(d).expect("an event's data is JSON"))
            .collect()
    }
}

fn read_line(r: &mut impl BufRead) -> String {
    let mut line = String::new();
    r.read_line(&mut line).expect("reading a line");
    line.trim_end_matches(['\r', '\n']).to_string()
}

/// Reads one response: a Content-Length body, a chunked one, or (HEAD) none.
fn read_response(r: &mut impl BufRead, head_only: bool) -> Resp {
    let status_line = read_line(r);
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
    let mut headers = Vec::new();
    loop {
        let line = read_line(r);
        if line.is_empty() {
            break;
        }
        let (k, v) = line.split_once(':').expect("a header line");
        headers.push((k.trim().to_string(), v.trim().to_string()));
    }
    let mut resp = Resp {
        status,
        headers,
        body: Vec::new(),
    };
    if head_only {
        return resp;
    }
    if resp.header("transfer-encoding") == Some("chunked") {
        loop {
            let size = usize::from_str_radix(&read_line(r), 16).expect("a chunk size");
            let mut chunk = vec![0; size + 2];
            r.read_exact(&mut chunk).expect("reading a chunk");
            if size == 0 {
                break;
            }
            resp.body.extend_from_slice(&chunk[..size]);
        }
    } else {
        let n: usize = resp
            .header("content-length")
            .expect("a length")
            .parse()
            .unwrap();
        resp.body = vec![0; n];
        r.read_exact(&mut resp.body).expect("reading the body");
    }
    resp
}

fn connect(server: &MockServer) -> TcpStream {
    let addr = server.base_url().trim_start_matches("http://").to_string();
    let s = TcpStream::connect(addr).expect("connecting to the mock");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s
}

fn request(server: &MockServer, method: &str, path: &str, extra: &str, body: &[u8]) -> Resp {
    let mut s = connect(server);
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{extra}Content-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    read_response(&mut BufReader::new(s), method == "HEAD")
}

fn post(server: &MockServer, path: &str, body: &Value) -> Resp {
    request(server, "POST", path, "", body.to_string().as_bytes())
}

const ANTHROPIC: &str = "/v1/messages?beta=true";
const RESPONSES: &str = "/v1/responses";
const CHAT: &str = "/v1/chat/completions";
const GEMINI_SSE: &str = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse";
const GEMINI_JSON: &str = "/v1beta/models/gemini-2.5-flash:generateContent";

fn anthropic_body(messages: Value, stream: bool) -> Value {
    json!({ "model": "claude-sonnet-4-5", "stream": stream, "messages": messages,
            "tools": [{ "name": "Read" }, { "name": "Bash" }] })
}

fn responses_body(input: Value) -> Value {
    json!({ "model": "gpt-5.5", "stream": true, "input": input,
            "tools": [{ "type": "function", "name": "exec_command" }, { "type": "web_search" }] })
}

fn chat_body(messages: Value, stream: bool) -> Value {
    json!({ "model": "m", "stream": stream, "messages": messages,
            "tools": [{ "type": "function", "function": { "name": "run_shell_command" } }] })
}

fn gemini_body(contents: Value) -> Value {
    json!({ "contents": contents,
            "tools": [{ "functionDeclarations": [{ "name": "read_file" }, { "name": "run_shell_command" }] }] })
}

/// The concatenated text of an Anthropic event stream.
fn anthropic_text(events: &[Value]) -> String {
    events
        .iter()
        .filter_map(|e| e["delta"]["text"].as_str())
        .collect()
}

fn gemini_text(events: &[Value]) -> String {
    events
        .iter()
        .filter_map(|e| e["candidates"][0]["content"]["parts"][0]["text"].as_str())
        .collect()
}

#[test]
fn each_api_answers_s1() {
    let server = MockServer::start(Vec::new());
    let user = json!([{ "role": "user", "content": "hi" }]);

    let r = post(
        &server,
        &format!("/sc/s1{ANTHROPIC}"),
        &anthropic_body(user.clone(), true),
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    let evs = r.events();
    let kinds: Vec<&str> = evs.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(kinds.first(), Some(&"message_start"));
    assert_eq!(kinds.last(), Some(&"message_stop"));
    assert_eq!(anthropic_text(&evs), "done");
    // Streamed in more than one piece, as a real model does.
    assert!(
        kinds
            .iter()
            .filter(|k| **k == "content_block_delta")
            .count()
            > 1
    );

    let r = post(
        &server,
        &format!("/sc/s1{ANTHROPIC}"),
        &anthropic_body(user.clone(), false),
    );
    assert_eq!(r.json()["content"][0]["text"], "done");
    assert_eq!(r.json()["stop_reason"], "end_turn");

    let r = post(
        &server,
        &format!("/sc/s1{RESPONSES}"),
        &responses_body(user.clone()),
    );
    let evs = r.events();
    assert_eq!(evs.last().unwrap()["type"], "response.completed");
    let done = &evs.last().unwrap()["response"];
    assert_eq!(done["output"][0]["content"][0]["text"], "done");
    assert_eq!(done["usage"]["input_tokens"], 100);

    let r = post(
        &server,
        &format!("/sc/s1{CHAT}"),
        &chat_body(user.clone(), true),
    );
    assert!(String::from_utf8_lossy(&r.body).ends_with("data: [DONE]\n\n"));
    let text: String = r
        .events()
        .iter()
        .filter_map(|e| e["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "done");
    let r = post(&server, &format!("/sc/s1{CHAT}"), &chat_body(user, false));
    assert_eq!(r.json()["choices"][0]["message"]["content"], "done");

    let contents = json!([{ "role": "user", "parts": [{ "text": "hi" }] }]);
    let r = post(
        &server,
        &format!("/sc/s1{GEMINI_SSE}"),
        &gemini_body(contents.clone()),
    );
    let evs = r.events();
    assert_eq!(gemini_text(&evs), "done");
    assert_eq!(evs.last().unwrap()["candidates"][0]["finishReason"], "STOP");
    assert_eq!(evs.last().unwrap()["modelVersion"], "gemini-2.5-flash");
    let r = post(
        &server,
        &format!("/sc/s1{GEMINI_JSON}"),
        &gemini_body(contents),
    );
    assert_eq!(
        r.json()["candidates"][0]["content"]["parts"][0]["text"],
        "done"
    );

    let apis: Vec<Option<Api>> = server.requests().iter().map(|r| r.api).collect();
    use Api::*;
    let expected = [
        Anthropic,
        Anthropic,
        OpenAiResponses,
        OpenAiChat,
        OpenAiChat,
        Gemini,
        Gemini,
    ];
    assert_eq!(apis, expected.map(Some));
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.scenario == "s1" && r.turn == Some(0) && !r.side)
    );
}

#[test]
fn s2_calls_the_shell_tool_each_cli_offers() {
    let server = MockServer::start(Vec::new());
    let user = json!([{ "role": "user", "content": "make out.txt" }]);

    let evs = post(
        &server,
        &format!("/sc/s2{ANTHROPIC}"),
        &anthropic_body(user.clone(), true),
    )
    .events();
    let start = evs
        .iter()
        .find(|e| e["type"] == "content_block_start")
        .unwrap();
    assert_eq!(start["content_block"]["type"], "tool_use");
    assert_eq!(start["content_block"]["name"], "Bash");
    let args = evs
        .iter()
        .find_map(|e| e["delta"]["partial_json"].as_str())
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(args).unwrap()["command"],
        SHELL_COMMAND
    );
    let stop = evs.iter().find(|e| e["type"] == "message_delta").unwrap();
    assert_eq!(stop["delta"]["stop_reason"], "tool_use");

    let evs = post(
        &server,
        &format!("/sc/s2{RESPONSES}"),
        &responses_body(user.clone()),
    )
    .events();
    let item = &evs
        .iter()
        .find(|e| e["type"] == "response.output_item.done")
        .unwrap()["item"];
    assert_eq!(item["type"], "function_call");
    assert_eq!(item["name"], "exec_command");
    let args: Value = serde_json::from_str(item["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({ "cmd": SHELL_COMMAND }));

    let r = post(
        &server,
        &format!("/sc/s2{CHAT}"),
        &chat_body(user.clone(), false),
    );
    let call = &r.json()["choices"][0]["message"]["tool_calls"][0]["function"];
    assert_eq!(call["name"], "run_shell_command");
    assert_eq!(r.json()["choices"][0]["finish_reason"], "tool_calls");

    // Cline's shell tool takes a list of command lines.
    let r = post(
        &server,
        &format!("/sc/s2{CHAT}"),
        &json!({ "model": "m", "messages": user, "tools": [
            { "type": "function", "function": { "name": "read_files" } },
            { "type": "function", "function": { "name": "run_commands" } },
        ] }),
    );
    let call = &r.json()["choices"][0]["message"]["tool_calls"][0]["function"];
    assert_eq!(call["name"], "run_commands");
    let args: Value = serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({ "commands": [SHELL_COMMAND] }));

    // Droid's rates the command's risk.
    let r = post(
        &server,
        &format!("/sc/s2{CHAT}"),
        &json!({ "model": "m", "messages": user, "tools": [
            { "type": "function", "function": { "name": "Execute" } },
        ] }),
    );
    let call = &r.json()["choices"][0]["message"]["tool_calls"][0]["function"];
    assert_eq!(call["name"], "Execute");
    let args: Value = serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args["command"], SHELL_COMMAND);
    assert_eq!(args["riskLevel"], "low");

    let contents = json!([{ "role": "user", "parts": [{ "text": "make out.txt" }] }]);
    let evs = post(
        &server,
        &format!("/sc/s2{GEMINI_SSE}"),
        &gemini_body(contents),
    )
    .events();
    let call = &evs[0]["candidates"][0]["content"]["parts"][0]["functionCall"];
    assert_eq!(call["name"], "run_shell_command");
    assert_eq!(call["args"]["command"], SHELL_COMMAND);

    // With no shell tool on offer the mock says so rather than inventing one.
    let r = post(
        &server,
        &format!("/sc/s2{ANTHROPIC}"),
        &json!({ "messages": user, "tools": [{ "name": "Read" }] }),
    );
    assert_eq!(r.status, 400);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("shell")
    );
}

#[test]
fn the_turn_comes_from_the_history() {
    let server = MockServer::start(Vec::new());

    // After a tool call and its result, s2 plays its second turn.
    let messages = json!([
        { "role": "user", "content": "make out.txt" },
        { "role": "assistant", "content": [{ "type": "tool_use", "id": "t1", "name": "Bash", "input": {} }] },
        { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "t1", "content": "" }] },
    ]);
    let r = post(
        &server,
        &format!("/sc/s2{ANTHROPIC}"),
        &anthropic_body(messages, false),
    );
    assert_eq!(r.json()["content"][0]["text"], S2_ANSWER);

    let resumed = "resumed: history had 1 earlier model turn(s) and 2 user message(s)";
    let messages = json!([
        { "role": "user", "content": "hi" },
        { "role": "assistant", "content": "done" },
        { "role": "user", "content": "again" },
    ]);
    let r = post(
        &server,
        &format!("/sc/s4{ANTHROPIC}"),
        &anthropic_body(messages.clone(), false),
    );
    assert_eq!(r.json()["content"][0]["text"], resumed);
    let r = post(
        &server,
        &format!("/sc/s4{CHAT}"),
        &chat_body(messages, false),
    );
    assert_eq!(r.json()["choices"][0]["message"]["content"], resumed);

    // Codex: one turn's reasoning, call and message items count once; tool outputs are not users.
    let input = json!([
        { "type": "message", "role": "user", "content": [] },
        { "type": "reasoning", "summary": [] },
        { "type": "function_call", "name": "exec_command", "call_id": "c", "arguments": "{}" },
        { "type": "function_call_output", "call_id": "c", "output": "" },
        { "type": "message", "role": "user", "content": [] },
    ]);
    let evs = post(
        &server,
        &format!("/sc/s4{RESPONSES}"),
        &responses_body(input),
    )
    .events();
    let done = &evs.last().unwrap()["response"];
    assert_eq!(done["output"][0]["content"][0]["text"], resumed);
    assert_eq!(done["usage"]["input_tokens"], 101);

    let contents = json!([
        { "role": "user", "parts": [{ "text": "hi" }] },
        { "role": "model", "parts": [{ "text": "done" }] },
        { "role": "user", "parts": [{ "text": "again" }] },
    ]);
    let evs = post(
        &server,
        &format!("/sc/s4{GEMINI_SSE}"),
        &gemini_body(contents),
    )
    .events();
    assert_eq!(gemini_text(&evs), resumed);

    // Past the end of the script the last turn plays again.
    let messages = json!([
        { "role": "user", "content": "1" }, { "role": "assistant", "content": "a" },
        { "role": "user", "content": "2" }, { "role": "assistant", "content": "b" },
        { "role": "user", "content": "3" },
    ]);
    let r = post(
        &server,
        &format!("/sc/s1{ANTHROPIC}"),
        &anthropic_body(messages, false),
    );
    assert_eq!(r.json()["content"][0]["text"], "done");

    let turns: Vec<Option<usize>> = server.requests().iter().map(|r| r.turn).collect();
    assert_eq!(turns, [1, 1, 1, 1, 1, 2].map(Some));
}

#[test]
fn s3_fails_with_each_apis_error_body() {
    let server = MockServer::start(Vec::new());
    let user = json!([{ "role": "user", "content": "hi" }]);

    let r = post(
        &server,
        &format!("/sc/s3{ANTHROPIC}"),
        &anthropic_body(user.clone(), true),
    );
    assert_eq!(r.status, 401);
    assert_eq!(r.json()["type"], "error");
    assert_eq!(r.json()["error"]["type"], "authentication_error");
    assert!(r.header("request-id").is_some());

    let r = post(
        &server,
        &format!("/sc/s3{RESPONSES}"),
        &responses_body(user.clone()),
    );
    assert_eq!(r.status, 401);
    assert_eq!(r.json()["error"]["code"], "invalid_api_key");

    let contents = json!([{ "role": "user", "parts": [{ "text": "hi" }] }]);
    let r = post(
        &server,
        &format!("/sc/s3{GEMINI_SSE}"),
        &gemini_body(contents.clone()),
    );
    assert_eq!(r.status, 401);
    assert_eq!(r.json()["error"]["status"], "UNAUTHENTICATED");

    let r = post(
        &server,
        &format!("/sc/s3_500{GEMINI_SSE}"),
        &gemini_body(contents),
    );
    assert_eq!(r.status, 500);
    assert_eq!(r.json()["error"]["code"], 500);
    let r = post(
        &server,
        &format!("/sc/s3_500{CHAT}"),
        &chat_body(user.clone(), true),
    );
    assert_eq!(r.status, 500);
    assert_eq!(r.json()["error"]["type"], "server_error");

    // An error scenario fails side requests too: the CLI must not get a usable answer.
    let r = post(
        &server,
        &format!("/sc/s3{ANTHROPIC}"),
        &json!({ "messages": user }),
    );
    assert_eq!(r.status, 401);
}

#[test]
fn side_requests_get_a_harmless_answer() {
    let server = MockServer::start(Vec::new());
    let user = json!([{ "role": "user", "content": "title this" }]);
    let r = post(
        &server,
        &format!("/sc/s2{ANTHROPIC}"),
        &json!({ "messages": user }),
    );
    assert_eq!(r.json()["content"][0]["text"], "ok");

    let schema = json!({ "type": "object", "properties": {
        "next_speaker": { "type": "string", "enum": ["user", "model"] },
        "reasoning": { "type": "string" },
        "count": { "type": "integer" },
        "items": { "type": "array" },
    }});
    let mut body = gemini_body(json!([{ "role": "user", "parts": [{ "text": "who next?" }] }]));
    body["generationConfig"] = json!({ "responseJsonSchema": schema });
    let r = post(&server, &format!("/sc/s2{GEMINI_JSON}"), &body);
    let text = r.json()["candidates"][0]["content"]["parts"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    let answer: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        answer,
        json!({ "next_speaker": "user", "reasoning": "ok", "count": 0, "items": [] })
    );
    assert!(server.requests().iter().all(|r| r.side));
}

#[test]
fn other_endpoints() {
    let server = MockServer::start(Vec::new());
    let r = request(&server, "HEAD", "/sc/s1", "", b"");
    assert_eq!(r.status, 200);

    let r = post(
        &server,
        "/sc/s1/v1/messages/count_tokens",
        &json!({ "messages": [] }),
    );
    assert_eq!(r.json(), json!({ "input_tokens": 123 }));
    let r = post(
        &server,
        "/v1beta/models/gemini-2.5-flash:countTokens",
        &json!({ "contents": [] }),
    );
    assert_eq!(r.json(), json!({ "totalTokens": 123 }));
    let r = request(&server, "GET", "/sc/s1/v1/models", "", b"");
    assert_eq!(r.json()["data"][0]["id"], "mock-model");

    let r = request(&server, "GET", "/nowhere", "", b"");
    assert_eq!(r.status, 404);

    let recorded = server.requests();
    assert_eq!(recorded[0].method, "HEAD");
    assert_eq!(recorded[1].api, Some(Api::Anthropic));
    assert_eq!(recorded[1].turn, None, "counting tokens plays no turn");
    // No /sc/ prefix: the default scenario.
    assert_eq!(recorded[2].scenario, "s1");
}

#[test]
fn bad_requests_get_an_http_error() {
    let server = MockServer::start(Vec::new());
    let r = request(
        &server,
        "POST",
        &format!("/sc/s1{ANTHROPIC}"),
        "",
        b"{not json",
    );
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["type"], "error");

    let r = request(&server, "POST", &format!("/sc/s1{RESPONSES}"), "", b"[1]");
    assert_eq!(r.status, 400);

    let gz = "Content-Encoding: gzip\r\n";
    let r = request(
        &server,
        "POST",
        &format!("/sc/s1{ANTHROPIC}"),
        gz,
        b"\x1f\x8b",
    );
    assert_eq!(r.status, 415);

    let r = post(
        &server,
        &format!("/sc/nope{ANTHROPIC}"),
        &anthropic_body(json!([]), false),
    );
    assert_eq!(r.status, 404);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("nope")
    );

    let r = request(&server, "POST", "/x", "Transfer-Encoding: gzip\r\n", b"");
    assert_eq!(r.status, 501);

    let mut s = connect(&server);
    s.write_all(b"garbage\r\n\r\n").unwrap();
    assert_eq!(read_response(&mut BufReader::new(s), false).status, 400);
}

#[test]
fn chunked_bodies_expect_continue_and_keep_alive() {
    let server = MockServer::start(Vec::new());
    let body = anthropic_body(json!([{ "role": "user", "content": "hi" }]), false).to_string();
    let (a, b) = body.split_at(body.len() / 2);
    let mut s = connect(&server);
    let mut reader = BufReader::new(s.try_clone().unwrap());

    // Chunked, with a chunk extension and a trailer, on a kept-alive connection.
    let head =
        format!("POST /sc/s1{ANTHROPIC} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
    let chunked = format!(
        "{:x};ext=1\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\nX-Trailer: 1\r\n\r\n",
        a.len(),
        b.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(chunked.as_bytes()).unwrap();
    let r = read_response(&mut reader, false);
    assert_eq!(r.json()["content"][0]["text"], "done");
    assert_eq!(r.header("connection"), Some("keep-alive"));

    // The same connection again, this time waiting for 100 Continue before the body.
    let head = format!(
        "POST /sc/s1{ANTHROPIC} HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    assert_eq!(read_line(&mut reader), "HTTP/1.1 100 Continue");
    assert_eq!(read_line(&mut reader), "");
    s.write_all(body.as_bytes()).unwrap();
    let r = read_response(&mut reader, false);
    assert_eq!(r.json()["content"][0]["text"], "done");

    // A streamed answer keeps the connection too.
    let sse = anthropic_body(json!([{ "role": "user", "content": "hi" }]), true).to_string();
    let head = format!(
        "POST /sc/s1{ANTHROPIC} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        sse.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(sse.as_bytes()).unwrap();
    let r = read_response(&mut reader, false);
    assert_eq!(anthropic_text(&r.events()), "done");
    assert_eq!(r.header("connection"), Some("close"));
    let mut rest = Vec::new();
    reader.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty(), "the server closed after Connection: close");
    assert_eq!(server.requests().len(), 3);
}

/// Sends a request to the `slow` scenario and waits until the server has it.
fn start_slow(server: &MockServer, path: &str) -> TcpStream {
    let before = server.requests().len();
    let mut s = connect(server);
    let body = anthropic_body(json!([{ "role": "user", "content": "hi" }]), true).to_string();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body.as_bytes()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.requests().len() == before {
        assert!(Instant::now() < deadline, "the slow request never arrived");
        thread::sleep(Duration::from_millis(10));
    }
    s
}

#[test]
fn a_slow_turn_ends_when_the_client_leaves() {
    let server = MockServer::start(Vec::new());
    let s = start_slow(&server, &format!("/sc/slow{ANTHROPIC}"));
    assert_eq!(server.in_flight(), 1);
    drop(s);
    // The wait notices the hang-up within a poll interval, long before the turn's 60 s.
    let deadline = Instant::now() + Duration::from_secs(2);
    while server.in_flight() > 0 {
        assert!(
            Instant::now() < deadline,
            "the slow turn outlived its client"
        );
        thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_slow_turn_ends_when_the_server_is_dropped() {
    let server = MockServer::start(Vec::new());
    let s = start_slow(&server, &format!("/sc/slow{ANTHROPIC}"));
    let url = server.base_url();
    let started = Instant::now();
    drop(server);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "stopping took {:?}",
        started.elapsed()
    );
    // The client sees the connection close, with no answer, and the port is gone.
    let mut rest = Vec::new();
    BufReader::new(s).read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty());
    assert!(TcpStream::connect(url.trim_start_matches("http://")).is_err());
}

#[test]
fn extra_scenarios() {
    let server = MockServer::start([
        Scenario::new(
            "brief-wait",
            vec![Turn::sleep(Duration::from_millis(200), Turn::text("late"))],
        ),
        Scenario::new("busy", vec![Turn::Error(429)]),
        // Replaces the built-in of that name.
        Scenario::new("s1", vec![Turn::text("custom")]),
    ]);
    let user = json!([{ "role": "user", "content": "hi" }]);
    let started = Instant::now();
    let r = post(
        &server,
        &format!("/sc/brief-wait{ANTHROPIC}"),
        &anthropic_body(user.clone(), true),
    );
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert_eq!(anthropic_text(&r.events()), "late");

    let r = post(
        &server,
        &format!("/sc/busy{ANTHROPIC}"),
        &anthropic_body(user.clone(), true),
    );
    assert_eq!(r.status, 429);
    assert_eq!(r.json()["error"]["type"], "rate_limit_error");

    let r = post(
        &server,
        &format!("/sc/s1{ANTHROPIC}"),
        &anthropic_body(user, true),
    );
    assert_eq!(anthropic_text(&r.events()), "custom");
    let body = server.requests()[0].body.clone().unwrap();
    assert_eq!(body["model"], "claude-sonnet-4-5");
    assert_eq!(server.requests()[0].header("HOST"), Some("x"));
}
