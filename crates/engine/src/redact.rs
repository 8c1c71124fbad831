//! Replaces secret values in text shown to people or stored.

/// What a secret becomes.
pub(crate) const MASK: &str = "[redacted]";

/// Secrets shorter than this are not masked: masking `1` or `ab` would mangle
/// ordinary text and protect nothing.
const MIN_SECRET_LEN: usize = 6;

/// A set of secret values to mask.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

impl Redactor {
    /// A redactor for `secrets`, longest first so that a secret containing
    /// another is masked whole.
    pub fn new(secrets: impl IntoIterator<Item = String>) -> Self {
        let mut secrets: Vec<String> = secrets
            .into_iter()
            .filter(|secret| secret.len() >= MIN_SECRET_LEN)
            .collect();
        secrets.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
        secrets.dedup();
        Self { secrets }
    }

    /// This redactor masking `more` secrets as well.
    pub fn with(self, more: &[String]) -> Self {
        Self::new(self.secrets.into_iter().chain(more.iter().cloned()))
    }

    /// Whether there is no secret to mask.
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// Whether `text` holds any of the secrets.
    pub(crate) fn finds_secret(&self, text: &str) -> bool {
        self.secrets
            .iter()
            .any(|secret| text.contains(secret.as_str()))
    }

    /// `text` with every secret masked (a `String` given is reused: most
    /// text holds no secret).
    pub fn redact(&self, text: impl Into<String>) -> String {
        let mut text = text.into();
        for secret in &self.secrets {
            if text.contains(secret.as_str()) {
                text = text.replace(secret.as_str(), MASK);
            }
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_every_occurrence_and_ignores_short_values() {
        let redactor = Redactor::new(["sk-secret-1".to_owned(), "ab".to_owned()]);
        assert!(redactor.finds_secret("the key: sk-secret-1."));
        assert!(!redactor.finds_secret("ab, but no key"));
        assert_eq!(
            redactor.redact("key sk-secret-1 and sk-secret-1 ab"),
            "key [redacted] and [redacted] ab"
        );
    }
}
