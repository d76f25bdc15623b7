//! The report stage, after a crawl: for each task, the change detectors
//! compare this run with the previous one and produce findings, then the
//! reporters are told the task's results, documents and findings and write
//! into the task's output directory.
//!
//! The main thread reads each task's view of the run from the store and
//! hands it to a pool of workers (one per core), each with its own plugin
//! instances; plugins never run on the crawl's async reactor. A plugin that
//! fails is recorded as a finding and everything else goes on. Findings and
//! the plugins' key-value spaces are stored last.

pub mod detect;
pub mod load;
pub mod task;

use crate::config::{Config, PluginConfig, TaskConfig};
use crate::plugin::bindings::host::types as wit;
use crate::plugin::engine::PluginEngine;
use crate::plugin::reporter::TaskReport;
use crate::plugin::sandbox::PluginFailure;
use crate::plugin::state::HostFetch;
use crate::store::{FindingRow, Store};
use load::{Loaded, Plugins};
use std::sync::{Arc, Mutex, mpsc};

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

/// One task's work for a worker.
struct Job<'c> {
    order: usize,
    task_id: i64,
    task: &'c TaskConfig,
    data: task::TaskData,
    findings: Vec<wit::Finding>,
}

/// What a worker did for a task.
struct Done {
    order: usize,
    task_id: i64,
    task: String,
    findings: Vec<wit::Finding>,
    written: Vec<String>,
    failures: Vec<PluginFailure>,
}

/// The plugins of `task` that run in the report stage: its configured
/// plugins but those that ran inside the crawl (fetch hooks, parsers and
/// policies, named in `in_crawl`).
fn report_plugins(config: &Config, task: &TaskConfig, in_crawl: &[String]) -> Vec<PluginConfig> {
    config
        .plugins_for(task)
        .into_iter()
        .filter(|p| !in_crawl.contains(&p.name))
        .collect()
}

/// Run a task's detectors, then its reporters.
fn run_task(
    config: &Config,
    in_crawl: &[String],
    plugins: &mut Plugins,
    run: &wit::RunInfo,
    job: Job<'_>,
) -> Done {
    let Job {
        order,
        task_id,
        task,
        data,
        mut findings,
    } = job;
    let configured = report_plugins(config, task, in_crawl);
    let mut failures = Vec::new();
    // Detectors first: reporters are told their findings.
    for p in &configured {
        match plugins.get(p) {
            Ok(Loaded::Detector(d)) => {
                let started = std::time::Instant::now();
                let outcome = detect::detect(run.started_at, &data, d, &mut findings);
                tracing::info!(
                    "{}: {} compared {} URLs in {:.2?}",
                    task.name,
                    p.name,
                    data.results.len(),
                    started.elapsed()
                );
                if let Err(f) = outcome {
                    findings.push(detect::failure_finding(&f, &data.info.top));
                    failures.push(f);
                }
            }
            Ok(Loaded::Reporter(_) | Loaded::CrawlHook) => {}
            Err(f) => {
                findings.push(detect::failure_finding(f, &data.info.top));
                failures.push(f.clone());
            }
        }
    }
    let report = TaskReport {
        run: run.clone(),
        task: data.info.clone(),
        results: &data.results,
        documents: &data.documents,
        findings: &findings,
    };
    let mut written = Vec::new();
    let mut reporter_failures = Vec::new();
    for p in &configured {
        let Ok(Loaded::Reporter(reporter)) = plugins.get(p) else {
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
                written.push(p.name.clone());
            }
            Err(f) => reporter_failures.push(f),
        }
    }
    for f in reporter_failures {
        findings.push(detect::failure_finding(&f, &data.info.top));
        failures.push(f);
    }
    for f in &failures {
        tracing::error!("{}: {f}", task.name);
    }
    Done {
        order,
        task_id,
        task: task.name.clone(),
        findings,
        written,
        failures,
    }
}

/// Run the detectors and reporters of every task of `run`. `in_crawl` names
/// the plugins that already ran inside the crawl (a task with no other
/// plugin is not read from the store at all). `crawl_failures` are their
/// failures against the URLs they happened for: each becomes a finding of
/// every task that reached the URL.
pub fn run_reporters(
    config: &Config,
    store: &Store,
    run: i64,
    engine: &Arc<PluginEngine>,
    fetch: Option<HostFetch>,
    in_crawl: &[String],
    crawl_failures: &[(String, PluginFailure)],
) -> anyhow::Result<ReportSummary> {
    let names: Vec<String> = config
        .tasks
        .iter()
        .flat_map(|t| report_plugins(config, t, in_crawl))
        .map(|p| p.name)
        .collect();
    if names.is_empty() && crawl_failures.is_empty() {
        return Ok(ReportSummary::default());
    }
    let kv = Arc::new(load::load_kv(store, names.iter().map(String::as_str))?);
    // One worker per core unless SPINNERET_REPORT_WORKERS says otherwise.
    let workers = std::env::var("SPINNERET_REPORT_WORKERS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .min(config.tasks.len())
        .max(1);
    let mut done: Vec<Done> = Vec::new();
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
        let (job_tx, job_rx) = mpsc::sync_channel::<Job<'_>>(0);
        let job_rx = Mutex::new(job_rx);
        let (done_tx, done_rx) = mpsc::channel::<Done>();
        std::thread::scope(|scope| -> anyhow::Result<()> {
            // Owned here, so that leaving early (a store error) closes the
            // queue and the workers finish instead of waiting for jobs.
            let job_tx = job_tx;
            for w in 0..workers {
                let (job_rx, done_tx) = (&job_rx, done_tx.clone());
                let (engine, fetch, kv, run_info) =
                    (engine.clone(), fetch.clone(), kv.clone(), &run_info);
                std::thread::Builder::new()
                    .name(format!("report-{w}"))
                    .spawn_scoped(scope, move || {
                        let mut plugins = Plugins::new(engine, fetch, kv);
                        loop {
                            let job = job_rx.lock().unwrap_or_else(|p| p.into_inner()).recv();
                            let Ok(job) = job else { break };
                            if done_tx
                                .send(run_task(config, in_crawl, &mut plugins, run_info, job))
                                .is_err()
                            {
                                break;
                            }
                        }
                    })?;
            }
            drop(done_tx);
            let mut seen_before = task::PreviousResults::new();
            let known = store.run_results_by_id(run)?;
            for (order, task) in config.tasks.iter().enumerate() {
                let Some(row) = tasks.iter().find(|t| t.name == task.name) else {
                    continue;
                };
                // A task with no plugin to run is read only if the crawl's
                // plugin failures may be findings of it.
                if report_plugins(config, task, in_crawl).is_empty() && crawl_failures.is_empty() {
                    continue;
                }
                let started = std::time::Instant::now();
                let data = task::load(store, run, row.id, task, &known, &mut seen_before)?;
                tracing::debug!(
                    "{}: {} results and {} documents read in {:.2?}",
                    task.name,
                    data.results.len(),
                    data.documents.len(),
                    started.elapsed()
                );
                let findings = crawl_failures
                    .iter()
                    .filter(|(url, _)| data.results.iter().any(|(r, _)| &r.url == url))
                    .map(|(url, f)| detect::failure_finding(f, url))
                    .collect();
                let job = Job {
                    order,
                    task_id: row.id,
                    task,
                    data,
                    findings,
                };
                if job_tx.send(job).is_err() {
                    break;
                }
            }
            drop(job_tx);
            done.extend(done_rx.iter());
            Ok(())
        })?;
    }
    done.sort_by_key(|d| d.order);
    let mut summary = ReportSummary::default();
    for d in done {
        summary
            .written
            .extend(d.written.into_iter().map(|p| (d.task.clone(), p)));
        summary
            .failures
            .extend(d.failures.into_iter().map(|f| (d.task.clone(), f)));
        summary.findings.push((d.task.clone(), d.findings.len()));
        let rows: Vec<FindingRow> = d
            .findings
            .into_iter()
            .map(|f| FindingRow {
                task: d.task.clone(),
                kind: f.kind,
                url: f.url,
                referrer: f.referrer,
                message: f.message,
                severity: severity_name(f.severity).to_string(),
                source: f.source,
            })
            .collect();
        store.save_findings(run, d.task_id, &rows)?;
    }
    for f in load::save_kv(store, &kv) {
        tracing::error!("{f}");
        summary.failures.push((String::new(), f));
    }
    Ok(summary)
}
