//! The work done for one request away from the engine: the fetch itself and,
//! for an HTML body, hashing and parsing it. Large bodies are parsed on the
//! blocking pool so that the async reactor keeps fetching.

use super::sites::Job;
use crate::fetch::robots::{RobotsFetch, fetch_robots};
use crate::fetch::{FetchError, FetchRequest, FetchResponse, Fetcher};
use crate::parse::{ParsedDocument, is_html, parse_html};
use sha2::{Digest, Sha256};
use url::Url;

/// Bodies larger than this are parsed on the blocking pool.
const INLINE_PARSE_LIMIT: usize = 256 * 1024;

/// A finished request, back to the engine.
#[derive(Debug)]
pub enum Completion {
    /// A request for a URL (or one hop of it).
    Fetch {
        /// The site it was made to.
        site: u32,
        /// The job, as it left.
        job: Box<Job>,
        /// The response, or why there was none.
        result: Box<Result<FetchResponse, FetchError>>,
        /// The parse of an HTML body.
        parsed: Option<Box<ParsedDocument>>,
        /// SHA-256 of the body, hex.
        hash: Option<String>,
    },
    /// A robots.txt request.
    Robots {
        /// The site.
        site: u32,
        /// What it found.
        outcome: RobotsFetch,
    },
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn hash_and_parse(url: &Url, content_type: Option<&str>, body: &[u8]) -> (String, ParsedDocument) {
    let hash = hex(&Sha256::digest(body));
    (hash, parse_html(url, content_type, body))
}

/// Make the request `req` for `job` and parse what comes back.
pub async fn fetch(
    fetcher: Fetcher,
    site: u32,
    job: Box<Job>,
    req: FetchRequest,
    max_body: u64,
) -> Completion {
    let result = fetcher.fetch(&req, max_body).await;
    let mut parsed = None;
    let mut hash = None;
    if let Ok(resp) = &result
        && let Some(body) = &resp.body
    {
        if is_html(resp.headers.content_type.as_deref()) || resp.headers.content_type.is_none() {
            let ct = resp.headers.content_type.clone();
            let (h, doc) = if body.bytes.len() > INLINE_PARSE_LIMIT {
                let url = req.url.clone();
                let bytes = body.bytes.clone();
                tokio::task::spawn_blocking(move || hash_and_parse(&url, ct.as_deref(), &bytes))
                    .await
                    .unwrap_or_default()
            } else {
                hash_and_parse(&req.url, ct.as_deref(), &body.bytes)
            };
            hash = Some(h);
            parsed = Some(Box::new(doc));
        } else {
            hash = Some(hex(&Sha256::digest(&body.bytes)));
        }
    }
    Completion::Fetch {
        site,
        job,
        result: Box::new(result),
        parsed,
        hash,
    }
}

/// Fetch a site's robots.txt.
pub async fn robots(fetcher: Fetcher, site: u32, url: Url) -> Completion {
    Completion::Robots {
        site,
        outcome: fetch_robots(&fetcher, url).await,
    }
}
