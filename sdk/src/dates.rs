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

/// Format Unix seconds as an ISO 8601 / RFC 3339 time in UTC
/// (`1994-11-06T08:49:37Z`), as XML and JSON formats write it.
pub fn format_iso8601(unix: i64) -> String {
    let (days, secs) = (unix.div_euclid(86_400), unix.rem_euclid(86_400));
    // The civil date of a day count (Howard Hinnant's days_from_civil, inverted).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// Calendar days (in UTC, as HTTP dates are written) from `from` to `to`,
/// negative when `to` is earlier: 0 on the same day, 1 from any time of
/// one day to any time of the next (23:59 to 00:01 included), whatever
/// the hours between.
pub fn days_between(from: i64, to: i64) -> i64 {
    to.div_euclid(86_400) - from.div_euclid(86_400)
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
        // Calendar days: yesterday 23:59 is a day ago at 00:01, and 24
        // hours from now is tomorrow.
        let midnight = 86_400 * 10;
        assert_eq!(days_between(midnight - 60, midnight + 60), 1);
        assert_eq!(days_between(midnight + 60, midnight + 86_000), 0);
        assert_eq!(days_between(midnight + 3_600, midnight + 3_600 + 86_400), 1);
    }

    #[test]
    fn iso8601_in_utc() {
        assert_eq!(format_iso8601(784_111_777), "1994-11-06T08:49:37Z");
        assert_eq!(format_iso8601(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_iso8601(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(format_iso8601(-1), "1969-12-31T23:59:59Z");
        assert_eq!(format_iso8601(1_795_996_800), "2026-11-30T00:00:00Z");
    }
}
