//! `websnatcher-index`: the index of a WebSnatcher collection (seed 004,
//! Figure 1), one HTML5 page per run:
//!
//! - when the run was, the profile, how many main pages and the bytes
//!   retrieved, what changed since the last run (new, changed, unchanged,
//!   gone), and a link to the run's web archive;
//! - every main page by category (`URLs`, `Bookmarks/…`, each area of
//!   interest), with the category's bytes; within an interest, engine by
//!   engine in rank order (an engine that found nothing says so), each page
//!   with its title linked to the local copy, its original URL, the bytes
//!   retrieved for it (the page, its requisites and the pages its links led
//!   to), what became of it, what the change detectors said and why it
//!   could not be retrieved;
//! - the pages of the last run this one does not have.
//!
//! The host asks for the same index at two places (the mirror's
//! `index.html` and the run's own `runs/NNNN/index.html`); each copy's
//! links are relative to where it is written, so both work from a file
//! manager with no network.
//!
//! Configuration: `title` (default `Collection`): the heading's first word,
//! followed by the run's date.

use serde_json::Value;
use spinneret_sdk::collection_index::*;
use spinneret_sdk::dates;
use spinneret_sdk::html::Escaped;
use spinneret_sdk::urls::relative_path;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The index writer.
pub struct WebSnatcherIndex {
    title: String,
}

impl CollectionIndex for WebSnatcherIndex {
    fn configure(config: Value) -> Result<Self, String> {
        spinneret_sdk::settings::check_keys("websnatcher-index", &config, &["title"])?;
        let title = match config.get("title") {
            None => "Collection".to_string(),
            Some(Value::String(t)) if !t.trim().is_empty() => t.trim().to_string(),
            Some(v) => {
                return Err(format!(
                    "websnatcher-index: `title` must be a non-empty string, not {v}"
                ));
            }
        };
        Ok(WebSnatcherIndex { title })
    }

    fn write_index(
        &mut self,
        run: &Collection,
        pages: &[MainPage],
        gone: &[GonePage],
        paths: &[String],
        out: &mut dyn Output,
    ) -> Result<(), String> {
        for at in paths {
            let page = render(&self.title, run, pages, gone, at);
            out.append(at, page.as_bytes())?;
        }
        Ok(())
    }
}

spinneret_sdk::export_collection_index!(WebSnatcherIndex);

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

/// The index page for a file at mirror path `at`.
fn render(
    title: &str,
    run: &Collection,
    pages: &[MainPage],
    gone: &[GonePage],
    at: &str,
) -> String {
    let date = dates::format(run.started_at);
    let mut by_category: BTreeMap<&str, Vec<&MainPage>> = BTreeMap::new();
    let mut order: Vec<&str> = Vec::new();
    for p in pages {
        let list = by_category.entry(&p.category).or_default();
        if list.is_empty() {
            order.push(&p.category);
        }
        list.push(p);
    }
    let total: u64 = pages.iter().map(|p| p.bytes).sum();
    let count = |c: Change| pages.iter().filter(|p| p.change == c).count();
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title} of {date}: {profile}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <header><h1>{title} of {date}</h1>\n<p>Profile <code>{profile}</code>: \
         {n} main pages, <span id=\"total\">{total}</span> retrieved.</p>\n\
         <p class=\"changes\">Since the last run: <span id=\"new\">{new} new</span>, \
         <span id=\"changed\">{changed} changed</span>, <span id=\"unchanged\">{unchanged} unchanged</span>, \
         <span id=\"gone\">{gone} gone</span>.</p>\n",
        title = Escaped(title),
        profile = Escaped(&run.profile),
        n = pages.len(),
        total = human_bytes(total),
        new = count(Change::New),
        changed = count(Change::Changed),
        unchanged = count(Change::Unchanged),
        gone = gone.len(),
    );
    if let Some(w) = &run.warc {
        let _ = writeln!(
            h,
            "<p>The run as a web archive: <a href=\"{}\">{}</a> (opens in pywb or ReplayWeb.page).</p>",
            Escaped(&relative_path(at, w)),
            Escaped(w.rsplit('/').next().unwrap_or(w))
        );
    }
    h.push_str("</header>\n<main>\n");
    for cat in order {
        let list = &by_category[cat];
        let bytes: u64 = list.iter().map(|p| p.bytes).sum();
        let _ = writeln!(
            h,
            "<section class=\"category\">\n<h2>{} <span class=\"bytes\">{}</span></h2>",
            Escaped(cat),
            human_bytes(bytes)
        );
        match run.interests.iter().find(|i| i.category == cat) {
            Some(interest) => {
                for engine in &interest.engines {
                    let mut ranked: Vec<(u32, &MainPage)> = list
                        .iter()
                        .filter_map(|p| {
                            p.found_by
                                .iter()
                                .find(|f| &f.engine == engine)
                                .map(|f| (f.rank, *p))
                        })
                        .collect();
                    ranked.sort_by_key(|(rank, _)| *rank);
                    let _ = writeln!(h, "<h3>{}</h3>", Escaped(engine));
                    if ranked.is_empty() {
                        h.push_str("<p class=\"none\">No results.</p>\n");
                        continue;
                    }
                    h.push_str("<ol class=\"pages\">\n");
                    for (rank, p) in ranked {
                        entry(&mut h, at, p, Some(rank));
                    }
                    h.push_str("</ol>\n");
                }
            }
            None => {
                h.push_str("<ul class=\"pages\">\n");
                for p in list {
                    entry(&mut h, at, p, None);
                }
                h.push_str("</ul>\n");
            }
        }
        h.push_str("</section>\n");
    }
    if !gone.is_empty() {
        h.push_str("<section class=\"gone\">\n<h2>Gone since the last run</h2>\n<ul>\n");
        for p in gone {
            let _ = writeln!(
                h,
                "<li>{} <a class=\"url\" href=\"{}\">{}</a> <span class=\"category-name\">({})</span></li>",
                Escaped(p.title.as_deref().unwrap_or("(no title)")),
                Escaped(&p.url),
                Escaped(&p.url),
                Escaped(&p.category)
            );
        }
        h.push_str("</ul>\n</section>\n");
    }
    h.push_str("</main>\n</body>\n</html>\n");
    h
}

/// One page's line: its title linked to the local copy, its URL, bytes,
/// change, the detectors' words and the problem, if any.
fn entry(h: &mut String, at: &str, p: &MainPage, rank: Option<u32>) {
    let title = p
        .title
        .as_deref()
        .filter(|t| !t.trim().is_empty())
        .unwrap_or(&p.url);
    let value = rank.map(|r| format!(" value=\"{r}\"")).unwrap_or_default();
    let _ = write!(
        h,
        "<li{value} class=\"{}\">",
        p.change.as_str().replace(' ', "-")
    );
    match &p.local {
        Some(path) => {
            let _ = write!(
                h,
                "<a class=\"local\" href=\"{}\">{}</a>",
                Escaped(&relative_path(at, path)),
                Escaped(title)
            );
        }
        None => {
            let _ = write!(h, "<span class=\"title\">{}</span>", Escaped(title));
        }
    }
    let _ = write!(
        h,
        " <a class=\"url\" href=\"{}\">{}</a> <span class=\"bytes\">{}</span> <span class=\"change\">{}</span>",
        Escaped(&p.url),
        Escaped(&p.url),
        human_bytes(p.bytes),
        p.change.as_str()
    );
    // `content-changed` is what `change` already says.
    for f in p.findings.iter().filter(|f| f.kind != "content-changed") {
        let _ = write!(
            h,
            " <span class=\"finding\" data-kind=\"{}\">{}</span>",
            Escaped(&f.kind),
            Escaped(&f.message)
        );
    }
    // A detector's `broken` says the problem already, and more.
    if let Some(why) = p
        .problem
        .as_ref()
        .filter(|_| !p.findings.iter().any(|f| f.kind == "broken"))
    {
        let _ = write!(h, " <span class=\"problem\">{}</span>", Escaped(why));
    }
    h.push_str("</li>\n");
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:60rem;margin:1rem auto;padding:0 1rem;color:#222}\
h1{font-size:1.5rem}h2{font-size:1.2rem;border-bottom:1px solid #ccc}h3{font-size:1rem;color:#555}\
.bytes{color:#666;font-weight:normal;font-size:.9em}.url{color:#666;font-size:.85em;word-break:break-all}\
.change{font-size:.8em;padding:0 .3em;border-radius:3px;background:#eee}\
li.new .change{background:#d4f4d4}li.changed .change{background:#fde8b0}li.not-retrieved .change{background:#f8d0d0}\
.finding{font-size:.8em;color:#555;font-style:italic}\
.problem{color:#a00;font-size:.85em}li{margin:.3em 0}";

#[cfg(test)]
mod tests {
    use super::*;
    use spinneret_sdk::testing::MemoryOutput;
    use spinneret_sdk::testing::fixtures::finding;

    fn page(cat: &str, url: &str, change: Change, found_by: &[(&str, u32)]) -> MainPage {
        MainPage {
            category: cat.into(),
            url: url.into(),
            title: Some(format!("<{url}>")),
            local: (change != Change::NotRetrieved).then(|| format!("runs/0002/{cat}/x.html")),
            bytes: 2048,
            found_by: found_by
                .iter()
                .map(|(e, r)| FoundBy {
                    engine: e.to_string(),
                    rank: *r,
                })
                .collect(),
            change,
            findings: Vec::new(),
            problem: None,
        }
    }

    fn run() -> Collection {
        Collection {
            id: 2,
            profile: "p.toml".into(),
            started_at: 784_111_777,
            warc: Some("runs/0002.warc.gz".into()),
            interests: vec![Interest {
                category: "Rust".into(),
                engines: vec!["ddg".into(), "wiki".into(), "none".into()],
            }],
            host_version: String::new(),
        }
    }

    #[test]
    fn the_index_lists_categories_and_engines_in_rank_order_escaped() {
        let mut moved = page("URLs", "https://a/?x=1&y=2", Change::New, &[]);
        moved.findings.push(finding(
            "moved",
            "https://a/?x=1&y=2",
            None,
            "moved to https://b/ (301)",
        ));
        let pages = [
            moved,
            page(
                "Rust",
                "https://r2/",
                Change::Changed,
                &[("ddg", 2), ("wiki", 1)],
            ),
            page("Rust", "https://r1/", Change::Unchanged, &[("ddg", 1)]),
        ];
        let gone = [GonePage {
            category: "URLs".into(),
            url: "https://old/".into(),
            title: None,
        }];
        let mut index = WebSnatcherIndex::configure(serde_json::json!({})).unwrap();
        let mut out = MemoryOutput::default();
        let paths = ["index.html".to_string(), "runs/0002/index.html".to_string()];
        index
            .write_index(&run(), &pages, &gone, &paths, &mut out)
            .unwrap();
        out.commit();
        let html = out.text("index.html").unwrap();
        assert!(html.contains("<h1>Collection of Sun, 06 Nov 1994 08:49:37 GMT</h1>"));
        assert!(html.contains("<a class=\"local\" href=\"runs/0002/URLs/x.html\">&lt;https://a/?x=1&amp;y=2&gt;</a>"), "{html}");
        assert!(html.contains(
            "<span class=\"finding\" data-kind=\"moved\">moved to https://b/ (301)</span>"
        ));
        let ddg = html.find("<h3>ddg</h3>").unwrap();
        let wiki = html.find("<h3>wiki</h3>").unwrap();
        let r1 = html[ddg..].find("https://r1/").unwrap();
        let r2 = html[ddg..].find("https://r2/").unwrap();
        assert!(r1 < r2, "rank order within an engine");
        assert!(html[wiki..].contains("<li value=\"1\" class=\"changed\">"));
        assert!(html.contains("<h3>none</h3>\n<p class=\"none\">No results.</p>"));
        assert!(html.contains("<span id=\"total\">6.0 KiB</span>"));
        assert!(html.contains("<span id=\"new\">1 new</span>, <span id=\"changed\">1 changed</span>, <span id=\"unchanged\">1 unchanged</span>, <span id=\"gone\">1 gone</span>"));
        assert!(html.contains("<h2>Rust <span class=\"bytes\">4.0 KiB</span></h2>"));
        assert!(html.contains("href=\"runs/0002.warc.gz\""));
        assert!(html.contains("<li>(no title) <a class=\"url\" href=\"https://old/\">"));
        // The run's own copy links from its directory.
        let own = out.text("runs/0002/index.html").unwrap();
        assert!(own.contains("href=\"URLs/x.html\"") && own.contains("href=\"../0002.warc.gz\""));
    }

    #[test]
    fn a_title_must_be_text() {
        let e = WebSnatcherIndex::configure(serde_json::json!({"title": 3}))
            .err()
            .unwrap();
        assert_eq!(
            e,
            "websnatcher-index: `title` must be a non-empty string, not 3"
        );
        let i = WebSnatcherIndex::configure(serde_json::json!({"title": "Snatched"})).unwrap();
        assert_eq!(i.title, "Snatched");
    }
}
