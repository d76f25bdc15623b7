//! Reading a TOML configuration into [`Config`], with located errors.

use super::mail::check_email;
use super::password::password_source;
use super::{
    Config, IndexSettings, MailSettings, Notify, PluginConfig, Settings, TaskConfig, TaskKind,
    UrlPattern, UrlPatterns,
};
use serde::Deserialize;
use serde_spanned::Spanned;
use spinneret_core::model::AcceptedStatuses;
use spinneret_core::values::{Bounded, DurationIn, SizeIn, ms};
use std::collections::{BTreeMap, HashSet};
use std::net::IpAddr;
use std::ops::Range;
use std::path::{Path, PathBuf};
use url::Url;

/// `per_site_delay`'s range (the command line's `--delay` too).
pub type PerSiteDelay = DurationIn<0, { ms::HOUR }>;
/// `timeout`'s range (`--timeout`).
pub type Timeout = DurationIn<100, { ms::HOUR }>;
/// `max_body`'s range (`--max-body`).
pub type MaxBody = SizeIn<1024, { 4 << 30 }>;
/// A task's `max_depth` range (`--max-depth`).
pub type MaxDepth = Bounded<1, 100_000>;
/// `concurrency`'s range (`--concurrency`, `--max-concurrency`).
pub type Concurrency = Bounded<1, 4096>;
/// `retries`'s range (`--retries`, `--max-retries`).
pub type Retries = Bounded<0, 10>;
/// `max_redirects`'s range (`--max-redirects`).
pub type MaxRedirects = Bounded<0, 100>;

/// A configuration that cannot be used, with where and why.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{path}: cannot read the configuration: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A key or value is wrong at a known place.
    #[error("{path}:{line}:{column}: {message}")]
    At {
        /// The file (or `<config>` for a string).
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong and what is expected.
        message: String,
    },
    /// Something is wrong with the configuration as a whole.
    #[error("{path}: {message}")]
    Whole {
        /// The file.
        path: String,
        /// What is wrong and what to do.
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    user_agent: Option<Spanned<String>>,
    from: Option<Spanned<String>>,
    accept: Option<Spanned<String>>,
    concurrency: Option<Concurrency>,
    per_site_connections: Option<Bounded<1, 64>>,
    per_site_delay: Option<PerSiteDelay>,
    max_crawl_delay: Option<DurationIn<0, { ms::DAY }>>,
    connect_timeout: Option<DurationIn<100, { 10 * ms::MINUTE }>>,
    timeout: Option<Timeout>,
    retries: Option<Retries>,
    max_redirects: Option<MaxRedirects>,
    insecure: Option<bool>,
    ca_file: Option<Spanned<String>>,
    max_retry_after: Option<DurationIn<0, { ms::DAY }>>,
    max_body: Option<MaxBody>,
    store: Option<Spanned<String>>,
    store_password: Option<Spanned<toml::Value>>,
    store_password_env: Option<Spanned<String>>,
    store_password_file: Option<Spanned<String>>,
    result_max_age: Option<DurationIn<0, { 3650 * ms::DAY }>>,
    accept_status: Option<Spanned<toml::Value>>,
    root_dir: Option<Spanned<String>>,
    cookie_jar: Option<Spanned<String>>,
    robots_expiry: Option<DurationIn<{ ms::MINUTE }, { 3650 * ms::DAY }>>,
    robots_rules: Option<Spanned<String>>,
    check_fragments: Option<bool>,
    #[serde(default)]
    avoid_files: Vec<Spanned<String>>,
    avoid_file: Option<String>,
    #[serde(default)]
    system_sites: Vec<String>,
    sites_file: Option<String>,
    search_index: Option<String>,
    mail: Option<Spanned<super::mail::RawMail>>,
    schedule: Option<Spanned<String>>,
    #[serde(default)]
    resolve: BTreeMap<String, Spanned<String>>,
    #[serde(default)]
    internal_hosts: Vec<Spanned<String>>,
    #[serde(default, rename = "request")]
    requests: Vec<Spanned<super::request::RawRequest>>,
    #[serde(default)]
    exclude_regex: Vec<Spanned<String>>,
    #[serde(default)]
    include_regex: Vec<Spanned<String>>,
    #[serde(default, rename = "task")]
    tasks: Vec<RawTask>,
    #[serde(default, rename = "plugin")]
    plugins: Vec<RawPlugin>,
    library: Option<super::library::RawLibrary>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlugin {
    name: Spanned<String>,
    source: Spanned<String>,
    config: Option<toml::Table>,
    #[serde(default)]
    hosts: Vec<String>,
    memory: Option<SizeIn<{ 1 << 20 }, { 4 << 30 }>>,
    time: Option<DurationIn<1, { ms::HOUR }>>,
    output: Option<SizeIn<0, { 16 << 30 }>>,
    tasks: Option<Vec<Spanned<String>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTask {
    name: Spanned<String>,
    kind: Spanned<String>,
    top: Option<Spanned<String>>,
    email: Option<Spanned<String>>,
    output: Option<String>,
    #[serde(default)]
    exclude: Vec<Spanned<String>>,
    #[serde(default)]
    exclude_regex: Vec<Spanned<String>>,
    #[serde(default)]
    include_regex: Vec<Spanned<String>>,
    changed_days: Option<Spanned<Bounded<0, 36500>>>,
    expiring_days: Option<Spanned<Bounded<0, 36500>>>,
    default_plugins: Option<bool>,
    index_file: Option<Spanned<String>>,
    index_url: Option<Spanned<String>>,
    index_title: Option<String>,
    email_broken: Option<Spanned<bool>>,
    email_moved: Option<Spanned<bool>>,
    email_changed: Option<Spanned<Bounded<0, 36500>>>,
    email_expired: Option<Spanned<Bounded<0, 36500>>>,
    schedule: Option<Spanned<String>>,
    max_depth: Option<MaxDepth>,
    levels: Option<Spanned<Bounded<1, 100_000>>>,
    max_documents: Option<Bounded<1, 1_000_000_000>>,
}

/// A local tree's root directory (`root_dir`, `--root-dir`): it must exist.
pub fn root_dir(path: &Path) -> Result<PathBuf, String> {
    // A `file:` URL names its directory as well as its path does.
    let from_url = path
        .to_str()
        .filter(|p| p.starts_with("file:"))
        .and_then(|p| Url::parse(p).ok())
        .and_then(|u| u.to_file_path().ok());
    let path = spinneret_core::fs::absolute_normal(from_url.as_deref().unwrap_or(path));
    match path.is_dir() {
        true => Ok(path),
        false => Err(format!(
            "the root directory {} is not a directory; give the directory a local tree is deployed from",
            path.display()
        )),
    }
}

/// `accept_status`: a status (`403`), a list of codes and ranges in a
/// string (`"403, 500..=599"`), or an array of either.
fn accept_status(value: &toml::Value) -> Result<AcceptedStatuses, String> {
    let mut set = AcceptedStatuses::NONE;
    let items = match value {
        toml::Value::Array(items) => items.as_slice(),
        one => std::slice::from_ref(one),
    };
    for item in items {
        match item {
            toml::Value::Integer(n) => set.add_list(&n.to_string())?,
            toml::Value::String(s) => set.add_list(s)?,
            _ => {
                return Err(
                    "accept_status takes statuses and ranges, e.g. [403, \"500..=599\"]".into(),
                );
            }
        }
    }
    Ok(set)
}

/// A `web` task's recursion depth when it names none: the top, the
/// documents it links to, and theirs.
const WEB_LEVELS: u32 = 2;

/// Read and validate a configuration file.
pub fn load_file(path: &Path) -> Result<Config, ConfigError> {
    read_with(path, load_str)
}

/// Read a configuration file and parse it with `parse` (text, name for
/// messages, the directory relative paths resolve against).
pub(super) fn read_with(
    path: &Path,
    parse: impl FnOnce(&str, &str, &Path) -> Result<Config, ConfigError>,
) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let base = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut config = parse(&text, &path.display().to_string(), base)?;
    config.source = Some(path.to_path_buf());
    Ok(config)
}

/// `base_dir` made absolute, and a resolver of paths relative to it.
pub(super) fn relative_to(base_dir: &Path) -> (PathBuf, impl Fn(&str) -> PathBuf) {
    let abs_dir = spinneret_core::fs::absolute_normal(base_dir);
    let dir = abs_dir.clone();
    let rel = move |p: &str| -> PathBuf { spinneret_core::fs::absolute_normal(&dir.join(p)) };
    (abs_dir, rel)
}

/// One entry of `internal_hosts`: a host name or an address as a URL
/// writes it, lower-cased (an IPv6 address without its brackets).
fn internal_host(raw: &str) -> Result<String, String> {
    let host = raw.trim().trim_start_matches('[').trim_end_matches(']');
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let plain = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':'));
    let is_ip = host.parse::<IpAddr>().is_ok();
    match plain && (is_ip || !host.contains(':')) {
        true => Ok(host),
        false => Err(format!(
            "`{raw}` is not a host name or an IP address; write the host alone, e.g. \"intranet.example\" or \"10.0.0.5\" (no scheme, port or path)"
        )),
    }
}

/// Parse a configuration from a string; relative paths resolve against `base_dir`.
pub fn load_str(text: &str, name: &str, base_dir: &Path) -> Result<Config, ConfigError> {
    let (dir, rel) = relative_to(base_dir);
    let reader = Reader {
        text,
        name,
        dir: &dir,
        rel: &rel,
    };
    let mut raw: RawConfig = toml::from_str(text).map_err(|e| {
        let message = super::explain::toml_error(text, e.span(), e.message(), &tables());
        reader.at(e.span(), message)
    })?;
    let global = UrlPatterns {
        include: reader.patterns(&raw.include_regex, "include_regex")?,
        exclude: reader.patterns(&raw.exclude_regex, "exclude_regex")?,
    };
    if raw.mail.is_none()
        && let Some((key, span, task)) = raw_tasks_mailing(&raw.tasks)
    {
        let (line, _) = line_col(text, span.start);
        tracing::warn!("{}", no_mail_table(name, line, key, task));
    }
    let raw_tasks = std::mem::take(&mut raw.tasks);
    let raw_plugins = std::mem::take(&mut raw.plugins);
    let raw_library = raw.library.take();
    let settings = reader.settings(raw)?;
    let mut names = HashSet::new();
    let tasks = raw_tasks
        .into_iter()
        .map(|t| reader.task(t, &global, &mut names))
        .collect::<Result<Vec<_>, _>>()?;
    let mut plugin_names = HashSet::new();
    let plugins = raw_plugins
        .into_iter()
        .map(|p| reader.plugin(p, &names, &mut plugin_names))
        .collect::<Result<Vec<_>, _>>()?;
    if tasks.is_empty() {
        return Err(ConfigError::Whole {
            path: name.to_string(),
            message: "no tasks: add at least one [[task]] with name, kind and top".into(),
        });
    }
    let mut library: super::LibrarySettings = match raw_library {
        Some(l) => super::library::library_settings(l).map_err(|(span, m)| reader.at(span, m))?,
        None => Default::default(),
    };
    library.internal_hosts = settings.internal_hosts.clone();
    let config = Config {
        source: None,
        settings,
        tasks,
        plugins,
        library,
    };
    config.tops_under_root().map_err(|m| ConfigError::Whole {
        path: name.to_string(),
        message: format!("root_dir: {m}"),
    })?;
    if let Some(message) = config.index_clash("index_file or output") {
        return Err(ConfigError::Whole {
            path: name.to_string(),
            message,
        });
    }
    Ok(config)
}

/// The first key of `tasks` that mails an owner (`email_broken = true`,
/// `email_changed = 7`, ...) of a task with an `email`: the key, where it
/// is, and the task's name.
fn raw_tasks_mailing(tasks: &[RawTask]) -> Option<(&'static str, Range<usize>, &str)> {
    tasks.iter().filter(|t| t.email.is_some()).find_map(|t| {
        let on = |b: &Option<Spanned<bool>>| b.as_ref().filter(|b| *b.get_ref()).map(Spanned::span);
        let key = on(&t.email_broken)
            .map(|s| ("email_broken", s))
            .or_else(|| on(&t.email_moved).map(|s| ("email_moved", s)))
            .or_else(|| {
                t.email_changed
                    .as_ref()
                    .map(|d| ("email_changed", d.span()))
            })
            .or_else(|| {
                t.email_expired
                    .as_ref()
                    .map(|d| ("email_expired", d.span()))
            })?;
        Some((key.0, key.1, t.name.get_ref().as_str()))
    })
}

/// The warning for a configuration whose `key` (at `file`:`line`) mails
/// the owner of `task` while it has no `[mail]` table: the mail would go to
/// an SMTP server on this machine, which few run; the table to add.
pub(super) fn no_mail_table(file: &str, line: usize, key: &str, task: &str) -> String {
    format!(
        "{file}:{line}: {key} mails the owner of task `{task}`, but there is no [mail] table: the mail goes to an SMTP server on localhost:25, and where none runs it goes nowhere (each run ends with \"cannot reach the mail server\" and keeps the messages for the next). Name the server to send through:\n\n[mail]\nserver = \"smtp.example.org\"\nport = 587\ntls = \"starttls\"\nusername = \"spider\"\npassword_env = \"SPINNERET_SMTP_PASSWORD\"\n\n(--dry-run-mail prints the messages instead; see \"Mail to owners\" in docs/maintenance.md)"
    )
}

/// The keys of the top level and of a `[[task]]`, as serde names them
/// when it meets a key it does not know (so they are always the ones
/// read).
fn tables() -> super::explain::Tables {
    fn keys<T: serde::de::DeserializeOwned>() -> Vec<String> {
        let Err(e) = toml::from_str::<T>("zz_not_a_key = 0") else {
            return Vec::new();
        };
        let message = e.message();
        let expected = message.split_once("expected").map_or("", |(_, rest)| rest);
        expected
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    }
    super::explain::Tables {
        top: keys::<RawConfig>(),
        task: keys::<RawTask>(),
    }
}

/// The keys of a configuration's top level, its settings among them (the
/// command line names one a flag does not set).
pub fn setting_keys() -> Vec<String> {
    tables().top
}

/// One configuration being read: its text and name (for located errors)
/// and the directory its relative paths resolve against.
struct Reader<'a> {
    text: &'a str,
    name: &'a str,
    /// The configuration's directory, absolute.
    dir: &'a Path,
    /// A path as written, resolved against `dir`.
    rel: &'a dyn Fn(&str) -> PathBuf,
}

impl Reader<'_> {
    /// An error at `span` of the text (its start when there is none).
    /// The `store` setting with its password's place, when the
    /// configuration gives one.
    fn store(&self, raw: &RawConfig) -> Result<Option<super::StoreSetting>, ConfigError> {
        let password_keys = [&raw.store_password_env, &raw.store_password_file];
        let Some(s) = &raw.store else {
            if let Some(key) = password_keys.into_iter().flatten().next() {
                return Err(self.at(
                    Some(key.span()),
                    "a store password is for a PostgreSQL store: give store = \"postgres://…\" too"
                        .into(),
                ));
            }
            return Ok(None);
        };
        let mut store = super::StoreSetting::parse(s.get_ref(), self.rel)
            .map_err(|m| self.at(Some(s.span()), m))?;
        let place = password_source(
            "the store's password",
            "store_",
            raw.store_password.as_ref(),
            raw.store_password_env
                .as_ref()
                .map(|v| v.get_ref().as_str()),
            raw.store_password_file
                .as_ref()
                .map(|v| v.get_ref().as_str()),
            &s.span(),
            self.rel,
        )
        .map_err(|(span, m)| self.at(span, m))?;
        match (&mut store, place) {
            (super::StoreSetting::Postgres { password, .. }, place) => *password = place,
            (super::StoreSetting::File(_), Some(_)) => {
                return Err(self.at(
                    Some(s.span()),
                    "a store password is for a PostgreSQL store, and this store is a file".into(),
                ));
            }
            (super::StoreSetting::File(_), None) => {}
        }
        Ok(Some(store))
    }

    fn at(&self, span: Option<Range<usize>>, message: String) -> ConfigError {
        let (line, column) = span.map(|s| line_col(self.text, s.start)).unwrap_or((1, 1));
        ConfigError::At {
            path: self.name.to_string(),
            line,
            column,
            message,
        }
    }

    /// The URL patterns of the list setting `key`. A pattern's origin names
    /// its key and line, for the reason a URL it excludes is recorded with.
    fn patterns(
        &self,
        list: &[Spanned<String>],
        key: &str,
    ) -> Result<Vec<UrlPattern>, ConfigError> {
        list.iter()
            .map(|p| {
                let (line, _) = line_col(self.text, p.span().start);
                UrlPattern::new(p.get_ref(), &format!("{key}, {}:{line}", self.name))
                    .map_err(|m| self.at(Some(p.span()), format!("{key}: {m}")))
            })
            .collect()
    }

    /// The run's settings: the top-level keys (the tasks, plugins and
    /// library table taken out).
    fn settings(&self, raw: RawConfig) -> Result<Settings, ConfigError> {
        let defaults = Settings::default();
        let store = self.store(&raw)?.unwrap_or(defaults.store.clone());
        if let Some(from) = &raw.from {
            check_email(from.get_ref()).map_err(|m| self.at(Some(from.span()), m))?;
        }
        if let Some(agent) = &raw.user_agent {
            check_user_agent(agent.get_ref()).map_err(|m| self.at(Some(agent.span()), m))?;
        }
        let mut resolve = BTreeMap::new();
        for (host, addr) in &raw.resolve {
            let ip: IpAddr = addr.get_ref().parse().map_err(|_| {
                self.at(
                    Some(addr.span()),
                    format!(
                        "`{}` is not an IP address; write e.g. \"127.0.0.1\" or \"::1\"",
                        addr.get_ref()
                    ),
                )
            })?;
            resolve.insert(host.to_ascii_lowercase(), ip);
        }
        let internal_hosts = raw
            .internal_hosts
            .iter()
            .map(|h| internal_host(h.get_ref()).map_err(|m| self.at(Some(h.span()), m)))
            .collect::<Result<Vec<_>, _>>()?;
        let requests = raw
            .requests
            .into_iter()
            .map(|r| super::request::request_rule(r, self.rel))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|(span, m)| self.at(span, m))?;
        Ok(Settings {
            requests,
            store,
            user_agent: raw
                .user_agent
                .map_or(defaults.user_agent, |a| a.into_inner().trim().to_string()),
            from: raw.from.map(Spanned::into_inner),
            accept: match raw.accept {
                Some(a) => {
                    let value = a.get_ref().trim();
                    if value.is_empty() || http::HeaderValue::from_str(value).is_err() {
                        return Err(self.at(
                            Some(a.span()),
                            format!(
                                "`accept = {:?}` is not a valid header value; write media types such as \"text/html, */*;q=0.5\"",
                                a.get_ref()
                            ),
                        ));
                    }
                    value.to_string()
                }
                None => defaults.accept,
            },
            concurrency: raw
                .concurrency
                .map_or(defaults.concurrency, |b| b.0 as usize),
            per_site_connections: raw
                .per_site_connections
                .map_or(defaults.per_site_connections, |b| b.0 as usize),
            per_site_delay: raw.per_site_delay.map_or(defaults.per_site_delay, |d| d.0),
            max_crawl_delay: raw
                .max_crawl_delay
                .map_or(defaults.max_crawl_delay, |d| d.0),
            connect_timeout: raw
                .connect_timeout
                .map_or(defaults.connect_timeout, |d| d.0),
            timeout: raw.timeout.map_or(defaults.timeout, |d| d.0),
            retries: raw.retries.map_or(defaults.retries, |b| b.0 as u32),
            max_redirects: raw
                .max_redirects
                .map_or(defaults.max_redirects, |b| b.0 as usize),
            trust: {
                let mut trust = defaults.trust;
                trust.accept_invalid = raw.insecure.unwrap_or(false);
                if let Some(file) = &raw.ca_file {
                    trust
                        .add_ca_file(&(self.rel)(file.get_ref()))
                        .map_err(|m| self.at(Some(file.span()), m))?;
                }
                trust
            },
            offline: false,
            local_names: Default::default(),
            max_retry_after: raw
                .max_retry_after
                .map_or(defaults.max_retry_after, |d| d.0),
            max_body: raw.max_body.map_or(defaults.max_body, |b| b.0),
            result_max_age: raw.result_max_age.map_or(defaults.result_max_age, |d| d.0),
            root_dir: match &raw.root_dir {
                None => None,
                Some(d) => Some(root_dir(&(self.rel)(d.get_ref())).map_err(|m| self.at(Some(d.span()), m))?),
            },
            cookie_jar: match &raw.cookie_jar {
                None => None,
                Some(j) => Some(
                    spinneret_crawl::fetch::cookies::CookieJar::open(&(self.rel)(j.get_ref()))
                        .map_err(|m| self.at(Some(j.span()), m))?,
                ),
            },
            accept_status: match &raw.accept_status {
                None => defaults.accept_status,
                Some(v) => accept_status(v.get_ref()).map_err(|m| self.at(Some(v.span()), m))?,
            },
            robots_expiry: raw.robots_expiry.map_or(defaults.robots_expiry, |d| d.0),
            check_fragments: raw.check_fragments.unwrap_or(defaults.check_fragments),
            robots_rules: match &raw.robots_rules {
                None => defaults.robots_rules,
                Some(m) => spinneret_crawl::policy::robots::RobotsMode::from_name(m.get_ref().trim()).ok_or_else(|| {
                    self.at(
                        Some(m.span()),
                        format!(
                            "`{}` is not a reading of robots.txt; write \"both\" (fetch only what both the 1996 draft and RFC 9309 allow), \"draft\" or \"rfc9309\"",
                            m.get_ref()
                        ),
                    )
                })?,
            },
            avoid_files: raw
                .avoid_files
                .iter()
                .map(|p| {
                    let path = (self.rel)(p.get_ref());
                    // Said as what it is: missing, a device (`/dev/zero`),
                    // a directory, too large, unreadable.
                    match spinneret_crawl::policy::rules::file_problem(&path) {
                        None => Ok(path),
                        Some(why) => Err(self.at(
                            Some(p.span()),
                            format!(
                                "the avoid file {} {why}; write its path (relative to this file) or remove it from avoid_files",
                                path.display()
                            ),
                        )),
                    }
                })
                .collect::<Result<_, _>>()?,
            avoid_file: raw.avoid_file.as_deref().map(self.rel),
            system_sites: raw.system_sites.iter().map(|p| (self.rel)(p)).collect(),
            sites_file: raw.sites_file.as_deref().map(self.rel),
            search_index: raw.search_index.as_deref().map(self.rel),
            mail: match raw.mail {
                Some(m) => super::mail::mail_settings(m, self.rel).map_err(|(span, m)| self.at(span, m))?,
                None => MailSettings::default(),
            },
            schedule: schedule(&raw.schedule).map_err(|(span, m)| self.at(Some(span), m))?,
            resolve,
            internal_hosts,
        })
    }

    /// One `[[task]]` table, its patterns added to the run's `global`
    /// ones; `names` holds the names of the tasks before it.
    fn task(
        &self,
        t: RawTask,
        global: &UrlPatterns,
        names: &mut HashSet<String>,
    ) -> Result<TaskConfig, ConfigError> {
        let name = self.task_name(&t, names)?;
        let kind = self.task_kind(&t)?;
        self.check_levels(&t, kind)?;
        let top = self.task_top(&t, kind, &name)?;
        if let Some(email) = &t.email {
            check_email(email.get_ref()).map_err(|m| self.at(Some(email.span()), m))?;
        }
        let exclude = self.exclude_prefixes(&t)?;
        let own_patterns = UrlPatterns {
            include: self.patterns(&t.include_regex, "include_regex")?,
            exclude: self.patterns(&t.exclude_regex, "exclude_regex")?,
        };
        let index_path = t.index_file.as_ref().map(|f| (self.rel)(f.get_ref()));
        let output = match (&t.output, &index_path) {
            (Some(o), _) => (self.rel)(o),
            // The index's own directory holds the task's reports.
            (None, Some(f)) => f.parent().map(Path::to_path_buf).unwrap_or_default(),
            (None, None) => self.dir.join("reports").join(sanitize(&name)),
        };
        let top = match top {
            Some(top) => top,
            None => library_top(&output).map_err(|m| self.at(Some(t.name.span()), m))?,
        };
        let index_file = self.index_file(&t, index_path.as_deref(), &output)?;
        let index_url = self.index_url(&t)?;
        let changed_days = days(
            &t.changed_days,
            &t.email_changed,
            "changed_days",
            "email_changed",
        )
        .map_err(|(span, m)| self.at(Some(span), m))?;
        let expiring_days = days(
            &t.expiring_days,
            &t.email_expired,
            "expiring_days",
            "email_expired",
        )
        .map_err(|(span, m)| self.at(Some(span), m))?;
        Ok(TaskConfig {
            name,
            kind,
            top,
            more_tops: Vec::new(),
            email: t.email.map(Spanned::into_inner),
            output,
            exclude,
            patterns: global.with(&own_patterns),
            changed_days,
            expiring_days,
            default_plugins: t.default_plugins.unwrap_or(true),
            index: IndexSettings {
                file: index_file,
                url: index_url,
                title: t.index_title,
            },
            notify: Notify {
                broken: t.email_broken.is_some_and(|b| *b.get_ref()),
                moved: t.email_moved.is_some_and(|b| *b.get_ref()),
                changed: t.email_changed.is_some(),
                expired: t.email_expired.is_some(),
            },
            schedule: schedule(&t.schedule).map_err(|(span, m)| self.at(Some(span), m))?,
            bounds: task_bounds(t.levels, t.max_depth, t.max_documents, kind),
        })
    }

    /// A task's name, trimmed: not empty, no control characters, and not
    /// one of the `names` before it (to which it is added).
    fn task_name(&self, t: &RawTask, names: &mut HashSet<String>) -> Result<String, ConfigError> {
        let name = t.name.get_ref().trim().to_string();
        if name.is_empty() {
            return Err(self.at(Some(t.name.span()), "a task name cannot be empty".into()));
        }
        if name.chars().any(char::is_control) {
            return Err(self.at(
                Some(t.name.span()),
                "a task name cannot hold control characters (a line break in it would reach mail headers)"
                    .into(),
            ));
        }
        if !names.insert(name.clone()) {
            return Err(self.at(
                Some(t.name.span()),
                format!("a second task is named `{name}`; task names must be unique"),
            ));
        }
        Ok(name)
    }

    /// A task's `kind`.
    fn task_kind(&self, t: &RawTask) -> Result<TaskKind, ConfigError> {
        match t.kind.get_ref().as_str() {
            "site" => Ok(TaskKind::Site),
            "tree" => Ok(TaskKind::Tree),
            "owner" => Ok(TaskKind::Owner),
            "web" => Ok(TaskKind::Web),
            "library" => Ok(TaskKind::Library),
            other => Err(self.at(
                Some(t.kind.span()),
                format!(
                    "unknown task kind `{other}`; expected `site`, `tree`, `owner`, `web` or `library`"
                ),
            )),
        }
    }

    /// `levels` is a `web` task's word for `max_depth`, so only a `web`
    /// task has it, and not with `max_depth`.
    fn check_levels(&self, t: &RawTask, kind: TaskKind) -> Result<(), ConfigError> {
        let Some(levels) = &t.levels else {
            return Ok(());
        };
        if kind != TaskKind::Web {
            return Err(self.at(
                Some(levels.span()),
                "`levels` is the recursion depth of a `web` task; for this task write `max_depth`"
                    .into(),
            ));
        }
        if t.max_depth.is_some() {
            return Err(self.at(
                Some(levels.span()),
                "`levels` and `max_depth` say the same; keep one".into(),
            ));
        }
        Ok(())
    }

    /// A task's `top`, which every kind but `library` must have and a
    /// `library` task must not (`None` for it: it starts from its output).
    fn task_top(
        &self,
        t: &RawTask,
        kind: TaskKind,
        name: &str,
    ) -> Result<Option<Url>, ConfigError> {
        match (&t.top, kind) {
            (Some(top), TaskKind::Library) => Err(self.at(
                Some(top.span()),
                "a `library` task starts from the library's pages, which each run publishes into its output directory; remove `top`".into(),
            )),
            (Some(top), _) => {
                Ok(Some(parse_top(top.get_ref(), self.dir).map_err(|m| self.at(Some(top.span()), m))?))
            }
            (None, TaskKind::Library) => Ok(None),
            (None, _) => Err(self.at(
                Some(t.name.span()),
                format!("task `{name}` has no `top`: write the URL (or path) it starts from"),
            )),
        }
    }

    /// A task's `exclude` prefixes, each an absolute URL.
    fn exclude_prefixes(&self, t: &RawTask) -> Result<Vec<String>, ConfigError> {
        let mut exclude = Vec::new();
        for e in &t.exclude {
            let prefix = Url::parse(e.get_ref()).map_err(|err| {
                self.at(
                    Some(e.span()),
                    format!(
                        "exclude prefix `{}` is not an absolute URL ({err})",
                        e.get_ref()
                    ),
                )
            })?;
            exclude.push(prefix.to_string());
        }
        Ok(exclude)
    }

    /// The file name of a task's index, when `index_file` gives one
    /// (`path`, resolved): it must be directly inside the task's `output`.
    fn index_file(
        &self,
        t: &RawTask,
        path: Option<&Path>,
        output: &Path,
    ) -> Result<Option<String>, ConfigError> {
        let (Some(path), Some(raw)) = (path, &t.index_file) else {
            return Ok(None);
        };
        let inside = path.parent() == Some(output);
        match path.file_name().and_then(|n| n.to_str()) {
            Some(n) if inside => Ok(Some(n.to_string())),
            _ => Err(self.at(
                Some(raw.span()),
                format!(
                    "index_file `{}` must be a file directly inside the task's output directory ({})",
                    raw.get_ref(),
                    output.display()
                ),
            )),
        }
    }

    /// A task's `index_url`, an absolute URL.
    fn index_url(&self, t: &RawTask) -> Result<Option<Url>, ConfigError> {
        t.index_url
            .as_ref()
            .map(|u| {
                Url::parse(u.get_ref()).map_err(|e| {
                    self.at(
                        Some(u.span()),
                        format!("index_url `{}` is not an absolute URL ({e})", u.get_ref()),
                    )
                })
            })
            .transpose()
    }

    /// One `[[plugin]]` table; `tasks` names the run's tasks, `taken` the
    /// plugins before it.
    fn plugin(
        &self,
        p: RawPlugin,
        tasks: &HashSet<String>,
        taken: &mut HashSet<String>,
    ) -> Result<PluginConfig, ConfigError> {
        let defined_at = format!(
            "{}:{}",
            self.name,
            line_col(self.text, p.name.span().start).0
        );
        let name = p.name.get_ref().trim().to_string();
        if name.is_empty() || !taken.insert(name.clone()) {
            return Err(self.at(
                Some(p.name.span()),
                format!("plugin names must be unique and not empty (`{name}`)"),
            ));
        }
        // The manifest of an installed plugin bounds its grants.
        let (source, installed) =
            super::plugin_source::resolve(p.source.get_ref().trim(), self.rel)
                .map_err(|m| self.at(Some(p.source.span()), m))?;
        if let Some(list) = &p.tasks {
            for t in list {
                if !tasks.contains(t.get_ref()) {
                    return Err(self.at(
                        Some(t.span()),
                        format!("no task is named `{}`", t.get_ref()),
                    ));
                }
            }
        }
        let defaults = spinneret_core::grants::Grants::default();
        let mut grants = spinneret_core::grants::Grants {
            memory: p.memory.map_or(defaults.memory, |b| b.0),
            time: p.time.map_or(defaults.time, |d| d.0),
            output: p.output.map_or(defaults.output, |b| b.0),
            output_per_item: match p.output {
                Some(_) => 0,
                None => defaults.output_per_item,
            },
            hosts: p.hosts.iter().map(|h| h.to_ascii_lowercase()).collect(),
        };
        let mut config = p.config.unwrap_or_default();
        if let Some(m) = &installed {
            grants = super::plugin_source::intersect(&name, grants, &m.capabilities);
            // The manifest's defaults, under the configuration's own keys.
            for (k, v) in &m.config {
                config.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        Ok(PluginConfig {
            name,
            source,
            config: serde_json::to_value(config).unwrap_or_default(),
            grants,
            tasks: p
                .tasks
                .map(|l| l.into_iter().map(Spanned::into_inner).collect()),
            defined_at: Some(defined_at),
        })
    }
}

/// A task's window in days: `changed_days` (default 7), or the mail
/// option's N (`email_changed N` mails what changed within N days, so the
/// detector looks that far); both given must agree.
fn days(
    window: &Option<Spanned<Bounded<0, 36500>>>,
    mail: &Option<Spanned<Bounded<0, 36500>>>,
    window_key: &str,
    mail_key: &str,
) -> Result<u32, (Range<usize>, String)> {
    match (window, mail) {
        (Some(w), Some(m)) if w.get_ref().0 != m.get_ref().0 => Err((
            m.span(),
            format!(
                "{mail_key} = {} disagrees with {window_key} = {}; give one of them",
                m.get_ref().0,
                w.get_ref().0
            ),
        )),
        (Some(d), _) | (None, Some(d)) => Ok(d.get_ref().0 as u32),
        (None, None) => Ok(7),
    }
}

/// How far and how much a task traverses: `levels` (a `web` task's) or
/// `max_depth`, else a `web` task's [`WEB_LEVELS`] or the default depth;
/// `max_documents`, else the default.
fn task_bounds(
    levels: Option<Spanned<Bounded<1, 100_000>>>,
    max_depth: Option<MaxDepth>,
    max_documents: Option<Bounded<1, 1_000_000_000>>,
    kind: TaskKind,
) -> super::TaskBounds {
    let d = super::TaskBounds::default();
    super::TaskBounds {
        max_depth: match (levels, max_depth) {
            (Some(l), _) => l.into_inner().0 as u32,
            (None, Some(b)) => b.0 as u32,
            (None, None) if kind == TaskKind::Web => WEB_LEVELS,
            (None, None) => d.max_depth,
        },
        max_documents: max_documents.map_or(d.max_documents, |b| b.0),
    }
}

/// A `schedule` value.
fn schedule(
    raw: &Option<Spanned<String>>,
) -> Result<Option<spinneret_core::schedule::Schedule>, (Range<usize>, String)> {
    raw.as_ref()
        .map(|s| spinneret_core::schedule::Schedule::parse(s.get_ref()).map_err(|m| (s.span(), m)))
        .transpose()
}

/// Where a `library` task's run publishes the library (the task's output
/// directory's `library/`), and so where it starts.
pub fn library_dir(output: &Path) -> PathBuf {
    output.join("library")
}

/// A `library` task's top: the published library's root page.
fn library_top(output: &Path) -> Result<Url, String> {
    Url::from_file_path(library_dir(output).join("index.html")).map_err(|()| {
        format!(
            "the output directory {} cannot be a file URL; give an absolute `output`",
            output.display()
        )
    })
}

/// A top URL: absolute http(s)/file URL, or a path relative to the config's directory.
pub fn parse_top(raw: &str, base_dir: &Path) -> Result<Url, String> {
    match Url::parse(raw) {
        Ok(u) if matches!(u.scheme(), "http" | "https" | "file") => {
            if u.scheme() != "file" && u.host_str().is_none_or(str::is_empty) {
                return Err(format!("top URL `{raw}` has no host"));
            }
            if let Some(host) = u
                .host_str()
                .filter(|h| u.scheme() == "file" && !h.is_empty())
            {
                return Err(format!(
                    "top URL `{raw}` names the host `{host}`: a local file is file:///PATH (three slashes), e.g. file:///{host}{}",
                    u.path()
                ));
            }
            Ok(spinneret_core::urls::normalize(u))
        }
        Ok(u) => {
            // `localhost:8080/` reads as the scheme `localhost`.
            let port = u.path().split('/').next().unwrap_or_default();
            let hint = match spinneret_core::urls::mistyped_scheme(&u) {
                _ if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => {
                    format!("; for a server, write http://{raw}")
                }
                Some(typo) => format!(" ({typo})"),
                None => String::new(),
            };
            Err(format!(
                "top URL `{raw}` has scheme `{}`; the crawler starts from http, https or file URLs{hint}",
                u.scheme(),
            ))
        }
        Err(url::ParseError::RelativeUrlWithoutBase) => {
            let path = spinneret_core::fs::absolute_normal(&base_dir.join(raw));
            if !path.exists()
                && let Some(hint) = server_without_scheme(raw)
            {
                return Err(format!(
                    "top `{raw}` is neither a URL nor an existing file or directory; {hint}"
                ));
            }
            let path = if path.is_dir() {
                path.join("index.html")
            } else {
                path
            };
            Url::from_file_path(&path)
                .map_err(|_| format!("top `{raw}` is neither a URL nor a usable file path"))
        }
        Err(e) => Err(format!("top URL `{raw}` is not a valid URL ({e})")),
    }
}

/// What a top written without its scheme meant, when it names a server
/// (`127.0.0.1:22000/`, `localhost:8080`) or a site (`www.example.org/`)
/// rather than a path.
fn server_without_scheme(raw: &str) -> Option<String> {
    let host = raw.split('/').next().unwrap_or_default();
    let port = host.rsplit_once(':').map(|(_, p)| p);
    if port.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())) {
        return Some(format!("for a server, write http://{raw}"));
    }
    let site = host.starts_with("www.") && host.len() > 4 && !host.ends_with('.');
    site.then(|| format!("for a site, write https://{raw}"))
}

/// A `User-Agent` must name the robot (robots.txt records are chosen by
/// that name) and be one header line.
pub fn check_user_agent(s: &str) -> Result<(), String> {
    if s.trim().is_empty() {
        return Err(
            "the user agent is empty; robots.txt records are chosen by the robot's name, so give one, e.g. \"mybot/1.0 (+https://example.org/bot.html)\" (or leave user_agent out for spinneret's own)"
                .into(),
        );
    }
    if let Some(c) = s.chars().find(|&c| c != '\t' && !(' '..='~').contains(&c)) {
        return Err(format!(
            "the user agent contains {c:?}; it is sent as an HTTP header, so write it on one line of printable ASCII characters"
        ));
    }
    Ok(())
}

pub(super) fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The 1-based line and column of byte `offset` in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rfind('\n').map_or(offset, |i| offset - i - 1) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PluginSource;

    fn load(text: &str) -> Result<Config, ConfigError> {
        load_str(text, "test.toml", Path::new("/srv/web"))
    }

    const MINIMAL: &str =
        "[[task]]\nname = \"ICS\"\nkind = \"site\"\ntop = \"http://www.ics.example/\"\n";

    #[test]
    fn a_database_stores_password_is_named_not_written() {
        let pg = "store = \"postgres://spider@db.example/spin\"\n";
        let c = load(&format!("{pg}store_password_env = \"DB_PW\"\n{MINIMAL}")).unwrap();
        assert_eq!(
            c.settings.store,
            crate::StoreSetting::Postgres {
                url: "postgres://spider@db.example/spin".into(),
                password: Some(crate::Password::Env("DB_PW".into())),
            }
        );
        let c = load(&format!("{pg}store_password_file = \"pw\"\n{MINIMAL}")).unwrap();
        assert!(matches!(
            c.settings.store,
            crate::StoreSetting::Postgres {
                password: Some(crate::Password::File(ref f)), ..
            } if f == Path::new("/srv/web/pw")
        ));
        for (text, said) in [
            (
                format!("{pg}store_password = \"x\"\n{MINIMAL}"),
                "test.toml:2:18: the store's password is never read from the configuration; name where it is with store_password_env = \"VARIABLE\" or store_password_file = \"PATH\"",
            ),
            (
                format!("{pg}store_password_env = \"A\"\nstore_password_file = \"b\"\n{MINIMAL}"),
                "test.toml:1:9: give store_password_env or store_password_file, not both",
            ),
            (
                format!("store = \"s.db\"\nstore_password_env = \"A\"\n{MINIMAL}"),
                "test.toml:1:9: a store password is for a PostgreSQL store, and this store is a file",
            ),
            (
                format!("store_password_env = \"A\"\n{MINIMAL}"),
                "test.toml:1:22: a store password is for a PostgreSQL store: give store = \"postgres://…\" too",
            ),
        ] {
            assert_eq!(load(&text).unwrap_err().to_string(), said);
        }
    }

    #[test]
    fn the_crawl_plan_holds_the_tasks_asked_for_and_the_crawls_settings() {
        let text = format!(
            "user_agent = \"Checker/2 (+http://x.example/)\"\nper_site_connections = 3\nmax_body = \"1MiB\"\n\n{MINIMAL}\n[[task]]\nname = \"Docs\"\nkind = \"tree\"\ntop = \"http://www.ics.example/docs/\"\nexclude = [\"http://www.ics.example/docs/old/\"]\nmax_depth = 3\n"
        );
        let config = load(&text).unwrap();
        let all = config.crawl_plan(None).unwrap();
        let names: Vec<&str> = all.tasks.iter().map(|t| t.name()).collect();
        assert_eq!(names, ["ICS", "Docs"]);
        assert_eq!(all.source, None);
        let s = &all.settings;
        assert_eq!(s.robot_name, "checker");
        assert_eq!(s.fetch.user_agent, "Checker/2 (+http://x.example/)");
        assert_eq!((s.fetch.idle_per_site, s.per_site_connections), (3, 3));
        assert_eq!(s.fetch.max_body, 1 << 20);

        let docs = config.crawl_plan(Some("Docs")).unwrap();
        assert_eq!(docs.tasks.len(), 1);
        let t = &docs.tasks[0];
        assert_eq!(t.top.as_str(), "http://www.ics.example/docs/");
        assert_eq!(t.exclude, ["http://www.ics.example/docs/old/"]);
        assert_eq!(t.bounds.max_depth, 3);
        assert_eq!(t.record.name, "Docs");

        let Err(e) = config.crawl_plan(Some("docs")) else {
            panic!("a task name is matched exactly");
        };
        assert_eq!(
            e.to_string(),
            "no task named `docs`; the tasks are: ICS, Docs"
        );
    }

    #[test]
    fn minimal_config_takes_defaults() {
        let c = load(MINIMAL).unwrap();
        assert_eq!(c.tasks.len(), 1);
        assert_eq!(c.tasks[0].kind, TaskKind::Site);
        assert_eq!(c.tasks[0].output, PathBuf::from("/srv/web/reports/ICS"));
        assert_eq!(c.settings.concurrency, 64);
        assert_eq!(c.settings.per_site_connections, 2);
    }

    #[test]
    fn unknown_key_is_located() {
        let text = format!("concurrency = 8\nbogus = 1\n{MINIMAL}");
        let err = load(&text).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "test.toml:2:1: unknown key `bogus`; the keys at the top level are: user_agent, from, accept, concurrency,"
            ),
            "{err}"
        );
        assert!(
            err.ends_with(", library (every key is in docs/configuration.md)"),
            "{err}"
        );
    }

    #[test]
    fn a_misspelt_key_names_the_one_meant() {
        for (text, said) in [
            (
                format!("concurency = 8\n{MINIMAL}"),
                "test.toml:1:1: unknown key `concurency`; did you mean `concurrency`? (every key is in docs/configuration.md)",
            ),
            (
                format!("user-agent = \"bot/1\"\n{MINIMAL}"),
                "test.toml:1:1: unknown key `user-agent`; did you mean `user_agent`? (every key is in docs/configuration.md)",
            ),
            (
                format!("{MINIMAL}depth = 3\n"),
                "test.toml:5:1: unknown key `depth`; did you mean `max_depth`? (every key is in docs/configuration.md)",
            ),
            (
                format!("{MINIMAL}emial = \"a@b.example\"\n"),
                "test.toml:5:1: unknown key `emial`; did you mean `email`? (every key is in docs/configuration.md)",
            ),
            (
                format!("{MINIMAL}concurrency = 4\n"),
                "test.toml:5:1: `concurrency` is a global setting, and a key written after [[task]] belongs to that task: move it above the first [[task]]",
            ),
            (
                format!("max_depth = 3\n{MINIMAL}"),
                "test.toml:1:1: `max_depth` is a key of a task: write it under the [[task]] it is for (after that task's [[task]] line)",
            ),
            (
                format!("{MINIMAL}[mail]\nserver = \"smtp.example\"\nusernme = \"x\"\n"),
                "test.toml:7:1: unknown key `usernme`; did you mean `username`? (every key is in docs/configuration.md)",
            ),
            (
                format!("{MINIMAL}[mail]\nserver = \"smtp.example\"\nusr = \"x\"\n"),
                "test.toml:7:1: unknown key `usr`; the keys are: server, port, tls, username, password, password_env, password_file, from, timeout (every key is in docs/configuration.md)",
            ),
        ] {
            assert_eq!(load(&text).unwrap_err().to_string(), said, "{text}");
        }
    }

    #[test]
    fn a_table_for_a_list_a_quoted_number_and_a_top_without_scheme_say_what_to_write() {
        for (text, said) in [
            (
                MINIMAL.replace("[[task]]", "[task]"),
                "test.toml:1:1: `[task]` is one table, and `task` is a list of them: write [[task]] (two brackets), once before each of them",
            ),
            (
                format!("{MINIMAL}[[mail]]\nserver = \"smtp.example\"\n"),
                "test.toml:5:1: `[[mail]]` makes a list of tables, and `mail` is one table: write [mail] (one pair of brackets)",
            ),
            (
                format!("concurrency = \"4\"\n{MINIMAL}"),
                "test.toml:1:15: `concurrency` takes a number, written without quotes: concurrency = 4",
            ),
            (
                format!("check_fragments = \"false\"\n{MINIMAL}"),
                "test.toml:1:19: `check_fragments` takes true or false, written without quotes: check_fragments = false",
            ),
            (
                format!("retries = \"two\"\n{MINIMAL}"),
                "test.toml:1:11: `retries` takes a number, written without quotes (e.g. retries = 4), not \"two\"",
            ),
            (
                MINIMAL.replace("http://www.ics.example/", "127.0.0.1:22000/"),
                "test.toml:4:7: top `127.0.0.1:22000/` is neither a URL nor an existing file or directory; for a server, write http://127.0.0.1:22000/",
            ),
            (
                MINIMAL.replace("http://www.ics.example/", "localhost:8080/docs/"),
                "test.toml:4:7: top URL `localhost:8080/docs/` has scheme `localhost`; the crawler starts from http, https or file URLs; for a server, write http://localhost:8080/docs/",
            ),
            (
                MINIMAL.replace("http://www.ics.example/", "www.ics.example/docs/"),
                "test.toml:4:7: top `www.ics.example/docs/` is neither a URL nor an existing file or directory; for a site, write https://www.ics.example/docs/",
            ),
        ] {
            assert_eq!(load(&text).unwrap_err().to_string(), said, "{text}");
        }
    }

    #[test]
    fn mail_without_a_mail_table_is_named_where_it_is_asked_for() {
        let mailing = |text: &str| {
            let raw: RawConfig = toml::from_str(text).unwrap();
            raw_tasks_mailing(&raw.tasks)
                .map(|(key, span, task)| (key, line_col(text, span.start).0, task.to_string()))
        };
        let docs = "[[task]]\nname = \"Docs\"\nkind = \"tree\"\ntop = \"http://a.example/docs/\"\n";
        assert_eq!(
            mailing(&format!("{MINIMAL}{docs}email_broken = true\n")),
            None
        );
        assert_eq!(
            mailing(&format!(
                "{MINIMAL}email_broken = false\n{docs}email = \"docs@a.example\"\nemail_changed = 7\n"
            )),
            Some(("email_changed", 11, "Docs".to_string()))
        );
        assert_eq!(
            mailing(&format!(
                "{MINIMAL}email = \"www@ics.example\"\nemail_broken = true\n"
            )),
            Some(("email_broken", 6, "ICS".to_string()))
        );
        assert_eq!(
            no_mail_table("spinneret.toml", 6, "email_broken", "ICS"),
            "spinneret.toml:6: email_broken mails the owner of task `ICS`, but there is no [mail] table: the mail goes to an SMTP server on localhost:25, and where none runs it goes nowhere (each run ends with \"cannot reach the mail server\" and keeps the messages for the next). Name the server to send through:\n\n[mail]\nserver = \"smtp.example.org\"\nport = 587\ntls = \"starttls\"\nusername = \"spider\"\npassword_env = \"SPINNERET_SMTP_PASSWORD\"\n\n(--dry-run-mail prints the messages instead; see \"Mail to owners\" in docs/maintenance.md)"
        );
    }

    #[test]
    fn a_missing_avoid_file_is_located() {
        let err = load(&format!(
            "retries = 1\navoid_files = [\"nope.avoid\"]\n{MINIMAL}"
        ))
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "test.toml:2:16: the avoid file /srv/web/nope.avoid does not exist; write its path (relative to this file) or remove it from avoid_files"
        );
    }

    #[test]
    fn durations_and_sizes_outside_a_sane_range_are_located() {
        for (setting, expect) in [
            (
                "timeout = \"0s\"",
                "test.toml:1:11: 0s is out of range; expected from 100ms to 1h",
            ),
            (
                "per_site_delay = \"99999999999999d\"",
                "test.toml:1:18: 273785078713years",
            ),
            (
                "max_body = \"0B\"",
                "test.toml:1:12: 0 bytes is out of range; expected from 1KiB to 4GiB",
            ),
        ] {
            let err = load(&format!("{setting}\n{MINIMAL}"))
                .unwrap_err()
                .to_string();
            assert!(err.starts_with(expect), "{setting}: {err}");
            assert!(err.contains(" is out of range; expected from "), "{err}");
        }
    }

    #[test]
    fn a_blank_or_multi_line_user_agent_is_located() {
        for (value, expect) in [
            ("\"\"", "test.toml:2:14: the user agent is empty"),
            ("\"   \"", "test.toml:2:14: the user agent is empty"),
            ("\"a\\nb\"", "test.toml:2:14: the user agent contains '\\n'"),
        ] {
            let text = format!("concurrency = 8\nuser_agent = {value}\n{MINIMAL}");
            let err = load(&text).unwrap_err().to_string();
            assert!(err.starts_with(expect), "{value}: {err}");
        }
        let c = load(&format!("user_agent = \"  MyBot/2 (+x)\"\n{MINIMAL}")).unwrap();
        assert_eq!(c.settings.user_agent, "MyBot/2 (+x)");
        assert_eq!(c.settings.robot_name(), "mybot");
    }

    #[test]
    fn bad_values_say_what_is_expected() {
        let err = load(&format!("timeout = \"soon\"\n{MINIMAL}"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("test.toml:1:11:"), "{err}");
        assert!(err.contains("not a duration"), "{err}");

        let err = load(&format!("concurrency = 0\n{MINIMAL}"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "test.toml:1:15: 0 is out of range; expected a whole number from 1 to 4096"
            ),
            "{err}"
        );

        let text = MINIMAL.replace("\"site\"", "\"forest\"");
        let err = load(&text).unwrap_err().to_string();
        assert_eq!(
            err,
            "test.toml:3:8: unknown task kind `forest`; expected `site`, `tree`, `owner`, `web` or `library`"
        );

        let text = MINIMAL.replace("http://www.ics.example/", "gopher://x/");
        let err = load(&text).unwrap_err().to_string();
        assert!(
            err.starts_with("test.toml:4:7: top URL `gopher://x/` has scheme `gopher`"),
            "{err}"
        );
    }

    #[test]
    fn duplicate_task_names_are_refused() {
        let err = load(&format!("{MINIMAL}{MINIMAL}"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("test.toml:6:8: a second task is named `ICS`"),
            "{err}"
        );
        let err =
            load(&MINIMAL.replace("name = \"ICS\"", "name = \"ICS\\r\\nBcc: x@evil.example\""))
                .unwrap_err()
                .to_string();
        assert!(
            err.contains("a task name cannot hold control characters"),
            "{err}"
        );
    }

    #[test]
    fn relative_top_becomes_a_file_url() {
        let text = MINIMAL.replace("http://www.ics.example/", "site/index.html");
        let c = load(&text).unwrap();
        assert_eq!(c.tasks[0].top.as_str(), "file:///srv/web/site/index.html");
    }

    #[test]
    fn plugins_are_configured_and_defaults_fill_in() {
        let text = format!(
            "{MINIMAL}[[plugin]]\nname = \"jr\"\nsource = \"builtin:json-report\"\ntime = \"2s\"\nhosts = [\"API.example\"]\n[plugin.config]\nfile = \"out.jsonl\"\n"
        );
        let c = load(&text).unwrap();
        let p = &c.plugins[0];
        assert_eq!(p.source, PluginSource::Builtin("json-report".into()));
        assert_eq!(p.config, serde_json::json!({"file": "out.jsonl"}));
        assert_eq!(p.grants.time, std::time::Duration::from_secs(2));
        assert_eq!(p.grants.hosts, vec!["api.example"]);
        // json-report is configured, so it is not added again as a default.
        let names: Vec<String> = c
            .plugins_for(&c.tasks[0])
            .into_iter()
            .map(|p| p.name)
            .collect();
        assert_eq!(names, vec!["jr", "maintenance", "momspider-index"]);
        let c = load(MINIMAL).unwrap();
        let names: Vec<String> = c
            .plugins_for(&c.tasks[0])
            .into_iter()
            .map(|p| p.name)
            .collect();
        assert_eq!(names, vec!["maintenance", "momspider-index", "json-report"]);
    }

    #[test]
    fn bad_plugin_entries_are_located() {
        let err = load(&format!(
            "{MINIMAL}[[plugin]]\nname = \"x\"\nsource = \"builtin:nope\"\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with(
                "test.toml:7:10: there is no built-in plugin `nope`; the built-ins are: arxiv, csv-report, duckduckgo, github-annotations, json-report, junit-report, maintenance"
            ),
            "{err}"
        );
        let err = load(&format!(
            "{MINIMAL}[[plugin]]\nname = \"x\"\nsource = \"missing.wasm\"\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("is neither `builtin:NAME`, an installed `NAME@VERSION-REQ` nor an existing .wasm file"),
            "{err}"
        );
        let err = load(&format!("{MINIMAL}[[plugin]]\nname = \"x\"\nsource = \"builtin:json-report\"\ntasks = [\"Nope\"]\n")).unwrap_err().to_string();
        assert!(err.contains("no task is named `Nope`"), "{err}");
    }

    #[test]
    fn no_tasks_is_an_error() {
        let err = load("concurrency = 4\n").unwrap_err().to_string();
        assert!(err.contains("no tasks"), "{err}");
    }

    #[test]
    fn resolve_overrides_need_ip_addresses() {
        let c = load(&format!(
            "[resolve]\n\"WWW.fict.org\" = \"127.0.0.1\"\n{MINIMAL}"
        ))
        .unwrap();
        assert_eq!(c.settings.resolve["www.fict.org"].to_string(), "127.0.0.1");
        let err = load(&format!(
            "{MINIMAL}[resolve]\n\"a.example\" = \"localhost\"\n"
        ))
        .unwrap_err();
        assert!(err.to_string().contains("is not an IP address"), "{err}");
    }

    #[test]
    fn a_library_task_starts_from_its_published_pages() {
        let c = load("[[task]]\nname = \"VL\"\nkind = \"library\"\noutput = \"out\"\n").unwrap();
        assert_eq!(c.tasks[0].kind, TaskKind::Library);
        assert_eq!(
            c.tasks[0].top.as_str(),
            "file:///srv/web/out/library/index.html"
        );
        let err =
            load("[[task]]\nname = \"VL\"\nkind = \"library\"\ntop = \"http://a.example/\"\n")
                .unwrap_err()
                .to_string();
        assert!(
            err.starts_with("test.toml:4:7: a `library` task starts from the library's pages"),
            "{err}"
        );
        let err = load("[[task]]\nname = \"A\"\nkind = \"site\"\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "test.toml:2:8: task `A` has no `top`: write the URL (or path) it starts from"
        );
    }

    #[test]
    fn the_library_table_takes_moderators_by_hash_only() {
        let hash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$XFz0vX9m0MAFxjAXJ9ODGnNRwyEWcS7TnWh+8mQTiaE";
        let c = load(&format!(
            "{MINIMAL}[library]\ntitle = \"Our Library\"\nworm = 3\n[[library.moderator]]\nname = \"alice\"\npassword_hash = \"{hash}\"\n"
        ))
        .unwrap();
        assert_eq!(c.library.title.as_deref(), Some("Our Library"));
        assert_eq!(c.library.worm, Some(3));
        assert_eq!(c.library.moderators[0].name, "alice");
        let err = load(&format!(
            "{MINIMAL}[[library.moderator]]\nname = \"alice\"\npassword_hash = \"secret\"\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with(
                "test.toml:7:17: `password_hash` of moderator `alice` is not an argon2id hash"
            ),
            "{err}"
        );
        let err = load(&format!("{MINIMAL}[library]\nworm = 0\n"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`worm` is the number in a VL's address"),
            "{err}"
        );
    }
}
