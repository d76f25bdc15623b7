//! Where the crawl's plugin calls run. While handling completions the
//! engine gathers policy questions and responses for the fetch hooks to
//! screen; at the end of each turn of its loop they are sent together, in
//! one job: run on the engine's own thread while the plugins are quick,
//! else on the plugin thread (one trip there however many there are: each
//! trip wakes a thread).
//!
//! Running them on the engine's thread saves two thread wake-ups a trip,
//! which cost the crawl more than the calls themselves; it is done only
//! when the engine has a thread of its own ([`own_thread`]), and only while
//! the calls are quick: a turn whose calls take longer than
//! [`SLOW_PLUGIN_TURN`] sends them to the plugin thread for the rest of the
//! run, so that a slow plugin does not hold up dispatching.

use super::frontier::UrlIdx;
use super::hooks::CrawlHooks;
use super::worker::{self, Completion, PolicyAnswer, PolicyAsk, Reply, Screening};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;

/// How long the plugin calls of one turn of the engine may take before the
/// rest go to the plugin thread: the built-ins take a few microseconds a call.
pub(crate) const SLOW_PLUGIN_TURN: Duration = Duration::from_millis(20);

/// The crawl's fetch hooks, parsers and policies, and the calls of this turn.
pub(crate) struct PluginTurn {
    hooks: Option<Arc<CrawlHooks>>,
    /// Policy questions gathered this turn.
    asks: Vec<PolicyAsk>,
    /// Responses for the fetch hooks to see, gathered this turn.
    screenings: Vec<(Completion, Screening)>,
    /// Whether the calls run on the engine's thread.
    here: bool,
    /// How long the calls made on the engine's thread took this turn.
    took: Duration,
}

impl PluginTurn {
    /// The turn of `hooks` (none: the crawl has no plugin).
    pub(crate) fn new(hooks: Option<Arc<CrawlHooks>>) -> Self {
        PluginTurn {
            hooks: hooks.filter(|h| !h.is_empty()),
            asks: Vec::new(),
            screenings: Vec::new(),
            here: false,
            took: Duration::ZERO,
        }
    }

    /// The crawl starts on this thread: the calls run here if it is the
    /// engine's own.
    pub(crate) fn begin(&mut self) {
        self.here = self.hooks.is_some() && own_thread();
    }

    /// The plugins, if any.
    pub(crate) fn hooks(&self) -> Option<&Arc<CrawlHooks>> {
        self.hooks.as_ref()
    }

    /// Whether the crawl has policy plugins.
    pub(crate) fn has_policies(&self) -> bool {
        self.hooks.as_ref().is_some_and(|h| h.has_policies())
    }

    /// Whether the calls run on the engine's thread (else on the plugin thread).
    pub(crate) fn here(&self) -> bool {
        self.here
    }

    /// Make calls on the engine's thread now (a request hook at dispatch),
    /// counting the time they take against the turn.
    pub(crate) fn run_here<R>(&mut self, hooks: &CrawlHooks, call: impl FnOnce() -> R) -> R {
        let mut out = None;
        self.took += hooks.run_here(|| out = Some(call()));
        out.expect("run_here runs the call")
    }

    /// Ask the policies at the end of the turn.
    pub(crate) fn ask(&mut self, ask: PolicyAsk) {
        self.asks.push(ask);
    }

    /// Show the fetch hooks a response at the end of the turn; `fetch` is
    /// its completion, handed back to the engine once they have seen it.
    pub(crate) fn screen(&mut self, fetch: Completion, screening: Screening) {
        self.screenings.push((fetch, screening));
    }

    /// Send the turn's questions and responses in one job. The answers come
    /// back through `tx` as one [`Completion::Policies`] and a
    /// [`Completion::Fetch`] per response, each sent even if the job never
    /// runs. True when a [`Completion::Policies`] is to come (the engine
    /// counts it in flight).
    pub(crate) fn send(&mut self, tx: &UnboundedSender<Completion>) -> bool {
        if self.asks.is_empty() && self.screenings.is_empty() {
            return false;
        }
        let Some(hooks) = self.hooks.clone() else {
            return false;
        };
        let asked = std::mem::take(&mut self.asks);
        let policies = (!asked.is_empty()).then(|| {
            Reply::new(
                tx.clone(),
                Completion::Policies(worker::no_objections(&asked)),
            )
        });
        let answers_to_come = policies.is_some();
        // Each still in flight as the fetch it completes; sent back as they
        // are, without the hooks' verdict, if the job never runs.
        let screenings: Vec<(Reply, Screening)> = std::mem::take(&mut self.screenings)
            .into_iter()
            .map(|(fetch, s)| (Reply::new(tx.clone(), fetch), s))
            .collect();
        let on_thread = hooks.clone();
        let job = move || {
            for (mut reply, screening) in screenings {
                screening.screen(&on_thread, reply.completion());
            }
            let Some(mut reply) = policies else {
                return;
            };
            let answers = asked
                .into_iter()
                .map(|a| {
                    let asked: Vec<UrlIdx> = a.asks.iter().map(|q| q.0).collect();
                    let verdicts = on_thread.decide(a.info, Some(a.referrer), a.depth, a.asks);
                    PolicyAnswer {
                        task: a.task,
                        then: a.then,
                        verdicts: asked.into_iter().zip(verdicts).collect(),
                    }
                })
                .collect();
            *reply.completion() = Completion::Policies(answers);
        };
        match self.here {
            true => self.took += hooks.run_here(job),
            false => hooks.post(job),
        }
        answers_to_come
    }

    /// The turn is over: if the calls made on the engine's thread took
    /// longer than [`SLOW_PLUGIN_TURN`], they go to the plugin thread from now on.
    pub(crate) fn end(&mut self) {
        let took = std::mem::take(&mut self.took);
        if self.here && took > SLOW_PLUGIN_TURN {
            self.here = false;
            tracing::info!(
                "plugin calls took {} ms in one turn of the crawl; they run on the plugin thread from now on, so that they do not hold up dispatching",
                took.as_millis()
            );
        }
    }
}

/// Whether the caller has a thread of its own: the thread that called a
/// multi-threaded runtime's `block_on`, outside any task, which is none of
/// the runtime's workers (they run the reactor).
fn own_thread() -> bool {
    let flavor = tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor());
    matches!(flavor, Ok(tokio::runtime::RuntimeFlavor::MultiThread))
        && tokio::task::try_id().is_none()
}
