//! Splits a harness's raw output into whole lines for its driver.
//!
//! Output arrives in chunks of any size. A line is handed on once its newline
//! has arrived; a line longer than the cap is never held whole in memory but
//! counted and skipped, and so is a line that is not UTF-8.

/// The longest line passed to a driver. Longer lines are skipped: a driver
/// parsing one could need many times its size in memory.
pub(crate) const MAX_LINE_BYTES: usize = 4 << 20;

/// One line of output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A line of text, without its newline.
    Text(String),
    /// A line longer than the cap, with its length in bytes.
    TooLong(usize),
    /// A line that is not valid UTF-8.
    NotUtf8,
}

/// Accumulates chunks and yields whole lines.
#[derive(Debug)]
pub(crate) struct LineSplitter {
    pending: Vec<u8>,
    max_line: usize,
    /// The length so far of an over-long line whose bytes are being dropped.
    discarding: Option<usize>,
}

impl Default for LineSplitter {
    fn default() -> Self {
        Self::new(MAX_LINE_BYTES)
    }
}

impl LineSplitter {
    /// A splitter that skips lines longer than `max_line` bytes.
    pub(crate) fn new(max_line: usize) -> Self {
        Self {
            pending: Vec::new(),
            max_line,
            discarding: None,
        }
    }

    /// Takes a chunk of output and appends the lines it completes to `out`.
    pub(crate) fn push(&mut self, mut chunk: &[u8], out: &mut Vec<Line>) {
        while !chunk.is_empty() {
            let newline = memchr(chunk);
            let (piece, rest) = match newline {
                Some(at) => (&chunk[..at], &chunk[at + 1..]),
                None => (chunk, &[][..]),
            };
            self.take(piece);
            if newline.is_some() {
                out.push(self.end_line());
            }
            chunk = rest;
        }
    }

    /// The output has ended: the last line, if it had no newline.
    pub(crate) fn finish(&mut self) -> Option<Line> {
        (self.discarding.is_some() || !self.pending.is_empty()).then(|| self.end_line())
    }

    /// Bytes held for a line whose newline has not arrived yet.
    #[cfg(test)]
    fn pending_bytes(&self) -> usize {
        self.pending.len()
    }

    fn take(&mut self, piece: &[u8]) {
        if let Some(length) = &mut self.discarding {
            *length += piece.len();
        } else if self.pending.len() + piece.len() > self.max_line {
            self.discarding = Some(self.pending.len() + piece.len());
            self.pending = Vec::new();
        } else {
            self.pending.extend_from_slice(piece);
        }
    }

    fn end_line(&mut self) -> Line {
        if let Some(length) = self.discarding.take() {
            return Line::TooLong(length);
        }
        let mut bytes = std::mem::take(&mut self.pending);
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        match String::from_utf8(bytes) {
            Ok(text) => Line::Text(text),
            Err(_) => Line::NotUtf8,
        }
    }
}

fn memchr(haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|byte| *byte == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(chunks: &[&[u8]], max_line: usize) -> Vec<Line> {
        let mut splitter = LineSplitter::new(max_line);
        let mut out = Vec::new();
        for chunk in chunks {
            splitter.push(chunk, &mut out);
        }
        out.extend(splitter.finish());
        out
    }

    #[test]
    fn joins_lines_across_chunks_and_keeps_a_cut_last_line() {
        let lines = split(&[b"{\"a\":", b"1}\n{\"b\"", b":2}\r\n{\"cut"], 100);
        assert_eq!(
            lines,
            vec![
                Line::Text("{\"a\":1}".into()),
                Line::Text("{\"b\":2}".into()),
                Line::Text("{\"cut".into()),
            ]
        );
    }

    #[test]
    fn skips_long_lines_without_holding_them() {
        let mut splitter = LineSplitter::new(8);
        let mut out = Vec::new();
        splitter.push(b"0123456789", &mut out);
        splitter.push(b"0123456789", &mut out);
        assert_eq!(splitter.pending_bytes(), 0);
        splitter.push(b"\nok\n", &mut out);
        assert_eq!(out, vec![Line::TooLong(20), Line::Text("ok".into())]);
    }

    #[test]
    fn flags_invalid_utf8() {
        assert_eq!(
            split(&[b"\xff\xfe junk\nfine\n"], 100),
            vec![Line::NotUtf8, Line::Text("fine".into())]
        );
    }
}
