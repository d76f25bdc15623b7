//! A profile's runs on disk. The mirror holds each run's files under
//! `runs/NNNN/`, its WARC file beside them (`runs/NNNN.warc.gz`), and its
//! bookkeeping in `.spinneret/`: the store (each run, the files it wrote in
//! order of creation, what each URL was) and the object store, where the
//! bodies of files whose links are not converted are kept once by digest
//! and hard-linked into every run that has them. Clean-up removes a run's
//! files in reverse order of creation and the directories left empty; the
//! archive (`Archive/`) is never touched by it.

use super::names::inside;
use anyhow::Context;
use spinneret_store::{CollectionRow, Store};
use std::path::{Path, PathBuf};

/// The mirror's bookkeeping directory.
pub const STATE_DIR: &str = ".spinneret";

/// The store of the mirror at `mirror`.
pub fn store_path(mirror: &Path) -> PathBuf {
    mirror.join(STATE_DIR).join("store.sqlite")
}

/// Whether `mirror` may be written: a directory that does not exist yet,
/// is empty, or is a mirror already (it has spinneret's bookkeeping). A
/// directory of the user's own files is refused, so that a run never
/// overwrites (nor `--clean` removes) a file spinneret did not write.
pub fn check_mirror(mirror: &Path) -> Result<(), String> {
    if mirror.join(STATE_DIR).is_dir() {
        return Ok(());
    }
    match std::fs::read_dir(mirror) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!(
            "the mirror {} cannot be read: {e}",
            mirror.display()
        )),
        Ok(mut entries) => match entries.next() {
            None => Ok(()),
            Some(_) => Err(format!(
                "the mirror {} holds files that are not a mirror's (no {STATE_DIR} in it); give `mirror` a new or empty directory, so that no file of yours is overwritten",
                mirror.display()
            )),
        },
    }
}

/// What a profile's runs are booked under in the store: its file's
/// canonical path, so that `news.toml`, `./news.toml` and its absolute
/// path are one profile with one history.
pub fn profile_key(profile: &crate::profile::Profile) -> String {
    let source = &profile.source;
    std::fs::canonicalize(source)
        .or_else(|_| std::path::absolute(source))
        .unwrap_or_else(|_| source.clone())
        .to_string_lossy()
        .into_owned()
}

/// The object store of the mirror at `mirror`.
pub fn objects_dir(mirror: &Path) -> PathBuf {
    mirror.join(STATE_DIR).join("objects")
}

/// Remove `paths` (mirror-relative) in the order given, and each directory
/// they leave empty, up to the mirror itself; a path already gone is
/// skipped. How many files were removed.
pub fn remove_files<'a>(
    mirror: &Path,
    paths: impl Iterator<Item = &'a str>,
) -> std::io::Result<usize> {
    let mut removed = 0;
    for path in paths {
        if !inside(path) {
            continue;
        }
        let file = mirror.join(path);
        match std::fs::remove_file(&file) {
            Ok(()) => removed += 1,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(std::io::Error::new(
                    e.kind(),
                    format!("cannot remove {}: {e}", file.display()),
                ));
            }
        }
        let mut dir = file.parent();
        while let Some(d) = dir {
            if d == mirror || !d.starts_with(mirror) || std::fs::remove_dir(d).is_err() {
                break;
            }
            dir = d.parent();
        }
    }
    Ok(removed)
}

/// Remove the files collection `c` wrote, newest first, and book it
/// cleaned. How many files were removed.
pub fn remove_collection(store: &Store, mirror: &Path, c: &CollectionRow) -> anyhow::Result<usize> {
    let removed = remove_all_but_warc(store, mirror, c)?;
    let removed = removed + remove_files(mirror, std::iter::once(warc_path(c).as_str()))?;
    end_removal(store, mirror, c)?;
    Ok(removed)
}

/// The WARC file of collection `c`, mirror-relative.
pub fn warc_path(c: &CollectionRow) -> String {
    format!("{}.warc.gz", c.dir)
}

/// Remove the files collection `c` wrote, newest first, but its WARC file:
/// the first half of [`remove_collection`], for a run that goes while the
/// next one may still take records from its WARC file. How many files were
/// removed. [`remove_collection`] removes the rest.
pub fn remove_all_but_warc(
    store: &Store,
    mirror: &Path,
    c: &CollectionRow,
) -> anyhow::Result<usize> {
    let warc = warc_path(c);
    let files = store.collection_files(c.id)?;
    Ok(remove_files(
        mirror,
        files
            .iter()
            .rev()
            .map(|f| f.path.as_str())
            .filter(|p| *p != warc),
    )?)
}

/// Book collection `c` cleaned, its directory removed when empty.
fn end_removal(store: &Store, mirror: &Path, c: &CollectionRow) -> anyhow::Result<()> {
    // The run's directory itself, when nothing of it is left.
    let _ = std::fs::remove_dir(mirror.join(&c.dir));
    let _ = std::fs::remove_dir(mirror.join("runs"));
    store.end_collection(c.id, "cleaned", spinneret_core::model::unix_now())?;
    Ok(())
}

/// Remove the objects no kept run holds. How many were removed.
pub fn collect_garbage(store: &Store, mirror: &Path) -> anyhow::Result<usize> {
    let live = store.live_digests()?;
    let objects = objects_dir(mirror);
    let mut removed = 0;
    let Ok(dirs) = std::fs::read_dir(&objects) else {
        return Ok(0);
    };
    for dir in dirs.flatten() {
        let prefix = dir.file_name().to_string_lossy().into_owned();
        let Ok(files) = std::fs::read_dir(dir.path()) else {
            continue;
        };
        for f in files.flatten() {
            let digest = format!("{prefix}{}", f.file_name().to_string_lossy());
            if !live.contains(&digest) {
                std::fs::remove_file(f.path())
                    .with_context(|| format!("cannot remove {}", f.path().display()))?;
                removed += 1;
            }
        }
        let _ = std::fs::remove_dir(dir.path());
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mirror_is_new_empty_or_a_mirror_already() {
        let dir = tempfile::tempdir().unwrap();
        let m = dir.path().join("m");
        assert_eq!(check_mirror(&m), Ok(()));
        std::fs::create_dir(&m).unwrap();
        assert_eq!(check_mirror(&m), Ok(()));
        std::fs::write(m.join("index.html"), "mine").unwrap();
        assert!(
            check_mirror(&m)
                .unwrap_err()
                .contains("holds files that are not a mirror's")
        );
        std::fs::create_dir(m.join(STATE_DIR)).unwrap();
        assert_eq!(check_mirror(&m), Ok(()));
    }

    #[test]
    fn removing_files_removes_the_directories_they_leave_empty() {
        let dir = tempfile::tempdir().unwrap();
        let m = dir.path();
        for f in [
            "runs/0001/URLs/e.org/a.html",
            "runs/0001/URLs/e.org/b/c.png",
            "Archive/x.html",
        ] {
            std::fs::create_dir_all(m.join(f).parent().unwrap()).unwrap();
            std::fs::write(m.join(f), "x").unwrap();
        }
        let n = remove_files(
            m,
            [
                "runs/0001/URLs/e.org/b/c.png",
                "runs/0001/URLs/e.org/a.html",
                "runs/0001/gone",
                "../escape",
            ]
            .into_iter(),
        )
        .unwrap();
        assert_eq!(n, 2);
        assert!(!m.join("runs").exists());
        assert!(m.join("Archive/x.html").exists());
    }
}
