fn main() -> std::process::ExitCode {
    cinch::cli::main()
}
