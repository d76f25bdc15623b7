//! Retrieving a site's `/robots.txt` as the draft recommends (seed 002, 3.1):
//! 2xx is read (at most 500 KiB), 401/403 closes the site, other 4xx means no
//! restrictions, 3xx is followed up to five hops, and 5xx or a network failure
//! is temporary: the engine defers the site and tries again.

use super::{BodyWanted, FetchRequest, Fetcher, Method};
use std::time::{Duration, SystemTime};
use url::Url;

/// The most of a robots.txt read; the rest is ignored.
pub const MAX_ROBOTS_BYTES: u64 = 500 * 1024;
/// Redirect hops followed for robots.txt.
pub const MAX_ROBOTS_HOPS: usize = 5;

/// What fetching robots.txt found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RobotsFetch {
    /// A file was read (possibly cut at 500 KiB).
    Found {
        /// The text.
        body: String,
        /// The final status.
        status: u16,
        /// How long it holds, from Cache-Control or Expires.
        max_age: Option<Duration>,
    },
    /// 404, 410 or another 4xx (or too many redirects): no restrictions.
    Missing {
        /// The status.
        status: u16,
    },
    /// 401 or 403: the whole site is off limits.
    Forbidden {
        /// The status.
        status: u16,
    },
    /// Not requested: the address rule keeps the run from the site (its
    /// robots.txt included); the reason says why.
    Refused {
        /// Why.
        reason: String,
    },
    /// 5xx or a network failure: try later.
    Unavailable {
        /// What happened.
        reason: String,
        /// Whether the server could not be reached at all (rather than answering 5xx).
        unreachable: bool,
        /// Whether asking again may help (not for a host name DNS says
        /// does not exist).
        retryable: bool,
    },
}

/// The text of a robots.txt body as its rules are read: a UTF-8 byte
/// order mark dropped, or the start of one (Google's parser skips both;
/// the tokenizer took them for part of the first line, and lost it), and
/// each byte that is not part of UTF-8 text written `%XX`. A Latin-1
/// file's `Disallow: /caf\xE9` is the path `/caf%E9`, as a URL carries it
/// and as RFC 9309 compares it (2.2.2): read as a replacement character,
/// it matched no URL at all.
pub fn robots_text(bytes: &[u8]) -> String {
    let bytes = [&b"\xEF\xBB\xBF"[..], b"\xEF\xBB", b"\xEF"]
        .into_iter()
        .find_map(|bom| bytes.strip_prefix(bom))
        .unwrap_or(bytes);
    let mut text = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
        for b in chunk.invalid() {
            text.push_str(&format!("%{b:02X}"));
        }
    }
    text
}

/// How long a response may be cached, from `Cache-Control: max-age` or `Expires`.
pub fn cache_lifetime(
    cache_control: Option<&str>,
    expires: Option<&str>,
    now: SystemTime,
) -> Option<Duration> {
    if let Some(cc) = cache_control {
        for d in cc.split(',') {
            let d = d.trim().to_ascii_lowercase();
            if d == "no-store" || d == "no-cache" {
                return Some(Duration::ZERO);
            }
            if let Some(v) = d.strip_prefix("max-age=")
                && let Ok(secs) = v.trim().parse::<u64>()
            {
                return Some(Duration::from_secs(secs.min(MAX_LIFETIME)));
            }
        }
    }
    let when = httpdate::parse_http_date(expires?).ok()?;
    let left = when.duration_since(now).unwrap_or(Duration::ZERO);
    Some(left.min(Duration::from_secs(MAX_LIFETIME)))
}

/// The longest a server may make its robots.txt hold: ten years (a larger
/// `max-age` would name a date past what HTTP dates can say).
const MAX_LIFETIME: u64 = 3650 * 86_400;

/// Fetch the robots.txt at `url`, following redirects; held to the
/// address rule when `public_only` (its site was led to from elsewhere).
pub async fn fetch_robots(fetcher: &Fetcher, url: Url, public_only: bool) -> RobotsFetch {
    let site = spinneret_core::urls::site_key(&url);
    let mut url = url;
    for _ in 0..=MAX_ROBOTS_HOPS {
        // A redirect off the site is held to the address rule whatever the
        // site's standing: the site's trust is not its redirects'.
        let public_only = public_only || spinneret_core::urls::site_key(&url) != site;
        let req = FetchRequest {
            url: url.clone(),
            method: Method::Get,
            referrer: None,
            validators: None,
            body: BodyWanted::Always(MAX_ROBOTS_BYTES),
            extra_headers: Vec::new(),
            keep_headers: false,
            public_only,
        };
        let resp = match fetcher.fetch(&req, MAX_ROBOTS_BYTES).await {
            Ok(r) => r,
            Err(crate::fetch::FetchError::AddressRule(reason)) => {
                return RobotsFetch::Refused { reason };
            }
            Err(e) => {
                return RobotsFetch::Unavailable {
                    reason: e.to_string(),
                    unreachable: true,
                    retryable: e.is_retryable(),
                };
            }
        };
        match resp.status {
            200..=299 => {
                let bytes = resp.body.map(|b| b.bytes).unwrap_or_default();
                return RobotsFetch::Found {
                    body: robots_text(&bytes),
                    status: resp.status,
                    max_age: cache_lifetime(
                        resp.headers.cache_control.as_deref(),
                        resp.headers.expires.as_deref(),
                        SystemTime::now(),
                    ),
                };
            }
            300..=399 => match resp
                .headers
                .location
                .as_deref()
                .and_then(|l| url.join(l).ok())
            {
                // A remote robots.txt never leads to a local file (or to
                // any scheme but http and https).
                Some(next) if !matches!(next.scheme(), "http" | "https") => {
                    return RobotsFetch::Unavailable {
                        reason: format!(
                            "robots.txt redirected to {next}, which is never requested (not http or https)"
                        ),
                        unreachable: false,
                        retryable: false,
                    };
                }
                Some(next) => url = next,
                None => {
                    return RobotsFetch::Missing {
                        status: resp.status,
                    };
                }
            },
            401 | 403 => {
                return RobotsFetch::Forbidden {
                    status: resp.status,
                };
            }
            400..=499 => {
                return RobotsFetch::Missing {
                    status: resp.status,
                };
            }
            s => {
                return RobotsFetch::Unavailable {
                    reason: format!("robots.txt answered {s}"),
                    unreachable: false,
                    retryable: true,
                };
            }
        }
    }
    RobotsFetch::Missing { status: 310 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::robots::{RobotsMode, RobotsRules};

    /// A byte order mark, whole or cut short, is no part of the first
    /// line; a byte that is not UTF-8 is the `%XX` a URL carries.
    #[test]
    fn a_body_reads_as_its_rules_are_meant() {
        assert_eq!(robots_text(b"\xEF\xBB\xBFUser-agent: *"), "User-agent: *");
        assert_eq!(robots_text(b"\xEF\xBBUser-agent: *"), "User-agent: *");
        assert_eq!(robots_text(b"\xEFUser-agent: *"), "User-agent: *");
        assert_eq!(
            robots_text(b"Disallow: /caf\xE9/\nDisallow: /\xE3\x83\x84\n"),
            "Disallow: /caf%E9/\nDisallow: /\u{30c4}\n"
        );
        let paths = ["/x", "/caf%E9", "/caf%e9/menu", "/cafe", "/caf%C3%A9"];
        for (body, forbidden) in [
            (&b"\xEF\xBBUser-agent: *\nDisallow: /x\n"[..], vec!["/x"]),
            (
                b"User-agent: *\nDisallow: /caf\xE9\n",
                vec!["/caf%E9", "/caf%e9/menu"],
            ),
        ] {
            for mode in [RobotsMode::Both, RobotsMode::Draft, RobotsMode::Rfc9309] {
                let r = RobotsRules::parse(&robots_text(body), "spinneret", mode);
                let refused: Vec<&str> = paths
                    .into_iter()
                    .filter(|p| !r.allows(&Url::parse(&format!("http://a.test{p}")).unwrap()))
                    .collect();
                assert_eq!(refused, forbidden, "{mode:?} {body:?}");
            }
        }
    }

    #[test]
    fn lifetimes() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        assert_eq!(
            cache_lifetime(Some("public, max-age=60"), None, now),
            Some(Duration::from_secs(60))
        );
        assert_eq!(
            cache_lifetime(Some("no-cache"), None, now),
            Some(Duration::ZERO)
        );
        let later = httpdate::fmt_http_date(now + Duration::from_secs(3600));
        assert_eq!(
            cache_lifetime(None, Some(&later), now),
            Some(Duration::from_secs(3600))
        );
        assert_eq!(cache_lifetime(None, None, now), None);
        // A server cannot make a robots.txt hold past what an HTTP date says.
        assert_eq!(
            cache_lifetime(Some("max-age=300000000000"), None, now),
            Some(Duration::from_secs(MAX_LIFETIME))
        );
    }
}
