//! URL utilities: resolving references, and the site and tree tests the
//! MOMspider task kinds use.

pub use url::Url;

/// `reference` resolved against `base`, as an absolute URL without its fragment.
pub fn join(base: &str, reference: &str) -> Option<String> {
    let mut u = Url::parse(base).ok()?.join(reference.trim()).ok()?;
    u.set_fragment(None);
    Some(u.to_string())
}

/// The host of `url`, lower-cased.
pub fn host(url: &str) -> Option<String> {
    Url::parse(url)
        .ok()?
        .host_str()
        .map(str::to_ascii_lowercase)
}

/// Whether `a` and `b` are on the same site (scheme, host and port).
pub fn same_site(a: &str, b: &str) -> bool {
    match (Url::parse(a), Url::parse(b)) {
        (Ok(a), Ok(b)) => a.origin() == b.origin(),
        _ => false,
    }
}

/// Whether `url` is at or below the directory of `top` (a `tree` task's bound).
pub fn within_tree(top: &str, url: &str) -> bool {
    let (Ok(top), Ok(u)) = (Url::parse(top), Url::parse(url)) else {
        return false;
    };
    if top.origin() != u.origin() {
        return false;
    }
    let dir = match top.path().rfind('/') {
        Some(i) => &top.path()[..=i],
        None => "/",
    };
    u.path().starts_with(dir)
}

/// The link from the file at `from` to the file at `to`, both
/// `/`-separated paths relative to one root (e.g. a mirror's): `..` for each
/// directory of `from` not shared, then `to`'s remaining segments, each
/// percent-encoded where a link needs it (spaces, `#`, `?`, `%`, quotes,
/// angle brackets, control and non-ASCII bytes).
pub fn relative_path(from: &str, to: &str) -> String {
    let from_parts: Vec<&str> = from.split('/').collect();
    let from_dirs = &from_parts[..from_parts.len().saturating_sub(1)];
    let to_parts: Vec<&str> = to.split('/').collect();
    let common = from_dirs
        .iter()
        .zip(&to_parts)
        .take_while(|(a, b)| a == b)
        .count()
        .min(to_parts.len().saturating_sub(1));
    let mut out: Vec<String> = vec!["..".into(); from_dirs.len() - common];
    out.extend(to_parts[common..].iter().map(|segment| {
        let mut s = String::with_capacity(segment.len());
        for b in segment.bytes() {
            match b {
                b' ' | b'"' | b'#' | b'%' | b'<' | b'>' | b'?' | b'`' | b'{' | b'}' => {
                    s.push_str(&format!("%{b:02X}"))
                }
                0x21..=0x7e => s.push(b as char),
                _ => s.push_str(&format!("%{b:02X}")),
            }
        }
        s
    }));
    out.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_climb_out_of_unshared_directories_and_encode() {
        assert_eq!(
            relative_path("index.html", "runs/0002/URLs/a b.html"),
            "runs/0002/URLs/a%20b.html"
        );
        assert_eq!(
            relative_path("runs/0002/index.html", "runs/0002/URLs/x.html"),
            "URLs/x.html"
        );
        assert_eq!(
            relative_path("runs/0002/index.html", "runs/0001.warc.gz"),
            "../0001.warc.gz"
        );
        assert_eq!(relative_path("a/b.html", "a/q?x#y%é"), "q%3Fx%23y%25%C3%A9");
    }

    #[test]
    fn joins_sites_and_trees() {
        assert_eq!(
            join("http://a.example/docs/x.html", "../img/p.gif#top").as_deref(),
            Some("http://a.example/img/p.gif")
        );
        assert_eq!(host("http://A.Example:8080/").as_deref(), Some("a.example"));
        assert!(same_site("http://a.example/x", "http://a.example:80/y"));
        assert!(!same_site("http://a.example/x", "https://a.example/x"));
        assert!(within_tree(
            "http://a.example/docs/index.html",
            "http://a.example/docs/sub/p.html"
        ));
        assert!(!within_tree(
            "http://a.example/docs/index.html",
            "http://a.example/other.html"
        ));
    }
}
