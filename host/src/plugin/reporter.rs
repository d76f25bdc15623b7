//! Running a reporter plugin for one task: a fresh sandboxed instance per
//! task (so a failure never leaks into the next), a deadline on every call,
//! and failures reported with what the plugin overspent.

use super::bindings::reporter::exports::spinneret::plugin::reporter_api::Role;
use super::bindings::reporter::spinneret::plugin::types as wit;
use super::bindings::reporter::{Reporter, ReporterPre};
use super::engine::PluginEngine;
use super::state::{Grants, HostFetch, OutputDir, PluginState};
use crate::model::{Category, CheckResult};
use crate::parse::RefKind;
use std::path::PathBuf;
use std::sync::Arc;
use wasmtime::Store;
use wasmtime::component::{HasSelf, Linker};

/// A plugin call that failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("plugin {plugin} failed in {call}: {reason}")]
pub struct PluginFailure {
    /// The plugin.
    pub plugin: String,
    /// The call that failed (`configure`, `begin`, `finish`, …).
    pub call: String,
    /// What happened.
    pub reason: String,
}

/// A reporter ready to run.
pub struct ReporterPlugin {
    name: String,
    engine: Arc<PluginEngine>,
    pre: ReporterPre<PluginState>,
    config: String,
    grants: Grants,
    fetch: Option<HostFetch>,
}

/// What a reporter is told about one task.
pub struct TaskReport<'a> {
    /// The run.
    pub run: wit::RunInfo,
    /// The task.
    pub task: wit::TaskInfo,
    /// Every URL the task reached, with its role.
    pub results: &'a [(CheckResult, Option<String>)],
    /// The task's documents.
    pub documents: &'a [wit::Document],
    /// Findings about the task.
    pub findings: &'a [wit::Finding],
}

/// Convert a stored result for the plugin.
pub fn to_wit_result(r: &CheckResult) -> wit::CheckResult {
    wit::CheckResult {
        url: r.url.clone(),
        category: match r.category {
            Category::Ok => wit::Category::Ok,
            Category::Moved => wit::Category::Moved,
            Category::Broken => wit::Category::Broken,
            Category::Blocked => wit::Category::Blocked,
            Category::Avoided => wit::Category::Avoided,
            Category::NotChecked => wit::Category::NotChecked,
        },
        method: r.method.map(str::to_string),
        status: r.status,
        error: r.error.clone(),
        content_type: r.content_type.clone(),
        size: r.size,
        content_hash: r.content_hash.clone(),
        etag: r.etag.clone(),
        last_modified: r.last_modified.clone(),
        expires: r.expires.clone(),
        owner: r.owner.clone(),
        redirects: r
            .redirects
            .iter()
            .map(|h| wit::Hop {
                url: h.url.clone(),
                status: h.status,
            })
            .collect(),
        final_url: r.final_url.clone(),
        elapsed_ms: r.elapsed_ms,
        referrer: r.referrer.clone(),
        checked_at: r.checked_at,
    }
}

/// Convert a reference kind for the plugin.
pub fn to_wit_kind(k: RefKind) -> wit::RefKind {
    match k {
        RefKind::Anchor => wit::RefKind::Anchor,
        RefKind::Area => wit::RefKind::Area,
        RefKind::Image => wit::RefKind::Image,
        RefKind::Frame => wit::RefKind::Frame,
        RefKind::Iframe => wit::RefKind::Iframe,
        RefKind::Stylesheet => wit::RefKind::Stylesheet,
        RefKind::Icon => wit::RefKind::Icon,
        RefKind::Alternate => wit::RefKind::Alternate,
        RefKind::Link => wit::RefKind::Link,
        RefKind::Script => wit::RefKind::Script,
        RefKind::Object => wit::RefKind::Object,
        RefKind::Embed => wit::RefKind::Embed,
        RefKind::Form => wit::RefKind::Form,
        RefKind::Refresh => wit::RefKind::Refresh,
    }
}

fn to_role(role: Option<&str>) -> Role {
    match role {
        Some("document") => Role::Document,
        Some("avoided") => Role::Avoided,
        Some("not_checked") => Role::NotChecked,
        _ => Role::Leaf,
    }
}

impl ReporterPlugin {
    /// Prepare a reporter from a compiled component.
    pub fn new(
        name: &str,
        engine: Arc<PluginEngine>,
        component: &wasmtime::component::Component,
        config: serde_json::Value,
        grants: Grants,
        fetch: Option<HostFetch>,
    ) -> anyhow::Result<ReporterPlugin> {
        let mut linker: Linker<PluginState> = Linker::new(engine.engine());
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
        Reporter::add_to_linker::<PluginState, HasSelf<PluginState>>(&mut linker, |s| s)?;
        let pre = ReporterPre::new(linker.instantiate_pre(component)?)?;
        Ok(ReporterPlugin {
            name: name.to_string(),
            engine,
            pre,
            config: config.to_string(),
            grants,
            fetch,
        })
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn failure(
        &self,
        call: &str,
        store: &Store<PluginState>,
        err: wasmtime::Error,
    ) -> PluginFailure {
        let err: anyhow::Error = err.into();
        let state = store.data();
        let reason = if err.downcast_ref::<wasmtime::Trap>() == Some(&wasmtime::Trap::Interrupt) {
            format!(
                "cut off after its time limit of {:?} per call",
                self.grants.time
            )
        } else if state.memory.exceeded {
            format!(
                "cut off at its memory limit of {} MiB",
                self.grants.memory >> 20
            )
        } else if state.output.as_ref().is_some_and(|o| o.exceeded) {
            format!(
                "cut off at its output limit of {} bytes",
                self.grants.output
            )
        } else {
            format!("trapped: {}", err.root_cause())
        };
        PluginFailure {
            plugin: self.name.clone(),
            call: call.to_string(),
            reason,
        }
    }

    /// Run the reporter for one task, writing into `output_dir`.
    pub fn report(&self, task: &TaskReport<'_>, output_dir: PathBuf) -> Result<(), PluginFailure> {
        let state = PluginState::new(
            &self.name,
            &self.grants,
            Some(OutputDir::new(output_dir, self.grants.output)),
            self.fetch.clone(),
        );
        let mut store = Store::new(self.engine.engine(), state);
        store.limiter(|s| &mut s.memory);
        store.epoch_deadline_trap();
        let ticks = PluginEngine::ticks(self.grants.time);
        store.set_epoch_deadline(ticks);
        let bindings = self
            .pre
            .instantiate(&mut store)
            .map_err(|e| self.failure("instantiate", &store, e))?;
        let api = bindings.spinneret_plugin_reporter_api();
        let refused = |call: &str, e: wit::PluginError| PluginFailure {
            plugin: self.name.clone(),
            call: call.to_string(),
            reason: e.message,
        };
        macro_rules! call {
            ($name:literal, $e:expr) => {{
                store.set_epoch_deadline(ticks);
                $e.map_err(|e| self.failure($name, &store, e))?
            }};
        }
        call!("configure", api.call_configure(&mut store, &self.config))
            .map_err(|e| refused("configure", e))?;
        call!("begin", api.call_begin(&mut store, &task.run, &task.task))
            .map_err(|e| refused("begin", e))?;
        for (r, role) in task.results {
            call!(
                "on-result",
                api.call_on_result(&mut store, &to_wit_result(r), to_role(role.as_deref()))
            );
        }
        for d in task.documents {
            let outcome = task
                .results
                .iter()
                .find(|(r, _)| r.url == d.url)
                .map(|(r, _)| to_wit_result(r))
                .ok_or_else(|| PluginFailure {
                    plugin: self.name.clone(),
                    call: "on-document".into(),
                    reason: format!("no result for document {}", d.url),
                })?;
            call!("on-document", api.call_on_document(&mut store, d, &outcome));
        }
        for f in task.findings {
            call!("on-finding", api.call_on_finding(&mut store, f));
        }
        call!("finish", api.call_finish(&mut store)).map_err(|e| refused("finish", e))?;
        Ok(())
    }
}
