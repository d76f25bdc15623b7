//! Per-site state: the robots.txt in force, the politeness gate and the queues
//! of work waiting for the site.

use super::frontier::UrlIdx;
use crate::fetch::politeness::SiteGate;
use crate::fetch::{BodyWanted, Method, Validators};
use crate::policy::robots::RobotsRules;
use spinneret_core::model::Hop;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};
use url::Url;

/// Where a site's robots.txt stands.
#[derive(Clone, Debug)]
pub enum RobotsState {
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
}

/// A request in progress for a URL: its current hop, retries and redirect chain.
#[derive(Debug)]
pub struct Job {
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

/// Work waiting for a site.
#[derive(Debug)]
pub enum Queued {
    /// The first request for a URL; its method is decided when it leaves.
    Initial(UrlIdx),
    /// A retry or a redirect hop.
    Continue(Box<Job>),
}

/// One site (host and port).
#[derive(Debug)]
pub struct Site {
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
    /// Politeness.
    pub gate: SiteGate,
    /// Document requests (and every continuation).
    pub get_queue: VecDeque<Queued>,
    /// Leaf requests, released in the leaf phase.
    pub head_queue: VecDeque<Queued>,
    /// Whether it is in the engine's runnable list.
    pub runnable: bool,
}

impl Site {
    /// Whether any work waits (leaf work only counts in the leaf phase).
    pub fn has_work(&self) -> bool {
        !self.get_queue.is_empty() || !self.head_queue.is_empty()
    }

    /// Take the next piece of work, documents first.
    pub fn pop(&mut self) -> Option<Queued> {
        self.get_queue
            .pop_front()
            .or_else(|| self.head_queue.pop_front())
    }

    /// Put work back at the front (it could not start yet).
    pub fn push_front(&mut self, q: Queued) {
        self.get_queue.push_front(q);
    }
}
