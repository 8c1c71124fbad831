//! `last_message_preview`: what the agent last said, as one plain line.

/// A preview is cut to this many characters.
const PREVIEW_CHARS: usize = 200;

/// `text` as one line with markdown stripped and cut to [`PREVIEW_CHARS`];
/// `None` when no visible text is left.
pub fn preview(text: &str) -> Option<String> {
    let mut words = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("```") || line.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence || is_rule(line) {
            continue;
        }
        let line = line.trim_start_matches(['#', '>', ' ']);
        let line = strip_list_marker(line);
        words.extend(strip_inline(line).split_whitespace().map(str::to_owned));
    }
    let flat = words.join(" ");
    if flat.is_empty() {
        return None;
    }
    Some(match flat.char_indices().nth(PREVIEW_CHARS) {
        Some((cut, _)) => format!("{}…", flat[..cut].trim_end()),
        None => flat,
    })
}

fn is_rule(line: &str) -> bool {
    line.len() >= 3
        && (line.chars().all(|c| c == '-')
            || line.chars().all(|c| c == '*')
            || line.chars().all(|c| c == '_'))
}

fn strip_list_marker(line: &str) -> &str {
    if let Some(rest) = line
        .strip_prefix("- ")
        .or_else(|| line.strip_prefix("* "))
        .or_else(|| line.strip_prefix("+ "))
    {
        return rest;
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 && line[digits..].starts_with(". ") {
        return &line[digits + 2..];
    }
    line
}

/// Links and images become their text; emphasis and code marks go.
fn strip_inline(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(c) = rest.chars().next() {
        if c == '!' && rest[1..].starts_with('[') {
            rest = &rest[1..];
            continue;
        }
        if c == '['
            && let Some(close) = rest.find("](")
            && let Some(end) = rest[close..].find(')')
        {
            out.push_str(&rest[1..close]);
            rest = &rest[close + end + 1..];
            continue;
        }
        if !matches!(c, '*' | '_' | '`') {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_plain_line() {
        let text = "## Done\n\nI fixed **the flaky** `checkout` test:\n\n- see [PR](https://x/1)\n```rust\nlet x = 1;\n```\n---\n1. ran _tests_";
        assert_eq!(
            preview(text).unwrap(),
            "Done I fixed the flaky checkout test: see PR ran tests"
        );
        assert_eq!(preview("```\ncode only\n```\n"), None);
        assert_eq!(preview("   \n"), None);
        let long = "word ".repeat(100);
        let cut = preview(&long).unwrap();
        assert!(cut.ends_with('…') && cut.chars().count() <= PREVIEW_CHARS + 1);
    }
}
