//! The spinneret command line, built inside the test crate so that end-to-end
//! tests can run it as a process (and kill it) via `CARGO_BIN_EXE_spinneret-e2e`.
//! It is exactly `spinneret`'s `main`.

fn main() -> std::process::ExitCode {
    spinneret::cli::main()
}
