//! Just enough HTTP/1.1 for the agent CLIs' clients (Node's undici, Bun, reqwest): one request
//! at a time per connection, keep-alive, Content-Length or chunked bodies, `Expect:
//! 100-continue`, and responses either whole or streamed as chunked server-sent events.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often a blocked read looks up from the socket to see whether the server is stopping.
const POLL: Duration = Duration::from_millis(100);
/// Request heads past this are refused; the CLIs send a few KiB of headers at most.
const MAX_HEAD: usize = 64 * 1024;
/// Request bodies past this are refused; the largest CLI request measured was about 120 KB.
const MAX_BODY: usize = 64 * 1024 * 1024;

/// Why a connection stopped being served.
#[derive(Debug)]
pub(crate) enum ConnError {
    /// The socket failed or the peer went away mid-request; nobody is left to answer.
    Closed,
    /// The server is shutting down.
    Stopped,
    /// The request cannot be understood; answered with this status and message, then closed.
    Bad(u16, String),
}

impl From<io::Error> for ConnError {
    fn from(_: io::Error) -> Self {
        ConnError::Closed
    }
}

/// A parsed request.
pub(crate) struct Request {
    pub method: String,
    /// The request target as sent: path and query.
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    http10: bool,
}

impl Request {
    /// The first header of that name, compared case-insensitively as HTTP requires.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Whether the client wants the connection kept open after this exchange.
    pub fn keep_alive(&self) -> bool {
        let connection = self.header("connection").unwrap_or("").to_ascii_lowercase();
        if self.http10 {
            connection.contains("keep-alive")
        } else {
            !connection.contains("close")
        }
    }
}

/// A response body: whole, or server-sent events flushed one by one so that the client's
/// streaming parser sees them arrive separately, as from a real model API.
pub(crate) enum Body {
    Full(Vec<u8>),
    Events(Vec<String>),
}

/// A response to write.
pub(crate) struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Body,
}

impl Response {
    /// A JSON response.
    pub fn json(status: u16, value: &serde_json::Value) -> Self {
        Response {
            status,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: Body::Full(value.to_string().into_bytes()),
        }
    }

    /// A response with no body.
    pub fn empty(status: u16) -> Self {
        Response {
            status,
            headers: Vec::new(),
            body: Body::Full(Vec::new()),
        }
    }

    /// A `text/event-stream` response made of already formatted events.
    pub fn events(events: Vec<String>) -> Self {
        Response {
            status: 200,
            headers: vec![
                ("Content-Type".into(), "text/event-stream".into()),
                ("Cache-Control".into(), "no-cache".into()),
            ],
            body: Body::Events(events),
        }
    }

    /// Adds a header.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
}

/// A client connection with its read buffer.
pub(crate) struct Conn<'a> {
    stream: TcpStream,
    buf: Vec<u8>,
    stopped: &'a AtomicBool,
}

impl<'a> Conn<'a> {
    /// Wraps an accepted stream; reads wake up every [`POLL`] to notice `stopped`.
    pub fn new(stream: TcpStream, stopped: &'a AtomicBool) -> io::Result<Self> {
        stream.set_read_timeout(Some(POLL))?;
        stream.set_write_timeout(Some(Duration::from_secs(10)))?;
        // Events are written one by one; Nagle plus the client's delayed ACK would hold each
        // back by tens of milliseconds.
        stream.set_nodelay(true)?;
        Ok(Conn {
            stream,
            buf: Vec::new(),
            stopped,
        })
    }

    /// Reads more bytes into the buffer; `Ok(false)` on end of stream.
    fn fill(&mut self) -> Result<bool, ConnError> {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            if self.stopped.load(Ordering::Relaxed) {
                return Err(ConnError::Stopped);
            }
            match self.stream.read(&mut chunk) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    return Ok(true);
                }
                Err(e) if is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Err(ConnError::Closed),
            }
        }
    }

    /// Takes one CRLF- (or LF-) terminated line, without its terminator.
    fn line(&mut self, limit: usize) -> Result<Option<Vec<u8>>, ConnError> {
        loop {
            if let Some(i) = self.buf.iter().position(|&b| b == b'\n') {
                let mut line: Vec<u8> = self.buf.drain(..=i).collect();
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(Some(line));
            }
            if self.buf.len() > limit {
                return Err(ConnError::Bad(431, "request head too large".into()));
            }
            if !self.fill()? {
                return Ok(None);
            }
        }
    }

    /// Takes exactly `n` bytes.
    fn take(&mut self, n: usize) -> Result<Vec<u8>, ConnError> {
        while self.buf.len() < n {
            if !self.fill()? {
                return Err(ConnError::Closed);
            }
        }
        Ok(self.buf.drain(..n).collect())
    }

    /// Reads the next request; `Ok(None)` when the client closed the connection between
    /// requests.
    pub fn read_request(&mut self) -> Result<Option<Request>, ConnError> {
        let line = loop {
            match self.line(MAX_HEAD)? {
                None => return Ok(None),
                // Tolerated before a request line (RFC 9112 section 2.2).
                Some(l) if l.is_empty() => continue,
                Some(l) => break l,
            }
        };
        let line = String::from_utf8(line)
            .map_err(|_| ConnError::Bad(400, "request line is not UTF-8".into()))?;
        let mut parts = line.split(' ');
        let (Some(method), Some(target), Some(version), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(ConnError::Bad(
                400,
                format!("malformed request line {line:?}"),
            ));
        };
        if !version.starts_with("HTTP/1.") {
            return Err(ConnError::Bad(
                505,
                format!("unsupported version {version}"),
            ));
        }
        let mut headers = Vec::new();
        let mut head_size = line.len();
        loop {
            let Some(l) = self.line(MAX_HEAD)? else {
                return Err(ConnError::Closed);
            };
            if l.is_empty() {
                break;
            }
            head_size += l.len();
            if head_size > MAX_HEAD {
                return Err(ConnError::Bad(431, "request head too large".into()));
            }
            let l = String::from_utf8_lossy(&l);
            let Some((name, value)) = l.split_once(':') else {
                return Err(ConnError::Bad(400, format!("malformed header line {l:?}")));
            };
            headers.push((name.trim().to_string(), value.trim().to_string()));
        }
        let mut req = Request {
            method: method.to_string(),
            target: target.to_string(),
            headers,
            body: Vec::new(),
            http10: version == "HTTP/1.0",
        };
        let chunked = match req.header("transfer-encoding") {
            None => false,
            Some(te) if te.eq_ignore_ascii_case("chunked") => true,
            Some(te) => {
                return Err(ConnError::Bad(
                    501,
                    format!("unsupported transfer-encoding {te}"),
                ));
            }
        };
        let length = match req.header("content-length") {
            Some(v) if !chunked => Some(
                v.parse::<usize>()
                    .map_err(|_| ConnError::Bad(400, format!("bad content-length {v:?}")))?,
            ),
            _ => None,
        };
        if length.is_some_and(|n| n > MAX_BODY) {
            return Err(ConnError::Bad(413, "request body too large".into()));
        }
        let expects_body = chunked || length.is_some_and(|n| n > 0);
        if expects_body
            && req
                .header("expect")
                .is_some_and(|e| e.eq_ignore_ascii_case("100-continue"))
        {
            self.stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
        }
        if chunked {
            req.body = self.chunked_body()?;
        } else if let Some(n) = length {
            req.body = self.take(n)?;
        }
        Ok(Some(req))
    }

    fn chunked_body(&mut self) -> Result<Vec<u8>, ConnError> {
        let mut body = Vec::new();
        loop {
            let Some(size_line) = self.line(MAX_HEAD)? else {
                return Err(ConnError::Closed);
            };
            let size_line = String::from_utf8_lossy(&size_line);
            let hex = size_line.split(';').next().unwrap_or("").trim();
            let size = usize::from_str_radix(hex, 16)
                .map_err(|_| ConnError::Bad(400, format!("bad chunk size {size_line:?}")))?;
            if size == 0 {
                // Trailer fields, if any, end with an empty line; none matter here.
                loop {
                    match self.line(MAX_HEAD)? {
                        Some(l) if !l.is_empty() => continue,
                        _ => return Ok(body),
                    }
                }
            }
            if body.len() + size > MAX_BODY {
                return Err(ConnError::Bad(413, "request body too large".into()));
            }
            body.extend(self.take(size)?);
            if !self.take(2)?.ends_with(b"\r\n") {
                return Err(ConnError::Bad(400, "chunk not followed by CRLF".into()));
            }
        }
    }

    /// Writes a response. Events go out as one chunk each, flushed as they are written.
    pub fn write_response(
        &mut self,
        resp: &Response,
        head_only: bool,
        keep_alive: bool,
    ) -> io::Result<()> {
        let mut head = format!("HTTP/1.1 {} {}\r\n", resp.status, reason(resp.status));
        for (k, v) in &resp.headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        match &resp.body {
            Body::Full(bytes) => head.push_str(&format!("Content-Length: {}\r\n", bytes.len())),
            Body::Events(_) => head.push_str("Transfer-Encoding: chunked\r\n"),
        }
        head.push_str(if keep_alive {
            "Connection: keep-alive\r\n\r\n"
        } else {
            "Connection: close\r\n\r\n"
        });
        match &resp.body {
            _ if head_only => self.stream.write_all(head.as_bytes())?,
            Body::Full(bytes) => {
                let mut all = head.into_bytes();
                all.extend_from_slice(bytes);
                self.stream.write_all(&all)?;
            }
            Body::Events(events) => {
                self.stream.write_all(head.as_bytes())?;
                for event in events {
                    let chunk = format!("{:x}\r\n{event}\r\n", event.len());
                    self.stream.write_all(chunk.as_bytes())?;
                    self.stream.flush()?;
                }
                self.stream.write_all(b"0\r\n\r\n")?;
            }
        }
        self.stream.flush()
    }

    /// Waits up to `wait` like a slow model would. Returns false as soon as the client hangs
    /// up or the server stops, so that neither is kept waiting for an answer nobody reads.
    pub fn wait_for_client(&mut self, wait: Duration) -> bool {
        let deadline = Instant::now() + wait;
        let mut probe = [0u8; 1];
        loop {
            if self.stopped.load(Ordering::Relaxed) {
                return false;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return true;
            }
            if self.stream.set_read_timeout(Some(left.min(POLL))).is_err() {
                return false;
            }
            let alive = match self.stream.peek(&mut probe) {
                Ok(0) => false,
                // The client sent more (a pipelined request): still there, but peek would now
                // return at once, so sleep instead of spinning.
                Ok(_) => {
                    std::thread::sleep(left.min(POLL));
                    true
                }
                Err(e) => is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted,
            };
            if !alive {
                return false;
            }
            if self.stream.set_read_timeout(Some(POLL)).is_err() {
                return false;
            }
        }
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Reason phrases for the statuses this server sends; clients only show them.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        529 => "Overloaded",
        _ => "Status",
    }
}
