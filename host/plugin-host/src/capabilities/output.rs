//! The `output` capability: a reporter's output directory. Paths stay
//! inside it, writes count against a byte cap, and files are written beside
//! their targets and put in place only when the report is complete.

use super::PluginState;
use crate::bindings::reporter::spinneret::plugin::output;
use std::collections::HashMap;
use std::path::{Component as PathComponent, Path, PathBuf};

/// A reporter's output directory: whole files written atomically, and
/// files appended to as the report goes, which replace their old versions
/// only when the reporter finishes ([`OutputDir::commit`]).
#[derive(Debug)]
pub struct OutputDir {
    root: PathBuf,
    cap: u64,
    written: u64,
    /// Whether a write past the cap was refused.
    pub exceeded: bool,
    /// Files being appended to, by the plugin's path: where the new version
    /// grows, and the file open on it.
    pending: HashMap<String, (PathBuf, std::fs::File)>,
}

impl OutputDir {
    /// The directory `root` (created on first write), capped at `cap` bytes.
    pub fn new(root: PathBuf, cap: u64) -> OutputDir {
        OutputDir {
            root,
            cap,
            written: 0,
            exceeded: false,
            pending: HashMap::new(),
        }
    }

    fn resolve(&self, path: &str) -> Result<PathBuf, String> {
        let p = Path::new(path);
        let ok = !path.is_empty()
            && !path.contains('\\')
            && p.components()
                .all(|c| matches!(c, PathComponent::Normal(_)));
        if !ok {
            return Err(format!(
                "`{path}` is not a relative path inside the output directory"
            ));
        }
        Ok(self.root.join(p))
    }

    /// Count `bytes` more against the cap; past it, the call traps (not an
    /// error the plugin may ignore).
    fn spend(&mut self, bytes: usize) -> wasmtime::Result<()> {
        self.written += bytes as u64;
        if self.written > self.cap {
            self.exceeded = true;
            wasmtime::bail!("output limit of {} bytes exceeded", self.cap);
        }
        Ok(())
    }

    /// Refuse to touch a path while a new version of it is being appended to.
    fn not_pending(&self, path: &str) -> Result<(), String> {
        match self.pending.contains_key(path) {
            true => Err(format!(
                "{path} is being appended to; it cannot be written or renamed onto before the report is finished"
            )),
            false => Ok(()),
        }
    }

    /// The file a new version of `target` grows in, beside it (so that the
    /// final rename stays on one file system), hidden and named for this process.
    fn pending_path(target: &Path) -> PathBuf {
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        target.with_file_name(format!(".{name}.pending-{}", std::process::id()))
    }

    fn append(&mut self, path: &str, contents: &[u8]) -> wasmtime::Result<Result<(), String>> {
        use std::io::Write;
        let target = match self.resolve(path) {
            Ok(t) => t,
            Err(e) => return Ok(Err(e)),
        };
        self.spend(contents.len())?;
        if !self.pending.contains_key(path) {
            let tmp = Self::pending_path(&target);
            let opened = (|| {
                if let Some(dir) = tmp.parent() {
                    std::fs::create_dir_all(dir)?;
                }
                std::fs::File::options()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(&tmp)
            })();
            match opened {
                Ok(file) => {
                    self.pending.insert(path.to_string(), (tmp, file));
                }
                Err(e) => return Ok(Err(format!("cannot write {path}: {e}"))),
            }
        }
        let (_, file) = self.pending.get_mut(path).expect("inserted above");
        Ok(file
            .write_all(contents)
            .map_err(|e| format!("cannot write {path}: {e}")))
    }

    /// Add the new version of `part` to the end of the new version of
    /// `path` (started if need be) and drop `part`'s. The bytes were counted
    /// against the cap when they were appended to `part`; moving them costs
    /// nothing more.
    fn append_file(&mut self, path: &str, part: &str) -> Result<(), String> {
        use std::io::{Seek, SeekFrom};
        if path == part {
            return Err(format!("cannot append {part} to itself"));
        }
        self.resolve(part)?;
        let Some((tmp, mut from)) = self.pending.remove(part) else {
            return Err(format!("{part} has not been appended to in this report"));
        };
        let moved = (|| -> Result<(), String> {
            // An empty append starts `path`'s new version if need be.
            self.append(path, &[]).map_err(|e| e.to_string())??;
            let (_, to) = self.pending.get_mut(path).expect("started above");
            from.seek(SeekFrom::Start(0))
                .and_then(|_| std::io::copy(&mut from, to))
                .map(drop)
                .map_err(|e| format!("cannot append {part} to {path}: {e}"))
        })();
        drop(from);
        let _ = std::fs::remove_file(&tmp);
        moved
    }

    /// Put the new version of every file appended to in place of the old.
    pub fn commit(&mut self) -> Result<(), String> {
        for (path, (tmp, file)) in std::mem::take(&mut self.pending) {
            drop(file);
            let target = self.resolve(&path)?;
            std::fs::rename(&tmp, &target).map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                format!("cannot write {path}: {e}")
            })?;
        }
        Ok(())
    }
}

impl Drop for OutputDir {
    /// New versions never committed (the reporter failed) are thrown away.
    fn drop(&mut self) {
        for (_, (tmp, file)) in self.pending.drain() {
            drop(file);
            let _ = std::fs::remove_file(tmp);
        }
    }
}

impl output::Host for PluginState {
    fn write(&mut self, path: String, contents: Vec<u8>) -> wasmtime::Result<Result<(), String>> {
        let Some(out) = self.output.as_mut() else {
            return Ok(Err("this plugin has no output directory".into()));
        };
        let target = match out.resolve(&path).and_then(|t| {
            out.not_pending(&path)?;
            Ok(t)
        }) {
            Ok(t) => t,
            Err(e) => return Ok(Err(e)),
        };
        out.spend(contents.len())?;
        let result = (|| -> std::io::Result<()> {
            if let Some(dir) = target.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let tmp = target.with_extension(format!("tmp-{}", std::process::id()));
            std::fs::write(&tmp, &contents)?;
            std::fs::rename(&tmp, &target)
        })();
        Ok(result.map_err(|e| format!("cannot write {path}: {e}")))
    }

    fn append(&mut self, path: String, contents: Vec<u8>) -> wasmtime::Result<Result<(), String>> {
        match self.output.as_mut() {
            Some(out) => out.append(&path, &contents),
            None => Ok(Err("this plugin has no output directory".into())),
        }
    }

    fn append_file(&mut self, path: String, part: String) -> wasmtime::Result<Result<(), String>> {
        Ok(match self.output.as_mut() {
            Some(out) => out.append_file(&path, &part),
            None => Err("this plugin has no output directory".into()),
        })
    }

    fn exists(&mut self, path: String) -> wasmtime::Result<bool> {
        Ok(self
            .output
            .as_ref()
            .and_then(|out| out.resolve(&path).ok())
            .is_some_and(|p| p.exists()))
    }

    fn read(&mut self, path: String) -> wasmtime::Result<Option<Vec<u8>>> {
        let Some(out) = self.output.as_ref() else {
            return Ok(None);
        };
        let Ok(p) = out.resolve(&path) else {
            return Ok(None);
        };
        // A file larger than the plugin's memory could never be handed over.
        let fits = std::fs::metadata(&p).is_ok_and(|m| m.len() < self.memory.cap as u64);
        Ok(fits.then(|| std::fs::read(p).ok()).flatten())
    }

    fn rename(
        &mut self,
        source: String,
        destination: String,
    ) -> wasmtime::Result<Result<(), String>> {
        let Some(out) = self.output.as_ref() else {
            return Ok(Err("this plugin has no output directory".into()));
        };
        // Renaming a path being appended to moves its old version (e.g. to
        // keep it as the prior one); renaming onto one is refused.
        let resolved = (|| {
            out.not_pending(&destination)?;
            Ok((out.resolve(&source)?, out.resolve(&destination)?))
        })();
        let (from, to) = match resolved {
            Ok(pair) => pair,
            Err(e) => return Ok(Err(e)),
        };
        Ok(std::fs::rename(from, to)
            .map_err(|e| format!("cannot rename {source} to {destination}: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_paths_stay_inside() {
        let out = OutputDir::new(PathBuf::from("/srv/out"), 10);
        assert_eq!(
            out.resolve("index.html").unwrap(),
            PathBuf::from("/srv/out/index.html")
        );
        assert_eq!(
            out.resolve("a/b.txt").unwrap(),
            PathBuf::from("/srv/out/a/b.txt")
        );
        for bad in ["", "../x", "/etc/passwd", "a/../../x", "a\\b", "./x"] {
            assert!(out.resolve(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_part_is_appended_to_a_file_and_dropped() {
        let dir =
            std::env::temp_dir().join(format!("spinneret-append-file-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut out = OutputDir::new(dir.clone(), 1 << 20);
        out.append("index.html", b"<h1>head</h1>\n")
            .unwrap()
            .unwrap();
        out.append("documents.part", b"<p>documents</p>\n")
            .unwrap()
            .unwrap();
        out.append("index.html", b"<p>problems</p>\n")
            .unwrap()
            .unwrap();
        out.append_file("index.html", "documents.part").unwrap();
        out.append("index.html", b"</body>\n").unwrap().unwrap();
        // A part is moved once: it is gone after.
        assert_eq!(
            out.append_file("index.html", "documents.part").unwrap_err(),
            "documents.part has not been appended to in this report"
        );
        assert!(out.append_file("index.html", "index.html").is_err());
        assert!(out.append_file("index.html", "../x").is_err());
        // A part may start a file's new version.
        out.append("b.part", b"b").unwrap().unwrap();
        out.append_file("b.txt", "b.part").unwrap();
        out.commit().unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("index.html")).unwrap(),
            "<h1>head</h1>\n<p>problems</p>\n<p>documents</p>\n</body>\n"
        );
        assert_eq!(std::fs::read_to_string(dir.join("b.txt")).unwrap(), "b");
        // No part, and no pending file, is left behind.
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["b.txt", "index.html"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
