//! The WIT package in `wit/since_v*/` is the plugin authors' contract: the
//! newest must parse, carry the API version the host calls its latest, and
//! define every plugin world; the SDK must build against it.

use spinneret_plugin_host::api::ApiVersion;
use std::path::Path;

#[test]
fn the_wit_package_parses_and_defines_every_world() {
    let mut resolve = wit_parser::Resolve::default();
    let latest = ApiVersion::LATEST;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../wit")
        .join(latest.folder());
    let (pkg, _files) = resolve.push_dir(&dir).expect("wit/ parses");
    let package = &resolve.packages[pkg];
    assert_eq!(
        package.name.to_string(),
        format!("spinneret:plugin@{latest}")
    );
    let mut worlds: Vec<&str> = package.worlds.keys().map(String::as_str).collect();
    worlds.sort();
    assert_eq!(
        worlds,
        vec![
            "change-detector",
            "collection-index",
            "fetch-hook",
            "host",
            "parser",
            "policy",
            "reporter",
            "search-engine"
        ]
    );
    // Every item of the contract is documented.
    for (_, iface) in &resolve.interfaces {
        let name = iface.name.clone().unwrap_or_default();
        assert!(
            iface.docs.contents.is_some(),
            "interface {name} has no documentation"
        );
        for (fname, f) in &iface.functions {
            assert!(
                f.docs.contents.is_some(),
                "{name}.{fname} has no documentation"
            );
        }
    }
    for (_, ty) in &resolve.types {
        // `use` brings a type into another interface as an alias; the definition carries the docs.
        let alias = matches!(
            ty.kind,
            wit_parser::TypeDefKind::Type(wit_parser::Type::Id(_))
        );
        if let (Some(tname), false) = (&ty.name, alias) {
            assert!(
                ty.docs.contents.is_some(),
                "type {tname} has no documentation"
            );
            use wit_parser::TypeDefKind;
            let members: Vec<(&str, bool)> = match &ty.kind {
                TypeDefKind::Record(r) => r
                    .fields
                    .iter()
                    .map(|f| (f.name.as_str(), f.docs.contents.is_some()))
                    .collect(),
                TypeDefKind::Enum(e) => e
                    .cases
                    .iter()
                    .map(|c| (c.name.as_str(), c.docs.contents.is_some()))
                    .collect(),
                TypeDefKind::Variant(v) => v
                    .cases
                    .iter()
                    .map(|c| (c.name.as_str(), c.docs.contents.is_some()))
                    .collect(),
                TypeDefKind::Flags(f) => f
                    .flags
                    .iter()
                    .map(|c| (c.name.as_str(), c.docs.contents.is_some()))
                    .collect(),
                _ => Vec::new(),
            };
            for (member, documented) in members {
                assert!(documented, "{tname}.{member} has no documentation");
            }
        }
    }
}

/// The SDK names the API version where a macro needs it written out (its
/// `API_VERSION`, the `with:` keys of its bindings, the WIT folder it reads):
/// each mention must be the host's newest version, so that adding a version
/// (see `wit/README.md`) cannot leave the SDK behind.
#[test]
fn the_sdk_builds_against_the_newest_api() {
    let latest = ApiVersion::LATEST;
    let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sdk/src");
    let lib = std::fs::read_to_string(sdk.join("lib.rs")).unwrap();
    let bindings = std::fs::read_to_string(sdk.join("bindings.rs")).unwrap();
    assert!(
        lib.contains(&format!("pub const API_VERSION: &str = \"{latest}\";")),
        "sdk/src/lib.rs: API_VERSION is not {latest}"
    );
    let folder = format!("path: \"../wit/{}\"", latest.folder());
    for (file, text) in [("lib.rs", &lib), ("bindings.rs", &bindings)] {
        for line in text.lines().filter(|l| l.trim_start().starts_with("path:")) {
            assert_eq!(line.trim(), format!("{folder},"), "sdk/src/{file}");
        }
    }
    let keys: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.trim().strip_prefix("\"spinneret:plugin/"))
        .collect();
    assert_eq!(keys.len(), 5, "{keys:?}");
    for key in keys {
        assert!(
            key.split('"')
                .next()
                .unwrap()
                .ends_with(&format!("@{latest}")),
            "sdk/src/lib.rs: the `with:` key spinneret:plugin/{key} is not at {latest}"
        );
    }
}
