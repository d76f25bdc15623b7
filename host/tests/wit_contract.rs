//! The WIT package in `wit/` is the plugin authors' contract: it must parse,
//! carry the API version the host implements, and define every plugin world.

use std::path::Path;

#[test]
fn the_wit_package_parses_and_defines_every_world() {
    let mut resolve = wit_parser::Resolve::default();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit");
    let (pkg, _files) = resolve.push_dir(&dir).expect("wit/ parses");
    let package = &resolve.packages[pkg];
    assert_eq!(package.name.to_string(), "spinneret:plugin@0.2.0");
    let mut worlds: Vec<&str> = package.worlds.keys().map(String::as_str).collect();
    worlds.sort();
    assert_eq!(
        worlds,
        vec![
            "change-detector",
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
