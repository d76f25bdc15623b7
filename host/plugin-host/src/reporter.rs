//! Running a reporter plugin for one task: a fresh sandboxed instance per
//! task (so a failure never leaks into the next), a deadline on every call,
//! and failures reported with what the plugin overspent. A task's report is
//! a [`ReporterSession`]: begun with the task's counts, fed results,
//! documents and findings in batches, and finished; the files the reporter
//! appended to replace their old versions only when it finishes well.

use super::api::ApiVersion;
pub use super::bindings::reporter::exports::spinneret::plugin::reporter_api::{
    Place, Reached, Role, Target, TaskCounts, TaskDocument, TaskFinding, Wants,
};
use super::bindings::reporter::spinneret::plugin::types as wit;
use super::bindings::reporter::{Reporter, ReporterPre};
use super::bindings::since_v0_2_0::reporter::exports::spinneret::plugin::reporter_api as v2;
use super::bindings::since_v0_2_0::reporter::{Reporter as Reporter2, ReporterPre as ReporterPre2};
use super::bindings::since_v0_3_0::reporter::exports::spinneret::plugin::reporter_api as v3;
use super::bindings::since_v0_3_0::reporter::{Reporter as Reporter3, ReporterPre as ReporterPre3};
use super::bindings::since_v0_4_0::reporter::exports::spinneret::plugin::reporter_api as v4;
use super::bindings::since_v0_4_0::reporter::{Reporter as Reporter4, ReporterPre as ReporterPre4};
use super::capabilities::{OutputDir, PluginState};
use super::runner::same_flags;
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
    pre: Pre,
}

/// A reporter linked against the world of its API version.
#[derive(Clone)]
enum Pre {
    V0_2(ReporterPre2<PluginState>),
    V0_3(ReporterPre3<PluginState>),
    V0_4(ReporterPre4<PluginState>),
    V0_5(ReporterPre<PluginState>),
}

/// A live instance of a reporter, of its API version.
enum Bound {
    V0_2(Reporter2),
    V0_3(Reporter3),
    V0_4(Reporter4),
    V0_5(Reporter),
}

/// One task's report in the making: a live instance of the reporter.
pub struct ReporterSession {
    /// What it wants handed over.
    pub wants: Wants,
    sandbox: Sandbox,
    store: wasmtime::Store<PluginState>,
    bindings: Bound,
}

/// Convert a stored result for the plugin.
pub fn to_wit_result(r: &CheckResult) -> wit::CheckResult {
    into_wit_result(r.clone())
}

/// Convert a stored result for the plugin, moving its strings (the report
/// stage converts every result of a run: no copy of each).
pub fn into_wit_result(r: CheckResult) -> wit::CheckResult {
    wit::CheckResult {
        url: r.url,
        category: to_wit_category(r.category),
        method: r.method.map(str::to_string),
        status: r.status,
        error: r.error,
        content_type: r.content_type,
        size: r.size,
        content_hash: r.content_hash,
        etag: r.etag,
        last_modified: r.last_modified,
        expires: r.expires,
        owner: r.owner,
        redirects: r
            .redirects
            .into_iter()
            .map(|h| wit::Hop {
                url: h.url,
                status: h.status,
            })
            .collect(),
        final_url: r.final_url,
        elapsed_ms: r.elapsed_ms,
        referrer: r.referrer,
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
            // The API (0.2, 0.3) has no `web` case: a Worm's task, bounded
            // by depth on any host, is told as the nearest, `site`.
            TaskKind::Web => wit::TaskKind::Site,
            // Nor a `library` case: the library's published pages are
            // traversed as a tree.
            TaskKind::Library => wit::TaskKind::Tree,
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

/// Match on a live instance: `$older` runs for a 0.2, 0.3 or 0.4
/// reporter, with `$api` its interface and `$old` the module of its
/// version's reporter types (the same items under the same names, so the
/// code is written once and converts field by field); `$newest` for a 0.5
/// one. Where 0.4's items differ from 0.2's and 0.3's (`wants` has
/// `lines`, a `task-document` its lines), the second form gives 0.4 an
/// arm of its own, `$v4`.
macro_rules! by_version {
    ($bound:expr, |$api:ident, $old:ident| $older:expr, |$napi:ident| $newest:expr $(,)?) => {
        by_version!($bound, |$api, $old| $older, |$api, $old| $older, |$napi| {
            $newest
        })
    };
    (
        $bound:expr,
        |$api:ident, $old:ident| $older:expr,
        |$api4:ident, $old4:ident| $v4:expr,
        |$napi:ident| $newest:expr $(,)?
    ) => {
        match $bound {
            Bound::V0_2(b) => {
                let $api = b.spinneret_plugin_reporter_api();
                #[allow(unused_imports)]
                use v2 as $old;
                $older
            }
            Bound::V0_3(b) => {
                let $api = b.spinneret_plugin_reporter_api();
                #[allow(unused_imports)]
                use v3 as $old;
                $older
            }
            Bound::V0_4(b) => {
                let $api4 = b.spinneret_plugin_reporter_api();
                #[allow(unused_imports)]
                use v4 as $old4;
                $v4
            }
            Bound::V0_5(b) => {
                let $napi = b.spinneret_plugin_reporter_api();
                $newest
            }
        }
    };
}

/// A role as an older version's module `$old` types it.
macro_rules! old_role {
    ($old:ident, $role:expr) => {
        match $role {
            Role::Document => $old::Role::Document,
            Role::Leaf => $old::Role::Leaf,
            Role::Avoided => $old::Role::Avoided,
            Role::NotChecked => $old::Role::NotChecked,
        }
    };
}

impl ReporterPlugin {
    /// Link a compiled component against the reporter world of its API
    /// version.
    pub fn new(
        sandbox: Sandbox,
        component: &wasmtime::component::Component,
    ) -> wasmtime::Result<ReporterPlugin> {
        let mut linker = sandbox.linker()?;
        let pre = match sandbox.api_of(component)? {
            ApiVersion::V0_2 => {
                Reporter2::add_to_linker::<PluginState, HasSelf<PluginState>>(&mut linker, |s| s)?;
                Pre::V0_2(ReporterPre2::new(linker.instantiate_pre(component)?)?)
            }
            ApiVersion::V0_3 => {
                Reporter3::add_to_linker::<PluginState, HasSelf<PluginState>>(&mut linker, |s| s)?;
                Pre::V0_3(ReporterPre3::new(linker.instantiate_pre(component)?)?)
            }
            ApiVersion::V0_4 => {
                Reporter4::add_to_linker::<PluginState, HasSelf<PluginState>>(&mut linker, |s| s)?;
                Pre::V0_4(ReporterPre4::new(linker.instantiate_pre(component)?)?)
            }
            ApiVersion::V0_5 => {
                Reporter::add_to_linker::<PluginState, HasSelf<PluginState>>(&mut linker, |s| s)?;
                Pre::V0_5(ReporterPre::new(linker.instantiate_pre(component)?)?)
            }
        };
        Ok(ReporterPlugin { sandbox, pre })
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        self.sandbox.name()
    }

    /// A fresh instance in `store`, configured.
    fn configured(&self, store: &mut wasmtime::Store<PluginState>) -> Result<Bound, PluginFailure> {
        let sb = &self.sandbox;
        macro_rules! configure {
            ($pre:expr, $bound:path) => {{
                let b = sb.call(store, "instantiate", |s| $pre.instantiate(s))?;
                let api = b.spinneret_plugin_reporter_api();
                let r = sb.call(store, "configure", |s| api.call_configure(s, sb.config()))?;
                ($bound(b), r)
            }};
        }
        let (bound, configured) = match &self.pre {
            Pre::V0_2(pre) => configure!(pre, Bound::V0_2),
            Pre::V0_3(pre) => configure!(pre, Bound::V0_3),
            Pre::V0_4(pre) => configure!(pre, Bound::V0_4),
            Pre::V0_5(pre) => configure!(pre, Bound::V0_5),
        };
        configured.map_err(|e| sb.failed("configure", e.message))?;
        Ok(bound)
    }

    /// Instantiate the reporter and call its `configure` only (no output
    /// directory): whether it accepts its configuration.
    pub fn configure_only(&self) -> Result<(), PluginFailure> {
        let mut store = self.sandbox.store(None);
        self.configured(&mut store).map(drop)
    }

    /// Begin a task's report: a fresh instance, configured, told the run,
    /// the task and its counts, writing into `output_dir` (at most
    /// `output_cap` bytes in all).
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
        let bindings = self.configured(&mut store)?;
        // The counts as an older version types them (the same fields).
        macro_rules! old_counts {
            ($old:ident) => {
                $old::TaskCounts {
                    urls: counts.urls,
                    documents: counts.documents,
                    references: counts.references,
                    by_category: counts.by_category.clone(),
                    by_role: counts
                        .by_role
                        .iter()
                        .map(|(r, n)| (old_role!($old, r), *n))
                        .collect(),
                    findings: counts.findings.clone(),
                }
            };
        }
        let wants = by_version!(
            &bindings,
            |api, old| {
                let counts = old_counts!(old);
                sb.call(&mut store, "begin", |s| {
                    api.call_begin(s, run, task, &counts)
                })?
                .map(|w| same_flags!(w, old::Wants => Wants: RESULTS, DOCUMENTS, TARGETS, FINDINGS))
            },
            |api, old| {
                let counts = old_counts!(old);
                sb.call(&mut store, "begin", |s| {
                    api.call_begin(s, run, task, &counts)
                })?
                .map(|w| same_flags!(w, old::Wants => Wants: RESULTS, DOCUMENTS, TARGETS, FINDINGS, LINES))
            },
            |api| sb.call(&mut store, "begin", |s| api
                .call_begin(s, run, task, counts))?,
        )
        .map_err(|e| sb.failed("begin", e.message))?;
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

    /// The first write of its report the file system refused (a full
    /// disk, a read-only directory), if any: its report cannot be whole.
    pub fn unwritten(&self) -> Option<String> {
        self.store.data().output.as_ref()?.unwritten.clone()
    }

    /// Hand over results of the task.
    pub fn results(&mut self, batch: &[Reached]) -> Result<(), PluginFailure> {
        let (sb, store) = (&self.sandbox, &mut self.store);
        by_version!(
            &self.bindings,
            |api, old| {
                let batch: Vec<old::Reached> = batch
                    .iter()
                    .map(|r| old::Reached {
                        outcome: r.outcome.clone(),
                        role: old_role!(old, r.role),
                    })
                    .collect();
                sb.call(store, "on-results", |s| api.call_on_results(s, &batch))
            },
            |api| sb.call(store, "on-results", |s| api.call_on_results(s, batch)),
        )
    }

    /// Hand over documents (or parts of them) of the task. An older
    /// reporter gets them without what its version lacks: a 0.4 one without
    /// `columns`, a 0.3 or 0.2 one without `lines` too.
    pub fn documents(&mut self, batch: &[TaskDocument]) -> Result<(), PluginFailure> {
        let (sb, store) = (&self.sandbox, &mut self.store);
        // The documents as an older version types them, with the fields
        // given after the common ones.
        macro_rules! old_documents {
            ($old:ident $(, $field:ident)*) => {
                batch
                    .iter()
                    .map(|d| $old::TaskDocument {
                        number: d.number,
                        document: d.document.clone(),
                        outcome: d.outcome.clone(),
                        targets: d
                            .targets
                            .iter()
                            .map(|t| $old::Target {
                                category: t.category,
                                status: t.status,
                                error: t.error.clone(),
                                final_url: t.final_url.clone(),
                                last_modified: t.last_modified.clone(),
                                document: t.document,
                                title: t.title.clone(),
                            })
                            .collect(),
                        first_reference: d.first_reference,
                        last_part: d.last_part,
                        $($field: d.$field.clone(),)*
                    })
                    .collect::<Vec<$old::TaskDocument>>()
            };
        }
        by_version!(
            &self.bindings,
            |api, old| {
                let batch = old_documents!(old);
                sb.call(store, "on-documents", |s| api.call_on_documents(s, &batch))
            },
            |api, old| {
                let batch = old_documents!(old, lines);
                sb.call(store, "on-documents", |s| api.call_on_documents(s, &batch))
            },
            |api| sb.call(store, "on-documents", |s| api.call_on_documents(s, batch)),
        )
    }

    /// Hand over findings of the task, grouped by kind.
    pub fn findings(&mut self, batch: &[TaskFinding]) -> Result<(), PluginFailure> {
        let (sb, store) = (&self.sandbox, &mut self.store);
        by_version!(
            &self.bindings,
            |api, old| {
                let batch: Vec<old::TaskFinding> = batch
                    .iter()
                    .map(|f| old::TaskFinding {
                        number: f.number,
                        finding: f.finding.clone(),
                        document: f.document,
                        referred_from: f
                            .referred_from
                            .iter()
                            .map(|p| old::Place {
                                document: p.document,
                                reference: p.reference,
                            })
                            .collect(),
                    })
                    .collect();
                sb.call(store, "on-findings", |s| api.call_on_findings(s, &batch))
            },
            |api| sb.call(store, "on-findings", |s| api.call_on_findings(s, batch)),
        )
    }

    /// Finish the report: the files the reporter appended to replace their
    /// old versions. (A session dropped unfinished throws them away.)
    pub fn finish(&mut self) -> Result<(), PluginFailure> {
        let (sb, store) = (&self.sandbox, &mut self.store);
        let finished = by_version!(
            &self.bindings,
            |api, _old| sb.call(store, "finish", |s| api.call_finish(s))?,
            |api| sb.call(store, "finish", |s| api.call_finish(s))?,
        );
        finished.map_err(|e| sb.failed("finish", e.message))?;
        match self.store.data_mut().output.as_mut() {
            Some(out) => out.commit().map_err(|e| sb.failed("finish", e)),
            None => Ok(()),
        }
    }
}
