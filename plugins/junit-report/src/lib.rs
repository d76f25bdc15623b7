//! `junit-report`: a task's checks as a JUnit XML test report, the format
//! the test views of CI systems read (GitLab's `artifacts:reports:junit`,
//! Jenkins, the GitHub Actions test-report actions): one test suite per
//! task, one test case per URL the task reached, named by its URL.
//!
//! - A broken URL is a failing test case (`<failure type="broken">`), with
//!   its reason as the message and the page that first referred to it.
//! - A link whose fragment names no place in its target (a
//!   `broken-fragment` finding) is a failing test case of its own, named
//!   by the link (`page.html#section`).
//! - A blocked URL (401, 403), one avoided (robots.txt, an avoid rule) and
//!   one not checked (another scheme, a form's action) is skipped, with why.
//! - The others (ok, moved) pass.
//!
//! So the failures are exactly what makes a crawl exit with status 1.
//!
//! Written to `junit.xml` in the task's output directory as the host hands
//! the items over (the counts come at `begin`), as `<testsuites>` holding
//! one `<testsuite>`, each on its own line, so that `spinneret crawl
//! --format junit` can put the suites of several tasks under one root.
//! Configuration: `file` (default `junit.xml`).

use serde_json::Value;
use spinneret_sdk::reporter::*;
use spinneret_sdk::{dates, names};
use std::fmt::Write as _;

/// The reporter's settings and the task being written.
pub struct JunitReport {
    file: String,
    /// The task's name: every test case's `classname`.
    task: String,
}

/// Append `text` to `out` escaped for XML content and attribute values:
/// tabs and line ends as character references (a parser would make them
/// spaces in an attribute, and no element spans lines), and characters
/// XML 1.0 cannot carry (other control characters, U+FFFE, U+FFFF) as
/// U+FFFD: a page's text or a server's message must not make the report
/// unreadable.
pub fn push_xml_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
}

impl JunitReport {
    /// A test case's opening tag (left open for its content).
    fn open_case(&self, x: &mut String, name: &str, time_ms: Option<u64>) {
        x.push_str("<testcase name=\"");
        push_xml_escaped(x, name);
        x.push_str("\" classname=\"");
        push_xml_escaped(x, &self.task);
        x.push('"');
        if let Some(ms) = time_ms {
            let _ = write!(x, " time=\"{}.{:03}\"", ms / 1000, ms % 1000);
        }
        x.push('>');
    }
}

/// A `<failure>` or `<skipped>` element: `message` in its attribute, and
/// where the link is in its text.
fn outcome_element(x: &mut String, tag: &str, kind: &str, message: &str, referrer: Option<&str>) {
    let _ = write!(x, "<{tag} type=\"{kind}\" message=\"");
    push_xml_escaped(x, message);
    x.push('"');
    match referrer {
        Some(r) => {
            x.push('>');
            x.push_str("referred to from ");
            push_xml_escaped(x, r);
            let _ = write!(x, "</{tag}>");
        }
        None => x.push_str("/>"),
    }
}

impl Reporter for JunitReport {
    fn configure(config: Value) -> Result<Self, String> {
        spinneret_sdk::settings::check_keys("junit-report", &config, &["file"])?;
        Ok(JunitReport {
            file: spinneret_sdk::settings::file_name("junit-report", &config, "file", "junit.xml")?,
            task: String::new(),
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
        self.task = task.name.clone();
        let fragments = finding_count(&counts, BROKEN_FRAGMENT);
        let tests = counts.urls + fragments;
        let failures = category_count(&counts, Category::Broken) + fragments;
        let skipped = [Category::Blocked, Category::Avoided, Category::NotChecked]
            .iter()
            .map(|&c| category_count(&counts, c))
            .sum::<u64>();
        let mut x = String::with_capacity(1024);
        x.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            x,
            "<testsuites name=\"spinneret\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\">"
        );
        x.push_str("<testsuite name=\"");
        push_xml_escaped(&mut x, &task.name);
        let _ = write!(
            x,
            "\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" timestamp=\"{}\">\n<properties>",
            dates::format_iso8601(run.started_at).trim_end_matches('Z'),
        );
        for (name, value) in [
            ("top", task.top.as_str()),
            ("run", &run.id.to_string()),
            ("spinneret", &run.host_version),
        ] {
            let _ = write!(x, "<property name=\"{name}\" value=\"");
            push_xml_escaped(&mut x, value);
            x.push_str("\"/>");
        }
        x.push_str("</properties>\n");
        out.append(&self.file, x.as_bytes())
    }

    fn on_result(
        &mut self,
        r: CheckResult,
        _role: Role,
        out: &mut dyn Output,
    ) -> Result<(), String> {
        let mut x = String::with_capacity(256);
        self.open_case(&mut x, &r.url, r.elapsed_ms);
        let reason = names::reason(&r);
        match r.category {
            Category::Broken => {
                outcome_element(&mut x, "failure", "broken", &reason, r.referrer.as_deref())
            }
            // The type says which (a leaf not requested has the role
            // that says why, so the role adds nothing).
            Category::Blocked | Category::Avoided | Category::NotChecked => outcome_element(
                &mut x,
                "skipped",
                names::category(r.category),
                &reason,
                None,
            ),
            Category::Ok | Category::Moved => {}
        }
        x.push_str("</testcase>\n");
        out.append(&self.file, x.as_bytes())
    }

    fn on_finding(&mut self, f: TaskFinding, out: &mut dyn Output) -> Result<(), String> {
        if f.finding.kind != BROKEN_FRAGMENT {
            return Ok(());
        }
        let mut x = String::with_capacity(256);
        self.open_case(&mut x, &f.finding.url, None);
        outcome_element(
            &mut x,
            "failure",
            BROKEN_FRAGMENT,
            &f.finding.message,
            f.finding.referrer.as_deref(),
        );
        x.push_str("</testcase>\n");
        out.append(&self.file, x.as_bytes())
    }

    fn finish(&mut self, out: &mut dyn Output) -> Result<(), String> {
        out.append(&self.file, b"</testsuite>\n</testsuites>\n")
    }
}

spinneret_sdk::export_reporter!(JunitReport);

#[cfg(test)]
mod tests {
    use super::*;
    use spinneret_sdk::testing::{ReporterHarness, fixtures};

    #[test]
    fn one_case_per_url_failures_for_broken_and_fragments_skips_for_the_unfollowable() {
        let mut h = ReporterHarness::<JunitReport>::new("").unwrap();
        let mut broken = fixtures::result("http://a.example/gone", Category::Broken);
        broken.error = Some("HTTP 404 Not Found".into());
        broken.referrer = Some("http://a.example/".into());
        broken.elapsed_ms = Some(1234);
        let mut blocked = fixtures::result("http://a.example/secret", Category::Blocked);
        blocked.error = Some("HTTP 403 Forbidden".into());
        let mut avoided = fixtures::result("http://a.example/private/x", Category::Avoided);
        avoided.error = Some("robots.txt: Disallow: /private/".into());
        h.run_task(
            fixtures::run(784_111_777),
            fixtures::task("Site <&>", "http://a.example/"),
            vec![
                (
                    fixtures::result("http://a.example/", Category::Ok),
                    Role::Document,
                ),
                (broken, Role::Leaf),
                (blocked, Role::Leaf),
                (avoided, Role::Avoided),
            ],
            vec![],
            vec![
                fixtures::finding(
                    "broken-fragment",
                    "http://a.example/#nowhere",
                    Some("http://a.example/"),
                    "no element with id or name \"nowhere\" in http://a.example/",
                ),
                fixtures::finding("broken", "http://a.example/gone", None, "HTTP 404"),
            ],
        )
        .unwrap();
        let x = h.output.text("junit.xml").unwrap();
        let lines: Vec<&str> = x.lines().collect();
        assert_eq!(lines[0], "<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
        assert_eq!(
            lines[1],
            "<testsuites name=\"spinneret\" tests=\"5\" failures=\"2\" errors=\"0\" skipped=\"2\">"
        );
        assert!(
            lines[2].starts_with(
                "<testsuite name=\"Site &lt;&amp;&gt;\" tests=\"5\" failures=\"2\" errors=\"0\" skipped=\"2\" timestamp=\"1994-11-06T08:49:37\">"
            ),
            "{}",
            lines[2]
        );
        let c = "classname=\"Site &lt;&amp;&gt;\"";
        assert_eq!(
            &lines[4..],
            [
                format!("<testcase name=\"http://a.example/\" {c}></testcase>"),
                format!(
                    "<testcase name=\"http://a.example/gone\" {c} time=\"1.234\"><failure type=\"broken\" message=\"HTTP 404 Not Found\">referred to from http://a.example/</failure></testcase>"
                ),
                format!(
                    "<testcase name=\"http://a.example/private/x\" {c}><skipped type=\"avoided\" message=\"robots.txt: Disallow: /private/\"/></testcase>"
                ),
                format!(
                    "<testcase name=\"http://a.example/secret\" {c}><skipped type=\"blocked\" message=\"HTTP 403 Forbidden\"/></testcase>"
                ),
                format!(
                    "<testcase name=\"http://a.example/#nowhere\" {c}><failure type=\"broken-fragment\" message=\"no element with id or name &quot;nowhere&quot; in http://a.example/\">referred to from http://a.example/</failure></testcase>"
                ),
                "</testsuite>".to_string(),
                "</testsuites>".to_string(),
            ]
        );
    }

    #[test]
    fn characters_xml_cannot_carry_are_replaced() {
        let mut x = String::new();
        push_xml_escaped(&mut x, "a\u{1}b\u{FFFF}c'\td");
        assert_eq!(x, "a\u{FFFD}b\u{FFFD}c&apos;&#9;d");
        let mut x = String::new();
        push_xml_escaped(&mut x, "line\r\nnext");
        assert_eq!(x, "line&#13;&#10;next");
    }
}
