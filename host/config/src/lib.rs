//! The crawl configuration: a TOML file with global settings and `[[task]]` entries.
//!
//! Loading validates everything a crawl needs before the first request: a bad
//! key or value is a [`ConfigError`] naming file, line and column and what is
//! expected. See `docs/configuration.md` for every key.

// Each dependency listed is used (tests' own are dev-dependencies).
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

mod explain;
mod instructions;
pub mod library;
mod load;
mod mail;
mod password;
pub mod plugin_source;
mod request;
mod store;
mod to_toml;

pub use instructions::{is_instruction_file, load_instructions, parse_instructions};
pub use library::{LibrarySettings, Moderator};
pub use load::{
    Concurrency, ConfigError, MaxBody, MaxDepth, MaxRedirects, PerSiteDelay, Retries, Timeout,
    library_dir, load_file, load_str, parse_top, root_dir, setting_keys,
};
pub use load::{check_user_agent, line_col};
pub use mail::{MailSettings, TlsMode, check_email};
pub use password::Password;
pub use request::{basic_auth_argument, header_argument, header_rules};
pub use spinneret_core::values::{Bounded, ByteSize, HumanDuration};
pub use store::StoreSetting;
pub use to_toml::to_toml;

use spinneret_plugin_host::entry::{PluginConfig, PluginSource};
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;
use url::Url;

/// Read a configuration file of either format: a MOMspider instruction
/// file (seed 000, Appendix A) or the TOML configuration. A `.toml` file is
/// always TOML; otherwise the first directive decides.
pub fn load(path: &std::path::Path) -> Result<Config, ConfigError> {
    let is_toml = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
    load::read_with(path, |text, name, dir| {
        if !is_toml && is_instruction_file(text) {
            parse_instructions(text, name, dir)
        } else {
            load_str(text, name, dir)
        }
    })
}

/// The default `User-Agent`: the robot's name token, its version and,
/// when the project has one, where to read about it (the workspace's
/// `repository`): `spinneret/0.1.0 (+https://…; web maintenance robot)`.
pub fn default_user_agent() -> String {
    user_agent_for(env!("CARGO_PKG_VERSION"), env!("CARGO_PKG_REPOSITORY"))
}

/// The `User-Agent` of this `version` with this `home`, which is named
/// only when it is a real address: a server's log must not send its
/// reader to a reserved placeholder (`example.invalid`).
fn user_agent_for(version: &str, home: &str) -> String {
    let reserved = |host: &str| {
        let tld = host.rsplit('.').next().unwrap_or(host);
        // RFC 2606's reserved names.
        matches!(tld, "invalid" | "example" | "test" | "localhost")
            || ["example.org", "example.com", "example.net"]
                .iter()
                .any(|d| host == *d || host.ends_with(&format!(".{d}")))
    };
    let real = Url::parse(home)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .and_then(|u| u.host_str().map(|h| !reserved(h)))
        .unwrap_or(false);
    match real {
        true => format!("spinneret/{version} (+{home}; web maintenance robot)"),
        false => format!("spinneret/{version} (web maintenance robot)"),
    }
}

pub use spinneret_core::model::TaskKind;

/// One maintenance task: an infostructure, its owner and where its outputs go.
#[derive(Clone, Debug)]
pub struct TaskConfig {
    /// The infostructure's name; for `owner` tasks also the Owner documents must carry.
    pub name: String,
    /// How the infostructure is bounded.
    pub kind: TaskKind,
    /// Where traversal starts.
    pub top: Url,
    /// Further tops, added for a run: a `web` task's are the pointers of
    /// the library's Worm VL (`[library] worm`).
    pub more_tops: Vec<Url>,
    /// The owner's e-mail address, to which notifications go.
    pub email: Option<String>,
    /// The directory the task's reports are written to.
    pub output: PathBuf,
    /// URL prefixes leafed (HEAD only) for this task alone.
    pub exclude: Vec<String>,
    /// URL patterns whose URLs get no request: the configuration's global
    /// `exclude_regex`/`include_regex`, the task's own, and the command
    /// line's `--exclude`/`--include`.
    pub patterns: UrlPatterns,
    /// A document modified within this many days counts as "recently modified".
    pub changed_days: u32,
    /// An owned document whose Expires is within this many days counts as "expiring".
    pub expiring_days: u32,
    /// Whether the default built-in plugins run for this task.
    pub default_plugins: bool,
    /// Where the maintenance index goes and what it is called.
    pub index: IndexSettings,
    /// Which changes justify a message to the owner.
    pub notify: Notify,
    /// When `spinneret watch` runs it (else the global schedule).
    pub schedule: Option<spinneret_core::schedule::Schedule>,
    /// How far and how much it traverses.
    pub bounds: TaskBounds,
}

pub use spinneret_crawl::TaskBounds;
pub use spinneret_crawl::policy::patterns::{UrlPattern, UrlPatterns};

/// The task's maintenance index (seed 000: `IndexFile`, `IndexURL`, `IndexTitle`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IndexSettings {
    /// The index's file name inside the task's output directory (default `index.html`).
    pub file: Option<String>,
    /// Where the index is published, for the links in the owner's message.
    pub url: Option<Url>,
    /// The index's title.
    pub title: Option<String>,
}

/// What justifies a message to the task's owner (seed 000, Appendix A:
/// `EmailBroken`, `EmailChanged N`, `EmailExpired N`; moved is spinneret's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Notify {
    /// Broken links.
    pub broken: bool,
    /// Moved (redirected) links.
    pub moved: bool,
    /// Documents modified within the task's `changed_days`.
    pub changed: bool,
    /// Owned documents expiring within the task's `expiring_days`.
    pub expired: bool,
}

impl Notify {
    /// Whether any change justifies a message.
    pub fn any(&self) -> bool {
        self.broken || self.moved || self.changed || self.expired
    }

    /// Whether a finding of `kind` (as the `maintenance` detector names it)
    /// is mailed. Blocked links go with broken ones (`EmailBroken`): a
    /// reader cannot follow either.
    pub fn wants(&self, kind: &str) -> bool {
        match kind {
            // A link to a place not in its page is broken for its reader.
            "broken" | "blocked" | "broken-fragment" => self.broken,
            "moved" => self.moved,
            "recently-modified" => self.changed,
            "expiring" => self.expired,
            _ => false,
        }
    }
}

impl TaskConfig {
    /// What the store records of the task.
    pub fn record(&self) -> spinneret_core::model::TaskRecord<'_> {
        spinneret_core::model::TaskRecord {
            name: &self.name,
            kind: self.kind,
            top: self.top.as_str(),
            email: self.email.as_deref(),
            output: &self.output,
            changed_days: self.changed_days,
            expiring_days: self.expiring_days,
        }
    }

    /// The task as the crawl runs it.
    pub fn crawl_task(&self) -> spinneret_crawl::CrawlTask<'_> {
        spinneret_crawl::CrawlTask {
            record: self.record(),
            top: &self.top,
            more_tops: &self.more_tops,
            exclude: &self.exclude,
            patterns: &self.patterns,
            bounds: self.bounds,
        }
    }

    /// The index file's path: inside the output directory.
    pub fn index_path(&self) -> PathBuf {
        self.output
            .join(self.index.file.as_deref().unwrap_or("index.html"))
    }
}

/// Global settings that apply to the whole crawl.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The `User-Agent` header; its first product token is the robot's name for robots.txt.
    pub user_agent: String,
    /// The `From` header: the e-mail address of the person running the robot.
    pub from: Option<String>,
    /// The `Accept` header sent with every request (the Worm sent `text/html`).
    pub accept: String,
    /// Requests in flight across all sites.
    pub concurrency: usize,
    /// Requests in flight to one site.
    pub per_site_connections: usize,
    /// Minimum interval between the starts of two requests to one site.
    pub per_site_delay: Duration,
    /// The largest robots.txt `Crawl-delay` honoured; longer ones are capped to this.
    pub max_crawl_delay: Duration,
    /// Time allowed to connect.
    pub connect_timeout: Duration,
    /// Time allowed for a whole request, body included.
    pub timeout: Duration,
    /// Retries after a timeout, a connection error, 429 or 503.
    pub retries: u32,
    /// The longest `Retry-After` waited for; a longer one gives up at once.
    pub max_retry_after: Duration,
    /// Redirect hops followed before a URL is called broken (`max_redirects`).
    pub max_redirects: usize,
    /// Which servers' certificates are trusted: the system's authorities
    /// and a CA file's (`ca_file`, `--cacert`), or any (`insecure`).
    pub trust: spinneret_crawl::fetch::trust::CertificateTrust,
    /// Read local files only, make no network request (`--offline`).
    pub offline: bool,
    /// Which file a local URL is read from: a directory's index files, a
    /// missing file's fallback extensions (`--index-files`,
    /// `--fallback-extensions`).
    pub local_names: spinneret_crawl::fetch::LocalNames,
    /// The most bytes of a body read (after decompression); more is recorded as truncated.
    pub max_body: u64,
    /// Where the store is: an SQLite file (the default) or a PostgreSQL
    /// database.
    pub store: StoreSetting,
    /// A result younger than this is reused without a request (default 0:
    /// every run tests every URL, conditionally where it can).
    pub result_max_age: Duration,
    /// Statuses counted as ok beside 2xx (`accept_status`, `--accept`).
    pub accept_status: spinneret_core::model::AcceptedStatuses,
    /// The root directory of a local tree (`root_dir`, `--root-dir`), an
    /// absolute path: root-relative references of its `file:` documents
    /// resolve against it.
    pub root_dir: Option<PathBuf>,
    /// The cookie jar (`cookie_jar`, `--cookie-jar`), read: the crawl sends
    /// its cookies and writes it back with the ones the sites set.
    pub cookie_jar: Option<spinneret_crawl::fetch::cookies::CookieJar>,
    /// How long a robots.txt holds when the server sends no cache headers (the draft says 7 days).
    pub robots_expiry: Duration,
    /// Which reading of robots.txt decides: both the draft and RFC 9309
    /// (the default), or one of them.
    pub robots_rules: spinneret_crawl::policy::robots::RobotsMode,
    /// Whether a link's `#fragment` must name a place (an `id`, an `<a
    /// name>`) in the HTML document it points at; a missing one is a
    /// `broken-fragment` finding.
    pub check_fragments: bool,
    /// Avoid/leaf files in the MOMspider format that are only read (the system's).
    pub avoid_files: Vec<PathBuf>,
    /// The user's avoid file (seed 000, Appendix C): read, and rewritten after
    /// each run with the restrictions of the robots.txt files read.
    pub avoid_file: Option<PathBuf>,
    /// Sites files that are only read (the system's, Appendix D).
    pub system_sites: Vec<PathBuf>,
    /// The user's sites file (Appendix D): the sites whose robots.txt has been
    /// read and until when it holds; read, and rewritten after each run.
    pub sites_file: Option<PathBuf>,
    /// Where the Worm's search index lives (a directory), instead of beside
    /// a store file or, for a database, in the user's data directory.
    pub search_index: Option<PathBuf>,
    /// How owners are mailed.
    pub mail: MailSettings,
    /// When `spinneret watch` runs the tasks that name no schedule.
    pub schedule: Option<spinneret_core::schedule::Schedule>,
    /// Host names resolved to fixed addresses instead of DNS (like curl's `--resolve`).
    pub resolve: BTreeMap<String, IpAddr>,
    /// Hosts of this machine or its network that may be checked whatever
    /// led to them (`internal_hosts`): a library pointer, a link on a page
    /// from elsewhere, a redirect. Others there are reached only from the
    /// user's own tops and the pages on this machine or network.
    pub internal_hosts: Vec<String>,
    /// Headers and basic authentication for the requests under a prefix
    /// (`[[request]]`), the passwords read at load.
    pub requests: Vec<spinneret_crawl::fetch::RequestRule>,
}

impl Settings {
    /// The robot's name token: the first product token of the `User-Agent`, lower-cased.
    pub fn robot_name(&self) -> String {
        self.user_agent
            .split(['/', ' ', '\t'])
            .find(|token| !token.is_empty())
            .unwrap_or("spinneret")
            .to_ascii_lowercase()
    }

    /// What the crawl needs of these settings, each part for the stage that uses it.
    pub fn crawl(&self) -> spinneret_crawl::CrawlSettings {
        spinneret_crawl::CrawlSettings {
            fetch: spinneret_crawl::fetch::FetchSettings {
                user_agent: self.user_agent.clone(),
                from: self.from.clone(),
                accept: self.accept.clone(),
                connect_timeout: self.connect_timeout,
                timeout: self.timeout,
                idle_per_site: self.per_site_connections,
                resolve: self.resolve.clone(),
                max_body: self.max_body,
                // A crawl checks what its tasks reach, intranets included,
                // holding to the address rule what pages from elsewhere
                // lead to; a collection does the same per request.
                public_only: false,
                internal_hosts: self.internal_hosts.clone(),
                requests: self.requests.clone(),
                root_dir: self
                    .root_dir
                    .as_deref()
                    .and_then(|d| Url::from_directory_path(d).ok()),
                cookies: self.cookie_jar.clone(),
                trust: self.trust.clone(),
                offline: self.offline,
                local_names: self.local_names.clone(),
            },
            rule_files: spinneret_crawl::policy::RuleFiles {
                avoid_files: self.avoid_files.clone(),
                avoid_file: self.avoid_file.clone(),
                system_sites: self.system_sites.clone(),
                sites_file: self.sites_file.clone(),
            },
            robot_name: self.robot_name(),
            robots_rules: self.robots_rules,
            robots_expiry: self.robots_expiry,
            max_crawl_delay: self.max_crawl_delay,
            concurrency: self.concurrency,
            per_site_connections: self.per_site_connections,
            per_site_delay: self.per_site_delay,
            retries: self.retries,
            max_retry_after: self.max_retry_after,
            result_max_age: self.result_max_age,
            accept_status: self.accept_status,
            max_redirects: self.max_redirects,
        }
    }
}

/// What is wrong with `store` as the store's location, when it is empty or
/// a URL rather than a file path (`postgres://…` made a SQLite file in a
/// directory called `postgres:`).
pub fn store_location_problem(store: &str) -> Option<String> {
    if store.trim().is_empty() {
        // SQLite would take it for a temporary database, gone at the end.
        return Some(
            "the store is empty; name a file, e.g. \"spinneret.db\", or a postgres:// URL".into(),
        );
    }
    let (scheme, _) = store.split_once("://")?;
    let is_scheme = scheme.len() > 1
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !is_scheme {
        return None;
    }
    Some(match scheme.to_ascii_lowercase().as_str() {
        "postgres" | "postgresql" => format!(
            "`{scheme}://…` is a PostgreSQL store, which this command cannot use yet (the search index and the library's files live beside a store file); give a file path, e.g. \"spinneret.db\""
        ),
        _ => format!(
            "the store is a file path, not a `{scheme}://` URL; e.g. \"spinneret.db\" or \"/var/lib/spinneret/spinneret.db\""
        ),
    })
}

/// The store given on the command line of a crawl (`--store`): a file, or
/// a PostgreSQL URL (its password from `PGPASSWORD`).
pub fn parse_store_setting(s: &str) -> Result<StoreSetting, String> {
    StoreSetting::parse(s, &|p| PathBuf::from(p))
}

/// A store to write given on the command line (`--store`): as
/// [`parse_store_setting`], and a file's directory must be there (a
/// mistyped path is said, not made).
pub fn parse_new_store_setting(s: &str) -> Result<StoreSetting, String> {
    let setting = parse_store_setting(s)?;
    if let StoreSetting::File(path) = &setting {
        existing_parent(path)?;
    }
    Ok(setting)
}

/// `path`'s directory, when it is there; else what to do.
pub fn existing_parent(path: &std::path::Path) -> Result<(), String> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => Err(format!(
            "the directory {} does not exist; create it first (mkdir -p {}) or give another path",
            dir.display(),
            dir.display()
        )),
        _ => Ok(()),
    }
}

/// A store file given on the command line (`--store`) of a command that
/// needs the store in a file.
pub fn parse_store_path(s: &str) -> Result<PathBuf, String> {
    match store_location_problem(s) {
        Some(problem) => Err(problem),
        None => Ok(PathBuf::from(s)),
    }
}

/// The default store: `spinneret.db` in the user's data directory.
pub fn default_store_path() -> PathBuf {
    dirs::data_dir()
        .map(|d| d.join("spinneret"))
        .unwrap_or_else(|| PathBuf::from("."))
        .join("spinneret.db")
}

/// The `Accept` header by default: HTML first, anything else too, since a
/// link checker asks for images and files as well (their HEADs).
pub const DEFAULT_ACCEPT: &str = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8";

impl Default for Settings {
    fn default() -> Self {
        Settings {
            user_agent: default_user_agent(),
            from: None,
            accept: DEFAULT_ACCEPT.to_string(),
            concurrency: 64,
            per_site_connections: 2,
            per_site_delay: Duration::from_millis(250),
            max_crawl_delay: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            timeout: Duration::from_secs(30),
            retries: 2,
            max_retry_after: Duration::from_secs(120),
            // The network layer's redirect rule's default (MAX_REDIRECTS).
            max_redirects: 10,
            trust: Default::default(),
            offline: false,
            local_names: Default::default(),
            max_body: 10 << 20,
            store: StoreSetting::File(default_store_path()),
            result_max_age: Duration::ZERO,
            accept_status: spinneret_core::model::AcceptedStatuses::NONE,
            root_dir: None,
            cookie_jar: None,
            robots_expiry: Duration::from_secs(7 * 24 * 3600),
            robots_rules: Default::default(),
            check_fragments: true,
            avoid_files: Vec::new(),
            avoid_file: None,
            system_sites: Vec::new(),
            sites_file: None,
            search_index: None,
            mail: MailSettings::default(),
            schedule: None,
            resolve: BTreeMap::new(),
            internal_hosts: Vec::new(),
            requests: Vec::new(),
        }
    }
}

/// The built-in plugins that run for every task unless configured otherwise.
pub const DEFAULT_PLUGINS: &[&str] = &["maintenance", "momspider-index", "json-report"];

/// The built-in reporters that write one file into a task's output
/// directory, with its name when their configuration names none.
pub const FILE_REPORTERS: &[(&str, &str)] = &[
    ("momspider-index", "index.html"),
    ("json-report", "report.jsonl"),
    ("markdown-report", "report.md"),
    ("junit-report", "junit.xml"),
    ("csv-report", "report.csv"),
    ("sarif-report", "report.sarif"),
    ("github-annotations", "annotations.txt"),
];

/// A whole configuration: settings and tasks.
#[derive(Clone, Debug)]
pub struct Config {
    /// The file it was read from, if any (for messages).
    pub source: Option<PathBuf>,
    /// Global settings.
    pub settings: Settings,
    /// The tasks, in file order.
    pub tasks: Vec<TaskConfig>,
    /// The `[[plugin]]` entries, in file order.
    pub plugins: Vec<PluginConfig>,
    /// The virtual library's `[library]` table.
    pub library: LibrarySettings,
}

/// The directory of `check`'s reports for the task of `top`, under the
/// directory `check` writes into: the host (and port) and the path, in
/// letters, digits, `.` and `-` (`www.example.org_docs`; `local_srv_www`
/// for a `file:` tree), at most 100 bytes, distinct from those `taken`.
fn check_directory(top: &Url, taken: &mut std::collections::HashSet<String>) -> String {
    let mut name = match (top.host_str(), top.port()) {
        (Some(h), Some(p)) if !h.is_empty() => format!("{h}-{p}"),
        (Some(h), None) if !h.is_empty() => h.to_string(),
        _ => "local".to_string(),
    };
    for segment in top.path().split('/').filter(|s| !s.is_empty()) {
        name.push('_');
        name.extend(segment.chars().map(|c| {
            match c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                true => c,
                false => '-',
            }
        }));
    }
    let mut name: String = name.trim_start_matches('.').chars().take(100).collect();
    if name.is_empty() {
        name.push_str("site");
    }
    let base = name.clone();
    let mut n = 1;
    while !taken.insert(name.clone()) {
        n += 1;
        name = format!("{base}-{n}");
    }
    name
}

impl Config {
    /// Whether every local task's top lies under the root directory, when
    /// one is given: root-relative links resolve against the root, so a
    /// tree outside it would be read half against the root, half not.
    pub fn tops_under_root(&self) -> Result<(), String> {
        let Some(root) = &self.settings.root_dir else {
            return Ok(());
        };
        for task in &self.tasks {
            if let Ok(top) = task.top.to_file_path()
                && task.top.scheme() == "file"
                && !top.starts_with(root)
            {
                return Err(format!(
                    "the top of task `{}`, {}, is not under the root directory {}; give the directory its tree is deployed from",
                    task.name,
                    top.display(),
                    root.display()
                ));
            }
        }
        Ok(())
    }

    /// The crawl of all the tasks, or of the one named `task` (`--task`).
    pub fn crawl_plan(
        &self,
        task: Option<&str>,
    ) -> Result<spinneret_crawl::CrawlPlan<'_>, spinneret_crawl::CrawlError> {
        let tasks = match task {
            None => self.tasks.iter().collect(),
            Some(name) => match self.tasks.iter().find(|t| t.name == name) {
                Some(t) => vec![t],
                None => {
                    return Err(spinneret_crawl::CrawlError::NoSuchTask {
                        name: name.to_string(),
                        known: self.tasks.iter().map(|t| t.name.clone()).collect(),
                    });
                }
            },
        };
        let mut settings = self.settings.crawl();
        // The cookies the tops' sites set are kept, no other site's.
        if let Some(jar) = &mut settings.fetch.cookies {
            jar.keep_from(tasks.iter().map(|t| &t.top));
        }
        Ok(spinneret_crawl::CrawlPlan {
            source: self.source.as_deref(),
            settings,
            tasks: tasks.into_iter().map(TaskConfig::crawl_task).collect(),
        })
    }

    /// The plugins that run for `task`: its `[[plugin]]` entries, then the
    /// default built-ins no entry names (unless the task turns them off).
    pub fn plugins_for(&self, task: &TaskConfig) -> Vec<PluginConfig> {
        let mut out: Vec<PluginConfig> = self
            .plugins
            .iter()
            .filter(|p| p.tasks.as_ref().is_none_or(|t| t.contains(&task.name)))
            .cloned()
            .collect();
        if task.default_plugins {
            for name in DEFAULT_PLUGINS {
                let named = self
                    .plugins
                    .iter()
                    .any(|p| p.source == PluginSource::Builtin(name.to_string()));
                if !named {
                    out.push(PluginConfig {
                        name: name.to_string(),
                        source: PluginSource::Builtin(name.to_string()),
                        config: serde_json::json!({}),
                        grants: Default::default(),
                        tasks: None,
                        defined_at: None,
                    });
                }
            }
        }
        for p in &mut out {
            if p.source == PluginSource::Builtin("momspider-index".into()) {
                task.index.apply_to(&mut p.config);
            }
        }
        // Tasks that share an output directory (an instruction file's
        // IndexFiles side by side) must not share a report file: each
        // built-in file reporter names its file after the task's index
        // (`ICS.html`: `ICS.jsonl`) or, without one, after the task.
        let shared = self
            .tasks
            .iter()
            .filter(|t| t.output == task.output)
            .count()
            > 1;
        if shared {
            let stem = match &task.index.file {
                Some(f) => f
                    .rsplit_once('.')
                    .map_or(f.as_str(), |(s, _)| s)
                    .to_string(),
                None => load::sanitize(&task.name),
            };
            for p in &mut out {
                let default = FILE_REPORTERS
                    .iter()
                    .find(|(b, _)| p.source == PluginSource::Builtin((*b).to_string()))
                    .map(|(_, file)| *file);
                if let (Some(default), Some(table)) = (default, p.config.as_object_mut()) {
                    let ext = default.rsplit_once('.').map_or("", |(_, e)| e);
                    table
                        .entry("file")
                        .or_insert_with(|| format!("{stem}.{ext}").into());
                }
            }
        }
        out
    }

    /// Two tasks that would write their index to one file, said with the
    /// setting (`setting`, as the file spells it) that tells them apart:
    /// the second would overwrite the first's index (and its prior version).
    pub fn index_clash(&self, setting: &str) -> Option<String> {
        self.tasks.iter().enumerate().find_map(|(i, a)| {
            let b = self.tasks[i + 1..]
                .iter()
                .find(|b| b.index_path() == a.index_path())?;
            Some(format!(
                "tasks `{}` and `{}` both write their index to {}; give each its own {setting}",
                a.name,
                b.name,
                a.index_path().display()
            ))
        })
    }
}

impl IndexSettings {
    /// Hand the task's index file and title to the `momspider-index`
    /// reporter, where its own configuration does not name them.
    fn apply_to(&self, config: &mut serde_json::Value) {
        let Some(table) = config.as_object_mut() else {
            return;
        };
        if let Some(file) = &self.file {
            table.entry("file").or_insert_with(|| file.clone().into());
        }
        if let Some(title) = &self.title {
            table.entry("title").or_insert_with(|| title.clone().into());
        }
    }
}

impl Config {
    /// A configuration for a one-off check of some top URLs with default settings,
    /// one `site` task per URL.
    pub fn for_check(urls: &[Url], output: PathBuf) -> Config {
        let mut taken = std::collections::HashSet::new();
        let tasks = urls
            .iter()
            .map(|u| TaskConfig {
                name: u.to_string(),
                kind: TaskKind::Site,
                top: u.clone(),
                more_tops: Vec::new(),
                email: None,
                output: output.join(check_directory(u, &mut taken)),
                exclude: Vec::new(),
                patterns: UrlPatterns::default(),
                changed_days: 7,
                expiring_days: 7,
                default_plugins: true,
                index: IndexSettings::default(),
                notify: Notify::default(),
                schedule: None,
                bounds: TaskBounds::default(),
            })
            .collect();
        Config {
            source: None,
            settings: Settings::default(),
            tasks,
            plugins: Vec::new(),
            library: LibrarySettings::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_user_agent_names_the_projects_home_only_when_it_has_a_real_one() {
        assert_eq!(
            user_agent_for("0.1.0", "https://example.invalid/spinneret"),
            "spinneret/0.1.0 (web maintenance robot)"
        );
        assert_eq!(
            user_agent_for("0.1.0", "https://www.example.org/spinneret"),
            "spinneret/0.1.0 (web maintenance robot)"
        );
        assert_eq!(
            user_agent_for("0.2.0", "https://spinneret.dev/"),
            "spinneret/0.2.0 (+https://spinneret.dev/; web maintenance robot)"
        );
        assert_eq!(
            user_agent_for("0.1.0", ""),
            "spinneret/0.1.0 (web maintenance robot)"
        );
        // The built one follows the workspace's `repository`.
        assert!(
            default_user_agent().starts_with(&format!("spinneret/{} (", env!("CARGO_PKG_VERSION")))
        );
    }
}
