//! Where a finding is shown, for reports that point at a file and line
//! (`sarif-report`, `github-annotations`): what a report keeps while the
//! documents come, so that each finding can name the file and line of
//! every link to its URL without the report holding every reference, and
//! how a `file:` URL is named relative to a configured `base`.

use crate::reporter::*;
use crate::urls::Url;
use serde_json::Value;
use std::collections::HashMap;

/// The finding kinds about following a link, shown at each link to the
/// finding's URL. Any other kind (`expiring`, `bad-html`,
/// `content-changed`, …) is about the URL itself and is shown there.
pub const LINK_KINDS: [&str; 4] = ["broken", "blocked", "moved", BROKEN_FRAGMENT];

/// A place to show a finding at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spot {
    /// The document with the link, or the finding's URL itself.
    pub url: String,
    /// The link's line in the document's source, from 1; 0 when not known.
    pub line: u32,
    /// Whether `url` is a document that links to the finding's URL (and
    /// not that URL itself).
    pub linking: bool,
}

/// What a task's report keeps of its documents: only what a finding can
/// point at.
#[derive(Debug, Default)]
pub struct Places {
    /// The URL of each document with a reference a finding can be about,
    /// by number (document 1 first); empty for the others.
    urls: Vec<Box<str>>,
    /// The line (never 0) of each reference a finding can be about, by
    /// document and reference number: a reference whose target is not ok
    /// (broken, blocked, moved, …) or has a fragment.
    lines: HashMap<(u32, u32), u32>,
}

impl Places {
    /// Keep what findings can point at in a document, or in a part of one.
    pub fn add(&mut self, d: &TaskDocument) {
        let Some(i) = (d.number as usize).checked_sub(1) else {
            return;
        };
        let mut any = false;
        for (j, r) in d.document.references.iter().enumerate() {
            let pointed = r.target.contains('#')
                || d.targets
                    .get(j)
                    .is_none_or(|t| t.category != Some(Category::Ok));
            if !pointed {
                continue;
            }
            any = true;
            if let Some(&line) = d.lines.get(j)
                && line != 0
            {
                let reference = d.first_reference + j as u32 + 1;
                self.lines.insert((d.number, reference), line);
            }
        }
        if any {
            if self.urls.len() <= i {
                self.urls.resize(i + 1, Box::default());
            }
            if self.urls[i].is_empty() {
                self.urls[i] = d.document.url.as_str().into();
            }
        }
    }

    /// Where to show `f`. A finding about following a link: each link to
    /// its URL (the referring document and the link's line); when the
    /// host names none (a broken fragment), the document that refers to
    /// it; when there is none either (a broken top), the URL itself. Any
    /// other finding: its URL.
    pub fn spots(&self, f: &TaskFinding) -> Vec<Spot> {
        let finding = &f.finding;
        if LINK_KINDS.contains(&finding.kind.as_str()) {
            let spots: Vec<Spot> = f
                .referred_from
                .iter()
                .filter_map(|p| self.spot(p))
                .collect();
            if !spots.is_empty() {
                return spots;
            }
            if let Some(referrer) = &finding.referrer {
                return vec![Spot {
                    url: referrer.clone(),
                    line: 0,
                    linking: true,
                }];
            }
        }
        vec![Spot {
            url: finding.url.clone(),
            line: 0,
            linking: false,
        }]
    }

    /// The spot of the reference at `p`, when its document came.
    fn spot(&self, p: &Place) -> Option<Spot> {
        let url = self.urls.get((p.document as usize).checked_sub(1)?)?;
        if url.is_empty() {
            return None;
        }
        Some(Spot {
            url: url.to_string(),
            line: self
                .lines
                .get(&(p.document, p.reference))
                .copied()
                .unwrap_or(0),
            linking: true,
        })
    }
}

/// The `base` setting of `config`: the `file:` URL of a directory, with
/// the `/` it ends with added when missing; none when absent. Refused,
/// with a message naming `plugin`, when it is not a `file:` URL.
pub fn base(plugin: &str, config: &Value) -> Result<Option<String>, String> {
    let Some(value) = config.get("base") else {
        return Ok(None);
    };
    let wrong = || {
        format!(
            "{plugin}: `base` must be the file: URL of a directory, e.g. \"file:///home/me/site/\", not {value}"
        )
    };
    let mut url = value
        .as_str()
        .and_then(|s| Url::parse(s).ok())
        .filter(|u| u.scheme() == "file")
        .ok_or_else(wrong)?;
    url.set_query(None);
    url.set_fragment(None);
    if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    Ok(Some(url.to_string()))
}

/// The part of `url` below `base` (still percent-encoded, as in the URL),
/// when `base` is set and `url` is a file below it.
pub fn relative<'a>(base: Option<&str>, url: &'a str) -> Option<&'a str> {
    url.strip_prefix(base?).filter(|rest| !rest.is_empty())
}
