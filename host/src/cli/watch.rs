//! `spinneret watch`: periodic runs (seed 000: MOMspider was run nightly
//! from cron; this is the same without cron). Sleeps until the next task
//! is due, runs every task due then in one run (so they share requests),
//! and exits cleanly on SIGTERM or Ctrl-C, while sleeping or mid-run.

use super::{EXIT_OK, EXIT_USAGE, MailMode, crawl_once, load_config, stop_signal};
use crate::config::Config;
use spinneret_core::schedule::Schedule;
use spinneret_crawl::CrawlOptions;
use std::collections::HashMap;
use std::path::Path;
use std::time::SystemTime;

/// Each task's schedule, or the name of a task that has none.
fn schedules(
    config: &Config,
    default: Option<Schedule>,
) -> Result<Vec<(String, Schedule)>, String> {
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

fn when(t: SystemTime) -> String {
    jiff::Timestamp::try_from(t)
        .map(|ts| {
            ts.to_zoned(jiff::tz::TimeZone::system())
                .strftime("%Y-%m-%d %H:%M:%S %Z")
                .to_string()
        })
        .unwrap_or_else(|_| httpdate::fmt_http_date(t))
}

/// Watch `path` until stopped.
pub fn run(
    path: &Path,
    default: Option<Schedule>,
    overrides: &super::Overrides,
    quiet: bool,
    strict_plugins: bool,
) -> anyhow::Result<u8> {
    let mut config = match load_config(path, overrides) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("spinneret: {e}");
            return Ok(EXIT_USAGE);
        }
    };
    let mut plan = match schedules(&config, default) {
        Ok(p) => p,
        Err(task) => {
            eprintln!(
                "spinneret: task `{task}` has no schedule; give it `schedule = \"6h\"` (or \"02:30\"), set one for all tasks in the configuration, or pass --schedule"
            );
            return Ok(EXIT_USAGE);
        }
    };
    let now = SystemTime::now();
    let mut due: HashMap<String, SystemTime> = plan
        .iter()
        .map(|(t, s)| (t.clone(), s.first(now)))
        .collect();
    let sleeper = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
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
                _ = stop_signal() => true,
            }
        });
        if stopped {
            eprintln!("spinneret: stopped while waiting; nothing was running");
            return Ok(EXIT_OK);
        }
        // Read the configuration again: edits between runs take effect.
        match load_config(path, overrides) {
            Ok(c) => match schedules(&c, default) {
                Ok(p) => {
                    for (t, s) in &p {
                        due.entry(t.clone())
                            .or_insert_with(|| s.first(SystemTime::now()));
                    }
                    due.retain(|t, _| p.iter().any(|(n, _)| n == t));
                    plan = p;
                    config = c;
                }
                Err(task) => eprintln!(
                    "spinneret: task `{task}` has no schedule in the edited configuration; keeping the previous one"
                ),
            },
            Err(e) => eprintln!("spinneret: {e}; keeping the previous configuration"),
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
        let mut sub = config.clone();
        sub.tasks.retain(|t| run_now.contains(&t.name));
        let outcome = crawl_once(
            &sub,
            &CrawlOptions::default(),
            quiet,
            strict_plugins,
            MailMode::Send,
        );
        let finished = SystemTime::now();
        for (t, s) in &plan {
            if run_now.contains(t) {
                due.insert(t.clone(), s.next_after(Some(started), finished));
            }
        }
        match outcome {
            Ok((_, true)) => {
                eprintln!("spinneret: stopped; everything checked is stored");
                return Ok(EXIT_OK);
            }
            Ok((code, false)) => {
                tracing::info!("run of {} ended with status {code}", run_now.join(", "))
            }
            Err(e) => eprintln!("spinneret: the run of {} failed: {e:#}", run_now.join(", ")),
        }
    }
}
