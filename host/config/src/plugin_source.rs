//! Where a `[[plugin]]`'s component comes from: a built-in
//! (`builtin:NAME`), a plugin installed from a bundle (`NAME` or
//! `NAME@REQ`, newest matching version, its component checked against its
//! manifest), or a `.wasm` file; and what an installed plugin may have,
//! which its manifest bounds.

use spinneret_plugin_host::entry::PluginSource;
use std::path::PathBuf;

/// The source `raw` names (relative paths resolved by `rel`), with the
/// manifest of an installed plugin; or a message saying what it is not.
pub fn resolve(
    raw: &str,
    rel: &dyn Fn(&str) -> PathBuf,
) -> Result<(PluginSource, Option<spinneret_bundle::manifest::Manifest>), String> {
    if let Some(b) = raw.strip_prefix("builtin:") {
        spinneret_plugin_host::builtin::known(b)?;
        return Ok((PluginSource::Builtin(b.to_string()), None));
    }
    if is_installed_name(raw) && !rel(raw).is_file() {
        let i = spinneret_bundle::home::PluginHome::from_env()
            .and_then(|home| resolve_installed(&home, raw))
            .map_err(|e| match spinneret_plugin_host::builtin::builtin(raw) {
                Some(_) => format!("{e} (the built-in is `builtin:{raw}`)"),
                None => e.to_string(),
            })?;
        let file = i.dir.join(spinneret_bundle::manifest::COMPONENT_FILE);
        return Ok((PluginSource::File(file), Some(i.manifest)));
    }
    let path = rel(raw);
    if !path.is_file() {
        return Err(format!(
            "plugin source `{raw}` is neither `builtin:NAME`, an installed `NAME@VERSION-REQ` nor an existing .wasm file ({})",
            path.display()
        ));
    }
    Ok((PluginSource::File(path), None))
}

/// Whether a plugin source names an installed plugin (`NAME` or
/// `NAME@REQ`) rather than a file.
fn is_installed_name(source: &str) -> bool {
    let name = source.split_once('@').map_or(source, |(n, _)| n);
    spinneret_bundle::manifest::valid_name(name) && !source.ends_with(".wasm")
}

/// The installed plugin `NAME[@REQ]` (newest matching version), its
/// component checked against its manifest.
fn resolve_installed(
    home: &spinneret_bundle::home::PluginHome,
    source: &str,
) -> Result<spinneret_bundle::home::Installed, spinneret_bundle::BundleError> {
    let (name, req) = match source.split_once('@') {
        Some((n, r)) => (
            n,
            semver::VersionReq::parse(r).map_err(|e| {
                spinneret_bundle::BundleError::Invalid(format!(
                    "`{r}` is not a version requirement ({e}); write e.g. `{n}@^1.2`"
                ))
            })?,
        ),
        None => (source, semver::VersionReq::STAR),
    };
    let installed = home.resolve(name, &req)?;
    installed.check_component()?;
    Ok(installed)
}

/// What an installed plugin may have: no more than its manifest asks for
/// and no more than the configuration grants. Hosts granted but not asked
/// for are dropped with a warning (the plugin never said it needs them).
pub(super) fn intersect(
    plugin: &str,
    granted: spinneret_core::grants::Grants,
    asked: &spinneret_bundle::manifest::Capabilities,
) -> spinneret_core::grants::Grants {
    let (hosts, dropped): (Vec<String>, Vec<String>) = granted
        .hosts
        .into_iter()
        .partition(|h| asked.hosts.iter().any(|a| a.eq_ignore_ascii_case(h)));
    if !dropped.is_empty() {
        tracing::warn!(
            "plugin {plugin}: its manifest does not ask for {}; not granted",
            dropped.join(", ")
        );
    }
    spinneret_core::grants::Grants {
        memory: granted.memory.min(asked.memory_bytes()),
        time: granted.time.min(asked.time_per_call()),
        output: granted.output,
        output_per_item: granted.output_per_item,
        hosts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installed_plugins_get_what_both_manifest_and_entry_grant() {
        let granted = spinneret_core::grants::Grants {
            memory: 64 << 20,
            time: std::time::Duration::from_secs(1),
            output: 1 << 20,
            output_per_item: 0,
            hosts: vec!["api.example.org".into(), "other.example".into()],
        };
        let asked = spinneret_bundle::manifest::Capabilities {
            hosts: vec!["API.example.org".into(), "more.example".into()],
            memory: Some("16MiB".into()),
            time: Some("5s".into()),
        };
        let g = intersect("p", granted, &asked);
        assert_eq!(g.hosts, ["api.example.org"]);
        assert_eq!(g.memory, 16 << 20);
        assert_eq!(g.time, std::time::Duration::from_secs(1));
        assert_eq!(g.output, 1 << 20);
        assert!(is_installed_name("link-count@^1.2"));
        assert!(is_installed_name("link-count"));
        assert!(!is_installed_name("plugins/x.wasm"));
        assert!(!is_installed_name("x.wasm"));
    }
}
