//! The supervisor's side of a conversation: the lines the host appends to
//! the turn's `stdin.jsonl`, forwarded to the CLI's stdin in order.

use std::fs::File;
use std::io::{ErrorKind, Read as _, Write as _};
use std::os::fd::{AsRawFd as _, RawFd};
use std::path::PathBuf;
use std::process::ChildStdin;

/// Bytes read from `stdin.jsonl` per read.
const READ_CHUNK: usize = 64 << 10;

/// Forwards `stdin.jsonl` to the CLI's stdin as it grows. The pipe does not
/// block: a CLI that stops reading holds up its own lines, never the
/// supervisor's watch over it.
pub(super) struct StdinChannel {
    pipe: Option<ChildStdin>,
    source: PathBuf,
    file: Option<File>,
    /// Whole lines read and not yet written to the pipe.
    pending: Vec<u8>,
    /// The start of a line whose end is not in the file yet.
    partial: Vec<u8>,
    close_when_flushed: bool,
}

impl StdinChannel {
    /// A channel from `source` to `pipe`.
    pub(super) fn new(pipe: ChildStdin, source: PathBuf) -> Self {
        // SAFETY: fcntl on a descriptor this process owns.
        unsafe {
            let fd = pipe.as_raw_fd();
            let flags = libc::fcntl(fd, libc::F_GETFL);
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
        Self {
            pipe: Some(pipe),
            source,
            file: None,
            pending: Vec::new(),
            partial: Vec::new(),
            close_when_flushed: false,
        }
    }

    /// Reads what the file has gained and writes what the pipe takes.
    pub(super) fn forward(&mut self) {
        if self.pipe.is_none() {
            return;
        }
        self.read_new_lines();
        self.write_pending();
        if self.close_when_flushed && self.pending.is_empty() {
            self.pipe = None;
        }
    }

    /// Closes the CLI's stdin once every line written so far has gone.
    pub(super) fn close_when_flushed(&mut self) {
        self.close_when_flushed = true;
        self.forward();
    }

    /// The pipe, when lines wait for room in it.
    pub(super) fn waiting_to_write(&self) -> Option<RawFd> {
        let pipe = self.pipe.as_ref()?;
        (!self.pending.is_empty()).then(|| pipe.as_raw_fd())
    }

    fn read_new_lines(&mut self) {
        if self.file.is_none() {
            match File::open(&self.source) {
                Ok(file) => self.file = Some(file),
                Err(error) => {
                    if error.kind() != ErrorKind::NotFound {
                        eprintln!(
                            "cinch supervise: opening {}: {error}",
                            self.source.display()
                        );
                    }
                    return;
                }
            }
        }
        let file = self.file.as_mut().expect("opened above");
        let mut chunk = vec![0; READ_CHUNK];
        loop {
            match file.read(&mut chunk) {
                Ok(0) => break,
                Ok(read) => self.partial.extend_from_slice(&chunk[..read]),
                Err(error) if error.kind() == ErrorKind::Interrupted => continue,
                Err(error) => {
                    eprintln!(
                        "cinch supervise: reading {}: {error}",
                        self.source.display()
                    );
                    break;
                }
            }
        }
        // The host writes each line whole, but a read may still land between
        // two of its writes: only whole lines go on.
        if let Some(end) = self.partial.iter().rposition(|&byte| byte == b'\n') {
            self.pending.extend(self.partial.drain(..=end));
        }
    }

    fn write_pending(&mut self) {
        let Some(pipe) = self.pipe.as_mut() else {
            return;
        };
        while !self.pending.is_empty() {
            match pipe.write(&self.pending) {
                Ok(written) => {
                    self.pending.drain(..written);
                }
                Err(error) if error.kind() == ErrorKind::Interrupted => {}
                Err(error) if error.kind() == ErrorKind::WouldBlock => return,
                Err(_) => {
                    // The CLI closed its stdin (or exited): nothing more reaches it.
                    self.pending.clear();
                    self.pipe = None;
                    return;
                }
            }
        }
    }
}
