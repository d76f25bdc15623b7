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
//! The file is written as the host hands the items over (a task of a
//! million URLs takes no more memory than one of ten), and replaces the
//! previous one when the report is complete.
//!
//! Configuration: `file` (default `report.jsonl`).

use serde::Serialize;
use serde_json::{Value, json};
use spinneret_sdk::names;
use spinneret_sdk::reporter::*;
use std::collections::BTreeMap;

/// The schema name and version written in the first line.
pub const SCHEMA: &str = "spinneret.report/1";

/// The reporter's state for one task: counters only.
pub struct JsonReport {
    file: String,
    urls: u64,
    documents: u64,
    findings: u64,
    by_category: BTreeMap<&'static str, u64>,
    /// References of the document being written so far (its line is open).
    open_document: Option<u32>,
}

/// One JSON line, newline included.
/// Write `v` as JSON to the end of `text`, with a newline.
fn push_line(text: &mut Vec<u8>, v: &impl Serialize) {
    serde_json::to_writer(&mut *text, v).expect("plain data serializes");
    text.push(b'\n');
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
struct DocumentHead<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    url: &'a str,
    title: Option<&'a str>,
    owner: Option<&'a str>,
    expires: Option<&'a str>,
    parse_errors: u32,
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

impl JsonReport {
    fn append_line(&self, out: &mut dyn Output, v: &impl Serialize) -> Result<(), String> {
        let mut text = Vec::with_capacity(256);
        push_line(&mut text, v);
        out.append(&self.file, &text)
    }
}

impl Reporter for JsonReport {
    fn configure(config: Value) -> Result<Self, String> {
        spinneret_sdk::settings::check_keys("json-report", &config, &["file"])?;
        let file =
            spinneret_sdk::settings::file_name("json-report", &config, "file", "report.jsonl")?;
        Ok(JsonReport {
            file,
            urls: 0,
            documents: 0,
            findings: 0,
            by_category: BTreeMap::new(),
            open_document: None,
        })
    }

    /// Results, documents (their references, not their targets: each
    /// target has its own `url` line) and findings.
    fn wants(&self) -> Wants {
        Wants::RESULTS | Wants::DOCUMENTS | Wants::FINDINGS
    }

    fn begin(
        &mut self,
        run: RunInfo,
        task: TaskInfo,
        _counts: TaskCounts,
        out: &mut dyn Output,
    ) -> Result<(), String> {
        self.urls = 0;
        self.documents = 0;
        self.findings = 0;
        self.by_category.clear();
        self.open_document = None;
        let kind = spinneret_sdk::names::task_kind(&run, &task);
        self.append_line(
            out,
            &json!({
                "schema": SCHEMA,
                "type": "task",
                "run": run.id,
                "task": task.name,
                "kind": kind,
                "top": task.top,
                "started_at": run.started_at,
            }),
        )
    }

    fn on_result(
        &mut self,
        r: CheckResult,
        role: Role,
        out: &mut dyn Output,
    ) -> Result<(), String> {
        self.urls += 1;
        *self
            .by_category
            .entry(names::category(r.category))
            .or_insert(0) += 1;
        self.append_line(
            out,
            &UrlLine {
                ty: "url",
                url: &r.url,
                role: names::role(role),
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
            },
        )
    }

    fn on_document(&mut self, part: TaskDocument, out: &mut dyn Output) -> Result<(), String> {
        let d = &part.document;
        let mut text = Vec::with_capacity(128 * (d.references.len() + 2));
        if self.open_document != Some(part.number) {
            self.close_document(&mut text);
            // The line's head, its `references` array left open for the parts.
            let head = serde_json::to_vec(&DocumentHead {
                ty: "document",
                url: &d.url,
                title: d.title.as_deref(),
                owner: d.owner.as_deref(),
                expires: d.expires.as_deref(),
                parse_errors: d.parse_errors,
            })
            .expect("plain data serializes");
            text.extend_from_slice(&head[..head.len() - 1]);
            text.extend_from_slice(b",\"references\":[");
            self.open_document = Some(part.number);
        } else if !d.references.is_empty() {
            text.push(b',');
        }
        for (i, r) in d.references.iter().enumerate() {
            if i > 0 {
                text.push(b',');
            }
            let line = ReferenceLine {
                target: &r.target,
                kind: names::ref_kind(r.kind),
                text: &r.anchor_text,
            };
            serde_json::to_writer(&mut text, &line).expect("plain data serializes");
        }
        if part.last_part {
            self.close_document(&mut text);
        }
        out.append(&self.file, &text)
    }

    fn on_finding(&mut self, f: TaskFinding, out: &mut dyn Output) -> Result<(), String> {
        let mut text = Vec::with_capacity(256);
        self.close_document(&mut text);
        self.findings += 1;
        let f = &f.finding;
        push_line(
            &mut text,
            &FindingLine {
                ty: "finding",
                kind: &f.kind,
                url: &f.url,
                referrer: f.referrer.as_deref(),
                message: &f.message,
                severity: names::severity(f.severity),
                source: &f.source,
            },
        );
        out.append(&self.file, &text)
    }

    fn finish(&mut self, out: &mut dyn Output) -> Result<(), String> {
        let mut text = Vec::new();
        self.close_document(&mut text);
        push_line(
            &mut text,
            &json!({
                "type": "summary",
                "urls": self.urls,
                "documents": self.documents,
                "by_category": self.by_category,
                "findings": self.findings,
            }),
        );
        out.append(&self.file, &text)
    }
}

impl JsonReport {
    /// End the open document's line, if one is open.
    fn close_document(&mut self, text: &mut Vec<u8>) {
        if self.open_document.take().is_some() {
            self.documents += 1;
            text.extend_from_slice(b"]}\n");
        }
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
    fn a_document_in_parts_is_one_line() {
        let mut h = ReporterHarness::<JsonReport>::new("").unwrap();
        h.part_size = 2;
        let refs: Vec<(String, RefKind, &str)> = (0..5)
            .map(|i| (format!("http://a.example/{i}"), RefKind::Anchor, "x"))
            .collect();
        let refs: Vec<(&str, RefKind, &str)> =
            refs.iter().map(|(t, k, a)| (t.as_str(), *k, *a)).collect();
        h.run_task(
            fixtures::run(1_700_000_000),
            fixtures::task("A", "http://a.example/"),
            vec![(
                fixtures::result("http://a.example/", Category::Ok),
                Role::Document,
            )],
            vec![
                fixtures::document("http://a.example/", "Home", &refs),
                fixtures::document("http://a.example/empty", "Empty", &[]),
            ],
            vec![],
        )
        .unwrap();
        let text = h.output.text("report.jsonl").unwrap();
        let docs: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|v| v["type"] == "document")
            .collect();
        assert_eq!(docs.len(), 2);
        let targets: Vec<&str> = docs[0]["references"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["target"].as_str().unwrap())
            .collect();
        assert_eq!(
            targets,
            [0, 1, 2, 3, 4].map(|i| format!("http://a.example/{i}"))
        );
        assert_eq!(docs[1]["references"], serde_json::json!([]));
        let summary: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        assert_eq!(summary["documents"], 2);
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
