//! The `cinch` command: running turns from a terminal, managing drivers and
//! harnesses, and `cinch serve`, which starts the server (`cinch_server`).

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
