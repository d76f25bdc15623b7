//! Running crawls in tests: a configuration over a [`TestWeb`] with test
//! settings (no politeness delay, short timeouts, a store in a temporary
//! directory), and easy access to what the store recorded.

use crate::server::TestWeb;
use spinneret::config::{Config, load_str};
use spinneret_core::model::{Category, CheckResult};
use spinneret_crawl::{self as crawl, CrawlOptions, CrawlReport, Progress};
use spinneret_store::Store;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Settings every test crawl starts from; a test's own text may override any of them.
pub const TEST_SETTINGS: &[(&str, &str)] = &[
    ("user_agent", "\"spinneret-test/1.0\""),
    ("from", "\"tester@example.org\""),
    ("per_site_delay", "\"0s\""),
    ("timeout", "\"2s\""),
    ("connect_timeout", "\"2s\""),
    ("retries", "1"),
    ("max_retry_after", "\"5s\""),
];

/// A directory with a configuration for a test web.
pub struct Setup {
    /// Holds the store and reports.
    pub dir: tempfile::TempDir,
    /// The configuration file.
    pub config_path: PathBuf,
}

impl Setup {
    /// Write a configuration: the test settings (unless `text` sets them), `text`
    /// (settings then `[[task]]` tables; `{PORT}` is replaced), and the resolve table.
    pub fn new(web: &TestWeb, text: &str) -> Setup {
        let dir = tempfile::tempdir().expect("temp dir");
        let text = text.replace("{PORT}", &web.port().to_string());
        let (settings, tasks) = match text.find("[[task]]") {
            Some(i) => text.split_at(i),
            None => (text.as_str(), ""),
        };
        let mut full = String::new();
        for (k, v) in TEST_SETTINGS {
            if !settings
                .lines()
                .any(|l| l.trim_start().starts_with(&format!("{k} ")))
            {
                full.push_str(&format!("{k} = {v}\n"));
            }
        }
        full.push_str("store = \"store.db\"\n");
        full.push_str(settings);
        full.push('\n');
        full.push_str(tasks);
        full.push('\n');
        full.push_str(&web.resolve_toml());
        let config_path = dir.path().join("spinneret.toml");
        std::fs::write(&config_path, full).expect("write config");
        Setup { dir, config_path }
    }

    /// The configuration, loaded.
    pub fn config(&self) -> Config {
        spinneret::config::load_file(&self.config_path).expect("valid test config")
    }

    /// Run a crawl of the configuration.
    pub fn crawl(&self) -> CrawlReport {
        self.crawl_with(&CrawlOptions::default())
    }

    /// Run a crawl with options.
    pub fn crawl_with(&self, options: &CrawlOptions) -> CrawlReport {
        run_crawl(&self.config(), options)
    }

    /// Open the store.
    pub fn store(&self) -> Store {
        Store::open(&self.dir.path().join("store.db")).expect("open store")
    }

    /// The results of the newest run, by URL.
    pub fn results(&self) -> BTreeMap<String, CheckResult> {
        results_of(&self.store(), None)
    }

    /// The results a task reached in the newest run, by URL, with the task's role.
    pub fn task_results(&self, task: &str) -> BTreeMap<String, (CheckResult, String)> {
        let store = self.store();
        let run = store.last_run().unwrap().unwrap();
        let id = store
            .run_tasks(run.id)
            .unwrap()
            .into_iter()
            .find(|t| t.name == task)
            .expect("task exists")
            .id;
        store
            .run_results(run.id, Some(id))
            .unwrap()
            .into_iter()
            .map(|(r, role)| (r.url.clone(), (r, role.unwrap_or_default())))
            .collect()
    }

    /// The path of the directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// The results of the newest run (optionally of one task), by URL.
pub fn results_of(store: &Store, task: Option<i64>) -> BTreeMap<String, CheckResult> {
    let run = store.last_run().unwrap().expect("a run");
    store
        .run_results(run.id, task)
        .unwrap()
        .into_iter()
        .map(|(r, _)| (r.url.clone(), r))
        .collect()
}

/// The URLs of `results` in `category`, sorted.
pub fn urls_in(results: &BTreeMap<String, CheckResult>, category: Category) -> Vec<String> {
    results
        .values()
        .filter(|r| r.category == category)
        .map(|r| r.url.clone())
        .collect()
}

/// Run a crawl to its end on a runtime of its own.
pub fn run_crawl(config: &Config, options: &CrawlOptions) -> CrawlReport {
    let (_tx, rx) = tokio::sync::watch::channel(false);
    run_crawl_until(config, options, rx)
}

/// Run a crawl that stops when `stop` turns true (as Ctrl-C does).
pub fn run_crawl_until(
    config: &Config,
    options: &CrawlOptions,
    stop: tokio::sync::watch::Receiver<bool>,
) -> CrawlReport {
    let location = config
        .settings
        .store
        .location()
        .expect("the store's location");
    let store = Store::open_at(location).expect("open store");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let plan = config
        .crawl_plan(options.task.as_deref())
        .expect("the task is configured");
    rt.block_on(crawl::run(
        &plan,
        &store,
        options,
        Arc::new(Progress::default()),
        stop,
    ))
    .expect("crawl runs")
}

/// Parse a configuration text (for error tests).
pub fn parse_config(text: &str) -> Result<Config, String> {
    load_str(text, "test.toml", Path::new("/tmp")).map_err(|e| e.to_string())
}
