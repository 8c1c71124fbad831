//! The one line that explains a failure, picked from a CLI's or a setup
//! command's output: the error, not the banner before it nor the pointer to
//! a log file after it. Gemini prints "YOLO mode is enabled…" before it says
//! the folder is not trusted; npm prints its usage and "A complete log of
//! this run can be found in…" after the line that says what went wrong.

/// Words that mark a line saying what went wrong.
const CAUSE_WORDS: &[&str] = &[
    "error",
    "err!",
    "fatal",
    "failed",
    "failure",
    "invalid",
    "cannot",
    "can't",
    "could not",
    "couldn't",
    "unable",
    "not found",
    "no such",
    "not running",
    "not trusted",
    "not allowed",
    "denied",
    "refused",
    "unauthorized",
    "unauthenticated",
    "forbidden",
    "missing",
    "exception",
    "panicked",
];

/// Lines that never explain: banners, notices, and pointers elsewhere.
const NOISE_STARTS: &[&str] = &[
    "warning:",
    "warn:",
    "yolo mode is enabled",
    "approval mode overridden",
    "ripgrep is not available",
    "loaded cached credentials",
    "[startup]",
    "npm warn",
    "npm notice",
    "a complete log of this run can be found",
    "run \"npm help",
    "at ",
];

/// The line of `text` that explains a failure: the first line naming a
/// cause (npm's `code` line gives way to the sentence after it), else the
/// first line that is not noise; `None` for text without either.
pub fn pick(text: &str) -> Option<String> {
    let lines: Vec<String> = text
        .lines()
        .map(|line| strip_ansi(line).trim().to_owned())
        .filter(|line| !line.is_empty())
        .collect();
    let meaningful: Vec<&str> = lines
        .iter()
        .map(String::as_str)
        .filter(|line| !is_noise(line))
        .collect();
    if let Some(line) = npm_cause(&meaningful) {
        return Some(line);
    }
    meaningful
        .iter()
        .find(|line| names_a_cause(line))
        .or_else(|| meaningful.first())
        .map(|line| (*line).to_owned())
}

/// The last `count` lines of `text` that are neither blank nor noise
/// (banners, pointers to log files), colour codes removed.
pub fn last_meaningful(text: &str, count: usize) -> Vec<String> {
    let mut lines: Vec<String> = text
        .lines()
        .rev()
        .map(|line| strip_ansi(line).trim().to_owned())
        .filter(|line| !line.is_empty() && !is_noise(line))
        .take(count)
        .collect();
    lines.reverse();
    lines
}

fn is_noise(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    let body = npm_body(line).map(str::to_ascii_lowercase);
    NOISE_STARTS.iter().any(|start| {
        lower.starts_with(start) || body.as_deref().is_some_and(|body| body.starts_with(start))
    }) || body.as_deref().is_some_and(|body| {
        // npm's usage text and blank separator lines.
        body.is_empty()
            || body.starts_with("npm ")
            || body.starts_with('-')
            || body.starts_with('[')
    })
}

fn names_a_cause(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    CAUSE_WORDS.iter().any(|word| lower.contains(word))
}

/// What an `npm error …`/`npm ERR! …` line says after its prefix.
fn npm_body(line: &str) -> Option<&str> {
    line.strip_prefix("npm error")
        .or_else(|| line.strip_prefix("npm ERR!"))
        .map(str::trim)
}

/// npm's explanation: the first sentence after its `code X` line, with the
/// code, e.g. "The `npm ci` command can only install … (npm error code
/// EUSAGE)".
fn npm_cause(lines: &[&str]) -> Option<String> {
    let code_at = lines
        .iter()
        .position(|line| npm_body(line).is_some_and(|body| body.starts_with("code ")))?;
    let code = npm_body(lines[code_at])?.trim_start_matches("code ").trim();
    let sentence = lines[code_at + 1..]
        .iter()
        .filter_map(|line| npm_body(line))
        .find(|body| {
            !body.is_empty() && !body.starts_with("errno") && !body.starts_with("syscall")
        });
    Some(match sentence {
        Some(sentence) => format!("{sentence} (npm error code {code})"),
        None => format!("npm error code {code}"),
    })
}

/// `line` without terminal colour codes (`ESC [ … letter`).
fn strip_ansi(line: &str) -> String {
    let mut plain = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        plain.push(c);
    }
    plain
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn banners_and_stack_frames_give_way_to_the_error() {
        let gemini = "YOLO mode is enabled. All tool calls will be automatically approved.\n\
                      Approval mode overridden to \"default\" because the current folder is not trusted.\n\
                      \u{1b}[31mGemini CLI is not running in a trusted directory. To proceed, use `--skip-trust`.\u{1b}[0m\n";
        assert_eq!(
            pick(gemini).as_deref(),
            Some(
                "Gemini CLI is not running in a trusted directory. To proceed, use `--skip-trust`."
            )
        );
        assert_eq!(
            pick("YOLO mode is enabled. All tool calls will be automatically approved.\nInvalid auth method selected.\n").as_deref(),
            Some("Invalid auth method selected.")
        );
        assert_eq!(pick("all went\nwell").as_deref(), Some("all went"));
        assert_eq!(pick("\n  \n"), None);
    }

    #[test]
    fn npm_says_its_code_and_the_sentence_after_it() {
        let npm = "npm error code EUSAGE\nnpm error\n\
                   npm error The `npm ci` command can only install with an existing package-lock.json or\n\
                   npm error Clean install a project\nnpm error Usage:\nnpm error npm ci\n\
                   npm error Run \"npm help ci\" for more info\n\
                   npm error A complete log of this run can be found in: /home/a/.npm/_logs/x.log\n";
        assert_eq!(
            pick(npm).as_deref(),
            Some(
                "The `npm ci` command can only install with an existing package-lock.json or (npm error code EUSAGE)"
            )
        );
    }
}
