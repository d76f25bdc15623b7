//! A store connection a long-lived server keeps for its pages (`serve`'s
//! reports and results, the library's pages and posts), connected again
//! when the database server has closed the one it had: after a restart,
//! or a session ended by an administrator, the next request is answered
//! instead of every request failing until the server is restarted too.

use crate::{Store, StoreError, StoreLocation};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// After a failed attempt to connect, how long calls fail at once instead
/// of trying again: with the database unreachable, requests queued behind
/// one another would otherwise each wait out a connection timeout in turn.
const RETRY_AFTER: Duration = Duration::from_secs(5);

/// One connection to a store, used by one caller at a time, checked before
/// each use and made again when it no longer answers.
pub struct HeldStore {
    location: StoreLocation,
    held: Mutex<Held>,
}

/// The connection, or when none could be made, when and why.
enum Held {
    Connected(Box<Store>),
    Failed(Instant, String),
}

impl HeldStore {
    /// Keep `store`'s connection, to be used through [`HeldStore::with`].
    pub fn new(store: Store) -> HeldStore {
        HeldStore {
            location: store.location().clone(),
            held: Mutex::new(Held::Connected(Box::new(store))),
        }
    }

    /// Run `f` with the connection, connecting again first when the one
    /// held no longer answers (a round trip on a database, which gives up
    /// after 5 s; nothing for a file). When that fails, `f` is not run and
    /// the error says why; calls in the next few seconds fail the same way
    /// at once, and the first after them tries again.
    pub fn with<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&mut Store) -> Result<T, E>,
    ) -> Result<T, E> {
        // A caller that panicked left the connection as it was: still usable
        // (a transaction it held open was rolled back with its guard).
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let answers = match &*held {
            Held::Connected(store) => store.answers(),
            Held::Failed(at, why) if at.elapsed() < RETRY_AFTER => {
                return Err(StoreError::Io(why.clone()).into());
            }
            Held::Failed(..) => false,
        };
        if !answers {
            if matches!(*held, Held::Connected(_)) {
                tracing::warn!(
                    "store: the connection to {} did not answer; connecting again",
                    self.location
                );
            }
            match Store::connect(self.location.clone()) {
                Ok(store) => *held = Held::Connected(Box::new(store)),
                Err(e) => {
                    let why = format!("cannot reach the store {}: {e}", self.location);
                    *held = Held::Failed(Instant::now(), why.clone());
                    return Err(StoreError::Io(why).into());
                }
            }
        }
        let Held::Connected(store) = &mut *held else {
            unreachable!("connected above");
        };
        f(store)
    }
}
