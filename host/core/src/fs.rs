//! File utilities: the one way spinneret replaces a file it owns.

use std::io::Write;
use std::path::Path;

/// `path` made absolute (against the current directory) with its `.` and
/// `..` components resolved by name, as a shell's `cd` reads them (symbolic
/// links are not followed): `site/../other/` is `other/`. A path given on
/// the command line or in a configuration becomes the `file:` URL of the
/// file it names, not one whose `..` segments every link resolved against
/// it would drop.
pub fn absolute_normal(path: &Path) -> std::path::PathBuf {
    use std::path::Component;
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = std::path::PathBuf::new();
    for c in absolute.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// How the temporary files [`write_atomically`] writes are named: one left
/// by a crash can be recognised and removed.
pub const TEMP_PREFIX: &str = ".spinneret-new-";

/// Replace `path` with `text` so that a crash leaves the old file or the
/// new one, never half of either: write a temporary file beside it, flush
/// it to disk, rename it over.
pub fn write_atomically(path: &Path, text: impl AsRef<[u8]>) -> std::io::Result<()> {
    replace(path, text.as_ref(), true, 0o644)
}

/// [`write_atomically`], for a file of credentials (a cookie jar): readable
/// and writable by its owner only.
pub fn write_private(path: &Path, text: impl AsRef<[u8]>) -> std::io::Result<()> {
    replace(path, text.as_ref(), true, 0o600)
}

/// Replace `path` with `text` through a temporary file renamed over it, so
/// that no reader sees half of it, without waiting for the disk: for the
/// many files of a run that the run writes again if a crash loses them
/// (a mirror's pages), where one flush a file would cost more than the
/// fetching.
pub fn write_replacing(path: &Path, text: impl AsRef<[u8]>) -> std::io::Result<()> {
    replace(path, text.as_ref(), false, 0o644)
}

fn replace(path: &Path, text: &[u8], durable: bool, mode: u32) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    // Readable by others (0644), as a file written in place would be: most
    // files written this way (avoid and sites files, plugin bundles) are
    // shared; credentials are written 0600.
    let mut builder = tempfile::Builder::new();
    builder.prefix(TEMP_PREFIX);
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(mode));
    #[cfg(not(unix))]
    let _ = mode;
    let mut tmp = builder.tempfile_in(dir)?;
    tmp.write_all(text)?;
    if durable {
        tmp.as_file().sync_all()?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn a_path_is_made_absolute_with_its_dots_resolved() {
        assert_eq!(
            absolute_normal(Path::new("/srv/site/../other/./a.html")),
            PathBuf::from("/srv/other/a.html")
        );
        assert_eq!(absolute_normal(Path::new("/../x")), PathBuf::from("/x"));
        let here = std::env::current_dir().unwrap();
        assert_eq!(absolute_normal(Path::new("a/../b")), here.join("b"));
    }
}
