//! `csv-report`: a task's checked URLs as CSV (RFC 4180, UTF-8, CRLF line
//! ends, a header row), for a spreadsheet or a script: one row per URL the
//! task reached, in URL order, then one row per link whose fragment names
//! no place in its target (category `broken_fragment`, the link as its
//! URL, the page with the link as its referrer).
//!
//! Columns: `task`, `url`, `role` (document, leaf, avoided, not_checked),
//! `category` (ok, moved, broken, blocked, avoided, not_checked,
//! broken_fragment), `status`, `reason`, `final_url`, `referrer` (the page
//! that first referred to it), `content_type`, `last_modified`,
//! `checked_at` (RFC 3339, UTC).
//!
//! A field a spreadsheet would read as a formula (one that starts with
//! `=`, `+`, `-`, `@`, a tab or a carriage return) gets a `'` in front:
//! the text comes from the web, and a cell must not run it.
//!
//! Written to `report.csv` in the task's output directory as the host
//! hands the items over. Configuration: `file` (default `report.csv`).

use serde_json::Value;
use spinneret_sdk::reporter::*;
use spinneret_sdk::{dates, names};

/// The header row.
pub const HEADER: &str = "task,url,role,category,status,reason,final_url,referrer,content_type,last_modified,checked_at\r\n";

/// The reporter's settings and the task being written.
pub struct CsvReport {
    file: String,
    task: String,
}

/// Append `field` to `row` as one CSV field: quoted when it holds a comma,
/// a quote or a line end (its quotes doubled), with a `'` in front when a
/// spreadsheet would take it for a formula.
pub fn push_field(row: &mut String, field: &str) {
    let formula = field.starts_with(['=', '+', '-', '@', '\t', '\r']);
    let quoted = formula || field.contains([',', '"', '\n', '\r']);
    if quoted {
        row.push('"');
    }
    if formula {
        row.push('\'');
    }
    match quoted {
        true => row.push_str(&field.replace('"', "\"\"")),
        false => row.push_str(field),
    }
    if quoted {
        row.push('"');
    }
}

/// One row of `fields`, with its line end.
fn row(fields: &[&str]) -> String {
    let mut r = String::with_capacity(fields.iter().map(|f| f.len() + 1).sum::<usize>() + 8);
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            r.push(',');
        }
        push_field(&mut r, f);
    }
    r.push_str("\r\n");
    r
}

impl Reporter for CsvReport {
    fn configure(config: Value) -> Result<Self, String> {
        spinneret_sdk::settings::check_keys("csv-report", &config, &["file"])?;
        Ok(CsvReport {
            file: spinneret_sdk::settings::file_name("csv-report", &config, "file", "report.csv")?,
            task: String::new(),
        })
    }

    /// Each URL's result, and the findings (for broken fragments).
    fn wants(&self) -> Wants {
        Wants::RESULTS | Wants::FINDINGS
    }

    fn begin(
        &mut self,
        _run: RunInfo,
        task: TaskInfo,
        _counts: TaskCounts,
        out: &mut dyn Output,
    ) -> Result<(), String> {
        self.task = task.name;
        out.append(&self.file, HEADER.as_bytes())
    }

    fn on_result(
        &mut self,
        r: CheckResult,
        role: Role,
        out: &mut dyn Output,
    ) -> Result<(), String> {
        let status = r.status.map(|s| s.to_string()).unwrap_or_default();
        let reason = match r.category {
            Category::Ok => Default::default(),
            _ => names::reason(&r),
        };
        let line = row(&[
            &self.task,
            &r.url,
            names::role(role),
            names::category(r.category),
            &status,
            &reason,
            r.final_url.as_deref().unwrap_or(""),
            r.referrer.as_deref().unwrap_or(""),
            r.content_type.as_deref().unwrap_or(""),
            r.last_modified.as_deref().unwrap_or(""),
            &dates::format_iso8601(r.checked_at),
        ]);
        out.append(&self.file, line.as_bytes())
    }

    fn on_finding(&mut self, f: TaskFinding, out: &mut dyn Output) -> Result<(), String> {
        if f.finding.kind != BROKEN_FRAGMENT {
            return Ok(());
        }
        let f = f.finding;
        let line = row(&[
            &self.task,
            &f.url,
            "",
            "broken_fragment",
            "",
            &f.message,
            "",
            f.referrer.as_deref().unwrap_or(""),
            "",
            "",
            "",
        ]);
        out.append(&self.file, line.as_bytes())
    }

    fn finish(&mut self, _out: &mut dyn Output) -> Result<(), String> {
        Ok(())
    }
}

spinneret_sdk::export_reporter!(CsvReport);

#[cfg(test)]
mod tests {
    use super::*;
    use spinneret_sdk::testing::{ReporterHarness, fixtures};

    #[test]
    fn a_row_per_url_then_the_broken_fragments() {
        let mut h = ReporterHarness::<CsvReport>::new("").unwrap();
        let mut broken = fixtures::result("http://a.example/gone", Category::Broken);
        broken.error = Some("HTTP 404 Not Found, \"really\"".into());
        broken.referrer = Some("http://a.example/".into());
        let mut moved = fixtures::result("http://a.example/old", Category::Moved);
        moved.status = Some(301);
        moved.final_url = Some("http://a.example/new".into());
        h.run_task(
            fixtures::run(784_111_777),
            fixtures::task("Site", "http://a.example/"),
            vec![
                (
                    fixtures::result("http://a.example/", Category::Ok),
                    Role::Document,
                ),
                (broken, Role::Leaf),
                (moved, Role::Leaf),
            ],
            vec![],
            vec![fixtures::finding(
                "broken-fragment",
                "http://a.example/#nowhere",
                Some("http://a.example/"),
                "no element with id or name \"nowhere\" in http://a.example/",
            )],
        )
        .unwrap();
        let t = "2023-11-14T22:13:20Z";
        assert_eq!(
            h.output.text("report.csv").unwrap(),
            format!(
                "{HEADER}\
                 Site,http://a.example/,document,ok,200,,,,text/html,,{t}\r\n\
                 Site,http://a.example/gone,leaf,broken,404,\"HTTP 404 Not Found, \"\"really\"\"\",,http://a.example/,text/html,,{t}\r\n\
                 Site,http://a.example/old,leaf,moved,301,HTTP 301,http://a.example/new,,text/html,,{t}\r\n\
                 Site,http://a.example/#nowhere,,broken_fragment,,\"no element with id or name \"\"nowhere\"\" in http://a.example/\",,http://a.example/,,,\r\n"
            )
        );
    }

    #[test]
    fn a_formula_is_kept_text() {
        let mut r = String::new();
        push_field(&mut r, "=HYPERLINK(\"http://evil.example\")");
        assert_eq!(r, "\"'=HYPERLINK(\"\"http://evil.example\"\")\"");
        let mut r = String::new();
        push_field(&mut r, "plain");
        assert_eq!(r, "plain");
    }
}
