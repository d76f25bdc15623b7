//! `spinneret plugin new`: a plugin crate that builds and passes its own
//! test out of the box, one template per plugin kind the SDK supports.

use std::path::{Path, PathBuf};

/// The kinds a new plugin can be: (name, SDK feature, template, config example).
pub const KINDS: &[(&str, &str, &str, &str)] = &[
    (
        "reporter",
        "reporter",
        include_str!("../templates/reporter.rs"),
        "heading = \"Links by category\"",
    ),
    (
        "detector",
        "detector",
        include_str!("../templates/detector.rs"),
        "slower_than_ms = 2000",
    ),
    (
        "fetch-hook",
        "fetch-hook",
        include_str!("../templates/fetch-hook.rs"),
        "veto = [\"/calendar/\"]",
    ),
    (
        "parser",
        "parser",
        include_str!("../templates/parser.rs"),
        "",
    ),
    (
        "policy",
        "policy",
        include_str!("../templates/policy.rs"),
        "leaf_extensions = [\".php\"]",
    ),
    (
        "search-engine",
        "search-engine",
        include_str!("../templates/search-engine.rs"),
        "base = \"https://search.example/api\"",
    ),
    (
        "collection-index",
        "collection-index",
        include_str!("../templates/collection-index.rs"),
        "heading = \"My reading\"",
    ),
];

/// Files a kind's template adds beside `src/lib.rs`: (kind, path, contents).
/// A search engine's test reads a result page the way the engine sends it.
const EXTRA_FILES: &[(&str, &str, &str)] = &[(
    "search-engine",
    "fixtures/results.json",
    include_str!("../templates/fixtures/search-engine-results.json"),
)];

/// How the README says to try a plugin of each kind: (kind, text).
const TRY_IT: &[(&str, &str)] = &[
    (
        "collection-index",
        "To write the index of a WebSnatcher profile with it, add to the profile:

```toml
[index]
source = \"{dir}/target/wasm32-wasip2/release/{file}.wasm\"
[index.config]
{config_example}
```",
    ),
    (
    "search-engine",
    "To ask it once, and to use it in a WebSnatcher profile:

```sh
spinneret query {dir}/target/wasm32-wasip2/release/{file}.wasm --config '{\"base\": \"https://search.example/api\"}' some words
```

```toml
[[engine]]
name = \"{name}\"
source = \"{dir}/target/wasm32-wasip2/release/{file}.wasm\"
hosts = [\"search.example\"]
[engine.config]
{config_example}
```",
    ),
];

const TRY_IN_A_CRAWL: &str = "To run it in a crawl, add to the crawl configuration:

```toml
[[plugin]]
name = \"{name}\"
source = \"{dir}/target/wasm32-wasip2/release/{file}.wasm\"
# time = \"1s\"        # per call
# memory = \"64MiB\"
[plugin.config]
{config_example}
```";

/// Why a plugin could not be scaffolded.
#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    /// The name cannot be a crate name.
    #[error(
        "`{0}` cannot name a plugin: use lower-case letters, digits and `-`, starting with a letter"
    )]
    BadName(String),
    /// The kind is unknown.
    #[error(
        "unknown plugin kind `{0}`; the kinds are reporter, detector, fetch-hook, parser, policy, search-engine, collection-index"
    )]
    BadKind(String),
    /// The directory is in the way.
    #[error("{0} already exists; choose another name or --dir")]
    Exists(PathBuf),
    /// Writing failed.
    #[error("cannot write {0}: {1}")]
    Io(PathBuf, std::io::Error),
}

/// Where the SDK is for a new plugin: a path when this spinneret was built
/// from a source tree that still exists, else the published crate.
pub fn default_sdk() -> String {
    let tree = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sdk");
    match tree.canonicalize() {
        Ok(p) if p.join("Cargo.toml").exists() => format!("path = {:?}", p.display().to_string()),
        _ => format!("version = \"{}\"", env!("CARGO_PKG_VERSION")),
    }
}

/// Write a new plugin crate `name` of `kind` into `dir` (which must not
/// exist), depending on the SDK as `sdk` (a Cargo dependency spec such as
/// `path = "…"` or `version = "0.1"`). Returns the files written.
pub fn scaffold(
    name: &str,
    kind: &str,
    dir: &Path,
    sdk: &str,
) -> Result<Vec<PathBuf>, ScaffoldError> {
    if !super::manifest::valid_name(name) {
        return Err(ScaffoldError::BadName(name.to_string()));
    }
    let Some((kind, feature, template, example)) = KINDS.iter().find(|k| k.0 == kind) else {
        return Err(ScaffoldError::BadKind(kind.to_string()));
    };
    if dir.exists() {
        return Err(ScaffoldError::Exists(dir.to_path_buf()));
    }
    let file = name.replace('-', "_");
    let abs = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let try_it = TRY_IT
        .iter()
        .find(|t| t.0 == *kind)
        .map_or(TRY_IN_A_CRAWL, |t| t.1);
    let fill = |t: &str| {
        t.replace("{try_it}", try_it)
            .replace("{name}", name)
            .replace("{file}", &file)
            .replace("{kind}", kind)
            .replace("{feature}", feature)
            .replace("{sdk}", sdk)
            .replace("{dir}", &abs.display().to_string())
            .replace("{config_example}", example)
    };
    let files = [
        (
            "Cargo.toml",
            fill(include_str!("../templates/Cargo.toml.in")),
        ),
        ("README.md", fill(include_str!("../templates/README.md.in"))),
        (
            "plugin.toml",
            fill(include_str!("../templates/plugin.toml.in")),
        ),
        ("src/lib.rs", fill(template)),
        (".gitignore", "/target\n".to_string()),
    ];
    let extra = EXTRA_FILES
        .iter()
        .filter(|f| f.0 == *kind)
        .map(|f| (f.1, f.2.to_string()));
    let files = files.into_iter().chain(extra);
    let mut written = Vec::new();
    for (path, contents) in files {
        let p = dir.join(path);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| ScaffoldError::Io(parent.to_path_buf(), e))?;
        }
        std::fs::write(&p, contents).map_err(|e| ScaffoldError::Io(p.clone(), e))?;
        written.push(p);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_kinds_and_existing_directories_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        for bad in ["", "Foo", "1x", "a_b", "a-", "a b"] {
            assert!(matches!(
                scaffold(bad, "reporter", &dir.path().join("x"), "version = \"0.1\""),
                Err(ScaffoldError::BadName(_))
            ));
        }
        assert_eq!(
            scaffold("ok", "notifier", &dir.path().join("x"), "")
                .unwrap_err()
                .to_string(),
            "unknown plugin kind `notifier`; the kinds are reporter, detector, fetch-hook, parser, policy, search-engine, collection-index"
        );
        let files = scaffold(
            "link-count",
            "reporter",
            &dir.path().join("lc"),
            "version = \"0.1\"",
        )
        .unwrap();
        assert_eq!(files.len(), 5);
        let manifest = std::fs::read_to_string(dir.path().join("lc/plugin.toml")).unwrap();
        let manifest = crate::manifest::Manifest::parse(&manifest, "plugin.toml").unwrap();
        assert_eq!(
            (
                manifest.name.as_str(),
                manifest.version.to_string().as_str()
            ),
            ("link-count", "0.1.0")
        );
        let toml = std::fs::read_to_string(dir.path().join("lc/Cargo.toml")).unwrap();
        assert!(toml.contains("name = \"link-count\""));
        assert!(toml.contains("spinneret-sdk = { version = \"0.1\", features = [\"reporter\"] }"));
        let lib = std::fs::read_to_string(dir.path().join("lc/src/lib.rs")).unwrap();
        assert!(lib.contains("out.write(\"link_count.txt\""));
        assert!(matches!(
            scaffold("link-count", "reporter", &dir.path().join("lc"), ""),
            Err(ScaffoldError::Exists(_))
        ));
    }
}
