//! Accepting and serving HTTP connections within limits, so that slow and
//! stalled clients cannot hold the server: a request's head must arrive
//! within the header timeout (the next one's too, on a kept-alive
//! connection), a client that reads nothing of its answer for the idle
//! timeout is cut off ([`super::stall`]), and at most `max_connections` are
//! served at once. Past the cap a few more get one quick request each (a
//! health probe's), their head within [`OVERFLOW_HEADER_TIMEOUT`]; past
//! those, a connection is answered 503 and closed at once, holding no file
//! descriptor the server needs.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};

use super::stall::StallGuard;

/// The limits on clients' connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// How long a client has to send a request's head, counted from the
    /// connection's start or the end of the answer before.
    pub header_timeout: Duration,
    /// How long an answer waits for its client to read before the
    /// connection is closed.
    pub idle_timeout: Duration,
    /// Connections served at once, at most.
    pub max_connections: usize,
}

/// The header timeout unless configured.
pub(crate) const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(15);

/// The idle timeout unless configured.
pub(crate) const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// Connections let past the cap, each for one request.
const OVERFLOW_CONNECTIONS: usize = 64;

/// How long a connection past the cap has to send its request's head.
const OVERFLOW_HEADER_TIMEOUT: Duration = Duration::from_secs(2);

/// What a connection past every slot is told before it is closed.
const REFUSED_BODY: &str = r#"{"type":"urn:cinch:too_many_connections","title":"Too many connections","status":503,"detail":"The server serves as many connections as it may; try again in a moment."}"#;

impl Limits {
    /// The default limits on a process allowed `open_files` descriptors:
    /// half of them for connections, the rest for the database, turns'
    /// files and pipes.
    pub fn for_open_files(open_files: u64) -> Self {
        Self {
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_connections: usize::try_from(open_files / 2)
                .unwrap_or(usize::MAX)
                .clamp(16, 65_536),
        }
    }
}

/// Raises the soft limit on open files to the hard one (many connections
/// each hold one) and returns the limit now in force.
pub fn raise_open_file_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit read and write the struct given.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            tracing::warn!(
                "reading the open-file limit: {}",
                std::io::Error::last_os_error()
            );
            return 1024;
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: limit.rlim_max,
                rlim_max: limit.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                tracing::info!(
                    from = limit.rlim_cur,
                    to = raised.rlim_cur,
                    "raised the open-file limit"
                );
                limit = raised;
            } else {
                tracing::warn!(
                    "raising the open-file limit to {}: {}",
                    limit.rlim_max,
                    std::io::Error::last_os_error()
                );
            }
        }
    }
    limit.rlim_cur
}

/// Serves `router` on `listener` within `limits` until `shutdown` ends;
/// then stops accepting, lets each connection finish the request it is
/// answering, and returns once all are closed.
pub(crate) async fn serve(
    listener: TcpListener,
    router: axum::Router,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) {
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let overflow = Arc::new(Semaphore::new(OVERFLOW_CONNECTIONS));
    let (closing, closing_seen) = watch::channel(false);
    // Each connection holds a sender: the channel closes with the last one.
    let (open, mut all_closed) = mpsc::channel::<Infallible>(1);
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(error) => {
                if !is_connection_error(&error) {
                    // Out of descriptors, most likely: wait for some to close.
                    tracing::warn!("accepting a connection: {error}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                continue;
            }
        };
        let (slot, past_cap) = match slots.clone().try_acquire_owned() {
            Ok(slot) => (slot, false),
            Err(_) => match overflow.clone().try_acquire_owned() {
                Ok(slot) => (slot, true),
                Err(_) => {
                    refuse(&stream);
                    continue;
                }
            },
        };
        let connection = Connection {
            stream,
            router: router.clone(),
            limits,
            past_cap,
            _slot: slot,
            closing: closing_seen.clone(),
            _open: open.clone(),
        };
        tokio::spawn(connection.serve());
    }
    drop(listener);
    closing.send_replace(true);
    drop(open);
    let _ = all_closed.recv().await;
}

/// One accepted connection and what it holds until it closes.
struct Connection {
    stream: TcpStream,
    router: axum::Router,
    limits: Limits,
    /// Let in past the cap: one request, its head soon.
    past_cap: bool,
    _slot: OwnedSemaphorePermit,
    closing: watch::Receiver<bool>,
    _open: mpsc::Sender<Infallible>,
}

impl Connection {
    async fn serve(mut self) {
        let _ = self.stream.set_nodelay(true);
        let header_timeout = if self.past_cap {
            OVERFLOW_HEADER_TIMEOUT.min(self.limits.header_timeout)
        } else {
            self.limits.header_timeout
        };
        let io = TokioIo::new(StallGuard::new(self.stream, self.limits.idle_timeout));
        let mut builder = http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(header_timeout)
            .keep_alive(!self.past_cap);
        let connection = builder.serve_connection(io, TowerToHyperService::new(self.router));
        tokio::pin!(connection);
        let mut asked_to_close = false;
        loop {
            tokio::select! {
                served = connection.as_mut() => {
                    if let Err(error) = served {
                        tracing::debug!("connection closed: {error}");
                    }
                    return;
                }
                _ = self.closing.wait_for(|closing| *closing), if !asked_to_close => {
                    asked_to_close = true;
                    connection.as_mut().graceful_shutdown();
                }
            }
        }
    }
}

/// Tells a connection past every slot to come back, if its socket takes
/// the answer at once, and closes it.
fn refuse(stream: &TcpStream) {
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/problem+json\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{REFUSED_BODY}",
        REFUSED_BODY.len()
    );
    let _ = stream.try_write(answer.as_bytes());
}

/// Whether an accept failed for the connection's sake (it went away), not
/// the server's.
fn is_connection_error(error: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    matches!(
        error.kind(),
        ErrorKind::ConnectionRefused | ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset
    )
}
