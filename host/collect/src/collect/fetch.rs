//! Fetching one URL of a collection through the network layer's polite
//! path ([`Network::get`]: the avoid rules, the address rule, robots.txt
//! read once per site, the site's turn, retries), its redirects followed by
//! the network layer's one rule ([`next_hop`]), every exchange kept as sent
//! and received for the run's WARC file.

use spinneret_crawl::fetch::{FetchResponse, Validators};
use spinneret_net::network::{Ask, NetError, Network};
use spinneret_net::redirect::{ChainEnd, MAX_REDIRECTS, next_hop};
use url::Url;

/// A URL to fetch, with the validators of its last retrieval when its
/// body is still at hand (a conditional request).
#[derive(Clone, Debug)]
pub struct Job {
    /// The URL asked for.
    pub url: Url,
    /// `If-None-Match` / `If-Modified-Since`, for the first request only.
    pub validators: Option<Validators>,
    /// Whether it may connect only to public addresses: a page from
    /// elsewhere (or a search engine elsewhere) led to it.
    pub public_only: bool,
}

/// One request and its response.
#[derive(Debug)]
pub struct Exchange {
    /// The URL requested.
    pub url: Url,
    /// The request's headers as sent (those the HTTP layer adds included).
    pub request: Vec<(String, String)>,
    /// The response.
    pub response: FetchResponse,
}

/// What a URL not fetched because the run was stopped says.
pub const STOPPED: &str = "not fetched: the run was stopped";

/// Why a URL of a collection has no answer to save.
#[derive(Debug, thiserror::Error)]
pub enum NotCollected {
    /// The profile's `exclude` names it.
    #[error("excluded by the profile")]
    Excluded,
    /// A redirect leads to a URL the profile excludes.
    #[error("redirects to {0}, which the profile excludes")]
    RedirectExcluded(Url),
    /// The network layer refused it or got no answer.
    #[error("{0}")]
    Net(#[from] NetError),
    /// The redirect chain ends without an answer.
    #[error("{0}")]
    Chain(ChainEnd),
    /// A redirect with no `Location` to follow.
    #[error("HTTP {status} from {url} with no usable Location")]
    NoLocation {
        /// The status.
        status: u16,
        /// The URL that answered it.
        url: Url,
    },
    /// An answer that is not the page (an error status).
    #[error("HTTP {0}")]
    Status(u16),
    /// The body was cut at the cap.
    #[error("larger than the body cap ({0} bytes): not saved")]
    TooLarge(usize),
    /// The run was stopped before it was asked.
    #[error("not fetched: the run was stopped")]
    Stopped,
}

/// What fetching one URL did: every exchange in order (redirects first),
/// and whether the last is the answer (a 2xx, or a 304 to a conditional
/// request) or why there is none.
#[derive(Debug)]
pub struct Fetched {
    /// The exchanges, in order.
    pub hops: Vec<Exchange>,
    /// Ok when the last exchange is the answer (or the redirects lead to
    /// [`Fetched::alias`]); else why not.
    pub outcome: Result<(), NotCollected>,
    /// Where the redirects lead when that is a URL the run fetches anyway
    /// (not fetched again here).
    pub alias: Option<Url>,
}

/// The request headers a collection's request carries: the fetcher's
/// identity, what the HTTP layer adds, and the validators.
fn request_headers(net: &Network, url: &Url, v: Option<&Validators>) -> Vec<(String, String)> {
    let host = match url.port() {
        Some(p) => format!("{}:{p}", url.host_str().unwrap_or_default()),
        None => url.host_str().unwrap_or_default().to_string(),
    };
    let mut h = vec![("Host".to_string(), host)];
    h.extend(net.identity_headers());
    h.push(("Accept".into(), "*/*".into()));
    h.push(("Accept-Encoding".into(), "gzip, deflate, br".into()));
    if let Some(v) = v {
        if let Some(e) = &v.etag {
            h.push(("If-None-Match".into(), e.clone()));
        }
        if let Some(l) = &v.last_modified {
            h.push(("If-Modified-Since".into(), l.clone()));
        }
    }
    h
}

/// What a collection's fetch asks of the run, shared by its fetches.
pub trait Scope: Send + Sync {
    /// Whether the profile's `exclude` names `url`.
    fn excluded(&self, url: &Url) -> bool;
    /// Whether `url` may be on this machine or its network: its site is
    /// one the person named (an item of theirs), or it is a local file.
    fn open(&self, url: &Url) -> bool;
    /// Whether the run fetches `url` anyway (asked already or in flight).
    fn known(&self, url: &str) -> bool;
}

/// Fetch `job`, following redirects by the network layer's rule, each hop
/// held to the address rule unless its own site is open (a hop never
/// inherits the trust of the URL it came from), none into what the
/// profile excludes, and stopping at one that leads to a URL the run
/// fetches anyway.
pub async fn fetch_one(net: &Network, job: &Job, scope: &dyn Scope) -> Fetched {
    let mut hops: Vec<Exchange> = Vec::new();
    let mut at = job.url.clone();
    let end = |hops, why: NotCollected| Fetched {
        hops,
        outcome: Err(why),
        alias: None,
    };
    loop {
        if scope.excluded(&at) {
            let why = match at == job.url {
                true => NotCollected::Excluded,
                false => NotCollected::RedirectExcluded(at),
            };
            return end(hops, why);
        }
        let validators = job.validators.clone().filter(|_| hops.is_empty());
        let request = request_headers(net, &at, validators.as_ref());
        let public_only = match hops.is_empty() {
            true => job.public_only,
            false => job.public_only || !scope.open(&at),
        };
        let ask = Ask {
            url: at.clone(),
            validators: validators.clone(),
            keep_headers: true,
            public_only,
            deadline: None,
        };
        let response = match net.get(&ask).await {
            Ok(r) => r,
            Err(e) => return end(hops, e.into()),
        };
        let status = response.status;
        let truncated = response.body.as_ref().is_some_and(|b| b.truncated);
        let location = response.headers.location.clone();
        let size = response.body.as_ref().map_or(0, |b| b.bytes.len());
        hops.push(Exchange {
            url: at.clone(),
            request,
            response,
        });
        let answer = |hops| Fetched {
            hops,
            outcome: Ok(()),
            alias: None,
        };
        match status {
            _ if truncated => return end(hops, NotCollected::TooLarge(size)),
            200..=299 => return answer(hops),
            304 if validators.is_some() => return answer(hops),
            300..=399 => {
                let Some(location) = location else {
                    return end(hops, NotCollected::NoLocation { status, url: at });
                };
                let requested: Vec<&str> = hops.iter().map(|h| h.url.as_str()).collect();
                let next = match next_hop(
                    MAX_REDIRECTS,
                    &job.url,
                    &at,
                    location.trim(),
                    requested,
                    &|u| net.avoided(u),
                ) {
                    Ok(next) => next,
                    Err(end_of_chain) => return end(hops, NotCollected::Chain(end_of_chain)),
                };
                if scope.known(next.as_str()) {
                    return Fetched {
                        hops,
                        outcome: Ok(()),
                        alias: Some(next),
                    };
                }
                at = next;
            }
            s => return end(hops, NotCollected::Status(s)),
        }
    }
}
