//! A WebSnatcher run (`spinneret collect PROFILE`): every explicit URL,
//! bookmark and search result of the profile fetched with its page
//! requisites (images, stylesheets and what they reference, scripts,
//! frames, icons, fonts) and its same-site links to the item's depth,
//! through the crawl's polite fetcher (robots.txt, the avoid files, the
//! per-site interval, the body cap), each URL once per run whichever items
//! reach it; everything saved in the mirror by category with its links
//! converted.

use crate::app::query::Asker;
use crate::snatch::convert::{Role, css_references, references};
use crate::snatch::mirror::{MirrorWriter, Written, category_dir};
use crate::snatch::profile::{EngineSource, Profile, Requisites};
use spinneret_crawl::plugin_http::PoliteHttp;
use spinneret_plugin_host::capabilities::{HostHttp, HttpAnswer};
use spinneret_plugin_host::entry::PluginSource;
use std::collections::{HashMap, VecDeque};
use url::Url;

/// One thing a run was asked to collect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    /// The page.
    pub url: Url,
    /// Its category (a directory of the mirror, `/`-separated).
    pub category: String,
    /// How many links deep to follow from it (same site).
    pub depth: u32,
}

/// What a run did.
#[derive(Debug, Default)]
pub struct Collected {
    /// The mirror's files and bytes.
    pub written: Written,
    /// Requests made.
    pub requests: u64,
    /// URLs that could not be fetched (refused by robots.txt or an avoid
    /// rule, a failure, an error status), with why.
    pub failed: Vec<(String, String)>,
}

/// The items of `profile`'s interests: each engine asked once per interest
/// by `asker`; a page found by several engines is collected once. An engine
/// that cannot be asked is reported and the others go on.
pub fn interest_items(
    profile: &Profile,
    asker: &mut Asker,
    problems: &mut Vec<String>,
) -> Vec<Item> {
    let mut items: Vec<Item> = Vec::new();
    for interest in &profile.interests {
        let mut seen = std::collections::HashSet::new();
        for name in &interest.engines {
            let Some(engine) = profile.engines.iter().find(|e| &e.name == name) else {
                continue;
            };
            let source = match &engine.source {
                EngineSource::Builtin(b) => PluginSource::Builtin(b.clone()),
                EngineSource::File(f) => PluginSource::File(f.clone()),
            };
            match asker.ask(
                source,
                engine.config.clone(),
                &interest.keywords,
                interest.max_results,
            ) {
                Ok(answer) => {
                    for hit in answer.hits {
                        let Ok(mut url) = Url::parse(&hit.url) else {
                            continue;
                        };
                        url.set_fragment(None);
                        if seen.insert(url.to_string()) {
                            items.push(Item {
                                url,
                                category: category_dir(&[&interest.title]),
                                depth: interest.depth,
                            });
                        }
                    }
                }
                Err(e) => problems.push(format!(
                    "interest `{}`, engine `{name}` ({}): {e:#}",
                    interest.title, engine.defined_at
                )),
            }
        }
    }
    items
}

/// The items of `profile`'s URLs and bookmarks, and how many bookmarks of
/// other schemes were left out.
pub fn items(profile: &Profile) -> Result<(Vec<Item>, usize), String> {
    let mut items: Vec<Item> = profile
        .urls
        .iter()
        .map(|u| Item {
            url: u.url.clone(),
            category: category_dir(&[&u.category]),
            depth: u.depth,
        })
        .collect();
    let mut skipped = 0;
    for b in &profile.bookmarks {
        let read = crate::snatch::bookmarks::read(&b.file)?;
        skipped += read.skipped;
        for mark in read.items {
            let mut parts = vec!["Bookmarks"];
            parts.extend(mark.folders.iter().map(String::as_str));
            items.push(Item {
                url: mark.url,
                category: category_dir(&parts),
                depth: b.depth,
            });
        }
    }
    Ok((items, skipped))
}

/// What the run fetched, by URL: each URL is asked once; its body lives
/// in the mirror (the first category that saved it), not in memory.
struct Retrieval<'p> {
    http: &'p PoliteHttp,
    profile: &'p Profile,
    mirror: MirrorWriter,
    /// Each URL asked: its content type, where its body was first saved and
    /// the URL it was found at, or none when it could not be had.
    asked: HashMap<String, Option<(Option<String>, String, Url)>>,
    out: Collected,
}

/// The most redirects followed from one URL.
const MAX_REDIRECTS: usize = 5;

/// What a URL led to: its content type and the URL it was found at
/// (after redirects).
type Found = (Option<String>, Url);

impl Retrieval<'_> {
    /// Save `url` in `category`, fetching it (and following its redirects,
    /// each hop asked politely) the first time it is asked for; what it led
    /// to, or none when it could not be had (said in `out.failed`).
    fn save(&mut self, category: &str, url: &Url) -> Option<Found> {
        if let Some(known) = self.asked.get(url.as_str()) {
            let (content_type, first, found) = known.clone()?;
            if self.mirror.saved(category, url).is_none() {
                let copied = std::fs::read(self.profile.mirror.join(&first)).and_then(|body| {
                    self.mirror.save_redirected(
                        category,
                        url,
                        &found,
                        content_type.as_deref(),
                        &body,
                    )
                });
                if let Err(e) = copied {
                    self.out.failed.push((url.to_string(), e.to_string()));
                    return None;
                }
            }
            return Some((content_type, found));
        }
        let got = self.fetch(url).and_then(|(answer, found)| {
            self.mirror
                .save_redirected(
                    category,
                    url,
                    &found,
                    answer.content_type.as_deref(),
                    &answer.body,
                )
                .map(|path| (answer.content_type, found, path))
                .map_err(|e| e.to_string())
        });
        match got {
            Ok((content_type, found, path)) => {
                self.asked.insert(
                    url.to_string(),
                    Some((content_type.clone(), path, found.clone())),
                );
                Some((content_type, found))
            }
            Err(e) => {
                self.out.failed.push((url.to_string(), e));
                self.asked.insert(url.to_string(), None);
                None
            }
        }
    }

    /// Fetch `url`, following up to [`MAX_REDIRECTS`] redirects: the answer
    /// and the URL it came from, or why not.
    fn fetch(&mut self, url: &Url) -> Result<(HttpAnswer, Url), String> {
        let mut at = url.clone();
        for _ in 0..=MAX_REDIRECTS {
            if self
                .profile
                .exclude
                .iter()
                .any(|x| at.as_str().starts_with(x))
            {
                return Err(match at == *url {
                    true => "excluded by the profile".to_string(),
                    false => format!("redirects to {at}, which the profile excludes"),
                });
            }
            self.out.requests += 1;
            let a = self.http.get(&at)?;
            match a.status {
                _ if a.truncated => {
                    return Err(format!(
                        "larger than the body cap ({} bytes): not saved",
                        a.body.len()
                    ));
                }
                200..=299 => return Ok((a, at)),
                300..=399 => {
                    let next = a
                        .location
                        .as_deref()
                        .and_then(|l| at.join(l.trim()).ok())
                        .filter(|n| matches!(n.scheme(), "http" | "https"))
                        .ok_or_else(|| {
                            format!("HTTP {} from {at} with no usable Location", a.status)
                        })?;
                    if local_host(&next) && !local_host(url) {
                        return Err(format!(
                            "{at} redirects to {next}: a page from elsewhere may not reach this machine or its network"
                        ));
                    }
                    at = next;
                }
                s => return Err(format!("HTTP {s}")),
            }
        }
        Err(format!("more than {MAX_REDIRECTS} redirects"))
    }

    /// The text of what `url` saved in the mirror.
    fn text(&self, category: &str, url: &Url) -> anyhow::Result<String> {
        let path = self.mirror.saved(category, url).unwrap_or_default();
        let bytes = std::fs::read(self.profile.mirror.join(path))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// Whether `url` names this machine or its local network by its host:
/// `localhost`, or a loopback, private, link-local or unspecified address.
/// A page from elsewhere may not make the collector reach those (names
/// that resolve there are not caught here).
fn local_host(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
        Some(url::Host::Ipv4(ip)) => {
            ip.is_loopback() || ip.is_private() || ip.is_link_local() || ip.is_unspecified()
        }
        Some(url::Host::Ipv6(ip)) => {
            ip.is_loopback()
                || ip.is_unspecified()
                || (ip.segments()[0] & 0xfe00) == 0xfc00
                || (ip.segments()[0] & 0xffc0) == 0xfe80
        }
        None => true,
    }
}

fn is(content_type: &Option<String>, mime: &str) -> bool {
    content_type
        .as_deref()
        .is_some_and(|c| c.trim().to_ascii_lowercase().starts_with(mime))
}

/// Collect `items` into `profile`'s mirror with the polite fetcher `http`
/// (the one that asked the engines: [`Asker::http`]).
pub fn collect(profile: &Profile, items: &[Item], http: &PoliteHttp) -> anyhow::Result<Collected> {
    let mut run = Retrieval {
        http,
        profile,
        mirror: MirrorWriter::new(profile.mirror.clone()),
        asked: HashMap::new(),
        out: Collected::default(),
    };
    let site = spinneret_core::urls::site_key;
    for item in items {
        // The item's pages, breadth first, with the links left to follow.
        let mut pages: VecDeque<(Url, u32)> = VecDeque::from([(item.url.clone(), item.depth)]);
        let mut seen = std::collections::HashSet::new();
        while let Some((mut page, depth)) = pages.pop_front() {
            page.set_fragment(None);
            if seen.contains(page.as_str()) {
                continue;
            }
            if seen.len() >= profile.max_pages as usize {
                // A site larger than the profile allows, or a trap: said once.
                run.out.failed.push((
                    page.to_string(),
                    format!(
                        "not followed: {} already has {} pages (`max_pages`)",
                        item.url, profile.max_pages
                    ),
                ));
                break;
            }
            seen.insert(page.to_string());
            let Some((content_type, found)) = run.save(&item.category, &page) else {
                continue;
            };
            if !is(&content_type, "text/html") {
                continue;
            }
            // The page's links are relative to where it was found.
            let page = found;
            let text = match run.text(&item.category, &page) {
                Ok(t) => t,
                Err(_) => continue,
            };
            let Ok(refs) = references(&text, &page) else {
                run.out
                    .failed
                    .push((page.to_string(), "its HTML could not be read".into()));
                continue;
            };
            let mut needed: VecDeque<Url> = VecDeque::new();
            for (role, url) in refs {
                if local_host(&url) && !local_host(&page) {
                    run.out.failed.push((
                        url.to_string(),
                        format!("referenced by {page}: a page from elsewhere may not reach this machine or its network"),
                    ));
                    continue;
                }
                match role {
                    Role::Requisite => needed.push_back(url),
                    Role::Link if depth > 0 && site(&url) == site(&page) => {
                        pages.push_back((url, depth - 1));
                    }
                    _ => {}
                }
            }
            // Its requisites, and what its stylesheets reference in turn.
            let mut done = std::collections::HashSet::new();
            while let Some(r) = needed.pop_front() {
                let off_site =
                    profile.requisites == Requisites::SameSite && site(&r) != site(&page);
                if off_site || !done.insert(r.to_string()) {
                    continue;
                }
                if let Some((ct, found)) = run.save(&item.category, &r)
                    && is(&ct, "text/css")
                    && let Ok(css) = run.text(&item.category, &r)
                {
                    let refs = css_references(&css, &found);
                    needed.extend(
                        refs.into_iter()
                            .filter(|u| !local_host(u) || local_host(&found)),
                    );
                }
            }
        }
    }
    let mut out = run.out;
    out.written = run.mirror.finish()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_hosts_are_known_by_name_and_address() {
        for local in [
            "http://localhost/",
            "http://a.localhost:8080/",
            "http://127.0.0.1/",
            "http://10.1.2.3/",
            "http://192.168.0.1/",
            "http://172.16.0.1/",
            "http://169.254.169.254/latest/meta-data/",
            "http://0.0.0.0/",
            "http://[::1]/",
            "http://[fd00::1]/",
            "http://[fe80::1]/",
        ] {
            assert!(local_host(&Url::parse(local).unwrap()), "{local}");
        }
        for remote in [
            "https://example.org/",
            "http://8.8.8.8/",
            "http://[2001:db8::1]/",
            "http://172.32.0.1/",
        ] {
            assert!(!local_host(&Url::parse(remote).unwrap()), "{remote}");
        }
    }
}
