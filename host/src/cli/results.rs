//! `spinneret results`: what the last run found, as a table or JSON Lines.
//!
//! The JSON Lines schema is `spinneret.result/1`; see `docs/results-json.md`. Fields are
//! only ever added within a schema version.

use serde::Serialize;
use spinneret_core::model::{Category, CheckResult};
use spinneret_store::Store;
use std::io::Write;

/// The JSON Lines schema name and version.
pub const RESULT_SCHEMA: &str = "spinneret.result/1";

/// One line of `results --json`.
#[derive(Serialize)]
pub struct ResultLine<'a> {
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
            store.path().display()
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
        for (r, role) in &rows {
            let line = ResultLine {
                schema: RESULT_SCHEMA,
                run: run.id,
                task,
                role: role.as_deref(),
                result: r,
                checked: rfc3339(r.checked_at),
            };
            serde_json::to_writer(&mut *out, &line)?;
            writeln!(out)?;
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
    writeln!(
        out,
        "run {} ({}), started {}{}",
        run.id,
        run.status,
        rfc3339(run.started_at),
        task.map(|t| format!(", task {t}")).unwrap_or_default()
    )?;
    for (r, role) in &rows {
        let status = r.status.map_or("-".to_string(), |s| s.to_string());
        let detail = match r.category {
            Category::Moved => format!("-> {}", r.final_url.as_deref().unwrap_or("?")),
            _ => r.error.clone().unwrap_or_default(),
        };
        let role = role
            .as_deref()
            .map(|x| format!(" [{x}]"))
            .unwrap_or_default();
        writeln!(
            out,
            "{:<11} {:>4} {:<4} {}{} {}",
            r.category.as_str(),
            status,
            r.method.unwrap_or("-"),
            r.url,
            role,
            detail
        )?;
    }
    Ok(broken)
}
