//! Writing the mirror: each retrieved resource is saved under its category
//! (`URLs/`, `Bookmarks/Work/`, one directory per interest) at the path
//! [`super::names`] gives its URL, atomically; when the run's retrieval is
//! done, the saved pages and stylesheets have their links converted
//! ([`super::convert`]), so that what the category holds is reached by a
//! relative path and everything else by its absolute URL; a page from the
//! web keeps no `file:` reference, a local file's only those under the
//! directory of the local files the run saved ([`local_root`]).

use super::convert::{Files, convert_css, convert_html};
use super::names::{Names, clean, inside};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use url::Url;

/// What a saved file is, for converting its links.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Html,
    Css,
    Other,
}

fn kind_of(content_type: Option<&str>) -> Kind {
    match content_type
        .and_then(|c| c.split(';').next())
        .map(|c| c.trim().to_ascii_lowercase())
        .as_deref()
    {
        Some("text/html" | "application/xhtml+xml") => Kind::Html,
        Some("text/css") => Kind::Css,
        _ => Kind::Other,
    }
}

/// One category's files.
#[derive(Default)]
struct Category {
    /// Mirror-relative path of each URL saved, by URL.
    saved: HashMap<String, String>,
    /// The pages and stylesheets to convert, with their URLs.
    to_convert: Vec<(Url, String, Kind)>,
}

/// What writing the mirror did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// The files written, mirror-relative, in the order saved.
    pub files: Vec<String>,
    /// Bytes written (after conversion).
    pub bytes: u64,
    /// Pages or stylesheets whose links could not be converted (kept as
    /// retrieved), with why.
    pub unconverted: Vec<(String, String)>,
}

/// The mirror of one run, being written.
pub struct MirrorWriter {
    root: PathBuf,
    /// One name space for every category, so none writes over another's.
    names: Names,
    categories: BTreeMap<String, Category>,
    files: Vec<String>,
    /// Where bodies are kept by digest, so that a file whose links are not
    /// converted (an image, a script, a font) is a hard link to its body and
    /// identical bodies are stored once across categories and runs.
    objects: Option<PathBuf>,
}

/// Where the body with SHA-256 `digest` (hex) is kept in `objects`.
pub fn object_path(objects: &Path, digest: &str) -> PathBuf {
    let (a, b) = digest.split_at(digest.len().min(2));
    objects.join(a).join(b)
}

/// Whether a body of this type is saved with its links converted (so its
/// file is written, not linked to an object).
pub fn converted(content_type: Option<&str>) -> bool {
    kind_of(content_type) != Kind::Other
}

/// Make `target` a hard link to the object of `body` (whose SHA-256 is
/// `digest`), writing the object first when the store does not hold it.
fn link_object(objects: &Path, body: &[u8], digest: &str, target: &Path) -> std::io::Result<()> {
    let object = object_path(objects, digest);
    // Objects are written without waiting for the disk: one a crash left
    // short is written again.
    if std::fs::metadata(&object).map_or(true, |m| m.len() != body.len() as u64) {
        spinneret_core::fs::write_replacing(&object, body)?;
    }
    if let Some(dir) = target.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let _ = std::fs::remove_file(target);
    std::fs::hard_link(&object, target)
}

/// The directory of a category: each of its parts (`Bookmarks`, `Work`,
/// `Rust`) made a safe name.
pub fn category_dir(parts: &[&str]) -> String {
    parts
        .iter()
        .map(|p| clean(p.trim()))
        .collect::<Vec<_>>()
        .join("/")
}

impl MirrorWriter {
    /// A mirror rooted at `root` (created as needed).
    pub fn new(root: PathBuf) -> MirrorWriter {
        MirrorWriter {
            root,
            names: Names::new(),
            categories: BTreeMap::new(),
            files: Vec::new(),
            objects: None,
        }
    }

    /// A mirror rooted at `root` whose unconverted files are hard links into
    /// the object store `objects` (copies where the file system has no hard
    /// links).
    pub fn with_objects(root: PathBuf, objects: PathBuf) -> MirrorWriter {
        MirrorWriter {
            objects: Some(objects),
            ..MirrorWriter::new(root)
        }
    }

    /// Save `body` of `url` (with `content_type`) in `category` (a
    /// [`category_dir`]); the same URL in the same category is saved once.
    /// Returns its mirror-relative path; a file that cannot be written is
    /// an error naming it, and the mirror goes on without it.
    pub fn save(
        &mut self,
        category: &str,
        url: &Url,
        content_type: Option<&str>,
        body: &[u8],
    ) -> std::io::Result<String> {
        let digest = spinneret_core::digest::sha256_hex(body);
        self.save_redirected(category, url, url, content_type, body, &digest)
    }

    /// Save the body `url` led to at `found` (after redirects): under
    /// `url`'s name, with `found` as the base of its links, and reached
    /// from links to either. `digest` is the body's SHA-256 (hex), which
    /// names its object.
    pub fn save_redirected(
        &mut self,
        category: &str,
        url: &Url,
        found: &Url,
        content_type: Option<&str>,
        body: &[u8],
        digest: &str,
    ) -> std::io::Result<String> {
        let cat = self.categories.entry(category.to_string()).or_default();
        let key = spinneret_core::urls::identity(url);
        if let Some(p) = cat.saved.get(key.as_str()) {
            return Ok(p.clone());
        }
        let within: Vec<String> = category.split('/').map(str::to_string).collect();
        let path = self
            .names
            .place_in(&within, &key, content_type)
            .to_string_lossy()
            .into_owned();
        // Names never leave the mirror; said again where files are written.
        if !inside(&path) {
            return Err(std::io::Error::other(format!(
                "{path} is no path inside the mirror; not written"
            )));
        }
        let kind = kind_of(content_type);
        let target = self.root.join(&path);
        let linked = match (&self.objects, kind) {
            (Some(objects), Kind::Other) => link_object(objects, body, digest, &target).is_ok(),
            _ => false,
        };
        if !linked {
            spinneret_core::fs::write_replacing(&target, body).map_err(|e| {
                std::io::Error::new(e.kind(), format!("cannot write {path} in the mirror: {e}"))
            })?;
        }
        let base = spinneret_core::urls::identity(found);
        if kind != Kind::Other {
            cat.to_convert.push((base.clone(), path.clone(), kind));
        }
        cat.saved.insert(key.to_string(), path.clone());
        cat.saved
            .entry(base.to_string())
            .or_insert_with(|| path.clone());
        self.files.push(path.clone());
        Ok(path)
    }

    /// The mirror-relative path `url` was saved at in `category`, if it was.
    pub fn saved(&self, category: &str, url: &Url) -> Option<&str> {
        let key = spinneret_core::urls::identity(url);
        self.categories
            .get(category)?
            .saved
            .get(key.as_str())
            .map(String::as_str)
    }

    /// Convert the links of every saved page and stylesheet, and say what
    /// was written.
    pub fn finish(self) -> std::io::Result<Written> {
        let mut written = Written {
            files: self.files,
            ..Written::default()
        };
        let local = local_root(
            self.categories
                .values()
                .flat_map(|cat| cat.saved.keys().map(String::as_str)),
        );
        let local = local.as_deref();
        // Each file is converted on its own: the work is shared among a
        // few threads (the run's fetching is over, the cores are free).
        let jobs: Vec<(&Category, &(Url, String, Kind))> = self
            .categories
            .values()
            .flat_map(|cat| cat.to_convert.iter().map(move |job| (cat, job)))
            .collect();
        let workers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, 4)
            .min(jobs.len().max(1));
        let root = &self.root;
        let outcomes: Vec<std::io::Result<Vec<(usize, String, String)>>> =
            std::thread::scope(|scope| {
                let handles: Vec<_> = (0..workers)
                    .map(|w| {
                        let jobs = &jobs;
                        scope.spawn(move || {
                            let mut unconverted = Vec::new();
                            for (i, (cat, (url, path, kind))) in
                                jobs.iter().enumerate().skip(w).step_by(workers)
                            {
                                let files = Files::of(url, local);
                                if let Some(why) = convert_file(root, cat, url, path, *kind, files)?
                                {
                                    unconverted.push((i, path.clone(), why));
                                }
                            }
                            Ok(unconverted)
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                    .collect()
            });
        let mut unconverted = Vec::new();
        for o in outcomes {
            unconverted.extend(o?);
        }
        unconverted.sort_by_key(|(i, _, _)| *i);
        written.unconverted = unconverted
            .into_iter()
            .map(|(_, p, why)| (p, why))
            .collect();
        for f in &written.files {
            written.bytes += std::fs::metadata(self.root.join(f))?.len();
        }
        Ok(written)
    }
}

/// The directory of the local files among `urls` (the `file:` URLs'
/// common directory, `/`-terminated), if any is one. The collector reads
/// no local file outside the directory of the profile's local items, so
/// this is that directory or one below it: what a local page may still
/// reference by a `file:` URL.
fn local_root<'a>(urls: impl Iterator<Item = &'a str>) -> Option<String> {
    urls.filter(|u| u.starts_with("file:"))
        .map(|u| u[..u.rfind('/').map_or(0, |i| i + 1)].to_string())
        .reduce(|a, b| {
            let common = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
            a[..a[..common].rfind('/').map_or(0, |i| i + 1)].to_string()
        })
}

/// Convert the links of the file saved at `path` (under `root`) for `url`
/// in `cat`, keeping the `file:` references `files` allows; why it was
/// left as retrieved, if it was.
fn convert_file(
    root: &Path,
    cat: &Category,
    url: &Url,
    path: &str,
    kind: Kind,
    files: Files<'_>,
) -> std::io::Result<Option<String>> {
    let saved = |u: &Url| cat.saved.get(u.as_str()).cloned();
    let file = root.join(path);
    let bytes = std::fs::read(&file)?;
    // Only UTF-8 is rewritten: another charset's text would be damaged;
    // such a file keeps its links as retrieved.
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Ok(Some("not UTF-8: its links are kept as retrieved".into()));
    };
    let converted = match kind {
        Kind::Html => convert_html(text, url, path, &saved, files),
        _ => Ok(convert_css(text, url, path, &saved, files)),
    };
    match converted {
        Ok(c) if c.as_bytes() != bytes.as_slice() => {
            spinneret_core::fs::write_replacing(&file, c.as_bytes())?;
            Ok(None)
        }
        Ok(_) => Ok(None),
        Err(e) => Ok(Some(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_category_is_written_and_its_links_converted() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = MirrorWriter::new(dir.path().join("mirror"));
        let u = |s: &str| Url::parse(s).unwrap();
        let html = Some("text/html");
        let page = r#"<link rel="stylesheet" href="/s.css"><img src="img/a.png"><a href="/b">b</a><a href="https://x.example/">x</a>"#;
        let urls = category_dir(&["URLs"]);
        let work = category_dir(&["Bookmarks", "Work / Rust"]);
        assert_eq!(work, "Bookmarks/Work___Rust");
        assert_eq!(
            m.save(&urls, &u("https://e.org/a/"), html, page.as_bytes())
                .unwrap(),
            "URLs/e.org/a/index.html"
        );
        m.save(
            &urls,
            &u("https://e.org/s.css"),
            Some("text/css"),
            b"body { background: url(bg.png) }",
        )
        .unwrap();
        m.save(&urls, &u("https://e.org/bg.png"), Some("image/png"), b"PNG")
            .unwrap();
        m.save(
            &urls,
            &u("https://e.org/a/img/a.png"),
            Some("image/png"),
            b"PNG",
        )
        .unwrap();
        // Saved again: the same file, not a second.
        assert_eq!(
            m.save(&urls, &u("https://e.org/a/#top"), html, b"other")
                .unwrap(),
            "URLs/e.org/a/index.html"
        );
        // Another category keeps its own copy and its own links.
        m.save(&work, &u("https://e.org/a/"), html, page.as_bytes())
            .unwrap();
        assert_eq!(
            m.saved(&urls, &u("https://e.org/s.css")),
            Some("URLs/e.org/s.css")
        );
        assert_eq!(m.saved(&work, &u("https://e.org/s.css")), None);
        let w = m.finish().unwrap();
        assert_eq!(
            w.files,
            [
                "URLs/e.org/a/index.html",
                "URLs/e.org/s.css",
                "URLs/e.org/bg.png",
                "URLs/e.org/a/img/a.png",
                "Bookmarks/Work___Rust/e.org/a/index.html",
            ]
        );
        let read = |p: &str| std::fs::read_to_string(dir.path().join("mirror").join(p)).unwrap();
        assert_eq!(
            read("URLs/e.org/a/index.html"),
            r#"<link rel="stylesheet" href="../s.css"><img src="img/a.png"><a href="https://e.org/b">b</a><a href="https://x.example/">x</a>"#
        );
        assert_eq!(read("URLs/e.org/s.css"), "body { background: url(bg.png) }");
        assert_eq!(
            read("Bookmarks/Work___Rust/e.org/a/index.html"),
            r#"<link rel="stylesheet" href="https://e.org/s.css"><img src="https://e.org/a/img/a.png"><a href="https://e.org/b">b</a><a href="https://x.example/">x</a>"#
        );
        let total: u64 = w.files.iter().map(|f| read(f).len() as u64).sum();
        assert_eq!(w.bytes, total);
        assert!(w.unconverted.is_empty());
    }

    #[test]
    fn categories_share_one_name_space_and_odd_files_are_kept_as_they_are() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = MirrorWriter::new(dir.path().join("mirror"));
        let u = |s: &str| Url::parse(s).unwrap();
        let html = Some("text/html");
        // A root bookmark on github.com, and a folder named like a host.
        let root = category_dir(&["Bookmarks"]);
        let folder = category_dir(&["Bookmarks", "github.com"]);
        let a = m
            .save(&root, &u("https://github.com/rust-lang.org/"), html, b"a")
            .unwrap();
        let b = m
            .save(&folder, &u("https://rust-lang.org/"), html, b"b")
            .unwrap();
        assert_eq!(a, "Bookmarks/github.com/rust-lang.org/index.html");
        assert_eq!(b, "Bookmarks/github.com/rust-lang.org/index-2.html");
        // Categories that differ only in case do not share files either.
        let c = m.save("urls", &u("https://e.org/"), html, b"c").unwrap();
        let d = m.save("URLs", &u("https://e.org/"), html, b"d").unwrap();
        assert_ne!(c.to_lowercase(), d.to_lowercase());
        // A page in another charset keeps its bytes: converting it would
        // damage its text.
        let latin1 = b"<a href=\"/x\">caf\xe9</a>";
        let p = m.save("URLs", &u("https://f.org/"), html, latin1).unwrap();
        let w = m.finish().unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("mirror").join(&p)).unwrap(),
            latin1
        );
        assert_eq!(
            w.unconverted,
            [(p, "not UTF-8: its links are kept as retrieved".to_string())]
        );
        for (f, body) in [(a, "a"), (b, "b")] {
            assert_eq!(
                std::fs::read_to_string(dir.path().join("mirror").join(f)).unwrap(),
                body
            );
        }
    }

    #[test]
    fn a_file_that_cannot_be_written_is_named() {
        let dir = tempfile::tempdir().unwrap();
        // The mirror's root is a file: nothing can be written below it.
        std::fs::write(dir.path().join("mirror"), "").unwrap();
        let mut m = MirrorWriter::new(dir.path().join("mirror"));
        let e = m
            .save(
                "URLs",
                &Url::parse("https://e.org/a.png").unwrap(),
                None,
                b"x",
            )
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("cannot write URLs/e.org/a.png in the mirror: "),
            "{e}"
        );
        assert_eq!(m.finish().unwrap(), Written::default());
    }
}
