//! The Worm's commands (seed 001, part 2): `archive export` and `archive
//! import`, `search` and `index`.

use super::output::Shown;
use super::{EXIT_OK, EXIT_USAGE};
use crate::config;
use crate::wwww::archive::{self, Format};
use clap::{Args, Subcommand};
use spinneret_store::Store;
use std::path::{Path, PathBuf};

/// Which store a command reads: a configuration's, a file, or the default.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct StoreArgs {
    /// Use the store named in this configuration file.
    #[arg(long, short = 'c', value_name = "CONFIG", conflicts_with = "store")]
    pub config: Option<PathBuf>,
    /// Use this store (default: spinneret.db in the user's data
    /// directory): a file, or a PostgreSQL database
    /// (postgres://user@host:port/db; its password from PGPASSWORD).
    #[arg(long, value_name = "FILE|URL", value_parser = crate::config::parse_store_setting)]
    pub store: Option<config::StoreSetting>,
}

impl StoreArgs {
    /// Where the store is, the configuration's `[library]` table, and
    /// its `search_index`.
    fn setting_and_library(
        &self,
    ) -> anyhow::Result<(
        config::StoreSetting,
        config::LibrarySettings,
        Option<PathBuf>,
    )> {
        Ok(match &self.config {
            Some(c) => {
                let config = config::load(c).map_err(|e| anyhow::anyhow!("{e}"))?;
                (
                    config.settings.store,
                    config.library,
                    config.settings.search_index,
                )
            }
            None => (
                self.store
                    .clone()
                    .unwrap_or_else(|| config::StoreSetting::File(config::default_store_path())),
                Default::default(),
                None,
            ),
        })
    }

    /// Open the store, which must exist (`what` says what needs it).
    pub(super) fn open_existing(&self, what: &str) -> anyhow::Result<Store> {
        Ok(self.open_existing_with_index(what, None)?.0)
    }

    /// [`StoreArgs::open_existing`], and where its search index lives:
    /// `index` when given, else the configuration's `search_index`, else
    /// where [`crate::wwww::index::index_dir_for`] keeps it.
    pub(super) fn open_existing_with_index(
        &self,
        what: &str,
        index: Option<&Path>,
    ) -> anyhow::Result<(Store, PathBuf)> {
        let (setting, _, configured) = self.setting_and_library()?;
        if let Some(path) = setting.file()
            && !path.exists()
        {
            anyhow::bail!(
                "no store at {}; {what} reads a store a crawl wrote: run a crawl first or name the store with --store",
                path.display()
            );
        }
        let store = setting.open()?;
        let chosen = index.or(configured.as_deref());
        let index = crate::wwww::index::index_dir_for(&setting, chosen, &store)?;
        Ok((store, index))
    }

    /// Open the store, creating it if needed, with where the store is and the
    /// configuration's `[library]` table.
    pub(super) fn open_with_settings(
        &self,
    ) -> anyhow::Result<(Store, config::StoreSetting, config::LibrarySettings)> {
        let (setting, library, _) = self.setting_and_library()?;
        let store = setting.open()?;
        Ok((store, setting, library))
    }
}

/// `--index DIR`, for the commands that read the search index.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct IndexDir {
    /// The search index's directory (default: the configuration's
    /// `search_index`, else beside a store file, or for a database in the
    /// user's data directory).
    #[arg(long = "index", value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// `spinneret archive …`.
#[derive(Subcommand, Debug)]
pub(crate) enum ArchiveCommand {
    /// Write the store's archive: every document read, with its title,
    /// references (with anchor text) and inline images, and which
    /// documents are completed.
    ///
    /// The World Wide Web Worm's format: `T html title`, `R url html
    /// anchor-text`, `I image html anchor-text-or-title`, `C html`. A crawl
    /// given this file (`crawl --archive FILE`) does not read the documents
    /// on its C lines again; delete a C line to have that document re-read.
    Export(ExportArgs),
    /// Read an archive file (either format) into the store: documents the
    /// store has not read itself are added with their references, and its
    /// C lines are kept.
    Import(ImportArgs),
}

#[derive(Args, Debug)]
pub(crate) struct ExportArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// The Worm's lines, or JSON Lines (schema spinneret.archive/1, which
    /// adds each document's syntax faults).
    #[arg(long, value_enum, default_value = "wwww")]
    format: Format,
    /// Write here instead of standard output (replaced only when complete).
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub(crate) struct ImportArgs {
    /// The archive file.
    file: PathBuf,
    #[command(flatten)]
    store: StoreArgs,
}

/// Run an `archive` command.
pub(crate) fn run(cmd: ArchiveCommand) -> anyhow::Result<u8> {
    match cmd {
        ArchiveCommand::Export(args) => {
            let store = args.store.open_existing("archive export")?;
            let docs = store.archive()?;
            let kept: Vec<&Path> = store.path().into_iter().collect();
            let written = super::output::to_file_or_stdout(args.output.as_deref(), &kept, |out| {
                archive::write(&docs, args.format, out)
            })?;
            if let Some(path) = &args.output {
                eprintln!(
                    "{} lines of {} documents written to {}",
                    written.lines,
                    docs.len(),
                    path.display()
                );
            }
            // What no archive line can hold, said rather than dropped
            // without a word.
            for line in written.left_out_lines() {
                eprintln!("spinneret: {}", Shown(&line));
            }
            Ok(EXIT_OK)
        }
        ArchiveCommand::Import(args) => {
            let imported = || -> anyhow::Result<(spinneret_store::ImportCounts, String)> {
                let (setting, _, _) = args.store.setting_and_library()?;
                // An import writes in one transaction: a crawl writing to
                // the same store file meanwhile would find it locked and
                // fail. So the import holds the crawl's lock, and is
                // refused, touching nothing, while a crawl runs.
                let _lock = match setting.file() {
                    Some(path) => Some(spinneret_store::CrawlLock::acquire(path)?),
                    None => None,
                };
                let mut store = setting.open()?;
                let at = store.location().to_string();
                let counts = archive::import_file(&args.file, &mut store, None)?;
                Ok((counts, at))
            };
            match imported() {
                Ok((counts, at)) => {
                    eprintln!(
                        "{} documents of {} were new to {at}",
                        counts.added, counts.documents
                    );
                    Ok(EXIT_OK)
                }
                Err(e) => {
                    eprintln!("spinneret: {e:#}");
                    Ok(EXIT_USAGE)
                }
            }
        }
    }
}

/// `crawl --archive FILE`: import the archive into the crawl's store and
/// answer the documents on its C lines (only this file's: a C line deleted
/// from it has its document read again).
pub(crate) fn completed_for_crawl(
    file: &Path,
    store: &config::StoreSetting,
) -> anyhow::Result<std::collections::HashSet<String>> {
    let mut store = store.open()?;
    let mut completed = std::collections::HashSet::new();
    archive::import_file(file, &mut store, Some(&mut completed))?;
    Ok(completed)
}

#[derive(Args, Debug)]
pub(crate) struct SearchArgs {
    /// The query: words (all must match), "a phrase", field prefixes
    /// (title:, anchor:, cited-by:, url:, host:, ext:, bad:), AND, OR,
    /// NOT, -word, (groups), and regular expressions on a field's words
    /// (url:/mp.?g/). Example: ext:mpg host:fi. Options go before the
    /// query: everything after its first word is the query, `-word` included.
    #[arg(
        required = true,
        value_name = "QUERY",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    query: Vec<String>,
    /// Search every URL (each with the anchor text of a reference to it
    /// and a document citing it), not only the documents read.
    #[arg(long)]
    urls: bool,
    /// JSON (schema spinneret.search/1, as /api/search writes it: query,
    /// mode, page, limit, total, took_ms, notes, hits) instead of text.
    #[arg(long)]
    json: bool,
    /// Results a page (1 to 200).
    #[arg(long, default_value_t = 10, value_name = "N")]
    limit: usize,
    /// Which page (from 1).
    #[arg(long, default_value_t = 1, value_name = "N")]
    page: usize,
    /// Show how each result's score was made.
    #[arg(long)]
    explain: bool,
    #[command(flatten)]
    index: IndexDir,
    #[command(flatten)]
    store: StoreArgs,
}

#[derive(Args, Debug)]
pub(crate) struct IndexArgs {
    /// Build the whole index anew instead of updating what changed.
    #[arg(long)]
    rebuild: bool,
    #[command(flatten)]
    index: IndexDir,
    #[command(flatten)]
    store: StoreArgs,
}

/// `spinneret index`: bring the search index up to date (or rebuild it).
pub(crate) fn index(args: &IndexArgs) -> anyhow::Result<u8> {
    let (store, dir) = args
        .store
        .open_existing_with_index("index", args.index.dir.as_deref())?;
    let started = std::time::Instant::now();
    let s = crate::wwww::index::update(&store, &dir, args.rebuild)?;
    eprintln!(
        "{} {}: {} entries from {} of {} documents and {} library postings in {:.2?}",
        if s.full { "built" } else { "updated" },
        dir.display(),
        s.entries,
        s.changed_documents,
        s.documents,
        s.postings,
        started.elapsed()
    );
    Ok(EXIT_OK)
}

/// `spinneret search`: exit 0 with results, 1 with none, 2 for a query
/// that cannot be run.
pub(crate) fn search(args: &SearchArgs) -> anyhow::Result<u8> {
    use crate::wwww::search::{Request, Searcher};
    let (store, dir) = args
        .store
        .open_existing_with_index("search", args.index.dir.as_deref())?;
    crate::wwww::refresh_index(&store, &dir, &mut |m| eprintln!("{m}"))?;
    let Some(index) = crate::wwww::index::SearchIndex::open(&dir)? else {
        anyhow::bail!("the search index {} could not be opened", dir.display());
    };
    let query = args.query.join(" ");
    let req = Request {
        query: &query,
        urls: args.urls,
        limit: args.limit,
        offset: args.limit.saturating_mul(args.page.max(1) - 1),
        explain: args.explain,
    };
    let started = std::time::Instant::now();
    // A damaged index can make tantivy panic; the search says so in one
    // line (SearchError::Damaged), without the panic's own report.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let answer = Searcher::new(&index).and_then(|s| s.search(&req));
    std::panic::set_hook(hook);
    let answer = match answer {
        Ok(a) => a,
        Err(e) => {
            eprintln!("spinneret: {e}");
            return Ok(EXIT_USAGE);
        }
    };
    let took = started.elapsed();
    let mut out = super::output::stdout();
    use std::io::Write;
    if args.json {
        let page = args.page.max(1);
        let v = answer.json(&query, args.urls, page, args.limit, took);
        writeln!(out, "{}", serde_json::to_string(&v)?)?;
    } else {
        // How the query was read, when otherwise than written: beside the
        // results, not among them.
        for note in &answer.notes {
            eprintln!("note: {}", Shown(note));
        }
        for (i, h) in answer.hits.iter().enumerate() {
            let n = req.offset + i + 1;
            // A page without a title is named by its URL.
            let name = match args.urls {
                true => h.anchor.as_deref().or(h.title.as_deref()),
                false => h.title.as_deref(),
            };
            writeln!(out, "{n}. {}", Shown(name.unwrap_or(&h.url)))?;
            writeln!(out, "   {}", Shown(&h.url))?;
            if let Some(place) = &h.library {
                let vl = Shown(h.cited_by_title.as_deref().unwrap_or("the library"));
                writeln!(out, "   in the library: {vl} <{}>", Shown(place))?;
            } else if args.urls
                && let Some(c) = &h.cited_by
            {
                let c = Shown(c);
                match &h.cited_by_title {
                    Some(t) => writeln!(out, "   cited by: {} <{c}>", Shown(t))?,
                    None => writeln!(out, "   cited by: {c}")?,
                }
            }
            if let Some(e) = &h.explanation {
                for line in e.lines() {
                    writeln!(out, "      {}", Shown(line))?;
                }
            }
        }
        let shown = match answer.hits.len() {
            0 => String::new(),
            k => format!(", {}–{} shown", req.offset + 1, req.offset + k),
        };
        let results = if answer.total == 1 {
            "result"
        } else {
            "results"
        };
        writeln!(
            out,
            "{} {results}{shown} ({:.1} ms)",
            answer.total,
            took.as_secs_f64() * 1000.0
        )?;
    }
    Ok(if answer.total == 0 {
        super::EXIT_BROKEN
    } else {
        EXIT_OK
    })
}

#[derive(Args, Debug)]
pub(crate) struct ServeArgs {
    /// Where to listen. Loopback by default: the pages show what the
    /// store holds; put a reverse proxy in front to share them.
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR")]
    listen: std::net::SocketAddr,
    /// Connections served at once; more wait until one closes.
    #[arg(long, default_value_t = 256, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=65_536))]
    max_connections: u32,
    /// Connections one client (one IPv4 address, one IPv6 /64) may hold
    /// at once; more are answered 503 with Retry-After and closed, so that
    /// one client cannot take every connection from the others. Behind a
    /// reverse proxy every request comes from the proxy: raise it there.
    #[arg(long, default_value_t = 32, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=65_536))]
    max_connections_per_client: u32,
    /// How long a client may take to send a request's headers (and how
    /// long an idle connection stays open): slower clients are closed.
    #[arg(long, default_value = "10s", value_name = "DURATION",
          value_parser = super::overrides::parse_positive_duration)]
    header_timeout: std::time::Duration,
    /// How long a connection stays open with no byte moving either way (a
    /// request body stalled, an answer not read), and the most a request's
    /// body may take to arrive.
    #[arg(long, default_value = "30s", value_name = "DURATION",
          value_parser = super::overrides::parse_positive_duration)]
    idle_timeout: std::time::Duration,
    /// Also answer requests for this host name (repeatable): on loopback
    /// only loopback names are answered, so a reverse proxy that passes
    /// its public name in `Host` needs it named here.
    #[arg(long, value_name = "NAME")]
    allow_host: Vec<String>,
    #[command(flatten)]
    index: IndexDir,
    #[command(flatten)]
    store: StoreArgs,
}

/// `spinneret serve`.
pub(crate) fn serve(args: &ServeArgs) -> anyhow::Result<u8> {
    // A configuration names the store and the library's `[library]` table.
    let (setting, library, configured) = args.store.setting_and_library()?;
    if library.moderators.is_empty() {
        eprintln!(
            "spinneret: the library has no moderators; add [[library.moderator]] entries to the configuration (see `spinneret library hash-password`)"
        );
    }
    if let Some(path) = setting.file()
        && !path.exists()
    {
        eprintln!(
            "spinneret: no store at {} yet: a new one is made, with an empty library and nothing to search until a crawl writes to it",
            path.display()
        );
    }
    let store = setting.open()?;
    let chosen = args.index.dir.as_deref().or(configured.as_deref());
    let index = crate::wwww::index::index_dir_for(&setting, chosen, &store)?;
    if !args.listen.ip().is_loopback() {
        // Not only read access: the library's forms take anyone's posts.
        eprintln!(
            "spinneret: serving on {}, reachable from other machines: anyone who reaches it can read the store's reports and search it, post to the library, and edit, move or delete every posting that has no password; to choose who may, listen on 127.0.0.1 behind a reverse proxy that lets only them through",
            args.listen
        );
    }
    let limits = crate::serve::Limits {
        connections: args.max_connections as usize,
        per_client: args.max_connections_per_client as usize,
        header_timeout: args.header_timeout,
        idle_timeout: args.idle_timeout,
    };
    let allowed = args.allow_host.clone();
    let at = crate::serve::Serving {
        listen: args.listen,
        limits,
        allowed_hosts: allowed,
        library,
        stop: Box::pin(crate::app::stop::signal()),
    };
    crate::serve::serve(store, &index, at, &mut |addr| {
        eprintln!("serving http://{addr}/ (Ctrl-C stops)");
    })?;
    Ok(EXIT_OK)
}
