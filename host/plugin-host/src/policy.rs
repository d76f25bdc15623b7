//! Running a policy plugin: a further say on whether a URL a task reaches
//! is traversed, tested as a leaf, or avoided.

use super::bindings::policy::exports::spinneret::plugin::policy_api::{
    Candidate, Context, ContextUse, Decision,
};
use super::bindings::policy::{Policy, PolicyPre};
use super::bindings::since_v0_2_0::policy::exports::spinneret::plugin::policy_api as v2;
use super::bindings::since_v0_2_0::policy::{Policy as Policy2, PolicyPre as PolicyPre2};
use super::bindings::since_v0_3_0::policy::exports::spinneret::plugin::policy_api as v3;
use super::bindings::since_v0_3_0::policy::{Policy as Policy3, PolicyPre as PolicyPre3};
use super::bindings::since_v0_4_0::policy::exports::spinneret::plugin::policy_api as v4;
use super::bindings::since_v0_4_0::policy::{Policy as Policy4, PolicyPre as PolicyPre4};
use super::runner::{Versioned, by_version, same_flags, world};
use super::sandbox::{PluginFailure, Sandbox};

pub use super::bindings::policy::exports::spinneret::plugin::policy_api::{
    Candidate as PolicyCandidate, Context as PolicyContext, ContextUse as PolicyContextUse,
    Decision as PolicyDecision,
};

world!(Policy, PolicyPre, spinneret_plugin_policy_api);
world!(Policy2, PolicyPre2, spinneret_plugin_policy_api);
world!(Policy3, PolicyPre3, spinneret_plugin_policy_api);
world!(Policy4, PolicyPre4, spinneret_plugin_policy_api);

/// A policy ready to run.
pub struct PolicyPlugin(Versioned<Policy2, Policy3, Policy4, Policy>);

impl PolicyPlugin {
    /// Prepare a policy from a compiled component.
    pub fn new(
        sandbox: Sandbox,
        component: &wasmtime::component::Component,
    ) -> wasmtime::Result<PolicyPlugin> {
        Versioned::new(sandbox, component).map(PolicyPlugin)
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        self.0.sandbox().name()
    }

    /// Instantiate and configure it: whether it accepts its configuration.
    pub fn start(&mut self) -> Result<(), PluginFailure> {
        self.0.start()
    }

    /// Which parts of the context its verdicts depend on.
    pub fn context_use(&mut self) -> Result<ContextUse, PluginFailure> {
        by_version!(
            &mut self.0,
            [v2],
            [v3],
            [v4],
            |r, old| {
                let used = r.call("declare", |b, s| {
                    b.spinneret_plugin_policy_api().call_declare(s)
                })?;
                Ok(same_flags!(used, old::ContextUse => ContextUse: TASK, REFERRER, DEPTH))
            },
            |r| r.call("declare", |b, s| {
                b.spinneret_plugin_policy_api().call_declare(s)
            }),
        )
    }

    /// Decide for each of `candidates`, found in `context`: one decision
    /// per candidate, in order (an answer of another length is a failure).
    pub fn decide(
        &mut self,
        context: &Context,
        candidates: &[Candidate],
    ) -> Result<Vec<Decision>, PluginFailure> {
        let decisions = by_version!(
            &mut self.0,
            [v2],
            [v3],
            [v4],
            |r, old| {
                let context = old::Context {
                    task: context.task.clone(),
                    referrer: context.referrer.clone(),
                    depth: context.depth,
                };
                let candidates: Vec<old::Candidate> = candidates
                    .iter()
                    .map(|c| old::Candidate {
                        target: c.target.clone(),
                        kind: c.kind,
                    })
                    .collect();
                r.call("decide", |b, s| {
                    b.spinneret_plugin_policy_api()
                        .call_decide(s, &context, &candidates)
                })?
                .into_iter()
                .map(|d| match d {
                    old::Decision::NoObjection => Decision::NoObjection,
                    old::Decision::Leaf(why) => Decision::Leaf(why),
                    old::Decision::Avoid(why) => Decision::Avoid(why),
                })
                .collect()
            },
            |r| r.call("decide", |b, s| {
                b.spinneret_plugin_policy_api()
                    .call_decide(s, context, candidates)
            })?,
        );
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
