//! The store's connection: every query of the store goes through [`Conn`],
//! so the SQL is written once, with `?N` parameters, in the subset of SQL
//! the store's backends share (see `docs/design/postgres-store.md`).
//!
//! Today the one backend is the embedded SQLite file. The seam is here, one
//! level below the store's methods, so that a second backend is a second
//! variant of [`Conn`] (its parameters, rows and transactions), not a second
//! copy of every method's SQL.
//!
//! The calls are shaped after the ones the store made on rusqlite before:
//! [`Conn::execute`], [`Conn::query_row`], [`Conn::query_opt`],
//! [`Conn::query_vec`], [`Conn::for_each`] and [`Conn::transaction`]; each
//! statement is prepared once per connection and kept (its text is the key).

use crate::StoreError;
use rusqlite::types::{ToSqlOutput, ValueRef};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use tokio_postgres::types::{FromSql, IsNull, ToSql, Type};

/// A connection to the store.
pub(crate) enum Conn {
    /// The embedded SQLite file.
    Sqlite(rusqlite::Connection),
    /// A PostgreSQL database.
    Pg(PgConn),
}

/// A value as the store binds or reads it, whatever the backend.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Value<'a> {
    /// SQL NULL.
    Null,
    /// An integer (and a flag: 0 or 1).
    Int(i64),
    /// A floating-point number.
    Real(f64),
    /// Text.
    Text(&'a str),
    /// Bytes.
    Blob(&'a [u8]),
    /// An array of integers (PostgreSQL's `bigint[]`; a batch's column).
    Ints(&'a [Option<i64>]),
    /// An array of texts (PostgreSQL's `text[]`; a batch's column).
    Texts(&'a [Option<&'a str>]),
}

/// A column of a batch of rows, bound as one PostgreSQL array.
pub(crate) struct Ints<'a>(pub(crate) &'a [Option<i64>]);

/// A column of a batch of rows, bound as one PostgreSQL array.
pub(crate) struct Texts<'a>(pub(crate) &'a [Option<&'a str>]);

impl ToDb for Ints<'_> {
    fn value(&self) -> Value<'_> {
        Value::Ints(self.0)
    }
}

impl ToDb for Texts<'_> {
    fn value(&self) -> Value<'_> {
        Value::Texts(self.0)
    }
}

/// A value bound to a statement's parameter: the types the store binds.
pub(crate) trait ToDb {
    /// The value.
    fn value(&self) -> Value<'_>;
}

/// A value read from a column: the types the store reads.
pub(crate) trait FromDb: Sized {
    /// The value of a column, or why it cannot be one of these.
    fn from_value(value: Value<'_>) -> Result<Self, String>;
}

macro_rules! integers {
    ($($t:ty),*) => {$(
        impl ToDb for $t {
            fn value(&self) -> Value<'_> {
                Value::Int(i64::from(*self))
            }
        }
        impl FromDb for $t {
            fn from_value(value: Value<'_>) -> Result<Self, String> {
                match value {
                    Value::Int(n) => <$t>::try_from(n)
                        .map_err(|_| format!("{n} is out of range for {}", stringify!($t))),
                    other => Err(format!("expected an integer, found {other:?}")),
                }
            }
        }
    )*};
}
integers!(i64, i32, u32, u16, u8);

impl ToDb for bool {
    fn value(&self) -> Value<'_> {
        Value::Int(i64::from(*self))
    }
}

impl FromDb for bool {
    fn from_value(value: Value<'_>) -> Result<Self, String> {
        match value {
            Value::Int(n) => Ok(n != 0),
            other => Err(format!("expected a flag, found {other:?}")),
        }
    }
}

impl ToDb for f64 {
    fn value(&self) -> Value<'_> {
        Value::Real(*self)
    }
}

impl FromDb for f64 {
    fn from_value(value: Value<'_>) -> Result<Self, String> {
        match value {
            Value::Real(x) => Ok(x),
            Value::Int(n) => Ok(n as f64),
            other => Err(format!("expected a number, found {other:?}")),
        }
    }
}

impl ToDb for str {
    fn value(&self) -> Value<'_> {
        Value::Text(self)
    }
}

impl ToDb for String {
    fn value(&self) -> Value<'_> {
        Value::Text(self)
    }
}

impl FromDb for String {
    fn from_value(value: Value<'_>) -> Result<Self, String> {
        match value {
            Value::Text(t) => Ok(t.to_string()),
            other => Err(format!("expected text, found {other:?}")),
        }
    }
}

impl ToDb for [u8] {
    fn value(&self) -> Value<'_> {
        Value::Blob(self)
    }
}

impl ToDb for Vec<u8> {
    fn value(&self) -> Value<'_> {
        Value::Blob(self)
    }
}

impl FromDb for Vec<u8> {
    fn from_value(value: Value<'_>) -> Result<Self, String> {
        match value {
            Value::Blob(b) => Ok(b.to_vec()),
            Value::Text(t) => Ok(t.as_bytes().to_vec()),
            other => Err(format!("expected bytes, found {other:?}")),
        }
    }
}

impl<T: ToDb + ?Sized> ToDb for &T {
    fn value(&self) -> Value<'_> {
        (**self).value()
    }
}

impl<T: ToDb> ToDb for Option<T> {
    fn value(&self) -> Value<'_> {
        match self {
            Some(v) => v.value(),
            None => Value::Null,
        }
    }
}

impl<T: FromDb> FromDb for Option<T> {
    fn from_value(value: Value<'_>) -> Result<Self, String> {
        match value {
            Value::Null => Ok(None),
            v => T::from_value(v).map(Some),
        }
    }
}

/// The parameters of a statement, in order (`?1` first): `params![a, b]`.
macro_rules! params {
    () => { &[] as &[&dyn $crate::db::ToDb] };
    ($($p:expr),+ $(,)?) => { &[$(&$p as &dyn $crate::db::ToDb),+] as &[&dyn $crate::db::ToDb] };
}
pub(crate) use params;

/// A parameter as rusqlite binds it.
struct Bind<'a>(&'a dyn ToDb);

impl rusqlite::ToSql for Bind<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self.0.value() {
            Value::Ints(_) | Value::Texts(_) => {
                return Err(rusqlite::Error::ToSqlConversionFailure(
                    "an array is bound on PostgreSQL only".into(),
                ));
            }
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(n) => ToSqlOutput::Borrowed(ValueRef::Integer(n)),
            Value::Real(x) => ToSqlOutput::Borrowed(ValueRef::Real(x)),
            Value::Text(t) => ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())),
            Value::Blob(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
        })
    }
}

fn bind<'a>(params: &'a [&'a dyn ToDb]) -> impl rusqlite::Params + 'a {
    rusqlite::params_from_iter(params.iter().map(|p| Bind(*p)))
}

/// A column's place in a row: its index, from 0.
pub(crate) trait Column {
    /// The index.
    fn index(self) -> usize;
}

impl Column for usize {
    fn index(self) -> usize {
        self
    }
}

/// A row of a query's answer.
pub(crate) enum Row<'a> {
    /// A row of SQLite's.
    Sqlite(&'a rusqlite::Row<'a>),
    /// A row of PostgreSQL's.
    Pg(&'a tokio_postgres::Row),
}

impl Row<'_> {
    /// The value of column `i`.
    pub(crate) fn get<I: Column, T: FromDb>(&self, i: I) -> Result<T, StoreError> {
        let i = i.index();
        let converted = match self {
            Row::Sqlite(r) => {
                let v = match r.get_ref(i)? {
                    ValueRef::Null => Value::Null,
                    ValueRef::Integer(n) => Value::Int(n),
                    ValueRef::Real(x) => Value::Real(x),
                    ValueRef::Text(t) => {
                        Value::Text(std::str::from_utf8(t).map_err(|e| StoreError::Column {
                            column: i,
                            message: e.to_string(),
                        })?)
                    }
                    ValueRef::Blob(b) => Value::Blob(b),
                };
                T::from_value(v)
            }
            Row::Pg(r) => T::from_value(r.try_get::<_, PgValue<'_>>(i)?.0),
        };
        converted.map_err(|message| StoreError::Column { column: i, message })
    }

    /// Whether column `i` is NULL.
    pub(crate) fn is_null<I: Column>(&self, i: I) -> Result<bool, StoreError> {
        match self {
            Row::Sqlite(r) => Ok(r.get_ref(i.index())? == ValueRef::Null),
            Row::Pg(r) => Ok(r.try_get::<_, PgValue<'_>>(i.index())?.0 == Value::Null),
        }
    }
}

/// The SQL a connection speaks, where the backends differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// SQLite's.
    Sqlite,
    /// PostgreSQL's.
    Postgres,
}

/// How a transaction takes the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TxMode {
    /// Reads first; takes the write lock at its first write.
    Deferred,
    /// Takes the write lock at once: for a read-then-write that another
    /// writer must not interleave with (on PostgreSQL, an advisory lock
    /// held to the transaction's end stands for SQLite's write lock).
    Immediate,
    /// Reads only, all of one state of the store (SQLite's read
    /// transaction; PostgreSQL's repeatable read).
    Snapshot,
}

/// An open transaction: queries go through it (it derefs to the
/// connection); dropped without [`Tx::commit`], it rolls back.
pub(crate) struct Tx<'a> {
    conn: &'a Conn,
    inner: Option<TxInner<'a>>,
}

enum TxInner<'a> {
    Sqlite(rusqlite::Transaction<'a>),
    /// The nesting depth it opened (1: the transaction, more: a savepoint).
    Pg(usize),
}

impl Tx<'_> {
    /// Make its writes durable.
    pub(crate) fn commit(mut self) -> Result<(), StoreError> {
        match (self.inner.take(), self.conn) {
            (Some(TxInner::Sqlite(t)), _) => Ok(t.commit()?),
            (Some(TxInner::Pg(depth)), Conn::Pg(pg)) => pg.end(depth, true),
            _ => Ok(()),
        }
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if let (Some(TxInner::Pg(depth)), Conn::Pg(pg)) = (self.inner.take(), self.conn)
            && let Err(e) = pg.end(depth, false)
        {
            // A lost connection took the transaction with it: the caller
            // has the error that says so.
            match e.is_lost() {
                true => tracing::debug!("store: rolling back: {e}"),
                false => tracing::warn!("store: rolling back: {e}"),
            }
        }
    }
}

impl std::ops::Deref for Tx<'_> {
    type Target = Conn;

    fn deref(&self) -> &Conn {
        self.conn
    }
}

impl Conn {
    /// Run a statement; the number of rows it changed.
    pub(crate) fn execute(&self, sql: &str, params: &[&dyn ToDb]) -> Result<usize, StoreError> {
        match self {
            Conn::Sqlite(c) => Ok(c.prepare_cached(sql)?.execute(bind(params))?),
            Conn::Pg(pg) => pg.execute(sql, params),
        }
    }

    /// Run statements of ours, without parameters (a migration).
    pub(crate) fn execute_batch(&self, sql: &str) -> Result<(), StoreError> {
        match self {
            Conn::Sqlite(c) => Ok(c.execute_batch(sql)?),
            Conn::Pg(pg) => pg.batch(sql),
        }
    }

    /// The first row of a query, read by `f`; an error when there is none.
    pub(crate) fn query_row<T>(
        &self,
        sql: &str,
        params: &[&dyn ToDb],
        f: impl FnOnce(&Row<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.query_opt(sql, params, f)?
            .ok_or_else(|| StoreError::NoRow(first_line(sql).to_string()))
    }

    /// The first row of a query, read by `f`, if there is one.
    pub(crate) fn query_opt<T>(
        &self,
        sql: &str,
        params: &[&dyn ToDb],
        f: impl FnOnce(&Row<'_>) -> Result<T, StoreError>,
    ) -> Result<Option<T>, StoreError> {
        match self {
            Conn::Sqlite(c) => {
                let mut st = c.prepare_cached(sql)?;
                let mut rows = st.query(bind(params))?;
                match rows.next()? {
                    Some(r) => Ok(Some(f(&Row::Sqlite(r))?)),
                    None => Ok(None),
                }
            }
            Conn::Pg(pg) => match pg.query(sql, params)?.first() {
                Some(r) => Ok(Some(f(&Row::Pg(r))?)),
                None => Ok(None),
            },
        }
    }

    /// Every row of a query, each read by `f`.
    pub(crate) fn query_vec<T>(
        &self,
        sql: &str,
        params: &[&dyn ToDb],
        mut f: impl FnMut(&Row<'_>) -> Result<T, StoreError>,
    ) -> Result<Vec<T>, StoreError> {
        let mut out = Vec::new();
        self.for_each(sql, params, |r| {
            out.push(f(r)?);
            Ok::<_, StoreError>(())
        })?;
        Ok(out)
    }

    /// The rows a statement that writes returns (`UPDATE … RETURNING`),
    /// each read by `f`: read whole, not through a cursor (a cursor only
    /// reads), so for statements that return few rows.
    pub(crate) fn returning<T>(
        &self,
        sql: &str,
        params: &[&dyn ToDb],
        mut f: impl FnMut(&Row<'_>) -> Result<T, StoreError>,
    ) -> Result<Vec<T>, StoreError> {
        match self {
            Conn::Sqlite(_) => self.query_vec(sql, params, f),
            Conn::Pg(pg) => pg
                .query(sql, params)?
                .iter()
                .map(|r| f(&Row::Pg(r)))
                .collect(),
        }
    }

    /// Hand every row of a query to `f`, as they are read (a scan of a
    /// million rows is never held whole); `f`'s error ends the scan, and
    /// `f` may query the store itself. On PostgreSQL the rows come through
    /// a cursor a thousand at a time, so that `f`'s own queries are
    /// answered between two of them.
    pub(crate) fn for_each<E: From<StoreError>>(
        &self,
        sql: &str,
        params: &[&dyn ToDb],
        mut f: impl FnMut(&Row<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        match self {
            Conn::Sqlite(c) => {
                let mut st = c.prepare_cached(sql).map_err(StoreError::from)?;
                let mut rows = st.query(bind(params)).map_err(StoreError::from)?;
                while let Some(r) = rows.next().map_err(StoreError::from)? {
                    f(&Row::Sqlite(r))?;
                }
                Ok(())
            }
            Conn::Pg(pg) => {
                // A cursor lives in a transaction: one of its own when the
                // caller has none (dropped on an error, it rolls back and
                // closes the cursor).
                let own = match pg.depth.get() {
                    0 => Some(self.transaction(TxMode::Deferred)?),
                    _ => None,
                };
                // Named by how deep the scans nest (`f` may scan too) and
                // by the query: its FETCH, prepared once, describes the
                // query's columns.
                let level = pg.scans.get();
                let query = {
                    use std::hash::{Hash, Hasher};
                    let mut h = std::collections::hash_map::DefaultHasher::new();
                    sql.hash(&mut h);
                    h.finish()
                };
                let cursor = format!("spinneret_scan_{level}_{query:016x}");
                pg.execute_once(
                    &format!("DECLARE {cursor} NO SCROLL CURSOR FOR {sql}"),
                    params,
                )?;
                pg.scans.set(level + 1);
                let fetch = format!("FETCH {SCAN_ROWS} FROM {cursor}");
                let read = (|| -> Result<(), E> {
                    loop {
                        let rows = pg.query(&fetch, params![])?;
                        for r in &rows {
                            f(&Row::Pg(r))?;
                        }
                        if rows.len() < SCAN_ROWS {
                            return Ok(());
                        }
                    }
                })();
                pg.scans.set(level);
                if read.is_err() && own.is_none() {
                    // The caller's transaction goes on: the name is freed.
                    let _ = pg.batch(&format!("CLOSE {cursor}"));
                }
                read?;
                match own {
                    Some(tx) => tx.commit()?,
                    None => pg.batch(&format!("CLOSE {cursor}"))?,
                }
                Ok(())
            }
        }
    }

    /// The SQL this connection speaks.
    pub(crate) fn dialect(&self) -> Dialect {
        match self {
            Conn::Sqlite(_) => Dialect::Sqlite,
            Conn::Pg(_) => Dialect::Postgres,
        }
    }

    /// Open a transaction (a savepoint, inside one on PostgreSQL).
    pub(crate) fn transaction(&self, mode: TxMode) -> Result<Tx<'_>, StoreError> {
        let inner = match self {
            Conn::Sqlite(c) => {
                let behavior = match mode {
                    TxMode::Deferred | TxMode::Snapshot => rusqlite::TransactionBehavior::Deferred,
                    TxMode::Immediate => rusqlite::TransactionBehavior::Immediate,
                };
                TxInner::Sqlite(rusqlite::Transaction::new_unchecked(c, behavior)?)
            }
            Conn::Pg(pg) => TxInner::Pg(pg.begin(mode)?),
        };
        Ok(Tx {
            conn: self,
            inner: Some(inner),
        })
    }

    /// Whether this connection can be made again after it is lost (one to
    /// a database server can; a file's is never lost).
    pub(crate) fn reconnects(&self) -> bool {
        matches!(self, Conn::Pg(_))
    }

    /// Make the connection to the database again (the server closed it,
    /// or went away): its prepared statements go with the old one. Only
    /// outside a transaction; on SQLite, nothing to do.
    pub(crate) fn reconnect(&self) -> Result<(), StoreError> {
        match self {
            Conn::Sqlite(_) => Ok(()),
            Conn::Pg(pg) => pg.reconnect(),
        }
    }

    /// The SQLite connection, for what only SQLite has (pragmas, its
    /// statement counters in tests); `None` on another backend.
    pub(crate) fn sqlite(&self) -> Option<&rusqlite::Connection> {
        match self {
            Conn::Sqlite(c) => Some(c),
            Conn::Pg(_) => None,
        }
    }
}

/// The first line of a statement, to name it in an error.
fn first_line(sql: &str) -> &str {
    sql.trim().lines().next().unwrap_or_default()
}

/// The rows a scan on PostgreSQL reads at a time.
const SCAN_ROWS: usize = 1_000;

/// The most prepared statements a PostgreSQL connection keeps.
const STATEMENTS: usize = 256;

/// The key of the advisory lock an immediate transaction takes on
/// PostgreSQL (SQLite's write lock): one for the whole database.
const WRITE_LOCK: i64 = 0x5350_494e_5752_4954; // "SPINWRIT"

/// The key of the advisory lock a transaction takes on PostgreSQL before
/// it writes documents ("SPINDOCS"): see [`Conn::number_documents_in_turn`].
const DOCUMENTS_LOCK: i64 = 0x5350_494e_444f_4353;

impl Conn {
    /// Make the documents this transaction writes next take their change
    /// numbers (`documents.seq`, the next after the greatest) in the
    /// order the transactions commit, not the order they started: held to
    /// the commit on PostgreSQL, where several processes (the workers of a
    /// shared run, an archive import) write at once. Without it a batch
    /// that numbered its documents before another committed could commit
    /// after it, and a search index that had read up to the other's
    /// numbers would never read them. SQLite has one writer at a time.
    pub(crate) fn number_documents_in_turn(&self) -> Result<(), StoreError> {
        match self {
            Conn::Sqlite(_) => Ok(()),
            Conn::Pg(_) => self
                .query_row(
                    "SELECT pg_advisory_xact_lock(?1)",
                    params![DOCUMENTS_LOCK],
                    |_| Ok(()),
                )
                .map(|_| ()),
        }
    }

    /// Whether the connection still answers: a file's always does; a
    /// database's may have been closed by the server (restarted, or the
    /// session ended by an administrator). Asked with a round trip that
    /// gives up after 5 s.
    pub(crate) fn answers(&self) -> bool {
        match self {
            Conn::Sqlite(_) => true,
            Conn::Pg(pg) => pg.batch_within("SELECT 1", std::time::Duration::from_secs(5)),
        }
    }
}

/// A connection to PostgreSQL. Its socket is driven on the store's I/O
/// thread (a runtime of its own, so the store's methods stay synchronous
/// and may be called from inside the crawl's runtime); a call waits for
/// its answer on the caller's thread.
pub(crate) struct PgConn {
    /// How it was made, to make it again ([`PgConn::reconnect`]).
    config: Box<tokio_postgres::Config>,
    client: RefCell<tokio_postgres::Client>,
    /// Prepared statements, by their text as the store writes it.
    statements: RefCell<HashMap<String, tokio_postgres::Statement>>,
    /// Open transactions and savepoints.
    depth: Cell<usize>,
    /// Scans reading through a cursor, one inside another.
    scans: Cell<usize>,
    /// Whether a statement failed inside the open transaction: PostgreSQL
    /// has then aborted it (every later statement fails, and its COMMIT
    /// rolls back), so committing it is an error, not a quiet rollback.
    failed: Cell<bool>,
}

/// The runtime that drives every PostgreSQL connection's socket.
fn io() -> Result<&'static tokio::runtime::Handle, StoreError> {
    static IO: std::sync::OnceLock<Result<tokio::runtime::Handle, String>> =
        std::sync::OnceLock::new();
    IO.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let handle = rt.handle().clone();
        std::thread::Builder::new()
            .name("store-pg-io".into())
            .spawn(move || rt.block_on(std::future::pending::<()>()))
            .map_err(|e| e.to_string())?;
        Ok(handle)
    })
    .as_ref()
    .map_err(|e| StoreError::Io(format!("cannot start the PostgreSQL I/O thread: {e}")))
}

/// How long a connection may take, from the first packet to the end of
/// the login.
const LOGIN_WITHIN: std::time::Duration = std::time::Duration::from_secs(30);

/// The client of a connection made on the I/O thread, whose socket is
/// driven there from now on.
fn connected<S, T>(
    io: &tokio::runtime::Handle,
    connecting: impl std::future::Future<
        Output = Result<
            (tokio_postgres::Client, tokio_postgres::Connection<S, T>),
            tokio_postgres::Error,
        >,
    > + Send
    + 'static,
) -> Result<tokio_postgres::Client, StoreError>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    // `connect_timeout` bounds reaching the server; this bounds the whole
    // login too (TLS, authentication), which a server or pooler that
    // accepts the socket and then says nothing would hold for good.
    let within = async move { tokio::time::timeout(LOGIN_WITHIN, connecting).await };
    let (client, connection) = futures_executor::block_on(io.spawn(within))
        .map_err(|e| StoreError::Io(format!("the PostgreSQL I/O thread failed: {e}")))?
        .map_err(|_| {
            StoreError::Unreachable(format!(
                "the PostgreSQL server did not complete the login within {} s",
                LOGIN_WITHIN.as_secs()
            ))
        })??;
    io.spawn(async move {
        if let Err(e) = connection.await {
            // The server shutting down (a restart) ends every session: the
            // next statement on it says so, and a worker rides it out.
            let e = StoreError::Postgres(e);
            match e.is_lost() {
                true => tracing::debug!("store: the PostgreSQL connection ended: {e}"),
                false => tracing::warn!("store: the PostgreSQL connection ended: {e}"),
            }
        }
    });
    Ok(client)
}

/// TLS for a PostgreSQL connection: rustls (the process's provider),
/// trusting the system's roots and the certificates in the file
/// `PGSSLROOTCERT` names (libpq's variable), with no client certificate.
/// Made once a process: a run opens several connections (the writer, the
/// readers, the lock), and the system's roots are read from disk.
fn tls_connector() -> Result<tokio_postgres_rustls::MakeRustlsConnect, StoreError> {
    static TLS: std::sync::OnceLock<Result<tokio_postgres_rustls::MakeRustlsConnect, String>> =
        std::sync::OnceLock::new();
    TLS.get_or_init(make_tls_connector)
        .clone()
        .map_err(StoreError::Io)
}

fn make_tls_connector() -> Result<tokio_postgres_rustls::MakeRustlsConnect, String> {
    use rustls::pki_types::{CertificateDer, pem::PemObject};
    spinneret_core::tls::install_provider();
    let mut roots = rustls::RootCertStore::empty();
    roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    if let Some(file) = std::env::var_os("PGSSLROOTCERT") {
        let certs = CertificateDer::pem_file_iter(&file)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|e| {
                format!(
                    "cannot read the root certificates in {} (PGSSLROOTCERT): {e}",
                    std::path::Path::new(&file).display()
                )
            })?;
        roots.add_parsable_certificates(certs);
    }
    let config = rustls::ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

impl PgConn {
    /// Connect with `config`: over TLS when it says `sslmode=require`
    /// (the server's certificate verified against the system's roots and
    /// those in `PGSSLROOTCERT`'s file, and its name checked), else in the
    /// clear.
    pub(crate) fn connect(config: &tokio_postgres::Config) -> Result<PgConn, StoreError> {
        let mut config = config.clone();
        // A server that vanishes without closing the connection (its
        // machine lost, a network cut) is noticed within about a minute,
        // not the two hours of the system's default, unless the store's
        // URL says otherwise.
        use std::time::Duration;
        if config.get_keepalives_idle() == Duration::from_secs(2 * 60 * 60) {
            config
                .keepalives_idle(Duration::from_secs(30))
                .keepalives_interval(Duration::from_secs(10))
                .keepalives_retries(3);
        }
        let conn = PgConn {
            client: RefCell::new(open_client(&config)?),
            config: Box::new(config),
            statements: RefCell::new(HashMap::new()),
            depth: Cell::new(0),
            scans: Cell::new(0),
            failed: Cell::new(false),
        };
        conn.set_up()?;
        Ok(conn)
    }

    /// What every session of the store's is set to.
    fn set_up(&self) -> Result<(), StoreError> {
        // The store's scans read through cursors, and read them to the end:
        // planned for every row (PostgreSQL plans a cursor for its first
        // tenth by default, which made the report stage's scans 60 times
        // slower).
        self.batch("SET cursor_tuple_fraction = 1.0")
    }

    /// Make the connection again, as it was first made (a lost one's
    /// session, its prepared statements and its transaction are gone).
    fn reconnect(&self) -> Result<(), StoreError> {
        debug_assert_eq!(self.depth.get(), 0, "reconnected inside a transaction");
        let client = open_client(&self.config)?;
        *self.client.borrow_mut() = client;
        self.statements.borrow_mut().clear();
        self.depth.set(0);
        self.scans.set(0);
        self.failed.set(false);
        self.set_up()
    }

    fn client(&self) -> std::cell::Ref<'_, tokio_postgres::Client> {
        self.client.borrow()
    }
}

/// A client of the server `config` names: over TLS when it says
/// `sslmode=require`, else in the clear (see [`PgConn::connect`]).
fn open_client(config: &tokio_postgres::Config) -> Result<tokio_postgres::Client, StoreError> {
    let io = io()?;
    let config = config.clone();
    let client = match config.get_ssl_mode() {
        tokio_postgres::config::SslMode::Require => {
            let tls = tls_connector()?;
            connected(io, async move { config.connect(tls).await })?
        }
        _ => {
            let remote = config.get_hosts().iter().any(|h| match h {
                tokio_postgres::config::Host::Tcp(name) => {
                    name != "localhost"
                        && !name
                            .parse::<std::net::IpAddr>()
                            .is_ok_and(|ip| ip.is_loopback())
                }
                tokio_postgres::config::Host::Unix(_) => false,
            });
            // Said once a process, not for each of its connections.
            static WARNED: std::sync::Once = std::sync::Once::new();
            if remote {
                WARNED.call_once(|| {
                        tracing::warn!(
                            "store: connecting to PostgreSQL in the clear; give the store's URL ?sslmode=require for TLS"
                        )
                    });
            }
            connected(
                io,
                async move { config.connect(tokio_postgres::NoTls).await },
            )?
        }
    };
    Ok(client)
}

impl PgConn {
    /// Wait for a call's answer.
    fn wait<T>(
        &self,
        call: impl std::future::Future<Output = Result<T, tokio_postgres::Error>>,
    ) -> Result<T, StoreError> {
        let answer = futures_executor::block_on(call);
        if answer.is_err() && self.depth.get() > 0 {
            self.failed.set(true);
        }
        Ok(answer?)
    }

    /// The prepared statement of `sql` (written with `?N`), prepared once.
    fn statement(&self, sql: &str) -> Result<tokio_postgres::Statement, StoreError> {
        if let Some(st) = self.statements.borrow().get(sql) {
            return Ok(st.clone());
        }
        let st = self.wait(self.client().prepare(&numbered(sql)))?;
        let mut statements = self.statements.borrow_mut();
        // The store's statements are a few dozen texts; one made from data
        // (a report's filter) must not make the cache grow without end.
        if statements.len() >= STATEMENTS {
            statements.clear();
        }
        statements.insert(sql.to_string(), st.clone());
        Ok(st)
    }

    fn execute(&self, sql: &str, params: &[&dyn ToDb]) -> Result<usize, StoreError> {
        let st = self.statement(sql)?;
        let n = self.wait(self.client().execute(&st, &pg_params(params).refs()))?;
        Ok(n as usize)
    }

    /// Run a statement made once (prepared, run and let go: not kept).
    fn execute_once(&self, sql: &str, params: &[&dyn ToDb]) -> Result<u64, StoreError> {
        let st = self.wait(self.client().prepare(&numbered(sql)))?;
        self.wait(self.client().execute(&st, &pg_params(params).refs()))
    }

    fn query(
        &self,
        sql: &str,
        params: &[&dyn ToDb],
    ) -> Result<Vec<tokio_postgres::Row>, StoreError> {
        let st = self.statement(sql)?;
        self.wait(self.client().query(&st, &pg_params(params).refs()))
    }

    fn batch(&self, sql: &str) -> Result<(), StoreError> {
        self.wait(self.client().batch_execute(sql))
    }

    /// Let go of this session's advisory locks, waiting at most `within`
    /// for the server to say so: a connection whose network went away
    /// would otherwise hold the caller until the kernel gives up on the
    /// socket (a quarter of an hour). Whether it was said is returned; the
    /// server lets go of them anyway when the session ends.
    pub(crate) fn unlock_all_within(&self, within: std::time::Duration) -> bool {
        self.batch_within("SELECT pg_advisory_unlock_all()", within)
    }

    /// Run `sql` (no parameters, no rows wanted) unless the server takes
    /// longer than `within` to answer, or the connection is closed: whether
    /// it ran.
    fn batch_within(&self, sql: &str, within: std::time::Duration) -> bool {
        if self.client().is_closed() {
            return false;
        }
        let Ok(io) = io() else {
            return false;
        };
        // The timer is the I/O runtime's, whose thread drives it.
        let _timers = io.enter();
        let client = self.client();
        let call = tokio::time::timeout(within, client.batch_execute(sql));
        matches!(futures_executor::block_on(call), Ok(Ok(())))
    }

    /// Open a transaction, or a savepoint inside one; its depth.
    fn begin(&self, mode: TxMode) -> Result<usize, StoreError> {
        let depth = self.depth.get() + 1;
        match depth {
            1 => self.batch("BEGIN")?,
            d => self.batch(&format!("SAVEPOINT s{d}"))?,
        }
        self.depth.set(depth);
        let setup = match mode {
            TxMode::Deferred => Ok(()),
            TxMode::Immediate => self
                .execute("SELECT pg_advisory_xact_lock(?1)", params![WRITE_LOCK])
                .map(drop),
            TxMode::Snapshot if depth == 1 => {
                self.batch("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            }
            TxMode::Snapshot => Ok(()),
        };
        if let Err(e) = setup {
            // No guard holds it yet: undone here.
            let _ = self.end(depth, false);
            return Err(e);
        }
        Ok(depth)
    }

    /// End the transaction or savepoint at `depth`: committed (an error,
    /// and rolled back, when a statement in it failed), or rolled back.
    fn end(&self, depth: usize, commit: bool) -> Result<(), StoreError> {
        debug_assert_eq!(depth, self.depth.get(), "transactions end innermost first");
        let failed = self.failed.get();
        let commit = commit && !failed;
        let sql = match (depth, commit) {
            (1, true) => "COMMIT".to_string(),
            (1, false) => "ROLLBACK".to_string(),
            (d, true) => format!("RELEASE SAVEPOINT s{d}"),
            (d, false) => format!("ROLLBACK TO SAVEPOINT s{d}; RELEASE SAVEPOINT s{d}"),
        };
        // Rolled back (to its savepoint), the transaction is whole again.
        self.depth.set(depth - 1);
        self.failed.set(false);
        self.batch(&sql)?;
        match failed {
            true => Err(StoreError::RolledBack),
            false => Ok(()),
        }
    }
}

/// `sql` with its `?N` parameters written as PostgreSQL's `$N` (outside
/// quoted text).
fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut quoted = false;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                quoted = !quoted;
                out.push(c);
            }
            '?' if !quoted && chars.peek().is_some_and(char::is_ascii_digit) => out.push('$'),
            c => out.push(c),
        }
    }
    out
}

/// A value bound for PostgreSQL, converted to the parameter's type as the
/// statement declares it (an integer binds to `int2`, `int4`, `int8` or
/// `bool` alike).
#[derive(Debug)]
struct PgParam<'a>(Value<'a>);

/// The parameters of one call.
struct PgParams<'a>(Vec<PgParam<'a>>);

fn pg_params<'a>(params: &'a [&'a dyn ToDb]) -> PgParams<'a> {
    PgParams(params.iter().map(|p| PgParam(p.value())).collect())
}

impl PgParams<'_> {
    fn refs(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.0.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
    }
}

type PgError = Box<dyn std::error::Error + Sync + Send>;

impl ToSql for PgParam<'_> {
    fn to_sql(&self, ty: &Type, out: &mut bytes::BytesMut) -> Result<IsNull, PgError> {
        match self.0 {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(n) => match *ty {
                Type::INT8 => n.to_sql(ty, out),
                Type::INT4 => i32::try_from(n)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(n)?.to_sql(ty, out),
                Type::BOOL => (n != 0).to_sql(ty, out),
                Type::FLOAT8 => (n as f64).to_sql(ty, out),
                _ => Err(format!("cannot bind the integer {n} to a parameter of type {ty}").into()),
            },
            Value::Real(x) => x.to_sql(ty, out),
            // PostgreSQL's text cannot hold NUL (SQLite's can): a crawled
            // page's or robots.txt's NUL becomes U+FFFD there.
            Value::Text(t) if t.contains('\0') => t.replace('\0', "\u{FFFD}").to_sql(ty, out),
            Value::Text(t) => t.to_sql(ty, out),
            Value::Blob(b) => b.to_sql(ty, out),
            Value::Ints(a) => a.to_sql(ty, out),
            Value::Texts(a) if a.iter().flatten().any(|t| t.contains('\0')) => a
                .iter()
                .map(|t| t.map(|t| t.replace('\0', "\u{FFFD}")))
                .collect::<Vec<_>>()
                .to_sql(ty, out),
            Value::Texts(a) => a.to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    fn to_sql_checked(&self, ty: &Type, out: &mut bytes::BytesMut) -> Result<IsNull, PgError> {
        self.to_sql(ty, out)
    }
}

/// A column read from PostgreSQL, whatever its type.
struct PgValue<'a>(Value<'a>);

impl<'a> FromSql<'a> for PgValue<'a> {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, PgError> {
        Ok(PgValue(match *ty {
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::INT4 => Value::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT2 => Value::Int(i16::from_sql(ty, raw)?.into()),
            Type::BOOL => Value::Int(bool::from_sql(ty, raw)?.into()),
            Type::FLOAT8 => Value::Real(f64::from_sql(ty, raw)?),
            Type::FLOAT4 => Value::Real(f32::from_sql(ty, raw)?.into()),
            Type::BYTEA => Value::Blob(<&[u8]>::from_sql(ty, raw)?),
            _ => Value::Text(<&str>::from_sql(ty, raw)?),
        }))
    }

    fn from_sql_null(_: &Type) -> Result<Self, PgError> {
        Ok(PgValue(Value::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connection to each backend (SQLite in memory, and a new
    /// PostgreSQL database when the test server runs), each with a table `t`.
    fn conns() -> Vec<Conn> {
        let mut conns = vec![Conn::Sqlite(
            rusqlite::Connection::open_in_memory().unwrap(),
        )];
        conns[0]
            .execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, n INTEGER, b BLOB)")
            .unwrap();
        if let Some(pg) = crate::testing::TestPg::shared() {
            let c = Conn::Pg(PgConn::connect(&pg.database()).unwrap());
            c.execute_batch(
                "CREATE TABLE t (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                                 name TEXT, n BIGINT, b BYTEA)",
            )
            .unwrap();
            conns.push(c);
        }
        conns
    }

    /// Two transactions numbering documents at once on PostgreSQL (two
    /// workers' writers): the one that commits last has the greater
    /// number, though it numbered while the other was open. Without the
    /// lock both took 1, and an index that had read the second's number
    /// never read the first's document.
    #[test]
    fn documents_are_numbered_in_the_order_their_transactions_commit() {
        let Some(pg) = crate::testing::TestPg::shared() else {
            return;
        };
        let config = pg.database();
        let first = Conn::Pg(PgConn::connect(&config).unwrap());
        first
            .execute_batch("CREATE TABLE d (name TEXT, seq BIGINT)")
            .unwrap();
        let number =
            "INSERT INTO d (name, seq) VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM d))";
        let tx = first.transaction(TxMode::Deferred).unwrap();
        tx.number_documents_in_turn().unwrap();
        tx.execute(number, params!["first"]).unwrap();
        let second = std::thread::spawn(move || {
            let c = Conn::Pg(PgConn::connect(&config).unwrap());
            let tx = c.transaction(TxMode::Deferred).unwrap();
            tx.number_documents_in_turn().unwrap();
            tx.execute(number, params!["second"]).unwrap();
            tx.commit().unwrap();
        });
        std::thread::sleep(std::time::Duration::from_millis(300));
        tx.commit().unwrap();
        second.join().unwrap();
        let numbered: String = first
            .query_row(
                "SELECT string_agg(name || ':' || seq, ',' ORDER BY seq, name) FROM d",
                params![],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(numbered, "first:1,second:2");
    }

    #[test]
    fn values_go_in_and_come_out_as_bound() {
        for c in conns() {
            let none: Option<&str> = None;
            c.execute(
                "INSERT INTO t (name, n, b) VALUES (?1, ?2, ?3)",
                params!["a", 7u32, vec![1u8, 2]],
            )
            .unwrap();
            c.execute(
                "INSERT INTO t (name, n, b) VALUES (?1, ?2, ?3)",
                params![none, Some(-3i64), &[3u8][..]],
            )
            .unwrap();
            let rows = c
                .query_vec("SELECT name, n, b FROM t ORDER BY id", params![], |r| {
                    Ok((
                        r.get::<_, Option<String>>(0)?,
                        r.get::<_, i64>(1)?,
                        r.get::<_, Vec<u8>>(2)?,
                    ))
                })
                .unwrap();
            assert_eq!(
                rows,
                vec![(Some("a".to_string()), 7, vec![1, 2]), (None, -3, vec![3])]
            );
            assert!(
                c.query_row("SELECT name FROM t WHERE n = -3", params![], |r| r
                    .is_null(0))
                    .unwrap()
            );
        }
    }

    #[test]
    fn no_row_is_none_for_query_opt_and_an_error_for_query_row() {
        for c in conns() {
            let sql = "SELECT id FROM t WHERE name = ?1";
            let got: Option<i64> = c.query_opt(sql, params!["x"], |r| r.get(0)).unwrap();
            assert_eq!(got, None);
            let err = c.query_row(sql, params!["x"], |r| r.get::<_, i64>(0));
            assert!(matches!(err, Err(StoreError::NoRow(_))));
        }
    }

    #[test]
    fn a_transaction_dropped_uncommitted_rolls_back() {
        for c in conns() {
            {
                let tx = c.transaction(TxMode::Immediate).unwrap();
                tx.execute("INSERT INTO t (name) VALUES ('gone')", params![])
                    .unwrap();
            }
            let tx = c.transaction(TxMode::Deferred).unwrap();
            tx.execute("INSERT INTO t (name) VALUES ('kept')", params![])
                .unwrap();
            tx.commit().unwrap();
            let names = c
                .query_vec("SELECT name FROM t", params![], |r| r.get::<_, String>(0))
                .unwrap();
            assert_eq!(names, vec!["kept"]);
        }
    }

    #[test]
    fn a_scan_stops_at_the_callers_error() {
        for c in conns() {
            for i in 0..5 {
                c.execute("INSERT INTO t (n) VALUES (?1)", params![i as i64])
                    .unwrap();
            }
            let mut seen = 0;
            let r = c.for_each("SELECT n FROM t ORDER BY n", params![], |row| {
                seen += 1;
                match row.get::<_, i64>(0)? {
                    2 => Err(StoreError::Io("stop".into())),
                    _ => Ok(()),
                }
            });
            assert!(matches!(r, Err(StoreError::Io(_))));
            assert_eq!(seen, 3);
        }
    }

    #[test]
    fn a_failed_statement_in_a_transaction_is_never_taken_for_a_commit() {
        for c in conns() {
            let tx = c.transaction(TxMode::Deferred).unwrap();
            tx.execute("INSERT INTO t (name) VALUES ('before')", params![])
                .unwrap();
            assert!(
                tx.execute("INSERT INTO no_such_table VALUES (1)", params![])
                    .is_err()
            );
            let committed = tx.commit();
            let names = |c: &Conn| {
                c.query_vec("SELECT name FROM t", params![], |r| r.get::<_, String>(0))
                    .unwrap()
            };
            match c.dialect() {
                // PostgreSQL aborted the transaction: its COMMIT would
                // have rolled back quietly; it is an error here.
                Dialect::Postgres => {
                    assert!(matches!(committed, Err(StoreError::RolledBack)));
                    assert!(names(&c).is_empty());
                }
                // SQLite keeps the statements that worked.
                Dialect::Sqlite => {
                    committed.unwrap();
                    assert_eq!(names(&c), ["before"]);
                }
            }
            // The connection goes on.
            c.execute("INSERT INTO t (name) VALUES ('after')", params![])
                .unwrap();
            assert!(names(&c).contains(&"after".to_string()));
        }
    }

    #[test]
    fn text_with_a_nul_is_stored() {
        for c in conns() {
            c.execute("INSERT INTO t (name) VALUES (?1)", params!["a\0b"])
                .unwrap();
            let name: String = c
                .query_row("SELECT name FROM t", params![], |r| r.get(0))
                .unwrap();
            let expected = match c.dialect() {
                Dialect::Sqlite => "a\0b",
                Dialect::Postgres => "a\u{FFFD}b",
            };
            assert_eq!(name, expected);
        }
    }

    #[test]
    fn a_long_scan_is_read_in_chunks_and_may_query_as_it_goes() {
        for c in conns() {
            let tx = c.transaction(TxMode::Deferred).unwrap();
            for i in 0..2_500i64 {
                tx.execute("INSERT INTO t (n) VALUES (?1)", params![i])
                    .unwrap();
            }
            tx.commit().unwrap();
            let scan = "SELECT n FROM t ORDER BY n";
            let mut seen = Vec::new();
            c.for_each(scan, params![], |r| {
                let n: i64 = r.get(0)?;
                // A query of its own, and a scan inside the scan.
                let same: i64 =
                    c.query_row("SELECT n FROM t WHERE n = ?1", params![n], |r| r.get(0))?;
                if n == 1_500 {
                    let mut inner = 0;
                    c.for_each("SELECT n FROM t WHERE n < 3", params![], |_| {
                        inner += 1;
                        Ok::<_, StoreError>(())
                    })?;
                    assert_eq!(inner, 3);
                }
                seen.push(same);
                Ok::<_, StoreError>(())
            })
            .unwrap();
            assert_eq!(seen, (0..2_500).collect::<Vec<_>>());
            // A scan stopped by its caller inside the caller's transaction
            // frees its cursor: the same scan runs again after.
            let tx = c.transaction(TxMode::Deferred).unwrap();
            let stopped = tx.for_each(scan, params![], |_| Err(StoreError::Io("stop".into())));
            assert!(matches!(stopped, Err(StoreError::Io(_))));
            let mut again = 0;
            tx.for_each(scan, params![], |_| {
                again += 1;
                Ok::<_, StoreError>(())
            })
            .unwrap();
            assert_eq!(again, 2_500);
            tx.commit().unwrap();
        }
    }
}
