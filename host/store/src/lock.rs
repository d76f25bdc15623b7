//! One crawl per store at a time: an advisory lock on a file beside the
//! store (`STORE-crawl.lock`), taken before the store is opened and held
//! until the crawl, its reports and its mail are done.
//!
//! The lock is the operating system's (`flock`), so it goes with the
//! process: a crawl killed with `kill -9` leaves no stale lock behind. The
//! file keeps the holder's process id and start time, for the message the
//! next crawl shows.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// A held crawl lock; dropping it releases the lock.
#[derive(Debug)]
pub struct CrawlLock {
    _file: File,
}

/// Why a crawl may not start on a store.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds the lock.
    #[error(
        "the store {store} is in use by another crawl ({holder}); wait for it to finish, or give this crawl another store (--store FILE)"
    )]
    Busy {
        /// The store.
        store: PathBuf,
        /// Who holds it, as the lock file says.
        holder: String,
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
                    store: store.to_path_buf(),
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
        Ok(CrawlLock { _file: file })
    }
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
        CrawlLock::acquire(&store).unwrap();
    }
}
