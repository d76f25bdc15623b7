//! # spinneret-sdk
//!
//! Everything a spinneret plugin author depends on:
//!
//! - the bindings to the `spinneret:plugin` WIT worlds (in `../wit/since_v0.5.0`, the newest API): the
//!   shared [`types`] always, and one module per plugin kind behind a cargo
//!   feature of the same name — [`reporter`](crate::reporter),
//!   `detector`, `fetch-hook`, `parser`, `policy`, `search-engine`;
//! - an ergonomic trait per kind with an export macro — implement
//!   `reporter::Reporter` for your type, call `export_reporter!`, build with
//!   `cargo build --release --target wasm32-wasip2`;
//! - helpers plugin authors would otherwise write by hand ([`html`],
//!   [`dates`], [`urls`]);
//! - wrappers for the host imports ([`log`], [`clock`], [`kv`], [`http`])
//!   that also work when the plugin's logic runs natively under `cargo test`
//!   (see [`testing`]).
//!
//! ```ignore
//! use spinneret_sdk::reporter::*;
//!
//! /// Lists the broken URLs of each task, one per line, as they come.
//! struct Broken;
//!
//! impl Reporter for Broken {
//!     fn configure(_config: serde_json::Value) -> Result<Self, String> { Ok(Broken) }
//!     fn begin(&mut self, _run: RunInfo, _task: TaskInfo, _counts: TaskCounts, out: &mut dyn Output) -> Result<(), String> {
//!         out.append("broken.txt", b"")
//!     }
//!     fn on_result(&mut self, r: CheckResult, _role: Role, out: &mut dyn Output) -> Result<(), String> {
//!         match r.category {
//!             Category::Broken => out.append("broken.txt", format!("{}\n", r.url).as_bytes()),
//!             _ => Ok(()),
//!         }
//!     }
//!     fn finish(&mut self, _out: &mut dyn Output) -> Result<(), String> { Ok(()) }
//! }
//!
//! spinneret_sdk::export_reporter!(Count);
//! ```

/// The bindings of one plugin kind's world, reusing the shared types and
/// host imports of [`bindings`].
macro_rules! kind_bindings {
    ($world:literal, $export_macro:literal, $module:literal) => {
        wit_bindgen::generate!({
            path: "../wit/since_v0.5.0",
            world: $world,
            with: {
                "spinneret:plugin/types@0.5.0": crate::bindings::spinneret::plugin::types,
                "spinneret:plugin/log@0.5.0": crate::bindings::spinneret::plugin::log,
                "spinneret:plugin/clock@0.5.0": crate::bindings::spinneret::plugin::clock,
                "spinneret:plugin/kv@0.5.0": crate::bindings::spinneret::plugin::kv,
                "spinneret:plugin/http@0.5.0": crate::bindings::spinneret::plugin::http,
            },
            pub_export_macro: true,
            export_macro_name: $export_macro,
            default_bindings_module: $module,
        });
    };
}

pub mod bindings;
#[cfg(feature = "collection-index")]
pub mod collection_index;
pub mod dates;
#[cfg(feature = "detector")]
pub mod detector;
#[cfg(feature = "fetch-hook")]
pub mod fetch_hook;
pub mod html;
pub mod http;
pub mod kv;
pub mod log;
pub mod names;
#[cfg(any(feature = "reporter", feature = "collection-index"))]
pub mod output;
#[cfg(feature = "parser")]
pub mod parser;
#[cfg(feature = "reporter")]
pub mod places;
#[cfg(feature = "policy")]
pub mod policy;
#[cfg(feature = "reporter")]
pub mod reporter;
#[cfg(feature = "search-engine")]
pub mod search;
pub mod settings;
pub mod testing;
pub mod urls;

/// The plugin API version this SDK builds against (the WIT package version).
pub const API_VERSION: &str = "0.5.0";

/// The types every plugin kind shares (`spinneret:plugin/types`).
pub mod types {
    pub use crate::bindings::spinneret::plugin::types::*;
}

/// A clock that reads the host's time in a plugin and the system's natively.
pub mod clock {
    /// Seconds since the Unix epoch.
    pub fn now() -> i64 {
        #[cfg(target_arch = "wasm32")]
        {
            crate::bindings::spinneret::plugin::clock::now()
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0)
        }
    }
}

/// The state behind an export macro: the plugin's value, made by its
/// `configure` and kept for the instance's life.
#[doc(hidden)]
#[macro_export]
macro_rules! __plugin_state {
    ($t:ty, $trait:path) => {
        ::std::thread_local! {
            static __SPINNERET_PLUGIN: ::std::cell::RefCell<::std::option::Option<$t>> =
                const { ::std::cell::RefCell::new(::std::option::Option::None) };
        }

        fn __spinneret_with<R>(
            f: impl FnOnce(&mut $t) -> R,
        ) -> ::std::result::Result<R, $crate::types::PluginError> {
            __SPINNERET_PLUGIN.with(|cell| match cell.borrow_mut().as_mut() {
                Some(p) => Ok(f(p)),
                None => Err($crate::types::PluginError {
                    message: "the host called the plugin before configure".into(),
                }),
            })
        }

        fn __spinneret_configure(
            config: &str,
        ) -> ::std::result::Result<(), $crate::types::PluginError> {
            use $trait as _;
            let value = $crate::testing::parse_config(config)
                .map_err(|message| $crate::types::PluginError { message })?;
            let p =
                <$t>::configure(value).map_err(|message| $crate::types::PluginError { message })?;
            __SPINNERET_PLUGIN.with(|cell| *cell.borrow_mut() = Some(p));
            Ok(())
        }
    };
}
