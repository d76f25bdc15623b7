//! Links to a place in a document that is not there: a reference
//! `page.html#section` whose target the run read as HTML, with no element
//! whose `id` (or `<a name>`) is `section`.

use crate::db::params;
use crate::{Store, StoreError};
use std::collections::HashSet;

/// A link whose fragment names no place in its target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokenFragment {
    /// The URL id of the document with the link.
    pub source_id: i64,
    /// The URL of the document with the link.
    pub source: String,
    /// The URL id of the target document.
    pub target_id: i64,
    /// The target document's URL (without the fragment).
    pub target: String,
    /// The fragment, as the URL has it (percent-encoded).
    pub fragment: String,
    /// The line of the document's first link to the fragment, from 1; 0
    /// when not known.
    pub line: u32,
    /// The column of that link's value on its line, from 1; 0 when not known.
    pub column: u32,
}

/// An entry of `documents.fragments`: a link's target, its fragment and
/// the line and column of the first link to it; from before schema 12,
/// without the column, and before schema 11, without the line.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum StoredFragment {
    WithPlace(i64, String, u32, u32),
    WithLine(i64, String, u32),
    Plain(i64, String),
}

/// Whether `fragment` names one of `anchors`, as the HTML standard finds
/// the indicated part of a document: the fragment as it is, then
/// percent-decoded.
fn names_a_place(anchors: &HashSet<String>, fragment: &str) -> bool {
    anchors.contains(fragment)
        || percent_encoding::percent_decode_str(fragment)
            .decode_utf8()
            .is_ok_and(|decoded| anchors.contains(decoded.as_ref()))
}

impl Store {
    /// The links of the documents run `run` checked whose fragment names
    /// no place in the target, for the targets the run found ok and read
    /// as documents (parsed in this run, or unchanged since an earlier
    /// parse: a 304) whose places are known; each (document, target,
    /// fragment) once, by the linking document's URL, then its links' order.
    pub fn broken_fragments_of_run(&self, run: i64) -> Result<Vec<BrokenFragment>, StoreError> {
        let sources = "SELECT d.url_id, u.url, d.fragments FROM results r
             JOIN documents d ON d.url_id = r.url_id
             JOIN urls u ON u.id = d.url_id
             WHERE r.run_id = ?1 AND d.fragments IS NOT NULL AND d.fragments != '[]'
             ORDER BY u.url";
        // A target's stored parse counts only when this run read it as a
        // document (a page that is now a leaf, or no longer HTML, keeps
        // an older parse in `documents`).
        let target_of = "SELECT u.url, d.anchors FROM results r
             JOIN documents d ON d.url_id = r.url_id
             JOIN urls u ON u.id = r.url_id
             WHERE r.run_id = ?1 AND r.url_id = ?2 AND r.category = 'ok'
               AND d.anchors IS NOT NULL
               AND (d.run_id = ?1 OR EXISTS (SELECT 1 FROM task_documents t
                                             WHERE t.run_id = ?1 AND t.url_id = r.url_id))";
        // Every link with a fragment: (target, linking document, its place
        // among them, fragment, (line, column)); the documents' URLs once
        // each.
        type Link = (i64, usize, usize, String, (u32, u32));
        let mut pages: Vec<(i64, String)> = Vec::new();
        let mut links: Vec<Link> = Vec::new();
        self.conn.for_each(sources, params![run], |row| {
            let json: String = row.get(2)?;
            let url: String = row.get(1)?;
            let Ok(found) = serde_json::from_str::<Vec<StoredFragment>>(&json) else {
                tracing::warn!("{url}: its stored fragments are unreadable; not checked");
                return Ok::<_, StoreError>(());
            };
            let page = pages.len();
            links.extend(
                found
                    .into_iter()
                    .enumerate()
                    .map(|(at, stored)| match stored {
                        StoredFragment::WithPlace(target, f, line, column) => {
                            (target, page, at, f, (line, column))
                        }
                        StoredFragment::WithLine(target, f, line) => {
                            (target, page, at, f, (line, 0))
                        }
                        StoredFragment::Plain(target, f) => (target, page, at, f, (0, 0)),
                    }),
            );
            pages.push((row.get(0)?, url));
            Ok(())
        })?;
        // By target, so that one target's places are held at a time; each
        // (target, document, fragment) once.
        links.sort_unstable_by(|a, b| (a.0, a.1, &a.3, a.2).cmp(&(b.0, b.1, &b.3, b.2)));
        links.dedup_by(|a, b| (a.0, a.1, &a.3) == (b.0, b.1, &b.3));
        let mut broken: Vec<(usize, usize, BrokenFragment)> = Vec::new();
        for group in links.chunk_by(|a, b| a.0 == b.0) {
            let target_id = group[0].0;
            let Some((target, anchors)) =
                self.conn
                    .query_opt(target_of, params![run, target_id], |r| {
                        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
                    })?
            else {
                continue;
            };
            let Ok(anchors) = serde_json::from_str::<Vec<String>>(&anchors) else {
                continue;
            };
            let anchors: HashSet<String> = anchors.into_iter().collect();
            for (_, page, at, fragment, (line, column)) in group {
                if !names_a_place(&anchors, fragment) {
                    let (source_id, source) = &pages[*page];
                    broken.push((
                        *page,
                        *at,
                        BrokenFragment {
                            source_id: *source_id,
                            source: source.clone(),
                            target_id,
                            target: target.clone(),
                            fragment: fragment.clone(),
                            line: *line,
                            column: *column,
                        },
                    ));
                }
            }
        }
        broken.sort_unstable_by_key(|(page, at, _)| (*page, *at));
        Ok(broken.into_iter().map(|(_, _, b)| b).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fragment_names_a_place_as_written_or_percent_decoded() {
        let anchors: HashSet<String> = ["intro", "café", "a b"].map(String::from).into();
        assert!(names_a_place(&anchors, "intro"));
        assert!(names_a_place(&anchors, "caf%C3%A9"));
        assert!(names_a_place(&anchors, "a%20b"));
        assert!(!names_a_place(&anchors, "Intro"), "ids are case-sensitive");
        assert!(!names_a_place(&anchors, "outro"));
        assert!(!names_a_place(&anchors, "%FF"));
    }
}
