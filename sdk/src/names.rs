//! The stable names of the WIT enums, as reports and configurations write
//! them (`not_checked`, `anchor`, `warning`, …).

use crate::types::{Category, RefKind, Severity};

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
