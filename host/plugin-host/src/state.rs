//! What a plugin instance may touch: its sandboxed WASI context (no files,
//! no environment, no sockets), its memory cap, its output directory with a
//! byte cap, and the host imports of the WIT package.

use super::bindings::reporter::spinneret::plugin::{clock, http, kv, log, output, types};
use std::collections::{BTreeMap, HashMap};
use std::path::{Component as PathComponent, Path, PathBuf};
use std::sync::{Arc, Mutex};
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use super::http::PluginHttp;
pub use spinneret_core::grants::Grants;

/// Memory accounting that remembers whether the cap was hit.
#[derive(Debug)]
pub struct MemoryCap {
    cap: usize,
    /// Whether a growth past the cap was refused.
    pub exceeded: bool,
}

impl wasmtime::ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.cap {
            self.exceeded = true;
            wasmtime::bail!(
                "memory limit of {} MiB exceeded (asked for {} MiB)",
                self.cap >> 20,
                desired >> 20
            );
        }
        Ok(true)
    }
    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 1_000_000)
    }
}

/// A reporter's output directory: whole files written atomically, and
/// files appended to as the report goes, which replace their old versions
/// only when the reporter finishes ([`OutputDir::commit`]).
#[derive(Debug)]
pub struct OutputDir {
    root: PathBuf,
    cap: u64,
    written: u64,
    /// Whether a write past the cap was refused.
    pub exceeded: bool,
    /// Files being appended to, by the plugin's path: where the new version
    /// grows, and the file open on it.
    pending: HashMap<String, (PathBuf, std::fs::File)>,
}

impl OutputDir {
    /// The directory `root` (created on first write), capped at `cap` bytes.
    pub fn new(root: PathBuf, cap: u64) -> OutputDir {
        OutputDir {
            root,
            cap,
            written: 0,
            exceeded: false,
            pending: HashMap::new(),
        }
    }

    fn resolve(&self, path: &str) -> Result<PathBuf, String> {
        let p = Path::new(path);
        let ok = !path.is_empty()
            && !path.contains('\\')
            && p.components()
                .all(|c| matches!(c, PathComponent::Normal(_)));
        if !ok {
            return Err(format!(
                "`{path}` is not a relative path inside the output directory"
            ));
        }
        Ok(self.root.join(p))
    }

    /// Count `bytes` more against the cap; past it, the call traps (not an
    /// error the plugin may ignore).
    fn spend(&mut self, bytes: usize) -> wasmtime::Result<()> {
        self.written += bytes as u64;
        if self.written > self.cap {
            self.exceeded = true;
            wasmtime::bail!("output limit of {} bytes exceeded", self.cap);
        }
        Ok(())
    }

    /// Refuse to touch a path while a new version of it is being appended to.
    fn not_pending(&self, path: &str) -> Result<(), String> {
        match self.pending.contains_key(path) {
            true => Err(format!(
                "{path} is being appended to; it cannot be written or renamed onto before the report is finished"
            )),
            false => Ok(()),
        }
    }

    /// The file a new version of `target` grows in, beside it (so that the
    /// final rename stays on one file system), hidden and named for this process.
    fn pending_path(target: &Path) -> PathBuf {
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        target.with_file_name(format!(".{name}.pending-{}", std::process::id()))
    }

    fn append(&mut self, path: &str, contents: &[u8]) -> wasmtime::Result<Result<(), String>> {
        use std::io::Write;
        let target = match self.resolve(path) {
            Ok(t) => t,
            Err(e) => return Ok(Err(e)),
        };
        self.spend(contents.len())?;
        if !self.pending.contains_key(path) {
            let tmp = Self::pending_path(&target);
            let opened = (|| {
                if let Some(dir) = tmp.parent() {
                    std::fs::create_dir_all(dir)?;
                }
                std::fs::File::create(&tmp)
            })();
            match opened {
                Ok(file) => {
                    self.pending.insert(path.to_string(), (tmp, file));
                }
                Err(e) => return Ok(Err(format!("cannot write {path}: {e}"))),
            }
        }
        let (_, file) = self.pending.get_mut(path).expect("inserted above");
        Ok(file
            .write_all(contents)
            .map_err(|e| format!("cannot write {path}: {e}")))
    }

    /// Put the new version of every file appended to in place of the old.
    pub fn commit(&mut self) -> Result<(), String> {
        for (path, (tmp, file)) in std::mem::take(&mut self.pending) {
            drop(file);
            let target = self.resolve(&path)?;
            std::fs::rename(&tmp, &target).map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                format!("cannot write {path}: {e}")
            })?;
        }
        Ok(())
    }
}

impl Drop for OutputDir {
    /// New versions never committed (the reporter failed) are thrown away.
    fn drop(&mut self) {
        for (_, (tmp, file)) in self.pending.drain() {
            drop(file);
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// The state of one plugin instance's store.
pub struct PluginState {
    /// The plugin's name, for logs and messages.
    pub name: String,
    wasi: WasiCtx,
    table: ResourceTable,
    /// Memory accounting.
    pub memory: MemoryCap,
    /// The output directory (reporters).
    pub output: Option<OutputDir>,
    kv: KvSpace,
    grants: Grants,
    http: Option<PluginHttp>,
}

impl PluginState {
    /// A fresh, sandboxed state.
    pub fn new(
        name: &str,
        grants: &Grants,
        output: Option<OutputDir>,
        http: Option<PluginHttp>,
        kv: KvSpace,
    ) -> PluginState {
        let wasi = WasiCtxBuilder::new().allow_ip_name_lookup(false).build();
        PluginState {
            name: name.to_string(),
            wasi,
            table: ResourceTable::new(),
            memory: MemoryCap {
                cap: grants.memory as usize,
                exceeded: false,
            },
            output,
            kv,
            grants: grants.clone(),
            http,
        }
    }
}

impl WasiView for PluginState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl types::Host for PluginState {}

impl log::Host for PluginState {
    fn log(&mut self, level: log::Level, message: String) -> wasmtime::Result<()> {
        let name = &self.name;
        let message: String = message.chars().take(4096).collect();
        match level {
            log::Level::Trace => tracing::trace!("plugin {name}: {message}"),
            log::Level::Debug => tracing::debug!("plugin {name}: {message}"),
            log::Level::Info => tracing::info!("plugin {name}: {message}"),
            log::Level::Warn => tracing::warn!("plugin {name}: {message}"),
            log::Level::Error => tracing::error!("plugin {name}: {message}"),
        }
        Ok(())
    }
}

impl clock::Host for PluginState {
    fn now(&mut self) -> wasmtime::Result<i64> {
        Ok(spinneret_core::model::unix_now())
    }
}

/// Largest value a plugin may keep under one key.
pub const KV_VALUE_MAX: usize = 1 << 20;
/// Longest key.
pub const KV_KEY_MAX: usize = 1 << 10;
/// Most bytes (keys and values) one plugin may keep.
pub const KV_QUOTA: usize = 16 << 20;

/// A plugin's key-value space: shared by all its instances in a process,
/// loaded from the store before the plugin first runs and saved after
/// ([`spinneret_store::Store::load_kv`], [`spinneret_store::Store::save_kv`]).
#[derive(Clone, Debug, Default)]
pub struct KvSpace(Arc<Mutex<KvData>>);

#[derive(Debug, Default)]
struct KvData {
    entries: BTreeMap<String, Vec<u8>>,
    bytes: usize,
    dirty: bool,
}

impl KvSpace {
    /// A space holding `entries`.
    pub fn with(entries: BTreeMap<String, Vec<u8>>) -> KvSpace {
        let bytes = entries.iter().map(|(k, v)| k.len() + v.len()).sum();
        KvSpace(Arc::new(Mutex::new(KvData {
            entries,
            bytes,
            dirty: false,
        })))
    }

    fn data(&self) -> std::sync::MutexGuard<'_, KvData> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The entries, if anything changed since [`KvSpace::with`].
    pub fn changed(&self) -> Option<BTreeMap<String, Vec<u8>>> {
        let d = self.data();
        d.dirty.then(|| d.entries.clone())
    }

    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<Vec<u8>> {
        self.data().entries.get(key).cloned()
    }

    /// Store `value` under `key`, within the limits.
    pub fn set(&self, key: String, value: Vec<u8>) -> Result<(), String> {
        if key.len() > KV_KEY_MAX {
            return Err(format!("a key may hold at most {KV_KEY_MAX} bytes"));
        }
        if value.len() > KV_VALUE_MAX {
            return Err(format!("a value may hold at most {KV_VALUE_MAX} bytes"));
        }
        let mut d = self.data();
        let old = d.entries.get(&key).map_or(0, |v| key.len() + v.len());
        let bytes = d.bytes - old + key.len() + value.len();
        if bytes > KV_QUOTA {
            return Err(format!(
                "the plugin's key-value quota of {} MiB is used up; delete keys it no longer needs",
                KV_QUOTA >> 20
            ));
        }
        d.bytes = bytes;
        d.dirty = true;
        d.entries.insert(key, value);
        Ok(())
    }

    /// Remove `key`.
    pub fn delete(&self, key: &str) {
        let mut d = self.data();
        if let Some(v) = d.entries.remove(key) {
            d.bytes -= key.len() + v.len();
            d.dirty = true;
        }
    }
}

impl kv::Host for PluginState {
    fn get(&mut self, key: String) -> wasmtime::Result<Option<Vec<u8>>> {
        Ok(self.kv.get(&key))
    }
    fn set(&mut self, key: String, value: Vec<u8>) -> wasmtime::Result<Result<(), String>> {
        Ok(self.kv.set(key, value))
    }
    fn delete(&mut self, key: String) -> wasmtime::Result<()> {
        self.kv.delete(&key);
        Ok(())
    }
}

impl http::Host for PluginState {
    fn get(&mut self, target: String) -> wasmtime::Result<Result<http::Response, String>> {
        let url = match url::Url::parse(&target) {
            Ok(u) if matches!(u.scheme(), "http" | "https") => u,
            _ => return Ok(Err(format!("`{target}` is not an http or https URL"))),
        };
        let host = url.host_str().unwrap_or("");
        if !self
            .grants
            .hosts
            .iter()
            .any(|g| g.eq_ignore_ascii_case(host))
        {
            return Ok(Err(format!(
                "network access to {host} is not granted to plugin {}; list the host in the plugin's `hosts`",
                self.name
            )));
        }
        let Some(fetcher) = self.http.as_ref() else {
            return Ok(Err(format!(
                "plugin {} runs without the host's fetcher here",
                self.name
            )));
        };
        Ok(fetcher.get(&url).map(|answer| http::Response {
            status: answer.status,
            content_type: answer.content_type,
            truncated: answer.truncated,
            body: answer.body,
        }))
    }
}

impl output::Host for PluginState {
    fn write(&mut self, path: String, contents: Vec<u8>) -> wasmtime::Result<Result<(), String>> {
        let Some(out) = self.output.as_mut() else {
            return Ok(Err("this plugin has no output directory".into()));
        };
        let target = match out.resolve(&path).and_then(|t| {
            out.not_pending(&path)?;
            Ok(t)
        }) {
            Ok(t) => t,
            Err(e) => return Ok(Err(e)),
        };
        out.spend(contents.len())?;
        let result = (|| -> std::io::Result<()> {
            if let Some(dir) = target.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let tmp = target.with_extension(format!("tmp-{}", std::process::id()));
            std::fs::write(&tmp, &contents)?;
            std::fs::rename(&tmp, &target)
        })();
        Ok(result.map_err(|e| format!("cannot write {path}: {e}")))
    }

    fn append(&mut self, path: String, contents: Vec<u8>) -> wasmtime::Result<Result<(), String>> {
        match self.output.as_mut() {
            Some(out) => out.append(&path, &contents),
            None => Ok(Err("this plugin has no output directory".into())),
        }
    }

    fn exists(&mut self, path: String) -> wasmtime::Result<bool> {
        Ok(self
            .output
            .as_ref()
            .and_then(|out| out.resolve(&path).ok())
            .is_some_and(|p| p.exists()))
    }

    fn read(&mut self, path: String) -> wasmtime::Result<Option<Vec<u8>>> {
        let Some(out) = self.output.as_ref() else {
            return Ok(None);
        };
        let Ok(p) = out.resolve(&path) else {
            return Ok(None);
        };
        // A file larger than the plugin's memory could never be handed over.
        let fits = std::fs::metadata(&p).is_ok_and(|m| m.len() < self.memory.cap as u64);
        Ok(fits.then(|| std::fs::read(p).ok()).flatten())
    }

    fn rename(
        &mut self,
        source: String,
        destination: String,
    ) -> wasmtime::Result<Result<(), String>> {
        let Some(out) = self.output.as_ref() else {
            return Ok(Err("this plugin has no output directory".into()));
        };
        // Renaming a path being appended to moves its old version (e.g. to
        // keep it as the prior one); renaming onto one is refused.
        let resolved = (|| {
            out.not_pending(&destination)?;
            Ok((out.resolve(&source)?, out.resolve(&destination)?))
        })();
        let (from, to) = match resolved {
            Ok(pair) => pair,
            Err(e) => return Ok(Err(e)),
        };
        Ok(std::fs::rename(from, to)
            .map_err(|e| format!("cannot rename {source} to {destination}: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kv_space_keeps_its_quota_and_knows_what_changed() {
        let kv = KvSpace::with(BTreeMap::from([("a".to_string(), b"1".to_vec())]));
        assert_eq!(kv.changed(), None);
        assert_eq!(kv.get("a"), Some(b"1".to_vec()));
        kv.set("b".into(), vec![0; 10]).unwrap();
        kv.delete("a");
        assert_eq!(
            kv.changed(),
            Some(BTreeMap::from([("b".to_string(), vec![0; 10])]))
        );
        assert!(kv.set("big".into(), vec![0; KV_VALUE_MAX + 1]).is_err());
        for i in 0..15 {
            kv.set(format!("k{i}"), vec![0; KV_VALUE_MAX]).unwrap();
        }
        let err = kv.set("k99".into(), vec![0; KV_VALUE_MAX]).unwrap_err();
        assert!(err.contains("quota of 16 MiB"), "{err}");
        // Replacing a value counts only the difference.
        kv.set("k0".into(), vec![1; KV_VALUE_MAX]).unwrap();
    }

    #[test]
    fn output_paths_stay_inside() {
        let out = OutputDir::new(PathBuf::from("/srv/out"), 10);
        assert_eq!(
            out.resolve("index.html").unwrap(),
            PathBuf::from("/srv/out/index.html")
        );
        assert_eq!(
            out.resolve("a/b.txt").unwrap(),
            PathBuf::from("/srv/out/a/b.txt")
        );
        for bad in ["", "../x", "/etc/passwd", "a/../../x", "a\\b", "./x"] {
            assert!(out.resolve(bad).is_err(), "{bad}");
        }
    }
}
