//! `--worm URLS`: the World Wide Web Worm's benchmark (seed 001, part 2).
//!
//! 1. The index build rate on the synthetic web's store: the web crawled
//!    (one `site` task per site), `spinneret index --rebuild` (full), then
//!    one site crawled again, which updates the index with what it re-read
//!    (incremental).
//! 2. An archive of `URLS` URLs generated here (a tenth of them documents,
//!    each with 15 references and an inline image, titles and anchor texts
//!    drawn from a Zipf vocabulary, hosts under 14 top-level domains, file
//!    names under 10 extensions), imported into a fresh store and indexed,
//!    then five archives of a hundredth as many new documents each imported
//!    into it, each followed by an incremental update.
//! 3. A query set (words of three frequencies, phrases, fields, boolean
//!    operators, regular expressions) through `spinneret serve`'s
//!    `/api/search`, one at a time, every query several times: each class's
//!    median and 99th percentile (round trip on loopback, and the search
//!    alone as the server reports it).
//! 4. The same queries as the seed ran them: `grep -E` over the archive
//!    `spinneret archive export` writes (one run each; grep has no index
//!    to warm).
//! 5. `serve` under `wrk -c64` for the search page and the API.

use super::{Bench, timed};
use spinneret_tests::synthetic::Shape;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// References (`R` lines) per generated document.
const REFERENCES: u64 = 15;
/// Hosts in the generated archive.
const HOSTS: u64 = 20_000;
/// Words in the generated vocabulary.
const VOCABULARY: usize = 5_000;
/// How many times each query is asked.
const REPEATS: usize = 5;

/// Real words first (the most frequent), then made-up ones.
const WORDS: &[&str] = &[
    "home",
    "page",
    "the",
    "of",
    "and",
    "research",
    "university",
    "physics",
    "software",
    "library",
    "virtual",
    "information",
    "computer",
    "science",
    "department",
    "index",
    "project",
    "world",
    "network",
    "weather",
    "music",
    "movie",
    "mpeg",
    "images",
    "gallery",
    "news",
    "server",
    "group",
    "center",
    "institute",
    "national",
    "laboratory",
    "mathematics",
    "biology",
    "chemistry",
    "engineering",
    "astronomy",
    "archive",
    "papers",
    "reports",
    "faq",
    "guide",
    "tutorial",
    "welcome",
    "people",
    "staff",
    "students",
    "courses",
    "conference",
    "workshop",
    "journal",
    "abstracts",
    "preprints",
    "database",
    "catalog",
    "museum",
    "art",
    "history",
    "travel",
    "maps",
    "finland",
    "germany",
    "europe",
    "japan",
    "internet",
    "web",
    "worm",
    "mosaic",
    "gopher",
    "sounds",
    "pictures",
    "list",
    "links",
    "resources",
    "documents",
    "public",
    "local",
    "international",
    "society",
    "association",
    "company",
    "products",
    "services",
    "support",
    "manual",
    "release",
    "version",
    "beta",
    "demo",
    "tools",
    "unix",
    "linux",
    "windows",
    "games",
    "sports",
    "football",
    "recipes",
    "poetry",
    "literature",
    "books",
    "film",
    "video",
    "radio",
];

/// The syllables of the made-up words.
const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "ne", "ru", "ta", "vo", "si", "pe", "do", "fa", "gu", "zi", "ho", "be", "ri",
    "ma", "no", "te", "lu",
];

const TLDS: &[&str] = &[
    "com", "edu", "org", "net", "gov", "fi", "de", "uk", "fr", "jp", "ch", "nl", "se", "no",
];

/// Extensions of the URLs that are not documents, with their weights.
const EXTENSIONS: &[(&str, u64)] = &[
    ("html", 45),
    ("gif", 15),
    ("jpg", 8),
    ("ps", 8),
    ("txt", 7),
    ("mpg", 4),
    ("au", 3),
    ("gz", 4),
    ("tar", 3),
    ("tex", 3),
];

/// splitmix64: the generator's deterministic randomness.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x2545_f491_4f6c_dd1d)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The generated corpus: URLs by number (the first `documents` are
/// documents), words by Zipf rank.
struct Corpus {
    urls: u64,
    documents: u64,
    words: Vec<String>,
    /// The Zipf distribution's cumulative weights, by rank.
    cdf: Vec<f64>,
    /// A step coprime with `urls`: reference `g < urls` points at URL
    /// `g * step % urls`, so every URL is referenced at least once.
    step: u64,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

impl Corpus {
    fn new(urls: u64) -> Corpus {
        let mut words: Vec<String> = WORDS.iter().map(|w| w.to_string()).collect();
        let n = SYLLABLES.len();
        let mut k = 0usize;
        while words.len() < VOCABULARY {
            let w = format!(
                "{}{}{}",
                SYLLABLES[k % n],
                SYLLABLES[(k / n) % n],
                SYLLABLES[(k / (n * n)) % n]
            );
            words.push(w);
            k += 1;
        }
        let mut cdf = Vec::with_capacity(words.len());
        let mut sum = 0.0;
        for rank in 1..=words.len() {
            sum += 1.0 / rank as f64;
            cdf.push(sum);
        }
        let mut step = 7_919 * 104_729;
        while gcd(step, urls) != 1 {
            step += 1;
        }
        Corpus {
            urls,
            documents: (urls / 10).max(1),
            words,
            cdf,
            step,
        }
    }

    fn word(&self, rng: &mut Rng) -> &str {
        let x = rng.unit() * self.cdf[self.cdf.len() - 1];
        let rank = self.cdf.partition_point(|&c| c < x);
        &self.words[rank.min(self.words.len() - 1)]
    }

    fn words(&self, rng: &mut Rng, n: u64) -> String {
        let mut s = String::new();
        for i in 0..n {
            if i > 0 {
                s.push(' ');
            }
            s.push_str(self.word(rng));
        }
        s
    }

    /// URL number `k`.
    fn url(&self, k: u64) -> String {
        let mut rng = Rng::new(k ^ 0x5eed);
        let host = rng.below(HOSTS);
        let mut hrng = Rng::new(host);
        let tld = TLDS[hrng.below(TLDS.len() as u64) as usize];
        let name = &self.words[hrng.below(self.words.len() as u64) as usize];
        let ext = if k < self.documents {
            "html"
        } else {
            let total: u64 = EXTENSIONS.iter().map(|(_, w)| w).sum();
            let mut pick = rng.below(total);
            let mut ext = "html";
            for (e, w) in EXTENSIONS {
                if pick < *w {
                    ext = e;
                    break;
                }
                pick -= w;
            }
            ext
        };
        let dir = &self.words[rng.below(self.words.len() as u64) as usize];
        let file = &self.words[rng.below(self.words.len() as u64) as usize];
        format!("http://www.{name}{host}.{tld}/{dir}/{file}{k}.{ext}")
    }

    /// Document `d`'s lines in the Worm's format (Table 4).
    fn document(&self, d: u64, out: &mut String) {
        let mut rng = Rng::new(d);
        let url = self.url(d);
        // One document in twenty has no title.
        if rng.below(20) == 0 {
            let _ = writeln!(out, "T {url} Zero Length Title");
        } else {
            let n = 2 + rng.below(5);
            let _ = writeln!(out, "T {url} {}", self.words(&mut rng, n));
        }
        for j in 0..REFERENCES {
            let g = d * REFERENCES + j;
            let target = if g < self.urls {
                g.wrapping_mul(self.step) % self.urls
            } else {
                // Skewed: a few URLs are cited very often.
                let u = rng.unit();
                ((u * u * u) * self.urls as f64) as u64 % self.urls
            };
            let text = match rng.below(10) {
                0 => "here".to_string(),
                _ => {
                    let n = 1 + rng.below(3);
                    self.words(&mut rng, n)
                }
            };
            let _ = writeln!(out, "R {} {url} {text}", self.url(target));
        }
        let image = self.documents + rng.below(self.urls - self.documents.min(self.urls - 1));
        let _ = writeln!(out, "I {} {url} {}", self.url(image), self.word(&mut rng));
        let _ = writeln!(out, "C {url}");
    }

    /// Write the documents `from..to` to `path`.
    fn write(&self, path: &Path, from: u64, to: u64) -> anyhow::Result<()> {
        let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
        let mut buf = String::with_capacity(4096);
        for d in from..to {
            buf.clear();
            self.document(d, &mut buf);
            f.write_all(buf.as_bytes())?;
        }
        f.flush()?;
        Ok(())
    }

    /// The same lines as [`Corpus::write`], each document's in two halves
    /// far apart: every document's `T` line and first eight references,
    /// then every document's other lines.
    fn write_halves(&self, path: &Path, from: u64, to: u64) -> anyhow::Result<()> {
        let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
        let mut buf = String::with_capacity(4096);
        for half in 0..2 {
            for d in from..to {
                buf.clear();
                self.document(d, &mut buf);
                let cut = buf
                    .match_indices('\n')
                    .nth(8)
                    .map_or(buf.len(), |(i, _)| i + 1);
                let part = if half == 0 { &buf[..cut] } else { &buf[cut..] };
                f.write_all(part.as_bytes())?;
            }
        }
        f.flush()?;
        Ok(())
    }
}

/// One query: what spinneret is asked, and the seed's `grep -E` for it
/// (a shell pipeline over `$A`, the archive), when grep can say it.
struct Query {
    class: &'static str,
    q: String,
    grep: Option<String>,
}

/// The query set: words of three frequencies, phrases, fields, boolean
/// operators and regular expressions.
fn queries(c: &Corpus) -> Vec<Query> {
    let mut qs = Vec::new();
    let mut term = |class: &'static str, ranks: std::ops::Range<usize>, n: usize| {
        let step = ranks.len() / n;
        for i in 0..n {
            let w = &c.words[ranks.start + i * step];
            qs.push(Query {
                class,
                q: w.clone(),
                grep: Some(format!("grep -E -i -w -c '{w}' \"$A\"")),
            });
        }
    };
    term("word (frequent)", 5..25, 10);
    term("word (middling)", 100..600, 10);
    term("word (rare)", 2000..4990, 10);
    // Phrases: adjacent words of generated titles.
    let mut rng = Rng::new(42);
    for _ in 0..10 {
        let (a, b) = (c.word(&mut rng).to_string(), c.word(&mut rng).to_string());
        qs.push(Query {
            class: "phrase",
            grep: Some(format!("grep -E -i -w -c '{a} {b}' \"$A\"")),
            q: format!("\"{a} {b}\""),
        });
    }
    for (i, w) in ["physics", "library", "music", "kalo", "mine", "rutavo"]
        .iter()
        .enumerate()
    {
        let w = if c.words.iter().any(|x| x == w) {
            w.to_string()
        } else {
            c.words[200 + i].clone()
        };
        qs.push(Query {
            class: "field",
            q: format!("title:{w}"),
            grep: Some(format!("grep -E -i -c '^T [^ ]+ (.* )?{w}( |$)' \"$A\"")),
        });
        qs.push(Query {
            class: "field",
            q: format!("anchor:{w}"),
            grep: Some(format!(
                "grep -E -i -c '^[RI] [^ ]+ [^ ]+ (.* )?{w}( |$)' \"$A\""
            )),
        });
    }
    for (ext, tld) in [("mpg", "fi"), ("ps", "de"), ("gif", "jp"), ("au", "uk")] {
        qs.push(Query {
            class: "field",
            q: format!("ext:{ext} host:{tld}"),
            grep: Some(format!(
                "grep -E -c '^[RI] [a-z]+://[^/ ]*\\.{tld}(:[0-9]+)?/[^ ]*\\.{ext} ' \"$A\""
            )),
        });
    }
    for (a, b) in [
        ("physics", "university"),
        ("music", "video"),
        ("library", "virtual"),
        ("research", "papers"),
    ] {
        qs.push(Query {
            class: "boolean",
            q: format!("{a} AND {b}"),
            grep: Some(format!(
                "grep -E -i -w '{a}' \"$A\" | grep -E -i -w -c '{b}'"
            )),
        });
        qs.push(Query {
            class: "boolean",
            q: format!("{a} -{b}"),
            grep: Some(format!(
                "grep -E -i -w '{a}' \"$A\" | grep -E -i -w -v -c '{b}'"
            )),
        });
    }
    for (field, re, grep) in [
        ("url", "mp.?g", "'^[RI] [^ ]*mp.?g'"),
        ("title", "phys.*", "'^T [^ ]+ .*phys'"),
        ("anchor", "ka.*vo", "'^R [^ ]+ [^ ]+ (.* )?ka[a-z]*vo'"),
        (
            "host",
            "[a-z]*ne[0-9]*",
            "'^[RI] [a-z]+://[^/ ]*ne[0-9]*\\.'",
        ),
        ("title", "[a-z]+tion", "'^T [^ ]+ .*[a-z]+tion'"),
        ("url", "lo.*mi", "'^[RI] [^ ]*lo[a-z]*mi'"),
        ("anchor", "mus.c", "'^R [^ ]+ [^ ]+ (.* )?mus.c'"),
        ("title", ".*ru.*", "'^T [^ ]+ .*ru'"),
    ] {
        qs.push(Query {
            class: "regex",
            q: format!("{field}:/{re}/"),
            grep: Some(format!("grep -E -i -c {grep} \"$A\"")),
        });
    }
    qs
}

/// Run the `spinneret` binary with `args` (it must succeed); its wall
/// time and peak RSS.
fn spinneret(bench: &Bench, dir: &Path, args: &[&str]) -> anyhow::Result<(f64, u64)> {
    let mut cmd = Command::new(&bench.binary);
    cmd.args(args);
    let t = timed(bench, dir, &mut cmd, 0)?;
    Ok((t.secs, t.rss_kib))
}

/// `spinneret crawl CONFIG` in `dir`: its standard error (the index line
/// is in it).
fn crawl(bench: &Bench, dir: &Path, config: &str) -> anyhow::Result<String> {
    Ok(bench.crawl_in(dir, config, "warn,spinneret::app=info")?.1)
}

/// `index`'s or the crawl's line "… N entries from C of D documents in T":
/// (entries, changed documents, seconds).
fn index_line(log: &str) -> Option<(u64, u64, f64)> {
    let line = log.lines().rev().find(|l| l.contains(" entries from "))?;
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = |w: &str| words.iter().position(|x| *x == w);
    let entries = words[at("entries")? - 1].parse().ok()?;
    let changed = words[at("from")? + 1].parse().ok()?;
    let took = words.last()?;
    let secs = if let Some(ms) = took.strip_suffix("ms") {
        ms.parse::<f64>().ok()? / 1000.0
    } else if let Some(us) = took.strip_suffix("µs") {
        us.parse::<f64>().ok()? / 1e6
    } else {
        took.strip_suffix('s')?.parse().ok()?
    };
    Some((entries, changed, secs))
}

/// `spinneret index [--rebuild]` on `store`: (entries, changed documents,
/// seconds as it says, wall seconds, peak RSS KiB).
fn index(
    bench: &Bench,
    dir: &Path,
    store: &Path,
    rebuild: bool,
) -> anyhow::Result<(u64, u64, f64, f64, u64)> {
    let mut cmd = Command::new(&bench.binary);
    cmd.arg("index").arg("--store").arg(store);
    if rebuild {
        cmd.arg("--rebuild");
    }
    let t = timed(bench, dir, &mut cmd, 0)?;
    let (entries, changed, secs) =
        index_line(&t.stderr).ok_or_else(|| anyhow::anyhow!("no index line in: {}", t.stderr))?;
    Ok((entries, changed, secs, t.secs, t.rss_kib))
}

/// Part 1: the index build rate on the synthetic web's store. With
/// `keep`, the store and index stay in `keep/web`, with the index as the
/// full build left it in `bench.db.search-full` (put back beside a copy of
/// the store, `spinneret index` repeats the incremental update).
fn synthetic_web(bench: &Bench, keep: Option<&Path>) -> anyhow::Result<()> {
    let tmp = tempfile::tempdir()?;
    let dir = match keep {
        Some(k) => {
            let d = k.join("web");
            if d.exists() {
                std::fs::remove_dir_all(&d)?;
            }
            std::fs::create_dir_all(&d)?;
            d
        }
        None => tmp.path().to_path_buf(),
    };
    let port = bench.web.port();
    println!(
        "== the index of the synthetic web's store ({} pages, {} sites)",
        bench.shape.pages, bench.shape.sites
    );
    crawl(bench, &dir, &bench.config(&[], false))?;
    let store = dir.join("bench.db");
    let (entries, docs, secs, wall, rss) = index(bench, &dir, &store, true)?;
    println!(
        "full build     {docs} documents, {entries} entries in {secs:.2} s ({wall:.2} s with start-up): {:.0} documents/s, {:.0} entries/s, peak RSS {:.0} MiB",
        docs as f64 / secs,
        entries as f64 / secs,
        rss as f64 / 1024.0
    );
    if keep.is_some() {
        let full = dir.join("bench.db.search-full");
        let status = Command::new("cp")
            .arg("-r")
            .arg(dir.join("bench.db.search"))
            .arg(&full)
            .status()?;
        anyhow::ensure!(
            status.success(),
            "cannot copy the index to {}",
            full.display()
        );
    }
    // Site 0 crawled again, unchanged: its documents keep their change
    // numbers, so the index has nothing to do.
    let site0 = bench.config_of(&Shape::task_toml(0, port, false), &[]);
    let (reread, log) = crawl_counted(bench, &dir, &site0)?;
    match index_line(&log) {
        None => println!(
            "unchanged      {reread} documents re-read (site 0 crawled again, unchanged): the index is current, no update"
        ),
        Some((entries, docs, secs)) => println!(
            "unchanged      {reread} documents re-read (site 0 crawled again, unchanged): {entries} entries from {docs} documents in {secs:.3} s"
        ),
    }
    // Then with a tenth of its pages edited (their titles and an anchor
    // text): the crawl updates the index with what changed.
    bench
        .edition
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let (reread, log) = crawl_counted(bench, &dir, &site0)?;
    let (entries, docs, secs) =
        index_line(&log).ok_or_else(|| anyhow::anyhow!("the crawl did not update the index"))?;
    println!(
        "incremental    {reread} documents re-read (site 0 crawled again, a tenth edited), {docs} changed, {entries} entries in {secs:.3} s: {:.0} documents re-read/s, {:.0} changed documents/s",
        reread as f64 / secs,
        docs as f64 / secs
    );
    Ok(())
}

/// [`crawl`], and how many synthetic pages it read (GET).
fn crawl_counted(bench: &Bench, dir: &Path, config: &str) -> anyhow::Result<(usize, String)> {
    bench.web.clear_log();
    let log = crawl(bench, dir, config)?;
    Ok((bench.pages_read(), log))
}

/// The `p`th percentile of sorted `xs`.
pub(super) fn percentile(xs: &[f64], p: f64) -> f64 {
    let i = ((xs.len() as f64 * p / 100.0).ceil() as usize).clamp(1, xs.len()) - 1;
    xs[i]
}

/// A running `spinneret serve`, stopped when dropped.
pub(super) struct Served {
    child: std::process::Child,
    pub(super) base: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(super) fn serve(bench: &Bench, store: &Path) -> anyhow::Result<Served> {
    let mut child = Command::new(&bench.binary)
        .arg("serve")
        .arg("--store")
        .arg(store)
        .args(["--listen", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let stderr = child.stderr.take().expect("piped");
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stderr));
    let base = loop {
        let Some(line) = lines.next() else {
            anyhow::bail!("spinneret serve stopped before it served");
        };
        let line = line?;
        if let Some(rest) = line.split("serving ").nth(1) {
            break rest
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .trim_end_matches('/')
                .to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    Ok(Served { child, base })
}

/// The query set through the API (part 3): per class, the round trip's
/// and the search's median and 99th percentile, and the hits of each query.
fn latencies(served: &Served, qs: &[Query]) -> anyhow::Result<Vec<u64>> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    spinneret_core::tls::install_provider();
    let client = reqwest::Client::new();
    let mut round: Vec<(usize, f64, f64)> = Vec::new();
    let mut totals = vec![0u64; qs.len()];
    for _ in 0..REPEATS {
        for (i, q) in qs.iter().enumerate() {
            let url = format!(
                "{}/api/search?mode=urls&limit=10&q={}",
                served.base,
                url::form_urlencoded::byte_serialize(q.q.as_bytes()).collect::<String>()
            );
            let start = Instant::now();
            let body: serde_json::Value = rt.block_on(async {
                let r = client.get(&url).send().await?;
                anyhow::ensure!(r.status().is_success(), "{}: {}", q.q, r.text().await?);
                Ok(r.json().await?)
            })?;
            let ms = start.elapsed().as_secs_f64() * 1000.0;
            totals[i] = body["total"].as_u64().unwrap_or(0);
            round.push((i, ms, body["took_ms"].as_f64().unwrap_or(f64::NAN)));
        }
    }
    println!(
        "{:<18} {:>7} {:>11} {:>11} {:>11} {:>11}",
        "class", "queries", "p50 ms", "p99 ms", "search p50", "search p99"
    );
    let mut classes: Vec<&str> = qs.iter().map(|q| q.class).collect();
    classes.dedup();
    for class in classes {
        let mut rt_ms: Vec<f64> = Vec::new();
        let mut s_ms: Vec<f64> = Vec::new();
        for (i, ms, took) in &round {
            if qs[*i].class == class {
                rt_ms.push(*ms);
                s_ms.push(*took);
            }
        }
        rt_ms.sort_by(f64::total_cmp);
        s_ms.sort_by(f64::total_cmp);
        println!(
            "{:<18} {:>7} {:>11.2} {:>11.2} {:>11.2} {:>11.2}",
            class,
            rt_ms.len() / REPEATS,
            percentile(&rt_ms, 50.0),
            percentile(&rt_ms, 99.0),
            percentile(&s_ms, 50.0),
            percentile(&s_ms, 99.0)
        );
    }
    Ok(totals)
}

/// Part 4, the seed's way: each query's `grep -E` over the exported archive.
fn grep_baseline(archive: &Path, qs: &[Query], totals: &[u64]) -> anyhow::Result<()> {
    println!(
        "{:<18} {:<34} {:>10} {:>10} {:>10}",
        "class", "query", "hits", "grep hits", "grep ms"
    );
    let mut by_class: Vec<(&str, Vec<f64>)> = Vec::new();
    for (q, total) in qs.iter().zip(totals) {
        let Some(grep) = &q.grep else { continue };
        let start = Instant::now();
        let out = Command::new("sh")
            .arg("-c")
            .arg(grep)
            .env("A", archive)
            .env("LC_ALL", "C")
            .output()?;
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        let hits = String::from_utf8_lossy(&out.stdout).trim().to_string();
        println!(
            "{:<18} {:<34} {:>10} {:>10} {:>10.0}",
            q.class, q.q, total, hits, ms
        );
        match by_class.iter_mut().find(|(c, _)| *c == q.class) {
            Some((_, v)) => v.push(ms),
            None => by_class.push((q.class, vec![ms])),
        }
    }
    for (class, mut v) in by_class {
        v.sort_by(f64::total_cmp);
        println!(
            "grep -E, {class:<18} median {:>7.0} ms, slowest {:>7.0} ms",
            percentile(&v, 50.0),
            v[v.len() - 1]
        );
    }
    Ok(())
}

/// Part 5: `wrk -c64` against the search page and the API, with the query
/// set in turn.
fn load(served: &Served, qs: &[Query], dir: &Path, seconds: u64) -> anyhow::Result<()> {
    if !super::installed("wrk") {
        println!("wrk is not installed (apt-get install wrk): the load test is left out");
        return Ok(());
    }
    for (what, path) in [
        ("search page", "/?mode=urls&q="),
        ("API", "/api/search?mode=urls&q="),
    ] {
        let paths = qs.iter().map(|q| {
            let enc: String = url::form_urlencoded::byte_serialize(q.q.as_bytes()).collect();
            format!("{path}{enc}")
        });
        let script = dir.join("queries.lua");
        std::fs::write(&script, wrk_script(paths))?;
        println!(
            "wrk -t2 -c64 -d{seconds}s, {what}: {}",
            wrk(&served.base, &script, 64, seconds)?
        );
    }
    Ok(())
}

/// A wrk script that asks for `paths` in turn.
pub(super) fn wrk_script(paths: impl Iterator<Item = String>) -> String {
    let mut lua = String::from("local paths = {\n");
    for p in paths {
        let _ = writeln!(lua, "  \"{p}\",");
    }
    lua.push_str(
        "}\nlocal i = 0\nrequest = function()\n  i = i + 1\n  return wrk.format(\"GET\", paths[(i % #paths) + 1])\nend\n",
    );
    lua
}

/// `wrk -t2 -c CLIENTS -d SECONDS` with `script` against `base`: its
/// requests per second, totals, 99th percentile and errors, on one line.
pub(super) fn wrk(base: &str, script: &Path, clients: u32, seconds: u64) -> anyhow::Result<String> {
    let out = Command::new("wrk")
        .arg("-t2")
        .arg(format!("-c{clients}"))
        .arg(format!("-d{seconds}s"))
        .arg("--latency")
        .arg("-s")
        .arg(script)
        .arg(base)
        .output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let pick = |key: &str| {
        text.lines()
            .find(|l| l.contains(key))
            .map(|l| l.trim().to_string())
            .unwrap_or_default()
    };
    let errors: Vec<String> = text
        .lines()
        .filter(|l| l.contains("Socket errors") || l.contains("Non-2xx"))
        .map(|l| l.trim().to_string())
        .collect();
    Ok(format!(
        "{}; {}; 99% {}; {}",
        pick("Requests/sec:"),
        pick("requests in"),
        pick(" 99%").trim_start_matches("99%").trim(),
        if errors.is_empty() {
            "no errors".to_string()
        } else {
            errors.join("; ")
        }
    ))
}

/// `--import-memory GIB`: `archive import`'s peak memory (the child's
/// maximum RSS, as the other figures) on archives generated in a temporary
/// directory (removed after): one of at least `gib` GiB with each
/// document's lines together, the same lines with each document's in two
/// halves far apart (every document written in one batch and added to in
/// another), one document of 600,000 references in two halves around
/// 20,000 other documents; and `/dev/zero` (one endless line).
pub(crate) fn import_memory(bench: &Bench, gib: f64) -> anyhow::Result<()> {
    let tmp = tempfile::tempdir()?;
    let dir = tmp.path();
    let want = (gib * (1u64 << 30) as f64) as u64;
    // 1,000,000 URLs make about 186 MiB of archive.
    let urls = (want as f64 / (186.0 * 1048576.0) * 1_000_000.0 * 1.05) as u64;
    let corpus = Corpus::new(urls);
    let archive = dir.join("generated.wwww");
    let start = Instant::now();
    corpus.write(&archive, 0, corpus.documents)?;
    let size = std::fs::metadata(&archive)?.len();
    anyhow::ensure!(
        size >= want,
        "the archive is {size} bytes, fewer than {want}"
    );
    let size = format!("{:.2} GiB", size as f64 / (1u64 << 30) as f64);
    println!("== archive import's peak memory");
    println!(
        "generated      {size}: {} documents, {urls} URLs, in {:.0} s",
        corpus.documents,
        start.elapsed().as_secs_f64()
    );
    let store = dir.join("import.db");
    let clear = || -> anyhow::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.to_string_lossy().contains("import.db") {
                std::fs::remove_file(&path)?;
            }
        }
        Ok(())
    };
    let import = |what: &str, file: &Path, code: i32| -> anyhow::Result<String> {
        clear()?;
        let mut cmd = Command::new(&bench.binary);
        cmd.args(["archive", "import"])
            .arg(file)
            .arg("--store")
            .arg(&store);
        let t = timed(bench, dir, &mut cmd, code)?;
        println!(
            "import         {what}: {:.1} s, peak RSS {:.1} MiB; {}",
            t.secs,
            t.rss_kib as f64 / 1024.0,
            t.stderr.trim()
        );
        clear()?;
        Ok(t.stderr)
    };
    import(
        &format!("{size}, each document's lines together"),
        &archive,
        0,
    )?;
    std::fs::remove_file(&archive)?;
    let halves = dir.join("halves.wwww");
    corpus.write_halves(&halves, 0, corpus.documents)?;
    import(
        &format!("{size}, each document's lines in two halves"),
        &halves,
        0,
    )?;
    std::fs::remove_file(&halves)?;
    let big = dir.join("big.wwww");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&big)?);
        writeln!(f, "T http://big.example/ Big")?;
        for i in 0..600_000 {
            if i == 300_000 {
                for j in 0..20_000 {
                    writeln!(f, "T http://other.example/{j} Other")?;
                }
            }
            writeln!(f, "R http://to.example/{i} http://big.example/ x")?;
        }
        writeln!(f, "C http://big.example/")?;
        f.flush()?;
    }
    import("one document of 600,000 references in two halves", &big, 0)?;
    std::fs::remove_file(&big)?;
    let said = import("/dev/zero", Path::new("/dev/zero"), 2)?;
    anyhow::ensure!(
        said.contains("/dev/zero:1: the line is longer"),
        "/dev/zero was not refused at its first line: {said}"
    );
    Ok(())
}

/// `--worm URLS`: all of the above.
pub(crate) fn run(bench: &Bench, urls: u64, keep: Option<PathBuf>) -> anyhow::Result<()> {
    synthetic_web(bench, keep.as_deref())?;

    let tmp = tempfile::tempdir()?;
    let dir = keep.unwrap_or_else(|| tmp.path().to_path_buf());
    std::fs::create_dir_all(&dir)?;
    let corpus = Corpus::new(urls);
    println!(
        "\n== a generated archive: {} documents, {} URLs referenced",
        corpus.documents, corpus.urls
    );
    let archive = dir.join("generated.wwww");
    let start = Instant::now();
    corpus.write(&archive, 0, corpus.documents)?;
    println!(
        "generated      {} in {:.1} s ({:.0} MiB)",
        archive.display(),
        start.elapsed().as_secs_f64(),
        std::fs::metadata(&archive)?.len() as f64 / 1048576.0
    );
    let store = dir.join("worm.db");
    // A kept directory's store and index from an earlier run would leave
    // the import nothing new to add (and the updates nothing to do): each
    // run starts from none.
    for old in ["worm.db", "worm.db-wal", "worm.db-shm", "worm.db.search"] {
        let old = dir.join(old);
        if old.is_dir() {
            std::fs::remove_dir_all(&old)?;
        } else if old.exists() {
            std::fs::remove_file(&old)?;
        }
    }
    let store_arg = store.to_string_lossy().into_owned();
    let (secs, rss) = spinneret(
        bench,
        &dir,
        &[
            "archive",
            "import",
            &archive.to_string_lossy(),
            "--store",
            &store_arg,
        ],
    )?;
    println!(
        "import         {secs:.1} s ({:.0} documents/s), peak RSS {:.0} MiB",
        corpus.documents as f64 / secs,
        rss as f64 / 1024.0
    );
    let (entries, docs, secs, wall, rss) = index(bench, &dir, &store, true)?;
    println!(
        "full build     {docs} documents, {entries} entries in {secs:.1} s ({wall:.1} s with start-up): {:.0} documents/s, {:.0} entries/s, peak RSS {:.0} MiB",
        docs as f64 / secs,
        entries as f64 / secs,
        rss as f64 / 1024.0
    );
    // Five updates, each of a hundredth as many new documents citing what
    // is there: one at a time, the way crawls add to a store; tantivy's
    // merges of the small segments they leave fall to some of them.
    let more = (corpus.documents / 100).max(1);
    let mut done = corpus.documents;
    let (mut all_docs, mut all_secs) = (0u64, 0.0f64);
    for update in 1..=5 {
        let bigger = Corpus {
            documents: done + more,
            ..Corpus::new(urls)
        };
        let added = dir.join(format!("added-{update}.wwww"));
        bigger.write(&added, done, bigger.documents)?;
        done = bigger.documents;
        spinneret(
            bench,
            &dir,
            &[
                "archive",
                "import",
                &added.to_string_lossy(),
                "--store",
                &store_arg,
            ],
        )?;
        let (entries, docs, secs, _, rss) = index(bench, &dir, &store, false)?;
        all_docs += docs;
        all_secs += secs;
        println!(
            "incremental {update}  {docs} documents imported, {entries} entries in {secs:.2} s: {:.0} documents/s, {:.0} entries/s, peak RSS {:.0} MiB",
            docs as f64 / secs,
            entries as f64 / secs,
            rss as f64 / 1024.0
        );
    }
    println!(
        "incremental    {all_docs} documents in five updates, {all_secs:.2} s: {:.0} documents/s",
        all_docs as f64 / all_secs
    );

    let exported = dir.join("exported.wwww");
    let (secs, _) = spinneret(
        bench,
        &dir,
        &[
            "archive",
            "export",
            "--store",
            &store_arg,
            "-o",
            &exported.to_string_lossy(),
        ],
    )?;
    println!(
        "export         {:.1} s ({:.0} MiB)",
        secs,
        std::fs::metadata(&exported)?.len() as f64 / 1048576.0
    );

    let qs = queries(&corpus);
    let served = serve(bench, &store)?;
    println!(
        "\n== {} queries, each {REPEATS} times, through {}/api/search (every URL, 10 results)",
        qs.len(),
        served.base
    );
    let totals = latencies(&served, &qs)?;
    println!("\n== the Worm's own baseline (1994): grep -E over the exported archive, once each");
    grep_baseline(&exported, &qs, &totals)?;
    println!("\n== serve under load");
    load(&served, &qs, &dir, 10)?;
    Ok(())
}
