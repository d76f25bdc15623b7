//! A WebSnatcher run (`spinneret collect PROFILE`): every explicit URL,
//! bookmark and search result of the profile fetched with its page
//! requisites (images, stylesheets and what they reference, scripts,
//! frames, icons, fonts) and its same-site links to the item's depth,
//! through the crawl's polite fetcher (robots.txt, the avoid files, the
//! per-site interval, the body cap), several requests in flight, each URL
//! once per run whichever items reach it.
//!
//! A run is booked in the mirror's store (`.spinneret/store.sqlite`): the
//! earlier runs beyond `keep_runs` are cleaned up first (the seed's
//! behaviour), then every file is booked as it is written under
//! `runs/NNNN/`, every exchange goes into the run's WARC file, the saved
//! pages have their links converted, the change detectors say what changed
//! in the main pages since the last run, and the index plugin writes the
//! index (`index.html`) listing them ([`index`]).
//!
//! What a run is asked for is [`mod@items`]; how it walks from those to
//! their requisites and links is `retrieve`; the entries a run under
//! `watch` leaves out are carried forward from the last run by [`carry`].

pub mod carry;
pub mod fetch;
pub mod index;
pub mod items;
pub mod keep;
mod record;
mod retrieve;

use crate::mirror::{MirrorWriter, Written, converted, object_path};
use crate::profile::Profile;
use crate::query::Asker;
use crate::runs::{self, objects_dir, store_path};
use crate::warc::{WarcWriter, payload_digest};
use anyhow::Context;
use fetch::Fetched;
use spinneret_core::model::unix_now;
use spinneret_crawl::fetch::Validators;
use spinneret_crawl::plugin_http::PoliteHttp;
use spinneret_store::{CollectedFile, CollectionRow, MainPage, Store, UrlMemory};
use std::collections::{HashMap, HashSet};
use std::io::BufWriter;
use std::sync::atomic::{AtomicBool, Ordering};
use url::Url;

use carry::carry;
pub use carry::{NotDue, due_only, entries};
pub use items::{Asked, Item, interest_items, items};
pub use spinneret_net::redirect::MAX_REDIRECTS;

/// What a run did.
#[derive(Debug)]
pub struct Collected {
    /// The run as booked.
    pub run: CollectionRow,
    /// The run's files (mirror-relative paths, under the run's directory)
    /// and bytes.
    pub written: Written,
    /// Requests made.
    pub requests: u64,
    /// URLs that could not be fetched (refused by robots.txt or an avoid
    /// rule, a failure, an error status), with why.
    pub failed: Vec<(String, String)>,
    /// Links the profile's policies said to avoid, with the reason (the
    /// policy named in it): not fetched, and no failure.
    pub avoided: Vec<(String, String)>,
    /// The main pages, in the order asked.
    pub pages: Vec<MainPage>,
    /// What became of each since the last run.
    pub changes: Vec<crate::changes::Change>,
    /// The last run's main pages this one does not have.
    pub gone: Vec<MainPage>,
    /// The index, mirror-relative.
    pub index: String,
    /// The WARC file, mirror-relative.
    pub warc: String,
    /// Files of earlier runs removed before this one wrote.
    pub cleaned: usize,
    /// Files carried forward from the last run for the entries not due.
    pub carried_files: usize,
    /// A change detector or the index plugin that failed (the run's files
    /// are in place all the same).
    pub problems: Vec<String>,
    /// Whether the run was stopped (a signal) before it had fetched
    /// everything: what it had is saved, archived and indexed.
    pub stopped: bool,
}

/// What a URL fetched this run led to.
#[derive(Clone)]
struct Got {
    content_type: Option<String>,
    /// Where its body was first saved (relative to the run's directory).
    first: String,
    /// The URL it was found at (after redirects).
    found: Url,
    digest: String,
    /// This run's WARC record of its answer (a response or a revisit), if
    /// it has one (a local file has none).
    record: Option<String>,
}

/// One run, being collected.
struct Run<'p> {
    http: &'p PoliteHttp,
    /// Set when the run is to stop: no new request starts.
    stop: &'p AtomicBool,
    profile: &'p Profile,
    items: &'p [Item],
    store: &'p Store,
    run: &'p CollectionRow,
    run_root: std::path::PathBuf,
    mirror: MirrorWriter,
    warc: WarcWriter<BufWriter<std::fs::File>>,
    /// Collections whose WARC files are there while the run goes on: a
    /// revisit may refer to their records.
    live: HashSet<i64>,
    /// Those of `live` removed once the run ends (their files but the WARC
    /// went before it wrote): the records this run's revisits name are
    /// taken into its own WARC file ([`Run::adopted`]).
    dying: HashSet<i64>,
    /// The records of `dying` collections that this run's revisits refer
    /// to, by collection: each record's id and the URL remembered with it.
    adopted: HashMap<i64, HashMap<String, String>>,
    /// Each URL asked this run: what it led to, or none.
    asked: HashMap<String, Option<Got>>,
    /// Files written and not yet booked.
    to_book: Vec<CollectedFile>,
    /// What each URL retrieved this run was, to remember.
    memory: Vec<(String, UrlMemory)>,
    /// What each URL of the batch being fetched was when last retrieved
    /// (read once, for its validators and then for its revisit).
    before: HashMap<String, UrlMemory>,
    /// Bytes saved per item.
    item_bytes: Vec<u64>,
    requests: u64,
    failed: Vec<(String, String)>,
    /// The profile's policies (`[[policy]]`), if it has any.
    policies: Option<std::sync::Arc<spinneret_crawl::hooks::CrawlHooks>>,
    /// Links a policy said to avoid, with its reason.
    avoided: Vec<(String, String)>,
}

fn is(content_type: Option<&str>, mime: &str) -> bool {
    content_type.is_some_and(|c| c.trim().to_ascii_lowercase().starts_with(mime))
}

impl Run<'_> {
    /// The validators for a conditional request of `url`: only when its
    /// last body is at hand (in the object store, not converted) and a kept
    /// WARC record holds it, so that a 304 can be saved and archived.
    fn validators(&mut self, url: &Url) -> Option<Validators> {
        let m = self.store.url_memory(url.as_str()).ok()??;
        self.before.insert(url.to_string(), m.clone());
        let usable = self.live.contains(&m.collection)
            && m.warc_record.is_some()
            && !converted(m.content_type.as_deref())
            && object_path(&objects_dir(&self.profile.mirror), &m.digest).exists();
        (usable && (m.etag.is_some() || m.last_modified.is_some())).then_some(Validators {
            etag: m.etag,
            last_modified: m.last_modified,
        })
    }

    /// Book a file of `bytes` just written in `category` for `url`.
    fn book(
        &mut self,
        path: &str,
        url: &Url,
        category: &str,
        digest: &str,
        bytes: u64,
        item: usize,
    ) {
        self.item_bytes[item] += bytes;
        self.to_book.push(CollectedFile {
            path: format!("{}/{path}", self.run.dir),
            url: Some(url.to_string()),
            category: Some(category.to_string()),
            digest: Some(digest.to_string()),
            bytes,
        });
    }

    /// Save `url` in `category` for `item`: from what this run already
    /// fetched, or from `fetched` (its exchanges archived first). What it
    /// led to and whether this call saved it (false when the category had
    /// it already), or none when it could not be had (said in `failed`).
    fn save(
        &mut self,
        category: &str,
        url: &Url,
        item: usize,
        fetched: &mut HashMap<String, Fetched>,
    ) -> Option<(Got, bool)> {
        if let Some(known) = self.asked.get(url.as_str()) {
            let got = known.clone()?;
            if self.mirror.saved(category, url).is_some() {
                return Some((got, false));
            }
            return match self.copy(category, url, &got, item) {
                Ok(_) => Some((got, true)),
                Err(e) => {
                    self.failed.push((url.to_string(), e));
                    None
                }
            };
        }
        let Some(f) = fetched.remove(url.as_str()) else {
            // Not fetched in this chunk: an entry of an earlier chunk that
            // failed before it was asked.
            return None;
        };
        let got = self.archive_and_save(category, url, item, f);
        match got {
            Ok(got) => {
                self.asked.insert(url.to_string(), Some(got.clone()));
                Some((got, true))
            }
            Err(e) => {
                self.failed.push((url.to_string(), e));
                self.asked.insert(url.to_string(), None);
                None
            }
        }
    }

    /// Save under `url`'s name in `category` the body this run saved for
    /// `got`; its path.
    fn copy(
        &mut self,
        category: &str,
        url: &Url,
        got: &Got,
        item: usize,
    ) -> Result<String, String> {
        let body = std::fs::read(self.run_root.join(&got.first)).map_err(|e| e.to_string())?;
        let path = self
            .mirror
            .save_redirected(
                category,
                url,
                &got.found,
                got.content_type.as_deref(),
                &body,
                &got.digest,
            )
            .map_err(|e| e.to_string())?;
        self.book(&path, url, category, &got.digest, body.len() as u64, item);
        Ok(path)
    }

    /// Write `f`'s exchanges to the WARC file and its answer to the mirror.
    fn archive_and_save(
        &mut self,
        category: &str,
        url: &Url,
        item: usize,
        f: Fetched,
    ) -> Result<Got, String> {
        let now = unix_now();
        self.requests += f.hops.len() as u64;
        let last = f.hops.len().saturating_sub(1);
        let memory = self.before.remove(url.as_str());
        let mut answer_record: Option<(String, i64, i64)> = None;
        // The record of the answer in this run's file.
        let mut written_record: Option<String> = None;
        // The answer's body and its digest, computed once.
        let mut body: Option<(bytes::Bytes, String)> = None;
        let warc_err = |e: std::io::Error| format!("cannot write the WARC file: {e}");
        for (i, ex) in f.hops.iter().enumerate() {
            // A web archive holds HTTP exchanges: a local file's read is not one.
            let truncated = ex.response.body.as_ref().is_some_and(|b| b.truncated);
            if truncated || ex.url.scheme() == "file" {
                if i == last && f.outcome.is_ok() {
                    body = ex.response.body.as_ref().map(|b| {
                        let d = spinneret_core::digest::sha256_hex(&b.bytes);
                        (b.bytes.clone(), d)
                    });
                }
                continue;
            }
            let request = self
                .warc
                .request(ex.url.as_str(), &record::request_message(ex), now)
                .map_err(warc_err)?;
            if i < last || f.outcome.is_err() || f.alias.is_some() {
                self.warc
                    .response(
                        ex.url.as_str(),
                        &record::response_message(ex),
                        &request,
                        now,
                    )
                    .map_err(warc_err)?;
                continue;
            }
            // The answer: a revisit when its body is one a kept record
            // holds, else the whole response.
            let objects = objects_dir(&self.profile.mirror);
            let (bytes, d, revisit) =
                record::answer_body(ex, memory.as_ref(), &objects, &self.live)?;
            match (revisit, &memory) {
                (true, Some(m)) => {
                    let (record, date) = m.warc_record.clone().unwrap_or_default();
                    let holder = record::warc_file(self.store, self.profile, m.collection);
                    let id =
                        record::revisit(&mut self.warc, ex, bytes.len(), m, holder.as_deref(), now)
                            .map_err(warc_err)?;
                    written_record = Some(id);
                    // A record of a run being removed comes into this one
                    // at its end; until then its old run holds it (a run
                    // that stops short takes nothing in).
                    if self.dying.contains(&m.collection) {
                        self.adopted
                            .entry(m.collection)
                            .or_default()
                            .insert(record.clone(), url.to_string());
                    }
                    answer_record = Some((record, date, m.collection));
                }
                _ => {
                    let message = record::response_message(ex);
                    debug_assert_eq!(payload_digest(&message), format!("sha256:{d}"));
                    let id = self
                        .warc
                        .response(ex.url.as_str(), &message, &request, now)
                        .map_err(warc_err)?;
                    written_record = Some(id.clone());
                    answer_record = Some((id, now, self.run.id));
                }
            }
            body = Some((bytes, d));
        }
        f.outcome.map_err(|e| e.to_string())?;
        if let Some(next) = &f.alias {
            // Redirected to a URL this run fetched: its body, under this name.
            let got = match self.asked.get(next.as_str()) {
                Some(Some(got)) => got.clone(),
                Some(None) => {
                    return Err(format!("redirects to {next}, which could not be collected"));
                }
                None => {
                    return Err(format!(
                        "redirects to {next}, which redirects in turn and was not collected (a redirect loop?)"
                    ));
                }
            };
            let path = self.copy(category, url, &got, item)?;
            return Ok(Got { first: path, ..got });
        }
        let (ex, (body, d)) = f.hops.last().zip(body).ok_or("no answer was kept")?;
        let content_type = ex.response.headers.content_type.clone().or_else(|| {
            (ex.response.status == 304)
                .then(|| memory.as_ref().and_then(|m| m.content_type.clone()))
                .flatten()
        });
        let path = self
            .mirror
            .save_redirected(category, url, &ex.url, content_type.as_deref(), &body, &d)
            .map_err(|e| e.to_string())?;
        self.book(&path, url, category, &d, body.len() as u64, item);
        // A local file has no record; its body is this run's.
        let (warc_record, holder) = match answer_record {
            Some((record, date, holder)) => (Some((record, date)), holder),
            None => (None, self.run.id),
        };
        let remembered = record::remembered(
            ex,
            memory.as_ref(),
            content_type.clone(),
            &d,
            warc_record,
            holder,
        );
        self.memory.push((url.to_string(), remembered));
        Ok(Got {
            content_type,
            first: path,
            found: ex.url.clone(),
            digest: d,
            record: written_record,
        })
    }

    /// A metadata record beside a main page's answer in the WARC file: why
    /// the run has it (its category, depth and the engines that found it,
    /// with their ranks), as a crawler's metadata records say how it came
    /// to a URL.
    fn describe(&mut self, item: &Item, got: &Got) -> anyhow::Result<()> {
        let Some(record) = &got.record else {
            return Ok(());
        };
        let depth = item.depth.to_string();
        let found_by: Vec<String> = item
            .found_by
            .iter()
            .map(|(engine, rank)| format!("{engine} {rank}"))
            .collect();
        let mut fields = vec![("category", item.category.as_str()), ("depth", &depth)];
        fields.extend(found_by.iter().map(|f| ("found-by", f.as_str())));
        if got.found != item.url {
            fields.push(("found-at", got.found.as_str()));
        }
        self.warc
            .metadata(item.url.as_str(), Some(record), &fields, unix_now())
            .context("cannot write the WARC file")?;
        Ok(())
    }

    /// The text of what `url` saved in `category`.
    fn text(&self, category: &str, url: &Url) -> anyhow::Result<String> {
        let path = self.mirror.saved(category, url).unwrap_or_default();
        let bytes = std::fs::read(self.run_root.join(path))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Book the files written so far and what their URLs were.
    fn flush(&mut self) -> anyhow::Result<()> {
        self.store.book_files(self.run.id, &self.to_book)?;
        self.to_book.clear();
        self.store.remember_urls(&self.memory)?;
        self.memory.clear();
        Ok(())
    }
}

/// Put the last run's copy (of `carried`, from run `last`) in place of
/// each of `pages` this run could not fetch, saying so; the rest of
/// `carried` (the entries not due) is given back.
fn keep_last_copies(
    pages: &mut [MainPage],
    carried: Vec<MainPage>,
    last: &CollectionRow,
) -> Vec<MainPage> {
    let mut rest = Vec::new();
    for copy in carried {
        let failed = pages
            .iter_mut()
            .find(|p| p.path.is_none() && p.category == copy.category && p.url == copy.url);
        match failed {
            Some(page) => {
                let why = page
                    .problem
                    .take()
                    .unwrap_or_else(|| "not retrieved".into());
                *page = MainPage {
                    problem: Some(format!("{why}; the copy of run {} is kept", last.id)),
                    ..copy
                };
            }
            None => rest.push(copy),
        }
    }
    rest
}

/// Create run `run`'s directory and WARC file in `mirror`, booked in
/// `store`: the file's mirror-relative path, and its writer.
fn open_warc(
    store: &Store,
    mirror: &std::path::Path,
    run: &CollectionRow,
) -> anyhow::Result<(String, WarcWriter<BufWriter<std::fs::File>>)> {
    let warc_path = runs::warc_path(run);
    std::fs::create_dir_all(mirror.join(&run.dir))
        .with_context(|| format!("cannot create {}", mirror.join(&run.dir).display()))?;
    let warc_file = std::fs::File::create(mirror.join(&warc_path))
        .with_context(|| format!("cannot create {}", mirror.join(&warc_path).display()))?;
    store.book_files(
        run.id,
        &[CollectedFile {
            path: warc_path.clone(),
            url: None,
            category: None,
            digest: None,
            bytes: 0,
        }],
    )?;
    let warc = WarcWriter::new(
        BufWriter::new(warc_file),
        warc_path.rsplit('/').next().unwrap_or(&warc_path),
        concat!("spinneret/", env!("CARGO_PKG_VERSION")),
        run.started_at,
    )?;
    Ok((warc_path, warc))
}

/// The main page of each of `items` as run `run` retrieved it (`mains`:
/// where it was saved and its digest, or why not), with its title.
fn main_pages(
    items: &[Item],
    mains: &[Result<(String, String), String>],
    run: &CollectionRow,
    mirror: &std::path::Path,
    item_bytes: &[u64],
) -> Vec<MainPage> {
    let mut pages: Vec<MainPage> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let (path, digest, problem) = match &mains[i] {
            Ok((path, digest)) => (
                Some(format!("{}/{path}", run.dir)),
                Some(digest.clone()),
                None,
            ),
            Err(why) => (None, None, Some(why.clone())),
        };
        let title = path.as_ref().and_then(|p| {
            let text = std::fs::read(mirror.join(p)).ok()?;
            spinneret_crawl::parse::html::extract(&String::from_utf8_lossy(&text)).title
        });
        pages.push(MainPage {
            category: item.category.clone(),
            url: item.url.to_string(),
            title,
            found_by: item.found_by.clone(),
            path,
            digest,
            bytes: item_bytes[i],
            problem,
        });
    }
    pages
}

/// Bring forward from the last run (`carry_from`) the entries `not_due`
/// names and the main pages this run could not fetch (their files, their
/// WARC records into `warc`), the files booked for `run`: how many files
/// came, and the ids of the records taken.
fn carry_forward(
    store: &Store,
    mirror: &std::path::Path,
    (carry_from, replaced, run): (Option<&CollectionRow>, &[CollectionRow], &CollectionRow),
    not_due: &NotDue,
    pages: &mut Vec<MainPage>,
    warc: &mut WarcWriter<BufWriter<std::fs::File>>,
) -> anyhow::Result<(usize, HashSet<String>)> {
    let retrieved = pages.len();
    // The entries not due, and the pages this run could not fetch: the
    // last run's copies of both come forward.
    let mut carrying = not_due.clone();
    carrying.urls.extend(
        pages
            .iter()
            .filter(|p| p.path.is_none())
            .map(|p| (p.category.clone(), p.url.clone())),
    );
    if let Some(last) = carry_from.as_ref().filter(|_| !carrying.is_empty()) {
        let have: Vec<MainPage> = pages.iter().filter(|p| p.path.is_some()).cloned().collect();
        let (files, carried) = carry(store, mirror, last, run, &carrying, &have)?;
        let carried = keep_last_copies(&mut pages[..retrieved], carried, last);
        let urls: HashSet<String> = files.iter().filter_map(|f| f.url.clone()).collect();
        let last_warc = mirror.join(runs::warc_path(last));
        let goes = replaced.iter().any(|c| c.id == last.id);
        let carried_ids = carry::carry_records(&last_warc, urls.clone(), warc, goes)?;
        if goes {
            let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
            store.move_url_records(last.id, run.id, &urls)?;
        }
        store.book_files(run.id, &files)?;
        pages.extend(carried);
        return Ok((files.len(), carried_ids));
    }
    Ok((0, HashSet::new()))
}

/// What changed in `pages` since the last run (its detectors asked), and
/// the run's index written and booked (a failure to write it is said in
/// `problems`).
fn detect_and_index(
    asker: &mut Asker,
    profile: &Profile,
    store: &Store,
    (run, warc_path): (&CollectionRow, &str),
    (pages, retrieved): (&[MainPage], usize),
    problems: &mut Vec<String>,
) -> anyhow::Result<index::Detected> {
    let previous = match store.previous_collection(&runs::profile_key(profile), run.id)? {
        Some(p) => store.main_pages(p.id)?,
        None => Vec::new(),
    };
    store.save_main_pages(run.id, pages)?;
    let detected = index::detect(
        asker,
        profile,
        store,
        (pages, retrieved),
        &previous,
        run.started_at,
        problems,
    );
    let run_index = format!("{}/index.html", run.dir);
    if let Err(e) = index::write(
        asker,
        profile,
        run,
        warc_path,
        pages,
        &detected,
        &[run_index.clone(), "index.html".to_string()],
    ) {
        problems.push(e);
    }
    store.book_files(
        run.id,
        &[CollectedFile {
            path: run_index.clone(),
            url: None,
            category: None,
            digest: None,
            bytes: std::fs::metadata(profile.mirror.join(&run_index)).map_or(0, |m| m.len()),
        }],
    )?;
    Ok(detected)
}

/// The runs of `earlier` (newest first) that this run replaces, beyond
/// `keep_runs`: gone, WARC files and all, once it ends. The files of all
/// but the last go now (the seed's behaviour); how many went.
fn clean_up_before(
    store: &Store,
    profile: &Profile,
    earlier: &[CollectionRow],
) -> anyhow::Result<(Vec<CollectionRow>, usize)> {
    let mut cleaned = 0;
    let replaced: Vec<CollectionRow> = earlier
        .iter()
        .skip(profile.keep_runs.saturating_sub(1) as usize)
        .cloned()
        .collect();
    let last = earlier.first().map(|c| c.id);
    for c in &replaced {
        if last != Some(c.id) {
            cleaned += runs::remove_all_but_warc(store, &profile.mirror, c)?;
        }
    }
    Ok((replaced, cleaned))
}

/// Collect `items` into `profile`'s mirror with `asker`'s polite fetcher
/// (the one that asked the engines) and plugins, carrying forward what
/// `not_due` names from the last run.
pub fn collect(
    profile: &Profile,
    items: &[Item],
    not_due: &NotDue,
    asker: &mut Asker,
    stop: &AtomicBool,
) -> anyhow::Result<Collected> {
    let http = asker.http();
    let mirror = &profile.mirror;
    let store_file = store_path(mirror);
    std::fs::create_dir_all(store_file.parent().unwrap_or(mirror))
        .with_context(|| format!("cannot create the mirror at {}", mirror.display()))?;
    let _lock = spinneret_store::CrawlLock::acquire(&store_file)
        .map_err(|e| anyhow::anyhow!("{e} (another `collect` of this mirror is running?)"))?;
    let store = Store::open(&store_file)?;
    let key = runs::profile_key(profile);
    // Clean-up first: only the newest `keep_runs - 1` earlier runs stay.
    // The last run, when entries not due are carried from it, goes only
    // once they are. The others' files go now (the seed's behaviour) but
    // their WARC files, which go at the end: until then an unchanged
    // resource can still be asked conditionally and archived as a revisit
    // of their record, which this run takes into its own WARC file.
    let earlier = store.live_collections(&key)?;
    // The last run stays whole until this one ends: its entries not due
    // are carried from it, and so is a page this run cannot fetch (a run
    // while the sites are down keeps the last good copy).
    let carry_from = earlier.first().cloned();
    let (replaced, mut cleaned) = clean_up_before(&store, profile, &earlier)?;
    let run = store.begin_collection(&key, unix_now())?;
    // Every earlier run still booked has its WARC file until this one ends.
    let live: HashSet<i64> = store.live_collections(&key)?.iter().map(|c| c.id).collect();
    let (warc_path, warc) = open_warc(&store, mirror, &run)?;
    let run_root = mirror.join(&run.dir);
    let mut r = Run {
        http,
        stop,
        profile,
        items,
        store: &store,
        run: &run,
        mirror: MirrorWriter::with_objects(run_root.clone(), objects_dir(mirror)),
        run_root,
        warc,
        live,
        dying: replaced.iter().map(|c| c.id).collect(),
        adopted: HashMap::new(),
        asked: HashMap::new(),
        to_book: Vec::new(),
        memory: Vec::new(),
        before: HashMap::new(),
        item_bytes: vec![0; items.len()],
        requests: 0,
        failed: Vec::new(),
        policies: asker.policies(),
        avoided: Vec::new(),
    };
    let mains = retrieve::retrieve(&mut r)?;
    let stopped = stop.load(Ordering::Relaxed);
    r.flush()?;
    let Run {
        mirror: writer,
        mut warc,
        item_bytes,
        requests,
        failed,
        adopted,
        avoided,
        ..
    } = r;
    let mut written = writer.finish()?;
    // The run's files, named from the mirror's root.
    for f in &mut written.files {
        *f = format!("{}/{f}", run.dir);
    }
    let mut pages = main_pages(items, &mains, &run, mirror, &item_bytes);
    // What this run retrieved comes first; the entries not due follow.
    let retrieved = pages.len();
    let (carried_files, carried_ids) = carry_forward(
        &store,
        mirror,
        (carry_from.as_ref(), &replaced, &run),
        not_due,
        &mut pages,
        &mut warc,
    )?;
    // The records of the runs replaced that this run's revisits name; the
    // URLs they archive are then remembered with this run.
    let mut problems = carry::take_in_records(
        &store,
        mirror,
        &replaced,
        &adopted,
        &carried_ids,
        run.id,
        &mut warc,
    )?;
    problems.extend(
        asker
            .hook_failures()
            .into_iter()
            .map(|f| format!("plugin (a fetch hook or a policy): {f}")),
    );
    let log = record::run_log(profile, &run, requests, &failed, stopped);
    let log: Vec<(&str, &str)> = log.iter().map(|(k, v)| (*k, v.as_str())).collect();
    warc.metadata("metadata://spinneret/collect/log", None, &log, unix_now())?;
    warc.finish()?;
    for c in &replaced {
        cleaned += runs::remove_collection(&store, mirror, c)?;
    }
    let detected = detect_and_index(
        asker,
        profile,
        &store,
        (&run, &warc_path),
        (&pages, retrieved),
        &mut problems,
    )?;
    runs::collect_garbage(&store, mirror)?;
    let status = match stopped {
        true => "stopped",
        false => "finished",
    };
    store.end_collection(run.id, status, unix_now())?;
    Ok(Collected {
        run,
        written,
        requests,
        failed,
        avoided,
        pages,
        changes: detected.changes,
        gone: detected.gone,
        index: "index.html".into(),
        warc: warc_path,
        cleaned,
        carried_files,
        problems,
        stopped,
    })
}
