//! Collection indexes (the `collection-index` world, new in plugin API
//! 0.3.0): the page a person opens to browse a WebSnatcher mirror, written
//! once per run from the run's main pages, what became of each since the
//! last run and the pages gone.
//!
//! Implement [`CollectionIndex`] and call
//! [`export_collection_index!`](crate::export_collection_index). Write each
//! copy of the index with [`Output::append`]: the host puts the files in
//! place only when [`CollectionIndex::write_index`] succeeds, so a failure
//! leaves the last index as it was.

/// The generated bindings of the `collection-index` world.
#[allow(missing_docs, clippy::all)]
pub mod bindings {
    kind_bindings!(
        "collection-index",
        "export_collection_index_bindings",
        "spinneret_sdk::collection_index::bindings"
    );
}

pub use crate::output::{HostOutput, Output};
pub use crate::types::*;
pub use bindings::exports::spinneret::plugin::collection_index_api::{
    Change, Collection, FoundBy, GonePage, Interest, MainPage,
};

/// A collection index.
pub trait CollectionIndex: Sized + 'static {
    /// Build the index writer from its configuration (the profile's
    /// `[index]` table, as JSON); an error is shown to the user.
    fn configure(config: serde_json::Value) -> Result<Self, String>;
    /// Write the index of `run` at each of `paths` (relative to the
    /// mirror's root; the links of each copy relative to where it is), from
    /// its `pages` in the order asked and the last run's pages now `gone`.
    fn write_index(
        &mut self,
        run: &Collection,
        pages: &[MainPage],
        gone: &[GonePage],
        paths: &[String],
        out: &mut dyn Output,
    ) -> Result<(), String>;
}

impl Change {
    /// How an index says it: `new`, `changed`, `unchanged`, `not retrieved`,
    /// `carried`.
    pub fn as_str(self) -> &'static str {
        match self {
            Change::New => "new",
            Change::Changed => "changed",
            Change::Unchanged => "unchanged",
            Change::NotRetrieved => "not retrieved",
            Change::Carried => "carried",
        }
    }
}

/// Export a [`CollectionIndex`] implementation as the component's
/// `collection-index-api`.
#[macro_export]
macro_rules! export_collection_index {
    ($t:ty) => {
        #[doc(hidden)]
        pub struct __SpinneretCollectionIndexExport;

        $crate::__plugin_state!($t, $crate::collection_index::CollectionIndex);

        impl $crate::collection_index::bindings::exports::spinneret::plugin::collection_index_api::Guest
            for __SpinneretCollectionIndexExport
        {
            fn configure(
                config: String,
            ) -> ::std::result::Result<(), $crate::types::PluginError> {
                __spinneret_configure(&config)
            }
            fn write_index(
                run: $crate::collection_index::Collection,
                pages: ::std::vec::Vec<$crate::collection_index::MainPage>,
                gone: ::std::vec::Vec<$crate::collection_index::GonePage>,
                paths: ::std::vec::Vec<String>,
            ) -> ::std::result::Result<(), $crate::types::PluginError> {
                let mut out = $crate::collection_index::HostOutput::default();
                __spinneret_with(|x| {
                    $crate::collection_index::CollectionIndex::write_index(
                        x, &run, &pages, &gone, &paths, &mut out,
                    )
                    .and_then(|()| out.flush())
                })?
                .map_err(|message| $crate::types::PluginError { message })
            }
        }

        #[cfg(target_arch = "wasm32")]
        $crate::collection_index::bindings::export_collection_index_bindings!(
            __SpinneretCollectionIndexExport
        );
    };
}
