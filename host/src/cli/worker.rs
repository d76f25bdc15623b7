//! `spinneret worker`: one of many processes, on one machine or several,
//! sharing a crawl through a PostgreSQL store (the crawl's side is
//! `spinneret_crawl`'s `engine::shared_run`, the database's
//! `spinneret_store::SharedRun`).

use super::{EXIT_BROKEN, EXIT_OK, EXIT_USAGE, Overrides, Terminal, load_config, results};
use crate::app::run::{MailMode, RunOptions};
use clap::Args;
use spinneret_core::model::Category;
use spinneret_crawl::{CrawlOptions, SharedOptions};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(Args, Debug)]
pub(super) struct WorkerArgs {
    /// The configuration, the same file for every worker of the run, at
    /// the same path on every machine (its path names the run): a TOML
    /// file or a MOMspider instruction file. Its store must be on
    /// PostgreSQL (`store = "postgres://…"`, or --store URL).
    config: PathBuf,
    /// This worker's name among the run's workers (default: the machine's
    /// name and the process id).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// How long this worker's lease on a site lasts unless renewed (a
    /// thread of its own renews them five times a lease, at least every
    /// 2 s). A worker not heard from for this long, while others are, is
    /// taken for dead: its sites go to the others, and the requests it had
    /// not stored are made again.
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = parse_lease)]
    lease: Duration,
    /// How long this worker waits for its database when it goes away (a
    /// restart, an outage): it reconnects with back-off meanwhile, makes
    /// no request, and keeps what it checked to store it when the database
    /// is back. Past this, it stops.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_db_wait)]
    db_wait: Duration,
    #[command(flatten)]
    overrides: Overrides,
    /// Treat a plugin failure as a failed run (exit status 3).
    #[arg(long)]
    strict_plugins: bool,
    /// The worker that finishes the run prints the messages to owners
    /// instead of sending them.
    #[arg(long)]
    dry_run_mail: bool,
}

/// A lease of a second or more (its renewals, a fifth of a lease apart,
/// cross a network and a busy database: a shorter lease would have a
/// worker taken for dead between two).
fn parse_lease(s: &str) -> Result<Duration, String> {
    match super::overrides::parse_duration(s)? {
        d if d < Duration::from_secs(1) => Err(format!(
            "a lease of `{s}` is too short; give 1s or more (the default is 15s)"
        )),
        d => Ok(d),
    }
}

/// How long to wait for the database: any duration but none.
fn parse_db_wait(s: &str) -> Result<Duration, String> {
    match super::overrides::parse_duration(s)? {
        d if d.is_zero() => Err(format!(
            "--db-wait `{s}` would give up on the database at its first lost connection; give 1s or more (the default is 5m)"
        )),
        d => Ok(d),
    }
}

/// This worker's default name: the machine's and the process's.
fn default_name() -> String {
    format!("{}:{}", spinneret_store::machine_name(), std::process::id())
}

/// Join (or begin) the configuration's shared run and work in it until
/// it is crawled. The worker that stores last finishes the run: the
/// report stage and mail, once. Exit status: that worker's is the run's
/// (1 when something is broken); the others' 0, unless they failed.
pub(super) fn run(args: &WorkerArgs, quiet: u8) -> anyhow::Result<u8> {
    let config = match load_config(&args.config, &args.overrides) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("spinneret: {e}");
            return Ok(EXIT_USAGE);
        }
    };
    if config.settings.store.file().is_some() {
        eprintln!(
            "spinneret: workers share a run through a PostgreSQL store: give one with `store = \"postgres://…\"` in {} or --store URL (on a store file, `spinneret crawl` runs the whole crawl in one process)",
            args.config.display()
        );
        return Ok(EXIT_USAGE);
    }
    let worker = args.name.clone().unwrap_or_else(default_name);
    // A worker started while its database is down (a restart, an outage)
    // waits for it as a running worker does (saying so), up to --db-wait.
    let location = config
        .settings
        .store
        .location()
        .map_err(anyhow::Error::msg)?;
    spinneret_store::wait_for_database(
        &location,
        spinneret_store::RideOut {
            bound: args.db_wait,
            most_between: (args.lease / 4)
                .clamp(Duration::from_millis(100), Duration::from_secs(5)),
        },
    )?;
    let options = RunOptions {
        crawl: CrawlOptions {
            resume: false,
            task: None,
            hooks: None,
            completed: Arc::default(),
            shared: Some(SharedOptions {
                worker: worker.clone(),
                lease: args.lease,
                ride_out: args.db_wait,
            }),
            sites: None,
            ignore_robots_for_tops: false,
            sitemaps: false,
        },
        mail: match args.dry_run_mail {
            true => MailMode::Print,
            false => MailMode::Send,
        },
    };
    let mut observer = Terminal {
        quiet: quiet > 0,
        bar: None,
        mail_to_stderr: false,
        delay: config.settings.per_site_delay,
    };
    let outcome = crate::app::run::run_once(&config, &options, &mut observer)?;
    for line in outcome.problems.iter().chain(&outcome.notes) {
        eprintln!("spinneret: {line}");
    }
    let report = &outcome.crawl;
    let store_arg = format!(" --store {}", super::shell_word(&outcome.store.to_string()));
    let share = format!(
        "worker {worker}, run {}: {} in {:.1}s",
        report.run,
        results::count(report.requests as usize, "request", "requests"),
        report.elapsed.as_secs_f64(),
    );
    if report.interrupted {
        if quiet < 2 {
            println!(
                "{share}; stopped: its sites went back to the run's other workers (start a worker again to go on)"
            );
        }
        return Ok(EXIT_OK);
    }
    if !report.finishes {
        if quiet < 2 {
            println!(
                "{share}; the run is crawled, and the last worker to store what it checked finishes it (its reports and mail)"
            );
        }
        return Ok(EXIT_OK);
    }
    // The finishing worker speaks for the run: what the store holds.
    let store = spinneret_store::Store::open_at(outcome.store.clone())?;
    let rows = store.run_results_in(report.run, &[Category::Broken, Category::Blocked])?;
    let broken = rows
        .iter()
        .filter(|r| r.category == Category::Broken)
        .count();
    if quiet < 2 {
        let mut text = String::new();
        if quiet == 0 {
            let mut buf = Vec::new();
            results::write_problems(&mut buf, &store, report.run, &store_arg)?;
            text.push_str(&String::from_utf8_lossy(&buf));
            for (task, dir, plugins) in &outcome.reports {
                text.push_str(&format!(
                    "reports of {task}: {}/ ({})\n",
                    dir.display(),
                    plugins.join(", ")
                ));
            }
        }
        text.push_str(&format!(
            "{share}; it finished the run: {broken} broken, {} blocked; every result: spinneret results{store_arg}\n",
            rows.len() - broken
        ));
        print!("{text}");
    }
    let code = if outcome.plugin_failed && args.strict_plugins {
        super::EXIT_PLUGIN
    } else if broken > 0 {
        EXIT_BROKEN
    } else {
        EXIT_OK
    };
    Ok(code)
}
