//! Where a retrieved resource goes in the mirror: a relative path derived
//! from its URL that a person can read (`example.org/docs/guide.html`),
//! that no URL can make leave the mirror, and that no two URLs share.
//!
//! Each URL becomes `HOST[_PORT]/SEGMENT/…/NAME`:
//! - segments are percent-decoded for reading, then cleaned: only letters,
//!   digits and `-_.~+,=@` stay, anything else (`/`, `\`, `:`, controls,
//!   spaces) becomes `_`; `.` and `..` become `_.` and `_..`; a name
//!   Windows reserves (`CON`, `NUL`, `COM1`, …) or ending in a dot or space
//!   gets a `_`; a name over [`MAX_NAME`] bytes is cut and given a hash of
//!   the whole, so long names stay distinct; a path over [`MAX_PATH`]
//!   bytes keeps the directories that fit and puts the rest in one
//!   directory named by their hash (`_deep-…`), so deep URLs stay
//!   distinct and within what a file system allows;
//! - a path ending in `/` is `index.html` inside it;
//! - a query string is kept distinct, after `@` (`search@q=rust.html`);
//! - the name's extension matches the content type where a browser needs
//!   it (wget's `-E`): HTML ends in `.html` or `.htm`, CSS in `.css`;
//! - names that would collide (the same path from different URLs, names
//!   that differ only in case, a file where a directory is needed or the
//!   other way round) get `-2`, `-3`, … before the extension, or `.d` for
//!   a directory, in the order URLs are placed.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use url::Url;

/// The longest file or directory name written, in bytes.
pub const MAX_NAME: usize = 120;

/// The longest path a URL is given (host, directories and name), in bytes:
/// a quarter of Linux's 4,096 for a whole path, the rest left for the
/// mirror's own place, its run and category directories.
pub const MAX_PATH: usize = 1024;

/// The paths given out so far, so that each URL keeps its path and no two
/// share one.
#[derive(Debug, Default)]
pub struct Names {
    /// Path of each URL placed (without its fragment), by its directories
    /// and URL.
    by_url: HashMap<String, String>,
    /// Files given out, lower-cased (file systems that ignore case).
    files: HashSet<String>,
    /// Directories used, lower-cased.
    dirs: HashSet<String>,
    /// A directory renamed because a file had its name: original prefix
    /// (lower-cased) to the directory used.
    renamed: HashMap<String, String>,
}

impl Names {
    /// No path given out yet.
    pub fn new() -> Names {
        Names::default()
    }

    /// The path of `url` in the mirror: the same each time for the same
    /// URL (fragments aside). `content_type` is the response's
    /// `Content-Type`, if any.
    pub fn place(&mut self, url: &Url, content_type: Option<&str>) -> PathBuf {
        self.place_in(&[], url, content_type)
    }

    /// The path of `url` under the directories `within` (a category's,
    /// each already a safe name): one name space for the whole mirror, so
    /// that no two categories' files meet, whatever their names or case.
    pub fn place_in(
        &mut self,
        within: &[String],
        url: &Url,
        content_type: Option<&str>,
    ) -> PathBuf {
        let key = spinneret_core::urls::identity(url);
        let id = format!("{}\n{}", within.join("/"), key);
        if let Some(p) = self.by_url.get(&id) {
            return PathBuf::from(p);
        }
        let (url_dirs, name) = components(&key, content_type);
        let dirs = within.iter().cloned().chain(url_dirs);
        // Each directory: as named, unless a file already has that name.
        let mut prefix = String::new();
        let mut original = String::new();
        for dir in dirs {
            original = join(&original, &dir);
            let lower = original.to_lowercase();
            prefix = match self.renamed.get(&lower) {
                Some(actual) => actual.clone(),
                None => {
                    let mut actual = join(&prefix, &dir);
                    let mut n = 1;
                    while self.files.contains(&actual.to_lowercase()) {
                        n += 1;
                        let suffix = if n == 2 {
                            ".d".to_string()
                        } else {
                            format!(".d{n}")
                        };
                        actual = join(&prefix, &format!("{dir}{suffix}"));
                    }
                    if actual.to_lowercase() != lower {
                        self.renamed.insert(lower, actual.clone());
                    }
                    actual
                }
            };
            self.dirs.insert(prefix.to_lowercase());
        }
        // The file: as named, unless its path is taken by a file or a directory.
        let (stem, ext) = split_extension(&name);
        let mut path = join(&prefix, &name);
        let mut n = 1;
        while self.files.contains(&path.to_lowercase()) || self.dirs.contains(&path.to_lowercase())
        {
            n += 1;
            path = join(&prefix, &format!("{stem}-{n}{ext}"));
        }
        self.files.insert(path.to_lowercase());
        self.by_url.insert(id, path.clone());
        PathBuf::from(path)
    }
}

/// Whether `path` (mirror-relative, `/`-separated) names a file inside the
/// mirror: not empty, not absolute, no empty, `.` or `..` part.
pub fn inside(path: &str) -> bool {
    !path.is_empty()
        && !std::path::Path::new(path).is_absolute()
        && path
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
}

/// What of the mirror's own a category's directory named `dir` (a
/// [`clean`] name) would be named like, if anything: the run's index
/// (`runs/NNNN/index.html`, beside the categories), a run's web archive
/// (`runs/NNNN.warc.gz`) or the mirror's bookkeeping (`.spinneret`).
/// Compared without case, as a file system that ignores case would.
pub fn mirror_own(dir: &str) -> Option<&'static str> {
    let lower = dir.to_lowercase();
    match lower.as_str() {
        "index.html" => Some("the run's index (runs/NNNN/index.html)"),
        ".spinneret" => Some("the mirror's bookkeeping (.spinneret)"),
        l if l.ends_with(".warc.gz") => Some("a run's web archive (runs/NNNN.warc.gz)"),
        _ => None,
    }
}

fn join(prefix: &str, name: &str) -> String {
    match prefix.is_empty() {
        true => name.to_string(),
        false => format!("{prefix}/{name}"),
    }
}

/// `name` as stem and extension (`.html`), the extension empty when there
/// is none (a leading dot does not start one).
fn split_extension(name: &str) -> (&str, &str) {
    match name.rfind('.') {
        Some(i) if i > 0 && name.len() - i <= 8 => (&name[..i], &name[i..]),
        _ => (name, ""),
    }
}

/// The directories and the file name of `url`, each cleaned.
fn components(url: &Url, content_type: Option<&str>) -> (Vec<String>, String) {
    let mut host = clean(url.host_str().filter(|h| !h.is_empty()).unwrap_or(
        if url.scheme() == "file" {
            "local-files"
        } else {
            "no-host"
        },
    ));
    if let Some(port) = url.port() {
        host = format!("{host}_{port}");
    }
    let mut dirs = vec![host];
    let segments: Vec<&str> = url
        .path_segments()
        .map(Iterator::collect)
        .unwrap_or_default();
    let (last, parents) = segments.split_last().unwrap_or((&"", &[]));
    dirs.extend(
        parents
            .iter()
            .filter(|s| !s.is_empty())
            .map(|s| clean(&decode(s))),
    );
    let mut name = match decode(last) {
        l if l.is_empty() => "index.html".to_string(),
        l => clean(&l),
    };
    if let Some(q) = url.query() {
        let (stem, ext) = split_extension(&name);
        name = format!("{stem}@{}{ext}", clean(&decode(q)));
    }
    let name = bounded_name(with_extension(name, content_type));
    let mut dirs: Vec<String> = dirs.into_iter().map(|d| bounded(d, "")).collect();
    let length = |dirs: &[String]| dirs.iter().map(|d| d.len() + 1).sum::<usize>() + name.len();
    if length(&dirs) > MAX_PATH {
        // The directories that fit, then one for the rest, named by them.
        const DEEP: usize = "_deep-".len() + 16 + 1;
        let mut kept = 0;
        while kept < dirs.len() && length(&dirs[..=kept]) + DEEP <= MAX_PATH {
            kept += 1;
        }
        let rest = dirs.split_off(kept);
        let hash = &spinneret_core::digest::sha256_hex(rest.join("/").as_bytes())[..16];
        dirs.push(format!("_deep-{hash}"));
    }
    (dirs, name)
}

fn decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

/// One name made safe: kept characters, no `.`/`..`, no reserved name.
pub fn clean(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' | '.' | '~' | '+' | ',' | '=' | '@' => c,
            c if c.is_alphanumeric() => c,
            _ => '_',
        })
        .collect();
    if out.is_empty() || out == "." || out == ".." {
        out.insert(0, '_');
    }
    if out.ends_with('.') || out.ends_with(' ') {
        out.push('_');
    }
    let base = out.split('.').next().unwrap_or("").to_ascii_uppercase();
    let reserved = matches!(base.as_str(), "CON" | "PRN" | "AUX" | "NUL")
        || (base.len() == 4
            && (base.starts_with("COM") || base.starts_with("LPT"))
            && base.as_bytes()[3].is_ascii_digit());
    if reserved {
        out.insert(0, '_');
    }
    out
}

/// `name` with the extension a browser needs for `content_type`.
fn with_extension(name: String, content_type: Option<&str>) -> String {
    let mime = content_type
        .and_then(|c| c.split(';').next())
        .map(|c| c.trim().to_ascii_lowercase());
    let lower = name.to_ascii_lowercase();
    match mime.as_deref() {
        Some("text/html" | "application/xhtml+xml")
            if !lower.ends_with(".html") && !lower.ends_with(".htm") =>
        {
            format!("{name}.html")
        }
        Some("text/css") if !lower.ends_with(".css") => format!("{name}.css"),
        _ => name,
    }
}

/// A name no longer than [`MAX_NAME`] bytes: a longer one is cut, and a
/// hash of the whole keeps it distinct; `ext` is kept.
fn bounded(name: String, ext: &str) -> String {
    if name.len() + ext.len() <= MAX_NAME {
        return format!("{name}{ext}");
    }
    let hash = &spinneret_core::digest::sha256_hex(name.as_bytes())[..16];
    let mut cut = MAX_NAME - ext.len() - hash.len() - 1;
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}-{hash}{ext}", &name[..cut])
}

fn bounded_name(name: String) -> String {
    let (stem, ext) = split_extension(&name);
    let (stem, ext) = (stem.to_string(), ext.to_string());
    match name.len() <= MAX_NAME {
        true => name,
        false => bounded(stem, &ext),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(names: &mut Names, url: &str, ct: Option<&str>) -> String {
        let p = names.place(&Url::parse(url).unwrap(), ct);
        let s = p.to_string_lossy().into_owned();
        // Whatever the URL, the path stays inside the mirror.
        assert!(p.is_relative(), "{s}");
        for c in s.split('/') {
            assert!(!c.is_empty() && c != "." && c != "..", "{url} -> {s}");
            assert!(!c.contains('\\') && c.len() <= MAX_NAME, "{url} -> {s}");
        }
        assert!(s.len() <= MAX_PATH, "{url} -> {s}");
        s
    }

    #[test]
    fn the_mirrors_own_names_are_known_whatever_their_case() {
        assert_eq!(
            mirror_own("Index.HTML"),
            Some("the run's index (runs/NNNN/index.html)")
        );
        assert_eq!(
            mirror_own(".spinneret"),
            Some("the mirror's bookkeeping (.spinneret)")
        );
        assert_eq!(
            mirror_own("0001.warc.gz"),
            Some("a run's web archive (runs/NNNN.warc.gz)")
        );
        assert_eq!(mirror_own("index.htm"), None);
        assert_eq!(mirror_own("News"), None);
    }

    #[test]
    fn inside_the_mirror() {
        assert!(inside("URLs/e.org/index.html"));
        assert!(!inside("../etc/passwd") && !inside("/etc/passwd") && !inside("a//b"));
    }

    #[test]
    fn paths_read_like_their_urls() {
        let mut n = Names::new();
        let html = Some("text/html; charset=utf-8");
        assert_eq!(
            place(&mut n, "http://example.org/", html),
            "example.org/index.html"
        );
        assert_eq!(
            place(&mut n, "http://example.org/docs/guide.html#intro", html),
            "example.org/docs/guide.html"
        );
        assert_eq!(
            place(&mut n, "http://example.org/docs/guide.html", html),
            "example.org/docs/guide.html"
        );
        assert_eq!(
            place(&mut n, "https://Example.org:8443/a/b/", html),
            "example.org_8443/a/b/index.html"
        );
        assert_eq!(
            place(&mut n, "http://example.org/about", html),
            "example.org/about.html"
        );
        assert_eq!(
            place(&mut n, "http://example.org/s/site", Some("text/css")),
            "example.org/s/site.css"
        );
        assert_eq!(
            place(
                &mut n,
                "http://example.org/img/a%20b.png",
                Some("image/png")
            ),
            "example.org/img/a_b.png"
        );
        assert_eq!(
            place(&mut n, "http://example.org/search?q=rust&page=2", html),
            "example.org/search@q=rust_page=2.html"
        );
        assert_eq!(
            place(&mut n, "http://example.org/search?q=wasm", html),
            "example.org/search@q=wasm.html"
        );
    }

    #[test]
    fn no_url_leaves_the_mirror() {
        for (url, expected) in [
            // The URL parser already takes `%2e%2e` for `..` (WHATWG URL).
            ("http://e.org/%2e%2e/%2e%2e/etc/passwd", "e.org/etc/passwd"),
            ("http://e.org/a/%2e%2e%2f%2e%2e%2fb", "e.org/a/.._.._b"),
            ("http://e.org/a/..%2F..%2Fb", "e.org/a/.._.._b"),
            ("http://e.org/%5C%5Cserver%5Cshare", "e.org/__server_share"),
            ("http://e.org/C:%5Cwindows", "e.org/C__windows"),
            ("http://e.org/%2Fetc%2Fpasswd", "e.org/_etc_passwd"),
            ("http://e.org/con", "e.org/_con"),
            ("http://e.org/lpt1.txt", "e.org/_lpt1.txt"),
            ("http://e.org/name.", "e.org/name._"),
            ("http://e.org/%00nul%0A", "e.org/_nul_"),
        ] {
            assert_eq!(place(&mut Names::new(), url, None), expected, "{url}");
        }
    }

    #[test]
    fn deep_paths_are_bounded_and_stay_distinct() {
        let mut names = Names::new();
        let deep = |leaf: &str| {
            format!(
                "https://e.org/{}{leaf}/x.html",
                "a-long-directory-name/".repeat(100)
            )
        };
        let a = place(&mut names, &deep("a"), Some("text/html"));
        let b = place(&mut names, &deep("b"), Some("text/html"));
        assert_ne!(a, b);
        assert!(
            a.starts_with("e.org/a-long-directory-name/a-long-directory-name/"),
            "{a}"
        );
        assert!(a.contains("/_deep-") && a.ends_with("/x.html"), "{a}");
        assert!(
            a.len() > MAX_PATH - MAX_NAME,
            "as much of the URL as fits: {a}"
        );
        // The same URL, the same path; a shallow one untouched.
        assert_eq!(place(&mut names, &deep("a"), Some("text/html")), a);
        assert_eq!(
            place(&mut names, "https://e.org/d/x.html", None),
            "e.org/d/x.html"
        );
    }

    #[test]
    fn long_names_are_cut_and_stay_distinct() {
        let mut n = Names::new();
        let long = "x".repeat(300);
        let a = place(&mut n, &format!("http://e.org/{long}a.png"), None);
        let b = place(&mut n, &format!("http://e.org/{long}b.png"), None);
        assert_ne!(a, b);
        assert!(a.ends_with(".png") && b.ends_with(".png"), "{a} {b}");
        let dir = place(&mut n, &format!("http://e.org/{long}/i.png"), None);
        assert!(dir.ends_with("/i.png"), "{dir}");
    }

    #[test]
    fn colliding_names_get_distinct_paths() {
        let mut n = Names::new();
        // The same cleaned name from different URLs, and names differing in case.
        assert_eq!(
            place(&mut n, "http://e.org/a%20b.png", None),
            "e.org/a_b.png"
        );
        assert_eq!(
            place(&mut n, "http://e.org/a%3Fb.png", None),
            "e.org/a_b-2.png"
        );
        assert_eq!(
            place(&mut n, "http://e.org/A_B.png", None),
            "e.org/A_B-3.png"
        );
        // A file where a directory is needed later: the directory is renamed,
        // and stays renamed for every URL below it.
        assert_eq!(
            place(&mut n, "http://e.org/data", Some("application/json")),
            "e.org/data"
        );
        assert_eq!(
            place(&mut n, "http://e.org/data/x.json", None),
            "e.org/data.d/x.json"
        );
        assert_eq!(
            place(&mut n, "http://e.org/data/y.json", None),
            "e.org/data.d/y.json"
        );
        // A directory where a file is wanted later: the file is renamed.
        assert_eq!(
            place(&mut n, "http://e.org/feed/x.xml", None),
            "e.org/feed/x.xml"
        );
        assert_eq!(
            place(&mut n, "http://e.org/feed", Some("application/rss+xml")),
            "e.org/feed-2"
        );
        // And a URL keeps its path.
        assert_eq!(
            place(&mut n, "http://e.org/a%3Fb.png", None),
            "e.org/a_b-2.png"
        );
    }
}
