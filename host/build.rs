//! Builds the built-in plugins (each crate under `plugins/`) for
//! `wasm32-wasip2` and embeds the components in the binary, so a user gets
//! them with no extra step.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest.parent().unwrap().to_path_buf();
    for dir in ["plugins", "sdk", "wit"] {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let target_dir = root.join("target").join("plugin-wasm");
    let mut plugins: Vec<(String, PathBuf)> = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("plugins"))
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    dirs.sort();
    for dir in dirs {
        let manifest = dir.join("Cargo.toml");
        if !manifest.exists() {
            continue;
        }
        let name = package_name(&manifest);
        build_plugin(&name, &target_dir);
        let file = target_dir
            .join("wasm32-wasip2")
            .join("release")
            .join(format!("{}.wasm", name.replace('-', "_")));
        plugins.push((name, file));
    }
    let mut code = String::from(
        "/// The built-in plugins: name and component bytes.\npub static BUILTIN: &[(&str, &[u8])] = &[\n",
    );
    for (name, file) in &plugins {
        code.push_str(&format!(
            "    ({name:?}, include_bytes!({:?})),\n",
            file.display().to_string()
        ));
    }
    code.push_str("];\n");
    std::fs::write(out.join("builtin_plugins.rs"), code).unwrap();
}

fn package_name(manifest: &Path) -> String {
    let text = std::fs::read_to_string(manifest).unwrap();
    text.lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("name = ")
                .map(|v| v.trim_matches('"').to_string())
        })
        .unwrap_or_else(|| panic!("{} has no package name", manifest.display()))
}

fn build_plugin(name: &str, target_dir: &Path) {
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
        .arg(target_dir)
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET")
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .env("CARGO_PROFILE_RELEASE_STRIP", "true")
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "s")
        .status()
        .expect("run cargo to build the built-in plugins");
    assert!(
        status.success(),
        "building the built-in plugin `{name}` for wasm32-wasip2 failed; \
         if the target is missing, run `rustup target add wasm32-wasip2`"
    );
}
