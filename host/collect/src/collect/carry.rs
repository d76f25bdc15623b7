//! Per-entry schedules (`watch`): a profile's entries by key with their
//! schedules, the profile cut down to the entries due, and the others'
//! pages and files carried forward from the last run into the new one;
//! and the web-archive records a run takes from the runs it replaces.

use crate::mirror::category_dir;
use crate::profile::Profile;
use crate::warc::{WarcReader, WarcWriter};
use anyhow::Context;
use spinneret_core::schedule::Schedule;
use spinneret_store::{CollectedFile, CollectionRow, MainPage, Store};
use std::collections::{HashMap, HashSet};

/// The entries of a profile that a run of some of them leaves out (each
/// entry's own schedule, under `watch`): their main pages of the last run,
/// with all the files of their categories, are carried forward into this
/// run (hard links), so the mirror and its index still have them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NotDue {
    /// Categories carried whole (and their subcategories): an interest's, or
    /// `Bookmarks`.
    pub categories: Vec<String>,
    /// Explicit URLs carried: (category, URL).
    pub urls: Vec<(String, String)>,
}

impl NotDue {
    /// Whether nothing is carried.
    pub fn is_empty(&self) -> bool {
        self.categories.is_empty() && self.urls.is_empty()
    }

    /// Whether `category` is carried whole (it or a category above it).
    fn whole(&self, category: &str) -> bool {
        self.categories.iter().any(|c| {
            category
                .strip_prefix(c.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
    }

    /// Whether files of `category` are carried.
    fn has_category(&self, category: &str) -> bool {
        self.whole(category) || self.urls.iter().any(|(c, _)| c == category)
    }

    /// Whether the main page `p` is carried.
    fn has_page(&self, p: &MainPage) -> bool {
        self.whole(&p.category)
            || self
                .urls
                .iter()
                .any(|(c, u)| *c == p.category && *u == p.url)
    }
}

/// Carry forward from run `from` into run `to` what `not_due` names: each
/// file of its categories that `to` did not write (hard-linked, or copied
/// where the file system cannot link), and each of its main pages that `to`
/// does not `have`. The files, to book, and the pages.
pub(super) fn carry(
    store: &Store,
    mirror: &std::path::Path,
    from: &CollectionRow,
    to: &CollectionRow,
    not_due: &NotDue,
    have: &[MainPage],
) -> anyhow::Result<(Vec<CollectedFile>, Vec<MainPage>)> {
    let moved = |path: &str| {
        path.strip_prefix(&format!("{}/", from.dir))
            .map(|rest| format!("{}/{rest}", to.dir))
    };
    let mut files = Vec::new();
    for f in store.collection_files(from.id)? {
        let Some(category) = &f.category else {
            continue;
        };
        if f.url.is_none() || !not_due.has_category(category) {
            continue;
        }
        let Some(dest) = moved(&f.path) else {
            continue;
        };
        let (source, target) = (mirror.join(&f.path), mirror.join(&dest));
        if target.exists() || !source.is_file() {
            continue;
        }
        if let Some(dir) = target.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        if std::fs::hard_link(&source, &target).is_err() {
            std::fs::copy(&source, &target)
                .with_context(|| format!("cannot carry {} forward", source.display()))?;
        }
        files.push(CollectedFile { path: dest, ..f });
    }
    let had: HashSet<(&str, &str)> = have
        .iter()
        .map(|p| (p.category.as_str(), p.url.as_str()))
        .collect();
    let pages = store
        .main_pages(from.id)?
        .into_iter()
        .filter(|p| not_due.has_page(p) && !had.contains(&(p.category.as_str(), p.url.as_str())))
        .map(|p| MainPage {
            path: p
                .path
                .as_deref()
                .and_then(moved)
                .filter(|d| mirror.join(d).is_file()),
            ..p
        })
        .collect();
    Ok((files, pages))
}

/// The longest record [`carry_records`] reads from a WARC: the fetcher's
/// largest body with room for its headers.
const MAX_RECORD: u64 = 4 * 1024 * 1024 * 1024;

/// Copy into `warc` the records that the WARC file at `from` holds of the
/// carried `urls` (requests, responses, revisits), with those of the
/// redirects they lead to, so that this run's web archive holds every file
/// of its mirror, though the last run's may be removed. Under their own
/// ids when `from` is about to go (`keep_ids`: revisits in it and in later
/// runs name them), else under new ones. The old ids of the records copied.
pub(super) fn carry_records<W: std::io::Write>(
    from: &std::path::Path,
    mut urls: HashSet<String>,
    warc: &mut WarcWriter<W>,
    keep_ids: bool,
) -> anyhow::Result<HashSet<String>> {
    let mut copied = HashSet::new();
    if urls.is_empty() || !from.is_file() {
        return Ok(copied);
    }
    let cannot = |e: std::io::Error| anyhow::anyhow!("cannot read {}: {e}", from.display());
    let mut ids = HashMap::new();
    for rec in WarcReader::open(from, MAX_RECORD).map_err(cannot)? {
        let rec = rec.map_err(cannot)?;
        let Some(url) = rec.field("WARC-Target-URI") else {
            continue;
        };
        if !urls.contains(url) || !matches!(rec.kind.as_str(), "request" | "response" | "revisit") {
            continue;
        }
        if rec.kind == "response"
            && let Some(next) = redirect(url, &rec.block)
        {
            urls.insert(next);
        }
        match keep_ids {
            true => warc.adopt(&rec, true),
            false => warc.copy(&rec, &mut ids),
        }
        .with_context(|| "cannot write the WARC file")?;
        copied.extend(rec.field("WARC-Record-ID").map(str::to_string));
    }
    Ok(copied)
}

/// Copy into `warc`, under their own ids, the records `wanted` of the
/// WARC file at `from`, whose run is being removed: this run's revisits
/// refer to them. The ids copied, and what went wrong reading `from` (a
/// file cut short keeps what came before the cut), if anything.
fn adopt_records<W: std::io::Write>(
    from: &std::path::Path,
    wanted: &HashSet<&str>,
    warc: &mut WarcWriter<W>,
) -> anyhow::Result<(HashSet<String>, Option<String>)> {
    let cannot = |e: std::io::Error| format!("cannot read {}: {e}", from.display());
    let mut adopted = HashSet::new();
    let records = match WarcReader::open(from, MAX_RECORD) {
        Ok(r) => r,
        Err(e) => return Ok((adopted, Some(cannot(e)))),
    };
    for rec in records {
        let rec = match rec {
            Ok(rec) => rec,
            Err(e) => return Ok((adopted, Some(cannot(e)))),
        };
        if let Some(id) = rec.field("WARC-Record-ID").filter(|id| wanted.contains(id)) {
            warc.adopt(&rec, false)
                .with_context(|| "cannot write the WARC file")?;
            adopted.insert(id.to_string());
        }
    }
    Ok((adopted, None))
}

/// Copy into `warc` the records of the `replaced` runs that this run's
/// revisits name (`adopted`: by run, each record's id and its URL), but
/// those carried already (`carried`), and remember their URLs with run
/// `to`. What went wrong, as problem lines (a record not found: its URL is
/// fetched whole next time).
pub(super) fn take_in_records<W: std::io::Write>(
    store: &Store,
    mirror: &std::path::Path,
    replaced: &[CollectionRow],
    adopted: &HashMap<i64, HashMap<String, String>>,
    carried: &HashSet<String>,
    to: i64,
    warc: &mut WarcWriter<W>,
) -> anyhow::Result<Vec<String>> {
    let mut problems = Vec::new();
    for c in replaced {
        let Some(records) = adopted.get(&c.id) else {
            continue;
        };
        let wanted: HashSet<&str> = records
            .keys()
            .map(String::as_str)
            .filter(|id| !carried.contains(*id))
            .collect();
        let file = mirror.join(crate::runs::warc_path(c));
        let (found, damaged) = adopt_records(&file, &wanted, warc)?;
        let urls: Vec<&str> = found
            .iter()
            .filter_map(|id| records.get(id).map(String::as_str))
            .collect();
        store.move_url_records(c.id, to, &urls)?;
        let missing = wanted.len() - found.len();
        if missing > 0 || damaged.is_some() {
            problems.push(format!(
                "{}: {missing} of the {} records this run's revisits name were not found{}; those URLs are fetched whole next time",
                file.display(),
                wanted.len(),
                damaged.map_or(String::new(), |d| format!(" ({d})"))
            ));
        }
    }
    Ok(problems)
}

/// Where the HTTP response `message` for `url` (as [`super::record`]
/// writes it) redirects, if it does.
fn redirect(url: &str, message: &[u8]) -> Option<String> {
    let end = message.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&message[..end]);
    let mut lines = head.split("\r\n");
    let code: u16 = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    if !(300..400).contains(&code) {
        return None;
    }
    let location = lines.find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.eq_ignore_ascii_case("location").then(|| value.trim())
    })?;
    let next = spinneret_core::urls::resolve(&url::Url::parse(url).ok()?, location).ok()?;
    Some(next.into())
}

/// Each entry of `profile` (`[[url]]`, `[[bookmarks]]`, `[[interest]]`)
/// by a key that names it for a person and stays the same across edits of
/// the others, with its schedule: its own, else the profile's.
pub fn entries(profile: &Profile) -> Vec<(String, Option<Schedule>)> {
    let mut all = Vec::new();
    for u in &profile.urls {
        all.push((
            format!("url {} ({})", u.url, u.category),
            u.schedule.or(profile.schedule),
        ));
    }
    for b in &profile.bookmarks {
        all.push((
            format!("bookmarks {}", b.file.display()),
            b.schedule.or(profile.schedule),
        ));
    }
    for i in &profile.interests {
        all.push((
            format!("interest {}", i.title),
            i.schedule.or(profile.schedule),
        ));
    }
    all
}

/// `profile` with only the entries whose [`entries`] keys are in `due`,
/// and what the others carry forward.
pub fn due_only(profile: &Profile, due: &[String]) -> (Profile, NotDue) {
    let keys = entries(profile);
    let mut is_due = keys.iter().map(|(k, _)| due.contains(k));
    let mut only = profile.clone();
    let mut not_due = NotDue::default();
    only.urls.clear();
    only.bookmarks.clear();
    only.interests.clear();
    for u in &profile.urls {
        match is_due.next().unwrap_or(true) {
            true => only.urls.push(u.clone()),
            false => not_due
                .urls
                .push((category_dir(&[&u.category]), u.url.to_string())),
        }
    }
    for b in &profile.bookmarks {
        match is_due.next().unwrap_or(true) {
            true => only.bookmarks.push(b.clone()),
            false => not_due.categories.push("Bookmarks".to_string()),
        }
    }
    for i in &profile.interests {
        match is_due.next().unwrap_or(true) {
            true => only.interests.push(i.clone()),
            false => not_due.categories.push(category_dir(&[&i.title])),
        }
    }
    not_due.categories.dedup();
    (only, not_due)
}
