//! Redirects: where the next hop of a chain goes (or why the chain ends
//! there), and the bookkeeping that keeps a URL from being requested twice
//! when a redirect hop and the URL's own request meet.
//!
//! A hop to a URL the run checks anyway is not requested: if that URL is
//! done, the chain ends at its result; if it is in flight, the chain is
//! *parked* until it is. A URL whose own request would leave while a hop to
//! it is in flight *waits for the hop*, whose answer may settle it.

use super::frontier::UrlIdx;
use super::sites::Job;
use crate::policy::rules::{PrefixRules, RuleAction};
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use spinneret_core::model::Hop;
use url::Url;

pub(crate) use spinneret_net::redirect::ChainEnd;

/// The next hop of a chain that started at `origin`, whose latest request
/// `from` answered with `location`; `hops` are the hops followed so far,
/// `from` included; at most `max` hops. `Err` says why the chain ends
/// here: the network layer's one rule
/// ([`spinneret_net::redirect::next_hop`]), with the run's avoid rules.
pub(crate) fn next_hop(
    max: usize,
    origin: &Url,
    from: &Url,
    location: &str,
    hops: &[Hop],
    rules: &PrefixRules,
) -> Result<Url, ChainEnd> {
    spinneret_net::redirect::next_hop(
        max,
        origin,
        from,
        location,
        hops.iter().map(|h| h.url.as_str()),
        &|next| avoided_by(rules, next),
    )
}

/// The avoid rule that forbids `url`, named with where it was written.
pub(crate) fn avoided_by(rules: &PrefixRules, url: &Url) -> Option<String> {
    rules
        .lookup(url.as_str())
        .filter(|r| r.action == RuleAction::Avoid)
        .map(|rule| format!("{} ({})", rule.prefix, rule.origin))
}

/// Redirect hops in flight and the chains and URLs waiting on them.
pub(crate) struct Redirects {
    /// Chains whose next hop is a URL in flight for its own sake, by that URL.
    parked: HashMap<UrlIdx, Vec<Job>>,
    /// Hops in flight, by the URL of the run they request.
    in_flight: HashMap<UrlIdx, u32>,
    /// URLs whose own request waits for a hop in flight to them.
    waiting: HashSet<UrlIdx>,
}

impl Redirects {
    /// An empty book.
    pub(crate) fn new() -> Self {
        Redirects {
            parked: HashMap::new(),
            in_flight: HashMap::new(),
            waiting: HashSet::new(),
        }
    }

    /// `job`'s next hop is `target`, which is in flight: end the chain
    /// there when it is done ([`Redirects::take_parked`]).
    pub(crate) fn park(&mut self, target: UrlIdx, job: Job) {
        self.parked.entry(target).or_default().push(job);
    }

    /// The chains parked on `u`, now that it is done.
    pub(crate) fn take_parked(&mut self, u: UrlIdx) -> Vec<Job> {
        self.parked.remove(&u).unwrap_or_default()
    }

    /// How many URLs have chains parked on them.
    pub(crate) fn parked(&self) -> usize {
        self.parked.len()
    }

    /// A hop requesting `target` (a URL of the run) leaves.
    pub(crate) fn hop_leaves(&mut self, target: UrlIdx) {
        *self.in_flight.entry(target).or_insert(0) += 1;
    }

    /// `u`'s own request is about to leave: true when a hop to it is in
    /// flight, and it then waits for that hop instead.
    pub(crate) fn wait_for_hop(&mut self, u: UrlIdx) -> bool {
        let in_flight = self.in_flight.contains_key(&u);
        if in_flight {
            self.waiting.insert(u);
        }
        in_flight
    }

    /// A hop requesting `target` is answered: true when it was the last
    /// one in flight and `target`'s own request waited for it (the hop did
    /// not settle it, so that request goes ahead now).
    pub(crate) fn hop_answered(&mut self, target: UrlIdx) -> bool {
        let Some(n) = self.in_flight.get_mut(&target) else {
            return false;
        };
        *n -= 1;
        if *n > 0 {
            return false;
        }
        self.in_flight.remove(&target);
        self.waiting.remove(&target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::rules::PrefixRule;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn hops(urls: &[&str]) -> Vec<Hop> {
        urls.iter()
            .map(|u| Hop {
                url: u.to_string(),
                status: 301,
            })
            .collect()
    }

    #[test]
    fn where_the_next_hop_goes() {
        let rules = PrefixRules::new(
            [PrefixRule {
                prefix: "http://a.test/private/".into(),
                action: RuleAction::Avoid,
                expires: None,
                origin: "avoid.txt:3".into(),
                line: 3,
            }],
            std::time::SystemTime::now(),
        );
        let origin = url("http://a.test/start");
        let eleven: Vec<String> = (0..11).map(|i| format!("http://a.test/{i}")).collect();
        let eleven: Vec<&str> = eleven.iter().map(String::as_str).collect();
        // (case, the hop answered, the hops so far, its Location, what follows)
        type Case<'a> = (
            &'a str,
            &'a str,
            Vec<&'a str>,
            &'a str,
            Result<&'a str, ChainEnd>,
        );
        let table: Vec<Case<'_>> = vec![
            (
                "a relative Location is resolved against the hop",
                "http://a.test/dir/x",
                vec!["http://a.test/dir/x"],
                "../y",
                Ok("http://a.test/y"),
            ),
            (
                "another host is followed",
                "http://a.test/start",
                vec!["http://a.test/start"],
                "https://b.test/",
                Ok("https://b.test/"),
            ),
            (
                "back to the start is a loop",
                "http://a.test/x",
                vec!["http://a.test/start", "http://a.test/x"],
                "/start",
                Err(ChainEnd::Broken(
                    "redirect loop: http://a.test/start -> http://a.test/x -> http://a.test/start"
                        .into(),
                )),
            ),
            (
                "to a hop already followed is a loop",
                "http://a.test/y",
                vec!["http://a.test/start", "http://a.test/x", "http://a.test/y"],
                "/x",
                Err(ChainEnd::Broken(
                    "redirect loop: http://a.test/start -> http://a.test/x -> http://a.test/y -> http://a.test/x"
                        .into(),
                )),
            ),
            (
                "the eleventh redirect is too many",
                "http://a.test/10",
                eleven.clone(),
                "/11",
                Err(ChainEnd::Broken("more than 10 redirects".into())),
            ),
            (
                "an invalid Location is broken",
                "http://a.test/start",
                vec!["http://a.test/start"],
                "http://[::1",
                Err(ChainEnd::Broken(
                    "redirect to an invalid Location `http://[::1` (invalid IPv6 address)".into(),
                )),
            ),
            (
                "from the web to a local file is never followed",
                "http://a.test/start",
                vec!["http://a.test/start"],
                "file:///etc/passwd",
                Err(ChainEnd::NotChecked(format!(
                    "redirected to file:///etc/passwd: {}",
                    crate::policy::LOCAL_FROM_REMOTE
                ))),
            ),
            (
                "another scheme is not checked",
                "http://a.test/start",
                vec!["http://a.test/start"],
                "mailto:x@a.test",
                Err(ChainEnd::NotChecked(
                    "redirected to mailto:x@a.test, which is not checked (mailto scheme)".into(),
                )),
            ),
            (
                "an avoid rule holds for a hop too",
                "http://a.test/start",
                vec!["http://a.test/start"],
                "/private/z",
                Err(ChainEnd::Avoided(
                    "redirected to http://a.test/private/z, avoided by rule http://a.test/private/ (avoid.txt:3)"
                        .into(),
                )),
            ),
        ];
        for (case, from, followed, location, want) in table {
            let got = next_hop(10, &origin, &url(from), location, &hops(&followed), &rules);
            let want = want.map(url);
            assert_eq!(got, want, "{case}");
        }
    }

    fn job(u: UrlIdx) -> Job {
        Job {
            url: u,
            request: url("http://a.test/"),
            method: crate::fetch::Method::Head,
            body: crate::fetch::BodyWanted::No,
            validators: None,
            hops: Vec::new(),
            attempt: 0,
            requests: 0,
            head_fallback: false,
            not_before: None,
            elapsed: std::time::Duration::ZERO,
            hop_target: None,
        }
    }

    #[test]
    fn a_url_waits_for_the_hops_to_it_and_goes_after_the_last() {
        let mut r = Redirects::new();
        let target: UrlIdx = 7;
        assert!(!r.wait_for_hop(target), "no hop in flight: it goes");
        r.hop_leaves(target);
        r.hop_leaves(target);
        assert!(r.wait_for_hop(target));
        assert!(!r.hop_answered(target), "one hop is still out");
        assert!(r.hop_answered(target), "the last hop: the URL goes now");
        assert!(!r.hop_answered(target), "nothing is left to answer");
        assert!(!r.wait_for_hop(target));
    }

    #[test]
    fn a_hop_nobody_waited_for_releases_nothing() {
        let mut r = Redirects::new();
        let target: UrlIdx = 3;
        r.hop_leaves(target);
        assert!(!r.hop_answered(target));
    }

    #[test]
    fn parked_chains_are_taken_once() {
        let mut r = Redirects::new();
        let (a, b): (UrlIdx, UrlIdx) = (1, 2);
        r.park(a, job(b));
        r.park(a, job(5));
        assert_eq!(r.parked(), 1);
        let taken: Vec<UrlIdx> = r.take_parked(a).iter().map(|j| j.url).collect();
        assert_eq!(taken, vec![b, 5]);
        assert!(r.take_parked(a).is_empty());
        assert_eq!(r.parked(), 0);
    }
}
