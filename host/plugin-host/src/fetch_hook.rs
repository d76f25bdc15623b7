//! Running a fetch-hook plugin: it sees each request before it goes (to add
//! headers or veto it) and each response after it comes (to reclassify it,
//! e.g. a 200 page that says "not found").

use super::bindings::fetch_hook::exports::spinneret::plugin::fetch_hook_api::{
    Interests, Reclassification, Request, RequestVerdict, Response,
};
use super::bindings::fetch_hook::{FetchHook, FetchHookPre};
use super::bindings::since_v0_2_0::fetch_hook::exports::spinneret::plugin::fetch_hook_api as v2;
use super::bindings::since_v0_2_0::fetch_hook::{
    FetchHook as FetchHook2, FetchHookPre as FetchHookPre2,
};
use super::bindings::since_v0_3_0::fetch_hook::exports::spinneret::plugin::fetch_hook_api as v3;
use super::bindings::since_v0_3_0::fetch_hook::{
    FetchHook as FetchHook3, FetchHookPre as FetchHookPre3,
};
use super::bindings::since_v0_4_0::fetch_hook::exports::spinneret::plugin::fetch_hook_api as v4;
use super::bindings::since_v0_4_0::fetch_hook::{
    FetchHook as FetchHook4, FetchHookPre as FetchHookPre4,
};
use super::runner::{Versioned, by_version, same_flags, world};
use super::sandbox::{PluginFailure, Sandbox};

pub use super::bindings::fetch_hook::exports::spinneret::plugin::fetch_hook_api::{
    Interests as HookInterests, Reclassification as HookReclassification, Request as HookRequest,
    RequestVerdict as HookVerdict, Response as HookResponse,
};

world!(FetchHook, FetchHookPre, spinneret_plugin_fetch_hook_api);
world!(FetchHook2, FetchHookPre2, spinneret_plugin_fetch_hook_api);
world!(FetchHook3, FetchHookPre3, spinneret_plugin_fetch_hook_api);
world!(FetchHook4, FetchHookPre4, spinneret_plugin_fetch_hook_api);

/// A fetch hook ready to run.
pub struct FetchHookPlugin(Versioned<FetchHook2, FetchHook3, FetchHook4, FetchHook>);

/// A request as an older version's interface `$old` types it.
macro_rules! old_request {
    ($old:ident, $r:expr) => {
        $old::Request {
            url: $r.url.clone(),
            method: $r.method.clone(),
            referrer: $r.referrer.clone(),
        }
    };
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
        by_version!(
            &mut self.0,
            [v2],
            [v3],
            [v4],
            |r, old| {
                let wants = r.call("declare", |b, s| {
                    b.spinneret_plugin_fetch_hook_api().call_declare(s)
                })?;
                Ok(same_flags!(wants, old::Interests => Interests: REQUESTS, RESPONSES))
            },
            |r| r.call("declare", |b, s| {
                b.spinneret_plugin_fetch_hook_api().call_declare(s)
            }),
        )
    }

    /// Decide about a request before it is sent.
    pub fn before_request(&mut self, request: &Request) -> Result<RequestVerdict, PluginFailure> {
        by_version!(
            &mut self.0,
            [v2],
            [v3],
            [v4],
            |r, old| {
                let request = old_request!(old, request);
                let verdict = r.call("before-request", |b, s| {
                    b.spinneret_plugin_fetch_hook_api()
                        .call_before_request(s, &request)
                })?;
                Ok(match verdict {
                    old::RequestVerdict::Proceed(headers) => RequestVerdict::Proceed(headers),
                    old::RequestVerdict::Veto(why) => RequestVerdict::Veto(why),
                })
            },
            |r| r.call("before-request", |b, s| {
                b.spinneret_plugin_fetch_hook_api()
                    .call_before_request(s, request)
            }),
        )
    }

    /// Look at a response; a reclassification changes its category.
    pub fn after_response(
        &mut self,
        request: &Request,
        response: &Response,
    ) -> Result<Option<Reclassification>, PluginFailure> {
        by_version!(
            &mut self.0,
            [v2],
            [v3],
            [v4],
            |r, old| {
                let request = old_request!(old, request);
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
            },
            |r| r.call("after-response", |b, s| {
                b.spinneret_plugin_fetch_hook_api()
                    .call_after_response(s, request, response)
            }),
        )
    }
}
