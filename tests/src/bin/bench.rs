//! The crawl benchmark: serves a synthetic web on loopback, crawls it with the
//! `spinneret` binary (politeness delays off, robots.txt on) and prints pages
//! per second and the crawler's peak resident memory; or, with `--overhead
//! N`, what the crawl plugins cost: N crawls without them and N with them,
//! interleaved, and the difference of the medians.
//!
//! ```text
//! cargo build --release
//! target/release/bench --pages 20000 --sites 20
//! target/release/bench --overhead 9
//! ```
#![allow(unsafe_code)]

use spinneret_tests::server::TestWeb;
use spinneret_tests::synthetic::Shape;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

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
        let hook_plugins: String = plugins
            .iter()
            .map(|p| format!("[[plugin]]\nname = \"{p}\"\nsource = \"builtin:{p}\"\n\n"))
            .collect();
        format!(
            "user_agent = \"spinneret-bench/1.0\"\nper_site_delay = \"0s\"\nconcurrency = {}\nstore = \"bench.db\"\n\n{}{hook_plugins}{}",
            self.concurrency,
            self.shape.tasks_toml(self.web.port(), reports),
            self.web.resolve_toml()
        )
    }

    /// Crawl the web once, with a fresh store (nothing cached from an
    /// earlier crawl).
    fn crawl(&self, plugins: &[&str], reports: bool) -> anyhow::Result<Crawl> {
        let dir = tempfile::tempdir()?;
        let config_path = dir.path().join("bench.toml");
        std::fs::write(&config_path, self.config(plugins, reports))?;
        self.web.clear_log();
        let start = Instant::now();
        // The crawler's log says how long the crawl and the report stage took
        // and what each plugin call cost; only those lines are kept.
        let output = Command::new(&self.binary)
            // Only the lines it reads: the run's own debug notes (the app
            // layer times the stages and prints the plugins' call table).
            .env("SPINNERET_LOG", "warn,spinneret::app=debug")
            .arg("crawl")
            .arg(&config_path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .output()?;
        let secs = start.elapsed().as_secs_f64();
        let log = String::from_utf8_lossy(&output.stderr);
        anyhow::ensure!(
            output.status.code().is_some_and(|c| c == 0 || c == 1),
            "the crawl failed: {}\n{log}",
            output.status
        );
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
        let gets = requests
            .iter()
            .filter(|r| r.method == "GET" && r.path.starts_with("/p/"))
            .count();
        let store = spinneret_store::Store::open(&dir.path().join("bench.db"))?;
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

/// The median of `xs` (sorted here), with the least and the most.
fn spread(mut xs: Vec<f64>) -> (f64, f64, f64) {
    xs.sort_by(f64::total_cmp);
    (xs[xs.len() / 2], xs[0], xs[xs.len() - 1])
}

/// `--overhead N`: N crawls without the crawl plugins and N with `plugins`,
/// taking turns (so that a machine busier for a while slows both alike),
/// and what the plugins cost in wall time.
fn overhead(bench: &Bench, runs: usize, plugins: &[&str]) -> anyhow::Result<()> {
    let (mut without, mut with) = (Vec::new(), Vec::new());
    let mut last = None;
    for i in 0..runs {
        eprint!("\rrun {} of {runs} ...", i + 1);
        without.push(bench.crawl(&[], false)?.secs);
        let c = bench.crawl(plugins, false)?;
        with.push(c.secs);
        last = Some(c);
    }
    eprintln!();
    let (base, base_min, base_max) = spread(without);
    let (plug, plug_min, plug_max) = spread(with);
    println!("crawl plugins  {}", plugins.join(", "));
    println!("runs           {runs} each, taking turns");
    println!("without        median {base:.2} s (least {base_min:.2}, most {base_max:.2})");
    println!("with           median {plug:.2} s (least {plug_min:.2}, most {plug_max:.2})");
    println!(
        "overhead       {:+.1}% of the medians ({:+.1}% of the least)",
        (plug / base - 1.0) * 100.0,
        (plug_min / base_min - 1.0) * 100.0
    );
    if let Some(c) = last {
        println!("plugin calls of the last crawl with them:");
        for line in c.timings {
            println!("  {line}");
        }
    }
    Ok(())
}

/// One mirroring tool's run over the web: what it fetched and kept.
struct Mirrored {
    secs: f64,
    /// Synthetic pages fetched with GET (a page fetched twice counts twice).
    pages: usize,
    /// Distinct synthetic pages fetched.
    distinct: usize,
    /// Requests the web saw.
    requests: usize,
    /// Disk used by what it wrote, in KiB (`du -sk`: hard links once).
    disk_kib: u64,
    /// Disk used without the run's WARC file, in KiB.
    disk_no_warc_kib: u64,
    /// Its peak RSS, in KiB (`/usr/bin/time`).
    rss_kib: u64,
}

/// `du -sk` of `path`, minus `except` (a file in it) when given.
fn disk_kib(path: &std::path::Path) -> u64 {
    let out = Command::new("du").arg("-sk").arg(path).output();
    out.ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// Run `cmd` under `/usr/bin/time`, in `dir`; its wall time and peak RSS.
fn timed(bench: &Bench, dir: &std::path::Path, cmd: &mut Command) -> anyhow::Result<(f64, u64)> {
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
    anyhow::ensure!(
        out.status.code().is_some_and(|c| c <= 8),
        "{:?} failed: {}\n{}",
        cmd.get_program(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let rss = std::fs::read_to_string(&rss_file)?
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(0);
    Ok((secs, rss))
}

impl Bench {
    fn mirrored(&self, secs: f64, rss_kib: u64, disk_kib: u64, warc_kib: u64) -> Mirrored {
        let requests = self.web.requests();
        if std::env::var_os("BENCH_DEBUG").is_some() {
            let mut seen = std::collections::HashMap::new();
            for r in &requests {
                *seen
                    .entry((r.host.clone(), r.method.clone(), r.path.clone()))
                    .or_insert(0) += 1;
            }
            let mut dup: Vec<_> = seen.into_iter().filter(|(_, n)| *n > 1).collect();
            dup.sort();
            eprintln!(
                "{} repeated requests, e.g. {:?}",
                dup.len(),
                &dup[..dup.len().min(5)]
            );
        }
        Mirrored {
            secs,
            pages: requests
                .iter()
                .filter(|r| r.method == "GET" && r.path.starts_with("/p/"))
                .count(),
            distinct: requests
                .iter()
                .filter(|r| r.method == "GET" && r.path.starts_with("/p/"))
                .map(|r| (r.host.as_str(), r.path.as_str()))
                .collect::<std::collections::HashSet<_>>()
                .len(),
            requests: requests.len(),
            disk_kib,
            disk_no_warc_kib: disk_kib - warc_kib,
            rss_kib,
        }
    }

    /// Mirror the web with `spinneret collect`: one `[[url]]` per site top,
    /// `depth` links deep, no per-site interval (as wget's default).
    fn collect(&self, depth: u32) -> anyhow::Result<Mirrored> {
        let dir = tempfile::tempdir()?;
        let port = self.web.port();
        let mut profile =
            String::from("mirror = \"mirror\"\nmax_pages = 100000\nper_site_delay = \"0s\"\n\n");
        let mut cmd = Command::new(&self.binary);
        cmd.arg("collect").arg(dir.path().join("profile.toml"));
        for s in 0..self.shape.sites {
            let host = Shape::host(s);
            profile.push_str(&format!(
                "[[url]]\nurl = \"http://{host}:{port}/p/{s}.html\"\ndepth = {depth}\n\n"
            ));
            cmd.arg("--resolve").arg(format!("{host}=127.0.0.1"));
        }
        std::fs::write(dir.path().join("profile.toml"), profile)?;
        let (secs, rss) = timed(self, dir.path(), &mut cmd)?;
        let mirror = dir.path().join("mirror");
        let warc: u64 = disk_kib(&mirror.join("runs/0001.warc.gz"));
        Ok(self.mirrored(secs, rss, disk_kib(&mirror), warc))
    }

    /// Mirror the web with `wget -r -p -k -E -e robots=on`, spanning the
    /// web's hosts (`-H -D bench`), `depth` levels, through the test web as
    /// its proxy (the hosts resolve nowhere else).
    fn wget(&self, depth: u32) -> anyhow::Result<Mirrored> {
        let dir = tempfile::tempdir()?;
        let port = self.web.port();
        let mut cmd = Command::new("wget");
        cmd.args([
            "-r",
            "-p",
            "-k",
            "-E",
            "-e",
            "robots=on",
            "-H",
            "-D",
            "bench",
            "-nv",
        ])
        .arg(format!("-l{depth}"))
        .args(["-e", "use_proxy=on", "-e"])
        .arg(format!("http_proxy=http://127.0.0.1:{port}"))
        .arg("--directory-prefix=mirror");
        for s in 0..self.shape.sites {
            cmd.arg(format!("http://{}:{port}/p/{s}.html", Shape::host(s)));
        }
        let (secs, rss) = timed(self, dir.path(), &mut cmd)?;
        Ok(self.mirrored(secs, rss, disk_kib(&dir.path().join("mirror")), 0))
    }

    /// Mirror the web with HTTrack: the same tops, `depth` links below
    /// them (HTTrack counts the tops as level 1), any of the web's hosts
    /// (`+*.bench:PORT/*`), robots.txt obeyed (`-s2`, its default), through the
    /// test web as its proxy. Its own limits (10 connections a second,
    /// 8 at a time) lifted as spinneret's per-site interval is, to 32
    /// connections with no rate cap. HTTrack is slow here (about 30 files
    /// a second): it stops after `limit` seconds (its `-E`), and its rate
    /// is what it fetched in that time.
    fn httrack(&self, depth: u32, limit: u64) -> anyhow::Result<Mirrored> {
        let dir = tempfile::tempdir()?;
        let port = self.web.port();
        let mut cmd = Command::new("httrack");
        for s in 0..self.shape.sites {
            cmd.arg(format!("http://{}:{port}/p/{s}.html", Shape::host(s)));
        }
        cmd.args(["-O", "mirror"])
            .arg(format!("-r{}", depth + 1))
            .args(["-s2", "-q", "-%c0", "-c32", "--disable-security-limits"])
            .arg(format!("-E{limit}"))
            .arg("-P")
            .arg(format!("127.0.0.1:{port}"))
            .arg(format!("+*.bench:{port}/*"));
        let (secs, rss) = timed(self, dir.path(), &mut cmd)?;
        Ok(self.mirrored(secs, rss, disk_kib(&dir.path().join("mirror")), 0))
    }
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

/// `--mirror`: spinneret collect against wget and HTTrack on the same web,
/// each tool's row printed as soon as it is measured.
fn mirror(bench: &Bench, depth: u32, httrack_limit: u64) -> anyhow::Result<()> {
    println!(
        "mirroring {} pages over {} sites, {depth} levels",
        bench.shape.pages, bench.shape.sites
    );
    println!(
        "{:<22} {:>8} {:>8} {:>9} {:>9} {:>9} {:>12} {:>16} {:>10}",
        "tool",
        "distinct",
        "GET /p/",
        "requests",
        "wall s",
        "pages/s",
        "disk KiB",
        "disk w/o WARC",
        "RSS MiB"
    );
    let row = |name: &str, m: &Mirrored| {
        println!(
            "{:<22} {:>8} {:>8} {:>9} {:>9.2} {:>9.0} {:>12} {:>16} {:>10.1}",
            name,
            m.distinct,
            m.pages,
            m.requests,
            m.secs,
            m.distinct as f64 / m.secs,
            m.disk_kib,
            m.disk_no_warc_kib,
            m.rss_kib as f64 / 1024.0
        );
    };
    let ours = bench.collect(depth)?;
    row("spinneret collect", &ours);
    let wget = bench.wget(depth)?;
    row("wget -r -p -k -E", &wget);
    let httrack = match installed("httrack") {
        true => Some(bench.httrack(depth, httrack_limit)?),
        false => {
            eprintln!("httrack is not installed (apt-get install httrack): left out");
            None
        }
    };
    if let Some(h) = &httrack {
        row(&format!("httrack (-E{httrack_limit})"), h);
    }
    // Distinct pages a second: a tool that fetches a page twice is not
    // faster for it.
    let rate = |m: &Mirrored| m.distinct as f64 / m.secs;
    println!("rate: {:.1}x wget's", rate(&ours) / rate(&wget));
    if let Some(h) = &httrack {
        println!("rate: {:.1}x HTTrack's", rate(&ours) / rate(h));
    }
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!(
            "usage: bench [--pages N] [--sites S] [--leaves L] [--concurrency C] [--binary PATH] [--reports] [--plugins] [--plugin NAME] [--overhead RUNS] [--mirror DEPTH] [--serve]\n\
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
                  and what the plugins cost (a busy machine varies by 10% and more from run to\n\
                  run: 9 runs or more give a figure to trust);\n\
                  --mirror DEPTH mirrors the web with `spinneret collect` (one item per site,\n\
                  DEPTH links deep, no per-site interval) with `wget -r -p -k -E -e robots=on`\n\
                  and with HTTrack when installed, for at most --httrack-limit SECS (default 600;\n\
                  it is slow) (the same depth, across the web's hosts) and prints pages/s, disk and peak RSS\n\
                  of each;\n\
                  --serve only serves the web (and keeps its config) until killed."
        );
        return Ok(());
    }
    let pages: u64 = arg(&args, "--pages").map_or(Ok(20_000), |v| v.parse())?;
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
    let port = Arc::new(OnceLock::new());
    let web = TestWeb::start(shape.web(port.clone()));
    let _ = port.set(web.port());
    let bench = Bench {
        binary,
        shape,
        concurrency,
        web,
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
    eprintln!(
        "crawling {pages} pages over {sites} sites on 127.0.0.1:{} ...",
        bench.web.port()
    );
    if let Some(depth) = arg(&args, "--mirror") {
        let limit = arg(&args, "--httrack-limit").map_or(Ok(600), |v| v.parse())?;
        return mirror(&bench, depth.parse()?, limit);
    }
    if let Some(runs) = arg(&args, "--overhead") {
        let runs: usize = runs.parse()?;
        anyhow::ensure!(runs > 0, "--overhead needs at least one run");
        let plugins = match plugins.is_empty() {
            true => CRAWL_PLUGINS.to_vec(),
            false => plugins,
        };
        return overhead(&bench, runs, &plugins);
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
