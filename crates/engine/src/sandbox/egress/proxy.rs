//! The proxy that is a confined process's only way out: HTTP CONNECT
//! tunnels and plain HTTP requests in absolute form (`GET http://host/…`),
//! let through by the host name they name, refused (403, recorded) when the
//! environment does not list it.
//!
//! It runs as a process of its own (`cinch-helper egress-proxy`, see
//! [`super::netns`]) in the host's network, handed a listening socket that
//! lives in the confined network: a thread for each connection, since a
//! turn's CLI opens a handful.

use std::io::{Read as _, Write as _};
use std::net::{Shutdown, TcpListener, TcpStream, ToSocketAddrs as _};
use std::os::fd::FromRawFd as _;
use std::time::Duration;

use super::hosts::AllowedHosts;
use super::{Egress, Refusal};

/// The most a request's head (its line and headers) may take.
const MAX_HEAD: usize = 64 << 10;

/// How long a client has to send its request's head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);

/// How long connecting to an allowed host may take, for each of its addresses.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// The file descriptor the listening socket is handed on.
pub(crate) const LISTENER_FD: i32 = 3;

/// Serves the listener on [`LISTENER_FD`] until the process is killed (it
/// dies with the confined process, see [`super::netns`]).
pub(super) fn serve(egress: &Egress) -> anyhow::Error {
    // SAFETY: the process that exec'd this one put a listening socket on
    // this descriptor, and nothing else here owns it.
    let listener = unsafe { TcpListener::from_raw_fd(LISTENER_FD) };
    let allowed = AllowedHosts::new(&egress.allowed_hosts);
    loop {
        let client = match listener.accept() {
            Ok((client, _)) => client,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return anyhow::anyhow!("accepting a connection: {error}"),
        };
        let (allowed, egress) = (allowed.clone(), egress.clone());
        std::thread::spawn(move || {
            if let Err(error) = handle(client, &allowed, &egress) {
                tracing::debug!("egress proxy: {error:#}");
            }
        });
    }
}

/// What a client asked for.
#[derive(Debug, PartialEq, Eq)]
struct Request {
    host: String,
    port: u16,
    /// `None` for a CONNECT tunnel; for plain HTTP, the head to send the
    /// server: the request line in origin form, the headers without the
    /// proxy's own and with `Connection: close`.
    forward_head: Option<Vec<u8>>,
}

/// Why a request is not one the proxy takes.
#[derive(Debug, PartialEq, Eq)]
struct BadRequest(&'static str);

fn handle(mut client: TcpStream, allowed: &AllowedHosts, egress: &Egress) -> anyhow::Result<()> {
    client.set_read_timeout(Some(HEAD_TIMEOUT))?;
    let (head, rest) = read_head(&mut client)?;
    client.set_read_timeout(None)?;
    let request = match parse(&head) {
        Ok(request) => request,
        Err(BadRequest(why)) => return answer(&mut client, "400 Bad Request", why),
    };
    if !allowed.admits(&request.host) {
        let refusal = Refusal::new(&request.host, request.port);
        refusal.record(egress);
        return answer(
            &mut client,
            "403 Forbidden",
            &format!(
                "cinch: {} is not in this environment's allowed_hosts",
                request.host
            ),
        );
    }
    let mut upstream = match connect(&request.host, request.port) {
        Ok(upstream) => upstream,
        Err(error) => {
            return answer(
                &mut client,
                "502 Bad Gateway",
                &format!("cinch: could not reach {}: {error}", request.host),
            );
        }
    };
    match &request.forward_head {
        None => client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")?,
        Some(forward) => upstream.write_all(forward)?,
    }
    upstream.write_all(&rest)?;
    relay(client, upstream)
}

/// Reads up to the end of the head: the head, and what came after it.
fn read_head(client: &mut TcpStream) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
    let mut buffer = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        let read = client.read(&mut chunk)?;
        anyhow::ensure!(read > 0, "the client left before its request was whole");
        let searched_from = buffer.len().saturating_sub(3);
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(at) = find(&buffer[searched_from..], b"\r\n\r\n") {
            let end = searched_from + at + 4;
            let rest = buffer.split_off(end);
            return Ok((buffer, rest));
        }
        anyhow::ensure!(
            buffer.len() <= MAX_HEAD,
            "a request head over {MAX_HEAD} bytes"
        );
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

fn parse(head: &[u8]) -> Result<Request, BadRequest> {
    let head = std::str::from_utf8(head).map_err(|_| BadRequest("the request is not text"))?;
    let mut lines = head.split("\r\n");
    let line = lines.next().unwrap_or_default();
    let mut words = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return Err(BadRequest("not an HTTP request line"));
    };
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = authority(target, None)?;
        return Ok(Request {
            host,
            port,
            forward_head: None,
        });
    }
    let Some(after_scheme) = strip_prefix_ignore_case(target, "http://") else {
        return Err(BadRequest(
            "cinch's egress proxy takes CONNECT, or plain HTTP with an absolute http:// URL",
        ));
    };
    let path_at = after_scheme.find(['/', '?']).unwrap_or(after_scheme.len());
    let (authority_text, path) = after_scheme.split_at(path_at);
    let authority_text = authority_text
        .rsplit_once('@')
        .map_or(authority_text, |(_, host)| host);
    let (host, port) = authority(authority_text, Some(80))?;
    let path = match path {
        "" => "/".to_owned(),
        path if path.starts_with('?') => format!("/{path}"),
        path => path.to_owned(),
    };
    let mut forward = format!("{method} {path} {version}\r\n");
    for header in lines.filter(|line| !line.is_empty()) {
        let name = header.split(':').next().unwrap_or_default().trim();
        let hop_by_hop = [
            "proxy-connection",
            "proxy-authorization",
            "connection",
            "keep-alive",
        ]
        .iter()
        .any(|hop| name.eq_ignore_ascii_case(hop));
        if !hop_by_hop {
            forward.push_str(header);
            forward.push_str("\r\n");
        }
    }
    // One request a connection: a client that would send the next one to
    // another host on it would have it go to this one.
    forward.push_str("Connection: close\r\n\r\n");
    Ok(Request {
        host,
        port,
        forward_head: Some(forward.into_bytes()),
    })
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// `host:port` (`[v6]:port`), the port optional when there is a default.
fn authority(text: &str, default_port: Option<u16>) -> Result<(String, u16), BadRequest> {
    let (host, port) = if let Some(bracketed) = text.strip_prefix('[') {
        let (host, after) = bracketed
            .split_once(']')
            .ok_or(BadRequest("an IPv6 address without its closing bracket"))?;
        (host, after.strip_prefix(':'))
    } else {
        match text.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        }
    };
    let port = match port {
        Some(port) => port.parse().map_err(|_| BadRequest("not a port"))?,
        None => default_port.ok_or(BadRequest("CONNECT needs host:port"))?,
    };
    if host.is_empty() {
        return Err(BadRequest("no host"));
    }
    Ok((host.to_owned(), port))
}

fn connect(host: &str, port: u16) -> std::io::Result<TcpStream> {
    let mut last = None;
    for address in (host, port).to_socket_addrs()? {
        match TcpStream::connect_timeout(&address, CONNECT_TIMEOUT) {
            Ok(stream) => return Ok(stream),
            Err(error) => last = Some(error),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("the name has no address")))
}

/// Answers with `status` and `text`, and ends the connection.
fn answer(client: &mut TcpStream, status: &str, text: &str) -> anyhow::Result<()> {
    let body = format!("{text}\n");
    write!(
        client,
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    Ok(())
}

/// Moves bytes both ways until each side has said it is done.
fn relay(client: TcpStream, upstream: TcpStream) -> anyhow::Result<()> {
    let (mut client_in, mut upstream_out) = (client.try_clone()?, upstream.try_clone()?);
    let upward = std::thread::spawn(move || {
        let _ = std::io::copy(&mut client_in, &mut upstream_out);
        let _ = upstream_out.shutdown(Shutdown::Write);
    });
    let (mut upstream_in, mut client_out) = (upstream, client);
    let _ = std::io::copy(&mut upstream_in, &mut client_out);
    let _ = client_out.shutdown(Shutdown::Write);
    let _ = upward.join();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_and_absolute_requests_name_their_host() {
        let tunnel = parse(b"CONNECT api.anthropic.com:443 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        assert_eq!(
            (tunnel.host.as_str(), tunnel.port, tunnel.forward_head),
            ("api.anthropic.com", 443, None)
        );
        let six = parse(b"CONNECT [::1]:8443 HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!((six.host.as_str(), six.port), ("::1", 8443));
        let plain = parse(
            b"POST http://localhost:8080/v1/messages?beta=true HTTP/1.1\r\nHost: localhost:8080\r\nProxy-Connection: keep-alive\r\nContent-Length: 2\r\n\r\n",
        )
        .unwrap();
        assert_eq!((plain.host.as_str(), plain.port), ("localhost", 8080));
        assert_eq!(
            String::from_utf8(plain.forward_head.unwrap()).unwrap(),
            "POST /v1/messages?beta=true HTTP/1.1\r\nHost: localhost:8080\r\nContent-Length: 2\r\nConnection: close\r\n\r\n"
        );
        let bare = parse(b"GET http://example.com HTTP/1.0\r\n\r\n").unwrap();
        assert_eq!((bare.host.as_str(), bare.port), ("example.com", 80));
        assert!(
            String::from_utf8(bare.forward_head.unwrap())
                .unwrap()
                .starts_with("GET / HTTP/1.0\r\n")
        );
        for bad in [
            &b"GET /path HTTP/1.1\r\n\r\n"[..],
            b"GET https://example.com/ HTTP/1.1\r\n\r\n",
            b"CONNECT example.com HTTP/1.1\r\n\r\n",
            b"CONNECT example.com:https HTTP/1.1\r\n\r\n",
            b"nonsense\r\n\r\n",
        ] {
            assert!(parse(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }
}
