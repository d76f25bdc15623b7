//! Links to a place in a document that is not there: a reference
//! `page.html#section` whose target the run read as HTML, with no element
//! whose `id` (or `<a name>`) is `section`.

use crate::{Store, StoreError};
use rusqlite::OptionalExtension;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};

/// A link whose fragment names no place in its target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokenFragment {
    /// The URL id of the document with the link.
    pub source_id: i64,
    /// The URL of the document with the link.
    pub source: String,
    /// The target document's URL (without the fragment).
    pub target: String,
    /// The fragment, as the URL has it (percent-encoded).
    pub fragment: String,
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
    /// no place in the target, for the targets the run found ok and whose
    /// places are known (an HTML document spinneret parsed, in this run or,
    /// unchanged since, an earlier one); by the linking document's URL.
    pub fn broken_fragments_of_run(&self, run: i64) -> Result<Vec<BrokenFragment>, StoreError> {
        let mut sources = self.conn.prepare(
            "SELECT d.url_id, u.url, d.fragments FROM results r
             JOIN documents d ON d.url_id = r.url_id
             JOIN urls u ON u.id = d.url_id
             WHERE r.run_id = ?1 AND d.fragments IS NOT NULL
             ORDER BY u.url",
        )?;
        let mut target_of = self.conn.prepare(
            "SELECT u.url, d.anchors FROM results r
             JOIN documents d ON d.url_id = r.url_id
             JOIN urls u ON u.id = r.url_id
             WHERE r.run_id = ?1 AND r.url_id = ?2 AND r.category = 'ok'
               AND d.anchors IS NOT NULL",
        )?;
        // Each target's URL and places, read once; `None`: not checked.
        let mut targets: HashMap<i64, Option<(String, HashSet<String>)>> = HashMap::new();
        let mut out = Vec::new();
        let mut rows = sources.query([run])?;
        while let Some(row) = rows.next()? {
            let source_id: i64 = row.get(0)?;
            let source: String = row.get(1)?;
            let json: String = row.get(2)?;
            let Ok(links) = serde_json::from_str::<Vec<(i64, String)>>(&json) else {
                tracing::warn!("{source}: its stored fragments are unreadable; not checked");
                continue;
            };
            for (target_id, fragment) in links {
                let known = match targets.entry(target_id) {
                    Entry::Occupied(e) => e.into_mut(),
                    Entry::Vacant(e) => {
                        let found = target_of
                            .query_row(rusqlite::params![run, target_id], |r| {
                                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
                            })
                            .optional()?
                            .and_then(|(url, anchors)| {
                                let anchors = serde_json::from_str::<Vec<String>>(&anchors).ok()?;
                                Some((url, anchors.into_iter().collect()))
                            });
                        e.insert(found)
                    }
                };
                if let Some((target, anchors)) = known
                    && !names_a_place(anchors, &fragment)
                {
                    out.push(BrokenFragment {
                        source_id,
                        source: source.clone(),
                        target: target.clone(),
                        fragment,
                    });
                }
            }
        }
        Ok(out)
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
