//! `momspider-index`: the MOMspider maintenance index of a task (seed 000,
//! section 5.1), one HTML5 page per task:
//!
//! - how and when it was generated (options, start, duration) and a link
//!   to the one prior version of the index;
//! - a summary: counts per category and per interesting change, each
//!   change kind linked to its table;
//! - for each document of the task (in URL order, anchored `d1`, `d2`, …):
//!   a link to it, its title, Last-Modified, Expires and Owner, and its
//!   unique references (rows anchored `d1-1`, `d1-2`, …), each with its
//!   type (get, query, img, ftp, mailto, …), an anchor duplicating the
//!   reference, the target's title and modification date when known, its
//!   status, and for targets inside the infostructure a jump to their own
//!   entry;
//! - the cross-reference table of interesting changes, one table per kind,
//!   each row linked to the reference rows where the URL appears and
//!   anchored `f1`, `f2`, … by the finding's place in the order the host
//!   told them (the order they are stored in, which the owner's mail links
//!   to).
//!
//! Configuration: `file` (default `index.html`), `prior` (default: the
//! file's name with `.prior` before its extension, e.g. `index.prior.html`:
//! the previous index is renamed to it), `title` (default `MOMspider index
//! of TASK`). A task's `index_file` and `index_title` (MOMspider's
//! `IndexFile` and `IndexTitle`) fill in `file` and `title`.

use serde_json::Value;
use spinneret_sdk::html::{Escaped, escape};
use spinneret_sdk::reporter::*;
use spinneret_sdk::{clock, dates};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

/// The order interesting changes are listed in, with their headings.
const CHANGE_KINDS: [(&str, &str); 6] = [
    ("broken", "Broken links"),
    ("blocked", "Blocked links"),
    ("moved", "Moved documents"),
    ("expiring", "Expiring documents"),
    ("recently-modified", "Recently modified"),
    ("content-changed", "Content changed"),
];

/// The reporter's settings and one task's data.
pub struct MomspiderIndex {
    file: String,
    prior: String,
    title: Option<String>,
    run: Option<RunInfo>,
    task: Option<TaskInfo>,
    results: HashMap<String, (CheckResult, Role)>,
    documents: Vec<Document>,
    findings: Vec<Finding>,
}

/// A category as the index shows it (`not checked`) and as a class name
/// (`not-checked`).
fn category_names(c: Category) -> (&'static str, &'static str) {
    match c {
        Category::Ok => ("ok", "ok"),
        Category::Moved => ("moved", "moved"),
        Category::Broken => ("broken", "broken"),
        Category::Blocked => ("blocked", "blocked"),
        Category::Avoided => ("avoided", "avoided"),
        Category::NotChecked => ("not checked", "not-checked"),
    }
}

/// The seed's reference type: get, query, img, ftp, mailto, …
pub fn reference_type(r: &Reference) -> Cow<'_, str> {
    match r.kind {
        RefKind::Image => return "img".into(),
        RefKind::Form => return "form".into(),
        RefKind::Stylesheet => return "style".into(),
        RefKind::Script => return "script".into(),
        RefKind::Frame | RefKind::Iframe => return "frame".into(),
        RefKind::Object | RefKind::Embed => return "object".into(),
        RefKind::Icon => return "icon".into(),
        _ => {}
    }
    let scheme = r.target.split(':').next().unwrap_or("");
    let is = |s: &str| scheme.eq_ignore_ascii_case(s);
    if (is("http") || is("https")) && r.target.contains('?') {
        "query".into()
    } else if is("http") || is("https") || is("file") {
        "get".into()
    } else if scheme.is_empty() {
        "invalid".into()
    } else {
        scheme.to_ascii_lowercase().into()
    }
}

fn setting(config: &Value, key: &str) -> Result<Option<String>, String> {
    match config.get(key) {
        None => Ok(None),
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
        Some(other) => Err(format!(
            "momspider-index: `{key}` must be a non-empty string, not {other}"
        )),
    }
}

fn duration_text(seconds: i64) -> String {
    match seconds {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min {} s", s / 60, s % 60),
        s => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

impl MomspiderIndex {
    /// The status cell of a reference to a URL with result `r`: its
    /// category and status, and a moved URL's final URL or a failure's
    /// reason, written into `h`.
    fn write_status(h: &mut String, r: Option<&CheckResult>) {
        let Some(r) = r else {
            h.push_str("not checked in this run");
            return;
        };
        h.push_str(category_names(r.category).0);
        if let Some(s) = r.status {
            let _ = write!(h, " {s}");
        }
        match (r.category, &r.final_url, &r.error) {
            (Category::Moved, Some(f), _) => {
                let _ = write!(h, " → <a href=\"{0}\">{0}</a>", Escaped(f));
            }
            (
                Category::Broken | Category::Blocked | Category::Avoided | Category::NotChecked,
                _,
                Some(e),
            ) => {
                let _ = write!(h, ": {}", Escaped(e));
            }
            _ => {}
        }
    }

    fn render(&self, now: i64, prior_exists: bool) -> String {
        let run = self.run.as_ref().expect("begin was called");
        let task = self.task.as_ref().expect("begin was called");
        let title = self
            .title
            .clone()
            .unwrap_or_else(|| format!("MOMspider index of {}", task.name));
        let doc_ids: HashMap<&str, usize> = self
            .documents
            .iter()
            .enumerate()
            .map(|(i, d)| (d.url.as_str(), i + 1))
            .collect();
        // Where each URL is referred to: (document number, row number).
        let mut referred: HashMap<&str, Vec<(usize, usize)>> = HashMap::new();
        for (i, d) in self.documents.iter().enumerate() {
            for (j, r) in d.references.iter().enumerate() {
                referred
                    .entry(r.target.as_str())
                    .or_default()
                    .push((i + 1, j + 1));
            }
        }
        // Each finding keeps its place in the order it was told (`#f1`, `#f2`, …:
        // the anchors the owner's mail links to).
        let mut by_kind: BTreeMap<&str, Vec<(usize, &Finding)>> = BTreeMap::new();
        for (i, f) in self.findings.iter().enumerate() {
            by_kind.entry(f.kind.as_str()).or_default().push((i + 1, f));
        }
        let mut h = String::with_capacity(64 * 1024);
        let _ = write!(
            h,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"generator\" content=\"spinneret {version}\">\n\
             <title>{t}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n<h1>{t}</h1>\n",
            version = escape(&run.host_version),
            t = escape(&title),
        );
        // How and when.
        let kind = match task.kind {
            TaskKind::Site => "Site",
            TaskKind::Tree => "Tree",
            TaskKind::Owner => "Owner",
        };
        let _ = write!(
            h,
            "<section id=\"generated\">\n<p>Generated by spinneret {v} for the {kind} task \
             <b>{name}</b> from <a href=\"{top}\">{top}</a>.</p>\n<dl>\n\
             <dt>Started</dt><dd>{start}</dd>\n<dt>Duration</dt><dd>{dur}</dd>\n\
             <dt>Run</dt><dd>{id}</dd>\n<dt>Options</dt><dd>{opts}</dd>\n\
             <dt>Recently modified</dt><dd>within {cd} days</dd>\n\
             <dt>Expiring</dt><dd>within {ed} days</dd>\n",
            v = escape(&run.host_version),
            name = escape(&task.name),
            top = escape(&task.top),
            start = dates::format(run.started_at),
            dur = duration_text((now - run.started_at).max(0)),
            id = run.id,
            opts = escape(&options_text(&run.options)),
            cd = task.changed_days,
            ed = task.expiring_days,
        );
        if let Some(email) = &task.email {
            let _ = writeln!(
                h,
                "<dt>Owner</dt><dd><a href=\"mailto:{0}\">{0}</a></dd>",
                escape(email)
            );
        }
        h.push_str("</dl>\n");
        if prior_exists {
            let _ = writeln!(
                h,
                "<p id=\"prior\"><a rel=\"prev\" href=\"{}\">The prior version of this index</a></p>",
                escape(&self.prior)
            );
        } else {
            h.push_str("<p id=\"prior\">This is the first version of this index.</p>\n");
        }
        h.push_str("</section>\n");
        // Summary.
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        let mut leaves = 0;
        for (r, role) in self.results.values() {
            *counts
                .entry(spinneret_sdk::names::category(r.category))
                .or_default() += 1;
            if *role == Role::Leaf {
                leaves += 1;
            }
        }
        h.push_str("<section id=\"summary\">\n<h2>Summary</h2>\n<table>\n<tbody>\n");
        let _ = writeln!(
            h,
            "<tr><th>URLs checked</th><td>{}</td></tr>\n<tr><th>Documents</th><td>{}</td></tr>\n<tr><th>Leaves</th><td>{leaves}</td></tr>",
            self.results.len(),
            self.documents.len()
        );
        for c in ["ok", "moved", "broken", "blocked", "avoided", "not_checked"] {
            let _ = writeln!(
                h,
                "<tr class=\"{}\"><th>{}</th><td>{}</td></tr>",
                c.replace('_', "-"),
                capitalise(&c.replace('_', " ")),
                counts.get(c).copied().unwrap_or(0)
            );
        }
        h.push_str("</tbody>\n</table>\n<h3>Interesting changes</h3>\n<ul>\n");
        for (kind, heading) in change_kinds(&by_kind) {
            let _ = writeln!(
                h,
                "<li><a href=\"#changes-{k}\">{}</a>: {}</li>",
                escape(&heading),
                by_kind.get(kind.as_str()).map_or(0, Vec::len),
                k = escape(&kind),
            );
        }
        h.push_str("</ul>\n</section>\n");
        // Documents.
        h.push_str("<section id=\"documents\">\n<h2>Documents</h2>\n");
        for (i, d) in self.documents.iter().enumerate() {
            let n = i + 1;
            let outcome = self.results.get(&d.url).map(|(r, _)| r);
            let _ = write!(
                h,
                "<article class=\"document\" id=\"d{n}\">\n<h3><a href=\"{u}\">{t}</a></h3>\n<dl>\n<dt>URL</dt><dd>{u}</dd>\n",
                u = escape(&d.url),
                t = escape(d.title.as_deref().unwrap_or(&d.url)),
            );
            let lm = outcome.and_then(|r| r.last_modified.as_deref());
            let expires = d
                .expires
                .as_deref()
                .or(outcome.and_then(|r| r.expires.as_deref()));
            let owner = d
                .owner
                .as_deref()
                .or(outcome.and_then(|r| r.owner.as_deref()));
            for (label, value) in [
                ("Last-Modified", lm),
                ("Expires", expires),
                ("Owner", owner),
            ] {
                let _ = writeln!(
                    h,
                    "<dt>{label}</dt><dd>{}</dd>",
                    value.map_or_else(|| "—".to_string(), escape)
                );
            }
            h.push_str("</dl>\n");
            if d.references.is_empty() {
                h.push_str("<p>No references.</p>\n");
            } else {
                h.push_str(
                    "<table class=\"references\">\n<thead><tr><th>Type</th><th>Reference</th>\
                     <th>Title</th><th>Modified</th><th>Status</th><th>Entry</th></tr></thead>\n<tbody>\n",
                );
                for (j, r) in d.references.iter().enumerate() {
                    let target = self.results.get(&r.target).map(|(x, _)| x);
                    let target_doc = doc_ids.get(r.target.as_str());
                    let class = target.map_or("unknown", |x| category_names(x.category).1);
                    let text = if r.anchor_text.is_empty() {
                        &r.target
                    } else {
                        &r.anchor_text
                    };
                    let title = target_doc
                        .and_then(|k| self.documents[k - 1].title.as_deref())
                        .unwrap_or("");
                    let modified = target
                        .and_then(|x| x.last_modified.as_deref())
                        .unwrap_or("");
                    let _ = write!(
                        h,
                        "<tr id=\"d{n}-{m}\" class=\"{class}\"><td>{ty}</td><td><a href=\"{u}\">{text}</a></td>\
                         <td>{title}</td><td>{modified}</td><td>",
                        m = j + 1,
                        ty = Escaped(&reference_type(r)),
                        u = Escaped(&r.target),
                        text = Escaped(text),
                        title = Escaped(title),
                        modified = Escaped(modified),
                    );
                    Self::write_status(&mut h, target);
                    h.push_str("</td><td>");
                    if let Some(k) = target_doc {
                        let _ = write!(h, "<a href=\"#d{k}\">entry</a>");
                    }
                    h.push_str("</td></tr>\n");
                }
                h.push_str("</tbody>\n</table>\n");
            }
            h.push_str("</article>\n");
        }
        h.push_str("</section>\n");
        // The cross-reference table of interesting changes.
        h.push_str("<section id=\"changes\">\n<h2>Interesting changes</h2>\n");
        for (kind, heading) in change_kinds(&by_kind) {
            let list = by_kind.get(kind.as_str()).map(Vec::as_slice).unwrap_or(&[]);
            let _ = writeln!(
                h,
                "<h3 id=\"changes-{}\">{} ({})</h3>",
                escape(&kind),
                escape(&heading),
                list.len()
            );
            if list.is_empty() {
                h.push_str("<p>None.</p>\n");
                continue;
            }
            h.push_str(
                "<table class=\"changes\">\n<thead><tr><th>URL</th><th>What</th><th>Referred to from</th></tr></thead>\n<tbody>\n",
            );
            for (n, f) in list {
                let mut from = String::new();
                if let Some(k) = doc_ids.get(f.url.as_str()) {
                    let _ = write!(from, "<a href=\"#d{k}\">its entry</a> ");
                }
                for (k, m) in referred
                    .get(f.url.as_str())
                    .map(Vec::as_slice)
                    .unwrap_or(&[])
                {
                    let _ = write!(
                        from,
                        "<a href=\"#d{k}-{m}\">{}</a> ",
                        escape(
                            self.documents[k - 1]
                                .title
                                .as_deref()
                                .unwrap_or(&self.documents[k - 1].url)
                        )
                    );
                }
                let _ = writeln!(
                    h,
                    "<tr id=\"f{n}\"><td><a href=\"{u}\">{u}</a></td><td>{msg}</td><td>{}</td></tr>",
                    from.trim_end(),
                    u = escape(&f.url),
                    msg = escape(&f.message),
                );
            }
            h.push_str("</tbody>\n</table>\n");
        }
        h.push_str("</section>\n</body>\n</html>\n");
        h
    }
}

/// The change kinds to list: the seed's, then any other kind found.
fn change_kinds<T>(by_kind: &BTreeMap<&str, Vec<T>>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = CHANGE_KINDS
        .iter()
        .map(|(k, h)| (k.to_string(), h.to_string()))
        .collect();
    for k in by_kind.keys() {
        if !CHANGE_KINDS.iter().any(|(c, _)| c == k) {
            out.push((k.to_string(), capitalise(&k.replace('-', " "))));
        }
    }
    out
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The run's options (a JSON object) as `key = value` pairs.
fn options_text(options: &str) -> String {
    match serde_json::from_str::<Value>(options) {
        Ok(Value::Object(m)) if !m.is_empty() => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k} = {s}"),
                v => format!("{k} = {v}"),
            })
            .collect::<Vec<_>>()
            .join("; "),
        _ => "defaults".to_string(),
    }
}

const STYLE: &str =
    "body { font-family: sans-serif; max-width: 72rem; margin: 1rem auto; padding: 0 1rem; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { border: 1px solid #ccc; padding: .2rem .4rem; text-align: left; vertical-align: top; }
tr.broken td { background: #fdd; }
tr.moved td { background: #ffd; }
tr.blocked td, tr.avoided td { background: #eee; }
dl { display: grid; grid-template-columns: max-content auto; gap: 0 1rem; }
dt { font-weight: bold; }
article.document { border-top: 2px solid #888; margin-top: 1.5rem; }
";

impl Reporter for MomspiderIndex {
    fn configure(config: Value) -> Result<Self, String> {
        spinneret_sdk::settings::check_keys(
            "momspider-index",
            &config,
            &["file", "prior", "title"],
        )?;
        let file = setting(&config, "file")?.unwrap_or_else(|| "index.html".into());
        let prior = setting(&config, "prior")?.unwrap_or_else(|| match file.rsplit_once('.') {
            Some((stem, ext)) => format!("{stem}.prior.{ext}"),
            None => format!("{file}.prior"),
        });
        if prior == file {
            return Err("momspider-index: `prior` must differ from `file`".into());
        }
        Ok(MomspiderIndex {
            file,
            prior,
            title: setting(&config, "title")?,
            run: None,
            task: None,
            results: HashMap::new(),
            documents: Vec::new(),
            findings: Vec::new(),
        })
    }

    fn begin(&mut self, run: RunInfo, task: TaskInfo) -> Result<(), String> {
        self.run = Some(run);
        self.task = Some(task);
        self.results.clear();
        self.documents.clear();
        self.findings.clear();
        Ok(())
    }

    fn on_result(&mut self, outcome: CheckResult, role: Role) {
        self.results.insert(outcome.url.clone(), (outcome, role));
    }

    fn on_document(&mut self, document: Document, _outcome: CheckResult) {
        self.documents.push(document);
    }

    fn on_finding(&mut self, finding: Finding) {
        self.findings.push(finding);
    }

    fn finish(&mut self, out: &mut dyn Output) -> Result<(), String> {
        // Keep the one prior version of the index.
        if out.read(&self.file).is_some() {
            out.rename(&self.file, &self.prior)?;
        }
        let prior_exists = out.read(&self.prior).is_some();
        let html = self.render(clock::now(), prior_exists);
        out.write(&self.file, html.as_bytes())
    }
}

spinneret_sdk::export_reporter!(MomspiderIndex);

#[cfg(test)]
mod tests {
    use super::*;
    use spinneret_sdk::testing::{ReporterHarness, fixtures};

    fn run_once(h: &mut ReporterHarness<MomspiderIndex>) {
        let top = "http://a.example/";
        let mut moved = fixtures::result("http://a.example/old", Category::Moved);
        moved.status = Some(200);
        moved.final_url = Some("http://a.example/new".into());
        let mut gone = fixtures::result("http://a.example/gone", Category::Broken);
        gone.error = Some("HTTP 404 Not Found".into());
        let mut sub = fixtures::result("http://a.example/sub.html", Category::Ok);
        sub.last_modified = Some("Sun, 06 Nov 1994 08:49:37 GMT".into());
        let results = vec![
            (fixtures::result(top, Category::Ok), Role::Document),
            (gone, Role::Leaf),
            (moved, Role::Leaf),
            (sub, Role::Document),
        ];
        let docs = vec![
            fixtures::document(
                top,
                "Home & <Away>",
                &[
                    ("http://a.example/sub.html", RefKind::Anchor, "Sub"),
                    ("http://a.example/gone", RefKind::Anchor, "Gone"),
                    ("http://a.example/old", RefKind::Anchor, ""),
                    ("http://a.example/p.gif", RefKind::Image, "a picture"),
                    ("mailto:x@a.example", RefKind::Anchor, "mail"),
                ],
            ),
            fixtures::document(
                "http://a.example/sub.html",
                "Sub",
                &[(top, RefKind::Anchor, "Up")],
            ),
        ];
        let findings = vec![
            fixtures::finding(
                "broken",
                "http://a.example/gone",
                Some(top),
                "broken: HTTP 404 Not Found",
            ),
            fixtures::finding(
                "moved",
                "http://a.example/old",
                Some(top),
                "moved to http://a.example/new (301)",
            ),
        ];
        h.run_task(
            fixtures::run(784_111_777),
            fixtures::task("T", top),
            results,
            docs,
            findings,
        )
        .unwrap();
    }

    #[test]
    fn the_index_has_entries_rows_jumps_and_changes() {
        let mut h = ReporterHarness::<MomspiderIndex>::new("{}").unwrap();
        run_once(&mut h);
        let html = h.output.text("index.html").unwrap();
        assert!(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
        assert!(html.contains("<h1>MOMspider index of T</h1>"));
        assert!(html.contains("<p id=\"prior\">This is the first version of this index.</p>"));
        assert!(html.contains(
            "<article class=\"document\" id=\"d1\">\n<h3><a href=\"http://a.example/\">Home &amp; &lt;Away&gt;</a></h3>"
        ));
        // The jump to the sub document's own entry.
        assert!(html.contains(
            "<tr id=\"d1-1\" class=\"ok\"><td>get</td><td><a href=\"http://a.example/sub.html\">Sub</a></td><td>Sub</td><td>Sun, 06 Nov 1994 08:49:37 GMT</td><td>ok 200</td><td><a href=\"#d2\">entry</a></td></tr>"
        ), "{html}");
        assert!(html.contains(
            "<tr id=\"d1-2\" class=\"broken\"><td>get</td><td><a href=\"http://a.example/gone\">Gone</a></td><td></td><td></td><td>broken 404: HTTP 404 Not Found</td><td></td></tr>"
        ), "{html}");
        assert!(html.contains(
            "<td>moved 200 → <a href=\"http://a.example/new\">http://a.example/new</a></td>"
        ));
        assert!(html.contains("<tr id=\"d1-4\" class=\"unknown\"><td>img</td>"));
        assert!(html.contains("<td>mailto</td><td><a href=\"mailto:x@a.example\">mail</a></td>"));
        assert!(html.contains("<li><a href=\"#changes-broken\">Broken links</a>: 1</li>"));
        assert!(html.contains(
            "<tr id=\"f1\"><td><a href=\"http://a.example/gone\">http://a.example/gone</a></td><td>broken: HTTP 404 Not Found</td><td><a href=\"#d1-2\">Home &amp; &lt;Away&gt;</a></td></tr>"
        ));
        // Each change row is anchored by its finding's place (the mail links there).
        assert!(html.contains("<tr id=\"f2\"><td><a href=\"http://a.example/old\">"));
        assert!(
            html.contains("<h3 id=\"changes-expiring\">Expiring documents (0)</h3>\n<p>None.</p>")
        );
    }

    #[test]
    fn the_second_run_links_the_prior_version() {
        let mut h = ReporterHarness::<MomspiderIndex>::new(r#"{"file": "T.html"}"#).unwrap();
        run_once(&mut h);
        let first = h.output.text("T.html").unwrap();
        run_once(&mut h);
        assert_eq!(h.output.text("T.prior.html").unwrap(), first);
        assert!(h.output.text("T.html").unwrap().contains(
            "<p id=\"prior\"><a rel=\"prev\" href=\"T.prior.html\">The prior version of this index</a></p>"
        ));
    }

    #[test]
    fn settings_are_checked() {
        assert_eq!(
            MomspiderIndex::configure(serde_json::json!({"titel": "x"}))
                .err()
                .unwrap(),
            "momspider-index: unknown setting `titel`; the settings are file, prior, title"
        );
        assert_eq!(
            MomspiderIndex::configure(serde_json::json!({"file": "a.html", "prior": "a.html"}))
                .err()
                .unwrap(),
            "momspider-index: `prior` must differ from `file`"
        );
        assert!(MomspiderIndex::configure(serde_json::json!({"file": 3})).is_err());
    }
}
