//! Why a crawl could not start or finish. A URL that cannot be checked is
//! never an error of the crawl: it is a result (broken, blocked, not
//! checked) and the crawl goes on. These are the failures that stop it:
//! the store, the rule files, the HTTP client. Everything checked before
//! one of them is stored.

use crate::policy::rules::RulesError;
use spinneret_store::StoreError;

/// A failure that stops a crawl.
#[derive(Debug, thiserror::Error)]
pub enum CrawlError {
    /// The store could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An avoid file or sites file could not be read (it says which, and where).
    #[error(transparent)]
    Rules(#[from] RulesError),
    /// The HTTP client could not be set up from the settings.
    #[error(transparent)]
    Client(#[from] spinneret_net::fetch::ClientError),
    /// A worker's lease on a site ran out and another worker took the site
    /// over: this one stops rather than request the site alongside it.
    #[error(
        "this worker's lease on the site {0} ran out and another worker took the site over (was this worker stalled, or the database unreachable, for longer than the lease?); it stops, and everything it checked is stored"
    )]
    LeaseLost(String),
    /// The store lost a batch of a worker's results.
    #[error(
        "the store lost a batch of this worker's results (the error is above); this worker stops and hands its sites back, so that the other workers check again what was lost; start it again to rejoin the run"
    )]
    WritesLost,
    /// The database of a shared run failed this worker.
    #[error(
        "the shared run's database failed ({0}); this worker stops after storing what it checked, and its sites go to the other workers (at once, or when its leases run out); start it again to rejoin the run"
    )]
    SharedRun(spinneret_store::StoreError),
    /// No task is named as `--task` asks (the tasks are listed).
    #[error("no task named `{name}`; the tasks are: {}", known.join(", "))]
    NoSuchTask {
        /// The name asked for.
        name: String,
        /// The tasks there are.
        known: Vec<String>,
    },
}
