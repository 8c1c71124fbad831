//! Sealing under the node's secrets key: XChaCha20-Poly1305, a random nonce
//! for each value, and associated data that binds a sealed value to where
//! it belongs, so that one copied elsewhere does not open. The store seals
//! secrets with it (see `store::sealing`), the engine the values a running
//! turn's output is masked with (see `turn_dir::SecretsSeal`).

use chacha20poly1305::aead::{Aead as _, KeyInit as _, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};

use cinch_base::hex;

/// The key's length in bytes.
const KEY_BYTES: usize = 32;
/// An XChaCha20 nonce's length in bytes: long enough to be drawn at random.
const NONCE_BYTES: usize = 24;

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

/// Seals and opens bytes under one key.
#[derive(Clone)]
pub struct Cipher {
    cipher: XChaCha20Poly1305,
}

impl Cipher {
    /// The cipher of `key`.
    pub fn new(key: &SecretsKey) -> Self {
        Self {
            cipher: XChaCha20Poly1305::new((&key.0).into()),
        }
    }

    /// `plain` sealed and bound to `binding`: hex of the nonce then the
    /// ciphertext with its tag.
    pub fn seal(&self, binding: &[u8], plain: &[u8]) -> Result<String, SecretsKeyError> {
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

    /// The bytes [`Cipher::seal`] sealed in `sealed` with the same key and
    /// `binding`; `None` under another key or binding, or if it was altered.
    pub fn open(&self, binding: &[u8], sealed: &str) -> Option<Vec<u8>> {
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
