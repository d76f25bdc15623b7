//! Where installed plugins live: one directory per user (`SPINNERET_HOME`,
//! else the platform's data directory, e.g. `~/.local/share/spinneret`),
//! with `plugins/NAME/VERSION/` holding each installed version side by
//! side — `plugin.toml`, `plugin.wasm`, `README.md`, the signature and
//! `install.toml` (where it came from, who signed it) — and
//! `trusted-keys/` the trust store.

use super::archive::{MANIFEST_FILE, README_FILE, SIGNATURE_FILE};
use super::manifest::{COMPONENT_FILE, Manifest};
use super::sign::TrustStore;
use crate::BundleError;
use serde::{Deserialize, Serialize};
use spinneret_core::digest::sha256_hex;
use std::path::{Path, PathBuf};

/// What `install.toml` records of an installed version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstallRecord {
    /// Where it was installed from (a path, URL or oci:// reference);
    /// `plugin update` looks there again.
    pub source: String,
    /// The signing key's id, or `unsigned`.
    pub signer: String,
    /// When, as an RFC 3339 timestamp.
    pub installed_at: String,
}

impl InstallRecord {
    /// Who signed it.
    pub fn signer(&self) -> super::sign::Signer {
        super::sign::Signer::from_record(&self.signer)
    }
}

/// One installed version.
#[derive(Clone, Debug)]
pub struct Installed {
    /// Its directory.
    pub dir: PathBuf,
    /// Its manifest.
    pub manifest: Manifest,
    /// Its install record.
    pub record: InstallRecord,
}

impl Installed {
    /// Its component file.
    pub fn component(&self) -> PathBuf {
        self.dir.join(COMPONENT_FILE)
    }

    /// Check that the component on disk is still the one installed (the
    /// manifest's sha256).
    pub fn check_component(&self) -> Result<Vec<u8>, BundleError> {
        let bytes = std::fs::read(self.component()).map_err(|e| {
            BundleError::Io(format!("cannot read {}: {e}", self.component().display()))
        })?;
        let expected = self.manifest.sha256.as_deref().unwrap_or("");
        if sha256_hex(&bytes) != expected {
            return Err(BundleError::Refused(format!(
                "{} was changed after it was installed (its sha256 is not the manifest's); reinstall {} {}",
                self.component().display(),
                self.manifest.name,
                self.manifest.version
            )));
        }
        Ok(bytes)
    }
}

/// The per-user plugin directory.
#[derive(Clone, Debug)]
pub struct PluginHome {
    root: PathBuf,
}

impl PluginHome {
    /// `SPINNERET_HOME`, else the platform's data directory.
    pub fn from_env() -> Result<PluginHome, BundleError> {
        if let Some(h) = std::env::var_os("SPINNERET_HOME").filter(|h| !h.is_empty()) {
            return Ok(PluginHome::at(PathBuf::from(h)));
        }
        dirs::data_dir()
            .map(|d| PluginHome::at(d.join("spinneret")))
            .ok_or_else(|| {
                BundleError::NotFound(
                    "no home directory is known: set SPINNERET_HOME to where plugins should be installed"
                        .to_string(),
                )
            })
    }

    /// A plugin home at `root`.
    pub fn at(root: PathBuf) -> PluginHome {
        PluginHome { root }
    }

    /// Its root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The directory of all versions of `name`.
    pub fn plugin_dir(&self, name: &str) -> PathBuf {
        self.root.join("plugins").join(name)
    }

    /// The trust store.
    pub fn trust(&self) -> TrustStore {
        TrustStore::new(self.root.join("trusted-keys"))
    }

    /// Read the installed version in `dir`.
    pub fn read(dir: &Path) -> Result<Installed, BundleError> {
        let text = std::fs::read_to_string(dir.join(MANIFEST_FILE)).map_err(|e| {
            BundleError::Io(format!(
                "cannot read {}: {e}",
                dir.join(MANIFEST_FILE).display()
            ))
        })?;
        let manifest = Manifest::parse(&text, &dir.join(MANIFEST_FILE).display().to_string())?;
        let record_path = dir.join("install.toml");
        let record = std::fs::read_to_string(&record_path)
            .map_err(|e| BundleError::Io(format!("cannot read {}: {e}", record_path.display())))
            .and_then(|t| {
                toml::from_str(&t)
                    .map_err(|e| BundleError::Invalid(format!("{}: {e}", record_path.display())))
            })?;
        Ok(Installed {
            dir: dir.to_path_buf(),
            manifest,
            record,
        })
    }

    /// The installed versions of `name`, newest first. Directories that are
    /// not complete installs (an install in progress) are skipped.
    pub fn versions(&self, name: &str) -> Vec<Installed> {
        let mut out: Vec<Installed> = std::fs::read_dir(self.plugin_dir(name))
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_str()
                    .is_some_and(|n| semver::Version::parse(n).is_ok())
            })
            .filter_map(|e| PluginHome::read(&e.path()).ok())
            .collect();
        out.sort_by(|a, b| b.manifest.version.cmp(&a.manifest.version));
        out
    }

    /// Every installed plugin's name, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.root.join("plugins"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|n| super::manifest::valid_name(n))
            .collect();
        names.sort();
        names
    }

    /// The newest installed version of `name` that `req` accepts.
    pub fn resolve(&self, name: &str, req: &semver::VersionReq) -> Result<Installed, BundleError> {
        let versions = self.versions(name);
        if versions.is_empty() {
            return Err(BundleError::NotFound(format!(
                "no plugin `{name}` is installed (in {}); `spinneret plugin install SOURCE` first",
                self.root.display()
            )));
        }
        versions
            .iter()
            .find(|v| req.matches(&v.manifest.version))
            .cloned()
            .ok_or_else(|| {
                let have: Vec<String> = versions
                    .iter()
                    .map(|v| v.manifest.version.to_string())
                    .collect();
                BundleError::NotFound(format!(
                    "no installed version of `{name}` matches {req} (installed: {})",
                    have.join(", ")
                ))
            })
    }

    /// Write the files of a verified bundle as version `VERSION` of its
    /// plugin, atomically: everything goes into a temporary directory that
    /// is renamed into place. If the version is already there with the same
    /// component (another install got there first) that copy is kept.
    /// Returns whether this call installed it.
    pub fn install(
        &self,
        bundle: &super::Bundle,
        record: &InstallRecord,
    ) -> Result<(bool, Installed), BundleError> {
        let m = &bundle.manifest;
        let parent = self.plugin_dir(&m.name);
        std::fs::create_dir_all(&parent)
            .map_err(|e| BundleError::Io(format!("cannot create {}: {e}", parent.display())))?;
        let tmp = tempfile::Builder::new()
            .prefix(".incoming-")
            .tempdir_in(&parent)
            .map_err(|e| BundleError::Io(format!("cannot write in {}: {e}", parent.display())))?;
        let write = |name: &str, data: &[u8]| {
            let path = tmp.path().join(name);
            std::fs::write(&path, data)
                .and_then(|()| std::fs::File::open(&path)?.sync_all())
                .map_err(|e| BundleError::Io(format!("cannot write {}: {e}", path.display())))
        };
        write(MANIFEST_FILE, bundle.manifest_text.as_bytes())?;
        write(COMPONENT_FILE, &bundle.component)?;
        if let Some(r) = &bundle.readme {
            write(README_FILE, r.as_bytes())?;
        }
        if let Some(s) = &bundle.signature {
            write(SIGNATURE_FILE, s.as_bytes())?;
        }
        write(
            "install.toml",
            toml::to_string(record)
                .expect("a record serializes")
                .as_bytes(),
        )?;
        let target = parent.join(m.version.to_string());
        match std::fs::rename(tmp.path(), &target) {
            Ok(()) => {
                // The directory is renamed; nothing is left to clean up.
                let _ = tmp.keep();
                Ok((true, PluginHome::read(&target)?))
            }
            Err(_) if target.is_dir() => {
                let existing = PluginHome::read(&target)?;
                if existing.manifest.sha256 == m.sha256 {
                    Ok((false, existing))
                } else {
                    Err(BundleError::Refused(format!(
                        "{} {} is already installed with a different component; `spinneret plugin remove {}@{}` first",
                        m.name, m.version, m.name, m.version
                    )))
                }
            }
            Err(e) => Err(BundleError::Io(format!(
                "cannot install into {}: {e}",
                target.display()
            ))),
        }
    }

    /// Remove version `version` of `name`, or every version.
    pub fn remove(
        &self,
        name: &str,
        version: Option<&semver::Version>,
    ) -> Result<Vec<semver::Version>, BundleError> {
        let versions = self.versions(name);
        let doomed: Vec<&Installed> = versions
            .iter()
            .filter(|v| version.is_none_or(|want| &v.manifest.version == want))
            .collect();
        if doomed.is_empty() {
            return Err(match version {
                Some(v) => BundleError::NotFound(format!("{name} {v} is not installed")),
                None => BundleError::NotFound(format!("no plugin `{name}` is installed")),
            });
        }
        let mut removed = Vec::new();
        for v in doomed {
            // Renamed away first, so that a crawl never sees half a plugin.
            let trash = v
                .dir
                .with_file_name(format!(".removing-{}", v.manifest.version));
            std::fs::rename(&v.dir, &trash)
                .and_then(|()| std::fs::remove_dir_all(&trash))
                .map_err(|e| BundleError::Io(format!("cannot remove {}: {e}", v.dir.display())))?;
            removed.push(v.manifest.version.clone());
        }
        if self.versions(name).is_empty() {
            let _ = std::fs::remove_dir(self.plugin_dir(name));
        }
        Ok(removed)
    }
}
