//! Running a fetch-hook plugin: it sees each request before it goes (to add
//! headers or veto it) and each response after it comes (to reclassify it,
//! e.g. a 200 page that says "not found").

use super::bindings::fetch_hook::exports::spinneret::plugin::fetch_hook_api::{
    Interests, Reclassification, Request, RequestVerdict, Response,
};
use super::bindings::fetch_hook::{FetchHook, FetchHookPre};
use super::bindings::since_v0_2_0::fetch_hook::exports::spinneret::plugin::fetch_hook_api as old;
use super::bindings::since_v0_2_0::fetch_hook::{
    FetchHook as OldFetchHook, FetchHookPre as OldFetchHookPre,
};
use super::runner::{Versioned, same_flags, world};
use super::sandbox::{PluginFailure, Sandbox};

pub use super::bindings::fetch_hook::exports::spinneret::plugin::fetch_hook_api::{
    Interests as HookInterests, Reclassification as HookReclassification, Request as HookRequest,
    RequestVerdict as HookVerdict, Response as HookResponse,
};

world!(FetchHook, FetchHookPre, spinneret_plugin_fetch_hook_api);
world!(
    OldFetchHook,
    OldFetchHookPre,
    spinneret_plugin_fetch_hook_api
);

/// A fetch hook ready to run.
pub struct FetchHookPlugin(Versioned<OldFetchHook, FetchHook>);

fn old_request(r: &Request) -> old::Request {
    old::Request {
        url: r.url.clone(),
        method: r.method.clone(),
        referrer: r.referrer.clone(),
    }
}

impl FetchHookPlugin {
    /// Prepare a fetch hook from a compiled component.
    pub fn new(
        sandbox: Sandbox,
        component: &wasmtime::component::Component,
    ) -> wasmtime::Result<FetchHookPlugin> {
        Versioned::new(sandbox, component).map(FetchHookPlugin)
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        self.0.sandbox().name()
    }

    /// Instantiate and configure it: whether it accepts its configuration.
    pub fn start(&mut self) -> Result<(), PluginFailure> {
        self.0.start()
    }

    /// Which calls the hook wants.
    pub fn interests(&mut self) -> Result<Interests, PluginFailure> {
        match &mut self.0 {
            Versioned::V0_2(r) => {
                let wants = r.call("declare", |b, s| {
                    b.spinneret_plugin_fetch_hook_api().call_declare(s)
                })?;
                Ok(same_flags!(wants, old::Interests => Interests: REQUESTS, RESPONSES))
            }
            Versioned::V0_3(r) => r.call("declare", |b, s| {
                b.spinneret_plugin_fetch_hook_api().call_declare(s)
            }),
        }
    }

    /// Decide about a request before it is sent.
    pub fn before_request(&mut self, request: &Request) -> Result<RequestVerdict, PluginFailure> {
        match &mut self.0 {
            Versioned::V0_2(r) => {
                let request = old_request(request);
                let verdict = r.call("before-request", |b, s| {
                    b.spinneret_plugin_fetch_hook_api()
                        .call_before_request(s, &request)
                })?;
                Ok(match verdict {
                    old::RequestVerdict::Proceed(headers) => RequestVerdict::Proceed(headers),
                    old::RequestVerdict::Veto(why) => RequestVerdict::Veto(why),
                })
            }
            Versioned::V0_3(r) => r.call("before-request", |b, s| {
                b.spinneret_plugin_fetch_hook_api()
                    .call_before_request(s, request)
            }),
        }
    }

    /// Look at a response; a reclassification changes its category.
    pub fn after_response(
        &mut self,
        request: &Request,
        response: &Response,
    ) -> Result<Option<Reclassification>, PluginFailure> {
        match &mut self.0 {
            Versioned::V0_2(r) => {
                let request = old_request(request);
                let response = old::Response {
                    status: response.status,
                    content_type: response.content_type.clone(),
                    body_prefix: response.body_prefix.clone(),
                };
                let answer = r.call("after-response", |b, s| {
                    b.spinneret_plugin_fetch_hook_api()
                        .call_after_response(s, &request, &response)
                })?;
                Ok(answer.map(|c| Reclassification {
                    category: c.category,
                    reason: c.reason,
                }))
            }
            Versioned::V0_3(r) => r.call("after-response", |b, s| {
                b.spinneret_plugin_fetch_hook_api()
                    .call_after_response(s, request, response)
            }),
        }
    }
}
