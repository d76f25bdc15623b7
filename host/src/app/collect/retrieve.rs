//! The walk of a run: every item's URL, then the requisites and links of
//! what it fetched, breadth first over all items at once, a chunk of URLs
//! fetched together and then saved and read. Who may lead where is said
//! here too: a page from elsewhere never to this machine, a local file
//! only to files beside the profile's own, frames only two deep.

use super::fetch::{Fetched, Job, fetch_all};
use super::{Item, Run, is};
use crate::snatch::convert::{Role, css_references, references};
use crate::snatch::profile::Requisites;
use spinneret_core::urls::local_host;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::Ordering;
use url::Url;

/// How many queued URLs are fetched together before their pages are read
/// (bounds the bodies held in memory at once).
const CHUNK: usize = 4 * super::fetch::FETCHERS;

/// A URL waiting to be saved, for one item.
struct Entry {
    url: Url,
    item: usize,
    /// Links left to follow from it; none for a requisite.
    depth: Option<u32>,
    /// Whether it may be on this machine or its network: see [`reached`].
    trusted: bool,
    /// How many frames it is inside: a frame's page is read for its own
    /// requisites only [`MAX_FRAMES`] deep (a page may frame itself).
    frames: u8,
}

/// How deep frames inside frames are collected.
const MAX_FRAMES: u8 = 2;

/// Whether `url`, referenced by `page` (which the entry `from` fetched),
/// may be on this machine or its network: when `page` is there itself, or
/// when the person trusted `from` (an item of theirs) and `url` is on the
/// same host (an intranet site's own pages). Anything else was led to by
/// a page from elsewhere and must resolve to a public address.
fn reached(from: &Entry, page: &Url, url: &Url) -> bool {
    local_host(page) || (from.trusted && url.host_str() == page.host_str())
}

/// The directory that holds every local file among `items` (their
/// directories' common ancestor, `/`-terminated), if any is local.
fn local_root(items: &[Item]) -> Option<String> {
    items
        .iter()
        .filter(|it| it.url.scheme() == "file")
        .map(|it| {
            let p = it.url.path();
            p[..p.rfind('/').map_or(0, |i| i + 1)].to_string()
        })
        .reduce(|a, b| {
            let common = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
            a[..a[..common].rfind('/').map_or(0, |i| i + 1)].to_string()
        })
}

/// Whether `url` may be read: any URL of another scheme, but a local file
/// only under `root`, the directory of the profile's local items (a saved
/// page's `../../etc/passwd` may not copy the machine's files into a
/// mirror that may be published).
fn within_reach(root: Option<&str>, url: &Url) -> bool {
    url.scheme() != "file" || root.is_some_and(|r| url.path().starts_with(r))
}

/// Why `page` may not lead to `url`, if it may not: a page from elsewhere
/// to this machine or its network, or (when the reference is `followed`)
/// to a local file outside `root` ([`within_reach`]).
fn refused(page: &Url, url: &Url, root: Option<&str>, followed: bool) -> Option<String> {
    if local_host(url) && !local_host(page) {
        return Some(format!(
            "referenced by {page}: a page from elsewhere may not reach this machine or its network"
        ));
    }
    (followed && !within_reach(root, url)).then(|| {
        format!(
            "referenced by {page}: outside {}, the directory of the profile's local files; a local file may lead only to files under it",
            root.unwrap_or("(none: no item is a local file)")
        )
    })
}

/// Fetch and save every item with its requisites and links, breadth first
/// over all items at once; for each item, where its main page was saved
/// (relative to the run's directory) and its digest, or why it was not.
pub(super) fn retrieve(r: &mut Run<'_>) -> anyhow::Result<Vec<Result<(String, String), String>>> {
    let site = spinneret_core::urls::site_key;
    let items = r.items;
    let mut mains: Vec<Result<(String, String), String>> =
        vec![Err("not retrieved".to_string()); items.len()];
    let stopped_before = "not retrieved: the run was stopped before it was".to_string();
    let root = local_root(items);
    let root = root.as_deref();
    let mut queue: VecDeque<Entry> = items
        .iter()
        .enumerate()
        .map(|(i, it)| Entry {
            url: it.url.clone(),
            item: i,
            depth: Some(it.depth),
            trusted: it.trusted,
            frames: 0,
        })
        .collect();
    // The pages each item has queued (its budget is `max_pages`), and
    // whether it hit that.
    let mut pages_of: Vec<HashSet<String>> = items
        .iter()
        .map(|it| HashSet::from([it.url.to_string()]))
        .collect();
    let mut full: Vec<bool> = vec![false; items.len()];
    while !queue.is_empty() {
        if r.stop.load(Ordering::Relaxed) {
            for e in queue.drain(..) {
                let item = &items[e.item];
                if e.depth == Some(item.depth) && e.url == item.url && mains[e.item].is_err() {
                    mains[e.item] = Err(stopped_before.clone());
                }
            }
            break;
        }
        let chunk: Vec<Entry> = queue.drain(..queue.len().min(CHUNK)).collect();
        let mut jobs: Vec<Job> = Vec::new();
        let mut wanted: HashMap<String, usize> = HashMap::new();
        for e in &chunk {
            let key = e.url.as_str();
            if r.asked.contains_key(key) {
                continue;
            }
            match wanted.get(key) {
                // Reached by a trusted entry too: it may be local.
                Some(&j) => jobs[j].public_only &= !e.trusted,
                None => {
                    wanted.insert(key.to_string(), jobs.len());
                    jobs.push(Job {
                        url: e.url.clone(),
                        validators: r.validators(&e.url),
                        public_only: !e.trusted,
                    });
                }
            }
        }
        let asked = &r.asked;
        let known = |u: &str| asked.contains_key(u) || wanted.contains_key(u);
        let results = fetch_all(r.http, &jobs, &r.profile.exclude, &known, r.stop);
        let mut fetched: HashMap<String, Fetched> = jobs
            .into_iter()
            .map(|j| j.url.to_string())
            .zip(results)
            .collect();
        // What redirects to a URL of this batch waits for that URL.
        let (aliases, direct): (Vec<Entry>, Vec<Entry>) = chunk.into_iter().partition(|e| {
            fetched
                .get(e.url.as_str())
                .is_some_and(|f| f.alias.is_some())
        });
        for e in direct.into_iter().chain(aliases) {
            let item = &items[e.item];
            let category = item.category.as_str();
            let is_main = e.depth == Some(item.depth) && e.url == item.url;
            let saved = r.save(category, &e.url, e.item, &mut fetched);
            if e.depth.is_none() {
                // A requisite: saved, and a stylesheet's own references
                // queued; a frame's page goes on below as a page of depth 0
                // (its requisites fetched, its links not followed).
                let Some((got, true)) = &saved else {
                    continue;
                };
                if is(got.content_type.as_deref(), "text/css")
                    && let Ok(css) = r.text(category, &e.url)
                {
                    for u in css_references(&css, &got.found) {
                        if let Some(why) = refused(&got.found, &u, root, true) {
                            r.failed.push((u.to_string(), why));
                            continue;
                        }
                        let trusted = reached(&e, &got.found, &u);
                        if r.profile.requisites == Requisites::SameSite
                            && site(&u) != site(&got.found)
                        {
                            continue;
                        }
                        if r.mirror.saved(category, &u).is_none() {
                            queue.push_back(Entry {
                                url: u,
                                item: e.item,
                                depth: None,
                                trusted,
                                frames: e.frames,
                            });
                        }
                    }
                }
                // Not a frame's page, or one framed too deep.
                if !is(got.content_type.as_deref(), "text/html") || e.frames >= MAX_FRAMES {
                    continue;
                }
            }
            let depth = e.depth.unwrap_or(0);
            // What this page needs is inside one frame more when it is a frame.
            let inside = e.frames + u8::from(e.depth.is_none());
            let Some((got, _)) = saved else {
                if is_main {
                    let why = r
                        .failed
                        .iter()
                        .rev()
                        .find(|(u, _)| u == e.url.as_str())
                        .map_or("not retrieved".to_string(), |(_, w)| w.clone());
                    mains[e.item] = Err(why);
                }
                continue;
            };
            if is_main {
                let path = r
                    .mirror
                    .saved(category, &e.url)
                    .unwrap_or_default()
                    .to_string();
                mains[e.item] = Ok((path, got.digest.clone()));
                r.describe(item, &got)?;
            }
            if !is(got.content_type.as_deref(), "text/html") {
                continue;
            }
            // The page's links are relative to where it was found.
            let page = got.found.clone();
            let Ok(text) = r.text(category, &e.url) else {
                continue;
            };
            let Ok(refs) = references(&text, &page) else {
                r.failed
                    .push((page.to_string(), "its HTML could not be read".into()));
                continue;
            };
            for (role, url) in refs {
                let followed = match role {
                    Role::Requisite => true,
                    Role::Link => depth > 0 && site(&url) == site(&page),
                    Role::Other => false,
                };
                if let Some(why) = refused(&page, &url, root, followed) {
                    r.failed.push((url.to_string(), why));
                    continue;
                }
                let trusted = reached(&e, &page, &url);
                match role {
                    Role::Requisite => {
                        let off_site = r.profile.requisites == Requisites::SameSite
                            && site(&url) != site(&page);
                        if !off_site && r.mirror.saved(category, &url).is_none() {
                            queue.push_back(Entry {
                                url,
                                item: e.item,
                                depth: None,
                                trusted,
                                frames: inside,
                            });
                        }
                    }
                    Role::Link if depth > 0 && site(&url) == site(&page) => {
                        let reached = &mut pages_of[e.item];
                        if reached.contains(url.as_str()) {
                            continue;
                        }
                        if reached.len() >= r.profile.max_pages as usize {
                            // A site larger than the profile allows, or a trap: said once.
                            if !full[e.item] {
                                full[e.item] = true;
                                r.failed.push((
                                    url.to_string(),
                                    format!(
                                        "not followed: {} already has {} pages (`max_pages`)",
                                        item.url, r.profile.max_pages
                                    ),
                                ));
                            }
                            continue;
                        }
                        reached.insert(url.to_string());
                        queue.push_back(Entry {
                            url,
                            item: e.item,
                            depth: Some(depth - 1),
                            trusted,
                            frames: 0,
                        });
                    }
                    _ => {}
                }
            }
        }
        r.before.clear();
        r.flush()?;
    }
    Ok(mains)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_local_root_holds_every_local_item() {
        let item = |u: &str| Item {
            url: Url::parse(u).unwrap(),
            category: "URLs".into(),
            depth: 0,
            found_by: Vec::new(),
            trusted: true,
        };
        assert_eq!(local_root(&[item("https://e.org/a.html")]), None);
        assert_eq!(
            local_root(&[item("file:///w/site/index.html")]).as_deref(),
            Some("/w/site/")
        );
        assert_eq!(
            local_root(&[
                item("file:///w/site/index.html"),
                item("file:///w/site/docs/guide.html"),
                item("https://e.org/"),
            ])
            .as_deref(),
            Some("/w/site/")
        );
        // A common prefix of names is no common directory.
        assert_eq!(
            local_root(&[
                item("file:///w/site/a.html"),
                item("file:///w/sitemap/b.html")
            ])
            .as_deref(),
            Some("/w/")
        );
        let r = Some("/w/site/");
        assert!(within_reach(
            r,
            &Url::parse("file:///w/site/img/a.png").unwrap()
        ));
        assert!(!within_reach(
            r,
            &Url::parse("file:///w/secret.txt").unwrap()
        ));
        assert!(!within_reach(
            None,
            &Url::parse("file:///etc/passwd").unwrap()
        ));
        assert!(within_reach(None, &Url::parse("https://e.org/").unwrap()));
    }
}
