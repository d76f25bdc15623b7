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

use super::bindings::since_v0_3_0::collection_index::exports::spinneret::plugin::collection_index_api as v3;
use super::bindings::since_v0_3_0::collection_index::{
    CollectionIndex as CollectionIndex3, CollectionIndexPre as CollectionIndexPre3,
};
use super::bindings::since_v0_4_0::collection_index::exports::spinneret::plugin::collection_index_api as v4;
use super::bindings::since_v0_4_0::collection_index::{
    CollectionIndex as CollectionIndex4, CollectionIndexPre as CollectionIndexPre4,
};

/// A collection-index plugin ready to run.
pub struct CollectionIndexPlugin {
    sandbox: Sandbox,
    pre: Pre,
}

/// The pre-instantiated component, under the API version it was built against.
enum Pre {
    V0_3(CollectionIndexPre3<PluginState>),
    V0_4(CollectionIndexPre4<PluginState>),
    V0_5(CollectionIndexPre<PluginState>),
}

/// A run, its pages and its gone pages as an older plugin API (`$old`:
/// `v3` or `v4`) types them (the same records, generated apart).
macro_rules! to_older {
    ($old:ident, $run:expr, $pages:expr, $gone:expr) => {{
        use $old as old;
        let (run, pages, gone): (&Collection, &[MainPage], &[GonePage]) = ($run, $pages, $gone);
        let run = old::Collection {
            id: run.id,
            profile: run.profile.clone(),
            started_at: run.started_at,
            warc: run.warc.clone(),
            interests: run
                .interests
                .iter()
                .map(|i| old::Interest {
                    category: i.category.clone(),
                    engines: i.engines.clone(),
                })
                .collect(),
            host_version: run.host_version.clone(),
        };
        let pages: Vec<old::MainPage> = pages
            .iter()
            .map(|p| old::MainPage {
                category: p.category.clone(),
                url: p.url.clone(),
                title: p.title.clone(),
                local: p.local.clone(),
                bytes: p.bytes,
                found_by: p
                    .found_by
                    .iter()
                    .map(|f| old::FoundBy {
                        engine: f.engine.clone(),
                        rank: f.rank,
                    })
                    .collect(),
                change: match p.change {
                    Change::New => old::Change::New,
                    Change::Changed => old::Change::Changed,
                    Change::Unchanged => old::Change::Unchanged,
                    Change::NotRetrieved => old::Change::NotRetrieved,
                    Change::Carried => old::Change::Carried,
                },
                findings: p.findings.clone(),
                problem: p.problem.clone(),
            })
            .collect();
        let gone: Vec<old::GonePage> = gone
            .iter()
            .map(|g| old::GonePage {
                category: g.category.clone(),
                url: g.url.clone(),
                title: g.title.clone(),
            })
            .collect();
        (run, pages, gone)
    }};
}

/// Instantiate `$pre` in `$store` and call its `configure`, then `$then`
/// with the bound instance's interface; the same code for each version.
macro_rules! configured {
    ($sb:expr, $store:expr, $pre:expr, |$api:ident| $then:expr) => {{
        let sb = $sb;
        let b = sb.call($store, "instantiate", |s| $pre.instantiate(s))?;
        let $api = b.spinneret_plugin_collection_index_api();
        sb.call($store, "configure", |s| $api.call_configure(s, sb.config()))?
            .map_err(|e| sb.failed("configure", e.message))?;
        $then
    }};
}

impl CollectionIndexPlugin {
    /// Prepare a collection index from a compiled component. The world is
    /// new in plugin API 0.3.0: a component that claims an older version
    /// is refused.
    pub fn new(
        sandbox: Sandbox,
        component: &wasmtime::component::Component,
    ) -> wasmtime::Result<CollectionIndexPlugin> {
        let mut linker = sandbox.linker()?;
        let pre = match sandbox.api_of(component)? {
            ApiVersion::V0_2 => {
                wasmtime::bail!("the `collection-index` world exists since plugin API 0.3.0")
            }
            ApiVersion::V0_3 => {
                CollectionIndex3::add_to_linker::<PluginState, HasSelf<PluginState>>(
                    &mut linker,
                    |s| s,
                )?;
                Pre::V0_3(CollectionIndexPre3::new(
                    linker.instantiate_pre(component)?,
                )?)
            }
            ApiVersion::V0_4 => {
                CollectionIndex4::add_to_linker::<PluginState, HasSelf<PluginState>>(
                    &mut linker,
                    |s| s,
                )?;
                Pre::V0_4(CollectionIndexPre4::new(
                    linker.instantiate_pre(component)?,
                )?)
            }
            ApiVersion::V0_5 => {
                CollectionIndex::add_to_linker::<PluginState, HasSelf<PluginState>>(
                    &mut linker,
                    |s| s,
                )?;
                Pre::V0_5(CollectionIndexPre::new(linker.instantiate_pre(component)?)?)
            }
        };
        Ok(CollectionIndexPlugin { sandbox, pre })
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        self.sandbox.name()
    }

    /// Instantiate the plugin and call its `configure` only (no output
    /// directory): whether it accepts its configuration.
    pub fn configure_only(&self) -> Result<(), PluginFailure> {
        let mut store = self.sandbox.store(None);
        let store = &mut store;
        match &self.pre {
            Pre::V0_3(pre) => configured!(&self.sandbox, store, pre, |_api| Ok(())),
            Pre::V0_4(pre) => configured!(&self.sandbox, store, pre, |_api| Ok(())),
            Pre::V0_5(pre) => configured!(&self.sandbox, store, pre, |_api| Ok(())),
        }
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
        let store = &mut store;
        let written = match &self.pre {
            Pre::V0_3(pre) => {
                let (run, pages, gone) = to_older!(v3, run, pages, gone);
                configured!(sb, &mut *store, pre, |api| sb.call(
                    store,
                    "write-index",
                    |s| { api.call_write_index(s, &run, &pages, &gone, paths) }
                )?)
            }
            Pre::V0_4(pre) => {
                let (run, pages, gone) = to_older!(v4, run, pages, gone);
                configured!(sb, &mut *store, pre, |api| sb.call(
                    store,
                    "write-index",
                    |s| { api.call_write_index(s, &run, &pages, &gone, paths) }
                )?)
            }
            Pre::V0_5(pre) => configured!(sb, &mut *store, pre, |api| sb.call(
                store,
                "write-index",
                |s| { api.call_write_index(s, run, pages, gone, paths) }
            )?),
        };
        written.map_err(|e| sb.failed("write-index", e.message))?;
        match store.data_mut().output.as_mut() {
            Some(out) => out.commit().map_err(|e| sb.failed("write-index", e)),
            None => Ok(()),
        }
    }
}
