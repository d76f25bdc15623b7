//! When `spinneret watch` runs a task: every interval (`"6h"`), or daily
//! at a local time of day (`"02:30"`). A slot that passes while a run is
//! still going is skipped, never queued: a run is not started twice for
//! one slot.

use std::time::{Duration, SystemTime};

/// A task's schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// Every so often, the first run at once.
    Every(Duration),
    /// Every day at this local time (hour, minute).
    Daily(i8, i8),
}

impl std::fmt::Display for Schedule {
    /// As it is written: `every 6h`, `daily at 02:30`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Schedule::Every(d) => write!(f, "every {}", humantime::format_duration(*d)),
            Schedule::Daily(h, m) => write!(f, "daily at {h:02}:{m:02}"),
        }
    }
}

impl Schedule {
    /// Parse `"HH:MM"` (a local time of day) or a duration (`"30m"`, `"6h"`, `"1d"`).
    pub fn parse(s: &str) -> Result<Schedule, String> {
        let s = s.trim();
        if let Some((h, m)) = s.split_once(':') {
            let (Ok(h), Ok(m)) = (h.parse::<i8>(), m.parse::<i8>()) else {
                return Err(format!("`{s}` is not a time of day; write e.g. \"02:30\""));
            };
            if !(0..24).contains(&h) || !(0..60).contains(&m) {
                return Err(format!("`{s}` is not a time of day (00:00 to 23:59)"));
            }
            return Ok(Schedule::Daily(h, m));
        }
        let d = humantime::parse_duration(s).map_err(|e| {
            format!("`{s}` is neither an interval such as \"6h\" nor a time of day such as \"02:30\" ({e})")
        })?;
        if d < Duration::from_secs(1) {
            return Err(format!("`{s}` is too short an interval; give at least 1s"));
        }
        Ok(Schedule::Every(d))
    }

    /// When to run first, the watch having started at `now`.
    pub fn first(&self, now: SystemTime) -> SystemTime {
        match self {
            Schedule::Every(_) => now,
            Schedule::Daily(..) => self.next_after(None, now),
        }
    }

    /// The next slot after a run that started at `started`, later than
    /// `now` (slots that passed during the run are skipped).
    pub fn next_after(&self, started: Option<SystemTime>, now: SystemTime) -> SystemTime {
        match *self {
            Schedule::Every(d) => {
                let mut next = started.unwrap_or(now) + d;
                if next <= now {
                    let behind = now.duration_since(next).unwrap_or_default();
                    let skip = behind.as_nanos() / d.as_nanos() + 1;
                    next += d * skip as u32;
                }
                next
            }
            Schedule::Daily(h, m) => next_local_time(h, m, now),
        }
    }
}

/// The first instant after `now` whose local time is `h:m`.
fn next_local_time(h: i8, m: i8, now: SystemTime) -> SystemTime {
    let Ok(ts) = jiff::Timestamp::try_from(now) else {
        return now + Duration::from_secs(86_400);
    };
    let here = ts.to_zoned(jiff::tz::TimeZone::system());
    let at = |day: &jiff::Zoned| {
        day.with()
            .hour(h)
            .minute(m)
            .second(0)
            .subsec_nanosecond(0)
            .build()
            .ok()
    };
    let today = at(&here).filter(|t| t.timestamp() > ts);
    let slot = today.or_else(|| here.tomorrow().ok().and_then(|d| at(&d)));
    slot.map(|z| SystemTime::from(z.timestamp()))
        .unwrap_or(now + Duration::from_secs(86_400))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_parse_with_clear_errors() {
        assert_eq!(
            Schedule::parse("6h"),
            Ok(Schedule::Every(Duration::from_secs(6 * 3600)))
        );
        assert_eq!(Schedule::parse("02:30"), Ok(Schedule::Daily(2, 30)));
        assert!(
            Schedule::parse("25:00")
                .unwrap_err()
                .contains("00:00 to 23:59")
        );
        assert!(
            Schedule::parse("nightly")
                .unwrap_err()
                .contains("neither an interval")
        );
        assert!(Schedule::parse("0s").unwrap_err().contains("too short"));
    }

    #[test]
    fn an_overlapping_run_skips_the_slots_it_covered() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let every = Schedule::Every(Duration::from_secs(60));
        assert_eq!(every.first(t0), t0);
        // A run of 10 s: the next slot is a minute after its start.
        assert_eq!(
            every.next_after(Some(t0), t0 + Duration::from_secs(10)),
            t0 + Duration::from_secs(60)
        );
        // A run of 150 s covered the slots at 60 s and 120 s: the next is at 180 s, once.
        assert_eq!(
            every.next_after(Some(t0), t0 + Duration::from_secs(150)),
            t0 + Duration::from_secs(180)
        );
    }

    #[test]
    fn a_time_of_day_is_the_next_one_to_come() {
        let now = SystemTime::now();
        let next = Schedule::Daily(3, 15).next_after(None, now);
        let wait = next.duration_since(now).unwrap();
        assert!(wait > Duration::ZERO && wait <= Duration::from_secs(25 * 3600));
        let z = jiff::Timestamp::try_from(next)
            .unwrap()
            .to_zoned(jiff::tz::TimeZone::system());
        assert_eq!((z.hour(), z.minute(), z.second()), (3, 15, 0));
    }
}
