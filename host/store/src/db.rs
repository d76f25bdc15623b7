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
use rusqlite::types::{FromSql, FromSqlResult, ToSqlOutput, ValueRef};

/// A connection to the store.
pub(crate) enum Conn {
    /// The embedded SQLite file.
    Sqlite(rusqlite::Connection),
}

/// A value bound to a statement's parameter: the types the store binds.
pub(crate) trait ToDb {
    /// The value as SQLite binds it.
    fn to_sqlite(&self) -> rusqlite::Result<ToSqlOutput<'_>>;
}

/// A value read from a column: the types the store reads.
pub(crate) trait FromDb: Sized {
    /// The value from SQLite's column.
    fn from_sqlite(value: ValueRef<'_>) -> FromSqlResult<Self>;
}

macro_rules! db_types {
    ($($t:ty),* $(,)?) => {$(
        impl ToDb for $t {
            fn to_sqlite(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                rusqlite::ToSql::to_sql(self)
            }
        }
        impl FromDb for $t {
            fn from_sqlite(value: ValueRef<'_>) -> FromSqlResult<Self> {
                <$t as FromSql>::column_result(value)
            }
        }
    )*};
}
db_types!(i64, i32, u32, u16, u8, bool, f64, String, Vec<u8>);

impl ToDb for str {
    fn to_sqlite(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        rusqlite::ToSql::to_sql(self)
    }
}

impl ToDb for [u8] {
    fn to_sqlite(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        rusqlite::ToSql::to_sql(self)
    }
}

impl<T: ToDb + ?Sized> ToDb for &T {
    fn to_sqlite(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        (**self).to_sqlite()
    }
}

impl<T: ToDb> ToDb for Option<T> {
    fn to_sqlite(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        match self {
            Some(v) => v.to_sqlite(),
            None => Ok(ToSqlOutput::Owned(rusqlite::types::Value::Null)),
        }
    }
}

impl<T: FromDb> FromDb for Option<T> {
    fn from_sqlite(value: ValueRef<'_>) -> FromSqlResult<Self> {
        match value {
            ValueRef::Null => Ok(None),
            v => T::from_sqlite(v).map(Some),
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
        self.0.to_sqlite()
    }
}

/// A column as rusqlite reads it.
struct Read<T>(T);

impl<T: FromDb> FromSql for Read<T> {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        T::from_sqlite(value).map(Read)
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
}

impl Row<'_> {
    /// The value of column `i`.
    pub(crate) fn get<I: Column, T: FromDb>(&self, i: I) -> Result<T, StoreError> {
        match self {
            Row::Sqlite(r) => Ok(r.get::<_, Read<T>>(i.index())?.0),
        }
    }

    /// Whether column `i` is NULL.
    pub(crate) fn is_null<I: Column>(&self, i: I) -> Result<bool, StoreError> {
        match self {
            Row::Sqlite(r) => Ok(r.get_ref(i.index())? == ValueRef::Null),
        }
    }
}

/// How a transaction takes the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TxMode {
    /// Reads first; takes the write lock at its first write.
    Deferred,
    /// Takes the write lock at once: for a read-then-write that another
    /// writer must not interleave with.
    Immediate,
}

/// An open transaction: queries go through it (it derefs to the
/// connection); dropped without [`Tx::commit`], it rolls back.
pub(crate) struct Tx<'a> {
    conn: &'a Conn,
    inner: TxInner<'a>,
}

enum TxInner<'a> {
    Sqlite(rusqlite::Transaction<'a>),
}

impl Tx<'_> {
    /// Make its writes durable.
    pub(crate) fn commit(self) -> Result<(), StoreError> {
        match self.inner {
            TxInner::Sqlite(t) => Ok(t.commit()?),
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
        }
    }

    /// Run statements of ours, without parameters (a migration).
    pub(crate) fn execute_batch(&self, sql: &str) -> Result<(), StoreError> {
        match self {
            Conn::Sqlite(c) => Ok(c.execute_batch(sql)?),
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
            .ok_or(StoreError::Sqlite(rusqlite::Error::QueryReturnedNoRows))
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

    /// Hand every row of a query to `f`, as they are read (a scan of a
    /// million rows is never held whole); `f`'s error ends the scan.
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
        }
    }

    /// Open a transaction.
    pub(crate) fn transaction(&self, mode: TxMode) -> Result<Tx<'_>, StoreError> {
        match self {
            Conn::Sqlite(c) => {
                let behavior = match mode {
                    TxMode::Deferred => rusqlite::TransactionBehavior::Deferred,
                    TxMode::Immediate => rusqlite::TransactionBehavior::Immediate,
                };
                Ok(Tx {
                    conn: self,
                    inner: TxInner::Sqlite(rusqlite::Transaction::new_unchecked(c, behavior)?),
                })
            }
        }
    }

    /// The SQLite connection, for what only SQLite has (pragmas, its
    /// statement counters in tests).
    pub(crate) fn sqlite(&self) -> &rusqlite::Connection {
        match self {
            Conn::Sqlite(c) => c,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory() -> Conn {
        let c = Conn::Sqlite(rusqlite::Connection::open_in_memory().unwrap());
        c.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, n INTEGER, b BLOB)")
            .unwrap();
        c
    }

    #[test]
    fn values_go_in_and_come_out_as_bound() {
        let c = memory();
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

    #[test]
    fn no_row_is_none_for_query_opt_and_an_error_for_query_row() {
        let c = memory();
        let sql = "SELECT id FROM t WHERE name = ?1";
        let got: Option<i64> = c.query_opt(sql, params!["x"], |r| r.get(0)).unwrap();
        assert_eq!(got, None);
        let err = c.query_row(sql, params!["x"], |r| r.get::<_, i64>(0));
        assert!(matches!(
            err,
            Err(StoreError::Sqlite(rusqlite::Error::QueryReturnedNoRows))
        ));
    }

    #[test]
    fn a_transaction_dropped_uncommitted_rolls_back() {
        let c = memory();
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

    #[test]
    fn a_scan_stops_at_the_callers_error() {
        let c = memory();
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
