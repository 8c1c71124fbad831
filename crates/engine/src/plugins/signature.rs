//! Driver signatures: OpenSSH signatures (SSHSIG, the armored format of
//! `ssh-keygen -Y sign`) over the component's bytes, in the namespace
//! [`NAMESPACE`]. `ssh-keygen -Y verify -n cinch-driver` checks them
//! outside cinch.

use std::path::Path;

use anyhow::Context as _;
use ssh_key::{HashAlg, LineEnding, PrivateKey, PublicKey, SshSig};

/// The SSHSIG namespace of driver signatures: a signature made for
/// something else (git commits, files) does not pass for a driver's.
pub(crate) const NAMESPACE: &str = "cinch-driver";

/// Why a component's signature was refused.
#[derive(Debug, thiserror::Error)]
pub enum SignatureError {
    /// No signature, and config.toml requires one.
    #[error(
        "{what} is not signed, and config.toml's [drivers] require_signature is on: sign it with `cinch driver sign` (or `ssh-keygen -Y sign -n {NAMESPACE}`) by a key in trusted_keys"
    )]
    Missing {
        /// The component.
        what: String,
    },
    /// The signature does not read as SSHSIG.
    #[error("{what}'s signature is not an OpenSSH signature (SSHSIG): {cause}")]
    Unreadable {
        /// The component.
        what: String,
        /// Why.
        cause: String,
    },
    /// Signed by a key config.toml does not trust.
    #[error(
        "{what} is signed by {fingerprint}, which is not in config.toml's [drivers] trusted_keys"
    )]
    Untrusted {
        /// The component.
        what: String,
        /// The signing key's SHA-256 fingerprint.
        fingerprint: String,
    },
    /// The signature does not match the bytes (or is of another namespace).
    #[error(
        "{what}'s signature by {fingerprint} does not verify ({cause}): the component is not the one that was signed"
    )]
    Invalid {
        /// The component.
        what: String,
        /// The signing key's SHA-256 fingerprint.
        fingerprint: String,
        /// What the check said.
        cause: String,
    },
}

/// The armored SSHSIG signature of `component` by the OpenSSH private key
/// at `key` (unencrypted: an encrypted key is signed with
/// `ssh-keygen -Y sign -n cinch-driver` instead).
pub fn sign(key: &Path, component: &[u8]) -> anyhow::Result<String> {
    let key = PrivateKey::read_openssh_file(key)
        .with_context(|| format!("reading the OpenSSH private key {}", key.display()))?;
    anyhow::ensure!(
        !key.is_encrypted(),
        "the key is encrypted: sign with `ssh-keygen -Y sign -n {NAMESPACE} -f KEY FILE` and pass the FILE.sig it writes"
    );
    let signature = key
        .sign(NAMESPACE, HashAlg::Sha512, component)
        .context("signing the component")?;
    signature
        .to_pem(LineEnding::LF)
        .context("writing the signature")
}

/// The fingerprint of the key that made `signature`.
pub fn signer(signature: &str) -> Option<String> {
    let signature = SshSig::from_pem(signature).ok()?;
    Some(
        signature
            .public_key()
            .fingerprint(HashAlg::Sha256)
            .to_string(),
    )
}

/// Checks `signature` of `component` (`what` names it in errors) against
/// `trusted` keys (OpenSSH public key lines); returns the signer's
/// fingerprint.
pub fn verify(
    what: &str,
    component: &[u8],
    signature: &str,
    trusted: &[String],
) -> Result<String, SignatureError> {
    let parsed = SshSig::from_pem(signature).map_err(|error| SignatureError::Unreadable {
        what: what.to_owned(),
        cause: error.to_string(),
    })?;
    let fingerprint = parsed.public_key().fingerprint(HashAlg::Sha256).to_string();
    let key = trusted
        .iter()
        .filter_map(|line| PublicKey::from_openssh(line.trim()).ok())
        .find(|key| key.key_data() == parsed.public_key())
        .ok_or_else(|| SignatureError::Untrusted {
            what: what.to_owned(),
            fingerprint: fingerprint.clone(),
        })?;
    key.verify(NAMESPACE, component, &parsed)
        .map_err(|error| SignatureError::Invalid {
            what: what.to_owned(),
            fingerprint: fingerprint.clone(),
            cause: error.to_string(),
        })?;
    Ok(fingerprint)
}

/// Checks every line of `trusted` reads as an OpenSSH public key.
pub(crate) fn check_trusted_keys(trusted: &[String]) -> anyhow::Result<()> {
    for line in trusted {
        PublicKey::from_openssh(line.trim()).with_context(|| {
            format!(
                "config.toml's [drivers] trusted_keys has `{line}`, which is not an OpenSSH public key line (ssh-ed25519 AAAA… as in a .pub file)"
            )
        })?;
    }
    Ok(())
}
