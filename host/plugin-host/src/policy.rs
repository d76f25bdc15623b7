//! Running a policy plugin: a further say on whether a URL a task reaches
//! is traversed, tested as a leaf, or avoided.

use super::bindings::policy::exports::spinneret::plugin::policy_api::{
    Candidate, Context, ContextUse, Decision,
};
use super::bindings::policy::{Policy, PolicyPre};
use super::runner::{Runner, world};
use super::sandbox::{PluginFailure, Sandbox};

pub use super::bindings::policy::exports::spinneret::plugin::policy_api::{
    Candidate as PolicyCandidate, Context as PolicyContext, ContextUse as PolicyContextUse,
    Decision as PolicyDecision,
};

world!(Policy, PolicyPre, spinneret_plugin_policy_api);

/// A policy ready to run.
pub struct PolicyPlugin(Runner<Policy>);

impl PolicyPlugin {
    /// Prepare a policy from a compiled component.
    pub fn new(
        sandbox: Sandbox,
        component: &wasmtime::component::Component,
    ) -> wasmtime::Result<PolicyPlugin> {
        Runner::new(sandbox, component).map(PolicyPlugin)
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        self.0.sandbox().name()
    }

    /// Which parts of the context its verdicts depend on.
    pub fn context_use(&mut self) -> Result<ContextUse, PluginFailure> {
        self.0.call("declare", |b, s| {
            b.spinneret_plugin_policy_api().call_declare(s)
        })
    }

    /// Decide for each of `candidates`, found in `context`: one decision
    /// per candidate, in order (an answer of another length is a failure).
    pub fn decide(
        &mut self,
        context: &Context,
        candidates: &[Candidate],
    ) -> Result<Vec<Decision>, PluginFailure> {
        let decisions = self.0.call("decide", |b, s| {
            b.spinneret_plugin_policy_api()
                .call_decide(s, context, candidates)
        })?;
        if decisions.len() != candidates.len() {
            return Err(self.0.sandbox().failed(
                "decide",
                format!(
                    "answered {} decisions for {} candidates",
                    decisions.len(),
                    candidates.len()
                ),
            ));
        }
        Ok(decisions)
    }
}
