//! Running a plugin's logic natively under `cargo test`: an in-memory
//! [`MemoryOutput`], fixture builders for the WIT types, and a harness that
//! drives a reporter the way the host does.

use std::collections::BTreeMap;

/// Parse a configuration string as the host hands it over (a JSON object; empty means `{}`).
pub fn parse_config(config: &str) -> Result<serde_json::Value, String> {
    if config.trim().is_empty() {
        return Ok(serde_json::Value::Object(Default::default()));
    }
    serde_json::from_str(config).map_err(|e| format!("the configuration is not a JSON object: {e}"))
}

/// An output directory in memory.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MemoryOutput {
    /// Files by path.
    pub files: BTreeMap<String, Vec<u8>>,
}

impl MemoryOutput {
    /// A file's contents as text.
    pub fn text(&self, path: &str) -> Option<String> {
        self.files
            .get(path)
            .map(|b| String::from_utf8_lossy(b).into_owned())
    }
}

#[cfg(feature = "reporter")]
impl crate::reporter::Output for MemoryOutput {
    fn write(&mut self, path: &str, contents: &[u8]) -> Result<(), String> {
        self.files.insert(path.to_string(), contents.to_vec());
        Ok(())
    }
    fn read(&self, path: &str) -> Option<Vec<u8>> {
        self.files.get(path).cloned()
    }
    fn rename(&mut self, from: &str, to: &str) -> Result<(), String> {
        let v = self
            .files
            .remove(from)
            .ok_or_else(|| format!("{from} does not exist"))?;
        self.files.insert(to.to_string(), v);
        Ok(())
    }
}

/// Builders for the WIT types, with sensible defaults for tests.
pub mod fixtures {
    use crate::types::*;

    /// A finding of `kind` about `url`.
    pub fn finding(kind: &str, url: &str, referrer: Option<&str>, message: &str) -> Finding {
        Finding {
            kind: kind.to_string(),
            url: url.to_string(),
            referrer: referrer.map(str::to_string),
            message: message.to_string(),
            severity: Severity::Warning,
            source: "test".to_string(),
        }
    }

    /// A policy's candidate: `url` referred to by an ordinary link.
    #[cfg(feature = "policy")]
    pub fn candidate(url: &str) -> crate::policy::Candidate {
        crate::policy::Candidate {
            target: url.to_string(),
            kind: RefKind::Anchor,
        }
    }

    /// A policy's context: task `T` at `http://a.example/`, no referrer, at `depth`.
    #[cfg(feature = "policy")]
    pub fn context(depth: u32) -> crate::policy::Context {
        crate::policy::Context {
            task: task("T", "http://a.example/"),
            referrer: None,
            depth,
        }
    }

    /// What a run saw of a URL: its result and, for a document, its parse.
    #[cfg(feature = "detector")]
    pub fn snapshot(outcome: CheckResult, document: Option<Document>) -> crate::detector::Snapshot {
        crate::detector::Snapshot { outcome, document }
    }

    /// A result for `url` in `category` (status 200, 404, 301… as fits the category).
    pub fn result(url: &str, category: Category) -> CheckResult {
        let status = match category {
            Category::Ok | Category::Moved => Some(200),
            Category::Broken => Some(404),
            Category::Blocked => Some(403),
            Category::Avoided | Category::NotChecked => None,
        };
        CheckResult {
            url: url.to_string(),
            category,
            method: status.map(|_| "GET".to_string()),
            status,
            error: None,
            content_type: Some("text/html".into()),
            size: None,
            content_hash: None,
            etag: None,
            last_modified: None,
            expires: None,
            owner: None,
            redirects: Vec::new(),
            final_url: None,
            elapsed_ms: None,
            referrer: None,
            checked_at: 1_700_000_000,
        }
    }

    /// A document at `url` with a title and references (as (target, kind, text)).
    pub fn document(url: &str, title: &str, references: &[(&str, RefKind, &str)]) -> Document {
        Document {
            url: url.to_string(),
            title: Some(title.to_string()),
            owner: None,
            expires: None,
            parse_errors: 0,
            references: references
                .iter()
                .map(|(t, k, a)| Reference {
                    target: t.to_string(),
                    kind: *k,
                    anchor_text: a.to_string(),
                })
                .collect(),
        }
    }

    /// A site task named `name` at `top`.
    pub fn task(name: &str, top: &str) -> TaskInfo {
        TaskInfo {
            name: name.to_string(),
            kind: TaskKind::Site,
            top: top.to_string(),
            email: None,
            changed_days: 7,
            expiring_days: 7,
        }
    }

    /// Run 1, started at `started_at`.
    pub fn run(started_at: i64) -> RunInfo {
        RunInfo {
            id: 1,
            started_at,
            previous_run: None,
            host_version: crate::API_VERSION.to_string(),
            options: "{}".to_string(),
        }
    }
}

/// Drive a reporter as the host does, into a [`MemoryOutput`].
#[cfg(feature = "reporter")]
pub struct ReporterHarness<R: crate::reporter::Reporter> {
    /// The reporter under test.
    pub reporter: R,
    /// What it wrote.
    pub output: MemoryOutput,
}

#[cfg(feature = "reporter")]
impl<R: crate::reporter::Reporter> ReporterHarness<R> {
    /// Configure the reporter with a JSON configuration.
    pub fn new(config: &str) -> Result<Self, String> {
        Ok(ReporterHarness {
            reporter: R::configure(parse_config(config)?)?,
            output: MemoryOutput::default(),
        })
    }

    /// One task's report: results (with roles), documents, findings, then finish.
    pub fn run_task(
        &mut self,
        run: crate::reporter::RunInfo,
        task: crate::reporter::TaskInfo,
        results: Vec<(crate::reporter::CheckResult, crate::reporter::Role)>,
        documents: Vec<crate::reporter::Document>,
        findings: Vec<crate::reporter::Finding>,
    ) -> Result<(), String> {
        self.reporter.begin(run, task)?;
        let by_url: std::collections::HashMap<String, crate::reporter::CheckResult> = results
            .iter()
            .map(|(r, _)| (r.url.clone(), r.clone()))
            .collect();
        for (r, role) in results {
            self.reporter.on_result(r, role);
        }
        for d in documents {
            let outcome = by_url
                .get(&d.url)
                .cloned()
                .unwrap_or_else(|| fixtures::result(&d.url, crate::reporter::Category::Ok));
            self.reporter.on_document(d, outcome);
        }
        for f in findings {
            self.reporter.on_finding(f);
        }
        self.reporter.finish(&mut self.output)
    }
}
