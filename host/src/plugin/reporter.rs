//! Running a reporter plugin for one task: a fresh sandboxed instance per
//! task (so a failure never leaks into the next), a deadline on every call,
//! and failures reported with what the plugin overspent.

use super::bindings::reporter::exports::spinneret::plugin::reporter_api::{
    Reached, Role, TaskDocument,
};
use super::bindings::reporter::spinneret::plugin::types as wit;
use super::bindings::reporter::{Reporter, ReporterPre};
pub use super::sandbox::PluginFailure;
use super::sandbox::Sandbox;
use super::state::{OutputDir, PluginState};
use crate::model::{Category, CheckResult};
use crate::parse::RefKind;
use std::path::PathBuf;
use wasmtime::component::HasSelf;

/// How many results, documents or findings a reporter is handed in one call.
const BATCH: usize = 256;

/// A reporter ready to run.
pub struct ReporterPlugin {
    sandbox: Sandbox,
    pre: ReporterPre<PluginState>,
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

/// The plugins' record of a task.
pub fn task_info(task: &crate::config::TaskConfig) -> wit::TaskInfo {
    wit::TaskInfo {
        name: task.name.clone(),
        kind: match task.kind {
            crate::config::TaskKind::Site => wit::TaskKind::Site,
            crate::config::TaskKind::Tree => wit::TaskKind::Tree,
            crate::config::TaskKind::Owner => wit::TaskKind::Owner,
        },
        top: task.top.to_string(),
        email: task.email.clone(),
        changed_days: task.changed_days,
        expiring_days: task.expiring_days,
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
        sandbox: Sandbox,
        component: &wasmtime::component::Component,
    ) -> anyhow::Result<ReporterPlugin> {
        let mut linker = sandbox.linker()?;
        Reporter::add_to_linker::<PluginState, HasSelf<PluginState>>(&mut linker, |s| s)?;
        let pre = ReporterPre::new(linker.instantiate_pre(component)?)?;
        Ok(ReporterPlugin { sandbox, pre })
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        self.sandbox.name()
    }

    /// Instantiate the reporter and call its `configure` only (no output
    /// directory): whether it accepts its configuration.
    pub fn configure_only(&self) -> Result<(), PluginFailure> {
        let sb = &self.sandbox;
        let mut store = sb.store(None);
        let bindings = sb.call(&mut store, "instantiate", |s| self.pre.instantiate(s))?;
        let api = bindings.spinneret_plugin_reporter_api();
        sb.call(&mut store, "configure", |s| {
            api.call_configure(s, sb.config())
        })?
        .map_err(|e| sb.failed("configure", e.message))
    }

    /// Run the reporter for one task, writing into `output_dir`, in a fresh
    /// instance (a failure never leaks into the next task).
    pub fn report(&self, task: &TaskReport<'_>, output_dir: PathBuf) -> Result<(), PluginFailure> {
        let sb = &self.sandbox;
        let mut store = sb.store(Some(OutputDir::new(output_dir, sb.grants().output)));
        let bindings = sb.call(&mut store, "instantiate", |s| self.pre.instantiate(s))?;
        let api = bindings.spinneret_plugin_reporter_api();
        let refused = |call: &str, e: wit::PluginError| sb.failed(call, e.message);
        sb.call(&mut store, "configure", |s| {
            api.call_configure(s, sb.config())
        })?
        .map_err(|e| refused("configure", e))?;
        sb.call(&mut store, "begin", |s| {
            api.call_begin(s, &task.run, &task.task)
        })?
        .map_err(|e| refused("begin", e))?;
        for batch in task.results.chunks(BATCH) {
            let results: Vec<Reached> = batch
                .iter()
                .map(|(r, role)| Reached {
                    outcome: to_wit_result(r),
                    role: to_role(role.as_deref()),
                })
                .collect();
            sb.call(&mut store, "on-results", |s| {
                api.call_on_results(s, &results)
            })?;
        }
        let by_url: std::collections::HashMap<&str, &CheckResult> = task
            .results
            .iter()
            .map(|(r, _)| (r.url.as_str(), r))
            .collect();
        for batch in task.documents.chunks(BATCH) {
            let documents = batch
                .iter()
                .map(|d| {
                    let outcome = by_url.get(d.url.as_str()).ok_or_else(|| {
                        sb.failed("on-documents", format!("no result for document {}", d.url))
                    })?;
                    Ok(TaskDocument {
                        document: d.clone(),
                        outcome: to_wit_result(outcome),
                    })
                })
                .collect::<Result<Vec<_>, PluginFailure>>()?;
            sb.call(&mut store, "on-documents", |s| {
                api.call_on_documents(s, &documents)
            })?;
        }
        for batch in task.findings.chunks(BATCH) {
            sb.call(&mut store, "on-findings", |s| {
                api.call_on_findings(s, batch)
            })?;
        }
        sb.call(&mut store, "finish", |s| api.call_finish(s))?
            .map_err(|e| refused("finish", e))?;
        Ok(())
    }
}
