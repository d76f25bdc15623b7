//! The report stage: after a crawl, every reporter plugin that runs for a
//! task is told what the task found and writes into the task's output
//! directory. Plugins run here, off the crawl's async reactor; a plugin that
//! fails is reported and the other plugins and tasks go on.

use crate::config::{Config, PluginConfig, PluginSource};
use crate::plugin::bindings::reporter::spinneret::plugin::types as wit;
use crate::plugin::engine::PluginEngine;
use crate::plugin::identify::{PluginKind, identify};
use crate::plugin::reporter::{PluginFailure, ReporterPlugin, TaskReport, to_wit_kind};
use crate::plugin::state::HostFetch;
use crate::store::Store;
use std::collections::HashMap;
use std::sync::Arc;

/// What the report stage did.
#[derive(Debug, Default)]
pub struct ReportSummary {
    /// (task, plugin) pairs that wrote their report.
    pub written: Vec<(String, String)>,
    /// Plugins that failed, for which task.
    pub failures: Vec<(String, PluginFailure)>,
}

fn load_reporter(
    engine: &Arc<PluginEngine>,
    p: &PluginConfig,
    fetch: Option<HostFetch>,
) -> Result<ReporterPlugin, PluginFailure> {
    let fail = |reason: String| PluginFailure {
        plugin: p.name.clone(),
        call: "load".into(),
        reason,
    };
    let bytes: Vec<u8> = match &p.source {
        PluginSource::Builtin(name) => crate::plugin::builtin::builtin(name)
            .ok_or_else(|| fail(format!("no built-in plugin `{name}`")))?
            .to_vec(),
        PluginSource::File(path) => {
            std::fs::read(path).map_err(|e| fail(format!("cannot read {}: {e}", path.display())))?
        }
    };
    let component = engine
        .compile(&bytes)
        .map_err(|e| fail(format!("not a valid WebAssembly component: {e:#}")))?;
    let id = identify(engine, &component).map_err(|e| fail(e.to_string()))?;
    if id.kind != PluginKind::Reporter {
        return Err(fail(format!(
            "it implements the `{}` world; this stage runs reporters",
            id.kind.world()
        )));
    }
    let grants = p.grants.clone();
    let fetch = if grants.hosts.is_empty() { None } else { fetch };
    ReporterPlugin::new(
        &p.name,
        engine.clone(),
        &component,
        p.config.clone(),
        grants,
        fetch,
    )
    .map_err(|e| fail(format!("cannot be linked: {e:#}")))
}

/// Run the reporters of every task of `run`.
pub fn run_reporters(
    config: &Config,
    store: &Store,
    run: i64,
    fetch: Option<HostFetch>,
) -> anyhow::Result<ReportSummary> {
    let mut summary = ReportSummary::default();
    let tasks = store.run_tasks(run)?;
    let run_row = store.last_run()?.filter(|r| r.id == run);
    let engine = Arc::new(PluginEngine::new()?);
    let mut loaded: HashMap<String, Result<Arc<ReporterPlugin>, PluginFailure>> = HashMap::new();
    for task in &config.tasks {
        let Some(row) = tasks.iter().find(|t| t.name == task.name) else {
            continue;
        };
        let plugins = config.plugins_for(task);
        if plugins.is_empty() {
            continue;
        }
        let results = store.run_results(run, Some(row.id))?;
        let mut documents = Vec::new();
        for (r, role) in &results {
            if role.as_deref() != Some("document") {
                continue;
            }
            let Some(doc) = store.document(&r.url)? else {
                continue;
            };
            let references = store
                .document_links(&r.url)?
                .into_iter()
                .map(|(target, kind, text)| wit::Reference {
                    target,
                    kind: to_wit_kind(kind),
                    anchor_text: text,
                })
                .collect();
            documents.push(wit::Document {
                url: r.url.clone(),
                title: doc.title,
                owner: doc.owner,
                expires: doc.expires,
                parse_errors: doc.parse_errors,
                references,
            });
        }
        let report = TaskReport {
            run: wit::RunInfo {
                id: run,
                started_at: run_row.as_ref().map_or(0, |r| r.started_at),
                previous_run: None,
                host_version: env!("CARGO_PKG_VERSION").to_string(),
                options: "{}".to_string(),
            },
            task: wit::TaskInfo {
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
            },
            results: &results,
            documents: &documents,
            findings: &[],
        };
        for p in plugins {
            let plugin = loaded
                .entry(p.name.clone())
                .or_insert_with(|| load_reporter(&engine, &p, fetch.clone()).map(Arc::new))
                .clone();
            let outcome = plugin.and_then(|plugin| plugin.report(&report, task.output.clone()));
            match outcome {
                Ok(()) => {
                    tracing::info!(
                        "{}: {} wrote its report to {}",
                        task.name,
                        p.name,
                        task.output.display()
                    );
                    summary.written.push((task.name.clone(), p.name.clone()));
                }
                Err(f) => {
                    tracing::error!("{}: {f}", task.name);
                    summary.failures.push((task.name.clone(), f));
                }
            }
        }
    }
    Ok(summary)
}
