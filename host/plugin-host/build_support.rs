// Shared by `host/plugin-host/build.rs` and `tests/build.rs` (included by both): building
// a workspace crate into a `wasm32-wasip2` component.

/// The target the plugin components are built for.
const WASM_TARGET: &str = "wasm32-wasip2";

/// Make sure the toolchain building us has the standard library for
/// [`WASM_TARGET`]. rustup installs a `rust-toolchain.toml`'s targets only
/// when it installs the toolchain itself, so on a machine that already had
/// stable the target is missing: ask rustup to add it (once, under a lock, as
/// the host's and the tests' build scripts may run at the same time), and
/// where there is no rustup, stop with what to do instead.
fn ensure_wasm_target(target_dir: &std::path::Path) {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let installed = || -> Option<std::path::PathBuf> {
        let out = std::process::Command::new(&rustc)
            .args(["--print", "sysroot"])
            .output()
            .ok()?;
        let sysroot = std::path::PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
        Some(sysroot.join("lib").join("rustlib").join(WASM_TARGET))
    };
    let has_target = || installed().is_some_and(|dir| dir.join("lib").is_dir());
    if has_target() {
        return;
    }
    std::fs::create_dir_all(target_dir).expect("create the plugin target directory");
    let lock = std::fs::File::create(target_dir.join(".wasm-target.lock"))
        .expect("create the lock file for adding the wasm target");
    lock.lock().expect("lock the file for adding the wasm target");
    if has_target() {
        return;
    }
    let toolchain = std::env::var("RUSTUP_TOOLCHAIN").ok();
    let mut rustup = std::process::Command::new("rustup");
    rustup.args(["target", "add", WASM_TARGET]);
    if let Some(toolchain) = &toolchain {
        rustup.args(["--toolchain", toolchain]);
    }
    let location = installed()
        .map(|dir| dir.display().to_string())
        .unwrap_or_else(|| format!("the sysroot of `{rustc}`"));
    match rustup.status() {
        // Said once it is true: cargo shows a build script's warnings only
        // when the script ends, and again on every build that reuses its
        // output, where "adding it" would read as if it were still missing.
        Ok(status) if status.success() && has_target() => println!(
            "cargo:warning=the {WASM_TARGET} target was missing from this toolchain and was added with `rustup target add` (the built-in plugins are built for it)"
        ),
        Ok(status) => panic!(
            "`rustup target add {WASM_TARGET}` failed ({status}); the built-in plugins need the \
             {WASM_TARGET} standard library ({location}). Run `rustup target add {WASM_TARGET}` \
             yourself and see what it says (a network problem, an offline rustup)."
        ),
        Err(e) => panic!(
            "the built-in plugins are built for {WASM_TARGET}, whose standard library is not \
             installed ({location} is missing), and rustup could not be run to add it ({e}). \
             Install Rust with rustup (https://rustup.rs) or add your distribution's \
             {WASM_TARGET} standard library package for this rustc, then build again."
        ),
    }
}

/// Build the workspace package `name` for wasm32-wasip2 into `target_dir`
/// (stripped, no debug info) and return the component's path.
fn build_component(name: &str, target_dir: &std::path::Path) -> std::path::PathBuf {
    ensure_wasm_target(target_dir);
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = std::process::Command::new(cargo)
        .args(["build", "--release", "--target", WASM_TARGET, "-p", name, "--target-dir"])
        .arg(target_dir)
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET")
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .env("CARGO_PROFILE_RELEASE_STRIP", "true")
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "3")
        // One unit, optimised across crates: the report plugins' formatting
        // and the canonical ABI glue are inlined into each other.
        .env("CARGO_PROFILE_RELEASE_LTO", "true")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "1")
        .status()
        .expect("run cargo to build a plugin component");
    assert!(
        status.success(),
        "building `{name}` for {WASM_TARGET} failed (see the compiler's messages above)"
    );
    target_dir
        .join(WASM_TARGET)
        .join("release")
        .join(format!("{}.wasm", name.replace('-', "_")))
}
