//! The crawl benchmark: serves a synthetic web on loopback, crawls it with the
//! `spinneret` binary (politeness delays off, robots.txt on) and prints pages
//! per second and the crawler's peak resident memory.
//!
//! ```text
//! cargo build --release
//! target/release/bench --pages 20000 --sites 20
//! ```
#![allow(unsafe_code)]

use spinneret_tests::server::TestWeb;
use spinneret_tests::synthetic::Shape;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

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

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!(
            "usage: bench [--pages N] [--sites S] [--concurrency C] [--binary PATH] [--reports] [--plugins] [--plugin NAME] [--serve]\n\
                  Serves a synthetic web of N pages over S sites on 127.0.0.1, crawls it with\n\
                  the spinneret binary and prints pages/s and the crawler's peak RSS.\n\
                  Defaults: --pages 20000 --sites 20, the spinneret binary beside this one.\n\
                  --reports also runs the default report plugins after the crawl (timed with it);\n\
                  --plugins runs every built-in crawl plugin too (soft-404, trap-guard, sitemap)\n\
                  and the report plugins; --plugin NAME (repeatable) runs only that crawl plugin;\n\
                  the crawl and the report stage are printed apart, with each plugin call's cost;\n\
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
    let shape = Shape { pages, sites };
    let port = Arc::new(OnceLock::new());
    let web = TestWeb::start(shape.web(port.clone()));
    let _ = port.set(web.port());

    let dir = tempfile::tempdir()?;
    let serve_only = args.iter().any(|a| a == "--serve");
    // The built-ins that run inside the crawl, with their default settings:
    // all of them (--plugins) or those named (--plugin NAME, repeatable).
    let named: Vec<&str> = args
        .windows(2)
        .filter(|w| w[0] == "--plugin")
        .map(|w| w[1].as_str())
        .collect();
    let hooks: Vec<&str> = if args.iter().any(|a| a == "--plugins") {
        vec!["soft-404", "trap-guard", "sitemap"]
    } else {
        named
    };
    let reports = args.iter().any(|a| a == "--plugins" || a == "--reports");
    let hook_plugins: String = hooks
        .iter()
        .map(|p| format!("[[plugin]]\nname = \"{p}\"\nsource = \"builtin:{p}\"\n\n"))
        .collect();
    let config = format!(
        "user_agent = \"spinneret-bench/1.0\"\nper_site_delay = \"0s\"\nconcurrency = {concurrency}\nstore = \"bench.db\"\n\n{}{hook_plugins}{}",
        shape.tasks_toml(web.port(), reports),
        web.resolve_toml()
    );
    let config_path = dir.path().join("bench.toml");
    std::fs::write(&config_path, config)?;

    if serve_only {
        let keep = dir.keep();
        eprintln!(
            "serving on port {}; config in {}",
            web.port(),
            keep.join("bench.toml").display()
        );
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
    eprintln!(
        "crawling {pages} pages over {sites} sites on 127.0.0.1:{} ...",
        web.port()
    );
    let start = Instant::now();
    // The crawler's log says how long the crawl and the report stage took
    // and what each plugin call cost; only those lines are kept.
    let output = Command::new(&binary)
        // Only the lines it reads: the crawl's own debug notes.
        .env("SPINNERET_LOG", "warn,spinneret::cli=debug")
        .arg("crawl")
        .arg(&config_path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .output()?;
    let elapsed = start.elapsed();
    let status = output.status;
    let log = String::from_utf8_lossy(&output.stderr);
    let timings: Vec<&str> = log
        .lines()
        .filter_map(|l| {
            l.find("report stage: ")
                .or_else(|| l.find("plugin "))
                .filter(|_| l.contains(" DEBUG "))
                .map(|i| &l[i..])
        })
        .collect();
    let rss_kib = peak_rss_of_children_kib();
    anyhow::ensure!(
        status.code().is_some_and(|c| c == 0 || c == 1),
        "the crawl failed: {status}\n{log}"
    );
    let requests = web.requests();
    let gets = requests
        .iter()
        .filter(|r| r.method == "GET" && r.path.starts_with("/p/"))
        .count();
    let store = spinneret::store::Store::open(&dir.path().join("bench.db"))?;
    let run = store.last_run()?.expect("the crawl recorded a run");
    let results = store.run_results(run.id, None)?;
    let checked = results.len();
    let secs = elapsed.as_secs_f64();
    println!("pages          {gets} (of {pages})");
    println!("URLs checked   {checked}");
    println!("requests       {}", requests.len());
    println!("wall time      {secs:.2} s");
    println!("pages/s        {:.0}", gets as f64 / secs);
    println!("peak RSS       {:.1} MiB", rss_kib as f64 / 1024.0);
    for line in timings {
        println!("{line}");
    }
    Ok(())
}
