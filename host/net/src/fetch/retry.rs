//! What is worth retrying and how long to wait (one place decides).

use std::time::{Duration, SystemTime};

/// Statuses retried with backoff: rate limiting and temporary unavailability.
pub fn is_retryable_status(status: u16) -> bool {
    matches!(status, 429 | 503)
}

/// Statuses after a HEAD that a GET must confirm before a link is called
/// broken or blocked: every error but those retried (429 and 503, which
/// are waited out as the server asks). Servers refuse HEAD in many ways
/// (405, 501, 400, 500, and 404 or 403 from frameworks that route GET
/// alone), and a reader's browser sends GET.
pub fn head_needs_get(status: u16) -> bool {
    status >= 400 && !is_retryable_status(status)
}

/// Parse a `Retry-After` value: delta-seconds or an HTTP date.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = httpdate::parse_http_date(v).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Exponential backoff for attempt `n` (1-based): 0.5 s, 1 s, 2 s, … capped at 30 s.
pub fn backoff(attempt: u32) -> Duration {
    let ms = 500u64.saturating_mul(1u64 << attempt.saturating_sub(1).min(6));
    Duration::from_millis(ms.min(30_000))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_forms() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        assert_eq!(parse_retry_after("3", now), Some(Duration::from_secs(3)));
        let later = httpdate::fmt_http_date(now + Duration::from_secs(10));
        assert_eq!(
            parse_retry_after(&later, now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(parse_retry_after("soon", now), None);
    }

    #[test]
    fn a_head_error_is_confirmed_with_get() {
        for status in [400, 401, 403, 404, 405, 410, 500, 501, 502] {
            assert!(head_needs_get(status), "{status}");
        }
        for status in [200, 204, 301, 304, 429, 503] {
            assert!(!head_needs_get(status), "{status}");
        }
    }

    #[test]
    fn backoff_grows_and_caps() {
        assert_eq!(backoff(1), Duration::from_millis(500));
        assert_eq!(backoff(2), Duration::from_secs(1));
        assert_eq!(backoff(3), Duration::from_secs(2));
        assert_eq!(backoff(20), Duration::from_secs(30));
    }
}
