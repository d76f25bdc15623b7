//! Running a policy plugin: a further say on whether a URL a task reaches
//! is traversed, tested as a leaf, or avoided.

use super::bindings::host::types as wit;
use super::bindings::policy::exports::spinneret::plugin::policy_api::{Context, Decision};
use super::bindings::policy::{Policy, PolicyPre};
use super::sandbox::{PluginFailure, Sandbox};
use super::state::PluginState;
use wasmtime::Store;
use wasmtime::component::HasSelf;

pub use super::bindings::policy::exports::spinneret::plugin::policy_api::{
    Context as PolicyContext, Decision as PolicyDecision,
};

/// A policy ready to run.
pub struct PolicyPlugin {
    sandbox: Sandbox,
    pre: PolicyPre<PluginState>,
    live: Option<(Store<PluginState>, Policy)>,
}

impl PolicyPlugin {
    /// Prepare a policy from a compiled component.
    pub fn new(
        sandbox: Sandbox,
        component: &wasmtime::component::Component,
    ) -> anyhow::Result<PolicyPlugin> {
        let mut linker = sandbox.linker()?;
        Policy::add_to_linker::<PluginState, HasSelf<PluginState>>(&mut linker, |s| s)?;
        let pre = PolicyPre::new(linker.instantiate_pre(component)?)?;
        Ok(PolicyPlugin {
            sandbox,
            pre,
            live: None,
        })
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        self.sandbox.name()
    }

    /// Decide for `target` in `context`. After a trap the next call starts
    /// a fresh instance.
    pub fn decide(&mut self, target: &str, context: &Context) -> Result<Decision, PluginFailure> {
        let sb = self.sandbox.clone();
        if self.live.is_none() {
            let mut store = sb.store(None);
            let bindings = sb.call(&mut store, "instantiate", |s| self.pre.instantiate(s))?;
            sb.call(&mut store, "configure", |s| {
                bindings
                    .spinneret_plugin_policy_api()
                    .call_configure(s, sb.config())
            })?
            .map_err(|e: wit::PluginError| sb.failed("configure", e.message))?;
            self.live = Some((store, bindings));
        }
        let (store, bindings) = self.live.as_mut().expect("set above");
        let r = sb.call(store, "decide", |s| {
            bindings
                .spinneret_plugin_policy_api()
                .call_decide(s, &target.to_string(), context)
        });
        if r.is_err() {
            self.live = None;
        }
        r
    }
}
