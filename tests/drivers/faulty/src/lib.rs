//! A driver that fails on request, to prove the host survives its drivers.
//! A line `{"type":"panic"}` panics, `{"type":"loop"}` never returns and
//! `{"type":"alloc"}` allocates without bound; other lines are fine.

use cinch_driver_sdk::{
    BriefDelivery, Command, Driver, Event, Info, Outcome, Parser, ResumeScope, Turn, Value,
    export_driver, json::kind,
};

/// The faulty driver.
pub struct Faulty;

/// Its parser.
#[derive(Default)]
pub struct FaultyParser;

impl Driver for Faulty {
    type Parser = FaultyParser;

    fn info() -> Info {
        Info {
            name: "faulty".into(),
            display_name: "Faulty".into(),
            program: "faulty-cli-that-does-not-exist".into(),
            version_args: vec!["--version".into()],
            state_dir: None,
            managed_config: vec![],
            // A credential to find, so that a turn of it can start.
            secret_env: vec!["FAULTY_TOKEN".into()],
            login_files: vec![],
            models: vec![],
            default_model: None,
            efforts: vec![],
            default_effort: None,
            brief: BriefDelivery::Stdin,
            resume: ResumeScope::Anywhere,
            harnesses: vec![],
        }
    }

    fn command(_turn: &Turn) -> Command {
        Command {
            args: vec![],
            set_env: vec![],
            remove_env: vec![],
            brief: BriefDelivery::Stdin,
        }
    }
}

impl Parser for FaultyParser {
    fn event(&mut self, value: &Value, out: &mut Vec<Event>) {
        match kind(value) {
            Some("panic") => panic!("the faulty driver was told to panic"),
            Some("loop") => {
                let mut spins: u64 = 0;
                loop {
                    spins = std::hint::black_box(spins.wrapping_add(1));
                }
            }
            Some("alloc") => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(vec![1; 1 << 20]);
                    std::hint::black_box(&hoard);
                }
            }
            other => out.push(Event::Other(other.unwrap_or("none").to_owned())),
        }
    }

    fn finish(&mut self, _exit_code: Option<i32>, _stderr_tail: &str) -> Outcome {
        Outcome {
            final_message: Some("fine".into()),
            ..Outcome::default()
        }
    }
}

export_driver!(Faulty);
