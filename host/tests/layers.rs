//! The house's rule: dependencies point down. Cargo already refuses a
//! cycle between crates; this checks that each layered crate depends only
//! on the workspace crates below it, and, inside the `spinneret` crate, that
//! the app layer does not reach up into the command line.

use std::path::{Path, PathBuf};

fn host() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The workspace crates `manifest` depends on (normal and build dependencies).
fn workspace_dependencies(manifest: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let doc: toml::Table = toml::from_str(&text).unwrap();
    ["dependencies", "build-dependencies"]
        .iter()
        .filter_map(|k| doc.get(*k).and_then(|v| v.as_table()))
        .flat_map(|t| t.keys().cloned())
        .filter(|name| name.starts_with("spinneret"))
        .collect()
}

#[test]
fn each_layer_depends_only_on_the_layers_below() {
    const CORE: &str = "spinneret-core";
    const STORE: &str = "spinneret-store";
    const NET: &str = "spinneret-net";
    const PLUGIN_HOST: &str = "spinneret-plugin-host";
    const CRAWL: &str = "spinneret-crawl";
    const BUNDLE: &str = "spinneret-bundle";
    const CONFIG: &str = "spinneret-config";
    let layers: [(&str, &[&str]); 12] = [
        ("core", &[]),
        ("store", &[CORE]),
        ("net", &[CORE]),
        ("plugin-host", &[CORE]),
        ("crawl", &[CORE, STORE, NET, PLUGIN_HOST]),
        ("bundle", &[CORE, PLUGIN_HOST]),
        ("config", &[CORE, STORE, NET, PLUGIN_HOST, CRAWL, BUNDLE]),
        ("report", &[CORE, STORE, PLUGIN_HOST, CRAWL, CONFIG]),
        ("worm", &[CORE, STORE, CRAWL, CONFIG]),
        ("library", &[CORE, STORE, CONFIG]),
        (
            "collect",
            &[
                CORE,
                STORE,
                NET,
                PLUGIN_HOST,
                CRAWL,
                CONFIG,
                "spinneret-report",
            ],
        ),
        (
            "serve",
            &[CORE, STORE, CONFIG, "spinneret-library", "spinneret-worm"],
        ),
    ];
    for (dir, allowed) in layers {
        let manifest = host().join(dir).join("Cargo.toml");
        for dep in workspace_dependencies(&manifest) {
            assert!(
                allowed.contains(&dep.as_str()),
                "{} depends on {dep}; it may depend only on {allowed:?}",
                manifest.display()
            );
        }
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every `crate::` path in the Rust files under `dir` (file, line, path).
fn crate_paths(dir: &Path) -> Vec<(PathBuf, usize, String)> {
    let mut files = Vec::new();
    rust_files(dir, &mut files);
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let mut rest = code;
            while let Some(at) = rest.find("crate::") {
                rest = &rest[at + "crate::".len()..];
                let path = rest.split([';', ' ', ',', '(']).next().unwrap_or(rest);
                found.push((file.clone(), i + 1, path.to_string()));
            }
        }
    }
    found
}

#[test]
fn the_app_layer_does_not_reach_up_into_the_command_line() {
    let paths = crate_paths(&host().join("src/app"));
    assert!(!paths.is_empty());
    for (file, line, path) in paths {
        assert!(
            !path.starts_with("cli"),
            "{}:{line}: the app layer imports `crate::{path}`; the command line calls the app, not the other way round",
            file.display()
        );
    }
}
