//! Builds the test plugins (`tests/plugins/*`) for wasm32-wasip2 and tells the
//! tests where the components are (`env!("TEST_PLUGIN_<NAME>")`).

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest.parent().unwrap().to_path_buf();
    for dir in ["tests/plugins", "sdk", "wit"] {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
    }
    let target_dir = root.join("target").join("test-plugin-wasm");
    for name in ["hostile-reporter", "future-api"] {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args([
                "build",
                "--release",
                "--target",
                "wasm32-wasip2",
                "-p",
                name,
                "--target-dir",
            ])
            .arg(&target_dir)
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_BUILD_TARGET")
            .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
            .env("CARGO_PROFILE_RELEASE_STRIP", "true")
            .status()
            .expect("run cargo to build the test plugins");
        assert!(
            status.success(),
            "building the test plugin `{name}` for wasm32-wasip2 failed"
        );
        let file = target_dir
            .join("wasm32-wasip2/release")
            .join(format!("{}.wasm", name.replace('-', "_")));
        let var = format!("TEST_PLUGIN_{}", name.replace('-', "_").to_uppercase());
        println!("cargo:rustc-env={var}={}", file.display());
    }
}
