//! A turn's secrets: the values to mask in what it shows wait in the
//! secrets folder while it runs, sealed under the node's secrets key when
//! there is one (a server's); once it has ended, its files are masked in
//! place and the values go.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use super::files::{Reach, replace_private};
use super::{read_json_if_present, record_json};
use crate::home::{Home, create_private_dir};
use crate::sealing::{Cipher, SecretsKey};

/// Seals the values a turn's output is masked with under the node's
/// secrets key, bound to the turn: a file copied to another turn's name
/// does not open.
#[derive(Clone)]
pub struct SecretsSeal {
    cipher: Cipher,
}

/// What the values kept for `turn` are bound to; a turn id holds no NUL.
fn turn_binding(turn: &str) -> Vec<u8> {
    [b"turn secrets\0", turn.as_bytes(), b"\0"].concat()
}

impl SecretsSeal {
    /// The seal of `key`.
    pub fn new(key: &SecretsKey) -> Self {
        Self {
            cipher: Cipher::new(key),
        }
    }

    fn seal(&self, turn: &str, secrets: &[String]) -> anyhow::Result<KeptFile> {
        let plain = serde_json::to_vec(secrets)?;
        let sealed = self
            .cipher
            .seal(&turn_binding(turn), &plain)
            .context("sealing a turn's secrets")?;
        Ok(KeptFile::Sealed { sealed })
    }

    fn open(&self, turn: &str, sealed: &str) -> Option<Vec<String>> {
        let plain = self.cipher.open(&turn_binding(turn), sealed)?;
        serde_json::from_slice(&plain).ok()
    }
}

/// The file of a turn's values to mask: sealed by a process with a key,
/// in clear by one without (`cinch run`) or by an older version.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum KeptFile {
    Clear(Vec<String>),
    Sealed { sealed: String },
}

/// Where the values to mask in what turn `turn` shows wait while it runs.
fn secrets_file(home: &Home, turn: &str) -> PathBuf {
    home.root()
        .join("secrets")
        .join("turns")
        .join(format!("{turn}.json"))
}

/// Keeps the values to mask in what `turn` shows until it has ended, so that
/// every process reading it (a restarted server, `cinch log`) masks them;
/// sealed with `seal` when there is one.
fn keep_secrets(
    home: &Home,
    seal: Option<&SecretsSeal>,
    turn: &str,
    secrets: &[String],
) -> anyhow::Result<()> {
    let path = secrets_file(home, turn);
    create_private_dir(path.parent().expect("the file has a folder"))?;
    let file = match seal {
        Some(seal) => seal.seal(turn, secrets)?,
        None => KeptFile::Clear(secrets.to_vec()),
    };
    record_json(&path, &file)
}

/// The values to mask in what a turn being started shows, kept (see
/// [`keep_secrets`]); forgotten when dropped, unless the turn started.
pub struct KeptSecrets<'a> {
    home: &'a Home,
    turn: &'a str,
    started: bool,
}

impl<'a> KeptSecrets<'a> {
    /// Keeps `secrets` for `turn`, sealed with `seal` when there is one.
    pub fn keep(
        home: &'a Home,
        seal: Option<&SecretsSeal>,
        turn: &'a str,
        secrets: &[String],
    ) -> anyhow::Result<Self> {
        keep_secrets(home, seal, turn, secrets)?;
        Ok(Self {
            home,
            turn,
            started: false,
        })
    }

    /// The turn has started: its secrets wait for its end.
    pub(crate) fn until_the_turn_ends(mut self) {
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

/// The values kept for `turn`, opened with `seal`; none once it has ended.
/// Values that cannot be read (sealed under another key, or with no key
/// here) are none either: the turn's output is then masked only of what
/// else is known, and a warning says so.
pub fn kept_secrets(home: &Home, seal: Option<&SecretsSeal>, turn: &str) -> Vec<String> {
    let path = secrets_file(home, turn);
    let file = match read_json_if_present::<KeptFile>(&path) {
        Ok(Some(file)) => file,
        Ok(None) => return Vec::new(),
        Err(error) => {
            tracing::warn!(
                %turn,
                "the values to mask in the turn's output are unreadable ({error:#}): it is masked only of the configured secrets and those given again"
            );
            return Vec::new();
        }
    };
    match (file, seal) {
        (KeptFile::Clear(secrets), _) => secrets,
        (KeptFile::Sealed { sealed }, Some(seal)) => seal.open(turn, &sealed).unwrap_or_else(|| {
            tracing::warn!(
                %turn,
                path = %path.display(),
                "the values to mask in the turn's output do not open with this node's secrets key (it changed since the turn started?): its output is masked only of the configured secrets and those given again"
            );
            Vec::new()
        }),
        (KeptFile::Sealed { .. }, None) => {
            tracing::warn!(
                %turn,
                path = %path.display(),
                "the values to mask in the turn's output are sealed and this process has no secrets key: its output is masked only of the configured secrets"
            );
            Vec::new()
        }
    }
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
    replace_private(path, Reach::Disk, |writer, partial| {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_values_open_only_with_their_key_and_turn_and_never_fail_the_reader() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::open(dir.path().to_path_buf()).unwrap();
        let seal = SecretsSeal::new(&SecretsKey::generate().unwrap());
        let secrets = vec!["s3cret".to_owned()];
        keep_secrets(&home, Some(&seal), "turn_a", &secrets).unwrap();
        let text = std::fs::read_to_string(secrets_file(&home, "turn_a")).unwrap();
        assert!(!text.contains("s3cret"), "{text}");
        assert_eq!(kept_secrets(&home, Some(&seal), "turn_a"), secrets);

        // Another key, no key, or the file under another turn's name: nothing.
        let other = SecretsSeal::new(&SecretsKey::generate().unwrap());
        assert!(kept_secrets(&home, Some(&other), "turn_a").is_empty());
        assert!(kept_secrets(&home, None, "turn_a").is_empty());
        std::fs::copy(secrets_file(&home, "turn_a"), secrets_file(&home, "turn_b")).unwrap();
        assert!(kept_secrets(&home, Some(&seal), "turn_b").is_empty());

        // Kept in clear (no key, or an older version): read with or without one.
        keep_secrets(&home, None, "turn_c", &secrets).unwrap();
        assert_eq!(kept_secrets(&home, Some(&seal), "turn_c"), secrets);
        assert_eq!(kept_secrets(&home, None, "turn_c"), secrets);
        forget_secrets(&home, "turn_c");
        assert!(kept_secrets(&home, None, "turn_c").is_empty());
    }
}
