//! Small text helpers every driver needs.

/// The first line of `text` that is not blank, trimmed.
pub fn first_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).find(|line| !line.is_empty())
}

/// The last `count` non-blank lines of `text`, joined with newlines.
pub fn last_lines(text: &str, count: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(count)..].join("\n")
}

/// The first thing in `output` shaped like a version number (`1.2.3`,
/// `0.171.0`, `2026.01.28-fd13201`): digits and dots with at least one dot,
/// and any suffix glued to it.
pub fn find_version(output: &str) -> Option<String> {
    output
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ',')
        .map(|word| word.trim_start_matches('v'))
        .find(|word| {
            let numeric: String = word
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            numeric.contains('.')
                && numeric.starts_with(|c: char| c.is_ascii_digit())
                && numeric.split('.').all(|part| !part.is_empty())
        })
        .map(str::to_owned)
}

/// The last few lines of `stderr` that explain a failure: colour codes
/// removed, and lines starting with any of `noise` (the CLI's routine
/// chatter) dropped; `None` when nothing is left.
pub fn stderr_error(stderr: &str, noise: &[&str]) -> Option<String> {
    let plain = strip_ansi(stderr);
    let kept: Vec<&str> = plain
        .lines()
        .filter(|line| !noise.iter().any(|noisy| line.trim().starts_with(noisy)))
        .collect();
    Some(last_lines(&kept.join("\n"), 5)).filter(|text| !text.is_empty())
}

/// The error when nothing better says what went wrong: how the CLI exited,
/// or, when it exited 0, that its output said the turn failed.
pub fn exit_text(exit_code: Option<i32>) -> String {
    match exit_code {
        Some(0) => "the turn failed".to_owned(),
        Some(code) => format!("exited with code {code}"),
        None => "killed by a signal".to_owned(),
    }
}

/// `text` without ANSI escape sequences (CSI sequences whole, any other
/// escape with the character after it).
pub fn strip_ansi(text: &str) -> String {
    let mut plain = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            plain.push(c);
        } else if chars.next() == Some('[') {
            // Parameters and intermediates run up to a final byte in @..~.
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
    }
    plain
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_line_skips_blank_lines() {
        assert_eq!(first_line("\n  \n  hello \nworld"), Some("hello"));
        assert_eq!(first_line("   \n"), None);
    }

    #[test]
    fn last_lines_keeps_the_tail() {
        assert_eq!(last_lines("a\nb\n\nc\nd\n", 2), "c\nd");
        assert_eq!(last_lines("a", 5), "a");
    }

    #[test]
    fn finds_versions_in_the_shapes_clis_print() {
        assert_eq!(
            find_version("2.1.197 (Claude Code)").as_deref(),
            Some("2.1.197")
        );
        assert_eq!(
            find_version("codex-cli 0.171.0").as_deref(),
            Some("0.171.0")
        );
        assert_eq!(find_version("0.61.0\n").as_deref(), Some("0.61.0"));
        assert_eq!(
            find_version("2026.01.28-fd13201").as_deref(),
            Some("2026.01.28-fd13201")
        );
        assert_eq!(find_version("v1.18.33").as_deref(), Some("1.18.33"));
        assert_eq!(find_version("no version here 12").as_deref(), None);
    }

    #[test]
    fn stderr_error_drops_noise_and_colour() {
        let noise = ["Reading additional input from stdin"];
        let stderr = "Reading additional input from stdin...\n\u{1b}[31mError: boom\u{1b}[0m\n";
        assert_eq!(stderr_error(stderr, &noise).as_deref(), Some("Error: boom"));
        assert_eq!(
            stderr_error("Reading additional input from stdin...\n", &noise),
            None
        );
        assert_eq!(stderr_error("\u{1b}", &noise), None);
    }
}
