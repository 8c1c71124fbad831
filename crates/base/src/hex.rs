//! Lowercase hex, the one way cinch writes hashes, keys and random ids.

use std::fmt::Write as _;

/// `bytes` as lowercase hex, two digits each.
pub fn encode(bytes: &[u8]) -> String {
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut out, byte| {
            let _ = write!(out, "{byte:02x}");
            out
        })
}

/// `n` random bytes from the operating system, as lowercase hex: the one
/// source of randomness for ids, tokens and event ids.
pub fn random(n: usize) -> std::io::Result<String> {
    Ok(encode(&random_bytes(n)?))
}

/// `n` random bytes from the operating system: keys and nonces. One
/// `getrandom` call; opening, reading and closing `/dev/urandom`, as before,
/// took three, for every id a new session makes.
pub fn random_bytes(n: usize) -> std::io::Result<Vec<u8>> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes)?;
    Ok(bytes)
}

/// The bytes `text` spells in hex (either case, two digits a byte); `None`
/// when it is not hex.
pub fn decode(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(&text[at..at + 2], 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn two_lowercase_digits_per_byte() {
        assert_eq!(super::encode(&[0x00, 0x0f, 0xa0, 0xff]), "000fa0ff");
        assert_eq!(super::encode(&[]), "");
    }

    #[test]
    fn decodes_what_it_encodes_and_refuses_what_is_not_hex() {
        assert_eq!(
            super::decode("000fA0ff"),
            Some(vec![0x00, 0x0f, 0xa0, 0xff])
        );
        assert_eq!(super::decode(""), Some(vec![]));
        for bad in ["0", "0g", "+1", "é1"] {
            assert_eq!(super::decode(bad), None, "{bad}");
        }
    }
}
