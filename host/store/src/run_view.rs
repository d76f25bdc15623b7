//! A run as the report stage reads it: once for all tasks, in URL order,
//! row by row (a run of a million URLs is never held whole), plus a compact
//! summary of every URL (what a reference to it says) and the tasks'
//! documents.

use super::{RESULT_COLUMNS, Store, StoreError, result_from_row};
use crate::db::{Dialect, Row, TxMode, params};
use spinneret_core::model::{Category, CheckResult};
use std::fmt::Write as _;
// Keyed by the store's URL ids (not chosen by a remote party): the fast hasher.
use foldhash::HashMap;

/// What the run found at a URL, as a reference to it shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UrlSummary {
    /// The URL.
    pub url: Box<str>,
    /// Its category.
    pub category: Category,
    /// The status of its last response.
    pub status: Option<u16>,
    /// Why it failed (broken, blocked, avoided, not checked) or where it
    /// ends up (moved).
    pub detail: Option<Box<str>>,
    /// Its `Last-Modified`.
    pub last_modified: Option<Box<str>>,
}

/// The columns of a result (as [`result_from_row`] reads them) with its URL
/// and its referrer's left empty, and the referrer's id after them: for the
/// report stage's reads, whose caller holds the run's URLs already (two
/// lookups fewer a row); [`Store::result_at`] puts them in.
static RESULT_COLUMNS_BY_ID: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let columns = RESULT_COLUMNS
        .replacen("ref.url", "NULL", 1)
        .replacen("u.url", "''", 1);
    format!("{columns}, r.referrer_id")
});

/// How many columns [`RESULT_COLUMNS_BY_ID`] has; the referrer's id is the last.
const RESULT_COLUMNS_BY_ID_LEN: usize = 22;

/// A document's stored references: (target URL id, kind, anchor text), in document order.
pub type Links = Vec<(i64, String, String)>;

/// A document as stored: its parse, with its references by URL id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredDocument {
    /// `<title>`.
    pub title: Option<String>,
    /// The owner it names.
    pub owner: Option<String>,
    /// The expiry it names.
    pub expires: Option<String>,
    /// Parse errors.
    pub parse_errors: u32,
    /// Its unique references, in document order: (target URL id, kind, anchor text).
    pub links: Links,
    /// The line of each of `links`, from 1 (0 when not known); empty
    /// unless the scan reads lines ([`Scan::DocumentsWithLines`]) and the
    /// parse knew them.
    pub lines: Vec<u32>,
    /// The column of each of `links` on its line, from 1 (0 when not
    /// known); empty unless the scan reads lines and the parse knew them.
    pub columns: Vec<u32>,
}

/// What a scan of the run reads of each URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scan {
    /// Every result.
    Results,
    /// Every result, each with its document when the URL is a document of a task.
    ResultsAndDocuments,
    /// Like `ResultsAndDocuments`, the documents without their references
    /// (`links` empty: they are not read).
    ResultsAndDocumentHeads,
    /// The results of the tasks' documents, each with its document.
    Documents,
    /// Like `Documents`, each document with the line and column of each reference.
    DocumentsWithLines,
}

/// The URL ids a connection's scans of a run are limited to, in the order
/// the caller sorted them (URL order, for the report stage): a temporary
/// table of that connection, ranked. Each scan walks it by rank, so SQLite
/// neither looks at the other URLs nor sorts anything. A connection keeps
/// two: [`Store::scan_set`] and [`Store::document_scan_set`].
#[derive(Debug)]
pub struct ScanSet {
    /// Its temporary table.
    table: &'static str,
}

/// The documents of a run that refer to each URL, with the anchor text of
/// each reference: what a person needs to fix a broken link.
#[derive(Debug, Default)]
pub struct Referrers {
    /// The referring documents' URLs, each once.
    documents: Vec<Box<str>>,
    /// By target URL (chosen by the web: the default, keyed hasher), the
    /// referring documents (indexes into `documents`, in URL order) with
    /// the anchor text.
    by_target: std::collections::HashMap<Box<str>, Vec<(u32, Box<str>)>>,
}

impl Referrers {
    /// The documents that refer to `url`, in URL order, each with the
    /// reference's anchor text (empty when it has none).
    pub fn of(&self, url: &str) -> impl ExactSizeIterator<Item = (&str, &str)> + '_ {
        self.by_target
            .get(url)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .map(|(d, text)| (&*self.documents[*d as usize], &**text))
    }
}

/// A document's stored `links` column, read.
pub(super) fn parse_links(doc: i64, json: &str) -> Result<Links, StoreError> {
    parse_column(doc, "links", json)
}

/// A document's JSON column `what`, read.
fn parse_column<T: serde::de::DeserializeOwned>(
    doc: i64,
    what: &str,
    json: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(json).map_err(|e| {
        StoreError::Io(format!(
            "the stored {what} of document #{doc} are damaged: {e}"
        ))
    })
}

/// The name of the temporary table `table` in `dialect`'s SQL.
fn temp_table(dialect: Dialect, table: &str) -> String {
    match dialect {
        Dialect::Sqlite => format!("temp.{table}"),
        Dialect::Postgres => format!("pg_temp.{table}"),
    }
}

impl Store {
    /// Every URL with a result in `run`, by id, summarised.
    pub fn run_url_summaries(&self, run: i64) -> Result<HashMap<i64, UrlSummary>, StoreError> {
        Ok(self.conn.query_vec("SELECT r.url_id, u.url, r.category, r.status, r.error, r.final_url, r.last_modified
             FROM results r JOIN urls u ON u.id = r.url_id WHERE r.run_id = ?1", params![run], |r| {
            let category = Category::from_name(&r.get::<_, String>(2)?).unwrap_or(Category::Broken);
            let error: Option<String> = r.get(4)?;
            let final_url: Option<String> = r.get(5)?;
            let detail = match category {
                Category::Moved => final_url,
                _ => error,
            };
            Ok((
                r.get::<_, i64>(0)?,
                UrlSummary {
                    url: r.get::<_, String>(1)?.into(),
                    category,
                    status: r.get(3)?,
                    detail: detail.map(Into::into),
                    last_modified: r.get::<_, Option<String>>(6)?.map(Into::into),
                },
            ))
        })?.into_iter().collect())
    }

    /// Which documents of `run` (of any task) refer to each URL, with the
    /// anchor texts: for the URLs `only` names, or for every URL.
    pub fn run_referrers(&self, run: i64, only: Option<&[&str]>) -> Result<Referrers, StoreError> {
        // The targets wanted, by id, with their URLs.
        let mut targets: HashMap<i64, Box<str>> = HashMap::default();
        match only {
            Some(urls) => {
                for &url in urls {
                    let sql = "SELECT id FROM urls WHERE url = ?1";
                    if let Some(id) = self.conn.query_opt(sql, params![url], |r| r.get(0))? {
                        targets.insert(id, url.into());
                    }
                }
                if targets.is_empty() {
                    return Ok(Referrers::default());
                }
            }
            None => {
                let rows = self.conn.query_vec(
                    "SELECT r.url_id, u.url FROM results r JOIN urls u ON u.id = r.url_id
                     WHERE r.run_id = ?1",
                    params![run],
                    |r| Ok((r.get(0)?, r.get::<_, String>(1)?)),
                )?;
                for (id, url) in rows {
                    targets.insert(id, url.into());
                }
            }
        }
        let mut referrers = Referrers::default();
        let sql = "SELECT u.id, u.url, d.links FROM urls u JOIN documents d ON d.url_id = u.id
             WHERE u.id IN (SELECT url_id FROM task_documents WHERE run_id = ?1) ORDER BY u.url";
        self.conn.for_each(sql, params![run], |row| {
            let doc: i64 = row.get(0)?;
            let links = parse_links(doc, &row.get::<_, String>(2)?)?;
            let mut number = None;
            for (target, _, text) in links {
                let Some(url) = targets.get(&target) else {
                    continue;
                };
                let n = *number.get_or_insert_with(|| {
                    referrers.documents.push(String::new().into());
                    referrers.documents.len() as u32 - 1
                });
                let list = referrers.by_target.entry(url.clone()).or_default();
                // A document refers to a URL once, though it may do so in
                // several ways (a link and an image): the first text that says something.
                match list.last_mut() {
                    Some((d, t)) if *d == n => {
                        if t.is_empty() {
                            *t = text.into();
                        }
                    }
                    _ => list.push((n, text.into())),
                }
            }
            if let Some(n) = number {
                referrers.documents[n as usize] = row.get::<_, String>(1)?.into();
            }
            Ok::<_, StoreError>(())
        })?;
        Ok(referrers)
    }

    /// The documents of each task of `run`: (task id, document URL id).
    pub fn run_task_documents(&self, run: i64) -> Result<Vec<(i64, i64)>, StoreError> {
        Ok(self
            .conn
            .query_vec(
                "SELECT task_id, url_id FROM task_documents WHERE run_id = ?1",
                params![run],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?
            .into_iter()
            .collect())
    }

    /// Each document of each task of `run`, one at a time: (task id,
    /// document URL id, its title, the URL ids of its references in
    /// document order). Documents without a stored parse are left out.
    pub fn scan_task_documents(
        &self,
        run: i64,
        mut each: impl FnMut(i64, i64, Option<String>, Vec<i64>),
    ) -> Result<(), StoreError> {
        let sql = "SELECT td.task_id, td.url_id, d.title, d.links FROM task_documents td
             JOIN documents d ON d.url_id = td.url_id WHERE td.run_id = ?1";
        self.conn.for_each(sql, params![run], |row| {
            let doc: i64 = row.get(1)?;
            let json: String = row.get(3)?;
            // Only the targets' ids: the kinds and anchor texts are skipped unread.
            let links: Vec<(i64, serde::de::IgnoredAny, serde::de::IgnoredAny)> =
                serde_json::from_str(&json).map_err(|e| {
                    StoreError::Io(format!(
                        "the stored links of document #{doc} are damaged: {e}"
                    ))
                })?;
            each(
                row.get(0)?,
                doc,
                row.get(2)?,
                links.into_iter().map(|(id, _, _)| id).collect(),
            );
            Ok::<_, StoreError>(())
        })
    }

    /// The URL id of task `task`'s top, if the URL is known.
    pub fn task_top_id(&self, task: i64) -> Result<Option<i64>, StoreError> {
        self.conn.query_opt(
            "SELECT u.id FROM tasks t JOIN urls u ON u.url = t.top_url WHERE t.id = ?1",
            params![task],
            |r| r.get(0),
        )
    }

    /// Limit this connection's scans that name the set to the URL ids
    /// `ids`, each once, read in the order given (the caller sorts them by
    /// URL, from the URLs it holds already: cheaper than a join and a sort
    /// here; an id given twice is read twice), replacing what an earlier
    /// call kept. Call it before a read snapshot begins: it writes a
    /// temporary table, in memory.
    pub fn scan_set(&self, ids: impl IntoIterator<Item = i64>) -> Result<ScanSet, StoreError> {
        self.fill_scan_set("scan_set", ids)
    }

    /// A second set, as [`Store::scan_set`] makes one, for a scan of
    /// documents whose order is not the URLs' (the report stage reads the
    /// documents of several workers' tasks in turns); replacing what an
    /// earlier call kept, but not the first set.
    pub fn document_scan_set(
        &self,
        ids: impl IntoIterator<Item = i64>,
    ) -> Result<ScanSet, StoreError> {
        self.fill_scan_set("document_scan_set", ids)
    }

    fn fill_scan_set(
        &self,
        table: &'static str,
        ids: impl IntoIterator<Item = i64>,
    ) -> Result<ScanSet, StoreError> {
        let temp = temp_table(self.conn.dialect(), table);
        // SQLite's rows are kept in rank order when the rank is the rowid
        // (exactly `INTEGER PRIMARY KEY`).
        let rank = match self.conn.dialect() {
            Dialect::Sqlite => "INTEGER",
            Dialect::Postgres => "BIGINT",
        };
        let create = format!(
            "CREATE TEMP TABLE IF NOT EXISTS {table} (rank {rank} PRIMARY KEY, id BIGINT NOT NULL);
             DELETE FROM {temp};"
        );
        let tx = match self.conn.dialect() {
            Dialect::Sqlite => {
                self.conn
                    .execute_batch(&format!("PRAGMA temp_store = MEMORY; {create}"))?;
                let tx = self.conn.transaction(TxMode::Deferred)?;
                // Ranks in increasing order: each row is appended to the table.
                let insert = format!("INSERT INTO {temp} (rank, id) VALUES (?1, ?2)");
                for (rank, id) in ids.into_iter().enumerate() {
                    tx.execute(&insert, params![rank as i64, id])?;
                }
                tx
            }
            Dialect::Postgres => {
                // A statement a row would be a round trip a row: rows go a
                // thousand at a time, written out (they are integers).
                let tx = self.conn.transaction(TxMode::Deferred)?;
                tx.execute_batch(&create)?;
                let mut ids = ids.into_iter().enumerate().peekable();
                while ids.peek().is_some() {
                    let mut insert = format!("INSERT INTO {temp} (rank, id) VALUES ");
                    for (i, (rank, id)) in ids.by_ref().take(1_000).enumerate() {
                        let comma = if i == 0 { "" } else { "," };
                        let _ = write!(insert, "{comma}({rank},{id})");
                    }
                    tx.execute_batch(&insert)?;
                }
                tx
            }
        };
        tx.commit()?;
        Ok(ScanSet { table })
    }

    /// Read the results of `run` in the set's order, one at a time, as `scan`
    /// says, and hand each to `each` with its URL id (and its document,
    /// for scans with documents, when one is stored). The URLs not in the
    /// set (made by [`Store::scan_set`] or [`Store::document_scan_set`] on
    /// this connection: `set` proves it was) are skipped before anything of
    /// them is read. The URLs of the results and their referrers come from
    /// `url_of` (the caller holds them already: two fewer lookups a row),
    /// and from the store for an id it does not know.
    pub fn scan_run<'u, E: From<StoreError>>(
        &self,
        run: i64,
        scan: Scan,
        set: &ScanSet,
        url_of: impl Fn(i64) -> Option<&'u str>,
        mut each: impl FnMut(i64, CheckResult, Option<StoredDocument>) -> Result<(), E>,
    ) -> Result<(), E> {
        self.scan_run_with_previous(run, scan, set, url_of, false, |id, result, _, document| {
            each(id, result, document)
        })
    }

    /// [`Store::scan_run`], each result with, when `with_previous` is
    /// asked, the newest result of its URL from a run before `run` (what a
    /// change detector compares with), read in the same pass rather than by
    /// a query a row.
    pub fn scan_run_with_previous<'u, E: From<StoreError>>(
        &self,
        run: i64,
        scan: Scan,
        set: &ScanSet,
        url_of: impl Fn(i64) -> Option<&'u str>,
        with_previous: bool,
        mut each: impl FnMut(
            i64,
            CheckResult,
            Option<CheckResult>,
            Option<StoredDocument>,
        ) -> Result<(), E>,
    ) -> Result<(), E> {
        const ONLY_DOCUMENTS: &str =
            "AND r.url_id IN (SELECT url_id FROM task_documents WHERE run_id = ?1)";
        let (documents, only_documents) = match scan {
            Scan::Results => ("NULL, NULL, NULL, NULL, NULL, NULL, NULL", ""),
            Scan::ResultsAndDocuments => (
                "d.title, d.owner, d.expires, d.parse_errors, d.links, NULL, NULL",
                "",
            ),
            Scan::ResultsAndDocumentHeads => (
                "d.title, d.owner, d.expires, d.parse_errors, \
                 CASE WHEN d.url_id IS NULL THEN NULL ELSE '[]' END, NULL, NULL",
                "",
            ),
            Scan::Documents => (
                "d.title, d.owner, d.expires, d.parse_errors, d.links, NULL, NULL",
                ONLY_DOCUMENTS,
            ),
            Scan::DocumentsWithLines => (
                "d.title, d.owner, d.expires, d.parse_errors, d.links, d.lines, d.columns",
                ONLY_DOCUMENTS,
            ),
        };
        let results = &*RESULT_COLUMNS_BY_ID;
        let dialect = self.conn.dialect();
        let table = temp_table(dialect, set.table);
        // SQLite takes CROSS JOIN's left side as the outer loop; PostgreSQL
        // plans the join itself.
        let join = match dialect {
            Dialect::Sqlite => "CROSS JOIN",
            Dialect::Postgres => "JOIN",
        };
        // The previous result's columns after the document's, from the
        // newest run before this one that has the URL (an index seek a row).
        let (previous, previous_join) = match with_previous {
            true => (
                format!(", {}", results.replace("r.", "p.")),
                "LEFT JOIN results p ON p.url_id = r.url_id AND p.run_id =
                 (SELECT MAX(q.run_id) FROM results q WHERE q.url_id = r.url_id AND q.run_id < ?1)",
            ),
            false => (String::new(), ""),
        };
        let sql = format!(
            // CROSS JOIN keeps the set the outer loop, walked by rank.
            "SELECT r.url_id, {results}, {documents}{previous} FROM {table} s
             {join} results r ON r.run_id = ?1 AND r.url_id = s.id
             LEFT JOIN documents d ON d.url_id = r.url_id
             {previous_join}
             WHERE TRUE {only_documents} ORDER BY s.rank"
        );
        self.conn.for_each(&sql, params![run], |row| {
            let id: i64 = row.get(0)?;
            let url = self.known_url(id, &url_of)?.unwrap_or_default();
            let result = self.result_at(row, 1, url, &url_of)?;
            // The document's columns follow the result's.
            let d = 1 + RESULT_COLUMNS_BY_ID_LEN;
            let links: Option<String> = row.get(d + 4)?;
            let document = match links {
                Some(json) => Some(StoredDocument {
                    title: row.get(d)?,
                    owner: row.get(d + 1)?,
                    expires: row.get(d + 2)?,
                    parse_errors: row.get(d + 3)?,
                    links: parse_links(id, &json)?,
                    lines: match row.get::<_, Option<String>>(d + 5)? {
                        Some(lines) => parse_column(id, "lines", &lines)?,
                        None => Vec::new(),
                    },
                    columns: match row.get::<_, Option<String>>(d + 6)? {
                        Some(columns) => parse_column(id, "columns", &columns)?,
                        None => Vec::new(),
                    },
                }),
                None => None,
            };
            // The previous result's columns follow the document's seven.
            let p = d + 7;
            let previous = match with_previous && !row.is_null(p + 1)? {
                true => Some(self.result_at(row, p, result.url.clone(), &url_of)?),
                false => None,
            };
            each(id, result, previous, document)
        })
    }

    /// The URL of id `id`: from `url_of` (what the caller holds), or from
    /// the store for an id it does not know.
    fn known_url<'u>(
        &self,
        id: i64,
        url_of: &impl Fn(i64) -> Option<&'u str>,
    ) -> Result<Option<String>, StoreError> {
        match url_of(id) {
            Some(u) => Ok(Some(u.to_string())),
            None => self.url_by_id(id),
        }
    }

    /// The result whose [`RESULT_COLUMNS_BY_ID`] begin at column `at` of
    /// `row`, of URL `url`, its referrer's URL found as [`Store::known_url`]
    /// finds one.
    fn result_at<'u>(
        &self,
        row: &Row<'_>,
        at: usize,
        url: String,
        url_of: &impl Fn(i64) -> Option<&'u str>,
    ) -> Result<CheckResult, StoreError> {
        let mut result = result_from_row(row, at)?;
        result.url = url;
        // The referrer's id is the last of the columns.
        result.referrer = match row.get::<_, Option<i64>>(at + RESULT_COLUMNS_BY_ID_LEN - 1)? {
            Some(referrer) => self.known_url(referrer, url_of)?,
            None => None,
        };
        Ok(result)
    }

    /// The URL of id `id`.
    pub fn url_by_id(&self, id: i64) -> Result<Option<String>, StoreError> {
        self.conn
            .query_opt("SELECT url FROM urls WHERE id = ?1", params![id], |r| {
                r.get(0)
            })
    }

    /// Whether any run before `run` stored results (else nothing has a previous result).
    pub fn has_results_before(&self, run: i64) -> Result<bool, StoreError> {
        self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM results WHERE run_id < ?1)",
            params![run],
            |r| r.get(0),
        )
    }
}
