//! Per-site state: the robots.txt in force, the politeness gate and the queues
//! of work waiting for the site.

use super::frontier::UrlIdx;
use crate::fetch::{BodyWanted, FetchResponse, Method, Validators};
use crate::policy::robots::RobotsRules;
use spinneret_core::model::{Category, CheckResult, Hop, Source, unix_now};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};
use url::Url;

/// Where a site's robots.txt stands.
#[derive(Clone, Debug)]
pub(crate) enum RobotsState {
    /// Not fetched yet.
    Unknown,
    /// A request for it is out.
    Fetching,
    /// It failed temporarily; try again at this time.
    RetryAt(Instant),
    /// Rules in force.
    Ready(Arc<RobotsRules>),
    /// The site is off limits for this run, with the reason (its URLs are avoided).
    OffLimits(String),
    /// The site cannot be reached, with the reason (its URLs are broken; nothing is requested).
    Unreachable(String),
    /// The address rule keeps the run from the site, with the reason: it is
    /// on this machine or its network and only pages from elsewhere led
    /// to it (its URLs are not checked; nothing is requested).
    Refused(String),
}

/// A request in progress for a URL: its current hop, retries and redirect chain.
#[derive(Debug)]
pub(crate) struct Job {
    /// The URL being checked.
    pub url: UrlIdx,
    /// What to request now (the URL itself, or a redirect hop).
    pub request: Url,
    /// HEAD or GET.
    pub method: Method,
    /// Which body to read.
    pub body: BodyWanted,
    /// Validators for a conditional request (first hop only).
    pub validators: Option<Validators>,
    /// Redirects followed so far.
    pub hops: Vec<Hop>,
    /// Attempts at the current hop (for retries).
    pub attempt: u32,
    /// Requests made for the URL in all.
    pub requests: u32,
    /// Whether HEAD was refused and GET stands in.
    pub head_fallback: bool,
    /// Do not start before this time (Retry-After, backoff).
    pub not_before: Option<Instant>,
    /// Time spent in requests so far.
    pub elapsed: Duration,
    /// The URL of the run this hop requests, while the hop is in flight.
    pub hop_target: Option<UrlIdx>,
}

impl Job {
    /// The result of checking `url` by this job: the last answer (`resp`,
    /// none when no request was answered) recorded as `category` with
    /// `error`, the body's `hash`, the document's `owner` (or the
    /// response's), and the first referrer.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn result(
        &self,
        url: &Url,
        resp: Option<&FetchResponse>,
        category: Category,
        error: Option<String>,
        hash: Option<String>,
        owner: Option<String>,
        referrer: Option<String>,
    ) -> CheckResult {
        let h = resp.map(|r| &r.headers);
        let body = resp.and_then(|r| r.body.as_ref());
        let asked = self.requests > 0;
        CheckResult {
            url: url.to_string(),
            category,
            method: asked.then_some(self.method.as_str()),
            status: resp.map(|r| r.status),
            error,
            content_type: h.and_then(|h| h.content_type.clone()),
            content_length: h.and_then(|h| h.content_length),
            size: body.map(|b| b.bytes.len() as u64),
            content_hash: hash,
            etag: h.and_then(|h| h.etag.clone()),
            last_modified: h.and_then(|h| h.last_modified.clone()),
            expires: h.and_then(|h| h.expires.clone()),
            owner,
            redirects: self.hops.clone(),
            final_url: (!self.hops.is_empty()).then(|| self.request.to_string()),
            elapsed_ms: asked.then_some(self.elapsed.as_millis() as u64),
            truncated: body.is_some_and(|b| b.truncated),
            attempts: self.requests,
            referrer,
            checked_at: unix_now(),
            source: Source::Network,
        }
    }
}

/// Work waiting for a site.
#[derive(Debug)]
pub(crate) enum Queued {
    /// The first request for a URL; its method is decided when it leaves.
    Initial(UrlIdx),
    /// A retry or a redirect hop.
    Continue(Box<Job>),
}

/// One site (host and port).
#[derive(Debug)]
pub(crate) struct Site {
    /// `host:port`, or `file:`.
    pub key: String,
    /// A URL on the site, for building its robots.txt URL.
    pub origin: Url,
    /// Its robots.txt.
    pub robots: RobotsState,
    /// Temporary robots.txt failures so far.
    pub robots_failures: u32,
    /// The final status and type of this run's robots.txt request, which also
    /// answers for any link to the robots.txt itself.
    pub robots_answer: Option<(u16, Option<String>)>,
    /// Politeness and robots.txt as shared with every other caller of
    /// the run (the plugins' `http`): the network layer's site.
    pub shared: Arc<spinneret_net::sites::Site>,
    /// Requests of this table's in flight to the site (the shared gate
    /// counts the others' too).
    pub own_active: usize,
    /// Document requests (and every continuation).
    pub get_queue: VecDeque<Queued>,
    /// Leaf requests, released in the leaf phase.
    pub head_queue: VecDeque<Queued>,
    /// Whether it is in the engine's runnable list.
    pub runnable: bool,
}

impl Site {
    /// Whether any work waits (leaf work only counts in the leaf phase).
    pub(crate) fn has_work(&self) -> bool {
        !self.get_queue.is_empty() || !self.head_queue.is_empty()
    }

    /// Take the next piece of work, documents first.
    pub(crate) fn pop(&mut self) -> Option<Queued> {
        self.get_queue
            .pop_front()
            .or_else(|| self.head_queue.pop_front())
    }

    /// Put work back at the front (it could not start yet).
    pub(crate) fn push_front(&mut self, q: Queued) {
        self.get_queue.push_front(q);
    }
}
