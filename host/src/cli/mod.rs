//! The command line: `spinneret crawl`, `check`, `results` and `plugin`.

mod check;
mod format;
mod library;
mod output;
mod overrides;
mod plugin;
mod plugin_run;
mod profile;
mod results;
mod share;
mod snatch;
mod watch;
mod worker;
mod wwww;

pub use results::{RESULT_SCHEMA, print_results};

pub(crate) use crate::app::run::MailMode;
use crate::app::run::{RunObserver, RunOptions};
use crate::config::{self, Config};
use clap::{Args, Parser, Subcommand};
use output::out;
pub(crate) use overrides::Overrides;
use snatch::{CollectArgs, QueryArgs, collect, collect_run, query};
use spinneret_core::model::Category;
use spinneret_crawl::{self as crawl, CrawlOptions, Progress};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use url::Url;

/// Exit code: nothing broken.
pub const EXIT_OK: u8 = 0;
/// Exit code: something is broken.
pub const EXIT_BROKEN: u8 = 1;
/// Exit code: bad usage or configuration.
pub const EXIT_USAGE: u8 = 2;
/// Exit code: a plugin failed and `--strict-plugins` was given.
pub const EXIT_PLUGIN: u8 = 3;
/// Exit code: a task checked nothing (its top kept out by robots.txt or
/// a rule, refused, not an HTML page, or moved off its site), and nothing
/// was broken.
pub const EXIT_NOTHING_CHECKED: u8 = 4;
/// Exit code: the run was stopped by a signal (Ctrl-C, SIGTERM) before it
/// ended: what it checked is stored, but it is no whole run's verdict
/// (128 + SIGINT, as a shell reports a command Ctrl-C ended).
pub const EXIT_INTERRUPTED: u8 = 130;

/// spinneret: a polite web-maintenance spider.
///
/// It walks the webs you maintain (by site, by directory tree or by owner),
/// tests every link once per run with HEAD for leaves and GET for documents,
/// honours robots.txt, and records what is broken, moved, recently changed or
/// expiring in an embedded store. After each crawl its plugins write each
/// task's reports, the MOMspider maintenance index among them.
#[derive(Parser, Debug)]
#[command(
    name = "spinneret",
    version,
    propagate_version = true,
    max_term_width = 100
)]
#[command(
    after_help = "Exit status: 0 when nothing is broken, 1 when something is (a broken link or fragment; a blocked link, 401, 403 or 429, is a warning), 2 for usage or configuration errors, 3 when a plugin failed and --strict-plugins was given (or --format's report of a task is missing), 4 when a task checked nothing (its top kept out by robots.txt, refused, moved off its site or not an HTML page: a line says which and why) and nothing is broken, 130 when a signal (Ctrl-C, SIGTERM) stopped the run before it ended (what it checked is stored).\n\
Examples:\n  spinneret check https://www.example.org/\n  spinneret crawl example/spinneret.toml\n  spinneret results --task ICS --json\n  spinneret plugin new link-count --kind reporter"
)]
pub struct Cli {
    /// More log output (-v: debug, -vv: trace).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    /// Less output: -q: errors, what changes the verdict (a local tree's
    /// root, a task that checked nothing) and a one-line summary, no
    /// progress bar; -qq: nothing but a fatal error (the exit status
    /// tells).
    #[arg(short, long, action = clap::ArgAction::Count, global = true, conflicts_with = "verbose")]
    quiet: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the tasks of a configuration file.
    ///
    /// Every task is traversed from its top URL down to its leaves; a URL
    /// reached by several tasks is requested once. Results go to the store
    /// named in the configuration. Ctrl-C stops cleanly; `--resume` continues.
    Crawl(CrawlArgs),
    /// Work in a crawl shared by many processes through a PostgreSQL store.
    ///
    /// Start `spinneret worker CONFIG` on any number of machines against
    /// one database (`store = "postgres://…"` or --store URL): they join
    /// the newest unfinished run of the configuration, or begin one, and
    /// share it. Each worker leases sites and requests only their URLs, so
    /// robots.txt and per-site politeness hold across all of them; what
    /// it finds on other sites goes to the shared frontier. A URL is
    /// requested once per run. A worker that dies loses nothing stored:
    /// its leases run out (--lease) and others take its sites over. The
    /// last worker to finish runs the report stage and mail, once, prints
    /// the run's broken links and exits 1 if there are any; the others
    /// print their share and exit 0. Ctrl-C stops one worker; its sites go
    /// back to the others. See docs/scale.md.
    Worker(worker::WorkerArgs),
    /// Check one or more sites now, with default settings and no configuration.
    ///
    /// Each URL becomes a `site` task: everything on its host and port is
    /// traversed, everything linked from it is tested; with --tree, only
    /// what lies below its directory (https://host/docs/) is traversed.
    /// The pages its site's sitemaps list (robots.txt's Sitemap: lines,
    /// /sitemap.xml) are traversed too, so a page nothing links to is
    /// checked (--no-sitemap: not). A path is a local tree, or a file
    /// (README.md: its Markdown links); a quoted glob ('site/**/*.html'),
    /// `-` (standard input) and --files-from FILE name many: a local
    /// tree's root-relative links (/page.html) read against the checked
    /// directory unless --root-dir names another. Reports go beside the
    /// store (STORE.check-reports/, a directory per top). Exit status 4
    /// when a top could not be checked (robots.txt keeps it out: see
    /// --ignore-robots-for-tops; not an HTML page), with a line saying why.
    /// Requests to one site wait 250ms apart, for other people's servers:
    /// for your own, --delay 0s checks as fast as --concurrency allows.
    Check(CheckArgs),
    /// Show what the last run found, from the store.
    Results(ResultsArgs),
    /// Write, examine and share plugins: `new`, `inspect`, `run`,
    /// `builtins`; `pack`, `keygen`, `sign`, `trust`, `push`; `install`, `list`, `info`,
    /// `remove`, `update`.
    #[command(subcommand)]
    Plugin(plugin::PluginCommand),
    /// Run the tasks of a configuration, or the entries of a WebSnatcher
    /// profile, on a schedule, until stopped.
    ///
    /// Each task runs at its `schedule` (an interval such as "6h", or a
    /// local time of day such as "02:30"), else the configuration's, else
    /// --schedule. Tasks due together share one run. A profile's `[[url]]`,
    /// `[[bookmarks]]` and `[[interest]]` entries run likewise at their own
    /// `schedule` or the profile's; a run of some of them carries the
    /// others' pages forward from the last run, so the mirror and its index
    /// keep them. The file is read again before each run. SIGTERM or
    /// Ctrl-C stops: the requests in flight finish, a crawl stores
    /// everything it checked, a collection saves, archives and indexes
    /// what it fetched.
    Watch(WatchArgs),
    /// Collect a WebSnatcher profile (the URLs, bookmarks and search
    /// interests you keep) into a mirror that browses offline.
    ///
    /// Every explicit URL, bookmark and search result of the profile is
    /// fetched with its page requisites (images, stylesheets and what they
    /// reference, scripts, frames, icons, fonts) and its same-site links to
    /// the item's depth, politely (robots.txt, the per-site interval, the
    /// body cap), each URL once; pages are saved by category with their
    /// links converted, so the mirror browses offline. Each run writes
    /// `runs/NNNN/` with its WARC file beside it, and `index.html` lists
    /// the pages with what changed since the last run; earlier runs beyond
    /// `keep_runs` are removed first. `--clean`, `--archive` and
    /// `--purge-before` keep or remove instead of collecting. The profile's
    /// keys are in docs/websnatcher.md.
    Collect(CollectArgs),
    /// Write, show and edit a WebSnatcher profile: `new`, `show`, `add`,
    /// `remove`, `set`.
    ///
    /// Edits keep the file's comments and layout, and are checked as a
    /// profile before they are written: one that would make it invalid
    /// changes nothing. On a terminal, what an entry needs and was not
    /// given is asked for.
    #[command(subcommand)]
    Profile(profile::ProfileCommand),
    /// Ask one search-engine plugin once and print its ranked hits.
    ///
    /// For choosing the engines of a WebSnatcher profile's interests, and
    /// for plugin authors trying an engine. The query goes through
    /// spinneret's polite fetcher: the engine's robots.txt applies.
    /// Example: spinneret query builtin:searxng --config '{"base":
    /// "https://searx.example/"}' webassembly components
    Query(QueryArgs),
    /// The store's archive in the World Wide Web Worm's format (the 1994
    /// search engine's): `export` writes the store's documents,
    /// references, inline images and completed documents as `T`, `R`, `I`
    /// and `C` lines (or JSON Lines); `import` reads such a file.
    #[command(subcommand)]
    Archive(wwww::ArchiveCommand),
    /// Search the titles, anchor text and URLs of everything the crawls saw.
    ///
    /// Titles, the anchor text of every reference, the titles and URLs of
    /// citing documents and every component of each URL are searched;
    /// anchor text weighs most. The index (beside a store file; for a
    /// PostgreSQL store, in the data directory under spinneret/search/) is
    /// brought up to date first when a crawl has added to the store. Exit
    /// status: 0 with results, 1 with none, 2 for a query that cannot be
    /// run.
    Search(wwww::SearchArgs),
    /// Build or update the search index (beside a store file; for a
    /// PostgreSQL store, in the data directory under spinneret/search/);
    /// crawls and `search` keep it up to date: this is for the rare manual
    /// case.
    Index(wwww::IndexArgs),
    /// Serve the search page, its JSON API (/api/search), the last run's
    /// reports (read-only) and the library (which takes posts) over HTTP,
    /// on loopback by default.
    ///
    /// The search index is kept up to date as crawls add to the store.
    /// No page needs JavaScript; Ctrl-C stops.
    Serve(wwww::ServeArgs),
    /// The virtual library (GENVL: a tree of link pages its moderators
    /// edit, served by `serve`) outside the server:
    /// `hash-password` for a moderator, `export` and `import` of the
    /// whole library as JSON, `publish` as static HTML pages.
    #[command(subcommand)]
    Library(library::LibraryCommand),
    /// Write a MOMspider instruction file as the equivalent TOML configuration.
    ///
    /// `crawl` reads instruction files as they are; converting is for moving
    /// to the TOML file's further settings (mail server, plugins, politeness).
    Convert(ConvertArgs),
}

#[derive(Args, Debug)]
struct WatchArgs {
    /// The configuration (a TOML file or a MOMspider instruction file), or a
    /// WebSnatcher profile.
    config: PathBuf,
    /// The schedule of tasks (or profile entries) that name none ("6h", "02:30").
    #[arg(long, value_name = "WHEN", value_parser = spinneret_core::schedule::Schedule::parse)]
    schedule: Option<spinneret_core::schedule::Schedule>,
    #[command(flatten)]
    overrides: Overrides,
    /// Treat a plugin failure as a failed run (it is reported; watching goes on).
    #[arg(long)]
    strict_plugins: bool,
}

#[derive(Args, Debug)]
struct ConvertArgs {
    /// The MOMspider instruction file (MOMspider's own format: its
    /// `SystemAvoid`, `<Site ...>` and `EmailBroken` lines).
    instructions: PathBuf,
    /// Write the TOML here instead of to standard output (refuses to overwrite).
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct CrawlArgs {
    /// The configuration: a TOML file (every key is in docs/configuration.md)
    /// or a MOMspider instruction file.
    config: PathBuf,
    /// Run only this task.
    #[arg(long, value_name = "NAME")]
    task: Option<String>,
    /// Continue the newest unfinished run of this configuration.
    #[arg(long)]
    resume: bool,
    /// Start from a Worm archive (`archive export` writes one): it is
    /// imported into the store, and the documents on its C lines are not
    /// read again (delete a C line to have its document re-read).
    #[arg(long, value_name = "FILE")]
    archive: Option<PathBuf>,
    #[command(flatten)]
    overrides: Overrides,
    /// Treat a plugin failure as a failed run (exit status 3).
    #[arg(long)]
    strict_plugins: bool,
    /// Print the messages to owners instead of sending them (nothing is
    /// queued; messages already waiting in the outbox stay there).
    #[arg(long)]
    dry_run_mail: bool,
    #[command(flatten)]
    output: OutputArgs,
}

/// How a run is shown.
#[derive(Args, Debug)]
struct OutputArgs {
    /// What to print on standard output: `text` (the summary, the broken
    /// links and where the reports are) or a report of the run, written by
    /// its built-in reporter into each task's report directory and printed,
    /// the tasks' together: `json` (one JSON document), `jsonl` (JSON
    /// Lines, a line per URL, document and finding; both are described in
    /// docs/results-json.md), `markdown` (for a
    /// pull-request comment or $GITHUB_STEP_SUMMARY), `junit` (JUnit XML,
    /// for CI test views), `csv`, `sarif` (SARIF 2.1.0, for code scanning)
    /// or `github` (GitHub Actions annotations; `sarif` and `github` name
    /// a local tree's files relative to the current directory). With a
    /// report format standard output holds the report alone: the text,
    /// and the messages `--dry-run-mail` prints, go to standard error; the
    /// exit status is the same, or 3 when a task's report in the format is
    /// missing (its reporter failed).
    #[arg(long, value_enum, default_value_t, value_name = "FORMAT")]
    format: format::Format,
}

#[derive(Args, Debug)]
struct CheckArgs {
    /// The top URLs (http, https or file), paths of local trees (a
    /// directory stands for its index.html) or files (HTML or Markdown:
    /// README.md), quoted globs ('site/**/*.html': one task of the files
    /// matched), or - to read such inputs from standard input, one a line
    /// (# comments and blank lines ignored).
    #[arg(required_unless_present = "files_from", value_name = "URL|PATH|GLOB|-")]
    urls: Vec<String>,
    /// Read inputs from FILE (- for standard input), one a line, as
    /// lychee's --files-from: its local files are one task.
    #[arg(long, value_name = "FILE")]
    files_from: Option<PathBuf>,
    /// Traverse only below each top's directory (a `tree` task:
    /// https://host/docs/ checks the pages under /docs/ and the links
    /// they make), not its whole site.
    #[arg(long)]
    tree: bool,
    /// Do not look for pages in the sitemaps (robots.txt's Sitemap: lines
    /// and /sitemap.xml of each top's site): only what links reach.
    #[arg(long)]
    no_sitemap: bool,
    #[command(flatten)]
    overrides: Overrides,
    /// Do not read robots.txt on the sites of the URLs given (a staging
    /// site of your own behind `Disallow: /`): every page there is
    /// checked. Every other site's robots.txt is read and obeyed.
    #[arg(long)]
    ignore_robots_for_tops: bool,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Args, Debug)]
struct ResultsArgs {
    #[command(flatten)]
    store: wwww::StoreArgs,
    /// Only the URLs this task reached, with its role for each.
    #[arg(long, value_name = "NAME")]
    task: Option<String>,
    /// JSON Lines (schema spinneret.result/1), one object per checked URL.
    #[arg(long)]
    json: bool,
    /// Only these categories (ok, moved, broken, blocked, avoided, not_checked); repeatable.
    #[arg(long = "category", value_name = "CATEGORY", value_parser = parse_category)]
    categories: Vec<Category>,
}

fn parse_category(s: &str) -> Result<Category, String> {
    Category::from_name(s).ok_or_else(|| {
        format!(
            "unknown category `{s}`; expected ok, moved, broken, blocked, avoided or not_checked (broken fragments are listed at the end of `spinneret results` without --category)"
        )
    })
}

/// Run the command line; the return value is the process's exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
            match overrides::unknown_flag_hint(&e) {
                Some(hint) => eprintln!("{hint}\n\nFor more information, try '--help'."),
                None => drop(e.print()),
            }
            return ExitCode::from(code);
        }
    };
    output::init_logging(cli.verbose, cli.quiet);
    match dispatch(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("spinneret: {e:#}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// Run one subcommand: its exit code, or the error that stops it (said by
/// [`main`], which gives it the usage exit code).
fn dispatch(cli: Cli) -> anyhow::Result<u8> {
    let quiet = cli.quiet;
    match cli.command {
        Command::Plugin(cmd) => plugin::run(cmd),
        Command::Convert(args) => convert(&args),
        Command::Archive(cmd) => wwww::run(cmd),
        Command::Search(args) => wwww::search(&args),
        Command::Index(args) => wwww::index(&args),
        Command::Serve(args) => wwww::serve(&args),
        Command::Library(cmd) => library::run(cmd),
        Command::Query(args) => query(&args, quiet),
        Command::Collect(args) => collect(&args, quiet),
        Command::Profile(cmd) => profile::run(cmd),
        Command::Watch(args) => watch::run(
            &args.config,
            args.schedule,
            &args.overrides,
            quiet,
            args.strict_plugins,
        ),
        Command::Worker(args) => worker::run(&args, quiet),
        Command::Crawl(args) => crawl(args, quiet),
        Command::Check(args) => check(&args, quiet),
        Command::Results(args) => results(&args),
    }
}

/// `spinneret crawl CONFIG`.
fn crawl(args: CrawlArgs, quiet: u8) -> anyhow::Result<u8> {
    let mut config = load_config(&args.config, &args.overrides).map_err(anyhow::Error::msg)?;
    let completed = match &args.archive {
        Some(file) => wwww::completed_for_crawl(file, &config.settings.store)?,
        None => Default::default(),
    };
    let options = CrawlOptions {
        resume: args.resume,
        task: args.task,
        hooks: None,
        completed: Arc::new(completed),
        shared: None,
        sites: None,
        ignore_robots_for_tops: false,
        sitemaps: false,
    };
    let mail = match args.dry_run_mail {
        true => MailMode::Print,
        false => MailMode::Send,
    };
    let format = args.output.format;
    format.add_to(&mut config);
    run_crawl(&config, &options, quiet, args.strict_plugins, mail, format)
}

/// `spinneret check URL|PATH...`: each a task of its own, on a store of
/// the system's temporary directory.
fn check(args: &CheckArgs, quiet: u8) -> anyhow::Result<u8> {
    let tasks = check::tasks_of_inputs(&args.urls, args.files_from.as_deref(), &mut || {
        std::io::read_to_string(std::io::stdin())
    })
    .map_err(anyhow::Error::msg)?;
    let mut config = check::config_of(&tasks, args.tree);
    args.overrides
        .apply(&mut config)
        .map_err(anyhow::Error::msg)?;
    let root = check::infer_root(&mut config).map_err(anyhow::Error::msg)?;
    let reports = check::reports_base(&config.settings.store);
    check::place_reports(&mut config, &reports).map_err(anyhow::Error::msg)?;
    args.output.format.add_to(&mut config);
    let options = CrawlOptions {
        ignore_robots_for_tops: args.ignore_robots_for_tops,
        sitemaps: !args.no_sitemap,
        ..CrawlOptions::default()
    };
    let code = run_crawl(
        &config,
        &options,
        quiet,
        false,
        MailMode::Send,
        args.output.format,
    )?;
    // The root taken changes what the run found: said even with -q.
    if let (Some(root), 0 | 1) = (root, quiet) {
        match args.output.format {
            format::Format::Text => out!("{}", check::root_line(&root)),
            _ => eprint!("{}", check::root_line(&root)),
        }
    }
    Ok(code)
}

/// What `check` makes of one of its arguments: an http, https or file
/// URL, or a path (a local tree, as a `file:` top: a directory's
/// index.html); else what is wrong with it and what was likely meant.
fn check_top(raw: &str) -> Result<Url, String> {
    let here = std::path::Path::new(".");
    match Url::parse(raw) {
        Ok(u) if spinneret_core::urls::is_checkable(&u) => {
            config::parse_top(raw, here).map_err(|e| e.to_string())
        }
        Ok(u) => {
            // `localhost:8080/` reads as the scheme `localhost`.
            let host_and_port =
                u.path().split('/').next().is_some_and(|port| {
                    !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit())
                });
            Err(format!(
                "`{raw}` has scheme `{}`; check takes http, https or file URLs, or a path{}",
                u.scheme(),
                match (host_and_port, spinneret_core::urls::mistyped_scheme(&u)) {
                    (true, _) => format!("; for a server, write http://{raw}"),
                    (false, Some(typo)) => format!(" ({typo})"),
                    (false, None) => String::new(),
                }
            ))
        }
        Err(url::ParseError::RelativeUrlWithoutBase) => {
            let path = std::path::Path::new(raw);
            if !path.exists() {
                let host = raw.split('/').next().unwrap_or("");
                // `127.0.0.1:8080/x` is a server on a port (http);
                // `www.example.org/x` a site (https).
                let hint = match (
                    host.contains(':'),
                    host.contains('.') && !host.starts_with('.'),
                ) {
                    (true, _) => format!("; for a server, write http://{raw}"),
                    (false, true) => format!("; for a site, write https://{raw}"),
                    (false, false) => String::new(),
                };
                return Err(format!(
                    "`{raw}` is neither a URL nor an existing file or directory{hint}"
                ));
            }
            if path.is_dir() && !path.join("index.html").is_file() {
                return Err(format!(
                    "the directory `{raw}` has no index.html to start from; give one of its pages (check {}/PAGE.html)",
                    raw.trim_end_matches('/')
                ));
            }
            config::parse_top(raw, here).map_err(|e| e.to_string())
        }
        Err(e) => Err(format!("`{raw}` is not a URL ({e})")),
    }
}

/// `spinneret results`: the last run's results from the store.
fn results(args: &ResultsArgs) -> anyhow::Result<u8> {
    let store = args.store.open_existing("results")?;
    let broken = print_results(
        &store,
        args.task.as_deref(),
        args.json,
        &args.categories,
        &mut output::stdout(),
    )?;
    Ok(if broken { EXIT_BROKEN } else { EXIT_OK })
}

/// A configuration of either format, with the command line's settings over it.
fn load_config(path: &std::path::Path, overrides: &Overrides) -> Result<Config, String> {
    let mut c = config::load(path).map_err(|e| e.to_string())?;
    overrides.apply(&mut c)?;
    Ok(c)
}

/// `spinneret convert`: instruction file in, TOML out.
fn convert(args: &ConvertArgs) -> anyhow::Result<u8> {
    let text = std::fs::read_to_string(&args.instructions).map_err(|e| {
        anyhow::anyhow!(
            "{}: cannot read the instruction file: {e}",
            args.instructions.display()
        )
    })?;
    if !config::is_instruction_file(&text) {
        eprintln!(
            "spinneret: {} is not a MOMspider instruction file (it reads as TOML already)",
            args.instructions.display()
        );
        return Ok(EXIT_USAGE);
    }
    let config = match config::load_instructions(&args.instructions) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("spinneret: {e}");
            return Ok(EXIT_USAGE);
        }
    };
    let toml = config::to_toml(&config);
    match &args.output {
        None => out!("{toml}"),
        Some(path) => {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .map_err(|e| anyhow::anyhow!("{}: cannot create it: {e}", path.display()))?;
            f.write_all(toml.as_bytes())?;
            eprintln!("spinneret: wrote {}", path.display());
        }
    }
    Ok(EXIT_OK)
}

/// A run as the terminal shows it: a progress bar while it crawls, mail
/// printed to standard output (to standard error when a report format
/// has standard output).
struct Terminal {
    /// No progress display (`-q`, `-qq`).
    quiet: bool,
    bar: Option<tokio::task::JoinHandle<()>>,
    /// Mail printed (`--dry-run-mail`) goes to standard error: standard
    /// output holds a `--format` report alone.
    mail_to_stderr: bool,
    /// The wait between two requests to one site, said in the progress line.
    delay: std::time::Duration,
}

impl RunObserver for Terminal {
    fn crawl_started(&mut self, progress: Arc<Progress>) {
        self.bar = output::start_progress(progress, self.quiet, self.delay);
    }

    fn crawl_finished(&mut self) {
        output::finish_progress(self.bar.take());
    }

    fn mail_out(&mut self) -> Box<dyn std::io::Write + '_> {
        match self.mail_to_stderr {
            true => Box::new(std::io::stderr().lock()),
            false => Box::new(output::stdout()),
        }
    }
}

/// Crawl with a progress display and Ctrl-C handling; print the summary
/// (or the run's report in `format`).
fn run_crawl(
    config: &Config,
    options: &CrawlOptions,
    quiet: u8,
    strict_plugins: bool,
    mail: MailMode,
    format: format::Format,
) -> anyhow::Result<u8> {
    crawl_once(config, options, quiet, strict_plugins, mail, format).map(|(code, interrupted)| {
        match interrupted {
            true => EXIT_INTERRUPTED,
            false => code,
        }
    })
}

/// One crawl, its reports and mail: the exit code, and whether it was
/// stopped by a signal. The text goes to standard output, or with a
/// report `format` to standard error, the report to standard output.
fn crawl_once(
    config: &Config,
    options: &CrawlOptions,
    quiet: u8,
    strict_plugins: bool,
    mail: MailMode,
    format: format::Format,
) -> anyhow::Result<(u8, bool)> {
    let options = RunOptions {
        crawl: options.clone(),
        mail,
    };
    let mut observer = Terminal {
        quiet: quiet > 0,
        bar: None,
        mail_to_stderr: format != format::Format::Text,
        delay: config.settings.per_site_delay,
    };
    let outcome = crate::app::run::run_once(config, &options, &mut observer)?;
    for line in outcome.problems.iter().chain(&outcome.notes) {
        eprintln!("spinneret: {line}");
    }
    let report = &outcome.crawl;
    let plugin_failed = outcome.plugin_failed;
    // What a person reads: on standard output, unless a report takes it.
    let mut text = String::new();
    // The store, opened once for all that is said of the run.
    let store = spinneret_store::Store::open_at(outcome.store.clone()).map_err(anyhow::Error::from);
    // Links to a place that is not there, read once: listed with the
    // problems, and they fail the run as a broken link does.
    let broken_fragments = store
        .as_ref()
        .map_err(|e| anyhow::anyhow!("{e:#}"))
        .and_then(|store| results::broken_fragments(store, report.run))
        .unwrap_or_else(|e| {
            if quiet < 2 {
                eprintln!("spinneret: cannot read the run's broken fragments: {e:#}");
            }
            Vec::new()
        });
    if quiet == 1 {
        let line = store
            .as_ref()
            .map_err(|e| anyhow::anyhow!("{e:#}"))
            .and_then(|store| one_line_summary(store, &outcome, broken_fragments.len()));
        match line {
            Ok(line) => text.push_str(&format!("{line}\n")),
            Err(e) => eprintln!("spinneret: cannot read the run's summary: {e:#}"),
        }
    }
    // The tasks that checked nothing: said even with -q, and their own
    // exit status when nothing else failed.
    let nothing = match (&store, report.interrupted) {
        (Ok(store), false) => results::nothing_checked(store, report.run, config, &report.tasks)
            .unwrap_or_else(|e| {
                eprintln!("spinneret: cannot read what the run checked: {e:#}");
                Vec::new()
            }),
        _ => Vec::new(),
    };
    if quiet == 0 {
        text.push_str(&closing_text(
            config,
            &outcome,
            store.as_ref(),
            &broken_fragments,
            &nothing,
        ));
    }
    // A task without its report in the format fails the run: what was
    // asked for is not all there.
    let mut report_missing = false;
    match format {
        format::Format::Text => out!("{text}"),
        report_format => {
            eprint!("{text}");
            let ran: Vec<String> = report.tasks.iter().map(|t| t.name.clone()).collect();
            let (document, missing) = report_format.document(config, &ran, &outcome.reports);
            out!("{document}");
            if !missing.is_empty() && report.interrupted {
                eprintln!(
                    "spinneret: no {} report for the task(s) {}: the run was interrupted before its reports",
                    report_format.name(),
                    missing.join(", ")
                );
            } else if !missing.is_empty() {
                eprintln!(
                    "spinneret: no {} report for the task(s) {} (its reporter failed; see above); exit status {EXIT_PLUGIN}",
                    report_format.name(),
                    missing.join(", ")
                );
                report_missing = true;
            }
        }
    }
    let code = if (plugin_failed && strict_plugins) || report_missing {
        EXIT_PLUGIN
    } else if report.any_broken() || !broken_fragments.is_empty() {
        EXIT_BROKEN
    } else if !nothing.is_empty() {
        EXIT_NOTHING_CHECKED
    } else {
        EXIT_OK
    };
    if quiet < 2 {
        for results::NothingChecked { line, .. } in &nothing {
            match code {
                EXIT_NOTHING_CHECKED => eprintln!("spinneret: {line}; exit status {code}"),
                _ => eprintln!("spinneret: {line}"),
            }
        }
    }
    Ok((code, report.interrupted))
}

/// What a run prints when it ends: the summary table, the links a reader
/// cannot follow with the pages they are on, where each task's reports
/// are, and the run's line.
fn closing_text(
    config: &Config,
    outcome: &crate::app::run::RunOutcome,
    store: Result<&spinneret_store::Store, &anyhow::Error>,
    broken_fragments: &[(String, String, String)],
    nothing: &[results::NothingChecked],
) -> String {
    use std::fmt::Write as _;
    let report = &outcome.crawl;
    let mut text = crawl::print_summary(&report.tasks);
    // What to fix, and where: the links a reader cannot follow with the
    // pages they are on, then where each task's reports are.
    let store_arg = format!(" --store {}", shell_word(&outcome.store.to_string()));
    let mut buf = Vec::new();
    // A top whose task checked nothing is said apart, with the exit status.
    let tops: Vec<&str> = config
        .tasks
        .iter()
        .map(|t| t.top.as_str())
        .filter(|top| !nothing.iter().any(|n| n.top == *top))
        .collect();
    let listed = store
        .map_err(|e| anyhow::anyhow!("{e:#}"))
        .and_then(|store| {
            results::write_problems(&mut buf, store, report.run, &store_arg)?;
            results::write_broken_fragments(&mut buf, broken_fragments)?;
            results::write_unchecked(
                &mut buf,
                store,
                report.run,
                &tops,
                &store_arg,
                config.settings.max_body,
            )
        });
    match listed {
        Ok(()) => text.push_str(&String::from_utf8_lossy(&buf)),
        Err(e) => eprintln!("spinneret: cannot list the broken links: {e:#}"),
    }
    if !outcome.reports.is_empty() {
        text.push_str("\nreports:\n");
        for (task, dir, plugins) in &outcome.reports {
            let _ = writeln!(
                text,
                "  {task}: {}/ ({})",
                dir.display(),
                plugins.join(", ")
            );
        }
        text.push('\n');
    }
    let reused = match report.reused {
        0 => String::new(),
        n => format!(
            "; {n} results reused from earlier runs (younger than {}; --max-age 0 tests them again)",
            humantime::format_duration(config.settings.result_max_age)
        ),
    };
    let _ = writeln!(
        text,
        "run {}{}: {} in {:.1}s{reused}; store {}",
        report.run,
        if report.resumed { " (resumed)" } else { "" },
        results::count(report.requests as usize, "request", "requests"),
        report.elapsed.as_secs_f64(),
        outcome.store
    );
    if report.interrupted {
        match &config.source {
            Some(file) => {
                // The same store, and the same task when one was run alone.
                let task = match report.tasks.as_slice() {
                    [one] if config.tasks.len() > 1 => {
                        format!(" --task {}", shell_word(&one.name))
                    }
                    _ => String::new(),
                };
                let _ = writeln!(
                    text,
                    "interrupted: what was checked is stored; continue with `spinneret crawl --resume {}{task} --store {}`",
                    shell_word(&file.display().to_string()),
                    shell_word(&outcome.store.to_string())
                );
            }
            None => text.push_str(
                "interrupted: what was checked is stored; check again to finish (results younger than --max-age are reused)\n",
            ),
        }
    }
    text
}

/// A run in one line, for `-q`: its number, its tasks, the URLs a reader
/// cannot follow (each counted once, however many tasks reached it), the
/// `broken_fragments` links to a place their page lacks (when there are
/// any: they fail the run too), and where its store is.
fn one_line_summary(
    store: &spinneret_store::Store,
    outcome: &crate::app::run::RunOutcome,
    broken_fragments: usize,
) -> anyhow::Result<String> {
    let report = &outcome.crawl;
    let rows = store.run_results_in(report.run, &[Category::Broken, Category::Blocked])?;
    let broken = rows
        .iter()
        .filter(|r| r.category == Category::Broken)
        .count();
    Ok(format!(
        "run {}: {}, {}, {broken} broken, {} blocked{}{}; store {}",
        report.run,
        results::count(report.tasks.len(), "task", "tasks"),
        results::count(report.requests as usize, "request", "requests"),
        rows.len() - broken,
        match broken_fragments {
            0 => String::new(),
            n => format!(
                ", {}",
                results::count(n, "broken fragment", "broken fragments")
            ),
        },
        if report.interrupted {
            "; interrupted"
        } else {
            ""
        },
        outcome.store
    ))
}

/// `word` as a shell reads it back: as it is when it is plain, else in
/// single quotes.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:,@%=".contains(c));
    match plain {
        true => word.to_string(),
        false => format!("'{}'", word.replace('\'', "'\\''")),
    }
}

/// Default settings with the `From` address of `--from` (else EMAIL), for
/// the commands that read no configuration file.
fn settings_from(from: &Option<String>, resolve: &[String]) -> Result<config::Settings, String> {
    let mut holder = Config::for_check(&[], PathBuf::new());
    let overrides = Overrides::with_from(from.clone());
    overrides.apply(&mut holder)?;
    apply_resolve(&mut holder.settings, resolve)?;
    Ok(holder.settings)
}

/// Put `--resolve HOST=ADDRESS` entries into `settings`.
fn apply_resolve(settings: &mut config::Settings, resolve: &[String]) -> Result<(), String> {
    for r in resolve {
        let Some((host, addr)) = r.split_once('=') else {
            return Err("--resolve takes HOST=ADDRESS, e.g. www.example.org=127.0.0.1".into());
        };
        let ip = addr
            .parse()
            .map_err(|_| format!("--resolve: `{addr}` is not an IP address"))?;
        settings.resolve.insert(host.to_ascii_lowercase(), ip);
    }
    Ok(())
}
