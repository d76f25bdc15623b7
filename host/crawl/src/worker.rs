//! The work done for one request away from the engine: the fetch itself and,
//! for an HTML or Markdown body, hashing and parsing it. Large bodies are parsed on the
//! blocking pool so that the async reactor keeps fetching.

use super::hooks::{BeforeRequest, CrawlHooks};
use super::sites::Job;
use crate::fetch::robots::{RobotsFetch, fetch_robots};
use crate::fetch::{FetchError, FetchRequest, FetchResponse, Fetcher, ResponseHeaders};
use crate::parse::markdown::parse_markdown_under;
use crate::parse::parse_html_under;
use spinneret_core::digest::sha256_hex;
use spinneret_core::document::ParsedDocument;
use spinneret_core::model::Category;
use spinneret_net::fetch::{is_markdown, is_page};
use std::sync::{Arc, Mutex};
use url::Url;

/// Bodies larger than this are parsed on the blocking pool.
const INLINE_PARSE_LIMIT: usize = 256 * 1024;

/// A finished request, back to the engine.
#[derive(Debug)]
pub(crate) enum Completion {
    /// A request for a URL (or one hop of it).
    Fetch {
        /// The site it was made to.
        site: u32,
        /// The job, as it left.
        job: Box<Job>,
        /// The response, or why there was none.
        result: Box<Result<FetchResponse, FetchError>>,
        /// The parse of an HTML body.
        parsed: Option<Box<ParsedDocument>>,
        /// SHA-256 of the body, hex.
        hash: Option<String>,
        /// A fetch hook's different verdict on the response, with its reason.
        reclassified: Option<(Category, String)>,
    },
    /// The policies' verdicts on URLs tasks reach (a document's
    /// references, or a redirect's target), asked at the end of a turn of
    /// the engine: one answer per question asked together.
    Policies(Vec<PolicyAnswer>),
    /// A response the fetch hooks must see before its fetch completes: the
    /// engine shows it to them with the turn's other plugin questions
    /// (`Engine::send_plugin_questions`), and the fetch comes back with the
    /// hooks' verdict.
    Screen {
        /// The fetch, completed but for the hooks' verdict.
        fetch: Box<Completion>,
        /// What the hooks see of the response.
        screening: Box<Screening>,
    },
    /// What a task's top's sitemaps list (`CrawlOptions::sitemaps`).
    Sitemaps {
        /// The tasks whose tops are on the site.
        tasks: Vec<usize>,
        /// The pages, and what to say.
        found: Box<crate::sitemaps::SitemapPages>,
    },
    /// A robots.txt request.
    Robots {
        /// The site.
        site: u32,
        /// What it found.
        outcome: RobotsFetch,
    },
}

/// Policy questions of one task about URLs found in one document.
pub(crate) struct PolicyAsk {
    /// The task.
    pub task: usize,
    /// The task, as plugins see it.
    pub info: spinneret_plugin_host::bindings::host::types::TaskInfo,
    /// The document the URLs were found in (or the moved URL).
    pub referrer: String,
    /// Links from the task's top to the URLs.
    pub depth: u32,
    /// The URLs, with how they are referred to.
    pub asks: Vec<super::hooks::PolicyQuestion>,
    /// What the task does once the verdicts are in.
    pub then: AfterVerdicts,
}

/// A response for the fetch hooks' `after-response`.
#[derive(Debug)]
pub(crate) struct Screening {
    /// The URL requested.
    pub url: Url,
    /// `GET` or `HEAD`.
    pub method: &'static str,
    /// The document the link came from.
    pub referrer: Option<Url>,
    /// The response's status.
    pub status: u16,
    /// Its `Content-Type`.
    pub content_type: Option<String>,
    /// The first bytes of its body (at most [`super::hooks::BODY_PREFIX`]).
    pub body_prefix: Vec<u8>,
}

impl Screening {
    /// Show the response to the fetch hooks (blocking: on the plugin
    /// thread) and complete `fetch` with their verdict.
    pub(crate) fn screen(self, hooks: &CrawlHooks, fetch: &mut Completion) {
        let verdict = hooks.after_response(
            &self.url,
            self.method,
            self.referrer.as_ref(),
            self.status,
            self.content_type,
            self.body_prefix,
        );
        if let Completion::Fetch { reclassified, .. } = fetch {
            *reclassified = verdict;
        }
    }
}

/// The policies' verdicts on one [`PolicyAsk`].
#[derive(Debug)]
pub(crate) struct PolicyAnswer {
    /// The task.
    pub task: usize,
    /// What the task does now.
    pub then: AfterVerdicts,
    /// Each URL asked about, with the verdict.
    pub verdicts: Vec<(super::frontier::UrlIdx, Option<crate::policy::Decision>)>,
}

/// A completion sent to the engine when dropped, as it stands then. A job
/// of plugin calls owns one and fills in the plugins' answers; if the job
/// never runs (the plugin thread is gone) or panics, the engine still
/// gets the completion, with no answers from the plugins (no objections,
/// no reclassification), so the crawl goes on either way.
pub(crate) struct Reply {
    tx: tokio::sync::mpsc::UnboundedSender<Completion>,
    completion: Option<Completion>,
}

impl Reply {
    /// A reply that sends `completion` unless it is changed.
    pub(crate) fn new(
        tx: tokio::sync::mpsc::UnboundedSender<Completion>,
        completion: Completion,
    ) -> Self {
        Reply {
            tx,
            completion: Some(completion),
        }
    }

    /// The completion, to fill in.
    pub(crate) fn completion(&mut self) -> &mut Completion {
        self.completion.as_mut().expect("sent only on drop")
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        if let Some(c) = self.completion.take() {
            let _ = self.tx.send(c);
        }
    }
}

/// The policies' answers to `asked` when they give none: no objections.
pub(crate) fn no_objections(asked: &[PolicyAsk]) -> Vec<PolicyAnswer> {
    asked
        .iter()
        .map(|a| PolicyAnswer {
            task: a.task,
            then: a.then,
            verdicts: a.asks.iter().map(|(u, _, _)| (*u, None)).collect(),
        })
        .collect()
}

/// What a task does once the policies' verdicts are in.
#[derive(Debug, Clone, Copy)]
pub(crate) enum AfterVerdicts {
    /// Follow the references of this document.
    Expand(super::frontier::UrlIdx),
    /// Reach `target`, the final URL of the moved URL `from`.
    FollowRedirect {
        /// The moved URL.
        from: super::frontier::UrlIdx,
        /// Where it led.
        target: super::frontier::UrlIdx,
    },
}

/// The body's hash and its parse: as Markdown when its type says so,
/// else as HTML.
fn hash_and_parse(
    url: &Url,
    content_type: Option<&str>,
    body: &[u8],
    root: Option<&Url>,
) -> (String, ParsedDocument) {
    let hash = sha256_hex(body);
    let doc = match is_markdown(content_type) {
        true => parse_markdown_under(url, body, root),
        false => parse_html_under(url, content_type, body, root),
    };
    (hash, doc)
}

/// What the request hooks' `verdict` on `req` does to it: adds their
/// headers, or gives the veto's reason (the request must not go). No
/// verdict (the plugin thread is gone, or the job panicked): the request
/// goes as if there were no hooks.
pub(crate) fn heed(verdict: Option<BeforeRequest>, req: &mut FetchRequest) -> Option<String> {
    match verdict {
        Some(BeforeRequest::Veto(reason)) => Some(reason),
        Some(BeforeRequest::Proceed(headers)) => {
            req.extra_headers = headers;
            None
        }
        None => {
            tracing::error!(
                "fetch hooks for {}: no answer; the request goes without them",
                req.url
            );
            None
        }
    }
}

/// The completion of `job`, whose request the hooks vetoed for `reason`.
pub(crate) fn vetoed(site: u32, job: Box<Job>, reason: String) -> Completion {
    Completion::Fetch {
        site,
        job,
        result: Box::new(Err(FetchError::Vetoed(reason))),
        parsed: None,
        hash: None,
        reclassified: None,
    }
}

/// Show the request hooks `req` (on the plugin thread), then [`fetch`] it
/// unless they veto it.
pub(crate) async fn ask_hooks_then_fetch(
    fetcher: Fetcher,
    site: u32,
    job: Box<Job>,
    mut req: FetchRequest,
    max_body: u64,
    hooks: Arc<CrawlHooks>,
    tx: tokio::sync::mpsc::UnboundedSender<Completion>,
) {
    let (url, method, referrer) = (req.url.clone(), req.method.as_str(), req.referrer.clone());
    let on_thread = hooks.clone();
    let verdict = hooks
        .call(move || on_thread.before_request(&url, method, referrer.as_ref()))
        .await;
    match heed(verdict, &mut req) {
        Some(reason) => {
            let _ = tx.send(vetoed(site, job, reason));
        }
        None => fetch(fetcher, site, job, req, max_body, Some(hooks), tx).await,
    }
}

/// Make the request `req` for `job` (the request hooks, if any, have seen
/// it), parse what comes back and send the completion on `tx`. With
/// `hooks`, a parser plugin reads a body the host does not parse itself
/// (its calls run on the plugin thread), and a response the fetch hooks
/// want to see goes to the engine as a [`Completion::Screen`].
pub(crate) async fn fetch(
    fetcher: Fetcher,
    site: u32,
    mut job: Box<Job>,
    req: FetchRequest,
    max_body: u64,
    hooks: Option<Arc<CrawlHooks>>,
    tx: tokio::sync::mpsc::UnboundedSender<Completion>,
) {
    let method = req.method.as_str();
    // Which parser plugin, if any, reads a non-HTML body.
    let chosen: Arc<Mutex<Option<usize>>> = Arc::default();
    let started = std::time::Instant::now();
    let result = {
        let (hooks, chosen, url) = (hooks.clone(), chosen.clone(), req.url.clone());
        fetcher
            .fetch_with(&req, max_body, move |headers: &ResponseHeaders| {
                let ct = headers.content_type.clone();
                async move {
                    let (Some(h), Some(ct)) = (hooks.filter(|h| h.has_parsers()), ct) else {
                        return false;
                    };
                    let hooks = h.clone();
                    let idx = h.call(move || hooks.parser_for(&ct, &url)).await.flatten();
                    *chosen.lock().unwrap_or_else(|p| p.into_inner()) = idx;
                    idx.is_some()
                }
            })
            .await
    };
    if result.is_err() {
        // A response counts its own time; a failed request the time it took to fail.
        job.elapsed += started.elapsed();
    }
    let mut parsed = None;
    let mut hash = None;
    if let Ok(resp) = &result
        && let Some(body) = &resp.body
    {
        let ct = resp.headers.content_type.clone();
        let parser = *chosen.lock().unwrap_or_else(|p| p.into_inner());
        if let (Some(i), Some(h), Some(ct)) = (parser, hooks.clone(), ct.clone())
            && !is_page(Some(&ct))
        {
            let url = req.url.clone();
            let bytes = body.bytes.clone();
            let hooks = h.clone();
            let (h, doc) = h
                .call(move || (sha256_hex(&bytes), hooks.parse(i, &url, &ct, &bytes)))
                .await
                .unwrap_or_default();
            hash = Some(h);
            parsed = doc.map(Box::new);
        } else if is_page(ct.as_deref()) || ct.is_none() {
            let (h, doc) = if body.bytes.len() > INLINE_PARSE_LIMIT {
                let url = req.url.clone();
                let bytes = body.bytes.clone();
                let root = fetcher.root_dir().cloned();
                tokio::task::spawn_blocking(move || {
                    hash_and_parse(&url, ct.as_deref(), &bytes, root.as_ref())
                })
                .await
                .unwrap_or_default()
            } else {
                hash_and_parse(&req.url, ct.as_deref(), &body.bytes, fetcher.root_dir())
            };
            hash = Some(h);
            let mut doc = doc;
            if body.truncated {
                // The places past the cut are not known: a partial list
                // would call good fragments broken.
                doc.anchors = None;
            }
            parsed = Some(Box::new(doc));
        } else {
            hash = Some(sha256_hex(&body.bytes));
        }
    }
    let asked = match (hooks.filter(|h| h.has_response_hooks()), &result) {
        (Some(_), Ok(resp)) if !(300..400).contains(&resp.status) => {
            let prefix: Vec<u8> = resp.body.as_ref().map_or_else(Vec::new, |b| {
                b.bytes[..b.bytes.len().min(super::hooks::BODY_PREFIX)].to_vec()
            });
            Some((resp.status, resp.headers.content_type.clone(), prefix))
        }
        _ => None,
    };
    let completion = Completion::Fetch {
        site,
        job,
        result: Box::new(result),
        parsed,
        hash,
        reclassified: None,
    };
    let message = match asked {
        Some((status, content_type, body_prefix)) => Completion::Screen {
            fetch: Box::new(completion),
            screening: Box::new(Screening {
                url: req.url,
                method,
                referrer: req.referrer,
                status,
                content_type,
                body_prefix,
            }),
        },
        None => completion,
    };
    let _ = tx.send(message);
}

/// Fetch a site's robots.txt (held to the address rule when `public_only`).
pub(crate) async fn robots(fetcher: Fetcher, site: u32, url: Url, public_only: bool) -> Completion {
    Completion::Robots {
        site,
        outcome: fetch_robots(&fetcher, url, public_only).await,
    }
}
