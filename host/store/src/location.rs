//! Where a store is: an SQLite file, or a PostgreSQL database given by
//! its URL, shown (in messages and the `--store` a run suggests) without
//! its password and as it connects.

use crate::db::{self, Conn};
use crate::{StoreError, connect};
use std::path::PathBuf;

/// Where a store is.
#[derive(Clone, Debug)]
pub enum StoreLocation {
    /// An SQLite file (the embedded default).
    File(PathBuf),
    /// A PostgreSQL database: its connection settings (shown without the
    /// password).
    Postgres(Box<tokio_postgres::Config>),
}

impl std::fmt::Display for StoreLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreLocation::File(path) => write!(f, "{}", path.display()),
            StoreLocation::Postgres(config) => {
                f.write_str("postgres://")?;
                if let Some(user) = config.get_user() {
                    write!(f, "{user}@")?;
                }
                match config.get_hosts().first() {
                    Some(tokio_postgres::config::Host::Tcp(host)) => f.write_str(host)?,
                    // A socket's directory, percent-encoded as libpq reads it.
                    Some(tokio_postgres::config::Host::Unix(dir)) => {
                        let dir = dir.display().to_string();
                        f.write_str(&dir.replace('%', "%25").replace('/', "%2F"))?
                    }
                    None => f.write_str("localhost")?,
                }
                if let Some(port) = config.get_ports().first() {
                    write!(f, ":{port}")?;
                }
                if let Some(db) = config.get_dbname() {
                    write!(f, "/{db}")?;
                }
                // Shown as it connects: given back as `--store`, it
                // connects the same way.
                if config.get_ssl_mode() == tokio_postgres::config::SslMode::Require {
                    f.write_str("?sslmode=require")?;
                }
                Ok(())
            }
        }
    }
}

impl StoreLocation {
    /// A PostgreSQL store from its URL (`postgres://user@host:port/db?…`,
    /// or libpq's `key=value` form), which may not hold a password, and
    /// the password to log in with when the server asks for one. The
    /// message of an error says what is wrong with the URL.
    pub fn postgres(url: &str, password: Option<&str>) -> Result<StoreLocation, String> {
        // TLS is always verified (the certificate against the system's
        // roots and PGSSLROOTCERT's, the host name too): libpq's
        // `verify-full`, which tokio-postgres calls `require`.
        let spelled = url
            .replace("sslmode=verify-full", "sslmode=require")
            .replace("sslmode=verify-ca", "sslmode=require");
        let mut config: tokio_postgres::Config = spelled.parse().map_err(|e| {
            format!(
                "`{}` is not a PostgreSQL connection URL: {e}",
                without_password(url)
            )
        })?;
        if config.get_password().is_some() {
            return Err(
                "the store's URL holds a password, and a password is never read from the configuration or the command line: name where it is with store_password_env or store_password_file, or set PGPASSWORD"
                    .into(),
            );
        }
        if config.get_hosts().is_empty() {
            config.host("localhost");
        }
        if config.get_user().is_none() {
            let user = std::env::var("USER").unwrap_or_else(|_| "postgres".into());
            config.user(user);
        }
        if let Some(password) = password {
            config.password(password);
        }
        config.application_name("spinneret");
        // A server that stops answering is an error, not a crawl that
        // waits for ever.
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(std::time::Duration::from_secs(10));
        }
        config.keepalives_idle(std::time::Duration::from_secs(60));
        Ok(StoreLocation::Postgres(Box::new(config)))
    }

    /// Whether `store` names a PostgreSQL database rather than a file.
    pub fn is_postgres_url(store: &str) -> bool {
        let lower = store.trim_start().to_ascii_lowercase();
        lower.starts_with("postgres://") || lower.starts_with("postgresql://")
    }

    /// A new connection to the store.
    pub(crate) fn connect(&self) -> Result<Conn, StoreError> {
        match self {
            StoreLocation::File(path) => Ok(Conn::Sqlite(connect(path)?)),
            StoreLocation::Postgres(config) => Ok(Conn::Pg(db::PgConn::connect(config)?)),
        }
    }
}

/// `url` with the password of its user information (`user:password@`)
/// replaced, for a message.
fn without_password(url: &str) -> String {
    let Some(start) = url.find("://").map(|i| i + 3) else {
        return url.to_string();
    };
    let rest = &url[start..];
    let authority = &rest[..rest.find(['/', '?']).unwrap_or(rest.len())];
    match (authority.rfind('@'), authority.find(':')) {
        (Some(at), Some(colon)) if colon < at => format!(
            "{}{}:***{}",
            &url[..start],
            &authority[..colon],
            &url[start + at..]
        ),
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_store_is_shown_without_its_password_and_as_it_connects() {
        assert_eq!(
            without_password("postgres://u:secret@h/db?x=1"),
            "postgres://u:***@h/db?x=1"
        );
        assert_eq!(without_password("postgres://u@h/db"), "postgres://u@h/db");
        let err =
            StoreLocation::postgres("postgres://u:secret@h/db?sslmode=bogus", None).unwrap_err();
        assert!(!err.contains("secret"), "{err}");
        // Shown, then given back as --store, it connects the same way.
        for (given, shown) in [
            (
                "postgres://u@h:5433/db?sslmode=verify-full",
                "postgres://u@h:5433/db?sslmode=require",
            ),
            (
                "postgresql://u@%2Fvar%2Frun%2Fpostgresql/db",
                "postgres://u@%2Fvar%2Frun%2Fpostgresql:5432/db",
            ),
        ] {
            let location = StoreLocation::postgres(given, None).unwrap();
            assert_eq!(location.to_string(), shown);
            let again = StoreLocation::postgres(shown, None).unwrap();
            assert_eq!(again.to_string(), shown);
        }
    }
}
