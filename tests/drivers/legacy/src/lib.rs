//! A driver of contract 0.1.0, built from the frozen WIT without the SDK (the
//! SDK exports the newest contract): it proves the host keeps linking 0.1.0.
//! Each line's `type` comes back as an `other` event; `finish` reports the
//! number of lines it read and the exit code.

#[cfg(target_arch = "wasm32")]
mod component {
    use std::cell::Cell;

    wit_bindgen::generate!({ world: "harness-driver", path: "../../../wit/0.1.0" });

    use cinch::driver::types::{
        BriefDelivery, Command, Event, Info, Outcome, ResumeScope, SkipReason, Skipped, Turn,
    };
    use exports::cinch::driver::driver::{Guest, GuestParser};

    struct Legacy;

    struct LegacyParser {
        lines: Cell<usize>,
    }

    impl Guest for Legacy {
        type Parser = LegacyParser;

        fn describe() -> Info {
            Info {
                name: "legacy".into(),
                display_name: "Legacy".into(),
                program: "legacy-cli-that-does-not-exist".into(),
                version_args: vec!["--version".into()],
                state_dir: None,
                managed_config: vec![],
                secret_env: vec!["LEGACY_TOKEN".into()],
                login_files: vec![],
                models: vec![],
                default_model: None,
                efforts: vec![],
                default_effort: None,
                brief: BriefDelivery::Stdin,
                resume: ResumeScope::Anywhere,
            }
        }

        fn parse_version(output: String) -> Option<String> {
            output.split_whitespace().last().map(str::to_owned)
        }

        fn start_command(turn: Turn) -> Command {
            Command {
                args: vec!["--dir".into(), turn.workdir],
                set_env: vec![],
                remove_env: vec![],
                brief: BriefDelivery::Stdin,
            }
        }
    }

    impl GuestParser for LegacyParser {
        fn new() -> Self {
            Self {
                lines: Cell::new(0),
            }
        }

        fn feed(&self, lines: Vec<String>) -> Vec<Event> {
            self.lines.set(self.lines.get() + lines.len());
            lines
                .iter()
                .map(|line| match type_of(line) {
                    Some(kind) => Event::Other(kind),
                    None => Event::Skipped(Skipped {
                        reason: SkipReason::Unknown,
                        kind: None,
                    }),
                })
                .collect()
        }

        fn finish(&self, exit_code: Option<i32>, _stderr_tail: String) -> Outcome {
            Outcome {
                final_message: Some(format!("{} lines, exit {exit_code:?}", self.lines.get())),
                session_id: None,
                is_error: exit_code != Some(0),
                error: None,
                usage: None,
            }
        }
    }

    /// The value of a line's `"type":"…"`, found without a JSON parser (the
    /// test lines are simple).
    fn type_of(line: &str) -> Option<String> {
        let rest = &line[line.find("\"type\":\"")? + 8..];
        Some(rest[..rest.find('"')?].to_owned())
    }

    export!(Legacy);
}
