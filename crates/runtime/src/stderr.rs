//! A driver's standard error, kept in a bounded buffer.
//!
//! A panicking guest prints its message to stderr and then traps; the trap
//! itself only says "unreachable". Keeping the first bytes of stderr lets the
//! host name the cause. A chatty driver cannot grow the buffer past its cap,
//! and writes past the cap are dropped rather than failing the guest.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi_io::bytes::Bytes;
use wasmtime_wasi_io::poll::Pollable;
use wasmtime_wasi_io::streams::{OutputStream, StreamResult};

/// The first `capacity` bytes a guest wrote; later bytes are dropped.
#[derive(Clone)]
pub(crate) struct BoundedOutput {
    buffer: Arc<Mutex<Vec<u8>>>,
    capacity: usize,
}

impl BoundedOutput {
    /// An empty buffer that keeps at most `capacity` bytes.
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            buffer: Arc::default(),
            capacity,
        }
    }

    /// What was written so far, as text.
    pub(crate) fn contents(&self) -> String {
        String::from_utf8_lossy(&self.lock()).into_owned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<u8>> {
        // A poisoned lock only means another writer panicked mid-append; the
        // bytes are still worth reading.
        cinch_base::sync::lock(&self.buffer)
    }

    fn append(&self, bytes: &[u8]) {
        let mut buffer = self.lock();
        let room = self.capacity.saturating_sub(buffer.len());
        buffer.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

impl IsTerminal for BoundedOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for BoundedOutput {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi_io::async_trait]
impl Pollable for BoundedOutput {
    async fn ready(&mut self) {}
}

impl OutputStream for BoundedOutput {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.append(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(64 * 1024)
    }
}

impl tokio::io::AsyncWrite for BoundedOutput {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.append(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_first_bytes_and_drops_the_rest() {
        let mut output = BoundedOutput::new(5);
        output.write(Bytes::from_static(b"abc")).unwrap();
        output.write(Bytes::from_static(b"defgh")).unwrap();
        assert_eq!(output.contents(), "abcde");
    }
}
