//! The crawl: runs every task of a plan over one shared frontier, so each
//! URL is requested at most once per run whichever tasks reach it (seed 000,
//! section 5.2).
//!
//! [`run`] is the entry point, given a [`CrawlPlan`]; the `engine` module
//! owns the loop and drives the stages, each a module of its own:
//!
//! ```text
//! frontier -> policy (scope, robots.txt, avoid/leaf rules) -> fetch -> parse -> store
//! ```
//!
//! - [`policy`]: task scope, robots.txt (Koster's draft and RFC 9309), avoid and leaf rules.
//! - [`fetch`]: polite HTTP and `file://` requests, politeness and retries.
//! - [`parse`]: html5ever extraction of titles, metadata and references.
//! - [`hooks`]: the plugins that run inside the crawl (fetch hooks, parsers, policies).

// Each dependency listed is used (tests' own are dev-dependencies).
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

mod error;
pub use spinneret_net::fetch;
pub mod parse;
pub mod policy;

mod classify;
mod engine;
mod frontier;
pub mod hooks;
mod plan;
pub mod plugin_http;
mod plugin_turn;
mod redirects;
mod reuse;
mod site_table;
mod sitemaps;
mod sites;
mod summary;
mod taskset;
mod verdicts;
mod worker;

pub use error::CrawlError;
pub use plan::{CrawlPlan, CrawlSettings, CrawlTask, TaskBounds};
pub use summary::{TaskSummary, print_summary};

use spinneret_store::{RunIds, Store};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// How to run a crawl.
#[derive(Clone, Default)]
pub struct CrawlOptions {
    /// Continue the newest unfinished run of this configuration instead of starting anew.
    pub resume: bool,
    /// The task `--task` named, if any (the plan then holds only it);
    /// recorded with the run.
    pub task: Option<String>,
    /// The fetch hooks, parsers and policies to run (see [`hooks::CrawlHooks::load`]).
    pub hooks: Option<Arc<hooks::CrawlHooks>>,
    /// Documents an archive marked completed (the Worm's `C` lines, seed
    /// 001, section 3.2.2): their references were processed to all levels
    /// in an earlier pass, so they are not read again.
    pub completed: Arc<std::collections::HashSet<String>>,
    /// For a worker of a run shared through a PostgreSQL store (`spinneret
    /// worker`): who it is, and how long its leases last.
    pub shared: Option<SharedOptions>,
    /// Each site's gate and robots.txt reading, when the caller shares
    /// them with others of the run (the plugins' `http`, made with
    /// [`plugin_http::PoliteHttp::beside`] on the same); else the run has
    /// its own.
    pub sites: Option<Arc<spinneret_net::sites::Sites>>,
    /// Read no robots.txt on the sites of the tasks' tops (`check
    /// --ignore-robots-for-tops`: the user's own staging site); every
    /// other site's is read and obeyed.
    pub ignore_robots_for_tops: bool,
    /// Traverse the pages the sitemaps of the tops' sites list (robots.txt's
    /// `Sitemap:` lines and `/sitemap.xml`) as further tops of a `site` or
    /// `tree` task, so that a page nothing links to is checked (`check`;
    /// `--no-sitemap` turns it off).
    pub sitemaps: bool,
}

/// A worker's part in a shared run.
#[derive(Clone, Debug)]
pub struct SharedOptions {
    /// The worker's name, unique among the run's workers.
    pub worker: String,
    /// How long a lease on a site lasts unless renewed (renewed on a
    /// schedule of its own, five times a lease; a worker silent this long
    /// is taken for dead).
    pub lease: std::time::Duration,
    /// How long the worker waits for its database to come back (a
    /// restart, an outage) before it gives up.
    pub ride_out: std::time::Duration,
}

impl std::fmt::Debug for CrawlOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrawlOptions")
            .field("resume", &self.resume)
            .field("task", &self.task)
            .field("hooks", &self.hooks.as_ref().map(|h| !h.is_empty()))
            .field("completed", &self.completed.len())
            .field("shared", &self.shared)
            .field("ignore_robots_for_tops", &self.ignore_robots_for_tops)
            .field("sitemaps", &self.sitemaps)
            .finish()
    }
}

/// Live counters for a progress display.
#[derive(Debug, Default)]
pub struct Progress {
    /// URLs checked (requests answered, reused or found avoided).
    pub done: AtomicU64,
    /// URLs waiting for a request.
    pub queued: AtomicU64,
    /// Broken results so far.
    pub errors: AtomicU64,
    /// Requests in flight.
    pub in_flight: AtomicU64,
}

impl Progress {
    pub(crate) fn add(counter: &AtomicU64, n: i64) {
        if n >= 0 {
            counter.fetch_add(n as u64, Ordering::Relaxed);
        } else {
            counter.fetch_sub((-n) as u64, Ordering::Relaxed);
        }
    }
}

/// What a crawl did.
#[derive(Clone, Debug)]
pub struct CrawlReport {
    /// The run's id in the store.
    pub run: i64,
    /// Whether it continued an interrupted run.
    pub resumed: bool,
    /// Whether it was stopped before the end (Ctrl-C); `--resume` continues it.
    pub interrupted: bool,
    /// Per task, in configuration order.
    pub tasks: Vec<TaskSummary>,
    /// Requests made (robots.txt included).
    pub requests: u64,
    /// Results of earlier runs reused without a request (younger than
    /// `result_max_age`).
    pub reused: u64,
    /// Wall time.
    pub elapsed: std::time::Duration,
    /// Whether this process finishes the run (its report stage and mail):
    /// always for a crawl; for a worker of a shared run, the last to store
    /// what it checked.
    pub finishes: bool,
}

impl CrawlReport {
    /// Whether any task found something broken.
    pub fn any_broken(&self) -> bool {
        self.tasks.iter().any(|t| t.broken > 0)
    }
}

/// Run the crawl `plan` describes, writing everything to `store`.
///
/// `stop` turning true asks the crawl to stop: no new requests start, those in
/// flight finish, everything is stored and the run is marked interrupted.
pub async fn run(
    plan: &CrawlPlan<'_>,
    store: &Store,
    options: &CrawlOptions,
    progress: Arc<Progress>,
    stop: tokio::sync::watch::Receiver<bool>,
) -> Result<CrawlReport, CrawlError> {
    let mut ids = open_run(store, plan, options)?;
    let mut before: Option<CrawlReport> = None;
    loop {
        let (mut report, lease_lost) =
            engine::Engine::prepare(plan, store, ids, options, progress.clone())?
                .run(stop.clone())
                .await?;
        // A worker's summary is its own: the requests it made in all.
        if let Some(b) = before.take() {
            report.requests += b.requests;
            report.reused += b.reused;
            report.elapsed += b.elapsed;
        }
        if lease_lost.is_none() || *stop.borrow() {
            return Ok(report);
        }
        // A worker that lost a lease left the run: it joins it afresh,
        // unless the others crawled it meanwhile.
        let records: Vec<_> = plan.tasks.iter().map(|t| t.record.clone()).collect();
        match store.rejoin_shared_run(report.run, &records)? {
            Some(next) => {
                tracing::warn!("joining run {} afresh", next.run);
                ids = next;
                before = Some(report);
            }
            None => return Ok(report),
        }
    }
}

/// Open the run of the plan's tasks in the store: a new one, or with
/// `--resume` the newest interrupted run of this configuration (a new one
/// if there is none).
fn open_run(
    store: &Store,
    plan: &CrawlPlan<'_>,
    options: &CrawlOptions,
) -> Result<RunIds, CrawlError> {
    let config_name = plan.source.map(|p| {
        std::path::absolute(p)
            .unwrap_or_else(|_| p.to_path_buf())
            .display()
            .to_string()
    });
    // Every task's kind: the plugins' task-kind names three of the five
    // (a `web` task is handed over as `site`, a `library` task as `tree`).
    let task_kinds: serde_json::Map<String, serde_json::Value> = plan
        .tasks
        .iter()
        .map(|t| (t.name().to_string(), t.kind().as_str().into()))
        .collect();
    let options_json = serde_json::json!({
        "task": options.task,
        "resume": options.resume,
        "user_agent": plan.settings.fetch.user_agent,
        "task_kinds": task_kinds,
    })
    .to_string();
    let records: Vec<_> = plan.tasks.iter().map(|t| t.record.clone()).collect();
    if let Some(shared) = &options.shared {
        let ids = store.join_shared_run(config_name.as_deref(), &options_json, &records)?;
        // Said, so that workers given the configuration at different
        // paths (different runs) are noticed.
        tracing::info!(
            "worker {}: {} run {} of {}",
            shared.worker,
            if ids.resumed { "joined" } else { "began" },
            ids.run,
            config_name
                .as_deref()
                .unwrap_or("a configuration without a file")
        );
        return Ok(ids);
    }
    if options.resume {
        if let Some(ids) = store.resume_run(config_name.as_deref(), &records)? {
            return Ok(ids);
        }
        tracing::info!("no interrupted run to resume; starting a new run");
    }
    Ok(store.begin_run(config_name.as_deref(), &options_json, &records)?)
}
