//! A connection whose client stops reading is cut off: its writes wait at
//! most so long for room in the socket, so that a stalled reader (an SSE
//! client that went quiet, a sleeping laptop) does not hold its connection,
//! its buffers and its place in a stream for ever. It resumes with
//! `Last-Event-ID` when it comes back.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// `inner`, whose writes fail once they have waited `limit` for the client.
pub(super) struct StallGuard<T> {
    inner: T,
    limit: Duration,
    /// Running while a write waits for the client; none while writes go through.
    stalled: Option<Pin<Box<Sleep>>>,
}

impl<T> StallGuard<T> {
    /// `inner`, cut off once a write has waited `limit`.
    pub(super) fn new(inner: T, limit: Duration) -> Self {
        Self {
            inner,
            limit,
            stalled: None,
        }
    }

    /// What a write that went `Pending` returns: pending still, or an error
    /// once the client has read nothing for the limit. The timer is polled
    /// with the write's waker, so the connection wakes to fail.
    fn waiting<R>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<R>> {
        let limit = self.limit;
        let stalled = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        ready!(stalled.as_mut().poll(cx));
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "the client read nothing for {} s: connection closed",
                limit.as_secs()
            ),
        )))
    }

    /// What a write that did not wait returns; a write that went through
    /// ends the stall.
    fn written<R>(&mut self, result: io::Result<R>) -> Poll<io::Result<R>> {
        if result.is_ok() {
            self.stalled = None;
        }
        Poll::Ready(result)
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for StallGuard<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for StallGuard<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match Pin::new(&mut self.inner).poll_write(cx, buf) {
            Poll::Pending => self.waiting(cx),
            Poll::Ready(result) => self.written(result),
        }
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match Pin::new(&mut self.inner).poll_write_vectored(cx, bufs) {
            Poll::Pending => self.waiting(cx),
            Poll::Ready(result) => self.written(result),
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match Pin::new(&mut self.inner).poll_flush(cx) {
            Poll::Pending => self.waiting(cx),
            Poll::Ready(result) => self.written(result),
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match Pin::new(&mut self.inner).poll_shutdown(cx) {
            Poll::Pending => self.waiting(cx),
            Poll::Ready(result) => Poll::Ready(result),
        }
    }
}
