//! Fetch hooks (the `fetch-hook` world): see each request before it goes
//! (add headers, or veto it) and each response after it comes (reclassify
//! it, e.g. a 200 page that says "not found" is a soft 404).
//!
//! Implement [`FetchHook`] and call [`export_fetch_hook!`](crate::export_fetch_hook).
//! The hook runs for every request of a crawl, whichever tasks reach it.

/// The generated bindings of the `fetch-hook` world.
#[allow(missing_docs, clippy::all)]
pub mod bindings {
    kind_bindings!(
        "fetch-hook",
        "export_fetch_hook_bindings",
        "spinneret_sdk::fetch_hook::bindings"
    );
}

pub use crate::types::*;
pub use bindings::exports::spinneret::plugin::fetch_hook_api::{
    Interests, Reclassification, Request, RequestVerdict, Response,
};

/// A fetch hook.
pub trait FetchHook: Sized + 'static {
    /// Build the hook from its configuration; an error is shown to the user.
    fn configure(config: serde_json::Value) -> Result<Self, String>;
    /// Which calls the hook wants (by default both): a hook that only
    /// implements [`FetchHook::after_response`] returns
    /// `Interests::RESPONSES`, and the host does not ask it about requests.
    fn interests(&self) -> Interests {
        Interests::REQUESTS | Interests::RESPONSES
    }
    /// Decide about a request before it is sent (by default: send it as is).
    fn before_request(&mut self, request: &Request) -> RequestVerdict {
        let _ = request;
        RequestVerdict::Proceed(Vec::new())
    }
    /// Look at a response (its status, type and up to 64 KiB of a
    /// document's body); return a reclassification to change its category.
    fn after_response(
        &mut self,
        request: &Request,
        response: &Response,
    ) -> Option<Reclassification> {
        let _ = (request, response);
        None
    }
}

/// Export a [`FetchHook`] implementation as the component's `fetch-hook-api`.
#[macro_export]
macro_rules! export_fetch_hook {
    ($t:ty) => {
        #[doc(hidden)]
        pub struct __SpinneretFetchHookExport;

        $crate::__plugin_state!($t, $crate::fetch_hook::FetchHook);

        impl $crate::fetch_hook::bindings::exports::spinneret::plugin::fetch_hook_api::Guest
            for __SpinneretFetchHookExport
        {
            fn configure(config: String) -> ::std::result::Result<(), $crate::types::PluginError> {
                __spinneret_configure(&config)
            }
            fn declare() -> $crate::fetch_hook::Interests {
                __spinneret_with(|h| $crate::fetch_hook::FetchHook::interests(h)).unwrap_or(
                    $crate::fetch_hook::Interests::REQUESTS
                        | $crate::fetch_hook::Interests::RESPONSES,
                )
            }
            fn before_request(
                request: $crate::fetch_hook::Request,
            ) -> $crate::fetch_hook::RequestVerdict {
                __spinneret_with(|h| $crate::fetch_hook::FetchHook::before_request(h, &request))
                    .unwrap_or($crate::fetch_hook::RequestVerdict::Proceed(
                        ::std::vec::Vec::new(),
                    ))
            }
            fn after_response(
                request: $crate::fetch_hook::Request,
                response: $crate::fetch_hook::Response,
            ) -> ::std::option::Option<$crate::fetch_hook::Reclassification> {
                __spinneret_with(|h| {
                    $crate::fetch_hook::FetchHook::after_response(h, &request, &response)
                })
                .ok()
                .flatten()
            }
        }

        #[cfg(target_arch = "wasm32")]
        $crate::fetch_hook::bindings::export_fetch_hook_bindings!(__SpinneretFetchHookExport);
    };
}
