//! Sealing secrets for the database (see [`cinch_engine::sealing`]): the value's
//! owner and name as associated data, so that a sealed value copied to
//! another row does not open. A key check (a known text sealed under the
//! key) tells a wrong key at start rather than at the first secret read.

use cinch_engine::sealing::{Cipher, SecretsKey, SecretsKeyError};

/// What the key check seals, with its own associated data.
const CHECK_TEXT: &[u8] = b"cinch secrets key check";

/// Seals and opens values under one key.
pub(super) struct Sealer {
    cipher: Cipher,
}

/// What a sealed secret is bound to: its owner (an environment's or a
/// webhook's id) and its name, each ended by a NUL that neither holds.
fn secret_binding(owner: &str, name: &str) -> Vec<u8> {
    [b"secret\0", owner.as_bytes(), b"\0", name.as_bytes(), b"\0"].concat()
}

impl Sealer {
    pub(super) fn new(key: &SecretsKey) -> Self {
        Self {
            cipher: Cipher::new(key),
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
        self.cipher
            .seal(&secret_binding(owner, name), value.as_bytes())
    }

    /// The value sealed in `sealed` for the secret `name` of `owner`.
    pub(super) fn open(
        &self,
        owner: &str,
        name: &str,
        sealed: &str,
    ) -> Result<String, SecretsKeyError> {
        self.cipher
            .open(&secret_binding(owner, name), sealed)
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .ok_or_else(|| SecretsKeyError::Unreadable {
                owner: owner.to_owned(),
                name: name.to_owned(),
            })
    }

    /// A new key check: what [`Sealer::opens_check`] of the same key accepts.
    pub(super) fn key_check(&self) -> Result<String, SecretsKeyError> {
        self.cipher.seal(b"key check\0", CHECK_TEXT)
    }

    /// Whether `check` was made by [`Sealer::key_check`] under this key.
    pub(super) fn opens_check(&self, check: &str) -> bool {
        self.cipher.open(b"key check\0", check).as_deref() == Some(CHECK_TEXT)
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
}
