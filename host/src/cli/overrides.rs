//! The settings flags of `crawl`, `watch` and `check`, which stand over a
//! configuration's: where results go, politeness, URL patterns, accepted
//! statuses, headers, cookies and a local tree's root.

use crate::config::{self, Config};
use clap::Args;
use std::path::PathBuf;

/// Settings the command line puts over a configuration's.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct Overrides {
    /// Use this store instead of the configuration's (default where the
    /// configuration names none, as an instruction file does: the user's
    /// data directory): a file, or a PostgreSQL database
    /// (postgres://user@host:port/db; its password from PGPASSWORD).
    #[arg(long, value_name = "FILE|URL", value_parser = crate::config::parse_store_setting)]
    store: Option<crate::config::StoreSetting>,
    /// Send this address in the `From` header of every request, so that a
    /// webmaster can reach whoever runs the robot (default: the
    /// configuration's `from`, else the EMAIL environment variable).
    #[arg(long, value_name = "ADDRESS")]
    pub(super) from: Option<String>,
    /// Reuse a URL's result from an earlier run when it is younger than
    /// this ("6h") instead of asking again (default: the configuration's
    /// `result_max_age`, else 0: every URL is tested, conditionally where it
    /// can be).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    max_age: Option<std::time::Duration>,
    /// Wait this long between two requests to one site ("1s"; the
    /// configuration's `per_site_delay`, 250ms by default; 0s to 1h).
    #[arg(long, value_name = "DURATION", value_parser = config::PerSiteDelay::parse)]
    delay: Option<config::PerSiteDelay>,
    /// Give up on a request after this long ("30s"; the configuration's
    /// `timeout`; 100ms to 1h).
    #[arg(long, value_name = "DURATION", value_parser = config::Timeout::parse)]
    timeout: Option<config::Timeout>,
    /// Read at most this much of a body ("50MiB"; the configuration's
    /// `max_body`, 10MiB by default; 1KiB to 4GiB): a page longer than
    /// that is parsed up to it, and said so as the run ends.
    #[arg(long, value_name = "SIZE", value_parser = config::MaxBody::parse)]
    max_body: Option<config::MaxBody>,
    /// Traverse documents at most this many links from each task's top (a
    /// task's `max_depth`, 50 by default; 1 to 100000).
    #[arg(long, value_name = "N", value_parser = config::MaxDepth::parse)]
    max_depth: Option<config::MaxDepth>,
    /// Send this header with every request to the sites of the tops
    /// ("Name: value", repeatable), never to other sites; per URL prefix,
    /// and with credentials, in a configuration's `[[request]]` tables.
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// A cookie jar in the Netscape format (curl's, wget's): its cookies
    /// go with the crawl's requests, and the cookies the sites set are
    /// written back to it after the run (a missing file is created).
    #[arg(long, value_name = "FILE")]
    cookie_jar: Option<PathBuf>,
    /// The directory a local tree is deployed from: root-relative links
    /// (`/p1.html`) of its `file:` pages resolve against it, as the web
    /// server would (the configuration's `root_dir`).
    #[arg(long, value_name = "DIR")]
    root_dir: Option<PathBuf>,
    /// Count these statuses as ok beside 2xx: codes and ranges, e.g.
    /// `403,429` or `500..=599` (repeatable; beside the configuration's
    /// `accept_status`). They are not retried.
    #[arg(long, value_name = "STATUSES")]
    accept: Vec<String>,
    /// Make no request for URLs this regular expression matches anywhere
    /// (repeatable; beside the configuration's `exclude_regex`). They are
    /// recorded as avoided, with the pattern. A task's tops are always
    /// requested.
    #[arg(long, value_name = "REGEX")]
    exclude: Vec<String>,
    /// Request URLs this regular expression matches even when an
    /// `--exclude` pattern matches them (repeatable). Given without any
    /// exclude pattern, only the URLs it matches are requested.
    #[arg(long, value_name = "REGEX")]
    include: Vec<String>,
}

pub(super) fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    humantime::parse_duration(s.trim())
        .map_err(|e| format!("`{s}` is not a duration ({e}); write e.g. \"6h\" or \"30m\""))
}

/// A duration above zero (`10s`, `1m`).
pub(super) fn parse_positive_duration(s: &str) -> Result<std::time::Duration, String> {
    match parse_duration(s)? {
        d if d.is_zero() => Err(format!("`{s}` is no time at all; write e.g. \"10s\"")),
        d => Ok(d),
    }
}

impl Overrides {
    /// No setting but the `From` address (for the commands that read no
    /// configuration file).
    pub(super) fn with_from(from: Option<String>) -> Overrides {
        Overrides {
            from,
            ..Overrides::default()
        }
    }

    /// Put the command line's settings over `config`'s; the `From` address
    /// falls back on `EMAIL`.
    pub(super) fn apply(&self, config: &mut Config) -> Result<(), String> {
        let settings = &mut config.settings;
        if let Some(store) = &self.store {
            settings.store = store.clone();
        }
        if let Some(age) = self.max_age {
            settings.result_max_age = age;
        }
        if let Some(d) = self.delay {
            settings.per_site_delay = d.0;
        }
        if let Some(t) = self.timeout {
            settings.timeout = t.0;
        }
        if let Some(b) = self.max_body {
            settings.max_body = b.0;
        }
        if !self.headers.is_empty() {
            let headers = self
                .headers
                .iter()
                .map(|h| config::header_argument(h))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("--header: {e}"))?;
            let tops = config
                .tasks
                .iter()
                .flat_map(|t| std::iter::once(&t.top).chain(&t.more_tops));
            settings
                .requests
                .extend(config::header_rules(&headers, tops));
        }
        if let Some(jar) = &self.cookie_jar {
            settings.cookie_jar = Some(
                spinneret_crawl::fetch::cookies::CookieJar::open(jar)
                    .map_err(|e| format!("--cookie-jar: {e}"))?,
            );
        }
        if let Some(dir) = &self.root_dir {
            settings.root_dir =
                Some(config::root_dir(dir).map_err(|e| format!("--root-dir: {e}"))?);
        }
        for list in &self.accept {
            settings
                .accept_status
                .add_list(list)
                .map_err(|e| format!("--accept: {e}"))?;
        }
        if let Some(depth) = self.max_depth {
            for task in &mut config.tasks {
                task.bounds.max_depth = depth.0 as u32;
            }
        }
        let compile = |list: &[String], flag: &str| -> Result<Vec<config::UrlPattern>, String> {
            list.iter()
                .map(|p| config::UrlPattern::new(p, flag).map_err(|e| format!("{flag}: {e}")))
                .collect()
        };
        let patterns = config::UrlPatterns {
            include: compile(&self.include, "--include")?,
            exclude: compile(&self.exclude, "--exclude")?,
        };
        if !patterns.is_empty() {
            for task in &mut config.tasks {
                task.patterns = task.patterns.with(&patterns);
            }
        }
        if let Some(from) = &self.from {
            config::check_email(from).map_err(|e| format!("--from: {e}"))?;
            settings.from = Some(from.clone());
        } else if settings.from.is_none()
            && let Some(email) = std::env::var("EMAIL").ok().filter(|e| !e.trim().is_empty())
        {
            let email = email.trim();
            match config::check_email(email) {
                Ok(()) => settings.from = Some(email.to_string()),
                // Set for other programs, perhaps with a name: not ours to refuse.
                Err(e) => tracing::warn!(
                    "the EMAIL environment variable is not used for From: {e}; give --from ADDRESS"
                ),
            }
        }
        if self.root_dir.is_some() {
            config
                .tops_under_root()
                .map_err(|e| format!("--root-dir: {e}"))?;
        }
        Ok(())
    }
}
