//! Writing the mirror: each retrieved resource is saved under its category
//! (`URLs/`, `Bookmarks/Work/`, one directory per interest) at the path
//! [`super::names`] gives its URL, atomically; when the run's retrieval is
//! done, the saved pages and stylesheets have their links converted
//! ([`super::convert`]), so that what the category holds is reached by a
//! relative path and everything else by its absolute URL.

use super::convert::{convert_css, convert_html};
use super::names::{Names, clean};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
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
    names: Names,
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
    categories: BTreeMap<String, Category>,
    files: Vec<String>,
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
            categories: BTreeMap::new(),
            files: Vec::new(),
        }
    }

    /// Save `body` of `url` (with `content_type`) in `category` (a
    /// [`category_dir`]); the same URL in the same category is saved once.
    /// Returns its mirror-relative path.
    pub fn save(
        &mut self,
        category: &str,
        url: &Url,
        content_type: Option<&str>,
        body: &[u8],
    ) -> std::io::Result<String> {
        let cat = self.categories.entry(category.to_string()).or_default();
        let mut key = url.clone();
        key.set_fragment(None);
        if let Some(p) = cat.saved.get(key.as_str()) {
            return Ok(p.clone());
        }
        let path = format!(
            "{category}/{}",
            cat.names.place(&key, content_type).to_string_lossy()
        );
        spinneret_core::fs::write_atomically(&self.root.join(&path), body)?;
        let kind = kind_of(content_type);
        if kind != Kind::Other {
            cat.to_convert.push((key.clone(), path.clone(), kind));
        }
        cat.saved.insert(key.to_string(), path.clone());
        self.files.push(path.clone());
        Ok(path)
    }

    /// The mirror-relative path `url` was saved at in `category`, if it was.
    pub fn saved(&self, category: &str, url: &Url) -> Option<&str> {
        let mut key = url.clone();
        key.set_fragment(None);
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
        for cat in self.categories.values() {
            let saved = |u: &Url| cat.saved.get(u.as_str()).cloned();
            for (url, path, kind) in &cat.to_convert {
                let file = self.root.join(path);
                let bytes = std::fs::read(&file)?;
                let text = String::from_utf8_lossy(&bytes);
                let converted = match kind {
                    Kind::Html => convert_html(&text, url, path, &saved),
                    _ => Ok(convert_css(&text, url, path, &saved)),
                };
                match converted {
                    Ok(c) if c.as_bytes() != bytes.as_slice() => {
                        spinneret_core::fs::write_atomically(&file, c.as_bytes())?;
                    }
                    Ok(_) => {}
                    Err(e) => written.unconverted.push((path.clone(), e)),
                }
            }
        }
        for f in &written.files {
            written.bytes += std::fs::metadata(self.root.join(f))?.len();
        }
        Ok(written)
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
}
