//! Running a reporter plugin for one task: a fresh sandboxed instance per
//! task (so a failure never leaks into the next), a deadline on every call,
//! and failures reported with what the plugin overspent. A task's report is
//! a [`ReporterSession`]: begun with the task's counts, fed results,
//! documents and findings in batches, and finished; the files the reporter
//! appended to replace their old versions only when it finishes well.

pub use super::bindings::reporter::exports::spinneret::plugin::reporter_api::{
    Place, Reached, Role, Target, TaskCounts, TaskDocument, TaskFinding, Wants,
};
use super::bindings::reporter::spinneret::plugin::types as wit;
use super::bindings::reporter::{Reporter, ReporterPre};
use super::capabilities::{OutputDir, PluginState};
pub use super::sandbox::PluginFailure;
use super::sandbox::Sandbox;
use spinneret_core::document::RefKind;
use spinneret_core::model::{Category, CheckResult};
use spinneret_core::model::{TaskKind, TaskRecord};
use std::path::PathBuf;
use wasmtime::component::HasSelf;

/// A reporter ready to run.
#[derive(Clone)]
pub struct ReporterPlugin {
    sandbox: Sandbox,
    pre: ReporterPre<PluginState>,
}

/// One task's report in the making: a live instance of the reporter.
pub struct ReporterSession {
    /// What it wants handed over.
    pub wants: Wants,
    sandbox: Sandbox,
    store: wasmtime::Store<PluginState>,
    bindings: Reporter,
}

/// Convert a stored result for the plugin.
pub fn to_wit_result(r: &CheckResult) -> wit::CheckResult {
    wit::CheckResult {
        url: r.url.clone(),
        category: to_wit_category(r.category),
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
pub fn task_info(task: &TaskRecord<'_>) -> wit::TaskInfo {
    wit::TaskInfo {
        name: task.name.to_string(),
        kind: match task.kind {
            TaskKind::Site => wit::TaskKind::Site,
            TaskKind::Tree => wit::TaskKind::Tree,
            TaskKind::Owner => wit::TaskKind::Owner,
        },
        top: task.top.to_string(),
        email: task.email.map(str::to_string),
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

/// A task's role for a URL, for the plugin.
pub fn to_role(role: &str) -> Role {
    match role {
        "document" => Role::Document,
        "avoided" => Role::Avoided,
        "not_checked" => Role::NotChecked,
        _ => Role::Leaf,
    }
}

/// A category, for the plugin.
pub fn to_wit_category(c: Category) -> wit::Category {
    match c {
        Category::Ok => wit::Category::Ok,
        Category::Moved => wit::Category::Moved,
        Category::Broken => wit::Category::Broken,
        Category::Blocked => wit::Category::Blocked,
        Category::Avoided => wit::Category::Avoided,
        Category::NotChecked => wit::Category::NotChecked,
    }
}

impl ReporterPlugin {
    /// Prepare a reporter from a compiled component.
    pub fn new(
        sandbox: Sandbox,
        component: &wasmtime::component::Component,
    ) -> wasmtime::Result<ReporterPlugin> {
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

    /// Begin the report of one task, writing into `output_dir` at most
    /// `output_cap` bytes, in a fresh instance (a failure never leaks into
    /// the next task).
    pub fn begin(
        &self,
        run: &wit::RunInfo,
        task: &wit::TaskInfo,
        counts: &TaskCounts,
        output_dir: PathBuf,
        output_cap: u64,
    ) -> Result<ReporterSession, PluginFailure> {
        let sb = &self.sandbox;
        let mut store = sb.store(Some(OutputDir::new(output_dir, output_cap)));
        let bindings = sb.call(&mut store, "instantiate", |s| self.pre.instantiate(s))?;
        let api = bindings.spinneret_plugin_reporter_api();
        let refused = |call: &str, e: wit::PluginError| sb.failed(call, e.message);
        sb.call(&mut store, "configure", |s| {
            api.call_configure(s, sb.config())
        })?
        .map_err(|e| refused("configure", e))?;
        let wants = sb
            .call(&mut store, "begin", |s| {
                api.call_begin(s, run, task, counts)
            })?
            .map_err(|e| refused("begin", e))?;
        Ok(ReporterSession {
            wants,
            sandbox: sb.clone(),
            store,
            bindings,
        })
    }
}

impl ReporterSession {
    /// The reporter's name.
    pub fn name(&self) -> &str {
        self.sandbox.name()
    }

    /// Hand over URLs the task reached (in URL order, each once).
    pub fn results(&mut self, batch: &[Reached]) -> Result<(), PluginFailure> {
        let api = self.bindings.spinneret_plugin_reporter_api();
        self.sandbox.call(&mut self.store, "on-results", |s| {
            api.call_on_results(s, batch)
        })
    }

    /// Hand over documents of the task (or parts of them), in URL order.
    pub fn documents(&mut self, batch: &[TaskDocument]) -> Result<(), PluginFailure> {
        let api = self.bindings.spinneret_plugin_reporter_api();
        self.sandbox.call(&mut self.store, "on-documents", |s| {
            api.call_on_documents(s, batch)
        })
    }

    /// Hand over findings of the task, grouped by kind.
    pub fn findings(&mut self, batch: &[TaskFinding]) -> Result<(), PluginFailure> {
        let api = self.bindings.spinneret_plugin_reporter_api();
        self.sandbox.call(&mut self.store, "on-findings", |s| {
            api.call_on_findings(s, batch)
        })
    }

    /// Finish the report: the files the reporter appended to replace their
    /// old versions. (A session dropped unfinished throws them away.)
    pub fn finish(mut self) -> Result<(), PluginFailure> {
        let sb = &self.sandbox;
        let api = self.bindings.spinneret_plugin_reporter_api();
        sb.call(&mut self.store, "finish", |s| api.call_finish(s))?
            .map_err(|e| sb.failed("finish", e.message))?;
        match self.store.data_mut().output.as_mut() {
            Some(out) => out.commit().map_err(|e| sb.failed("finish", e)),
            None => Ok(()),
        }
    }
}
