//! The WebSnatcher profile (seed 004, §2.1 and §2.3): what to collect and
//! where the mirror goes. A TOML file, read with located errors like the
//! crawl configuration:
//!
//! ```toml
//! mirror = "mirror"          # where the mirror lives (relative to the profile)
//! keep_runs = 3              # runs whose files are kept (1: the seed's clean-up)
//! max_pages = 1000           # pages followed from one item at most (its links)
//! max_requisites = 500       # requisites fetched for one page at most
//! requisites = "any-host"    # or "same-site": where page requisites may come from
//! schedule = "1d"            # when `watch` runs the profile
//! exclude = ["https://example.org/ads/"]   # URLs not of interest, never fetched
//!
//! [[url]]                    # an explicit URL
//! url = "https://example.org/"
//! depth = 1                  # links followed from it (same site), 0 by default
//! category = "News"          # "URLs" by default
//!
//! [[bookmarks]]              # a browser's bookmarks: folders become categories
//! file = "bookmarks.html"    # Netscape HTML, or Firefox's or Chromium's JSON
//! depth = 0
//!
//! [[interest]]               # an area of interest, asked of search engines
//! title = "WebAssembly"      # its category
//! keywords = ["wasm", "component model"]
//! engines = ["searx"]
//! max_results = 10           # per engine
//! exact_phrase = "component model"
//! exclude_words = ["crypto"]
//! site = "bytecodealliance.org"
//!
//! [[engine]]                 # a search-engine plugin
//! name = "searx"
//! source = "builtin:searxng" # or a .wasm file
//! config = { base_url = "https://searx.example/" }
//! hosts = ["searx.example"]  # what it may fetch
//!
//! [index]                    # the plugin that writes index.html
//! source = "builtin:websnatcher-index"   # the default
//! config = { title = "Snatched" }
//!
//! [[detector]]               # what says a page changed (default: maintenance)
//! source = "builtin:maintenance"
//!
//! [[fetch_hook]]             # a fetch-hook plugin asked about every request
//! source = "hooks/gate.wasm"
//!
//! [[policy]]                 # a policy plugin asked about every link to follow
//! source = "builtin:trap-guard"
//!
//! [resolve]                  # host names resolved without DNS (`--resolve` wins)
//! "www.example.org" = "192.0.2.7"
//! ```

use serde::Deserialize;
use serde_spanned::Spanned;
use spinneret_config::{ConfigError, line_col};
use spinneret_core::schedule::Schedule;
use std::collections::{BTreeMap, HashSet};
use std::net::IpAddr;
use std::ops::Range;
use std::path::{Path, PathBuf};
use url::Url;

/// The deepest `depth` a profile may ask for.
pub const MAX_DEPTH: u32 = 10;
/// The most pages one item may ask for (`max_pages`).
pub const MAX_PAGES: u32 = 1_000_000;
/// The most requisites one page may ask for (`max_requisites`).
pub const MAX_REQUISITES: u32 = 100_000;
/// The most results an interest may take per engine.
pub const MAX_RESULTS: u32 = 100;

/// Where page requisites (images, stylesheets, scripts, fonts) may come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Requisites {
    /// From any host (today's pages keep them on other hosts, CDNs).
    AnyHost,
    /// Only from the page's own site.
    SameSite,
}

/// An explicit URL to collect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UrlItem {
    /// The page.
    pub url: Url,
    /// How many links deep to follow from it (same site).
    pub depth: u32,
    /// Its category in the mirror and the index.
    pub category: String,
    /// When `watch` collects it, if not on the profile's schedule.
    pub schedule: Option<Schedule>,
}

/// A browser's bookmarks file to collect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BookmarksItem {
    /// The file (absolute).
    pub file: PathBuf,
    /// How many links deep to follow from each bookmark.
    pub depth: u32,
    /// When `watch` collects it, if not on the profile's schedule.
    pub schedule: Option<Schedule>,
}

/// An area of interest, asked of search engines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interest {
    /// Its title: its category in the mirror and the index.
    pub title: String,
    /// The words to search for.
    pub keywords: Vec<String>,
    /// The engines to ask, by `[[engine]]` name.
    pub engines: Vec<String>,
    /// The most results to take from each engine.
    pub max_results: u32,
    /// How many links deep to follow from each result.
    pub depth: u32,
    /// A phrase the results must contain, where the engine can say so.
    pub exact_phrase: Option<String>,
    /// Words the results must not contain, where the engine can say so.
    pub exclude_words: Vec<String>,
    /// A site to restrict the results to, where the engine can say so.
    pub site: Option<String>,
    /// When `watch` collects it, if not on the profile's schedule.
    pub schedule: Option<Schedule>,
}

/// A search-engine plugin.
#[derive(Clone, Debug, PartialEq)]
pub struct Engine {
    /// Its name, as interests name it.
    pub name: String,
    /// `builtin:NAME` or the path of a `.wasm` component.
    pub source: PluginSource,
    /// Its configuration, handed to it as JSON.
    pub config: serde_json::Value,
    /// The hosts it may fetch from (its queries go there).
    pub hosts: Vec<String>,
    /// `FILE:LINE` of its entry.
    pub defined_at: String,
}

pub use spinneret_plugin_host::entry::PluginSource;

/// A plugin a run uses beside its engines: the index writer or a change
/// detector.
#[derive(Clone, Debug, PartialEq)]
pub struct PluginUse {
    /// `builtin:NAME` or the path of a `.wasm` component.
    pub source: PluginSource,
    /// Its configuration, handed to it as JSON.
    pub config: serde_json::Value,
    /// `FILE:LINE` of its entry, or `the default` when the profile has none.
    pub defined_at: String,
}

impl PluginUse {
    /// The built-in plugin `name` with no configuration (a default).
    pub fn builtin(name: &str) -> PluginUse {
        PluginUse {
            source: PluginSource::Builtin(name.to_string()),
            config: serde_json::Value::Object(Default::default()),
            defined_at: "the default".to_string(),
        }
    }

    /// The name a person reads: `builtin:NAME` or the file's path.
    pub fn name(&self) -> String {
        source_name(&self.source)
    }
}

/// `builtin:NAME` or the component file's path.
pub fn source_name(source: &PluginSource) -> String {
    match source {
        PluginSource::Builtin(b) => format!("builtin:{b}"),
        PluginSource::File(f) => f.display().to_string(),
    }
}

/// The index writer when a profile names none.
pub const DEFAULT_INDEX: &str = "websnatcher-index";
/// The change detector when a profile names none.
pub const DEFAULT_DETECTOR: &str = "maintenance";

/// A whole profile.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// The file it was read from.
    pub source: PathBuf,
    /// The mirror's directory (absolute).
    pub mirror: PathBuf,
    /// Runs whose files are kept; older runs' files are removed.
    pub keep_runs: u32,
    /// The most pages collected from one item (the item's own page and
    /// the pages its links lead to), so that a site of a million pages or
    /// a trap ends.
    pub max_pages: u32,
    /// The most requisites (images, stylesheets, scripts, frames) fetched
    /// for one page or stylesheet: a page of 50,000 images is one page,
    /// not 50,000 requests.
    pub max_requisites: u32,
    /// The least time between two requests to one site (`per_site_delay`);
    /// none: the fetcher's default (250 ms).
    pub per_site_delay: Option<std::time::Duration>,
    /// The most requests in flight in all (`concurrency`); none: the
    /// settings' (64 by default), as a crawl's.
    pub concurrency: Option<u32>,
    /// The most requests in flight to one site (`per_site_connections`);
    /// none: the settings' (2 by default), as a crawl's.
    pub per_site_connections: Option<u32>,
    /// Where page requisites may come from.
    pub requisites: Requisites,
    /// When `watch` runs the profile.
    pub schedule: Option<Schedule>,
    /// URL prefixes not of interest: never fetched.
    pub exclude: Vec<String>,
    /// Explicit URLs.
    pub urls: Vec<UrlItem>,
    /// Bookmarks files.
    pub bookmarks: Vec<BookmarksItem>,
    /// Areas of interest.
    pub interests: Vec<Interest>,
    /// Search engines.
    pub engines: Vec<Engine>,
    /// The plugin that writes the index (`[index]`; by default
    /// `builtin:websnatcher-index`).
    pub index: PluginUse,
    /// The change detectors that say what changed in the main pages
    /// (`[[detector]]`; by default `builtin:maintenance`).
    pub detectors: Vec<PluginUse>,
    /// The fetch hooks asked about every request of a run, as a crawl's
    /// are (`[[fetch_hook]]`; none by default): they add headers or veto.
    pub fetch_hooks: Vec<PluginUse>,
    /// The policies asked about each link a run would follow, as a
    /// crawl's are (`[[policy]]`; none by default): `avoid` leaves the
    /// page out, `leaf` collects it without following its links.
    pub policies: Vec<PluginUse>,
    /// Host names resolved to these addresses instead of DNS (`[resolve]`,
    /// as a crawl configuration's); the command line's `--resolve` stands
    /// over them.
    pub resolve: BTreeMap<String, IpAddr>,
}

impl Profile {
    /// Whether `url` is not of interest: one of the profile's `exclude`
    /// prefixes begins it. It is never fetched, and a search hit it is
    /// takes no place among an interest's results.
    pub fn excludes(&self, url: &Url) -> bool {
        self.exclude.iter().any(|x| url.as_str().starts_with(x))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    mirror: Option<Spanned<String>>,
    keep_runs: Option<Spanned<i64>>,
    max_pages: Option<Spanned<i64>>,
    max_requisites: Option<Spanned<i64>>,
    per_site_delay: Option<Spanned<String>>,
    concurrency: Option<Spanned<i64>>,
    per_site_connections: Option<Spanned<i64>>,
    requisites: Option<Spanned<String>>,
    schedule: Option<Spanned<String>>,
    #[serde(default)]
    exclude: Vec<Spanned<String>>,
    #[serde(default)]
    url: Vec<RawUrl>,
    #[serde(default)]
    bookmarks: Vec<RawBookmarks>,
    #[serde(default)]
    interest: Vec<RawInterest>,
    #[serde(default)]
    engine: Vec<RawEngine>,
    index: Option<RawPlugin>,
    #[serde(default)]
    detector: Vec<RawPlugin>,
    #[serde(default)]
    fetch_hook: Vec<RawPlugin>,
    #[serde(default)]
    policy: Vec<RawPlugin>,
    #[serde(default)]
    resolve: BTreeMap<String, Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlugin {
    source: Spanned<String>,
    config: Option<toml::Table>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUrl {
    url: Spanned<String>,
    depth: Option<Spanned<i64>>,
    category: Option<Spanned<String>>,
    schedule: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBookmarks {
    file: Spanned<String>,
    depth: Option<Spanned<i64>>,
    schedule: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInterest {
    title: Spanned<String>,
    keywords: Spanned<Vec<String>>,
    engines: Spanned<Vec<Spanned<String>>>,
    max_results: Option<Spanned<i64>>,
    depth: Option<Spanned<i64>>,
    exact_phrase: Option<String>,
    #[serde(default)]
    exclude_words: Vec<String>,
    site: Option<String>,
    schedule: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEngine {
    name: Spanned<String>,
    source: Spanned<String>,
    config: Option<toml::Table>,
    #[serde(default)]
    hosts: Vec<String>,
}

/// Read the profile at `path`.
pub fn load(path: &Path) -> Result<Profile, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Whole {
        path: path.display().to_string(),
        message: format!("cannot read the profile: {e}"),
    })?;
    parse(&text, path, &base_dir(path))
}

/// The directory a profile's relative paths (its mirror, its bookmarks
/// files) are relative to: the profile file's own, made absolute.
pub fn base_dir(path: &Path) -> PathBuf {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf())
}

/// A profile's text being read: where it is, for located errors.
struct Reader<'t> {
    text: &'t str,
    name: String,
    dir: &'t Path,
}

impl Reader<'_> {
    /// An error at `span` of the text (its start when none).
    fn at(&self, span: Option<Range<usize>>, message: String) -> ConfigError {
        let (line, column) = span.map(|s| line_col(self.text, s.start)).unwrap_or((1, 1));
        ConfigError::At {
            path: self.name.clone(),
            line,
            column,
            message,
        }
    }

    /// A whole number from `min` to `max` (`default` when not given).
    fn bounded(
        &self,
        v: &Option<Spanned<i64>>,
        key: &str,
        (min, max): (i64, i64),
        default: u32,
    ) -> Result<u32, ConfigError> {
        match v {
            None => Ok(default),
            Some(s) if (min..=max).contains(s.get_ref()) => Ok(*s.get_ref() as u32),
            Some(s) => Err(self.at(
                Some(s.span()),
                format!("`{key}` is {}; expected from {min} to {max}", s.get_ref()),
            )),
        }
    }

    /// A number from `min` to `max`, if given.
    fn optional_bounded(
        &self,
        v: &Option<Spanned<i64>>,
        key: &str,
        range: (i64, i64),
    ) -> Result<Option<u32>, ConfigError> {
        match v {
            None => Ok(None),
            Some(_) => self.bounded(v, key, range, 0).map(Some),
        }
    }

    /// An entry's `depth`.
    fn depth(&self, v: &Option<Spanned<i64>>) -> Result<u32, ConfigError> {
        self.bounded(v, "depth", (0, MAX_DEPTH as i64), 0)
    }

    /// An entry's `schedule`, if it has one.
    fn schedule(&self, v: &Option<Spanned<String>>) -> Result<Option<Schedule>, ConfigError> {
        v.as_ref()
            .map(|s| Schedule::parse(s.get_ref()).map_err(|m| self.at(Some(s.span()), m)))
            .transpose()
    }

    /// An http or https URL.
    fn web_url(&self, s: &Spanned<String>) -> Result<Url, ConfigError> {
        match Url::parse(s.get_ref().trim()) {
            Ok(u) if matches!(u.scheme(), "http" | "https") => Ok(u),
            Ok(u) => Err(self.at(
                Some(s.span()),
                format!(
                    "`{}` is a {} URL; a profile collects http and https pages",
                    s.get_ref(),
                    u.scheme()
                ),
            )),
            Err(e) => Err(self.at(
                Some(s.span()),
                format!(
                    "`{}` is not a URL ({e}); write it whole, e.g. https://example.org/",
                    s.get_ref()
                ),
            )),
        }
    }

    /// A category: a directory beside the run's own files; `what` it is to
    /// the profile, and what to do `instead` when its name is one of theirs.
    fn category(
        &self,
        s: &Spanned<String>,
        what: &str,
        instead: &str,
    ) -> Result<String, ConfigError> {
        let c = s.get_ref().trim();
        if let Some(own) = crate::names::mirror_own(&crate::names::clean(c)) {
            return Err(self.at(
                Some(s.span()),
                format!(
                    "`{c}` cannot be {what}: its directory in the run would have the name of {own}; {instead}"
                ),
            ));
        }
        if c.is_empty()
            || c.contains(['/', '\\'])
            || c == "."
            || c == ".."
            || c.chars().any(char::is_control)
        {
            return Err(self.at(
                Some(s.span()),
                format!(
                    "`{c}` cannot be a category: it names a directory of the mirror (no `/`, `\\`, `.` or `..`, not empty)"
                ),
            ));
        }
        Ok(c.to_string())
    }

    /// A built-in, an installed plugin or a component file, as in a crawl
    /// configuration.
    fn plugin_source(&self, s: &Spanned<String>, what: &str) -> Result<PluginSource, ConfigError> {
        spinneret_config::plugin_source::resolve(s.get_ref().trim(), &|r| self.dir.join(r))
            .map(|(source, _manifest)| source)
            .map_err(|m| self.at(Some(s.span()), format!("{what}: {m}")))
    }

    /// The `[[engine]]` entries, each name once.
    fn engines(&self, raw: Vec<RawEngine>) -> Result<Vec<Engine>, ConfigError> {
        let mut engines = Vec::new();
        let mut engine_names = HashSet::new();
        for e in raw {
            let engine_name = e.name.get_ref().trim().to_string();
            if engine_name.is_empty() || !engine_names.insert(engine_name.clone()) {
                return Err(self.at(
                    Some(e.name.span()),
                    format!("engine names must be unique and not empty (`{engine_name}`)"),
                ));
            }
            engines.push(Engine {
                name: engine_name,
                source: self.plugin_source(&e.source, "engine")?,
                config: serde_json::to_value(e.config.unwrap_or_default()).unwrap_or_default(),
                hosts: e
                    .hosts
                    .iter()
                    .map(|h| h.trim().to_ascii_lowercase())
                    .collect(),
                defined_at: format!(
                    "{}:{}",
                    self.name,
                    line_col(self.text, e.name.span().start).0
                ),
            });
        }
        Ok(engines)
    }

    /// The `[[url]]` entries: web pages, or local files.
    fn urls(&self, raw: &[RawUrl]) -> Result<Vec<UrlItem>, ConfigError> {
        let mut urls = Vec::new();
        for u in raw {
            urls.push(UrlItem {
                // A web page, or a local file (a path relative to the profile).
                url: match Url::parse(u.url.get_ref().trim()) {
                    Ok(p) if !matches!(p.scheme(), "http" | "https" | "file") => {
                        return Err(self.at(
                            Some(u.url.span()),
                            format!(
                                "`{}` is a {} URL; a profile collects http and https pages, or local files",
                                u.url.get_ref(),
                                p.scheme()
                            ),
                        ));
                    }
                    Ok(p) => p,
                    // A path: a local file beside the profile, which must exist
                    // (`example.org` is more likely a web page written short).
                    Err(_) => spinneret_config::parse_top(u.url.get_ref().trim(), self.dir)
                        .ok()
                        .filter(|f| f.to_file_path().is_ok_and(|p| p.is_file()))
                        .ok_or_else(|| {
                            self.at(
                                Some(u.url.span()),
                                format!(
                                    "`{}` is neither a URL nor a file beside the profile; write a web page whole, e.g. https://example.org/",
                                    u.url.get_ref()
                                ),
                            )
                        })?,
                },
                depth: self.depth(&u.depth)?,
                category: match &u.category {
                    Some(c) => self.category(c, "a category", "give the [[url]] another category")?,
                    None => "URLs".to_string(),
                },
                schedule: self.schedule(&u.schedule)?,
            });
        }
        Ok(urls)
    }

    /// The `[[bookmarks]]` files.
    fn bookmarks(&self, raw: &[RawBookmarks]) -> Result<Vec<BookmarksItem>, ConfigError> {
        let mut bookmarks = Vec::new();
        for b in raw {
            let file = self.dir.join(b.file.get_ref().trim());
            if !file.is_file() {
                return Err(self.at(
                    Some(b.file.span()),
                    format!(
                        "the bookmarks file {} does not exist; export your browser's bookmarks (HTML, or its JSON file) and name it here",
                        file.display()
                    ),
                ));
            }
            bookmarks.push(BookmarksItem {
                file,
                depth: self.depth(&b.depth)?,
                schedule: self.schedule(&b.schedule)?,
            });
        }
        Ok(bookmarks)
    }

    /// The `[[interest]]` entries, each title once, each naming engines
    /// among `engines`.
    fn interests(
        &self,
        raw: &[RawInterest],
        engines: &[Engine],
    ) -> Result<Vec<Interest>, ConfigError> {
        let mut interests = Vec::new();
        let mut titles = HashSet::new();
        for i in raw {
            let title = self.category(
                &i.title,
                "an interest's title (its category)",
                "give the interest another title",
            )?;
            if !titles.insert(title.to_lowercase()) {
                return Err(self.at(
                    Some(i.title.span()),
                    format!(
                        "two interests are titled `{title}`; each title is a category of the mirror"
                    ),
                ));
            }
            let keywords: Vec<String> = i
                .keywords
                .get_ref()
                .iter()
                .map(|k| k.trim().to_string())
                .filter(|k| !k.is_empty())
                .collect();
            if keywords.is_empty() {
                return Err(self.at(
                    Some(i.keywords.span()),
                    format!("interest `{title}` has no keywords; give the words to search for"),
                ));
            }
            if i.engines.get_ref().is_empty() {
                return Err(self.at(
                    Some(i.engines.span()),
                    format!(
                        "interest `{title}` names no engine; name one or more `[[engine]]` entries"
                    ),
                ));
            }
            for e in i.engines.get_ref() {
                if !engines.iter().any(|n| n.name == e.get_ref().trim()) {
                    let known: Vec<&str> = engines.iter().map(|e| e.name.as_str()).collect();
                    return Err(self.at(
                        Some(e.span()),
                        match known.is_empty() {
                            true => format!("no `[[engine]]` is named `{}`; add one", e.get_ref()),
                            false => format!(
                                "no `[[engine]]` is named `{}`; the engines are: {}",
                                e.get_ref(),
                                known.join(", ")
                            ),
                        },
                    ));
                }
            }
            interests.push(Interest {
                title,
                keywords,
                engines: i
                    .engines
                    .get_ref()
                    .iter()
                    .map(|e| e.get_ref().trim().to_string())
                    .collect(),
                max_results: self.bounded(
                    &i.max_results,
                    "max_results",
                    (1, MAX_RESULTS as i64),
                    10,
                )?,
                depth: self.depth(&i.depth)?,
                exact_phrase: i.exact_phrase.clone().filter(|p| !p.trim().is_empty()),
                exclude_words: i.exclude_words.clone(),
                site: i.site.clone().filter(|s| !s.trim().is_empty()),
                schedule: self.schedule(&i.schedule)?,
            });
        }
        Ok(interests)
    }

    /// The entries of one kind of plugin table (`[[fetch_hook]]`,
    /// `[[policy]]`).
    fn plugin_uses(&self, ps: &[RawPlugin], what: &str) -> Result<Vec<PluginUse>, ConfigError> {
        ps.iter().map(|p| self.plugin_use(p, what)).collect()
    }

    /// A plugin entry (`[index]`, `[[detector]]`, `[[fetch_hook]]`,
    /// `[[policy]]`).
    fn plugin_use(&self, p: &RawPlugin, what: &str) -> Result<PluginUse, ConfigError> {
        Ok(PluginUse {
            source: self.plugin_source(&p.source, what)?,
            config: serde_json::to_value(p.config.clone().unwrap_or_default()).unwrap_or_default(),
            defined_at: format!(
                "{}:{}",
                self.name,
                line_col(self.text, p.source.span().start).0
            ),
        })
    }
}

/// Read a profile from `text`; `path` names it in messages and `dir` is
/// what its relative paths are relative to.
pub fn parse(text: &str, path: &Path, dir: &Path) -> Result<Profile, ConfigError> {
    let r = Reader {
        text,
        name: path.display().to_string(),
        dir,
    };
    let raw: RawProfile =
        toml::from_str(text).map_err(|e| r.at(e.span(), e.message().to_string()))?;
    let index = match &raw.index {
        Some(p) => r.plugin_use(p, "index")?,
        None => PluginUse::builtin(DEFAULT_INDEX),
    };
    let detectors = match raw.detector.is_empty() {
        true => vec![PluginUse::builtin(DEFAULT_DETECTOR)],
        false => raw
            .detector
            .iter()
            .map(|d| r.plugin_use(d, "detector"))
            .collect::<Result<_, _>>()?,
    };

    let fetch_hooks = r.plugin_uses(&raw.fetch_hook, "fetch_hook")?;
    let policies = r.plugin_uses(&raw.policy, "policy")?;

    let engines = r.engines(raw.engine)?;
    let urls = r.urls(&raw.url)?;
    let bookmarks = r.bookmarks(&raw.bookmarks)?;
    let interests = r.interests(&raw.interest, &engines)?;

    if urls.is_empty() && bookmarks.is_empty() && interests.is_empty() {
        return Err(ConfigError::Whole {
            path: r.name.clone(),
            message: "nothing to collect: add a [[url]], a [[bookmarks]] file or an [[interest]]"
                .into(),
        });
    }
    let mut exclude = Vec::new();
    for x in &raw.exclude {
        exclude.push(r.web_url(x)?.to_string());
    }
    let requisites = match &raw.requisites {
        None => Requisites::AnyHost,
        Some(req) => match req.get_ref().trim() {
            "any-host" => Requisites::AnyHost,
            "same-site" => Requisites::SameSite,
            other => {
                return Err(r.at(
                    Some(req.span()),
                    format!("`requisites` is `{other}`; expected `any-host` or `same-site`"),
                ));
            }
        },
    };
    let mut resolve = BTreeMap::new();
    for (host, addr) in &raw.resolve {
        let ip: IpAddr = addr.get_ref().trim().parse().map_err(|_| {
            r.at(
                Some(addr.span()),
                format!(
                    "[resolve]: `{}` is not an IP address; write e.g. \"{host}\" = \"127.0.0.1\" or \"::1\"",
                    addr.get_ref()
                ),
            )
        })?;
        resolve.insert(host.trim().to_ascii_lowercase(), ip);
    }
    Ok(Profile {
        source: path.to_path_buf(),
        mirror: dir.join(
            raw.mirror
                .as_ref()
                .map_or("mirror", |m| m.get_ref().as_str())
                .trim(),
        ),
        keep_runs: r.bounded(&raw.keep_runs, "keep_runs", (1, 100), 1)?,
        max_pages: r.bounded(&raw.max_pages, "max_pages", (1, MAX_PAGES as i64), 1000)?,
        max_requisites: r.bounded(
            &raw.max_requisites,
            "max_requisites",
            (0, MAX_REQUISITES as i64),
            500,
        )?,
        per_site_delay: match &raw.per_site_delay {
            None => None,
            Some(d) => match humantime::parse_duration(d.get_ref().trim()) {
                Ok(v) if v <= std::time::Duration::from_secs(3600) => Some(v),
                Ok(_) => return Err(r.at(Some(d.span()), "per_site_delay is at most 1h".into())),
                Err(e) => {
                    return Err(r.at(
                        Some(d.span()),
                        format!(
                            "per_site_delay: `{}` is not a duration ({e}); write e.g. \"250ms\" or \"2s\"",
                            d.get_ref()
                        ),
                    ));
                }
            },
        },
        // The crawl configuration's bounds.
        concurrency: r.optional_bounded(&raw.concurrency, "concurrency", (1, 4096))?,
        per_site_connections: r.optional_bounded(
            &raw.per_site_connections,
            "per_site_connections",
            (1, 64),
        )?,
        requisites,
        schedule: r.schedule(&raw.schedule)?,
        exclude,
        urls,
        bookmarks,
        interests,
        engines,
        index,
        detectors,
        fetch_hooks,
        policies,
        resolve,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_at(text: &str, dir: &Path) -> Result<Profile, String> {
        parse(text, Path::new("p.toml"), dir).map_err(|e| e.to_string())
    }

    #[test]
    fn a_whole_profile_reads() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("bookmarks.html"), "<DL></DL>").unwrap();
        let p = parse_at(
            r#"
mirror = "out"
keep_runs = 3
requisites = "same-site"
schedule = "1d"
exclude = ["https://example.org/ads/"]

[[url]]
url = "https://example.org/"
depth = 2
category = "News"

[[url]]
url = "http://example.net/a.html"

[[bookmarks]]
file = "bookmarks.html"

[[interest]]
title = "WebAssembly"
keywords = ["wasm", " component model "]
engines = ["searx"]
max_results = 5
exact_phrase = "component model"
exclude_words = ["crypto"]
site = "bytecodealliance.org"

[[engine]]
name = "searx"
source = "builtin:searxng"
config = { base_url = "https://searx.example/" }
hosts = ["Searx.Example"]

[resolve]
"Example.ORG" = "192.0.2.7"
"example.net" = "::1"
"#,
            dir.path(),
        )
        .unwrap();
        assert_eq!(p.mirror, dir.path().join("out"));
        assert_eq!((p.keep_runs, p.requisites), (3, Requisites::SameSite));
        assert_eq!(p.exclude, ["https://example.org/ads/"]);
        assert_eq!(
            p.urls
                .iter()
                .map(|u| (u.url.as_str(), u.depth, u.category.as_str()))
                .collect::<Vec<_>>(),
            [
                ("https://example.org/", 2, "News"),
                ("http://example.net/a.html", 0, "URLs")
            ]
        );
        assert_eq!(p.bookmarks[0].file, dir.path().join("bookmarks.html"));
        let i = &p.interests[0];
        assert_eq!(i.keywords, ["wasm", "component model"]);
        assert_eq!((i.max_results, i.depth), (5, 0));
        assert_eq!(i.site.as_deref(), Some("bytecodealliance.org"));
        let e = &p.engines[0];
        assert_eq!(e.source, PluginSource::Builtin("searxng".into()));
        assert_eq!(e.config["base_url"], "https://searx.example/");
        assert_eq!(e.hosts, ["searx.example"]);
        assert_eq!(e.defined_at, "p.toml:29");
        assert_eq!(
            p.resolve
                .iter()
                .map(|(h, ip)| format!("{h}={ip}"))
                .collect::<Vec<_>>(),
            ["example.net=::1", "example.org=192.0.2.7"]
        );
    }

    #[test]
    fn mistakes_are_named_where_they_are() {
        let dir = tempfile::tempdir().unwrap();
        for (text, expected) in [
            (
                "[[url]]\nurl = \"ftp://x.example/\"\n",
                "p.toml:2:7: `ftp://x.example/` is a ftp URL; a profile collects http and https pages, or local files",
            ),
            (
                "[[url]]\nurl = \"example.org\"\n",
                "p.toml:2:7: `example.org` is neither a URL nor a file beside the profile; write a web page whole, e.g. https://example.org/",
            ),
            (
                "[[url]]\nurl = \"https://e.org/\"\ndepth = 11\n",
                "p.toml:3:9: `depth` is 11; expected from 0 to 10",
            ),
            (
                "[[url]]\nurl = \"https://e.org/\"\ncategory = \"../up\"\n",
                "p.toml:3:12: `../up` cannot be a category: it names a directory of the mirror (no `/`, `\\`, `.` or `..`, not empty)",
            ),
            (
                "[[url]]\nurl = \"https://e.org/\"\ncategory = \"Index.html\"\n",
                "p.toml:3:12: `Index.html` cannot be a category: its directory in the run would have the name of the run's index (runs/NNNN/index.html); give the [[url]] another category",
            ),
            (
                "[[interest]]\ntitle = \"index.html\"\nkeywords = [\"x\"]\nengines = [\"e\"]\n",
                "p.toml:2:9: `index.html` cannot be an interest's title (its category): its directory in the run would have the name of the run's index (runs/NNNN/index.html); give the interest another title",
            ),
            (
                "[[interest]]\ntitle = \".spinneret\"\nkeywords = [\"x\"]\nengines = [\"e\"]\n",
                "p.toml:2:9: `.spinneret` cannot be an interest's title (its category): its directory in the run would have the name of the mirror's bookkeeping (.spinneret); give the interest another title",
            ),
            (
                "[[url]]\nurl = \"https://e.org/\"\ncolour = 1\n",
                "p.toml:3:1: unknown field `colour`, expected one of `url`, `depth`, `category`, `schedule`",
            ),
            (
                "[[bookmarks]]\nfile = \"nope.html\"\n",
                "does not exist; export your browser's bookmarks",
            ),
            (
                "[[interest]]\ntitle = \"A\"\nkeywords = [\"x\"]\nengines = [\"ddg\"]\n",
                "p.toml:4:12: no `[[engine]]` is named `ddg`; add one",
            ),
            (
                "[[interest]]\ntitle = \"A\"\nkeywords = []\nengines = [\"ddg\"]\n",
                "p.toml:3:12: interest `A` has no keywords; give the words to search for",
            ),
            (
                "[[engine]]\nname = \"e\"\nsource = \"builtin:nope\"\n[[url]]\nurl = \"https://e.org/\"\n",
                "p.toml:3:10: engine: there is no built-in plugin `nope`",
            ),
            (
                "[[engine]]\nname = \"e\"\nsource = \"e.wasm\"\n[[url]]\nurl = \"https://e.org/\"\n",
                "p.toml:3:10: engine: plugin source `e.wasm` is neither `builtin:NAME`, an installed `NAME@VERSION-REQ` nor an existing .wasm file",
            ),
            (
                "requisites = \"cdn\"\n[[url]]\nurl = \"https://e.org/\"\n",
                "p.toml:1:14: `requisites` is `cdn`; expected `any-host` or `same-site`",
            ),
            (
                "keep_runs = 0\n[[url]]\nurl = \"https://e.org/\"\n",
                "p.toml:1:13: `keep_runs` is 0; expected from 1 to 100",
            ),
            (
                "per_site_connections = 65\n[[url]]\nurl = \"https://e.org/\"\n",
                "p.toml:1:24: `per_site_connections` is 65; expected from 1 to 64",
            ),
            (
                "concurrency = 0\n[[url]]\nurl = \"https://e.org/\"\n",
                "p.toml:1:15: `concurrency` is 0; expected from 1 to 4096",
            ),
            (
                "[resolve]\n\"e.org\" = \"localhost\"\n[[url]]\nurl = \"https://e.org/\"\n",
                "p.toml:2:11: [resolve]: `localhost` is not an IP address; write e.g. \"e.org\" = \"127.0.0.1\" or \"::1\"",
            ),
            (
                "mirror = \"m\"\n",
                "p.toml: nothing to collect: add a [[url]], a [[bookmarks]] file or an [[interest]]",
            ),
        ] {
            let e = parse_at(text, dir.path()).unwrap_err();
            assert!(
                e.contains(expected),
                "{text:?}\n  said: {e}\n  want: {expected}"
            );
        }
    }
}
