//! `markdown-report`: what a reader cannot follow in a task, as GitHub
//! Flavored Markdown, short enough for a pull-request comment or a CI job
//! summary (`$GITHUB_STEP_SUMMARY`):
//!
//! - a heading with the task's name;
//! - one line of counts: URLs checked, broken, blocked, broken fragments,
//!   then the rest by category;
//! - a table of the problems: each broken or blocked URL (in URL order),
//!   then each link whose fragment names no place in its target, with why
//!   and the page that first refers to it; at most `max_rows` rows (the
//!   line after the table says how many more there are and where they are).
//!
//! Text from the web cannot add markup, a table cell, a link or a mention
//! (`@team`) of its own: the reasons, and URLs that are not http or https,
//! are code spans; http and https URLs are links.
//! Written to `report.md` in the task's output directory as the host hands
//! the items over. Configuration: `file` (default `report.md`), `max_rows`
//! (default 500 a task; GitHub refuses a comment over 65,536 characters,
//! which long URLs or several tasks can pass: lower it for comments).

use serde_json::Value;
use spinneret_sdk::reporter::*;
use spinneret_sdk::{dates, names};
use std::fmt::Write as _;

/// The reporter's settings and what it keeps of the task being written.
pub struct MarkdownReport {
    file: String,
    max_rows: u64,
    /// Rows written, and problems left out past `max_rows`.
    rows: u64,
    left_out: u64,
}

/// Append `text` to `out` as Markdown text inside a table cell: the
/// characters that start markup, and `|`, backslash-escaped; line ends
/// made spaces.
pub fn push_text(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '!' | '~' | '&' | '|' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
}

/// Append `text` to `out` as a code span inside a table cell: nothing in it
/// is markup, a link or a mention. Its fence is longer than any run of
/// backticks in it; `|` is escaped (a table splits cells before it reads
/// code spans), line ends made spaces.
pub fn push_code(out: &mut String, text: &str) {
    if text.is_empty() {
        return;
    }
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = text.starts_with('`') || text.ends_with('`');
    out.push_str(&fence);
    if pad {
        out.push(' ');
    }
    for c in text.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    if pad {
        out.push(' ');
    }
    out.push_str(&fence);
}

/// Append `url` to `out`: a link when it is http or https and an
/// autolink can carry it whole, else a code span.
pub fn push_url(out: &mut String, url: &str) {
    let web = url.starts_with("http://") || url.starts_with("https://");
    let plain = !url
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '<' | '>' | '\\' | '`'));
    if web && plain {
        out.push('<');
        // A pipe would end the table cell, even inside a link.
        out.push_str(&url.replace('|', "\\|"));
        out.push('>');
    } else {
        push_code(out, url);
    }
}

/// "1 broken fragment", "2 broken fragments".
fn counted(n: u64, one: &str, many: &str) -> String {
    match n {
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    }
}

impl MarkdownReport {
    /// A problem's row, unless `max_rows` are written already.
    fn row(&mut self, what: &str, url: &str, why: &str, from: Option<&str>) -> Option<String> {
        if self.rows >= self.max_rows {
            self.left_out += 1;
            return None;
        }
        self.rows += 1;
        let mut r = format!("| {what} | ");
        push_url(&mut r, url);
        r.push_str(" | ");
        push_code(&mut r, why);
        r.push_str(" | ");
        if let Some(f) = from {
            push_url(&mut r, f);
        }
        r.push_str(" |\n");
        Some(r)
    }
}

impl Reporter for MarkdownReport {
    fn configure(config: Value) -> Result<Self, String> {
        spinneret_sdk::settings::check_keys("markdown-report", &config, &["file", "max_rows"])?;
        let max_rows = match config.get("max_rows") {
            None => 500,
            Some(v) => v.as_u64().filter(|n| *n > 0).ok_or_else(|| {
                format!("markdown-report: `max_rows` must be a whole number above 0, not {v}")
            })?,
        };
        Ok(MarkdownReport {
            file: spinneret_sdk::settings::file_name(
                "markdown-report",
                &config,
                "file",
                "report.md",
            )?,
            max_rows,
            rows: 0,
            left_out: 0,
        })
    }

    /// Each URL's result, and the findings (for broken fragments).
    fn wants(&self) -> Wants {
        Wants::RESULTS | Wants::FINDINGS
    }

    fn begin(
        &mut self,
        run: RunInfo,
        task: TaskInfo,
        counts: TaskCounts,
        out: &mut dyn Output,
    ) -> Result<(), String> {
        self.rows = 0;
        self.left_out = 0;
        let by = |c: Category| category_count(&counts, c);
        let fragments = finding_count(&counts, BROKEN_FRAGMENT);
        let (broken, blocked) = (by(Category::Broken), by(Category::Blocked));
        let mut m = String::from("## spinneret: ");
        push_text(&mut m, &task.name);
        m.push_str("\n\n");
        let _ = write!(m, "{} checked from ", counted(counts.urls, "URL", "URLs"));
        push_url(&mut m, &task.top);
        let started = dates::format_iso8601(run.started_at);
        let _ = write!(
            m,
            " in run {} ({} UTC): ",
            run.id,
            started.trim_end_matches('Z').replacen('T', " ", 1)
        );
        let problems = [
            counted(broken, "broken", "broken"),
            counted(blocked, "blocked", "blocked"),
            counted(fragments, "broken fragment", "broken fragments"),
        ];
        // The problems there are stand out.
        let shown: Vec<String> = problems
            .iter()
            .map(|p| match p.starts_with("0 ") {
                true => p.clone(),
                false => format!("**{p}**"),
            })
            .collect();
        let _ = write!(
            m,
            "{}; {} ok, {} moved, {} avoided, {} not checked.\n\n",
            shown.join(", "),
            by(Category::Ok),
            by(Category::Moved),
            by(Category::Avoided),
            by(Category::NotChecked),
        );
        if broken + blocked + fragments == 0 {
            m.push_str("No broken links, blocked links or broken fragments.\n");
        } else {
            m.push_str("| | Link | Why | Found on |\n|---|---|---|---|\n");
        }
        out.append(&self.file, m.as_bytes())
    }

    fn on_result(
        &mut self,
        r: CheckResult,
        _role: Role,
        out: &mut dyn Output,
    ) -> Result<(), String> {
        if !matches!(r.category, Category::Broken | Category::Blocked) {
            return Ok(());
        }
        let what = names::category(r.category);
        match self.row(what, &r.url, &names::reason(&r), r.referrer.as_deref()) {
            Some(row) => out.append(&self.file, row.as_bytes()),
            None => Ok(()),
        }
    }

    fn on_finding(&mut self, f: TaskFinding, out: &mut dyn Output) -> Result<(), String> {
        if f.finding.kind != BROKEN_FRAGMENT {
            return Ok(());
        }
        let f = f.finding;
        match self.row("broken fragment", &f.url, &f.message, f.referrer.as_deref()) {
            Some(row) => out.append(&self.file, row.as_bytes()),
            None => Ok(()),
        }
    }

    fn finish(&mut self, out: &mut dyn Output) -> Result<(), String> {
        if self.left_out > 0 {
            let more = format!(
                "\n… and {} more (`max_rows` is {}): `spinneret results` lists them all.\n",
                self.left_out, self.max_rows
            );
            out.append(&self.file, more.as_bytes())?;
        }
        Ok(())
    }
}

spinneret_sdk::export_reporter!(MarkdownReport);

#[cfg(test)]
mod tests {
    use super::*;
    use spinneret_sdk::testing::{ReporterHarness, fixtures};

    fn results() -> Vec<(CheckResult, Role)> {
        let mut broken = fixtures::result("http://a.example/gone", Category::Broken);
        broken.error = Some("HTTP 404 Not Found".into());
        broken.referrer = Some("http://a.example/".into());
        let mut blocked = fixtures::result("http://a.example/a|b", Category::Blocked);
        blocked.error = Some("HTTP 403 <b>Forbidden</b>".into());
        blocked.referrer = Some("http://a.example/".into());
        vec![
            (
                fixtures::result("http://a.example/", Category::Ok),
                Role::Document,
            ),
            (broken, Role::Leaf),
            (blocked, Role::Leaf),
            (
                fixtures::result("mailto:x@a.example", Category::NotChecked),
                Role::NotChecked,
            ),
        ]
    }

    #[test]
    fn counts_then_a_table_of_what_a_reader_cannot_follow() {
        let mut h = ReporterHarness::<MarkdownReport>::new("").unwrap();
        h.run_task(
            fixtures::run(784_111_777),
            fixtures::task("Site *1*", "http://a.example/"),
            results(),
            vec![],
            vec![fixtures::finding(
                "broken-fragment",
                "http://a.example/#nowhere",
                Some("http://a.example/"),
                "no element with id or name \"nowhere\" in http://a.example/",
            )],
        )
        .unwrap();
        assert_eq!(
            h.output.text("report.md").unwrap(),
            "## spinneret: Site \\*1\\*\n\n\
             4 URLs checked from <http://a.example/> in run 1 (1994-11-06 08:49:37 UTC): \
             **1 broken**, **1 blocked**, **1 broken fragment**; 1 ok, 0 moved, 0 avoided, 1 not checked.\n\n\
             | | Link | Why | Found on |\n|---|---|---|---|\n\
             | blocked | <http://a.example/a\\|b> | `HTTP 403 <b>Forbidden</b>` | <http://a.example/> |\n\
             | broken | <http://a.example/gone> | `HTTP 404 Not Found` | <http://a.example/> |\n\
             | broken fragment | <http://a.example/#nowhere> | `no element with id or name \"nowhere\" in http://a.example/` | <http://a.example/> |\n"
        );
    }

    #[test]
    fn rows_past_the_limit_are_counted_and_a_clean_task_says_so() {
        let mut h = ReporterHarness::<MarkdownReport>::new(r#"{"max_rows": 1}"#).unwrap();
        h.run_task(
            fixtures::run(784_111_777),
            fixtures::task("Site", "http://a.example/"),
            results(),
            vec![],
            vec![],
        )
        .unwrap();
        let text = h.output.text("report.md").unwrap();
        assert!(
            text.contains("**1 broken**, **1 blocked**, 0 broken fragments;"),
            "{text}"
        );
        assert!(
            text.contains("| blocked | <http://a.example/a\\|b> |"),
            "{text}"
        );
        assert!(!text.contains("| broken |"), "{text}");
        assert!(
            text.ends_with(
                "\n… and 1 more (`max_rows` is 1): `spinneret results` lists them all.\n"
            ),
            "{text}"
        );
        let mut h = ReporterHarness::<MarkdownReport>::new("").unwrap();
        h.run_task(
            fixtures::run(784_111_777),
            fixtures::task("Site", "http://a.example/"),
            vec![(
                fixtures::result("http://a.example/", Category::Ok),
                Role::Document,
            )],
            vec![],
            vec![],
        )
        .unwrap();
        assert!(
            h.output
                .text("report.md")
                .unwrap()
                .ends_with("No broken links, blocked links or broken fragments.\n")
        );
        assert!(
            MarkdownReport::configure(serde_json::json!({"max_rows": 0}))
                .err()
                .unwrap()
                .contains("`max_rows` must be a whole number above 0, not 0")
        );
    }

    #[test]
    fn web_text_cannot_add_markup() {
        let mut s = String::new();
        push_text(&mut s, "[x](javascript:alert(1)) | `y`\n#");
        assert_eq!(s, "\\[x\\](javascript:alert(1)) \\| \\`y\\` \\#");
        let mut s = String::new();
        push_url(&mut s, "javascript:alert(1)");
        assert_eq!(s, "`javascript:alert(1)`");
        let mut s = String::new();
        push_url(&mut s, "http://a.example/<x>");
        assert_eq!(s, "`http://a.example/<x>`");
        // A reason naming a place cannot link or mention.
        let mut s = String::new();
        push_code(&mut s, "no \"@acme/x\" or http://evil.example/ | ``a``\n");
        assert_eq!(s, "```no \"@acme/x\" or http://evil.example/ \\| ``a`` ```");
        let mut s = String::new();
        push_code(&mut s, "`edge`");
        assert_eq!(s, "`` `edge` ``");
    }
}
