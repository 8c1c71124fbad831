//! `cinch-helper`: the small binary cinch starts for sandboxed commands and
//! turn supervisors (see `cinch_engine::helper`).

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    if args == [cinch_engine::helper::VERSION_FLAG] {
        println!("{}", cinch_engine::helper::VERSION);
        return ExitCode::SUCCESS;
    }
    match cinch_engine::helper::job(args.into_iter()) {
        Some(job) => cinch_engine::helper::run(job),
        None => {
            eprintln!(
                "cinch-helper is started by cinch itself: `cinch-helper sandboxed POLICY PROGRAM [ARGS…]` or `cinch-helper supervise TURN_DIR`"
            );
            ExitCode::from(2)
        }
    }
}
