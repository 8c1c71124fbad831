//! Webhooks: an account's events (a turn ended, a session's status changed)
//! POSTed to the URLs it registered, signed, retried with backoff for a
//! day, every attempt logged.
//!
//! The body is `{"id", "type", "created_at", "account_id", "data"}`; the
//! header `X-Cinch-Signature: t=<unix seconds>,v1=<hex>` carries the
//! HMAC-SHA256, keyed with the webhook's secret, of `<t>.<body>`. A URL that
//! is or resolves to a loopback, private or link-local address is refused
//! (a tenant must not reach the server's own network) unless the operator
//! started the server with `--webhook-allow-private`.

use std::collections::HashMap;
use std::net::{IpAddr, ToSocketAddrs as _};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hmac::{Hmac, Mac as _};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tracing::Instrument as _;

use cinch_base::timestamp::Timestamp;
use cinch_store::{AccountId, Attempt, DueDelivery, SessionId, SessionStatus, Store, random_hex};

/// How long after an event cinch keeps trying to deliver it.
const GIVE_UP_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// The pause before each retry; the last repeats until a day has passed.
const BACKOFF: &[Duration] = &[
    Duration::from_secs(2),
    Duration::from_secs(10),
    Duration::from_secs(60),
    Duration::from_secs(5 * 60),
    Duration::from_secs(30 * 60),
    Duration::from_secs(2 * 60 * 60),
    Duration::from_secs(6 * 60 * 60),
];

/// How long one attempt may take.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);

/// How often the worker looks for due deliveries when nothing woke it.
const IDLE_POLL: Duration = Duration::from_secs(1);

/// What happened, as the `type` of a webhook's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum EventKind {
    /// A turn (of a session or a code task) ended; `data` is its result.
    #[serde(rename = "turn.ended")]
    TurnEnded,
    /// A session's status changed; `data` is the session.
    #[serde(rename = "session.status_changed")]
    SessionStatusChanged,
    /// An agent asks permission and waits for a decision; `data` is the approval.
    #[serde(rename = "approval.requested")]
    ApprovalRequested,
}

impl EventKind {
    /// The name as the body and `X-Cinch-Event` carry it.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::TurnEnded => "turn.ended",
            EventKind::SessionStatusChanged => "session.status_changed",
            EventKind::ApprovalRequested => "approval.requested",
        }
    }
}

/// Why a URL cannot be a webhook.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// Not an http(s) URL with a host.
    #[error("must be an http:// or https:// URL with a host")]
    Malformed,
    /// It names the server's own or a private network.
    #[error(
        "{0} is a loopback, private or link-local address, which tenants may not reach (the operator allows it with `cinch serve --webhook-allow-private`)"
    )]
    Private(String),
}

/// Sends an account's events to its webhooks.
#[derive(Clone)]
pub struct Webhooks {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    allow_private: bool,
    /// Whether deliveries are sent; off, they are only queued and logged.
    send: bool,
    notices: mpsc::UnboundedSender<Notice>,
    /// Taken by the worker when it starts.
    queue: Mutex<Option<mpsc::UnboundedReceiver<Notice>>>,
    /// Each session's status as last notified, so only changes are sent.
    statuses: Mutex<HashMap<SessionId, SessionStatus>>,
}

/// An event to queue for an account's webhooks.
struct Notice {
    account_id: AccountId,
    kind: EventKind,
    data: Value,
    at: Timestamp,
}

impl Webhooks {
    /// Webhooks of the accounts in `store`; private addresses only when
    /// `allow_private`; deliveries queued but never sent unless `send` (a
    /// server with no way out, such as a test of the API's contract).
    /// Nothing is sent until [`Webhooks::run`] runs.
    pub fn new(store: Store, allow_private: bool, send: bool) -> Self {
        let (notices, queue) = mpsc::unbounded_channel();
        Self {
            inner: Arc::new(Inner {
                store,
                allow_private,
                send,
                notices,
                queue: Mutex::new(Some(queue)),
                statuses: Mutex::default(),
            }),
        }
    }

    /// Whether `url` may be a webhook's URL, as far as can be told without
    /// resolving it (a host name is checked again at each delivery).
    pub fn check_url(&self, url: &str) -> Result<(), UrlError> {
        let host = host_of(url).ok_or(UrlError::Malformed)?;
        if self.inner.allow_private {
            return Ok(());
        }
        let literal = host.trim_start_matches('[').trim_end_matches(']');
        match literal.parse::<IpAddr>() {
            Ok(address) if is_private(address) => Err(UrlError::Private(address.to_string())),
            Err(_)
                if literal.eq_ignore_ascii_case("localhost") || literal.ends_with(".localhost") =>
            {
                Err(UrlError::Private(literal.to_owned()))
            }
            _ => Ok(()),
        }
    }

    /// Queues an event of `account_id` for its webhooks (from any thread).
    pub fn notify(&self, account_id: &AccountId, kind: EventKind, data: Value) {
        let _ = self.inner.notices.send(Notice {
            account_id: account_id.clone(),
            kind,
            data,
            at: Timestamp::now(),
        });
    }

    /// Notes a session as it was saved: its webhooks hear of it when its
    /// status changed.
    pub fn session_saved(
        &self,
        account_id: &AccountId,
        session_id: &SessionId,
        status: SessionStatus,
        view: Value,
    ) {
        let changed = {
            let mut statuses = cinch_base::sync::lock(&self.inner.statuses);
            statuses.insert(session_id.clone(), status) != Some(status)
        };
        if changed {
            self.notify(account_id, EventKind::SessionStatusChanged, view);
        }
    }

    /// Queues events and delivers what is due, for as long as the server runs.
    /// Due deliveries are looked for once a second, and at once after this
    /// node queued some: not after every event, as before, when a session's
    /// life read them six times though its account had no webhook.
    pub async fn run(self) {
        let Some(mut queue) = cinch_base::sync::lock(&self.inner.queue).take() else {
            return;
        };
        let mut next_look = tokio::time::Instant::now();
        loop {
            let mut queued = 0;
            if let Ok(Some(notice)) = tokio::time::timeout_at(next_look, queue.recv()).await {
                queued += self.enqueue(notice).await;
                while let Ok(notice) = queue.try_recv() {
                    queued += self.enqueue(notice).await;
                }
            }
            let now = tokio::time::Instant::now();
            if queued == 0 && now < next_look {
                continue;
            }
            next_look = now + IDLE_POLL;
            if !self.inner.send {
                continue;
            }
            match self.inner.store.due_deliveries(Timestamp::now(), 32).await {
                Ok(due) => {
                    for delivery in due {
                        self.attempt(delivery).await;
                    }
                }
                Err(error) => tracing::error!("reading due webhook deliveries: {error}"),
            }
        }
    }

    /// Queues the notice for its account's webhooks; how many deliveries
    /// that made.
    async fn enqueue(&self, notice: Notice) -> usize {
        let payload = || {
            json!({
                "id": event_id(),
                "type": notice.kind,
                "created_at": notice.at,
                "account_id": notice.account_id,
                "data": notice.data,
            })
            .to_string()
        };
        match self
            .inner
            .store
            .enqueue_deliveries(&notice.account_id, notice.kind.as_str(), payload)
            .await
        {
            Ok(queued) => queued,
            Err(error) => {
                tracing::error!(
                    event = notice.kind.as_str(),
                    "queueing webhook deliveries: {error}"
                );
                0
            }
        }
    }

    async fn attempt(&self, due: DueDelivery) {
        let delivery = &due.delivery;
        let secret = match self.inner.store.webhook_secret(&delivery.webhook_id).await {
            Ok(secret) => secret,
            Err(error) => {
                tracing::error!(delivery = %delivery.id, "a webhook's secret: {error}");
                return;
            }
        };
        let allow_private = self.inner.allow_private;
        let span = tracing::info_span!(
            target: cinch_engine::telemetry::TARGET,
            parent: None,
            "webhook.delivery",
            otel.name = %format!("POST webhook {}", delivery.event),
            otel.kind = "client",
            otel.status_code = tracing::field::Empty,
            cinch.webhook.event = %delivery.event,
            cinch.webhook.delivery = %delivery.id,
            http.request.method = "POST",
            http.response.status_code = tracing::field::Empty,
        );
        // The receiver's own work joins the delivery's trace.
        let traceparent = cinch_engine::telemetry::traceparent(&span);
        let (url, body, id, event) = (
            due.url.clone(),
            delivery.payload.clone(),
            delivery.id.clone(),
            delivery.event.clone(),
        );
        let sent = tokio::task::spawn_blocking(move || {
            let traceparent = traceparent.as_deref();
            send(
                &url,
                &body,
                &secret,
                &id,
                &event,
                traceparent,
                allow_private,
            )
        })
        .instrument(span.clone())
        .await
        .unwrap_or_else(|error| Err((None, format!("the attempt stopped: {error}"))));
        match &sent {
            Ok(status) | Err((Some(status), _)) => {
                span.record("http.response.status_code", i64::from(*status));
            }
            Err((None, _)) => {}
        }
        if sent.is_err() {
            span.record("otel.status_code", "ERROR");
        }
        let attempt = match sent {
            Ok(status) => Attempt::Delivered(status),
            Err((status, error)) => match next_attempt(delivery.created_at, delivery.attempts) {
                Some(next) => Attempt::Retry {
                    status,
                    error,
                    next,
                },
                None => Attempt::GaveUp { status, error },
            },
        };
        if let Err(error) = self
            .inner
            .store
            .record_attempt(&delivery.id, &attempt)
            .await
        {
            tracing::error!(delivery = %delivery.id, "recording a webhook attempt: {error}");
        }
    }
}

/// A new event id: random, so a receiver can tell a redelivery (the same
/// id) from a new event.
fn event_id() -> String {
    format!("evt_{}", random_hex(12).unwrap_or_default())
}

/// When attempt `attempts + 1` failed, when the next one is due; `None`
/// once a day has passed since the event.
fn next_attempt(created_at: Timestamp, attempts: i64) -> Option<Timestamp> {
    let pause = BACKOFF[(attempts.max(0) as usize).min(BACKOFF.len() - 1)];
    let next = Timestamp::now() + pause;
    (next.saturating_duration_since(created_at) < GIVE_UP_AFTER).then_some(next)
}

/// POSTs `body`, signed, with `traceparent` when traced; the status when
/// 2xx, else the status (if any) and why.
fn send(
    url: &str,
    body: &str,
    secret: &str,
    delivery: &str,
    event: &str,
    traceparent: Option<&str>,
    allow_private: bool,
) -> Result<u16, (Option<u16>, String)> {
    if !allow_private {
        refuse_private(url).map_err(|error| (None, error.to_string()))?;
    }
    let timestamp = time::OffsetDateTime::now_utc().unix_timestamp();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(ATTEMPT_TIMEOUT))
        .max_redirects(0)
        .build()
        .into();
    let mut request = agent
        .post(url)
        .header("Content-Type", "application/json")
        .header("User-Agent", concat!("cinch/", env!("CARGO_PKG_VERSION")))
        .header("X-Cinch-Event", event)
        .header("X-Cinch-Delivery", delivery)
        .header("X-Cinch-Signature", signature(secret, timestamp, body));
    if let Some(traceparent) = traceparent {
        request = request.header("traceparent", traceparent);
    }
    let response = request
        .send(body)
        .map_err(|error| (None, error.to_string()))?;
    let status = response.status().as_u16();
    if (200..300).contains(&status) {
        Ok(status)
    } else {
        Err((Some(status), format!("answered {status}")))
    }
}

/// `t=<timestamp>,v1=<hex HMAC-SHA256 of "<timestamp>.<body>">`.
pub(crate) fn signature(secret: &str, timestamp: i64, body: &str) -> String {
    let hex = hmac_sha256_hex(secret, &format!("{timestamp}.{body}"));
    format!("t={timestamp},v1={hex}")
}

fn hmac_sha256_hex(key: &str, message: &str) -> String {
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(key.as_bytes()).expect("HMAC takes any key");
    mac.update(message.as_bytes());
    cinch_base::hex::encode(&mac.finalize().into_bytes())
}

/// Resolves the URL's host and refuses it when any address is private.
fn refuse_private(url: &str) -> Result<(), UrlError> {
    let host = host_of(url).ok_or(UrlError::Malformed)?;
    let port = if url.starts_with("https://") { 443 } else { 80 };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addresses = (bare, port)
        .to_socket_addrs()
        .map_err(|_| UrlError::Malformed)?;
    for address in addresses {
        if is_private(address.ip()) {
            return Err(UrlError::Private(address.ip().to_string()));
        }
    }
    Ok(())
}

/// The host of an http(s) URL, without its port.
fn host_of(url: &str) -> Option<&str> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host_port = authority.rsplit('@').next()?;
    let host = if host_port.starts_with('[') {
        &host_port[..=host_port.find(']')?]
    } else {
        host_port.split(':').next()?
    };
    (!host.is_empty()).then_some(host)
}

/// Loopback, private, link-local, shared, unspecified, broadcast or multicast.
fn is_private(address: IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_private(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_addresses_are_told_apart() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.20.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(is_private(private.parse().unwrap()), "{private}");
        }
        for public in ["93.184.216.34", "2606:4700::1111", "8.8.8.8"] {
            assert!(!is_private(public.parse().unwrap()), "{public}");
        }
    }

    #[test]
    fn hosts_come_out_of_urls() {
        assert_eq!(
            host_of("https://hooks.example.com/x?y"),
            Some("hooks.example.com")
        );
        assert_eq!(host_of("http://user@10.0.0.1:8080/"), Some("10.0.0.1"));
        assert_eq!(host_of("http://[::1]:9/"), Some("[::1]"));
        assert_eq!(host_of("ftp://x/"), None);
        assert_eq!(host_of("https:///nohost"), None);
    }

    #[test]
    fn the_signature_is_an_hmac_of_the_timestamp_and_body() {
        // RFC 4231, test case 2.
        assert_eq!(
            hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert_eq!(
            signature("Jefe", 7, "{}"),
            format!("t=7,v1={}", hmac_sha256_hex("Jefe", "7.{}"))
        );
    }

    #[test]
    fn retries_stop_a_day_after_the_event() {
        assert!(next_attempt(Timestamp::now(), 0).is_some());
        let long_ago = "2020-01-01T00:00:00.000Z".parse().unwrap();
        assert!(next_attempt(long_ago, 3).is_none());
    }
}
