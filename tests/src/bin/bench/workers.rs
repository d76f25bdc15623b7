//! `--workers 1,2,4`: the synthetic web crawled by that many `spinneret
//! worker` processes sharing one run through a PostgreSQL store (a new
//! database each time, on the server the benchmark starts), beside one
//! `spinneret crawl` into an SQLite file and one into PostgreSQL, in one
//! sitting. Prints each one's wall time, pages/s, the requests made and
//! how many URLs were requested more than once (none, when the run holds
//! its promise).

use super::Bench;
use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::time::Instant;

/// One crawl's figures: seconds, pages read, requests, URLs asked twice.
struct Figures {
    secs: f64,
    pages: usize,
    requests: usize,
    twice: usize,
}

fn figures(bench: &Bench, secs: f64) -> Figures {
    let requests = bench.web.requests();
    let mut per_url: HashMap<(String, String), usize> = HashMap::new();
    for r in &requests {
        *per_url.entry((r.host.clone(), r.path.clone())).or_default() += 1;
    }
    Figures {
        secs,
        pages: bench.pages_read(),
        requests: requests.len(),
        twice: per_url.values().filter(|n| **n > 1).count(),
    }
}

/// `counts` workers at a time against PostgreSQL, after one crawl into SQLite.
pub(crate) fn run(bench: &Bench, counts: &[usize]) -> anyhow::Result<()> {
    let pg = bench
        .postgres
        .ok_or_else(|| anyhow::anyhow!("--workers needs --postgres"))?;
    let mut rows = Vec::new();
    // One process into an SQLite file, as the baseline.
    {
        let dir = tempfile::tempdir()?;
        bench.web.clear_log();
        let (secs, _) = bench.crawl_in(dir.path(), &bench.config(&[], false), "warn")?;
        rows.push(("crawl, SQLite file".to_string(), figures(bench, secs)));
    }
    // One process into PostgreSQL.
    let crawl = bench.crawl(&[], false)?;
    rows.push(("crawl, PostgreSQL".to_string(), figures(bench, crawl.secs)));
    for &n in counts {
        let dir = tempfile::tempdir()?;
        let url = pg.database_url();
        let config = bench.config(&[], false).replacen(
            "store = \"bench.db\"",
            &format!("store = \"{url}\""),
            1,
        );
        let config_path = dir.path().join("bench.toml");
        std::fs::write(&config_path, config)?;
        bench.web.clear_log();
        let start = Instant::now();
        let children: Vec<_> = (0..n)
            .map(|i| {
                Command::new(&bench.binary)
                    .env("SPINNERET_LOG", "warn")
                    .args(["-qq", "worker"])
                    .arg(&config_path)
                    .args(["--name", &format!("w{i}")])
                    .current_dir(dir.path())
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
        let secs = start.elapsed().as_secs_f64();
        let label = format!("{n} worker{}, PostgreSQL", if n == 1 { "" } else { "s" });
        rows.push((label, figures(bench, secs)));
    }
    println!(
        "{:<24} {:>8} {:>8} {:>8} {:>9} {:>12}",
        "", "wall s", "pages", "pages/s", "requests", "URLs twice"
    );
    for (label, f) in rows {
        println!(
            "{label:<24} {:>8.2} {:>8} {:>8.0} {:>9} {:>12}",
            f.secs,
            f.pages,
            f.pages as f64 / f.secs,
            f.requests,
            f.twice
        );
    }
    println!(
        "cores: {} (the workers, the database server and the web share them)",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    Ok(())
}
