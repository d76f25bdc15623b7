//! `spinneret results`: what the last run found, as a table or JSON Lines.
//!
//! The JSON Lines schema is `spinneret.result/1`; see `docs/results-json.md`. Fields are
//! only ever added within a schema version.

use super::output::Clipped;
use serde::Serialize;
use spinneret_core::model::{Category, CheckResult};
use spinneret_store::{Referrers, Store};
use std::io::Write;

/// The JSON Lines schema name and version.
pub const RESULT_SCHEMA: &str = "spinneret.result/1";

/// One line of `results --json`.
#[derive(Serialize)]
pub(super) struct ResultLine<'a> {
    /// Always [`RESULT_SCHEMA`].
    pub schema: &'static str,
    /// The run.
    pub run: i64,
    /// The task, with `--task`.
    pub task: Option<&'a str>,
    /// The task's role for the URL (document, leaf, avoided, not_checked), with `--task`.
    pub role: Option<&'a str>,
    /// The result, flattened.
    #[serde(flatten)]
    pub result: &'a CheckResult,
    /// `checked_at` as RFC 3339.
    pub checked: String,
    /// Every document of the run that refers to the URL, with the anchor
    /// text, in URL order.
    pub referrers: Vec<ReferrerLine<'a>>,
}

/// A document that refers to a URL, in [`ResultLine::referrers`].
#[derive(Serialize)]
pub(super) struct ReferrerLine<'a> {
    /// The referring document's URL.
    pub document: &'a str,
    /// The reference's anchor text (or alt text), empty when it has none.
    pub text: &'a str,
}

/// How many referring documents the text listing shows for a URL.
pub(super) const REFERRERS_SHOWN: usize = 3;

/// The referring documents of `url` as the text listings show them under
/// its row: indented lines, at most [`REFERRERS_SHOWN`], then how many more.
fn write_referrers(out: &mut dyn Write, referrers: &Referrers, url: &str) -> std::io::Result<()> {
    let indent = "    ";
    let all = referrers.of(url);
    let n = all.len();
    for (document, text) in all.take(REFERRERS_SHOWN) {
        let document = Clipped(document);
        match text.is_empty() {
            true => writeln!(out, "{indent}from {document}")?,
            false => writeln!(out, "{indent}from {document} (\"{}\")", Clipped(text))?,
        }
    }
    if n > REFERRERS_SHOWN {
        writeln!(out, "{indent}and {} more", n - REFERRERS_SHOWN)?;
    }
    Ok(())
}

fn rfc3339(ts: i64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(ts.max(0) as u64);
    humantime::format_rfc3339_seconds(t).to_string()
}

/// Print the results of the newest run. Returns whether anything is broken.
pub fn print_results(
    store: &Store,
    task: Option<&str>,
    json: bool,
    categories: &[Category],
    out: &mut dyn Write,
) -> anyhow::Result<bool> {
    let Some(run) = store.last_run()? else {
        anyhow::bail!(
            "the store {} has no runs yet; run `spinneret crawl CONFIG` first",
            store.location()
        );
    };
    let task_id = match task {
        Some(name) => {
            let tasks = store.run_tasks(run.id)?;
            match tasks.iter().find(|t| t.name == name) {
                Some(t) => Some(t.id),
                None => {
                    let names: Vec<_> = tasks.iter().map(|t| t.name.as_str()).collect();
                    anyhow::bail!(
                        "run {} has no task `{name}`; its tasks are: {}",
                        run.id,
                        names.join(", ")
                    );
                }
            }
        }
        None => None,
    };
    let mut rows = store.run_results(run.id, task_id)?;
    if !categories.is_empty() {
        rows.retain(|(r, _)| categories.contains(&r.category));
    }
    let broken = rows.iter().any(|(r, _)| r.category == Category::Broken);
    if json {
        let referrers = store.run_referrers(run.id, None)?;
        for (r, role) in &rows {
            let line = ResultLine {
                schema: RESULT_SCHEMA,
                run: run.id,
                task,
                role: role.as_deref(),
                result: r,
                checked: rfc3339(r.checked_at),
                referrers: referrers
                    .of(&r.url)
                    .map(|(document, text)| ReferrerLine { document, text })
                    .collect(),
            };
            serde_json::to_writer(&mut *out, &line)?;
            writeln!(out)?;
        }
        // The same verdict as the text listing's: its broken fragments
        // count too (they are findings, not URL results, so not lines).
        if categories.is_empty() && task.is_none() {
            return Ok(broken || !broken_fragments(store, run.id)?.is_empty());
        }
        return Ok(broken);
    }
    let rank = |c: Category| match c {
        Category::Broken => 0,
        Category::Moved => 1,
        Category::Blocked => 2,
        Category::Avoided => 3,
        Category::NotChecked => 4,
        Category::Ok => 5,
    };
    rows.sort_by(|a, b| {
        rank(a.0.category)
            .cmp(&rank(b.0.category))
            .then_with(|| a.0.url.cmp(&b.0.url))
    });
    // The pages to fix: where each URL that is not ok is referred to from.
    let not_ok: Vec<&str> = rows
        .iter()
        .filter(|(r, _)| r.category != Category::Ok)
        .map(|(r, _)| r.url.as_str())
        .collect();
    let referrers = store.run_referrers(run.id, Some(&not_ok))?;
    writeln!(
        out,
        "run {} ({}), started {}{}",
        run.id,
        run.status,
        rfc3339(run.started_at),
        task.map(|t| format!(", task {t}")).unwrap_or_default()
    )?;
    for (r, role) in &rows {
        write_row(out, r, role.as_deref())?;
        if r.category != Category::Ok {
            write_referrers(out, &referrers, &r.url)?;
        }
    }
    // Links to a place their page lacks are findings, not URL results:
    // listed after them, unless categories were asked for.
    if categories.is_empty() && task.is_none() {
        let fragments = broken_fragments(store, run.id)?;
        write_broken_fragments(out, &fragments)?;
        return Ok(broken || !fragments.is_empty());
    }
    Ok(broken)
}

/// One result as the text listings show it: category, status, method, URL,
/// the task's role (with `--task`), and where it moved or why it failed.
fn write_row(out: &mut dyn Write, r: &CheckResult, role: Option<&str>) -> std::io::Result<()> {
    let status = r.status.map_or("-".to_string(), |s| s.to_string());
    let detail = match (r.category, r.final_url.as_deref()) {
        (Category::Moved, f) => format!("-> {}", f.unwrap_or("?")),
        // A failure at the end of a redirect chain (an error status, or
        // no answer): where it ended, the page to fix or the link to
        // change (a loop, or too many redirects, says its chain itself).
        (_, Some(f))
            if r.category != Category::Ok
                && !r.redirects.is_empty()
                && f != r.url
                && r.status.is_none_or(|s| s >= 400) =>
        {
            format!(
                "{} (at {f}, after {})",
                r.error.as_deref().unwrap_or_default(),
                count(r.redirects.len(), "redirect", "redirects")
            )
        }
        _ => r.error.clone().unwrap_or_default(),
    };
    let role = role.map(|x| format!(" [{x}]")).unwrap_or_default();
    writeln!(
        out,
        "{:<11} {:>4} {:<4} {}{} {}",
        r.category.as_str(),
        status,
        r.method.unwrap_or("-"),
        Clipped(&r.url),
        role,
        Clipped(&detail)
    )
}

/// How many broken and blocked URLs a crawl lists as it ends.
pub(super) const PROBLEMS_SHOWN: usize = 30;

/// The links of `run` whose fragment names no place in their page (the
/// `broken-fragment` findings), each (link, page with it) once however
/// many tasks found it.
pub(super) fn broken_fragments(
    store: &Store,
    run: i64,
) -> anyhow::Result<Vec<(String, String, String)>> {
    let mut found: Vec<(String, String, String)> = store
        .findings(run, None)?
        .into_iter()
        // The host's own, not a plugin's finding of the same name.
        .filter(|f| {
            f.kind == crate::report::fragments::BROKEN_FRAGMENT_KIND && f.source == "spinneret"
        })
        .map(|f| (f.url, f.referrer.unwrap_or_default(), f.message))
        .collect();
    found.sort();
    found.dedup();
    Ok(found)
}

/// `found` (link, page with it, message), at most [`PROBLEMS_SHOWN`], as
/// a crawl ends (after [`write_problems`]); nothing when there are none.
pub(super) fn write_broken_fragments(
    out: &mut dyn Write,
    found: &[(String, String, String)],
) -> anyhow::Result<()> {
    if found.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "\nbroken fragments: {} (the page is there, the place in it is not):",
        found.len()
    )?;
    for (link, page, message) in found.iter().take(PROBLEMS_SHOWN) {
        let (link, message, page) = (Clipped(link), Clipped(message), Clipped(page));
        writeln!(out, "{link}\n    {message}\n    from {page}")?;
    }
    if found.len() > PROBLEMS_SHOWN {
        writeln!(
            out,
            "and {} more: see the tasks' maintenance indexes (the broken-fragment table)",
            found.len() - PROBLEMS_SHOWN
        )?;
    }
    Ok(())
}

/// `n` and the word for that many: `1 page`, `2 pages`.
pub(super) fn count(n: usize, one: &str, many: &str) -> String {
    match n {
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    }
}

/// What a run left unchecked that its reader may not expect, as a crawl
/// ends: `tops` that were read but not parsed (a Markdown file, say: no
/// link of theirs was followed), links of a local tree to files outside
/// it (with how to have them checked), and pages cut at `max_body` (whose
/// later links were never seen); nothing when there are none.
pub(super) fn write_unchecked(
    out: &mut dyn Write,
    store: &Store,
    run: i64,
    tops: &[&str],
    store_arg: &str,
    max_body: u64,
) -> anyhow::Result<()> {
    for top in tops {
        let Some(read) = store.latest_result(top)? else {
            continue;
        };
        if read.run != run {
            continue;
        }
        if read.result.category == Category::Ok && !read.is_document {
            writeln!(
                out,
                "\nnot parsed: the top {top} is {}, not an HTML page: no link in it was followed",
                read.result
                    .content_type
                    .as_deref()
                    .unwrap_or("of no known type")
            )?;
        }
        // A top robots.txt or a rule keeps out: its task checked nothing.
        if read.result.category == Category::Avoided {
            writeln!(
                out,
                "\nnot checked: the top {top} is avoided ({}): nothing of its task was checked",
                read.result.error.as_deref().unwrap_or("no reason given")
            )?;
        }
    }
    use spinneret_crawl::policy::{LOCAL_OUTSIDE_ROOT, LOCAL_OUTSIDE_TREE};
    let outside: Vec<CheckResult> = store
        .run_results_in(run, &[Category::NotChecked])?
        .into_iter()
        .filter(|r| {
            matches!(
                r.error.as_deref(),
                Some(LOCAL_OUTSIDE_TREE | LOCAL_OUTSIDE_ROOT)
            )
        })
        .collect();
    if let Some(first) = outside.first() {
        let (place, what_to_do) = match first.error.as_deref() {
            Some(LOCAL_OUTSIDE_ROOT) => (
                "the root directory",
                "they are outside the deployed site too, unless it is deployed from higher up: then give that directory with --root-dir (or root_dir)",
            ),
            _ => (
                "the tree",
                "give the tree's root with --root-dir (or root_dir) to check them",
            ),
        };
        writeln!(
            out,
            "\nnot checked: {} outside {place}, such as {}{}; {what_to_do} \
             (spinneret results{store_arg} --category not_checked lists them)",
            count(
                outside.len(),
                "link to a local file",
                "links to local files"
            ),
            first.url,
            first
                .referrer
                .as_deref()
                .map(|r| format!(" (from {r})"))
                .unwrap_or_default(),
        )?;
    }
    let cut = store.run_results_cut(run)?;
    if let Some(first) = cut.first() {
        writeln!(
            out,
            "\nread in part: {} longer than max_body ({}), such as {}; \
             links past that point were not seen (raise it with --max-body or max_body)",
            count(cut.len(), "page", "pages"),
            spinneret_core::values::human_size(max_body),
            first.url,
        )?;
    }
    Ok(())
}

/// A task that checked nothing: its top, and the line that says why.
pub(super) struct NothingChecked {
    /// The task's top.
    pub(super) top: String,
    /// `nothing checked from TOP: WHY`.
    pub(super) line: String,
}

/// Why each task of `tasks` that checked nothing did not (no page of its
/// was read as HTML, so no link was followed, and nothing it reached was
/// broken): a line each, naming its top, for the tasks of `config` in
/// `run`. A `library` task has no top of its own and is never one.
pub(super) fn nothing_checked(
    store: &Store,
    run: i64,
    config: &crate::config::Config,
    tasks: &[spinneret_crawl::TaskSummary],
) -> anyhow::Result<Vec<NothingChecked>> {
    let mut lines = Vec::new();
    for summary in tasks.iter().filter(|t| t.documents == 0 && t.broken == 0) {
        let Some(task) = config.tasks.iter().find(|t| t.name == summary.name) else {
            continue;
        };
        if task.kind == spinneret_core::model::TaskKind::Library {
            continue;
        }
        let top = task.top.as_str();
        let read = store.latest_result(top)?.filter(|r| r.run == run);
        let why = match read.as_ref().map(|r| &r.result) {
            None => "it was not reached".to_string(),
            Some(r) => {
                let error = r.error.as_deref().unwrap_or("no reason given");
                match r.category {
                    Category::Avoided if error.contains("robots.txt") => format!(
                        "it is avoided ({error}); a site of your own is checked with `spinneret check --ignore-robots-for-tops`"
                    ),
                    Category::Avoided => format!("it is avoided ({error})"),
                    Category::Blocked => format!(
                        "the server refused the robot ({error}); for a site of your own, give the credentials with --basic-auth 'URL USER:PASSWORD' or --header, or --accept the status"
                    ),
                    Category::Moved => format!(
                        "it moves to {}, outside the task's site; check that URL instead",
                        r.final_url.as_deref().unwrap_or("another site")
                    ),
                    Category::NotChecked => format!("it is not checked ({error})"),
                    Category::Ok | Category::Broken => format!(
                        "it is {}, not an HTML page: no link in it was followed",
                        r.content_type.as_deref().unwrap_or("of no known type")
                    ),
                }
            }
        };
        lines.push(NothingChecked {
            top: top.to_string(),
            line: format!("nothing checked from {top}: {why}"),
        });
    }
    Ok(lines)
}

/// The broken and blocked URLs of `run`, each with the pages that refer
/// to it (at most [`PROBLEMS_SHOWN`], then the command that lists them
/// all), as a crawl ends; nothing when there are none.
pub(super) fn write_problems(
    out: &mut dyn Write,
    store: &Store,
    run: i64,
    store_arg: &str,
) -> anyhow::Result<()> {
    let rows = store.run_results_in(run, &[Category::Broken, Category::Blocked])?;
    if rows.is_empty() {
        return Ok(());
    }
    let shown: Vec<&str> = rows
        .iter()
        .take(PROBLEMS_SHOWN)
        .map(|r| r.url.as_str())
        .collect();
    let referrers = store.run_referrers(run, Some(&shown))?;
    let count = |c: Category| rows.iter().filter(|r| r.category == c).count();
    let (broken, blocked) = (count(Category::Broken), count(Category::Blocked));
    // Blocked is a warning everywhere (JUnit skips it, SARIF and GitHub
    // warn, the exit status leaves it out): the server refused the robot,
    // which says nothing of what a reader gets.
    let meaning = match (broken, blocked) {
        (_, 0) => "a reader cannot follow these links",
        (0, _) => {
            "their servers refused the robot, 401, 403 or 429: not verified, and no failure; open them in a browser, or --accept the status to count it ok"
        }
        _ => {
            "a reader cannot follow the broken links; the servers of the blocked ones refused the robot, 401, 403 or 429: not verified, and no failure"
        }
    };
    writeln!(out, "\nbroken: {broken}, blocked: {blocked} ({meaning}):")?;
    for r in rows.iter().take(PROBLEMS_SHOWN) {
        write_row(out, r, None)?;
        write_referrers(out, &referrers, &r.url)?;
    }
    if rows.len() > PROBLEMS_SHOWN {
        writeln!(
            out,
            "and {} more: spinneret results{store_arg} --category broken --category blocked",
            rows.len() - PROBLEMS_SHOWN
        )?;
    }
    Ok(())
}
