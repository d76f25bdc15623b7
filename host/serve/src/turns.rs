//! Turns at the search: a few searches run at once, a bounded number wait
//! their turn, and past that a search is refused at once (503, "try
//! again") rather than queued without end behind the ones running.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Searches running and waiting.
pub(crate) struct Turns {
    running: Arc<Semaphore>,
    waiting: AtomicUsize,
    max_waiting: usize,
}

/// One waiting search, counted until its turn comes or it is dropped (its
/// client gone).
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Turns {
    /// At most `at_once` searches running and `max_waiting` waiting.
    pub(crate) fn new(at_once: usize, max_waiting: usize) -> Turns {
        Turns {
            running: Arc::new(Semaphore::new(at_once)),
            waiting: AtomicUsize::new(0),
            max_waiting,
        }
    }

    /// A turn, once one is free; `None` when too many wait already or the
    /// server is stopping. The turn is owned, so that it goes with the
    /// search onto its blocking thread and is given back only when the
    /// search is done, even if the request that asked is gone.
    pub(crate) async fn take(&self) -> Option<OwnedSemaphorePermit> {
        if let Ok(turn) = self.running.clone().try_acquire_owned() {
            return Some(turn);
        }
        let before = self.waiting.fetch_add(1, Ordering::SeqCst);
        let _counted = Waiting(&self.waiting);
        if before >= self.max_waiting {
            return None;
        }
        self.running.clone().acquire_owned().await.ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    fn poll<F: Future>(f: std::pin::Pin<&mut F>) -> Poll<F::Output> {
        f.poll(&mut Context::from_waker(Waker::noop()))
    }

    #[test]
    fn past_the_waiting_room_a_search_is_refused_and_a_gone_client_frees_its_place() {
        let turns = Turns::new(1, 1);
        let mut first = pin!(turns.take());
        let Poll::Ready(Some(running)) = poll(first.as_mut()) else {
            panic!("the first search runs at once");
        };
        let mut second = pin!(turns.take());
        assert!(poll(second.as_mut()).is_pending(), "the second waits");
        let mut third = pin!(turns.take());
        assert!(
            matches!(poll(third.as_mut()), Poll::Ready(None)),
            "the third is refused"
        );
        drop(running);
        let Poll::Ready(Some(second_runs)) = poll(second.as_mut()) else {
            panic!("the second runs once the first is done");
        };
        // A waiting search whose client went away leaves the room.
        let mut fourth = Box::pin(turns.take());
        assert!(poll(fourth.as_mut()).is_pending());
        drop(fourth);
        let mut fifth = pin!(turns.take());
        assert!(poll(fifth.as_mut()).is_pending(), "room to wait again");
        drop(second_runs);
        assert!(matches!(poll(fifth.as_mut()), Poll::Ready(Some(_))));
    }
}
