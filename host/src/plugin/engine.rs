//! The wasmtime engine shared by all plugins: component model on, epoch
//! interruption on (a background thread advances the epoch every
//! [`TICK`]), and compiled components kept for the process.

use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wasmtime::component::Component;
use wasmtime::{Config, Engine};

/// How often the epoch advances: the granularity of plugin deadlines.
pub const TICK: Duration = Duration::from_millis(10);

/// Where compiled plugins are kept between runs: `SPINNERET_CACHE_DIR`, else
/// the user's cache directory; `SPINNERET_CACHE_DIR=off` turns it off.
pub fn cache_dir() -> Option<std::path::PathBuf> {
    match std::env::var_os("SPINNERET_CACHE_DIR") {
        Some(v) if v == "off" => None,
        Some(v) if !v.is_empty() => Some(v.into()),
        _ => dirs::cache_dir().map(|d| d.join("spinneret").join("wasmtime")),
    }
}

/// wasmtime's on-disk cache of compiled code, so each plugin is compiled
/// once per version rather than once per run. Without a usable directory
/// plugins are simply compiled each run.
fn disk_cache() -> Option<wasmtime::Cache> {
    let dir = cache_dir()?;
    let mut config = wasmtime::CacheConfig::new();
    config.with_directory(&dir);
    match wasmtime::Cache::new(config) {
        Ok(c) => Some(c),
        Err(e) => {
            tracing::debug!("no compiled-plugin cache in {}: {e:#}", dir.display());
            None
        }
    }
}

/// The engine, its epoch ticker and the compiled components.
pub struct PluginEngine {
    engine: Engine,
    stop: Arc<AtomicBool>,
    ticker: Option<std::thread::JoinHandle<()>>,
    compiled: Mutex<HashMap<[u8; 32], Component>>,
}

impl PluginEngine {
    /// A new engine with its ticker thread.
    pub fn new() -> anyhow::Result<PluginEngine> {
        let mut config = Config::new();
        config.wasm_component_model(true);
        config.epoch_interruption(true);
        // For profiling plugins with `perf`: the compiled functions' names
        // go to /tmp/perf-PID.map, where `perf report` finds them.
        if std::env::var_os("SPINNERET_PLUGIN_PROFILE").is_some_and(|v| v == "perfmap") {
            config.profiler(wasmtime::ProfilingStrategy::PerfMap);
        }
        if let Some(cache) = disk_cache() {
            config.cache(Some(cache));
        }
        let engine = Engine::new(&config)?;
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
        })
    }

    /// The wasmtime engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Compile `bytes` (once per process for the same bytes).
    pub fn compile(&self, bytes: &[u8]) -> anyhow::Result<Component> {
        let key: [u8; 32] = Sha256::digest(bytes).into();
        if let Some(c) = self
            .compiled
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            return Ok(c.clone());
        }
        let component = Component::new(&self.engine, bytes)?;
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
