//! The report stage, after a crawl: for each task, the change detectors
//! compare this run with the previous one and produce findings, then the
//! reporters are told the task's results, documents and findings and write
//! into the task's output directory. Plugins run here, off the crawl's
//! async reactor; a plugin that fails is recorded as a finding and
//! everything else goes on. Findings and the plugins' key-value spaces are
//! stored last.

pub mod detect;
pub mod load;
pub mod task;

use crate::config::Config;
use crate::plugin::bindings::host::types as wit;
use crate::plugin::reporter::TaskReport;
use crate::plugin::sandbox::PluginFailure;
use crate::plugin::state::HostFetch;
use crate::store::{FindingRow, Store};
use load::{Loaded, Plugins};

/// What the report stage did.
#[derive(Debug, Default)]
pub struct ReportSummary {
    /// (task, plugin) pairs that wrote their report.
    pub written: Vec<(String, String)>,
    /// Plugins that failed, for which task.
    pub failures: Vec<(String, PluginFailure)>,
    /// Findings per task, in the order found.
    pub findings: Vec<(String, usize)>,
}

fn severity_name(s: wit::Severity) -> &'static str {
    match s {
        wit::Severity::Info => "info",
        wit::Severity::Warning => "warning",
        wit::Severity::Error => "error",
    }
}

/// Run the detectors and reporters of every task of `run`. `crawl_failures`
/// are the crawl's plugin failures (fetch hooks, parsers) against the URLs
/// they happened for: each becomes a finding of every task that reached
/// the URL.
pub fn run_reporters(
    config: &Config,
    store: &Store,
    run: i64,
    fetch: Option<HostFetch>,
    crawl_failures: &[(String, PluginFailure)],
) -> anyhow::Result<ReportSummary> {
    let mut summary = ReportSummary::default();
    let mut plugins = Plugins::new(fetch)?;
    let mut to_store: Vec<(i64, String, Vec<wit::Finding>)> = Vec::new();
    {
        let _snapshot = store.read_snapshot()?;
        let tasks = store.run_tasks(run)?;
        let info = store.run_info(run)?;
        let run_info = wit::RunInfo {
            id: run,
            started_at: info.started_at,
            previous_run: info.previous_run,
            host_version: env!("CARGO_PKG_VERSION").to_string(),
            options: info.options.unwrap_or_else(|| "{}".into()),
        };
        for task in &config.tasks {
            let Some(row) = tasks.iter().find(|t| t.name == task.name) else {
                continue;
            };
            let configured = config.plugins_for(task);
            if configured.is_empty() {
                continue;
            }
            let started = std::time::Instant::now();
            let data = task::load(store, run, row.id, task)?;
            tracing::debug!(
                "{}: {} results and {} documents read in {:.2?}",
                task.name,
                data.results.len(),
                data.documents.len(),
                started.elapsed()
            );
            let mut findings: Vec<wit::Finding> = Vec::new();
            for (url, f) in crawl_failures {
                if data.results.iter().any(|(r, _)| &r.url == url) {
                    findings.push(detect::failure_finding(f, url));
                }
            }
            let failed = |summary: &mut ReportSummary, f: PluginFailure| {
                tracing::error!("{}: {f}", task.name);
                summary.failures.push((task.name.clone(), f));
            };
            // Detectors first: reporters are told their findings.
            for p in &configured {
                match plugins.get(p, store) {
                    Ok(Loaded::Detector(d)) => {
                        let started = std::time::Instant::now();
                        let outcome =
                            detect::detect(store, run, info.started_at, &data, d, &mut findings)?;
                        tracing::info!(
                            "{}: {} compared {} URLs in {:.2?}",
                            task.name,
                            p.name,
                            data.results.len(),
                            started.elapsed()
                        );
                        if let Err(f) = outcome {
                            findings.push(detect::failure_finding(&f, &data.info.top));
                            failed(&mut summary, f);
                        }
                    }
                    Ok(Loaded::Reporter(_) | Loaded::CrawlHook) => {}
                    Err(f) => {
                        findings.push(detect::failure_finding(f, &data.info.top));
                        failed(&mut summary, f.clone());
                    }
                }
            }
            let report = TaskReport {
                run: run_info.clone(),
                task: data.info.clone(),
                results: &data.results,
                documents: &data.documents,
                findings: &findings,
            };
            let mut reporter_failures = Vec::new();
            for p in &configured {
                let Ok(Loaded::Reporter(reporter)) = plugins.get(p, store) else {
                    continue;
                };
                let started = std::time::Instant::now();
                match reporter.report(&report, task.output.clone()) {
                    Ok(()) => {
                        tracing::info!(
                            "{}: {} wrote its report to {} in {:.2?}",
                            task.name,
                            p.name,
                            task.output.display(),
                            started.elapsed()
                        );
                        summary.written.push((task.name.clone(), p.name.clone()));
                    }
                    Err(f) => reporter_failures.push(f),
                }
            }
            for f in reporter_failures {
                findings.push(detect::failure_finding(&f, &data.info.top));
                failed(&mut summary, f);
            }
            summary.findings.push((task.name.clone(), findings.len()));
            to_store.push((row.id, task.name.clone(), findings));
        }
    }
    for (task_id, task, findings) in to_store {
        let rows: Vec<FindingRow> = findings
            .into_iter()
            .map(|f| FindingRow {
                task: task.clone(),
                kind: f.kind,
                url: f.url,
                referrer: f.referrer,
                message: f.message,
                severity: severity_name(f.severity).to_string(),
                source: f.source,
            })
            .collect();
        store.save_findings(run, task_id, &rows)?;
    }
    for f in plugins.save_kv(store) {
        tracing::error!("{f}");
        summary.failures.push((String::new(), f));
    }
    Ok(summary)
}
