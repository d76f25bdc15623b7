//! The crawl benchmark: serves a synthetic web on loopback, crawls it with the
//! `spinneret` binary (politeness delays off, robots.txt on) and prints pages
//! per second and the crawler's peak resident memory; or, with `--overhead
//! N`, what the crawl plugins cost: N crawls without them and N with them,
//! interleaved, and the difference of the medians. `--mirror DEPTH`
//! compares `spinneret collect` with wget and HTTrack (`mirror.rs`);
//! `--worm URLS` measures the Worm's index and search (`worm.rs`).
//! `--import-memory GIB` measures `archive import`'s peak memory (`worm.rs`).
//! `--genvl` measures GENVL's library under load (`genvl.rs`).
//! `--postgres --workers 1,2,4` crawls with that many workers sharing a
//! run (`workers.rs`).
//!
//! ```text
//! cargo build --release
//! target/release/bench --pages 20000 --sites 20
//! target/release/bench --overhead 9
//! target/release/bench --worm 1000000
//! ```
#![allow(unsafe_code)]

use spinneret_tests::server::TestWeb;
use spinneret_tests::synthetic::Shape;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

mod dbload;
mod genvl;
mod mirror;
mod network;
mod workers;
mod worm;

/// The built-in plugins that run inside the crawl.
const CRAWL_PLUGINS: [&str; 3] = ["soft-404", "trap-guard", "sitemap"];

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn peak_rss_of_children_kib() -> i64 {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the struct we own.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    usage.ru_maxrss
}

/// What is crawled, and with what.
struct Bench {
    binary: PathBuf,
    shape: Shape,
    concurrency: u64,
    web: TestWeb,
    /// The web's edition ([`Shape::web_with_edition`]).
    edition: Arc<AtomicU64>,
    /// `--postgres`: each crawl's store is a new database on this server
    /// (the test suite's: fsync off), not an SQLite file.
    postgres: Option<&'static spinneret_store::testing::TestPg>,
    /// `--per-site-connections`: spinneret's `per_site_connections`
    /// (written into the configuration only when given).
    per_site: Option<u64>,
}

/// One crawl's figures.
struct Crawl {
    secs: f64,
    /// Synthetic pages fetched with GET.
    gets: usize,
    /// URLs with a result in the store.
    checked: usize,
    /// Requests the web saw.
    requests: usize,
    /// The crawler's timing lines: the report stage, each plugin call's cost.
    timings: Vec<String>,
}

impl Bench {
    /// The crawl's configuration, with `plugins` (built-ins, default
    /// settings) and, with `reports`, the report plugins.
    fn config(&self, plugins: &[&str], reports: bool) -> String {
        self.config_of(&self.shape.tasks_toml(self.web.port(), reports), plugins)
    }

    /// A crawl's configuration with these `tasks` and `plugins`.
    fn config_of(&self, tasks: &str, plugins: &[&str]) -> String {
        let hook_plugins: String = plugins
            .iter()
            .map(|p| format!("[[plugin]]\nname = \"{p}\"\nsource = \"builtin:{p}\"\n\n"))
            .collect();
        let per_site = self
            .per_site
            .map(|n| format!("per_site_connections = {n}\n"))
            .unwrap_or_default();
        format!(
            "user_agent = \"spinneret-bench/1.0\"\nper_site_delay = \"0s\"\nconcurrency = {}\n{per_site}store = \"bench.db\"\n\n{tasks}{hook_plugins}{}",
            self.concurrency,
            self.web.resolve_toml()
        )
    }

    /// `spinneret crawl` of `config` (written to `dir/bench.toml`, its store
    /// `dir/bench.db`), logging what `log` lets through: its wall time and
    /// standard error.
    fn crawl_in(
        &self,
        dir: &std::path::Path,
        config: &str,
        log: &str,
    ) -> anyhow::Result<(f64, String)> {
        let config_path = dir.join("bench.toml");
        std::fs::write(&config_path, config)?;
        let start = Instant::now();
        let output = Command::new(&self.binary)
            .env("SPINNERET_LOG", log)
            .arg("crawl")
            .arg(&config_path)
            .current_dir(dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .output()?;
        let secs = start.elapsed().as_secs_f64();
        let log = String::from_utf8_lossy(&output.stderr).into_owned();
        anyhow::ensure!(
            output.status.code().is_some_and(|c| c == 0 || c == 1),
            "the crawl failed: {}\n{log}",
            output.status
        );
        Ok((secs, log))
    }

    /// The synthetic pages read (GET) since the web's log was cleared.
    fn pages_read(&self) -> usize {
        self.web
            .requests()
            .iter()
            .filter(|r| r.method == "GET" && r.path.starts_with("/p/"))
            .count()
    }

    /// Crawl the web once, with a fresh store (nothing cached from an
    /// earlier crawl).
    fn crawl(&self, plugins: &[&str], reports: bool) -> anyhow::Result<Crawl> {
        let dir = tempfile::tempdir()?;
        self.web.clear_log();
        let (config, location) = match self.postgres {
            Some(pg) => {
                let url = pg.database_url();
                let config = self.config(plugins, reports).replacen(
                    "store = \"bench.db\"",
                    &format!("store = \"{url}\""),
                    1,
                );
                let location = spinneret_store::StoreLocation::postgres(&url, None)
                    .map_err(anyhow::Error::msg)?;
                (config, location)
            }
            None => (
                self.config(plugins, reports),
                spinneret_store::StoreLocation::File(dir.path().join("bench.db")),
            ),
        };
        // The crawler's log says how long the crawl and the report stage took
        // and what each plugin call cost; only those lines are kept (the app
        // layer times the stages and prints the plugins' call table).
        let (secs, log) = self.crawl_in(dir.path(), &config, "warn,spinneret::app=debug")?;
        let timings = log
            .lines()
            .filter_map(|l| {
                l.find("report stage: ")
                    .or_else(|| l.find("plugin "))
                    .filter(|_| l.contains(" DEBUG "))
                    .map(|i| l[i..].to_string())
            })
            .collect();
        let requests = self.web.requests();
        let gets = self.pages_read();
        let store = spinneret_store::Store::open_at(location)?;
        let run = store.last_run()?.expect("the crawl recorded a run");
        let checked = store.run_results(run.id, None)?.len();
        Ok(Crawl {
            secs,
            gets,
            checked,
            requests: requests.len(),
            timings,
        })
    }
}

/// Serve `shape`'s web on a loopback port, every answer after
/// `round_trip` (none when zero), and the edition its pages read at.
fn serve(shape: &Shape, round_trip: Duration) -> (TestWeb, Arc<AtomicU64>) {
    let port = Arc::new(OnceLock::new());
    let edition = Arc::new(AtomicU64::new(0));
    let web = TestWeb::start(
        shape
            .web_with_edition(port.clone(), edition.clone())
            .round_trip(round_trip),
    );
    let _ = port.set(web.port());
    (web, edition)
}

/// The median of `xs` (sorted here), with the least and the most.
fn spread(mut xs: Vec<f64>) -> (f64, f64, f64) {
    xs.sort_by(f64::total_cmp);
    (xs[xs.len() / 2], xs[0], xs[xs.len() - 1])
}

/// `--overhead N`: N bare crawls and N with `plugins` (and, with
/// `reports`, the report stage's default plugins), taking turns (so that a
/// machine busier for a while slows both alike), and what the plugins cost
/// in wall time.
fn overhead(bench: &Bench, runs: usize, plugins: &[&str], reports: bool) -> anyhow::Result<()> {
    let (mut without, mut with) = (Vec::new(), Vec::new());
    let mut last = None;
    for i in 0..runs {
        eprint!("\rrun {} of {runs} ...", i + 1);
        without.push(bench.crawl(&[], false)?.secs);
        let c = bench.crawl(plugins, reports)?;
        with.push(c.secs);
        last = Some(c);
    }
    eprintln!();
    let (base, base_min, base_max) = spread(without);
    let (plug, plug_min, plug_max) = spread(with);
    println!(
        "crawl plugins  {}",
        match plugins.is_empty() {
            true => "none".to_string(),
            false => plugins.join(", "),
        }
    );
    println!(
        "report stage   {}",
        match reports {
            true => "the default plugins (maintenance, momspider-index, json-report)",
            false => "none",
        }
    );
    println!("runs           {runs} each, taking turns");
    println!("without        median {base:.2} s (least {base_min:.2}, most {base_max:.2})");
    println!("with           median {plug:.2} s (least {plug_min:.2}, most {plug_max:.2})");
    println!(
        "overhead       {:+.1}% of the medians ({:+.1}% of the least; {:.2}x the bare crawl)",
        (plug / base - 1.0) * 100.0,
        (plug_min / base_min - 1.0) * 100.0,
        plug / base
    );
    if let Some(c) = last {
        println!("plugin calls of the last crawl with them:");
        for line in c.timings {
            println!("  {line}");
        }
    }
    Ok(())
}

/// A command run under `/usr/bin/time`.
struct Timed {
    /// Wall time.
    secs: f64,
    /// Peak RSS, in KiB.
    rss_kib: u64,
    /// Its standard error.
    stderr: String,
}

/// Run `cmd` under `/usr/bin/time`, in `dir`, with the web's log cleared;
/// an exit status above `max_code` is the error.
fn timed(
    bench: &Bench,
    dir: &std::path::Path,
    cmd: &mut Command,
    max_code: i32,
) -> anyhow::Result<Timed> {
    let rss_file = dir.join("rss.txt");
    let mut timed = Command::new("/usr/bin/time");
    timed.arg("-f").arg("%M").arg("-o").arg(&rss_file);
    timed.arg(cmd.get_program()).args(cmd.get_args());
    bench.web.clear_log();
    let start = Instant::now();
    let out = timed
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .output()?;
    let secs = start.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    anyhow::ensure!(
        out.status.code().is_some_and(|c| c <= max_code),
        "{:?} failed: {}\n{stderr}",
        cmd.get_program(),
        out.status,
    );
    let rss_kib = std::fs::read_to_string(&rss_file)?
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(0);
    Ok(Timed {
        secs,
        rss_kib,
        stderr,
    })
}

/// Whether `program` is on the PATH (HTTrack is not on every machine).
fn installed(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok()
}

/// What `bench --help` says.
fn print_help() {
    println!(
        "usage: bench [--pages N] [--sites S] [--leaves L] [--concurrency C] [--binary PATH] [--reports] [--plugins] [--plugin NAME] [--overhead RUNS] [--mirror DEPTH] [--worm URLS [--keep DIR]] [--import-memory GIB] [--genvl] [--serve] [--postgres [--workers N,N,...]] [--latency DUR] [--network] [--latency-check CONNS]\n\
              Serves a synthetic web of N pages over S sites on 127.0.0.1, crawls it with\n\
              the spinneret binary and prints pages/s and the crawler's peak RSS.\n\
              Defaults: --pages 20000 --sites 20, the spinneret binary beside this one.\n\
              --leaves L gives every page L more links to leaves of its own (a task of\n\
              N * L URLs: --pages 2000 --sites 1 --leaves 100 --reports is a 200,000-URL\n\
              task with the default reporters; --pages 1 --sites 1 --leaves 200000 is one\n\
              9 MB page of 200,000 links);\n\
              --reports also runs the default report plugins after the crawl (timed with it);\n\
              --plugins runs every built-in crawl plugin too (soft-404, trap-guard, sitemap)\n\
              and the report plugins; --plugin NAME (repeatable) runs only that crawl plugin;\n\
              the crawl and the report stage are printed apart, with each plugin call's cost;\n\
              --overhead RUNS crawls RUNS times without the crawl plugins and RUNS times with\n\
              them (all, or those named with --plugin), taking turns, and prints the medians\n\
              (with --reports and no --plugin: the bare crawl against the default run, its\n\
              report stage included)\n\
              and what the plugins cost (a busy machine varies by 10% and more from run to\n\
              run: 9 runs or more give a figure to trust);\n\
              --mirror DEPTH mirrors the web with `spinneret collect` (one item per site,\n\
              DEPTH links deep, no per-site interval) with `wget -r -p -k -E -e robots=on`\n\
              and with HTTrack when installed, for at most --httrack-limit SECS (default 600;\n\
              it is slow) (the same depth, across the web's hosts) and prints pages/s, disk and peak RSS\n\
              of each;\n\
              --worm URLS is the World Wide Web Worm's benchmark: the index build rate on\n\
              the synthetic web's store (full, and incremental after one site is crawled\n\
              again), then an archive of URLS URLs generated, imported, indexed (full and\n\
              incremental), searched through `spinneret serve` with a query set (words,\n\
              phrases, fields, boolean operators, regular expressions; median and 99th\n\
              percentile per class), the same queries as `grep -E` over the exported archive\n\
              (the Worm's own search, in its 1994 paper), and serve under `wrk -c64`;\n\
              --keep DIR keeps its files there;\n\
              --import-memory GIB is `archive import`'s peak RSS on a generated archive of\n\
              GIB GiB (its documents' lines together, then each document's in two halves),\n\
              on one document of 600,000 references and on /dev/zero (files removed after);\n\
              --genvl is GENVL's: a library of a VL of 10,000 pointers and a tree of 1,010 VLs\n\
              imported, the summary page's p50/p99, and `wrk -c100` over the tree's pages\n\
              while a client posts pointers;\n\
              --serve only serves the web (and keeps its config) until killed;\n\
              --postgres crawls into a PostgreSQL store (a new database for each crawl on a\n\
              server the benchmark starts as the test suite does: initdb and postgres, fsync\n\
              off) instead of an SQLite file, with the crawl and --overhead modes;\n\
              --postgres --workers 1,2,4 crawls the web with one `spinneret crawl` into an\n\
              SQLite file and one into PostgreSQL, then with 1, 2 and 4 `spinneret worker`\n\
              processes sharing a run\n\
              on PostgreSQL, and prints each one's wall time, pages/s, requests and URLs\n\
              requested more than once; with --latency, each worker has --concurrency C\n\
              connections (its own budget), each count runs beside one crawl of\n\
              concurrency workers x C, and the table adds req/s, speed-up and efficiency\n\
              against one worker and the share of min(conns, sites x per-site) / round trip\n\
              (e.g. --postgres --workers 1,2,4 --latency 25ms --sites 200 --concurrency 8);\n\
              --latency DUR (25ms, 0.025s) answers every request of the web after 2 x DUR,\n\
              as at DUR each way (robots.txt, pages, HEADs, redirects, 404s alike), in any mode;\n\
              --latency-check CONNS opens CONNS connections at once, each kept alive for 5\n\
              requests in turn, and prints how long the web took to answer against its round\n\
              trip and how long the connects took;\n\
              --network (default --latency 25ms, --pages 2000) runs on that web, side by side:\n\
              `spinneret crawl` (one site task per site), `spinneret collect` (one item per\n\
              site of a second web of --mirror-sites sites, default 10, --depth 10), wget -r -p\n\
              -k -E -H and HTTrack -c8 (stopped by its -E after --httrack-limit, 600 s) on\n\
              that web, lychee on the first web's page URLs, LinkChecker recursive and wget\n\
              --spider -r (stopped after --spider-limit SECS, default 300) on it; any tool\n\
              is stopped after --peer-limit SECS (default 1800). It prints each one's wall\n\
              time, requests answered, pages read, requests/s, its share of the limit (sites x\n\
              per-site connections / round trip) and its `own` share (of what its connections\n\
              in all could carry, where it caps them below that); a peer not installed is left\n\
              out, with how to install it. --check-connections CONNS (default 400) sizes its\n\
              first check of the web; --per-site-connections N writes per_site_connections\n\
              into the crawl's configuration and the collect profile (default: not written,\n\
              spinneret's 2)."
    );
}

/// `--network`: the crawl web served, a mirror web beside it, and every
/// tool run on them side by side (`network::run`).
fn network_mode(
    args: &[String],
    bench: &Bench,
    (pages, concurrency, per_site): (u64, u64, Option<u64>),
    latency: Duration,
) -> anyhow::Result<()> {
    let mirror_shape = Shape {
        pages,
        sites: arg(args, "--mirror-sites").map_or(Ok(10), |v| v.parse())?,
        leaves: 0,
    };
    let (web, edition) = serve(&mirror_shape, latency * 2);
    let mirror = Bench {
        binary: bench.binary.clone(),
        shape: mirror_shape,
        concurrency,
        web,
        edition,
        postgres: None,
        per_site,
    };
    let limit = |name: &str, default: u64| arg(args, name).map_or(Ok(default), |v| v.parse());
    let net = network::Network {
        latency,
        depth: arg(args, "--depth").map_or(Ok(10), |v| v.parse())?,
        httrack_limit: limit("--httrack-limit", 600)?,
        spider_limit: limit("--spider-limit", 300)?,
        peer_limit: limit("--peer-limit", 1800)?,
        check_connections: limit("--check-connections", 400)? as usize,
    };
    network::run(bench, &mirror, &net)
}

/// The modes on the crawl web that are not the crawl itself (`--genvl`,
/// `--import-memory`, `--worm`, `--workers`): whether one was asked for
/// (and ran).
fn other_mode(args: &[String], bench: &Bench, round_trip: Duration) -> anyhow::Result<bool> {
    if args.iter().any(|a| a == "--genvl") {
        genvl::run(bench)?;
    } else if let Some(gib) = arg(args, "--import-memory") {
        worm::import_memory(bench, gib.parse()?)?;
    } else if let Some(urls) = arg(args, "--worm") {
        worm::run(bench, urls.parse()?, arg(args, "--keep").map(PathBuf::from))?;
    } else if let Some(counts) = arg(args, "--workers") {
        let counts: Vec<usize> = counts
            .split(',')
            .map(|n| n.trim().parse())
            .collect::<Result<_, _>>()?;
        workers::run(bench, &counts, round_trip)?;
    } else {
        return Ok(false);
    }
    Ok(true)
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        print_help();
        return Ok(());
    }
    // --network: 2,000 pages unless told (a real network's round trips
    // make 20,000 a long sitting for the peers).
    let network = args.iter().any(|a| a == "--network");
    let default_pages = if network { 2_000 } else { 20_000 };
    let pages: u64 = arg(&args, "--pages").map_or(Ok(default_pages), |v| v.parse())?;
    let sites: u64 = arg(&args, "--sites").map_or(Ok(20), |v| v.parse())?;
    let concurrency: u64 = arg(&args, "--concurrency").map_or(Ok(64), |v| v.parse())?;
    let binary = match arg(&args, "--binary") {
        Some(b) => PathBuf::from(b),
        None => std::env::current_exe()?.with_file_name("spinneret"),
    };
    anyhow::ensure!(
        binary.exists(),
        "no spinneret binary at {}; run `cargo build --release` first or pass --binary",
        binary.display()
    );
    let leaves: u64 = arg(&args, "--leaves").map_or(Ok(0), |v| v.parse())?;
    let shape = Shape {
        pages,
        sites,
        leaves,
    };
    // --latency DUR: every answer of the web after 2 × DUR (DUR each way);
    // --network without it: 25 ms.
    let latency = match arg(&args, "--latency") {
        Some(v) => network::parse_duration(&v)?,
        None if network => Duration::from_millis(25),
        None => Duration::ZERO,
    };
    let per_site: Option<u64> = arg(&args, "--per-site-connections")
        .map(|v| v.parse())
        .transpose()?;
    let (web, edition) = serve(&shape, latency * 2);
    let postgres = match args.iter().any(|a| a == "--postgres") {
        true => Some(spinneret_store::testing::TestPg::shared().ok_or_else(|| {
            anyhow::anyhow!("--postgres needs PostgreSQL's server programs (initdb, postgres)")
        })?),
        false => None,
    };
    let bench = Bench {
        binary,
        shape,
        concurrency,
        web,
        edition,
        postgres,
        per_site,
    };

    // The built-ins that run inside the crawl, with their default settings:
    // all of them (--plugins) or those named (--plugin NAME, repeatable).
    let named: Vec<&str> = args
        .windows(2)
        .filter(|w| w[0] == "--plugin")
        .map(|w| w[1].as_str())
        .collect();
    let all = args.iter().any(|a| a == "--plugins");
    let plugins: Vec<&str> = match all {
        true => CRAWL_PLUGINS.to_vec(),
        false => named,
    };
    let reports = all || args.iter().any(|a| a == "--reports");

    if args.iter().any(|a| a == "--serve") {
        let keep = tempfile::tempdir()?.keep();
        std::fs::write(keep.join("bench.toml"), bench.config(&plugins, reports))?;
        eprintln!(
            "serving on port {}; config in {}",
            bench.web.port(),
            keep.join("bench.toml").display()
        );
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
    if let Some(connections) = arg(&args, "--latency-check") {
        return network::latency_check(&bench.web, connections.parse()?, latency * 2);
    }
    if network {
        return network_mode(&args, &bench, (pages, concurrency, per_site), latency);
    }
    eprintln!(
        "crawling {pages} pages over {sites} sites on 127.0.0.1:{}{} ...",
        bench.web.port(),
        match latency.is_zero() {
            true => String::new(),
            false => format!(", {} ms each way", latency.as_secs_f64() * 1e3),
        }
    );
    if let Some(depth) = arg(&args, "--mirror") {
        let limit = arg(&args, "--httrack-limit").map_or(Ok(600), |v| v.parse())?;
        return mirror::mirror(&bench, depth.parse()?, limit);
    }
    if other_mode(&args, &bench, latency * 2)? {
        return Ok(());
    }
    if let Some(runs) = arg(&args, "--overhead") {
        let runs: usize = runs.parse()?;
        anyhow::ensure!(runs > 0, "--overhead needs at least one run");
        // With --reports alone, what the default run costs over the bare
        // crawl: the report stage's plugins, no crawl plugin.
        let plugins = match plugins.is_empty() && !reports {
            true => CRAWL_PLUGINS.to_vec(),
            false => plugins,
        };
        return overhead(&bench, runs, &plugins, reports);
    }
    let c = bench.crawl(&plugins, reports)?;
    println!("pages          {} (of {pages})", c.gets);
    println!("URLs checked   {}", c.checked);
    println!("requests       {}", c.requests);
    println!("wall time      {:.2} s", c.secs);
    println!("pages/s        {:.0}", c.gets as f64 / c.secs);
    println!(
        "peak RSS       {:.1} MiB",
        peak_rss_of_children_kib() as f64 / 1024.0
    );
    for line in c.timings {
        println!("{line}");
    }
    Ok(())
}
