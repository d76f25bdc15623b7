//! `sarif-report`: a task's findings as a SARIF 2.1.0 log, the format
//! code-scanning tools read (GitHub code scanning's `upload-sarif`,
//! GitLab, the SARIF viewers of editors): one run per task, one result per
//! place a finding is at.
//!
//! - The run's tool is `spinneret`, its version the host's, with one rule
//!   per finding kind the task has (`broken`, `blocked`, `moved`,
//!   `broken-fragment`, `expiring`, …), each with a short description.
//!   The run's `automationDetails.id` is the task's name and `/`, so the
//!   runs of several tasks in one log are told apart.
//! - A finding about following a link (`broken`, `blocked`, `moved`,
//!   `broken-fragment`) is a result at each link to its URL: the document
//!   with the link, and the link's line and column as `region.startLine`
//!   and `region.startColumn` (no region when the parser does not know
//!   the line, no `startColumn` when it knows the line alone; the run's
//!   `columnKind` is `unicodeCodePoints`, the parser's unit: a column
//!   counts characters, not UTF-16 units); for a broken fragment, the
//!   referrer's link to the page. When the host names no link, the
//!   result is at the document that refers to the URL; when there is
//!   none either (a broken top), at the URL itself.
//! - Any other finding (`expiring`, `bad-html`, `content-changed`, …) is
//!   about its URL: one result there, with no region.
//! - `level` is the finding's severity (`error`, `warning`, `note`),
//!   `message.text` its URL and its message.
//!
//! A document of a local tree (a `file:` URL) below `base`, when it is
//! configured, is named by its path relative to `base` (`uriBaseId`
//! `SRCROOT`, which the run's `originalUriBaseIds` says is `base`); any
//! other by its absolute URL. `--format sarif` sets `base` to the current
//! directory, so a run from a repository's root names the files as code
//! scanning wants them.
//!
//! The log is written as the host hands the items over: the rules at
//! `begin` (the counts name the kinds), each result as its finding comes,
//! the closing brackets at `finish`. Of the documents the reporter keeps
//! each document's URL and its references' lines and columns (8 bytes a
//! reference, not the references), so a task of a million URLs fits the plugin's memory
//! cap. The run's head, each rule
//! and each result are lines of their own. With several tasks,
//! `--format sarif` prints their runs in one log.
//!
//! Written to `report.sarif` in the task's output directory.
//! Configuration: `file` (default `report.sarif`), `base` (the `file:` URL
//! of a directory), `omit` (the finding kinds left out, with their rules;
//! default `["recently-modified"]`, news rather than something to fix,
//! which every file of a fresh checkout would be).

use serde::Serialize;
use serde_json::Value;
use spinneret_sdk::reporter::*;
use std::borrow::Cow;
use std::fmt::Write as _;

use spinneret_sdk::places::{self, FileReport, Places};

/// The JSON schema the log names.
pub const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The id of the base that relative locations are under.
pub const SRCROOT: &str = "SRCROOT";

/// The reporter's settings and what it keeps of the task being written.
pub struct SarifReport {
    settings: FileReport,
    /// The task's finding kinds, in the order of the run's rules.
    kinds: Vec<String>,
    /// The documents' URLs and the lines of their references.
    places: Places,
    /// Results written for the task so far.
    results: u64,
}

/// `{"text": …}`: a message or a description.
#[derive(Serialize)]
struct Text<'a> {
    text: &'a str,
}

/// A rule of the run: a finding kind.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule<'a> {
    id: &'a str,
    short_description: Text<'a>,
}

/// A result: a finding at one place.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    rule_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    rule_index: Option<usize>,
    level: &'static str,
    message: Text<'a>,
    locations: [Location<'a>; 1],
}

/// Where a result is.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location<'a> {
    physical_location: PhysicalLocation<'a>,
}

/// A file (or URL) and the line in it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation<'a> {
    artifact_location: ArtifactLocation<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<Region>,
}

/// A file, relative to a base, or a URL.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation<'a> {
    uri: Cow<'a, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    uri_base_id: Option<&'static str>,
}

/// A line, and the column on it when known.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    start_column: Option<u32>,
}

/// `v` as compact JSON.
fn json<T: Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).expect("plain data serializes")
}

/// The short descriptions of the finding kinds spinneret's own parts
/// report.
const DESCRIPTIONS: [(&str, &str); 9] = [
    (
        "broken",
        "A link's target cannot be accessed: an HTTP error, a network failure, a redirect loop or an invalid URL.",
    ),
    (
        "blocked",
        "A link's target refused the robot (401, 403, 429): a reader may not be able to follow it either.",
    ),
    (
        "moved",
        "A link's target redirects: the link can point where it ends up.",
    ),
    (
        BROKEN_FRAGMENT,
        "A link's fragment names no place in its target: it lands at the top of the page instead.",
    ),
    (
        "expiring",
        "An owned document's Expires is near or has passed.",
    ),
    (
        "recently-modified",
        "A document was modified recently (within the task's changed_days).",
    ),
    (
        "content-changed",
        "A document's content differs from the previous run's.",
    ),
    ("bad-html", "A document has HTML syntax faults."),
    (
        "plugin-failure",
        "A plugin failed while the run checked or reported the task.",
    ),
];

/// A rule's short description of the finding kind `kind`.
pub fn describe(kind: &str) -> Cow<'static, str> {
    match DESCRIPTIONS.iter().find(|(k, _)| *k == kind) {
        Some(&(_, description)) => Cow::Borrowed(description),
        None => format!("Findings of kind {kind}.").into(),
    }
}

/// SARIF's level for a finding's severity.
pub fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// How a result names the document (or URL) `url`: below `base`, by its
/// path relative to it, under [`SRCROOT`]; else by the URL itself.
pub fn artifact<'a>(base: Option<&str>, url: &'a str) -> (Cow<'a, str>, Option<&'static str>) {
    match places::relative(base, url) {
        // A colon in the first segment would read as a scheme.
        Some(rel) if rel.split('/').next().unwrap_or(rel).contains(':') => {
            (format!("./{rel}").into(), Some(SRCROOT))
        }
        Some(rel) => (rel.into(), Some(SRCROOT)),
        None => (url.into(), None),
    }
}

/// A result's message: the finding's URL and its message.
pub fn message_text(f: &Finding) -> String {
    match f.message.is_empty() {
        true => f.url.clone(),
        false => format!("{}: {}", f.url, f.message),
    }
}

impl Reporter for SarifReport {
    fn configure(config: Value) -> Result<Self, String> {
        Ok(SarifReport {
            settings: FileReport::read("sarif-report", &config, "report.sarif")?,
            kinds: Vec::new(),
            places: Places::default(),
            results: 0,
        })
    }

    /// The documents with their targets and lines (to know where each link
    /// is), and the findings.
    fn wants(&self) -> Wants {
        Wants::DOCUMENTS | Wants::TARGETS | Wants::LINES | Wants::FINDINGS
    }

    fn begin(
        &mut self,
        run: RunInfo,
        task: TaskInfo,
        counts: TaskCounts,
        out: &mut dyn Output,
    ) -> Result<(), String> {
        self.kinds = counts
            .findings
            .iter()
            .map(|(k, _)| k.clone())
            .filter(|k| self.settings.shows(k))
            .collect();
        self.places = Places::default();
        self.results = 0;
        let mut s = String::with_capacity(1024);
        let _ = writeln!(
            s,
            "{{\"$schema\":\"{SCHEMA}\",\"version\":\"2.1.0\",\"runs\":["
        );
        let _ = write!(
            s,
            "{{\"tool\":{{\"driver\":{{\"name\":\"spinneret\",\"version\":{},\"rules\":[",
            json(&run.host_version)
        );
        for (i, kind) in self.kinds.iter().enumerate() {
            s.push_str(if i == 0 { "\n" } else { ",\n" });
            let description = describe(kind);
            s.push_str(&json(&Rule {
                id: kind,
                short_description: Text { text: &description },
            }));
        }
        let _ = write!(
            s,
            "\n]}}}},\"automationDetails\":{{\"id\":{}}},\"columnKind\":\"unicodeCodePoints\"",
            json(&format!("{}/", task.name))
        );
        if let Some(base) = &self.settings.base {
            let _ = write!(
                s,
                ",\"originalUriBaseIds\":{{\"{SRCROOT}\":{{\"uri\":{}}}}}",
                json(base)
            );
        }
        s.push_str(",\"results\":[\n");
        out.append(&self.settings.file, s.as_bytes())
    }

    fn on_document(&mut self, d: TaskDocument, _out: &mut dyn Output) -> Result<(), String> {
        self.places.add(&d);
        Ok(())
    }

    fn on_finding(&mut self, f: TaskFinding, out: &mut dyn Output) -> Result<(), String> {
        if !self.settings.shows(&f.finding.kind) {
            return Ok(());
        }
        let text = message_text(&f.finding);
        let rule_index = self.kinds.iter().position(|k| *k == f.finding.kind);
        let mut s = String::with_capacity(512);
        for spot in self.places.spots(&f) {
            let (uri, uri_base_id) = artifact(self.settings.base.as_deref(), &spot.url);
            let result = SarifResult {
                rule_id: &f.finding.kind,
                rule_index,
                level: level(f.finding.severity),
                message: Text { text: &text },
                locations: [Location {
                    physical_location: PhysicalLocation {
                        artifact_location: ArtifactLocation { uri, uri_base_id },
                        region: (spot.line > 0).then_some(Region {
                            start_line: spot.line,
                            start_column: (spot.column > 0).then_some(spot.column),
                        }),
                    },
                }],
            };
            if self.results > 0 {
                s.push_str(",\n");
            }
            self.results += 1;
            s.push_str(&json(&result));
        }
        out.append(&self.settings.file, s.as_bytes())
    }

    fn finish(&mut self, out: &mut dyn Output) -> Result<(), String> {
        // What was kept of the documents is not needed past the task.
        self.places = Places::default();
        let end: &[u8] = match self.results {
            0 => b"]}\n]}\n",
            _ => b"\n]}\n]}\n",
        };
        out.append(&self.settings.file, end)
    }
}

spinneret_sdk::export_reporter!(SarifReport);

#[cfg(test)]
mod tests {
    use super::*;
    use spinneret_sdk::testing::{ReporterHarness, fixtures};

    /// Run 1, of spinneret 1.2.3 (not the SDK's version, which changes).
    fn run() -> RunInfo {
        let mut run = fixtures::run(784_111_777);
        run.host_version = "1.2.3".into();
        run
    }

    /// The log's lines, after checking that it is one JSON document.
    fn lines(text: &str) -> Vec<&str> {
        let parsed: Result<Value, _> = serde_json::from_str(text);
        assert!(parsed.is_ok(), "not JSON: {parsed:?}\n{text}");
        text.lines().collect()
    }

    #[test]
    fn a_result_at_each_link_with_its_line_and_column_relative_to_base() {
        let mut h = ReporterHarness::<SarifReport>::new(r#"{"base": "file:///w/site"}"#).unwrap();
        // The index comes in two parts: its third and fourth links (9:14,
        // the broken fragment's, and one whose place is not known) are in
        // the second.
        h.part_size = 2;
        h.run_case(run(), fixtures::linked_file_tree()).unwrap();
        let text = h.output.text("report.sarif").unwrap();
        assert_eq!(
            lines(&text),
            [
                r#"{"$schema":"https://json.schemastore.org/sarif-2.1.0.json","version":"2.1.0","runs":["#,
                r#"{"tool":{"driver":{"name":"spinneret","version":"1.2.3","rules":["#,
                r#"{"id":"broken","shortDescription":{"text":"A link's target cannot be accessed: an HTTP error, a network failure, a redirect loop or an invalid URL."}},"#,
                r#"{"id":"moved","shortDescription":{"text":"A link's target redirects: the link can point where it ends up."}},"#,
                r#"{"id":"bad-html","shortDescription":{"text":"A document has HTML syntax faults."}},"#,
                r#"{"id":"broken-fragment","shortDescription":{"text":"A link's fragment names no place in its target: it lands at the top of the page instead."}}"#,
                r#"]}},"automationDetails":{"id":"Site/"},"columnKind":"unicodeCodePoints","originalUriBaseIds":{"SRCROOT":{"uri":"file:///w/site/"}},"results":["#,
                r#"{"ruleId":"broken","ruleIndex":0,"level":"error","message":{"text":"file:///w/site/gone.html: broken: file not found"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"index.html","uriBaseId":"SRCROOT"},"region":{"startLine":7,"startColumn":5}}}]},"#,
                r#"{"ruleId":"broken","ruleIndex":0,"level":"error","message":{"text":"file:///w/site/gone.html: broken: file not found"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"sub/a%20b.html","uriBaseId":"SRCROOT"},"region":{"startLine":5,"startColumn":6}}}]},"#,
                r#"{"ruleId":"moved","ruleIndex":1,"level":"warning","message":{"text":"http://b.example/old: moved to http://b.example/new (301)"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"index.html","uriBaseId":"SRCROOT"}}}]},"#,
                r#"{"ruleId":"bad-html","ruleIndex":2,"level":"note","message":{"text":"file:///w/site/sub/a%20b.html: no-title ×1 (the document has no title)"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"sub/a%20b.html","uriBaseId":"SRCROOT"}}}]},"#,
                r#"{"ruleId":"broken-fragment","ruleIndex":3,"level":"warning","message":{"text":"file:///w/site/sub/a%20b.html#team: no element with id or name \"team\" in file:///w/site/sub/a%20b.html"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"index.html","uriBaseId":"SRCROOT"},"region":{"startLine":9,"startColumn":14}}}]}"#,
                "]}",
                "]}",
            ]
        );
    }

    #[test]
    fn a_site_on_the_web_is_located_by_absolute_urls() {
        let mut h = ReporterHarness::<SarifReport>::new("").unwrap();
        h.run_case(run(), fixtures::linked_web_page()).unwrap();
        let text = h.output.text("report.sarif").unwrap();
        assert_eq!(
            lines(&text)[6..],
            [
                r#"]}},"automationDetails":{"id":"Web/"},"columnKind":"unicodeCodePoints","results":["#,
                r#"{"ruleId":"broken","ruleIndex":0,"level":"error","message":{"text":"http://a.example/gone: broken: HTTP 404 Not Found"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"http://a.example/"},"region":{"startLine":4,"startColumn":10}}}]},"#,
                r#"{"ruleId":"blocked","ruleIndex":1,"level":"warning","message":{"text":"http://a.example/secret: blocked: HTTP 403 Forbidden"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"http://a.example/"},"region":{"startLine":6,"startColumn":7}}}]},"#,
                r#"{"ruleId":"broken-fragment","ruleIndex":2,"level":"warning","message":{"text":"http://a.example/other#x: no element with id or name \"x\" in http://a.example/other"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"http://a.example/"}}}]},"#,
                r#"{"ruleId":"plugin-failure","ruleIndex":3,"level":"error","message":{"text":"http://a.example/: soft-404: cut off at its deadline"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"http://a.example/"}}}]}"#,
                "]}",
                "]}",
            ]
        );
        assert_eq!(
            lines(&text)[2],
            r#"{"id":"broken","shortDescription":{"text":"A link's target cannot be accessed: an HTTP error, a network failure, a redirect loop or an invalid URL."}},"#
        );
    }

    #[test]
    fn a_task_without_findings_is_an_empty_run() {
        let mut h = ReporterHarness::<SarifReport>::new(r#"{"file": "links.sarif"}"#).unwrap();
        h.run_task(
            run(),
            fixtures::task("Quiet", "http://a.example/"),
            vec![(
                fixtures::result("http://a.example/", Category::Ok),
                Role::Document,
            )],
            vec![fixtures::document("http://a.example/", "Home", &[])],
            vec![],
        )
        .unwrap();
        assert_eq!(
            h.output.text("links.sarif").unwrap(),
            "{\"$schema\":\"https://json.schemastore.org/sarif-2.1.0.json\",\"version\":\"2.1.0\",\"runs\":[\n\
             {\"tool\":{\"driver\":{\"name\":\"spinneret\",\"version\":\"1.2.3\",\"rules\":[\n\
             ]}},\"automationDetails\":{\"id\":\"Quiet/\"},\"columnKind\":\"unicodeCodePoints\",\"results\":[\n\
             ]}\n\
             ]}\n"
        );
    }

    #[test]
    fn recently_modified_is_left_out_unless_omit_says_otherwise() {
        let url = "file:///w/index.html";
        let results = |config: &str| {
            let mut h = ReporterHarness::<SarifReport>::new(config).unwrap();
            let case = fixtures::page_with_finding(
                url,
                "recently-modified",
                "modified today",
                Severity::Info,
            );
            h.run_case(run(), case).unwrap();
            let log: Value = serde_json::from_str(&h.output.text("report.sarif").unwrap()).unwrap();
            let rules = log["runs"][0]["tool"]["driver"]["rules"]
                .as_array()
                .unwrap()
                .len();
            let results = log["runs"][0]["results"].as_array().unwrap().len();
            (rules, results)
        };
        assert_eq!(results("{}"), (0, 0), "left out by default, rule and all");
        assert_eq!(results(r#"{"omit": []}"#), (1, 1));
        assert_eq!(results(r#"{"omit": ["bad-html"]}"#), (1, 1));
        assert!(
            ReporterHarness::<SarifReport>::new(r#"{"omit": "recently-modified"}"#)
                .err()
                .unwrap()
                .contains("sarif-report: `omit` must be a list of strings")
        );
    }

    #[test]
    fn hostile_text_stays_inside_its_json_strings() {
        let mut h = ReporterHarness::<SarifReport>::new(r#"{"base": "file:///w/"}"#).unwrap();
        let url = "file:///w/a,b:c%25.html";
        let message = "say \"hi\"\r\n100% :: a,b <b>";
        h.run_task(
            run(),
            fixtures::task("T \"1\"\n", url),
            vec![(fixtures::result(url, Category::Ok), Role::Document)],
            vec![fixtures::document(url, "<T>", &[])],
            vec![fixtures::finding_with(
                "note:a,b",
                url,
                None,
                message,
                Severity::Warning,
            )],
        )
        .unwrap();
        let text = h.output.text("report.sarif").unwrap();
        let lines = lines(&text);
        assert_eq!(
            lines[2],
            r#"{"id":"note:a,b","shortDescription":{"text":"Findings of kind note:a,b."}}"#
        );
        assert_eq!(
            lines[3],
            r#"]}},"automationDetails":{"id":"T \"1\"\n/"},"columnKind":"unicodeCodePoints","originalUriBaseIds":{"SRCROOT":{"uri":"file:///w/"}},"results":["#
        );
        // A colon in the first segment of a relative path would be a scheme.
        assert_eq!(
            lines[4],
            r#"{"ruleId":"note:a,b","ruleIndex":0,"level":"warning","message":{"text":"file:///w/a,b:c%25.html: say \"hi\"\r\n100% :: a,b <b>"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"./a,b:c%25.html","uriBaseId":"SRCROOT"}}}]}"#
        );
        let log: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            log["runs"][0]["results"][0]["message"]["text"],
            format!("{url}: {message}")
        );
        assert_eq!(log["runs"][0]["automationDetails"]["id"], "T \"1\"\n/");
    }

    #[test]
    fn files_below_base_are_relative_and_the_rest_absolute() {
        let base = Some("file:///w/site/");
        assert_eq!(
            artifact(base, "file:///w/site/docs/a.html"),
            (Cow::Borrowed("docs/a.html"), Some(SRCROOT))
        );
        assert_eq!(
            artifact(base, "file:///w/other/a.html"),
            (Cow::Borrowed("file:///w/other/a.html"), None)
        );
        assert_eq!(
            artifact(base, "http://a.example/w/site/a.html"),
            (Cow::Borrowed("http://a.example/w/site/a.html"), None)
        );
        assert_eq!(
            artifact(base, "file:///w/site/"),
            (Cow::Borrowed("file:///w/site/"), None)
        );
        assert_eq!(
            artifact(None, "file:///w/site/a.html"),
            (Cow::Borrowed("file:///w/site/a.html"), None)
        );
        assert_eq!(
            artifact(base, "file:///w/site/d/x:y.html"),
            (Cow::Borrowed("d/x:y.html"), Some(SRCROOT))
        );
    }

    #[test]
    fn settings_are_checked() {
        let refused = |config: Value| SarifReport::configure(config).err().unwrap();
        assert_eq!(
            refused(serde_json::json!({"bsae": "file:///w/"})),
            "sarif-report: unknown setting `bsae`; the settings are file, base, omit"
        );
        assert_eq!(
            refused(serde_json::json!({"base": "https://a.example/"})),
            "sarif-report: `base` must be the file: URL of a directory, e.g. \"file:///home/me/site/\", not \"https://a.example/\""
        );
        assert_eq!(
            refused(serde_json::json!({"base": 3})),
            "sarif-report: `base` must be the file: URL of a directory, e.g. \"file:///home/me/site/\", not 3"
        );
        let r = SarifReport::configure(serde_json::json!({"base": "file:///w/a%20b/"})).unwrap();
        assert_eq!(r.settings.base.as_deref(), Some("file:///w/a%20b/"));
        assert_eq!(r.settings.file, "report.sarif");
    }
}
