//! The archive (seed 004 §2.1): pages a person wants kept past clean-up,
//! copied from the newest run with everything they need to show (their
//! requisites, and their frames' in turn, frames inside frames included)
//! into `Archive/YYYY-MM-DD/…` (the same layout as the run, so their
//! converted links keep working), with an index, `Archive/archive.html`.
//! A link of an archived page (or of its frames) to a page that is not
//! archived becomes its original URL again; a page from the web keeps no
//! `file:` reference out of the mirror. A page archived again the same
//! day goes, with the pages archived with it, into an edition of its own,
//! `Archive/YYYY-MM-DDTHHMMSS/`, and the earlier copy stays. Clean-up
//! never touches the archive; `--purge-before DATE` removes the pages
//! archived before a day.

use super::convert::{INERT, Role, walk_css, walk_html};
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

/// Whether a saved file is a page (the mirror names every page `.html`).
fn is_page(path: &str) -> bool {
    path.ends_with(".html")
}

/// The archive's editions of `day` (`Archive/` directories): the day's
/// own first, then those of the day's later batches, oldest first.
fn editions(mirror: &Path, day: &str) -> Vec<String> {
    let timed = format!("{day}T");
    let mut found: Vec<String> = std::fs::read_dir(mirror.join("Archive"))
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n == day || n.starts_with(&timed))
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// The modification time the copies of a batch archived at `now` are
/// given: how a later call of the same batch knows them from the copies
/// of an earlier batch.
fn batch_time(now: i64) -> std::time::SystemTime {
    std::time::UNIX_EPOCH + std::time::Duration::from_secs(now.max(0) as u64)
}

/// Whether the files at `a` and `b` hold the same bytes.
fn same_bytes(a: &Path, b: &Path) -> bool {
    let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if (ma.dev(), ma.ino()) == (mb.dev(), mb.ino()) {
            return true;
        }
    }
    ma.len() == mb.len() && std::fs::read(a).ok() == std::fs::read(b).ok()
}

/// The edition of `day` the batch archived at `now` (the pages of
/// `together`) goes into: the day's own, unless it holds a copy from an
/// earlier batch that this one would replace (of one of its pages, or a
/// file they need that has changed since); then one named by the batch's
/// time (`2026-11-24T140509`), so that the earlier copy stays whole. Every
/// page of the batch is given the same edition, so their links to each
/// other hold.
fn edition_for(
    mirror: &Path,
    run_dir: &str,
    day: &str,
    together: &HashSet<String>,
    now: i64,
) -> String {
    let mut batch: Vec<String> = together.iter().cloned().collect();
    batch.sort();
    let needed: Vec<String> = batch.iter().flat_map(|p| needs(mirror, p)).collect();
    let earlier_copy = |edition: &str| {
        needed.iter().any(|p| {
            let copy = mirror.join(in_edition(edition, run_dir, p));
            let Ok(modified) = std::fs::metadata(&copy).and_then(|m| m.modified()) else {
                return false;
            };
            // This batch's own copies are written at its time.
            modified != batch_time(now)
                && (together.contains(p) || !same_bytes(&copy, &mirror.join(p)))
        })
    };
    if !earlier_copy(day) {
        return day.to_string();
    }
    let at = jiff::Timestamp::from_second(now)
        .map(|t| {
            t.to_zoned(jiff::tz::TimeZone::system())
                .strftime("%H%M%S")
                .to_string()
        })
        .unwrap_or_else(|_| "000000".into());
    let mut edition = format!("{day}T{at}");
    let mut n = 2;
    while earlier_copy(&edition) {
        edition = format!("{day}T{at}-{n}");
        n += 1;
    }
    edition
}

/// The run's page at mirror path `page` and every file it needs to show
/// (its requisites, theirs, its frames' and theirs, however deep), each
/// once, the page first; files the mirror does not hold are left out.
fn needs(mirror: &Path, page: &str) -> Vec<String> {
    let mut needed: VecDeque<String> = VecDeque::from([page.to_string()]);
    let mut seen = HashSet::new();
    let mut order = Vec::new();
    while let Some(p) = needed.pop_front() {
        if !seen.insert(p.clone()) || !mirror.join(&p).is_file() {
            continue;
        }
        let mut need = |role: Role, v: &str, base: &Url| {
            if role == Role::Requisite
                && let Some(q) = base.join(v.trim()).ok().as_ref().and_then(path_of)
            {
                needed.push_back(q);
            }
            None
        };
        if is_page(&p) || p.ends_with(".css") {
            match std::fs::read_to_string(mirror.join(&p)) {
                Ok(html) if is_page(&p) => {
                    let _ = walk_html(&html, &base_of(&p), &mut need);
                }
                Ok(css) => {
                    walk_css(&css, &base_of(&p), &mut need);
                }
                Err(_) => {}
            }
        }
        order.push(p);
    }
    order
}

/// Where the run's file at mirror path `p` (under `run_dir`) is copied in
/// `edition` of the archive.
fn in_edition(edition: &str, run_dir: &str, p: &str) -> String {
    format!(
        "Archive/{edition}/{}",
        p.strip_prefix(&format!("{run_dir}/")).unwrap_or(p)
    )
}

/// Where the files of an archived page go and what its copies' links
/// become.
struct Copying<'a> {
    mirror: &'a Path,
    run_dir: &'a str,
    /// The edition they go into.
    edition: String,
    /// The day's editions, for links to pages archived earlier that day.
    day_editions: Vec<String>,
    /// The run's files by mirror path: their URLs.
    urls: &'a HashMap<String, String>,
    /// The pages archived in the same batch (into the same edition).
    together: &'a HashSet<String>,
    /// The run's files copied for the page.
    files: HashSet<String>,
    /// Whether the archived page came from the web (its copies keep no
    /// `file:` reference out of the mirror).
    web: bool,
}

impl Copying<'_> {
    fn dest(&self, p: &str) -> String {
        in_edition(&self.edition, self.run_dir, p)
    }

    /// Whether the run's file at `p` came from the web.
    fn came_from_web(&self, p: &str) -> bool {
        self.urls
            .get(p)
            .map_or(self.web, |u| !u.starts_with("file:"))
    }

    /// What a reference `v` of the run's file at `from` (read against
    /// `base`) becomes in its copy: a file copied with it stays; a page
    /// archived with it, or earlier that day, is linked where its copy
    /// is; any other page of the run is its original URL; a `file:`
    /// reference out of the mirror is [`INERT`] in a file from the web.
    fn reference(&self, from: &str, role: Role, v: &str, base: &Url) -> Option<String> {
        let target = base.join(v.trim()).ok()?;
        let Some(p) = path_of(&target) else {
            return (target.scheme() == "file" && self.came_from_web(from))
                .then(|| INERT.to_string());
        };
        if role == Role::Requisite || self.files.contains(&p) || self.together.contains(&p) {
            return None;
        }
        let fragment = target
            .fragment()
            .map(|f| format!("#{f}"))
            .unwrap_or_default();
        let archived = self
            .day_editions
            .iter()
            .rev()
            .map(|e| in_edition(e, self.run_dir, &p))
            .find(|d| self.mirror.join(d).is_file());
        match archived {
            Some(d) => Some(super::convert::relative(&self.dest(from), &d) + &fragment),
            None => self.urls.get(&p).map(|u| u.clone() + &fragment),
        }
    }

    /// Copy the run's file at `p` into the edition: a page or a stylesheet
    /// with its references as [`Copying::reference`] makes them, the
    /// rest (and a file left as it was) as a hard link.
    fn copy_file(&self, p: &str, now: i64) -> anyhow::Result<()> {
        let from = self.mirror.join(p);
        let to = self.mirror.join(self.dest(p));
        let text = (is_page(p) || p.ends_with(".css"))
            .then(|| std::fs::read_to_string(&from).ok())
            .flatten();
        let mut visit = |role: Role, v: &str, base: &Url| self.reference(p, role, v, base);
        let rewritten = match text {
            Some(html) if is_page(p) => {
                Some(walk_html(&html, &base_of(p), &mut visit).map_err(anyhow::Error::msg)?)
            }
            Some(css) if p.ends_with(".css") => {
                Some(walk_css(&css, &base_of(p), &mut visit)).filter(|new| *new != css)
            }
            _ => None,
        };
        match rewritten {
            Some(new) => {
                if let Some(d) = to.parent() {
                    std::fs::create_dir_all(d)?;
                }
                spinneret_core::fs::write_atomically(&to, new.as_bytes())?;
                // A page of this batch, known by its time (see edition_for).
                std::fs::File::options()
                    .write(true)
                    .open(&to)?
                    .set_modified(batch_time(now))?;
            }
            None => copy(&from, &to)?,
        }
        Ok(())
    }
}

/// Archive the page saved at mirror path `page` (of the URL `url`, under a
/// run directory `run_dir`) into `Archive/day/` (or the day's edition of
/// this batch, when one of its pages was archived that day before), with
/// everything it needs to show; `urls` maps the run's saved paths to
/// their URLs, and `together` holds the saved paths of the pages archived
/// with it (at `now`). A link to a page archived with it (or archived that
/// day before) stays a link into the archive; a link to any other page
/// becomes its URL again. What was archived.
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
    let html = std::fs::read_to_string(mirror.join(page))
        .with_context(|| format!("cannot read {page} (is it a page saved as UTF-8 HTML?)"))?;
    let mut batch = together.clone();
    batch.insert(page.to_string());
    let edition = edition_for(mirror, run_dir, day, &batch, now);
    let mut copying = Copying {
        mirror,
        run_dir,
        day_editions: editions(mirror, day),
        edition,
        urls,
        together: &batch,
        files: HashSet::new(),
        web: !url.starts_with("file:"),
    };
    let order = needs(mirror, page);
    copying.files = order.iter().cloned().collect();
    let mut files = Vec::new();
    for p in &order {
        copying
            .copy_file(p, now)
            .with_context(|| format!("cannot copy {p} into the archive"))?;
        files.push(copying.dest(p));
    }
    let title = spinneret_crawl::parse::html::extract(&html).title;
    Ok(ArchivedPage {
        day: copying.edition.clone(),
        url: url.to_string(),
        title,
        path: copying.dest(page),
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

/// The day of an edition (`2026-11-24T140509` is of 2026-11-24), and the
/// time of day of a later batch's (`14:05:09`), if it is one.
fn day_and_time(edition: &str) -> (&str, Option<String>) {
    match edition.split_once('T') {
        Some((day, t)) if t.len() >= 6 && t.is_char_boundary(6) => {
            let t = &t[..6];
            (day, Some(format!("{}:{}:{}", &t[..2], &t[2..4], &t[4..])))
        }
        _ => (edition, None),
    }
}

/// Write `Archive/archive.html`: the archived pages by day, newest first,
/// a copy archived again that day saying so (removed when nothing is
/// archived).
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
         .url,.bytes,.again{color:#666;font-size:.85em}</style>\n</head>\n<body>\n<h1>Archive</h1>\n",
    );
    let mut day = "";
    for p in &pages {
        let (its_day, again) = day_and_time(&p.day);
        if its_day != day {
            if !day.is_empty() {
                h.push_str("</ul>\n");
            }
            day = its_day;
            h.push_str(&format!("<h2>{}</h2>\n<ul>\n", esc(day)));
        }
        let bytes: u64 = p
            .files
            .iter()
            .filter_map(|f| std::fs::metadata(mirror.join(f)).ok())
            .map(|m| m.len())
            .sum();
        let href = super::convert::relative("Archive/archive.html", &p.path);
        let again = again
            .map(|t| {
                format!(
                    " <span class=\"again\">archived again at {t}; the earlier copy is kept</span>"
                )
            })
            .unwrap_or_default();
        h.push_str(&format!(
            "<li><a href=\"{}\">{}</a> <a class=\"url\" href=\"{}\">{}</a> <span class=\"bytes\">{} in {} files</span>{again}</li>\n",
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

    /// A saved page from the web that still holds `file:` references out
    /// of the mirror (the mirror of an older version, say) keeps none in
    /// its archive copy; a local file's are its own.
    #[test]
    fn a_web_pages_archive_copy_keeps_no_file_reference_out_of_the_mirror() {
        let dir = tempfile::tempdir().unwrap();
        let m = dir.path();
        let (web, local) = (
            "runs/0001/URLs/h/w.html",
            "runs/0001/Local/local-files/s/l.html",
        );
        std::fs::create_dir_all(m.join("runs/0001/URLs/h")).unwrap();
        std::fs::create_dir_all(m.join("runs/0001/Local/local-files/s")).unwrap();
        let html = r#"<iframe src="file:///etc/os-release"></iframe><img src="../../../../../../../etc/a.png"><a href="file:///home/me/s/x.html">x</a>"#;
        std::fs::write(m.join(web), html).unwrap();
        std::fs::write(m.join(local), html).unwrap();
        let urls: HashMap<String, String> = [
            (web.to_string(), "https://h.example/w.html".to_string()),
            (local.to_string(), "file:///home/me/s/l.html".to_string()),
        ]
        .into();
        for (page, want) in [
            (
                web,
                r#"<iframe src="about:blank"></iframe><img src="about:blank"><a href="about:blank">x</a>"#,
            ),
            (local, html),
        ] {
            let together: HashSet<String> = [page.to_string()].into();
            let p = archive_page(
                m,
                "runs/0001",
                page,
                &urls[page],
                &urls,
                &together,
                "2026-11-24",
                7,
            )
            .unwrap();
            assert_eq!(std::fs::read_to_string(m.join(&p.path)).unwrap(), want);
        }
    }

    /// A batch goes into the day's own edition unless that holds a copy
    /// from an earlier batch that it would replace: one of its pages, or a
    /// file they need that has changed since. Then its edition is named by
    /// its time, and the earlier copy stays whole.
    #[test]
    fn a_batch_replaces_no_copy_of_an_earlier_one() {
        let dir = tempfile::tempdir().unwrap();
        let m = dir.path();
        let run = "runs/0001";
        let (a, b, css) = (
            "runs/0001/URLs/h/a.html",
            "runs/0001/URLs/h/b.html",
            "runs/0001/URLs/h/s.css",
        );
        std::fs::create_dir_all(m.join("runs/0001/URLs/h")).unwrap();
        for page in [a, b] {
            std::fs::write(
                m.join(page),
                r#"<link rel="stylesheet" href="s.css"><a href="a.html">a</a>"#,
            )
            .unwrap();
        }
        std::fs::write(m.join(css), "p { color: red }").unwrap();
        let urls: HashMap<String, String> = [a, b, css]
            .into_iter()
            .map(|p| (p.to_string(), format!("https://h.example/{}", &p[15..])))
            .collect();
        let day = "2026-11-24";
        let archive = |page: &str, now: i64| {
            let together: HashSet<String> = [page.to_string()].into();
            archive_page(m, run, page, &urls[page], &urls, &together, day, now).unwrap()
        };
        // 1: a, into the day's edition.
        let first = archive(a, 1_795_000_000);
        assert_eq!(first.day, day);
        // 2: b, which needs the same stylesheet, unchanged: the same
        // edition; its link to a goes to a's copy.
        let second = archive(b, 1_795_000_100);
        assert_eq!(second.day, day);
        assert_eq!(
            std::fs::read_to_string(m.join(&second.path)).unwrap(),
            r#"<link rel="stylesheet" href="s.css"><a href="a.html">a</a>"#
        );
        // 3: a again: an edition of its own; the first copy stays.
        let third = archive(a, 1_795_000_200);
        assert!(
            third.day.starts_with("2026-11-24T") && third.day.len() == 17,
            "{}",
            third.day
        );
        assert_eq!(third.path, format!("Archive/{}/URLs/h/a.html", third.day));
        assert!(m.join(&first.path).is_file());
        // 4: the stylesheet changed, then b again: its own edition too, so
        // a's first copy keeps the stylesheet it had.
        // (A run writes a new file, never into the old one, which the
        // archive may share.)
        std::fs::remove_file(m.join(css)).unwrap();
        std::fs::write(m.join(css), "p { color: blue }").unwrap();
        let fourth = archive(b, 1_795_000_300);
        assert!(
            fourth.day.starts_with("2026-11-24T") && fourth.day != third.day,
            "{}",
            fourth.day
        );
        assert_eq!(
            std::fs::read_to_string(m.join("Archive/2026-11-24/URLs/h/s.css")).unwrap(),
            "p { color: red }"
        );
        // Its link to a goes to a's newest copy, in the third's edition.
        assert_eq!(
            std::fs::read_to_string(m.join(&fourth.path)).unwrap(),
            format!(
                r#"<link rel="stylesheet" href="s.css"><a href="../../../{}/URLs/h/a.html">a</a>"#,
                third.day
            )
        );
    }
}
