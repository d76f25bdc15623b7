//! Running a fetch-hook plugin: it sees each request before it goes (to add
//! headers or veto it) and each response after it comes (to reclassify it,
//! e.g. a 200 page that says "not found").

use super::bindings::fetch_hook::exports::spinneret::plugin::fetch_hook_api::{
    Interests, Reclassification, Request, RequestVerdict, Response,
};
use super::bindings::fetch_hook::{FetchHook, FetchHookPre};
use super::runner::{Runner, world};
use super::sandbox::{PluginFailure, Sandbox};

pub use super::bindings::fetch_hook::exports::spinneret::plugin::fetch_hook_api::{
    Interests as HookInterests, Reclassification as HookReclassification, Request as HookRequest,
    RequestVerdict as HookVerdict, Response as HookResponse,
};

world!(FetchHook, FetchHookPre, spinneret_plugin_fetch_hook_api);

/// A fetch hook ready to run.
pub struct FetchHookPlugin(Runner<FetchHook>);

impl FetchHookPlugin {
    /// Prepare a fetch hook from a compiled component.
    pub fn new(
        sandbox: Sandbox,
        component: &wasmtime::component::Component,
    ) -> wasmtime::Result<FetchHookPlugin> {
        Runner::new(sandbox, component).map(FetchHookPlugin)
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        self.0.sandbox().name()
    }

    /// Which calls the hook wants.
    pub fn interests(&mut self) -> Result<Interests, PluginFailure> {
        self.0.call("declare", |b, s| {
            b.spinneret_plugin_fetch_hook_api().call_declare(s)
        })
    }

    /// Decide about a request before it is sent.
    pub fn before_request(&mut self, request: &Request) -> Result<RequestVerdict, PluginFailure> {
        self.0.call("before-request", |b, s| {
            b.spinneret_plugin_fetch_hook_api()
                .call_before_request(s, request)
        })
    }

    /// Look at a response; a reclassification changes its category.
    pub fn after_response(
        &mut self,
        request: &Request,
        response: &Response,
    ) -> Result<Option<Reclassification>, PluginFailure> {
        self.0.call("after-response", |b, s| {
            b.spinneret_plugin_fetch_hook_api()
                .call_after_response(s, request, response)
        })
    }
}
