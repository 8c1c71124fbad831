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
    use std::io::Read as _;
    let mut bytes = vec![0u8; n];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(encode(&bytes))
}

#[cfg(test)]
mod tests {
    #[test]
    fn two_lowercase_digits_per_byte() {
        assert_eq!(super::encode(&[0x00, 0x0f, 0xa0, 0xff]), "000fa0ff");
        assert_eq!(super::encode(&[]), "");
    }
}
