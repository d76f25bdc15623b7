//! The `spinneret` binary.

fn main() -> std::process::ExitCode {
    spinneret::cli::main()
}
