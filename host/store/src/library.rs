//! GENVL's virtual library (seed 001, part 1), kept in the store: a tree of
//! virtual libraries (VLs) whose postings are entries (pointers, reports)
//! or sub-VLs, each with its sequence number in its VL (Tables 1–3).
//!
//! Every change is one SQLite transaction: two users posting at once get
//! distinct sequence numbers, an edit names the version it read and is
//! refused when another edit came first, and a copy, a move, a deletion
//! or an import is whole or not at all.

use crate::db::{Conn, Row, TxMode, params};
use crate::{Store, StoreError};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// What a posting is (Table 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PostingKind {
    /// A sub-VL: a library of its own, with postings.
    Vl,
    /// An entry that is a title carrying a URL.
    Pointer,
    /// An entry whose text the library stores (its title may carry a URL).
    Report,
}

impl PostingKind {
    /// The name stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            PostingKind::Vl => "vl",
            PostingKind::Pointer => "pointer",
            PostingKind::Report => "report",
        }
    }

    fn parse(s: &str) -> Option<PostingKind> {
        match s {
            "vl" => Some(PostingKind::Vl),
            "pointer" => Some(PostingKind::Pointer),
            "report" => Some(PostingKind::Report),
            _ => None,
        }
    }
}

/// What a posting says: the fields its author fills in.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PostingText {
    /// The title (required).
    pub title: String,
    /// A pointer's URL; a report's title link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// A report's text (sanitised HTML); a VL's statement of purpose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// A VL's or a report's image (a URL); a VL without one shows its
    /// parent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// A VL in which only sub-VLs may be posted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub create_only: bool,
    /// Who posted it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// Their e-mail address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
}

/// A posting as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Posting {
    /// Its id (stable across edits and moves).
    pub id: i64,
    /// The VL it is posted in (none for the root).
    pub parent: Option<i64>,
    /// Its sequence number in that VL.
    pub seq: i64,
    /// What it is.
    pub kind: PostingKind,
    /// What it says.
    pub text: PostingText,
    /// Its password's argon2id hash (none: anyone may change it).
    pub password: Option<String>,
    /// When it was posted (Unix seconds).
    pub created_at: i64,
    /// When it was last changed.
    pub updated_at: i64,
    /// Its version: 1 when posted, one more with each edit.
    pub version: i64,
}

/// A pointer with what the spider last found at its URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PointerCheck {
    /// `ok`, `moved`, `broken`, `blocked`, … (the result's category).
    pub category: String,
    /// Where it moved to.
    pub moved_to: Option<String>,
    /// The status or error that made it broken.
    pub detail: Option<String>,
    /// When it was checked (Unix seconds).
    pub checked_at: i64,
}

/// What a form that changes a posting was opened at: which posting (its
/// creation stamp, beside the id in the form's address) and the version it
/// showed. A save from it is refused when that posting is gone, even if
/// another now has its id (a library imported over it), and when another
/// edit came first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Opened {
    /// The posting's `created_at`.
    pub created_at: i64,
    /// The posting's `version`.
    pub version: i64,
}

impl Posting {
    /// What a form opened now for this posting names.
    pub fn opened(&self) -> Opened {
        Opened {
            created_at: self.created_at,
            version: self.version,
        }
    }
}

/// A change the library refuses.
#[derive(Debug, thiserror::Error)]
pub enum LibraryError {
    /// No posting has this id.
    #[error("there is no posting {0}")]
    NotFound(i64),
    /// The posting a form was opened for is no longer there.
    #[error(
        "the posting this form was opened for (number {0}) has been deleted since, or the library replaced; nothing was changed. Open the library again to find what is there now"
    )]
    Gone(i64),
    /// Postings go into VLs only.
    #[error("posting {0} is not a virtual library; postings go into virtual libraries")]
    NotAVl(i64),
    /// The VL takes sub-VLs only.
    #[error("\"{0}\" is Create-Only: only sub-libraries may be posted in it")]
    CreateOnly(String),
    /// Another edit came between reading and saving.
    #[error(
        "someone else changed this posting since you opened it (version {current}, you edited version {read}); reload it and make your change again"
    )]
    Conflict {
        /// The version now stored.
        current: i64,
        /// The version the editor read.
        read: i64,
    },
    /// A VL cannot be moved or copied into itself or below itself.
    #[error("a library cannot be moved or copied into itself or one of its sub-libraries")]
    IntoItself,
    /// The root stays where it is.
    #[error("the root library cannot be moved, copied or deleted")]
    Root,
    /// A library file that cannot be imported.
    #[error("{0}")]
    Import(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The library as a file: every posting, sub-VLs nested (`spinneret library
/// export`, `import`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LibraryNode {
    /// Its id, its address on the server (`/library/N`): kept by an
    /// import, so that links to it and `[library] worm = N` still name it
    /// (none: an import gives it the next).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    /// What it is.
    pub kind: PostingKind,
    /// Its sequence number in its VL.
    pub seq: i64,
    /// What it says.
    #[serde(flatten)]
    pub text: PostingText,
    /// Its password's hash, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
    /// When it was posted (Unix seconds).
    pub created_at: i64,
    /// When it was last changed.
    pub updated_at: i64,
    /// A VL's last sequence number given (postings deleted since leave
    /// gaps, and their numbers are not given again).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub last_seq: i64,
    /// A VL's postings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub postings: Vec<LibraryNode>,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

const COLUMNS: &str = "id, parent, seq, kind, title, url, body, image, create_only, author, email, \
                       password, created_at, updated_at, version";

/// [`COLUMNS`] of the table named `l`.
const L_COLUMNS: &str = "l.id, l.parent, l.seq, l.kind, l.title, l.url, l.body, l.image, \
                         l.create_only, l.author, l.email, l.password, l.created_at, \
                         l.updated_at, l.version";

fn posting(r: &Row<'_>) -> Result<Posting, StoreError> {
    let kind: String = r.get(3)?;
    Ok(Posting {
        id: r.get(0)?,
        parent: r.get(1)?,
        seq: r.get(2)?,
        kind: PostingKind::parse(&kind).unwrap_or(PostingKind::Pointer),
        text: PostingText {
            title: r.get(4)?,
            url: r.get(5)?,
            body: r.get(6)?,
            image: r.get(7)?,
            create_only: r.get(8)?,
            author: r.get(9)?,
            email: r.get(10)?,
        },
        password: r.get(11)?,
        created_at: r.get(12)?,
        updated_at: r.get(13)?,
        version: r.get(14)?,
    })
}

/// A query for postings (table `l`), each with the latest result of its
/// URL, after `SELECT {L_COLUMNS}, `: what [`checked`] reads.
const CHECKED: &str = "r.category, r.final_url, r.status, r.error, r.checked_at
    FROM library l
    LEFT JOIN urls u ON u.url = l.url AND l.kind <> 'vl'
    LEFT JOIN results r ON r.url_id = u.id
         AND r.run_id = (SELECT MAX(run_id) FROM results WHERE url_id = u.id)";

/// A row of a [`CHECKED`] query.
fn checked(r: &Row<'_>) -> Result<(Posting, Option<PointerCheck>), StoreError> {
    let p = posting(r)?;
    let category: Option<String> = r.get(15)?;
    let check = match category {
        Some(category) => {
            let status: Option<i64> = r.get(17)?;
            let error: Option<String> = r.get(18)?;
            Some(PointerCheck {
                category,
                moved_to: r.get(16)?,
                detail: error.or_else(|| status.map(|s| format!("status {s}"))),
                checked_at: r.get(19)?,
            })
        }
        None => None,
    };
    Ok((p, check))
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn get(tx: &Conn, id: i64) -> Result<Posting, LibraryError> {
    tx.query_opt(
        &format!("SELECT {COLUMNS} FROM library WHERE id = ?1"),
        params![id],
        posting,
    )?
    .ok_or(LibraryError::NotFound(id))
}

/// The VL `id`, or why postings cannot go into it (`kind` is what would be
/// posted).
fn vl_for(tx: &Conn, id: i64, kind: PostingKind) -> Result<Posting, LibraryError> {
    let vl = get(tx, id)?;
    if vl.kind != PostingKind::Vl {
        return Err(LibraryError::NotAVl(id));
    }
    if vl.text.create_only && kind != PostingKind::Vl {
        return Err(LibraryError::CreateOnly(vl.text.title));
    }
    Ok(vl)
}

/// Insert a posting into `parent` with sequence number `seq` or, without
/// one, the VL's next; the number is taken inside the insert, under
/// SQLite's write lock. It gets id `id` (an import's) or the next never
/// given.
#[allow(clippy::too_many_arguments)]
fn insert(
    tx: &Conn,
    id: Option<i64>,
    parent: i64,
    seq: Option<i64>,
    kind: PostingKind,
    t: &PostingText,
    password: Option<&str>,
    created_at: i64,
    updated_at: i64,
) -> Result<i64, LibraryError> {
    let seq = match seq {
        Some(s) => {
            tx.execute(
                "UPDATE library SET last_seq = CASE WHEN last_seq > ?2 THEN last_seq ELSE ?2 END
                 WHERE id = ?1",
                params![parent, s],
            )?;
            s
        }
        None => next_seq(tx, parent)?,
    };
    // Without an id the column's own is taken (on PostgreSQL a NULL is
    // not the default).
    let (id_column, id_value) = match id {
        Some(_) => ("id, ", "?14, "),
        None => ("", ""),
    };
    let sql = format!(
        "INSERT INTO library ({id_column}parent, seq, kind, title, url, body, image, create_only,
                              author, email, password, created_at, updated_at, version)
         VALUES ({id_value}?1, ?13, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 1)
         RETURNING id"
    );
    let fields = params![
        parent,
        kind.as_str(),
        t.title,
        t.url,
        t.body,
        t.image,
        t.create_only,
        t.author,
        t.email,
        password,
        created_at,
        updated_at,
        seq
    ];
    Ok(match id {
        None => tx.query_row(&sql, fields, |r| r.get(0))?,
        Some(id) => {
            let mut with_id = fields.to_vec();
            with_id.push(&id);
            tx.query_row(&sql, &with_id, |r| r.get(0))?
        }
    })
}

/// The URL ids of the `library` tasks' own pages: the summary and report
/// pages each such task published and read, below its top's directory
/// (`…/library/`). They are the library's, not the Worm's: the Worm's
/// index and archive leave them out (before, searches showed the server's
/// file paths as hits, and `archive export` wrote T/R/I/C lines for them).
pub(crate) fn library_task_pages(conn: &Conn) -> Result<HashSet<i64>, StoreError> {
    let tops: Vec<String> = conn
        .query_vec(
            "SELECT DISTINCT top_url FROM tasks WHERE kind = 'library'",
            params![],
            |r| r.get(0),
        )?
        .into_iter()
        .collect();
    let mut ids = HashSet::new();
    for top in tops {
        let Some(slash) = top.rfind('/') else {
            continue;
        };
        // The URLs from `dir` up to, not including, `dir` with its last
        // `/` made `0` (the next byte): those below `dir`, found in the
        // URLs' index in byte order.
        let dir = &top[..=slash];
        let end = format!("{}0", &top[..slash]);
        let below: Vec<i64> = conn
            .query_vec(
                "SELECT id FROM urls WHERE url >= ?1 AND url < ?2",
                params![dir, end],
                |r| r.get(0),
            )?
            .into_iter()
            .collect();
        ids.extend(below);
    }
    Ok(ids)
}

/// The root VL's id, when there is a library.
fn root_id(conn: &Conn) -> Result<Option<i64>, LibraryError> {
    Ok(conn.query_opt(
        "SELECT id FROM library WHERE parent IS NULL ORDER BY id LIMIT 1",
        params![],
        |r| r.get(0),
    )?)
}

/// VL `vl`'s next sequence number: one more than the last it gave, so a
/// deleted posting's number is never given again.
fn next_seq(tx: &Conn, vl: i64) -> Result<i64, LibraryError> {
    Ok(tx.query_row(
        "UPDATE library SET last_seq = last_seq + 1 WHERE id = ?1 RETURNING last_seq",
        params![vl],
        |r| r.get(0),
    )?)
}

/// Posting `id`, when it may be moved or copied into VL `to`: not the root,
/// into a VL that takes it, not into itself or below itself.
fn placeable(tx: &Conn, id: i64, to: i64) -> Result<Posting, LibraryError> {
    let p = get(tx, id)?;
    if p.parent.is_none() {
        return Err(LibraryError::Root);
    }
    vl_for(tx, to, p.kind)?;
    if subtree(tx, id)?.contains(&to) {
        return Err(LibraryError::IntoItself);
    }
    Ok(p)
}

/// The start of a query over posting `?1` and everything below it: the
/// table `below(id)`.
const BELOW: &str = "WITH RECURSIVE below(id) AS (
    SELECT CAST(?1 AS BIGINT) UNION ALL SELECT l.id FROM library l JOIN below b ON l.parent = b.id)";

/// The order of `column` (a title) in the library's lists: ASCII letters
/// compared without their case, the rest byte by byte (SQLite's `NOCASE`;
/// on PostgreSQL `lower()` in the C collation, whatever the database's
/// locale), in the index's order.
fn by_title(conn: &Conn, column: &str) -> String {
    match conn.dialect() {
        crate::db::Dialect::Sqlite => format!("{column} COLLATE NOCASE"),
        crate::db::Dialect::Postgres => format!("lower({column} COLLATE \"C\")"),
    }
}

/// The ids of `id` and every posting below it.
fn subtree(tx: &Conn, id: i64) -> Result<Vec<i64>, LibraryError> {
    let sql = &format!("{BELOW} SELECT id FROM below");
    let ids = tx
        .query_vec(sql, params![id], |r| r.get(0))?
        .into_iter()
        .collect();
    Ok(ids)
}

impl Store {
    /// The root VL, created titled `title` when the library is new.
    pub fn library_root(&mut self, title: &str) -> Result<Posting, LibraryError> {
        let tx = self.conn.transaction(TxMode::Deferred)?;
        let id = match root_id(&tx)? {
            Some(id) => id,
            None => {
                let t = now();
                tx.query_row(
                    "INSERT INTO library (parent, seq, kind, title, create_only, created_at,
                                          updated_at, version)
                     VALUES (NULL, 0, 'vl', ?1, 0, ?2, ?2, 1)
                     RETURNING id",
                    params![title, t],
                    |r| r.get::<_, i64>(0),
                )?
            }
        };
        let root = get(&tx, id)?;
        tx.commit()?;
        Ok(root)
    }

    /// The posting `id`.
    pub fn library_posting(&self, id: i64) -> Result<Posting, LibraryError> {
        get(&self.conn, id)
    }

    /// The VLs from the root down to `id`'s VL (not `id` itself).
    pub fn library_ancestors(&self, id: i64) -> Result<Vec<Posting>, LibraryError> {
        let sql = &format!(
            "WITH RECURSIVE up(id, depth) AS (
                 SELECT parent, 1 FROM library WHERE id = ?1 AND parent IS NOT NULL
                 UNION ALL
                 SELECT l.parent, u.depth + 1 FROM library l JOIN up u ON l.id = u.id
                 WHERE l.parent IS NOT NULL)
             SELECT {COLUMNS} FROM library JOIN up USING (id) ORDER BY up.depth DESC"
        );
        let rows = self
            .conn
            .query_vec(sql, params![id], posting)?
            .into_iter()
            .collect();
        Ok(rows)
    }

    /// Whether a posting below `id` (at any depth, `id` itself left out)
    /// has a password: moving or deleting `id` would move or delete it.
    pub fn library_protected_below(&self, id: i64) -> Result<bool, LibraryError> {
        let found: bool = self.conn.query_row(
            "WITH RECURSIVE below(id) AS (
                 SELECT id FROM library WHERE parent = ?1
                 UNION ALL
                 SELECT l.id FROM library l JOIN below b ON l.parent = b.id)
             SELECT EXISTS (SELECT 1 FROM library JOIN below USING (id)
                            WHERE library.password IS NOT NULL)",
            params![id],
            |r| r.get(0),
        )?;
        Ok(found)
    }

    /// The postings of VL `vl`, alphabetically by title (then by sequence
    /// number), each pointer with what the spider last found at its URL.
    pub fn library_postings(
        &self,
        vl: i64,
    ) -> Result<Vec<(Posting, Option<PointerCheck>)>, LibraryError> {
        self.library_postings_page(vl, 0, usize::MAX)
    }

    /// How many postings VL `vl` holds.
    pub fn library_count(&self, vl: i64) -> Result<usize, LibraryError> {
        let n: i64 = self.conn.query_row(
            "SELECT COUNT(*) FROM library WHERE parent = ?1",
            params![vl],
            |r| r.get(0),
        )?;
        Ok(n as usize)
    }

    /// [`Store::library_postings`] from the `offset`-th, at most `limit`
    /// (a page of a large VL's summary).
    pub fn library_postings_page(
        &self,
        vl: i64,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<(Posting, Option<PointerCheck>)>, LibraryError> {
        let sql = &format!(
            "SELECT {L_COLUMNS}, {CHECKED} WHERE l.parent = ?1 ORDER BY {title}, l.seq LIMIT ?2 OFFSET ?3",
            title = by_title(&self.conn, "l.title"),
        );
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .conn
            .query_vec(sql, params![vl, limit, offset as i64], checked)?
            .into_iter()
            .collect();
        Ok(rows)
    }

    /// Posting `id` with what the spider last found at its URL.
    pub fn library_checked(
        &self,
        id: i64,
    ) -> Result<(Posting, Option<PointerCheck>), LibraryError> {
        self.conn
            .query_opt(
                &format!("SELECT {L_COLUMNS}, {CHECKED} WHERE l.id = ?1"),
                params![id],
                checked,
            )?
            .ok_or(LibraryError::NotFound(id))
    }

    /// How many postings come before posting `id` in its VL's summary
    /// (alphabetically, then by number): which page of the summary shows
    /// it.
    pub fn library_position(&self, id: i64) -> Result<usize, LibraryError> {
        let (o, p) = (
            by_title(&self.conn, "o.title"),
            by_title(&self.conn, "p.title"),
        );
        let n: i64 = self
            .conn
            .query_opt(
                &format!(
                    "SELECT (SELECT COUNT(*) FROM library o
                             WHERE o.parent = p.parent
                               AND ({o} < {p} OR ({o} = {p} AND o.seq < p.seq)))
                     FROM library p WHERE p.id = ?1"
                ),
                params![id],
                |r| r.get(0),
            )?
            .ok_or(LibraryError::NotFound(id))?;
        Ok(n as usize)
    }

    /// Everything at and below VL `vl`, most recently changed first (the
    /// seed's SUMMARY), at most `limit`.
    pub fn library_global_list(&self, vl: i64, limit: usize) -> Result<Vec<Posting>, LibraryError> {
        let sql = &format!(
            "{BELOW} SELECT {COLUMNS} FROM library WHERE id IN (SELECT id FROM below) AND id <> ?1
             ORDER BY updated_at DESC, id DESC LIMIT ?2"
        );
        let rows = self
            .conn
            .query_vec(sql, params![vl, limit as i64], posting)?
            .into_iter()
            .collect();
        Ok(rows)
    }

    /// How many changes the library has had (every insert, edit and
    /// delete counts): what the search index compares to know whether
    /// the postings it holds are current.
    pub fn library_changes(&self) -> Result<i64, LibraryError> {
        Ok(self
            .conn
            .query_row("SELECT n FROM library_changes", params![], |r| r.get(0))?)
    }

    /// Every posting but the root, each with the title of the VL it is
    /// posted in, in id order (what the search index holds of the library).
    pub fn library_everything(&self) -> Result<Vec<(Posting, String)>, LibraryError> {
        let sql = &format!(
            "SELECT {L_COLUMNS}, p.title FROM library l JOIN library p ON p.id = l.parent
             ORDER BY l.id"
        );
        let rows = self
            .conn
            .query_vec(sql, params![], |r| Ok((posting(r)?, r.get(15)?)))?
            .into_iter()
            .collect();
        Ok(rows)
    }

    /// The URLs of every pointer at and below VL `vl`, each once, in the
    /// order they were posted (the Worm VL's tops).
    pub fn library_pointer_urls(&self, vl: i64) -> Result<Vec<String>, LibraryError> {
        vl_for(&self.conn, vl, PostingKind::Vl)?;
        let sql = &format!(
            "{BELOW} SELECT url FROM library WHERE id IN (SELECT id FROM below) AND kind = 'pointer'
             GROUP BY url ORDER BY MIN(id)"
        );
        let rows = self
            .conn
            .query_vec(sql, params![vl], |r| r.get(0))?
            .into_iter()
            .collect();
        Ok(rows)
    }

    /// Post into VL `parent`: each of `postings` gets the VL's next
    /// sequence number; all are posted or, when one is refused, none.
    pub fn library_post(
        &mut self,
        parent: i64,
        postings: &[(PostingKind, PostingText, Option<String>)],
    ) -> Result<Vec<Posting>, LibraryError> {
        let tx = self.conn.transaction(TxMode::Immediate)?;
        let t = now();
        let mut ids = Vec::with_capacity(postings.len());
        for (kind, text, password) in postings {
            vl_for(&tx, parent, *kind)?;
            ids.push(insert(
                &tx,
                None,
                parent,
                None,
                *kind,
                text,
                password.as_deref(),
                t,
                t,
            )?);
        }
        let out = ids
            .into_iter()
            .map(|id| get(&tx, id))
            .collect::<Result<_, _>>()?;
        tx.commit()?;
        Ok(out)
    }

    /// Change what posting `id` says, when it is still the posting the
    /// form was `opened` for, at the version it showed. `password`
    /// replaces its password hash when given (`Some(None)` removes it).
    pub fn library_edit(
        &mut self,
        id: i64,
        opened: Opened,
        text: &PostingText,
        password: Option<Option<String>>,
    ) -> Result<Posting, LibraryError> {
        let tx = self.conn.transaction(TxMode::Immediate)?;
        let old = match get(&tx, id) {
            Ok(p) if p.created_at == opened.created_at => p,
            Ok(_) | Err(LibraryError::NotFound(_)) => return Err(LibraryError::Gone(id)),
            Err(e) => return Err(e),
        };
        let read = opened.version;
        if old.version != read {
            return Err(LibraryError::Conflict {
                current: old.version,
                read,
            });
        }
        let password = match password {
            Some(p) => p,
            None => old.password,
        };
        tx.execute(
            "UPDATE library SET title = ?2, url = ?3, body = ?4, image = ?5, create_only = ?6,
                    author = ?7, email = ?8, password = ?9, updated_at = ?10,
                    version = version + 1
             WHERE id = ?1 AND version = ?11",
            params![
                id,
                text.title,
                text.url,
                text.body,
                text.image,
                text.create_only && old.kind == PostingKind::Vl,
                text.author,
                text.email,
                password,
                now(),
                read
            ],
        )?;
        let new = get(&tx, id)?;
        tx.commit()?;
        Ok(new)
    }

    /// Point posting `id` at `url` (a pointer the spider found moved), when
    /// it is still the posting and the version the form was `opened` at.
    pub fn library_set_url(
        &mut self,
        id: i64,
        opened: Opened,
        url: &str,
    ) -> Result<Posting, LibraryError> {
        let old = match get(&self.conn, id) {
            Err(LibraryError::NotFound(_)) => return Err(LibraryError::Gone(id)),
            other => other?,
        };
        let text = PostingText {
            url: Some(url.to_string()),
            ..old.text
        };
        self.library_edit(id, opened, &text, None)
    }

    /// Delete the postings `ids` and, for a VL, everything below it.
    /// Returns how many postings went.
    pub fn library_delete(&mut self, ids: &[i64]) -> Result<usize, LibraryError> {
        let tx = self.conn.transaction(TxMode::Immediate)?;
        let mut gone = 0;
        for &id in ids {
            let p = get(&tx, id)?;
            if p.parent.is_none() {
                return Err(LibraryError::Root);
            }
            for below in subtree(&tx, id)?.into_iter().rev() {
                gone += tx.execute("DELETE FROM library WHERE id = ?1", params![below])?;
            }
        }
        tx.commit()?;
        Ok(gone)
    }

    /// Move posting `id` into VL `to`, where it takes the next sequence
    /// number.
    pub fn library_move(&mut self, id: i64, to: i64) -> Result<Posting, LibraryError> {
        let tx = self.conn.transaction(TxMode::Immediate)?;
        let p = placeable(&tx, id, to)?;
        if p.parent != Some(to) {
            let seq = next_seq(&tx, to)?;
            tx.execute(
                "UPDATE library SET parent = ?2, seq = ?3, updated_at = ?4, version = version + 1
                 WHERE id = ?1",
                params![id, to, seq, now()],
            )?;
        }
        let p = get(&tx, id)?;
        tx.commit()?;
        Ok(p)
    }

    /// Copy posting `id` (a VL with everything below it) into VL `to`.
    pub fn library_copy(&mut self, id: i64, to: i64) -> Result<Posting, LibraryError> {
        let tx = self.conn.transaction(TxMode::Immediate)?;
        let p = placeable(&tx, id, to)?;
        let node = node_of(&tx, p)?;
        let t = now();
        let copy = graft(&tx, to, &node, Some(t))?;
        let copy = get(&tx, copy)?;
        tx.commit()?;
        Ok(copy)
    }

    /// Every VL of the tree, depth first from the root, sub-VLs
    /// alphabetically: (id, depth, title).
    pub fn library_vls(&self) -> Result<Vec<(i64, usize, String)>, LibraryError> {
        let sql = &format!(
            "SELECT id, parent, title FROM library WHERE kind = 'vl' ORDER BY {}, seq",
            by_title(&self.conn, "title")
        );
        let mut below: std::collections::HashMap<Option<i64>, Vec<(i64, String)>> =
            std::collections::HashMap::new();
        let rows = self
            .conn
            .query_vec(sql, params![], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        for row in rows {
            let (id, parent, title): (i64, Option<i64>, String) = row;
            below.entry(parent).or_default().push((id, title));
        }
        let mut out = Vec::new();
        let mut stack: Vec<(i64, usize, String)> = match root_id(&self.conn)? {
            Some(root) => vec![(root, 0, get(&self.conn, root)?.text.title)],
            None => Vec::new(),
        };
        while let Some((id, depth, title)) = stack.pop() {
            out.push((id, depth, title));
            if let Some(subs) = below.remove(&Some(id)) {
                stack.extend(subs.into_iter().rev().map(|(i, t)| (i, depth + 1, t)));
            }
        }
        Ok(out)
    }

    /// The whole library, from the root (none when there is no library).
    pub fn library_export(&self) -> Result<Option<LibraryNode>, LibraryError> {
        match root_id(&self.conn)? {
            Some(id) => {
                let p = get(&self.conn, id)?;
                Ok(Some(node_of(&self.conn, p)?))
            }
            None => Ok(None),
        }
    }

    /// Replace the whole library with `root` (an export): all of it or,
    /// on any failure, nothing.
    pub fn library_import(&mut self, root: &LibraryNode) -> Result<usize, LibraryError> {
        if root.kind != PostingKind::Vl {
            return Err(LibraryError::Import(
                "the library file's root is not a virtual library".into(),
            ));
        }
        let tx = self.conn.transaction(TxMode::Immediate)?;
        tx.execute("DELETE FROM library", params![])?;
        // The root, then everything below it, each with the file's id
        // (the next never given when the file has none).
        let (id_column, id_value) = match root.id {
            Some(_) => ("id, ", "?12, "),
            None => ("", ""),
        };
        let sql = format!(
            "INSERT INTO library ({id_column}parent, seq, kind, title, url, body, image,
                                  create_only, author, email, password, created_at, updated_at,
                                  version, last_seq)
             VALUES ({id_value}NULL, 0, 'vl', ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 1, ?11)
             RETURNING id"
        );
        let fields = params![
            root.text.title,
            root.text.url,
            root.text.body,
            root.text.image,
            root.text.create_only,
            root.text.author,
            root.text.email,
            root.password,
            root.created_at,
            root.updated_at,
            root.last_seq
        ];
        let id: i64 = match root.id {
            None => tx.query_row(&sql, fields, |r| r.get(0))?,
            Some(id) => {
                let mut with_id = fields.to_vec();
                with_id.push(&id);
                tx.query_row(&sql, &with_id, |r| r.get(0))?
            }
        };
        for child in &root.postings {
            graft(&tx, id, child, None)?;
        }
        // PostgreSQL's sequence does not see the ids given: it is moved
        // past them, and never back (SQLite's AUTOINCREMENT keeps the
        // highest id it has seen itself).
        if tx.dialect() == crate::db::Dialect::Postgres {
            tx.query_row(
                "SELECT setval(pg_get_serial_sequence('library', 'id'),
                               GREATEST(nextval(pg_get_serial_sequence('library', 'id')),
                                        (SELECT MAX(id) FROM library)))",
                params![],
                |r| r.get::<_, i64>(0),
            )?;
        }
        tx.commit()?;
        Ok(root.count())
    }
}

impl LibraryNode {
    /// How many postings it is, itself included.
    pub fn count(&self) -> usize {
        1 + self.postings.iter().map(LibraryNode::count).sum::<usize>()
    }
}

/// Posting `p` with everything below it, as a file holds it.
fn node_of(conn: &Conn, p: Posting) -> Result<LibraryNode, LibraryError> {
    let mut postings = Vec::new();
    let last_seq: i64 = conn.query_row(
        "SELECT last_seq FROM library WHERE id = ?1",
        params![p.id],
        |r| r.get(0),
    )?;
    if p.kind == PostingKind::Vl {
        let sql = &format!("SELECT {COLUMNS} FROM library WHERE parent = ?1 ORDER BY seq");
        let children: Vec<Posting> = conn
            .query_vec(sql, params![p.id], posting)?
            .into_iter()
            .collect();
        for c in children {
            postings.push(node_of(conn, c)?);
        }
    }
    Ok(LibraryNode {
        id: Some(p.id),
        kind: p.kind,
        seq: p.seq,
        text: p.text,
        password: p.password,
        created_at: p.created_at,
        updated_at: p.updated_at,
        last_seq,
        postings,
    })
}

/// Insert `node` and everything below it into VL `parent`: a copy (with
/// `now`) or an import. Returns the new id.
fn graft(
    tx: &Conn,
    parent: i64,
    node: &LibraryNode,
    now: Option<i64>,
) -> Result<i64, LibraryError> {
    vl_for(tx, parent, node.kind)?;
    // A copy takes a new id, the next number and the time of copying; an
    // import keeps the file's.
    let (id, seq, created, updated) = match now {
        Some(t) => (None, None, t, t),
        None => (node.id, Some(node.seq), node.created_at, node.updated_at),
    };
    let id = insert(
        tx,
        id,
        parent,
        seq,
        node.kind,
        &node.text,
        node.password.as_deref(),
        created,
        updated,
    )?;
    if now.is_none() && node.kind == PostingKind::Vl {
        tx.execute(
            "UPDATE library SET last_seq = ?2 WHERE id = ?1",
            params![id, node.last_seq],
        )?;
    }
    for child in &node.postings {
        if node.kind != PostingKind::Vl {
            return Err(LibraryError::Import(format!(
                "\"{}\" is a {} and cannot hold postings",
                node.text.title,
                node.kind.as_str()
            )));
        }
        graft(tx, id, child, now)?;
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(title: &str) -> PostingText {
        PostingText {
            title: title.into(),
            ..PostingText::default()
        }
    }

    fn pointer(title: &str, url: &str) -> (PostingKind, PostingText, Option<String>) {
        (
            PostingKind::Pointer,
            PostingText {
                url: Some(url.into()),
                ..text(title)
            },
            None,
        )
    }

    fn vl(title: &str, create_only: bool) -> (PostingKind, PostingText, Option<String>) {
        (
            PostingKind::Vl,
            PostingText {
                create_only,
                ..text(title)
            },
            None,
        )
    }

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.db")).unwrap();
        (dir, store)
    }

    #[test]
    fn postings_are_numbered_in_their_vl_and_listed_alphabetically() {
        let dir = tempfile::tempdir().unwrap();
        for mut s in crate::testing::stores(dir.path()) {
            let root = s.library_root("Library").unwrap();
            assert_eq!(s.library_root("Other").unwrap().id, root.id);
            let posted = s
                .library_post(
                    root.id,
                    &[
                        pointer("zebra", "http://z.example/"),
                        pointer("Apple", "http://a.example/"),
                        vl("Music", false),
                    ],
                )
                .unwrap();
            assert_eq!(
                posted.iter().map(|p| p.seq).collect::<Vec<_>>(),
                vec![1, 2, 3]
            );
            let listed: Vec<(String, i64)> = s
                .library_postings(root.id)
                .unwrap()
                .into_iter()
                .map(|(p, _)| (p.text.title, p.seq))
                .collect();
            assert_eq!(
                listed,
                vec![
                    ("Apple".into(), 2),
                    ("Music".into(), 3),
                    ("zebra".into(), 1)
                ]
            );
            // The sub-VL numbers its own postings from 1.
            let sub = s
                .library_post(posted[2].id, &[pointer("Bach", "http://b.example/")])
                .unwrap();
            let baroque = s
                .library_post(posted[2].id, &[vl("Baroque", false)])
                .unwrap()[0]
                .id;
            let art = s.library_post(root.id, &[vl("art", false)]).unwrap()[0].id;
            assert_eq!(
                s.library_vls().unwrap(),
                vec![
                    (root.id, 0, "Library".to_string()),
                    (art, 1, "art".to_string()),
                    (posted[2].id, 1, "Music".to_string()),
                    (baroque, 2, "Baroque".to_string()),
                ]
            );
            assert_eq!(sub[0].seq, 1);
            assert_eq!(
                s.library_ancestors(sub[0].id)
                    .unwrap()
                    .iter()
                    .map(|p| p.text.title.as_str())
                    .collect::<Vec<_>>(),
                vec!["Library", "Music"]
            );
        }
    }

    #[test]
    fn concurrent_posts_get_distinct_numbers() {
        let (d, mut s) = store();
        let root = s.library_root("Library").unwrap().id;
        let path = d.path().join("s.db");
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let mut s = Store::open(&path).unwrap();
                    for i in 0..25 {
                        s.library_post(root, &[pointer(&format!("{t}-{i}"), "http://x.example/")])
                            .unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let mut seqs: Vec<i64> = s
            .library_postings(root)
            .unwrap()
            .iter()
            .map(|(p, _)| p.seq)
            .collect();
        seqs.sort();
        assert_eq!(seqs, (1..=200).collect::<Vec<_>>());
    }

    #[test]
    fn an_edit_of_a_stale_version_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        for mut s in crate::testing::stores(dir.path()) {
            let root = s.library_root("Library").unwrap().id;
            let p = s
                .library_post(root, &[pointer("One", "http://1.example/")])
                .unwrap()[0]
                .clone();
            let at_1 = p.opened();
            let first = s.library_edit(p.id, at_1, &text("First"), None).unwrap();
            assert_eq!(first.version, 2);
            let second = s.library_edit(p.id, at_1, &text("Second"), None);
            assert!(
                matches!(
                    second,
                    Err(LibraryError::Conflict {
                        current: 2,
                        read: 1
                    })
                ),
                "{second:?}"
            );
            assert_eq!(s.library_posting(p.id).unwrap().text.title, "First");
        }
    }

    /// A deleted posting's id is never given again: before, SQLite gave
    /// the highest ids again once deleted, so an old link to `/library/N`
    /// or an edit form opened for posting N named the next posting, and a
    /// save from the form overwrote it (its version, 1, matched).
    #[test]
    fn ids_are_never_given_again_and_a_form_for_a_gone_posting_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        for mut s in crate::testing::stores(dir.path()) {
            let root = s.library_root("Library").unwrap().id;
            let first = s
                .library_post(root, &[pointer("First", "http://1.example/")])
                .unwrap()[0]
                .clone();
            s.library_delete(&[first.id]).unwrap();
            let second = s
                .library_post(root, &[pointer("Second", "http://2.example/")])
                .unwrap()[0]
                .clone();
            assert_eq!(second.id, first.id + 1);
            let stale = s.library_edit(first.id, first.opened(), &text("Stale"), None);
            assert!(
                matches!(stale, Err(LibraryError::Gone(id)) if id == first.id),
                "{stale:?}"
            );
            // A posting that has the form's id but is not the posting it
            // was opened for (a library imported over it) is not changed.
            let mut other = second.opened();
            other.created_at -= 1;
            let stale = s.library_edit(second.id, other, &text("Stale"), None);
            assert_eq!(
                stale.unwrap_err().to_string(),
                format!(
                    "the posting this form was opened for (number {}) has been deleted since, or the library replaced; nothing was changed. Open the library again to find what is there now",
                    second.id
                )
            );
            assert!(matches!(
                s.library_set_url(first.id, first.opened(), "http://x.example/"),
                Err(LibraryError::Gone(_))
            ));
            assert_eq!(s.library_posting(second.id).unwrap().text.title, "Second");
            // Not even the whole library deleted by an import gives its
            // ids again.
            let mut file = s.library_export().unwrap().unwrap();
            file.id = None;
            file.postings[0].id = None;
            s.library_import(&file).unwrap();
            let ids: Vec<i64> = s
                .library_everything()
                .unwrap()
                .iter()
                .map(|(p, _)| p.id)
                .collect();
            assert_eq!(ids, vec![second.id + 2]);
            let third = s.library_post(root, &[pointer("Third", "http://3.example/")]);
            assert!(matches!(third, Err(LibraryError::NotFound(_))));
        }
    }

    /// A store migrated from before version 15 gives no id twice either
    /// (its library table is made again with an AUTOINCREMENT key, its
    /// indexes and triggers with it).
    #[test]
    fn a_store_migrated_from_version_14_gives_no_id_twice() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        {
            let conn = rusqlite::Connection::open(&path).unwrap();
            for sql in &crate::schema::MIGRATIONS[..14] {
                conn.execute_batch(sql).unwrap();
            }
            conn.pragma_update(None, "user_version", 14).unwrap();
            conn.execute_batch(
                "INSERT INTO library (id, parent, seq, kind, title, created_at, updated_at,
                                      version, last_seq)
                 VALUES (1, NULL, 0, 'vl', 'Old', 1, 1, 1, 3),
                        (2, 1, 1, 'pointer', 'Kept', 1, 1, 1, 0),
                        (3, 1, 3, 'pointer', 'Last', 1, 1, 1, 0);",
            )
            .unwrap();
        }
        let mut s = Store::open(&path).unwrap();
        assert_eq!(s.library_posting(2).unwrap().text.title, "Kept");
        let changes = s.library_changes().unwrap();
        s.library_delete(&[3]).unwrap();
        assert_eq!(s.library_changes().unwrap(), changes + 1);
        let new = s
            .library_post(1, &[pointer("New", "http://n.example/")])
            .unwrap();
        assert_eq!((new[0].id, new[0].seq), (4, 4));
        let listed: Vec<String> = s
            .library_postings(1)
            .unwrap()
            .into_iter()
            .map(|(p, _)| p.text.title)
            .collect();
        assert_eq!(listed, ["Kept", "New"]);
    }

    #[test]
    fn create_only_vls_take_sub_vls_only() {
        let dir = tempfile::tempdir().unwrap();
        for mut s in crate::testing::stores(dir.path()) {
            let root = s.library_root("Library").unwrap().id;
            let closed = s.library_post(root, &[vl("Closed", true)]).unwrap()[0].id;
            let refused = s.library_post(closed, &[pointer("x", "http://x.example/")]);
            assert_eq!(
                refused.unwrap_err().to_string(),
                "\"Closed\" is Create-Only: only sub-libraries may be posted in it"
            );
            assert!(s.library_post(closed, &[vl("Open", false)]).is_ok());
            // A list of postings is all or nothing.
            let mixed = s.library_post(
                closed,
                &[vl("Fine", false), pointer("x", "http://x.example/")],
            );
            assert!(mixed.is_err());
            assert_eq!(s.library_postings(closed).unwrap().len(), 1);
        }
    }

    #[test]
    fn moves_copies_and_deletions_keep_the_tree_whole() {
        let dir = tempfile::tempdir().unwrap();
        for mut s in crate::testing::stores(dir.path()) {
            let root = s.library_root("Library").unwrap().id;
            let a = s.library_post(root, &[vl("A", false)]).unwrap()[0].id;
            let b = s.library_post(a, &[vl("B", false)]).unwrap()[0].id;
            let p = s
                .library_post(b, &[pointer("P", "http://p.example/")])
                .unwrap()[0]
                .id;
            assert!(matches!(
                s.library_move(a, b),
                Err(LibraryError::IntoItself)
            ));
            assert!(matches!(
                s.library_copy(a, a),
                Err(LibraryError::IntoItself)
            ));
            assert!(matches!(s.library_move(root, a), Err(LibraryError::Root)));
            assert!(matches!(s.library_move(a, p), Err(LibraryError::NotAVl(_))));

            let copy = s.library_copy(a, root).unwrap();
            assert_eq!((copy.seq, copy.text.title.as_str()), (2, "A"));
            let moved = s.library_move(p, root).unwrap();
            assert_eq!((moved.parent, moved.seq), (Some(root), 3));
            // The copy kept its own pointer; deleting A takes B with it.
            assert_eq!(s.library_global_list(copy.id, 10).unwrap().len(), 2);
            assert_eq!(s.library_delete(&[a]).unwrap(), 2);
            assert!(matches!(
                s.library_posting(b),
                Err(LibraryError::NotFound(_))
            ));
            assert!(matches!(s.library_delete(&[root]), Err(LibraryError::Root)));
        }
    }

    #[test]
    fn an_export_imports_as_it_was() {
        let (from, into) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let targets = crate::testing::stores(into.path());
        for (mut s, mut t) in crate::testing::stores(from.path()).into_iter().zip(targets) {
            let root = s.library_root("Library").unwrap().id;
            let a = s.library_post(root, &[vl("A", true)]).unwrap()[0].id;
            let b = s.library_post(a, &[vl("B", false)]).unwrap()[0].id;
            s.library_post(
                b,
                &[
                    pointer("P", "http://p.example/"),
                    pointer("Q", "http://q.example/"),
                ],
            )
            .unwrap();
            let q = s.library_postings(b).unwrap()[1].0.id;
            s.library_delete(&[q]).unwrap();
            s.library_post(b, &[pointer("R", "http://r.example/")])
                .unwrap();
            let exported = s.library_export().unwrap().unwrap();

            assert_eq!(t.library_import(&exported).unwrap(), 5);
            assert_eq!(t.library_export().unwrap().unwrap(), exported);
            // Numbers survive, gaps included.
            let json = serde_json::to_string(&exported).unwrap();
            assert!(json.contains(r#""seq":3"#), "{json}");
            // So do ids, the postings' addresses (before, an import
            // numbered them anew: VL 3 became 2), and the next posting
            // gets one never given.
            let r = s.library_postings(b).unwrap()[1].0.clone();
            assert_eq!(t.library_posting(r.id).unwrap().text.title, "R");
            assert_eq!(t.library_posting(b).unwrap().text.title, "B");
            assert!(matches!(
                t.library_posting(q),
                Err(LibraryError::NotFound(_))
            ));

            // A file that puts a pointer in a Create-Only VL changes nothing.
            let mut bad = exported.clone();
            let stray = LibraryNode {
                postings: Vec::new(),
                ..bad.postings[0].postings[0].postings[0].clone()
            };
            bad.postings[0].postings.push(stray);
            assert!(t.library_import(&bad).is_err());
            assert_eq!(t.library_export().unwrap().unwrap(), exported);
            let next = t
                .library_post(root, &[pointer("S", "http://s.example/")])
                .unwrap()[0]
                .id;
            assert_eq!(next, r.id + 1);
        }
    }
}
