//! The network probes: an HTTP request the way a harness's HTTP client
//! makes one (through the proxy its environment names, if any), a UDP
//! datagram and a DNS query, each with an answer awaited.

use std::io::{Read as _, Write as _};
use std::net::{TcpStream, UdpSocket};
use std::time::Duration;

/// How long a probe waits for an answer.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(3);

/// `(allowed, detail)`: whether `http://host:port/` answered 200, and the
/// answer's status line (or the error).
pub fn http_get(host: &str, port: u16, tunnel: bool) -> (bool, String) {
    match try_http_get(host, port, tunnel) {
        Ok(status) => (status.split(' ').nth(1) == Some("200"), status),
        Err(error) => (false, error.to_string()),
    }
}

fn try_http_get(host: &str, port: u16, tunnel: bool) -> std::io::Result<String> {
    let proxy_variable = if tunnel { "HTTPS_PROXY" } else { "HTTP_PROXY" };
    let proxy = std::env::var(proxy_variable).ok().map(|url| {
        url.trim_start_matches("http://")
            .trim_end_matches('/')
            .to_owned()
    });
    let authority = format!("{host}:{port}");
    let mut stream = TcpStream::connect(proxy.as_deref().unwrap_or(&authority))?;
    stream.set_read_timeout(Some(ANSWER_TIMEOUT))?;
    let target = match (&proxy, tunnel) {
        (Some(_), true) => {
            write!(
                stream,
                "CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n"
            )?;
            let answer = read_head(&mut stream)?;
            if !answer.starts_with("HTTP/1.1 200") {
                return Ok(answer.lines().next().unwrap_or_default().to_owned());
            }
            "/".to_owned()
        }
        (Some(_), false) => format!("http://{authority}/"),
        (None, _) => "/".to_owned(),
    };
    write!(
        stream,
        "GET {target} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n"
    )?;
    let answer = read_head(&mut stream)?;
    Ok(answer.lines().next().unwrap_or_default().to_owned())
}

/// The head of an answer (up to its blank line).
fn read_head(stream: &mut TcpStream) -> std::io::Result<String> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte)? == 0 {
            break;
        }
        head.push(byte[0]);
    }
    Ok(String::from_utf8_lossy(&head).into_owned())
}

/// `(allowed, detail)`: whether a datagram to 127.0.0.1:`port` was answered.
pub fn udp_echo(port: u16) -> (bool, String) {
    let answered =
        exchange(port, b"ping").map(|answer| String::from_utf8_lossy(&answer).into_owned());
    match answered {
        Ok(answer) => (true, format!("answered {answer}")),
        Err(error) => (false, error.to_string()),
    }
}

/// `(allowed, detail)`: whether the DNS server on 127.0.0.1:`port` gave
/// `name` an address, and the address.
pub fn dns_query(port: u16, name: &str) -> (bool, String) {
    let id = 0x4321u16;
    let mut query = Vec::new();
    query.extend_from_slice(&id.to_be_bytes());
    // A standard query, recursion desired; one question.
    query.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
    for label in name.split('.') {
        query.push(label.len() as u8);
        query.extend_from_slice(label.as_bytes());
    }
    // The root, then type A, class IN.
    query.extend_from_slice(&[0, 0, 1, 0, 1]);
    match exchange(port, &query) {
        Ok(answer) if answer.len() >= 4 + 12 && answer[..2] == id.to_be_bytes() => {
            let address = &answer[answer.len() - 4..];
            (
                true,
                format!(
                    "{}.{}.{}.{}",
                    address[0], address[1], address[2], address[3]
                ),
            )
        }
        Ok(answer) => (
            false,
            format!("an answer of {} bytes that is not one", answer.len()),
        ),
        Err(error) => (false, error.to_string()),
    }
}

fn exchange(port: u16, datagram: &[u8]) -> std::io::Result<Vec<u8>> {
    let socket = UdpSocket::bind("127.0.0.1:0")?;
    socket.set_read_timeout(Some(ANSWER_TIMEOUT))?;
    socket.send_to(datagram, ("127.0.0.1", port))?;
    let mut answer = vec![0u8; 512];
    let (read, _) = socket.recv_from(&mut answer)?;
    answer.truncate(read);
    Ok(answer)
}
