//! The walk of a run: every item's URL, then the requisites and links of
//! what it fetched, breadth first over all items at once, a chunk of URLs
//! fetched together and then saved and read. Who may lead where is said
//! here too: a page from elsewhere never to this machine, a local file
//! only to files beside the profile's own, frames only two deep.

use super::fetch::{Fetched, Job, Scope, fetch_one};
use super::{Got, Item, Run, is};
use crate::convert::{Role, css_references, references};
use crate::profile::Requisites;
use spinneret_core::document::RefKind;
use spinneret_core::urls::local_host;
use spinneret_crawl::policy::Decision;
use spinneret_plugin_host::bindings::host::types as wit;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use tokio::task::JoinSet;
use url::Url;

/// A URL waiting to be saved, for one item.
struct Entry {
    url: Url,
    item: usize,
    /// Links left to follow from it; none for a requisite.
    depth: Option<u32>,
    /// How many frames it is inside: a frame's page is read for its own
    /// requisites only [`MAX_FRAMES`] deep (a page may frame itself).
    frames: u8,
}

/// How deep frames inside frames are collected.
const MAX_FRAMES: u8 = 2;

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

/// Why `page` may not lead to `url`, if it may not: to this machine or
/// its network when `url`'s site is not `open` (one the person named; the
/// network layer judges a name by the address it resolves to, this the
/// names and addresses written as such), or (when the reference is
/// `followed`) to a local file outside `root` ([`within_reach`]).
fn refused(
    page: &Url,
    url: &Url,
    root: Option<&str>,
    followed: bool,
    open: bool,
) -> Option<String> {
    if local_host(url) && !open {
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

/// What the walk shares with its fetches: the profile's exclusions, the
/// sites the person named, and the URLs the run asks anyway.
struct RunScope {
    exclude: Vec<String>,
    /// Sites of the person's own items (`site_key`): the only ones that
    /// may be on this machine or its network.
    open: HashSet<String>,
    /// URLs asked or in flight.
    known: Mutex<HashSet<String>>,
}

impl Scope for RunScope {
    fn excluded(&self, url: &Url) -> bool {
        self.exclude.iter().any(|x| url.as_str().starts_with(x))
    }

    fn open(&self, url: &Url) -> bool {
        url.scheme() == "file" || self.open.contains(&spinneret_core::urls::site_key(url))
    }

    fn known(&self, url: &str) -> bool {
        self.known
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(url)
    }
}

/// The entries waiting to be fetched, a queue per site, taken in turn
/// across sites: no more of one site's in flight than its connections
/// (the network layer's gate would only make the rest wait), and no
/// more in all than the run's `concurrency`.
struct Dispatch {
    waiting: HashMap<String, VecDeque<Entry>>,
    /// Sites with entries waiting and room in flight, each once.
    ready: VecDeque<String>,
    listed: HashSet<String>,
    busy: HashMap<String, usize>,
    per_site: usize,
    in_flight: usize,
    limit: usize,
    len: usize,
}

impl Dispatch {
    fn new(per_site: usize, limit: usize) -> Dispatch {
        Dispatch {
            waiting: HashMap::new(),
            ready: VecDeque::new(),
            listed: HashSet::new(),
            busy: HashMap::new(),
            per_site: per_site.max(1),
            in_flight: 0,
            limit: limit.max(1),
            len: 0,
        }
    }

    fn list(&mut self, site: &str) {
        let room = self.busy.get(site).copied().unwrap_or(0) < self.per_site;
        let has = self.waiting.get(site).is_some_and(|q| !q.is_empty());
        if room && has && self.listed.insert(site.to_string()) {
            self.ready.push_back(site.to_string());
        }
    }

    fn push(&mut self, e: Entry) {
        let site = spinneret_core::urls::site_key(&e.url);
        self.waiting.entry(site.clone()).or_default().push_back(e);
        self.len += 1;
        self.list(&site);
    }

    /// The next entry that may start, and its site.
    fn take(&mut self) -> Option<(Entry, String)> {
        if self.in_flight >= self.limit {
            return None;
        }
        let site = self.ready.pop_front()?;
        self.listed.remove(&site);
        let e = self.waiting.get_mut(&site)?.pop_front()?;
        self.len -= 1;
        *self.busy.entry(site.clone()).or_default() += 1;
        self.in_flight += 1;
        self.list(&site);
        Some((e, site))
    }

    /// An entry of `site` taken is done.
    fn done(&mut self, site: &str) {
        if let Some(b) = self.busy.get_mut(site) {
            *b = b.saturating_sub(1);
        }
        self.in_flight = self.in_flight.saturating_sub(1);
        self.list(site);
    }

    fn drain(&mut self) -> impl Iterator<Item = Entry> + '_ {
        self.len = 0;
        self.ready.clear();
        self.listed.clear();
        self.waiting.drain().flat_map(|(_, q)| q)
    }
}

/// The walk's own state besides the run's.
struct Walk {
    mains: Vec<Result<(String, String), String>>,
    root: Option<String>,
    /// The pages each item has queued (its budget is `max_pages`), and
    /// whether it hit that.
    pages_of: Vec<HashSet<String>>,
    full: Vec<bool>,
    /// The links each item's policies said to avoid: said once, asked once.
    avoided_of: Vec<HashSet<String>>,
    dispatch: Dispatch,
    scope: Arc<RunScope>,
}

/// How many answers are saved between two bookings in the store.
const BOOK_EVERY: usize = 64;

/// Fetch and save every item with its requisites and links, breadth first
/// over all items at once, on the network layer: as many requests in
/// flight as the settings allow (`concurrency`, `per_site_connections`),
/// each answer saved and read as it arrives. For each item, where its main
/// page was saved (relative to the run's directory) and its digest, or why
/// it was not.
pub(super) fn retrieve(r: &mut Run<'_>) -> anyhow::Result<Vec<Result<(String, String), String>>> {
    let handle = r.http.handle().clone();
    handle.block_on(walk(r))
}

async fn walk(r: &mut Run<'_>) -> anyhow::Result<Vec<Result<(String, String), String>>> {
    let items = r.items;
    let stopped_before = "not retrieved: the run was stopped before it was".to_string();
    let net = r.http.network().clone();
    let scope = Arc::new(RunScope {
        exclude: r.profile.exclude.clone(),
        open: items
            .iter()
            .filter(|it| it.trusted)
            .map(|it| spinneret_core::urls::site_key(&it.url))
            .collect(),
        known: Mutex::default(),
    });
    let mut w = Walk {
        mains: vec![Err("not retrieved".to_string()); items.len()],
        root: local_root(items),
        pages_of: items
            .iter()
            .map(|it| HashSet::from([it.url.to_string()]))
            .collect(),
        full: vec![false; items.len()],
        avoided_of: vec![HashSet::new(); items.len()],
        dispatch: Dispatch::new(r.http.per_site_connections(), r.http.concurrency()),
        scope: scope.clone(),
    };
    for (i, it) in items.iter().enumerate() {
        w.dispatch.push(Entry {
            url: it.url.clone(),
            item: i,
            depth: Some(it.depth),
            frames: 0,
        });
    }
    // Entries waiting for the answer of a URL in flight, by URL.
    let mut waiting: HashMap<String, Vec<Entry>> = HashMap::new();
    // Answers that redirect to a URL in flight, waiting for its answer.
    let mut parked: HashMap<String, Vec<(String, Vec<Entry>, Fetched)>> = HashMap::new();
    let mut tasks: JoinSet<(String, String, Fetched)> = JoinSet::new();
    let mut saved = 0;
    loop {
        let stop = r.stop.load(Ordering::Relaxed);
        while !stop && let Some((e, site)) = w.dispatch.take() {
            let key = e.url.to_string();
            if r.asked.contains_key(&key) {
                w.dispatch.done(&site);
                let mut none = HashMap::new();
                w.settle(r, e, &mut none)?;
                continue;
            }
            if let Some(list) = waiting.get_mut(&key) {
                list.push(e);
                w.dispatch.done(&site);
                continue;
            }
            scope
                .known
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(key.clone());
            let job = Job {
                url: e.url.clone(),
                validators: r.validators(&e.url),
                public_only: !scope.open(&e.url),
            };
            waiting.insert(key.clone(), vec![e]);
            let (net, scope) = (net.clone(), scope.clone());
            tasks.spawn(async move {
                let fetched = fetch_one(&net, &job, scope.as_ref()).await;
                (key, site, fetched)
            });
        }
        let Some(done) = tasks.join_next().await else {
            // Nothing in flight: what waits on a redirect's target that
            // will not come (a loop of aliases) is settled as it is.
            let stuck: Vec<_> = parked.drain().flat_map(|(_, v)| v).collect();
            for (key, entries, fetched) in stuck {
                w.answered(r, key, entries, fetched)?;
            }
            if stop || w.dispatch.len == 0 {
                break;
            }
            continue;
        };
        let (key, site, fetched) = done?;
        w.dispatch.done(&site);
        let entries = waiting.remove(&key).unwrap_or_default();
        if let Some(next) = fetched.alias.clone()
            && !r.asked.contains_key(next.as_str())
            && waiting.contains_key(next.as_str())
        {
            parked
                .entry(next.to_string())
                .or_default()
                .push((key, entries, fetched));
            continue;
        }
        // This answer, then what was parked on it (and on those).
        let mut settle = vec![(key, entries, fetched)];
        while let Some((key, entries, fetched)) = settle.pop() {
            settle.extend(parked.remove(&key).unwrap_or_default());
            w.answered(r, key, entries, fetched)?;
        }
        saved += 1;
        if saved % BOOK_EVERY == 0 {
            r.flush()?;
        }
    }
    let mut unasked = HashSet::new();
    for e in w.dispatch.drain().collect::<Vec<_>>() {
        if !r.asked.contains_key(e.url.as_str()) && unasked.insert(e.url.to_string()) {
            r.failed
                .push((e.url.to_string(), super::fetch::STOPPED.into()));
        }
        let item = &items[e.item];
        if e.depth == Some(item.depth) && e.url == item.url && w.mains[e.item].is_err() {
            w.mains[e.item] = Err(stopped_before.clone());
        }
    }
    // A link avoided in one item's walk and collected in another's is
    // not said to be avoided.
    r.avoided
        .retain(|(url, _)| !w.pages_of.iter().any(|p| p.contains(url.as_str())));
    r.before.clear();
    r.flush()?;
    Ok(w.mains)
}

impl Walk {
    /// Save the answer `fetched` of `key` for every entry that waited on it.
    fn answered(
        &mut self,
        r: &mut Run<'_>,
        key: String,
        entries: Vec<Entry>,
        fetched: Fetched,
    ) -> anyhow::Result<()> {
        let mut one = HashMap::from([(key, fetched)]);
        for e in entries {
            self.settle(r, e, &mut one)?;
        }
        Ok(())
    }

    /// Save entry `e` (from what the run has, or from `fetched`) and queue
    /// what it leads to: a stylesheet's references, a page's requisites
    /// and same-site links to its depth, a frame's requisites.
    fn settle(
        &mut self,
        r: &mut Run<'_>,
        e: Entry,
        fetched: &mut HashMap<String, Fetched>,
    ) -> anyhow::Result<()> {
        let site = spinneret_core::urls::site_key;
        let items = r.items;
        let root = self.root.clone();
        let root = root.as_deref();
        let item = &items[e.item];
        let category = item.category.as_str();
        let is_main = e.depth == Some(item.depth) && e.url == item.url;
        let saved = r.save(category, &e.url, e.item, fetched);
        if e.depth.is_none() {
            // A requisite: saved, and a stylesheet's own references
            // queued; a frame's page goes on below as a page of depth 0
            // (its requisites fetched, its links not followed).
            let Some((got, true)) = &saved else {
                return Ok(());
            };
            if is(got.content_type.as_deref(), "text/css") {
                self.queue_stylesheet_references(r, &e, got);
            }
            // Not a frame's page, or one framed too deep.
            if !is(got.content_type.as_deref(), "text/html") || e.frames >= MAX_FRAMES {
                return Ok(());
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
                self.mains[e.item] = Err(why);
            }
            return Ok(());
        };
        if is_main {
            let path = r
                .mirror
                .saved(category, &e.url)
                .unwrap_or_default()
                .to_string();
            self.mains[e.item] = Ok((path, got.digest.clone()));
            r.describe(item, &got)?;
        }
        if !is(got.content_type.as_deref(), "text/html") {
            return Ok(());
        }
        // The page's links are relative to where it was found.
        let page = got.found.clone();
        let Ok(text) = r.text(category, &e.url) else {
            return Ok(());
        };
        let Ok(refs) = references(&text, &page) else {
            r.failed
                .push((page.to_string(), "its HTML could not be read".into()));
            return Ok(());
        };
        let mut requisites = 0;
        let verdicts = self.policy_verdicts(r, &e, &page, &refs);
        for (role, url) in refs {
            let followed = match role {
                Role::Requisite => true,
                Role::Link => depth > 0 && site(&url) == site(&page),
                Role::Other => false,
            };
            if let Some(why) = refused(&page, &url, root, followed, self.scope.open(&url)) {
                r.failed.push((url.to_string(), why));
                continue;
            }
            match role {
                Role::Requisite => {
                    let off_site =
                        r.profile.requisites == Requisites::SameSite && site(&url) != site(&page);
                    if off_site || r.mirror.saved(category, &url).is_some() {
                        continue;
                    }
                    if !self.within_cap(r, &page, &mut requisites) {
                        continue;
                    }
                    self.dispatch.push(Entry {
                        url,
                        item: e.item,
                        depth: None,
                        frames: inside,
                    });
                }
                Role::Link if depth > 0 && site(&url) == site(&page) => {
                    let verdict = verdicts.get(url.as_str());
                    self.follow(r, e.item, url, depth - 1, verdict);
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Queue the page `url` of `item`, `depth` links left to follow from
    /// it, unless the item has it already or has `max_pages` (said once)
    /// or a policy's `verdict` avoids it; a policy's `leaf` queues it with
    /// no link to follow.
    fn follow(
        &mut self,
        r: &mut Run<'_>,
        item: usize,
        url: Url,
        depth: u32,
        verdict: Option<&Decision>,
    ) {
        let reached = &mut self.pages_of[item];
        if reached.contains(url.as_str()) || self.avoided_of[item].contains(url.as_str()) {
            return;
        }
        // A policy's `avoid` leaves the page out (said once); its `leaf`
        // collects it without following its links.
        let depth = match verdict {
            Some(Decision::Avoid(why)) => {
                self.avoided_of[item].insert(url.to_string());
                r.avoided.push((url.to_string(), why.clone()));
                return;
            }
            Some(Decision::Leaf(_)) => 0,
            _ => depth,
        };
        let max_pages = r.profile.max_pages;
        if reached.len() >= max_pages as usize {
            // A site larger than the profile allows, or a trap: said once.
            if !self.full[item] {
                self.full[item] = true;
                r.failed.push((
                    url.to_string(),
                    format!(
                        "not followed: {} already has {max_pages} pages (`max_pages`)",
                        r.items[item].url
                    ),
                ));
            }
            return;
        }
        reached.insert(url.to_string());
        self.dispatch.push(Entry {
            url,
            item,
            depth: Some(depth),
            frames: 0,
        });
    }

    /// The profile's policies' verdicts on the links of `page` (entry `e`)
    /// the walk would follow (same site, depth left, not reached yet), in
    /// one call per policy, each asked as a crawl asks it: the item as a
    /// `site` task, the page as the referrer, the links' depth from the
    /// item. None when the profile has no policy.
    fn policy_verdicts(
        &self,
        r: &Run<'_>,
        e: &Entry,
        page: &Url,
        refs: &[(Role, Url)],
    ) -> HashMap<String, Decision> {
        let Some(policies) = r.policies.as_ref() else {
            return HashMap::new();
        };
        let depth = e.depth.unwrap_or(0);
        let site = spinneret_core::urls::site_key;
        let (reached, avoided) = (&self.pages_of[e.item], &self.avoided_of[e.item]);
        let asked: Vec<(String, RefKind)> = refs
            .iter()
            .filter(|(role, url)| {
                *role == Role::Link
                    && depth > 0
                    && site(url) == site(page)
                    && !reached.contains(url.as_str())
                    && !avoided.contains(url.as_str())
            })
            .map(|(_, url)| (url.to_string(), RefKind::Anchor))
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        if asked.is_empty() {
            return HashMap::new();
        }
        let item = &r.items[e.item];
        let task = wit::TaskInfo {
            name: item.url.to_string(),
            kind: wit::TaskKind::Site,
            top: item.url.to_string(),
            email: None,
            changed_days: 0,
            expiring_days: 0,
        };
        let links_deep = item.depth - depth + 1;
        let verdicts = spinneret_crawl::hooks::off_reactor(|| {
            policies.decide_each(task, Some(page.to_string()), links_deep, asked.clone())
        });
        asked
            .into_iter()
            .zip(verdicts)
            .filter_map(|((url, _), v)| Some((url, v?)))
            .collect()
    }

    /// Queue what the stylesheet `e` (saved as `got`) references: its
    /// images, fonts and imports, as requisites of the same item.
    fn queue_stylesheet_references(&mut self, r: &mut Run<'_>, e: &Entry, got: &Got) {
        let site = spinneret_core::urls::site_key;
        let category = r.items[e.item].category.as_str();
        let Ok(css) = r.text(category, &e.url) else {
            return;
        };
        let root = self.root.clone();
        let mut requisites = 0;
        for u in css_references(&css, &got.found) {
            let open = self.scope.open(&u);
            if let Some(why) = refused(&got.found, &u, root.as_deref(), true, open) {
                r.failed.push((u.to_string(), why));
                continue;
            }
            if r.profile.requisites == Requisites::SameSite && site(&u) != site(&got.found) {
                continue;
            }
            if r.mirror.saved(category, &u).is_none() {
                if !self.within_cap(r, &got.found, &mut requisites) {
                    break;
                }
                self.dispatch.push(Entry {
                    url: u,
                    item: e.item,
                    depth: None,
                    frames: e.frames,
                });
            }
        }
    }

    /// Whether `page` may have one requisite more queued (`count` so far):
    /// at most the profile's `max_requisites`, the first one past it said.
    fn within_cap(&self, r: &mut Run<'_>, page: &Url, count: &mut u32) -> bool {
        *count += 1;
        let cap = r.profile.max_requisites;
        if *count == cap + 1 {
            r.failed.push((
                page.to_string(),
                format!(
                    "has more than {cap} requisites (images, stylesheets, scripts, frames): the rest were not fetched (`max_requisites`)"
                ),
            ));
        }
        *count <= cap
    }
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
