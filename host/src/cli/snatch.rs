//! WebSnatcher on the command line (seed 004): `spinneret collect` (a
//! profile into its mirror, or `--keep` to tidy one) and `spinneret query`
//! (one search engine, once); `watch` runs a profile's collections through
//! [`collect_run`].

use super::output::outln;
use super::{EXIT_BROKEN, EXIT_OK, EXIT_PLUGIN, EXIT_USAGE, settings_from};
use crate::config;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub(super) struct CollectArgs {
    /// The profile (TOML).
    profile: PathBuf,
    /// Collect nothing: remove every run's files (newest first, each
    /// run's in reverse order of creation) and the directories left
    /// empty; the archive stays.
    #[arg(long, conflicts_with_all = ["archive", "purge_before"])]
    clean: bool,
    /// Collect nothing: copy these pages of the newest run, with their
    /// requisites, into `Archive/TODAY/` (listed in `Archive/archive.html`),
    /// where clean-up never reaches.
    #[arg(long, value_name = "URL", num_args = 1.., conflicts_with = "purge_before")]
    archive: Vec<String>,
    /// Collect nothing: remove the pages archived before this day
    /// (YYYY-MM-DD).
    #[arg(long, value_name = "DATE")]
    purge_before: Option<String>,
    /// Resolve a host name to an address instead of DNS, as HOST=ADDRESS (repeatable).
    #[arg(long, value_name = "HOST=ADDRESS")]
    resolve: Vec<String>,
    /// Send this address in the `From` header (default: the EMAIL
    /// environment variable).
    #[arg(long, value_name = "ADDRESS")]
    from: Option<String>,
}

#[derive(Args, Debug)]
pub(super) struct QueryArgs {
    /// The engine: `builtin:NAME` (see `spinneret plugin builtins`), an
    /// installed plugin (`NAME` or `NAME@^1.0`) or a `.wasm` search-engine
    /// component.
    engine: String,
    /// The words to search for.
    #[arg(required = true, value_name = "KEYWORD")]
    keywords: Vec<String>,
    /// The engine's configuration, a JSON object (what it takes is in its
    /// documentation; `searxng` needs `base`).
    #[arg(long, value_name = "JSON", default_value = "{}")]
    config: String,
    /// A host the engine may reach (repeatable), as a profile's `hosts`:
    /// its query must go to one of them, and the plugin may fetch from
    /// them itself. None: the query may go anywhere and the plugin may
    /// fetch nothing.
    #[arg(long = "host", value_name = "HOST")]
    hosts: Vec<String>,
    /// The most hits to show.
    #[arg(long, value_name = "N", default_value_t = 10,
          value_parser = clap::value_parser!(u32).range(1..=100))]
    max: u32,
    /// Words that must appear together, in this order, where the engine
    /// can say so.
    #[arg(long, value_name = "WORDS")]
    phrase: Option<String>,
    /// A word the results must not contain, where the engine can say so
    /// (repeatable).
    #[arg(long, value_name = "WORD")]
    exclude: Vec<String>,
    /// Keep the results on this site (a host name; its subdomains count),
    /// where the engine can say so.
    #[arg(long, value_name = "HOST")]
    site: Option<String>,
    /// Ask for results in this language (e.g. `en`), where the engine can.
    #[arg(long, value_name = "CODE")]
    language: Option<String>,
    /// Which page of results, from 1.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=50))]
    page: u32,
    /// Print each hit as a JSON line (rank, url, title, snippet).
    #[arg(long)]
    json: bool,
    /// Send this address in the `From` header (default: the EMAIL
    /// environment variable).
    #[arg(long, value_name = "ADDRESS")]
    from: Option<String>,
    /// Resolve a host name to an address instead of DNS, as HOST=ADDRESS (repeatable).
    #[arg(long, value_name = "HOST=ADDRESS")]
    resolve: Vec<String>,
}

/// `spinneret query`: one engine, once; the hits on standard output. Exit
/// 0 with the hits (or none), 1 when the engine could not be asked or gave
/// no results page, 2 for a usage error, 3 when the plugin failed. With
/// `quiet` 1 (`-q`) the URL asked is not said; with 2 (`-qq`) only errors
/// are, and `--json`'s lines (asked for, as a crawl's `--format` report).
pub(super) fn query(args: &QueryArgs, quiet: u8) -> anyhow::Result<u8> {
    let usage = |m: String| {
        eprintln!("spinneret: {m}");
        Ok(EXIT_USAGE)
    };
    let config: serde_json::Value = match serde_json::from_str(&args.config) {
        Ok(v @ serde_json::Value::Object(_)) => v,
        Ok(_) => {
            return usage(
                "--config must be a JSON object, e.g. '{\"base\": \"https://searx.example/\"}'"
                    .into(),
            );
        }
        Err(e) => {
            return usage(format!(
                "--config is not JSON ({e}); write e.g. '{{\"base\": \"https://searx.example/\"}}'"
            ));
        }
    };
    let engine = match crate::app::query::engine_source(&args.engine) {
        Ok(source) => crate::snatch::profile::Engine {
            name: args.engine.clone(),
            source,
            config,
            hosts: args
                .hosts
                .iter()
                .map(|h| h.trim().to_ascii_lowercase())
                .collect(),
            defined_at: "the command line".into(),
        },
        Err(e) => return usage(e),
    };
    let settings = match settings_from(&args.from, &args.resolve) {
        Ok(s) => s,
        Err(e) => return usage(e),
    };
    let options = spinneret_plugin_host::search::SearchEngineOptions {
        language: args.language.clone(),
        page: args.page,
        phrase: args.phrase.clone(),
        exclude: args.exclude.clone(),
        site: args.site.clone(),
        ..crate::app::query::plain_options(args.max)
    };
    let answer = match crate::app::query::query(&engine, &args.keywords, &options, &settings) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("spinneret: {e:#}");
            let plugin = e
                .downcast_ref::<spinneret_plugin_host::sandbox::PluginFailure>()
                .is_some();
            return Ok(if plugin { EXIT_PLUGIN } else { EXIT_BROKEN });
        }
    };
    if !answer.ignored.is_empty() && quiet < 2 {
        eprintln!(
            "spinneret: warning: {} cannot restrict its results by {}; it searched without",
            args.engine,
            answer.ignored.join(", ")
        );
    }
    if answer.hits.is_empty() && answer.no_results.is_none() && quiet < 2 {
        eprintln!(
            "spinneret: warning: {} had no hits the plugin could read; the engine's page may have changed",
            answer.query_url
        );
    }
    if args.json {
        for h in &answer.hits {
            outln!(
                "{}",
                serde_json::json!({"rank": h.rank, "url": h.url, "title": h.title, "snippet": h.snippet})
            );
        }
    } else if quiet < 2 {
        if quiet == 0 {
            eprintln!("asked {}", answer.query_url);
        }
        match answer.no_results.as_deref() {
            Some("") => outln!("no results"),
            Some(words) => outln!("no results (the engine says: {words})"),
            None if answer.hits.is_empty() => outln!("no results"),
            None => {}
        }
        for h in &answer.hits {
            outln!("{:>3}. {}\n     {}", h.rank, h.title, h.url);
            if !h.snippet.trim().is_empty() {
                outln!("     {}", h.snippet.trim());
            }
        }
    }
    Ok(EXIT_OK)
}

/// `spinneret collect --clean | --archive URL… | --purge-before DATE`,
/// said as `quiet` asks: each page archived only without `-q`, what could
/// not be archived and the summary without `-qq`.
fn keep(
    args: &CollectArgs,
    profile: &crate::snatch::profile::Profile,
    quiet: u8,
) -> anyhow::Result<u8> {
    use crate::app::collect::keep;
    if args.clean {
        let (files, runs) = keep::clean(profile)?;
        if quiet < 2 {
            outln!(
                "{files} files of {runs} runs removed from {}",
                profile.mirror.display()
            );
        }
        return Ok(EXIT_OK);
    }
    if let Some(day) = &args.purge_before {
        if jiff::civil::Date::strptime("%Y-%m-%d", day).is_err() {
            eprintln!("spinneret: --purge-before takes a day as YYYY-MM-DD, not `{day}`");
            return Ok(EXIT_USAGE);
        }
        let n = keep::purge_before(profile, day)?;
        if quiet < 2 {
            outln!("{n} archived pages from before {day} removed");
        }
        return Ok(EXIT_OK);
    }
    let mut urls = Vec::new();
    for u in &args.archive {
        match url::Url::parse(u) {
            Ok(u) => urls.push(u),
            Err(e) => {
                eprintln!("spinneret: --archive {u}: not a URL ({e})");
                return Ok(EXIT_USAGE);
            }
        }
    }
    let mut failed = false;
    for (url, done) in keep::archive(profile, &urls, &keep::today())? {
        match done {
            Ok(path) if quiet == 0 => {
                outln!("archived {url}: {}", profile.mirror.join(path).display())
            }
            Ok(_) => {}
            Err(why) => {
                failed = true;
                if quiet < 2 {
                    outln!("not archived: {url}: {why}");
                }
            }
        }
    }
    if quiet < 2 {
        outln!(
            "archive: {}",
            profile.mirror.join("Archive/archive.html").display()
        );
    }
    Ok(if failed { EXIT_BROKEN } else { EXIT_OK })
}

/// `spinneret collect`: a profile's run, said as `quiet` asks (see
/// [`collect_run`]). Exit 0 when everything was collected, 1 when some URL
/// could not be, 2 for a profile that cannot be used.
pub(super) fn collect(args: &CollectArgs, quiet: u8) -> anyhow::Result<u8> {
    let profile = match crate::snatch::profile::load(&args.profile) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("spinneret: {e}");
            return Ok(EXIT_USAGE);
        }
    };
    if args.clean || !args.archive.is_empty() || args.purge_before.is_some() {
        return keep(args, &profile, quiet);
    }
    let settings = match settings_from(&args.from, &args.resolve) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("spinneret: {e}");
            return Ok(EXIT_USAGE);
        }
    };
    collect_run(
        &profile,
        &profile,
        &crate::app::collect::NotDue::default(),
        settings,
        quiet,
    )
    .map(|(code, _)| code)
}

/// The profile's politeness and `[resolve]` over the command line's
/// `settings` (whose `--resolve` stands over the profile's for a host
/// both name).
fn with_profiles_settings(
    profile: &crate::snatch::profile::Profile,
    settings: &mut config::Settings,
) {
    if let Some(d) = profile.per_site_delay {
        settings.per_site_delay = d;
    }
    if let Some(n) = profile.concurrency {
        settings.concurrency = n as usize;
    }
    if let Some(n) = profile.per_site_connections {
        settings.per_site_connections = n as usize;
    }
    for (host, ip) in &profile.resolve {
        settings.resolve.entry(host.clone()).or_insert(*ip);
    }
}

/// One run of `profile` collecting the entries of `due` (the profile, or
/// the part of it due under `watch`) and carrying `not_due` forward: exit
/// 0 when everything was collected, 1 when something could not be, 2 when
/// the profile's plugins cannot be used; and whether a signal stopped it.
/// `settings` come from the command line, whose `--resolve` stands over
/// the profile's `[resolve]`. What is said follows `quiet`, as a crawl's:
/// 0, everything; 1 (`-q`), the summary in one line and what went wrong;
/// 2 (`-qq`), only the errors.
pub(crate) fn collect_run(
    profile: &crate::snatch::profile::Profile,
    due: &crate::snatch::profile::Profile,
    not_due: &crate::app::collect::NotDue,
    mut settings: config::Settings,
    quiet: u8,
) -> anyhow::Result<(u8, bool)> {
    with_profiles_settings(profile, &mut settings);
    let (mut items, skipped) = match crate::app::collect::items(due) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("spinneret: {e}");
            return Ok((EXIT_USAGE, false));
        }
    };
    if let Err(e) = crate::snatch::runs::check_mirror(&profile.mirror) {
        eprintln!("spinneret: {}: {e}", profile.source.display());
        return Ok((EXIT_USAGE, false));
    }
    // One fetcher and one plugin engine for the engines and the pages.
    let mut asker = crate::app::query::Asker::new(&settings)?;
    let wrong = crate::app::collect::index::preflight(&mut asker, profile);
    if !wrong.is_empty() {
        for w in wrong {
            eprintln!("spinneret: {w}");
        }
        eprintln!("spinneret: nothing collected; fix the profile's plugins above and run again");
        return Ok((EXIT_USAGE, false));
    }
    let asked = crate::app::collect::interest_items(due, &mut asker);
    let problems = asked.problems;
    items.extend(asked.items);
    let stop = crate::app::stop::StopRequest::listen(
        "stopping: no new request starts; what was collected is saved, archived and indexed",
    )?;
    let done = crate::app::collect::collect(profile, &items, not_due, &mut asker, stop.flag())?;
    drop(stop);
    let count =
        |c: crate::snatch::changes::Change| done.changes.iter().filter(|x| **x == c).count();
    use crate::snatch::changes::Change;
    use crate::snatch::human_bytes;
    let run = format!(
        "run {}: {} items, {} files, {} in {} ({} requests)",
        done.run.id,
        items.len(),
        done.written.files.len(),
        human_bytes(done.written.bytes),
        profile.mirror.join(&done.run.dir).display(),
        done.requests
    );
    let not_retrieved = match count(Change::NotRetrieved) {
        0 => String::new(),
        n => format!(", {n} not retrieved"),
    };
    let since = format!(
        "since the last run: {} new, {} changed, {} unchanged, {} gone{not_retrieved}",
        count(Change::New),
        count(Change::Changed),
        count(Change::Unchanged),
        done.gone.len()
    );
    match quiet {
        0 => outln!("{run}\n{since}"),
        1 => outln!("{run}; {since}"),
        _ => {}
    }
    if quiet == 0 {
        if !not_due.is_empty() {
            outln!(
                "not due this run: {} pages carried forward from the last run ({} files)",
                count(Change::Carried),
                done.carried_files
            );
        }
        if done.cleaned > 0 {
            outln!(
                "{} files of earlier runs removed (keep_runs = {})",
                done.cleaned,
                profile.keep_runs
            );
        }
        outln!("index: {}", profile.mirror.join(&done.index).display());
        outln!("web archive: {}", profile.mirror.join(&done.warc).display());
        if skipped > 0 {
            outln!("{skipped} bookmarks of other schemes (javascript:, place:, file:) left out");
        }
    }
    let (unasked, failed): (Vec<_>, Vec<_>) = done
        .failed
        .iter()
        .partition(|(_, why)| why == crate::app::collect::fetch::STOPPED);
    if quiet < 2 {
        for (url, why) in &failed {
            outln!("not collected: {url}: {why}");
        }
        if done.stopped {
            let items_left = done.pages.iter().filter(|p| p.path.is_none()).count();
            outln!(
                "stopped: {} URLs queued were not fetched; {items_left} of {} items have no page this run",
                unasked.len(),
                done.pages.len()
            );
        }
        for (file, why) in &done.written.unconverted {
            outln!("links not converted: {file}: {why}");
        }
    }
    if quiet == 0 {
        for n in &asked.notes {
            outln!("note: {n}");
        }
        for (url, why) in &done.avoided {
            outln!("avoided: {url}: {why}");
        }
    }
    let problems: Vec<&String> = problems.iter().chain(&done.problems).collect();
    for p in &problems {
        eprintln!("spinneret: {p}");
    }
    let code = match failed.is_empty() && problems.is_empty() {
        true => EXIT_OK,
        false => EXIT_BROKEN,
    };
    Ok((code, done.stopped))
}
