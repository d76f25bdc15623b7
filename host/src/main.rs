//! The `spinneret` binary.

/// mimalloc: the crawl allocates many small, short-lived buffers across threads.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    spinneret::cli::main()
}
