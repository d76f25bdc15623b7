//! A store connection a long-lived server keeps for its pages (`serve`'s
//! reports and results, the library's pages and posts), connected again
//! when the database server has closed the one it had: after a restart,
//! or a session ended by an administrator, the next request is answered
//! instead of every request failing until the server is restarted too.

use crate::{Store, StoreError, StoreLocation};
use std::sync::Mutex;

/// One connection to a store, used by one caller at a time, checked before
/// each use and made again when it no longer answers.
pub struct HeldStore {
    location: StoreLocation,
    held: Mutex<Option<Store>>,
}

impl HeldStore {
    /// Keep `store`'s connection, to be used through [`HeldStore::with`].
    pub fn new(store: Store) -> HeldStore {
        HeldStore {
            location: store.location().clone(),
            held: Mutex::new(Some(store)),
        }
    }

    /// Run `f` with the connection, connecting again first when the one
    /// held no longer answers (a round trip on a database; nothing for a
    /// file). When even that fails, `f` is not run and the error says why;
    /// the next call tries again.
    pub fn with<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&mut Store) -> Result<T, E>,
    ) -> Result<T, E> {
        // A caller that panicked left the connection as it was: still usable
        // (a transaction it held open was rolled back with its guard).
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        if !held.as_ref().is_some_and(Store::answers) {
            if held.take().is_some() {
                tracing::warn!(
                    "store: the connection to {} was closed; connecting again",
                    self.location
                );
            }
            *held = Some(Store::connect(self.location.clone())?);
        }
        f(held.as_mut().expect("connected above"))
    }
}
