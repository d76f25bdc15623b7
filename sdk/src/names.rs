//! The stable names of the WIT enums, as reports and configurations write
//! them (`not_checked`, `anchor`, `warning`, …).

use crate::types::{Category, RefKind, RunInfo, Severity, TaskInfo, TaskKind};

/// `ok`, `moved`, `broken`, `blocked`, `avoided` or `not_checked`.
pub fn category(c: Category) -> &'static str {
    match c {
        Category::Ok => "ok",
        Category::Moved => "moved",
        Category::Broken => "broken",
        Category::Blocked => "blocked",
        Category::Avoided => "avoided",
        Category::NotChecked => "not_checked",
    }
}

/// `anchor`, `image`, `stylesheet`, … (the WIT case names). The
/// maintenance index shows MOMspider's reference types instead (`get`,
/// `query`, `img`, …); the project's `docs/writing-plugins.md` maps one to
/// the other.
pub fn ref_kind(k: RefKind) -> &'static str {
    match k {
        RefKind::Anchor => "anchor",
        RefKind::Area => "area",
        RefKind::Image => "image",
        RefKind::Frame => "frame",
        RefKind::Iframe => "iframe",
        RefKind::Stylesheet => "stylesheet",
        RefKind::Icon => "icon",
        RefKind::Alternate => "alternate",
        RefKind::Link => "link",
        RefKind::Script => "script",
        RefKind::Object => "object",
        RefKind::Embed => "embed",
        RefKind::Form => "form",
        RefKind::Refresh => "refresh",
    }
}

/// `info`, `warning` or `error`.
pub fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Info => "info",
        Severity::Warning => "warning",
        Severity::Error => "error",
    }
}

/// Why a check came out as it did, as a person reads it: the error the
/// host recorded (`HTTP 404 Not Found`, `connection refused: …`), else the
/// status (`HTTP 301`), else the category's name.
pub fn reason(outcome: &crate::types::CheckResult) -> std::borrow::Cow<'_, str> {
    match (&outcome.error, outcome.status) {
        (Some(e), _) => e.as_str().into(),
        (None, Some(s)) => format!("HTTP {s}").into(),
        (None, None) => category(outcome.category).into(),
    }
}

/// `document`, `leaf`, `avoided` or `not_checked`: a task's role for a URL
/// it reached, as reports write it.
#[cfg(feature = "reporter")]
pub fn role(r: crate::reporter::Role) -> &'static str {
    use crate::reporter::Role;
    match r {
        Role::Document => "document",
        Role::Leaf => "leaf",
        Role::Avoided => "avoided",
        Role::NotChecked => "not_checked",
    }
}

/// The kind of `task` in `run`: `site`, `tree`, `owner`, `web` or
/// `library`. The WIT's `task-kind` has the first three (a `web` task is
/// handed over as `site`, a `library` task as `tree`); the host writes
/// every task's kind in the run's options (`"task_kinds": {"NAME":
/// "KIND"}`), which this reads first.
pub fn task_kind(run: &RunInfo, task: &TaskInfo) -> String {
    let given = serde_json::from_str::<serde_json::Value>(&run.options)
        .ok()
        .and_then(|o| {
            o["task_kinds"][task.name.as_str()]
                .as_str()
                .map(str::to_string)
        })
        .filter(|k| ["site", "tree", "owner", "web", "library"].contains(&k.as_str()));
    given.unwrap_or_else(|| {
        match task.kind {
            TaskKind::Site => "site",
            TaskKind::Tree => "tree",
            TaskKind::Owner => "owner",
        }
        .to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_s_kind_is_read_from_the_run_s_options_first() {
        let mut run = crate::testing::fixtures::run(0);
        let task = crate::testing::fixtures::task("Worm", "http://a.example/");
        assert_eq!(task_kind(&run, &task), "site");
        run.options = r#"{"task_kinds":{"Worm":"web","Lib":"library"}}"#.into();
        assert_eq!(task_kind(&run, &task), "web");
        run.options = r#"{"task_kinds":{"Worm":"<script>"}}"#.into();
        assert_eq!(task_kind(&run, &task), "site");
    }
}
