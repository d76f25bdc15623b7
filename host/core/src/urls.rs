//! URL helpers shared by every stage: normalisation, site keys and schemes.
//!
//! A *site* is MOMspider's "pairing of hostname/IP address and port": the unit
//! of politeness, of robots.txt and of the `site` task scope.

use url::Url;

/// Schemes the crawler can request itself.
pub const CHECKABLE_SCHEMES: [&str; 3] = ["http", "https", "file"];

// What a page may make a link of: the rule the SDK gives plugins' reports
// (`spinneret_sdk::html::linkable`), from the same file.
include!("../../../sdk/src/linkable.rs");

/// Normalise a URL for identity: drop the fragment (it never reaches a server),
/// and name a local directory (`file:///site/`) by the file it stands for
/// (`file:///site/index.html`), so that a tree's page is one document
/// however its links spell it.
///
/// The `url` crate already lower-cases scheme and host, removes default ports
/// and resolves dot segments, so two spellings of one resource compare equal.
pub fn normalize(mut url: Url) -> Url {
    url.set_fragment(None);
    if url.scheme() == "file" && url.path().ends_with('/') {
        let path = format!("{}index.html", url.path());
        url.set_path(&path);
    }
    url
}

/// [`normalize`] of a borrowed URL: the URL a resource is known by (the
/// key of a saved file, a queue, a seen set).
pub fn identity(url: &Url) -> Url {
    normalize(url.clone())
}

/// Parse `raw` relative to `base` and normalise it.
pub fn resolve(base: &Url, raw: &str) -> Result<Url, url::ParseError> {
    base.join(raw.trim()).map(normalize)
}

/// Whether `ip` is this machine or its local network: loopback, private
/// (RFC 1918, IPv6 unique-local), link-local (cloud metadata services live
/// there), shared (carrier-grade NAT), broadcast or unspecified; an
/// IPv4-mapped IPv6 address is judged as the IPv4 address it maps. A page
/// from elsewhere may not make spinneret reach such an address.
pub fn local_ip(ip: std::net::IpAddr) -> bool {
    match ip {
        std::net::IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || (a == 100 && (b & 0xc0) == 64)
                || a == 0
        }
        std::net::IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => local_ip(v4.into()),
            None => {
                let first = v6.segments()[0];
                v6.is_loopback()
                    || v6.is_unspecified()
                    || (first & 0xfe00) == 0xfc00
                    || (first & 0xffc0) == 0xfe80
            }
        },
    }
}

/// Whether `url` names this machine or its local network by its host:
/// `localhost` (and names under it), a [`local_ip`] address, or no host at
/// all (a `file:` URL). Names that
/// resolve there are caught when they are resolved (the fetcher's
/// public-only resolver).
pub fn local_host(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
        Some(url::Host::Ipv4(ip)) => local_ip(ip.into()),
        Some(url::Host::Ipv6(ip)) => local_ip(ip.into()),
        // A local file, or anything else without a host.
        None => true,
    }
}

/// The site key of a URL: `host:port` for the web's schemes, `file:` for
/// local files, and `scheme://host:port` for any other (a `ws:` URL on
/// the port of a web server is not that server's site: its robots.txt is
/// asked for over http, never over `ws:`).
pub fn site_key(url: &Url) -> String {
    let host = url.host_str().unwrap_or("");
    let port = url.port_or_known_default().unwrap_or(0);
    match url.scheme() {
        "file" => "file:".to_string(),
        "http" | "https" => format!("{host}:{port}"),
        other => format!("{other}://{host}:{port}"),
    }
}

/// Whether the crawler can request this URL (http, https or file).
pub fn is_checkable(url: &Url) -> bool {
    CHECKABLE_SCHEMES.contains(&url.scheme())
}

/// Why `url` is a mistyped web link, when its scheme is one letter off
/// `http` or `https` (`htps:`, `htp:`, `htttps:`, `htpts:`): such a link
/// leads nowhere in a browser, and is a broken link rather than one of a
/// scheme the crawler does not check (`mailto:`, `ftp:`, `hxxp:`).
pub fn mistyped_scheme(url: &Url) -> Option<String> {
    let scheme = url.scheme();
    if CHECKABLE_SCHEMES.contains(&scheme) || scheme == "shttp" {
        return None;
    }
    ["https", "http"]
        .into_iter()
        .find(|meant| strsim::damerau_levenshtein(scheme, meant) == 1)
        .map(|meant| format!("unknown scheme `{scheme}:`; a typo of `{meant}:`?"))
}

/// The root URL of a URL's site, e.g. `http://www.fict.org/robots.txt` for robots.
pub fn robots_url(url: &Url) -> Option<Url> {
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return None;
    }
    let mut robots = url.clone();
    robots.set_path("/robots.txt");
    robots.set_query(None);
    robots.set_fragment(None);
    Some(robots)
}

/// The directory part of a URL's path: everything up to and including the last `/`.
///
/// This is MOMspider's "level" of a document for the `tree` scope.
pub fn directory_of(url: &Url) -> &str {
    let path = url.path();
    match path.rfind('/') {
        Some(i) => &path[..=i],
        None => "/",
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_scheme_one_letter_off_the_webs_is_a_typo() {
        let typo = |u: &str| super::mistyped_scheme(&url::Url::parse(u).unwrap());
        assert_eq!(
            typo("htps://example.org/").as_deref(),
            Some("unknown scheme `htps:`; a typo of `https:`?")
        );
        assert_eq!(
            typo("htp://example.org/").as_deref(),
            Some("unknown scheme `htp:`; a typo of `http:`?")
        );
        assert!(typo("htpts://example.org/").is_some());
        assert!(typo("htttps://example.org/").is_some());
        for fine in [
            "http://example.org/",
            "https://example.org/",
            "mailto:a@example.org",
            "ftp://example.org/",
            "hxxp://example.org/",
            "tel:+1555",
            "shttp://example.org/",
        ] {
            assert_eq!(typo(fine), None, "{fine}");
        }
    }

    use super::*;

    #[test]
    fn site_keys_pair_host_and_port() {
        let u = Url::parse("http://WWW.Fict.org/a#x").unwrap();
        assert_eq!(site_key(&u), "www.fict.org:80");
        let u = Url::parse("https://a.example:8443/").unwrap();
        assert_eq!(site_key(&u), "a.example:8443");
        let u = Url::parse("file:///tmp/x.html").unwrap();
        assert_eq!(site_key(&u), "file:");
        // Another scheme on a web server's port is a site of its own.
        let ws = Url::parse("ws://127.0.0.1:8731/sock").unwrap();
        assert_eq!(site_key(&ws), "ws://127.0.0.1:8731");
        assert_ne!(
            site_key(&ws),
            site_key(&Url::parse("http://127.0.0.1:8731/").unwrap())
        );
        assert!(robots_url(&ws).is_none());
    }

    #[test]
    fn normalize_drops_fragment_and_default_port() {
        let u = normalize(Url::parse("HTTP://a.example:80/x/../y.html#top").unwrap());
        assert_eq!(u.as_str(), "http://a.example/y.html");
        // A local directory is its index.html; a web server's is its own URL.
        let dir = normalize(Url::parse("file:///srv/site/./#top").unwrap());
        assert_eq!(dir.as_str(), "file:///srv/site/index.html");
        let web = normalize(Url::parse("http://a.example/site/").unwrap());
        assert_eq!(web.as_str(), "http://a.example/site/");
    }

    #[test]
    fn directory_of_a_document() {
        let u = Url::parse("http://a.example/docs/guide/intro.html").unwrap();
        assert_eq!(directory_of(&u), "/docs/guide/");
        let u = Url::parse("http://a.example/").unwrap();
        assert_eq!(directory_of(&u), "/");
    }

    #[test]
    fn robots_url_is_at_site_root() {
        let u = Url::parse("http://a.example:8080/x/y?q=1").unwrap();
        assert_eq!(
            robots_url(&u).unwrap().as_str(),
            "http://a.example:8080/robots.txt"
        );
        assert!(robots_url(&Url::parse("file:///x").unwrap()).is_none());
    }
}
