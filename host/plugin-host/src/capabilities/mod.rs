//! What a plugin instance may touch, one capability per module in the manner
//! of Spin's factors: each owns its state and implements its WIT import.
//! [`PluginState`] gathers them for one instance's store with its sandboxed
//! WASI context (no files, no environment, no sockets) and its memory cap.
//!
//! - [`log`] and [`clock`]: the plugin's log lines, the host's time;
//! - [`kv`]: the plugin's key-value space, kept in the store across runs;
//! - [`http`]: GET through the crawl's polite fetcher, for granted hosts only;
//! - [`output`]: a reporter's output directory, with a byte cap.
//!
//! Each is written once, against the newest API; plugins built against
//! plugin APIs 0.2.0 and 0.3.0 reach the same code through `older`.

pub mod clock;
pub mod http;
pub mod kv;
pub mod log;
mod older;
pub mod output;

pub use http::{HostHttp, HttpAnswer, PluginHttp};
pub use kv::KvSpace;
pub use output::OutputDir;
pub use spinneret_core::grants::Grants;

use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

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
    /// When the call under way must end: its time allowance from when it
    /// began ([`crate::sandbox::Sandbox::arm`]); host calls that block
    /// (the `http` capability) are given up then.
    pub deadline: std::time::Instant,
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
            deadline: std::time::Instant::now() + grants.time,
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
