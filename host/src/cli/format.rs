//! `--format`: what `crawl` and `check` print on standard output. `text`
//! is the summary, the broken links and where the reports are; each other
//! format is a built-in reporter, added to every task for the run, whose
//! files are printed, the tasks' put together as one document.

use crate::config::Config;
use spinneret_plugin_host::entry::{PluginConfig, PluginSource};
use std::path::PathBuf;

/// What a run prints on standard output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum Format {
    /// The summary table, the links a reader cannot follow with the pages
    /// they are on, and where each task's reports are.
    #[default]
    Text,
    /// One JSON document, schema spinneret.reports/1: an object with each
    /// task's URLs, documents, findings and summary, and their totals
    /// (docs/results-json.md).
    Json,
    /// JSON Lines, schema spinneret.report/1 (the `json-report` plugin's
    /// report.jsonl): a line per task, URL, document and finding, and a
    /// summary line per task.
    Jsonl,
    /// GitHub Flavored Markdown: counts and a table of the broken and
    /// blocked links and broken fragments (`markdown-report`), for a
    /// pull-request comment or `$GITHUB_STEP_SUMMARY`.
    Markdown,
    /// JUnit XML: a test suite per task, a test case per URL; broken links
    /// and broken fragments fail (`junit-report`), for CI test views.
    Junit,
    /// CSV with a header row: a row per URL and per broken fragment
    /// (`csv-report`), for a spreadsheet.
    Csv,
    /// SARIF 2.1.0: a run per task, a result per finding at the file and
    /// line of each link to its URL (`sarif-report`), for code scanning
    /// (GitHub's `upload-sarif`) and the SARIF viewers of editors.
    Sarif,
    /// GitHub Actions workflow commands: an annotation per finding at the
    /// file and line of each link to its URL (`github-annotations`), for a
    /// workflow's step to print.
    Github,
}

impl Format {
    /// The format's name, as `--format` takes it.
    pub(super) fn name(self) -> String {
        use clap::ValueEnum as _;
        self.to_possible_value()
            .map_or_else(|| format!("{self:?}"), |v| v.get_name().to_string())
    }

    /// The built-in reporter that writes the format, and its file's name
    /// when its configuration names none.
    fn reporter(self) -> Option<(&'static str, &'static str)> {
        let builtin = match self {
            Format::Text => return None,
            Format::Json | Format::Jsonl => "json-report",
            Format::Markdown => "markdown-report",
            Format::Junit => "junit-report",
            Format::Csv => "csv-report",
            Format::Sarif => "sarif-report",
            Format::Github => "github-annotations",
        };
        crate::config::FILE_REPORTERS
            .iter()
            .find(|(b, _)| *b == builtin)
            .copied()
    }

    /// The settings of the entry [`Format::add_to`] adds. SARIF and GitHub
    /// annotations name a local tree's files relative to their `base`:
    /// the current directory (a repository's root, in CI), as a `file:` URL.
    fn settings(self) -> serde_json::Value {
        let base = match self {
            Format::Sarif | Format::Github => std::env::current_dir()
                .ok()
                .and_then(|dir| url::Url::from_directory_path(dir).ok()),
            Format::Text
            | Format::Json
            | Format::Jsonl
            | Format::Markdown
            | Format::Junit
            | Format::Csv => None,
        };
        match base {
            Some(base) => serde_json::json!({ "base": base.as_str() }),
            None => serde_json::json!({}),
        }
    }

    /// Make every task of `config` run the format's reporter: the tasks
    /// that have it already keep their own entry (and its settings); the
    /// others get one more entry, under a name no other entry has, with
    /// the format's [settings](Format::settings).
    pub(super) fn add_to(self, config: &mut Config) {
        let Some((builtin, _)) = self.reporter() else {
            return;
        };
        let source = PluginSource::Builtin(builtin.to_string());
        let uncovered: Vec<String> = config
            .tasks
            .iter()
            .filter(|t| !config.plugins_for(t).iter().any(|p| p.source == source))
            .map(|t| t.name.clone())
            .collect();
        if uncovered.is_empty() {
            return;
        }
        let taken = |n: &str| config.plugins.iter().any(|p| p.name == n);
        let name = std::iter::once(builtin.to_string())
            .chain((2..).map(|i| format!("{builtin}-{i}")))
            .find(|n| !taken(n))
            .expect("an unused name");
        let tasks = match uncovered.len() == config.tasks.len() {
            true => None,
            false => Some(uncovered),
        };
        config.plugins.push(PluginConfig {
            name,
            source,
            config: self.settings(),
            grants: Default::default(),
            tasks,
            defined_at: None,
        });
    }

    /// The run's report in this format: each task's file, put together
    /// (JUnit's suites under one root, CSV's header once, SARIF's runs in
    /// one log), and the tasks of `ran` that have none (their reporter
    /// failed). `reports` are the run's (task, output directory, reporters
    /// that wrote).
    pub(super) fn document(
        self,
        config: &Config,
        ran: &[String],
        reports: &[(String, PathBuf, Vec<String>)],
    ) -> (String, Vec<String>) {
        let Some((builtin, default_file)) = self.reporter() else {
            return (String::new(), Vec::new());
        };
        let source = PluginSource::Builtin(builtin.to_string());
        let mut read: Vec<PathBuf> = Vec::new();
        let mut parts = Vec::new();
        let mut missing = Vec::new();
        for name in ran {
            let found = config
                .tasks
                .iter()
                .find(|t| &t.name == name)
                .and_then(|task| {
                    let (_, dir, written) = reports.iter().find(|(t, _, _)| t == name)?;
                    // The task's own entry for the format's reporter, if it wrote.
                    let entry = config
                        .plugins_for(task)
                        .into_iter()
                        .find(|p| p.source == source && written.contains(&p.name))?;
                    let file = entry
                        .config
                        .get("file")
                        .and_then(|f| f.as_str())
                        .unwrap_or(default_file)
                        .to_string();
                    Some(dir.join(file))
                });
            match found {
                // Tasks that share an output directory share the file.
                Some(path) if read.contains(&path) => {}
                Some(path) => match std::fs::read_to_string(&path) {
                    Ok(text) => {
                        parts.push(text);
                        read.push(path);
                    }
                    Err(e) => {
                        eprintln!("spinneret: cannot read the report {}: {e}", path.display());
                        missing.push(name.clone());
                    }
                },
                None => missing.push(name.clone()),
            }
        }
        (self.join(&parts), missing)
    }

    /// Several tasks' files as one document.
    fn join(self, parts: &[String]) -> String {
        match (self, parts) {
            (Format::Json, _) => json_document(parts),
            (Format::Junit, []) => {
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"spinneret\"/>\n"
                    .into()
            }
            (Format::Sarif, [] | [_, _, ..]) => sarif_log(parts),
            (_, []) => String::new(),
            (_, [one]) => one.clone(),
            (Format::Junit, _) => {
                // Each file is a declaration, `<testsuites …>` with its
                // totals, its suite's lines and `</testsuites>`, each on
                // lines of their own (no line end inside an element).
                let mut totals = [0u64; 4];
                let mut suites = String::new();
                for p in parts {
                    let lines: Vec<&str> = p.lines().collect();
                    if lines.len() >= 3 {
                        for (total, name) in totals.iter_mut().zip(JUNIT_TOTALS) {
                            *total += attribute(lines[1], name).unwrap_or(0);
                        }
                        for l in &lines[2..lines.len() - 1] {
                            suites.push_str(l);
                            suites.push('\n');
                        }
                    }
                }
                let mut out = String::from(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"spinneret\"",
                );
                for (total, name) in totals.iter().zip(JUNIT_TOTALS) {
                    out.push_str(&format!(" {name}=\"{total}\""));
                }
                out.push_str(">\n");
                out.push_str(&suites);
                out.push_str("</testsuites>\n");
                out
            }
            (Format::Csv, [first, rest @ ..]) => {
                let mut out = first.clone();
                for p in rest {
                    // The header once.
                    out.push_str(p.split_once('\n').map_or("", |(_, body)| body));
                }
                out
            }
            (Format::Markdown, _) => parts.join("\n"),
            (Format::Github, _) => {
                // A line per annotation: each file's last line ended.
                let mut out = String::new();
                for p in parts {
                    out.push_str(p);
                    if !p.is_empty() && !p.ends_with('\n') {
                        out.push('\n');
                    }
                }
                out
            }
            _ => parts.concat(),
        }
    }
}

/// The schema of `--format json`'s document.
pub(super) const REPORTS_SCHEMA: &str = "spinneret.reports/1";

/// The tasks' JSON Lines reports (`json-report`'s, schema
/// spinneret.report/1) as one JSON document: `{"schema", "tasks":
/// [{"task", "kind", "top", "run", "started_at", "urls", "documents",
/// "findings", "summary"}], "summary"}`, each item its line without
/// `type`, the tasks' summaries added up in the last. A line that is not
/// JSON is left out, with a message.
fn json_document(parts: &[String]) -> String {
    use serde_json::{Map, Value, json};
    let mut tasks = Vec::new();
    let mut totals: Map<String, Value> = Map::new();
    let mut add = |summary: &Map<String, Value>| {
        for (key, value) in summary {
            match value {
                Value::Number(n) => {
                    let sum = totals.get(key).and_then(Value::as_u64).unwrap_or(0);
                    totals.insert(key.clone(), json!(sum + n.as_u64().unwrap_or(0)));
                }
                Value::Object(counts) => {
                    let entry = totals
                        .entry(key.clone())
                        .or_insert_with(|| Value::Object(Map::new()));
                    if let Value::Object(sums) = entry {
                        for (name, n) in counts {
                            let sum = sums.get(name).and_then(Value::as_u64).unwrap_or(0);
                            sums.insert(name.clone(), json!(sum + n.as_u64().unwrap_or(0)));
                        }
                    }
                }
                _ => {}
            }
        }
    };
    for part in parts {
        let mut task = Map::new();
        let mut lists: [(&str, Vec<Value>); 3] = [
            ("urls", Vec::new()),
            ("documents", Vec::new()),
            ("findings", Vec::new()),
        ];
        for line in part.lines().filter(|l| !l.trim().is_empty()) {
            let mut item = match serde_json::from_str::<Map<String, Value>>(line) {
                Ok(item) => item,
                Err(e) => {
                    eprintln!(
                        "spinneret: a line of a JSON report is not a JSON object ({e}); it is left out"
                    );
                    continue;
                }
            };
            let kind = item.remove("type");
            match kind.as_ref().and_then(Value::as_str) {
                Some("task") => {
                    item.remove("schema");
                    task.extend(item);
                }
                Some("url") => lists[0].1.push(Value::Object(item)),
                Some("document") => lists[1].1.push(Value::Object(item)),
                Some("finding") => lists[2].1.push(Value::Object(item)),
                Some("summary") => {
                    add(&item);
                    task.insert("summary".into(), Value::Object(item));
                }
                _ => {}
            }
        }
        for (name, list) in lists {
            task.insert(name.into(), Value::Array(list));
        }
        tasks.push(Value::Object(task));
    }
    let mut document = json!({ "schema": REPORTS_SCHEMA, "tasks": tasks, "summary": totals });
    if let Some(summary) = document.get_mut("summary").and_then(Value::as_object_mut) {
        for key in ["urls", "documents", "findings"] {
            summary.entry(key).or_insert(json!(0));
        }
        summary.entry("by_category").or_insert(json!({}));
    }
    format!("{document}\n")
}

/// The JSON schema a SARIF log names (as `sarif-report` writes it).
const SARIF_SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// Several tasks' SARIF logs as one: their runs, in order, in one log (a
/// run a line). A file that is not a SARIF log is left out, with a
/// message.
fn sarif_log(parts: &[String]) -> String {
    let mut out = format!("{{\"$schema\":\"{SARIF_SCHEMA}\",\"version\":\"2.1.0\",\"runs\":[");
    let mut first = true;
    for p in parts {
        let runs = match serde_json::from_str::<serde_json::Value>(p) {
            Ok(serde_json::Value::Object(mut log)) => match log.remove("runs") {
                Some(serde_json::Value::Array(runs)) => runs,
                _ => {
                    eprintln!("spinneret: a SARIF report has no runs; it is left out");
                    continue;
                }
            },
            Ok(_) => {
                eprintln!("spinneret: a SARIF report is not a SARIF log; it is left out");
                continue;
            }
            Err(e) => {
                eprintln!("spinneret: a SARIF report is not JSON ({e}); it is left out");
                continue;
            }
        };
        for run in runs {
            out.push_str(if first { "\n" } else { ",\n" });
            first = false;
            out.push_str(&run.to_string());
        }
    }
    out.push_str(if first { "]}\n" } else { "\n]}\n" });
    out
}

/// The totals of a JUnit `<testsuites>` element, added up when several
/// tasks' suites are put under one.
const JUNIT_TOTALS: [&str; 4] = ["tests", "failures", "errors", "skipped"];

/// The number in attribute `name` of the element on `line`.
fn attribute(line: &str, name: &str) -> Option<u64> {
    let (_, rest) = line.split_once(&format!(" {name}=\""))?;
    rest.split('"').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_tasks_make_one_document() {
        let junit = |suite: &str| {
            format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"spinneret\" tests=\"1\" failures=\"1\" errors=\"0\" skipped=\"0\">\n<testsuite name=\"{suite}\">\n<testcase name=\"u\" classname=\"{suite}\"></testcase>\n</testsuite>\n</testsuites>\n"
            )
        };
        assert_eq!(
            Format::Junit.join(&[junit("A"), junit("B")]),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <testsuites name=\"spinneret\" tests=\"2\" failures=\"2\" errors=\"0\" skipped=\"0\">\n\
             <testsuite name=\"A\">\n<testcase name=\"u\" classname=\"A\"></testcase>\n</testsuite>\n\
             <testsuite name=\"B\">\n<testcase name=\"u\" classname=\"B\"></testcase>\n</testsuite>\n\
             </testsuites>\n"
        );
        assert_eq!(
            Format::Csv.join(&["h\r\nA,1\r\n".into(), "h\r\nB,2\r\n".into()]),
            "h\r\nA,1\r\nB,2\r\n"
        );
        assert_eq!(
            Format::Markdown.join(&["# A\n".into(), "# B\n".into()]),
            "# A\n\n# B\n"
        );
        assert_eq!(Format::Jsonl.join(&["a\n".into(), "b\n".into()]), "a\nb\n");
        assert_eq!(Format::Junit.join(&[junit("A")]), junit("A"));
        // No task wrote one: still a document a reader takes.
        assert_eq!(
            Format::Junit.join(&[]),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"spinneret\"/>\n"
        );
    }

    #[test]
    fn json_is_the_tasks_lines_as_one_document_with_their_totals() {
        let task = |name: &str, ok: u64| {
            format!(
                "{{\"schema\":\"spinneret.report/1\",\"type\":\"task\",\"run\":1,\"task\":\"{name}\",\"kind\":\"site\",\"top\":\"http://a.example/\",\"started_at\":0}}\n\
                 {{\"type\":\"url\",\"url\":\"http://a.example/\",\"category\":\"ok\"}}\n\
                 {{\"type\":\"document\",\"url\":\"http://a.example/\",\"references\":[]}}\n\
                 {{\"type\":\"finding\",\"kind\":\"broken\",\"url\":\"http://a.example/x\"}}\n\
                 {{\"type\":\"summary\",\"urls\":{ok},\"documents\":1,\"by_category\":{{\"ok\":{ok}}},\"findings\":1}}\n"
            )
        };
        let document: serde_json::Value =
            serde_json::from_str(&Format::Json.join(&[task("A", 1), task("B", 2)])).unwrap();
        assert_eq!(document["schema"], REPORTS_SCHEMA);
        assert_eq!(
            document["tasks"][1],
            serde_json::json!({
                "run": 1, "task": "B", "kind": "site", "top": "http://a.example/", "started_at": 0,
                "urls": [{"url": "http://a.example/", "category": "ok"}],
                "documents": [{"url": "http://a.example/", "references": []}],
                "findings": [{"kind": "broken", "url": "http://a.example/x"}],
                "summary": {"urls": 2, "documents": 1, "by_category": {"ok": 2}, "findings": 1},
            })
        );
        assert_eq!(
            document["summary"],
            serde_json::json!({"urls": 3, "documents": 2, "by_category": {"ok": 3}, "findings": 2})
        );
        // No task wrote one: still a document a reader takes.
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&Format::Json.join(&[])).unwrap(),
            serde_json::json!({
                "schema": REPORTS_SCHEMA,
                "tasks": [],
                "summary": {"urls": 0, "documents": 0, "by_category": {}, "findings": 0},
            })
        );
    }

    #[test]
    fn sarif_logs_merge_their_runs_and_annotations_follow_each_other() {
        // As sarif-report writes a log: the head, a run's parts and the
        // end on lines of their own.
        let log = |task: &str| {
            format!(
                "{{\"$schema\":\"{SARIF_SCHEMA}\",\"version\":\"2.1.0\",\"runs\":[\n\
                 {{\"automationDetails\":{{\"id\":\"{task}/\"}},\"results\":[\n\
                 {{\"message\":{{\"text\":\"x\\ny\"}},\"ruleId\":\"broken\"}}\n\
                 ],\"tool\":{{\"driver\":{{\"name\":\"spinneret\"}}}}}}\n\
                 ]}}\n"
            )
        };
        let run = |task: &str| {
            format!(
                "{{\"automationDetails\":{{\"id\":\"{task}/\"}},\"results\":[{{\"message\":{{\"text\":\"x\\ny\"}},\"ruleId\":\"broken\"}}],\"tool\":{{\"driver\":{{\"name\":\"spinneret\"}}}}}}"
            )
        };
        let merged = Format::Sarif.join(&[log("A"), log("B")]);
        assert_eq!(
            merged,
            format!(
                "{{\"$schema\":\"{SARIF_SCHEMA}\",\"version\":\"2.1.0\",\"runs\":[\n{},\n{}\n]}}\n",
                run("A"),
                run("B")
            )
        );
        let parsed: serde_json::Value = serde_json::from_str(&merged).unwrap();
        assert_eq!(parsed["runs"][1]["automationDetails"]["id"], "B/");
        assert_eq!(parsed["runs"][0]["results"][0]["message"]["text"], "x\ny");
        // One task's log is printed as it is; one that is not JSON is left out.
        assert_eq!(Format::Sarif.join(&[log("A")]), log("A"));
        assert_eq!(
            Format::Sarif.join(&[log("A"), "{\"runs\":".into()]),
            format!(
                "{{\"$schema\":\"{SARIF_SCHEMA}\",\"version\":\"2.1.0\",\"runs\":[\n{}\n]}}\n",
                run("A")
            )
        );
        // No task wrote one: still a log a reader takes.
        assert_eq!(
            Format::Sarif.join(&[]),
            format!("{{\"$schema\":\"{SARIF_SCHEMA}\",\"version\":\"2.1.0\",\"runs\":[]}}\n")
        );
        assert_eq!(
            Format::Github.join(&[
                "::error title=Broken link::a\n".into(),
                String::new(),
                "::warning title=Moved link::b".into(),
                "::notice title=Bad HTML::c\n".into(),
            ]),
            "::error title=Broken link::a\n::warning title=Moved link::b\n::notice title=Bad HTML::c\n"
        );
        assert_eq!(Format::Github.join(&[]), "");
    }

    #[test]
    fn sarif_and_github_name_files_relative_to_the_current_directory() {
        let base = url::Url::from_directory_path(std::env::current_dir().unwrap()).unwrap();
        for format in [Format::Sarif, Format::Github] {
            assert_eq!(
                format.settings(),
                serde_json::json!({ "base": base.as_str() })
            );
        }
        assert_eq!(Format::Junit.settings(), serde_json::json!({}));
        assert_eq!(Format::Sarif.name(), "sarif");
        assert_eq!(Format::Github.name(), "github");
        assert_eq!(
            Format::Github.reporter(),
            Some(("github-annotations", "annotations.txt"))
        );
    }
}
