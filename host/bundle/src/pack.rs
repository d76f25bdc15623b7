//! `plugin pack`: a plugin crate's directory (or a built component with a
//! `plugin.toml` beside it) into a bundle. The component's own exports are
//! the authority on its world and API version: a manifest that says
//! otherwise is refused, one that says nothing gets them filled in.

use super::archive::Bundle;
use super::manifest::{COMPONENT_FILE, Manifest};
use crate::BundleError;
use spinneret_core::digest::sha256_hex;
use spinneret_plugin_host::engine::PluginEngine;
use spinneret_plugin_host::identify::declared;
use std::path::{Path, PathBuf};

/// The line of the README `plugin new` writes that says it is the
/// template's (pack refuses a README that still has it).
pub const TEMPLATE_README_MARK: &str = "spinneret plugin new: this README is the template's.";

/// Where `cargo build --release --target wasm32-wasip2` puts the component
/// of a plugin crate named `name` in `dir`: under `CARGO_TARGET_DIR` when
/// it is set (as cargo itself does), else under `dir/target`.
fn default_component(dir: &Path, name: &str) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .filter(|t| !t.is_empty())
        .map_or_else(|| dir.join("target"), |t| dir.join(t));
    target
        .join("wasm32-wasip2/release")
        .join(format!("{}.wasm", name.replace('-', "_")))
}

/// Make a bundle from `input`: a directory with `plugin.toml` (and
/// `README.md`), or a `.wasm` file with `plugin.toml` beside it.
pub fn pack(engine: &PluginEngine, input: &Path) -> Result<Bundle, BundleError> {
    let (dir, wasm) = if input.is_dir() {
        (input.to_path_buf(), None)
    } else if input.extension().is_some_and(|e| e == "wasm") {
        let dir = input
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        (dir.to_path_buf(), Some(input.to_path_buf()))
    } else {
        return Err(BundleError::Invalid(format!(
            "{} is neither a plugin directory nor a .wasm component",
            input.display()
        )));
    };
    let manifest_path = dir.join("plugin.toml");
    let text = std::fs::read_to_string(&manifest_path).map_err(|e| {
        BundleError::Io(format!(
            "cannot read {}: {e}\n  a plugin to pack needs a manifest, e.g.\n    schema = 1\n    name = \"my-plugin\"\n    version = \"0.1.0\"\n    description = \"What it does\"\n    license = \"MIT\"\n  (`spinneret plugin new` writes one)",
            manifest_path.display()
        ))
    })?;
    let mut manifest = Manifest::parse(&text, &manifest_path.display().to_string())?;
    let component_path = match (wasm, &manifest.component) {
        (Some(w), _) => w,
        (None, Some(c)) => dir.join(c),
        (None, None) => default_component(&dir, &manifest.name),
    };
    let component = std::fs::read(&component_path).map_err(|e| {
        BundleError::Io(format!(
            "cannot read the component {}: {e}; build it first (cargo build --release --target wasm32-wasip2) or name it with `component = \"PATH\"` in plugin.toml",
            component_path.display()
        ))
    })?;
    let compiled = engine.compile(&component).map_err(|e| {
        BundleError::Invalid(format!(
            "{} is not a WebAssembly component: {e:#}",
            component_path.display()
        ))
    })?;
    let identity = declared(engine, &compiled)
        .map_err(|e| BundleError::Invalid(format!("{}: {e}", component_path.display())))?;
    let world = identity.kind.world();
    let api = semver::Version::new(identity.api.0, identity.api.1, identity.api.2);
    if let Some(k) = &manifest.kind
        && k != world
    {
        return Err(BundleError::Invalid(format!(
            "{} says kind = \"{k}\", but the component implements the {world} world; fix the manifest",
            manifest_path.display()
        )));
    }
    if let Some(a) = &manifest.api
        && (a.major, a.minor) != (api.major, api.minor)
    {
        return Err(BundleError::Invalid(format!(
            "{} says api = \"{a}\", but the component was built against plugin API {api}; fix the manifest or rebuild",
            manifest_path.display()
        )));
    }
    manifest.kind = Some(world.to_string());
    manifest.api = Some(api);
    manifest.component = Some(COMPONENT_FILE.to_string());
    manifest.sha256 = Some(sha256_hex(&component));
    let readme = match std::fs::read_to_string(dir.join("README.md")) {
        Ok(r) => Some(r),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(BundleError::Io(format!(
                "cannot read {}: {e}",
                dir.join("README.md").display()
            )));
        }
    };
    // What `plugin new` wrote as an example is not for users to read.
    let mut template = Vec::new();
    if readme
        .as_deref()
        .is_some_and(|r| r.contains(TEMPLATE_README_MARK))
    {
        template.push(format!(
            "{} is still the template's: say what the plugin does and how to configure it, and delete the comment at its top",
            dir.join("README.md").display()
        ));
    }
    let d = &manifest.description;
    if d.starts_with("A spinneret ") && d.ends_with(" plugin") && d.split_whitespace().count() == 4
    {
        template.push(format!(
            "{}'s description is still the template's (\"{}\"): say in a line what the plugin does",
            manifest_path.display(),
            manifest.description
        ));
    }
    if !template.is_empty() {
        return Err(BundleError::Invalid(format!(
            "not packed: users read these before they install a plugin:\n  {}",
            template.join("\n  ")
        )));
    }
    manifest.readme_sha256 = readme.as_deref().map(|r| sha256_hex(r.as_bytes()));
    Ok(Bundle::new(manifest, component, readme, None))
}
