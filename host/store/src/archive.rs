//! The Worm's archive (seed 001, section 3.2.1) as the store holds it: every
//! parsed document with its title, references and inline images, which of
//! them are completed, and each document's syntax faults. The line formats
//! are the app's business; here are the records and how they are read and
//! imported.

use crate::db::{Conn, Dialect, Ints, Tx, TxMode, params};
use crate::{Store, StoreError, URL_ID_CACHE, url_id_cached};
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

    /// Begin importing an archive, in one transaction: its facts are
    /// handed to [`ArchiveImport::add`] as they are read, and written a
    /// batch at a time, so that an archive of any size is imported in
    /// bounded memory; [`ArchiveImport::commit`] keeps them, and an import
    /// dropped before (a bad line) keeps nothing. A document the store
    /// held before the import (a crawl's parse, an earlier import's) keeps
    /// what it has; the archive adds the documents the store lacks, and
    /// every document on a `C` line is marked completed.
    pub fn begin_import(
        &mut self,
        options: ImportOptions,
    ) -> Result<ArchiveImport<'_>, StoreError> {
        if let Some(c) = self.conn.sqlite() {
            // The bundled SQLite keeps temporary tables in memory, and the
            // import's hold a row for each document of the archive: they
            // go to a file (the page cache bounds what is in memory).
            // Changing it drops the connection's temporary tables, so only
            // when it is not so already; never inside a transaction.
            let now: i64 = c.pragma_query_value(None, "temp_store", |r| r.get(0))?;
            if now != 1 {
                c.pragma_update(None, "temp_store", "FILE")?;
            }
        }
        // On SQLite the import reads before its first write (where each
        // document stands): the write lock is taken first, so that no
        // other writer makes its reads stale. On PostgreSQL the documents'
        // lock is enough: other writers write on meanwhile.
        let (sql, mode) = match self.conn.dialect() {
            Dialect::Sqlite => (&SQLITE_IMPORT, TxMode::Immediate),
            Dialect::Postgres => (&POSTGRES_IMPORT, TxMode::Deferred),
        };
        let tx = self.conn.transaction(mode)?;
        tx.number_documents_in_turn()?;
        tx.execute_batch(sql.create)?;
        Ok(ArchiveImport {
            tx,
            options,
            sql,
            pending: Vec::new(),
            at: foldhash::HashMap::default(),
            held: 0,
            ids: UrlIds::default(),
            pieces: 0,
            counts: ImportCounts::default(),
        })
    }
}

/// The most one document's references may take as the store keeps them
/// (its `links`, a JSON array) in an import, over all of its lines:
/// a document is written whole, and it is held in memory while it is.
/// About half a million references with short anchor texts.
pub const MAX_IMPORTED_REFERENCES: usize = 32 << 20;

/// How an import is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImportOptions {
    /// The most documents held in memory before they are written.
    pub batch_documents: usize,
    /// The most bytes of facts (URLs, titles, anchor texts) held in memory
    /// before they are written.
    pub batch_bytes: usize,
    /// The most one document's references may take as the store keeps
    /// them ([`MAX_IMPORTED_REFERENCES`]).
    pub max_references: usize,
}

impl Default for ImportOptions {
    fn default() -> ImportOptions {
        ImportOptions {
            batch_documents: 10_000,
            batch_bytes: 16 << 20,
            max_references: MAX_IMPORTED_REFERENCES,
        }
    }
}

/// What one archive line says of its document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArchiveFact {
    /// `T`: its title (none when it had none) and syntax faults; a later
    /// `T` line of the same document replaces them.
    Title {
        /// The title.
        title: Option<String>,
        /// The faults by kind, with counts, in order.
        bad_html: Vec<(String, u32)>,
    },
    /// `R` or `I`: a reference or an inline image, after those of the
    /// lines before it.
    Link {
        /// The URL referenced.
        target: String,
        /// Its kind.
        kind: RefKind,
        /// Its anchor text.
        text: String,
    },
    /// `C`: its references were processed to all levels.
    Completed,
}

/// Why an import stopped (and kept nothing).
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// One document's references came to more than an import takes.
    #[error(
        "the references of {url} come to more than {} as the store keeps them, more than an import takes of one document",
        size(*limit)
    )]
    TooManyReferences {
        /// The document.
        url: String,
        /// The limit, in bytes.
        limit: usize,
    },
    /// The store said no.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// `n` bytes, in MiB when whole ones.
fn size(n: usize) -> String {
    match n % (1 << 20) {
        0 => format!("{} MiB", n >> 20),
        _ => format!("{n} bytes"),
    }
}

/// What an import did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImportCounts {
    /// The documents of the archive (each once, however its lines lie).
    pub documents: usize,
    /// Of those, how many were new to the store.
    pub added: usize,
    /// How many batches were written.
    pub batches: usize,
}

/// An import's statements, where the backends differ (their temporary
/// tables' names and types).
struct ImportSql {
    /// Make the import's tables (once a connection), empty.
    create: &'static str,
    /// Empty them.
    clear: &'static str,
    /// A document's place in this import (by its URL): whether this import
    /// wrote it (1) or found it stored (0), how much its references take,
    /// and whether the store holds it.
    seen: &'static str,
    /// Remember a document the import met: (id, wrote it, bytes).
    remember: &'static str,
    /// A document's references now take ?2 bytes.
    grow: &'static str,
    /// More references of a document the import wrote (?1), in order (?2):
    /// their JSON elements without the brackets.
    more: &'static str,
    /// The references kept aside, by document, in order.
    pieces: &'static str,
}

const SQLITE_IMPORT: ImportSql = ImportSql {
    create: "CREATE TEMP TABLE IF NOT EXISTS archive_import (
                 url_id INTEGER PRIMARY KEY, fresh INTEGER NOT NULL, bytes INTEGER NOT NULL);
             CREATE TEMP TABLE IF NOT EXISTS archive_import_links (
                 url_id INTEGER NOT NULL, n INTEGER NOT NULL, links TEXT NOT NULL,
                 PRIMARY KEY (url_id, n)) WITHOUT ROWID;
             DELETE FROM temp.archive_import; DELETE FROM temp.archive_import_links;",
    clear: "DELETE FROM temp.archive_import; DELETE FROM temp.archive_import_links;",
    seen: "SELECT t.fresh, t.bytes, d.url_id FROM urls u
             LEFT JOIN temp.archive_import t ON t.url_id = u.id
             LEFT JOIN documents d ON d.url_id = u.id WHERE u.url = ?1",
    remember: "INSERT INTO temp.archive_import (url_id, fresh, bytes) VALUES (?1, ?2, ?3)",
    grow: "UPDATE temp.archive_import SET bytes = ?2 WHERE url_id = ?1",
    more: "INSERT INTO temp.archive_import_links (url_id, n, links) VALUES (?1, ?2, ?3)",
    pieces: "SELECT url_id, links FROM temp.archive_import_links ORDER BY url_id, n",
};

const POSTGRES_IMPORT: ImportSql = ImportSql {
    create: "CREATE TEMP TABLE IF NOT EXISTS archive_import (
                 url_id BIGINT PRIMARY KEY, fresh BIGINT NOT NULL, bytes BIGINT NOT NULL);
             CREATE TEMP TABLE IF NOT EXISTS archive_import_links (
                 url_id BIGINT NOT NULL, n BIGINT NOT NULL, links TEXT NOT NULL,
                 PRIMARY KEY (url_id, n));
             TRUNCATE pg_temp.archive_import, pg_temp.archive_import_links;",
    clear: "TRUNCATE pg_temp.archive_import, pg_temp.archive_import_links;",
    seen: "SELECT t.fresh, t.bytes, d.url_id FROM urls u
             LEFT JOIN pg_temp.archive_import t ON t.url_id = u.id
             LEFT JOIN documents d ON d.url_id = u.id WHERE u.url = ?1",
    remember: "INSERT INTO pg_temp.archive_import (url_id, fresh, bytes) VALUES (?1, ?2, ?3)",
    grow: "UPDATE pg_temp.archive_import SET bytes = ?2 WHERE url_id = ?1",
    more: "INSERT INTO pg_temp.archive_import_links (url_id, n, links) VALUES (?1, ?2, ?3)",
    pieces: "SELECT url_id, links FROM pg_temp.archive_import_links ORDER BY url_id, n",
};

/// Where a document of the batch stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Seen {
    /// Met for the first time, and not in the store.
    New,
    /// Met for the first time, and in the store: kept as it is.
    Stored,
    /// Written by this import; its references take `bytes` so far.
    Written { bytes: usize },
    /// Met before in this import, and in the store before it: kept.
    Kept,
}

/// A document's facts in the batch, in the order of their lines.
struct Pending {
    url: String,
    seen: Seen,
    /// The last `T` line's title, if the batch had one.
    title: Option<Option<String>>,
    bad_html: Vec<(String, u32)>,
    links: Vec<(String, RefKind, String)>,
    /// What `links` add to the stored references, at most.
    links_bytes: usize,
    completed: bool,
}

/// The most bytes of URLs an import's URL id cache keeps (an archive's
/// URLs may be long): past it, or past [`URL_ID_CACHE`] URLs, it starts
/// again.
const URL_ID_BYTES: usize = 8 << 20;

/// The URL ids an import met last.
#[derive(Default)]
struct UrlIds {
    ids: foldhash::HashMap<String, i64>,
    bytes: usize,
}

impl UrlIds {
    fn get(&mut self, conn: &Conn, url: &str) -> Result<i64, StoreError> {
        if let Some(&id) = self.ids.get(url) {
            return Ok(id);
        }
        if self.ids.len() + 1 >= URL_ID_CACHE || self.bytes + url.len() > URL_ID_BYTES {
            self.ids.clear();
            self.bytes = 0;
        }
        self.bytes += url.len();
        url_id_cached(conn, &mut self.ids, url)
    }
}

/// What one reference adds to its document's stored references, at most:
/// `[id,"kind","text"]` and a comma.
fn link_bytes(kind: RefKind, text: &str) -> usize {
    let escaped: usize = text
        .chars()
        .map(|c| match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
            c if (c as u32) < 0x20 => 6,
            c => c.len_utf8(),
        })
        .sum();
    // 20 digits of id, 5 brackets, quotes and commas, 2 of each string's quotes.
    20 + 5 + kind.as_str().len() + 2 + escaped + 2
}

/// An archive being imported ([`Store::begin_import`]): the facts of the
/// lines read since the last batch was written, at most
/// [`ImportOptions::batch_documents`] documents and about
/// [`ImportOptions::batch_bytes`] of text.
///
/// A document's lines need not be together: one this import wrote in an
/// earlier batch takes the later facts as if they had been read with the
/// first (a later title replaces, references follow the earlier ones in
/// the order of the lines); they are kept aside and added to it once, at
/// the commit. The import remembers every document it met in a temporary
/// table, not in memory.
pub struct ArchiveImport<'s> {
    tx: Tx<'s>,
    options: ImportOptions,
    sql: &'static ImportSql,
    pending: Vec<Pending>,
    /// Where each pending document is in `pending`, by URL.
    at: foldhash::HashMap<String, usize>,
    /// About how many bytes `pending` holds.
    held: usize,
    ids: UrlIds,
    /// The pieces of references kept aside so far.
    pieces: i64,
    counts: ImportCounts,
}

impl ArchiveImport<'_> {
    /// Take one line's fact about the document `html`, writing the batch
    /// when it is full. A document whose references come to more than
    /// [`ImportOptions::max_references`] is refused.
    pub fn add(&mut self, html: &str, fact: ArchiveFact) -> Result<(), ImportError> {
        let i = match self.at.get(html) {
            Some(&i) => i,
            None => {
                let seen = self.seen(html)?;
                self.held += 2 * html.len() + 160;
                self.pending.push(Pending {
                    url: html.to_string(),
                    seen,
                    title: None,
                    bad_html: Vec::new(),
                    links: Vec::new(),
                    links_bytes: 0,
                    completed: false,
                });
                self.at.insert(html.to_string(), self.pending.len() - 1);
                self.pending.len() - 1
            }
        };
        let p = &mut self.pending[i];
        match fact {
            ArchiveFact::Title { title, bad_html } => {
                self.held += title.as_ref().map_or(0, String::len)
                    + bad_html.iter().map(|(k, _)| k.len() + 32).sum::<usize>();
                p.title = Some(title);
                p.bad_html = bad_html;
            }
            ArchiveFact::Link { target, kind, text } => {
                self.held += target.len() + text.len() + 64;
                p.links_bytes += link_bytes(kind, &text);
                let before = match p.seen {
                    Seen::New => Some(2),
                    Seen::Written { bytes } => Some(bytes),
                    Seen::Stored | Seen::Kept => None,
                };
                if let Some(before) = before
                    && before + p.links_bytes > self.options.max_references
                {
                    return Err(ImportError::TooManyReferences {
                        url: p.url.clone(),
                        limit: self.options.max_references,
                    });
                }
                p.links.push((target, kind, text));
            }
            ArchiveFact::Completed => p.completed = true,
        }
        if self.pending.len() >= self.options.batch_documents
            || self.held >= self.options.batch_bytes
        {
            self.flush()?;
        }
        Ok(())
    }

    /// Where the document `url` stands, met for the first time in this batch.
    fn seen(&self, url: &str) -> Result<Seen, StoreError> {
        let row = self.tx.query_opt(self.sql.seen, params![url], |r| {
            Ok((
                r.get::<_, Option<i64>>(0)?,
                r.get::<_, Option<i64>>(1)?,
                r.get::<_, Option<i64>>(2)?.is_some(),
            ))
        })?;
        Ok(match row {
            None | Some((None, _, false)) => Seen::New,
            Some((None, _, true)) => Seen::Stored,
            Some((Some(0), _, _)) => Seen::Kept,
            Some((Some(_), bytes, _)) => Seen::Written {
                bytes: bytes.unwrap_or(2).max(0) as usize,
            },
        })
    }

    /// Write the batch: its documents in the order they were met, each
    /// URL's id taken in the order of the lines (the document's, then its
    /// references').
    fn flush(&mut self) -> Result<(), StoreError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.counts.batches += 1;
        self.at.clear();
        self.held = 0;
        for p in std::mem::take(&mut self.pending) {
            let id = self.ids.get(&self.tx, &p.url)?;
            let mut links = String::from("[");
            for (target, kind, text) in &p.links {
                let t = self.ids.get(&self.tx, target)?;
                if links.len() > 1 {
                    links.push(',');
                }
                let element = serde_json::to_string(&(t, kind.as_str(), text))
                    .map_err(|e| StoreError::Io(format!("the references of {}: {e}", p.url)))?;
                links.push_str(&element);
            }
            links.push(']');
            match p.seen {
                Seen::New | Seen::Stored => {
                    let added = match p.seen {
                        Seen::New => {
                            let title = p.title.flatten();
                            let bad = (!p.bad_html.is_empty()).then(|| bad_html_json(&p.bad_html));
                            self.tx.execute("INSERT INTO documents (url_id, run_id, title, parse_errors, decode_errors,
                   links, bad_html, seq)
                 VALUES (?1, 0, ?2, 0, 0, ?3, ?4, (SELECT COALESCE(MAX(seq), 0) + 1 FROM documents)) ON CONFLICT DO NOTHING", params![id, title, links, bad])?
                        }
                        _ => 0,
                    };
                    self.counts.documents += 1;
                    self.counts.added += added;
                    self.tx.execute(
                        self.sql.remember,
                        params![id, added as i64, links.len() as i64],
                    )?;
                }
                Seen::Written { bytes } => {
                    if let Some(title) = p.title {
                        let bad = (!p.bad_html.is_empty()).then(|| bad_html_json(&p.bad_html));
                        self.tx.execute(
                            "UPDATE documents SET title = ?2, bad_html = ?3 WHERE url_id = ?1",
                            params![id, title, bad],
                        )?;
                    }
                    if !p.links.is_empty() {
                        // Kept aside, and added once at the commit: adding
                        // them now would rewrite the whole document each
                        // time its lines come back.
                        let piece = &links[1..links.len() - 1];
                        self.pieces += 1;
                        self.tx
                            .execute(self.sql.more, params![id, self.pieces, piece])?;
                        let now = match bytes <= 2 {
                            true => links.len(),
                            false => bytes + piece.len() + 1,
                        };
                        self.tx.execute(self.sql.grow, params![id, now as i64])?;
                    }
                }
                Seen::Kept => {}
            }
            if p.completed {
                self.tx.execute(
                    "INSERT INTO archive_completed (url_id) VALUES (?1) ON CONFLICT DO NOTHING",
                    params![id],
                )?;
            }
        }
        Ok(())
    }

    /// Add the references kept aside to their documents, each document
    /// written once.
    fn add_pieces(&self) -> Result<(), StoreError> {
        let write = |id: i64, more: &str| -> Result<(), StoreError> {
            let stored: String = self.tx.query_row(
                "SELECT links FROM documents WHERE url_id = ?1",
                params![id],
                |r| r.get(0),
            )?;
            let links = match stored.as_str() {
                "[]" => format!("[{more}]"),
                s => format!("{},{more}]", &s[..s.len() - 1]),
            };
            drop(stored);
            self.tx.execute(
                "UPDATE documents SET links = ?2 WHERE url_id = ?1",
                params![id, links],
            )?;
            Ok(())
        };
        let mut current: Option<(i64, String)> = None;
        self.tx.for_each(self.sql.pieces, params![], |r| {
            let id: i64 = r.get(0)?;
            let piece: String = r.get(1)?;
            match &mut current {
                Some((at, more)) if *at == id => {
                    more.push(',');
                    more.push_str(&piece);
                }
                _ => {
                    if let Some((at, more)) = current.take() {
                        write(at, &more)?;
                    }
                    current = Some((id, piece));
                }
            }
            Ok::<_, StoreError>(())
        })?;
        if let Some((at, more)) = current {
            write(at, &more)?;
        }
        Ok(())
    }

    /// Write the last batch and keep the import: what it did.
    pub fn commit(mut self) -> Result<ImportCounts, StoreError> {
        self.flush()?;
        self.add_pieces()?;
        self.tx.execute_batch(self.sql.clear)?;
        self.tx.commit()?;
        Ok(self.counts)
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

    fn title(t: &str) -> ArchiveFact {
        ArchiveFact::Title {
            title: Some(t.into()),
            bad_html: Vec::new(),
        }
    }

    fn link(target: &str, kind: RefKind, text: &str) -> ArchiveFact {
        ArchiveFact::Link {
            target: target.into(),
            kind,
            text: text.into(),
        }
    }

    fn import(
        store: &mut Store,
        options: ImportOptions,
        facts: &[(&str, ArchiveFact)],
    ) -> Result<ImportCounts, ImportError> {
        let mut import = store.begin_import(options)?;
        for (html, fact) in facts {
            import.add(html, fact.clone())?;
        }
        Ok(import.commit()?)
    }

    /// Batches of two documents at most.
    fn small() -> ImportOptions {
        ImportOptions {
            batch_documents: 2,
            ..ImportOptions::default()
        }
    }

    /// One document's lines spread over the archive, written in batches
    /// of two documents: each document ends up as the same lines together
    /// make it (a later title replaces, references follow in the order of
    /// the lines), one stored before the import keeps what it had (its C
    /// line is kept), and each document is counted once.
    #[test]
    fn an_import_in_batches_gathers_each_documents_lines() {
        let (dir, gathered) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let stores = crate::testing::stores(dir.path());
        for (mut store, mut reference) in stores
            .into_iter()
            .zip(crate::testing::stores(gathered.path()))
        {
            let before = [
                ("http://p/", title("Stored")),
                ("http://p/", link("http://x/", RefKind::Anchor, "kept")),
            ];
            for s in [&mut store, &mut reference] {
                import(s, ImportOptions::default(), &before).unwrap();
            }
            let bad = ArchiveFact::Title {
                title: Some("A".into()),
                bad_html: vec![("no-title".into(), 1)],
            };
            // With two documents a batch, every second document met
            // writes one.
            let spread = [
                ("http://a/", link("http://x/", RefKind::Anchor, "one")),
                ("http://b/", title("B")),
                ("http://a/", bad.clone()),
                ("http://p/", link("http://y/", RefKind::Anchor, "not kept")),
                ("http://a/", link("http://y/", RefKind::Anchor, "two \"q\"")),
                ("http://c/", ArchiveFact::Completed),
                ("http://a/", link("http://z/", RefKind::Image, "img")),
                ("http://p/", ArchiveFact::Completed),
                ("http://b/", link("http://a/", RefKind::Anchor, "back")),
                ("http://a/", ArchiveFact::Completed),
            ];
            let counts = import(&mut store, small(), &spread).unwrap();
            assert_eq!(
                counts,
                ImportCounts {
                    documents: 4,
                    added: 3,
                    batches: 5
                }
            );
            // The same facts, each document's together (as `read` gathered
            // them), in one batch.
            let mut together: Vec<(&str, ArchiveFact)> = Vec::new();
            for url in ["http://a/", "http://b/", "http://p/", "http://c/"] {
                together.extend(spread.iter().filter(|(u, _)| *u == url).cloned());
            }
            let counts = import(&mut reference, ImportOptions::default(), &together).unwrap();
            assert_eq!((counts.documents, counts.added, counts.batches), (4, 3, 1));
            let archive = store.archive().unwrap();
            assert_eq!(archive, reference.archive().unwrap());
            let a = &archive[0];
            assert_eq!(a.title.as_deref(), Some("A"));
            assert_eq!(a.bad_html, vec![("no-title".to_string(), 1)]);
            let links: Vec<(&str, &str)> = a
                .links
                .iter()
                .map(|(t, _, text)| (t.as_str(), text.as_str()))
                .collect();
            assert_eq!(
                links,
                [
                    ("http://x/", "one"),
                    ("http://y/", "two \"q\""),
                    ("http://z/", "img")
                ]
            );
            assert_eq!(a.links[2].1, RefKind::Image);
            assert!(a.completed);
            assert_eq!(archive[1].links.len(), 1);
            let p = archive.iter().find(|d| d.url == "http://p/").unwrap();
            assert_eq!(p.title.as_deref(), Some("Stored"));
            assert_eq!(
                p.links,
                vec![("http://x/".into(), RefKind::Anchor, "kept".into())]
            );
            assert!(p.completed);
        }
    }

    /// An import dropped halfway (a bad line), after batches were written,
    /// keeps nothing, and the next one starts afresh.
    #[test]
    fn an_import_dropped_after_some_batches_keeps_nothing() {
        let dir = tempfile::tempdir().unwrap();
        for mut store in crate::testing::stores(dir.path()) {
            let facts: Vec<(String, ArchiveFact)> = (0..7)
                .map(|i| (format!("http://a/{i}"), title("T")))
                .collect();
            let mut half = store.begin_import(small()).unwrap();
            for (html, fact) in &facts {
                half.add(html, fact.clone()).unwrap();
            }
            assert_eq!(half.counts.batches, 3);
            drop(half);
            assert_eq!(store.document_count().unwrap(), 0);
            assert!(store.archive().unwrap().is_empty());
            for _ in 0..2 {
                let facts: Vec<(&str, ArchiveFact)> =
                    facts.iter().map(|(h, f)| (h.as_str(), f.clone())).collect();
                let counts = import(&mut store, small(), &facts).unwrap();
                assert_eq!(counts.documents, 7);
                assert_eq!(store.document_count().unwrap(), 7);
            }
        }
    }

    /// One document's references are held to the limit over all its
    /// lines, batches apart; a document stored before the import (whose
    /// references the import does not take) is not.
    #[test]
    fn one_documents_references_are_held_to_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        for mut store in crate::testing::stores(dir.path()) {
            import(&mut store, small(), &[("http://p/", title("P"))]).unwrap();
            let options = ImportOptions {
                max_references: 300,
                ..small()
            };
            let mut facts = Vec::new();
            for i in 0..20 {
                let target = format!("http://x/{i}");
                facts.push(("http://a/", link(&target, RefKind::Anchor, "text")));
                facts.push(("http://p/", link(&target, RefKind::Anchor, "text")));
            }
            let e = import(&mut store, options, &facts).unwrap_err();
            assert!(
                matches!(&e, ImportError::TooManyReferences { url, limit: 300 } if url == "http://a/"),
                "{e}"
            );
            assert_eq!(
                e.to_string(),
                "the references of http://a/ come to more than 300 bytes as the store keeps them, more than an import takes of one document"
            );
            let kept: Vec<_> = facts
                .into_iter()
                .filter(|(h, _)| *h == "http://p/")
                .collect();
            import(&mut store, options, &kept).unwrap();
            assert_eq!(store.document_count().unwrap(), 1);
        }
    }
}
