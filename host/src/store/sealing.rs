//! Sealing secrets for the database: XChaCha20-Poly1305 under the key every
//! node is given, a random nonce for each value, and the value's owner and
//! name as associated data, so that a sealed value copied to another row
//! does not open. A key check (a known text sealed under the key) tells a
//! wrong key at start rather than at the first secret read.

use chacha20poly1305::aead::{Aead as _, KeyInit as _, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};

use crate::hex;

/// The key's length in bytes.
const KEY_BYTES: usize = 32;
/// An XChaCha20 nonce's length in bytes: long enough to be drawn at random.
const NONCE_BYTES: usize = 24;
/// What the key check seals, with its own associated data.
const CHECK_TEXT: &[u8] = b"cinch secrets key check";

/// What is wrong with the secrets key, or with a sealed value.
#[derive(Debug, thiserror::Error)]
pub enum SecretsKeyError {
    /// Text that is not a key.
    #[error(
        "a secrets key is 32 bytes written as 64 hex digits (make one with `openssl rand -hex 32`)"
    )]
    Malformed,
    /// The database's secrets are sealed under a key this process lacks.
    #[error("this database holds secrets sealed with a key this process was not given")]
    Missing,
    /// The key given is not the one the database's secrets are sealed with.
    #[error("the secrets key given is not the one this database's secrets are sealed with")]
    Wrong,
    /// The database's key changed (rotated) since this process started.
    #[error(
        "the database's secrets key changed since this node started (rotated?): restart it with the new key"
    )]
    Rotated,
    /// A stored value does not open under the key.
    #[error(
        "the secret {name} of {owner} does not open with this node's secrets key (it was sealed with another key, or changed in the database)"
    )]
    Unreadable {
        /// The environment or webhook it belongs to.
        owner: String,
        /// The secret's name.
        name: String,
    },
    /// The operating system gave no randomness for a nonce.
    #[error("drawing a nonce: {0}")]
    Random(std::io::Error),
}

/// The key secrets are sealed with. Never shown: its `Debug` says nothing.
#[derive(Clone)]
pub struct SecretsKey([u8; KEY_BYTES]);

impl std::fmt::Debug for SecretsKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretsKey(..)")
    }
}

impl SecretsKey {
    /// The key `text` spells: 64 hex digits, blanks around them ignored.
    pub fn parse(text: &str) -> Result<Self, SecretsKeyError> {
        hex::decode(text.trim())
            .and_then(|bytes| <[u8; KEY_BYTES]>::try_from(bytes).ok())
            .map(Self)
            .ok_or(SecretsKeyError::Malformed)
    }

    /// A new random key.
    pub fn generate() -> Result<Self, SecretsKeyError> {
        let bytes = hex::random_bytes(KEY_BYTES).map_err(SecretsKeyError::Random)?;
        Ok(Self(bytes.try_into().expect("as many bytes as asked")))
    }

    /// The key as a key file holds it: 64 hex digits.
    pub fn to_hex(&self) -> String {
        hex::encode(&self.0)
    }
}

/// Seals and opens values under one key.
pub(super) struct Sealer {
    cipher: XChaCha20Poly1305,
}

/// What a sealed secret is bound to: its owner (an environment's or a
/// webhook's id) and its name, each ended by a NUL that neither holds.
fn secret_binding(owner: &str, name: &str) -> Vec<u8> {
    [b"secret\0", owner.as_bytes(), b"\0", name.as_bytes(), b"\0"].concat()
}

impl Sealer {
    pub(super) fn new(key: &SecretsKey) -> Self {
        Self {
            cipher: XChaCha20Poly1305::new((&key.0).into()),
        }
    }

    /// `value`, sealed for the secret `name` of `owner`, as stored: hex of
    /// the nonce then the ciphertext with its tag.
    pub(super) fn seal(
        &self,
        owner: &str,
        name: &str,
        value: &str,
    ) -> Result<String, SecretsKeyError> {
        self.seal_bound(&secret_binding(owner, name), value.as_bytes())
    }

    /// The value sealed in `sealed` for the secret `name` of `owner`.
    pub(super) fn open(
        &self,
        owner: &str,
        name: &str,
        sealed: &str,
    ) -> Result<String, SecretsKeyError> {
        self.open_bound(&secret_binding(owner, name), sealed)
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .ok_or_else(|| SecretsKeyError::Unreadable {
                owner: owner.to_owned(),
                name: name.to_owned(),
            })
    }

    /// A new key check: what [`Sealer::opens_check`] of the same key accepts.
    pub(super) fn key_check(&self) -> Result<String, SecretsKeyError> {
        self.seal_bound(b"key check\0", CHECK_TEXT)
    }

    /// Whether `check` was made by [`Sealer::key_check`] under this key.
    pub(super) fn opens_check(&self, check: &str) -> bool {
        self.open_bound(b"key check\0", check).as_deref() == Some(CHECK_TEXT)
    }

    fn seal_bound(&self, binding: &[u8], plain: &[u8]) -> Result<String, SecretsKeyError> {
        let nonce = hex::random_bytes(NONCE_BYTES).map_err(SecretsKeyError::Random)?;
        let sealed = self
            .cipher
            .encrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: plain,
                    aad: binding,
                },
            )
            .expect("XChaCha20-Poly1305 seals any value that fits in memory");
        Ok(hex::encode(&[nonce, sealed].concat()))
    }

    fn open_bound(&self, binding: &[u8], sealed: &str) -> Option<Vec<u8>> {
        let bytes = hex::decode(sealed)?;
        if bytes.len() < NONCE_BYTES {
            return None;
        }
        let (nonce, sealed) = bytes.split_at(NONCE_BYTES);
        self.cipher
            .decrypt(
                XNonce::from_slice(nonce),
                Payload {
                    msg: sealed,
                    aad: binding,
                },
            )
            .ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_value_opens_only_under_its_key_and_in_its_row() {
        let key = SecretsKey::generate().unwrap();
        let sealer = Sealer::new(&key);
        let sealed = sealer.seal("env_1", "TOKEN", "s3cret").unwrap();
        assert!(!sealed.contains("s3cret"));
        assert_ne!(sealed, sealer.seal("env_1", "TOKEN", "s3cret").unwrap());
        assert_eq!(sealer.open("env_1", "TOKEN", &sealed).unwrap(), "s3cret");
        for (owner, name) in [("env_2", "TOKEN"), ("env_1", "OTHER"), ("env_1T", "OKEN")] {
            assert!(sealer.open(owner, name, &sealed).is_err(), "{owner} {name}");
        }
        let other = Sealer::new(&SecretsKey::generate().unwrap());
        assert!(other.open("env_1", "TOKEN", &sealed).is_err());
        let check = sealer.key_check().unwrap();
        assert!(sealer.opens_check(&check) && !other.opens_check(&check));
        assert!(!sealer.opens_check(&sealed) && !sealer.opens_check("zz"));
    }

    #[test]
    fn a_key_is_64_hex_digits_and_never_shown() {
        let key = SecretsKey::generate().unwrap();
        let text = key.to_hex();
        assert_eq!(text.len(), 64);
        assert_eq!(SecretsKey::parse(&format!(" {text}\n")).unwrap().0, key.0);
        for bad in [
            "",
            "00",
            &text[..62],
            &format!("{text}00"),
            &text.replace(&text[..1], "x"),
        ] {
            assert!(SecretsKey::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(format!("{key:?}"), "SecretsKey(..)");
    }
}
