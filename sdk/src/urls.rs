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

#[cfg(test)]
mod tests {
    use super::*;

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
