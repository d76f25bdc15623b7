//! File utilities: the one way spinneret replaces a file it owns.

use std::io::Write;
use std::path::Path;

/// How the temporary files [`write_atomically`] writes are named: one left
/// by a crash can be recognised and removed.
pub const TEMP_PREFIX: &str = ".spinneret-new-";

/// Replace `path` with `text` so that a crash leaves the old file or the
/// new one, never half of either: write a temporary file beside it, flush
/// it to disk, rename it over.
pub fn write_atomically(path: &Path, text: impl AsRef<[u8]>) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    // Readable by others, as a file written in place would be: the files
    // written this way (avoid and sites files, plugin bundles) are shared.
    let mut builder = tempfile::Builder::new();
    builder.prefix(TEMP_PREFIX);
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
    let mut tmp = builder.tempfile_in(dir)?;
    tmp.write_all(text.as_ref())?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
