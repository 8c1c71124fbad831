//! A conversation driver of contract 0.2.0, built from the frozen WIT without
//! the SDK (the SDK exports the newest contract): it proves the host keeps
//! linking 0.2.0 now that 0.3.0 is out. It opens with `hello <brief>`,
//! answers each line with `ack <n>`, is done at a line of type `end`, and
//! stops with `bye`.

#[cfg(target_arch = "wasm32")]
mod component {
    use std::cell::{Cell, RefCell};

    wit_bindgen::generate!({ world: "harness-driver", path: "../../../wit/0.2.0" });

    use cinch::driver::types::{
        BriefDelivery, Command, Event, Fed, Info, Outcome, ResumeScope, Turn,
    };
    use exports::cinch::driver::driver::{Guest, GuestParser};

    struct Conversant;

    struct ConversantParser {
        brief: RefCell<String>,
        lines: Cell<usize>,
        done: Cell<bool>,
    }

    impl Guest for Conversant {
        type Parser = ConversantParser;

        fn describe() -> Info {
            Info {
                name: "conversant".into(),
                display_name: "Conversant".into(),
                program: "conversant-cli-that-does-not-exist".into(),
                version_args: vec!["--version".into()],
                state_dir: None,
                managed_config: vec![],
                secret_env: vec!["CONVERSANT_TOKEN".into()],
                login_files: vec![],
                models: vec![],
                default_model: None,
                efforts: vec![],
                default_effort: None,
                brief: BriefDelivery::Conversation,
                resume: ResumeScope::Anywhere,
                harnesses: vec![],
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
                brief: BriefDelivery::Conversation,
            }
        }
    }

    impl GuestParser for ConversantParser {
        fn new(turn: Turn) -> Self {
            Self {
                brief: RefCell::new(turn.brief),
                lines: Cell::new(0),
                done: Cell::new(false),
            }
        }

        fn opening(&self) -> Vec<String> {
            vec![format!("hello {}", self.brief.borrow())]
        }

        fn feed(&self, lines: Vec<String>) -> Fed {
            let mut events = Vec::new();
            let mut replies = Vec::new();
            for line in &lines {
                self.lines.set(self.lines.get() + 1);
                replies.push(format!("ack {}", self.lines.get()));
                if line.contains("\"type\":\"end\"") {
                    self.done.set(true);
                }
                events.push(Event::Other("line".into()));
            }
            Fed {
                events,
                replies,
                done: self.done.get(),
            }
        }

        fn stop(&self) -> Vec<String> {
            vec!["bye".into()]
        }

        fn finish(&self, exit_code: Option<i32>, _stderr_tail: String) -> Outcome {
            Outcome {
                final_message: Some(format!("{} lines, exit {exit_code:?}", self.lines.get())),
                session_id: None,
                is_error: false,
                error: None,
                usage: None,
            }
        }
    }

    export!(Conversant);
}
