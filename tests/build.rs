//! Builds the test plugins (`tests/plugins/*`) for wasm32-wasip2 and tells the
//! tests where the components are (`env!("TEST_PLUGIN_<NAME>")`).

use std::path::PathBuf;

include!("../host/plugin-host/build_support.rs");

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest.parent().unwrap().to_path_buf();
    for dir in [
        "tests/plugins",
        "sdk",
        "wit",
        "host/plugin-host/build_support.rs",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
    }
    let target_dir = root.join("target").join("test-plugin-wasm");
    for name in [
        "hostile-reporter",
        "hostile-detector",
        "future-api",
        "recording-policy",
        "request-hook",
        "legacy-api",
        "legacy-api-0-3",
        "legacy-api-0-4",
    ] {
        let file = build_component(name, &target_dir);
        let var = format!("TEST_PLUGIN_{}", name.replace('-', "_").to_uppercase());
        println!("cargo:rustc-env={var}={}", file.display());
    }
}
