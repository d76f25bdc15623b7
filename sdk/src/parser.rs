//! Parsers for formats the host does not parse itself (the `parser` world).
//!
//! Implement [`Parser`] and call [`export_parser!`](crate::export_parser).

/// The generated bindings of the `parser` world.
#[allow(missing_docs, clippy::all)]
pub mod bindings {
    kind_bindings!(
        "parser",
        "export_parser_bindings",
        "spinneret_sdk::parser::bindings"
    );
}

pub use crate::types::*;
pub use bindings::exports::spinneret::plugin::parser_api::Parsed;

/// A parser.
pub trait Parser: Sized + 'static {
    /// Build the parser from its configuration; an error is shown to the user.
    fn configure(config: serde_json::Value) -> Result<Self, String>;
    /// Whether this parser reads a resource of `content_type` at `url`.
    fn accepts(&self, content_type: &str, url: &str) -> bool;
    /// Parse a fetched resource into references (absolute URLs) and metadata.
    fn parse(&mut self, url: &str, content_type: &str, body: &[u8]) -> Result<Parsed, String>;
}

/// Export a [`Parser`] implementation as the component's `parser-api`.
#[macro_export]
macro_rules! export_parser {
    ($t:ty) => {
        #[doc(hidden)]
        pub struct __SpinneretParserExport;

        $crate::__plugin_state!($t, $crate::parser::Parser);

        impl $crate::parser::bindings::exports::spinneret::plugin::parser_api::Guest
            for __SpinneretParserExport
        {
            fn configure(config: String) -> ::std::result::Result<(), $crate::types::PluginError> {
                __spinneret_configure(&config)
            }
            fn accepts(content_type: String, url: String) -> bool {
                __spinneret_with(|p| $crate::parser::Parser::accepts(p, &content_type, &url))
                    .unwrap_or(false)
            }
            fn parse(
                url: String,
                content_type: String,
                body: ::std::vec::Vec<u8>,
            ) -> ::std::result::Result<$crate::parser::Parsed, $crate::types::PluginError> {
                __spinneret_with(|p| $crate::parser::Parser::parse(p, &url, &content_type, &body))?
                    .map_err(|message| $crate::types::PluginError { message })
            }
        }

        #[cfg(target_arch = "wasm32")]
        $crate::parser::bindings::export_parser_bindings!(__SpinneretParserExport);
    };
}
