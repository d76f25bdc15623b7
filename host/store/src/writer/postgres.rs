//! The writer's batches on PostgreSQL. A statement per row would be a
//! round trip per row (a crawl of 20,000 pages took twelve times as long
//! as on SQLite that way): the writes of a batch are held, then written a
//! table at a time, each table's rows bound as one array per column and
//! read back with `unnest`. The URLs a batch names are resolved first, in
//! two statements, in URL order (so that two writers cannot deadlock on
//! them). Within a batch a later write of a row wins, as it does on SQLite.

use super::{DocumentColumns, DocumentRecord, SiteRecord, StoreOp, document_columns};
use crate::db::{Conn, Ints, Texts, params};
use crate::{StoreError, URL_ID_CACHE};
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use spinneret_core::model::CheckResult;

/// The writes held for one statement per table.
#[derive(Default)]
pub(super) struct Batch {
    results: Vec<(i64, Box<CheckResult>)>,
    documents: Vec<(i64, String, Box<DocumentRecord>)>,
    task_documents: Vec<(i64, i64, String, Option<String>)>,
    sites: Vec<SiteRecord>,
}

/// The most writes a batch holds before it is written (within the same
/// transaction): enough to make a round trip cheap, few enough to hold.
pub(super) const ROWS: usize = 2_000;

impl Batch {
    /// Hold `op` (not a `Flush`: the caller answers those).
    pub(super) fn push(&mut self, op: StoreOp) {
        match op {
            StoreOp::Result { run, result } => self.results.push((run, result)),
            StoreOp::Document { run, url, doc } => self.documents.push((run, url, doc)),
            StoreOp::TaskDocument {
                run,
                task,
                url,
                referrer,
            } => self.task_documents.push((run, task, url, referrer)),
            StoreOp::Site(site) => self.sites.push(*site),
            StoreOp::Flush(_) => {}
        }
    }

    /// How many writes it holds.
    pub(super) fn len(&self) -> usize {
        self.results.len() + self.documents.len() + self.task_documents.len() + self.sites.len()
    }

    /// Write everything held, in `tx`. With `keep`, what is held is left
    /// whole, to be written again should `tx` not commit (a lost
    /// database); the caller empties the batch.
    pub(super) fn write(
        &mut self,
        tx: &Conn,
        ids: &mut HashMap<String, i64>,
        keep: bool,
    ) -> Result<(), StoreError> {
        let known = self.resolve_urls(tx, ids)?;
        let id = |url: &str| -> Result<i64, StoreError> {
            known
                .get(url)
                .copied()
                .ok_or_else(|| StoreError::Io(format!("the store did not give {url} an id")))
        };
        for site in &self.sites {
            super::write_site(tx, site)?;
        }
        write_results(tx, &self.results, &id)?;
        write_task_documents(tx, &self.task_documents, &id)?;
        // The documents last, numbered in the order the batches commit:
        // the lock is held from here to the commit.
        if !self.documents.is_empty() {
            tx.number_documents_in_turn()?;
            write_documents(tx, &mut self.documents, keep, &id)?;
        }
        Ok(())
    }

    /// The id of every URL the batch names: from the writer's cache, or
    /// inserted and read back in two statements.
    fn resolve_urls(
        &self,
        tx: &Conn,
        ids: &mut HashMap<String, i64>,
    ) -> Result<HashMap<String, i64>, StoreError> {
        let mut named: HashSet<&str> = HashSet::new();
        for (_, r) in &self.results {
            named.insert(&r.url);
            named.extend(r.referrer.as_deref());
        }
        for (_, url, doc) in &self.documents {
            named.insert(url);
            named.extend(doc.links.iter().map(|(target, _, _)| &**target));
        }
        for (_, _, url, referrer) in &self.task_documents {
            named.insert(url);
            named.extend(referrer.as_deref());
        }
        let mut known: HashMap<String, i64> = HashMap::with_capacity(named.len());
        let mut unknown: Vec<Option<&str>> = Vec::new();
        for url in named {
            match ids.get(url) {
                Some(&id) => {
                    known.insert(url.to_string(), id);
                }
                None => unknown.push(Some(url)),
            }
        }
        unknown.sort_unstable();
        for chunk in unknown.chunks(10_000) {
            tx.execute(
                "INSERT INTO urls (url) SELECT u FROM unnest(?1::text[]) AS u ORDER BY u
                 ON CONFLICT (url) DO NOTHING",
                params![Texts(chunk)],
            )?;
            tx.for_each(
                "SELECT id, url FROM urls WHERE url = ANY(?1::text[])",
                params![Texts(chunk)],
                |r| {
                    let url: String = r.get(1)?;
                    if ids.len() >= URL_ID_CACHE {
                        ids.clear();
                    }
                    let id = r.get(0)?;
                    ids.insert(url.clone(), id);
                    known.insert(url, id);
                    Ok::<_, StoreError>(())
                },
            )?;
        }
        Ok(known)
    }
}

/// The index of each row to write: the last of the rows with one key.
fn last_of_each<K: std::hash::Hash + Eq>(keys: impl Iterator<Item = K>) -> Vec<usize> {
    let mut last: HashMap<K, usize> = HashMap::new();
    for (i, k) in keys.enumerate() {
        last.insert(k, i);
    }
    let mut rows: Vec<usize> = last.into_values().collect();
    rows.sort_unstable();
    rows
}

/// A column of the rows `rows`: `f` of each.
fn column<T>(rows: &[usize], f: impl Fn(usize) -> Option<T>) -> Vec<Option<T>> {
    rows.iter().map(|&i| f(i)).collect()
}

/// A text column of the documents' JSON columns: `f` of each.
fn texts_of<'a>(
    columns: &'a [DocumentColumns],
    f: impl Fn(&'a DocumentColumns) -> Option<&'a String>,
) -> Vec<Option<&'a str>> {
    columns.iter().map(|c| f(c).map(String::as_str)).collect()
}

fn int(n: Option<impl Into<i64>>) -> Option<i64> {
    n.map(Into::into)
}

fn write_results(
    tx: &Conn,
    results: &[(i64, Box<CheckResult>)],
    id: &impl Fn(&str) -> Result<i64, StoreError>,
) -> Result<(), StoreError> {
    if results.is_empty() {
        return Ok(());
    }
    let mut url_ids = Vec::with_capacity(results.len());
    for (_, r) in results {
        url_ids.push(id(&r.url)?);
    }
    let rows = last_of_each(results.iter().zip(&url_ids).map(|((run, _), u)| (*run, *u)));
    let redirects: Vec<Option<String>> = rows
        .iter()
        .map(|&i| {
            let r = &results[i].1;
            (!r.redirects.is_empty())
                .then(|| serde_json::to_string(&r.redirects).unwrap_or_default())
        })
        .collect();
    let mut referrer_ids = Vec::with_capacity(rows.len());
    for &i in &rows {
        referrer_ids.push(match &results[i].1.referrer {
            Some(u) => Some(id(u)?),
            None => None,
        });
    }
    let r = |i: usize| &results[i].1;
    let run = column(&rows, |i| Some(results[i].0));
    let url = rows.iter().map(|&i| Some(url_ids[i])).collect::<Vec<_>>();
    let category = column(&rows, |i| Some(r(i).category.as_str()));
    let method = column(&rows, |i| r(i).method);
    let status = column(&rows, |i| int(r(i).status));
    let error = column(&rows, |i| r(i).error.as_deref());
    let content_type = column(&rows, |i| r(i).content_type.as_deref());
    let content_length = column(&rows, |i| r(i).content_length.map(|v| v as i64));
    let size = column(&rows, |i| r(i).size.map(|v| v as i64));
    let content_hash = column(&rows, |i| r(i).content_hash.as_deref());
    let etag = column(&rows, |i| r(i).etag.as_deref());
    let last_modified = column(&rows, |i| r(i).last_modified.as_deref());
    let expires = column(&rows, |i| r(i).expires.as_deref());
    let owner = column(&rows, |i| r(i).owner.as_deref());
    let redirects: Vec<Option<&str>> = redirects.iter().map(Option::as_deref).collect();
    let final_url = column(&rows, |i| r(i).final_url.as_deref());
    let elapsed = column(&rows, |i| r(i).elapsed_ms.map(|v| v as i64));
    let truncated = column(&rows, |i| Some(i64::from(r(i).truncated)));
    let attempts = column(&rows, |i| Some(i64::from(r(i).attempts)));
    let checked_at = column(&rows, |i| Some(r(i).checked_at));
    let source = column(&rows, |i| Some(r(i).source.as_str()));
    tx.execute(
        "INSERT INTO results (run_id, url_id, category, method, status, error,
           content_type, content_length, size, content_hash, etag, last_modified, expires,
           owner, redirects, final_url, elapsed_ms, truncated, attempts, referrer_id,
           checked_at, source)
         SELECT * FROM unnest(?1::bigint[], ?2::bigint[], ?3::text[], ?4::text[],
           ?5::bigint[], ?6::text[], ?7::text[], ?8::bigint[], ?9::bigint[], ?10::text[],
           ?11::text[], ?12::text[], ?13::text[], ?14::text[], ?15::text[], ?16::text[],
           ?17::bigint[], ?18::bigint[], ?19::bigint[], ?20::bigint[], ?21::bigint[],
           ?22::text[])
         ON CONFLICT (run_id, url_id) DO UPDATE SET category = excluded.category, method = excluded.method, status = excluded.status, error = excluded.error, content_type = excluded.content_type, content_length = excluded.content_length, size = excluded.size, content_hash = excluded.content_hash, etag = excluded.etag, last_modified = excluded.last_modified, expires = excluded.expires, owner = excluded.owner, redirects = excluded.redirects, final_url = excluded.final_url, elapsed_ms = excluded.elapsed_ms, truncated = excluded.truncated, attempts = excluded.attempts, referrer_id = excluded.referrer_id, checked_at = excluded.checked_at, source = excluded.source",
        params![
            Ints(&run),
            Ints(&url),
            Texts(&category),
            Texts(&method),
            Ints(&status),
            Texts(&error),
            Texts(&content_type),
            Ints(&content_length),
            Ints(&size),
            Texts(&content_hash),
            Texts(&etag),
            Texts(&last_modified),
            Texts(&expires),
            Texts(&owner),
            Texts(&redirects),
            Texts(&final_url),
            Ints(&elapsed),
            Ints(&truncated),
            Ints(&attempts),
            Ints(&referrer_ids),
            Ints(&checked_at),
            Texts(&source),
        ],
    )?;
    Ok(())
}

fn write_documents(
    tx: &Conn,
    documents: &mut [(i64, String, Box<DocumentRecord>)],
    keep: bool,
    id: &impl Fn(&str) -> Result<i64, StoreError>,
) -> Result<(), StoreError> {
    if documents.is_empty() {
        return Ok(());
    }
    let mut url_ids = Vec::with_capacity(documents.len());
    for (_, url, _) in documents.iter() {
        url_ids.push(id(url)?);
    }
    let rows = last_of_each(url_ids.iter().copied());
    let mut columns: Vec<DocumentColumns> = Vec::with_capacity(rows.len());
    for &i in &rows {
        columns.push(document_columns(&mut documents[i].2, keep, |t| id(t))?);
    }
    let d = |i: usize| &documents[i].2;
    let url = column(&rows, |i| Some(url_ids[i]));
    let run = column(&rows, |i| Some(documents[i].0));
    let title = column(&rows, |i| d(i).title.as_deref());
    let owner = column(&rows, |i| d(i).owner.as_deref());
    let expires = column(&rows, |i| d(i).expires_meta.as_deref());
    let base = column(&rows, |i| d(i).base.as_deref());
    let encoding = column(&rows, |i| Some(d(i).encoding));
    let parse_errors = column(&rows, |i| Some(i64::from(d(i).parse_errors)));
    let decode_errors = column(&rows, |i| Some(i64::from(d(i).decode_errors)));
    let anchors = column(&rows, |i| d(i).anchors.as_deref());
    let http_equiv = texts_of(&columns, |c| c.http_equiv.as_ref());
    let links = texts_of(&columns, |c| Some(&c.links));
    let bad_html = texts_of(&columns, |c| c.bad_html.as_ref());
    let fragments = texts_of(&columns, |c| Some(&c.fragments));
    let lines = texts_of(&columns, |c| c.lines.as_ref());
    let column_places = texts_of(&columns, |c| c.columns.as_ref());
    tx.execute(
        "INSERT INTO documents (url_id, run_id, title, owner, expires, base,
           encoding, parse_errors, decode_errors, http_equiv, links, bad_html,
           anchors, fragments, lines, columns, seq)
         SELECT u.url_id, u.run_id, u.title, u.owner, u.expires, u.base, u.encoding,
           u.parse_errors, u.decode_errors, u.http_equiv, u.links, u.bad_html, u.anchors,
           u.fragments, u.lines, u.columns,
           -- What the search index reads (title, references, bad HTML)
           -- unchanged: the document keeps its change number; each other
           -- takes the next.
           COALESCE(
             (SELECT d.seq FROM documents d WHERE d.url_id = u.url_id
                AND d.title IS NOT DISTINCT FROM u.title AND d.links = u.links
                AND d.bad_html IS NOT DISTINCT FROM u.bad_html),
             (SELECT COALESCE(MAX(seq), 0) FROM documents) + u.n)
         FROM unnest(?1::bigint[], ?2::bigint[], ?3::text[], ?4::text[], ?5::text[],
           ?6::text[], ?7::text[], ?8::bigint[], ?9::bigint[], ?10::text[], ?11::text[],
           ?12::text[], ?13::text[], ?14::text[], ?15::text[], ?16::text[])
           WITH ORDINALITY AS u(url_id, run_id, title, owner, expires, base, encoding,
             parse_errors, decode_errors, http_equiv, links, bad_html, anchors, fragments,
             lines, columns, n)
         ON CONFLICT (url_id) DO UPDATE SET run_id = excluded.run_id, title = excluded.title, owner = excluded.owner, expires = excluded.expires, base = excluded.base, encoding = excluded.encoding, parse_errors = excluded.parse_errors, decode_errors = excluded.decode_errors, http_equiv = excluded.http_equiv, links = excluded.links, bad_html = excluded.bad_html, anchors = excluded.anchors, fragments = excluded.fragments, lines = excluded.lines, columns = excluded.columns, seq = excluded.seq",
        params![
            Ints(&url),
            Ints(&run),
            Texts(&title),
            Texts(&owner),
            Texts(&expires),
            Texts(&base),
            Texts(&encoding),
            Ints(&parse_errors),
            Ints(&decode_errors),
            Texts(&http_equiv),
            Texts(&links),
            Texts(&bad_html),
            Texts(&anchors),
            Texts(&fragments),
            Texts(&lines),
            Texts(&column_places),
        ],
    )?;
    Ok(())
}

fn write_task_documents(
    tx: &Conn,
    task_documents: &[(i64, i64, String, Option<String>)],
    id: &impl Fn(&str) -> Result<i64, StoreError>,
) -> Result<(), StoreError> {
    if task_documents.is_empty() {
        return Ok(());
    }
    let mut url_ids = Vec::with_capacity(task_documents.len());
    for (_, _, url, _) in task_documents {
        url_ids.push(id(url)?);
    }
    let rows = last_of_each(
        task_documents
            .iter()
            .zip(&url_ids)
            .map(|((run, task, _, _), u)| (*run, *task, *u)),
    );
    let mut run = Vec::with_capacity(rows.len());
    let mut task = Vec::with_capacity(rows.len());
    let mut url = Vec::with_capacity(rows.len());
    let mut referrer = Vec::with_capacity(rows.len());
    for &i in &rows {
        let (r, t, _, from) = &task_documents[i];
        run.push(Some(*r));
        task.push(Some(*t));
        url.push(Some(url_ids[i]));
        referrer.push(match from {
            Some(u) => Some(id(u)?),
            None => None,
        });
    }
    tx.execute(
        "INSERT INTO task_documents (run_id, task_id, url_id, referrer_id)
         SELECT * FROM unnest(?1::bigint[], ?2::bigint[], ?3::bigint[], ?4::bigint[])
         ON CONFLICT (run_id, task_id, url_id) DO UPDATE SET referrer_id = excluded.referrer_id",
        params![Ints(&run), Ints(&task), Ints(&url), Ints(&referrer)],
    )?;
    Ok(())
}
