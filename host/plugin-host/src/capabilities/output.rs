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
    /// The first write the file system refused (a full disk, a read-only
    /// directory): the report cannot be whole, whatever the plugin does
    /// with the error it was handed.
    pub unwritten: Option<String>,
    /// Files being appended to, by the plugin's path: where the new version
    /// grows, and the file open on it.
    pending: HashMap<String, (PathBuf, std::fs::File)>,
    /// The whole files written in this report, removed again if it is
    /// never finished (a failed reporter's output is no report).
    made: Vec<PathBuf>,
    /// Whether the report was finished ([`OutputDir::commit`]).
    committed: bool,
}

impl OutputDir {
    /// The directory `root` (created on first write), capped at `cap`
    /// bytes. What a report of another process left there unfinished (it
    /// was killed) is removed first: see [`sweep`].
    pub fn new(root: PathBuf, cap: u64) -> OutputDir {
        sweep(&root);
        OutputDir {
            root,
            cap,
            written: 0,
            exceeded: false,
            unwritten: None,
            pending: HashMap::new(),
            made: Vec::new(),
            committed: false,
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

    /// `r` with its error said as `what` (e.g. "cannot write index.html");
    /// an error of the file system itself (full, read-only, over quota,
    /// not permitted, failing) is noted as the report's
    /// [`OutputDir::unwritten`].
    fn io<T>(&mut self, r: std::io::Result<T>, what: &str) -> Result<T, String> {
        use std::io::ErrorKind as K;
        r.map_err(|e| {
            let said = format!("{what}: {e}");
            let of_the_disk = matches!(
                e.kind(),
                K::StorageFull
                    | K::QuotaExceeded
                    | K::ReadOnlyFilesystem
                    | K::PermissionDenied
                    | K::FileTooLarge
            ) || e.raw_os_error() == Some(5); // EIO
            if of_the_disk && self.unwritten.is_none() {
                self.unwritten = Some(said.clone());
            }
            said
        })
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
                Err(e) => return Ok(self.io(Err(e), &format!("cannot write {path}"))),
            }
        }
        let (_, file) = self.pending.get_mut(path).expect("inserted above");
        let wrote = file.write_all(contents);
        Ok(self.io(wrote, &format!("cannot write {path}")))
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
            let copied = from
                .seek(SeekFrom::Start(0))
                .and_then(|_| std::io::copy(&mut from, to))
                .map(drop);
            self.io(copied, &format!("cannot append {part} to {path}"))
        })();
        drop(from);
        let _ = std::fs::remove_file(&tmp);
        moved
    }

    /// Put the new version of every file appended to in place of the
    /// old; refused, with nothing put in place, when a write was refused
    /// earlier (the report would be a part of one).
    pub fn commit(&mut self) -> Result<(), String> {
        if let Some(e) = &self.unwritten {
            return Err(e.clone());
        }
        self.committed = true;
        for (path, (tmp, file)) in std::mem::take(&mut self.pending) {
            drop(file);
            let target = self.resolve(&path)?;
            let put = std::fs::rename(&tmp, &target);
            if put.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            self.io(put, &format!("cannot write {path}"))?;
        }
        Ok(())
    }
}

impl Drop for OutputDir {
    /// New versions never committed (the reporter failed) are thrown
    /// away, and so are the whole files it wrote.
    fn drop(&mut self) {
        for (_, (tmp, file)) in self.pending.drain() {
            drop(file);
            let _ = std::fs::remove_file(tmp);
        }
        if !self.committed {
            for f in self.made.drain(..) {
                let _ = std::fs::remove_file(f);
            }
        }
    }
}

/// How deep [`sweep`] looks below an output directory, and how many
/// entries it reads at most.
const SWEEP_DEPTH: usize = 8;
const SWEEP_ENTRIES: usize = 100_000;

/// Whether the process `pid` is running (on a system without `/proc`,
/// taken to be, so that nothing of it is removed).
fn alive(pid: &str) -> bool {
    let proc = Path::new("/proc");
    !proc.is_dir() || proc.join(pid).exists()
}

/// Remove what reports of other processes left in `root` unfinished: the
/// new versions of appended files (`.NAME.pending-PID`) and the files a
/// whole write had not yet put in place (`NAME.tmp-PID`), for every PID
/// of a process no longer running (a killed run's; a live one, a second
/// run or `plugin run` writing there, keeps its own). Symbolic links are
/// not followed.
pub fn sweep(root: &Path) {
    let me = std::process::id().to_string();
    let leftover = |name: &str| {
        let pid = match name.strip_prefix('.') {
            Some(hidden) => hidden.rsplit_once(".pending-").map(|(_, pid)| pid),
            None => None,
        }
        .or_else(|| name.rsplit_once(".tmp-").map(|(_, pid)| pid));
        pid.is_some_and(|p| {
            !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) && p != me && !alive(p)
        })
    };
    let mut dirs = vec![(root.to_path_buf(), 0usize)];
    let mut seen = 0usize;
    while let Some((dir, depth)) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > SWEEP_ENTRIES {
                return;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            if kind.is_dir() && depth < SWEEP_DEPTH {
                dirs.push((entry.path(), depth + 1));
            } else if kind.is_file() && leftover(&name.to_string_lossy()) {
                let _ = std::fs::remove_file(entry.path());
            }
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
        let tmp = target.with_extension(format!("tmp-{}", std::process::id()));
        let result = (|| -> std::io::Result<()> {
            if let Some(dir) = target.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(&tmp, &contents)?;
            std::fs::rename(&tmp, &target)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        } else if !out.made.contains(&target) {
            out.made.push(target);
        }
        Ok(out.io(result, &format!("cannot write {path}")))
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
        let renamed = std::fs::rename(from, to);
        let out = self.output.as_mut().expect("checked above");
        Ok(out.io(renamed, &format!("cannot rename {source} to {destination}")))
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
