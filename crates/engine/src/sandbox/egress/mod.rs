//! Egress by host: an environment that lists `allowed_hosts` gets a network
//! of its own for its turns and setup commands, whose only way out is an
//! HTTP proxy that lets through the listed hosts and refuses the rest.
//!
//! [`netns`] makes the network and starts the [`proxy`]; [`hosts`] says
//! which names an entry admits; [`RefusalFeed`] reads what the proxy
//! refused, for the turn's progress lines and the server's metrics.

pub mod hosts;
pub mod netns;
mod proxy;

use std::io::{BufRead as _, Write as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use netns::{EGRESS_PROXY, confine, run_proxy};

/// The port the proxy listens on, on the confined network's own loopback
/// (which holds nothing else, so any port would do).
pub(crate) const PROXY_PORT: u16 = 3128;

/// The proxy's URL, as a confined process reaches it.
pub(crate) fn proxy_url() -> String {
    format!("http://127.0.0.1:{PROXY_PORT}")
}

/// The variables that point HTTP clients at the proxy (curl, git, node's
/// and Bun's fetch, Python's requests read one spelling or the other), and
/// those that would send some hosts around it, which are removed.
pub fn proxy_env() -> (Vec<(String, String)>, [&'static str; 2]) {
    let url = proxy_url();
    let set = ["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"]
        .into_iter()
        .map(|name| (name.to_owned(), url.clone()))
        .collect();
    (set, ["NO_PROXY", "no_proxy"])
}

/// A confined network's settings, as its proxy gets them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Egress {
    /// The hosts requests may name (see [`hosts`]).
    pub allowed_hosts: Vec<String>,
    /// Where refusals are appended, one JSON line each ([`Refusal`]).
    pub refusals: Option<PathBuf>,
}

/// One request the proxy refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    /// The host it named.
    pub host: String,
    /// The port.
    pub port: u16,
    /// When, in milliseconds since the epoch.
    pub at_ms: u64,
}

impl Refusal {
    fn new(host: &str, port: u16) -> Self {
        Self {
            host: host.to_owned(),
            port,
            at_ms: crate::clock::now_ms(),
        }
    }

    /// What the user reads about it.
    pub fn line(&self) -> String {
        format!(
            "warning: egress to {}:{} refused: the host is not in the environment's allowed_hosts",
            self.host, self.port
        )
    }

    /// Appends it to the refusals file, and says it on stderr (a setup
    /// command's output, a turn's stderr).
    fn record(&self, egress: &Egress) {
        let _ = writeln!(std::io::stderr(), "cinch: {}", self.line());
        let Some(path) = &egress.refusals else {
            return;
        };
        let mut line = serde_json::to_string(self).expect("plain data");
        line.push('\n');
        // One write of a short line to a file opened for appending: lines
        // of concurrent refusals never interleave.
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut file| file.write_all(line.as_bytes()));
        if let Err(error) = written {
            let _ = writeln!(
                std::io::stderr(),
                "cinch: could not record the refusal in {}: {error}",
                path.display()
            );
        }
    }
}

/// Reads a refusals file as it grows.
#[derive(Debug)]
pub struct RefusalFeed {
    path: PathBuf,
    read: u64,
    partial: Vec<u8>,
}

impl RefusalFeed {
    /// A reader of `path` from its start (it need not exist yet).
    pub fn new(path: &Path) -> Self {
        Self {
            path: path.to_path_buf(),
            read: 0,
            partial: Vec::new(),
        }
    }

    /// The refusals added since the last call.
    pub fn next_refusals(&mut self) -> Vec<Refusal> {
        use std::io::{Read as _, Seek as _};
        let Ok(mut file) = std::fs::File::open(&self.path) else {
            return Vec::new();
        };
        if file.seek(std::io::SeekFrom::Start(self.read)).is_err() {
            return Vec::new();
        }
        let mut bytes = std::mem::take(&mut self.partial);
        let Ok(added) = file.read_to_end(&mut bytes) else {
            return Vec::new();
        };
        self.read += added as u64;
        let complete = bytes
            .iter()
            .rposition(|&byte| byte == b'\n')
            .map_or(0, |at| at + 1);
        self.partial = bytes.split_off(complete);
        bytes
            .lines()
            .map_while(Result::ok)
            .filter_map(|line| serde_json::from_str(&line).ok())
            .collect()
    }
}
