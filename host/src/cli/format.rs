//! `--format`: what `crawl` and `check` print on standard output. `text`
//! is the summary, the broken links and where the reports are; each other
//! format is a built-in reporter, added to every task for the run, whose
//! files are printed, the tasks' put together as one document.

use crate::config::Config;
use spinneret_plugin_host::entry::{PluginConfig, PluginSource};
use std::path::PathBuf;

/// What a run prints on standard output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The summary table, the links a reader cannot follow with the pages
    /// they are on, and where each task's reports are.
    #[default]
    Text,
    /// JSON Lines, schema spinneret.report/1 (the `json-report` plugin's
    /// report.jsonl): every URL, document and finding.
    Json,
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
}

impl Format {
    /// The built-in reporter that writes the format, and its file's name
    /// when its configuration names none.
    fn reporter(self) -> Option<(&'static str, &'static str)> {
        match self {
            Format::Text => None,
            Format::Json => Some(("json-report", "report.jsonl")),
            Format::Markdown => Some(("markdown-report", "report.md")),
            Format::Junit => Some(("junit-report", "junit.xml")),
            Format::Csv => Some(("csv-report", "report.csv")),
        }
    }

    /// Make every task of `config` run the format's reporter, unless the
    /// configuration has it already (then its own settings hold).
    pub fn add_to(self, config: &mut Config) {
        let Some((builtin, _)) = self.reporter() else {
            return;
        };
        let source = PluginSource::Builtin(builtin.to_string());
        if config.plugins.iter().any(|p| p.source == source) {
            return;
        }
        config.plugins.push(PluginConfig {
            name: builtin.to_string(),
            source,
            config: serde_json::json!({}),
            grants: Default::default(),
            tasks: None,
            defined_at: None,
        });
    }

    /// The format's files of the run, one per task that wrote it: `reports`
    /// are the run's (task, output directory, reporters that wrote).
    fn files(self, config: &Config, reports: &[(String, PathBuf, Vec<String>)]) -> Vec<PathBuf> {
        let Some((builtin, default_file)) = self.reporter() else {
            return Vec::new();
        };
        let source = PluginSource::Builtin(builtin.to_string());
        let entry = config.plugins.iter().find(|p| p.source == source);
        let name = entry.map_or(builtin, |p| p.name.as_str());
        let file = entry
            .and_then(|p| p.config.get("file"))
            .and_then(|f| f.as_str())
            .unwrap_or(default_file);
        reports
            .iter()
            .filter(|(_, _, written)| written.iter().any(|w| w == name))
            .map(|(_, dir, _)| dir.join(file))
            .collect()
    }

    /// The run's report in this format: each task's file, put together
    /// (JUnit's suites under one root, CSV's header once). `Err` names a
    /// task's file that cannot be read.
    pub fn document(
        self,
        config: &Config,
        reports: &[(String, PathBuf, Vec<String>)],
    ) -> Result<String, String> {
        let mut parts = Vec::new();
        for path in self.files(config, reports) {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read the report {}: {e}", path.display()))?;
            parts.push(text);
        }
        Ok(self.join(&parts))
    }

    /// Several tasks' files as one document.
    fn join(self, parts: &[String]) -> String {
        match (self, parts) {
            (_, []) => String::new(),
            (_, [one]) => one.clone(),
            (Format::Junit, _) => {
                // Each file is a declaration, `<testsuites …>`, its suite's
                // lines and `</testsuites>`, each on lines of their own.
                let mut out = String::from(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"spinneret\">\n",
                );
                for p in parts {
                    let lines: Vec<&str> = p.lines().collect();
                    if lines.len() >= 3 {
                        for l in &lines[2..lines.len() - 1] {
                            out.push_str(l);
                            out.push('\n');
                        }
                    }
                }
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
            _ => parts.concat(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_tasks_make_one_document() {
        let junit = |suite: &str| {
            format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"spinneret\" tests=\"1\">\n<testsuite name=\"{suite}\">\n<testcase name=\"u\" classname=\"{suite}\"></testcase>\n</testsuite>\n</testsuites>\n"
            )
        };
        assert_eq!(
            Format::Junit.join(&[junit("A"), junit("B")]),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"spinneret\">\n\
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
        assert_eq!(Format::Json.join(&["a\n".into(), "b\n".into()]), "a\nb\n");
        assert_eq!(Format::Junit.join(&[junit("A")]), junit("A"));
    }
}
