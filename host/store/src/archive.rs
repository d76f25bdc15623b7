//! The Worm's archive (seed 001, section 3.2.1) as the store holds it: every
//! parsed document with its title, references and inline images, which of
//! them are completed, and each document's syntax faults. The line formats
//! are the app's business; here are the records and how they are read and
//! imported.

use crate::db::{Dialect, Ints, TxMode, params};
use crate::{Store, StoreError, url_id_cached};
use spinneret_core::document::RefKind;
use std::collections::{HashMap, HashSet};

/// One document of the archive.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArchiveDocument {
    /// The document's URL.
    pub url: String,
    /// Its title (none when it had none).
    pub title: Option<String>,
    /// Its references in document order: target, kind, anchor text (an
    /// image's is its link's anchor text, or its alt text).
    pub links: Vec<(String, RefKind, String)>,
    /// Whether its references were processed to all levels: every target
    /// has a result in the run that read it, and each target that is a
    /// document is completed too; or an imported archive said so.
    pub completed: bool,
    /// Its syntax faults by kind, with counts.
    pub bad_html: Vec<(String, u32)>,
}

/// A document as the search index reads it.
#[derive(Clone, Debug, Default)]
pub struct IndexedDocument {
    /// Its URL's id.
    pub url_id: i64,
    /// Its title.
    pub title: Option<String>,
    /// Its references: target URL id, kind name, anchor text.
    pub links: Vec<(i64, String, String)>,
    /// Its syntax faults.
    pub bad_html: Vec<(String, u32)>,
}

/// A document's title and syntax faults (kind, count).
pub type DocumentSummary = (Option<String>, Vec<(String, u32)>);

/// A document with syntax faults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadDocument {
    /// Its URL's id in the store.
    pub url_id: i64,
    /// Its URL.
    pub url: String,
    /// Its faults by kind, with counts.
    pub faults: Vec<(String, u32)>,
}

/// `bad` as the store keeps it: a JSON object in the given order.
pub(crate) fn bad_html_json<K: AsRef<str>>(bad: &[(K, u32)]) -> String {
    let mut s = String::from("{");
    for (i, (k, n)) in bad.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&serde_json::to_string(k.as_ref()).unwrap_or_default());
        s.push(':');
        s.push_str(&n.to_string());
    }
    s.push('}');
    s
}

/// The stored faults, in their stored order.
pub(crate) fn parse_bad_html(json: Option<&str>) -> Vec<(String, u32)> {
    let Some(json) = json else {
        return Vec::new();
    };
    // serde_json's map keeps keys sorted; the order is read by hand.
    let Ok(map) = serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(json) else {
        return Vec::new();
    };
    let mut out: Vec<(String, u32)> = map
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0) as u32))
        .collect();
    out.sort_by_key(|(k, _)| json.find(&format!("\"{k}\"")).unwrap_or(usize::MAX));
    out
}

/// A stored `links` array: `[[target_id, kind, text], ...]`.
pub(crate) fn parse_links(json: &str) -> Vec<(i64, String, String)> {
    serde_json::from_str(json).unwrap_or_default()
}

impl Store {
    /// Every document of the store, by URL, with its references and
    /// whether it is completed; the `library` tasks' own pages are the
    /// library's, not the Worm's, and left out.
    pub fn archive(&self) -> Result<Vec<ArchiveDocument>, StoreError> {
        let urls = self.all_urls()?;
        let library = crate::library::library_task_pages(&self.conn)?;
        let imported: HashSet<i64> = self
            .conn
            .query_vec("SELECT url_id FROM archive_completed", params![], |r| {
                r.get(0)
            })?
            .into_iter()
            .collect();
        struct Row {
            id: i64,
            run: i64,
            title: Option<String>,
            links: Vec<(i64, String, String)>,
            bad: Vec<(String, u32)>,
        }
        let mut rows: Vec<Row> = Vec::new();
        self.conn.for_each(
            "SELECT url_id, run_id, title, links, bad_html FROM documents",
            params![],
            |r| {
                if library.contains(&r.get(0)?) {
                    return Ok(());
                }
                let links: String = r.get(3)?;
                let bad: Option<String> = r.get(4)?;
                rows.push(Row {
                    id: r.get(0)?,
                    run: r.get(1)?,
                    title: r.get(2)?,
                    links: parse_links(&links),
                    bad: parse_bad_html(bad.as_deref()),
                });
                Ok::<_, StoreError>(())
            },
        )?;
        // The results of each run that read a document, loaded once a run.
        let mut answered: HashMap<i64, HashSet<i64>> = HashMap::new();
        for row in &rows {
            if row.run > 0 && !answered.contains_key(&row.run) {
                let ids: HashSet<i64> = self
                    .conn
                    .query_vec(
                        "SELECT url_id FROM results WHERE run_id = ?1",
                        params![row.run],
                        |r| r.get(0),
                    )?
                    .into_iter()
                    .collect();
                answered.insert(row.run, ids);
            }
        }
        // Completed: the greatest set of documents whose every target was
        // answered in their run and whose navigational targets that are
        // documents are completed too (links may go round in circles).
        let place: HashMap<i64, usize> = rows.iter().enumerate().map(|(i, r)| (r.id, i)).collect();
        let mut done: Vec<bool> = rows
            .iter()
            .map(|r| {
                imported.contains(&r.id)
                    || answered
                        .get(&r.run)
                        .is_some_and(|a| r.links.iter().all(|(t, _, _)| a.contains(t)))
            })
            .collect();
        loop {
            let mut changed = false;
            for (i, r) in rows.iter().enumerate() {
                if !done[i] || imported.contains(&r.id) {
                    continue;
                }
                let waits = r.links.iter().any(|(t, kind, _)| {
                    RefKind::from_name(kind).is_some_and(RefKind::is_navigational)
                        && place.get(t).is_some_and(|&j| !done[j])
                });
                if waits {
                    done[i] = false;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let mut out: Vec<ArchiveDocument> = rows
            .into_iter()
            .enumerate()
            .filter_map(|(i, r)| {
                let url = urls.get(&r.id)?.clone();
                let links = r
                    .links
                    .into_iter()
                    .filter_map(|(t, kind, text)| {
                        let kind = RefKind::from_name(&kind)?;
                        Some((urls.get(&t)?.clone(), kind, text))
                    })
                    .collect();
                Some(ArchiveDocument {
                    url,
                    title: r.title,
                    links,
                    completed: done[i],
                    bad_html: r.bad,
                })
            })
            .collect();
        out.sort_by(|a, b| a.url.cmp(&b.url));
        Ok(out)
    }

    /// The documents a run checked that have syntax faults, from their
    /// latest parse (which a 304 leaves as it was), by URL.
    pub fn bad_html_of_run(&self, run: i64) -> Result<Vec<BadDocument>, StoreError> {
        Ok(self
            .conn
            .query_vec(
                "SELECT d.url_id, u.url, d.bad_html FROM results r
             JOIN documents d ON d.url_id = r.url_id
             JOIN urls u ON u.id = d.url_id
             WHERE r.run_id = ?1 AND d.bad_html IS NOT NULL
             ORDER BY u.url",
                params![run],
                |r| {
                    let json: String = r.get(2)?;
                    Ok(BadDocument {
                        url_id: r.get(0)?,
                        url: r.get(1)?,
                        faults: parse_bad_html(Some(&json)),
                    })
                },
            )?
            .into_iter()
            .collect())
    }

    /// Call `each` with every document written after change number
    /// `since` (0: all of them), in URL id order: its URL id, title,
    /// references (target id, kind, anchor text) and faults. The
    /// `library` tasks' own pages are left out, as [`Store::archive`]
    /// leaves them.
    pub fn for_each_document(
        &self,
        since: i64,
        mut each: impl FnMut(IndexedDocument) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let library = crate::library::library_task_pages(&self.conn)?;
        self.conn.for_each(
            "SELECT url_id, title, links, bad_html FROM documents WHERE seq > ?1 ORDER BY url_id",
            params![since],
            |r| {
                if library.contains(&r.get(0)?) {
                    return Ok(());
                }
                let links: String = r.get(2)?;
                let bad: Option<String> = r.get(3)?;
                each(IndexedDocument {
                    url_id: r.get(0)?,
                    title: r.get(1)?,
                    links: parse_links(&links),
                    bad_html: parse_bad_html(bad.as_deref()),
                })
            },
        )
    }

    /// The store's identity: made at random when its schema was made (or
    /// brought to version 14), the same for every process that opens it,
    /// and another for another store, wherever it is reached from.
    pub fn identity(&self) -> Result<String, StoreError> {
        self.conn
            .query_row("SELECT id FROM store_identity", params![], |r| r.get(0))
    }

    /// The number of the latest document write (0: none yet). Every write
    /// of a document, by a crawl or an import, that changes its title,
    /// references or bad HTML takes the next number (a page re-read as it
    /// was keeps its own), so a reader that remembers this number later
    /// asks [`Store::for_each_document`] for exactly what changed since.
    pub fn documents_seq(&self) -> Result<i64, StoreError> {
        self.conn.query_row(
            "SELECT COALESCE(MAX(seq), 0) FROM documents",
            params![],
            |r| r.get(0),
        )
    }

    /// How many documents the store holds.
    pub fn document_count(&self) -> Result<u64, StoreError> {
        Ok(self
            .conn
            .query_row("SELECT COUNT(*) FROM documents", params![], |r| {
                r.get::<_, i64>(0)
            })?
            .max(0) as u64)
    }

    /// Every URL the store knows, by id.
    pub fn all_urls(&self) -> Result<HashMap<i64, String>, StoreError> {
        let mut urls = HashMap::new();
        self.conn
            .for_each("SELECT id, url FROM urls", params![], |r| {
                urls.insert(r.get(0)?, r.get(1)?);
                Ok::<_, StoreError>(())
            })?;
        Ok(urls)
    }

    /// The URLs of these ids (unknown ids are left out).
    pub fn urls_of(&self, ids: &[i64]) -> Result<HashMap<i64, String>, StoreError> {
        // One read transaction: the file is locked once, not once a URL.
        let _read = self.conn.transaction(TxMode::Deferred)?;
        self.urls_by_id(ids)
    }

    /// The URLs of these ids (unknown ids are left out): on SQLite one
    /// indexed lookup each (in the process, cheap), on PostgreSQL ten
    /// thousand a statement (a round trip each would not be).
    pub(crate) fn urls_by_id(&self, ids: &[i64]) -> Result<HashMap<i64, String>, StoreError> {
        let mut out = HashMap::with_capacity(ids.len());
        match self.conn.dialect() {
            Dialect::Sqlite => {
                for &id in ids {
                    let sql = "SELECT url FROM urls WHERE id = ?1";
                    if let Some(url) = self
                        .conn
                        .query_opt(sql, params![id], |r| r.get::<_, String>(0))?
                    {
                        out.insert(id, url);
                    }
                }
            }
            Dialect::Postgres => {
                let ids: Vec<Option<i64>> = ids.iter().copied().map(Some).collect();
                for chunk in ids.chunks(10_000) {
                    self.conn.for_each(
                        "SELECT id, url FROM urls WHERE id = ANY(?1::bigint[])",
                        params![Ints(chunk)],
                        |r| {
                            out.insert(r.get(0)?, r.get(1)?);
                            Ok::<_, StoreError>(())
                        },
                    )?;
                }
            }
        }
        Ok(out)
    }

    /// The title and faults of those of these ids that are documents.
    pub fn document_summaries(
        &self,
        ids: &[i64],
    ) -> Result<HashMap<i64, DocumentSummary>, StoreError> {
        let _read = self.conn.transaction(TxMode::Deferred)?;
        let mut out = HashMap::new();
        for &id in ids {
            let sql = "SELECT title, bad_html FROM documents WHERE url_id = ?1";
            let row = self.conn.query_opt(sql, params![id], |r| {
                Ok((
                    r.get::<_, Option<String>>(0)?,
                    r.get::<_, Option<String>>(1)?,
                ))
            })?;
            if let Some((title, bad)) = row {
                out.insert(id, (title, parse_bad_html(bad.as_deref())));
            }
        }
        Ok(out)
    }

    /// The documents an imported archive marked completed.
    pub fn completed_documents(&self) -> Result<HashSet<String>, StoreError> {
        Ok(self
            .conn
            .query_vec(
                "SELECT u.url FROM archive_completed c JOIN urls u ON u.id = c.url_id",
                params![],
                |r| r.get(0),
            )?
            .into_iter()
            .collect())
    }

    /// Import an archive's documents in one transaction: a document the
    /// store has parsed itself keeps the store's parse (the archive fills
    /// in what the store lacks); every completed one is marked so. Returns
    /// how many documents were new to the store.
    pub fn import_archive(&mut self, docs: &[ArchiveDocument]) -> Result<usize, StoreError> {
        let tx = self.conn.transaction(TxMode::Deferred)?;
        tx.number_documents_in_turn()?;
        let mut ids = foldhash::HashMap::default();
        let mut added = 0;
        for d in docs {
            let id = url_id_cached(&tx, &mut ids, &d.url)?;
            let mut links = Vec::with_capacity(d.links.len());
            for (target, kind, text) in &d.links {
                let t = url_id_cached(&tx, &mut ids, target)?;
                links.push(serde_json::json!([t, kind.as_str(), text]));
            }
            let links = serde_json::to_string(&links).unwrap_or_else(|_| "[]".into());
            let bad = (!d.bad_html.is_empty()).then(|| bad_html_json(&d.bad_html));
            added += tx.execute("INSERT INTO documents (url_id, run_id, title, parse_errors, decode_errors,
                   links, bad_html, seq)
                 VALUES (?1, 0, ?2, 0, 0, ?3, ?4, (SELECT COALESCE(MAX(seq), 0) + 1 FROM documents)) ON CONFLICT DO NOTHING", params![id, d.title, links, bad])?;
            if d.completed {
                tx.execute(
                    "INSERT INTO archive_completed (url_id) VALUES (?1) ON CONFLICT DO NOTHING",
                    params![id],
                )?;
            }
        }
        tx.commit()?;
        Ok(added)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_keep_their_order_through_the_store() {
        let bad = [("missing-quote", 2), ("no-title", 1), ("encoding", 1)];
        let json = bad_html_json(&bad);
        assert_eq!(json, r#"{"missing-quote":2,"no-title":1,"encoding":1}"#);
        let back = parse_bad_html(Some(&json));
        let back: Vec<(&str, u32)> = back.iter().map(|(k, n)| (k.as_str(), *n)).collect();
        assert_eq!(back, bad);
        assert!(parse_bad_html(None).is_empty());
    }
}
