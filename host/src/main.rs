//! The `cinch` binary: everything it does is in the library's `cli`.

fn main() -> std::process::ExitCode {
    cinch::cli::main()
}
