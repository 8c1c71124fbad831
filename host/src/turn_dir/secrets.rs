//! A turn's secrets: the values to mask in what it shows wait in the
//! secrets folder while it runs; once it has ended, its files are masked in
//! place and the values go.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use super::files::replace_private;
use super::{read_json, write_json};
use crate::home::{Home, create_private_dir};

/// Where the values to mask in what turn `turn` shows wait while it runs.
fn secrets_file(home: &Home, turn: &str) -> PathBuf {
    home.root()
        .join("secrets")
        .join("turns")
        .join(format!("{turn}.json"))
}

/// Keeps the values to mask in what `turn` shows until it has ended, so that
/// every process reading it (a restarted server, `cinch log`) masks them.
fn keep_secrets(home: &Home, turn: &str, secrets: &[String]) -> anyhow::Result<()> {
    let path = secrets_file(home, turn);
    create_private_dir(path.parent().expect("the file has a folder"))?;
    write_json(&path, &secrets)
}

/// The values to mask in what a turn being started shows, kept (see
/// [`keep_secrets`]); forgotten when dropped, unless the turn started.
pub struct KeptSecrets<'a> {
    home: &'a Home,
    turn: &'a str,
    started: bool,
}

impl<'a> KeptSecrets<'a> {
    /// Keeps `secrets` for `turn`.
    pub fn keep(home: &'a Home, turn: &'a str, secrets: &[String]) -> anyhow::Result<Self> {
        keep_secrets(home, turn, secrets)?;
        Ok(Self {
            home,
            turn,
            started: false,
        })
    }

    /// The turn has started: its secrets wait for its end.
    pub fn until_the_turn_ends(mut self) {
        self.started = true;
    }
}

impl Drop for KeptSecrets<'_> {
    fn drop(&mut self) {
        // A turn that never started shows nothing: its secrets need not wait.
        if !self.started {
            forget_secrets(self.home, self.turn);
        }
    }
}

/// The values kept for `turn`; none once it has ended.
pub fn kept_secrets(home: &Home, turn: &str) -> Vec<String> {
    read_json(&secrets_file(home, turn)).unwrap_or_default()
}

/// Forgets the values kept for `turn`.
pub fn forget_secrets(home: &Home, turn: &str) {
    let path = secrets_file(home, turn);
    if let Err(error) = std::fs::remove_file(&path)
        && error.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!("could not remove {}: {error}", path.display());
    }
}

/// Masks `redactor`'s secrets in the file at `path`, line by line, in place
/// (a new file renamed over it, so a reader never sees half of it). A file
/// holding none is left as it is: most turns' logs hold no secret, and
/// rewriting one costs a copy of the whole log and a sync. With no secret to
/// mask, the file is not even read.
pub fn redact_file(path: &Path, redactor: &crate::redact::Redactor) -> anyhow::Result<()> {
    use std::io::{BufReader, Seek as _};
    if redactor.is_empty() {
        return Ok(());
    }
    let file = match File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(error).with_context(|| format!("opening {}", path.display())),
    };
    let mut reader = BufReader::new(file);
    let mut line = Vec::new();
    loop {
        if !next_line(&mut reader, &mut line, path)? {
            return Ok(());
        }
        if redactor.finds_secret(&String::from_utf8_lossy(&line)) {
            break;
        }
    }
    reader
        .rewind()
        .with_context(|| format!("reading {}", path.display()))?;
    replace_private(path, |writer, partial| {
        while next_line(&mut reader, &mut line, path)? {
            // Text that is not UTF-8 is kept byte for byte unless it holds a secret.
            let masked = match std::str::from_utf8(&line) {
                Ok(text) => redactor.redact(text).into_bytes(),
                Err(_) => {
                    let text = String::from_utf8_lossy(&line);
                    if redactor.finds_secret(&text) {
                        redactor.redact(text).into_bytes()
                    } else {
                        line.clone()
                    }
                }
            };
            writer
                .write_all(&masked)
                .with_context(|| format!("writing {}", partial.display()))?;
        }
        Ok(())
    })
}

/// Reads the next line of the file at `path` into `line` (its newline kept);
/// false at the end.
fn next_line(
    reader: &mut impl std::io::BufRead,
    line: &mut Vec<u8>,
    path: &Path,
) -> anyhow::Result<bool> {
    line.clear();
    let read = reader
        .read_until(b'\n', line)
        .with_context(|| format!("reading {}", path.display()))?;
    Ok(read > 0)
}
