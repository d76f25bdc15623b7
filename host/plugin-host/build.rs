//! Builds the built-in plugins (each crate under `plugins/`) for
//! `wasm32-wasip2` and embeds the components in the binary, so a user gets
//! them with no extra step.

use std::path::{Path, PathBuf};

include!("build_support.rs");

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    // host/plugin-host -> the workspace root.
    let root = manifest
        .parent()
        .and_then(|p| p.parent())
        .unwrap()
        .to_path_buf();
    println!(
        "cargo:rerun-if-changed={}",
        manifest.join("build_support.rs").display()
    );
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
        let file = build_component(&name, &target_dir);
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
