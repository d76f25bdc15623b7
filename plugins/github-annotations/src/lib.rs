//! `github-annotations`: a task's findings as GitHub Actions workflow
//! commands, one line per place a finding is at. Printed in a workflow's
//! step (`spinneret crawl --format github`), each line becomes an
//! annotation on the file and line of the link, in the run's summary and
//! in a pull request's changed files:
//!
//! ```text
//! ::error file=docs/index.html,line=12,col=9,title=Broken link::file:///…/gone.html: broken: file not found
//! ```
//!
//! - A finding about following a link (`broken`, `blocked`, `moved`,
//!   `broken-fragment`) is an annotation at each link to its URL: the
//!   document with the link and the link's line and column (no `line`
//!   when the parser does not know it, no `col` when it knows the line
//!   alone; a column counts characters from 1); for a broken fragment, the referrer's link
//!   to the page. When the host names no link, the annotation is at the
//!   document that refers to the URL; when there is none either (a broken
//!   top), at the URL itself.
//! - Any other finding (`expiring`, `bad-html`, `content-changed`, …) is
//!   about its URL: one annotation there, with no line.
//! - The command is the finding's severity (`::error`, `::warning`,
//!   `::notice`), the title names its kind (`Broken link`), the message
//!   is its URL and its message.
//!
//! `file` is the document's path relative to `base` (a `file:` URL of a
//! directory, which `--format github` sets to the current directory: the
//! repository's root in a workflow). A document that is not a file below
//! `base` (a site on the web) has no `file`, `line` and `col`: the message
//! names it and the line and column instead. Text is escaped as the runner reads it: `%`,
//! carriage returns and line feeds in the message, and also `:` and `,` in
//! the properties, so text from the web cannot end a line, start another
//! command or add a property. (GitHub shows only so many annotations per
//! step and per job: a site with many broken links is better read in the
//! SARIF or JUnit report.)
//!
//! Lines are written as the findings come; of the documents the reporter
//! keeps each document's URL and its references' lines and columns (8
//! bytes a reference, not the references), so a task of a million URLs fits the
//! plugin's memory cap. Written to `annotations.txt` in the task's output directory (empty when the task
//! has no findings). Configuration: `file` (default `annotations.txt`),
//! `base` (the `file:` URL of a directory), `omit` (the finding kinds left
//! out; default `["recently-modified"]`, news rather than something to fix,
//! which every file of a fresh checkout would be).

use serde_json::Value;
use spinneret_sdk::reporter::*;
use std::borrow::Cow;
use std::fmt::Write as _;

use spinneret_sdk::places::{self, FileReport, Places, Spot};

/// The reporter's settings and what it keeps of the task being written.
pub struct GithubAnnotations {
    settings: FileReport,
    /// The documents' URLs and the places of their references.
    places: Places,
    /// Annotations written for the task so far.
    written: u64,
}

/// Append `text` to `out` escaped as a workflow command's message: `%`,
/// carriage return and line feed as `%25`, `%0D`, `%0A`.
pub fn push_data(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            c => out.push(c),
        }
    }
}

/// Append `text` to `out` escaped as a workflow command's property value:
/// as a message, and `:` and `,` as `%3A` and `%2C`.
pub fn push_property(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            ':' => out.push_str("%3A"),
            ',' => out.push_str("%2C"),
            c => push_data(out, c.encode_utf8(&mut [0; 4])),
        }
    }
}

/// `text` with its `%XX` escapes decoded: a `file:` URL's path as the file
/// name it is (bytes that are not UTF-8 become U+FFFD).
pub fn percent_decoded(text: &str) -> String {
    let b = text.as_bytes();
    let hex = |c: u8| (c as char).to_digit(16);
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(high), Some(low)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push((high * 16 + low) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The title of an annotation of the finding kind `kind`.
pub fn title(kind: &str) -> Cow<'static, str> {
    match kind {
        "broken" => "Broken link".into(),
        "blocked" => "Blocked link".into(),
        "moved" => "Moved link".into(),
        BROKEN_FRAGMENT => "Broken fragment".into(),
        "expiring" => "Expiring document".into(),
        "recently-modified" => "Recently modified".into(),
        "content-changed" => "Content changed".into(),
        "bad-html" => "Bad HTML".into(),
        "plugin-failure" => "Plugin failure".into(),
        other => {
            let words = other.replace('-', " ");
            let mut chars = words.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect::<String>().into(),
                None => String::new().into(),
            }
        }
    }
}

/// The workflow command for `finding` at `spot`, its line end included:
/// `file` relative to `base` when the spot is a file below it, else the
/// spot named in the message.
pub fn annotation(base: Option<&str>, finding: &Finding, spot: &Spot) -> String {
    let command = match finding.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "notice",
    };
    let mut message = match finding.message.is_empty() {
        true => finding.url.clone(),
        false => format!("{}: {}", finding.url, finding.message),
    };
    let mut line = format!("::{command} ");
    match places::relative(base, &spot.url) {
        Some(path) => {
            line.push_str("file=");
            push_property(&mut line, &percent_decoded(path));
            if spot.line > 0 {
                let _ = write!(line, ",line={}", spot.line);
                if spot.column > 0 {
                    let _ = write!(line, ",col={}", spot.column);
                }
            }
            line.push(',');
        }
        None if spot.linking => {
            let _ = match (spot.line, spot.column) {
                (0, _) => write!(message, " (linked from {})", spot.url),
                (n, 0) => write!(message, " (linked from {}, line {n})", spot.url),
                (n, c) => write!(message, " (linked from {}, line {n}, column {c})", spot.url),
            };
        }
        None => {}
    }
    line.push_str("title=");
    push_property(&mut line, &title(&finding.kind));
    line.push_str("::");
    push_data(&mut line, &message);
    line.push('\n');
    line
}

impl Reporter for GithubAnnotations {
    fn configure(config: Value) -> Result<Self, String> {
        Ok(GithubAnnotations {
            settings: FileReport::read("github-annotations", &config, "annotations.txt")?,
            places: Places::default(),
            written: 0,
        })
    }

    /// The documents with their targets and lines (to know where each link
    /// is), and the findings.
    fn wants(&self) -> Wants {
        Wants::DOCUMENTS | Wants::TARGETS | Wants::LINES | Wants::FINDINGS
    }

    fn begin(
        &mut self,
        _run: RunInfo,
        _task: TaskInfo,
        _counts: TaskCounts,
        _out: &mut dyn Output,
    ) -> Result<(), String> {
        self.places = Places::default();
        self.written = 0;
        Ok(())
    }

    fn on_document(&mut self, d: TaskDocument, _out: &mut dyn Output) -> Result<(), String> {
        self.places.add(&d);
        Ok(())
    }

    fn on_finding(&mut self, f: TaskFinding, out: &mut dyn Output) -> Result<(), String> {
        if !self.settings.shows(&f.finding.kind) {
            return Ok(());
        }
        let mut lines = String::new();
        for spot in self.places.spots(&f) {
            lines.push_str(&annotation(
                self.settings.base.as_deref(),
                &f.finding,
                &spot,
            ));
            self.written += 1;
        }
        out.append(&self.settings.file, lines.as_bytes())
    }

    fn finish(&mut self, out: &mut dyn Output) -> Result<(), String> {
        // What was kept of the documents is not needed past the task.
        self.places = Places::default();
        // A task without findings has an empty file (an empty append
        // would never reach the host).
        match self.written {
            0 => out.write(&self.settings.file, b""),
            _ => Ok(()),
        }
    }
}

spinneret_sdk::export_reporter!(GithubAnnotations);

#[cfg(test)]
mod tests {
    use super::*;
    use spinneret_sdk::testing::{ReporterHarness, fixtures};

    #[test]
    fn an_annotation_at_each_link_with_its_file_line_and_column() {
        let mut h =
            ReporterHarness::<GithubAnnotations>::new(r#"{"base": "file:///w/site"}"#).unwrap();
        // The index comes in two parts: its third and fourth links (9:14,
        // the broken fragment's, and one whose place is not known) are in
        // the second.
        h.part_size = 2;
        h.run_case(fixtures::run(784_111_777), fixtures::linked_file_tree())
            .unwrap();
        // The file names are decoded; the `%` of a URL in a message is escaped.
        assert_eq!(
            h.output.text("annotations.txt").unwrap(),
            "::error file=index.html,line=7,col=5,title=Broken link::file:///w/site/gone.html: broken: file not found\n\
             ::error file=sub/a b.html,line=5,col=6,title=Broken link::file:///w/site/gone.html: broken: file not found\n\
             ::warning file=index.html,title=Moved link::http://b.example/old: moved to http://b.example/new (301)\n\
             ::notice file=sub/a b.html,title=Bad HTML::file:///w/site/sub/a%2520b.html: no-title ×1 (the document has no title)\n\
             ::warning file=index.html,line=9,col=14,title=Broken fragment::file:///w/site/sub/a%2520b.html#team: no element with id or name \"team\" in file:///w/site/sub/a%2520b.html\n"
        );
    }

    #[test]
    fn a_site_on_the_web_is_named_in_the_messages() {
        let mut h = ReporterHarness::<GithubAnnotations>::new(r#"{"base": "file:///w/"}"#).unwrap();
        h.run_case(fixtures::run(784_111_777), fixtures::linked_web_page())
            .unwrap();
        assert_eq!(
            h.output.text("annotations.txt").unwrap(),
            "::error title=Broken link::http://a.example/gone: broken: HTTP 404 Not Found (linked from http://a.example/, line 4, column 10)\n\
             ::warning title=Blocked link::http://a.example/secret: blocked: HTTP 403 Forbidden (linked from http://a.example/, line 6, column 7)\n\
             ::warning title=Broken fragment::http://a.example/other#x: no element with id or name \"x\" in http://a.example/other (linked from http://a.example/)\n\
             ::error title=Plugin failure::http://a.example/: soft-404: cut off at its deadline\n"
        );
    }

    #[test]
    fn a_task_without_findings_has_an_empty_file() {
        let mut h = ReporterHarness::<GithubAnnotations>::new(r#"{"file": "gh.txt"}"#).unwrap();
        h.run_task(
            fixtures::run(784_111_777),
            fixtures::task("Quiet", "http://a.example/"),
            vec![(
                fixtures::result("http://a.example/", Category::Ok),
                Role::Document,
            )],
            vec![fixtures::document("http://a.example/", "Home", &[])],
            vec![],
        )
        .unwrap();
        assert_eq!(h.output.text("gh.txt").as_deref(), Some(""));
    }

    #[test]
    fn recently_modified_is_left_out_unless_omit_says_otherwise() {
        let url = "file:///w/index.html";
        let annotations = |config: &str| {
            let mut h = ReporterHarness::<GithubAnnotations>::new(config).unwrap();
            let case = fixtures::page_with_finding(
                url,
                "recently-modified",
                "modified today",
                Severity::Info,
            );
            h.run_case(fixtures::run(784_111_777), case).unwrap();
            h.output.text("annotations.txt").unwrap()
        };
        assert_eq!(annotations(r#"{"base": "file:///w/"}"#), "");
        assert_eq!(
            annotations(r#"{"base": "file:///w/", "omit": ["moved"]}"#),
            "::notice file=index.html,title=Recently modified::file:///w/index.html: modified today\n"
        );
    }

    #[test]
    fn hostile_text_cannot_end_the_line_or_add_a_property() {
        let mut h = ReporterHarness::<GithubAnnotations>::new(r#"{"base": "file:///w/"}"#).unwrap();
        let page = "file:///w/a,b:c%25.html";
        let outside = "file:///elsewhere/x.html";
        h.lines.insert(outside.into(), vec![2]);
        h.run_task(
            fixtures::run(784_111_777),
            fixtures::task("T \"1\"\n", page),
            vec![
                (fixtures::result(page, Category::Ok), Role::Document),
                (fixtures::result(outside, Category::Ok), Role::Document),
                (
                    fixtures::result("http://a.example/%41,:", Category::Broken),
                    Role::Leaf,
                ),
            ],
            vec![
                fixtures::document(page, "<T>", &[]),
                fixtures::document(
                    outside,
                    "X",
                    &[("http://a.example/%41,:", RefKind::Anchor, "x")],
                ),
            ],
            vec![
                fixtures::finding_with(
                    "broken",
                    "http://a.example/%41,:",
                    Some(outside),
                    "broken: HTTP 404 \"Not\r\nFound\"",
                    Severity::Error,
                ),
                fixtures::finding_with(
                    "note:a,b",
                    page,
                    None,
                    "say \"hi\"\r\n::error::100% :: a,b <b>",
                    Severity::Warning,
                ),
            ],
        )
        .unwrap();
        assert_eq!(
            h.output.text("annotations.txt").unwrap(),
            "::error title=Broken link::http://a.example/%2541,:: broken: HTTP 404 \"Not%0D%0AFound\" (linked from file:///elsewhere/x.html, line 2)\n\
             ::warning file=a%2Cb%3Ac%25.html,title=Note%3Aa%2Cb::file:///w/a,b:c%2525.html: say \"hi\"%0D%0A::error::100%25 :: a,b <b>\n"
        );
    }

    #[test]
    fn escapes_and_file_names() {
        let mut s = String::new();
        push_data(&mut s, "a%b\r\nc:d,e");
        assert_eq!(s, "a%25b%0D%0Ac:d,e");
        let mut s = String::new();
        push_property(&mut s, "a%b\r\nc:d,e");
        assert_eq!(s, "a%25b%0D%0Ac%3Ad%2Ce");
        assert_eq!(percent_decoded("a%20b%C3%A9%zz%4"), "a bé%zz%4");
        assert_eq!(percent_decoded("%FF"), "\u{FFFD}");
        assert_eq!(title("soft-404"), "Soft 404");
        assert_eq!(title("broken-fragment"), "Broken fragment");
    }

    #[test]
    fn settings_are_checked() {
        let refused = |config: Value| GithubAnnotations::configure(config).err().unwrap();
        assert_eq!(
            refused(serde_json::json!({"path": "x"})),
            "github-annotations: unknown setting `path`; the settings are file, base, omit"
        );
        assert_eq!(
            refused(serde_json::json!({"base": "/w/site"})),
            "github-annotations: `base` must be the file: URL of a directory, e.g. \"file:///home/me/site/\", not \"/w/site\""
        );
        let r =
            GithubAnnotations::configure(serde_json::json!({"base": "file:///w/site"})).unwrap();
        assert_eq!(r.settings.base.as_deref(), Some("file:///w/site/"));
        assert_eq!(r.settings.file, "annotations.txt");
    }
}
