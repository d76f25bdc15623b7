//! What goes wrong with a store: the one error type of the crate, and
//! which of its kinds a reconnection may cure.

/// A store that cannot be opened, read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite said no.
    #[error("store: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL said no.
    #[error("store: {}", postgres_message(.0))]
    Postgres(#[from] tokio_postgres::Error),
    /// A column held what the store cannot read as what it should be.
    #[error("store: column {column}: {message}")]
    Column {
        /// The column's index in its query.
        column: usize,
        /// What was wrong.
        message: String,
    },
    /// A statement failed inside a transaction on PostgreSQL, which then
    /// rolled it back whole: none of its writes were kept.
    #[error(
        "store: the transaction was rolled back after an error in it; none of its writes were kept"
    )]
    RolledBack,
    /// A query the store expects an answer of found none.
    #[error("store: no row answers `{0}`")]
    NoRow(String),
    /// The file system said no.
    #[error("store: {0}")]
    Io(String),
    /// The database could not be reached (refused, closed, timed out),
    /// for longer than the caller waits for it.
    #[error("store: {0}")]
    Unreachable(String),
    /// What was asked needs another kind of store.
    #[error("store: {0}")]
    Unsupported(String),
    /// The store was written by a newer spinneret.
    #[error(
        "store {store} has schema version {found}, newer than this spinneret knows ({known}); upgrade spinneret or use another store"
    )]
    TooNew {
        /// The store (its file, or its database without the password).
        store: String,
        /// Its version.
        found: i64,
        /// The newest this build knows.
        known: i64,
    },
}

impl StoreError {
    /// Whether it says the connection to the database is lost (closed by
    /// the server, refused, reset, timed out, or the server shutting down or
    /// starting up), not that the statement was wrong: what reconnecting may
    /// cure.
    pub(crate) fn is_lost(&self) -> bool {
        match self {
            StoreError::Unreachable(_) => true,
            StoreError::Postgres(e) => {
                use tokio_postgres::error::SqlState;
                if e.is_closed() {
                    return true;
                }
                if let Some(code) = e.code() {
                    return code.code().starts_with("08")
                        || [
                            SqlState::ADMIN_SHUTDOWN,
                            SqlState::CRASH_SHUTDOWN,
                            SqlState::CANNOT_CONNECT_NOW,
                        ]
                        .contains(code);
                }
                // An I/O error reading or writing the socket, or connecting.
                std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>())
                    || e.to_string() == "timeout waiting for server"
            }
            _ => false,
        }
    }
}

/// PostgreSQL's own message, when the server sent one (the client's
/// `Display` says only "db error").
fn postgres_message(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => match db.detail() {
            Some(detail) => format!("{}: {} ({detail})", db.severity(), db.message()),
            None => format!("{}: {}", db.severity(), db.message()),
        },
        None => {
            // "error connecting to server", and why.
            let mut said = e.to_string();
            let mut cause = std::error::Error::source(e);
            while let Some(c) = cause {
                said.push_str(": ");
                said.push_str(&c.to_string());
                cause = c.source();
            }
            said
        }
    }
}
