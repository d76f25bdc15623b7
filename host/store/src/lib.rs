//! The store stage: an embedded SQLite database (WAL mode), or a PostgreSQL
//! database (`location.rs` says where, `db.rs` speaks to either), holding
//! URLs, results per run, documents, the link graph, task roles, the sites
//! table with the robots.txt cache, avoid entries, runs and tasks.
//!
//! Writes go through the [`StoreWriter`] thread; reads (the cache lookups of
//! the crawl, and the `results` command) use the [`Store`]'s own connection.

// Each dependency listed is used (tests' own are dev-dependencies).
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

mod archive;
mod collections;
mod db;
mod error;
mod fragments;
mod held;
mod library;
mod location;
mod lock;
mod outbox;
mod reconnect;
mod run_view;
mod schema;
mod shared;
mod task_view;
#[cfg(any(test, feature = "test-support"))]
#[doc(hidden)]
pub mod testing;
mod writer;

pub use archive::{
    ArchiveDocument, ArchiveFact, ArchiveImport, BadDocument, DocumentSummary, ImportCounts,
    ImportError, ImportOptions, IndexedDocument, MAX_IMPORTED_REFERENCES,
};
pub use collections::{ArchivedPage, CollectedFile, CollectionRow, MainPage, UrlMemory};
pub use error::StoreError;
pub use fragments::BrokenFragment;
pub use held::HeldStore;
pub use library::{
    LibraryError, LibraryNode, Opened, PointerCheck, Posting, PostingKind, PostingText,
};
pub use location::StoreLocation;
pub use lock::{CrawlLock, LockError, lock_path, machine_name};
pub use outbox::{Mail, QueuedMail};
pub use reconnect::{RideOut, wait_for_database};
pub use shared::{ClaimedSite, HeldSite, SharedPhase, SharedReach, SharedRun};

pub use writer::{DocumentRecord, SiteRecord, StoreOp, StoreWriter};

use db::{Conn, Row, TxMode, params};
pub use run_view::{Links, Referrers, Scan, ScanSet, StoredDocument, UrlSummary};
use rusqlite::Connection;
use spinneret_core::document::RefKind;
use spinneret_core::model::TaskRecord;
use spinneret_core::model::{Category, CheckResult, Hop, Source};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Put the store in WAL mode. Changing the journal mode does not wait for
/// another connection that holds a lock (SQLite answers "busy" at once), so
/// a new store opened by two processes at once is retried here, for as long
/// as the busy timeout.
fn set_wal(conn: &Connection) -> Result<(), StoreError> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            other => return other.map_err(StoreError::from),
        }
    }
}

pub(crate) fn connect(path: &Path) -> Result<Connection, StoreError> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    set_wal(&conn)?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "OFF")?;
    // The bundled SQLite is built with STAT4, which makes every statement whose
    // plan could depend on a bound value expire when its bindings are cleared,
    // so cached statements would be compiled again on each use. A stable plan
    // is what a store of fixed-shape queries wants.
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    Ok(conn)
}

/// The most URL ids a connection's cache keeps: past it the cache starts
/// again, so a crawl of millions of URLs does not hold a second copy of
/// every URL (the urls table's index answers what the cache forgot).
pub(crate) const URL_ID_CACHE: usize = 32_768;

/// The id of `url`, inserting it when new, with a per-connection cache.
pub(crate) fn url_id_cached(
    conn: &Conn,
    cache: &mut foldhash::HashMap<String, i64>,
    url: &str,
) -> Result<i64, StoreError> {
    if let Some(id) = cache.get(url) {
        return Ok(*id);
    }
    if cache.len() >= URL_ID_CACHE {
        cache.clear();
    }
    // New URLs (the common case in a crawl) take one statement; known ones a second.
    let inserted: Option<i64> = conn.query_opt(
        "INSERT INTO urls (url) VALUES (?1) ON CONFLICT (url) DO NOTHING RETURNING id",
        params![url],
        |r| r.get(0),
    )?;
    let id = match inserted {
        Some(id) => id,
        None => conn.query_row("SELECT id FROM urls WHERE url = ?1", params![url], |r| {
            r.get(0)
        })?,
    };
    cache.insert(url.to_string(), id);
    Ok(id)
}

/// The ids of a run and of its tasks (by task name).
#[derive(Clone, Debug)]
pub struct RunIds {
    /// The run's id.
    pub run: i64,
    /// Task name to task id.
    pub tasks: HashMap<String, i64>,
    /// Whether this run continues an interrupted one.
    pub resumed: bool,
}

/// An earlier result of a URL, as the crawl needs it to reuse or revalidate.
#[derive(Clone, Debug)]
pub struct CachedResult {
    /// The run that produced it.
    pub run: i64,
    /// The result.
    pub result: CheckResult,
    /// The Owner of the document, when it was parsed.
    pub doc_owner: Option<String>,
    /// Whether it was parsed as an HTML document (its links are in the store).
    pub is_document: bool,
    /// Whether that parse is from before the store kept a document's places
    /// and its links' fragments (schema 10): the document is fetched again
    /// in full, not revalidated, so its fragments are checked.
    pub doc_predates_fragments: bool,
}

/// A run, as listed.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RunRow {
    /// Its id.
    pub id: i64,
    /// The configuration it ran.
    pub config: Option<String>,
    /// Start (Unix seconds).
    pub started_at: i64,
    /// End (Unix seconds), when it finished.
    pub finished_at: Option<i64>,
    /// `running`, `interrupted` (stopped; `--resume` continues it),
    /// `crawled` (every URL checked, the report stage not yet done) or
    /// `finished` (reports written and mail queued).
    pub status: String,
}

/// A task of a run, as listed.
#[derive(Clone, Debug, serde::Serialize)]
pub struct TaskRow {
    /// Its id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// site, tree or owner.
    pub kind: String,
    /// The top URL.
    pub top_url: String,
    /// Where its reports were written.
    pub output_dir: Option<String>,
}

/// A parsed document, as stored.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DocumentRow {
    /// Its title.
    pub title: Option<String>,
    /// Its Owner.
    pub owner: Option<String>,
    /// `<meta http-equiv=expires>`, as written.
    pub expires: Option<String>,
    /// The encoding it was decoded with.
    pub encoding: Option<String>,
    /// Recoverable HTML errors, bytes invalid in the encoding counted as one.
    pub parse_errors: u32,
    /// Whether bytes were invalid in the encoding.
    pub decode_errors: bool,
}

/// A run as plugins see it; see [`Store::run_info`].
#[derive(Clone, Debug)]
pub struct RunInfoRow {
    /// When it started.
    pub started_at: i64,
    /// How it was invoked (JSON).
    pub options: Option<String>,
    /// The completely crawled run before it.
    pub previous_run: Option<i64>,
}

/// A stored finding.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FindingRow {
    /// The task it belongs to.
    pub task: String,
    /// What kind: `moved`, `broken`, `recently-modified`, `expiring`, …
    pub kind: String,
    /// The URL it is about.
    pub url: String,
    /// The document referring to it.
    pub referrer: Option<String>,
    /// One line for a human.
    pub message: String,
    /// `info`, `warning` or `error`.
    pub severity: String,
    /// The plugin that reported it.
    pub source: String,
}

/// A read transaction on the store; see [`Store::read_snapshot`]. Reads
/// end when it is dropped.
pub struct ReadSnapshot<'a>(#[allow(dead_code)] db::Tx<'a>);

/// A robots.txt cached in the sites table.
#[derive(Clone, Debug)]
pub struct CachedSite {
    /// `ok`, `missing`, `forbidden` or `unreachable`.
    pub robots_status: String,
    /// The body, when read.
    pub robots_body: Option<String>,
    /// When it must be fetched again (Unix seconds).
    pub expires_at: i64,
}

/// A sites table row's robots.txt, read from the columns `robots_status,
/// robots_body, expires_at` starting at column `at`.
fn cached_site(r: &Row<'_>, at: usize) -> Result<CachedSite, StoreError> {
    Ok(CachedSite {
        robots_status: r.get(at)?,
        robots_body: r.get(at + 1)?,
        expires_at: r.get(at + 2)?,
    })
}

/// The store: on an SQLite file, or on PostgreSQL.
pub struct Store {
    location: StoreLocation,
    conn: Conn,
    /// How this store's connections wait for a database that went away
    /// (`None`: they do not; see [`Store::ride_out`]).
    ride_out: std::cell::Cell<Option<RideOut>>,
}

/// The query of [`Store::latest_result`] (one text, so that its cached
/// statement is found again).
fn latest_result_sql() -> String {
    format!(
        "SELECT r.run_id, d.owner, d.url_id IS NOT NULL,
           d.url_id IS NOT NULL AND d.fragments IS NULL, {RESULT_COLUMNS}
         FROM urls u JOIN results r ON r.url_id = u.id
         LEFT JOIN urls ref ON ref.id = r.referrer_id
         LEFT JOIN documents d ON d.url_id = u.id
         WHERE u.url = ?1 ORDER BY r.run_id DESC LIMIT 1"
    )
}

const RESULT_COLUMNS: &str = "u.url, r.category, r.method, r.status, r.error, r.content_type,
    r.content_length, r.size, r.content_hash, r.etag, r.last_modified, r.expires, r.owner,
    r.redirects, r.final_url, r.elapsed_ms, r.truncated, r.attempts, ref.url, r.checked_at, r.source";

fn result_from_row(row: &Row<'_>, at: usize) -> Result<CheckResult, StoreError> {
    let method: Option<String> = row.get(at + 2)?;
    let redirects: Option<String> = row.get(at + 13)?;
    let category: String = row.get(at + 1)?;
    let source: String = row.get(at + 20)?;
    Ok(CheckResult {
        url: row.get(at)?,
        category: Category::from_name(&category).unwrap_or(Category::Broken),
        method: match method.as_deref() {
            Some("HEAD") => Some("HEAD"),
            Some("GET") => Some("GET"),
            _ => None,
        },
        status: row.get(at + 3)?,
        error: row.get(at + 4)?,
        content_type: row.get(at + 5)?,
        content_length: row.get::<_, Option<i64>>(at + 6)?.map(|v| v as u64),
        size: row.get::<_, Option<i64>>(at + 7)?.map(|v| v as u64),
        content_hash: row.get(at + 8)?,
        etag: row.get(at + 9)?,
        last_modified: row.get(at + 10)?,
        expires: row.get(at + 11)?,
        owner: row.get(at + 12)?,
        redirects: redirects
            .and_then(|j| serde_json::from_str::<Vec<Hop>>(&j).ok())
            .unwrap_or_default(),
        final_url: row.get(at + 14)?,
        elapsed_ms: row.get::<_, Option<i64>>(at + 15)?.map(|v| v as u64),
        truncated: row.get(at + 16)?,
        attempts: row.get(at + 17)?,
        referrer: row.get(at + 18)?,
        checked_at: row.get(at + 19)?,
        source: Source::from_name(&source),
    })
}

impl Store {
    /// Open (creating if needed) the store at `path` and bring its schema up to date.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Store::open_at(StoreLocation::File(path.to_path_buf()))
    }

    /// Open (creating it, or its tables, if needed) the store at
    /// `location` and bring its schema up to date.
    pub fn open_at(location: StoreLocation) -> Result<Store, StoreError> {
        if let StoreLocation::File(path) = &location
            && let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        {
            std::fs::create_dir_all(dir)
                .map_err(|e| StoreError::Io(format!("cannot create {}: {e}", dir.display())))?;
        }
        let conn = location.connect()?;
        let known = schema::MIGRATIONS.len() as i64;
        let version = schema::migrate(&conn)?;
        if version > known {
            return Err(StoreError::TooNew {
                store: location.to_string(),
                found: version,
                known,
            });
        }
        Ok(Store {
            location,
            conn,
            ride_out: Default::default(),
        })
    }

    /// Another connection to the same store, for reading on another thread
    /// (a connection cannot be shared between threads).
    pub fn reader(&self) -> Result<Store, StoreError> {
        Store::connect(self.location.clone())
    }

    /// A connection to the store at `location`, opened before (its schema
    /// is not brought up to date).
    pub fn connect(location: StoreLocation) -> Result<Store, StoreError> {
        let conn = location.connect()?;
        Ok(Store {
            location,
            conn,
            ride_out: Default::default(),
        })
    }

    /// Wait out a lost database as `ride` says from now on (`None`: fail
    /// at once, the default): the writers started after this call, the
    /// shared runs joined after it, and what is read through
    /// [`Store::riding_out`]. A store file is never lost.
    pub fn ride_out(&self, ride: Option<RideOut>) {
        self.ride_out.set(ride);
    }

    /// Run `f`, which only reads (or writes what may be written twice),
    /// on this store; when the database connection is lost, wait for the
    /// database as [`Store::ride_out`] said, make the connection again and
    /// run `f` again.
    pub fn riding_out<T>(
        &self,
        mut f: impl FnMut(&Store) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        reconnect::retrying(
            &self.conn,
            self.ride_out.get(),
            "a read of the store",
            &|_| Ok(()),
            |_, _| f(self),
        )
    }

    /// Whether the connection still answers: a file's always does; a
    /// database server may have closed its session (a restart). Asked with
    /// a round trip on a database, which gives up after 5 s.
    pub fn answers(&self) -> bool {
        self.conn.answers()
    }

    /// Where the store is.
    pub fn location(&self) -> &StoreLocation {
        &self.location
    }

    /// The store's file (`None` for a store on a database server).
    pub fn path(&self) -> Option<&Path> {
        match &self.location {
            StoreLocation::File(path) => Some(path),
            StoreLocation::Postgres(_) => None,
        }
    }

    /// Start the writer thread (its own connection).
    pub fn writer(&self) -> Result<StoreWriter, StoreError> {
        StoreWriter::start(&self.location, self.ride_out.get())
    }

    /// Record a new run of `tasks`.
    pub fn begin_run(
        &self,
        config: Option<&str>,
        options: &str,
        tasks: &[TaskRecord<'_>],
    ) -> Result<RunIds, StoreError> {
        let run: i64 = self.conn.query_row(
            "INSERT INTO runs (config, started_at, status, options) VALUES (?1, ?2, 'running', ?3)
             RETURNING id",
            params![config, spinneret_core::model::unix_now(), options],
            |r| r.get(0),
        )?;
        let tasks = self.insert_tasks(run, tasks)?;
        Ok(RunIds {
            run,
            tasks,
            resumed: false,
        })
    }

    fn insert_tasks(
        &self,
        run: i64,
        tasks: &[TaskRecord<'_>],
    ) -> Result<HashMap<String, i64>, StoreError> {
        let mut ids = HashMap::new();
        for t in tasks {
            self.conn.execute("INSERT INTO tasks (run_id, name, kind, top_url, email, output_dir, changed_days, expiring_days)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT DO NOTHING", params![
                    run,
                    t.name,
                    t.kind.as_str(),
                    t.top,
                    t.email,
                    t.output.display().to_string(),
                    t.changed_days,
                    t.expiring_days
                ])?;
            let id: i64 = self.conn.query_row(
                "SELECT id FROM tasks WHERE run_id = ?1 AND name = ?2",
                params![run, t.name],
                |r| r.get(0),
            )?;
            ids.insert(t.name.to_string(), id);
        }
        Ok(ids)
    }

    /// The newest unfinished run of `config`, reopened for `--resume` (tasks added as needed).
    pub fn resume_run(
        &self,
        config: Option<&str>,
        tasks: &[TaskRecord<'_>],
    ) -> Result<Option<RunIds>, StoreError> {
        let run: Option<i64> = self.conn.query_opt(
            "SELECT id FROM runs WHERE config IS NOT DISTINCT FROM ?1 ORDER BY id DESC LIMIT 1",
            params![config],
            |r| r.get(0),
        )?;
        let Some(run) = run else { return Ok(None) };
        let status: String =
            self.conn
                .query_row("SELECT status FROM runs WHERE id = ?1", params![run], |r| {
                    r.get(0)
                })?;
        if status == "finished" {
            return Ok(None);
        }
        self.conn.execute(
            "UPDATE runs SET status = 'running' WHERE id = ?1",
            params![run],
        )?;
        let tasks = self.insert_tasks(run, tasks)?;
        Ok(Some(RunIds {
            run,
            tasks,
            resumed: true,
        }))
    }

    /// Mark a run `interrupted`, `crawled` or `finished`.
    pub fn end_run(&self, run: i64, status: &str) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE runs SET status = ?2, finished_at = ?3 WHERE id = ?1",
            params![run, status, spinneret_core::model::unix_now()],
        )?;
        Ok(())
    }

    /// Hold one read transaction while it lives: the reads made meanwhile
    /// see one consistent state and skip a file lock per statement (that
    /// was a third of the report stage).
    pub fn read_snapshot(&self) -> Result<ReadSnapshot<'_>, StoreError> {
        Ok(ReadSnapshot(self.conn.transaction(TxMode::Snapshot)?))
    }

    /// Whether any result is stored at all (a fresh store needs no cache lookups).
    pub fn has_results(&self) -> Result<bool, StoreError> {
        self.conn
            .query_row("SELECT EXISTS (SELECT 1 FROM results)", params![], |r| {
                r.get(0)
            })
    }

    /// The robots.txt the sites table holds for `site` (a site key), if
    /// it has not expired at `now` (a worker of a shared run taking a site
    /// over reads what the earlier holder stored).
    pub fn load_site(&self, site: &str, now: i64) -> Result<Option<CachedSite>, StoreError> {
        self.conn.query_opt(
            "SELECT robots_status, robots_body, expires_at FROM sites
             WHERE site = ?1 AND expires_at > ?2",
            params![site, now],
            |r| cached_site(r, 0),
        )
    }

    /// The newest result of `url` from any run.
    pub fn latest_result(&self, url: &str) -> Result<Option<CachedResult>, StoreError> {
        self.conn
            .query_opt(&latest_result_sql(), params![url], |row| {
                Ok(CachedResult {
                    run: row.get(0)?,
                    doc_owner: row.get(1)?,
                    is_document: row.get(2)?,
                    doc_predates_fragments: row.get(3)?,
                    result: result_from_row(row, 4)?,
                })
            })
    }

    /// Whether the store answers many questions in one better than one
    /// each (a database server: a round trip a question), so that a
    /// caller should ask [`Store::latest_results`] for many URLs at once.
    pub fn prefers_batches(&self) -> bool {
        self.conn.dialect() == db::Dialect::Postgres
    }

    /// The newest result of each of `urls` that has one, from any run, by
    /// URL: [`Store::latest_result`] for many URLs, in one statement on a
    /// database server.
    pub fn latest_results(
        &self,
        urls: &[&str],
    ) -> Result<HashMap<String, CachedResult>, StoreError> {
        let mut found = HashMap::with_capacity(urls.len());
        if self.conn.dialect() == db::Dialect::Sqlite {
            for url in urls {
                if let Some(c) = self.latest_result(url)? {
                    found.insert(url.to_string(), c);
                }
            }
            return Ok(found);
        }
        let sql = format!(
            "SELECT DISTINCT ON (u.url) r.run_id, d.owner, d.url_id IS NOT NULL,
               d.url_id IS NOT NULL AND d.fragments IS NULL, {RESULT_COLUMNS}
             FROM urls u JOIN results r ON r.url_id = u.id
             LEFT JOIN urls ref ON ref.id = r.referrer_id
             LEFT JOIN documents d ON d.url_id = u.id
             WHERE u.url = ANY(?1::text[]) ORDER BY u.url, r.run_id DESC"
        );
        let urls: Vec<Option<&str>> = urls.iter().copied().map(Some).collect();
        for chunk in urls.chunks(10_000) {
            self.conn.for_each(&sql, params![db::Texts(chunk)], |row| {
                let c = CachedResult {
                    run: row.get(0)?,
                    doc_owner: row.get(1)?,
                    is_document: row.get(2)?,
                    doc_predates_fragments: row.get(3)?,
                    result: result_from_row(row, 4)?,
                };
                found.insert(c.result.url.clone(), c);
                Ok::<_, StoreError>(())
            })?;
        }
        Ok(found)
    }

    /// The id of `url`, if the store knows it.
    fn known_url_id(&self, url: &str) -> Result<Option<i64>, StoreError> {
        self.conn
            .query_opt("SELECT id FROM urls WHERE url = ?1", params![url], |r| {
                r.get(0)
            })
    }

    /// The stored references of a document: target (a URL, or the text of an invalid one), kind, anchor text.
    pub fn document_links(&self, url: &str) -> Result<Vec<(String, RefKind, String)>, StoreError> {
        match self.known_url_id(url)? {
            Some(id) => self.document_links_by_id(id),
            None => Ok(Vec::new()),
        }
    }

    /// The stored parse of the document at `url`.
    pub fn document(&self, url: &str) -> Result<Option<DocumentRow>, StoreError> {
        match self.known_url_id(url)? {
            Some(id) => self.document_by_id(id),
            None => Ok(None),
        }
    }

    /// The latest parse of the document with URL id `url_id`, if any.
    pub fn document_by_id(&self, url_id: i64) -> Result<Option<DocumentRow>, StoreError> {
        self.conn.query_opt(
            "SELECT title, owner, expires, encoding, parse_errors, decode_errors
                 FROM documents WHERE url_id = ?1",
            params![url_id],
            document_row,
        )
    }

    /// The sites table entries that have not expired at `now`.
    pub fn load_sites(&self, now: i64) -> Result<HashMap<String, CachedSite>, StoreError> {
        Ok(self.conn.query_vec("SELECT site, robots_status, robots_body, expires_at FROM sites WHERE expires_at > ?1", params![now], |r| {
            Ok((r.get::<_, String>(0)?, cached_site(r, 1)?))
        })?.into_iter().collect())
    }

    /// The newest run, if any.
    pub fn last_run(&self) -> Result<Option<RunRow>, StoreError> {
        self.conn.query_opt(
            "SELECT id, config, started_at, finished_at, status FROM runs ORDER BY id DESC LIMIT 1",
            params![],
            |r| {
                Ok(RunRow {
                    id: r.get(0)?,
                    config: r.get(1)?,
                    started_at: r.get(2)?,
                    finished_at: r.get(3)?,
                    status: r.get(4)?,
                })
            },
        )
    }

    /// What plugins are told about a run: its start, how it was invoked,
    /// and the completely crawled run before it.
    pub fn run_info(&self, run: i64) -> Result<RunInfoRow, StoreError> {
        self.conn.query_row("SELECT started_at, options,
                    (SELECT max(id) FROM runs p WHERE p.id < r.id AND p.status IN ('crawled', 'finished'))
             FROM runs r WHERE id = ?1", params![run], |r| {
                Ok(RunInfoRow {
                    started_at: r.get(0)?,
                    options: r.get(1)?,
                    previous_run: r.get(2)?,
                })
            })
    }

    /// The tasks of a run.
    pub fn run_tasks(&self, run: i64) -> Result<Vec<TaskRow>, StoreError> {
        Ok(self.conn.query_vec("SELECT id, name, kind, top_url, output_dir FROM tasks WHERE run_id = ?1 ORDER BY id", params![run], |r| {
            Ok(TaskRow {
                id: r.get(0)?,
                name: r.get(1)?,
                kind: r.get(2)?,
                top_url: r.get(3)?,
                output_dir: r.get(4)?,
            })
        })?.into_iter().collect())
    }

    /// The results of a run in these categories, in URL order.
    pub fn run_results_in(
        &self,
        run: i64,
        categories: &[Category],
    ) -> Result<Vec<CheckResult>, StoreError> {
        let names: Vec<String> = categories
            .iter()
            .map(|c| format!("'{}'", c.as_str()))
            .collect();
        self.results_where(run, &format!("AND r.category IN ({})", names.join(", ")))
    }

    /// The results of a run whose body was cut at `max_body` (documents
    /// read only in part), in URL order.
    pub fn run_results_cut(&self, run: i64) -> Result<Vec<CheckResult>, StoreError> {
        self.results_where(run, "AND r.truncated = 1")
    }

    /// The results of `run` that `filter` (an SQL condition on `r`, ours)
    /// keeps, in URL order.
    fn results_where(&self, run: i64, filter: &str) -> Result<Vec<CheckResult>, StoreError> {
        let sql = format!(
            "SELECT {RESULT_COLUMNS} FROM results r
             JOIN urls u ON u.id = r.url_id LEFT JOIN urls ref ON ref.id = r.referrer_id
             WHERE r.run_id = ?1 {filter} ORDER BY u.url"
        );
        Ok(self
            .conn
            .query_vec(&sql, params![run], |r| result_from_row(r, 0))?
            .into_iter()
            .collect())
    }

    /// The results of a run, in URL order; with `task`, only the URLs that task reached
    /// (its documents, the targets of their references, and its top), each with the
    /// task's role for it: `document`, `leaf`, `avoided` or `not_checked`.
    pub fn run_results(
        &self,
        run: i64,
        task: Option<i64>,
    ) -> Result<Vec<(CheckResult, Option<String>)>, StoreError> {
        let Some(task) = task else {
            return Ok(self
                .results_where(run, "")?
                .into_iter()
                .map(|r| (r, None))
                .collect());
        };
        Ok(self
            .task_results(run, task)?
            .into_iter()
            .map(|(_, r, role)| (r, Some(role.to_string())))
            .collect())
    }

    /// A document's stored references as (target id, kind, anchor text).
    fn link_ids(&self, doc: i64) -> Result<Links, StoreError> {
        let json: Option<String> = self.conn.query_opt(
            "SELECT links FROM documents WHERE url_id = ?1",
            params![doc],
            |r| r.get(0),
        )?;
        match json {
            Some(json) => run_view::parse_links(doc, &json),
            None => Ok(Vec::new()),
        }
    }

    /// A plugin's key-value space.
    pub fn load_kv(&self, plugin: &str) -> Result<BTreeMap<String, Vec<u8>>, StoreError> {
        Ok(self
            .conn
            .query_vec(
                "SELECT key, value FROM plugin_kv WHERE plugin = ?1",
                params![plugin],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?
            .into_iter()
            .collect())
    }

    /// Replace a plugin's key-value space.
    pub fn save_kv(
        &self,
        plugin: &str,
        entries: &BTreeMap<String, Vec<u8>>,
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction(TxMode::Deferred)?;
        tx.execute("DELETE FROM plugin_kv WHERE plugin = ?1", params![plugin])?;
        for (k, v) in entries {
            tx.execute(
                "INSERT INTO plugin_kv (plugin, key, value) VALUES (?1, ?2, ?3)",
                params![plugin, k, v],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Store a task's findings for a run (replacing any stored before).
    pub fn save_findings(
        &self,
        run: i64,
        task: i64,
        findings: &[FindingRow],
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction(TxMode::Deferred)?;
        tx.execute(
            "DELETE FROM findings WHERE run_id = ?1 AND task_id = ?2",
            params![run, task],
        )?;
        if self.prefers_batches() {
            // A statement for a thousand findings, not a round trip each.
            for (n, chunk) in findings.chunks(1_000).enumerate() {
                let seq: Vec<Option<i64>> = (0..chunk.len())
                    .map(|i| Some((n * 1_000 + i) as i64))
                    .collect();
                let text = |f: &dyn Fn(&FindingRow) -> &str| -> Vec<Option<&str>> {
                    chunk.iter().map(|r| Some(f(r))).collect()
                };
                let referrer: Vec<Option<&str>> =
                    chunk.iter().map(|r| r.referrer.as_deref()).collect();
                tx.execute(
                    "INSERT INTO findings (run_id, task_id, seq, kind, url, referrer, message, severity, source)
                     SELECT CAST(?1 AS BIGINT), CAST(?2 AS BIGINT), * FROM unnest(?3::bigint[], ?4::text[], ?5::text[], ?6::text[],
                       ?7::text[], ?8::text[], ?9::text[])",
                    params![
                        run,
                        task,
                        db::Ints(&seq),
                        db::Texts(&text(&|r| &r.kind)),
                        db::Texts(&text(&|r| &r.url)),
                        db::Texts(&referrer),
                        db::Texts(&text(&|r| &r.message)),
                        db::Texts(&text(&|r| &r.severity)),
                        db::Texts(&text(&|r| &r.source)),
                    ],
                )?;
            }
        } else {
            for (i, f) in findings.iter().enumerate() {
                tx.execute(
                    "INSERT INTO findings (run_id, task_id, seq, kind, url, referrer, message, severity, source)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                    params![
                        run, task, i as i64, f.kind, f.url, f.referrer, f.message, f.severity, f.source
                    ],
                )?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// A run's findings, for one task or all, in the order they were found.
    pub fn findings(&self, run: i64, task: Option<i64>) -> Result<Vec<FindingRow>, StoreError> {
        Ok(self
            .conn
            .query_vec(
                "SELECT t.name, f.kind, f.url, f.referrer, f.message, f.severity, f.source
             FROM findings f JOIN tasks t ON t.id = f.task_id
             WHERE f.run_id = ?1 AND (CAST(?2 AS BIGINT) IS NULL OR f.task_id = ?2)
             ORDER BY f.task_id, f.seq",
                params![run, task],
                |r| {
                    Ok(FindingRow {
                        task: r.get(0)?,
                        kind: r.get(1)?,
                        url: r.get(2)?,
                        referrer: r.get(3)?,
                        message: r.get(4)?,
                        severity: r.get(5)?,
                        source: r.get(6)?,
                    })
                },
            )?
            .into_iter()
            .collect())
    }

    /// Avoid entries derived from robots.txt that are still in force.
    pub fn robots_avoid_entries(&self, now: i64) -> Result<Vec<(String, i64, String)>, StoreError> {
        Ok(self.conn.query_vec("SELECT prefix, expires_at, origin FROM avoid WHERE expires_at IS NULL OR expires_at > ?1 ORDER BY prefix", params![now], |r| {
            Ok((
                r.get(0)?,
                r.get::<_, Option<i64>>(1)?.unwrap_or(0),
                r.get(2)?,
            ))
        })?.into_iter().collect())
    }
}

/// A `documents` row, as the document queries select it.
fn document_row(r: &Row<'_>) -> Result<DocumentRow, StoreError> {
    Ok(DocumentRow {
        title: r.get(0)?,
        owner: r.get(1)?,
        expires: r.get(2)?,
        encoding: r.get(3)?,
        parse_errors: r.get(4)?,
        decode_errors: r.get(5)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use spinneret_core::model::{Category, CheckResult};

    use crate::testing::stores;

    /// A run's mail is queued and the run finished together.
    #[test]
    fn queuing_a_runs_mail_finishes_it() {
        let dir = tempfile::tempdir().unwrap();
        for store in stores(dir.path()) {
            let ids = store.begin_run(None, "{}", &[]).unwrap();
            store.end_run(ids.run, "crawled").unwrap();
            let mail = Mail {
                task: "T".into(),
                recipient: "o@a.example".into(),
                subject: "s".into(),
                body: "b".into(),
            };
            store.queue_mail_and_finish(ids.run, &[mail]).unwrap();
            assert_eq!(store.last_run().unwrap().unwrap().status, "finished");
            assert_eq!(store.queued_mail().unwrap().len(), 1);
        }
    }

    /// A crawl's writes, and what the crawl, the report stage, `results`
    /// and the archive read back: the same on each backend.
    fn a_crawl_read_back(store: &mut Store) -> Vec<String> {
        let (run, task) = write_a_crawl(store);
        let mut seen = read_urls_and_sites(store);
        seen.extend(read_the_runs_views(store, run, task));
        seen.extend(read_summaries_and_documents(store, run));
        seen.extend(end_and_read_the_run(store, run));
        seen
    }

    /// The page of [`write_a_crawl`]: a title and an owner, bad HTML,
    /// references of several kinds (one a URL that does not parse) with
    /// their places, an anchor and a fragment.
    fn a_crawled_page() -> spinneret_core::document::ParsedDocument {
        use spinneret_core::document::{ParsedDocument, Reference};
        let reference = |url: &str, kind, text: &str, line, column| Reference {
            target: url::Url::parse(url).map_err(|e| spinneret_core::document::BadUrl {
                raw: url.to_string(),
                reason: e.to_string(),
            }),
            kind,
            text: text.to_string(),
            line,
            column,
        };
        ParsedDocument {
            title: Some("Home — ünïcode".into()),
            owner: Some("Ann".into()),
            encoding: "utf-8",
            parse_errors: 2,
            bad_html: vec![("missing-quote", 2), ("no-title", 1)],
            references: vec![
                reference("http://a.example/x", RefKind::Anchor, "x it's", 3, 5),
                reference("http://a.example/missing", RefKind::Anchor, "gone", 4, 1),
                reference("http://b.example/p", RefKind::Anchor, "", 5, 9),
                reference("http://a.example/i.png", RefKind::Image, "logo", 6, 2),
                reference("http://[bad", RefKind::Anchor, "bad", 7, 1),
            ],
            anchors: Some(vec!["top".into()]),
            fragments: vec![(2, "part".into(), 5, 9)],
            ..ParsedDocument::default()
        }
    }

    /// A crawl of one task's site, written through the writer thread:
    /// results (one URL twice), two documents, the task's document, a
    /// site's robots.txt; then a finding and a plugin's key-value space.
    /// The run's and the task's ids.
    fn write_a_crawl(store: &mut Store) -> (i64, i64) {
        use spinneret_core::document::ParsedDocument;
        use spinneret_core::model::TaskKind;
        let out = std::path::Path::new("reports/site");
        let task = TaskRecord {
            name: "site",
            kind: TaskKind::Site,
            top: "http://a.example/",
            email: Some("o@a.example"),
            output: out,
            changed_days: 7,
            expiring_days: 3,
        };
        let ids = store.begin_run(Some("c.toml"), "{}", &[task]).unwrap();
        let (run, task) = (ids.run, ids.tasks["site"]);
        let page = "http://a.example/";
        let writer = store.writer().unwrap();
        send_the_results(&writer, run, page);
        writer.send(StoreOp::Document {
            run,
            url: page.into(),
            doc: Box::new(a_crawled_page().into()),
        });
        // The other site's page has no place named `part`.
        let other = ParsedDocument {
            title: Some("P".into()),
            encoding: "utf-8",
            anchors: Some(vec!["other".into()]),
            ..ParsedDocument::default()
        };
        writer.send(StoreOp::Document {
            run,
            url: "http://b.example/p".into(),
            doc: Box::new(other.into()),
        });
        writer.send(StoreOp::TaskDocument {
            run,
            task,
            url: page.into(),
            referrer: None,
        });
        writer.send(StoreOp::Site(Box::new(SiteRecord {
            site: "a.example:80".into(),
            robots_status: "ok".into(),
            robots_body: Some("User-agent: *\nDisallow: /p/".into()),
            http_status: Some(200),
            fetched_at: 1_000,
            expires_at: 9_000,
            robots_lines: vec![(false, "http://a.example/p/".into())],
        })));
        writer.close().unwrap();
        store
            .save_findings(
                run,
                task,
                &[FindingRow {
                    task: "site".into(),
                    kind: "broken".into(),
                    url: "http://a.example/missing".into(),
                    referrer: Some(page.into()),
                    message: "gone".into(),
                    severity: "error".into(),
                    source: "maintenance".into(),
                }],
            )
            .unwrap();
        let kv = BTreeMap::from([("k".to_string(), vec![0u8, 255, 7])]);
        store.save_kv("p", &kv).unwrap();
        (run, task)
    }

    /// The results of run `run` for `page` and what it links to: ok,
    /// moved, broken, and an image written twice in one batch.
    fn send_the_results(writer: &StoreWriter, run: i64, page: &str) {
        use spinneret_core::model::Hop;
        let result = |url: &str, category, status: Option<u16>, referrer: Option<&str>| {
            let mut r =
                CheckResult::unrequested(url, category, "", referrer.map(String::from), 1_000);
            r.status = status;
            r.method = Some("GET");
            r.error = (category == Category::Broken).then(|| "HTTP 404".to_string());
            if category == Category::Moved {
                r.redirects = vec![Hop {
                    url: url.to_string(),
                    status: 301,
                }];
                r.final_url = Some("http://a.example/y".into());
            }
            writer.send(StoreOp::Result {
                run,
                result: Box::new(r),
            });
        };
        result(page, Category::Ok, Some(200), None);
        result("http://a.example/x", Category::Moved, Some(301), Some(page));
        result(
            "http://a.example/missing",
            Category::Broken,
            Some(404),
            Some(page),
        );
        result("http://b.example/p", Category::Ok, Some(200), Some(page));
        let image = "http://a.example/i.png";
        result(image, Category::Ok, Some(200), Some(page));
        // Written twice in one batch: the later write wins.
        result(image, Category::Ok, Some(203), Some(page));
    }

    /// What the next crawl reads of a URL, a document and the sites
    /// (entries 0 to 5 of [`a_crawl_read_back`]).
    fn read_urls_and_sites(store: &Store) -> Vec<String> {
        let page = "http://a.example/";
        vec![
            format!(
                "{:?}",
                store
                    .latest_result("http://a.example/x")
                    .unwrap()
                    .map(|c| (c.result, c.is_document))
            ),
            format!(
                "{:?}",
                store.latest_result(page).unwrap().map(|c| (
                    c.doc_owner,
                    c.is_document,
                    c.doc_predates_fragments
                ))
            ),
            format!("{:?}", store.document(page).unwrap()),
            format!("{:?}", store.document_links(page).unwrap()),
            format!(
                "{:?}",
                store
                    .load_sites(0)
                    .unwrap()
                    .into_iter()
                    .map(|(k, v)| (k, v.robots_status, v.robots_body, v.expires_at))
                    .collect::<Vec<_>>()
            ),
            format!("{:?}", store.robots_avoid_entries(0).unwrap()),
        ]
    }

    /// What the report stage, `results` and the archive read of run `run`
    /// and its task `task` (entries 6 to 18 of [`a_crawl_read_back`]).
    fn read_the_runs_views(store: &Store, run: i64, task: i64) -> Vec<String> {
        vec![
            format!(
                "{:?}",
                store
                    .run_tasks(run)
                    .unwrap()
                    .into_iter()
                    .map(|t| (t.name, t.kind, t.top_url, t.output_dir))
                    .collect::<Vec<_>>()
            ),
            format!("{:?}", store.run_results(run, None).unwrap()),
            format!("{:?}", store.run_results(run, Some(task)).unwrap()),
            format!(
                "{:?}",
                store
                    .run_results_in(run, &[Category::Broken, Category::Moved])
                    .unwrap()
            ),
            format!("{:?}", store.run_results_cut(run).unwrap()),
            format!("{:?}", store.findings(run, None).unwrap()),
            format!("{:?}", store.findings(run, Some(task)).unwrap()),
            format!("{:?}", store.load_kv("p").unwrap()),
            // Without the URL ids, which each backend gives in its own order.
            format!(
                "{:?}",
                store
                    .broken_fragments_of_run(run)
                    .unwrap()
                    .into_iter()
                    .map(|b| (b.source, b.target, b.fragment, b.line, b.column))
                    .collect::<Vec<_>>()
            ),
            format!(
                "{:?}",
                store
                    .bad_html_of_run(run)
                    .unwrap()
                    .into_iter()
                    .map(|b| (b.url, b.faults))
                    .collect::<Vec<_>>()
            ),
            format!("{:?}", store.archive().unwrap()),
            format!("{:?}", store.documents_seq().unwrap()),
            format!("{:?}", store.document_count().unwrap()),
        ]
    }

    /// The run's URL summaries and referrers, every document, and the run
    /// a resumed crawl would take up (entries 19 to 22 of
    /// [`a_crawl_read_back`]).
    fn read_summaries_and_documents(store: &mut Store, run: i64) -> Vec<String> {
        let mut seen = Vec::new();
        let mut summaries: Vec<_> = store
            .run_url_summaries(run)
            .unwrap()
            .into_values()
            .collect();
        summaries.sort_by(|a, b| a.url.cmp(&b.url));
        seen.push(format!("{summaries:?}"));
        let referrers = store.run_referrers(run, None).unwrap();
        seen.push(format!(
            "{:?}",
            referrers.of("http://a.example/missing").collect::<Vec<_>>()
        ));
        let mut docs = Vec::new();
        store
            .for_each_document(0, |d| {
                docs.push((d.title, d.links.len(), d.bad_html));
                Ok(())
            })
            .unwrap();
        seen.push(format!("{docs:?}"));
        seen.push(format!(
            "{:?}",
            store
                .resume_run(Some("c.toml"), &[])
                .unwrap()
                .map(|r| r.resumed)
        ));
        seen
    }

    /// Run `run` ended, and what is read of it then (entries 23 to 26 of
    /// [`a_crawl_read_back`]; the last, the image's status, is the later
    /// of its two writes).
    fn end_and_read_the_run(store: &mut Store, run: i64) -> Vec<String> {
        store.end_run(run, "crawled").unwrap();
        let mut seen = Vec::new();
        seen.push(format!(
            "{:?}",
            store.last_run().unwrap().map(|r| (r.config, r.status))
        ));
        seen.push(format!("{:?}", store.run_info(run).unwrap().previous_run));
        seen.push(format!("{:?}", store.has_results_before(run + 1).unwrap()));
        let image = store.latest_result("http://a.example/i.png").unwrap();
        seen.push(format!("{:?}", image.map(|c| c.result.status)));
        seen
    }

    #[test]
    fn a_crawl_reads_back_the_same_on_each_backend() {
        let dir = tempfile::tempdir().unwrap();
        let mut backends = stores(dir.path());
        let sqlite = a_crawl_read_back(&mut backends[0]);
        // What SQLite gives, as the crawl and the reports rely on it.
        assert!(sqlite[0].contains("category: Moved"), "{}", sqlite[0]);
        assert!(
            sqlite[3].contains("(\"http://[bad\", Anchor, \"bad\")"),
            "{}",
            sqlite[3]
        );
        assert_eq!(
            sqlite[14],
            r#"[("http://a.example/", "http://b.example/p", "part", 5, 9)]"#
        );
        assert_eq!(sqlite[20], r#"[("http://a.example/", "gone")]"#);
        assert_eq!(sqlite.last().unwrap(), "Some(Some(203))");
        for store in &mut backends[1..] {
            let other = a_crawl_read_back(store);
            for (i, (a, b)) in sqlite.iter().zip(&other).enumerate() {
                assert_eq!(a, b, "read {i} differs on {}", store.location());
            }
        }
    }

    #[test]
    fn two_openers_of_a_new_store_do_not_both_create_it() {
        for _ in 0..20 {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("s.db");
            let openers: Vec<_> = (0..4)
                .map(|_| {
                    let path = path.clone();
                    std::thread::spawn(move || Store::open(&path).map(|_| ()))
                })
                .collect();
            for o in openers {
                o.join().unwrap().unwrap();
            }
        }
    }

    /// A store in `dir` with a run that found each of `urls` ok; the run's id.
    fn store_with_results(store: Store, urls: &[String]) -> (Store, i64) {
        let ids = store.begin_run(None, "{}", &[]).unwrap();
        let writer = store.writer().unwrap();
        for url in urls {
            let r = CheckResult::unrequested(url, Category::Ok, "", None, 0);
            writer.send(StoreOp::Result {
                run: ids.run,
                result: Box::new(r),
            });
        }
        writer.close().unwrap();
        (store, ids.run)
    }

    #[test]
    fn cached_statements_are_not_compiled_again_on_each_use() {
        let dir = tempfile::tempdir().unwrap();
        let urls: Vec<String> = (0..20).map(|i| format!("http://a.example/{i}")).collect();
        let store = Store::open(&dir.path().join("s.db")).unwrap();
        let (store, _) = store_with_results(store, &urls);
        for url in &urls {
            assert!(store.latest_result(url).unwrap().is_some());
        }
        let st = store
            .conn
            .sqlite()
            .unwrap()
            .prepare_cached(&latest_result_sql())
            .unwrap();
        assert_eq!(st.get_status(rusqlite::StatementStatus::RePrepare), 0);
    }

    #[test]
    fn a_scan_and_its_previous_results_take_the_urls_given_and_read_the_others() {
        let dir = tempfile::tempdir().unwrap();
        for store in stores(dir.path()) {
            let page = "http://a.example/";
            // Three runs: the first finds the three URLs, the second none of
            // them, the third the first two again (one now broken) and a new one.
            let mut runs = Vec::new();
            let found: [&[(&str, Option<&str>, Category)]; 3] = [
                &[
                    (page, None, Category::Ok),
                    ("http://a.example/x", Some(page), Category::Ok),
                    ("http://b.example/y", Some(page), Category::Ok),
                ],
                &[],
                &[
                    (page, None, Category::Ok),
                    ("http://a.example/x", Some(page), Category::Broken),
                    ("http://c.example/z", Some(page), Category::Ok),
                ],
            ];
            for results in found {
                let run = store.begin_run(None, "{}", &[]).unwrap().run;
                let writer = store.writer().unwrap();
                for &(url, referrer, category) in results {
                    let r =
                        CheckResult::unrequested(url, category, "", referrer.map(String::from), 0);
                    writer.send(StoreOp::Result {
                        run,
                        result: Box::new(r),
                    });
                }
                writer.close().unwrap();
                runs.push(run);
            }
            let ids: HashMap<i64, String> = store
                .conn
                .query_vec("SELECT id, url FROM urls", params![], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .unwrap()
                .into_iter()
                .collect();
            let mut order: Vec<i64> = ids.keys().copied().collect();
            order.sort_unstable_by_key(|id| ids[id].clone());
            let set = store.scan_set(order).unwrap();
            // What the caller knows: every URL, none, or only the page's (the
            // others are read from the store).
            let only_page: HashMap<i64, String> = ids
                .iter()
                .filter(|(_, u)| *u == page)
                .map(|(i, u)| (*i, u.clone()))
                .collect();
            let of = |r: CheckResult| (r.url, r.referrer, r.category);
            for known in [ids.clone(), HashMap::new(), only_page] {
                let url_of = |id| known.get(&id).map(String::as_str);
                let mut read = Vec::new();
                store
                    .scan_run(
                        runs[0],
                        Scan::Results,
                        &set,
                        url_of,
                        |_, r, _| -> Result<(), StoreError> {
                            read.push((r.url, r.referrer));
                            Ok(())
                        },
                    )
                    .unwrap();
                assert_eq!(
                    read,
                    [
                        (page.to_string(), None),
                        ("http://a.example/x".to_string(), Some(page.to_string())),
                        ("http://b.example/y".to_string(), Some(page.to_string())),
                    ]
                );
                // The third run's results, each with the newest earlier one (the
                // first run's: the second had none), none for a new URL.
                let mut read = Vec::new();
                store
                    .scan_run_with_previous(
                        runs[2],
                        Scan::Results,
                        &set,
                        url_of,
                        true,
                        |_, r, previous, _| -> Result<(), StoreError> {
                            read.push((of(r), previous.map(of)));
                            Ok(())
                        },
                    )
                    .unwrap();
                let x = "http://a.example/x".to_string();
                assert_eq!(
                    read,
                    [
                        (
                            (page.to_string(), None, Category::Ok),
                            Some((page.to_string(), None, Category::Ok))
                        ),
                        (
                            (x.clone(), Some(page.to_string()), Category::Broken),
                            Some((x, Some(page.to_string()), Category::Ok))
                        ),
                        (
                            (
                                "http://c.example/z".to_string(),
                                Some(page.to_string()),
                                Category::Ok
                            ),
                            None
                        ),
                    ]
                );
            }
        }
    }

    #[test]
    fn a_scan_reads_its_set_in_the_order_given() {
        let dir = tempfile::tempdir().unwrap();
        for store in stores(dir.path()) {
            let urls = [
                "http://a.example/b",
                "http://a.example/é",
                "http://a.example/a",
            ];
            let (store, run) = store_with_results(store, &urls.map(String::from));
            let id = |url: &str| -> i64 {
                store
                    .conn
                    .query_row("SELECT id FROM urls WHERE url = ?1", params![url], |r| {
                        r.get(0)
                    })
                    .unwrap()
            };
            // URL order as Rust sorts strings (bytes), which is SQLite's BINARY
            // order too; the report stage numbers documents in it.
            let mut sorted = urls.to_vec();
            sorted.sort_unstable();
            let by_sql: Vec<String> = store
                .conn
                .query_vec("SELECT url FROM urls ORDER BY url", params![], |r| r.get(0))
                .unwrap();
            assert_eq!(by_sql, sorted);
            for order in [sorted.clone(), urls.to_vec()] {
                let set = store.scan_set(order.iter().map(|u| id(u))).unwrap();
                let mut read = Vec::new();
                store
                    .scan_run(
                        run,
                        Scan::Results,
                        &set,
                        |_| None,
                        |_, r, _| -> Result<(), StoreError> {
                            read.push(r.url);
                            Ok(())
                        },
                    )
                    .unwrap();
                assert_eq!(read, order);
            }
        }
    }

    #[test]
    fn schema_is_migrated_once_and_newer_stores_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        drop(Store::open(&path).unwrap());
        let store = Store::open(&path).unwrap();
        let v: i64 = store
            .conn
            .query_row("PRAGMA user_version", params![], |r| r.get(0))
            .unwrap();
        assert_eq!(v, schema::MIGRATIONS.len() as i64);
        store
            .conn
            .sqlite()
            .unwrap()
            .pragma_update(None, "user_version", 99)
            .unwrap();
        drop(store);
        let err = Store::open(&path).err().unwrap().to_string();
        assert!(
            err.contains("schema version 99, newer than this spinneret knows"),
            "{err}"
        );
    }
}
