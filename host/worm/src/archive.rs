//! The Worm's archive file (seed 001, section 3.2.1, Table 4), written and
//! read: one line per fact, its first letter its kind.
//!
//! ```text
//! T html title                      a document opened, with its title
//! R url html anchor-text            a reference from html to url
//! I image html anchor-text-or-title an inline image of html
//! C html                            html's references processed to all levels
//! ```
//!
//! A document without a title gets "Zero Length Title", as the Worm wrote.
//! An image's text is its link's anchor text when it sits inside a link,
//! else its alt text, else the title of the document holding it. Form
//! actions are not references a reader follows, and text that is not a
//! URL is no reference: neither is written.
//!
//! The JSON Lines form carries the same facts, one object each, with the
//! document's syntax faults on its `T` record.

use anyhow::Context;
use spinneret_core::document::RefKind;
use spinneret_crawl::parse::html::{MAX_ANCHOR_TEXT, MAX_TITLE};
use spinneret_store::{ArchiveDocument, ArchiveFact, ImportCounts, ImportOptions, Store};
use std::io::Write;

/// The title the Worm gave a document without one.
pub const ZERO_LENGTH_TITLE: &str = "Zero Length Title";

/// How an archive is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The Worm's lines: `T`, `R`, `I`, `C`.
    Wwww,
    /// One JSON object per line (schema spinneret.archive/1).
    Jsonl,
}

/// One line's fields, shared by both forms.
enum Line<'a> {
    T {
        html: &'a str,
        title: &'a str,
        bad: &'a [(String, u32)],
    },
    R {
        url: &'a str,
        html: &'a str,
        text: &'a str,
    },
    I {
        image: &'a str,
        html: &'a str,
        text: &'a str,
    },
    C {
        html: &'a str,
    },
}

/// Why a stored target cannot stand on an archive line, when it cannot:
/// it holds white space (the fields are separated by spaces, and an import
/// refuses such a URL), or it is no absolute URL (a reference a crawl could
/// not read as one, kept as written).
fn unwritable(target: &str) -> Option<LeftOut> {
    if target.contains(char::is_whitespace) {
        Some(LeftOut::WhiteSpace)
    } else if url::Url::parse(target).is_err() {
        Some(LeftOut::NotAUrl)
    } else {
        None
    }
}

/// Why a reference was left out of an archive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LeftOut {
    /// Its URL holds white space.
    WhiteSpace,
    /// Its target is no absolute URL.
    NotAUrl,
}

impl LeftOut {
    /// What is said of `n` references left out for this reason.
    pub fn said(self, n: usize) -> String {
        let (one, many) = match self {
            LeftOut::WhiteSpace => ("its URL holds white space", "their URLs hold white space"),
            LeftOut::NotAUrl => (
                "its target is no absolute URL",
                "their targets are no absolute URLs",
            ),
        };
        match n {
            1 => format!("1 reference left out of the archive: {one}"),
            n => format!("{n} references left out of the archive: {many}"),
        }
    }
}

/// What an archive holds: how many lines, and the references it leaves
/// out (a reason, the target, the document referring to it), in the order
/// met.
#[derive(Debug, Default)]
pub struct Written {
    /// Lines written.
    pub lines: u64,
    /// References left out.
    pub left_out: Vec<(LeftOut, String, String)>,
}

impl Written {
    /// One line per reason for the references left out: how many, why,
    /// and the first of them (`reason: target in document`).
    pub fn left_out_lines(&self) -> Vec<String> {
        let mut reasons: Vec<LeftOut> = self.left_out.iter().map(|(r, _, _)| *r).collect();
        reasons.sort();
        reasons.dedup();
        reasons
            .into_iter()
            .map(|reason| {
                let of: Vec<&(LeftOut, String, String)> = self
                    .left_out
                    .iter()
                    .filter(|(r, _, _)| *r == reason)
                    .collect();
                let (_, target, html) = of[0];
                let first = match of.len() {
                    1 => "",
                    _ => "the first: ",
                };
                format!("{} ({first}{target:?} in {html})", reason.said(of.len()))
            })
            .collect()
    }
}

/// Text on one line: line breaks become spaces.
fn one_line(s: &str) -> std::borrow::Cow<'_, str> {
    match s.contains(['\n', '\r']) {
        true => s.replace(['\n', '\r'], " ").into(),
        false => s.into(),
    }
}

/// The lines of one document, in order: `T`, its references and images in
/// document order, and `C` when it is completed. `left_out` hears of the
/// references that cannot stand on a line.
fn lines<'a>(
    d: &'a ArchiveDocument,
    left_out: &mut Vec<(LeftOut, String, String)>,
) -> Vec<Line<'a>> {
    let title = d
        .title
        .as_deref()
        .filter(|t| !t.trim().is_empty())
        .unwrap_or(ZERO_LENGTH_TITLE);
    let mut out = vec![Line::T {
        html: &d.url,
        title,
        bad: &d.bad_html,
    }];
    for (target, kind, text) in &d.links {
        if *kind == RefKind::Form {
            continue;
        }
        if let Some(why) = unwritable(target) {
            left_out.push((why, target.clone(), d.url.clone()));
            continue;
        }
        out.push(match kind {
            RefKind::Image => Line::I {
                image: target,
                html: &d.url,
                text: if text.is_empty() { title } else { text },
            },
            _ => Line::R {
                url: target,
                html: &d.url,
                text,
            },
        });
    }
    if d.completed {
        out.push(Line::C { html: &d.url });
    }
    out
}

/// Write `docs` to `out` in `format`: how many lines, and the references
/// left out (neither form holds a URL with white space: an import refuses
/// it).
pub fn write(
    docs: &[ArchiveDocument],
    format: Format,
    out: &mut dyn Write,
) -> anyhow::Result<Written> {
    let mut written = Written::default();
    for d in docs {
        for line in lines(d, &mut written.left_out) {
            match format {
                Format::Wwww => write_wwww(&line, out)?,
                Format::Jsonl => write_jsonl(&line, out)?,
            }
            written.lines += 1;
        }
    }
    out.flush()?;
    Ok(written)
}

fn write_wwww(line: &Line<'_>, out: &mut dyn Write) -> std::io::Result<()> {
    let (head, text) = match line {
        Line::T { html, title, .. } => (format!("T {html}"), *title),
        Line::R { url, html, text } => (format!("R {url} {html}"), *text),
        Line::I { image, html, text } => (format!("I {image} {html}"), *text),
        Line::C { html } => (format!("C {html}"), ""),
    };
    match text.is_empty() {
        true => writeln!(out, "{head}"),
        false => writeln!(out, "{head} {}", one_line(text)),
    }
}

fn write_jsonl(line: &Line<'_>, out: &mut dyn Write) -> std::io::Result<()> {
    let v = match line {
        Line::T { html, title, bad } => {
            let mut o = serde_json::json!({"type": "T", "html": html, "title": title});
            if !bad.is_empty() {
                let faults: serde_json::Map<String, serde_json::Value> =
                    bad.iter().map(|(k, n)| (k.clone(), (*n).into())).collect();
                o["bad_html"] = faults.into();
                o["bad_html_order"] = bad.iter().map(|(k, _)| k.as_str()).collect();
            }
            o
        }
        Line::R { url, html, text } => {
            serde_json::json!({"type": "R", "url": url, "html": html, "text": text})
        }
        Line::I { image, html, text } => {
            serde_json::json!({"type": "I", "image": image, "html": html, "text": text})
        }
        Line::C { html } => serde_json::json!({"type": "C", "html": html}),
    };
    writeln!(out, "{v}")
}

/// A line that is not an archive line.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct ArchiveError {
    /// The file.
    pub file: String,
    /// The line (1-based).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// The longest line an archive may have: a title is at most 512
/// characters and an anchor text 256 (`MAX_TITLE`, `MAX_ANCHOR_TEXT`), so
/// a line of a megabyte is mostly URL, far longer than any a crawl meets.
/// A longer line is refused at once (`/dev/zero` is one endless line), so
/// that a line is all of the archive ever held in memory.
pub const MAX_LINE: usize = 1 << 20;

/// Hand each fact of the archive `input` to `each`, with its line number,
/// reading one line at a time (at most [`MAX_LINE`] bytes); the form (Worm
/// lines or JSON Lines) is told from the first line that is not blank.
/// The first bad line stops the reading with an [`ArchiveError`] naming
/// `file` and the line.
fn for_each_fact(
    input: &mut dyn std::io::BufRead,
    file: &str,
    each: &mut dyn FnMut(usize, Fact) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    use std::io::{BufRead, Read};
    let mut bytes = Vec::new();
    let mut json = None;
    let mut n = 0;
    loop {
        bytes.clear();
        let read = Read::take(&mut *input, MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut bytes)
            .with_context(|| format!("cannot read the archive {file}"))?;
        if read == 0 {
            return Ok(());
        }
        n += 1;
        let err = |message: String| ArchiveError {
            file: file.to_string(),
            line: n,
            message,
        };
        if bytes.last() == Some(&b'\n') {
            bytes.pop();
        } else if bytes.len() > MAX_LINE {
            return Err(err(format!(
                "the line is longer than {} MiB; an archive line is its kind, one or two URLs and a title (at most {MAX_TITLE} characters) or an anchor text ({MAX_ANCHOR_TEXT})",
                MAX_LINE >> 20
            ))
            .into());
        }
        let text = String::from_utf8_lossy(&bytes);
        let line = text.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let json = *json.get_or_insert_with(|| line.trim_start().starts_with('{'));
        let fact = match json {
            true => parse_jsonl(line).map_err(err)?,
            false => parse_wwww(line).map_err(err)?,
        };
        each(n, fact)?;
    }
}

/// The documents of an archive's text, in the order they first appear,
/// each with all of its lines' facts (held in memory: [`import_file`]
/// imports a file of any size).
pub fn read(text: &str, file: &str) -> Result<Vec<ArchiveDocument>, ArchiveError> {
    let mut docs: Vec<ArchiveDocument> = Vec::new();
    let mut at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let read = for_each_fact(&mut text.as_bytes(), file, &mut |_, fact| {
        let (html, fact) = fact.into_store();
        let place = *at.entry(html.clone()).or_insert_with(|| {
            docs.push(ArchiveDocument {
                url: html,
                ..Default::default()
            });
            docs.len() - 1
        });
        let d = &mut docs[place];
        match fact {
            ArchiveFact::Title { title, bad_html } => {
                d.title = title;
                d.bad_html = bad_html;
            }
            ArchiveFact::Link { target, kind, text } => d.links.push((target, kind, text)),
            ArchiveFact::Completed => d.completed = true,
        }
        Ok(())
    });
    // Text is read without an error of its own, and `each` makes none.
    read.map_err(|e| {
        e.downcast::<ArchiveError>()
            .unwrap_or_else(|e| ArchiveError {
                file: file.to_string(),
                line: 0,
                message: format!("{e:#}"),
            })
    })?;
    Ok(docs)
}

/// One fact read from a line.
enum Fact {
    T {
        html: String,
        title: String,
        bad: Vec<(String, u32)>,
    },
    R {
        url: String,
        html: String,
        text: String,
    },
    I {
        image: String,
        html: String,
        text: String,
    },
    C {
        html: String,
    },
}

impl Fact {
    /// The document it is about, and what it says of it as the store
    /// takes it (the Worm's `Zero Length Title` is no title).
    fn into_store(self) -> (String, ArchiveFact) {
        match self {
            Fact::T { html, title, bad } => (
                html,
                ArchiveFact::Title {
                    title: (title != ZERO_LENGTH_TITLE).then_some(title),
                    bad_html: bad,
                },
            ),
            Fact::R { url, html, text } => (
                html,
                ArchiveFact::Link {
                    target: url,
                    kind: RefKind::Anchor,
                    text,
                },
            ),
            Fact::I { image, html, text } => (
                html,
                ArchiveFact::Link {
                    target: image,
                    kind: RefKind::Image,
                    text,
                },
            ),
            Fact::C { html } => (html, ArchiveFact::Completed),
        }
    }
}

/// A URL field: absolute, with no white space or control character (the
/// URL parser would quietly drop them, and a line break in a stored URL
/// would be a line of its own in an export), kept as the crawl keeps URLs:
/// in the parser's form (`HTTP://A.example:80/a/../b` is
/// `http://a.example/b`), so that it names the same document as a crawl's.
fn url_field(s: Option<&str>, what: &str) -> Result<String, String> {
    let s = s
        .filter(|s| !s.is_empty())
        .ok_or(format!("the {what} URL is missing"))?;
    if let Some(c) = s.chars().find(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "the {what} URL `{}` holds {}; a URL has none (write a space as %20)",
            s.escape_debug(),
            match c {
                ' ' => "a space".to_string(),
                c => format!("the character {:?}", c),
            }
        ));
    }
    url::Url::parse(s)
        .map(String::from)
        .map_err(|e| format!("the {what} `{s}` is not an absolute URL ({e})"))
}

/// A title or an anchor text, held to what a crawl keeps of one.
fn text_field(s: &str, max: usize) -> String {
    spinneret_crawl::parse::html::truncate_chars(s.to_string(), max)
}

fn parse_wwww(line: &str) -> Result<Fact, String> {
    let (kind, rest) = line.split_once(' ').unwrap_or((line, ""));
    let what = "an archive line starts with T, R, I or C and a space";
    match kind {
        "T" => {
            let (html, title) = rest.split_once(' ').unwrap_or((rest, ""));
            Ok(Fact::T {
                html: url_field(Some(html), "document")?,
                title: text_field(title, MAX_TITLE),
                bad: Vec::new(),
            })
        }
        "R" | "I" => {
            let mut f = rest.splitn(3, ' ');
            let target = url_field(f.next(), if kind == "R" { "referenced" } else { "image" })?;
            let html = url_field(f.next(), "document")?;
            let text = text_field(f.next().unwrap_or(""), MAX_ANCHOR_TEXT);
            Ok(match kind {
                "R" => Fact::R {
                    url: target,
                    html,
                    text,
                },
                _ => Fact::I {
                    image: target,
                    html,
                    text,
                },
            })
        }
        "C" => Ok(Fact::C {
            html: url_field(Some(rest.trim()), "document")?,
        }),
        other => Err(format!(
            "`{}` is not a line kind; {what}",
            other.chars().take(20).collect::<String>()
        )),
    }
}

fn parse_jsonl(line: &str) -> Result<Fact, String> {
    let v: serde_json::Value =
        serde_json::from_str(line).map_err(|e| format!("not a JSON object ({e})"))?;
    if !v.is_object() {
        return Err("not a JSON object; each line is one record, {\"type\": …}".into());
    }
    // A field of another type would be read as missing, without a word.
    for k in ["type", "html", "url", "image", "title", "text"] {
        let kind = match v.get(k) {
            None | Some(serde_json::Value::String(_) | serde_json::Value::Null) => continue,
            Some(serde_json::Value::Bool(_)) => "true or false",
            Some(serde_json::Value::Number(_)) => "a number",
            Some(serde_json::Value::Array(_)) => "a list",
            Some(serde_json::Value::Object(_)) => "an object",
        };
        return Err(format!("`{k}` is {kind}; it must be a string"));
    }
    let field = |k: &str| v.get(k).and_then(|x| x.as_str());
    let text = |k: &str, max: usize| text_field(field(k).unwrap_or(""), max);
    match field("type") {
        Some("T") => {
            let order: Vec<&str> = v
                .get("bad_html_order")
                .and_then(|o| o.as_array())
                .map(|a| a.iter().filter_map(|k| k.as_str()).collect())
                .unwrap_or_default();
            let counts = v.get("bad_html").and_then(|b| b.as_object());
            let bad = order
                .iter()
                .filter_map(|k| {
                    let n = counts?.get(*k)?.as_u64()?;
                    Some((k.to_string(), n.min(u64::from(u32::MAX)) as u32))
                })
                .collect();
            Ok(Fact::T {
                html: url_field(field("html"), "document")?,
                title: text("title", MAX_TITLE),
                bad,
            })
        }
        Some("R") => Ok(Fact::R {
            url: url_field(field("url"), "referenced")?,
            html: url_field(field("html"), "document")?,
            text: text("text", MAX_ANCHOR_TEXT),
        }),
        Some("I") => Ok(Fact::I {
            image: url_field(field("image"), "image")?,
            html: url_field(field("html"), "document")?,
            text: text("text", MAX_ANCHOR_TEXT),
        }),
        Some("C") => Ok(Fact::C {
            html: url_field(field("html"), "document")?,
        }),
        _ => Err("`type` must be \"T\", \"R\", \"I\" or \"C\"".into()),
    }
}

/// Import the archive file at `path` into `store` ([`import`]). Its size
/// is not bounded: it is read a line at a time and written a batch at a
/// time, so memory is bounded whatever the file (a pipe's or a device's
/// too), and the store's disk is what bounds an archive.
pub fn import_file(
    path: &std::path::Path,
    store: &mut Store,
    completed: Option<&mut std::collections::HashSet<String>>,
) -> anyhow::Result<ImportCounts> {
    let cannot = || format!("cannot read the archive {}", path.display());
    let file = std::fs::File::open(path).with_context(cannot)?;
    let mut input = std::io::BufReader::with_capacity(64 << 10, file);
    import(
        &mut input,
        &path.display().to_string(),
        store,
        ImportOptions::default(),
        completed,
    )
}

/// Import the archive `input` (named `file` in messages) into `store`, in
/// one transaction written a batch at a time as it is read: the first bad
/// line stops it, naming `file` and the line, and nothing is kept. A
/// document's lines need not be together (each ends up with all of its
/// lines' facts, in their order); a document the store held before keeps
/// what it has. `completed` gets the documents on `C` lines. What it did.
pub fn import(
    input: &mut dyn std::io::BufRead,
    file: &str,
    store: &mut Store,
    options: ImportOptions,
    mut completed: Option<&mut std::collections::HashSet<String>>,
) -> anyhow::Result<ImportCounts> {
    let mut import = store.begin_import(options)?;
    for_each_fact(input, file, &mut |line, fact| {
        let (html, fact) = fact.into_store();
        if let (ArchiveFact::Completed, Some(c)) = (&fact, completed.as_deref_mut()) {
            c.insert(html.clone());
        }
        import.add(&html, fact).map_err(|e| match e {
            spinneret_store::ImportError::Store(e) => anyhow::Error::from(e),
            e => ArchiveError {
                file: file.to_string(),
                line,
                message: e.to_string(),
            }
            .into(),
        })
    })?;
    Ok(import.commit()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> ArchiveDocument {
        ArchiveDocument {
            url: "http://mach/home.html".into(),
            title: None,
            links: vec![
                (
                    "http://mach/photo.gif".into(),
                    RefKind::Anchor,
                    "McBryan's Photo".into(),
                ),
                ("http://mach/logo.gif".into(), RefKind::Image, String::new()),
                ("http://mach/search".into(), RefKind::Form, String::new()),
                ("not a url".into(), RefKind::Anchor, "bad".into()),
                (
                    "http//mach/x.html".into(),
                    RefKind::Anchor,
                    "no scheme".into(),
                ),
                ("http://a b.example/".into(), RefKind::Image, String::new()),
                (
                    "http://mach/next.html".into(),
                    RefKind::Anchor,
                    String::new(),
                ),
            ],
            completed: true,
            bad_html: vec![("no-title".into(), 1)],
        }
    }

    #[test]
    fn the_seeds_table_4_lines() {
        let mut out = Vec::new();
        let written = write(&[doc()], Format::Wwww, &mut out).unwrap();
        // What no line can hold is counted and said, by reason.
        assert_eq!(written.lines, 5);
        assert_eq!(
            written.left_out_lines(),
            [
                "2 references left out of the archive: their URLs hold white space (the first: \"not a url\" in http://mach/home.html)",
                "1 reference left out of the archive: its target is no absolute URL (\"http//mach/x.html\" in http://mach/home.html)"
            ]
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "T http://mach/home.html Zero Length Title\n\
             R http://mach/photo.gif http://mach/home.html McBryan's Photo\n\
             I http://mach/logo.gif http://mach/home.html Zero Length Title\n\
             R http://mach/next.html http://mach/home.html\n\
             C http://mach/home.html\n"
        );
    }

    #[test]
    fn both_forms_read_back_what_they_wrote() {
        for format in [Format::Wwww, Format::Jsonl] {
            let mut first = Vec::new();
            write(&[doc()], format, &mut first).unwrap();
            let back = read(std::str::from_utf8(&first).unwrap(), "a").unwrap();
            let mut second = Vec::new();
            write(&back, format, &mut second).unwrap();
            assert_eq!(first, second, "{format:?}");
        }
    }

    #[test]
    fn bad_lines_are_located() {
        let e = read("T http://a/ A\nX http://a/\n", "old.arc").unwrap_err();
        assert_eq!(
            e.to_string(),
            "old.arc:2: `X` is not a line kind; an archive line starts with T, R, I or C and a space"
        );
        let e = read("R http://a/x relative.html text\n", "a").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("a:1: the document `relative.html` is not an absolute URL"),
            "{e}"
        );
    }

    /// `text` imported into a new store with `options`: what it did, and
    /// the store's archive.
    fn imported(text: &str, options: ImportOptions) -> (ImportCounts, Vec<ArchiveDocument>) {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        let counts = import(&mut text.as_bytes(), "a", &mut store, options, None).unwrap();
        (counts, store.archive().unwrap())
    }

    /// `text` as the import read it whole before: every document's facts
    /// gathered (`read`), written in the order the documents first appear,
    /// one after the other.
    fn gathered(text: &str) -> Vec<ArchiveDocument> {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        let mut import = store.begin_import(ImportOptions::default()).unwrap();
        for d in read(text, "a").unwrap() {
            let title = ArchiveFact::Title {
                title: d.title,
                bad_html: d.bad_html,
            };
            import.add(&d.url, title).unwrap();
            for (target, kind, text) in d.links {
                let link = ArchiveFact::Link { target, kind, text };
                import.add(&d.url, link).unwrap();
            }
            if d.completed {
                import.add(&d.url, ArchiveFact::Completed).unwrap();
            }
        }
        assert_eq!(import.commit().unwrap().batches, 1);
        store.archive().unwrap()
    }

    /// An archive whose documents' lines are spread (a document's `T`
    /// line, other documents, then more of its references, a second `T`)
    /// imports, in batches of any size, as its lines gathered by document.
    #[test]
    fn spread_lines_import_as_if_gathered_in_batches_of_any_size() {
        let wwww = "R http://x/1 http://a/ one\n\
                    T http://b/ B\n\
                    T http://a/ A\n\
                    R http://x/2 http://b/ b's\n\
                    I http://x/i http://a/ img\n\
                    C http://c/\n\
                    R http://x/3 http://a/ three\n\
                    T http://b/ B again\n\
                    C http://a/\n\
                    R http://b/ http://c/ back\n";
        // The same lines, in the same order, as JSON Lines.
        let jsonl: String = wwww
            .lines()
            .map(|line| {
                let v = match parse_wwww(line).ok().unwrap() {
                    Fact::T { html, title, .. } => {
                        serde_json::json!({"type": "T", "html": html, "title": title})
                    }
                    Fact::R { url, html, text } => {
                        serde_json::json!({"type": "R", "url": url, "html": html, "text": text})
                    }
                    Fact::I { image, html, text } => {
                        serde_json::json!({"type": "I", "image": image, "html": html, "text": text})
                    }
                    Fact::C { html } => serde_json::json!({"type": "C", "html": html}),
                };
                format!("{v}\n")
            })
            .collect();
        let expected = gathered(wwww);
        assert_eq!(expected[0].links.len(), 3, "{expected:?}");
        for text in [wwww, jsonl.as_str()] {
            for batch in 1..=4 {
                let options = ImportOptions {
                    batch_documents: batch,
                    ..ImportOptions::default()
                };
                let (counts, archive) = imported(text, options);
                assert_eq!(archive, expected, "batches of {batch}");
                assert_eq!((counts.documents, counts.added), (3, 3));
            }
        }
    }

    /// A long archive is written in batches (here of 64 documents), and
    /// ends up as it would read whole.
    #[test]
    fn a_long_archive_is_imported_in_batches() {
        let mut text = String::new();
        for d in 0..1000 {
            text.push_str(&format!("T http://a/{d} Title {d}\n"));
            for r in 0..3 {
                text.push_str(&format!("R http://b/{} http://a/{d} to {r}\n", d * 3 + r));
            }
            text.push_str(&format!("C http://a/{d}\n"));
        }
        let options = ImportOptions {
            batch_documents: 64,
            ..ImportOptions::default()
        };
        let (counts, archive) = imported(&text, options);
        assert_eq!((counts.documents, counts.added), (1000, 1000));
        assert!(counts.batches >= 1000 / 64, "{counts:?}");
        assert_eq!(archive, gathered(&text));
        // And by bytes held: about 4 KiB a batch.
        let options = ImportOptions {
            batch_bytes: 4096,
            ..ImportOptions::default()
        };
        let (counts, by_bytes) = imported(&text, options);
        assert!(counts.batches > 50, "{counts:?}");
        assert_eq!(by_bytes, archive);
    }

    /// A line longer than [`MAX_LINE`] is refused at its line, having read
    /// no more of it than the bound: an endless line of NULs (`/dev/zero`)
    /// is refused at line 1 at once.
    #[test]
    fn a_line_past_the_bound_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        let mut zeros = std::io::BufReader::new(std::io::repeat(0));
        let options = ImportOptions::default();
        let e = import(&mut zeros, "/dev/zero", &mut store, options, None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/dev/zero:1: the line is longer than 1 MiB; an archive line is its kind, one or two URLs and a title (at most 512 characters) or an anchor text (256)"
        );
        // A line of exactly the bound is read; one byte more is not.
        let head = "T http://a/ ";
        let longest = format!("C http://a/\n{head}{}\n", "x".repeat(MAX_LINE - head.len()));
        let (counts, archive) = imported(&longest, options);
        assert_eq!(counts.documents, 1);
        assert_eq!(archive[0].title.as_deref().map(str::len), Some(MAX_TITLE));
        let longer = format!(
            "C http://a/\n{head}{}\n",
            "x".repeat(MAX_LINE - head.len() + 1)
        );
        let e = import(&mut longer.as_bytes(), "a", &mut store, options, None).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("a:2: the line is longer than 1 MiB"),
            "{e}"
        );
        assert_eq!(store.document_count().unwrap(), 0);
    }
}
