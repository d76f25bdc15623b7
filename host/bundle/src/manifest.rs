//! `plugin.toml`, the manifest of a plugin bundle (schema 1): who the
//! plugin is, which world and plugin API it was built for, what it asks to
//! be granted, and the sha256 of its component. A signature covers exactly
//! the manifest's bytes, and the manifest covers the component and README
//! through their hashes.
//!
//! ```toml
//! schema = 1
//! name = "link-stats"            # lower case, digits and `-`
//! version = "1.2.0"              # semver
//! description = "Counts links per task"
//! authors = ["Ada <ada@example.org>"]
//! license = "MIT"
//! kind = "reporter"              # reporter, change-detector, policy, fetch-hook, parser, search-engine
//! api = "0.2.0"                  # the spinneret:plugin API it was built against
//! component = "plugin.wasm"      # in a bundle always plugin.wasm
//! sha256 = "…"                   # of the component; written by `plugin pack`
//! readme_sha256 = "…"            # of README.md, when there is one
//!
//! [capabilities]                 # what it asks for; a crawl grants at most this
//! hosts = ["api.example.org"]    # hosts it may fetch from (default none)
//! memory = "64MiB"               # memory per instance (default 64MiB)
//! time = "1s"                    # time per call (default 1s)
//!
//! [config]                       # its default configuration (a crawl's own
//! top = 10                       # [plugin.config] keys take precedence)
//! ```

use crate::BundleError;
use serde::{Deserialize, Serialize};
use spinneret_core::values::{ByteSize, HumanDuration};
use spinneret_plugin_host::identify::PluginKind;
use std::time::Duration;

/// The manifest schema this spinneret reads and writes.
pub const SCHEMA: u32 = 1;

/// The component's file name inside a bundle.
pub const COMPONENT_FILE: &str = "plugin.wasm";

/// What a plugin asks to be granted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capabilities {
    /// Hosts it may fetch from through the host's polite fetcher.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    /// Memory per instance, e.g. `"64MiB"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// Time per call, e.g. `"1s"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
}

impl Capabilities {
    /// Memory asked for, in bytes (the default grant when not said).
    pub fn memory_bytes(&self) -> u64 {
        self.memory
            .as_deref()
            .and_then(|m| ByteSize::parse(m).ok())
            .map_or(spinneret_core::grants::Grants::default().memory, |b| b.0)
    }

    /// Time per call asked for (the default grant when not said).
    pub fn time_per_call(&self) -> Duration {
        self.time
            .as_deref()
            .and_then(|t| humantime::parse_duration(t).ok())
            .unwrap_or(spinneret_core::grants::Grants::default().time)
    }

    /// What `other` asks for beyond this: new hosts, more memory, more time.
    pub fn beyond(&self, other: &Capabilities) -> Vec<String> {
        let mut more = Vec::new();
        for h in &other.hosts {
            if !self.hosts.iter().any(|s| s.eq_ignore_ascii_case(h)) {
                more.push(format!("network access to {h}"));
            }
        }
        if other.memory_bytes() > self.memory_bytes() {
            more.push(format!(
                "{} MiB of memory (was {} MiB)",
                other.memory_bytes() >> 20,
                self.memory_bytes() >> 20
            ));
        }
        if other.time_per_call() > self.time_per_call() {
            more.push(format!(
                "{} per call (was {})",
                humantime::format_duration(other.time_per_call()),
                humantime::format_duration(self.time_per_call())
            ));
        }
        more
    }

    /// One line per capability, as `install` shows them.
    pub fn describe(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if self.hosts.is_empty() {
            lines.push("network: none".to_string());
        } else {
            lines.push(format!("network: {}", self.hosts.join(", ")));
        }
        lines.push(format!(
            "memory: {} MiB per instance",
            self.memory_bytes() >> 20
        ));
        lines.push(format!(
            "time: {} per call",
            humantime::format_duration(self.time_per_call())
        ));
        lines
    }
}

/// A parsed `plugin.toml`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The schema version (1).
    pub schema: u32,
    /// The plugin's name.
    pub name: String,
    /// Its version (semver).
    pub version: semver::Version,
    /// One line about it.
    #[serde(default)]
    pub description: String,
    /// Its authors.
    #[serde(default)]
    pub authors: Vec<String>,
    /// Its licence (an SPDX expression).
    #[serde(default)]
    pub license: String,
    /// Its world (`reporter`, `change-detector`, …); `pack` fills it in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The plugin API it was built against; `pack` fills it in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<semver::Version>,
    /// The component: in a source directory the built file, in a bundle
    /// `plugin.wasm`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component: Option<String>,
    /// The component's sha256 (hex); `pack` writes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// The README's sha256 (hex), when the bundle has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readme_sha256: Option<String>,
    /// What it asks to be granted.
    #[serde(default)]
    pub capabilities: Capabilities,
    /// Its default configuration.
    #[serde(default, skip_serializing_if = "toml::Table::is_empty")]
    pub config: toml::Table,
}

/// Whether `name` is a plugin name: lower-case letters, digits and `-`,
/// starting with a letter and not ending with `-`.
pub fn valid_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_lowercase())
        && !name.ends_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

impl Manifest {
    /// Parse and check a manifest; `origin` names it in messages.
    pub fn parse(text: &str, origin: &str) -> Result<Manifest, BundleError> {
        let m: Manifest = toml::from_str(text).map_err(|e| {
            let at = e
                .span()
                .map(|s| {
                    let line = text[..s.start.min(text.len())].matches('\n').count() + 1;
                    format!(":{line}")
                })
                .unwrap_or_default();
            BundleError::Invalid(format!("{origin}{at}: {}", e.message()))
        })?;
        m.check()
            .map_err(|e| BundleError::Invalid(format!("{origin}: {e}")))?;
        Ok(m)
    }

    /// Check the fields a TOML parser cannot.
    pub fn check(&self) -> Result<(), BundleError> {
        if self.schema != SCHEMA {
            return Err(BundleError::Invalid(format!(
                "manifest schema {} is not known to this spinneret (it reads schema {SCHEMA}); update spinneret",
                self.schema
            )));
        }
        if !valid_name(&self.name) {
            return Err(BundleError::Invalid(format!(
                "`{}` is not a plugin name: use lower-case letters, digits and `-`, starting with a letter",
                self.name
            )));
        }
        if let Some(k) = &self.kind
            && PluginKind::from_world(k).is_none()
        {
            return Err(BundleError::Invalid(format!(
                "kind `{k}` is not a plugin world; use one of reporter, change-detector, policy, fetch-hook, parser, search-engine, collection-index"
            )));
        }
        if let Some(m) = &self.capabilities.memory {
            ByteSize::parse(m)
                .map_err(|e| BundleError::Invalid(format!("capabilities.memory: {e}")))?;
        }
        if let Some(t) = &self.capabilities.time {
            toml::Value::String(t.clone())
                .try_into::<HumanDuration>()
                .map_err(|e| BundleError::Invalid(format!("capabilities.time: {e}")))?;
        }
        for h in &self.capabilities.hosts {
            if h.is_empty() || h.contains(['/', ':', ' ']) {
                return Err(BundleError::Invalid(format!(
                    "capabilities.hosts: `{h}` is not a host name (write e.g. \"api.example.org\")"
                )));
            }
        }
        for (field, hash) in [
            ("sha256", &self.sha256),
            ("readme_sha256", &self.readme_sha256),
        ] {
            if let Some(h) = hash
                && (h.len() != 64 || !h.chars().all(|c| c.is_ascii_hexdigit()))
            {
                return Err(BundleError::Invalid(format!(
                    "{field} `{h}` is not a sha256 in hex"
                )));
            }
        }
        Ok(())
    }

    /// The manifest as the bundle stores it (and a signature covers).
    pub fn to_text(&self) -> String {
        format!(
            "# spinneret plugin manifest (schema {SCHEMA})\n{}",
            toml::to_string(self).expect("a manifest serializes")
        )
    }

    /// `NAME-VERSION.spkg`.
    pub fn bundle_file_name(&self) -> String {
        format!("{}-{}.spkg", self.name, self.version)
    }

    /// Whether a plugin built against `api` runs on this host: 0.x versions
    /// must agree on the minor version, later ones on the major.
    pub fn api_compatible(api: &semver::Version) -> bool {
        spinneret_plugin_host::api::ApiVersion::for_component((api.major, api.minor, api.patch))
            .is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "schema = 1\nname = \"link-stats\"\nversion = \"1.2.0\"\nkind = \"reporter\"\napi = \"0.2.0\"\n[capabilities]\nhosts = [\"api.example.org\"]\nmemory = \"32MiB\"\ntime = \"2s\"\n[config]\ntop = 10\n";

    #[test]
    fn a_manifest_round_trips() {
        let m = Manifest::parse(GOOD, "plugin.toml").unwrap();
        assert_eq!(m.name, "link-stats");
        assert_eq!(m.capabilities.memory_bytes(), 32 << 20);
        assert_eq!(m.capabilities.time_per_call(), Duration::from_secs(2));
        let again = Manifest::parse(&m.to_text(), "again").unwrap();
        assert_eq!(again, m);
        assert_eq!(m.bundle_file_name(), "link-stats-1.2.0.spkg");
    }

    #[test]
    fn bad_manifests_are_located() {
        let e = crate::error::expect_err(
            Manifest::parse(&GOOD.replace("1.2.0", "1.2"), "p.toml"),
            "invalid",
        );
        assert!(e.starts_with("p.toml:3: "), "{e}");
        let e = crate::error::expect_err(
            Manifest::parse(&GOOD.replace("reporter", "printer"), "p.toml"),
            "invalid",
        );
        assert!(e.contains("kind `printer` is not a plugin world"), "{e}");
        let e = crate::error::expect_err(
            Manifest::parse(&GOOD.replace("link-stats", "Link_Stats"), "p.toml"),
            "invalid",
        );
        assert!(e.contains("is not a plugin name"), "{e}");
        let e = crate::error::expect_err(
            Manifest::parse(&format!("{GOOD}\n[extra]\n"), "p.toml"),
            "invalid",
        );
        assert!(e.contains("unknown field `extra`"), "{e}");
        let e = crate::error::expect_err(
            Manifest::parse(&GOOD.replace("32MiB", "lots"), "p.toml"),
            "invalid",
        );
        assert!(e.contains("capabilities.memory"), "{e}");
    }

    #[test]
    fn more_capabilities_are_named() {
        let old = Capabilities {
            hosts: vec!["a.example".into()],
            ..Default::default()
        };
        let new = Capabilities {
            hosts: vec!["a.example".into(), "b.example".into()],
            memory: Some("128MiB".into()),
            time: None,
        };
        assert_eq!(
            old.beyond(&new),
            [
                "network access to b.example",
                "128 MiB of memory (was 64 MiB)"
            ]
        );
        assert!(new.beyond(&old).is_empty());
    }

    #[test]
    fn api_compatibility_follows_semver() {
        let v = |s: &str| semver::Version::parse(s).unwrap();
        assert!(Manifest::api_compatible(&v("0.2.0")));
        assert!(Manifest::api_compatible(&v("0.2.9")));
        assert!(!Manifest::api_compatible(&v("0.1.0")));
        assert!(Manifest::api_compatible(&v("0.3.0")));
        assert!(Manifest::api_compatible(&v("0.4.0")));
        assert!(Manifest::api_compatible(&v("0.5.0")));
        assert!(!Manifest::api_compatible(&v("0.6.0")));
        assert!(!Manifest::api_compatible(&v("1.1.0")));
    }
}
