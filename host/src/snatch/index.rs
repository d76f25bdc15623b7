//! The index of a collection (seed 004, Figure 1): every main page
//! retrieved, by category, and within an area of interest by engine in
//! rank order, each with its title, original URL, a link to its local copy
//! and the bytes retrieved for it (the page, its requisites and the pages
//! its links led to), per-category and total bytes; and what changed since
//! the last run: each page new, changed or unchanged (by the digest of its
//! body as retrieved), and the pages gone.

use super::convert::relative;
use spinneret_store::MainPage;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

/// What became of a main page since the last run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// The last run did not have it.
    New,
    /// Its body differs from the last run's.
    Changed,
    /// Its body is the last run's.
    Unchanged,
    /// It could not be retrieved this time.
    NotRetrieved,
}

impl Change {
    /// How the index and the summary say it.
    pub fn as_str(self) -> &'static str {
        match self {
            Change::New => "new",
            Change::Changed => "changed",
            Change::Unchanged => "unchanged",
            Change::NotRetrieved => "not retrieved",
        }
    }
}

/// What changed between `previous` and `current` (main pages, keyed by
/// category and URL): each current page's change, and the previous pages
/// this run does not have.
pub fn changes(current: &[MainPage], previous: &[MainPage]) -> (Vec<Change>, Vec<MainPage>) {
    let before: HashMap<(&str, &str), Option<&str>> = previous
        .iter()
        .map(|p| ((p.category.as_str(), p.url.as_str()), p.digest.as_deref()))
        .collect();
    let now: std::collections::HashSet<(&str, &str)> = current
        .iter()
        .map(|p| (p.category.as_str(), p.url.as_str()))
        .collect();
    let each = current
        .iter()
        .map(|p| {
            match (
                &p.digest,
                before.get(&(p.category.as_str(), p.url.as_str())),
            ) {
                (None, _) => Change::NotRetrieved,
                (Some(_), None) => Change::New,
                (Some(d), Some(Some(old))) if d == old => Change::Unchanged,
                (Some(_), Some(_)) => Change::Changed,
            }
        })
        .collect();
    let gone = previous
        .iter()
        .filter(|p| !now.contains(&(p.category.as_str(), p.url.as_str())))
        .cloned()
        .collect();
    (each, gone)
}

/// Text made safe inside HTML elements and quoted attributes.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A byte count as people read it.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// What an index page shows of one run.
pub struct IndexPage<'a> {
    /// The profile's file name, for the heading.
    pub profile: &'a str,
    /// When the run started (Unix seconds).
    pub started: i64,
    /// Its main pages, in the order asked.
    pub pages: &'a [MainPage],
    /// What became of each since the last run.
    pub changes: &'a [Change],
    /// The last run's pages this one does not have.
    pub gone: &'a [MainPage],
    /// The categories that are areas of interest, with their engines in
    /// the profile's order.
    pub interests: &'a [(String, Vec<String>)],
    /// The run's WARC file, mirror-relative.
    pub warc: Option<&'a str>,
}

impl IndexPage<'_> {
    /// The page, for a file at mirror path `at` (links are relative to it).
    pub fn render(&self, at: &str) -> String {
        let date = super::warc::warc_date(self.started)
            .replace('T', " ")
            .replace('Z', " UTC");
        let mut by_category: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        let mut order: Vec<&str> = Vec::new();
        for (i, p) in self.pages.iter().enumerate() {
            let list = by_category.entry(&p.category).or_default();
            if list.is_empty() {
                order.push(&p.category);
            }
            list.push(i);
        }
        let total: u64 = self.pages.iter().map(|p| p.bytes).sum();
        let count = |c: Change| self.changes.iter().filter(|x| **x == c).count();
        let mut h = String::new();
        let _ = write!(
            h,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>Collection of {date}: {profile}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
             <header><h1>Collection of {date}</h1>\n<p>Profile <code>{profile}</code>: \
             {n} main pages, <span id=\"total\">{total}</span> retrieved.</p>\n\
             <p class=\"changes\">Since the last run: <span id=\"new\">{new} new</span>, \
             <span id=\"changed\">{changed} changed</span>, <span id=\"unchanged\">{unchanged} unchanged</span>, \
             <span id=\"gone\">{gone} gone</span>.</p>\n",
            profile = esc(self.profile),
            n = self.pages.len(),
            total = human_bytes(total),
            new = count(Change::New),
            changed = count(Change::Changed),
            unchanged = count(Change::Unchanged),
            gone = self.gone.len(),
        );
        if let Some(w) = self.warc {
            let _ = writeln!(
                h,
                "<p>The run as a web archive: <a href=\"{}\">{}</a> (opens in pywb or ReplayWeb.page).</p>",
                esc(&relative(at, w)),
                esc(w.rsplit('/').next().unwrap_or(w))
            );
        }
        h.push_str("</header>\n<main>\n");
        for cat in order {
            let list = &by_category[cat];
            let bytes: u64 = list.iter().map(|i| self.pages[*i].bytes).sum();
            let _ = writeln!(
                h,
                "<section class=\"category\">\n<h2>{} <span class=\"bytes\">{}</span></h2>",
                esc(cat),
                human_bytes(bytes)
            );
            match self.interests.iter().find(|(c, _)| c == cat) {
                Some((_, engines)) => {
                    for engine in engines {
                        let mut ranked: Vec<(u32, usize)> = list
                            .iter()
                            .filter_map(|i| {
                                self.pages[*i]
                                    .found_by
                                    .iter()
                                    .find(|(e, _)| e == engine)
                                    .map(|(_, r)| (*r, *i))
                            })
                            .collect();
                        ranked.sort();
                        let _ = writeln!(h, "<h3>{}</h3>", esc(engine));
                        if ranked.is_empty() {
                            h.push_str("<p class=\"none\">No results.</p>\n");
                            continue;
                        }
                        h.push_str("<ol class=\"pages\">\n");
                        for (rank, i) in ranked {
                            self.entry(&mut h, at, i, Some(rank));
                        }
                        h.push_str("</ol>\n");
                    }
                }
                None => {
                    h.push_str("<ul class=\"pages\">\n");
                    for i in list {
                        self.entry(&mut h, at, *i, None);
                    }
                    h.push_str("</ul>\n");
                }
            }
            h.push_str("</section>\n");
        }
        if !self.gone.is_empty() {
            h.push_str("<section class=\"gone\">\n<h2>Gone since the last run</h2>\n<ul>\n");
            for p in self.gone {
                let _ = writeln!(
                    h,
                    "<li>{} <a class=\"url\" href=\"{}\">{}</a> <span class=\"category-name\">({})</span></li>",
                    esc(p.title.as_deref().unwrap_or("(no title)")),
                    esc(&p.url),
                    esc(&p.url),
                    esc(&p.category)
                );
            }
            h.push_str("</ul>\n</section>\n");
        }
        h.push_str("</main>\n</body>\n</html>\n");
        h
    }

    /// One page's line.
    fn entry(&self, h: &mut String, at: &str, i: usize, rank: Option<u32>) {
        let p = &self.pages[i];
        let change = self.changes.get(i).copied().unwrap_or(Change::New);
        let title = esc(p
            .title
            .as_deref()
            .filter(|t| !t.trim().is_empty())
            .unwrap_or(&p.url));
        let value = rank.map(|r| format!(" value=\"{r}\"")).unwrap_or_default();
        let _ = write!(
            h,
            "<li{value} class=\"{}\">",
            change.as_str().replace(' ', "-")
        );
        match &p.path {
            Some(path) => {
                let _ = write!(
                    h,
                    "<a class=\"local\" href=\"{}\">{title}</a>",
                    esc(&relative(at, path))
                );
            }
            None => {
                let _ = write!(h, "<span class=\"title\">{title}</span>");
            }
        }
        let _ = write!(
            h,
            " <a class=\"url\" href=\"{}\">{}</a> <span class=\"bytes\">{}</span> <span class=\"change\">{}</span>",
            esc(&p.url),
            esc(&p.url),
            human_bytes(p.bytes),
            change.as_str()
        );
        if let Some(why) = &p.problem {
            let _ = write!(h, " <span class=\"problem\">{}</span>", esc(why));
        }
        h.push_str("</li>\n");
    }
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:60rem;margin:1rem auto;padding:0 1rem;color:#222}\
h1{font-size:1.5rem}h2{font-size:1.2rem;border-bottom:1px solid #ccc}h3{font-size:1rem;color:#555}\
.bytes{color:#666;font-weight:normal;font-size:.9em}.url{color:#666;font-size:.85em;word-break:break-all}\
.change{font-size:.8em;padding:0 .3em;border-radius:3px;background:#eee}\
li.new .change{background:#d4f4d4}li.changed .change{background:#fde8b0}li.not-retrieved .change{background:#f8d0d0}\
.problem{color:#a00;font-size:.85em}li{margin:.3em 0}";

#[cfg(test)]
mod tests {
    use super::*;

    fn page(cat: &str, url: &str, digest: Option<&str>, found_by: &[(&str, u32)]) -> MainPage {
        MainPage {
            category: cat.into(),
            url: url.into(),
            title: Some(format!("<{url}>")),
            found_by: found_by.iter().map(|(e, r)| (e.to_string(), *r)).collect(),
            path: digest.map(|_| format!("runs/0002/{cat}/x.html")),
            digest: digest.map(str::to_string),
            bytes: 2048,
            problem: None,
        }
    }

    #[test]
    fn changes_are_new_changed_unchanged_and_gone() {
        let before = [
            page("URLs", "https://a/", Some("1"), &[]),
            page("URLs", "https://b/", Some("2"), &[]),
            page("URLs", "https://gone/", Some("3"), &[]),
        ];
        let now = [
            page("URLs", "https://a/", Some("1"), &[]),
            page("URLs", "https://b/", Some("9"), &[]),
            page("URLs", "https://c/", Some("4"), &[]),
            page("URLs", "https://d/", None, &[]),
        ];
        let (each, gone) = changes(&now, &before);
        assert_eq!(
            each,
            [
                Change::Unchanged,
                Change::Changed,
                Change::New,
                Change::NotRetrieved
            ]
        );
        assert_eq!(gone, [before[2].clone()]);
    }

    #[test]
    fn the_index_lists_categories_and_engines_in_rank_order_escaped() {
        let pages = [
            page("URLs", "https://a/?x=1&y=2", Some("1"), &[]),
            page("Rust", "https://r2/", Some("2"), &[("ddg", 2), ("wiki", 1)]),
            page("Rust", "https://r1/", Some("3"), &[("ddg", 1)]),
        ];
        let changes = [Change::New, Change::Changed, Change::Unchanged];
        let interests = [(
            "Rust".to_string(),
            vec!["ddg".to_string(), "wiki".to_string(), "none".to_string()],
        )];
        let html = IndexPage {
            profile: "p.toml",
            started: 0,
            pages: &pages,
            changes: &changes,
            gone: &[],
            interests: &interests,
            warc: Some("runs/0002.warc.gz"),
        }
        .render("index.html");
        assert!(html.contains("<a class=\"local\" href=\"runs/0002/URLs/x.html\">&lt;https://a/?x=1&amp;y=2&gt;</a>"), "{html}");
        let ddg = html.find("<h3>ddg</h3>").unwrap();
        let wiki = html.find("<h3>wiki</h3>").unwrap();
        let r1 = html[ddg..].find("https://r1/").unwrap();
        let r2 = html[ddg..].find("https://r2/").unwrap();
        assert!(r1 < r2, "rank order within an engine");
        assert!(html[wiki..].contains("<li value=\"1\" class=\"changed\">"));
        assert!(html.contains("<h3>none</h3>\n<p class=\"none\">No results.</p>"));
        assert!(html.contains("<span id=\"total\">6.0 KiB</span>"));
        assert!(html.contains("<h2>Rust <span class=\"bytes\">4.0 KiB</span></h2>"));
        assert!(html.contains("href=\"runs/0002.warc.gz\""));
    }
}
