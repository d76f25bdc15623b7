//! A cookie jar in the Netscape format that curl (`-b`/`-c`), wget
//! (`--load-cookies`/`--save-cookies`) and lychee (`--cookie-jar`) read and
//! write: read before a run, sent with the crawl's requests by the rules of
//! RFC 6265 (domain, path, `Secure`, expiry), and written back after it with
//! the cookies the sites set.
//!
//! Each line: domain, whether subdomains match (`TRUE`/`FALSE`), path,
//! whether the cookie is secure, expiry (Unix seconds, 0 for the end of the
//! session), name and value, separated by tabs. `#HttpOnly_` before the
//! domain marks an HttpOnly cookie; other `#` lines are comments.

use cookie_store::{CookieDomain, CookieExpiration, CookieStore, RawCookie};
use reqwest_cookie_store::CookieStoreMutex;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use url::Url;

/// The most bytes of a cookie file read: a jar is the user's file, but a
/// huge one is a mistake, not a jar.
const MAX_JAR_BYTES: u64 = 16 << 20;

/// The first line of a jar this module writes (curl's and wget's).
const HEADER: &str =
    "# Netscape HTTP Cookie File\n# Written by spinneret; curl, wget and lychee read it.\n";

/// A cookie jar: its file and the cookies in it, shared with the HTTP client.
#[derive(Clone)]
pub struct CookieJar {
    path: PathBuf,
    store: Arc<CookieStoreMutex>,
    /// The hosts whose cookies are kept.
    keep_from: Arc<[String]>,
}

/// The jar as the HTTP client sees it: it sends the jar's cookies where
/// they belong, and keeps only the cookies of the jar's hosts.
pub struct JarProvider {
    store: Arc<CookieStoreMutex>,
    keep_from: Arc<[String]>,
}

impl reqwest::cookie::CookieStore for JarProvider {
    fn set_cookies(
        &self,
        cookie_headers: &mut dyn Iterator<Item = &reqwest::header::HeaderValue>,
        url: &Url,
    ) {
        let host = url.host_str().unwrap_or("");
        if self.keep_from.iter().any(|h| h.eq_ignore_ascii_case(host)) {
            self.store.set_cookies(cookie_headers, url);
        }
    }

    fn cookies(&self, url: &Url) -> Option<reqwest::header::HeaderValue> {
        self.store.cookies(url)
    }
}

// Never the cookies' values, in a log or an error.
impl std::fmt::Debug for CookieJar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CookieJar")
            .field("path", &self.path)
            .finish()
    }
}

impl CookieJar {
    /// The jar at `path`: its cookies read if the file exists (a missing
    /// file is an empty jar, written at the end). The error names the file
    /// and the line that cannot be read.
    pub fn open(path: &Path) -> Result<CookieJar, String> {
        let mut store = CookieStore::new();
        let cannot =
            |e: std::io::Error| format!("{}: cannot read the cookie jar: {e}", path.display());
        let bytes = match std::fs::File::open(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(cannot(e)),
            Ok(f) => {
                // Bounded whatever the file is (a FIFO says nothing of its size).
                let mut bytes = Vec::new();
                std::io::Read::read_to_end(
                    &mut std::io::Read::take(f, MAX_JAR_BYTES + 1),
                    &mut bytes,
                )
                .map_err(cannot)?;
                bytes
            }
        };
        if bytes.len() as u64 > MAX_JAR_BYTES {
            return Err(format!(
                "{}: the cookie jar is more than the {MAX_JAR_BYTES} bytes read",
                path.display()
            ));
        }
        let text = String::from_utf8(bytes)
            .map_err(|_| format!("{}: the cookie jar is not UTF-8 text", path.display()))?;
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        for (i, line) in text.lines().enumerate() {
            read_line(&mut store, line)
                .map_err(|why| format!("{}:{}: {why}", path.display(), i + 1))?;
        }
        Ok(CookieJar {
            path: path.to_path_buf(),
            store: Arc::new(CookieStoreMutex::new(store)),
            keep_from: Arc::from([]),
        })
    }

    /// Keep the cookies that these hosts set (the tasks' tops' hosts), and
    /// no other site's: a crawl's requests reach many sites, whose cookies
    /// (trackers, or a `Domain=com`) must not fill the user's jar or go to
    /// other sites.
    pub fn keep_from<'a>(&mut self, tops: impl Iterator<Item = &'a Url>) {
        let mut hosts: Vec<String> = tops
            .filter_map(|u| u.host_str().map(str::to_ascii_lowercase))
            .collect();
        hosts.sort();
        hosts.dedup();
        self.keep_from = hosts.into();
    }

    /// What the HTTP client sends from and keeps into.
    pub fn provider(&self) -> Arc<JarProvider> {
        Arc::new(JarProvider {
            store: self.store.clone(),
            keep_from: self.keep_from.clone(),
        })
    }

    /// The jar's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The unexpired cookies in the Netscape format, sorted by domain,
    /// path and name so that the file changes only when the cookies do.
    pub fn to_text(&self) -> String {
        let store = self.store.lock().unwrap_or_else(|p| p.into_inner());
        let mut lines: Vec<String> = store
            .iter_unexpired()
            // A field with a tab or another control character would break
            // the line (a site may set one): such a cookie is not kept.
            .filter(|c| {
                let path: &str = &c.path;
                ![c.name(), c.value(), path]
                    .iter()
                    .any(|f| f.chars().any(char::is_control))
            })
            .filter_map(|c| {
                let (domain, subdomains) = match &c.domain {
                    CookieDomain::HostOnly(d) => (d.clone(), "FALSE"),
                    CookieDomain::Suffix(d) => (format!(".{d}"), "TRUE"),
                    CookieDomain::NotPresent | CookieDomain::Empty => return None,
                };
                let expires = match c.expires {
                    CookieExpiration::AtUtc(t) => t.unix_timestamp().max(1),
                    CookieExpiration::SessionEnd => 0,
                };
                let http_only = if c.http_only().unwrap_or(false) {
                    "#HttpOnly_"
                } else {
                    ""
                };
                let secure = if c.secure().unwrap_or(false) {
                    "TRUE"
                } else {
                    "FALSE"
                };
                Some(format!(
                    "{http_only}{domain}\t{subdomains}\t{}\t{secure}\t{expires}\t{}\t{}",
                    &*c.path,
                    c.name(),
                    c.value()
                ))
            })
            .collect();
        lines.sort();
        let mut text = HEADER.to_string();
        for l in lines {
            text.push_str(&l);
            text.push('\n');
        }
        text
    }

    /// Write the jar back to its file (through a temporary file flushed to
    /// disk, so a crash leaves the old jar or the new one), readable by its
    /// owner only: cookies are credentials.
    pub fn save(&self) -> std::io::Result<()> {
        spinneret_core::fs::write_private(&self.path, self.to_text())
    }
}

/// Put the cookie of one line of a jar into `store`; comments, blank lines
/// and expired cookies are skipped.
fn read_line(store: &mut CookieStore, line: &str) -> Result<(), String> {
    let line = line.trim_end_matches('\r');
    let (line, http_only) = match line.strip_prefix("#HttpOnly_") {
        Some(rest) => (rest, true),
        None => (line, false),
    };
    if line.trim().is_empty() || line.starts_with('#') {
        return Ok(());
    }
    let fields: Vec<&str> = line.split('\t').collect();
    let [domain, subdomains, path, secure, expires, name, rest @ ..] = fields.as_slice() else {
        return Err(format!(
            "not a cookie line: it has {} tab-separated fields, not 7 (domain, subdomains, path, secure, expiry, name, value; the value may be left out)",
            fields.len()
        ));
    };
    let value = rest.first().copied().unwrap_or("");
    let flag = |f: &str, what: &str| match f.to_ascii_uppercase().as_str() {
        "TRUE" => Ok(true),
        "FALSE" => Ok(false),
        _ => Err(format!("`{f}` is not TRUE or FALSE ({what})")),
    };
    let subdomains = flag(subdomains, "whether subdomains match")?;
    let secure = flag(secure, "secure")?;
    let expires: i64 = expires
        .trim()
        .parse()
        .map_err(|_| format!("`{expires}` is not an expiry in Unix seconds"))?;
    let host = domain.trim().trim_start_matches('.').to_ascii_lowercase();
    if host.is_empty() {
        return Err("a cookie line without a domain".into());
    }
    let scheme = if secure { "https" } else { "http" };
    let path = if path.starts_with('/') { *path } else { "/" };
    let url = Url::parse(&format!("{scheme}://{host}{path}"))
        .map_err(|e| format!("`{domain}` is not a domain ({e})"))?;
    let mut cookie = RawCookie::new(name.to_string(), value.to_string());
    if subdomains {
        cookie.set_domain(host.clone());
    }
    cookie.set_path(path.to_string());
    cookie.set_secure(secure);
    cookie.set_http_only(http_only);
    if expires > 0 {
        let Ok(at) = time::OffsetDateTime::from_unix_timestamp(expires) else {
            return Err(format!("`{expires}` is not an expiry in Unix seconds"));
        };
        if at <= time::OffsetDateTime::now_utc() {
            return Ok(());
        }
        cookie.set_expires(at);
    }
    store
        .insert_raw(&cookie, &url)
        .map(|_| ())
        .map_err(|e| format!("the cookie `{name}` cannot be kept ({e})"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::cookie::CookieStore as _;

    const FAR: i64 = 4_102_444_800; // 2100-01-01

    fn jar(text: &str) -> Result<(tempfile::TempDir, CookieJar), String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cookies.txt");
        std::fs::write(&path, text).unwrap();
        let jar = CookieJar::open(&path)?;
        Ok((dir, jar))
    }

    fn sent(jar: &CookieJar, url: &str) -> Option<String> {
        jar.provider()
            .cookies(&Url::parse(url).unwrap())
            .map(|v| v.to_str().unwrap().to_string())
    }

    #[test]
    fn a_curl_jar_is_read_and_its_cookies_go_where_they_belong() {
        let text = format!(
            "# Netscape HTTP Cookie File\n\n\
             .a.example\tTRUE\t/\tFALSE\t{FAR}\tsession\tabc\n\
             b.example\tFALSE\t/docs/\tFALSE\t0\tdocs\t1\n\
             #HttpOnly_c.example\tFALSE\t/\tTRUE\t{FAR}\tsecret\ts3\n\
             a.example\tFALSE\t/\tFALSE\t1000\told\tgone\n"
        );
        let (_dir, jar) = jar(&text).unwrap();
        assert_eq!(
            sent(&jar, "http://www.a.example/x").as_deref(),
            Some("session=abc")
        );
        assert_eq!(
            sent(&jar, "http://b.example/docs/p").as_deref(),
            Some("docs=1")
        );
        assert_eq!(sent(&jar, "http://b.example/other"), None);
        assert_eq!(sent(&jar, "http://sub.b.example/docs/p"), None, "host only");
        assert_eq!(sent(&jar, "http://c.example/"), None, "secure: https only");
        assert_eq!(
            sent(&jar, "https://c.example/").as_deref(),
            Some("secret=s3")
        );
        assert_eq!(
            sent(&jar, "http://a.example/").as_deref(),
            Some("session=abc"),
            "the expired one is gone"
        );
        // Written back as it was read (the expired cookie dropped), sorted.
        assert_eq!(
            jar.to_text(),
            format!(
                "{HEADER}#HttpOnly_c.example\tFALSE\t/\tTRUE\t{FAR}\tsecret\ts3\n\
                 .a.example\tTRUE\t/\tFALSE\t{FAR}\tsession\tabc\n\
                 b.example\tFALSE\t/docs/\tFALSE\t0\tdocs\t1\n"
            )
        );
    }

    #[test]
    fn a_bad_line_is_named() {
        let e = jar("a.example\tTRUE\t/\n").unwrap_err();
        assert!(e.ends_with("cookies.txt:1: not a cookie line: it has 3 tab-separated fields, not 7 (domain, subdomains, path, secure, expiry, name, value; the value may be left out)"), "{e}");
        let e = jar("\na.example\tYES\t/\tFALSE\t0\tn\tv\n").unwrap_err();
        assert!(
            e.ends_with(":2: `YES` is not TRUE or FALSE (whether subdomains match)"),
            "{e}"
        );
        let e = jar("a.example\tTRUE\t/\tFALSE\tsoon\tn\tv\n").unwrap_err();
        assert!(
            e.ends_with(":1: `soon` is not an expiry in Unix seconds"),
            "{e}"
        );
    }

    #[test]
    fn a_missing_jar_is_empty_and_is_written_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.txt");
        let mut jar = CookieJar::open(&path).unwrap();
        let top = Url::parse("http://a.example/").unwrap();
        jar.keep_from(std::iter::once(&top));
        let provider = jar.provider();
        let set = |header: &'static str, url: &str| {
            let value = reqwest::header::HeaderValue::from_static(header);
            provider.set_cookies(&mut std::iter::once(&value), &Url::parse(url).unwrap());
        };
        set("k=v; Path=/; Max-Age=3600", "http://a.example/p");
        // Another site's cookies, and a field that would break the line, are not kept.
        set("t=1; Path=/; Max-Age=3600", "http://tracker.example/");
        set("x=1; Path=/\tY; Max-Age=3600", "http://a.example/");
        jar.save().unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text.lines().filter(|l| !l.starts_with('#')).count(),
            1,
            "{text}"
        );
        let line = text.lines().last().unwrap();
        assert!(line.starts_with("a.example\tFALSE\t/\tFALSE\t"), "{text}");
        assert!(line.ends_with("\tk\tv"), "{text}");
        assert_eq!(
            sent(&CookieJar::open(&path).unwrap(), "http://a.example/").as_deref(),
            Some("k=v")
        );
    }
}
