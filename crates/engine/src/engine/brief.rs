//! The brief a harness reads: a fixed preamble, the task, and the notes.

/// Notes together may hold at most this many bytes; a note past the cap is
/// named, not included.
pub(crate) const NOTES_CAP_BYTES: usize = 64 << 10;

/// What every harness is told before its task.
pub(crate) const PREAMBLE: &str = "\
You are running as a coding agent for one turn, with no way to reach the person who asked. \
When you are blocked or need a decision, stop and ask in your final message instead of guessing. \
You may commit on the current branch; never push and never open pull requests. \
End with a short account of what you changed and what you ran.";

/// A note appended to the brief under its own heading.
#[derive(Debug, Clone)]
pub struct Note {
    /// Its name: the heading it goes under.
    pub name: String,
    /// Its text.
    pub text: String,
}

/// The whole brief.
pub(crate) fn compose(task: &str, notes: &[Note]) -> String {
    let mut brief = format!("{PREAMBLE}\n\n# Task\n\n{}\n", task.trim_end());
    let mut used = 0;
    let mut left_out = Vec::new();
    for note in notes {
        if used + note.text.len() > NOTES_CAP_BYTES {
            left_out.push(note.name.as_str());
            continue;
        }
        used += note.text.len();
        brief.push_str(&format!("\n# {}\n\n{}\n", note.name, note.text.trim_end()));
    }
    if !left_out.is_empty() {
        brief.push_str(&format!(
            "\n(Not included, past the {} KiB cap on notes: {}.)\n",
            NOTES_CAP_BYTES >> 10,
            left_out.join(", ")
        ));
    }
    brief
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(name: &str, size: usize) -> Note {
        Note {
            name: name.into(),
            text: "x".repeat(size),
        }
    }

    #[test]
    fn the_task_and_notes_follow_the_preamble() {
        let brief = compose(
            "Fix the bug.\n",
            &[Note {
                name: "design.md".into(),
                text: "Keep it small.".into(),
            }],
        );
        assert!(brief.starts_with(PREAMBLE));
        assert!(brief.contains("\n# Task\n\nFix the bug.\n"));
        assert!(brief.ends_with("\n# design.md\n\nKeep it small.\n"));
    }

    #[test]
    fn notes_past_the_cap_are_named_not_included() {
        let brief = compose(
            "t",
            &[
                note("a", 40 << 10),
                note("b", 30 << 10),
                note("c", 10 << 10),
            ],
        );
        assert!(brief.contains("\n# a\n") && brief.contains("\n# c\n"));
        assert!(!brief.contains("\n# b\n"));
        assert!(brief.ends_with("(Not included, past the 64 KiB cap on notes: b.)\n"));
    }
}
