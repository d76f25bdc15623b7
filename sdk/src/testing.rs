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

/// The hits of what a search engine's `parse_results` answered, for a test
/// to assert on; it panics, saying what came instead, when the answer is
/// the engine's "no results" or the plugin's error.
#[cfg(feature = "search-engine")]
pub fn hits(parsed: Result<crate::search::Answer, String>) -> Vec<crate::search::Hit> {
    match parsed {
        Ok(crate::search::Answer::Hits(hits)) => hits,
        Ok(crate::search::Answer::NoResults(words)) => {
            panic!("hits expected; the engine said it found nothing ({words:?})")
        }
        Err(e) => panic!("hits expected; the plugin did not read the page: {e}"),
    }
}

/// An output directory in memory. Appended files wait in `pending` until
/// [`MemoryOutput::commit`] (the harness commits when `finish` succeeds, as
/// the host does).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MemoryOutput {
    /// Files by path.
    pub files: BTreeMap<String, Vec<u8>>,
    /// New versions of files being appended to.
    pub pending: BTreeMap<String, Vec<u8>>,
}

impl MemoryOutput {
    /// A file's contents as text.
    pub fn text(&self, path: &str) -> Option<String> {
        self.files
            .get(path)
            .map(|b| String::from_utf8_lossy(b).into_owned())
    }

    /// Put the new versions of appended files in place of the old.
    pub fn commit(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        self.files.extend(pending);
    }
}

#[cfg(any(feature = "reporter", feature = "collection-index"))]
impl crate::output::Output for MemoryOutput {
    fn write(&mut self, path: &str, contents: &[u8]) -> Result<(), String> {
        if self.pending.contains_key(path) {
            return Err(format!("{path} is being appended to"));
        }
        self.files.insert(path.to_string(), contents.to_vec());
        Ok(())
    }
    fn append(&mut self, path: &str, contents: &[u8]) -> Result<(), String> {
        self.pending
            .entry(path.to_string())
            .or_default()
            .extend_from_slice(contents);
        Ok(())
    }
    fn append_file(&mut self, path: &str, part: &str) -> Result<(), String> {
        if path == part {
            return Err(format!("cannot append {part} to itself"));
        }
        let bytes = self
            .pending
            .remove(part)
            .ok_or_else(|| format!("{part} has not been appended to in this report"))?;
        self.pending
            .entry(path.to_string())
            .or_default()
            .extend_from_slice(&bytes);
        Ok(())
    }
    fn exists(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }
    fn read(&self, path: &str) -> Option<Vec<u8>> {
        self.files.get(path).cloned()
    }
    fn rename(&mut self, from: &str, to: &str) -> Result<(), String> {
        if self.pending.contains_key(to) {
            return Err(format!("{to} is being appended to"));
        }
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

    /// A finding of `kind` about `url`, of `severity`.
    pub fn finding_with(
        kind: &str,
        url: &str,
        referrer: Option<&str>,
        message: &str,
        severity: Severity,
    ) -> Finding {
        let mut f = finding(kind, url, referrer, message);
        f.severity = severity;
        f
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

    /// What a report that points at files (SARIF, CI annotations) must
    /// place: a task over a local tree, `file:///w/site/`, whose index links
    /// to a sub-page (whose name has a space), to a missing file, to a place
    /// in the sub-page that is not there, and to a moved web page; the
    /// sub-page shows the missing file as an image and has no title. Places:
    /// the index's links are at 3:12, 7:5, 9:14 and an unknown one, the
    /// sub-page's at 5:6. Run it with [`super::ReporterHarness::run_case`].
    #[cfg(feature = "reporter")]
    pub fn linked_file_tree() -> super::TaskCase {
        use std::collections::HashMap;
        let mut lines = HashMap::new();
        let mut columns = HashMap::new();
        let index = "file:///w/site/index.html";
        let sub = "file:///w/site/sub/a%20b.html";
        let gone = "file:///w/site/gone.html";
        lines.insert(index.into(), vec![3, 7, 9, 0]);
        columns.insert(index.into(), vec![12, 5, 14, 0]);
        lines.insert(sub.into(), vec![5]);
        columns.insert(sub.into(), vec![6]);
        let mut broken = result(gone, Category::Broken);
        broken.error = Some("file not found".into());
        super::TaskCase {
            task: task("Site", index),
            results: vec![
                (result(index, Category::Ok), crate::reporter::Role::Document),
                (result(sub, Category::Ok), crate::reporter::Role::Document),
                (broken, crate::reporter::Role::Leaf),
                (
                    result("http://b.example/old", Category::Moved),
                    crate::reporter::Role::Leaf,
                ),
            ],
            documents: vec![
                document(
                    index,
                    "Home",
                    &[
                        (sub, RefKind::Anchor, "A B"),
                        (gone, RefKind::Anchor, "gone"),
                        (
                            "file:///w/site/sub/a%20b.html#team",
                            RefKind::Anchor,
                            "team",
                        ),
                        ("http://b.example/old", RefKind::Anchor, "old"),
                    ],
                ),
                document(sub, "A B", &[(gone, RefKind::Image, "")]),
            ],
            findings: vec![
                finding_with(
                    "broken",
                    gone,
                    Some(index),
                    "broken: file not found",
                    Severity::Error,
                ),
                finding_with(
                    crate::reporter::BROKEN_FRAGMENT,
                    "file:///w/site/sub/a%20b.html#team",
                    Some(index),
                    "no element with id or name \"team\" in file:///w/site/sub/a%20b.html",
                    Severity::Warning,
                ),
                finding_with(
                    "bad-html",
                    sub,
                    None,
                    "no-title ×1 (the document has no title)",
                    Severity::Info,
                ),
                finding_with(
                    "moved",
                    "http://b.example/old",
                    Some(index),
                    "moved to http://b.example/new (301)",
                    Severity::Warning,
                ),
            ],
            lines,
            columns,
        }
    }

    /// A task `T` of one page, `url`, with one finding about it: of
    /// `kind`, saying `message`, at `severity`.
    #[cfg(feature = "reporter")]
    pub fn page_with_finding(
        url: &str,
        kind: &str,
        message: &str,
        severity: Severity,
    ) -> super::TaskCase {
        super::TaskCase {
            task: task("T", url),
            results: vec![(result(url, Category::Ok), crate::reporter::Role::Document)],
            documents: vec![document(url, "Home", &[])],
            findings: vec![finding_with(kind, url, None, message, severity)],
            lines: std::collections::HashMap::new(),
            columns: std::collections::HashMap::new(),
        }
    }

    /// The web's counterpart of [`linked_file_tree`]: a page,
    /// `http://a.example/`, whose links at 4:10 and 6:7 go to a missing
    /// page and a forbidden one, with a broken fragment as the host tells
    /// it (the page with the link, no link named) and a plugin's failure.
    #[cfg(feature = "reporter")]
    pub fn linked_web_page() -> super::TaskCase {
        let mut lines = std::collections::HashMap::new();
        let mut columns = std::collections::HashMap::new();
        let top = "http://a.example/";
        lines.insert(top.into(), vec![4, 6]);
        columns.insert(top.into(), vec![10, 7]);
        let mut gone = result("http://a.example/gone", Category::Broken);
        gone.error = Some("HTTP 404 Not Found".into());
        let mut secret = result("http://a.example/secret", Category::Blocked);
        secret.error = Some("HTTP 403 Forbidden".into());
        super::TaskCase {
            task: task("Web", top),
            results: vec![
                (result(top, Category::Ok), crate::reporter::Role::Document),
                (gone, crate::reporter::Role::Leaf),
                (secret, crate::reporter::Role::Leaf),
            ],
            documents: vec![document(
                top,
                "Home",
                &[
                    ("http://a.example/gone", RefKind::Anchor, "gone"),
                    ("http://a.example/secret", RefKind::Anchor, "secret"),
                ],
            )],
            findings: vec![
                finding_with(
                    "broken",
                    "http://a.example/gone",
                    Some(top),
                    "broken: HTTP 404 Not Found",
                    Severity::Error,
                ),
                finding_with(
                    "blocked",
                    "http://a.example/secret",
                    Some(top),
                    "blocked: HTTP 403 Forbidden",
                    Severity::Warning,
                ),
                // As the host tells a broken fragment: no link named,
                // only the page with it.
                finding_with(
                    crate::reporter::BROKEN_FRAGMENT,
                    "http://a.example/other#x",
                    Some(top),
                    "no element with id or name \"x\" in http://a.example/other",
                    Severity::Warning,
                ),
                finding_with(
                    "plugin-failure",
                    top,
                    None,
                    "soft-404: cut off at its deadline",
                    Severity::Error,
                ),
            ],
            lines,
            columns,
        }
    }
}

/// One task's items, as [`ReporterHarness::run_case`] hands them over.
#[cfg(feature = "reporter")]
pub struct TaskCase {
    /// The task.
    pub task: crate::reporter::TaskInfo,
    /// Its results, with roles.
    pub results: Vec<(crate::reporter::CheckResult, crate::reporter::Role)>,
    /// Its documents.
    pub documents: Vec<crate::reporter::Document>,
    /// Its findings.
    pub findings: Vec<crate::reporter::Finding>,
    /// The lines of the documents' references, as [`ReporterHarness::lines`].
    pub lines: std::collections::HashMap<String, Vec<u32>>,
    /// Their columns, as [`ReporterHarness::columns`].
    pub columns: std::collections::HashMap<String, Vec<u32>>,
}

/// Drive a reporter as the host does, into a [`MemoryOutput`]: results in
/// URL order (each once), counts at `begin`, documents numbered with their
/// references' targets joined (in parts of at most `part_size`
/// references), findings grouped by kind with where they are referred to
/// from; new versions of appended files committed when `finish` succeeds.
#[cfg(feature = "reporter")]
pub struct ReporterHarness<R: crate::reporter::Reporter> {
    /// The reporter under test.
    pub reporter: R,
    /// What it wrote.
    pub output: MemoryOutput,
    /// The most references a document part carries (the host's is 1024).
    pub part_size: usize,
    /// Per document URL, the source line of each of its references, in
    /// order: handed over as [`crate::reporter::TaskDocument`]'s `lines`
    /// when the reporter wants them (a document not here gets zeros, as
    /// from a parser that does not know).
    pub lines: std::collections::HashMap<String, Vec<u32>>,
    /// Per document URL, the source column of each of its references, in
    /// order: handed over as `columns` beside the lines (zeros where not
    /// given).
    pub columns: std::collections::HashMap<String, Vec<u32>>,
}

#[cfg(feature = "reporter")]
impl<R: crate::reporter::Reporter> ReporterHarness<R> {
    /// Configure the reporter with a JSON configuration.
    pub fn new(config: &str) -> Result<Self, String> {
        Ok(ReporterHarness {
            reporter: R::configure(parse_config(config)?)?,
            output: MemoryOutput::default(),
            part_size: 1024,
            lines: std::collections::HashMap::new(),
            columns: std::collections::HashMap::new(),
        })
    }

    /// One task's report from a prepared case (e.g.
    /// [`fixtures::linked_file_tree`]), its lines included.
    pub fn run_case(
        &mut self,
        run: crate::reporter::RunInfo,
        case: TaskCase,
    ) -> Result<(), String> {
        self.lines = case.lines;
        self.columns = case.columns;
        self.run_task(run, case.task, case.results, case.documents, case.findings)
    }

    /// One task's report: results (with roles), documents, findings, then
    /// finish. An error of any call is the answer; appended files are
    /// committed only when every call succeeded.
    pub fn run_task(
        &mut self,
        run: crate::reporter::RunInfo,
        task: crate::reporter::TaskInfo,
        results: Vec<(crate::reporter::CheckResult, crate::reporter::Role)>,
        documents: Vec<crate::reporter::Document>,
        findings: Vec<crate::reporter::Finding>,
    ) -> Result<(), String> {
        use crate::reporter::*;
        use std::collections::HashMap;
        let mut documents = documents;
        documents.sort_by(|a, b| a.url.cmp(&b.url));
        let view = TaskView::new(results, &documents);
        let mut findings = findings;
        findings.sort_by(|a, b| finding_kind_rank(&a.kind).cmp(&finding_kind_rank(&b.kind)));
        let counts = task_counts(&view.by_url, &documents, &findings);
        // What a failed report appended is thrown away, as the host does.
        self.output.pending.clear();
        self.reporter.begin(run, task, counts, &mut self.output)?;
        let wants = self.reporter.wants();
        for (r, role) in view
            .by_url
            .values()
            .filter(|_| wanted(wants, Wants::RESULTS))
        {
            self.reporter
                .on_result(r.clone(), *role, &mut self.output)?;
        }
        let mut places: HashMap<String, Vec<Place>> = HashMap::new();
        for d in documents
            .into_iter()
            .filter(|_| wanted(wants, Wants::DOCUMENTS))
        {
            let number = view.numbers[&d.url];
            for (j, r) in d.references.iter().enumerate() {
                places.entry(r.target.clone()).or_default().push(Place {
                    document: number,
                    reference: j as u32 + 1,
                });
            }
            self.hand_document(d, &view, wants)?;
        }
        let findings = findings
            .into_iter()
            .filter(|_| wanted(wants, Wants::FINDINGS));
        for (i, f) in findings.enumerate() {
            let finding = TaskFinding {
                number: i as u32 + 1,
                document: view.numbers.get(&f.url).copied(),
                referred_from: places.get(&f.url).cloned().unwrap_or_default(),
                finding: f,
            };
            self.reporter.on_finding(finding, &mut self.output)?;
        }
        self.reporter.finish(&mut self.output)?;
        self.output.commit();
        Ok(())
    }

    /// Hand one document to the reporter in parts of at most `part_size`
    /// references (a document without references is one empty part), each
    /// with its references' targets, lines and columns as far as the
    /// reporter `wants` them.
    fn hand_document(
        &mut self,
        d: crate::reporter::Document,
        view: &TaskView,
        wants: crate::reporter::Wants,
    ) -> Result<(), String> {
        use crate::reporter::*;
        let number = view.numbers[&d.url];
        let outcome = view
            .by_url
            .get(&d.url)
            .map(|(r, _)| r.clone())
            .unwrap_or_else(|| fixtures::result(&d.url, Category::Ok));
        let lines_wanted = wanted(wants, Wants::LINES);
        let all_lines = reference_places(&self.lines, &d, lines_wanted);
        let all_columns = reference_places(&self.columns, &d, lines_wanted);
        let size = self.part_size.max(1);
        let parts: Vec<&[Reference]> = match d.references.is_empty() {
            true => vec![&[]],
            false => d.references.chunks(size).collect(),
        };
        let last = parts.len() - 1;
        for (i, part) in parts.into_iter().enumerate() {
            let first = i * size;
            let targets = match wanted(wants, Wants::TARGETS) {
                true => part.iter().map(|r| view.target(&r.target)).collect(),
                false => Vec::new(),
            };
            let part = TaskDocument {
                number,
                document: Document {
                    references: part.to_vec(),
                    ..d.clone()
                },
                outcome: outcome.clone(),
                targets,
                first_reference: first as u32,
                last_part: i == last,
                lines: part_of(&all_lines, first, part.len()),
                columns: part_of(&all_columns, first, part.len()),
            };
            self.reporter.on_document(part, &mut self.output)?;
        }
        Ok(())
    }
}

/// What [`ReporterHarness::run_task`] knows of a task while it hands its
/// documents over: each URL's result (the last word on it), and each
/// document's number (in URL order, from 1) and title.
#[cfg(feature = "reporter")]
struct TaskView {
    by_url: BTreeMap<String, (crate::reporter::CheckResult, crate::reporter::Role)>,
    numbers: std::collections::HashMap<String, u32>,
    titles: std::collections::HashMap<String, Option<String>>,
}

#[cfg(feature = "reporter")]
impl TaskView {
    /// The view of a task's `results` and its `documents` (sorted by URL).
    fn new(
        results: Vec<(crate::reporter::CheckResult, crate::reporter::Role)>,
        documents: &[crate::reporter::Document],
    ) -> TaskView {
        // In URL order, each URL once (the last word on it).
        let mut by_url = BTreeMap::new();
        for (r, role) in results {
            by_url.insert(r.url.clone(), (r, role));
        }
        TaskView {
            by_url,
            numbers: documents
                .iter()
                .enumerate()
                .map(|(i, d)| (d.url.clone(), i as u32 + 1))
                .collect(),
            titles: documents
                .iter()
                .map(|d| (d.url.clone(), d.title.clone()))
                .collect(),
        }
    }

    /// What a reference to `url` leads to: its result, and the document
    /// it is, if it is one.
    fn target(&self, url: &str) -> crate::reporter::Target {
        let result = self.by_url.get(url).map(|(x, _)| x);
        crate::reporter::Target {
            category: result.map(|x| x.category),
            status: result.and_then(|x| x.status),
            error: result.and_then(|x| x.error.clone()),
            final_url: result.and_then(|x| x.final_url.clone()),
            last_modified: result.and_then(|x| x.last_modified.clone()),
            document: self.numbers.get(url).copied(),
            title: self.titles.get(url).cloned().flatten(),
        }
    }
}

/// A task's counts, as `begin` gets them: URLs by category and by role,
/// documents, references, and findings by kind (in the kinds' order).
#[cfg(feature = "reporter")]
fn task_counts(
    by_url: &BTreeMap<String, (crate::reporter::CheckResult, crate::reporter::Role)>,
    documents: &[crate::reporter::Document],
    findings: &[crate::reporter::Finding],
) -> crate::reporter::TaskCounts {
    use crate::reporter::*;
    let mut counted: BTreeMap<String, u64> = BTreeMap::new();
    for f in findings {
        *counted.entry(f.kind.clone()).or_default() += 1;
    }
    let mut by_kind: Vec<(String, u64)> = counted.into_iter().collect();
    by_kind.sort_by(|a, b| finding_kind_rank(&a.0).cmp(&finding_kind_rank(&b.0)));
    let mut by_category: Vec<(Category, u64)> = Vec::new();
    let mut by_role: Vec<(Role, u64)> = Vec::new();
    for (r, role) in by_url.values() {
        match by_category.iter_mut().find(|(c, _)| *c == r.category) {
            Some((_, n)) => *n += 1,
            None => by_category.push((r.category, 1)),
        }
        match by_role.iter_mut().find(|(x, _)| x == role) {
            Some((_, n)) => *n += 1,
            None => by_role.push((*role, 1)),
        }
    }
    TaskCounts {
        urls: by_url.len() as u64,
        documents: documents.len() as u64,
        references: documents.iter().map(|d| d.references.len() as u64).sum(),
        by_category,
        by_role,
        findings: by_kind,
    }
}

/// Each of document `d`'s references' lines (or columns) from `given`, 0
/// where not given; nothing when the reporter does not want them.
#[cfg(feature = "reporter")]
fn reference_places(
    given: &std::collections::HashMap<String, Vec<u32>>,
    d: &crate::reporter::Document,
    wanted: bool,
) -> Vec<u32> {
    match wanted {
        true => (0..d.references.len())
            .map(|j| {
                given
                    .get(&d.url)
                    .and_then(|l| l.get(j).copied())
                    .unwrap_or(0)
            })
            .collect(),
        false => Vec::new(),
    }
}

/// The `len` lines (or columns) of a part whose first reference is
/// `first`, out of the whole document's `all`; nothing when there are none.
#[cfg(feature = "reporter")]
fn part_of(all: &[u32], first: usize, len: usize) -> Vec<u32> {
    match all.is_empty() {
        true => Vec::new(),
        false => all[first..first + len].to_vec(),
    }
}
