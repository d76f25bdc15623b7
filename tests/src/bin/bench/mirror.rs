//! `--mirror DEPTH`: `spinneret collect` against `wget -r -p -k -E` and
//! HTTrack on the same synthetic web: pages a second, disk and peak RSS.

use super::{Bench, installed, timed};
use spinneret_tests::synthetic::Shape;
use std::process::Command;

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

    /// `spinneret collect` of a profile written in `dir` (its mirror in
    /// `dir/mirror`): one `[[url]]` per site top, `depth` links deep, no
    /// per-site interval (as wget's default); `extra` is added to the
    /// profile's settings.
    pub(crate) fn collect_command(
        &self,
        dir: &std::path::Path,
        depth: u32,
        extra: &str,
    ) -> anyhow::Result<Command> {
        let port = self.web.port();
        let mut profile =
            format!("mirror = \"mirror\"\nmax_pages = 100000\nper_site_delay = \"0s\"\n{extra}\n");
        let mut cmd = Command::new(&self.binary);
        cmd.arg("collect").arg(dir.join("profile.toml"));
        for s in 0..self.shape.sites {
            let host = Shape::host(s);
            profile.push_str(&format!(
                "[[url]]\nurl = \"http://{host}:{port}/p/{s}.html\"\ndepth = {depth}\n\n"
            ));
            cmd.arg("--resolve").arg(format!("{host}=127.0.0.1"));
        }
        std::fs::write(dir.join("profile.toml"), profile)?;
        Ok(cmd)
    }

    /// Mirror the web with `spinneret collect` ([`Bench::collect_command`]).
    fn collect(&self, depth: u32) -> anyhow::Result<Mirrored> {
        let dir = tempfile::tempdir()?;
        let mut cmd = self.collect_command(dir.path(), depth, "")?;
        let t = timed(self, dir.path(), &mut cmd, 8)?;
        let (secs, rss) = (t.secs, t.rss_kib);
        let mirror = dir.path().join("mirror");
        let warc: u64 = disk_kib(&mirror.join("runs/0001.warc.gz"));
        Ok(self.mirrored(secs, rss, disk_kib(&mirror), warc))
    }

    /// `wget -r -p -k -E -e robots=on`, spanning the web's hosts (`-H -D
    /// bench`), `depth` levels, through the test web as its proxy (the
    /// hosts resolve nowhere else), into `mirror` below its working
    /// directory.
    pub(crate) fn wget_command(&self, depth: u32) -> Command {
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
        cmd
    }

    /// Mirror the web with `wget -r -p -k -E` ([`Bench::wget_command`]).
    fn wget(&self, depth: u32) -> anyhow::Result<Mirrored> {
        let dir = tempfile::tempdir()?;
        let mut cmd = self.wget_command(depth);
        let t = timed(self, dir.path(), &mut cmd, 8)?;
        let (secs, rss) = (t.secs, t.rss_kib);
        Ok(self.mirrored(secs, rss, disk_kib(&dir.path().join("mirror")), 0))
    }

    /// HTTrack: the same tops, `depth` links below them (HTTrack counts the
    /// tops as level 1), any of the web's hosts (`+*.bench:PORT/*`),
    /// robots.txt obeyed (`-s2`, its default), through the test web as its
    /// proxy, `connections` at a time (`-c`, its default 8) with no rate cap
    /// (`-%c0`), stopping after `limit` seconds (its `-E`), into `mirror`
    /// below its working directory.
    pub(crate) fn httrack_command(&self, depth: u32, limit: u64, connections: u32) -> Command {
        let port = self.web.port();
        let mut cmd = Command::new("httrack");
        for s in 0..self.shape.sites {
            cmd.arg(format!("http://{}:{port}/p/{s}.html", Shape::host(s)));
        }
        cmd.args(["-O", "mirror"])
            .arg(format!("-r{}", depth + 1))
            .args(["-s2", "-q", "-%c0"])
            .arg(format!("-c{connections}"))
            .arg("--disable-security-limits")
            .arg(format!("-E{limit}"))
            .arg("-P")
            .arg(format!("127.0.0.1:{port}"))
            .arg(format!("+*.bench:{port}/*"));
        cmd
    }

    /// Mirror the web with HTTrack ([`Bench::httrack_command`]). Its own
    /// limits (10 connections a second, 8 at a time) lifted as spinneret's
    /// per-site interval is, to 32 connections with no rate cap. HTTrack is
    /// slow here (about 30 files a second): it stops after `limit` seconds,
    /// and its rate is what it fetched in that time.
    fn httrack(&self, depth: u32, limit: u64) -> anyhow::Result<Mirrored> {
        let dir = tempfile::tempdir()?;
        let mut cmd = self.httrack_command(depth, limit, 32);
        let t = timed(self, dir.path(), &mut cmd, 8)?;
        let (secs, rss) = (t.secs, t.rss_kib);
        Ok(self.mirrored(secs, rss, disk_kib(&dir.path().join("mirror")), 0))
    }
}

/// `--mirror`: spinneret collect against wget and HTTrack on the same web,
/// each tool's row printed as soon as it is measured.
pub(crate) fn mirror(bench: &Bench, depth: u32, httrack_limit: u64) -> anyhow::Result<()> {
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
