//! Where the store is (`store`, `--store`): an SQLite file, the embedded
//! default, or a PostgreSQL database (`postgres://user@host:port/db`),
//! whose password is never in the configuration: it is read, when the
//! crawl starts, from `store_password_env`'s variable or
//! `store_password_file`'s file, else from `PGPASSWORD` when that is set.

use super::Password;
use spinneret_store::StoreLocation;
use std::path::{Path, PathBuf};

/// Where the store is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreSetting {
    /// An SQLite file.
    File(PathBuf),
    /// A PostgreSQL database.
    Postgres {
        /// Its URL, as given (it holds no password).
        url: String,
        /// Where its password is, when the configuration names a place.
        password: Option<Password>,
    },
}

impl std::fmt::Display for StoreSetting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreSetting::File(path) => write!(f, "{}", path.display()),
            StoreSetting::Postgres { url, .. } => f.write_str(url),
        }
    }
}

impl StoreSetting {
    /// The store `raw` names: a PostgreSQL URL (checked now, its password
    /// read later), or a file path (made absolute by `rel`). Any other URL
    /// is refused: `postgres:` once made an SQLite file in a directory of
    /// that name.
    pub fn parse(raw: &str, rel: &dyn Fn(&str) -> PathBuf) -> Result<StoreSetting, String> {
        if StoreLocation::is_postgres_url(raw) {
            StoreLocation::postgres(raw.trim(), None)?;
            return Ok(StoreSetting::Postgres {
                url: raw.trim().to_string(),
                password: None,
            });
        }
        match super::store_location_problem(raw) {
            Some(problem) => Err(problem),
            None => Ok(StoreSetting::File(rel(raw))),
        }
    }

    /// The store's file, when it is one.
    pub fn file(&self) -> Option<&Path> {
        match self {
            StoreSetting::File(path) => Some(path),
            StoreSetting::Postgres { .. } => None,
        }
    }

    /// Open the store (made, or its schema brought up to date, if need be).
    pub fn open(&self) -> anyhow::Result<spinneret_store::Store> {
        Ok(spinneret_store::Store::open_at(
            self.location().map_err(anyhow::Error::msg)?,
        )?)
    }

    /// Where the store is, to open it: a PostgreSQL store's password is
    /// read now. The error says where the password was looked for.
    pub fn location(&self) -> Result<StoreLocation, String> {
        let (url, password) = match self {
            StoreSetting::File(path) => return Ok(StoreLocation::File(path.clone())),
            StoreSetting::Postgres { url, password } => (url, password),
        };
        let password = match password {
            Some(p) => Some(p.read("store's password", "store_password")?),
            None => std::env::var("PGPASSWORD").ok(),
        };
        StoreLocation::postgres(url, password.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(s: &str) -> PathBuf {
        Path::new("/conf").join(s)
    }

    #[test]
    fn a_store_is_a_file_or_a_postgres_url_without_a_password() {
        assert_eq!(
            StoreSetting::parse("s.db", &rel),
            Ok(StoreSetting::File(PathBuf::from("/conf/s.db")))
        );
        let pg = StoreSetting::parse("postgres://crawler@db.example:5433/spin", &rel).unwrap();
        assert_eq!(pg.file(), None);
        assert_eq!(pg.to_string(), "postgres://crawler@db.example:5433/spin");
        let err = StoreSetting::parse("postgres://crawler:secret@db.example/spin", &rel);
        assert!(
            err.unwrap_err()
                .contains("never read from the configuration")
        );
        // TLS, its certificate and the server's name always checked.
        for mode in ["require", "verify-ca", "verify-full"] {
            let url = format!("postgresql://db.example/spin?sslmode={mode}");
            assert!(StoreSetting::parse(&url, &rel).is_ok(), "{mode}");
        }
        let err = StoreSetting::parse("postgresql://db.example/spin?sslmode=sometimes", &rel);
        assert!(
            err.unwrap_err()
                .contains("is not a PostgreSQL connection URL")
        );
        let err = StoreSetting::parse("mysql://db.example/spin", &rel);
        assert!(err.unwrap_err().contains("not a `mysql://` URL"));
    }

    #[test]
    fn a_missing_password_says_where_it_was_looked_for() {
        let pg = StoreSetting::Postgres {
            url: "postgres://crawler@db.example/spin".into(),
            password: Some(Password::Env("SPINNERET_TEST_NO_SUCH_VARIABLE".into())),
        };
        assert_eq!(
            pg.location().unwrap_err(),
            "the store's password variable SPINNERET_TEST_NO_SUCH_VARIABLE is not set (store_password_env)"
        );
        let location = StoreSetting::Postgres {
            url: "postgres://crawler@db.example/spin".into(),
            password: None,
        }
        .location()
        .unwrap();
        assert_eq!(
            location.to_string(),
            "postgres://crawler@db.example:5432/spin"
        );
    }
}
