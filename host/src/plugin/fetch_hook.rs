//! Running a fetch-hook plugin: it sees each request before it goes (to add
//! headers or veto it) and each response after it comes (to reclassify it,
//! e.g. a 200 page that says "not found").

use super::bindings::fetch_hook::exports::spinneret::plugin::fetch_hook_api::{
    Reclassification, Request, RequestVerdict, Response,
};
use super::bindings::fetch_hook::{FetchHook, FetchHookPre};
use super::sandbox::{PluginFailure, Sandbox};
use super::state::PluginState;
use wasmtime::Store;
use wasmtime::component::HasSelf;

pub use super::bindings::fetch_hook::exports::spinneret::plugin::fetch_hook_api::{
    Reclassification as HookReclassification, Request as HookRequest,
    RequestVerdict as HookVerdict, Response as HookResponse,
};

/// A fetch hook ready to run.
pub struct FetchHookPlugin {
    sandbox: Sandbox,
    pre: FetchHookPre<PluginState>,
    live: Option<(Store<PluginState>, FetchHook)>,
}

impl FetchHookPlugin {
    /// Prepare a fetch hook from a compiled component.
    pub fn new(
        sandbox: Sandbox,
        component: &wasmtime::component::Component,
    ) -> anyhow::Result<FetchHookPlugin> {
        let mut linker = sandbox.linker()?;
        FetchHook::add_to_linker::<PluginState, HasSelf<PluginState>>(&mut linker, |s| s)?;
        let pre = FetchHookPre::new(linker.instantiate_pre(component)?)?;
        Ok(FetchHookPlugin {
            sandbox,
            pre,
            live: None,
        })
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        self.sandbox.name()
    }

    /// Instantiate and configure, unless an instance is live.
    pub fn start(&mut self) -> Result<(), PluginFailure> {
        if self.live.is_some() {
            return Ok(());
        }
        let sb = &self.sandbox;
        let mut store = sb.store(None);
        let bindings = sb.call(&mut store, "instantiate", |s| self.pre.instantiate(s))?;
        sb.call(&mut store, "configure", |s| {
            bindings
                .spinneret_plugin_fetch_hook_api()
                .call_configure(s, sb.config())
        })?
        .map_err(|e| sb.failed("configure", e.message))?;
        self.live = Some((store, bindings));
        Ok(())
    }

    fn run<T>(
        &mut self,
        call: &str,
        f: impl FnOnce(&mut Store<PluginState>, &FetchHook) -> wasmtime::Result<T>,
    ) -> Result<T, PluginFailure> {
        self.start()?;
        let sb = self.sandbox.clone();
        let (store, bindings) = self.live.as_mut().expect("started above");
        let r = sb.call(store, call, |s| f(s, bindings));
        if r.is_err() {
            // The instance may be in any state after a trap: start afresh.
            self.live = None;
        }
        r
    }

    /// Decide about a request before it is sent.
    pub fn before_request(&mut self, request: &Request) -> Result<RequestVerdict, PluginFailure> {
        self.run("before-request", |s, b| {
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
        self.run("after-response", |s, b| {
            b.spinneret_plugin_fetch_hook_api()
                .call_after_response(s, request, response)
        })
    }
}
