//! The wasmtime engine shared by all plugins: component model on, epoch
//! interruption on (a background thread advances the epoch every
//! [`TICK`]), and compiled components kept for the process and, on disk,
//! between runs.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};
use wasmtime::component::Component;
use wasmtime::{Config, Engine};

/// How often the epoch advances: the granularity of plugin deadlines.
pub const TICK: Duration = Duration::from_millis(10);

/// A compiled component not used for this long is removed from the disk
/// cache (the next time something is written there).
const CACHE_KEEP: Duration = Duration::from_secs(60 * 24 * 3600);

/// Where compiled plugins are kept between runs: `SPINNERET_CACHE_DIR`, else
/// the user's cache directory; `SPINNERET_CACHE_DIR=off` turns it off.
pub fn cache_dir() -> Option<PathBuf> {
    match std::env::var_os("SPINNERET_CACHE_DIR") {
        Some(v) if v == "off" => None,
        Some(v) if !v.is_empty() => Some(v.into()),
        _ => dirs::cache_dir().map(|d| d.join("spinneret").join("wasmtime")),
    }
}

/// Compiled components on disk, one file per component and engine
/// (`SHA256-ENGINE.cwasm`), so each plugin is compiled once per version
/// rather than once per run. A file is mapped into memory as it is, not
/// read, decompressed and copied: loading the built-ins takes a few
/// milliseconds. Files are written whole and renamed into place, so a
/// crash or a second spinneret writing at the same time never leaves a
/// half-written one under a real name.
struct DiskCache {
    dir: PathBuf,
    /// The engine's compatibility (wasmtime version, target, settings), in
    /// hex: compiled code from another engine is never tried.
    engine: String,
}

impl DiskCache {
    fn open(engine: &Engine, dir: PathBuf) -> DiskCache {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut h);
        DiskCache {
            dir,
            engine: format!("{:016x}", h.finish()),
        }
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}-{}.cwasm", self.engine))
    }

    /// The component compiled earlier from the bytes hashed to `key`.
    /// The crate's one `unsafe`: mapping compiled code is unsafe in
    /// wasmtime's API (as it is inside wasmtime's own cache).
    #[allow(unsafe_code)]
    fn load(&self, engine: &Engine, key: &str) -> Option<Component> {
        let path = self.path(key);
        if !path.is_file() {
            return None;
        }
        // SAFETY: only files this cache wrote (`Component::serialize` of a
        // component this process compiled, written whole and renamed into
        // place) are named like this, in the user's own cache directory;
        // wasmtime checks that the file is compiled code for this engine
        // and refuses it otherwise. The file is never rewritten in place,
        // so the mapping stays valid while it is used.
        match unsafe { Component::deserialize_file(engine, &path) } {
            Ok(c) => Some(c),
            Err(e) => {
                tracing::debug!("compiled plugin {} not used: {e:#}", path.display());
                None
            }
        }
    }

    /// Keep `component`, compiled from the bytes hashed to `key`. A failure
    /// costs only a compilation next run, so it is logged, not returned.
    fn store(&self, key: &str, component: &Component) {
        // Whole and on disk before it takes the real name: a torn file
        // would be mapped as compiled code next run. Two threads or
        // processes compiling the same plugin at once each write their own
        // temporary file.
        let written = component.serialize().and_then(|bytes| {
            Ok(spinneret_core::fs::write_atomically(
                &self.path(key),
                bytes,
            )?)
        });
        match written {
            Ok(()) => self.sweep(),
            Err(e) => tracing::debug!(
                "cannot keep a compiled plugin in {}: {e:#}",
                self.dir.display()
            ),
        }
    }

    /// Remove what will not be used again: files of other engines (an
    /// older spinneret), files not used for [`CACHE_KEEP`], and the
    /// layout of wasmtime's own cache that earlier versions used.
    fn sweep(&self) {
        let old = self.dir.join("modules");
        if let Ok(entries) = std::fs::read_dir(&old) {
            for entry in entries.flatten() {
                if entry.file_name().to_string_lossy().starts_with("wasmtime-") {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
            let _ = std::fs::remove_dir(&old);
        }
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let ours = format!("-{}.cwasm", self.engine);
        let now = SystemTime::now();
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if name.starts_with(".cleanup.wip") {
                // Left by wasmtime's own cache, which earlier versions used.
                remove_quietly(&entry.path());
                continue;
            }
            let age = |time: fn(&std::fs::Metadata) -> std::io::Result<SystemTime>| {
                entry
                    .metadata()
                    .and_then(|m| time(&m))
                    .map(|t| now.duration_since(t).unwrap_or_default())
                    .unwrap_or_default()
            };
            if name.starts_with(".compiling") || name.starts_with(spinneret_core::fs::TEMP_PREFIX) {
                // Left by a spinneret that stopped while writing one.
                if age(std::fs::Metadata::modified) > Duration::from_secs(3600) {
                    remove_quietly(&entry.path());
                }
                continue;
            }
            if !name.ends_with(".cwasm") {
                continue;
            }
            if !name.ends_with(&ours) || age(std::fs::Metadata::accessed) > CACHE_KEEP {
                remove_quietly(&entry.path());
            }
        }
    }
}

fn remove_quietly(path: &Path) {
    if let Err(e) = std::fs::remove_file(path) {
        tracing::debug!("cannot remove {}: {e}", path.display());
    }
}

/// The engine, its epoch ticker and the compiled components.
pub struct PluginEngine {
    engine: Engine,
    stop: Arc<AtomicBool>,
    ticker: Option<std::thread::JoinHandle<()>>,
    compiled: Mutex<HashMap<String, Component>>,
    disk: Option<DiskCache>,
}

impl PluginEngine {
    /// A new engine with its ticker thread, keeping compiled plugins in
    /// [`cache_dir`].
    pub fn new() -> wasmtime::Result<PluginEngine> {
        PluginEngine::with_cache(cache_dir())
    }

    /// A new engine with its ticker thread, keeping compiled plugins in
    /// `cache` (none: compiled each run).
    pub fn with_cache(cache: Option<PathBuf>) -> wasmtime::Result<PluginEngine> {
        let mut config = Config::new();
        config.wasm_component_model(true);
        config.epoch_interruption(true);
        // For profiling plugins with `perf`: the compiled functions' names
        // go to /tmp/perf-PID.map, where `perf report` finds them.
        if std::env::var_os("SPINNERET_PLUGIN_PROFILE").is_some_and(|v| v == "perfmap") {
            config.profiler(wasmtime::ProfilingStrategy::PerfMap);
        }
        let engine = Engine::new(&config)?;
        let disk = cache.map(|dir| DiskCache::open(&engine, dir));
        let stop = Arc::new(AtomicBool::new(false));
        let ticker = {
            let engine = engine.clone();
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("plugin-epoch".into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::thread::sleep(TICK);
                        engine.increment_epoch();
                    }
                })?
        };
        Ok(PluginEngine {
            engine,
            stop,
            ticker: Some(ticker),
            compiled: Mutex::new(HashMap::new()),
            disk,
        })
    }

    /// The wasmtime engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Compile `bytes` (once per process for the same bytes, and once for
    /// all runs with the disk cache).
    pub fn compile(&self, bytes: &[u8]) -> wasmtime::Result<Component> {
        let key = spinneret_core::digest::sha256_hex(bytes);
        if let Some(c) = self
            .compiled
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            return Ok(c.clone());
        }
        let cached = self.disk.as_ref().and_then(|d| d.load(&self.engine, &key));
        let component = match cached {
            Some(c) => c,
            None => {
                let c = Component::new(&self.engine, bytes)?;
                if let Some(d) = &self.disk {
                    d.store(&key, &c);
                }
                c
            }
        };
        self.compiled
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, component.clone());
        Ok(component)
    }

    /// Deadline ticks for a time allowance.
    pub fn ticks(time: Duration) -> u64 {
        (time.as_millis() / TICK.as_millis()).max(1) as u64
    }
}

impl Drop for PluginEngine {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn soft_404() -> &'static [u8] {
        crate::builtin::builtin("soft-404").expect("a built-in")
    }

    fn cwasm_files(dir: &Path) -> Vec<(String, SystemTime)> {
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| {
                let name = e.file_name().into_string().unwrap();
                (name, e.metadata().unwrap().modified().unwrap())
            })
            .collect();
        files.sort();
        files
    }

    #[test]
    fn a_compiled_plugin_is_kept_on_disk_and_loaded_from_there_next_run() {
        let dir = tempfile::tempdir().unwrap();
        let first = PluginEngine::with_cache(Some(dir.path().into())).unwrap();
        first.compile(soft_404()).unwrap();
        let written = cwasm_files(dir.path());
        assert_eq!(written.len(), 1, "{written:?}");
        let key = spinneret_core::digest::sha256_hex(soft_404());
        assert!(written[0].0.starts_with(&key), "{written:?}");
        assert!(written[0].0.ends_with(".cwasm"), "{written:?}");

        // A second process (a new engine) maps the file, not rewriting it.
        let second = PluginEngine::with_cache(Some(dir.path().into())).unwrap();
        let component = second.compile(soft_404()).unwrap();
        assert_eq!(cwasm_files(dir.path()), written);
        let kind = crate::identify::identify(&second, &component).unwrap().kind;
        assert_eq!(kind, crate::identify::PluginKind::FetchHook);
    }

    #[test]
    fn a_damaged_cache_file_is_compiled_again_and_replaced() {
        let dir = tempfile::tempdir().unwrap();
        PluginEngine::with_cache(Some(dir.path().into()))
            .unwrap()
            .compile(soft_404())
            .unwrap();
        let (name, _) = cwasm_files(dir.path()).remove(0);
        let path = dir.path().join(&name);
        let good = std::fs::read(&path).unwrap();
        std::fs::write(&path, b"not compiled code").unwrap();

        let engine = PluginEngine::with_cache(Some(dir.path().into())).unwrap();
        engine.compile(soft_404()).unwrap();
        assert_eq!(std::fs::read(&path).unwrap().len(), good.len());
    }

    #[test]
    fn writing_sweeps_out_other_engines_files_and_wasmtime_s_old_cache() {
        let dir = tempfile::tempdir().unwrap();
        let stale = dir.path().join("0123-00000000deadbeef.cwasm");
        std::fs::write(&stale, b"compiled by another version").unwrap();
        std::fs::create_dir_all(dir.path().join("modules/wasmtime-48.0.8")).unwrap();
        std::fs::write(dir.path().join("modules/wasmtime-48.0.8/x"), b"old").unwrap();
        let unrelated = dir.path().join("notes.txt");
        std::fs::write(&unrelated, b"not ours to remove").unwrap();

        PluginEngine::with_cache(Some(dir.path().into()))
            .unwrap()
            .compile(soft_404())
            .unwrap();
        assert!(!stale.exists());
        assert!(!dir.path().join("modules").exists());
        assert!(unrelated.exists());
        assert_eq!(
            cwasm_files(dir.path())
                .iter()
                .filter(|(n, _)| n.ends_with(".cwasm"))
                .count(),
            1
        );
    }

    #[test]
    fn without_a_cache_directory_nothing_is_written() {
        let engine = PluginEngine::with_cache(None).unwrap();
        engine.compile(soft_404()).unwrap();
        // Compiled once per process all the same.
        engine.compile(soft_404()).unwrap();
        assert_eq!(engine.compiled.lock().unwrap().len(), 1);
    }
}
