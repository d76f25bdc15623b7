//! `spinneret watch`: periodic runs (seed 000: MOMspider was run nightly
//! from cron; seed 004: WebSnatcher's "variable run timing"). Sleeps until
//! the next entry is due, runs every entry due then in one run (so they
//! share requests), and exits cleanly on SIGTERM or Ctrl-C.
//!
//! What is watched is a crawl configuration (its tasks, each at its
//! `schedule`) or a WebSnatcher profile (its `[[url]]`, `[[bookmarks]]`
//! and `[[interest]]` entries, each at its own `schedule` or the
//! profile's). A run stops mid-way on the signal: a crawl with
//! everything checked stored, a collection with what it fetched saved,
//! archived and indexed; then watching stops.

use super::{EXIT_OK, EXIT_USAGE, MailMode, crawl_once, load_config};
use crate::app::collect::{due_only, entries};
use crate::config::Config;
use crate::snatch::profile::Profile;
use spinneret_core::schedule::Schedule;
use spinneret_crawl::CrawlOptions;
use std::collections::HashMap;
use std::path::Path;
use std::time::SystemTime;

/// The entries watched, each with when it runs.
type Plan = Vec<(String, Schedule)>;

/// Each task's schedule, or the name of a task that has none.
fn schedules(config: &Config, default: Option<Schedule>) -> Result<Plan, String> {
    config
        .tasks
        .iter()
        .map(|t| {
            t.schedule
                .or(config.settings.schedule)
                .or(default)
                .map(|s| (t.name.clone(), s))
                .ok_or_else(|| t.name.clone())
        })
        .collect()
}

/// Each profile entry's schedule, or a message naming one that has none.
fn profile_plan(profile: &Profile, default: Option<Schedule>) -> Result<Plan, String> {
    entries(profile)
        .into_iter()
        .map(|(key, s)| {
            s.or(default).map(|s| (key.clone(), s)).ok_or_else(|| {
                format!(
                    "{key} has no schedule; give it `schedule = \"6h\"` (or \"02:30\"), set `schedule` for the whole profile, or pass --schedule"
                )
            })
        })
        .collect()
}

fn when(t: SystemTime) -> String {
    jiff::Timestamp::try_from(t)
        .map(|ts| {
            ts.to_zoned(jiff::tz::TimeZone::system())
                .strftime("%Y-%m-%d %H:%M:%S %Z")
                .to_string()
        })
        .unwrap_or_else(|_| httpdate::fmt_http_date(t))
}

/// Whether `path` holds a WebSnatcher profile rather than a crawl
/// configuration: TOML with entries to collect and no `[[task]]`.
pub(super) fn is_profile(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    let Ok(table) = text.parse::<toml::Table>() else {
        return false;
    };
    !table.contains_key("task")
        && ["url", "bookmarks", "interest"]
            .iter()
            .any(|k| table.contains_key(*k))
}

/// Watch `path` (a crawl configuration or a WebSnatcher profile) until
/// stopped, with the command line's settings (its `--resolve` entries
/// too) over the file's; `quiet` is the count of `-q`.
pub(super) fn run(
    path: &Path,
    default: Option<Schedule>,
    overrides: &super::Overrides,
    quiet: u8,
    strict_plugins: bool,
) -> anyhow::Result<u8> {
    if is_profile(path) {
        return run_profile(path, default, overrides, quiet);
    }
    let quiet = quiet > 0;
    // The configuration's `[resolve]` with the command line's over it.
    let load = || load_config(path, overrides);
    let config = match load() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("spinneret: {e}");
            return Ok(EXIT_USAGE);
        }
    };
    let plan = match schedules(&config, default) {
        Ok(p) => p,
        Err(task) => {
            eprintln!(
                "spinneret: task `{task}` has no schedule; give it `schedule = \"6h\"` (or \"02:30\"), set one for all tasks in the configuration, or pass --schedule"
            );
            return Ok(EXIT_USAGE);
        }
    };
    let reload = || {
        let c = load()?;
        let p = schedules(&c, default)
            .map_err(|task| format!("task `{task}` has no schedule in the edited configuration"))?;
        Ok((c, p))
    };
    let crawl = |config: &Config, due: &[String]| {
        let mut sub = config.clone();
        sub.tasks.retain(|t| due.contains(&t.name));
        crawl_once(
            &sub,
            &CrawlOptions::default(),
            u8::from(quiet),
            strict_plugins,
            MailMode::Send,
            super::format::Format::Text,
        )
    };
    watch((config, plan), reload, crawl, quiet)
}

/// Watch a WebSnatcher profile: each run collects the entries due and
/// carries the others' pages forward from the last run.
fn run_profile(
    path: &Path,
    default: Option<Schedule>,
    overrides: &super::Overrides,
    quiet: u8,
) -> anyhow::Result<u8> {
    let load = || -> Result<(Profile, Plan), String> {
        let p = crate::snatch::profile::load(path).map_err(|e| e.to_string())?;
        let plan = profile_plan(&p, default)?;
        Ok((p, plan))
    };
    let first = match load() {
        Ok(f) => f,
        Err(e) => {
            eprintln!("spinneret: {e}");
            return Ok(EXIT_USAGE);
        }
    };
    let settings = match super::settings_from(&overrides.from, &overrides.resolve) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("spinneret: {e}");
            return Ok(EXIT_USAGE);
        }
    };
    let collect = |profile: &Profile, due: &[String]| {
        let (only, not_due) = due_only(profile, due);
        if quiet == 0 {
            eprintln!("spinneret: collecting {}", due.join(", "));
        }
        super::collect_run(profile, &only, &not_due, settings.clone(), quiet)
    };
    watch(first, load, collect, quiet > 0)
}

/// The watch loop: sleep until the next entry of the plan is due, run the
/// entries due with `run` (which says its exit status and whether it was
/// stopped), and read what is watched again with `reload` before each run
/// (edits take effect; a broken edit keeps the previous plan).
fn watch<T>(
    (mut watched, mut plan): (T, Plan),
    reload: impl Fn() -> Result<(T, Plan), String>,
    mut run: impl FnMut(&T, &[String]) -> anyhow::Result<(u8, bool)>,
    quiet: bool,
) -> anyhow::Result<u8> {
    let now = SystemTime::now();
    let mut due: HashMap<String, SystemTime> = plan
        .iter()
        .map(|(t, s)| (t.clone(), s.first(now)))
        .collect();
    let sleeper = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    // Listening from now on, so that a signal during a run that does not
    // stop for it (a profile's) is seen when the run ends.
    let mut stop = sleeper.block_on(async { crate::app::stop::Signals::listen() });
    loop {
        let next = due.values().min().copied().unwrap_or(now);
        let names: Vec<&str> = plan
            .iter()
            .filter(|(t, _)| due.get(t) == Some(&next))
            .map(|(t, _)| t.as_str())
            .collect();
        let wait = next.duration_since(SystemTime::now()).unwrap_or_default();
        if !wait.is_zero() {
            tracing::info!("next run at {} for {}", when(next), names.join(", "));
            if !quiet {
                eprintln!(
                    "spinneret: next run at {} ({})",
                    when(next),
                    names.join(", ")
                );
            }
        }
        let stopped = sleeper.block_on(async {
            tokio::select! {
                _ = tokio::time::sleep(wait) => false,
                _ = stop.recv() => true,
            }
        });
        if stopped {
            eprintln!("spinneret: stopped while waiting; nothing was running");
            return Ok(EXIT_OK);
        }
        match reload() {
            Ok((w, p)) => {
                for (t, s) in &p {
                    due.entry(t.clone())
                        .or_insert_with(|| s.first(SystemTime::now()));
                }
                due.retain(|t, _| p.iter().any(|(n, _)| n == t));
                plan = p;
                watched = w;
            }
            Err(e) => eprintln!("spinneret: {e}; keeping the previous one"),
        }
        let started = SystemTime::now();
        let run_now: Vec<String> = plan
            .iter()
            .filter(|(t, _)| due.get(t).is_some_and(|d| *d <= started))
            .map(|(t, _)| t.clone())
            .collect();
        if run_now.is_empty() {
            continue;
        }
        let outcome = run(&watched, &run_now);
        let finished = SystemTime::now();
        for (t, s) in &plan {
            if run_now.contains(t) {
                due.insert(t.clone(), s.next_after(Some(started), finished));
            }
        }
        match outcome {
            Ok((_, true)) => {
                eprintln!("spinneret: stopped; what the run had checked or collected is stored");
                return Ok(EXIT_OK);
            }
            Ok((code, false)) => {
                tracing::info!("run of {} ended with status {code}", run_now.join(", "))
            }
            Err(e) => eprintln!("spinneret: the run of {} failed: {e:#}", run_now.join(", ")),
        }
        if sleeper.block_on(stop.pending()) {
            eprintln!("spinneret: stopped after the run; everything collected is stored");
            return Ok(EXIT_OK);
        }
    }
}
