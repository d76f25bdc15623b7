//! Search engines (the `search-engine` world): the URL that asks an engine
//! for keywords, and the ranked hits of its result page.
//!
//! Implement [`SearchEngine`] and call
//! [`export_search_engine!`](crate::export_search_engine).

/// The generated bindings of the `search-engine` world.
#[allow(missing_docs, clippy::all)]
pub mod bindings {
    kind_bindings!(
        "search-engine",
        "export_search_engine_bindings",
        "spinneret_sdk::search::bindings"
    );
}

pub use crate::types::*;
pub use bindings::exports::spinneret::plugin::search_engine_api::{Hit, SearchOptions};

/// A search engine.
pub trait SearchEngine: Sized + 'static {
    /// Build the engine from its configuration (e.g. its base URL); an error
    /// is shown to the user.
    fn configure(config: serde_json::Value) -> Result<Self, String>;
    /// The URL that asks the engine for `keywords`.
    fn query_url(&self, keywords: &[String], options: &SearchOptions) -> Result<String, String>;
    /// The hits of a result page, best first.
    fn parse_results(&self, body: &[u8], content_type: &str) -> Result<Vec<Hit>, String>;
}

/// Export a [`SearchEngine`] implementation as the component's `search-engine-api`.
#[macro_export]
macro_rules! export_search_engine {
    ($t:ty) => {
        #[doc(hidden)]
        pub struct __SpinneretSearchExport;

        $crate::__plugin_state!($t, $crate::search::SearchEngine);

        impl $crate::search::bindings::exports::spinneret::plugin::search_engine_api::Guest
            for __SpinneretSearchExport
        {
            fn configure(config: String) -> ::std::result::Result<(), $crate::types::PluginError> {
                __spinneret_configure(&config)
            }
            fn query_url(
                keywords: ::std::vec::Vec<String>,
                options: $crate::search::SearchOptions,
            ) -> ::std::result::Result<String, $crate::types::PluginError> {
                __spinneret_with(|e| {
                    $crate::search::SearchEngine::query_url(e, &keywords, &options)
                })?
                .map_err(|message| $crate::types::PluginError { message })
            }
            fn parse_results(
                body: ::std::vec::Vec<u8>,
                content_type: String,
            ) -> ::std::result::Result<
                ::std::vec::Vec<$crate::search::Hit>,
                $crate::types::PluginError,
            > {
                __spinneret_with(|e| {
                    $crate::search::SearchEngine::parse_results(e, &body, &content_type)
                })?
                .map_err(|message| $crate::types::PluginError { message })
            }
        }

        #[cfg(target_arch = "wasm32")]
        $crate::search::bindings::export_search_engine_bindings!(__SpinneretSearchExport);
    };
}
