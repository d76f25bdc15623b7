//! One run of spinneret, start to end: take the store's lock, load and
//! configure every plugin before the first request (one plugin engine for
//! the run: the crawl's hooks and the report stage share what it compiled),
//! crawl, store the hooks' key-value spaces, run the report stage, tell the
//! owners, and mark the run finished. `spinneret crawl` and `spinneret
//! watch` call [`run_once`]; what it did comes back as a [`RunOutcome`] for
//! the caller to print and turn into an exit code.

use spinneret_config::Config;
use spinneret_crawl::{self as crawl, CrawlOptions, CrawlReport, Progress};
use spinneret_plugin_host::engine::PluginEngine;
use spinneret_store::Store;
use std::path::PathBuf;
use std::sync::Arc;

/// What happens to the messages to owners at the end of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MailMode {
    /// Queue them and send the outbox.
    Send,
    /// Print them (`--dry-run-mail`) to [`RunObserver::mail_out`].
    Print,
}

/// How to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// What to crawl and how (`--task`, `--resume`).
    pub crawl: CrawlOptions,
    /// Whether mail is sent or printed.
    pub mail: MailMode,
}

/// What a caller sees of a run while it goes.
pub trait RunObserver {
    /// The crawl starts (on the run's async runtime); `progress` are its
    /// live counters.
    fn crawl_started(&mut self, _progress: Arc<Progress>) {}
    /// The crawl is over (the report stage follows).
    fn crawl_finished(&mut self) {}
    /// Where `--dry-run-mail` prints the messages.
    fn mail_out(&mut self) -> Box<dyn std::io::Write + '_> {
        Box::new(std::io::stdout().lock())
    }
}

/// What a run did.
#[derive(Debug)]
pub struct RunOutcome {
    /// The crawl's report: the run, the tasks' counts, whether it was interrupted.
    pub crawl: CrawlReport,
    /// Whether a plugin failed (in the crawl or the report stage).
    pub plugin_failed: bool,
    /// What went wrong on the way without stopping the run (a plugin's
    /// failure, a mail error), each a line for the user.
    pub problems: Vec<String>,
    /// What the user should know besides (mail printed, not sent).
    pub notes: Vec<String>,
    /// The store the run is in.
    pub store: spinneret_store::StoreLocation,
    /// Each task whose reporters wrote a report, with its output directory
    /// and the reporters, in the configuration's order.
    pub reports: Vec<(String, PathBuf, Vec<String>)>,
}

/// Run `config` once: crawl, report, mail. `Err` is a run that could not
/// go on (the store locked or unreadable, a plugin that does not load);
/// everything checked before such an error is stored.
pub fn run_once(
    config: &Config,
    options: &RunOptions,
    observer: &mut dyn RunObserver,
) -> anyhow::Result<RunOutcome> {
    // A `--task` that names no task stops here, and so do avoid and sites
    // files that cannot be read: before the store is touched (the crawl
    // reads them again as it starts).
    config.crawl_plan(options.crawl.task.as_deref())?;
    crawl::policy::load_rules(
        &config.settings.crawl().rule_files,
        std::time::SystemTime::now(),
    )?;
    // One crawl per store at a time; held until the reports and mail are done.
    let location = config
        .settings
        .store
        .location()
        .map_err(anyhow::Error::msg)?;
    let _lock = match options.crawl.shared {
        // Workers hold the lock together; a crawl holds it alone.
        Some(_) => spinneret_store::CrawlLock::acquire_shared_at(&location)?,
        None => spinneret_store::CrawlLock::acquire_at(&location)?,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    warn_about_settings(config);
    let (sites, fetch) = plugin_network(config, runtime.handle());
    // Every plugin loaded and configured before the first request (and
    // before the store is touched), by one engine for the run, into the
    // registry the hooks and the report stage instantiate from: nothing is
    // compiled twice.
    let engine = Arc::new(PluginEngine::new()?);
    let registry = Arc::new(super::preflight::check(config, &engine, fetch)?);
    let mut store = Store::open_at(location.clone())?;
    // What the library adds: its pages for `library` tasks, the Worm VL's tops.
    let coupled =
        spinneret_library::coupling::prepare(config, &mut store, options.crawl.task.as_deref())?;
    let config = coupled.as_ref().unwrap_or(config);
    let plan = config.crawl_plan(options.crawl.task.as_deref())?;
    let hooks = Arc::new(crawl::hooks::CrawlHooks::load(
        &registry,
        &config.plugins,
        config.tasks.first().map_or("", |t| t.top.as_str()),
        &store,
    )?);
    let mut crawl_options = options.crawl.clone();
    crawl_options.hooks = Some(hooks.clone());
    crawl_options.sites = Some(sites);
    // Listened for until the run ends, the report stage and mail too: a
    // second signal quits at once whenever it comes.
    let stop = super::stop::StopRequest::listen(
        "stopping after the requests in flight; what was checked is stored and reported",
    )?;
    let report = crawl_until_stopped(&runtime, &plan, &store, &crawl_options, &stop, observer)?;
    let mut outcome = RunOutcome {
        crawl: report,
        plugin_failed: false,
        problems: Vec::new(),
        notes: Vec::new(),
        store: location.clone(),
        reports: Vec::new(),
    };
    let hook_failures = keep_what_the_crawl_left(config, &hooks, &store, &mut outcome);
    // A worker of a shared run leaves the report stage and mail to the
    // worker that finishes the run.
    if !outcome.crawl.interrupted && outcome.crawl.finishes {
        let run = outcome.crawl.run;
        let in_crawl = hooks.names();
        report_stage(
            config,
            &store,
            &registry,
            (&in_crawl, &hook_failures),
            &mut outcome,
        )?;
        if let Err(e) = notify_owners(config, &store, run, options.mail, observer, &mut outcome) {
            outcome.problems.push(format!("mail: {e:#}"));
        }
        // Only now is the run finished (queuing its mail marked it so
        // already, in the same transaction): killed before this, `--resume`
        // runs the report stage again without a request.
        store.end_run(run, "finished")?;
        keep_the_search_index(config, &store, &mut outcome)?;
    }
    for line in spinneret_plugin_host::stats::table().lines() {
        tracing::debug!("{line}");
    }
    Ok(outcome)
}

/// What plugins may fetch through: the network layer's polite path on the
/// crawl's own sites (one gate and one robots.txt reading per site), and
/// those sites, for the crawl.
fn plugin_network(
    config: &Config,
    handle: &tokio::runtime::Handle,
) -> (
    Arc<spinneret_net::sites::Sites>,
    Option<spinneret_plugin_host::capabilities::PluginHttp>,
) {
    let crawl_settings = config.settings.crawl();
    let sites = spinneret_net::sites::Sites::new(
        crawl::plugin_http::network_settings(&crawl_settings).gates,
    );
    let fetch =
        crawl::plugin_http::PoliteHttp::beside(&crawl_settings, handle.clone(), sites.clone())
            .map(|f| Arc::new(f) as spinneret_plugin_host::capabilities::PluginHttp)
            .map_err(|e| tracing::warn!("plugins get no network access this run: {e:#}"))
            .ok();
    (sites, fetch)
}

/// Crawl `plan` on `runtime` until it ends or `stop` is asked for, the
/// observer shown its progress.
fn crawl_until_stopped(
    runtime: &tokio::runtime::Runtime,
    plan: &crawl::CrawlPlan<'_>,
    store: &Store,
    options: &crawl::CrawlOptions,
    stop: &super::stop::StopRequest,
    observer: &mut dyn RunObserver,
) -> anyhow::Result<crawl::CrawlReport> {
    let progress = Arc::new(Progress::default());
    let report = runtime.block_on(async {
        let stop_rx = stop.receiver();
        // Inside the runtime: a progress display runs on it.
        observer.crawl_started(progress.clone());
        let report = crawl::run(plan, store, options, progress, stop_rx).await;
        observer.crawl_finished();
        report
    })?;
    Ok(report)
}

/// What the crawl leaves besides its results: the cookie jar, the fetch
/// hooks' and parsers' key-value spaces and failures (said in `outcome`);
/// the failures, for the report stage.
fn keep_what_the_crawl_left(
    config: &Config,
    hooks: &crawl::hooks::CrawlHooks,
    store: &Store,
    outcome: &mut RunOutcome,
) -> Vec<(String, spinneret_plugin_host::sandbox::PluginFailure)> {
    // The cookies the sites set, kept for the next run (and curl, wget).
    if let Some(jar) = &config.settings.cookie_jar
        && let Err(e) = jar.save()
    {
        outcome.problems.push(format!(
            "{}: the cookie jar could not be written: {e}",
            jar.path().display()
        ));
    }
    let hook_failures = hooks.take_failures();
    if let Err(e) = hooks.save_kv(store) {
        outcome.problems.push(format!(
            "the fetch hooks' and parsers' key-value spaces could not be stored: {e}"
        ));
        outcome.plugin_failed = true;
    }
    for (url, f) in &hook_failures {
        outcome.problems.push(format!("{url}: {f}"));
        outcome.plugin_failed = true;
    }
    hook_failures
}

/// The report stage of the run: every task's detectors and reporters,
/// the reports written listed in `outcome`. Reports the file system would
/// not take stop the run (it stays `crawled`, for `--resume`).
fn report_stage(
    config: &Config,
    store: &Store,
    registry: &Arc<spinneret_plugin_host::registry::Registry>,
    (in_crawl, hook_failures): (
        &[String],
        &[(String, spinneret_plugin_host::sandbox::PluginFailure)],
    ),
    outcome: &mut RunOutcome,
) -> anyhow::Result<()> {
    let run = outcome.crawl.run;
    let started = std::time::Instant::now();
    let reports =
        spinneret_report::run_reporters(config, store, run, registry, in_crawl, hook_failures)?;
    tracing::debug!(
        "report stage: {} reports written in {:.2} s (the crawl took {:.2} s)",
        reports.written.len(),
        started.elapsed().as_secs_f64(),
        outcome.crawl.elapsed.as_secs_f64()
    );
    for task in &config.tasks {
        let plugins: Vec<String> = reports
            .written
            .iter()
            .filter(|(t, _)| *t == task.name)
            .map(|(_, p)| p.clone())
            .collect();
        if !plugins.is_empty() {
            outcome
                .reports
                .push((task.name.clone(), task.output.clone(), plugins));
        }
    }
    if !reports.unwritten.is_empty() {
        // The reports are not whole: the run stays `crawled`, its mail
        // unsent, so that `--resume` writes them (and mails) once the
        // file system takes them.
        let said: Vec<String> = reports
            .unwritten
            .iter()
            .map(|(task, e)| format!("  task {task}: {e}"))
            .collect();
        anyhow::bail!(
            "the report stage could not write its reports:\n{}\nrun {run} stays crawled, its results kept and no mail sent: make room (or make the output directory writable), then run the same command with --resume to write the reports",
            said.join("\n")
        );
    }
    for (task, f) in &reports.failures {
        outcome.problems.push(format!("task {task}: {f}"));
        outcome.plugin_failed = true;
    }
    Ok(())
}

/// The Worm's search index: kept up to date for a configuration with `web`
/// tasks, or once someone has built it (`search`, `index`); a failure is
/// reported and changes nothing else.
fn keep_the_search_index(
    config: &Config,
    store: &Store,
    outcome: &mut RunOutcome,
) -> anyhow::Result<()> {
    let has_web = config
        .tasks
        .iter()
        .any(|t| t.kind == spinneret_core::model::TaskKind::Web);
    // On a database the index is this machine's: kept once someone here
    // has searched (`search`, `serve` build it), not built by whichever
    // worker finishes a shared run.
    let index = spinneret_worm::index::index_dir_for(
        &config.settings.store,
        config.settings.search_index.as_deref(),
        store,
    )?;
    let wanted = match config.settings.store.file() {
        Some(_) => has_web || index.exists(),
        None => index.exists(),
    };
    if wanted {
        let said = &mut |m: String| tracing::info!("{m}");
        if let Err(e) = spinneret_worm::refresh_index(store, &index, said) {
            outcome.problems.push(format!("search index: {e:#}"));
        }
    }
    Ok(())
}

/// Say what in the settings will surprise the user during the run.
fn warn_about_settings(config: &Config) {
    // An `--offline` run asks no web server anything: it sends no header
    // to anyone. (A local tree's links to the web are asked, so only the
    // setting says so.)
    if config.settings.from.is_none() && !config.settings.offline {
        tracing::warn!(
            "requests go without a From header; give the address where a webmaster can reach you with --from ADDRESS, `from` in the configuration or the EMAIL environment variable"
        );
    }
    let robot = config.settings.robot_name();
    if config.settings.robots_rules.uses_rfc9309()
        && robot
            .chars()
            .any(|c| !(c.is_ascii_alphabetic() || c == '_' || c == '-'))
    {
        tracing::warn!(
            "the robot's name `{robot}` (the first word of user_agent) has characters an RFC 9309 product token has not (only letters, `_` and `-`): under RFC 9309 no robots.txt group names it, only `*` groups apply"
        );
    }
}

/// Tell the owners: queue this run's messages and send the outbox, or
/// print them. A mail failure is reported and changes nothing else.
fn notify_owners(
    config: &Config,
    store: &Store,
    run: i64,
    mode: MailMode,
    observer: &mut dyn RunObserver,
    outcome: &mut RunOutcome,
) -> anyhow::Result<()> {
    if mode == MailMode::Print {
        let n = spinneret_report::notify::print(config, store, run, &mut observer.mail_out())?;
        outcome
            .notes
            .push(format!("--dry-run-mail: {n} message(s) printed, none sent"));
        return Ok(());
    }
    let composed = spinneret_report::notify::queue(config, store, run)?;
    let report = spinneret_report::notify::deliver(config, store)?;
    for e in &report.errors {
        outcome.problems.push(format!("mail: {e}"));
    }
    // Said when there was mail to speak of (most runs have none).
    let line = format!(
        "mail: {composed} message(s) written, {} sent, {} kept for the next run",
        report.sent, report.kept
    );
    match composed + report.sent + report.kept {
        0 => tracing::debug!("{line}"),
        _ => tracing::info!("{line}"),
    }
    Ok(())
}
