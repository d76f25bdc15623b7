//! The pages a task's site lists in its sitemaps, for `check`: so that a
//! page nothing links to (an orphan) is checked too. The sitemaps are the
//! `Sitemap:` lines of the top's robots.txt and `/sitemap.xml`, and the
//! sitemaps a sitemap index lists, read on the network layer's polite path
//! (robots.txt obeyed, the site's turn, the body cap).
//!
//! A sitemap is no link of the site: one that is missing or unreadable is
//! no broken link. `/sitemap.xml`, which the site never announced, is
//! passed over in silence when it is not there; a sitemap robots.txt
//! names that cannot be read is said in a note.

use crate::parse::sitemap::{Listing, MAX_ENTRIES, read};
use spinneret_core::urls;
use spinneret_net::network::{Ask, Network};
use std::collections::{HashSet, VecDeque};
use url::Url;

/// The most sitemap files read for one top (an index and its sitemaps).
pub(crate) const MAX_SITEMAP_FILES: usize = 20;

/// How deep sitemap indexes are followed: an index's sitemaps, and no
/// index an index lists (the protocol has none; a loop ends here too).
const MAX_INDEX_DEPTH: u32 = 1;

/// What the sitemaps of a top gave.
#[derive(Debug, Default)]
pub(crate) struct SitemapPages {
    /// The pages listed, absolute, each once, in the order read (at most
    /// [`MAX_ENTRIES`]).
    pub(crate) pages: Vec<Url>,
    /// Requests made (sitemaps, and robots.txt when this read it first).
    pub(crate) requests: u64,
    /// What the user should hear: a sitemap robots.txt names that could
    /// not be read, a listing cut at the bound.
    pub(crate) notes: Vec<String>,
}

/// A sitemap to read: its URL, whether the site named it (robots.txt, or
/// an index), and how deep in indexes it is.
struct ToRead {
    url: Url,
    named_by: Option<String>,
    depth: u32,
}

/// Read the sitemaps of `top`'s site on `network`: robots.txt's
/// `Sitemap:` lines, then `/sitemap.xml` unless they named it.
pub(crate) async fn discover(network: &Network, top: &Url, max_body: u64) -> SitemapPages {
    let mut found = SitemapPages::default();
    let Some(robots_url) = urls::robots_url(top) else {
        return found;
    };
    let mut queue = VecDeque::new();
    // The user named the top: its site may be on their own machine.
    if let Ok(rules) = network.robots_rules(top, false, None).await {
        for line in &rules.sitemaps {
            match robots_url.join(line) {
                Ok(url) if matches!(url.scheme(), "http" | "https") => queue.push_back(ToRead {
                    url,
                    named_by: Some(format!("robots.txt of {}", urls::site_key(top))),
                    depth: 0,
                }),
                _ => found.notes.push(format!(
                    "robots.txt of {} names the sitemap `{line}`, which is not an http or https URL",
                    urls::site_key(top)
                )),
            }
        }
    }
    if let Ok(guess) = robots_url.join("/sitemap.xml")
        && !queue.iter().any(|s: &ToRead| s.url == guess)
    {
        queue.push_back(ToRead {
            url: guess,
            named_by: None,
            depth: 0,
        });
    }
    let mut read_already = HashSet::new();
    let mut listed = HashSet::new();
    while let Some(sitemap) = queue.pop_front() {
        if !read_already.insert(sitemap.url.clone()) {
            continue;
        }
        if read_already.len() > MAX_SITEMAP_FILES {
            found.notes.push(format!(
                "more than {MAX_SITEMAP_FILES} sitemaps for {top}: {} and those after it were not read",
                sitemap.url
            ));
            break;
        }
        let listing = match fetch(network, top, &sitemap.url, max_body, &mut found.requests).await {
            Ok(listing) => listing,
            Err(why) => {
                if let Some(by) = &sitemap.named_by {
                    found.notes.push(format!(
                        "the sitemap {} that {by} names {why}: the pages it lists were not looked for",
                        sitemap.url
                    ));
                }
                continue;
            }
        };
        match listing {
            Listing::Sitemaps(more) if sitemap.depth < MAX_INDEX_DEPTH => {
                for loc in more {
                    if let Ok(url) = sitemap.url.join(&loc) {
                        queue.push_back(ToRead {
                            url,
                            named_by: Some(format!("the sitemap index {}", sitemap.url)),
                            depth: sitemap.depth + 1,
                        });
                    }
                }
            }
            Listing::Sitemaps(_) => found.notes.push(format!(
                "{} is a sitemap index inside a sitemap index: not read",
                sitemap.url
            )),
            Listing::Pages(pages) => {
                for loc in pages {
                    let Ok(url) = sitemap.url.join(&loc) else {
                        continue;
                    };
                    if found.pages.len() >= MAX_ENTRIES {
                        found.notes.push(format!(
                            "the sitemaps of {top} list more than {MAX_ENTRIES} pages: the rest were not looked at"
                        ));
                        return found;
                    }
                    let url = urls::normalize(url);
                    if listed.insert(url.clone()) {
                        found.pages.push(url);
                    }
                }
            }
        }
    }
    found
}

/// Read one sitemap: what it lists, or why it cannot be read (said as
/// the end of a sentence: "answered 404").
async fn fetch(
    network: &Network,
    top: &Url,
    url: &Url,
    max_body: u64,
    requests: &mut u64,
) -> Result<Listing, String> {
    let ask = Ask {
        // A sitemap elsewhere (a CDN's) is held to the address rule.
        public_only: urls::site_key(url) != urls::site_key(top),
        ..Ask::get(url.clone())
    };
    let response = network.get(&ask).await;
    if response.is_ok() {
        *requests += 1;
    }
    let response = response.map_err(|e| format!("could not be read ({e})"))?;
    if response.status != 200 {
        return Err(format!("answered {}", response.status));
    }
    let body = response.body.map(|b| b.bytes).unwrap_or_default();
    read(&body, response.headers.content_type.as_deref(), max_body)
        .map_err(|e| format!("could not be read ({e})"))
}
