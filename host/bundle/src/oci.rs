//! Bundles in OCI registries, laid out as the CNCF WebAssembly OCI artifact
//! (the layout wasm-pkg-tools' `wkg` reads and writes): a config blob of
//! media type `application/vnd.wasm.config.v0+json` describing the
//! component, and the component itself as the first layer, of media type
//! `application/wasm`. The bundle's manifest, signature and README travel
//! as further layers of their own media types, so a generic wasm tool sees a
//! plain component and spinneret sees the whole bundle.
//!
//! References are written `oci://REGISTRY/REPOSITORY:TAG`. A registry on a
//! loopback address (`localhost`, `127.0.0.1`, `[::1]`) is spoken to over
//! plain HTTP, any other over HTTPS. Credentials, when the registry needs
//! them, come from `SPINNERET_REGISTRY_USER` and
//! `SPINNERET_REGISTRY_PASSWORD`.

use super::archive::Bundle;
use crate::BundleError;
use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::manifest::OciImageManifest;
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use spinneret_plugin_host::engine::PluginEngine;
use std::collections::BTreeMap;

/// The config blob's media type (CNCF wasm OCI artifact, v0).
pub const WASM_CONFIG: &str = "application/vnd.wasm.config.v0+json";
/// The component layer's media type.
pub const WASM_LAYER: &str = "application/wasm";
/// The bundle manifest layer's media type.
pub const MANIFEST_LAYER: &str = "application/vnd.spinneret.plugin.manifest.v1+toml";
/// The signature layer's media type.
pub const SIGNATURE_LAYER: &str = "application/vnd.spinneret.plugin.signature.v1+minisign";
/// The README layer's media type.
pub const README_LAYER: &str = "text/markdown";

/// An `oci://` reference, parsed.
pub struct OciRef {
    reference: Reference,
    text: String,
}

impl OciRef {
    /// Parse `oci://REGISTRY/REPOSITORY[:TAG]` (the tag defaults to `latest`).
    pub fn parse(s: &str) -> Result<OciRef, BundleError> {
        let rest = s
            .strip_prefix("oci://")
            .ok_or_else(|| BundleError::Invalid(format!("`{s}` is not an oci:// reference")))?;
        if !rest.contains('/') {
            return Err(BundleError::Invalid(format!(
                "`{s}` names no repository; write oci://REGISTRY/REPOSITORY:TAG, e.g. oci://ghcr.io/someone/link-stats:1.2.0"
            )));
        }
        let reference: Reference = rest.parse().map_err(|e| {
            BundleError::Invalid(format!(
                "`{s}` is not a registry reference ({e}); write oci://REGISTRY/REPOSITORY:TAG"
            ))
        })?;
        Ok(OciRef {
            reference,
            text: s.to_string(),
        })
    }

    fn registry(&self) -> &str {
        self.reference.registry()
    }

    fn client(&self) -> Client {
        spinneret_core::tls::install_provider();
        let host = self
            .registry()
            .rsplit_once(':')
            .map_or(self.registry(), |(h, p)| {
                if p.chars().all(|c| c.is_ascii_digit()) {
                    h
                } else {
                    self.registry()
                }
            });
        let loopback = host == "localhost"
            || host == "[::1]"
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        let protocol = if loopback {
            ClientProtocol::HttpsExcept(vec![self.registry().to_string()])
        } else {
            ClientProtocol::Https
        };
        Client::new(ClientConfig {
            protocol,
            connect_timeout: Some(std::time::Duration::from_secs(10)),
            read_timeout: Some(std::time::Duration::from_secs(60)),
            ..Default::default()
        })
    }

    fn explain(&self, what: &str, e: oci_client::errors::OciDistributionError) -> BundleError {
        let mut msg = format!("{what} {}: {e}", self.text);
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            msg.push_str(&format!(": {s}"));
            source = s.source();
        }
        if msg.contains("error sending request") || msg.contains("Connection refused") {
            msg.push_str(&format!(
                "\n  the registry {} cannot be reached: is it running, and is the address right?",
                self.registry()
            ));
        }
        BundleError::Network(msg)
    }
}

impl std::fmt::Display for OciRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

fn auth() -> RegistryAuth {
    match (
        std::env::var("SPINNERET_REGISTRY_USER"),
        std::env::var("SPINNERET_REGISTRY_PASSWORD"),
    ) {
        (Ok(u), Ok(p)) => RegistryAuth::Basic(u, p),
        _ => RegistryAuth::Anonymous,
    }
}

/// The config blob: what the wasm OCI artifact layout says of a component.
fn wasm_config(engine: &PluginEngine, bundle: &Bundle, layer_digest: &str) -> serde_json::Value {
    let (exports, imports) = match engine.compile(&bundle.component) {
        Ok(c) => {
            let i = spinneret_plugin_host::identify::inspect(engine, &c);
            (i.exports.into_iter().map(|(n, _)| n).collect(), i.imports)
        }
        Err(_) => (Vec::new(), Vec::new()),
    };
    serde_json::json!({
        "created": jiff::Timestamp::now().to_string(),
        "author": bundle.manifest.authors.join(", "),
        "architecture": "wasm",
        "os": "wasip2",
        "layerDigests": [layer_digest],
        "component": { "exports": exports, "imports": imports },
    })
}

/// Publish `bundle` at `target`; returns the manifest's URL.
pub fn push(
    engine: &PluginEngine,
    bundle: &Bundle,
    target: &OciRef,
) -> Result<String, BundleError> {
    let m = &bundle.manifest;
    let wasm = ImageLayer::new(bundle.component.clone(), WASM_LAYER.to_string(), None);
    let digest = wasm.sha256_digest();
    let mut layers = vec![
        wasm,
        ImageLayer::new(
            bundle.manifest_text.clone().into_bytes(),
            MANIFEST_LAYER.to_string(),
            None,
        ),
    ];
    if let Some(s) = &bundle.signature {
        layers.push(ImageLayer::new(
            s.clone().into_bytes(),
            SIGNATURE_LAYER.to_string(),
            None,
        ));
    }
    if let Some(r) = &bundle.readme {
        layers.push(ImageLayer::new(
            r.clone().into_bytes(),
            README_LAYER.to_string(),
            None,
        ));
    }
    let config = Config::new(
        serde_json::to_vec(&wasm_config(engine, bundle, &digest)).expect("json"),
        WASM_CONFIG.to_string(),
        None,
    );
    // The usual OCI annotations, those with something to say.
    let annotations: BTreeMap<String, String> = [
        ("org.opencontainers.image.title", Some(m.name.clone())),
        (
            "org.opencontainers.image.version",
            Some(m.version.to_string()),
        ),
        (
            "org.opencontainers.image.description",
            Some(m.description.clone()),
        ),
        ("org.opencontainers.image.licenses", Some(m.license.clone())),
        (
            "org.opencontainers.image.authors",
            Some(m.authors.join(", ")),
        ),
        ("dev.spinneret.plugin.kind", m.kind.clone()),
        (
            "dev.spinneret.plugin.api",
            m.api.as_ref().map(ToString::to_string),
        ),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.filter(|v| !v.is_empty()).map(|v| (k.to_string(), v)))
    .collect();
    let manifest = OciImageManifest::build(&layers, &config, Some(annotations));
    let client = target.client();
    super::runtime()?.block_on(async {
        client
            .push(&target.reference, &layers, config, &auth(), Some(manifest))
            .await
            .map(|r| r.manifest_url)
            .map_err(|e| target.explain("cannot push to", e))
    })
}

/// Fetch the bundle published at `source`.
pub fn pull(source: &OciRef) -> Result<Bundle, BundleError> {
    let client = source.client();
    let image = super::runtime()?.block_on(async {
        client
            .pull(
                &source.reference,
                &auth(),
                vec![WASM_LAYER, MANIFEST_LAYER, SIGNATURE_LAYER, README_LAYER],
            )
            .await
            .map_err(|e| source.explain("cannot fetch", e))
    })?;
    let mut parts: BTreeMap<&str, Vec<u8>> = BTreeMap::new();
    for layer in image.layers {
        let kind = match layer.media_type.as_str() {
            WASM_LAYER => WASM_LAYER,
            MANIFEST_LAYER => MANIFEST_LAYER,
            SIGNATURE_LAYER => SIGNATURE_LAYER,
            README_LAYER => README_LAYER,
            _ => continue,
        };
        if parts.insert(kind, layer.data.to_vec()).is_some() {
            return Err(BundleError::Invalid(format!(
                "{source} has two layers of type {kind}"
            )));
        }
    }
    let text = |kind: &str, data: Vec<u8>| {
        String::from_utf8(data)
            .map_err(|_| BundleError::Invalid(format!("{source}: its {kind} layer is not UTF-8")))
    };
    let manifest = parts.remove(MANIFEST_LAYER).ok_or_else(|| {
        BundleError::Invalid(format!("{source} is a WebAssembly artifact but not a spinneret plugin bundle: it has no {MANIFEST_LAYER} layer"))
    })?;
    let component = parts
        .remove(WASM_LAYER)
        .ok_or_else(|| BundleError::Invalid(format!("{source} has no {WASM_LAYER} layer")))?;
    Bundle::from_parts(
        text(MANIFEST_LAYER, manifest)?,
        component,
        parts
            .remove(README_LAYER)
            .map(|r| text(README_LAYER, r))
            .transpose()?,
        parts
            .remove(SIGNATURE_LAYER)
            .map(|s| text(SIGNATURE_LAYER, s))
            .transpose()?,
        &source.to_string(),
    )
}
