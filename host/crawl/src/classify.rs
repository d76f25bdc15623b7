//! What to do once a request has been answered (or has failed): try it
//! again, ask again with GET, follow a redirect, take the earlier result
//! (304 Not Modified), or record it. A pure decision over the job's state,
//! the answer and the run's limits, so that every case is a line of a
//! table test; the engine carries it out.

use crate::fetch::retry::{backoff, head_needs_get, is_retryable_status, parse_retry_after};
use crate::fetch::{FetchError, Method};
use spinneret_core::model::{AcceptedStatuses, Category};
use std::time::{Duration, SystemTime};

/// Where the job stands when its answer comes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct JobState {
    /// The method of the request just answered.
    pub method: Method,
    /// Attempts at this hop so far (0: the first).
    pub attempt: u32,
    /// Whether GET already stands in for a refused HEAD.
    pub head_fallback: bool,
    /// Whether the request was a redirect hop (not the URL itself).
    pub redirected: bool,
    /// Whether it was a conditional request (the URL had validators).
    pub conditional: bool,
    /// Whether the URL is a local file (`file://`), whose statuses stand
    /// for what the file system said and are worded so.
    pub local: bool,
}

/// What came back.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Answer<'a> {
    /// No response: the fetch failed (or a hook vetoed it).
    Failed(&'a FetchError),
    /// A response.
    Response {
        /// Its status.
        status: u16,
        /// Its `Retry-After`, if sent.
        retry_after: Option<&'a str>,
        /// Its `Location`, if sent.
        location: Option<&'a str>,
        /// What a fetch hook made of it (a soft 404, say): the category
        /// and the reason, which stand instead of the status's.
        reclassified: Option<(Category, &'a str)>,
    },
}

/// The run's limits on retrying.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    /// Retries of a failed or rate-limited request.
    pub retries: u32,
    /// The longest `Retry-After` waited for.
    pub max_retry_after: Duration,
    /// Statuses counted as ok beside 2xx (never retried).
    pub accepted: AcceptedStatuses,
}

/// What the engine does next with the job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// Try the same request again after `wait`; with `hold_site`, the
    /// whole site waits (the server asked for it).
    Retry {
        /// How long to wait.
        wait: Duration,
        /// Whether the site's other requests wait too.
        hold_site: bool,
    },
    /// HEAD was refused: ask with GET (without reading the body).
    FallbackGet,
    /// Follow the redirect to this `Location`.
    Redirect(String),
    /// The earlier result stands (304 to a conditional request); if there
    /// is none after all, record `otherwise`.
    NotModified {
        /// The category and reason to record without an earlier result.
        otherwise: (Category, Option<String>),
    },
    /// Record it with this category and reason.
    Done(Category, Option<String>),
}

/// What to do with a job in state `job` given `answer`, at `now`.
pub(crate) fn classify(job: JobState, answer: Answer<'_>, limits: Limits, now: SystemTime) -> Next {
    let (status, retry_after, location, reclassified) = match answer {
        Answer::Failed(FetchError::Vetoed(reason)) => {
            return Next::Done(Category::Avoided, Some(reason.clone()));
        }
        Answer::Failed(FetchError::AddressRule(reason)) => {
            return Next::Done(Category::NotChecked, Some(reason.clone()));
        }
        Answer::Failed(e) => {
            if e.is_retryable() && job.attempt < limits.retries {
                return Next::Retry {
                    wait: backoff(job.attempt + 1),
                    hold_site: false,
                };
            }
            let reason = match job.attempt {
                0 => e.to_string(),
                n => format!("{e} (after {} attempts)", n + 1),
            };
            return Next::Done(Category::Broken, Some(reason));
        }
        Answer::Response {
            status,
            retry_after,
            location,
            reclassified,
        } => (status, retry_after, location, reclassified),
    };
    if job.method == Method::Head && head_needs_get(status) && !job.head_fallback {
        return Next::FallbackGet;
    }
    // Why a retryable answer was not retried, when the server asked too much.
    let mut gave_up = None;
    if is_retryable_status(status)
        && !limits.accepted.contains(status)
        && job.attempt < limits.retries
    {
        match retry_after.and_then(|v| parse_retry_after(v, now)) {
            Some(w) if w > limits.max_retry_after => {
                gave_up = Some(format!(
                    "; gave up: Retry-After asked for {}, more than max_retry_after ({})",
                    humantime::format_duration(w),
                    humantime::format_duration(limits.max_retry_after)
                ));
            }
            Some(wait) => {
                return Next::Retry {
                    wait,
                    hold_site: true,
                };
            }
            None => {
                return Next::Retry {
                    wait: backoff(job.attempt + 1),
                    hold_site: true,
                };
            }
        }
    }
    if (300..400).contains(&status)
        && status != 304
        && let Some(location) = location
    {
        return Next::Redirect(location.to_string());
    }
    let done = match reclassified {
        Some((category, reason)) => (category, Some(reason.to_string())),
        None => {
            let category = Category::of_status(status, job.redirected, limits.accepted);
            let error = (!matches!(category, Category::Ok | Category::Moved))
                .then(|| match job.local {
                    true => file_status_text(status),
                    false => status_text(status),
                } + gave_up.as_deref().unwrap_or_default());
            (category, error)
        }
    };
    if status == 304 && job.conditional && !job.redirected {
        return Next::NotModified { otherwise: done };
    }
    Next::Done(done.0, done.1)
}

/// A status as the reports say it: `HTTP 404 Not Found`.
pub(crate) fn status_text(status: u16) -> String {
    match reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
    {
        Some(reason) => format!("HTTP {status} {reason}"),
        None => format!("HTTP {status}"),
    }
}

/// What a `file://` URL's status stands for, as the reports say it: the
/// file fetcher answers 404 for a missing file, 403 for one it may not
/// read and 400 for a URL that names no local path.
pub(crate) fn file_status_text(status: u16) -> String {
    match status {
        404 => "file not found".to_string(),
        403 => "permission denied".to_string(),
        400 => "not a local file path".to_string(),
        other => status_text(other),
    }
}

/// What a URL a task reached is to that task, once checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A document of the task's infostructure: its references are followed.
    Document,
    /// A leaf: checked, not traversed.
    Leaf,
    /// Not requested (avoided, or not checked).
    Unrequested,
}

/// What checking found of a URL, as far as a task's role for it goes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Checked<T> {
    /// Its category.
    pub category: Category,
    /// Whether the task wants it as a document (a document candidate).
    pub wants_document: bool,
    /// When it was parsed as HTML: whether it belongs to the task (its top,
    /// or owned by the task's owner).
    pub parsed: Option<bool>,
    /// Where it redirects, when it is moved.
    pub moved_to: Option<T>,
}

/// The task's role for a checked URL, and where its traversal goes on
/// when a document candidate turned out to be moved (its target).
pub(crate) fn role_of<T>(c: Checked<T>) -> (Role, Option<T>) {
    if matches!(c.category, Category::Avoided | Category::NotChecked) {
        return (Role::Unrequested, None);
    }
    if !c.wants_document {
        return (Role::Leaf, None);
    }
    match (c.parsed, c.moved_to) {
        (Some(true), _) => (Role::Document, None),
        (None, Some(target)) if c.category == Category::Moved => (Role::Leaf, Some(target)),
        _ => (Role::Leaf, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GET: JobState = JobState {
        method: Method::Get,
        attempt: 0,
        head_fallback: false,
        redirected: false,
        conditional: false,
        local: false,
    };
    const HEAD: JobState = JobState {
        method: Method::Head,
        ..GET
    };
    const LIMITS: Limits = Limits {
        retries: 2,
        max_retry_after: Duration::from_secs(60),
        accepted: AcceptedStatuses::NONE,
    };

    fn status(status: u16) -> Answer<'static> {
        Answer::Response {
            status,
            retry_after: None,
            location: None,
            reclassified: None,
        }
    }

    fn done(category: Category, reason: Option<&str>) -> Next {
        Next::Done(category, reason.map(str::to_string))
    }

    fn retry(secs_ms: u64, hold_site: bool) -> Next {
        Next::Retry {
            wait: Duration::from_millis(secs_ms),
            hold_site,
        }
    }

    /// A case of the table tests: what it shows, the job, the answer to
    /// it, and what that answer should lead to.
    type Case<'a> = (&'a str, JobState, Answer<'a>, Next);

    /// The moment the table tests classify at.
    fn table_now() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000)
    }

    /// A response with this status, `Retry-After` and `Location`.
    fn response<'a>(
        status: u16,
        retry_after: Option<&'a str>,
        location: Option<&'a str>,
    ) -> Answer<'a> {
        Answer::Response {
            status,
            retry_after,
            location,
            reclassified: None,
        }
    }

    /// Classify each case's answer at [`table_now`] within [`LIMITS`]; it
    /// must lead where the case says.
    fn check_cases(table: Vec<Case<'_>>) {
        for (case, job, answer, want) in table {
            assert_eq!(classify(job, answer, LIMITS, table_now()), want, "{case}");
        }
    }

    #[test]
    fn statuses_are_classified() {
        check_cases(vec![
            ("200 is ok", GET, status(200), done(Category::Ok, None)),
            (
                "404 is broken, with the status's reason",
                GET,
                status(404),
                done(Category::Broken, Some("HTTP 404 Not Found")),
            ),
            (
                "403 is blocked",
                GET,
                status(403),
                done(Category::Blocked, Some("HTTP 403 Forbidden")),
            ),
            (
                "a missing local file says so",
                JobState { local: true, ..GET },
                status(404),
                done(Category::Broken, Some("file not found")),
            ),
            (
                "an unreadable local file is blocked",
                JobState { local: true, ..GET },
                status(403),
                done(Category::Blocked, Some("permission denied")),
            ),
            (
                "an unknown status keeps its number",
                GET,
                status(599),
                done(Category::Broken, Some("HTTP 599")),
            ),
        ]);
    }

    #[test]
    fn failures_are_retried_until_the_retries_are_used_up() {
        let timeout = FetchError::Timeout(Duration::from_secs(5));
        let refused = FetchError::Connect("refused".into());
        let other = FetchError::Other("builder".into());
        let nxdomain = FetchError::NoSuchHost("Name or service not known".into());
        let vetoed = FetchError::Vetoed("hook said no".into());
        let second = JobState { attempt: 1, ..GET };
        let last = JobState { attempt: 2, ..GET };
        check_cases(vec![
            (
                "a timeout is retried after the first backoff",
                GET,
                Answer::Failed(&timeout),
                retry(500, false),
            ),
            (
                "the second retry waits twice as long",
                second,
                Answer::Failed(&refused),
                retry(1000, false),
            ),
            (
                "retries used up: broken, saying how many attempts",
                last,
                Answer::Failed(&timeout),
                done(
                    Category::Broken,
                    Some("timed out after 5s (after 3 attempts)"),
                ),
            ),
            (
                "an error that retrying cannot mend is broken at once",
                GET,
                Answer::Failed(&other),
                done(Category::Broken, Some("request failed: builder")),
            ),
            (
                "a name DNS says does not exist is broken at once",
                GET,
                Answer::Failed(&nxdomain),
                done(
                    Category::Broken,
                    Some("no such host: Name or service not known"),
                ),
            ),
            (
                "a hook's veto is avoided, with its reason",
                GET,
                Answer::Failed(&vetoed),
                done(Category::Avoided, Some("hook said no")),
            ),
        ]);
    }

    #[test]
    fn a_head_refused_with_405_is_asked_once_with_get() {
        check_cases(vec![
            (
                "HEAD refused with 405: ask with GET",
                HEAD,
                status(405),
                Next::FallbackGet,
            ),
            (
                "HEAD refused again after the fallback: recorded",
                JobState {
                    head_fallback: true,
                    ..HEAD
                },
                status(405),
                done(Category::Broken, Some("HTTP 405 Method Not Allowed")),
            ),
            (
                "GET answered 405 is not asked again",
                GET,
                status(405),
                done(Category::Broken, Some("HTTP 405 Method Not Allowed")),
            ),
        ]);
    }

    #[test]
    fn rate_limits_hold_the_site_for_their_retry_after() {
        let later = httpdate::fmt_http_date(table_now() + Duration::from_secs(7));
        let last = JobState { attempt: 2, ..GET };
        check_cases(vec![
            (
                "429 without Retry-After: backoff, the whole site waits",
                GET,
                status(429),
                retry(500, true),
            ),
            (
                "503 with Retry-After in seconds",
                GET,
                response(503, Some("3"), None),
                retry(3000, true),
            ),
            (
                "429 with Retry-After as a date",
                GET,
                response(429, Some(&later), None),
                retry(7000, true),
            ),
            (
                "Retry-After beyond max_retry_after: given up, saying why",
                GET,
                response(429, Some("3600"), None),
                done(
                    Category::Blocked,
                    Some(
                        "HTTP 429 Too Many Requests; gave up: Retry-After asked for 1h, more than max_retry_after (1m)",
                    ),
                ),
            ),
            (
                "429 after the last retry: recorded",
                last,
                status(429),
                done(Category::Blocked, Some("HTTP 429 Too Many Requests")),
            ),
        ]);
    }

    #[test]
    fn redirects_are_followed_and_end_moved_or_broken() {
        let hop = JobState {
            redirected: true,
            ..GET
        };
        check_cases(vec![
            (
                "301 with Location is followed",
                GET,
                response(301, None, Some("/new")),
                Next::Redirect("/new".into()),
            ),
            (
                "a 302 without Location is broken",
                GET,
                status(302),
                done(Category::Broken, Some("HTTP 302 Found")),
            ),
            (
                "a 200 at the end of a redirect chain is moved",
                hop,
                status(200),
                done(Category::Moved, None),
            ),
            (
                "a 404 at the end of a redirect chain is broken",
                hop,
                status(404),
                done(Category::Broken, Some("HTTP 404 Not Found")),
            ),
        ]);
    }

    #[test]
    fn a_304_to_a_conditional_request_keeps_the_earlier_result() {
        let conditional = JobState {
            conditional: true,
            ..GET
        };
        check_cases(vec![
            (
                "304 to a conditional request: the earlier result stands",
                conditional,
                status(304),
                Next::NotModified {
                    otherwise: (Category::Ok, None),
                },
            ),
            (
                "304 with a Location is still not a redirect",
                conditional,
                response(304, None, Some("/x")),
                Next::NotModified {
                    otherwise: (Category::Ok, None),
                },
            ),
        ]);
    }

    #[test]
    fn a_hooks_reclassification_stands_instead_of_the_status() {
        check_cases(vec![(
            "a hook's reclassification stands instead of the status",
            GET,
            Answer::Response {
                status: 200,
                retry_after: None,
                location: None,
                reclassified: Some((Category::Broken, "soft 404")),
            },
            done(Category::Broken, Some("soft 404")),
        )]);
    }

    #[test]
    fn accepted_statuses_are_ok_and_not_retried() {
        let mut accepted = AcceptedStatuses::NONE;
        accepted.add_list("403, 503").unwrap();
        let limits = Limits { accepted, ..LIMITS };
        let now = SystemTime::UNIX_EPOCH;
        for code in [403, 503] {
            assert_eq!(
                classify(GET, status(code), limits, now),
                Next::Done(Category::Ok, None),
                "{code}"
            );
            let redirected = JobState {
                redirected: true,
                ..GET
            };
            assert_eq!(
                classify(redirected, status(code), limits, now),
                Next::Done(Category::Moved, None),
                "{code} after a redirect"
            );
        }
        assert_eq!(
            classify(GET, status(404), limits, now),
            Next::Done(Category::Broken, Some("HTTP 404 Not Found".into()))
        );
        assert!(matches!(
            classify(GET, status(503), LIMITS, now),
            Next::Retry { .. }
        ));
    }

    #[test]
    fn no_retries_configured_means_none() {
        let limits = Limits {
            retries: 0,
            ..LIMITS
        };
        let now = SystemTime::UNIX_EPOCH;
        let timeout = FetchError::Timeout(Duration::from_secs(1));
        assert_eq!(
            classify(GET, Answer::Failed(&timeout), limits, now),
            done(Category::Broken, Some("timed out after 1s"))
        );
        assert_eq!(
            classify(GET, status(503), limits, now),
            done(Category::Broken, Some("HTTP 503 Service Unavailable"))
        );
    }

    #[test]
    fn the_role_of_a_checked_url() {
        let checked = |category, wants_document, parsed, moved_to| Checked {
            category,
            wants_document,
            parsed,
            moved_to,
        };
        let table = [
            (
                "a parsed candidate of the task is a document",
                checked(Category::Ok, true, Some(true), None),
                (Role::Document, None),
            ),
            (
                "a parsed page of another owner is a leaf",
                checked(Category::Ok, true, Some(false), None),
                (Role::Leaf, None),
            ),
            (
                "a candidate that is not HTML is a leaf",
                checked(Category::Ok, true, None, None),
                (Role::Leaf, None),
            ),
            (
                "a moved candidate is a leaf, and its target is reached",
                checked(Category::Moved, true, None, Some(7)),
                (Role::Leaf, Some(7)),
            ),
            (
                "a moved leaf's target is not reached",
                checked(Category::Moved, false, None, Some(7)),
                (Role::Leaf, None),
            ),
            (
                "a broken candidate is a leaf",
                checked(Category::Broken, true, None, None),
                (Role::Leaf, None),
            ),
            (
                "an avoided candidate was not requested",
                checked(Category::Avoided, true, None, None),
                (Role::Unrequested, None),
            ),
            (
                "a reference not checked was not requested",
                checked(Category::NotChecked, false, None, None),
                (Role::Unrequested, None),
            ),
        ];
        for (case, c, want) in table {
            assert_eq!(role_of(c), want, "{case}");
        }
    }
}
