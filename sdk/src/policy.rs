//! Policies (the `policy` world): a further say on whether a URL a task
//! reaches is traversed, tested as a leaf (HEAD only), or avoided. The
//! host applies the most restrictive of its own decision and the policies':
//! a policy can narrow a crawl, never widen it.
//!
//! Implement [`Policy`] and call [`export_policy!`](crate::export_policy).
//! The host asks once per task and URL — or once per URL, for a policy whose
//! [`Policy::context_use`] is empty; a document's references come in one
//! call, which the export macro hands to [`Policy::decide`] one by one.

/// The generated bindings of the `policy` world.
#[allow(missing_docs, clippy::all)]
pub mod bindings {
    kind_bindings!(
        "policy",
        "export_policy_bindings",
        "spinneret_sdk::policy::bindings"
    );
}

pub use crate::types::*;
pub use bindings::exports::spinneret::plugin::policy_api::{
    Candidate, Context, ContextUse, Decision,
};

/// Every part of the context (task, referrer, depth): what a policy reads
/// unless its [`Policy::context_use`] says less.
pub fn whole_context() -> ContextUse {
    ContextUse::TASK | ContextUse::REFERRER | ContextUse::DEPTH
}

/// A policy.
pub trait Policy: Sized + 'static {
    /// Build the policy from its configuration; an error is shown to the user.
    fn configure(config: serde_json::Value) -> Result<Self, String>;
    /// Which parts of the [`Context`] the verdicts depend on (by default
    /// all). A policy that judges the URL alone returns
    /// `ContextUse::empty()`, and the host asks it once per URL for the
    /// whole run instead of once per task and URL, reusing its verdict for
    /// every task, referrer and depth.
    fn context_use(&self) -> ContextUse {
        whole_context()
    }
    /// Decide for `candidate` (its URL and how it is referred to), reached
    /// in `context` (the task, the referring document, the depth).
    fn decide(&mut self, candidate: &Candidate, context: &Context) -> Decision;
}

/// Export a [`Policy`] implementation as the component's `policy-api`.
#[macro_export]
macro_rules! export_policy {
    ($t:ty) => {
        #[doc(hidden)]
        pub struct __SpinneretPolicyExport;

        $crate::__plugin_state!($t, $crate::policy::Policy);

        impl $crate::policy::bindings::exports::spinneret::plugin::policy_api::Guest
            for __SpinneretPolicyExport
        {
            fn configure(config: String) -> ::std::result::Result<(), $crate::types::PluginError> {
                __spinneret_configure(&config)
            }
            fn declare() -> $crate::policy::ContextUse {
                __spinneret_with(|p| $crate::policy::Policy::context_use(p))
                    .unwrap_or_else(|_| $crate::policy::whole_context())
            }
            fn decide(
                context: $crate::policy::Context,
                candidates: ::std::vec::Vec<$crate::policy::Candidate>,
            ) -> ::std::vec::Vec<$crate::policy::Decision> {
                __spinneret_with(|p| {
                    candidates
                        .iter()
                        .map(|c| $crate::policy::Policy::decide(p, c, &context))
                        .collect()
                })
                .unwrap_or_else(|_| {
                    candidates
                        .iter()
                        .map(|_| $crate::policy::Decision::NoObjection)
                        .collect()
                })
            }
        }

        #[cfg(target_arch = "wasm32")]
        $crate::policy::bindings::export_policy_bindings!(__SpinneretPolicyExport);
    };
}

#[cfg(test)]
mod tests {
    use super::bindings::exports::spinneret::plugin::policy_api::Guest;
    use super::*;

    /// A policy in a module that imports nothing: the export macro must
    /// name everything by path. It does not override `context_use`.
    #[allow(unreachable_pub)]
    mod bare {
        pub struct Judge;

        impl crate::policy::Policy for Judge {
            fn configure(_: serde_json::Value) -> Result<Self, String> {
                Ok(Judge)
            }
            fn decide(
                &mut self,
                _: &crate::policy::Candidate,
                _: &crate::policy::Context,
            ) -> crate::policy::Decision {
                crate::policy::Decision::NoObjection
            }
        }

        crate::export_policy!(Judge);
    }

    #[test]
    fn a_policy_that_does_not_say_reads_the_whole_context() {
        type Export = bare::__SpinneretPolicyExport;
        // Before configure the plugin cannot say: the host hears "all".
        assert_eq!(Export::declare(), whole_context());
        Export::configure("{}".into()).unwrap();
        assert_eq!(Export::declare(), whole_context());
        let decisions = Export::decide(
            crate::testing::fixtures::context(0),
            vec![crate::testing::fixtures::candidate("http://a.example/")],
        );
        assert!(matches!(decisions[..], [Decision::NoObjection]));
    }
}
