//! # spinneret-sdk
//!
//! Everything a spinneret plugin author depends on:
//!
//! - the bindings to the `spinneret:plugin` WIT worlds (in `../wit`), one
//!   module per plugin kind;
//! - an ergonomic trait per kind with an export macro — implement
//!   [`reporter::Reporter`] for your type, call [`export_reporter!`], build with
//!   `cargo build --release --target wasm32-wasip2`;
//! - helpers plugin authors would otherwise write by hand ([`html`], [`dates`]);
//! - wrappers for the host imports ([`log`], [`clock`]) that also work when the
//!   plugin's logic runs natively under `cargo test` (see [`testing`]).
//!
//! ```ignore
//! use spinneret_sdk::reporter::{Reporter, Output, RunInfo, TaskInfo, CheckResult, Role};
//!
//! struct Count { n: usize }
//!
//! impl Reporter for Count {
//!     fn configure(_config: serde_json::Value) -> Result<Self, String> { Ok(Count { n: 0 }) }
//!     fn begin(&mut self, _run: RunInfo, _task: TaskInfo) -> Result<(), String> { self.n = 0; Ok(()) }
//!     fn on_result(&mut self, _outcome: CheckResult, _role: Role) { self.n += 1; }
//!     fn finish(&mut self, out: &mut dyn Output) -> Result<(), String> {
//!         out.write("count.txt", self.n.to_string().as_bytes())
//!     }
//! }
//!
//! spinneret_sdk::export_reporter!(Count);
//! ```

pub mod dates;
pub mod html;
pub mod log;
#[cfg(feature = "reporter")]
pub mod reporter;
pub mod testing;

/// The plugin API version this SDK builds against (the WIT package version).
pub const API_VERSION: &str = "0.1.0";

/// A clock that reads the host's time in a plugin and the system's natively.
pub mod clock {
    /// Seconds since the Unix epoch.
    pub fn now() -> i64 {
        #[cfg(all(target_arch = "wasm32", feature = "reporter"))]
        {
            crate::reporter::bindings::spinneret::plugin::clock::now()
        }
        #[cfg(not(all(target_arch = "wasm32", feature = "reporter")))]
        {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0)
        }
    }
}
