//! Sharing plugins: bundles (`.spkg`), their signatures, installing them
//! into the per-user plugin directory, and OCI registries.
//!
//! An author packs a plugin once (`pack`), signs it (`sign`) and publishes
//! the file or pushes it to a registry (`oci`). A user installs it
//! (`install`): the bundle is fetched, its component checked against the
//! manifest's sha256, its signature against the user's trust store, its API
//! version against this host, and the capabilities it asks for are shown
//! for consent before anything is written. A crawl configuration then names
//! it as `source = "NAME@^1.2"` (see [`home::PluginHome::resolve`]).

// Each dependency listed is used (tests' own are dev-dependencies).
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub mod archive;
pub mod error;
pub mod home;
pub mod manifest;
pub mod oci;
pub mod pack;
pub mod scaffold;
pub mod sign;

pub use archive::Bundle;
pub use error::BundleError;

use home::{InstallRecord, Installed, PluginHome};
use sign::Signer;
use spinneret_plugin_host::api::ApiVersion;
use spinneret_plugin_host::engine::PluginEngine;
use spinneret_plugin_host::identify::identify;

/// The largest bundle fetched over HTTP.
const MAX_DOWNLOAD: u64 = archive::MAX_SPKG;

/// Fetch the bundle at `source`: a `.spkg` path, an `http(s)://` URL or an
/// `oci://` reference. Nothing is written anywhere.
pub fn fetch(source: &str) -> Result<Bundle, BundleError> {
    if source.starts_with("oci://") {
        return oci::pull(&oci::OciRef::parse(source)?);
    }
    if source.starts_with("http://") || source.starts_with("https://") {
        let bytes = download(source)?;
        return Bundle::from_spkg(&bytes, source);
    }
    Bundle::read(std::path::Path::new(source))
}

/// A runtime for one network exchange (a download, a registry push or pull).
fn runtime() -> Result<tokio::runtime::Runtime, BundleError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| BundleError::Io(format!("cannot start the network runtime: {e}")))
}

fn download(url: &str) -> Result<Vec<u8>, BundleError> {
    use futures_util::StreamExt;
    spinneret_core::tls::install_provider();
    runtime()?.block_on(async {
        let client = reqwest::Client::builder()
            .user_agent(concat!("spinneret/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(std::time::Duration::from_secs(10))
            .timeout(std::time::Duration::from_secs(300))
            .build()
            .map_err(|e| BundleError::Network(e.to_string()))?;
        let response = client
            .get(url)
            .send()
            .await
            .map_err(|e| BundleError::Network(format!("cannot fetch {url}: {e}")))?;
        if !response.status().is_success() {
            return Err(BundleError::Network(format!(
                "cannot fetch {url}: the server answered {}",
                response.status()
            )));
        }
        let mut body = Vec::new();
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk =
                chunk.map_err(|e| BundleError::Network(format!("cannot fetch {url}: {e}")))?;
            body.extend_from_slice(&chunk);
            if body.len() as u64 > MAX_DOWNLOAD {
                return Err(BundleError::Invalid(format!(
                    "{url} is larger than {} MiB; that is no plugin bundle",
                    MAX_DOWNLOAD >> 20
                )));
            }
        }
        Ok(body)
    })
}

/// Check everything that can be checked of `bundle` before it is installed:
/// the component is the one the manifest names (sha256), so is the README,
/// the signature is by a trusted key (unless unsigned bundles are allowed),
/// and the component implements the manifest's world for an API this host
/// runs.
pub fn verify(
    engine: &PluginEngine,
    home: &PluginHome,
    bundle: &Bundle,
    allow_unsigned: bool,
) -> Result<Signer, BundleError> {
    let m = &bundle.manifest;
    let name = format!("{} {}", m.name, m.version);
    let expected = m.sha256.as_deref().ok_or_else(|| {
        BundleError::Refused(format!(
            "{name}: its manifest gives no sha256 for the component"
        ))
    })?;
    let actual = spinneret_core::digest::sha256_hex(&bundle.component);
    if actual != expected {
        return Err(BundleError::Refused(format!(
            "{name}: the component's sha256 is {actual}, but the manifest says {expected}; the bundle was tampered with or damaged — not installed"
        )));
    }
    match (&bundle.readme, &m.readme_sha256) {
        (Some(r), Some(h)) if &spinneret_core::digest::sha256_hex(r.as_bytes()) != h => {
            return Err(BundleError::Refused(format!(
                "{name}: the README's sha256 is not the manifest's; the bundle was tampered with or damaged — not installed"
            )));
        }
        (None, Some(_)) => {
            return Err(BundleError::Refused(format!(
                "{name}: the manifest gives a README sha256 but the bundle has no README; the bundle was tampered with or damaged — not installed"
            )));
        }
        (Some(_), None) => {
            return Err(BundleError::Refused(format!(
                "{name}: the bundle has a README its manifest gives no sha256 for; pack it again with `spinneret plugin pack` — not installed"
            )));
        }
        _ => {}
    }
    let signer = home.trust().check(bundle, allow_unsigned)?;
    let api = m.api.as_ref().ok_or_else(|| {
        BundleError::Invalid(format!("{name}: its manifest names no plugin API version"))
    })?;
    if !manifest::Manifest::api_compatible(api) {
        return Err(BundleError::Refused(format!(
            "{name} was built against plugin API {api}, but this spinneret runs {}; it needs a spinneret that runs {}.{}.x",
            ApiVersion::supported(),
            api.major,
            api.minor
        )));
    }
    let compiled = engine.compile(&bundle.component).map_err(|e| {
        BundleError::Invalid(format!(
            "{name}: its component is not a valid WebAssembly component: {e:#}"
        ))
    })?;
    let identity =
        identify(engine, &compiled).map_err(|e| BundleError::Refused(format!("{name}: {e}")))?;
    if Some(identity.kind.world()) != m.kind.as_deref()
        || (identity.api.0, identity.api.1) != (api.major, api.minor)
    {
        return Err(BundleError::Refused(format!(
            "{name}: the manifest says {} for API {api}, but the component implements {} for API {}.{}.{}",
            m.kind.as_deref().unwrap_or("no world"),
            identity.kind.world(),
            identity.api.0,
            identity.api.1,
            identity.api.2
        )));
    }
    Ok(signer)
}

/// How consent to a plugin's capabilities is given.
pub enum Consent {
    /// Given in advance (`--yes`).
    Given,
    /// Asked: the text is shown and the answer returned.
    Ask(fn(&str) -> Result<bool, BundleError>),
}

impl Consent {
    fn obtain(&self, text: &str) -> Result<(), BundleError> {
        let yes = match self {
            Consent::Given => true,
            Consent::Ask(ask) => ask(text)?,
        };
        if yes {
            Ok(())
        } else {
            Err(BundleError::Refused(
                "not installed: consent was not given".into(),
            ))
        }
    }
}

/// What `install` and `update` did.
#[derive(Debug)]
pub enum Outcome {
    /// Installed this version.
    Installed(Installed),
    /// This version was already installed; nothing changed.
    AlreadyInstalled(Installed),
    /// Nothing newer than the installed version was found (`update`).
    UpToDate(Installed),
}

fn describe(bundle: &Bundle, signer: &Signer) -> String {
    let m = &bundle.manifest;
    let mut text = format!(
        "{} {} ({} plugin, API {}), {signer}\n",
        m.name,
        m.version,
        m.kind.as_deref().unwrap_or("?"),
        m.api.as_ref().map(ToString::to_string).unwrap_or_default()
    );
    if !m.description.is_empty() {
        text.push_str(&format!("  {}\n", m.description));
    }
    if !m.authors.is_empty() {
        text.push_str(&format!("  by {}\n", m.authors.join(", ")));
    }
    text
}

/// Install the bundle at `source`: fetch, verify, ask for consent to its
/// capabilities, write it atomically.
pub fn install(
    engine: &PluginEngine,
    home: &PluginHome,
    source: &str,
    allow_unsigned: bool,
    consent: &Consent,
) -> Result<Outcome, BundleError> {
    let bundle = fetch(source)?;
    // A file is recorded by its absolute path, so that `update` finds it
    // again from any directory.
    let recorded = if source.contains("://") {
        source.to_string()
    } else {
        std::path::absolute(source)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| source.to_string())
    };
    install_bundle(
        engine,
        home,
        &bundle,
        &recorded,
        allow_unsigned,
        consent,
        None,
    )
}

fn install_bundle(
    engine: &PluginEngine,
    home: &PluginHome,
    bundle: &Bundle,
    source: &str,
    allow_unsigned: bool,
    consent: &Consent,
    previous: Option<&Installed>,
) -> Result<Outcome, BundleError> {
    let signer = verify(engine, home, bundle, allow_unsigned)?;
    let m = &bundle.manifest;
    if let Some(existing) = home
        .versions(&m.name)
        .into_iter()
        .find(|v| v.manifest.version == m.version)
    {
        // Refused before asking: consent to something not installable is noise.
        if existing.manifest.sha256 != m.sha256 {
            return Err(BundleError::Refused(format!(
                "{} {} is already installed with a different component; `spinneret plugin remove {}@{}` first",
                m.name, m.version, m.name, m.version
            )));
        }
        return Ok(Outcome::AlreadyInstalled(existing));
    }
    let mut text = describe(bundle, &signer);
    match previous {
        None => {
            text.push_str("  it asks for:\n");
            for line in m.capabilities.describe() {
                text.push_str(&format!("    {line}\n"));
            }
            consent.obtain(&text)?;
        }
        Some(prev) => {
            let more = prev.manifest.capabilities.beyond(&m.capabilities);
            if !more.is_empty() {
                text.push_str(&format!(
                    "  it asks for more than {} did:\n",
                    prev.manifest.version
                ));
                for line in more {
                    text.push_str(&format!("    {line}\n"));
                }
                consent.obtain(&text)?;
            }
        }
    }
    let record = InstallRecord {
        source: source.to_string(),
        signer: signer.to_record(),
        installed_at: jiff::Timestamp::now().to_string(),
    };
    let (fresh, installed) = home.install(bundle, &record)?;
    Ok(if fresh {
        Outcome::Installed(installed)
    } else {
        Outcome::AlreadyInstalled(installed)
    })
}

/// Look for a newer version of `name` where its newest installed version
/// came from, and install it side by side; more capabilities than the
/// installed version asks for need consent again.
pub fn update(
    engine: &PluginEngine,
    home: &PluginHome,
    name: &str,
    allow_unsigned: bool,
    consent: &Consent,
) -> Result<Outcome, BundleError> {
    let current = home
        .versions(name)
        .into_iter()
        .next()
        .ok_or_else(|| BundleError::NotFound(format!("no plugin `{name}` is installed")))?;
    let bundle = fetch(&current.record.source)?;
    if bundle.manifest.name != name {
        return Err(BundleError::Refused(format!(
            "{} now holds the plugin `{}`, not `{name}`; not updated",
            current.record.source, bundle.manifest.name
        )));
    }
    if bundle.manifest.version <= current.manifest.version {
        return Ok(Outcome::UpToDate(current));
    }
    // An unsigned update needs --allow-unsigned again, whatever was installed.
    install_bundle(
        engine,
        home,
        &bundle,
        &current.record.source,
        allow_unsigned,
        consent,
        Some(&current),
    )
}
