//! What a run is asked to collect: the profile's explicit URLs, its
//! bookmarks, and the hits of its interests' search engines (each engine
//! asked once per interest, a page found by several kept once with each
//! engine's rank).

use crate::mirror::category_dir;
use crate::profile::Profile;
use crate::query::{Asker, Excluding, plain_options};
use spinneret_core::urls::local_host;
use spinneret_plugin_host::search::SearchEngineOptions;
use std::collections::HashMap;
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
    /// The engines that found it, each with its rank (1 first); empty for
    /// explicit URLs and bookmarks.
    pub found_by: Vec<(String, u32)>,
    /// Whether the person named it (a URL or a bookmark of the profile),
    /// or an engine on this machine or its network found it: it may be on
    /// this machine or its network, and so may its own site's pages. A
    /// search hit of an engine elsewhere may not.
    pub trusted: bool,
}
/// What asking the engines of a profile's interests gave.
#[derive(Debug, Default)]
pub struct Asked {
    /// The pages found, each once.
    pub items: Vec<Item>,
    /// What went wrong: an engine that could not be asked, or a results
    /// page with nothing the plugin could read (the engine's page may have
    /// changed). A run with problems exits non-zero.
    pub problems: Vec<String>,
    /// What is worth knowing but is no fault: an engine that found nothing
    /// for the words, an option an engine cannot map.
    pub notes: Vec<String>,
}

/// The items of `profile`'s interests: each engine asked once per interest
/// by `asker`; a page found by several engines is collected once and
/// remembers each engine's rank. Hits the profile excludes are left out
/// before the engine's `max_results` are taken (the engine asked for more
/// where it can page), with no word of them but when they were all it
/// found. An engine that cannot be asked is reported and the others go
/// on.
pub fn interest_items(profile: &Profile, asker: &mut Asker) -> Asked {
    let mut asked = Asked::default();
    let Asked {
        items,
        problems,
        notes,
    } = &mut asked;
    for interest in &profile.interests {
        let mut at: HashMap<String, usize> = HashMap::new();
        for name in &interest.engines {
            let Some(engine) = profile.engines.iter().find(|e| &e.name == name) else {
                continue;
            };
            let options = SearchEngineOptions {
                phrase: interest.exact_phrase.clone(),
                exclude: interest.exclude_words.clone(),
                site: interest.site.clone(),
                ..plain_options(interest.max_results)
            };
            // What the profile excludes is no hit: it takes no place of
            // one that is, and is never fetched (nor listed as not).
            let not_of_interest = |url: &Url| profile.excludes(url);
            match asker.ask_excluding(engine, &interest.keywords, &options, &not_of_interest) {
                Ok(Excluding { answer, excluded }) => {
                    let about = || format!("interest `{}`, engine `{name}`", interest.title);
                    if !answer.ignored.is_empty() {
                        notes.push(format!(
                            "{}: the engine cannot restrict its results by {}; it searched without",
                            about(),
                            answer.ignored.join(", ")
                        ));
                    }
                    match &answer.no_results {
                        Some(words) if words.is_empty() => {
                            notes.push(format!("{}: the engine found nothing", about()))
                        }
                        Some(words) => notes.push(format!(
                            "{}: the engine found nothing (\"{words}\")",
                            about()
                        )),
                        None if answer.hits.is_empty() && excluded > 0 => notes.push(format!(
                            "{}: the profile excludes every hit the engine found",
                            about()
                        )),
                        None if answer.hits.is_empty() => problems.push(format!(
                            "{}: {} had no hits the plugin could read; the engine's page may have changed",
                            about(),
                            answer.query_url
                        )),
                        None => {}
                    }
                    let local_engine = local_host(&answer.query_url);
                    for hit in answer.hits {
                        let Ok(url) = Url::parse(&hit.url) else {
                            continue;
                        };
                        if local_host(&url) && !local_engine {
                            notes.push(format!(
                                "{}: hit {url} left out: an engine elsewhere may not make the collector reach this machine or its network",
                                about()
                            ));
                            continue;
                        }
                        let url = spinneret_core::urls::normalize(url);
                        let i = *at.entry(url.to_string()).or_insert_with(|| {
                            items.push(Item {
                                url,
                                category: category_dir(&[&interest.title]),
                                depth: interest.depth,
                                found_by: Vec::new(),
                                trusted: local_engine,
                            });
                            items.len() - 1
                        });
                        items[i].found_by.push((name.clone(), hit.rank));
                    }
                }
                Err(e) => problems.push(format!(
                    "interest `{}`, engine `{name}` ({}): {e:#}",
                    interest.title, engine.defined_at
                )),
            }
        }
    }
    asked
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
            found_by: Vec::new(),
            trusted: true,
        })
        .collect();
    let mut skipped = 0;
    for b in &profile.bookmarks {
        let read = crate::bookmarks::read(&b.file)?;
        skipped += read.skipped;
        for mark in read.items {
            let mut parts = vec!["Bookmarks"];
            parts.extend(mark.folders.iter().map(String::as_str));
            items.push(Item {
                url: mark.url,
                category: category_dir(&parts),
                depth: b.depth,
                found_by: Vec::new(),
                trusted: true,
            });
        }
    }
    Ok((items, skipped))
}
