//! WebSnatcher's collections: each run of a profile is booked here with the
//! files it wrote in order of creation (so clean-up removes them in reverse),
//! what each URL was when last retrieved (validators for conditional
//! requests, the digest and the WARC record holding its body, for revisits
//! and for what changed), the main pages of each run (its index), and the
//! pages copied into the archive.

use super::{Store, StoreError};
use crate::db::{Row, TxMode, params};

/// One run of a profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CollectionRow {
    /// Its id.
    pub id: i64,
    /// When it started (Unix seconds).
    pub started_at: i64,
    /// When it ended, if it did.
    pub finished_at: Option<i64>,
    /// `running`, `finished`, `interrupted` or `cleaned`.
    pub status: String,
    /// The mirror-relative directory of its files.
    pub dir: String,
}

/// A file a collection wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CollectedFile {
    /// Mirror-relative path.
    pub path: String,
    /// The URL it holds; none for what the run made itself (index, WARC).
    pub url: Option<String>,
    /// Its category.
    pub category: Option<String>,
    /// SHA-256 (hex) of the body as retrieved.
    pub digest: Option<String>,
    /// Its size on disk.
    pub bytes: u64,
}

/// What a URL was when it was last retrieved.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UrlMemory {
    /// The collection that retrieved it.
    pub collection: i64,
    /// Its `Content-Type`.
    pub content_type: Option<String>,
    /// Its `ETag`.
    pub etag: Option<String>,
    /// Its `Last-Modified`, as sent.
    pub last_modified: Option<String>,
    /// SHA-256 (hex) of its body.
    pub digest: String,
    /// The WARC response record holding that body, and its date.
    pub warc_record: Option<(String, i64)>,
}

/// A main page of a collection: an item it was asked for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MainPage {
    /// Its category.
    pub category: String,
    /// The URL asked for.
    pub url: String,
    /// Its `<title>`.
    pub title: Option<String>,
    /// The engines that found it, each with its rank (1 first).
    pub found_by: Vec<(String, u32)>,
    /// Where it was saved (mirror-relative); none when it was not.
    pub path: Option<String>,
    /// SHA-256 (hex) of its body as retrieved.
    pub digest: Option<String>,
    /// Bytes saved for it: the page, its requisites and followed links.
    pub bytes: u64,
    /// Why it was not retrieved.
    pub problem: Option<String>,
}

/// A page copied into the archive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArchivedPage {
    /// `YYYY-MM-DD`: its `Archive/` directory.
    pub day: String,
    /// Its URL.
    pub url: String,
    /// Its title.
    pub title: Option<String>,
    /// The page's copy, mirror-relative.
    pub path: String,
    /// Every file copied for it (the page and its requisites).
    pub files: Vec<String>,
    /// When it was archived (Unix seconds).
    pub archived_at: i64,
}

fn collection_row(r: &Row<'_>) -> Result<CollectionRow, StoreError> {
    Ok(CollectionRow {
        id: r.get(0)?,
        started_at: r.get(1)?,
        finished_at: r.get(2)?,
        status: r.get(3)?,
        dir: r.get(4)?,
    })
}

impl Store {
    /// Book a new collection of `profile` started `now`, its files under
    /// `runs/NNNN`; its id.
    pub fn begin_collection(&self, profile: &str, now: i64) -> Result<CollectionRow, StoreError> {
        let tx = self.conn.transaction(TxMode::Deferred)?;
        let id: i64 = tx.query_row("INSERT INTO collections (profile, started_at, status, dir) VALUES (?1, ?2, 'running', '')
             RETURNING id", params![profile, now], |r| r.get(0))?;
        let dir = format!("runs/{id:04}");
        tx.execute(
            "UPDATE collections SET dir = ?2 WHERE id = ?1",
            params![id, dir],
        )?;
        tx.commit()?;
        Ok(CollectionRow {
            id,
            started_at: now,
            finished_at: None,
            status: "running".into(),
            dir,
        })
    }

    /// Mark collection `id` ended with `status` at `now`.
    pub fn end_collection(&self, id: i64, status: &str, now: i64) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE collections SET status = ?2, finished_at = ?3 WHERE id = ?1",
            params![id, status, now],
        )?;
        Ok(())
    }

    /// The collections of `profile` whose files were not cleaned up, newest
    /// first.
    pub fn live_collections(&self, profile: &str) -> Result<Vec<CollectionRow>, StoreError> {
        Ok(self
            .conn
            .query_vec(
                "SELECT id, started_at, finished_at, status, dir FROM collections
             WHERE profile = ?1 AND status != 'cleaned' ORDER BY id DESC",
                params![profile],
                collection_row,
            )?
            .into_iter()
            .collect())
    }

    /// The newest collection of `profile` before `id` that booked its main
    /// pages (cleaned or not): what a run compares itself with.
    pub fn previous_collection(
        &self,
        profile: &str,
        id: i64,
    ) -> Result<Option<CollectionRow>, StoreError> {
        self.conn.query_opt(
            "SELECT id, started_at, finished_at, status, dir FROM collections c
                 WHERE profile = ?1 AND id < ?2
                   AND EXISTS (SELECT 1 FROM collection_pages p WHERE p.collection_id = c.id)
                 ORDER BY id DESC LIMIT 1",
            params![profile, id],
            collection_row,
        )
    }

    /// Book the files collection `id` wrote, numbered after those booked
    /// already, in one transaction.
    pub fn book_files(&self, id: i64, files: &[CollectedFile]) -> Result<(), StoreError> {
        let tx = self.conn.transaction(TxMode::Deferred)?;
        let next: i64 = tx.query_row(
            "SELECT COALESCE(MAX(seq) + 1, 0) FROM collection_files WHERE collection_id = ?1",
            params![id],
            |r| r.get(0),
        )?;
        let sql =
            "INSERT INTO collection_files (collection_id, seq, path, url, category, digest, bytes)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
        for (i, f) in files.iter().enumerate() {
            tx.execute(
                sql,
                params![
                    id,
                    next + i as i64,
                    f.path,
                    f.url,
                    f.category,
                    f.digest,
                    f.bytes as i64
                ],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The files collection `id` wrote, in order of creation.
    pub fn collection_files(&self, id: i64) -> Result<Vec<CollectedFile>, StoreError> {
        Ok(self
            .conn
            .query_vec(
                "SELECT path, url, category, digest, bytes FROM collection_files
             WHERE collection_id = ?1 ORDER BY seq",
                params![id],
                |r| {
                    Ok(CollectedFile {
                        path: r.get(0)?,
                        url: r.get(1)?,
                        category: r.get(2)?,
                        digest: r.get(3)?,
                        bytes: r.get::<_, i64>(4)? as u64,
                    })
                },
            )?
            .into_iter()
            .collect())
    }

    /// The digests of the bodies the files of collections not cleaned up
    /// hold (what the mirror's object store must keep).
    pub fn live_digests(&self) -> Result<std::collections::HashSet<String>, StoreError> {
        Ok(self
            .conn
            .query_vec(
                "SELECT DISTINCT f.digest FROM collection_files f
             JOIN collections c ON c.id = f.collection_id
             WHERE c.status != 'cleaned' AND f.digest IS NOT NULL",
                params![],
                |r| r.get::<_, String>(0),
            )?
            .into_iter()
            .collect())
    }

    /// What `url` was when it was last retrieved.
    pub fn url_memory(&self, url: &str) -> Result<Option<UrlMemory>, StoreError> {
        // Asked once per URL of a run: the statement is prepared once.
        self
            .conn
            .query_opt("SELECT collection_id, content_type, etag, last_modified, digest, warc_record, warc_date
                 FROM collected_urls WHERE url = ?1", params![url], |r| {
                    let record: Option<String> = r.get(5)?;
                    let date: Option<i64> = r.get(6)?;
                    Ok(UrlMemory {
                        collection: r.get(0)?,
                        content_type: r.get(1)?,
                        etag: r.get(2)?,
                        last_modified: r.get(3)?,
                        digest: r.get(4)?,
                        warc_record: record.zip(date),
                    })
                })
    }

    /// Remember what each URL was as retrieved now, in one transaction.
    pub fn remember_urls(&self, urls: &[(String, UrlMemory)]) -> Result<(), StoreError> {
        let tx = self.conn.transaction(TxMode::Deferred)?;
        let sql = "INSERT INTO collected_urls
             (url, collection_id, content_type, etag, last_modified, digest, warc_record, warc_date)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT (url) DO UPDATE SET collection_id = excluded.collection_id, content_type = excluded.content_type, etag = excluded.etag, last_modified = excluded.last_modified, digest = excluded.digest, warc_record = excluded.warc_record, warc_date = excluded.warc_date";
        for (url, m) in urls {
            let (record, date) = m.warc_record.clone().unzip();
            tx.execute(
                sql,
                params![
                    url,
                    m.collection,
                    m.content_type,
                    m.etag,
                    m.last_modified,
                    m.digest,
                    record,
                    date
                ],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Remember `urls`, whose records collection `from` held, as held by
    /// collection `to` (the records were copied into its WARC file under
    /// their ids), where `from` still holds them. How many were moved.
    pub fn move_url_records(&self, from: i64, to: i64, urls: &[&str]) -> Result<usize, StoreError> {
        let tx = self.conn.transaction(TxMode::Deferred)?;
        let mut moved = 0;
        let sql =
            "UPDATE collected_urls SET collection_id = ?2 WHERE url = ?3 AND collection_id = ?1";
        for url in urls {
            moved += tx.execute(sql, params![from, to, url])?;
        }
        tx.commit()?;
        Ok(moved)
    }

    /// Book the main pages of collection `id`.
    pub fn save_main_pages(&self, id: i64, pages: &[MainPage]) -> Result<(), StoreError> {
        let tx = self.conn.transaction(TxMode::Deferred)?;
        let sql = "INSERT INTO collection_pages
             (collection_id, seq, category, url, title, found_by, path, digest, bytes, problem)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";
        for (i, p) in pages.iter().enumerate() {
            tx.execute(
                sql,
                params![
                    id,
                    i as i64,
                    p.category,
                    p.url,
                    p.title,
                    serde_json::to_string(&p.found_by).unwrap_or_else(|_| "[]".into()),
                    p.path,
                    p.digest,
                    p.bytes as i64,
                    p.problem
                ],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The main pages of collection `id`, in the order booked.
    pub fn main_pages(&self, id: i64) -> Result<Vec<MainPage>, StoreError> {
        Ok(self
            .conn
            .query_vec(
                "SELECT category, url, title, found_by, path, digest, bytes, problem
             FROM collection_pages WHERE collection_id = ?1 ORDER BY seq",
                params![id],
                |r| {
                    let found_by: String = r.get(3)?;
                    Ok(MainPage {
                        category: r.get(0)?,
                        url: r.get(1)?,
                        title: r.get(2)?,
                        found_by: serde_json::from_str(&found_by).unwrap_or_default(),
                        path: r.get(4)?,
                        digest: r.get(5)?,
                        bytes: r.get::<_, i64>(6)? as u64,
                        problem: r.get(7)?,
                    })
                },
            )?
            .into_iter()
            .collect())
    }

    /// Book `page` as archived (replacing an earlier copy of the same day).
    pub fn archive_page(&self, page: &ArchivedPage) -> Result<(), StoreError> {
        self.conn.execute("INSERT INTO archived_pages (day, url, title, path, files, archived_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (day, url) DO UPDATE SET title = excluded.title, path = excluded.path, files = excluded.files, archived_at = excluded.archived_at", params![
                page.day,
                page.url,
                page.title,
                page.path,
                serde_json::to_string(&page.files).unwrap_or_else(|_| "[]".into()),
                page.archived_at
            ])?;
        Ok(())
    }

    /// Every archived page, newest day first, then by URL.
    pub fn archived_pages(&self) -> Result<Vec<ArchivedPage>, StoreError> {
        Ok(self
            .conn
            .query_vec(
                "SELECT day, url, title, path, files, archived_at FROM archived_pages
             ORDER BY day DESC, url",
                params![],
                |r| {
                    let files: String = r.get(4)?;
                    Ok(ArchivedPage {
                        day: r.get(0)?,
                        url: r.get(1)?,
                        title: r.get(2)?,
                        path: r.get(3)?,
                        files: serde_json::from_str(&files).unwrap_or_default(),
                        archived_at: r.get(5)?,
                    })
                },
            )?
            .into_iter()
            .collect())
    }

    /// Forget the archived pages of days before `day` (`YYYY-MM-DD`).
    pub fn forget_archived_before(&self, day: &str) -> Result<usize, StoreError> {
        self.conn
            .execute("DELETE FROM archived_pages WHERE day < ?1", params![day])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_collection_books_its_files_pages_and_urls() {
        let dir = tempfile::tempdir().unwrap();
        for store in crate::testing::stores(dir.path()) {
            let a = store.begin_collection("p.toml", 100).unwrap();
            assert_eq!(a.dir, format!("runs/{:04}", a.id));
            let file = |p: &str, d: &str| CollectedFile {
                path: p.into(),
                url: Some(format!("https://e.org/{p}")),
                category: Some("URLs".into()),
                digest: Some(d.into()),
                bytes: 3,
            };
            store.book_files(a.id, &[file("x", "d1")]).unwrap();
            store.book_files(a.id, &[file("y", "d2")]).unwrap();
            assert_eq!(
                store.collection_files(a.id).unwrap(),
                [file("x", "d1"), file("y", "d2")]
            );
            let page = MainPage {
                category: "URLs".into(),
                url: "https://e.org/".into(),
                found_by: vec![("searx".into(), 2)],
                bytes: 6,
                ..MainPage::default()
            };
            store
                .save_main_pages(a.id, std::slice::from_ref(&page))
                .unwrap();
            assert_eq!(store.main_pages(a.id).unwrap(), [page]);
            store.end_collection(a.id, "finished", 101).unwrap();
            let b = store.begin_collection("p.toml", 200).unwrap();
            assert_eq!(
                store
                    .previous_collection("p.toml", b.id)
                    .unwrap()
                    .unwrap()
                    .id,
                a.id
            );
            assert_eq!(store.previous_collection("other.toml", b.id).unwrap(), None);
            assert_eq!(store.live_collections("p.toml").unwrap().len(), 2);
            store.end_collection(a.id, "cleaned", 201).unwrap();
            assert_eq!(
                store.live_collections("p.toml").unwrap(),
                std::slice::from_ref(&b)
            );
            assert!(store.live_digests().unwrap().is_empty());

            let m = UrlMemory {
                collection: b.id,
                etag: Some("\"e\"".into()),
                digest: "d1".into(),
                warc_record: Some(("<urn:uuid:1>".into(), 200)),
                ..UrlMemory::default()
            };
            store
                .remember_urls(&[("https://e.org/x".into(), m.clone())])
                .unwrap();
            assert_eq!(
                store.url_memory("https://e.org/x").unwrap(),
                Some(m.clone())
            );
            assert_eq!(store.url_memory("https://e.org/z").unwrap(), None);
            // Its record taken into another collection's file: remembered there,
            // and only where the first still held it.
            let held_by = m.collection;
            assert_eq!(
                store
                    .move_url_records(
                        held_by,
                        held_by + 7,
                        &["https://e.org/x", "https://e.org/z"]
                    )
                    .unwrap(),
                1
            );
            assert_eq!(
                store
                    .url_memory("https://e.org/x")
                    .unwrap()
                    .unwrap()
                    .collection,
                held_by + 7
            );
            assert_eq!(
                store
                    .move_url_records(held_by, held_by + 8, &["https://e.org/x"])
                    .unwrap(),
                0
            );

            let archived = |day: &str| ArchivedPage {
                day: day.into(),
                url: "https://e.org/".into(),
                title: None,
                path: format!("Archive/{day}/URLs/e.org/index.html"),
                files: vec![format!("Archive/{day}/URLs/e.org/index.html")],
                archived_at: 5,
            };
            store.archive_page(&archived("2026-01-02")).unwrap();
            store.archive_page(&archived("2026-03-04")).unwrap();
            assert_eq!(store.forget_archived_before("2026-02-01").unwrap(), 1);
            assert_eq!(store.archived_pages().unwrap(), [archived("2026-03-04")]);
        }
    }
}
