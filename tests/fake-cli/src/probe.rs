//! Probes: what a hostile harness would try, each tried and its outcome
//! printed, so that a test can see what the sandbox let through (and that
//! what a harness needs still works).

use std::io::Write as _;

use serde::{Deserialize, Serialize};

/// One attempt to reach something.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Probe {
    /// Read a file.
    Read {
        /// The file.
        path: String,
    },
    /// List a folder.
    List {
        /// The folder.
        path: String,
    },
    /// Create (or append to) a file.
    Write {
        /// The file.
        path: String,
    },
    /// Send a signal to a process (0 only checks).
    Signal {
        /// The process.
        pid: i32,
        /// The signal number.
        signal: i32,
    },
    /// Attach to a process as a debugger would.
    Ptrace {
        /// The process.
        pid: i32,
    },
    /// Connect to an abstract unix socket.
    ConnectAbstract {
        /// Its name, without the leading NUL.
        name: String,
    },
    /// Connect to a TCP port on 127.0.0.1.
    ConnectTcp {
        /// The port.
        port: u16,
    },
    /// An HTTP GET of `http://host:port/`, through the proxy `HTTP_PROXY`
    /// (or, with `tunnel`, a CONNECT to `HTTPS_PROXY`) when it is set, else
    /// straight to the host: allowed when the host answered 200.
    Http {
        /// The host, as the URL names it.
        host: String,
        /// Its port.
        port: u16,
        /// Through a CONNECT tunnel rather than as a plain proxied request.
        #[serde(default)]
        tunnel: bool,
    },
    /// Send a UDP datagram to 127.0.0.1 and wait for an answer.
    Udp {
        /// The port.
        port: u16,
    },
    /// Ask a DNS server on 127.0.0.1 for a name's IPv4 address.
    Dns {
        /// The server's port.
        port: u16,
        /// The name.
        name: String,
    },
    /// Read an environment variable.
    Env {
        /// Its name.
        name: String,
    },
    /// Start `count` processes that sleep, then end them.
    Fork {
        /// How many to try.
        count: u32,
    },
    /// Run a program to its end in the working directory.
    Run {
        /// The program, found on PATH.
        program: String,
        /// Its arguments.
        #[serde(default)]
        args: Vec<String>,
    },
}

/// What a probe found, printed as one JSON line on stdout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeOutcome {
    /// Always `"probe"`: drivers read it as a line of an unknown type.
    #[serde(rename = "type")]
    pub kind: String,
    /// The probe.
    pub probe: Probe,
    /// Whether it got through.
    pub allowed: bool,
    /// The error, or what it got.
    pub detail: String,
}

impl Probe {
    /// Tries it.
    pub fn run(&self) -> ProbeOutcome {
        let (allowed, detail) = match self {
            Probe::Read { path } => match std::fs::read(path) {
                Ok(bytes) => (true, format!("read {} bytes", bytes.len())),
                Err(error) => (false, error.to_string()),
            },
            Probe::List { path } => match std::fs::read_dir(path) {
                Ok(entries) => (true, format!("{} entries", entries.count())),
                Err(error) => (false, error.to_string()),
            },
            Probe::Write { path } => match std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .and_then(|mut file| file.write_all(b"probe\n"))
            {
                Ok(()) => (true, "written".to_owned()),
                Err(error) => (false, error.to_string()),
            },
            Probe::Signal { pid, signal } => {
                // SAFETY: kill takes plain integers.
                errno_outcome(unsafe { libc::kill(*pid, *signal) })
            }
            Probe::Ptrace { pid } => {
                let null = std::ptr::null_mut::<libc::c_void>();
                // SAFETY: attach takes a pid and no memory.
                let attached = unsafe { libc::ptrace(libc::PTRACE_ATTACH, *pid, null, null) };
                let outcome = errno_outcome(attached as i32);
                if attached == 0 {
                    // SAFETY: as above; detach leaves the process running.
                    unsafe { libc::ptrace(libc::PTRACE_DETACH, *pid, null, null) };
                }
                outcome
            }
            Probe::ConnectAbstract { name } => connect_abstract(name),
            Probe::ConnectTcp { port } => {
                match std::net::TcpStream::connect(("127.0.0.1", *port)) {
                    Ok(_) => (true, "connected".to_owned()),
                    Err(error) => (false, error.to_string()),
                }
            }
            Probe::Http { host, port, tunnel } => crate::net::http_get(host, *port, *tunnel),
            Probe::Udp { port } => crate::net::udp_echo(*port),
            Probe::Dns { port, name } => crate::net::dns_query(*port, name),
            Probe::Env { name } => match std::env::var(name) {
                Ok(value) => (true, format!("{} characters", value.len())),
                Err(_) => (false, "not set".to_owned()),
            },
            Probe::Fork { count } => fork(*count),
            Probe::Run { program, args } => run(program, args),
        };
        ProbeOutcome {
            kind: "probe".to_owned(),
            probe: self.clone(),
            allowed,
            detail,
        }
    }
}

fn errno_outcome(result: i32) -> (bool, String) {
    if result == 0 {
        (true, "done".to_owned())
    } else {
        (false, std::io::Error::last_os_error().to_string())
    }
}

fn connect_abstract(name: &str) -> (bool, String) {
    use std::os::linux::net::SocketAddrExt as _;
    let address = match std::os::unix::net::SocketAddr::from_abstract_name(name) {
        Ok(address) => address,
        Err(error) => return (false, error.to_string()),
    };
    match std::os::unix::net::UnixStream::connect_addr(&address) {
        Ok(_) => (true, "connected".to_owned()),
        Err(error) => (false, error.to_string()),
    }
}

fn run(program: &str, args: &[String]) -> (bool, String) {
    match std::process::Command::new(program).args(args).output() {
        Ok(output) => {
            let text = String::from_utf8_lossy(&output.stdout).into_owned()
                + &String::from_utf8_lossy(&output.stderr);
            (
                output.status.success(),
                format!("{}: {}", output.status, text.trim()),
            )
        }
        Err(error) => (false, error.to_string()),
    }
}

/// Forks sleepers until `count` run or the kernel refuses one; ends them.
fn fork(count: u32) -> (bool, String) {
    let mut children = Vec::new();
    let mut refused = None;
    for _ in 0..count {
        match std::process::Command::new("sleep").arg("30").spawn() {
            Ok(child) => children.push(child),
            Err(error) => {
                refused = Some(error);
                break;
            }
        }
    }
    let started = children.len();
    for mut child in children {
        let _ = child.kill();
        let _ = child.wait();
    }
    match refused {
        None => (true, format!("started all {started}")),
        Some(error) => (false, format!("refused after {started}: {error}")),
    }
}
