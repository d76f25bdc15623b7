//! One crawl per store at a time: an advisory lock on a file beside the
//! store (`STORE-crawl.lock`), taken before the store is opened and held
//! until the crawl, its reports and its mail are done.
//!
//! The lock is the operating system's (`flock`), so it goes with the
//! process: a crawl killed with `kill -9` leaves no stale lock behind. The
//! file keeps the holder's process id and start time, for the message the
//! next crawl shows.
//!
//! On PostgreSQL the lock is a session advisory lock, held by a connection
//! of its own: it goes with that connection, so again with the process. The
//! connection's `application_name` says who holds it.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// A held crawl lock; dropping it releases the lock.
pub struct CrawlLock {
    _held: Held,
}

/// What holds the lock.
enum Held {
    File(#[allow(dead_code)] File),
    Postgres(#[allow(dead_code)] Box<crate::db::Conn>),
}

impl Drop for CrawlLock {
    /// A lock on PostgreSQL is let go of before its connection closes: the
    /// server ends a closed connection's session (and its locks) a moment
    /// after the client has gone, and a crawl started in that moment, right
    /// after this one finished, was refused. It waits at most 5 s for the
    /// server's answer.
    fn drop(&mut self) {
        if let Held::Postgres(conn) = &self._held
            && let crate::db::Conn::Pg(pg) = conn.as_ref()
        {
            pg.unlock_all_within(std::time::Duration::from_secs(5));
        }
    }
}

impl std::fmt::Debug for CrawlLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self._held {
            Held::File(_) => "CrawlLock(file)",
            Held::Postgres(_) => "CrawlLock(postgres)",
        })
    }
}

/// The advisory lock's key on PostgreSQL ("SPINCRWL").
const CRAWL_LOCK: i64 = 0x5350_494e_4352_574c;

/// Why a crawl may not start on a store.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds the lock.
    #[error(
        "the store {store} is in use by another crawl ({holder}); wait for it to finish, or give this crawl another store (--store)"
    )]
    Busy {
        /// The store.
        store: String,
        /// Who holds it, as the lock file says.
        holder: String,
    },
    /// The database could not be reached or locked.
    #[error("cannot lock the store {store} for a crawl: {error}")]
    Store {
        /// The store.
        store: String,
        /// What the database said.
        error: crate::StoreError,
    },
    /// The lock file could not be made or locked.
    #[error("cannot lock the store {store} for a crawl ({lock}: {error})")]
    Io {
        /// The store.
        store: PathBuf,
        /// The lock file.
        lock: PathBuf,
        /// What the file system said.
        error: std::io::Error,
    },
}

/// The lock file of `store`.
pub fn lock_path(store: &Path) -> PathBuf {
    let mut name = store.as_os_str().to_owned();
    name.push("-crawl.lock");
    PathBuf::from(name)
}

impl CrawlLock {
    /// Take the crawl lock of the store at `store`, or say who holds it.
    /// Nothing of the store itself is touched.
    pub fn acquire(store: &Path) -> Result<CrawlLock, LockError> {
        let lock = lock_path(store);
        let io = |error: std::io::Error| LockError::Io {
            store: store.to_path_buf(),
            lock: lock.clone(),
            error,
        };
        if let Some(dir) = lock.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = (&file).take(4096).read_to_string(&mut holder);
                let holder = holder.trim();
                return Err(LockError::Busy {
                    store: store.display().to_string(),
                    holder: if holder.is_empty() {
                        "a process that has not said which".into()
                    } else {
                        holder.to_string()
                    },
                });
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
        let started = jiff::Timestamp::now()
            .round(jiff::Unit::Second)
            .unwrap_or_default();
        let said = format!("process {} since {started}", std::process::id());
        file.set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| file.write_all(said.as_bytes()))
            .map_err(io)?;
        Ok(CrawlLock {
            _held: Held::File(file),
        })
    }

    /// Take the crawl lock of the store at `location`, or say who holds it.
    pub fn acquire_at(location: &crate::StoreLocation) -> Result<CrawlLock, LockError> {
        match location {
            crate::StoreLocation::File(path) => CrawlLock::acquire(path),
            crate::StoreLocation::Postgres(config) => {
                CrawlLock::acquire_pg(location, config, "crawl", false)
            }
        }
    }

    /// Take the crawl lock of the database at `location` shared, as a
    /// worker of a shared run (`spinneret worker`): any number of workers
    /// hold it together, and a `spinneret crawl` holds it alone. A store
    /// file has no workers: `LockError::Store` says so.
    pub fn acquire_shared_at(location: &crate::StoreLocation) -> Result<CrawlLock, LockError> {
        match location {
            crate::StoreLocation::File(path) => Err(LockError::Store {
                store: path.display().to_string(),
                error: crate::StoreError::Unsupported(
                    "workers share a run through a PostgreSQL store (store = \"postgres://…\"); for one process on a store file use `spinneret crawl`".into(),
                ),
            }),
            crate::StoreLocation::Postgres(config) => {
                CrawlLock::acquire_pg(location, config, "worker", true)
            }
        }
    }

    /// The lock on PostgreSQL: a session advisory lock, exclusive for a
    /// crawl and shared for a worker, named in the connection's
    /// `application_name` so that the refused are told who holds it.
    fn acquire_pg(
        location: &crate::StoreLocation,
        config: &tokio_postgres::Config,
        what: &str,
        shared: bool,
    ) -> Result<CrawlLock, LockError> {
        let store = location.to_string();
        let failed = |error| LockError::Store {
            store: store.clone(),
            error,
        };
        let started = jiff::Timestamp::now()
            .round(jiff::Unit::Second)
            .unwrap_or_default();
        let mut config = config.clone();
        let me = format!(
            "spinneret {what}, process {} on {} since {started}",
            std::process::id(),
            machine_name()
        );
        config.application_name(&me);
        let conn = crate::db::Conn::Pg(crate::db::PgConn::connect(&config).map_err(failed)?);
        let params = crate::db::params![CRAWL_LOCK];
        let locked: bool = conn
            .query_row(
                match shared {
                    true => "SELECT pg_try_advisory_lock_shared(?1)",
                    false => "SELECT pg_try_advisory_lock(?1)",
                },
                params,
                |r| r.get(0),
            )
            .map_err(failed)?;
        if !locked {
            // pg_locks splits a 64-bit key into two 32-bit halves.
            let holder: Option<String> = conn
                .query_opt(
                    "SELECT a.application_name FROM pg_locks l
                     JOIN pg_stat_activity a ON a.pid = l.pid
                     WHERE l.locktype = 'advisory' AND l.granted
                       AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                       AND l.classid::BIGINT = ?1 AND l.objid::BIGINT = ?2 AND l.objsubid = 1",
                    crate::db::params![CRAWL_LOCK >> 32, CRAWL_LOCK & 0xffff_ffff],
                    |r| r.get(0),
                )
                .map_err(failed)?;
            return Err(LockError::Busy {
                store,
                holder: holder
                    .filter(|h| !h.is_empty())
                    .unwrap_or_else(|| "a connection that has not said which".into()),
            });
        }
        Ok(CrawlLock {
            _held: Held::Postgres(Box::new(conn)),
        })
    }
}

/// This machine's name, for the lock's holder and a worker's default
/// name (the workers of a distributed crawl run on several).
pub fn machine_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "this machine".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_crawl_is_told_who_holds_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("s.db");
        let held = CrawlLock::acquire(&store).unwrap();
        let err = CrawlLock::acquire(&store).unwrap_err().to_string();
        let me = format!("process {} since ", std::process::id());
        assert!(
            err.starts_with(&format!(
                "the store {} is in use by another crawl ({me}",
                store.display()
            )),
            "{err}"
        );
        assert!(!store.exists(), "the store itself is not touched");
        drop(held);
        // The lock goes with the file. A process forked meanwhile by
        // another test of this binary (the PostgreSQL tests start a server)
        // holds a copy of the file until it executes its program, and the
        // lock with it: a moment's wait, not a lock left behind.
        let end = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            match CrawlLock::acquire(&store) {
                Ok(_) => break,
                Err(LockError::Busy { .. }) if std::time::Instant::now() < end => {
                    std::thread::sleep(std::time::Duration::from_millis(10))
                }
                Err(e) => panic!("the lock let go of is taken again: {e}"),
            }
        }
    }

    #[test]
    fn a_second_crawl_on_a_database_is_told_who_holds_it() {
        let Some(pg) = crate::testing::TestPg::shared() else {
            return;
        };
        let location = crate::StoreLocation::Postgres(Box::new(pg.database()));
        let held = CrawlLock::acquire_at(&location).unwrap();
        let err = CrawlLock::acquire_at(&location).unwrap_err().to_string();
        let me = format!("spinneret crawl, process {} on ", std::process::id());
        assert!(
            err.starts_with(&format!(
                "the store {location} is in use by another crawl ({me}"
            )),
            "{err}"
        );
        // The lock goes with its connection.
        drop(held);
        CrawlLock::acquire_at(&location).unwrap();
    }

    #[test]
    fn workers_hold_the_lock_together_and_a_crawl_alone() {
        let Some(pg) = crate::testing::TestPg::shared() else {
            return;
        };
        let location = crate::StoreLocation::Postgres(Box::new(pg.database()));
        let first = CrawlLock::acquire_shared_at(&location).unwrap();
        let second = CrawlLock::acquire_shared_at(&location).unwrap();
        let err = CrawlLock::acquire_at(&location).unwrap_err().to_string();
        let worker = format!("spinneret worker, process {} on ", std::process::id());
        assert!(err.contains(&worker), "{err}");
        drop((first, second));
        let crawl = CrawlLock::acquire_at(&location).unwrap();
        let err = CrawlLock::acquire_shared_at(&location)
            .unwrap_err()
            .to_string();
        assert!(err.contains("spinneret crawl, process"), "{err}");
        drop(crawl);
        // A store file has no workers.
        let dir = tempfile::tempdir().unwrap();
        let file = crate::StoreLocation::File(dir.path().join("s.db"));
        let err = CrawlLock::acquire_shared_at(&file).unwrap_err().to_string();
        assert!(err.contains("PostgreSQL"), "{err}");
    }
}
