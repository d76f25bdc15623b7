//! The archive (seed 004 §2.1): pages a person wants kept past clean-up,
//! copied from the newest run with everything they need to show into
//! `Archive/YYYY-MM-DD/…` (the same layout as the run, so their converted
//! links keep working), with an index, `Archive/archive.html`. A link of an
//! archived page to another saved page that was not archived becomes its
//! original URL again. Clean-up never touches the archive; `--purge-before
//! DATE` removes the pages archived before a day.

use super::convert::{Role, walk_css, walk_html};
use super::names::inside;
use super::runs::remove_files;
use super::{esc, human_bytes};
use anyhow::Context;
use spinneret_store::{ArchivedPage, Store};
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::Path;
use url::Url;

/// The base a mirror path is read against, to find what it references.
fn base_of(path: &str) -> Url {
    let mut u = Url::parse("file:///mirror/").expect("a valid base");
    u.set_path(&format!("/mirror/{path}"));
    u
}

/// The mirror path a resolved reference names, if it is inside the mirror.
fn path_of(u: &Url) -> Option<String> {
    if u.scheme() != "file" {
        return None;
    }
    let p = percent_encoding::percent_decode_str(u.path().strip_prefix("/mirror/")?)
        .decode_utf8()
        .ok()?
        .into_owned();
    inside(&p).then_some(p)
}

/// Copy `from` to `to` (both absolute), as a hard link where possible.
fn copy(from: &Path, to: &Path) -> std::io::Result<()> {
    if let Some(d) = to.parent() {
        std::fs::create_dir_all(d)?;
    }
    let _ = std::fs::remove_file(to);
    std::fs::hard_link(from, to).or_else(|_| std::fs::copy(from, to).map(|_| ()))
}

/// Archive the page saved at mirror path `page` (of the URL `url`, under a
/// run directory `run_dir`) into `Archive/day/`, with its requisites;
/// `urls` maps the run's saved paths to their URLs, and `together` holds
/// the saved paths of the pages archived with it. A link to a page
/// archived with it (or archived that day before) stays a link into the
/// archive; a link to any other page becomes its URL again. What was
/// archived.
#[allow(clippy::too_many_arguments)]
pub fn archive_page(
    mirror: &Path,
    run_dir: &str,
    page: &str,
    url: &str,
    urls: &HashMap<String, String>,
    together: &HashSet<String>,
    day: &str,
    now: i64,
) -> anyhow::Result<ArchivedPage> {
    let dest = |p: &str| {
        format!(
            "Archive/{day}/{}",
            p.strip_prefix(&format!("{run_dir}/")).unwrap_or(p)
        )
    };
    let html = std::fs::read_to_string(mirror.join(page))
        .with_context(|| format!("cannot read {page} (is it a page saved as UTF-8 HTML?)"))?;
    // The page's requisites, and what its stylesheets reference in turn.
    let mut needed: VecDeque<String> = VecDeque::new();
    let rewritten = walk_html(&html, &base_of(page), &mut |role, v, base| {
        let target = base.join(v.trim()).ok()?;
        let p = path_of(&target)?;
        match role {
            Role::Requisite => {
                needed.push_back(p);
                None
            }
            // A link to a page not archived with it: its URL again.
            _ if together.contains(&p) || mirror.join(dest(&p)).is_file() => None,
            _ => urls.get(&p).cloned(),
        }
    })
    .map_err(anyhow::Error::msg)?;
    let mut files = vec![dest(page)];
    let target = mirror.join(dest(page));
    if let Some(d) = target.parent() {
        std::fs::create_dir_all(d)?;
    }
    spinneret_core::fs::write_atomically(&target, rewritten.as_bytes())?;
    let mut seen = HashSet::new();
    while let Some(p) = needed.pop_front() {
        if !seen.insert(p.clone()) || !mirror.join(&p).is_file() {
            continue;
        }
        if p.ends_with(".css")
            && let Ok(css) = std::fs::read_to_string(mirror.join(&p))
        {
            walk_css(&css, &base_of(&p), &mut |_, v, base| {
                if let Some(q) = base.join(v.trim()).ok().as_ref().and_then(path_of) {
                    needed.push_back(q);
                }
                None
            });
        }
        copy(&mirror.join(&p), &mirror.join(dest(&p)))
            .with_context(|| format!("cannot copy {p} into the archive"))?;
        files.push(dest(&p));
    }
    let title = spinneret_crawl::parse::html::extract(&html).title;
    Ok(ArchivedPage {
        day: day.to_string(),
        url: url.to_string(),
        title,
        path: dest(page),
        files,
        archived_at: now,
    })
}

/// Remove the pages archived before `day` (their files, newest first, and
/// the directories left empty); how many pages.
pub fn purge_before(store: &Store, mirror: &Path, day: &str) -> anyhow::Result<usize> {
    let (old, kept): (Vec<ArchivedPage>, Vec<ArchivedPage>) = store
        .archived_pages()?
        .into_iter()
        .partition(|p| p.day.as_str() < day);
    // A file another kept page shares stays.
    let kept: HashSet<String> = kept.into_iter().flat_map(|p| p.files).collect();
    for p in &old {
        remove_files(
            mirror,
            p.files
                .iter()
                .rev()
                .filter(|f| !kept.contains(*f))
                .map(String::as_str),
        )?;
    }
    store.forget_archived_before(day)?;
    Ok(old.len())
}

/// Write `Archive/archive.html`: the archived pages by day, newest first
/// (removed when nothing is archived).
pub fn write_index(store: &Store, mirror: &Path) -> anyhow::Result<()> {
    let pages = store.archived_pages()?;
    let file = mirror.join("Archive/archive.html");
    if pages.is_empty() {
        let _ = std::fs::remove_file(&file);
        let _ = std::fs::remove_dir(mirror.join("Archive"));
        return Ok(());
    }
    let mut h = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Archive</title>\n\
         <style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:1rem auto;padding:0 1rem}\
         .url,.bytes{color:#666;font-size:.85em}</style>\n</head>\n<body>\n<h1>Archive</h1>\n",
    );
    let mut day = "";
    for p in &pages {
        if p.day != day {
            if !day.is_empty() {
                h.push_str("</ul>\n");
            }
            day = &p.day;
            h.push_str(&format!("<h2>{}</h2>\n<ul>\n", esc(day)));
        }
        let bytes: u64 = p
            .files
            .iter()
            .filter_map(|f| std::fs::metadata(mirror.join(f)).ok())
            .map(|m| m.len())
            .sum();
        let href = super::convert::relative("Archive/archive.html", &p.path);
        h.push_str(&format!(
            "<li><a href=\"{}\">{}</a> <a class=\"url\" href=\"{}\">{}</a> <span class=\"bytes\">{} in {} files</span></li>\n",
            esc(&href),
            esc(p.title.as_deref().unwrap_or(&p.url)),
            esc(&p.url),
            esc(&p.url),
            human_bytes(bytes),
            p.files.len()
        ));
    }
    h.push_str("</ul>\n</body>\n</html>\n");
    spinneret_core::fs::write_atomically(&file, h.as_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_archived_together_keep_their_links_to_each_other() {
        let dir = tempfile::tempdir().unwrap();
        let m = dir.path();
        let run = "runs/0001";
        let (a, b, c) = (
            "runs/0001/URLs/h/a.html",
            "runs/0001/URLs/h/b.html",
            "runs/0001/URLs/h/c.html",
        );
        std::fs::create_dir_all(m.join("runs/0001/URLs/h")).unwrap();
        std::fs::write(m.join(a), r#"<a href="b.html">B</a><a href="c.html">C</a>"#).unwrap();
        std::fs::write(m.join(b), "<title>B</title>").unwrap();
        std::fs::write(m.join(c), "<title>C</title>").unwrap();
        let urls: HashMap<String, String> = [(a, "a"), (b, "b"), (c, "c")]
            .into_iter()
            .map(|(p, n)| (p.to_string(), format!("https://h.example/{n}.html")))
            .collect();
        let together: HashSet<String> = [a.to_string(), b.to_string()].into();
        archive_page(m, run, a, &urls[a], &urls, &together, "2026-11-24", 0).unwrap();
        let archived = std::fs::read_to_string(m.join("Archive/2026-11-24/URLs/h/a.html")).unwrap();
        assert_eq!(
            archived,
            r#"<a href="b.html">B</a><a href="https://h.example/c.html">C</a>"#
        );
    }
}
