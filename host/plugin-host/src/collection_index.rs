//! Running a collection-index plugin (WebSnatcher's index, seed 004
//! Figure 1): a fresh sandboxed instance per run, with the mirror as its
//! output directory; the files it appends to replace their old versions
//! only when `write-index` returns without error.

use super::api::ApiVersion;
pub use super::bindings::collection_index::exports::spinneret::plugin::collection_index_api::{
    Change, Collection, FoundBy, GonePage, Interest, MainPage,
};
use super::bindings::collection_index::{CollectionIndex, CollectionIndexPre};
use super::capabilities::{OutputDir, PluginState};
use super::sandbox::{PluginFailure, Sandbox};
use std::path::PathBuf;
use wasmtime::component::HasSelf;

/// A collection-index plugin ready to run.
pub struct CollectionIndexPlugin {
    sandbox: Sandbox,
    pre: CollectionIndexPre<PluginState>,
}

impl CollectionIndexPlugin {
    /// Prepare a collection index from a compiled component. The world is
    /// new in plugin API 0.3.0: a component that claims an older version
    /// is refused.
    pub fn new(
        sandbox: Sandbox,
        component: &wasmtime::component::Component,
    ) -> wasmtime::Result<CollectionIndexPlugin> {
        if sandbox.api_of(component)? != ApiVersion::V0_3 {
            wasmtime::bail!("the `collection-index` world exists since plugin API 0.3.0");
        }
        let mut linker = sandbox.linker()?;
        CollectionIndex::add_to_linker::<PluginState, HasSelf<PluginState>>(&mut linker, |s| s)?;
        let pre = CollectionIndexPre::new(linker.instantiate_pre(component)?)?;
        Ok(CollectionIndexPlugin { sandbox, pre })
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        self.sandbox.name()
    }

    /// A fresh instance in `store`, configured.
    fn configured(
        &self,
        store: &mut wasmtime::Store<PluginState>,
    ) -> Result<CollectionIndex, PluginFailure> {
        let sb = &self.sandbox;
        let b = sb.call(store, "instantiate", |s| self.pre.instantiate(s))?;
        let api = b.spinneret_plugin_collection_index_api();
        sb.call(store, "configure", |s| api.call_configure(s, sb.config()))?
            .map_err(|e| sb.failed("configure", e.message))?;
        Ok(b)
    }

    /// Instantiate the plugin and call its `configure` only (no output
    /// directory): whether it accepts its configuration.
    pub fn configure_only(&self) -> Result<(), PluginFailure> {
        let mut store = self.sandbox.store(None);
        self.configured(&mut store).map(drop)
    }

    /// Have the plugin write the index of `run` at each of `paths` in
    /// `mirror` (at most `output_cap` bytes in all).
    pub fn write_index(
        &self,
        run: &Collection,
        pages: &[MainPage],
        gone: &[GonePage],
        paths: &[String],
        mirror: PathBuf,
        output_cap: u64,
    ) -> Result<(), PluginFailure> {
        let sb = &self.sandbox;
        let mut store = sb.store(Some(OutputDir::new(mirror, output_cap)));
        let b = self.configured(&mut store)?;
        let api = b.spinneret_plugin_collection_index_api();
        sb.call(&mut store, "write-index", |s| {
            api.call_write_index(s, run, pages, gone, paths)
        })?
        .map_err(|e| sb.failed("write-index", e.message))?;
        match store.data_mut().output.as_mut() {
            Some(out) => out.commit().map_err(|e| sb.failed("write-index", e)),
            None => Ok(()),
        }
    }
}
