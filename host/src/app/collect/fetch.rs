//! Fetching for a collection: URLs fetched several at a time, each through
//! the polite fetcher (robots.txt, the avoid files, the per-site interval,
//! the body cap), its redirects followed, every exchange kept as sent and
//! received for the run's WARC file.

use spinneret_crawl::fetch::{FetchResponse, Validators};
use spinneret_crawl::plugin_http::PoliteHttp;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use url::Url;

/// The most redirects followed from one URL.
pub const MAX_REDIRECTS: usize = 5;

/// How many requests a collection has in flight at most; to one site, no
/// more than the fetcher's `per_site_connections` (2 by default, as in a
/// crawl), with the per-site interval between their starts.
pub const FETCHERS: usize = 8;

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

/// What fetching one URL did: every exchange in order (redirects first),
/// and whether the last is the answer (a 2xx, or a 304 to a conditional
/// request) or why there is none.
#[derive(Debug)]
pub struct Fetched {
    /// The exchanges, in order.
    pub hops: Vec<Exchange>,
    /// Ok when the last exchange is the answer (or the redirects lead to
    /// [`Fetched::alias`]); else why not.
    pub outcome: Result<(), String>,
    /// Where the redirects lead when that is a URL the run fetches anyway
    /// (not fetched again here).
    pub alias: Option<Url>,
}

use spinneret_core::urls::local_host;

/// The request headers a collection's request carries: the fetcher's
/// identity, what the HTTP layer adds, and the validators.
fn request_headers(http: &PoliteHttp, url: &Url, v: Option<&Validators>) -> Vec<(String, String)> {
    let host = match url.port() {
        Some(p) => format!("{}:{p}", url.host_str().unwrap_or_default()),
        None => url.host_str().unwrap_or_default().to_string(),
    };
    let mut h = vec![("Host".to_string(), host)];
    h.extend(http.identity_headers());
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

/// Whether the run fetches a URL anyway (asked already, or in this batch).
pub type Known<'a> = &'a (dyn Fn(&str) -> bool + Sync);

/// Fetch `job`, following up to [`MAX_REDIRECTS`] redirects, none from
/// elsewhere into this machine or its network, none into `exclude`, and
/// stopping at one that leads to a URL the run fetches anyway (`known`).
pub fn fetch_one(http: &PoliteHttp, job: &Job, exclude: &[String], known: Known<'_>) -> Fetched {
    let mut hops: Vec<Exchange> = Vec::new();
    let mut at = job.url.clone();
    let end = |hops, why: String| Fetched {
        hops,
        outcome: Err(why),
        alias: None,
    };
    for _ in 0..=MAX_REDIRECTS {
        if exclude.iter().any(|x| at.as_str().starts_with(x)) {
            let why = match at == job.url {
                true => "excluded by the profile".to_string(),
                false => format!("redirects to {at}, which the profile excludes"),
            };
            return end(hops, why);
        }
        let validators = job.validators.clone().filter(|_| hops.is_empty());
        let request = request_headers(http, &at, validators.as_ref());
        let response = match http.fetch(&at, validators.clone(), true, job.public_only, None) {
            Ok(r) => r,
            Err(e) => return end(hops, e),
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
        match status {
            _ if truncated => {
                return end(
                    hops,
                    format!("larger than the body cap ({size} bytes): not saved"),
                );
            }
            200..=299 => {
                return Fetched {
                    hops,
                    outcome: Ok(()),
                    alias: None,
                };
            }
            304 if validators.is_some() => {
                return Fetched {
                    hops,
                    outcome: Ok(()),
                    alias: None,
                };
            }
            300..=399 => {
                let next = location
                    .as_deref()
                    .and_then(|l| at.join(l.trim()).ok())
                    .filter(|n| matches!(n.scheme(), "http" | "https"));
                let Some(next) = next else {
                    return end(
                        hops,
                        format!("HTTP {status} from {at} with no usable Location"),
                    );
                };
                if local_host(&next) && !local_host(&job.url) {
                    return end(
                        hops,
                        format!(
                            "{at} redirects to {next}: a page from elsewhere may not reach this machine or its network"
                        ),
                    );
                }
                let looped = next == job.url || hops.iter().any(|h| h.url == next);
                if known(next.as_str()) && !looped {
                    return Fetched {
                        hops,
                        outcome: Ok(()),
                        alias: Some(next),
                    };
                }
                at = next;
            }
            s => return end(hops, format!("HTTP {s}")),
        }
    }
    end(hops, format!("more than {MAX_REDIRECTS} redirects"))
}

/// Which job a fetcher takes next: jobs in order within each site, sites
/// in turn, no more than `per_site` in flight to one site, so that a
/// site with many jobs neither gets more than its share nor holds up the
/// others' (a fetcher waits only when every site with jobs left is busy).
struct Turns {
    /// Each site's jobs not yet taken, in order.
    waiting: HashMap<String, VecDeque<usize>>,
    /// Sites with jobs waiting and room in flight, in turn.
    ready: VecDeque<String>,
    /// Requests in flight per site.
    busy: HashMap<String, usize>,
    /// Jobs not yet taken.
    left: usize,
    /// Requests in flight to one site at most.
    per_site: usize,
}

impl Turns {
    fn new(jobs: &[Job], per_site: usize) -> Turns {
        let mut waiting: HashMap<String, VecDeque<usize>> = HashMap::new();
        let mut ready = VecDeque::new();
        for (i, job) in jobs.iter().enumerate() {
            let site = spinneret_core::urls::site_key(&job.url);
            let queue = waiting.entry(site.clone()).or_default();
            if queue.is_empty() {
                ready.push_back(site);
            }
            queue.push_back(i);
        }
        Turns {
            waiting,
            ready,
            busy: HashMap::new(),
            left: jobs.len(),
            per_site,
        }
    }

    /// The next job and its site, if one may start now.
    fn take(&mut self) -> Option<(usize, String)> {
        let site = self.ready.pop_front()?;
        let queue = self.waiting.get_mut(&site)?;
        let job = queue.pop_front()?;
        self.left -= 1;
        let busy = self.busy.entry(site.clone()).or_default();
        *busy += 1;
        if !queue.is_empty() && *busy < self.per_site {
            self.ready.push_back(site.clone());
        }
        Some((job, site))
    }

    /// A job of `site` is done.
    fn done(&mut self, site: &str) {
        let busy = self.busy.entry(site.to_string()).or_default();
        let had_room = *busy < self.per_site;
        *busy = busy.saturating_sub(1);
        let more = self.waiting.get(site).is_some_and(|q| !q.is_empty());
        if more && !had_room {
            self.ready.push_back(site.to_string());
        }
    }
}

/// What a job not fetched because the run was stopped says.
pub const STOPPED: &str = "not fetched: the run was stopped";

/// Fetch every job, [`FETCHERS`] at a time and at most the fetcher's
/// `per_site_connections` to a site; the results in the jobs' order. Once `stop` is set no new request
/// starts: the jobs not started say [`STOPPED`].
pub fn fetch_all(
    http: &PoliteHttp,
    jobs: &[Job],
    exclude: &[String],
    known: Known<'_>,
    stop: &AtomicBool,
) -> Vec<Fetched> {
    let turns = Mutex::new(Turns::new(jobs, http.per_site_connections()));
    let wake = Condvar::new();
    let slots: Vec<Mutex<Option<Fetched>>> = jobs.iter().map(|_| Mutex::new(None)).collect();
    let lock = || turns.lock().unwrap_or_else(|p| p.into_inner());
    std::thread::scope(|s| {
        for _ in 0..FETCHERS.min(jobs.len()) {
            s.spawn(|| {
                loop {
                    let (i, site) = {
                        let mut t = lock();
                        loop {
                            if stop.load(Ordering::Relaxed) {
                                return;
                            }
                            if let Some(next) = t.take() {
                                break next;
                            }
                            if t.left == 0 {
                                return;
                            }
                            t = wake.wait(t).unwrap_or_else(|p| p.into_inner());
                        }
                    };
                    let got = fetch_one(http, &jobs[i], exclude, known);
                    *slots[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(got);
                    lock().done(&site);
                    wake.notify_all();
                }
            });
        }
    });
    slots
        .into_iter()
        .map(|m| {
            m.into_inner()
                .unwrap_or_else(|p| p.into_inner())
                .unwrap_or_else(|| Fetched {
                    hops: Vec::new(),
                    outcome: Err(STOPPED.into()),
                    alias: None,
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_keep_each_site_within_its_share_and_its_order() {
        let job = |u: &str| Job {
            url: Url::parse(u).unwrap(),
            validators: None,
            public_only: true,
        };
        let jobs = [
            job("http://a.example/1"),
            job("http://a.example/2"),
            job("http://a.example/3"),
            job("http://b.example/1"),
        ];
        let mut t = Turns::new(&jobs, 2);
        // Two of a's, then b's; a's third waits for one of a's to end.
        assert_eq!(t.take(), Some((0, "a.example:80".into())));
        assert_eq!(t.take(), Some((3, "b.example:80".into())));
        assert_eq!(t.take(), Some((1, "a.example:80".into())));
        assert_eq!(t.take(), None);
        assert_eq!(t.left, 1);
        t.done("b.example:80");
        assert_eq!(t.take(), None, "b's end frees no room at a");
        t.done("a.example:80");
        assert_eq!(t.take(), Some((2, "a.example:80".into())));
        assert_eq!((t.take(), t.left), (None, 0));
    }

    #[test]
    fn local_hosts_are_known_by_name_and_address() {
        for local in [
            "http://localhost/",
            "http://a.localhost:8080/",
            "http://127.0.0.1/",
            "http://10.1.2.3/",
            "http://192.168.0.1/",
            "http://172.16.0.1/",
            "http://169.254.169.254/latest/meta-data/",
            "http://0.0.0.0/",
            "http://[::1]/",
            "http://[fd00::1]/",
            "http://[fe80::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:10.0.0.1]/",
            "http://100.64.0.1/",
            "http://2130706433/",
        ] {
            assert!(local_host(&Url::parse(local).unwrap()), "{local}");
        }
        for remote in [
            "https://example.org/",
            "http://8.8.8.8/",
            "http://[2001:db8::1]/",
            "http://172.32.0.1/",
        ] {
            assert!(!local_host(&Url::parse(remote).unwrap()), "{remote}");
        }
    }
}
