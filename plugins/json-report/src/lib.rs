//! `json-report`: JSON Lines of every URL a task reached and every finding,
//! for machines and CI, written to `report.jsonl` in the task's output
//! directory.
//!
//! Schema `spinneret.report/1`, one object per line:
//! - `{"schema", "type": "task", "run", "task", "kind", "top", "started_at"}` first;
//! - `{"type": "url", "url", "role", "category", "method", "status", "error",
//!   "content_type", "last_modified", "expires", "owner", "redirects",
//!   "final_url", "referrer", "checked_at"}` per URL, in URL order;
//! - `{"type": "document", "url", "title", "owner", "expires", "references"}` per document;
//! - `{"type": "finding", "kind", "url", "referrer", "message", "severity", "source"}` per finding;
//! - `{"type": "summary", "urls", "documents", "by_category": {...}, "findings"}` last.
//!
//! Configuration: `file` (default `report.jsonl`).

use serde::Serialize;
use serde_json::{Value, json};
use spinneret_sdk::names;
use spinneret_sdk::reporter::*;
use std::collections::BTreeMap;

/// The schema name and version written in the first line.
pub const SCHEMA: &str = "spinneret.report/1";

/// The reporter's state for one task.
pub struct JsonReport {
    file: String,
    header: Option<Value>,
    /// (URL, line) as they come (the host sends them in URL order).
    urls: Vec<(String, String)>,
    documents: Vec<(String, String)>,
    findings: Vec<String>,
    by_category: BTreeMap<&'static str, u64>,
}

fn role_name(r: Role) -> &'static str {
    match r {
        Role::Document => "document",
        Role::Leaf => "leaf",
        Role::Avoided => "avoided",
        Role::NotChecked => "not_checked",
    }
}

/// One JSON line, newline included.
fn to_line(v: &impl Serialize) -> String {
    let mut s = serde_json::to_string(v).expect("plain data serializes");
    s.push('\n');
    s
}

#[derive(Serialize)]
struct HopLine<'a> {
    url: &'a str,
    status: u16,
}

#[derive(Serialize)]
struct UrlLine<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    url: &'a str,
    role: &'static str,
    category: &'static str,
    method: Option<&'a str>,
    status: Option<u16>,
    error: Option<&'a str>,
    content_type: Option<&'a str>,
    last_modified: Option<&'a str>,
    expires: Option<&'a str>,
    owner: Option<&'a str>,
    redirects: Vec<HopLine<'a>>,
    final_url: Option<&'a str>,
    referrer: Option<&'a str>,
    checked_at: i64,
}

#[derive(Serialize)]
struct ReferenceLine<'a> {
    target: &'a str,
    kind: &'static str,
    text: &'a str,
}

#[derive(Serialize)]
struct DocumentLine<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    url: &'a str,
    title: Option<&'a str>,
    owner: Option<&'a str>,
    expires: Option<&'a str>,
    parse_errors: u32,
    references: Vec<ReferenceLine<'a>>,
}

#[derive(Serialize)]
struct FindingLine<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    kind: &'a str,
    url: &'a str,
    referrer: Option<&'a str>,
    message: &'a str,
    severity: &'static str,
    source: &'a str,
}

impl Reporter for JsonReport {
    fn configure(config: Value) -> Result<Self, String> {
        let file = match config.get("file") {
            None => "report.jsonl".to_string(),
            Some(Value::String(f)) if !f.is_empty() => f.clone(),
            Some(other) => {
                return Err(format!(
                    "json-report: `file` must be a file name, not {other}"
                ));
            }
        };
        spinneret_sdk::settings::check_keys("json-report", &config, &["file"])?;
        Ok(JsonReport {
            file,
            header: None,
            urls: Vec::new(),
            documents: Vec::new(),
            findings: Vec::new(),
            by_category: BTreeMap::new(),
        })
    }

    fn begin(&mut self, run: RunInfo, task: TaskInfo) -> Result<(), String> {
        self.urls.clear();
        self.documents.clear();
        self.findings.clear();
        self.by_category.clear();
        let kind = match task.kind {
            TaskKind::Site => "site",
            TaskKind::Tree => "tree",
            TaskKind::Owner => "owner",
        };
        self.header = Some(json!({
            "schema": SCHEMA,
            "type": "task",
            "run": run.id,
            "task": task.name,
            "kind": kind,
            "top": task.top,
            "started_at": run.started_at,
        }));
        Ok(())
    }

    fn on_result(&mut self, r: CheckResult, role: Role) {
        *self
            .by_category
            .entry(names::category(r.category))
            .or_insert(0) += 1;
        let line = UrlLine {
            ty: "url",
            url: &r.url,
            role: role_name(role),
            category: names::category(r.category),
            method: r.method.as_deref(),
            status: r.status,
            error: r.error.as_deref(),
            content_type: r.content_type.as_deref(),
            last_modified: r.last_modified.as_deref(),
            expires: r.expires.as_deref(),
            owner: r.owner.as_deref(),
            redirects: r
                .redirects
                .iter()
                .map(|h| HopLine {
                    url: &h.url,
                    status: h.status,
                })
                .collect(),
            final_url: r.final_url.as_deref(),
            referrer: r.referrer.as_deref(),
            checked_at: r.checked_at,
        };
        let line = to_line(&line);
        self.urls.push((r.url, line));
    }

    fn on_document(&mut self, d: Document, _outcome: CheckResult) {
        let line = DocumentLine {
            ty: "document",
            url: &d.url,
            title: d.title.as_deref(),
            owner: d.owner.as_deref(),
            expires: d.expires.as_deref(),
            parse_errors: d.parse_errors,
            references: d
                .references
                .iter()
                .map(|r| ReferenceLine {
                    target: &r.target,
                    kind: names::ref_kind(r.kind),
                    text: &r.anchor_text,
                })
                .collect(),
        };
        self.documents.push((d.url.clone(), to_line(&line)));
    }

    fn on_finding(&mut self, f: Finding) {
        self.findings.push(to_line(&FindingLine {
            ty: "finding",
            kind: &f.kind,
            url: &f.url,
            referrer: f.referrer.as_deref(),
            message: &f.message,
            severity: names::severity(f.severity),
            source: &f.source,
        }));
    }

    fn finish(&mut self, out: &mut dyn Output) -> Result<(), String> {
        let header = self
            .header
            .take()
            .ok_or("json-report: finish without begin")?;
        let mut text = String::with_capacity(
            self.urls.iter().map(|u| u.1.len()).sum::<usize>()
                + self.documents.iter().map(|d| d.1.len()).sum::<usize>()
                + 4096,
        );
        text.push_str(&header.to_string());
        text.push('\n');
        // In URL order, one line per URL (a URL told twice: the last word).
        self.urls.sort_by(|a, b| a.0.cmp(&b.0));
        self.urls.dedup_by(|later, earlier| {
            let same = later.0 == earlier.0;
            if same {
                std::mem::swap(later, earlier);
            }
            same
        });
        for (_, line) in &self.urls {
            text.push_str(line);
        }
        self.documents.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, line) in &self.documents {
            text.push_str(line);
        }
        for line in &self.findings {
            text.push_str(line);
        }
        text.push_str(
            &json!({
                "type": "summary",
                "urls": self.urls.len(),
                "documents": self.documents.len(),
                "by_category": self.by_category,
                "findings": self.findings.len(),
            })
            .to_string(),
        );
        text.push('\n');
        out.write(&self.file, text.as_bytes())
    }
}

spinneret_sdk::export_reporter!(JsonReport);

#[cfg(test)]
mod tests {
    use super::*;
    use spinneret_sdk::testing::{ReporterHarness, fixtures};

    #[test]
    fn urls_come_out_in_order_once_each() {
        let mut h = ReporterHarness::<JsonReport>::new("").unwrap();
        h.run_task(
            fixtures::run(1_700_000_000),
            fixtures::task("A", "http://a.example/"),
            vec![
                (
                    fixtures::result("http://a.example/b", Category::Ok),
                    Role::Leaf,
                ),
                (
                    fixtures::result("http://a.example/a", Category::Ok),
                    Role::Leaf,
                ),
                (
                    fixtures::result("http://a.example/b", Category::Broken),
                    Role::Leaf,
                ),
            ],
            vec![],
            vec![],
        )
        .unwrap();
        let text = h.output.text("report.jsonl").unwrap();
        let urls: Vec<(String, String)> = text
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|v| v["type"] == "url")
            .map(|v| (v["url"].to_string(), v["category"].to_string()))
            .collect();
        assert_eq!(
            urls,
            [
                ("\"http://a.example/a\"".to_string(), "\"ok\"".to_string()),
                (
                    "\"http://a.example/b\"".to_string(),
                    "\"broken\"".to_string()
                )
            ]
        );
    }

    #[test]
    fn writes_one_line_per_url_document_and_finding() {
        let mut h = ReporterHarness::<JsonReport>::new("").unwrap();
        let mut moved = fixtures::result("http://a.example/old", Category::Moved);
        moved.final_url = Some("http://a.example/new".into());
        moved.redirects = vec![Hop {
            url: "http://a.example/old".into(),
            status: 301,
        }];
        h.run_task(
            fixtures::run(1_700_000_000),
            fixtures::task("A", "http://a.example/"),
            vec![
                (
                    fixtures::result("http://a.example/", Category::Ok),
                    Role::Document,
                ),
                (
                    fixtures::result("http://a.example/gone", Category::Broken),
                    Role::Leaf,
                ),
                (moved, Role::Leaf),
            ],
            vec![fixtures::document(
                "http://a.example/",
                "Home",
                &[("http://a.example/gone", RefKind::Anchor, "Gone")],
            )],
            vec![Finding {
                kind: "broken".into(),
                url: "http://a.example/gone".into(),
                referrer: Some("http://a.example/".into()),
                message: "404".into(),
                severity: Severity::Error,
                source: "maintenance".into(),
            }],
        )
        .unwrap();
        let text = h.output.text("report.jsonl").unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 7);
        assert_eq!(lines[0]["schema"], SCHEMA);
        assert_eq!(lines[0]["task"], "A");
        assert_eq!(lines[1]["url"], "http://a.example/");
        assert_eq!(lines[2]["category"], "broken");
        assert_eq!(lines[3]["final_url"], "http://a.example/new");
        assert_eq!(lines[3]["redirects"][0]["status"], 301);
        assert_eq!(lines[4]["type"], "document");
        assert_eq!(lines[4]["references"][0]["text"], "Gone");
        assert_eq!(lines[5]["severity"], "error");
        assert_eq!(lines[6]["by_category"]["broken"], 1);
    }

    #[test]
    fn refuses_unknown_settings() {
        let err = ReporterHarness::<JsonReport>::new(r#"{"fiel": "x"}"#)
            .err()
            .unwrap();
        assert_eq!(
            err,
            "json-report: unknown setting `fiel`; the only setting is `file`"
        );
    }
}
