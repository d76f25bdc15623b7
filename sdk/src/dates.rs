//! HTTP dates (`Sun, 06 Nov 1994 08:49:37 GMT`), as headers and `<meta>` carry them.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Parse an HTTP date (RFC 1123, RFC 850 or asctime) into Unix seconds.
pub fn parse(date: &str) -> Option<i64> {
    let t = httpdate::parse_http_date(date.trim()).ok()?;
    Some(match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    })
}

/// Format Unix seconds as an HTTP date.
pub fn format(unix: i64) -> String {
    let t = if unix >= 0 {
        UNIX_EPOCH + Duration::from_secs(unix as u64)
    } else {
        UNIX_EPOCH - Duration::from_secs(unix.unsigned_abs())
    };
    httpdate::fmt_http_date(t)
}

/// Whole days from `from` to `to` (negative when `to` is earlier).
pub fn days_between(from: i64, to: i64) -> i64 {
    (to - from).div_euclid(86_400)
}

/// The current time as an HTTP date (natively: the system clock).
pub fn now_http() -> String {
    httpdate::fmt_http_date(SystemTime::now())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        assert_eq!(parse("Sun, 06 Nov 1994 08:49:37 GMT"), Some(784_111_777));
        assert_eq!(format(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(parse("not a date"), None);
        assert_eq!(days_between(0, 86_400 * 3 + 5), 3);
        assert_eq!(days_between(86_400, 0), -1);
    }
}
