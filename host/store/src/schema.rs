//! The store's schema, as numbered migrations, for each backend: a new
//! release appends a migration to both lists and never edits one, so a
//! version number means the same tables on SQLite and on PostgreSQL.
//! SQLite records how many have run in `PRAGMA user_version`, PostgreSQL in
//! the `schema_version` table.

use crate::StoreError;
use crate::db::{Conn, TxMode, params};

/// Bring the store's schema up to date; the version it has after (greater
/// than the migrations this build knows when a newer spinneret wrote it).
/// Migrated under the write lock, the version read again inside it: two
/// processes opening a new store at once (a crawl, and `results` beside
/// it) must not both create its tables.
pub(crate) fn migrate(conn: &Conn) -> Result<i64, StoreError> {
    match conn {
        Conn::Sqlite(c) => {
            let version = |c: &rusqlite::Connection| -> Result<i64, StoreError> {
                Ok(c.query_row("PRAGMA user_version", [], |r| r.get(0))?)
            };
            if version(c)? >= MIGRATIONS.len() as i64 {
                return version(c);
            }
            let tx = conn.transaction(TxMode::Immediate)?;
            for (i, sql) in MIGRATIONS.iter().enumerate().skip(version(c)? as usize) {
                tx.execute_batch(sql)?;
                c.pragma_update(None, "user_version", (i + 1) as i64)?;
            }
            tx.commit()?;
            version(c)
        }
        Conn::Pg(_) => {
            let tx = conn.transaction(TxMode::Immediate)?;
            tx.execute_batch(
                "CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)",
            )?;
            let version: i64 =
                match tx.query_opt("SELECT version FROM schema_version", params![], |r| {
                    r.get(0)
                })? {
                    Some(v) => v,
                    None => {
                        tx.execute("INSERT INTO schema_version (version) VALUES (0)", params![])?;
                        0
                    }
                };
            for (i, sql) in PG_MIGRATIONS.iter().enumerate().skip(version as usize) {
                tx.execute_batch(sql)?;
                tx.execute(
                    "UPDATE schema_version SET version = ?1",
                    params![(i + 1) as i64],
                )?;
            }
            let version = tx.query_row("SELECT version FROM schema_version", params![], |r| {
                r.get(0)
            })?;
            tx.commit()?;
            Ok(version)
        }
    }
}

/// Migration `i` brings the schema from version `i` to `i + 1`.
pub(crate) const MIGRATIONS: &[&str] = &[
    // 1: the first release.
    r#"
CREATE TABLE urls (
    id   INTEGER PRIMARY KEY,
    url  TEXT NOT NULL UNIQUE
);

CREATE TABLE runs (
    id           INTEGER PRIMARY KEY,
    config       TEXT,
    started_at   INTEGER NOT NULL,
    finished_at  INTEGER,
    status       TEXT NOT NULL,          -- running | finished | interrupted
    options      TEXT                    -- JSON: how the run was invoked
);

CREATE TABLE tasks (
    id             INTEGER PRIMARY KEY,
    run_id         INTEGER NOT NULL REFERENCES runs(id),
    name           TEXT NOT NULL,
    kind           TEXT NOT NULL,
    top_url        TEXT NOT NULL,
    email          TEXT,
    output_dir     TEXT,
    changed_days   INTEGER NOT NULL,
    expiring_days  INTEGER NOT NULL,
    UNIQUE (run_id, name)
);

-- One row per URL per run: what checking it found.
CREATE TABLE results (
    run_id          INTEGER NOT NULL REFERENCES runs(id),
    url_id          INTEGER NOT NULL REFERENCES urls(id),
    category        TEXT NOT NULL,       -- ok | moved | broken | blocked | avoided | not_checked
    method          TEXT,                -- HEAD | GET | NULL when no request was made
    status          INTEGER,
    error           TEXT,
    content_type    TEXT,
    content_length  INTEGER,
    size            INTEGER,
    content_hash    TEXT,
    etag            TEXT,
    last_modified   TEXT,
    expires         TEXT,
    owner           TEXT,
    redirects       TEXT,                -- JSON [{"url":..,"status":..}, ...]
    final_url       TEXT,
    elapsed_ms      INTEGER,
    truncated       INTEGER NOT NULL DEFAULT 0,
    attempts        INTEGER NOT NULL DEFAULT 0,
    referrer_id     INTEGER REFERENCES urls(id),
    checked_at      INTEGER NOT NULL,
    source          TEXT NOT NULL,       -- network | not_modified | reused
    PRIMARY KEY (run_id, url_id)
) WITHOUT ROWID;
CREATE INDEX results_by_url ON results (url_id, run_id);

-- The latest parse of each HTML document, with its references.
-- links: a JSON array with one [target_url_id, kind, anchor_text] per unique
-- reference, in document order (read it through the `links` view).
CREATE TABLE documents (
    url_id          INTEGER PRIMARY KEY REFERENCES urls(id),
    run_id          INTEGER NOT NULL,
    title           TEXT,
    owner           TEXT,
    expires         TEXT,
    base            TEXT,
    encoding        TEXT,
    parse_errors    INTEGER NOT NULL,
    decode_errors   INTEGER NOT NULL,
    http_equiv      TEXT,                -- JSON [[name, content], ...]
    links           TEXT NOT NULL        -- JSON [[target_id, kind, anchor_text], ...]
);

-- The link graph, one row per reference.
CREATE VIEW links AS
SELECT d.url_id                          AS source_id,
       CAST(j.key AS INTEGER)            AS seq,
       json_extract(j.value, '$[0]')     AS target_id,
       json_extract(j.value, '$[1]')     AS kind,
       json_extract(j.value, '$[2]')     AS anchor_text
FROM documents d, json_each(d.links) j;

-- The documents of each task's infostructure in a run. A task's leaves are
-- the targets of its documents' links that are not documents of the task.
CREATE TABLE task_documents (
    run_id       INTEGER NOT NULL,
    task_id      INTEGER NOT NULL REFERENCES tasks(id),
    url_id       INTEGER NOT NULL REFERENCES urls(id),
    referrer_id  INTEGER REFERENCES urls(id),
    PRIMARY KEY (run_id, task_id, url_id)
) WITHOUT ROWID;

-- The sites table (seed 000, Appendix D) with the robots.txt cache.
CREATE TABLE sites (
    site           TEXT PRIMARY KEY,     -- host:port
    robots_status  TEXT NOT NULL,        -- ok | missing | forbidden | unreachable
    robots_body    TEXT,
    http_status    INTEGER,
    fetched_at     INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL
) WITHOUT ROWID;

-- Avoid and leaf entries derived from robots.txt, expiring with their site.
CREATE TABLE avoid (
    prefix      TEXT NOT NULL,
    action      TEXT NOT NULL,           -- Avoid | Leaf
    expires_at  INTEGER,                 -- NULL: never
    origin      TEXT NOT NULL,           -- e.g. robots.txt of www.fict.org:80
    PRIMARY KEY (origin, prefix)
) WITHOUT ROWID;
"#,
    // 2: plugins keep state across runs; findings are stored with the run.
    r#"
-- Each plugin's key-value space (the `kv` host import).
CREATE TABLE plugin_kv (
    plugin  TEXT NOT NULL,
    key     TEXT NOT NULL,
    value   BLOB NOT NULL,
    PRIMARY KEY (plugin, key)
) WITHOUT ROWID;

-- What change detectors (and the host, for plugin failures) found, per task.
CREATE TABLE findings (
    run_id     INTEGER NOT NULL REFERENCES runs(id),
    task_id    INTEGER NOT NULL REFERENCES tasks(id),
    seq        INTEGER NOT NULL,
    kind       TEXT NOT NULL,
    url        TEXT NOT NULL,
    referrer   TEXT,
    message    TEXT NOT NULL,
    severity   TEXT NOT NULL,        -- info | warning | error
    source     TEXT NOT NULL,        -- the plugin that reported it
    PRIMARY KEY (run_id, task_id, seq)
) WITHOUT ROWID;
"#,
    // 3: messages to owners wait here until the mail server takes them.
    r#"
CREATE TABLE outbox (
    id          INTEGER PRIMARY KEY,
    run_id      INTEGER NOT NULL REFERENCES runs(id),
    task        TEXT NOT NULL,
    recipient   TEXT NOT NULL,
    subject     TEXT NOT NULL,
    body        TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    attempts    INTEGER NOT NULL DEFAULT 0,
    last_error  TEXT
);
"#,
    // 4: WebSnatcher's collections: each run of a profile, the files it
    // wrote (in order, for clean-up), what each URL was when last
    // retrieved (for conditional requests, revisits and what changed), the
    // main pages of each run (for its index) and the archive.
    r#"
CREATE TABLE collections (
    id           INTEGER PRIMARY KEY,
    profile      TEXT NOT NULL,
    started_at   INTEGER NOT NULL,
    finished_at  INTEGER,
    status       TEXT NOT NULL,        -- running | finished | interrupted | cleaned
    dir          TEXT NOT NULL         -- mirror-relative directory of its files
);

-- Every file a collection wrote, in order of creation.
CREATE TABLE collection_files (
    collection_id  INTEGER NOT NULL REFERENCES collections(id),
    seq            INTEGER NOT NULL,
    path           TEXT NOT NULL,      -- mirror-relative
    url            TEXT,               -- NULL for what the run made itself
    category       TEXT,
    digest         TEXT,               -- SHA-256 of the body as retrieved
    bytes          INTEGER NOT NULL,   -- on disk
    PRIMARY KEY (collection_id, seq)
) WITHOUT ROWID;

-- What each URL was when it was last retrieved.
CREATE TABLE collected_urls (
    url            TEXT PRIMARY KEY,
    collection_id  INTEGER NOT NULL,
    content_type   TEXT,
    etag           TEXT,
    last_modified  TEXT,
    digest         TEXT NOT NULL,
    warc_record    TEXT,               -- the response record holding the body
    warc_date      INTEGER
) WITHOUT ROWID;

-- The main pages of each collection (its items), for its index.
CREATE TABLE collection_pages (
    collection_id  INTEGER NOT NULL REFERENCES collections(id),
    seq            INTEGER NOT NULL,
    category       TEXT NOT NULL,
    url            TEXT NOT NULL,
    title          TEXT,
    found_by       TEXT NOT NULL,      -- JSON [[engine, rank], ...]
    path           TEXT,               -- mirror-relative; NULL when not retrieved
    digest         TEXT,
    bytes          INTEGER NOT NULL,   -- page, requisites and followed links
    problem        TEXT,               -- why it was not retrieved
    PRIMARY KEY (collection_id, seq)
) WITHOUT ROWID;

-- Pages copied into the archive, with their requisites.
CREATE TABLE archived_pages (
    day          TEXT NOT NULL,        -- YYYY-MM-DD, its Archive/ directory
    url          TEXT NOT NULL,
    title        TEXT,
    path         TEXT NOT NULL,        -- mirror-relative
    files        TEXT NOT NULL,        -- JSON [mirror-relative path, ...]
    archived_at  INTEGER NOT NULL,
    PRIMARY KEY (day, url)
) WITHOUT ROWID;
"#,
    // 5: the Worm (seed 001, section 3.2): each document's syntax faults,
    // and the documents an imported archive marked completed (its C lines).
    r#"
-- JSON {"kind": count, ...} in a fixed order; NULL for clean HTML.
ALTER TABLE documents ADD COLUMN bad_html TEXT;

-- Documents whose references an imported archive said were processed to
-- all levels (its C lines): a crawl given that archive does not read them
-- again. (Imported documents have run_id 0: no run of this store read them.)
CREATE TABLE archive_completed (
    url_id  INTEGER PRIMARY KEY REFERENCES urls(id)
) WITHOUT ROWID;
"#,
    // 6: a change sequence for documents. Every write that changes a document (a
    // crawl's parse, an import) gives it the next number, so the search
    // index reads exactly the documents written since it last looked.
    r#"
ALTER TABLE documents ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
UPDATE documents SET seq = 1;
CREATE INDEX documents_by_seq ON documents (seq);
"#,
    // 7: GENVL's virtual library. Every posting (a sub-VL, a pointer, a
    // report) is a row; the root VL has no parent. A VL's postings are
    // numbered in the order they were posted.
    r#"
CREATE TABLE library (
    id           INTEGER PRIMARY KEY,
    parent       INTEGER REFERENCES library(id),
    seq          INTEGER NOT NULL,           -- its number in its VL
    kind         TEXT NOT NULL CHECK (kind IN ('vl', 'pointer', 'report')),
    title        TEXT NOT NULL,
    url          TEXT,                       -- a pointer's URL; a report's title link
    body         TEXT,                       -- a report's text; a VL's statement of purpose
    image        TEXT,                       -- a VL's or a report's image
    create_only  INTEGER NOT NULL DEFAULT 0, -- a VL that takes sub-VLs only
    author       TEXT,
    email        TEXT,
    password     TEXT,                       -- argon2id hash; NULL: anyone may change it
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    version      INTEGER NOT NULL,           -- one more with each edit
    last_seq     INTEGER NOT NULL DEFAULT 0, -- a VL: the last number given (never reused)
    UNIQUE (parent, seq)
);
CREATE INDEX library_by_update ON library (updated_at);
CREATE INDEX library_by_url ON library (url);
"#,
    // 8: a count of the library's changes, kept by triggers, so that the
    // search index knows when the postings it holds are out of date.
    r#"
CREATE TABLE library_changes (n INTEGER NOT NULL);
INSERT INTO library_changes (n) VALUES (0);
CREATE TRIGGER library_inserted AFTER INSERT ON library
    BEGIN UPDATE library_changes SET n = n + 1; END;
CREATE TRIGGER library_updated AFTER UPDATE ON library
    BEGIN UPDATE library_changes SET n = n + 1; END;
CREATE TRIGGER library_deleted AFTER DELETE ON library
    BEGIN UPDATE library_changes SET n = n + 1; END;
"#,
    // 9: a VL's postings in the order its summary lists them, so a page of
    // a large VL is read without sorting all of it.
    r#"
CREATE INDEX library_by_title ON library (parent, title COLLATE NOCASE, seq);
"#,
    // 10: fragments. What a link's `#fragment` may name in a document (its
    // ids and `<a name>`s), and the fragments a document's links point at,
    // so a link to a place that is not there is found.
    r#"
-- JSON ["id", ...]; NULL when not known (more than the parse keeps, a
-- parser plugin's parse, or a parse from before this column).
ALTER TABLE documents ADD COLUMN anchors TEXT;
-- JSON [[target_url_id, "fragment"], ...] for its <a>/<area> links with a
-- fragment, percent-encoded as in the URL ([] for none); NULL for a parse
-- from before this column, which the next crawl fetches again in full.
ALTER TABLE documents ADD COLUMN fragments TEXT;
"#,
    // 11: the line of each link, for reports that point at a file (SARIF,
    // CI annotations, an editor's file:line). From this version, each entry
    // of `fragments` is written with a third element, the line of the first
    // link to that fragment ([target_url_id, "fragment", line]); the older
    // two-element entries are read with line 0.
    r#"
-- JSON [line, ...], one per entry of `links`, from 1 (0 when not known);
-- NULL when no line is known (a parser plugin's parse, or a parse from
-- before this column).
ALTER TABLE documents ADD COLUMN lines TEXT;
"#,
    // 12: the column of each link, beside its line (plugin API 0.5 hands
    // both to reporters). From this version each entry of `fragments` is
    // written with a fourth element, the column of the first link to that
    // fragment ([target_url_id, "fragment", line, column]); the older
    // entries are read with column 0.
    r#"
-- JSON [column, ...], one per entry of `links`: where the link's value
-- starts on its line, from 1, in characters (0 when not known); NULL when
-- no column is known (a parser plugin's parse, or a parse from before
-- this column).
ALTER TABLE documents ADD COLUMN columns TEXT;
"#,
    // 13: the tables of a run shared by worker processes (`spinneret
    // worker`), which only a database server can hold: on SQLite, nothing.
    r#"
SELECT 1;
"#,
    // 14: the store's identity, made at random once: what is kept outside
    // the store (a search index) says which store it was made of.
    r#"
CREATE TABLE store_identity (id TEXT NOT NULL);
INSERT INTO store_identity (id) VALUES (lower(hex(randomblob(16))));
"#,
    // 15: a posting's id is never given again, so that an old link to
    // `/library/N`, or an edit form opened for posting N, never names
    // another posting: SQLite gives a deleted highest rowid again unless
    // the key is AUTOINCREMENT, which takes a new table. The ids deleted
    // before this migration are not known; from the highest left on, none
    // is given twice.
    r#"
CREATE TABLE library_new (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    parent       INTEGER REFERENCES library(id),
    seq          INTEGER NOT NULL,           -- its number in its VL
    kind         TEXT NOT NULL CHECK (kind IN ('vl', 'pointer', 'report')),
    title        TEXT NOT NULL,
    url          TEXT,                       -- a pointer's URL; a report's title link
    body         TEXT,                       -- a report's text; a VL's statement of purpose
    image        TEXT,                       -- a VL's or a report's image
    create_only  INTEGER NOT NULL DEFAULT 0, -- a VL that takes sub-VLs only
    author       TEXT,
    email        TEXT,
    password     TEXT,                       -- argon2id hash; NULL: anyone may change it
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    version      INTEGER NOT NULL,           -- one more with each edit
    last_seq     INTEGER NOT NULL DEFAULT 0, -- a VL: the last number given (never reused)
    UNIQUE (parent, seq)
);
INSERT INTO library_new (id, parent, seq, kind, title, url, body, image, create_only, author,
                         email, password, created_at, updated_at, version, last_seq)
    SELECT id, parent, seq, kind, title, url, body, image, create_only, author,
           email, password, created_at, updated_at, version, last_seq FROM library;
DROP TABLE library;
ALTER TABLE library_new RENAME TO library;
CREATE INDEX library_by_update ON library (updated_at);
CREATE INDEX library_by_url ON library (url);
CREATE INDEX library_by_title ON library (parent, title COLLATE NOCASE, seq);
CREATE TRIGGER library_inserted AFTER INSERT ON library
    BEGIN UPDATE library_changes SET n = n + 1; END;
CREATE TRIGGER library_updated AFTER UPDATE ON library
    BEGIN UPDATE library_changes SET n = n + 1; END;
CREATE TRIGGER library_deleted AFTER DELETE ON library
    BEGIN UPDATE library_changes SET n = n + 1; END;
"#,
];

/// [`MIGRATIONS`] for PostgreSQL, one for one. Integers are `BIGINT` (the
/// store's ids and times are 64-bit), flags `BIGINT` 0 or 1 as on SQLite,
/// and URLs `COLLATE "C"`, so that URL order is byte order as SQLite's is
/// whatever the database's own collation.
pub(crate) const PG_MIGRATIONS: &[&str] = &[
    // 1
    r#"
CREATE TABLE urls (
    id   BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    url  TEXT COLLATE "C" NOT NULL UNIQUE
);

CREATE TABLE runs (
    id           BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    config       TEXT,
    started_at   BIGINT NOT NULL,
    finished_at  BIGINT,
    status       TEXT NOT NULL,
    options      TEXT
);

CREATE TABLE tasks (
    id             BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    run_id         BIGINT NOT NULL REFERENCES runs(id),
    name           TEXT NOT NULL,
    kind           TEXT NOT NULL,
    top_url        TEXT COLLATE "C" NOT NULL,
    email          TEXT,
    output_dir     TEXT,
    changed_days   BIGINT NOT NULL,
    expiring_days  BIGINT NOT NULL,
    UNIQUE (run_id, name)
);

CREATE TABLE results (
    run_id          BIGINT NOT NULL REFERENCES runs(id),
    url_id          BIGINT NOT NULL REFERENCES urls(id),
    category        TEXT NOT NULL,
    method          TEXT,
    status          BIGINT,
    error           TEXT,
    content_type    TEXT,
    content_length  BIGINT,
    size            BIGINT,
    content_hash    TEXT,
    etag            TEXT,
    last_modified   TEXT,
    expires         TEXT,
    owner           TEXT,
    redirects       TEXT,
    final_url       TEXT COLLATE "C",
    elapsed_ms      BIGINT,
    truncated       BIGINT NOT NULL DEFAULT 0,
    attempts        BIGINT NOT NULL DEFAULT 0,
    referrer_id     BIGINT REFERENCES urls(id),
    checked_at      BIGINT NOT NULL,
    source          TEXT NOT NULL,
    PRIMARY KEY (run_id, url_id)
);
CREATE INDEX results_by_url ON results (url_id, run_id);

CREATE TABLE documents (
    url_id          BIGINT PRIMARY KEY REFERENCES urls(id),
    run_id          BIGINT NOT NULL,
    title           TEXT,
    owner           TEXT,
    expires         TEXT,
    base            TEXT,
    encoding        TEXT,
    parse_errors    BIGINT NOT NULL,
    decode_errors   BIGINT NOT NULL,
    http_equiv      TEXT,
    links           TEXT NOT NULL
);

CREATE VIEW links AS
SELECT d.url_id                        AS source_id,
       j.ord - 1                       AS seq,
       (j.value ->> 0)::BIGINT         AS target_id,
       j.value ->> 1                   AS kind,
       j.value ->> 2                   AS anchor_text
FROM documents d, jsonb_array_elements(d.links::jsonb) WITH ORDINALITY AS j(value, ord);

CREATE TABLE task_documents (
    run_id       BIGINT NOT NULL,
    task_id      BIGINT NOT NULL REFERENCES tasks(id),
    url_id       BIGINT NOT NULL REFERENCES urls(id),
    referrer_id  BIGINT REFERENCES urls(id),
    PRIMARY KEY (run_id, task_id, url_id)
);

CREATE TABLE sites (
    site           TEXT PRIMARY KEY,
    robots_status  TEXT NOT NULL,
    robots_body    TEXT,
    http_status    BIGINT,
    fetched_at     BIGINT NOT NULL,
    expires_at     BIGINT NOT NULL
);

CREATE TABLE avoid (
    prefix      TEXT COLLATE "C" NOT NULL,
    action      TEXT NOT NULL,
    expires_at  BIGINT,
    origin      TEXT NOT NULL,
    PRIMARY KEY (origin, prefix)
);
"#,
    // 2
    r#"
CREATE TABLE plugin_kv (
    plugin  TEXT NOT NULL,
    key     TEXT NOT NULL,
    value   BYTEA NOT NULL,
    PRIMARY KEY (plugin, key)
);

CREATE TABLE findings (
    run_id     BIGINT NOT NULL REFERENCES runs(id),
    task_id    BIGINT NOT NULL REFERENCES tasks(id),
    seq        BIGINT NOT NULL,
    kind       TEXT NOT NULL,
    url        TEXT NOT NULL,
    referrer   TEXT,
    message    TEXT NOT NULL,
    severity   TEXT NOT NULL,
    source     TEXT NOT NULL,
    PRIMARY KEY (run_id, task_id, seq)
);
"#,
    // 3
    r#"
CREATE TABLE outbox (
    id          BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    run_id      BIGINT NOT NULL REFERENCES runs(id),
    task        TEXT NOT NULL,
    recipient   TEXT NOT NULL,
    subject     TEXT NOT NULL,
    body        TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    attempts    BIGINT NOT NULL DEFAULT 0,
    last_error  TEXT
);
"#,
    // 4
    r#"
CREATE TABLE collections (
    id           BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    profile      TEXT NOT NULL,
    started_at   BIGINT NOT NULL,
    finished_at  BIGINT,
    status       TEXT NOT NULL,
    dir          TEXT NOT NULL
);

CREATE TABLE collection_files (
    collection_id  BIGINT NOT NULL REFERENCES collections(id),
    seq            BIGINT NOT NULL,
    path           TEXT NOT NULL,
    url            TEXT COLLATE "C",
    category       TEXT,
    digest         TEXT,
    bytes          BIGINT NOT NULL,
    PRIMARY KEY (collection_id, seq)
);

CREATE TABLE collected_urls (
    url            TEXT COLLATE "C" PRIMARY KEY,
    collection_id  BIGINT NOT NULL,
    content_type   TEXT,
    etag           TEXT,
    last_modified  TEXT,
    digest         TEXT NOT NULL,
    warc_record    TEXT,
    warc_date      BIGINT
);

CREATE TABLE collection_pages (
    collection_id  BIGINT NOT NULL REFERENCES collections(id),
    seq            BIGINT NOT NULL,
    category       TEXT NOT NULL,
    url            TEXT COLLATE "C" NOT NULL,
    title          TEXT,
    found_by       TEXT NOT NULL,
    path           TEXT,
    digest         TEXT,
    bytes          BIGINT NOT NULL,
    problem        TEXT,
    PRIMARY KEY (collection_id, seq)
);

CREATE TABLE archived_pages (
    day          TEXT NOT NULL,
    url          TEXT COLLATE "C" NOT NULL,
    title        TEXT,
    path         TEXT NOT NULL,
    files        TEXT NOT NULL,
    archived_at  BIGINT NOT NULL,
    PRIMARY KEY (day, url)
);
"#,
    // 5
    r#"
ALTER TABLE documents ADD COLUMN bad_html TEXT;

CREATE TABLE archive_completed (
    url_id  BIGINT PRIMARY KEY REFERENCES urls(id)
);
"#,
    // 6
    r#"
ALTER TABLE documents ADD COLUMN seq BIGINT NOT NULL DEFAULT 0;
UPDATE documents SET seq = 1;
CREATE INDEX documents_by_seq ON documents (seq);
"#,
    // 7
    r#"
CREATE TABLE library (
    id           BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    parent       BIGINT REFERENCES library(id),
    seq          BIGINT NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('vl', 'pointer', 'report')),
    title        TEXT NOT NULL,
    url          TEXT COLLATE "C",
    body         TEXT,
    image        TEXT,
    create_only  BIGINT NOT NULL DEFAULT 0,
    author       TEXT,
    email        TEXT,
    password     TEXT,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    version      BIGINT NOT NULL,
    last_seq     BIGINT NOT NULL DEFAULT 0,
    UNIQUE (parent, seq)
);
CREATE INDEX library_by_update ON library (updated_at);
CREATE INDEX library_by_url ON library (url);
"#,
    // 8
    r#"
CREATE TABLE library_changes (n BIGINT NOT NULL);
INSERT INTO library_changes (n) VALUES (0);
CREATE FUNCTION library_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN UPDATE library_changes SET n = n + 1; RETURN NULL; END
$$;
CREATE TRIGGER library_changed AFTER INSERT OR UPDATE OR DELETE ON library
    FOR EACH ROW EXECUTE FUNCTION library_changed();
"#,
    // 9: SQLite's `COLLATE NOCASE` (ASCII letters folded) is `lower()` in
    // the C collation here, whatever the database's locale.
    r#"
CREATE INDEX library_by_title ON library (parent, lower(title COLLATE "C"), seq);
"#,
    // 10
    r#"
ALTER TABLE documents ADD COLUMN anchors TEXT;
ALTER TABLE documents ADD COLUMN fragments TEXT;
"#,
    // 11
    r#"
ALTER TABLE documents ADD COLUMN lines TEXT;
"#,
    // 12
    r#"
ALTER TABLE documents ADD COLUMN columns TEXT;
"#,
    // 13: a run shared by workers (`shared.rs`): its phase, the workers
    // alive, the sites' leases, and the frontier, a row per URL a task
    // reached (task 0: a redirect hop), offered once.
    r#"
CREATE TABLE shared_runs (
    run_id BIGINT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    phase TEXT NOT NULL DEFAULT 'documents',
    finisher TEXT
);
CREATE TABLE shared_workers (
    run_id BIGINT NOT NULL,
    worker TEXT NOT NULL,
    heartbeat BIGINT NOT NULL,
    lease_ms BIGINT NOT NULL,
    idle_in TEXT,
    PRIMARY KEY (run_id, worker)
);
CREATE TABLE shared_sites (
    run_id BIGINT NOT NULL,
    site TEXT COLLATE "C" NOT NULL,
    worker TEXT,
    lease_until BIGINT NOT NULL DEFAULT 0,
    generation BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, site)
);
CREATE TABLE shared_frontier (
    id BIGSERIAL PRIMARY KEY,
    run_id BIGINT NOT NULL,
    site TEXT COLLATE "C" NOT NULL,
    url TEXT COLLATE "C" NOT NULL,
    task_id BIGINT NOT NULL,
    traverse BIGINT NOT NULL,
    kind TEXT NOT NULL,
    referrer TEXT,
    decision TEXT NOT NULL,
    reason TEXT NOT NULL,
    depth BIGINT NOT NULL,
    taken BIGINT NOT NULL DEFAULT 0,
    UNIQUE (run_id, url, task_id, traverse)
);
CREATE INDEX shared_frontier_by_site ON shared_frontier (run_id, site);
-- What is not taken yet: a worker asks for its sites' ten times a second.
CREATE INDEX shared_frontier_untaken ON shared_frontier (run_id, site) WHERE taken = 0;
"#,
    // 14
    r#"
CREATE TABLE store_identity (id TEXT NOT NULL);
INSERT INTO store_identity (id)
  VALUES (md5(random()::text || clock_timestamp()::text || pg_backend_pid()::text));
"#,
    // 15: an identity column's sequence never gives a number twice
    // already (an import that keeps the file's ids moves it past them).
    r#"
SELECT 1;
"#,
];

#[cfg(test)]
mod tests {
    /// A version number means the same schema on both backends.
    #[test]
    fn each_backend_has_every_migration() {
        assert_eq!(super::MIGRATIONS.len(), super::PG_MIGRATIONS.len());
    }
}
