//! What a crawl is asked to do: its tasks and its settings. The caller makes
//! them from the configuration (`config::Config::crawl_plan`); the crawl
//! reads nothing else of it, so the configuration's file formats can change
//! without the crawl knowing.

use crate::fetch::FetchSettings;
use crate::policy::RuleFiles;
use crate::policy::robots::RobotsMode;
use spinneret_core::model::{AcceptedStatuses, TaskKind, TaskRecord};
use std::path::Path;
use std::time::Duration;
use url::Url;

/// The settings of a crawl, each part owned by the stage that uses it.
#[derive(Clone, Debug)]
pub struct CrawlSettings {
    /// How requests are made.
    pub fetch: FetchSettings,
    /// Where the avoid and leaf rules come from and robots.txt readings go.
    pub rule_files: RuleFiles,
    /// The robot's name in robots.txt: the first product token of the `User-Agent`, lower-cased.
    pub robot_name: String,
    /// Which reading of robots.txt decides.
    pub robots_rules: RobotsMode,
    /// How long a robots.txt holds when the server sends no cache headers.
    pub robots_expiry: Duration,
    /// The largest robots.txt `Crawl-delay` honoured.
    pub max_crawl_delay: Duration,
    /// Requests in flight across all sites.
    pub concurrency: usize,
    /// Requests in flight to one site.
    pub per_site_connections: usize,
    /// Minimum interval between the starts of two requests to one site.
    pub per_site_delay: Duration,
    /// Retries after a timeout, a connection error, 429 or 503.
    pub retries: u32,
    /// The longest `Retry-After` waited for.
    pub max_retry_after: Duration,
    /// A result younger than this is reused without a request.
    pub result_max_age: Duration,
    /// Statuses counted as ok beside 2xx (`accept_status`, `--accept`).
    pub accept_status: AcceptedStatuses,
    /// Redirect hops followed before a URL is called broken (`max_redirects`).
    pub max_redirects: usize,
}

/// How far and how much a task traverses, so that a trap (`/1/2/3/…`,
/// an endless calendar) ends: a document beyond either bound is tested as
/// a leaf, with the bound as its reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskBounds {
    /// Links from the top beyond which nothing is traversed (`max_depth`).
    pub max_depth: u32,
    /// Documents traversed at most (`max_documents`).
    pub max_documents: u64,
}

impl Default for TaskBounds {
    fn default() -> Self {
        TaskBounds {
            max_depth: 50,
            max_documents: 100_000,
        }
    }
}

/// A task as the crawl runs it, borrowed from the configuration's task.
#[derive(Clone, Debug)]
pub struct CrawlTask<'a> {
    /// The task as the store records it (name, kind, top, owner, output, windows).
    pub record: TaskRecord<'a>,
    /// Where traversal starts.
    pub top: &'a Url,
    /// Further tops, traversed as the top is (a `web` task's from the
    /// library's Worm VL).
    pub more_tops: &'a [Url],
    /// URL prefixes leafed for this task alone.
    pub exclude: &'a [String],
    /// URL patterns whose URLs get no request for this task (the
    /// configuration's global ones and the task's own).
    pub patterns: &'a crate::policy::patterns::UrlPatterns,
    /// How far and how much it traverses.
    pub bounds: TaskBounds,
}

impl CrawlTask<'_> {
    /// The task's name.
    pub fn name(&self) -> &str {
        self.record.name
    }

    /// How the infostructure is bounded.
    pub fn kind(&self) -> TaskKind {
        self.record.kind
    }
}

/// A crawl's tasks, in the configuration's order, and its settings.
#[derive(Clone, Debug)]
pub struct CrawlPlan<'a> {
    /// The configuration file the plan came from, if any: `--resume`
    /// continues the newest interrupted run of the same file.
    pub source: Option<&'a Path>,
    /// The settings.
    pub settings: CrawlSettings,
    /// The tasks to run (all of the configuration's, or the one `--task` names).
    pub tasks: Vec<CrawlTask<'a>>,
}
