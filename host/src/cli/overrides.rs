//! The settings flags of `crawl`, `watch` and `check`, which stand over a
//! configuration's: where results go, politeness, URL patterns, accepted
//! statuses, headers, cookies and a local tree's root.

use crate::config::{self, Config};
use clap::Args;
use std::path::PathBuf;

/// Settings the command line puts over a configuration's.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct Overrides {
    /// Use this store instead of the configuration's (default where the
    /// configuration names none, as an instruction file does: the user's
    /// data directory): a file, or a PostgreSQL database
    /// (postgres://user@host:port/db; its password from PGPASSWORD).
    #[arg(long, value_name = "FILE|URL", value_parser = crate::config::parse_new_store_setting)]
    store: Option<crate::config::StoreSetting>,
    /// Send this address in the `From` header of every request, so that a
    /// webmaster can reach whoever runs the robot (default: the
    /// configuration's `from`, else the EMAIL environment variable).
    #[arg(long, value_name = "ADDRESS")]
    pub(super) from: Option<String>,
    /// Reuse a URL's result from an earlier run when it is younger than
    /// this ("6h") instead of asking again (default: the configuration's
    /// `result_max_age`, else 0: every URL is tested, conditionally where it
    /// can be).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    max_age: Option<std::time::Duration>,
    /// Wait this long between two requests to one site ("1s"; the
    /// configuration's `per_site_delay`, 250ms by default; 0s to 1h). The
    /// wait is for other people's servers: for your own, `--delay 0s`
    /// checks as fast as `--concurrency` allows (lychee's
    /// --host-request-interval).
    #[arg(long, visible_alias = "host-request-interval", value_name = "DURATION", value_parser = config::PerSiteDelay::parse)]
    delay: Option<config::PerSiteDelay>,
    /// Send this `User-Agent` (the configuration's `user_agent`): its
    /// first word is the robot's name, by which robots.txt records are
    /// chosen.
    #[arg(long, value_name = "TEXT")]
    user_agent: Option<String>,
    /// Requests in flight in all (the configuration's `concurrency`, 64
    /// by default; 1 to 4096); each site still gets at most its
    /// `per_site_connections` (2) at a time.
    #[arg(long, visible_aliases = ["max-concurrency", "threads"], value_name = "N", value_parser = config::Concurrency::parse)]
    concurrency: Option<config::Concurrency>,
    /// Retries after a timeout, a connection error, 429 or 503 (the
    /// configuration's `retries`, 2 by default; 0 to 10).
    #[arg(long, visible_alias = "max-retries", value_name = "N", value_parser = config::Retries::parse)]
    retries: Option<config::Retries>,
    /// Follow at most this many redirects from a URL before calling it
    /// broken (the configuration's `max_redirects`, 10 by default; 0 to
    /// 100).
    #[arg(long, value_name = "N", value_parser = config::MaxRedirects::parse)]
    max_redirects: Option<config::MaxRedirects>,
    /// Accept any server certificate, expired, self-signed or for another
    /// name (the configuration's `insecure`): for your own test servers.
    #[arg(long)]
    insecure: bool,
    /// Trust the certificate authorities of this PEM file beside the
    /// system's (the configuration's `ca_file`): a server of yours with a
    /// private CA.
    #[arg(long, value_name = "FILE")]
    cacert: Option<PathBuf>,
    /// Send HTTP basic authentication with the requests under a URL
    /// prefix, as 'URL USER:PASSWORD' (repeatable; lychee's form). A
    /// command line is visible to the machine's other users: a
    /// configuration's `[[request]]` table reads the password from a
    /// variable or a file instead.
    #[arg(long, value_name = "URL USER:PASSWORD")]
    basic_auth: Vec<String>,
    /// Read local files only: no network request at all; every http and
    /// https link is recorded as avoided. Every top must be a local file
    /// or directory.
    #[arg(long)]
    offline: bool,
    /// Check links' fragments: `anchor-only` (the default, and what the
    /// flag alone means: `page.html#part` must name an `id` or `<a name>`
    /// in the page) or `none` (the configuration's `check_fragments`).
    #[arg(long, value_name = "MODE", num_args = 0..=1, default_missing_value = "anchor-only", value_parser = parse_fragments)]
    include_fragments: Option<bool>,
    /// The files a local directory is read as, the first that exists
    /// (comma-separated; `.`: the directory itself is fine; default
    /// `index.html`; `''`: none, so a link must name its file).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    index_files: Option<Vec<String>>,
    /// Extensions tried in turn for a local file that does not exist
    /// (comma-separated: `html,htm` reads `about` from `about.html`, as a
    /// server that adds it would).
    #[arg(long, value_name = "EXTENSIONS", value_delimiter = ',')]
    fallback_extensions: Vec<String>,
    /// Request only links of these schemes: http, https, file
    /// (repeatable, or comma-separated); links of the others are recorded
    /// as avoided. A task's tops are always requested.
    #[arg(long, value_name = "SCHEME", value_delimiter = ',')]
    scheme: Vec<String>,
    /// Give up on a request after this long ("30s"; the configuration's
    /// `timeout`; 100ms to 1h).
    #[arg(long, value_name = "DURATION", value_parser = config::Timeout::parse)]
    timeout: Option<config::Timeout>,
    /// Read at most this much of a body ("50MiB"; the configuration's
    /// `max_body`, 10MiB by default; 1KiB to 4GiB): a page longer than
    /// that is parsed up to it, and said so as the run ends.
    #[arg(long, value_name = "SIZE", value_parser = config::MaxBody::parse)]
    max_body: Option<config::MaxBody>,
    /// Traverse documents at most this many links from each task's top (a
    /// task's `max_depth`, 50 by default; 1 to 100000).
    #[arg(long, visible_alias = "recursion-level", value_name = "N", value_parser = config::MaxDepth::parse)]
    max_depth: Option<config::MaxDepth>,
    /// Send this header with every request to the sites of the tops
    /// ("Name: value", repeatable), never to other sites; per URL prefix,
    /// and with credentials, in a configuration's `[[request]]` tables.
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// A cookie jar in the Netscape format (curl's, wget's): its cookies
    /// go with the crawl's requests, and the cookies the sites set are
    /// written back to it after the run (a missing file is created).
    #[arg(long, value_name = "FILE")]
    cookie_jar: Option<PathBuf>,
    /// Resolve a host name to this address instead of DNS, as HOST=ADDRESS
    /// (repeatable; curl's --resolve): over the configuration's or the
    /// profile's `[resolve]`.
    #[arg(long, value_name = "HOST=ADDRESS")]
    pub(super) resolve: Vec<String>,
    /// The directory a local tree is deployed from: root-relative links
    /// (`/p1.html`) of its `file:` pages resolve against it, as the web
    /// server would (the configuration's `root_dir`).
    #[arg(long, value_name = "DIR")]
    root_dir: Option<PathBuf>,
    /// Count these statuses as ok beside 2xx: codes and ranges, e.g.
    /// `403,429` or `500..=599` (repeatable; beside the configuration's
    /// `accept_status`). They are not retried.
    #[arg(long, value_name = "STATUSES")]
    accept: Vec<String>,
    /// Make no request for URLs this regular expression matches anywhere
    /// (repeatable; beside the configuration's `exclude_regex`). They are
    /// recorded as avoided, with the pattern. A task's tops are always
    /// requested.
    #[arg(long, visible_alias = "ignore-url", value_name = "REGEX")]
    exclude: Vec<String>,
    /// Request URLs this regular expression matches even when an
    /// `--exclude` pattern matches them (repeatable). Given without any
    /// exclude pattern, only the URLs it matches are requested.
    #[arg(long, value_name = "REGEX")]
    include: Vec<String>,
}

pub(super) fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    humantime::parse_duration(s.trim())
        .map_err(|e| format!("`{s}` is not a duration ({e}); write e.g. \"6h\" or \"30m\""))
}

/// A duration above zero (`10s`, `1m`).
pub(super) fn parse_positive_duration(s: &str) -> Result<std::time::Duration, String> {
    match parse_duration(s)? {
        d if d.is_zero() => Err(format!("`{s}` is no time at all; write e.g. \"10s\"")),
        d => Ok(d),
    }
}

/// `--include-fragments[=MODE]`: whether fragments are checked.
fn parse_fragments(s: &str) -> Result<bool, String> {
    match s.trim() {
        "anchor-only" | "true" => Ok(true),
        "none" | "false" => Ok(false),
        "text-only" | "full" => Err(format!(
            "`{s}`: spinneret checks a fragment's anchor (an `id` or `<a name>` in the page), not text fragments (`#:~:text=`); give anchor-only, or none to check no fragments"
        )),
        _ => Err(format!("`{s}` is not a mode; give anchor-only or none")),
    }
}

/// The schemes spinneret requests, which `--scheme` chooses among.
const SCHEMES: [&str; 3] = ["http", "https", "file"];

/// The pattern that leaves out the schemes `--scheme` does not name.
fn scheme_pattern(schemes: &[String]) -> Result<Option<config::UrlPattern>, String> {
    let mut keep = Vec::new();
    for s in schemes {
        let s = s.trim().trim_end_matches(':').to_ascii_lowercase();
        match s.as_str() {
            _ if SCHEMES.contains(&s.as_str()) => keep.push(s),
            "mailto" => {
                return Err(
                    "--scheme mailto: spinneret does not check mail addresses (a mailto: link is recorded as not checked); give http, https or file".into(),
                );
            }
            other => {
                return Err(format!(
                    "--scheme: spinneret requests http, https and file URLs, not `{other}`"
                ));
            }
        }
    }
    let left_out: Vec<&str> = SCHEMES
        .into_iter()
        .filter(|s| !keep.iter().any(|k| k == s))
        .collect();
    if keep.is_empty() || left_out.is_empty() {
        return Ok(None);
    }
    config::UrlPattern::new(&format!("^({}):", left_out.join("|")), "--scheme")
        .map(Some)
        .map_err(|e| format!("--scheme: {e}"))
}

impl Overrides {
    /// No setting but the `From` address (for the commands that read no
    /// configuration file).
    pub(super) fn with_from(from: Option<String>) -> Overrides {
        Overrides {
            from,
            ..Overrides::default()
        }
    }

    /// Put the command line's settings over `config`'s; the `From` address
    /// falls back on `EMAIL`.
    pub(super) fn apply(&self, config: &mut Config) -> Result<(), String> {
        let settings = &mut config.settings;
        if let Some(store) = &self.store {
            settings.store = store.clone();
        }
        if let Some(age) = self.max_age {
            settings.result_max_age = age;
        }
        if let Some(d) = self.delay {
            settings.per_site_delay = d.0;
        }
        if let Some(t) = self.timeout {
            settings.timeout = t.0;
        }
        if let Some(b) = self.max_body {
            settings.max_body = b.0;
        }
        self.apply_client(settings)?;
        super::apply_resolve(settings, &self.resolve)?;
        if !self.headers.is_empty() {
            let headers = self
                .headers
                .iter()
                .map(|h| config::header_argument(h))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("--header: {e}"))?;
            let tops = config
                .tasks
                .iter()
                .flat_map(|t| std::iter::once(&t.top).chain(&t.more_tops));
            settings
                .requests
                .extend(config::header_rules(&headers, tops));
        }
        if let Some(jar) = &self.cookie_jar {
            config::existing_parent(jar).map_err(|e| format!("--cookie-jar: {e}"))?;
            settings.cookie_jar = Some(
                spinneret_crawl::fetch::cookies::CookieJar::open(jar)
                    .map_err(|e| format!("--cookie-jar: {e}"))?,
            );
        }
        if let Some(dir) = &self.root_dir {
            settings.root_dir =
                Some(config::root_dir(dir).map_err(|e| format!("--root-dir: {e}"))?);
        }
        for list in &self.accept {
            settings
                .accept_status
                .add_list(list)
                .map_err(|e| format!("--accept: {e}"))?;
        }
        if let Some(depth) = self.max_depth {
            for task in &mut config.tasks {
                task.bounds.max_depth = depth.0 as u32;
            }
        }
        let compile = |list: &[String], flag: &str| -> Result<Vec<config::UrlPattern>, String> {
            list.iter()
                .map(|p| config::UrlPattern::new(p, flag).map_err(|e| format!("{flag}: {e}")))
                .collect()
        };
        let mut patterns = config::UrlPatterns {
            include: compile(&self.include, "--include")?,
            exclude: compile(&self.exclude, "--exclude")?,
        };
        patterns.exclude.extend(scheme_pattern(&self.scheme)?);
        if self.offline {
            settings.offline = true;
            if let Some(top) = config
                .tasks
                .iter()
                .flat_map(|t| std::iter::once(&t.top).chain(&t.more_tops))
                .find(|t| t.scheme() != "file")
            {
                return Err(format!(
                    "--offline reads local files only, and {top} is not one; give a file or directory, or leave out --offline"
                ));
            }
            patterns.exclude.push(
                config::UrlPattern::new("^https?:", "--offline")
                    .map_err(|e| format!("--offline: {e}"))?,
            );
        }
        if !patterns.is_empty() {
            for task in &mut config.tasks {
                task.patterns = task.patterns.with(&patterns);
            }
        }
        if let Some(from) = &self.from {
            config::check_email(from).map_err(|e| format!("--from: {e}"))?;
            settings.from = Some(from.clone());
        } else if settings.from.is_none()
            && let Some(email) = std::env::var("EMAIL").ok().filter(|e| !e.trim().is_empty())
        {
            let email = email.trim();
            match config::check_email(email) {
                Ok(()) => settings.from = Some(email.to_string()),
                // Set for other programs, perhaps with a name: not ours to refuse.
                Err(e) => tracing::warn!(
                    "the EMAIL environment variable is not used for From: {e}; give --from ADDRESS"
                ),
            }
        }
        if self.root_dir.is_some() {
            config
                .tops_under_root()
                .map_err(|e| format!("--root-dir: {e}"))?;
        }
        if !self.basic_auth.is_empty() {
            for arg in &self.basic_auth {
                let rule =
                    config::basic_auth_argument(arg).map_err(|e| format!("--basic-auth: {e}"))?;
                config.settings.requests.push(rule);
            }
        }
        Ok(())
    }

    /// The settings of how requests are made: the robot's name, how many
    /// at once, retries, redirects, certificates, fragments.
    fn apply_client(&self, settings: &mut config::Settings) -> Result<(), String> {
        if let Some(agent) = &self.user_agent {
            config::check_user_agent(agent).map_err(|e| format!("--user-agent: {e}"))?;
            settings.user_agent = agent.trim().to_string();
        }
        if let Some(n) = self.concurrency {
            settings.concurrency = n.0 as usize;
        }
        if let Some(n) = self.retries {
            settings.retries = n.0 as u32;
        }
        if let Some(n) = self.max_redirects {
            settings.max_redirects = n.0 as usize;
        }
        if self.insecure {
            settings.trust.accept_invalid = true;
        }
        if let Some(file) = &self.cacert {
            settings
                .trust
                .add_ca_file(file)
                .map_err(|e| format!("--cacert: {e}"))?;
        }
        if let Some(on) = self.include_fragments {
            settings.check_fragments = on;
        }
        let names = |list: &[String]| -> Vec<String> {
            list.iter()
                .map(|n| n.trim().to_string())
                .filter(|n| !n.is_empty())
                .collect()
        };
        if let Some(index_files) = &self.index_files {
            settings.local_names.index_files = names(index_files);
        }
        if !self.fallback_extensions.is_empty() {
            settings.local_names.fallback_extensions = names(&self.fallback_extensions);
        }
        Ok(())
    }
}

/// The progress line's note of the wait between two requests to one
/// site, which a person checking their own server may not want: empty
/// when there is none.
pub(super) fn delay_note(delay: std::time::Duration) -> String {
    match delay.is_zero() {
        true => String::new(),
        false => format!(
            "; {} between two requests to one site (--delay 0s for your own servers)",
            humantime::format_duration(delay)
        ),
    }
}

/// What to type instead of a flag spinneret does not have, when it is
/// another link checker's (lychee's, LinkChecker's) or names a setting of
/// the configuration file: the message for clap's error `e`, or `None`
/// for other errors.
pub(super) fn unknown_flag_hint(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    let flag = arg.split('=').next().unwrap_or(arg);
    let hint = flag_hint(flag.trim_start_matches('-'))?;
    Some(format!(
        "error: `{flag}` is not a flag of spinneret; {hint}"
    ))
}

/// What a flag of another tool, or one named after a configuration key,
/// is in spinneret.
fn flag_hint(name: &str) -> Option<String> {
    let hint = match name {
        "base-url" | "base" => {
            "spinneret reads a local tree as file: URLs, and resolves its root-relative links (/p.html) against --root-dir DIR; to check the site where it is served, give its URL"
        }
        "remap" => {
            "spinneret checks each URL where it points; to check a local copy of a site, give its directory (with --root-dir DIR), or give a host another address with --resolve HOST=ADDRESS"
        }
        "include-mail" => {
            "spinneret does not check mail addresses: a mailto: link is recorded as not checked"
        }
        "exclude-path" | "exclude-file" => {
            "--exclude REGEX matches URLs, a local file's too (file:///.../drafts/)"
        }
        "host-concurrency" => {
            "set `per_site_connections` in a configuration (docs/configuration.md) and run `spinneret crawl CONFIG`"
        }
        "no-follow-url" => {
            "a task's `exclude` prefixes in a configuration are tested with HEAD and not traversed (docs/configuration.md)"
        }
        "user" | "password" | "u" | "p" => "give --basic-auth 'URL USER:PASSWORD'",
        "no-robots" => {
            "robots.txt is obeyed on every site; for a site of your own, check --ignore-robots-for-tops reads none on the sites of the tops you name"
        }
        "stdin" => {
            "give - as an input: `check -` reads URLs and paths from standard input, one a line"
        }
        "cache" | "max-cache-age" => {
            "the store keeps every result; --max-age DURATION reuses those younger than it instead of asking again"
        }
        "method" => {
            "spinneret asks HEAD for a link it tests and GET for a page it reads, and GET again when a HEAD fails"
        }
        "exclude-all-private" | "exclude-private" | "exclude-loopback" | "exclude-link-local" => {
            "a page from elsewhere never makes spinneret reach this machine or its network; what you name yourself is checked"
        }
        "require-https" => {
            "spinneret does not report http links that could be https; --scheme https requests only https links"
        }
        "dump" | "dump-inputs" => "spinneret results --json lists what the last run checked",
        "github-token" => {
            "give a header for a host in a configuration's [[request]] table (docs/configuration.md)"
        }
        "r" => "-r N is --max-depth N (or --recursion-level N)",
        "t" => "-t N is --concurrency N (or --threads N)",
        "o" => {
            "--format FORMAT prints a report (json, jsonl, csv, junit, sarif, github, markdown) on standard output"
        }
        "cookiefile" => "--cookie-jar FILE reads a Netscape cookie jar (curl's, wget's)",
        "check-extern" => {
            "spinneret tests every link, other sites' too (HEAD, once each); there is nothing to turn on"
        }
        "no-progress" => "-q prints one line at the end and no progress",
        "output" | "file-output" => {
            "each task's reports are written into its directory (said at the end); --format FORMAT prints one on standard output"
        }
        _ => return config_key_hint(name),
    };
    Some(hint.to_string())
}

/// `--connect-timeout`, `--exclude-regex`: the flag that sets the
/// configuration key it names, or the key, when no flag sets it.
fn config_key_hint(name: &str) -> Option<String> {
    let key = name.replace('-', "_");
    const FLAG_OF: [(&str, &str); 6] = [
        ("per_site_delay", "--delay DURATION"),
        ("result_max_age", "--max-age DURATION"),
        ("accept_status", "--accept STATUSES"),
        ("exclude_regex", "--exclude REGEX"),
        ("include_regex", "--include REGEX"),
        ("check_fragments", "--include-fragments[=none]"),
    ];
    if let Some((_, flag)) = FLAG_OF.iter().find(|(k, _)| *k == key) {
        return Some(format!("`{key}` is set with {flag}"));
    }
    if key == "ca_file" {
        return Some("`ca_file` is set with --cacert FILE".into());
    }
    let tables = ["task", "plugin", "request", "library", "mail", "resolve"];
    (config::setting_keys().contains(&key) && !tables.contains(&key.as_str())).then(|| {
        format!(
            "set `{key}` in a configuration (docs/configuration.md) and run `spinneret crawl CONFIG`"
        )
    })
}
