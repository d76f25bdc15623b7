//! Riding out a lost database connection: a restart of the PostgreSQL
//! server, or an outage of a few minutes, is waited out instead of ending
//! the process. A connection that finds itself lost is made again at once
//! (a connection the server closed while it was idle); when that fails,
//! again and again with exponential back-off and jitter, until the
//! database answers or the outage has lasted [`RideOut::bound`]. The
//! caller's statement or transaction is then run again, whole: only what
//! may safely be run twice is wrapped (reads, idempotent writes, and
//! transactions that are).
//!
//! The process says once on its log that it is waiting, and why, and once
//! that the database is back: however many of its connections wait (a
//! worker has four), one outage is one pair of messages, and the bound is
//! counted from the first connection that lost its database.

use crate::db::Conn;
use crate::{StoreError, StoreLocation};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How a connection waits for its database to come back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RideOut {
    /// How long an outage may last before the waiting ends in an error.
    pub bound: Duration,
    /// The longest pause between two attempts (the back-off doubles up
    /// to it): a worker keeps it well under its lease, so that it is back
    /// soon after the database is.
    pub most_between: Duration,
}

/// The first pause between two attempts.
const FIRST_PAUSE: Duration = Duration::from_millis(100);

/// The outage this process is in, if any.
struct Outage {
    since: Instant,
    /// Whether it was said on the log (a connection that comes back at
    /// once says nothing).
    said: bool,
}

static OUTAGE: Mutex<Option<Outage>> = Mutex::new(None);

fn outage() -> std::sync::MutexGuard<'static, Option<Outage>> {
    OUTAGE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Run `f` on `conn`; when it fails because the connection is lost, make
/// the connection again (waiting for the database as `ride` says), run
/// `after_reconnect` on the new connection first, and run `f` again. `f`
/// is told whether an earlier attempt of it was lost (its effect, if it
/// wrote, may or may not have been kept). Without `ride`, or on SQLite,
/// `f` runs once. `what` names the work, for the log.
pub(crate) fn retrying<T>(
    conn: &Conn,
    ride: Option<RideOut>,
    what: &str,
    after_reconnect: &dyn Fn(&Conn) -> Result<(), StoreError>,
    mut f: impl FnMut(&Conn, bool) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let mut again = false;
    loop {
        match f(conn, again) {
            Err(e) if ride.is_some() && conn.reconnects() && e.is_lost() => {
                let ride = ride.expect("checked");
                tracing::debug!("{what}: the database connection is lost ({e}); reconnecting");
                again = true;
                reconnect(conn, ride, after_reconnect)?;
            }
            answer => return answer,
        }
    }
}

/// Make `conn` again, waiting for the database with back-off until the
/// outage has lasted `ride.bound`.
pub(crate) fn reconnect(
    conn: &Conn,
    ride: RideOut,
    after_reconnect: &dyn Fn(&Conn) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    wait_until(ride, || {
        conn.reconnect().and_then(|()| after_reconnect(conn))
    })
}

/// Wait until the database `location` names answers: a worker started
/// while its database is down (a restart, an outage) waits for it, as a
/// running worker does, instead of failing at once; it says once that it
/// waits and why, and once that the database answers. A store file is
/// always there.
pub fn wait_for_database(location: &StoreLocation, ride: RideOut) -> Result<(), StoreError> {
    if !matches!(location, StoreLocation::Postgres(_)) {
        return Ok(());
    }
    match location.connect() {
        Err(e) if e.is_lost() => {}
        answer => return answer.map(drop),
    }
    wait_until(ride, || location.connect().map(drop))
}

/// Try `attempt` until it succeeds or fails for another reason than a
/// lost database, with jittered back-off, for at most `ride.bound` from
/// the start of this process's outage.
fn wait_until(
    ride: RideOut,
    mut attempt: impl FnMut() -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let since = {
        let mut outage = outage();
        outage
            .get_or_insert_with(|| Outage {
                since: Instant::now(),
                said: false,
            })
            .since
    };
    let mut pause = FIRST_PAUSE.min(ride.most_between);
    let mut last: String;
    loop {
        match attempt() {
            Ok(()) => {
                back();
                return Ok(());
            }
            Err(e) if e.is_lost() => last = e.to_string(),
            Err(e) => return Err(e),
        }
        waiting(&last, ride.bound);
        let left = ride.bound.saturating_sub(since.elapsed());
        if left.is_zero() {
            return Err(StoreError::Unreachable(format!(
                "the database did not answer for {} (the longest this process waits for it); the last attempt: {last}",
                seconds(ride.bound)
            )));
        }
        std::thread::sleep(jittered(pause).min(left));
        pause = (pause * 2).min(ride.most_between);
    }
}

/// Say, once an outage, that this process is waiting for its database.
fn waiting(why: &str, bound: Duration) {
    let mut outage = outage();
    if let Some(o) = outage.as_mut()
        && !o.said
    {
        o.said = true;
        tracing::warn!(
            "the database is unreachable ({why}); waiting up to {} for it to come back (reconnecting with back-off); nothing checked is lost meanwhile",
            seconds(bound)
        );
    }
}

/// The database answers again: the outage is over (said, if its start was).
fn back() {
    if let Some(o) = outage().take()
        && o.said
    {
        tracing::warn!(
            "the database answers again after {:.1} s; going on",
            o.since.elapsed().as_secs_f64()
        );
    }
}

/// A pause between `d / 2` and `d`, so that many processes that lost one
/// database do not all knock at once.
fn jittered(d: Duration) -> Duration {
    use std::hash::BuildHasher;
    let r = std::collections::hash_map::RandomState::new().hash_one(Instant::now());
    let half = d / 2;
    half + Duration::from_nanos(r % (half.as_nanos().max(1) as u64))
}

fn seconds(d: Duration) -> String {
    match d.as_secs() {
        s if s >= 60 && s % 60 == 0 => format!("{} min", s / 60),
        s if s >= 1 => format!("{s} s"),
        _ => format!("{} ms", d.as_millis()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_is_jittered_within_its_half() {
        for _ in 0..100 {
            let p = jittered(Duration::from_millis(400));
            assert!(p >= Duration::from_millis(200) && p < Duration::from_millis(400));
        }
    }

    #[test]
    fn a_wrong_statement_is_not_a_lost_connection() {
        assert!(!StoreError::NoRow("x".into()).is_lost());
        assert!(StoreError::Unreachable("x".into()).is_lost());
    }
}
