//! Asking another node of the same database for what only it holds: a code
//! task's harness log stays in the home of the node that ran it, its
//! checkpoints in that node's repository, and a session's work tree on the
//! node that runs it.

use std::time::Duration;

/// The header that marks a request one node sent another on a caller's
/// behalf: its answer is the node's own, never fetched further.
pub(crate) const FORWARDED_HEADER: &str = "X-Cinch-Forwarded";

/// How long a node waits for another's answer.
const PEER_TIMEOUT: Duration = Duration::from_secs(15);

/// How long a node waits for another to carry out a request passed on: a
/// push to a slow remote takes a while.
const RELAY_TIMEOUT: Duration = Duration::from_secs(300);

/// What another node answered.
#[derive(Debug)]
pub(crate) enum PeerAnswer<T> {
    /// It had it.
    Found(T),
    /// It answered 404 too: it no longer has it either.
    Gone,
}

/// What of a code-task call another node can be asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallPart {
    /// Its harness log (JSON, as the log route answers).
    Log,
    /// Its diff (text), with this much context.
    Diff(cinch_engine::checkpoint::DiffContext),
}

impl CallPart {
    fn route(self) -> String {
        match self {
            Self::Log => "log".to_owned(),
            Self::Diff(context) => format!("diff?context={}", context.as_str()),
        }
    }
}

/// Fetches `part` of call `call` of run `run` from the node at `base` (its
/// advertised URL), as the caller whose bearer token is `bearer`: the node
/// checks the token and the account as for any request. Blocking.
pub(crate) fn fetch(
    base: &str,
    run: &str,
    call: &str,
    part: CallPart,
    bearer: &str,
) -> anyhow::Result<PeerAnswer<String>> {
    let agent = agent(PEER_TIMEOUT);
    let url = format!(
        "{}/api/runs/{run}/tasks/{call}/{}",
        base.trim_end_matches('/'),
        part.route()
    );
    let mut response = agent
        .get(&url)
        .header("Authorization", &format!("Bearer {bearer}"))
        .header(FORWARDED_HEADER, "1")
        .call()
        .map_err(|error| anyhow::anyhow!("asking {url}: {error}"))?;
    let status = response.status().as_u16();
    if status == 404 {
        return Ok(PeerAnswer::Gone);
    }
    anyhow::ensure!(status == 200, "{url} answered {status}");
    let body = response
        .body_mut()
        .read_to_string()
        .map_err(|error| anyhow::anyhow!("reading {url}'s answer: {error}"))?;
    Ok(PeerAnswer::Found(body))
}

/// Another node's whole answer to a request passed on to it.
#[derive(Debug)]
pub(crate) struct Relayed {
    /// Its HTTP status.
    pub status: u16,
    /// Its `Content-Type`, if it said one.
    pub content_type: Option<String>,
    /// Its body.
    pub body: Vec<u8>,
}

/// Sends `POST {base}{path}` with the JSON `body` to the node at `base` as
/// the caller whose bearer token is `bearer` (the node checks the token and
/// the account as for any request), and returns its answer whatever its
/// status: it is the answer to the caller. Blocking.
pub(crate) fn relay_post(
    base: &str,
    path: &str,
    body: &serde_json::Value,
    bearer: &str,
) -> anyhow::Result<Relayed> {
    let agent = agent(RELAY_TIMEOUT);
    let url = format!("{}{path}", base.trim_end_matches('/'));
    let mut response = agent
        .post(&url)
        .header("Authorization", &format!("Bearer {bearer}"))
        .header(FORWARDED_HEADER, "1")
        .header("Content-Type", "application/json")
        .send(body.to_string())
        .map_err(|error| anyhow::anyhow!("asking {url}: {error}"))?;
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let body = response
        .body_mut()
        .read_to_vec()
        .map_err(|error| anyhow::anyhow!("reading {url}'s answer: {error}"))?;
    Ok(Relayed {
        status: response.status().as_u16(),
        content_type,
        body,
    })
}

/// A client that reads every status as an answer and follows no redirect
/// (a node answers for itself), waiting at most `timeout`.
fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(timeout))
        .max_redirects(0)
        .build()
        .into()
}
