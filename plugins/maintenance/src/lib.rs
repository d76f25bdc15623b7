//! `maintenance`: the change detector of MOMspider (seed 000, section 5.1).
//! For each URL a task reached it reports:
//!
//! - `moved`: the URL redirects (the message names where it ends up);
//! - `broken`: it cannot be accessed (the message says why, and whether it
//!   is new since the previous run);
//! - `blocked`: the server refused the robot (401, 403, 429): not the
//!   link's fault, but a reader may not be able to follow it either;
//! - `recently-modified`: its `Last-Modified` is within the task's
//!   `changed_days` of the run's start;
//! - `expiring`: an owned object — a document of the task, which is the
//!   owner's infostructure (an Owner task's documents are those of its
//!   owner) — whose Expires, the header or `<meta http-equiv=expires>`,
//!   falls within the task's `expiring_days`, or has passed; its Owner, when
//!   it names one, is in the message. A leaf is someone else's object;
//! - `content-changed`: its content hash differs from the previous run's.
//!
//! Configuration: one boolean per kind, all on by default:
//! `moved`, `broken`, `blocked`, `recently_modified`, `expiring`,
//! `content_changed`.

use serde_json::Value;
use spinneret_sdk::dates;
use spinneret_sdk::detector::*;

/// The kinds of change, with their configuration keys.
const KINDS: [&str; 6] = [
    "moved",
    "broken",
    "recently_modified",
    "expiring",
    "content_changed",
    "blocked",
];

/// The detector's settings: which kinds it reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Maintenance {
    on: [bool; 6],
}

const DAY: i64 = 86_400;

fn finding(kind: &str, r: &CheckResult, message: String, severity: Severity) -> Finding {
    Finding {
        kind: kind.to_string(),
        url: r.url.clone(),
        referrer: r.referrer.clone(),
        message,
        severity,
        source: String::new(),
    }
}

/// Why a result is not ok: its error, else its status, else `otherwise`.
fn reason(r: &CheckResult, otherwise: &str) -> String {
    match (&r.error, r.status) {
        (Some(e), _) => e.clone(),
        (None, Some(s)) => format!("HTTP {s}"),
        (None, None) => otherwise.to_string(),
    }
}

fn plural(n: i64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

impl Maintenance {
    fn wants(&self, kind: usize) -> bool {
        self.on[kind]
    }

    fn moved(&self, r: &CheckResult) -> Option<Finding> {
        if r.category != Category::Moved {
            return None;
        }
        let to = r.final_url.as_deref().unwrap_or("an unknown place");
        let first = r.redirects.first().map_or(0, |h| h.status);
        let hops = r.redirects.len();
        let message = if hops > 1 {
            format!("moved to {to} ({first}, {hops} redirects)")
        } else {
            format!("moved to {to} ({first})")
        };
        Some(finding("moved", r, message, Severity::Warning))
    }

    fn broken(&self, previous: Option<&Snapshot>, r: &CheckResult) -> Option<Finding> {
        if r.category != Category::Broken {
            return None;
        }
        let why = reason(r, "cannot be accessed");
        let since = match previous.map(|p| p.outcome.category) {
            Some(Category::Broken) => "; broken in the previous run too",
            Some(_) => "; new since the previous run",
            None => "",
        };
        Some(finding(
            "broken",
            r,
            format!("broken: {why}{since}"),
            Severity::Error,
        ))
    }

    fn blocked(&self, r: &CheckResult) -> Option<Finding> {
        if r.category != Category::Blocked {
            return None;
        }
        let why = reason(r, "refused");
        Some(finding(
            "blocked",
            r,
            format!("blocked: {why}"),
            Severity::Warning,
        ))
    }

    fn recently_modified(&self, task: &TaskInfo, now: i64, r: &CheckResult) -> Option<Finding> {
        let lm = r.last_modified.as_deref()?;
        let t = dates::parse(lm)?;
        let age = now - t;
        if task.changed_days == 0 || age < 0 || age > i64::from(task.changed_days) * DAY {
            return None;
        }
        let days = dates::days_between(t, now);
        let when = if days == 0 {
            "today".to_string()
        } else {
            format!("{} ago", plural(days, "day"))
        };
        Some(finding(
            "recently-modified",
            r,
            format!("modified {when} ({lm})"),
            Severity::Info,
        ))
    }

    fn expiring(&self, task: &TaskInfo, now: i64, current: &Snapshot) -> Option<Finding> {
        let r = &current.outcome;
        // Only the task's own documents: a leaf is another's object.
        let doc = current.document.as_ref()?;
        let owner = match doc.owner.as_ref().or(r.owner.as_ref()) {
            Some(o) => format!("; owner {o}"),
            None => String::new(),
        };
        let expires = doc.expires.clone().or_else(|| r.expires.clone())?;
        let t = dates::parse(&expires)?;
        let left = t - now;
        if left > i64::from(task.expiring_days) * DAY {
            return None;
        }
        let message = match (left < 0, dates::days_between(now, t)) {
            (true, 0) => format!("expired today ({expires}){owner}"),
            (true, days) => format!("expired {} ago ({expires}){owner}", plural(-days, "day")),
            (false, 0) => format!("expires today ({expires}){owner}"),
            (false, days) => format!("expires in {} ({expires}){owner}", plural(days, "day")),
        };
        Some(finding("expiring", r, message, Severity::Warning))
    }

    fn content_changed(&self, previous: Option<&Snapshot>, r: &CheckResult) -> Option<Finding> {
        let before = previous?.outcome.content_hash.as_deref()?;
        let now = r.content_hash.as_deref()?;
        (before != now).then(|| {
            finding(
                "content-changed",
                r,
                "content changed since the previous run".to_string(),
                Severity::Info,
            )
        })
    }
}

impl Detector for Maintenance {
    fn configure(config: Value) -> Result<Self, String> {
        let mut on = [true; 6];
        spinneret_sdk::settings::check_keys("maintenance", &config, &KINDS)?;
        if let Some(obj) = config.as_object() {
            for (k, v) in obj {
                let i = KINDS.iter().position(|n| n == k).expect("checked above");
                on[i] = v
                    .as_bool()
                    .ok_or_else(|| format!("maintenance: `{k}` must be true or false, not {v}"))?;
            }
        }
        Ok(Maintenance { on })
    }

    /// Results, owners and expiry dates are all it reads: no references.
    fn needs(&self) -> Needs {
        Needs::empty()
    }

    fn compare(
        &mut self,
        task: &TaskInfo,
        now: i64,
        previous: Option<&Snapshot>,
        current: &Snapshot,
    ) -> Vec<Finding> {
        let r = &current.outcome;
        let found = [
            self.wants(0).then(|| self.moved(r)).flatten(),
            self.wants(1).then(|| self.broken(previous, r)).flatten(),
            self.wants(2)
                .then(|| self.recently_modified(task, now, r))
                .flatten(),
            self.wants(3)
                .then(|| self.expiring(task, now, current))
                .flatten(),
            self.wants(4)
                .then(|| self.content_changed(previous, r))
                .flatten(),
            self.wants(5).then(|| self.blocked(r)).flatten(),
        ];
        found.into_iter().flatten().collect()
    }
}

spinneret_sdk::export_detector!(Maintenance);

#[cfg(test)]
mod tests {
    use super::*;
    use spinneret_sdk::testing::fixtures::{document, result, snapshot, task};

    const NOW: i64 = 784_111_777; // Sun, 06 Nov 1994 08:49:37 GMT

    fn detector() -> Maintenance {
        Maintenance::configure(serde_json::json!({})).unwrap()
    }

    fn kinds(f: &[Finding]) -> Vec<(&str, &str)> {
        f.iter()
            .map(|f| (f.kind.as_str(), f.message.as_str()))
            .collect()
    }

    #[test]
    fn moved_names_the_final_url_and_the_first_status() {
        let mut r = result("http://a.example/old", Category::Moved);
        r.redirects = vec![
            Hop {
                url: "http://a.example/old".into(),
                status: 301,
            },
            Hop {
                url: "http://a.example/mid".into(),
                status: 302,
            },
        ];
        r.final_url = Some("http://a.example/new".into());
        let f = detector().compare(
            &task("T", "http://a.example/"),
            NOW,
            None,
            &snapshot(r, None),
        );
        assert_eq!(
            kinds(&f),
            [("moved", "moved to http://a.example/new (301, 2 redirects)")]
        );
    }

    #[test]
    fn broken_says_why_and_whether_it_is_new() {
        let mut r = result("http://a.example/gone", Category::Broken);
        r.error = Some("HTTP 404 Not Found".into());
        let t = task("T", "http://a.example/");
        let ok_before = snapshot(result("http://a.example/gone", Category::Ok), None);
        let broken_before = snapshot(r.clone(), None);
        let mut d = detector();
        let cur = snapshot(r, None);
        assert_eq!(
            kinds(&d.compare(&t, NOW, None, &cur)),
            [("broken", "broken: HTTP 404 Not Found")]
        );
        assert_eq!(
            kinds(&d.compare(&t, NOW, Some(&ok_before), &cur)),
            [(
                "broken",
                "broken: HTTP 404 Not Found; new since the previous run"
            )]
        );
        assert_eq!(
            kinds(&d.compare(&t, NOW, Some(&broken_before), &cur)),
            [(
                "broken",
                "broken: HTTP 404 Not Found; broken in the previous run too"
            )]
        );
    }

    #[test]
    fn recently_modified_within_the_tasks_days_only() {
        let t = task("T", "http://a.example/"); // changed_days = 7
        let mut d = detector();
        let mut r = result("http://a.example/x", Category::Ok);
        r.last_modified = Some(dates::format(NOW - 3 * DAY));
        assert_eq!(
            kinds(&d.compare(&t, NOW, None, &snapshot(r.clone(), None))),
            [(
                "recently-modified",
                "modified 3 days ago (Thu, 03 Nov 1994 08:49:37 GMT)"
            )]
        );
        r.last_modified = Some(dates::format(NOW - 8 * DAY));
        assert!(
            d.compare(&t, NOW, None, &snapshot(r.clone(), None))
                .is_empty()
        );
        r.last_modified = Some("not a date".into());
        assert!(d.compare(&t, NOW, None, &snapshot(r, None)).is_empty());
    }

    #[test]
    fn expiring_for_the_tasks_own_documents_with_or_without_an_owner() {
        let t = task("T", "http://a.example/"); // expiring_days = 7
        let mut d = detector();
        let mut r = result("http://a.example/x", Category::Ok);
        let mut doc = document("http://a.example/x", "X", &[]);
        doc.expires = Some(dates::format(NOW + 2 * DAY));
        // A document of a Site or Tree task is the owner's, named or not
        // (before, only a page with an Owner was).
        assert_eq!(
            kinds(&d.compare(&t, NOW, None, &snapshot(r.clone(), Some(doc.clone())))),
            [(
                "expiring",
                "expires in 2 days (Tue, 08 Nov 1994 08:49:37 GMT)"
            )]
        );
        // A leaf is someone else's, even with an Owner header.
        let mut leaf = r.clone();
        leaf.expires = doc.expires.clone();
        leaf.owner = Some("someone".into());
        assert!(d.compare(&t, NOW, None, &snapshot(leaf, None)).is_empty());
        // The header counts when the page has no meta.
        r.expires = doc.expires.take();
        assert_eq!(
            kinds(&d.compare(&t, NOW, None, &snapshot(r.clone(), Some(doc.clone())))),
            [(
                "expiring",
                "expires in 2 days (Tue, 08 Nov 1994 08:49:37 GMT)"
            )]
        );
        doc.expires = Some(dates::format(NOW + 2 * DAY));
        doc.owner = Some("fielding".into());
        assert_eq!(
            kinds(&d.compare(&t, NOW, None, &snapshot(r.clone(), Some(doc.clone())))),
            [(
                "expiring",
                "expires in 2 days (Tue, 08 Nov 1994 08:49:37 GMT); owner fielding"
            )]
        );
        doc.expires = Some(dates::format(NOW - DAY));
        assert_eq!(
            kinds(&d.compare(&t, NOW, None, &snapshot(r.clone(), Some(doc.clone())))),
            [(
                "expiring",
                "expired 1 day ago (Sat, 05 Nov 1994 08:49:37 GMT); owner fielding"
            )]
        );
        doc.expires = Some(dates::format(NOW + 30 * DAY));
        assert!(
            d.compare(&t, NOW, None, &snapshot(r.clone(), Some(doc.clone())))
                .is_empty()
        );
        // Calendar days: 24 hours from now is tomorrow (it said "in 0
        // days"), an hour from now is today, an hour ago expired today.
        for (at, said) in [
            (
                NOW + DAY,
                "expires in 1 day (Mon, 07 Nov 1994 08:49:37 GMT); owner fielding",
            ),
            (
                NOW + 3_600,
                "expires today (Sun, 06 Nov 1994 09:49:37 GMT); owner fielding",
            ),
            (
                NOW - 3_600,
                "expired today (Sun, 06 Nov 1994 07:49:37 GMT); owner fielding",
            ),
        ] {
            doc.expires = Some(dates::format(at));
            assert_eq!(
                kinds(&d.compare(&t, NOW, None, &snapshot(r.clone(), Some(doc.clone())))),
                [("expiring", said)]
            );
        }
    }

    #[test]
    fn modified_on_yesterdays_calendar_day_is_a_day_ago() {
        let t = task("T", "http://a.example/");
        let mut d = detector();
        let mut r = result("http://a.example/x", Category::Ok);
        // NOW is 08:49:37; 09:00 yesterday is under 24 hours ago.
        r.last_modified = Some("Sat, 05 Nov 1994 09:00:00 GMT".into());
        assert_eq!(
            kinds(&d.compare(&t, NOW, None, &snapshot(r.clone(), None))),
            [(
                "recently-modified",
                "modified 1 day ago (Sat, 05 Nov 1994 09:00:00 GMT)"
            )]
        );
        r.last_modified = Some("Sun, 06 Nov 1994 00:10:00 GMT".into());
        assert_eq!(
            kinds(&d.compare(&t, NOW, None, &snapshot(r, None))),
            [(
                "recently-modified",
                "modified today (Sun, 06 Nov 1994 00:10:00 GMT)"
            )]
        );
    }

    #[test]
    fn content_changed_compares_hashes() {
        let t = task("T", "http://a.example/");
        let mut d = detector();
        let mut before = result("http://a.example/x", Category::Ok);
        before.content_hash = Some("aa".into());
        let mut now = before.clone();
        assert!(
            d.compare(
                &t,
                NOW,
                Some(&snapshot(before.clone(), None)),
                &snapshot(now.clone(), None)
            )
            .is_empty()
        );
        now.content_hash = Some("bb".into());
        assert_eq!(
            kinds(&d.compare(&t, NOW, Some(&snapshot(before, None)), &snapshot(now, None))),
            [("content-changed", "content changed since the previous run")]
        );
    }

    #[test]
    fn kinds_can_be_turned_off_and_unknown_settings_are_refused() {
        let mut d = Maintenance::configure(serde_json::json!({"broken": false})).unwrap();
        let r = result("http://a.example/gone", Category::Broken);
        assert!(
            d.compare(
                &task("T", "http://a.example/"),
                NOW,
                None,
                &snapshot(r, None)
            )
            .is_empty()
        );
        assert_eq!(
            Maintenance::configure(serde_json::json!({"brokn": true})).unwrap_err(),
            "maintenance: unknown setting `brokn`; the settings are moved, broken, recently_modified, expiring, content_changed, blocked"
        );
        assert_eq!(
            Maintenance::configure(serde_json::json!({"moved": "yes"})).unwrap_err(),
            "maintenance: `moved` must be true or false, not \"yes\""
        );
    }
}
