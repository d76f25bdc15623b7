//! `momspider-index`: the MOMspider maintenance index of a task (seed 000,
//! section 5.1), one HTML5 page per task:
//!
//! - how and when it was generated (options, start, duration) and a link
//!   to the one prior version of the index;
//! - a summary: counts per category and per interesting change, each
//!   change kind linked to its table;
//! - the problems, right under the summary, so they are in the first
//!   screen of a long index: a compact table of the broken and blocked
//!   links, the moved documents and the expiring ones (at most
//!   [`PROBLEM_ROWS`] of each kind, the rest in their change table), each
//!   with the first page that refers to it;
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
//! The index is written as the host hands the items over: the host tells
//! the counts at `begin`, joins each reference with what the run found at
//! its target, and says where each finding's URL is referred to from, so
//! the reporter keeps only each document's title (for the change tables)
//! and a task of a million URLs fits its memory cap. The findings come
//! after the documents, but the problems go above them: the documents and
//! the change tables are written to two parts of their own as they come,
//! and put after the problems at `finish` (`Output::append_file`). The new
//! index replaces the old when it is complete.
//!
//! Configuration: `file` (default `index.html`), `prior` (default: the
//! file's name with `.prior` before its extension, e.g. `index.prior.html`:
//! the previous index is renamed to it), `title` (default `MOMspider index
//! of TASK`). A task's `index_file` and `index_title` (MOMspider's
//! `IndexFile` and `IndexTitle`) fill in `file` and `title`.

use serde_json::Value;
use spinneret_sdk::html::{escape, push_escaped, push_link, push_number};
use spinneret_sdk::reporter::*;
use spinneret_sdk::{clock, dates};
use std::borrow::Cow;
use std::fmt::Write as _;

/// The heading of a change table: the seed's names for its changes, any
/// other kind's name capitalised.
fn change_heading(kind: &str) -> String {
    match kind {
        "broken" => "Broken links".into(),
        "blocked" => "Blocked links".into(),
        "moved" => "Moved documents".into(),
        "expiring" => "Expiring documents".into(),
        "recently-modified" => "Recently modified".into(),
        "content-changed" => "Content changed".into(),
        "bad-html" => "Bad HTML".into(),
        "broken-fragment" => "Broken fragments".into(),
        other => capitalise(&other.replace('-', " ")),
    }
}

/// The most rows of one kind the problems table shows; the others are in
/// the kind's change table.
pub const PROBLEM_ROWS: u64 = 50;

/// The finding kinds the problems table lists, with the word for each.
const PROBLEM_KINDS: [(&str, &str); 4] = [
    ("broken", "broken"),
    ("blocked", "blocked"),
    ("moved", "moved"),
    ("expiring", "expiring"),
];

/// The reporter's settings and what it keeps of one task while it writes.
pub struct MomspiderIndex {
    file: String,
    prior: String,
    title: Option<String>,
    task: Option<Task>,
}

/// What the index of one task keeps while it is written.
struct Task {
    /// Findings per kind, as `begin` told.
    findings: Vec<(String, u64)>,
    /// The task's documents, as `begin` told: none when its top was not
    /// read (avoided, broken, not HTML), and then nothing was checked.
    documents: u64,
    /// Each document's title (its URL when untitled), by number: the change
    /// tables name the documents that refer to a URL.
    titles: Vec<Box<str>>,
    /// The document being written, and whether its table of references is open.
    open_document: Option<(u32, bool)>,
    /// Where the change tables are: how many of the kinds to list are
    /// written, and whether a kind's table is open.
    changes: Option<(usize, bool)>,
    /// The problems table: whether it is open, and the kind of its last
    /// rows with how many of them it shows.
    problems: (bool, Option<(String, u64)>),
    /// The parts the documents and the change tables are written to: the
    /// task's top document to a part of its own, so that the index lists it
    /// first whatever its place in URL order (the seed's index starts from
    /// the top), the others to the documents' part.
    top_part: String,
    documents_part: String,
    changes_part: String,
    /// The task's top URL, and whether the open document is it.
    top: String,
    open_is_top: bool,
    /// Whether any document but the top was written (the SDK makes no
    /// part of an empty append).
    others: bool,
}

impl Task {
    /// The part a document goes to: the top's, or the documents'.
    fn part_of(&self, is_top: bool) -> &str {
        match is_top {
            true => &self.top_part,
            false => &self.documents_part,
        }
    }

    /// The part of the document open now.
    fn open_part(&self) -> &str {
        self.part_of(self.open_is_top)
    }
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
    /// The status cell of a reference to a target: its category and status,
    /// and a moved URL's final URL or a failure's reason, written into `h`.
    fn write_status(h: &mut String, t: &Target) {
        let Some(category) = t.category else {
            h.push_str("not checked in this run");
            return;
        };
        h.push_str(category_names(category).0);
        if let Some(s) = t.status {
            h.push(' ');
            push_number(h, s);
        }
        match (category, &t.final_url, &t.error) {
            (Category::Moved, Some(f), _) => {
                h.push_str(" → ");
                push_link(h, f, f);
            }
            (
                Category::Broken | Category::Blocked | Category::Avoided | Category::NotChecked,
                _,
                Some(e),
            ) => {
                h.push_str(": ");
                push_escaped(h, e);
            }
            _ => {}
        }
    }

    /// The head of the page, how and when it was generated, and the summary.
    fn head(
        &self,
        run: &RunInfo,
        task: &TaskInfo,
        counts: &TaskCounts,
        now: i64,
        prior_exists: bool,
    ) -> String {
        let title = self
            .title
            .clone()
            .unwrap_or_else(|| format!("MOMspider index of {}", task.name));
        let mut h = String::with_capacity(8 * 1024);
        let _ = write!(
            h,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta name=\"generator\" content=\"spinneret {version}\">\n\
             <title>{t}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n<h1>{t}</h1>\n",
            version = escape(&run.host_version),
            t = escape(&title),
        );
        // How and when.
        let kind = match spinneret_sdk::names::task_kind(run, task).as_str() {
            "web" => "Web",
            "library" => "Library",
            "tree" => "Tree",
            "owner" => "Owner",
            _ => "Site",
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
        let leaves = counts
            .by_role
            .iter()
            .find(|(r, _)| *r == Role::Leaf)
            .map_or(0, |(_, n)| *n);
        h.push_str("<section id=\"summary\">\n<h2>Summary</h2>\n<table>\n<tbody>\n");
        let _ = writeln!(
            h,
            "<tr><th>URLs checked</th><td>{}</td></tr>\n<tr><th>Documents</th><td>{}</td></tr>\n<tr><th>Leaves</th><td>{leaves}</td></tr>",
            counts.urls, counts.documents
        );
        for c in [
            Category::Ok,
            Category::Moved,
            Category::Broken,
            Category::Blocked,
            Category::Avoided,
            Category::NotChecked,
        ] {
            let n = counts
                .by_category
                .iter()
                .find(|(x, _)| *x == c)
                .map_or(0, |(_, n)| *n);
            let name = spinneret_sdk::names::category(c);
            let _ = writeln!(
                h,
                "<tr class=\"{}\"><th>{}</th><td>{n}</td></tr>",
                category_names(c).1,
                capitalise(&name.replace('_', " ")),
            );
        }
        h.push_str("</tbody>\n</table>\n<h3>Interesting changes</h3>\n<ul>\n");
        for (kind, heading) in change_kinds(&counts.findings) {
            let _ = writeln!(
                h,
                "<li><a href=\"#changes-{k}\">{}</a>: {}</li>",
                escape(&heading),
                found(&counts.findings, &kind),
                k = escape(&kind),
            );
        }
        h.push_str("</ul>\n</section>\n");
        h
    }

    /// A document's entry begins: its link, title and dates.
    fn document_head(h: &mut String, part: &TaskDocument) {
        let d = &part.document;
        let o = &part.outcome;
        let _ = write!(
            h,
            "<article class=\"document\" id=\"d{n}\">\n<h3><a href=\"{u}\">{t}</a></h3>\n<dl>\n<dt>URL</dt><dd>{u}</dd>\n",
            n = part.number,
            u = escape(&d.url),
            t = escape(d.title.as_deref().unwrap_or(&d.url)),
        );
        let expires = d.expires.as_deref().or(o.expires.as_deref());
        let owner = d.owner.as_deref().or(o.owner.as_deref());
        for (label, value) in [
            ("Last-Modified", o.last_modified.as_deref()),
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
    }

    /// The rows of a document's (part's) references.
    fn reference_rows(h: &mut String, part: &TaskDocument) {
        let n = part.number;
        for (j, (r, t)) in part
            .document
            .references
            .iter()
            .zip(&part.targets)
            .enumerate()
        {
            let class = t.category.map_or("unknown", |c| category_names(c).1);
            let text = if r.anchor_text.is_empty() {
                &r.target
            } else {
                &r.anchor_text
            };
            // Pieces pushed one by one: this runs once per reference of
            // the task, and is most of what the index costs.
            h.push_str("<tr id=\"d");
            push_number(h, n);
            h.push('-');
            push_number(h, part.first_reference as usize + j + 1);
            h.push_str("\" class=\"");
            h.push_str(class);
            h.push_str("\"><td>");
            push_escaped(h, &reference_type(r));
            h.push_str("</td><td>");
            push_link(h, &r.target, text);
            h.push_str("</td><td>");
            push_escaped(h, t.title.as_deref().unwrap_or(""));
            h.push_str("</td><td>");
            push_escaped(h, t.last_modified.as_deref().unwrap_or(""));
            h.push_str("</td><td>");
            Self::write_status(h, t);
            h.push_str("</td><td>");
            if let Some(k) = t.document {
                h.push_str("<a href=\"#d");
                push_number(h, k);
                h.push_str("\">entry</a>");
            }
            h.push_str("</td></tr>\n");
        }
    }
}

impl Task {
    /// A row of the problems table for `f`, when its kind is one the table
    /// lists and the kind has not yet shown [`PROBLEM_ROWS`]; the table is
    /// opened first if need be, and the kind before it ended.
    fn problem_row(&mut self, h: &mut String, f: &TaskFinding) {
        let Some(&(kind, word)) = PROBLEM_KINDS.iter().find(|(k, _)| *k == f.finding.kind) else {
            return;
        };
        if !self.problems.0 {
            h.push_str(
                "<table class=\"problems\">\n<thead><tr><th>Problem</th><th>URL</th>\
                 <th>What</th><th>Linked from</th></tr></thead>\n<tbody>\n",
            );
            self.problems.0 = true;
        }
        if self.problems.1.as_ref().map(|(k, _)| k.as_str()) != Some(kind) {
            self.more_problems(h);
            self.problems.1 = Some((kind.to_string(), 0));
        }
        let Some((_, shown)) = self.problems.1.as_mut() else {
            return;
        };
        if *shown >= PROBLEM_ROWS {
            return;
        }
        *shown += 1;
        let _ = write!(h, "<tr class=\"{word}\"><td>{word}</td><td>");
        push_link(h, &f.finding.url, &f.finding.url);
        let _ = write!(h, "</td><td>{}</td><td>", escape(&f.finding.message));
        match f.referred_from.first() {
            Some(p) => {
                let title = self
                    .titles
                    .get(p.document as usize - 1)
                    .map_or("", |s| s.as_ref());
                let _ = write!(
                    h,
                    "<a href=\"#d{}-{}\">{}</a>",
                    p.document,
                    p.reference,
                    escape(title)
                );
                if f.referred_from.len() > 1 {
                    let _ = write!(
                        h,
                        " and <a href=\"#f{}\">{} more</a>",
                        f.number,
                        f.referred_from.len() - 1
                    );
                }
            }
            None => {
                let _ = write!(h, "<a href=\"#f{}\">details</a>", f.number);
            }
        }
        h.push_str("</td></tr>\n");
    }

    /// After the last row of a kind: a row saying how many more of it the
    /// change table lists, when the problems table left some out.
    fn more_problems(&self, h: &mut String) {
        if let Some((kind, shown)) = &self.problems.1 {
            let all = found(&self.findings, kind);
            if all > *shown {
                let _ = writeln!(
                    h,
                    "<tr class=\"more\"><td colspan=\"4\">{} more: see <a href=\"#changes-{k}\">{}</a></td></tr>",
                    all - shown,
                    escape(&change_heading(kind)),
                    k = escape(kind),
                );
            }
        }
    }

    /// End the problems section: the table closed, or said to be empty.
    fn end_problems(&mut self, h: &mut String) {
        match self.problems.0 {
            true => {
                self.more_problems(h);
                h.push_str("</tbody>\n</table>\n</section>\n");
            }
            false if self.documents == 0 => h.push_str(
                "<p class=\"unchecked\">Nothing of this task was checked: its top was not read \
                 as a document (the summary says what became of it), so none of its links was \
                 tested.</p>\n</section>\n",
            ),
            false => h.push_str(
                "<p>No broken or blocked links, no moved documents and none expiring.</p>\n</section>\n",
            ),
        }
    }

    /// End the open document's entry, if one is open.
    fn close_document(&mut self, h: &mut String) {
        match self.open_document.take() {
            Some((_, true)) => h.push_str("</tbody>\n</table>\n</article>\n"),
            Some((_, false)) => h.push_str("<p>No references.</p>\n</article>\n"),
            None => {}
        }
    }

    /// Write the change tables up to kind `upto`, whose table is left open
    /// (all the remaining ones when `None`): an open table closed, each kind
    /// before it that has no finding said to have none. (The documents'
    /// part is closed by the caller: this writes the changes' part.)
    fn changes_until(&mut self, h: &mut String, upto: Option<&str>) {
        let (mut done, open) = match self.changes {
            Some(c) => c,
            None => {
                h.push_str("</section>\n<section id=\"changes\">\n<h2>Interesting changes</h2>\n");
                (0, false)
            }
        };
        if open {
            h.push_str("</tbody>\n</table>\n");
            done += 1;
        }
        let kinds = change_kinds(&self.findings);
        let mut opened = false;
        while done < kinds.len() || (upto.is_some() && !opened) {
            let (kind, heading) = match kinds.get(done) {
                Some(k) => k.clone(),
                // A kind `begin` did not count: listed after the others.
                None => {
                    let k = upto.unwrap_or_default();
                    (k.to_string(), capitalise(&k.replace('-', " ")))
                }
            };
            let n = found(&self.findings, &kind);
            let _ = writeln!(
                h,
                "<h3 id=\"changes-{}\">{} ({n})</h3>",
                escape(&kind),
                escape(&heading),
            );
            if upto == Some(kind.as_str()) {
                h.push_str(
                    "<table class=\"changes\">\n<thead><tr><th>URL</th><th>What</th><th>Referred to from</th></tr></thead>\n<tbody>\n",
                );
                opened = true;
                break;
            }
            h.push_str("<p>None.</p>\n");
            done += 1;
        }
        self.changes = Some((done, opened));
    }
}

/// How many findings of `kind` the task has.
fn found(findings: &[(String, u64)], kind: &str) -> u64 {
    findings
        .iter()
        .find(|(k, _)| k == kind)
        .map_or(0, |(_, n)| *n)
}

/// The change kinds to list, with their headings, in the order the host
/// hands findings over: the seed's changes (a table each, found or not),
/// then any other kind found.
fn change_kinds(findings: &[(String, u64)]) -> Vec<(String, String)> {
    let others = findings
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| !FINDING_KIND_ORDER.contains(k));
    FINDING_KIND_ORDER
        .into_iter()
        .chain(others)
        .map(|k| (k.to_string(), change_heading(k)))
        .collect()
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The run's options (a JSON object the host writes) as a person reads
/// them: "every task, a new run; User-Agent: spinneret/0.1". Keys this
/// version does not know are shown as `key: value`.
fn options_text(options: &str) -> String {
    let Ok(Value::Object(m)) = serde_json::from_str::<Value>(options) else {
        return "defaults".to_string();
    };
    let mut parts = Vec::new();
    parts.push(match m.get("task") {
        Some(Value::String(t)) => format!("only the task {t} (--task)"),
        _ => "every task".to_string(),
    });
    parts.push(match m.get("resume") {
        Some(Value::Bool(true)) => "an interrupted run resumed (--resume)".to_string(),
        _ => "a new run".to_string(),
    });
    let mut text = parts.join(", ");
    if let Some(Value::String(agent)) = m.get("user_agent") {
        text.push_str(&format!("; User-Agent: {agent}"));
    }
    for (k, v) in m
        .iter()
        .filter(|(k, _)| !["task", "resume", "user_agent", "task_kinds"].contains(&k.as_str()))
    {
        match v {
            Value::String(s) => text.push_str(&format!("; {k}: {s}")),
            v => text.push_str(&format!("; {k}: {v}")),
        }
    }
    text
}

// Readable on a phone (long URLs wrap, a wide table scrolls within itself
// rather than widening the page) and on a wide screen (lines kept short).
const STYLE: &str =
    "body { font-family: sans-serif; max-width: 72rem; margin: 1rem auto; padding: 0 1rem; }
table { border-collapse: collapse; margin: .5rem 0; display: block; max-width: 100%; overflow-x: auto; }
th, td { border: 1px solid #ccc; padding: .2rem .4rem; text-align: left; vertical-align: top; overflow-wrap: break-word; }
h1, dd, li, p { overflow-wrap: anywhere; }
tr.broken td { background: #fdd; }
tr.moved td { background: #ffd; }
tr.blocked td, tr.avoided td { background: #eee; }
dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0 1rem; }
dt { font-weight: bold; }
article.document { border-top: 2px solid #888; margin-top: 1.5rem; }
tr.expiring td { background: #fed; }
tr.more td { font-style: italic; }
@media (max-width: 40rem) {
  body { margin: .5rem auto; }
  h1 { font-size: 1.3rem; margin: .3rem 0; }
  h2 { font-size: 1.2rem; margin: .8rem 0 .3rem; }
  h3 { font-size: 1rem; margin: .6rem 0 .2rem; }
  #generated dl { display: block; font-size: .9rem; }
  #generated dt { display: inline; }
  #generated dt::after { content: \": \"; }
  #generated dd { display: inline; margin: 0; }
  #generated dd::after { content: \"\"; display: block; }
  #summary tbody { display: flex; flex-wrap: wrap; gap: .2rem; }
  #summary tr { display: flex; }
  #summary ul { padding: 0; }
  #summary li { display: inline-block; margin-right: .8rem; }
}
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
            task: None,
        })
    }

    fn begin(
        &mut self,
        run: RunInfo,
        task: TaskInfo,
        counts: TaskCounts,
        out: &mut dyn Output,
    ) -> Result<(), String> {
        // The index there now becomes the prior version when this one is done.
        let prior_exists = out.exists(&self.file) || out.exists(&self.prior);
        let mut head = self.head(&run, &task, &counts, clock::now(), prior_exists);
        head.push_str("<section id=\"problems\">\n<h2>Problems</h2>\n");
        let t = Task {
            findings: counts.findings,
            documents: counts.documents,
            titles: Vec::with_capacity(counts.documents.min(1 << 20) as usize),
            open_document: None,
            changes: None,
            problems: (false, None),
            top_part: format!("{}.top.part", self.file),
            documents_part: format!("{}.documents.part", self.file),
            changes_part: format!("{}.changes.part", self.file),
            top: task.top.clone(),
            open_is_top: false,
            others: false,
        };
        out.append(&self.file, head.as_bytes())?;
        out.append(
            &t.top_part,
            b"<section id=\"documents\">\n<h2>Documents</h2>\n",
        )?;
        self.task = Some(t);
        Ok(())
    }

    /// The counts come at `begin` and each reference comes with its
    /// target's result: the results themselves are not needed.
    fn wants(&self) -> Wants {
        Wants::DOCUMENTS | Wants::TARGETS | Wants::FINDINGS
    }

    fn on_document(&mut self, part: TaskDocument, out: &mut dyn Output) -> Result<(), String> {
        let t = self
            .task
            .as_mut()
            .ok_or("momspider-index: a document before begin")?;
        let mut h = String::with_capacity(256 * (part.document.references.len() + 4));
        if t.open_document.map(|(n, _)| n) != Some(part.number) {
            t.close_document(&mut h);
            if !h.is_empty() {
                out.append(t.open_part(), h.as_bytes())?;
                h.clear();
            }
            t.open_is_top = part.document.url == t.top;
            t.others |= !t.open_is_top;
            let d = &part.document;
            let title = d.title.as_deref().unwrap_or(&d.url);
            let at = part.number as usize;
            if t.titles.len() < at {
                t.titles.resize(at, Box::from(""));
            }
            t.titles[at - 1] = title.into();
            MomspiderIndex::document_head(&mut h, &part);
            let has_references = !d.references.is_empty();
            if has_references {
                h.push_str(
                    "<table class=\"references\">\n<thead><tr><th>Type</th><th>Reference</th>\
                     <th>Title</th><th>Modified</th><th>Status</th><th>Entry</th></tr></thead>\n<tbody>\n",
                );
            }
            t.open_document = Some((part.number, has_references));
        }
        MomspiderIndex::reference_rows(&mut h, &part);
        if part.last_part {
            t.close_document(&mut h);
        }
        out.append(t.open_part(), h.as_bytes())
    }

    fn on_finding(&mut self, f: TaskFinding, out: &mut dyn Output) -> Result<(), String> {
        let t = self
            .task
            .as_mut()
            .ok_or("momspider-index: a finding before begin")?;
        let mut h = String::new();
        t.close_document(&mut h);
        out.append(t.open_part(), h.as_bytes())?;
        h.clear();
        t.problem_row(&mut h, &f);
        out.append(&self.file, h.as_bytes())?;
        h.clear();
        let kinds = change_kinds(&t.findings);
        let current = t
            .changes
            .filter(|(_, open)| *open)
            .and_then(|(done, _)| kinds.get(done).map(|k| k.0.clone()));
        if current.as_deref() != Some(f.finding.kind.as_str()) {
            t.changes_until(&mut h, Some(&f.finding.kind));
        }
        let mut from = String::new();
        if let Some(k) = f.document {
            let _ = write!(from, "<a href=\"#d{k}\">its entry</a> ");
        }
        for p in &f.referred_from {
            let title = t
                .titles
                .get(p.document as usize - 1)
                .map_or("", |s| s.as_ref());
            let _ = write!(
                from,
                "<a href=\"#d{}-{}\">{}</a> ",
                p.document,
                p.reference,
                escape(title)
            );
        }
        let _ = write!(h, "<tr id=\"f{}\"><td>", f.number);
        push_link(&mut h, &f.finding.url, &f.finding.url);
        let _ = writeln!(
            h,
            "</td><td>{}</td><td>{}</td></tr>",
            escape(&f.finding.message),
            from.trim_end(),
        );
        out.append(&t.changes_part, h.as_bytes())
    }

    fn finish(&mut self, out: &mut dyn Output) -> Result<(), String> {
        let mut t = self
            .task
            .take()
            .ok_or("momspider-index: finish before begin")?;
        // The problems, then the documents, then the change tables.
        let mut h = String::new();
        t.close_document(&mut h);
        out.append(t.open_part(), h.as_bytes())?;
        h.clear();
        t.end_problems(&mut h);
        out.append(&self.file, h.as_bytes())?;
        out.append_file(&self.file, &t.top_part)?;
        if t.others {
            out.append_file(&self.file, &t.documents_part)?;
        }
        h.clear();
        t.changes_until(&mut h, None);
        h.push_str("</section>\n</body>\n</html>\n");
        out.append(&t.changes_part, h.as_bytes())?;
        out.append_file(&self.file, &t.changes_part)?;
        // Keep the one prior version of the index (the new one takes its
        // place when this call returns), its link to its own prior version
        // (which is not kept) turned into one to the current index.
        if out.exists(&self.file) {
            match out
                .read(&self.file)
                .and_then(|old| String::from_utf8(old).ok())
                .and_then(|old| self.as_prior(&old))
            {
                Some(prior) => out.write(&self.prior, prior.as_bytes())?,
                None => out.rename(&self.file, &self.prior)?,
            }
        }
        Ok(())
    }
}

impl MomspiderIndex {
    /// `index` (a version of this index) as the prior version: its
    /// paragraph about its prior version says where the current one is
    /// instead (before, the prior page linked to itself). `None` when it
    /// has no such paragraph.
    fn as_prior(&self, index: &str) -> Option<String> {
        let start = index.find("<p id=\"prior\">")?;
        let end = start + index[start..].find("</p>")? + "</p>".len();
        Some(format!(
            "{}<p id=\"prior\">This is the prior version of this index; the current one is <a rel=\"next\" href=\"{file}\">{file}</a> (older versions are not kept).</p>{}",
            &index[..start],
            &index[end..],
            file = escape(&self.file),
        ))
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

    /// The task's top document comes first in the index, as in the
    /// seed's, wherever it falls in URL order (a Tree task's top
    /// `docs/index.html` after `docs/a.html`), with its number kept.
    #[test]
    fn the_top_document_is_listed_first() {
        let mut h = ReporterHarness::<MomspiderIndex>::new("{}").unwrap();
        let top = "http://a.example/docs/index.html";
        let a = "http://a.example/docs/a.html";
        let z = "http://a.example/docs/z.html";
        h.run_task(
            fixtures::run(784_111_777),
            fixtures::task("T", top),
            vec![
                (fixtures::result(a, Category::Ok), Role::Document),
                (fixtures::result(top, Category::Ok), Role::Document),
                (fixtures::result(z, Category::Ok), Role::Document),
            ],
            vec![
                fixtures::document(a, "A page", &[(top, RefKind::Anchor, "Up")]),
                fixtures::document(top, "The top", &[(a, RefKind::Anchor, "A")]),
                fixtures::document(z, "Z page", &[]),
            ],
            vec![],
        )
        .unwrap();
        let html = h.output.text("index.html").unwrap();
        let at = |title: &str| {
            html.find(&format!(">{title}<"))
                .unwrap_or_else(|| panic!("{title}: {html}"))
        };
        assert!(
            at("The top") < at("A page") && at("A page") < at("Z page"),
            "{html}"
        );
        assert!(
            html.contains("<section id=\"documents\">\n<h2>Documents</h2>\n<article"),
            "{html}"
        );
        // Every part was put in place: no part file is left.
        assert!(h.output.text("index.html.top.part").is_none());
        assert!(h.output.text("index.html.documents.part").is_none());
    }

    /// A page's `javascript:` (or `data:`, `vbscript:`) link is shown as
    /// text: a maintainer who clicks it in the index must not run the
    /// page author's script (before, it was a live link).
    #[test]
    fn a_script_link_in_a_page_is_not_a_link_in_the_index() {
        let mut h = ReporterHarness::<MomspiderIndex>::new("{}").unwrap();
        let top = "http://a.example/";
        let hostile = "JaVaScRiPt:alert(1)";
        h.run_task(
            fixtures::run(784_111_777),
            fixtures::task("T", top),
            vec![(fixtures::result(top, Category::Ok), Role::Document)],
            vec![fixtures::document(
                top,
                "Home",
                &[
                    (hostile, RefKind::Anchor, "click"),
                    (
                        "data:text/html,<script>alert(2)</script>",
                        RefKind::Anchor,
                        "data",
                    ),
                ],
            )],
            vec![fixtures::finding("broken", hostile, Some(top), "broken")],
        )
        .unwrap();
        let html = h.output.text("index.html").unwrap().to_ascii_lowercase();
        assert!(!html.contains("href=\"javascript"), "{html}");
        assert!(!html.contains("href=\"data:"), "{html}");
        assert!(
            html.contains("<td>click</td>"),
            "the anchor text stays: {html}"
        );
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
        // The problems, right under the summary and above the documents,
        // each with the first page that refers to it.
        let problems = html.find("<section id=\"problems\">").unwrap();
        assert!(html.find("<section id=\"summary\">").unwrap() < problems);
        assert!(problems < html.find("<section id=\"documents\">").unwrap());
        assert!(html.contains(
            "<section id=\"problems\">\n<h2>Problems</h2>\n<table class=\"problems\">\n<thead><tr><th>Problem</th><th>URL</th><th>What</th><th>Linked from</th></tr></thead>\n<tbody>\n\
             <tr class=\"broken\"><td>broken</td><td><a href=\"http://a.example/gone\">http://a.example/gone</a></td><td>broken: HTTP 404 Not Found</td><td><a href=\"#d1-2\">Home &amp; &lt;Away&gt;</a></td></tr>\n\
             <tr class=\"moved\"><td>moved</td><td><a href=\"http://a.example/old\">http://a.example/old</a></td><td>moved to http://a.example/new (301)</td><td><a href=\"#d1-3\">Home &amp; &lt;Away&gt;</a></td></tr>\n\
             </tbody>\n</table>\n</section>\n<section id=\"documents\">\n<h2>Documents</h2>\n<article class=\"document\" id=\"d1\">"
        ), "{html}");
        // The documents and change tables, written to parts as they came,
        // are in the index, and no part is left beside it.
        assert!(
            html.find("<section id=\"documents\">").unwrap()
                < html.find("<section id=\"changes\">").unwrap()
        );
        assert_eq!(h.output.files.keys().collect::<Vec<_>>(), ["index.html"]);
        assert!(html.ends_with("</section>\n</body>\n</html>\n"));
    }

    #[test]
    fn the_problems_table_shows_the_first_of_each_kind_and_counts_the_rest() {
        let top = "http://a.example/";
        let mut h = ReporterHarness::<MomspiderIndex>::new("{}").unwrap();
        let gone: Vec<String> = (0..PROBLEM_ROWS + 3)
            .map(|i| format!("http://a.example/gone{i:03}"))
            .collect();
        let refs: Vec<(&str, RefKind, &str)> = gone
            .iter()
            .map(|t| (t.as_str(), RefKind::Anchor, "x"))
            .collect();
        let mut findings: Vec<Finding> = gone
            .iter()
            .map(|u| fixtures::finding("broken", u, Some(top), "broken: HTTP 404"))
            .collect();
        findings.push(fixtures::finding(
            "blocked",
            "http://b.example/",
            None,
            "blocked: HTTP 403",
        ));
        h.run_task(
            fixtures::run(784_111_777),
            fixtures::task("T", top),
            vec![(fixtures::result(top, Category::Ok), Role::Document)],
            vec![fixtures::document(top, "Home", &refs)],
            findings,
        )
        .unwrap();
        let html = h.output.text("index.html").unwrap();
        let problems = &html[html.find("<section id=\"problems\">").unwrap()
            ..html.find("<section id=\"documents\">").unwrap()];
        assert_eq!(
            problems.matches("<tr class=\"broken\">").count() as u64,
            PROBLEM_ROWS
        );
        assert!(problems.contains("gone049"));
        assert!(!problems.contains("gone050"));
        assert!(problems.contains(
            "<tr class=\"more\"><td colspan=\"4\">3 more: see <a href=\"#changes-broken\">Broken links</a></td></tr>\n\
             <tr class=\"blocked\"><td>blocked</td><td><a href=\"http://b.example/\">http://b.example/</a></td><td>blocked: HTTP 403</td><td><a href=\"#f54\">details</a></td></tr>\n</tbody>"
        ), "{problems}");
        // The change table lists every one.
        assert!(html.contains("<h3 id=\"changes-broken\">Broken links (53)</h3>"));
        assert!(html.contains("gone052"));
    }

    #[test]
    fn an_index_without_problems_says_so() {
        let top = "http://a.example/";
        let mut h = ReporterHarness::<MomspiderIndex>::new("{}").unwrap();
        h.run_task(
            fixtures::run(784_111_777),
            fixtures::task("T", top),
            vec![(fixtures::result(top, Category::Ok), Role::Document)],
            vec![fixtures::document(top, "Home", &[])],
            Vec::new(),
        )
        .unwrap();
        let html = h.output.text("index.html").unwrap();
        assert!(html.contains(
            "<section id=\"problems\">\n<h2>Problems</h2>\n<p>No broken or blocked links, no moved documents and none expiring.</p>\n</section>\n<section id=\"documents\">"
        ), "{html}");
    }

    /// A task whose top robots.txt keeps out read nothing: its index says
    /// so (before, "no broken or blocked links", an all-clear).
    #[test]
    fn an_index_of_a_task_whose_top_was_not_read_says_nothing_was_checked() {
        let top = "http://a.example/";
        let mut h = ReporterHarness::<MomspiderIndex>::new("{}").unwrap();
        let mut avoided = fixtures::result(top, Category::Avoided);
        avoided.error = Some("robots.txt disallows it".into());
        h.run_task(
            fixtures::run(784_111_777),
            fixtures::task("T", top),
            vec![(avoided, Role::Document)],
            Vec::new(),
            Vec::new(),
        )
        .unwrap();
        let html = h.output.text("index.html").unwrap();
        assert!(html.contains(
            "<h2>Problems</h2>\n<p class=\"unchecked\">Nothing of this task was checked: its top was not read as a document"
        ), "{html}");
        assert!(!html.contains("No broken or blocked links"), "{html}");
    }

    #[test]
    fn the_second_run_links_the_prior_version() {
        let mut h = ReporterHarness::<MomspiderIndex>::new(r#"{"file": "T.html"}"#).unwrap();
        run_once(&mut h);
        let first = h.output.text("T.html").unwrap();
        run_once(&mut h);
        // The first index, kept, says where the current one is.
        const NOW_PRIOR: &str = "<p id=\"prior\">This is the prior version of this index; the current one is <a rel=\"next\" href=\"T.html\">T.html</a> (older versions are not kept).</p>";
        assert_eq!(
            h.output.text("T.prior.html").unwrap(),
            first.replace(
                "<p id=\"prior\">This is the first version of this index.</p>",
                NOW_PRIOR
            )
        );
        let second = h.output.text("T.html").unwrap();
        assert!(second.contains(
            "<p id=\"prior\"><a rel=\"prev\" href=\"T.prior.html\">The prior version of this index</a></p>"
        ));
        // The prior version does not link to itself: it says where the
        // current one is.
        run_once(&mut h);
        let prior = h.output.text("T.prior.html").unwrap();
        assert!(!prior.contains("href=\"T.prior.html\""), "{prior}");
        assert!(prior.contains(
            "<p id=\"prior\">This is the prior version of this index; the current one is <a rel=\"next\" href=\"T.html\">T.html</a> (older versions are not kept).</p>"
        ), "{prior}");
        assert_eq!(
            prior.replace(
                "<p id=\"prior\">This is the prior version of this index; the current one is <a rel=\"next\" href=\"T.html\">T.html</a> (older versions are not kept).</p>",
                "<p id=\"prior\"><a rel=\"prev\" href=\"T.prior.html\">The prior version of this index</a></p>"
            ),
            second
        );
    }

    #[test]
    fn parts_and_findings_of_other_kinds() {
        let top = "http://a.example/";
        let mut h = ReporterHarness::<MomspiderIndex>::new("{}").unwrap();
        h.part_size = 2;
        let targets: Vec<String> = (1..=5).map(|i| format!("http://a.example/{i}")).collect();
        let refs: Vec<(&str, RefKind, &str)> = targets
            .iter()
            .map(|t| (t.as_str(), RefKind::Anchor, "x"))
            .collect();
        let mut gone = fixtures::result("http://a.example/5", Category::Broken);
        gone.error = Some("HTTP 404 Not Found".into());
        let findings = vec![
            fixtures::finding("plugin-failure", top, None, "a plugin failed"),
            fixtures::finding("broken", "http://a.example/5", Some(top), "broken"),
        ];
        h.run_task(
            fixtures::run(784_111_777),
            fixtures::task("T", top),
            vec![
                (fixtures::result(top, Category::Ok), Role::Document),
                (gone, Role::Leaf),
            ],
            vec![fixtures::document(top, "Home", &refs)],
            findings,
        )
        .unwrap();
        let html = h.output.text("index.html").unwrap();
        // One table, its rows numbered across the parts.
        assert_eq!(html.matches("<table class=\"references\">").count(), 1);
        for m in 1..=5 {
            assert!(html.contains(&format!("<tr id=\"d1-{m}\"")), "{html}");
        }
        assert!(html.contains(
            "<tr id=\"d1-5\" class=\"broken\"><td>get</td><td><a href=\"http://a.example/5\">x</a></td><td></td><td></td><td>broken 404: HTTP 404 Not Found</td><td></td></tr>"
        ));
        // The host's order: broken first (f1), the other kinds after the seed's.
        assert!(html.contains(
            "<tr id=\"f1\"><td><a href=\"http://a.example/5\">http://a.example/5</a></td><td>broken</td><td><a href=\"#d1-5\">Home</a></td></tr>"
        ), "{html}");
        let failure = html
            .find("<h3 id=\"changes-plugin-failure\">Plugin failure (1)</h3>")
            .unwrap();
        assert!(html.find("<h3 id=\"changes-content-changed\">").unwrap() < failure);
        assert!(html.contains("<tr id=\"f2\"><td><a href=\"http://a.example/\">http://a.example/</a></td><td>a plugin failed</td><td><a href=\"#d1\">its entry</a></td></tr>"));
        assert!(html.ends_with("</tbody>\n</table>\n</section>\n</body>\n</html>\n"));
    }

    #[test]
    fn the_runs_options_read_as_words() {
        assert_eq!(
            options_text(r#"{"resume":false,"task":null,"user_agent":"spinneret-example/0.1"}"#),
            "every task, a new run; User-Agent: spinneret-example/0.1"
        );
        assert_eq!(
            options_text(r#"{"resume":true,"task":"Docs","user_agent":"a/1","depth":3}"#),
            "only the task Docs (--task), an interrupted run resumed (--resume); User-Agent: a/1; depth: 3"
        );
        assert_eq!(options_text("not json"), "defaults");
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
