//! `--workers 1,2,4`: the synthetic web crawled by that many `spinneret
//! worker` processes sharing one run through a PostgreSQL store (a new
//! database each time, on the server the benchmark starts), beside one
//! `spinneret crawl` into an SQLite file and one into PostgreSQL, in one
//! sitting. Prints each one's wall time, pages/s, the requests made and
//! how many URLs were requested more than once (none, when the run holds
//! its promise).
//!
//! With `--latency DUR` the web answers after a round trip, as machines'
//! crawls are bound by on a real network, and each worker has the
//! configuration's `concurrency` (`--concurrency C`) as its own connection
//! budget, as a machine has by its bandwidth. The table then gives each
//! row's requests/s, its speed-up over one worker and its efficiency
//! (speed-up ÷ workers), and its share of what its connections could carry
//! (`min(workers × C, sites × per-site connections) ÷ round trip`); and for
//! each worker count, one `spinneret crawl` given the same connections in
//! all (`concurrency = workers × C`), so that what coordination costs is
//! seen beside what one process does with the same budget.

use super::{Bench, dbload};
use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// spinneret's default `per_site_connections`.
const PER_SITE_DEFAULT: u64 = 2;

/// One crawl's figures: seconds, pages read, requests, URLs asked twice,
/// and the connections it had in all.
struct Figures {
    secs: f64,
    pages: usize,
    requests: usize,
    twice: usize,
    connections: u64,
}

/// What a shared run asked of its database ([`dbload`]), in all.
struct DbLoad {
    workers: usize,
    urls: u64,
    sites: u64,
    secs: f64,
    transactions: u64,
    rows: u64,
    size: u64,
    wal: u64,
    round_trips: u64,
    bytes: u64,
    sessions: u64,
    cpu_secs: f64,
}

fn figures(bench: &Bench, secs: f64, connections: u64) -> Figures {
    let requests = bench.web.requests();
    let mut per_url: HashMap<(String, String, String), usize> = HashMap::new();
    for r in &requests {
        *per_url
            .entry((r.method.clone(), r.host.clone(), r.path.clone()))
            .or_default() += 1;
    }
    Figures {
        secs,
        pages: bench.pages_read(),
        requests: requests.len(),
        twice: per_url.values().filter(|n| **n > 1).count(),
        connections,
    }
}

/// The bench's configuration with its store in a new PostgreSQL database
/// and `concurrency` connections in all.
fn postgres_config(bench: &Bench, pg_url: &str, concurrency: u64) -> String {
    bench
        .config(&[], false)
        .replacen("store = \"bench.db\"", &format!("store = \"{pg_url}\""), 1)
        .replacen(
            &format!("concurrency = {}\n", bench.concurrency),
            &format!("concurrency = {concurrency}\n"),
            1,
        )
}

/// `n` workers (named w0…) on `config_path`, each its own process, until
/// the run is crawled: the wall time.
fn workers(
    bench: &Bench,
    dir: &std::path::Path,
    config_path: &std::path::Path,
    n: usize,
) -> anyhow::Result<f64> {
    let start = Instant::now();
    let children: Vec<_> = (0..n)
        .map(|i| {
            Command::new(&bench.binary)
                .env("SPINNERET_LOG", "warn")
                .args(["-qq", "worker"])
                .arg(config_path)
                .args(["--name", &format!("w{i}")])
                .current_dir(dir)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
        })
        .collect::<Result<_, _>>()?;
    for child in children {
        let out = child.wait_with_output()?;
        anyhow::ensure!(
            out.status.code().is_some_and(|c| c == 0 || c == 1),
            "a worker failed: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(start.elapsed().as_secs_f64())
}

/// `counts` workers at a time against PostgreSQL, after one crawl into
/// SQLite; with a `round_trip`, each worker count beside one crawl of the
/// same connections in all.
pub(crate) fn run(bench: &Bench, counts: &[usize], round_trip: Duration) -> anyhow::Result<()> {
    let pg = bench
        .postgres
        .ok_or_else(|| anyhow::anyhow!("--workers needs --postgres"))?;
    let budget = bench.concurrency;
    let mut rows = Vec::new();
    // One process into an SQLite file, as the baseline.
    {
        let dir = tempfile::tempdir()?;
        bench.web.clear_log();
        let (secs, _) = bench.crawl_in(dir.path(), &bench.config(&[], false), "warn")?;
        rows.push((
            "crawl, SQLite file".to_string(),
            figures(bench, secs, budget),
        ));
    }
    // One process into PostgreSQL.
    let crawl = bench.crawl(&[], false)?;
    rows.push((
        "crawl, PostgreSQL".to_string(),
        figures(bench, crawl.secs, budget),
    ));
    let mut loads = Vec::new();
    for &n in counts {
        let dir = tempfile::tempdir()?;
        let config_path = dir.path().join("bench.toml");
        // The workers reach the database through the counting proxy.
        let direct = pg.database_url();
        let port = direct
            .rsplit_once(':')
            .and_then(|(_, rest)| rest.split('/').next())
            .and_then(|p| p.parse::<u16>().ok())
            .ok_or_else(|| anyhow::anyhow!("no port in {direct}"))?;
        let proxy = dbload::CountingProxy::start(port)?;
        let proxied = direct.replacen(&format!(":{port}/"), &format!(":{}/", proxy.port), 1);
        std::fs::write(&config_path, postgres_config(bench, &proxied, budget))?;
        bench.web.clear_log();
        let cpu_before = dbload::server_cpu_secs(port);
        let wal_before = dbload::wal_bytes(&direct)?;
        let secs = workers(bench, dir.path(), &config_path, n)?;
        let cpu_secs = dbload::server_cpu_secs(port) - cpu_before;
        let (transactions, rows_written, size) = dbload::database_figures(&direct)?;
        let wal = dbload::wal_bytes(&direct)?.saturating_sub(wal_before);
        let t = &proxy.traffic;
        loads.push(DbLoad {
            workers: n,
            urls: dbload::results(&direct)?,
            sites: bench.shape.sites,
            secs,
            transactions,
            rows: rows_written,
            size,
            wal,
            round_trips: t.round_trips.load(std::sync::atomic::Ordering::Relaxed),
            bytes: t.to_server.load(std::sync::atomic::Ordering::Relaxed)
                + t.to_client.load(std::sync::atomic::Ordering::Relaxed),
            sessions: t.connections.load(std::sync::atomic::Ordering::Relaxed),
            cpu_secs,
        });
        let label = format!("{n} worker{} x {budget}", if n == 1 { "" } else { "s" });
        rows.push((label, figures(bench, secs, n as u64 * budget)));
        if !round_trip.is_zero() && n > 1 {
            // One process with the workers' connections in all.
            let dir = tempfile::tempdir()?;
            let all = n as u64 * budget;
            bench.web.clear_log();
            let (secs, _) = bench.crawl_in(
                dir.path(),
                &postgres_config(bench, &pg.database_url(), all),
                "warn",
            )?;
            rows.push((
                format!("crawl x {all}, PostgreSQL"),
                figures(bench, secs, all),
            ));
        }
    }
    print_table(bench, &rows, round_trip);
    print_load(&loads);
    Ok(())
}

/// The database's load per run, per URL with a result and per site.
fn print_load(loads: &[DbLoad]) {
    println!();
    println!(
        "{:<10} {:>8} {:>9} {:>8} {:>8} {:>9} {:>9} {:>10} {:>10} {:>9} {:>8} {:>10} {:>10}",
        "database",
        "URLs",
        "xact/URL",
        "rows/URL",
        "WAL/URL",
        "trips/URL",
        "bytes/URL",
        "xact/site",
        "trips/site",
        "size/URL",
        "sessions",
        "CPU ms/URL",
        "xact/s"
    );
    for l in loads {
        let per = |x: f64| x / l.urls.max(1) as f64;
        let site = |x: f64| x / l.sites.max(1) as f64;
        println!(
            "{:<10} {:>8} {:>9.2} {:>8.2} {:>8.0} {:>9.2} {:>9.0} {:>10.1} {:>10.1} {:>9.0} {:>8} {:>10.3} {:>10.0}",
            format!(
                "{} worker{}",
                l.workers,
                if l.workers == 1 { "" } else { "s" }
            ),
            l.urls,
            per(l.transactions as f64),
            per(l.rows as f64),
            per(l.wal as f64),
            per(l.round_trips as f64),
            per(l.bytes as f64),
            site(l.transactions as f64),
            site(l.round_trips as f64),
            per(l.size as f64),
            l.sessions,
            per(l.cpu_secs * 1e3),
            l.transactions as f64 / l.secs
        );
    }
    println!(
        "per URL with a result; per site (each a lease); WAL: bytes of write-ahead log; trips: the workers' round trips to the database (through a counting proxy); size: the store's tables and indexes at the end; CPU: the server's processes, backends included"
    );
}

/// The rows, with the speed-up columns when the web has a round trip.
fn print_table(bench: &Bench, rows: &[(String, Figures)], round_trip: Duration) {
    let rate = |f: &Figures| f.requests as f64 / f.secs;
    let one = rows
        .iter()
        .find(|(l, _)| l.starts_with("1 worker "))
        .map(|(_, f)| rate(f));
    let sites = bench.shape.sites;
    let per_site = bench.per_site.unwrap_or(PER_SITE_DEFAULT);
    println!(
        "{:<26} {:>8} {:>7} {:>9} {:>8} {:>7} {:>8} {:>10} {:>6} {:>11}",
        "",
        "wall s",
        "pages",
        "requests",
        "req/s",
        "conns",
        "speed-up",
        "efficiency",
        "share",
        "URLs twice"
    );
    for (label, f) in rows {
        let workers: Option<f64> = label
            .split_once(" worker")
            .and_then(|(n, _)| n.parse().ok());
        let speed_up = match (one, workers) {
            (Some(one), Some(_)) => format!("{:.2}", rate(f) / one),
            _ => "-".into(),
        };
        let efficiency = match (one, workers) {
            (Some(one), Some(n)) => format!("{:.2}", rate(f) / one / n),
            _ => "-".into(),
        };
        let share = match round_trip.is_zero() {
            true => "-".into(),
            false => {
                let limit = (f.connections.min(sites * per_site)) as f64 / round_trip.as_secs_f64();
                format!("{:.2}", rate(f) / limit)
            }
        };
        println!(
            "{label:<26} {:>8.2} {:>7} {:>9} {:>8.0} {:>7} {:>8} {:>10} {:>6} {:>11}",
            f.secs,
            f.pages,
            f.requests,
            rate(f),
            f.connections,
            speed_up,
            efficiency,
            share,
            f.twice
        );
    }
    if !round_trip.is_zero() {
        println!(
            "round trip {:.0} ms; {sites} sites x {per_site} per-site connections; share = req/s / (min(conns, sites x per-site) / round trip); speed-up and efficiency against 1 worker",
            round_trip.as_secs_f64() * 1e3
        );
    }
    println!(
        "cores: {} (the workers, the database server and the web share them)",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
}
