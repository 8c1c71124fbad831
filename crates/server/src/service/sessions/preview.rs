//! `last_message_preview`: what the agent last said, as one plain line.

/// A preview is cut to this many characters.
const PREVIEW_CHARS: usize = 200;

/// `text` as one line with markdown stripped and cut to [`PREVIEW_CHARS`];
/// `None` when no visible text is left.
pub(crate) fn preview(text: &str) -> Option<String> {
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

/// One piece of a line on its way through [`strip_inline`].
enum Piece {
    /// Text that stays.
    Text(String),
    /// A run of `*` or `_`: emphasis when it pairs up with another run.
    Delimiter {
        mark: char,
        length: usize,
        can_open: bool,
        can_close: bool,
        paired: bool,
    },
}

/// Links and images become their text, code spans their code; emphasis
/// marks go when they pair up as markdown pairs them (CommonMark's flanking
/// rules), so the `_` of `snake_case` and the `*` of `2 * 3` stay.
fn strip_inline(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        match c {
            '\\' if chars.get(at + 1).is_some_and(char::is_ascii_punctuation) => {
                text.push(chars[at + 1]);
                at += 2;
            }
            '`' => {
                let run = run_length(&chars, at);
                match closing_backticks(&chars, at + run, run) {
                    Some(close) => {
                        let code: String = chars[at + run..close].iter().collect();
                        text.push_str(code.trim());
                        at = close + run;
                    }
                    None => {
                        text.extend(&chars[at..at + run]);
                        at += run;
                    }
                }
            }
            '!' | '[' => match link(&chars, if c == '!' { at + 1 } else { at }) {
                Some((label, end)) => {
                    text.push_str(&strip_inline(&label));
                    at = end;
                }
                None => {
                    text.push(c);
                    at += 1;
                }
            },
            '*' | '_' => {
                let length = run_length(&chars, at);
                let before = at.checked_sub(1).map(|i| chars[i]);
                let after = chars.get(at + length).copied();
                let left = flanks(after, before);
                let right = flanks(before, after);
                let (can_open, can_close) = if c == '*' {
                    (left, right)
                } else {
                    // `_` never opens or closes inside a word.
                    (
                        left && (!right || before.is_some_and(is_punctuation)),
                        right && (!left || after.is_some_and(is_punctuation)),
                    )
                };
                pieces.push(Piece::Text(std::mem::take(&mut text)));
                pieces.push(Piece::Delimiter {
                    mark: c,
                    length,
                    can_open,
                    can_close,
                    paired: false,
                });
                at += length;
            }
            _ => {
                text.push(c);
                at += 1;
            }
        }
    }
    pieces.push(Piece::Text(text));
    pair_delimiters(&mut pieces);
    let mut out = String::with_capacity(line.len());
    for piece in pieces {
        match piece {
            Piece::Text(text) => out.push_str(&text),
            Piece::Delimiter {
                mark,
                length,
                paired: false,
                ..
            } => out.extend(std::iter::repeat_n(mark, length)),
            Piece::Delimiter { .. } => {}
        }
    }
    out
}

/// Marks each closing run paired with the nearest opening run of its mark
/// before it; openers skipped over stay unpaired.
fn pair_delimiters(pieces: &mut [Piece]) {
    let mut openers: Vec<(usize, char)> = Vec::new();
    for index in 0..pieces.len() {
        let Piece::Delimiter {
            mark,
            can_open,
            can_close,
            ..
        } = pieces[index]
        else {
            continue;
        };
        let opener = can_close
            .then(|| openers.iter().rposition(|&(_, open)| open == mark))
            .flatten();
        if let Some(position) = opener {
            let (open_index, _) = openers[position];
            openers.truncate(position);
            for paired_index in [open_index, index] {
                if let Piece::Delimiter { paired, .. } = &mut pieces[paired_index] {
                    *paired = true;
                }
            }
        } else if can_open {
            openers.push((index, mark));
        }
    }
}

/// Whether a delimiter run with `toward` on the side it faces and `away` on
/// the other flanks what it faces (CommonMark: left-flanking when `toward`
/// is the next character, right-flanking when it is the previous one). The
/// line's ends count as whitespace.
fn flanks(toward: Option<char>, away: Option<char>) -> bool {
    let space = |c: Option<char>| c.is_none_or(char::is_whitespace);
    let punctuation = |c: Option<char>| c.is_some_and(is_punctuation);
    !space(toward) && (!punctuation(toward) || space(away) || punctuation(away))
}

fn is_punctuation(c: char) -> bool {
    !c.is_alphanumeric() && !c.is_whitespace()
}

/// How many times the character at `at` repeats from there.
fn run_length(chars: &[char], at: usize) -> usize {
    chars[at..].iter().take_while(|&&c| c == chars[at]).count()
}

/// Where a run of exactly `length` backticks starts at or after `from`.
fn closing_backticks(chars: &[char], from: usize, length: usize) -> Option<usize> {
    let mut at = from;
    while at < chars.len() {
        if chars[at] == '`' {
            let run = run_length(chars, at);
            if run == length {
                return Some(at);
            }
            at += run;
        } else {
            at += 1;
        }
    }
    None
}

/// A link `[label](target)` starting at `at`: its label and where it ends.
fn link(chars: &[char], at: usize) -> Option<(String, usize)> {
    if chars.get(at) != Some(&'[') {
        return None;
    }
    let close = at + chars[at..].iter().position(|&c| c == ']')?;
    if chars.get(close + 1) != Some(&'(') {
        return None;
    }
    let end = close + 1 + chars[close + 1..].iter().position(|&c| c == ')')?;
    Some((chars[at + 1..close].iter().collect(), end + 1))
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

    #[test]
    fn identifiers_and_arithmetic_keep_their_marks() {
        assert_eq!(
            preview("Renamed `snake_case_name` to snake_case_name in file_a.rs").unwrap(),
            "Renamed snake_case_name to snake_case_name in file_a.rs"
        );
        assert_eq!(
            preview("Call f(*args, **kwargs); 2 * 3 * 4 = 24").unwrap(),
            "Call f(*args, **kwargs); 2 * 3 * 4 = 24"
        );
        assert_eq!(
            preview("__init__ is **now** _fast_, see `__init__` and \\*literal\\*").unwrap(),
            "init is now fast, see __init__ and *literal*"
        );
        assert_eq!(
            preview("![diagram](x.png) and [*the* docs](https://x/y_z)").unwrap(),
            "diagram and the docs"
        );
        assert_eq!(
            preview("a ``code with ` tick`` b").unwrap(),
            "a code with ` tick b"
        );
    }
}
