//! `spinneret plugin new`: every template builds natively and passes its
//! own test; a reporter made from the template, built for wasm32-wasip2 in
//! a temporary directory and loaded by path, runs in a crawl.

use spinneret_tests::fixtures::maintenance_web;
use spinneret_tests::harness::Setup;
use spinneret_tests::server::TestWeb;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::spinneret;

/// Cargo, with a target directory shared by these tests (so the SDK's
/// dependencies compile once) and no debug information in the templates'
/// test builds: with it they took ~350 MB of a CI machine's disk, without
/// it ~220 MB, and a CI run once ran out of disk here.
fn cargo(dir: &Path, args: &[&str]) -> std::process::Output {
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/plugin-new-test");
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .env("CARGO_PROFILE_DEV_DEBUG", "false")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET")
        .output()
        .unwrap()
}

fn new_plugin(root: &Path, name: &str, kind: &str) -> PathBuf {
    let dir = root.join(name);
    let out = spinneret(&[
        "plugin",
        "new",
        name,
        "--kind",
        kind,
        "--dir",
        dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

#[test]
fn every_template_passes_its_own_test() {
    let tmp = tempfile::tempdir().unwrap();
    for kind in [
        "reporter",
        "detector",
        "fetch-hook",
        "parser",
        "search-engine",
        "collection-index",
    ] {
        let dir = new_plugin(tmp.path(), &format!("t-{kind}"), kind);
        let out = cargo(&dir, &["test", "--quiet"]);
        assert!(
            out.status.success(),
            "{kind}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // Every template's tests ran (the search engine's are three: its
        // query, its fixture page, its "no results").
        let expected = if kind == "search-engine" { 3 } else { 1 };
        assert!(
            String::from_utf8_lossy(&out.stdout).contains(&format!("{expected} passed; 0 failed")),
            "{kind}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

#[test]
fn a_plugin_from_the_template_runs_in_a_crawl() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = new_plugin(tmp.path(), "link-count", "reporter");
    let out = cargo(&dir, &["build", "--release", "--target", "wasm32-wasip2"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let wasm = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/plugin-new-test/wasm32-wasip2/release/link_count.wasm");
    let inspect = spinneret(&["plugin", "inspect", wasm.to_str().unwrap()]);
    let shown = String::from_utf8_lossy(&inspect.stdout);
    assert!(
        shown.contains("  world:   reporter\n  api:     0.5.0"),
        "{shown}"
    );

    // The template's README and description are examples: not packed
    // until the author says what the plugin does.
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/plugin-new-test");
    let pack = || {
        crate::common::command()
            .env("CARGO_TARGET_DIR", &target)
            .current_dir(tmp.path())
            .args(["plugin", "pack", dir.to_str().unwrap()])
            .output()
            .unwrap()
    };
    let refused = crate::common::expect_exit(&pack(), 2);
    assert_eq!(
        refused,
        format!(
            "spinneret: not packed: users read these before they install a plugin:\n  \
             {0}/README.md is still the template's: say what the plugin does and how to configure it, and delete the comment at its top\n  \
             {0}/plugin.toml's description is still the template's (\"A spinneret reporter plugin\"): say in a line what the plugin does\n",
            dir.display()
        )
    );
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    let start = readme.find("<!--").unwrap();
    let end = readme.find("-->").unwrap() + 3;
    let readme = format!(
        "{}Counts the links of each category.{}",
        &readme[..start],
        &readme[end..]
    );
    std::fs::write(dir.join("README.md"), readme).unwrap();
    let manifest = std::fs::read_to_string(dir.join("plugin.toml")).unwrap();
    std::fs::write(
        dir.join("plugin.toml"),
        manifest.replace("A spinneret reporter plugin", "Counts links per category"),
    )
    .unwrap();
    // Now it packs; the world and API come from the component.
    let packed = crate::common::expect_exit(&pack(), 0);
    let bundle = spinneret_bundle::Bundle::read(&tmp.path().join("link-count-0.1.0.spkg"))
        .unwrap_or_else(|e| panic!("{e}\n{packed}"));
    assert_eq!(bundle.manifest.kind.as_deref(), Some("reporter"));
    assert_eq!(bundle.component, std::fs::read(&wasm).unwrap());
    assert!(bundle.readme.unwrap().contains("spinneret plugin pack ."));

    let web = TestWeb::start(maintenance_web());
    let text = format!(
        "[[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example:{{PORT}}/index.html\"\n\n\
         [[plugin]]\nname = \"link-count\"\nsource = \"{}\"\n[plugin.config]\nheading = \"Links\"\n",
        wasm.display()
    );
    let setup = Setup::new(&web, &text);
    let out = spinneret(&["-q", "crawl", setup.config_path.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(setup.path().join("reports/A/link_count.txt")).unwrap(),
        "Links (A)\navoided: 1\nblocked: 1\nbroken: 4\nmoved: 2\nnot checked: 2\nok: 9\n"
    );
}
