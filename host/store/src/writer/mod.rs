//! The store's writer thread: every result, document and task document goes to one
//! thread that batches them into transactions, so the crawl never waits on disk.
//!
//! A batch commits when 20,000 operations have gathered or 500 ms have passed,
//! whichever is first, so a crash loses at most that window (the engine's
//! `--resume` re-checks what it cannot find). `flush` waits for a commit.
//! On PostgreSQL each table-at-a-time batch of up to 2,000 writes commits
//! on its own (see `run`); a writer told to ride out a lost database
//! (`Store::ride_out`, a worker's) keeps the batch until it is committed,
//! and writes it again whole once the database is back.

use super::{StoreError, StoreLocation, url_id_cached};
use crate::db::{Conn, Dialect, TxMode, params};

mod postgres;
use foldhash::HashMap;
use foldhash::HashMapExt;
use spinneret_core::document::{ParsedDocument, RefKind};
use spinneret_core::model::CheckResult;
use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const BATCH_OPS: usize = 20_000;
const BATCH_TIME: Duration = Duration::from_millis(500);

/// A robots.txt outcome for the sites table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SiteRecord {
    /// `host:port`.
    pub site: String,
    /// `ok`, `missing`, `forbidden` or `unreachable`.
    pub robots_status: String,
    /// The robots.txt body, when read.
    pub robots_body: Option<String>,
    /// Its HTTP status.
    pub http_status: Option<u16>,
    /// When it was fetched (Unix seconds).
    pub fetched_at: i64,
    /// When it must be fetched again (Unix seconds).
    pub expires_at: i64,
    /// The robots.txt lines that apply to this robot, in file order, as
    /// absolute URL prefixes: `(true, prefix)` for Allow, `(false, prefix)`
    /// for Disallow (which are entered as avoid entries).
    pub robots_lines: Vec<(bool, String)>,
}

/// A parsed document as the store keeps it: its references as plain
/// text (the parse's URL objects, with their offsets, are left behind), so a
/// page of many links waiting for the writer holds one compact copy.
#[derive(Debug)]
pub struct DocumentRecord {
    title: Option<String>,
    owner: Option<String>,
    expires_meta: Option<String>,
    http_equiv: Vec<(String, String)>,
    base: Option<String>,
    encoding: &'static str,
    decode_errors: bool,
    parse_errors: u32,
    bad_html: Vec<(&'static str, u32)>,
    /// (target URL, or what was written when it is no URL; kind; anchor text).
    links: Vec<(Box<str>, RefKind, Box<str>)>,
    /// The line of each of `links`, from 1; 0 when not known.
    lines: Vec<u32>,
    /// The column of each of `links` on its line, from 1; 0 when not known.
    columns: Vec<u32>,
    /// Its `id`s and `<a name>`s as JSON; `None` when not known.
    anchors: Option<String>,
    /// The fragments its links point at: (place in `links`, fragment,
    /// the line and column of its first link or 0).
    fragments: Vec<(usize, Box<str>, u32, u32)>,
}

impl From<ParsedDocument> for DocumentRecord {
    fn from(doc: ParsedDocument) -> Self {
        // A new vector, not the parse's reused in place (`collect` would
        // keep its larger allocation alive).
        let mut links = Vec::with_capacity(doc.references.len());
        let lines = doc.references.iter().map(|r| r.line).collect();
        let columns = doc.references.iter().map(|r| r.column).collect();
        links.extend(doc.references.into_iter().map(|r| {
            let target = match r.target {
                Ok(u) => String::from(u),
                Err(b) => b.raw,
            };
            (target.into_boxed_str(), r.kind, r.text.into_boxed_str())
        }));
        DocumentRecord {
            title: doc.title,
            owner: doc.owner,
            expires_meta: doc.expires_meta,
            http_equiv: doc.http_equiv,
            base: doc.base.map(String::from),
            encoding: doc.encoding,
            decode_errors: doc.decode_errors,
            parse_errors: doc.parse_errors,
            bad_html: doc.bad_html,
            links,
            lines,
            columns,
            anchors: doc.anchors.and_then(|a| serde_json::to_string(&a).ok()),
            fragments: doc
                .fragments
                .into_iter()
                .map(|(i, f, line, column)| (i, f.into_boxed_str(), line, column))
                .collect(),
        }
    }
}

/// `numbers` as a JSON array, or `None` when none is known (all 0).
fn numbers_json(numbers: &[u32]) -> Option<String> {
    numbers.iter().any(|&n| n > 0).then(|| {
        let mut json = String::with_capacity(numbers.len() * 4 + 2);
        json.push('[');
        for (i, n) in numbers.iter().enumerate() {
            if i > 0 {
                json.push(',');
            }
            let _ = write!(json, "{n}");
        }
        json.push(']');
        json
    })
}

/// One write.
#[derive(Debug)]
pub enum StoreOp {
    /// What checking a URL found in a run.
    Result {
        /// The run.
        run: i64,
        /// The result.
        result: Box<CheckResult>,
    },
    /// The parse of an HTML document (replaces the earlier one and its links).
    Document {
        /// The run.
        run: i64,
        /// The document's URL.
        url: String,
        /// What the parse found.
        doc: Box<DocumentRecord>,
    },
    /// A document of a task's infostructure.
    TaskDocument {
        /// The run.
        run: i64,
        /// The task's id.
        task: i64,
        /// The document's URL.
        url: String,
        /// The document of the task it was reached from.
        referrer: Option<String>,
    },
    /// A site's robots.txt and the avoid entries derived from it.
    Site(Box<SiteRecord>),
    /// Commit now and answer.
    Flush(SyncSender<()>),
}

/// The handle that sends writes to the writer thread.
pub struct StoreWriter {
    tx: Option<SyncSender<StoreOp>>,
    handle: Option<JoinHandle<Result<(), StoreError>>>,
    /// Set when a write failed (its batch is lost from the store).
    lost: Arc<AtomicBool>,
}

impl StoreWriter {
    pub(super) fn start(
        location: &StoreLocation,
        ride: Option<crate::RideOut>,
    ) -> Result<StoreWriter, StoreError> {
        let conn = location.connect()?;
        if let Some(conn) = conn.sqlite() {
            // The writer keeps the hot pages of its indexes in memory and
            // checkpoints the WAL into the database less often than
            // SQLite's default.
            conn.pragma_update(None, "cache_size", -16_384)?;
            conn.pragma_update(None, "wal_autocheckpoint", 8_192)?;
            conn.pragma_update(None, "temp_store", "MEMORY")?;
        }
        // Room for bursts (a document's results arrive together) without
        // holding a large queue of writes in memory.
        let (tx, rx) = sync_channel(16_384);
        let lost = Arc::new(AtomicBool::new(false));
        let lost_here = lost.clone();
        let handle = std::thread::Builder::new()
            .name("store-writer".into())
            .spawn(move || run(conn, rx, &lost_here, ride))
            .map_err(|e| StoreError::Io(e.to_string()))?;
        Ok(StoreWriter {
            tx: Some(tx),
            handle: Some(handle),
            lost,
        })
    }

    /// Queue a write.
    pub fn send(&self, op: StoreOp) {
        if let Some(tx) = &self.tx {
            // A closed channel means the writer failed; `close` reports why.
            let _ = tx.send(op);
        }
    }

    /// Whether a write failed so far (the writer goes on; `close` says why).
    pub fn lost_writes(&self) -> bool {
        self.lost.load(Ordering::Relaxed)
    }

    /// Wait until everything sent so far is committed.
    pub fn flush(&self) {
        let (ack_tx, ack_rx) = sync_channel(1);
        self.send(StoreOp::Flush(ack_tx));
        let _ = ack_rx.recv();
    }

    /// Commit everything and stop the thread, reporting any write failure.
    pub fn close(mut self) -> Result<(), StoreError> {
        self.tx.take();
        match self.handle.take().map(JoinHandle::join) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(StoreError::Io("the store writer thread panicked".into())),
            None => Ok(()),
        }
    }
}

impl Drop for StoreWriter {
    fn drop(&mut self) {
        self.tx.take();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn run(
    conn: Conn,
    rx: Receiver<StoreOp>,
    lost: &AtomicBool,
    ride: Option<crate::RideOut>,
) -> Result<(), StoreError> {
    let mut ids: HashMap<String, i64> = HashMap::new();
    let mut first_error: Option<StoreError> = None;
    // On PostgreSQL writes are held and written a table at a time.
    let batched = conn.dialect() == Dialect::Postgres;
    let mut batch = postgres::Batch::default();
    // A batch is a transaction of its own on PostgreSQL: it locks the URLs
    // it inserts in URL order, so writers of several workers never wait
    // on each other in a cycle (two batches in one transaction would).
    // Riding out a lost database, it is kept until it is committed and
    // written again whole (each of its statements writes what it says
    // whether it was written before or not).
    let keep = ride.is_some();
    let write_batch = |conn: &Conn,
                       batch: &mut postgres::Batch,
                       ids: &mut HashMap<String, i64>,
                       first_error: &mut Option<StoreError>| {
        let written = crate::reconnect::retrying(
            conn,
            ride,
            "the store writer",
            &|_| Ok(()),
            |conn, again| {
                if again {
                    // The transaction that gave them did not commit.
                    ids.clear();
                }
                conn.transaction(TxMode::Deferred)
                    .and_then(|tx| batch.write(&tx, ids, keep).and_then(|()| tx.commit()))
            },
        );
        *batch = postgres::Batch::default();
        if let Err(e) = written {
            tracing::error!("store write failed: {e}");
            // The transaction did not keep the URLs it gave ids to.
            ids.clear();
            first_error.get_or_insert(e);
            lost.store(true, Ordering::Relaxed);
        }
    };
    loop {
        let Ok(op) = rx.recv() else { break };
        let deadline = Instant::now() + BATCH_TIME;
        let mut acks = Vec::new();
        // SQLite's writes of a batch window share one transaction.
        let tx = match batched {
            true => None,
            false => Some(conn.transaction(TxMode::Deferred)?),
        };
        let mut pending = Some(op);
        let mut n = 0;
        let mut closed = false;
        while let Some(op) = pending.take() {
            match op {
                StoreOp::Flush(ack) => acks.push(ack),
                op if batched => {
                    batch.push(op);
                    if batch.len() >= postgres::ROWS {
                        write_batch(&conn, &mut batch, &mut ids, &mut first_error);
                    }
                }
                op => {
                    let tx = tx.as_ref().expect("SQLite writes in a transaction");
                    if let Err(e) = apply(tx, &mut ids, op) {
                        tracing::error!("store write failed: {e}");
                        first_error.get_or_insert(e);
                        lost.store(true, Ordering::Relaxed);
                    }
                }
            }
            n += 1;
            if n >= BATCH_OPS || !acks.is_empty() {
                break;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(op) => pending = Some(op),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => {
                    closed = true;
                    break;
                }
            }
        }
        if batch.len() > 0 {
            write_batch(&conn, &mut batch, &mut ids, &mut first_error);
        }
        if let Some(Err(e)) = tx.map(|tx| tx.commit()) {
            // The batch is lost from the store; keep going so later batches land.
            tracing::error!("store commit failed: {e}");
            ids.clear();
            first_error.get_or_insert(e);
            lost.store(true, Ordering::Relaxed);
        }
        for ack in acks {
            let _ = ack.send(());
        }
        if closed {
            break;
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Write one operation of a batch in the transaction `tx`; `ids` caches
/// the URL ids looked up or made so far.
fn apply(tx: &Conn, ids: &mut HashMap<String, i64>, op: StoreOp) -> Result<(), StoreError> {
    match op {
        StoreOp::Result { run, result } => write_result(tx, ids, run, &result),
        StoreOp::Document { run, url, doc } => write_document(tx, ids, run, &url, doc),
        StoreOp::TaskDocument {
            run,
            task,
            url,
            referrer,
        } => write_task_document(tx, ids, run, task, &url, referrer.as_deref()),
        StoreOp::Site(s) => write_site(tx, &s),
        StoreOp::Flush(_) => Ok(()),
    }
}

/// What checking a URL found in run `run` (replacing what an earlier
/// write of the run said of it).
fn write_result(
    tx: &Conn,
    ids: &mut HashMap<String, i64>,
    run: i64,
    r: &CheckResult,
) -> Result<(), StoreError> {
    let url_id = url_id_cached(tx, ids, &r.url)?;
    let referrer_id = match &r.referrer {
        Some(u) => Some(url_id_cached(tx, ids, u)?),
        None => None,
    };
    let redirects = if r.redirects.is_empty() {
        None
    } else {
        Some(serde_json::to_string(&r.redirects).unwrap_or_default())
    };
    let sql = "INSERT INTO results (run_id, url_id, category, method, status, error,
           content_type, content_length, size, content_hash, etag, last_modified, expires,
           owner, redirects, final_url, elapsed_ms, truncated, attempts, referrer_id,
           checked_at, source)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
           ?17, ?18, ?19, ?20, ?21, ?22)
         ON CONFLICT (run_id, url_id) DO UPDATE SET category = excluded.category, method = excluded.method, status = excluded.status, error = excluded.error, content_type = excluded.content_type, content_length = excluded.content_length, size = excluded.size, content_hash = excluded.content_hash, etag = excluded.etag, last_modified = excluded.last_modified, expires = excluded.expires, owner = excluded.owner, redirects = excluded.redirects, final_url = excluded.final_url, elapsed_ms = excluded.elapsed_ms, truncated = excluded.truncated, attempts = excluded.attempts, referrer_id = excluded.referrer_id, checked_at = excluded.checked_at, source = excluded.source";
    tx.execute(
        sql,
        params![
            run,
            url_id,
            r.category.as_str(),
            r.method,
            r.status,
            r.error,
            r.content_type,
            r.content_length.map(|v| v as i64),
            r.size.map(|v| v as i64),
            r.content_hash,
            r.etag,
            r.last_modified,
            r.expires,
            r.owner,
            redirects,
            r.final_url,
            r.elapsed_ms.map(|v| v as i64),
            r.truncated,
            r.attempts,
            referrer_id,
            r.checked_at,
            r.source.as_str(),
        ],
    )?;
    Ok(())
}

/// The parse of the document at `url` in run `run`: it replaces the
/// earlier one, keeping its change number when what the search index
/// reads is unchanged.
fn write_document(
    tx: &Conn,
    ids: &mut HashMap<String, i64>,
    run: i64,
    url: &str,
    mut doc: Box<DocumentRecord>,
) -> Result<(), StoreError> {
    let url_id = url_id_cached(tx, ids, url)?;
    let DocumentColumns {
        http_equiv,
        links,
        fragments,
        bad_html,
        lines,
        columns,
    } = document_columns(&mut doc, false, |target| url_id_cached(tx, ids, target))?;
    tx.execute("INSERT INTO documents (url_id, run_id, title, owner, expires, base,
           encoding, parse_errors, decode_errors, http_equiv, links, bad_html,
           anchors, fragments, lines, columns, seq)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
           -- What the search index reads (title, references, bad
           -- HTML) unchanged: the document keeps its change number,
           -- so re-reading an unchanged page costs the index nothing.
           COALESCE(
             (SELECT seq FROM documents WHERE url_id = ?1 AND title IS NOT DISTINCT FROM ?3
                AND links = ?11 AND bad_html IS NOT DISTINCT FROM ?12),
             (SELECT COALESCE(MAX(seq), 0) + 1 FROM documents)))
         ON CONFLICT (url_id) DO UPDATE SET run_id = excluded.run_id, title = excluded.title, owner = excluded.owner, expires = excluded.expires, base = excluded.base, encoding = excluded.encoding, parse_errors = excluded.parse_errors, decode_errors = excluded.decode_errors, http_equiv = excluded.http_equiv, links = excluded.links, bad_html = excluded.bad_html, anchors = excluded.anchors, fragments = excluded.fragments, lines = excluded.lines, columns = excluded.columns, seq = excluded.seq", params![
        url_id,
        run,
        doc.title,
        doc.owner,
        doc.expires_meta,
        doc.base,
        doc.encoding,
        doc.parse_errors,
        doc.decode_errors,
        http_equiv,
        links,
        bad_html,
        doc.anchors,
        fragments,
        lines,
        columns,
    ])?;
    Ok(())
}

/// The document at `url` belongs to task `task`'s infostructure in run
/// `run`, reached from the task's document `referrer`.
fn write_task_document(
    tx: &Conn,
    ids: &mut HashMap<String, i64>,
    run: i64,
    task: i64,
    url: &str,
    referrer: Option<&str>,
) -> Result<(), StoreError> {
    let url_id = url_id_cached(tx, ids, url)?;
    let referrer_id = match referrer {
        Some(u) => Some(url_id_cached(tx, ids, u)?),
        None => None,
    };
    tx.execute(
        "INSERT INTO task_documents (run_id, task_id, url_id, referrer_id)
         VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (run_id, task_id, url_id) DO UPDATE SET referrer_id = excluded.referrer_id",
        params![run, task, url_id, referrer_id],
    )?;
    Ok(())
}

/// A site's robots.txt, and the avoid entries its `Disallow` lines make
/// (replacing those of its earlier robots.txt).
fn write_site(tx: &Conn, s: &SiteRecord) -> Result<(), StoreError> {
    tx.execute("INSERT INTO sites (site, robots_status, robots_body, http_status, fetched_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (site) DO UPDATE SET robots_status = excluded.robots_status, robots_body = excluded.robots_body, http_status = excluded.http_status, fetched_at = excluded.fetched_at, expires_at = excluded.expires_at", params![
        s.site,
        s.robots_status,
        s.robots_body,
        s.http_status,
        s.fetched_at,
        s.expires_at
    ])?;
    let origin = format!("robots.txt of {}", s.site);
    tx.execute("DELETE FROM avoid WHERE origin = ?1", params![&origin])?;
    for (_, prefix) in s.robots_lines.iter().filter(|(allow, _)| !allow) {
        tx.execute("INSERT INTO avoid (prefix, action, expires_at, origin) VALUES (?1, 'Avoid', ?2, ?3)
             ON CONFLICT (origin, prefix) DO UPDATE SET action = excluded.action, expires_at = excluded.expires_at", params![prefix, s.expires_at, origin])?;
    }
    Ok(())
}

/// A document's columns as the `documents` table keeps them (JSON text),
/// its references' targets resolved to URL ids by `id_of`. Its links and
/// their texts are taken out of `doc` as they are written.
pub(crate) struct DocumentColumns {
    pub(crate) http_equiv: Option<String>,
    pub(crate) links: String,
    pub(crate) fragments: String,
    pub(crate) bad_html: Option<String>,
    pub(crate) lines: Option<String>,
    pub(crate) columns: Option<String>,
}

/// With `keep`, `doc`'s links are left in it (to be written again, should
/// the transaction not commit).
pub(crate) fn document_columns(
    doc: &mut DocumentRecord,
    keep: bool,
    mut id_of: impl FnMut(&str) -> Result<i64, StoreError>,
) -> Result<DocumentColumns, StoreError> {
    let http_equiv = if doc.http_equiv.is_empty() {
        None
    } else {
        Some(serde_json::to_string(&doc.http_equiv).unwrap_or_default())
    };
    // The JSON is sized for what it will hold (`[id,"kind","text"],`:
    // an id of up to 9 digits, and a few bytes more for a text with
    // characters to escape), and the record's strings are dropped
    // as they are written: a page of 200,000 links does not hold
    // its links twice over, or a buffer of twice the size it needs.
    let record_links = std::mem::take(&mut doc.links);
    let mut links = String::with_capacity(
        2 + record_links
            .iter()
            .map(|(_, kind, text)| 18 + kind.as_str().len() + text.len() + text.len() / 8)
            .sum::<usize>(),
    );
    let mut fragments = String::new();
    let mut next_fragment = 0;
    links.push('[');
    let mut link = |i: usize, target: &str, kind: RefKind, text: &str| {
        let id = id_of(target)?;
        // The fragments come by reference (the parse sorts them).
        while let Some((_, f, line, column)) = doc
            .fragments
            .get(next_fragment)
            .filter(|(at, _, _, _)| *at == i)
        {
            next_fragment += 1;
            fragments.push(if fragments.is_empty() { '[' } else { ',' });
            let f = serde_json::to_string(f).unwrap_or_else(|_| "\"\"".into());
            let _ = write!(fragments, "[{id},{f},{line},{column}]");
        }
        if i > 0 {
            links.push(',');
        }
        let _ = write!(links, "[{id},\"{}\",", kind.as_str());
        links.push_str(&serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into()));
        links.push(']');
        Ok::<_, StoreError>(())
    };
    match keep {
        true => {
            for (i, (target, kind, text)) in record_links.iter().enumerate() {
                link(i, target, *kind, text)?;
            }
            doc.links = record_links;
        }
        false => {
            for (i, (target, kind, text)) in record_links.into_iter().enumerate() {
                link(i, &target, kind, &text)?;
            }
        }
    }
    links.push(']');
    // `[]` when it has none: NULL is kept for a parse from before
    // fragments were kept (schema 10), which the crawl reads again.
    let fragments = match fragments.is_empty() {
        true => "[]".to_string(),
        false => fragments + "]",
    };
    let bad_html = (!doc.bad_html.is_empty()).then(|| crate::archive::bad_html_json(&doc.bad_html));
    // NULL when none is known (a parser plugin's parse).
    let lines = numbers_json(&doc.lines);
    let columns = numbers_json(&doc.columns);
    Ok(DocumentColumns {
        http_equiv,
        links,
        fragments,
        bad_html,
        lines,
        columns,
    })
}
