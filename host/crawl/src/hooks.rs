//! The crawl's plugin hooks: fetch hooks see every request before it goes
//! and every response after it comes; parsers read resources the host does
//! not parse itself; policies judge each reference (a document's references
//! in one call). Their calls never run on the async reactor, so a slow
//! plugin does not stall fetching: the engine's calls (requests about to
//! go, responses to screen, references to judge) run on the engine's own
//! thread while they are quick ([`CrawlHooks::run_here`]) and on one
//! plugin thread once they are not ([`CrawlHooks::call`], see
//! `PluginTurn::end`), as the fetch workers' parser calls always
//! do. A hook that fails is
//! skipped for that request (the request goes as if it were not there) and
//! the failure is kept, against the URL, for the report stage.

use super::frontier::UrlIdx;
use crate::policy::Decision;
use spinneret_core::document::{BadUrl, ParsedDocument, RefKind, Reference};
use spinneret_core::model::Category;
use spinneret_plugin_host::bindings::host::types as wit;
use spinneret_plugin_host::capabilities::KvSpace;
use spinneret_plugin_host::entry::PluginConfig;
use spinneret_plugin_host::fetch_hook::{
    FetchHookPlugin, HookInterests, HookRequest, HookResponse, HookVerdict,
};
use spinneret_plugin_host::identify::PluginKind;
use spinneret_plugin_host::load::link_failure;
use spinneret_plugin_host::parser::ParserPlugin;
use spinneret_plugin_host::policy::{
    PolicyCandidate, PolicyContext, PolicyContextUse, PolicyDecision, PolicyPlugin,
};
use spinneret_plugin_host::registry::Registry;
use spinneret_plugin_host::sandbox::PluginFailure;
use spinneret_store::Store;
use std::collections::HashMap;
use std::sync::Mutex;
use url::Url;

/// How much of a document's body a fetch hook sees.
pub const BODY_PREFIX: usize = 64 * 1024;

/// The fetch hooks and parsers of a crawl.
#[derive(Default)]
pub struct CrawlHooks {
    fetch_hooks: Vec<(Mutex<FetchHookPlugin>, HookInterests)>,
    parsers: Vec<Mutex<ParserPlugin>>,
    policies: Vec<Mutex<PolicyHook>>,
    failures: Mutex<Vec<(String, PluginFailure)>>,
    kv: Vec<(String, KvSpace)>,
    thread: HookThread,
}

/// A policy, with the verdicts it gave this run by URL if they depend on
/// the URL alone.
struct PolicyHook {
    plugin: PolicyPlugin,
    /// For a policy that reads no part of the context: asked once per URL.
    by_url: Option<UrlVerdicts>,
    /// Whether it reads the depth (or cannot say).
    reads_depth: bool,
}

/// A context-free policy's verdicts this run: which URLs it was asked
/// about (a bit per URL of the frontier) and its objections among them.
#[derive(Default)]
struct UrlVerdicts {
    asked: Vec<u64>,
    objections: HashMap<UrlIdx, PolicyDecision>,
}

impl UrlVerdicts {
    /// The verdict on `u`, if the policy was asked.
    fn get(&self, u: UrlIdx) -> Option<PolicyDecision> {
        let (word, bit) = (u as usize / 64, u % 64);
        let asked = self.asked.get(word).is_some_and(|w| w & (1 << bit) != 0);
        asked.then(|| {
            self.objections
                .get(&u)
                .cloned()
                .unwrap_or(PolicyDecision::NoObjection)
        })
    }

    /// Keep the verdict on `u`.
    fn keep(&mut self, u: UrlIdx, verdict: &PolicyDecision) {
        let (word, bit) = (u as usize / 64, u % 64);
        if self.asked.len() <= word {
            self.asked.resize(word + 1, 0);
        }
        self.asked[word] |= 1 << bit;
        if !matches!(verdict, PolicyDecision::NoObjection) {
            self.objections.insert(u, verdict.clone());
        }
    }
}

/// A URL a policy is asked about: its index in the crawl's frontier (which
/// a context-free policy's verdicts are kept by), the URL and how it is
/// referred to.
pub type PolicyQuestion = (UrlIdx, String, RefKind);

/// A job for the hook thread.
type HookJob = Box<dyn FnOnce() + Send>;

/// The thread the fetch workers' hook calls run on, one after another.
/// Fetch hooks and parsers are called by every request in flight; on
/// tokio's blocking pool each call was a thread hand-off and the plugin's
/// lock was fought over by as many threads as requests in flight (a third
/// of the crawl's time went to waking threads). Here the calls queue for
/// one thread that keeps the plugins' instances warm; the fetch workers
/// await the answer without blocking the reactor.
#[derive(Default)]
struct HookThread {
    queue: Mutex<Option<std::sync::mpsc::Sender<HookJob>>>,
}

impl HookThread {
    fn sender(&self) -> std::sync::mpsc::Sender<HookJob> {
        let mut queue = lock(&self.queue);
        queue
            .get_or_insert_with(|| {
                let (tx, rx) = std::sync::mpsc::channel::<HookJob>();
                let spawned = std::thread::Builder::new()
                    .name("crawl-hooks".into())
                    .spawn(move || {
                        // Ends when the hooks (the sender) are dropped. A
                        // job that panics (a host bug) loses its answer,
                        // which its caller sees, not the thread.
                        for job in rx {
                            run_job(job);
                        }
                    });
                if let Err(e) = spawned {
                    tracing::error!("cannot start the plugin thread: {e}");
                }
                tx
            })
            .clone()
    }
}

/// Run blocking plugin work `f` off the reactor and outside the async
/// runtime's context, where a plugin's host fetch may wait for the runtime:
/// `block_in_place` on a multi-threaded runtime (on one of its workers, the
/// worker's other tasks move to another thread meanwhile; on the thread
/// that called `block_on`, it only leaves the runtime's context), directly
/// elsewhere (no runtime, or a current-thread one).
pub fn off_reactor<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(f),
        _ => f(),
    }
}

/// Run `job` (plugin calls). A job that panics (a host bug) loses its
/// answer, which its caller sees (what it owns answers on drop); the
/// thread it ran on goes on.
fn run_job(job: impl FnOnce()) {
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)).is_err() {
        tracing::error!("a plugin call panicked");
    }
}

impl CrawlHooks {
    /// Run `job` (plugin calls) on the calling thread, as the plugin thread
    /// would run it (off the reactor: see [`off_reactor`]), and say how
    /// long it took. For a thread of its own: on a reactor worker, the
    /// worker's other tasks move to another thread meanwhile.
    pub fn run_here(&self, job: impl FnOnce()) -> std::time::Duration {
        let start = std::time::Instant::now();
        off_reactor(|| run_job(job));
        start.elapsed()
    }

    /// Run `f` (plugin calls) on the hook thread and await its answer; `None`
    /// if the thread is gone (the call is then skipped, like a failed hook).
    pub async fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Option<T> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        // Unrun (the thread is gone) or panicking, `f` drops `tx`: `None`.
        self.post(move || {
            let _ = tx.send(f());
        });
        rx.await.ok()
    }

    /// Run `f` (plugin calls) on the hook thread without waiting for it; `f`
    /// is dropped unrun if the thread is gone, so whatever it owns that
    /// answers its caller must answer on drop too.
    pub fn post(&self, f: impl FnOnce() + Send + 'static) {
        let _ = self.thread.sender().send(Box::new(f));
    }
}

/// What the fetch hooks said about a request.
pub enum BeforeRequest {
    /// Send it with these extra headers.
    Proceed(Vec<(String, String)>),
    /// Do not send it: avoided, for this reason.
    Veto(String),
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Narrow `verdict` by a policy's `decision`: avoid over leaf over none.
fn restrict(verdict: &mut Option<Decision>, decision: PolicyDecision, policy: &str) {
    match decision {
        PolicyDecision::Avoid(reason) if !matches!(verdict, Some(Decision::Avoid(_))) => {
            *verdict = Some(Decision::Avoid(format!("{reason} (policy {policy})")));
        }
        PolicyDecision::Leaf(reason) if verdict.is_none() => {
            *verdict = Some(Decision::Leaf(format!("{reason} (policy {policy})")));
        }
        _ => {}
    }
}

fn category_of(c: wit::Category) -> Category {
    match c {
        wit::Category::Ok => Category::Ok,
        wit::Category::Moved => Category::Moved,
        wit::Category::Broken => Category::Broken,
        wit::Category::Blocked => Category::Blocked,
        wit::Category::Avoided => Category::Avoided,
        wit::Category::NotChecked => Category::NotChecked,
    }
}

fn ref_kind(k: wit::RefKind) -> RefKind {
    match k {
        wit::RefKind::Anchor => RefKind::Anchor,
        wit::RefKind::Area => RefKind::Area,
        wit::RefKind::Image => RefKind::Image,
        wit::RefKind::Frame => RefKind::Frame,
        wit::RefKind::Iframe => RefKind::Iframe,
        wit::RefKind::Stylesheet => RefKind::Stylesheet,
        wit::RefKind::Icon => RefKind::Icon,
        wit::RefKind::Alternate => RefKind::Alternate,
        wit::RefKind::Link => RefKind::Link,
        wit::RefKind::Script => RefKind::Script,
        wit::RefKind::Object => RefKind::Object,
        wit::RefKind::Embed => RefKind::Embed,
        wit::RefKind::Form => RefKind::Form,
        wit::RefKind::Refresh => RefKind::Refresh,
    }
}

impl CrawlHooks {
    /// Instantiate the fetch hooks, parsers and policies among `plugins`
    /// from the run's `registry` (they apply to every request of the run,
    /// whichever tasks they name). Plugins of other kinds are left to the
    /// report stage; a hook that cannot be instantiated is reported against
    /// `top` (the first task's top URL) and the crawl goes on without it.
    pub fn load(
        registry: &Registry,
        plugins: &[PluginConfig],
        top: &str,
        store: &Store,
    ) -> Result<CrawlHooks, crate::CrawlError> {
        let mut hooks = CrawlHooks::default();
        for p in plugins {
            let kv = KvSpace::with(store.load_kv(&p.name)?);
            let prepared = match registry.prepare(p, kv.clone()) {
                Ok(pr) => pr,
                // Not in the registry (the run's preflight registers every
                // plugin, so this is a bug): said, and the crawl goes on.
                Err(f) => {
                    tracing::error!("{f}");
                    hooks.record(top, f);
                    continue;
                }
            };
            let loaded = match prepared.identity.kind {
                PluginKind::FetchHook => {
                    FetchHookPlugin::new(prepared.sandbox, &prepared.component).map(|mut h| {
                        // A hook that cannot say is asked everything: its
                        // failure is then recorded against each URL.
                        let wants = h.interests().unwrap_or(HookInterests::all());
                        hooks.fetch_hooks.push((Mutex::new(h), wants));
                    })
                }
                PluginKind::Parser => ParserPlugin::new(prepared.sandbox, &prepared.component)
                    .map(|h| hooks.parsers.push(Mutex::new(h))),
                PluginKind::Policy => PolicyPlugin::new(prepared.sandbox, &prepared.component)
                    .map(|plugin| hooks.add_policy(plugin)),
                _ => continue,
            };
            match loaded {
                Ok(()) => {
                    if p.tasks.is_some() {
                        tracing::warn!(
                            "plugin {}: `tasks` does not apply to fetch hooks, parsers and policies; it runs for every request",
                            p.name
                        );
                    }
                    hooks.kv.push((p.name.clone(), kv));
                }
                Err(e) => {
                    let f = link_failure(p, e);
                    tracing::error!("{f}");
                    hooks.record(top, f);
                }
            }
        }
        Ok(hooks)
    }

    /// Add `hook`, instantiated by the caller (a collection's
    /// `[[fetch_hook]]`), asked about what it says it wants.
    pub fn add_fetch_hook(&mut self, mut hook: FetchHookPlugin) {
        let wants = hook.interests().unwrap_or(HookInterests::all());
        self.fetch_hooks.push((Mutex::new(hook), wants));
    }

    /// Add `plugin`, instantiated by the caller (a collection's
    /// `[[policy]]`), asked as its context use says.
    pub fn add_policy(&mut self, mut plugin: PolicyPlugin) {
        // One that cannot say is asked in every context.
        let reads = plugin.context_use().unwrap_or(PolicyContextUse::all());
        let by_url = (reads == PolicyContextUse::empty()).then(UrlVerdicts::default);
        self.policies.push(Mutex::new(PolicyHook {
            plugin,
            by_url,
            reads_depth: reads.contains(PolicyContextUse::DEPTH),
        }));
    }

    /// The names of the plugins that run inside the crawl (loaded here).
    pub fn names(&self) -> Vec<String> {
        self.kv.iter().map(|(n, _)| n.clone()).collect()
    }

    /// Whether there is nothing to run.
    pub fn is_empty(&self) -> bool {
        self.fetch_hooks.is_empty() && self.parsers.is_empty() && self.policies.is_empty()
    }

    /// Whether there are policies.
    pub fn has_policies(&self) -> bool {
        !self.policies.is_empty()
    }

    /// Whether every policy judges URLs alone (reads no part of their
    /// context), so that one verdict per URL serves every task.
    pub fn policies_judge_urls_alone(&self) -> bool {
        self.policies.iter().all(|p| lock(p).by_url.is_some())
    }

    /// Whether any policy reads the depth (links from the task's top), so
    /// that the crawl must keep each document's.
    pub fn policies_read_depth(&self) -> bool {
        self.policies.iter().any(|p| lock(p).reads_depth)
    }

    /// Ask every policy about `candidates` (URLs and how they are referred
    /// to), reached by `task` from `referrer` at `depth` (blocking), in one
    /// call per policy; a policy that reads no part of the context is asked
    /// only about URLs it was not asked about earlier in the run (not at all
    /// if there are none), its earlier verdicts standing for the rest. For
    /// each candidate, the most restrictive verdict wins (avoid over leaf);
    /// none when all have no objection. A policy that fails is skipped, its
    /// failure recorded against the referrer (or the first candidate, for a
    /// task's top).
    pub fn decide(
        &self,
        task: wit::TaskInfo,
        referrer: Option<String>,
        depth: u32,
        candidates: Vec<PolicyQuestion>,
    ) -> Vec<Option<Decision>> {
        let context = PolicyContext {
            task,
            referrer,
            depth,
        };
        let (urls, asked): (Vec<UrlIdx>, Vec<(String, RefKind)>) = candidates
            .into_iter()
            .map(|(u, target, kind)| (u, (target, kind)))
            .unzip();
        self.verdicts(&context, Some(&urls), asked)
    }

    /// [`CrawlHooks::decide`] for a walk with no frontier (a collection's):
    /// every policy is asked about every candidate (a URL and how it is
    /// referred to), in one call per policy, none answered by its earlier
    /// verdicts.
    pub fn decide_each(
        &self,
        task: wit::TaskInfo,
        referrer: Option<String>,
        depth: u32,
        candidates: Vec<(String, RefKind)>,
    ) -> Vec<Option<Decision>> {
        let context = PolicyContext {
            task,
            referrer,
            depth,
        };
        self.verdicts(&context, None, candidates)
    }

    /// Each candidate's verdict in `context` ([`CrawlHooks::ask_policies`]).
    fn verdicts(
        &self,
        context: &PolicyContext,
        urls: Option<&[UrlIdx]>,
        candidates: Vec<(String, RefKind)>,
    ) -> Vec<Option<Decision>> {
        let mut verdicts: Vec<Option<Decision>> = vec![None; candidates.len()];
        if candidates.is_empty() {
            return verdicts;
        }
        let asked: Vec<PolicyCandidate> = candidates
            .into_iter()
            .map(|(target, kind)| PolicyCandidate {
                target,
                kind: spinneret_plugin_host::reporter::to_wit_kind(kind),
            })
            .collect();
        self.ask_policies(context, urls, &asked, &mut verdicts);
        verdicts
    }

    /// Ask every policy about `asked` in `context`, each candidate's most
    /// restrictive verdict kept in `verdicts`; with the frontier's `urls`,
    /// a context-free policy answers by its earlier verdicts where it has
    /// them. A policy that fails is skipped, its failure recorded.
    fn ask_policies(
        &self,
        context: &PolicyContext,
        urls: Option<&[UrlIdx]>,
        asked: &[PolicyCandidate],
        verdicts: &mut [Option<Decision>],
    ) {
        for policy in &self.policies {
            let mut policy = lock(policy);
            let PolicyHook { plugin, by_url, .. } = &mut *policy;
            let decisions = match (by_url, urls) {
                (Some(known), Some(urls)) => {
                    Self::decide_by_url(plugin, known, context, urls, asked)
                }
                _ => plugin.decide(context, asked),
            };
            match decisions {
                Ok(decisions) => {
                    for (verdict, decision) in verdicts.iter_mut().zip(decisions) {
                        restrict(verdict, decision, plugin.name());
                    }
                }
                Err(f) => {
                    let at = context.referrer.as_deref().unwrap_or(&asked[0].target);
                    self.record(at, f);
                }
            }
        }
    }

    /// A context-free policy's verdicts on `asked` (the URLs `urls` of the
    /// frontier): those it gave earlier in the run, and for the others, its
    /// answer now, kept for the rest of the run.
    fn decide_by_url(
        plugin: &mut PolicyPlugin,
        known: &mut UrlVerdicts,
        context: &PolicyContext,
        urls: &[UrlIdx],
        asked: &[PolicyCandidate],
    ) -> Result<Vec<PolicyDecision>, PluginFailure> {
        let mut decisions: Vec<Option<PolicyDecision>> =
            urls.iter().map(|&u| known.get(u)).collect();
        let new: Vec<usize> = (0..urls.len())
            .filter(|&i| decisions[i].is_none())
            .collect();
        if !new.is_empty() {
            let answers = if new.len() == asked.len() {
                plugin.decide(context, asked)?
            } else {
                let subset: Vec<PolicyCandidate> = new.iter().map(|&i| asked[i].clone()).collect();
                plugin.decide(context, &subset)?
            };
            for (i, answer) in new.into_iter().zip(answers) {
                known.keep(urls[i], &answer);
                decisions[i] = Some(answer);
            }
        }
        Ok(decisions.into_iter().flatten().collect())
    }

    /// Whether a fetch hook wants to see requests.
    pub fn has_request_hooks(&self) -> bool {
        self.fetch_hooks(HookInterests::REQUESTS).next().is_some()
    }

    /// Whether a fetch hook wants to see responses.
    pub fn has_response_hooks(&self) -> bool {
        self.fetch_hooks(HookInterests::RESPONSES).next().is_some()
    }

    /// The fetch hooks that want `calls`.
    fn fetch_hooks(&self, calls: HookInterests) -> impl Iterator<Item = &Mutex<FetchHookPlugin>> {
        self.fetch_hooks
            .iter()
            .filter(move |(_, wants)| wants.contains(calls))
            .map(|(h, _)| h)
    }

    /// Whether there are parsers.
    pub fn has_parsers(&self) -> bool {
        !self.parsers.is_empty()
    }

    fn record(&self, url: &str, f: PluginFailure) {
        tracing::warn!("{url}: {f}");
        lock(&self.failures).push((url.to_string(), f));
    }

    /// The failures so far, against the URLs they happened for.
    pub fn take_failures(&self) -> Vec<(String, PluginFailure)> {
        std::mem::take(&mut lock(&self.failures))
    }

    /// Store the key-value spaces the hooks changed.
    pub fn save_kv(&self, store: &Store) -> Result<(), spinneret_store::StoreError> {
        for (name, kv) in &self.kv {
            if let Some(entries) = kv.changed() {
                store.save_kv(name, &entries)?;
            }
        }
        Ok(())
    }

    fn request(url: &Url, method: &str, referrer: Option<&Url>) -> HookRequest {
        HookRequest {
            url: url.to_string(),
            method: method.to_string(),
            referrer: referrer.map(Url::to_string),
        }
    }

    /// Ask every fetch hook about a request (blocking: call it through
    /// [`CrawlHooks::call`] or [`CrawlHooks::run_here`]). The first veto
    /// wins; headers add up.
    pub fn before_request(&self, url: &Url, method: &str, referrer: Option<&Url>) -> BeforeRequest {
        let req = Self::request(url, method, referrer);
        let mut headers = Vec::new();
        for hook in self.fetch_hooks(HookInterests::REQUESTS) {
            let mut hook = lock(hook);
            match hook.before_request(&req) {
                Ok(HookVerdict::Veto(reason)) => {
                    return BeforeRequest::Veto(format!(
                        "vetoed by plugin {}: {reason}",
                        hook.name()
                    ));
                }
                Ok(HookVerdict::Proceed(add)) => {
                    for (name, value) in add {
                        let valid = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                            .is_ok()
                            && reqwest::header::HeaderValue::from_str(&value).is_ok();
                        if valid {
                            headers.push((name, value));
                        } else {
                            let f = PluginFailure {
                                plugin: hook.name().to_string(),
                                call: "before-request".into(),
                                reason: format!("asked for an invalid header `{name}: {value}`"),
                            };
                            self.record(url.as_str(), f);
                        }
                    }
                }
                Err(f) => self.record(url.as_str(), f),
            }
        }
        BeforeRequest::Proceed(headers)
    }

    /// Show every fetch hook a response (blocking) with `body_prefix`, the
    /// first [`BODY_PREFIX`] bytes of its body; the first reclassification
    /// wins.
    pub fn after_response(
        &self,
        url: &Url,
        method: &str,
        referrer: Option<&Url>,
        status: u16,
        content_type: Option<String>,
        body_prefix: Vec<u8>,
    ) -> Option<(Category, String)> {
        let req = Self::request(url, method, referrer);
        let resp = HookResponse {
            status,
            content_type,
            body_prefix,
        };
        for hook in self.fetch_hooks(HookInterests::RESPONSES) {
            let mut hook = lock(hook);
            match hook.after_response(&req, &resp) {
                Ok(Some(r)) => {
                    return Some((
                        category_of(r.category),
                        format!("{} (plugin {})", r.reason, hook.name()),
                    ));
                }
                Ok(None) => {}
                Err(f) => self.record(url.as_str(), f),
            }
        }
        None
    }

    /// The first parser that reads `content_type` at `url` (blocking).
    pub fn parser_for(&self, content_type: &str, url: &Url) -> Option<usize> {
        self.parsers.iter().position(|p| {
            let mut p = lock(p);
            match p.accepts(content_type, url.as_str()) {
                Ok(yes) => yes,
                Err(f) => {
                    self.record(url.as_str(), f);
                    false
                }
            }
        })
    }

    /// Parse a resource with parser `index` (blocking) into a document the
    /// crawler traverses like an HTML one.
    pub fn parse(
        &self,
        index: usize,
        url: &Url,
        content_type: &str,
        body: &[u8],
    ) -> Option<ParsedDocument> {
        let mut parser = lock(self.parsers.get(index)?);
        let parsed = match parser.parse(url.as_str(), content_type, body) {
            Ok(p) => p,
            Err(f) => {
                self.record(url.as_str(), f);
                return None;
            }
        };
        let mut seen = std::collections::HashSet::new();
        let references = parsed
            .references
            .into_iter()
            .map(|r| Reference {
                target: Url::parse(&r.target)
                    .map(spinneret_core::urls::normalize)
                    .map_err(|e| BadUrl {
                        raw: r.target.clone(),
                        reason: e.to_string(),
                    }),
                kind: ref_kind(r.kind),
                text: r.anchor_text,
                // The parser API gives no places.
                line: 0,
                column: 0,
            })
            .filter(|r| {
                let key = (
                    r.target.as_ref().map(Url::to_string).unwrap_or_default(),
                    r.kind,
                );
                seen.insert(key)
            })
            .collect();
        Some(ParsedDocument {
            title: parsed.title,
            owner: parsed.owner,
            expires_meta: parsed.expires,
            encoding: "plugin",
            references,
            ..Default::default()
        })
    }
}

/// The fetch hooks asked by the network layer's polite path (a
/// collection's requests, its queries): a veto refuses the request, the
/// headers go with it, and a hook's failure is recorded against the URL.
impl spinneret_net::network::RequestHook for CrawlHooks {
    fn before(&self, url: &Url, method: &str) -> Result<Vec<(String, String)>, String> {
        match self.before_request(url, method, None) {
            BeforeRequest::Veto(why) => Err(why),
            BeforeRequest::Proceed(headers) => Ok(headers),
        }
    }
}
