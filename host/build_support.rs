// Shared by `host/build.rs` and `tests/build.rs` (included by both): building
// a workspace crate into a `wasm32-wasip2` component.

/// Build the workspace package `name` for wasm32-wasip2 into `target_dir`
/// (stripped, no debug info) and return the component's path.
fn build_component(name: &str, target_dir: &std::path::Path) -> std::path::PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = std::process::Command::new(cargo)
        .args(["build", "--release", "--target", "wasm32-wasip2", "-p", name, "--target-dir"])
        .arg(target_dir)
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET")
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .env("CARGO_PROFILE_RELEASE_STRIP", "true")
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "3")
        .status()
        .expect("run cargo to build a plugin component");
    assert!(
        status.success(),
        "building `{name}` for wasm32-wasip2 failed; if the target is missing, run `rustup target add wasm32-wasip2`"
    );
    target_dir
        .join("wasm32-wasip2")
        .join("release")
        .join(format!("{}.wasm", name.replace('-', "_")))
}
