//! `--genvl`: GENVL's library under load (the GENVL issue's targets).
//!
//! A library of a VL with 10,000 pointers and a tree of 1,010 VLs (ten,
//! each with ten, each with nine, every leaf VL holding five pointers) is
//! imported into a new store and served by `spinneret serve`. Measured:
//!
//! 1. the import;
//! 2. the summary page's round trip, 200 times each, for the first and the
//!    last page (500 postings each) of the VL of 10,000 postings and for a
//!    VL of the tree (p50, p99; target p99 < 10 ms);
//! 3. `wrk -t2 -c100` over the tree's summary pages while a client posts
//!    pointers into one VL as fast as the server takes them (target at
//!    least 1,000 views/s, no errors), with the posts counted.

use super::Bench;
use super::worm::{percentile, serve, wrk, wrk_script};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// Pointers in the big VL.
const BIG: usize = 10_000;

/// The library file: root › "Big" (id 2, [`BIG`] pointers), root › "Tree"
/// (id 3 + BIG) with its 1,010 VLs; the ids of the tree's VLs.
fn library() -> (String, Vec<u64>) {
    let mut next_id = 1u64;
    let mut id = || {
        next_id += 1;
        next_id
    };
    let pointer = |seq: usize, label: &str| {
        format!(
            r#"{{"kind":"pointer","seq":{seq},"title":"Page {label}","url":"http://p{seq}.example/{label}.html","created_at":1,"updated_at":1}}"#
        )
    };
    let vl = |seq: usize, title: &str, postings: &[String]| {
        format!(
            r#"{{"kind":"vl","seq":{seq},"title":"{title}","created_at":1,"updated_at":1,"postings":[{}]}}"#,
            postings.join(",")
        )
    };
    id(); // Big
    let big: Vec<String> = (1..=BIG)
        .map(|i| {
            id();
            pointer(i, &format!("big-{i}"))
        })
        .collect();
    let big = vl(1, "Big", &big);
    let mut tree_ids = Vec::new();
    id(); // Tree
    let mut level1 = Vec::new();
    for a in 1..=10 {
        tree_ids.push(id());
        let mut level2 = Vec::new();
        for b in 1..=10 {
            tree_ids.push(id());
            let mut level3 = Vec::new();
            for c in 1..=9 {
                tree_ids.push(id());
                let leaves: Vec<String> = (1..=5)
                    .map(|d| {
                        id();
                        pointer(d, &format!("t{a}-{b}-{c}-{d}"))
                    })
                    .collect();
                level3.push(vl(c, &format!("Subject {a}.{b}.{c}"), &leaves));
            }
            level2.push(vl(b, &format!("Subject {a}.{b}"), &level3));
        }
        level1.push(vl(a, &format!("Subject {a}"), &level2));
    }
    let tree = vl(2, "Tree", &level1);
    let file = format!(
        r#"{{"format":"spinneret-library","version":1,"root":{{"kind":"vl","seq":0,"title":"Bench Library","created_at":1,"updated_at":1,"postings":[{big},{tree}]}}}}"#
    );
    (file, tree_ids)
}

/// Round trips of `GET path`, `n` times: sorted milliseconds.
fn round_trips(base: &str, path: &str, n: usize) -> anyhow::Result<Vec<f64>> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    spinneret_core::tls::install_provider();
    let client = reqwest::Client::new();
    let mut ms = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        rt.block_on(async {
            let r = client.get(format!("{base}{path}")).send().await?;
            anyhow::ensure!(r.status().is_success(), "{path}: {}", r.status());
            r.bytes().await?;
            Ok(())
        })?;
        ms.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    ms.sort_by(f64::total_cmp);
    Ok(ms)
}

/// Post pointers into VL `vl` until `stop`: (posts accepted, refused).
fn poster(base: String, vl: u64, stop: Arc<AtomicBool>, counts: Arc<(AtomicU64, AtomicU64)>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    rt.block_on(async move {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("a client");
        let Ok(r) = client
            .get(format!("{base}/library/{vl}/change"))
            .send()
            .await
        else {
            return;
        };
        let cookie = r
            .headers()
            .get(reqwest::header::SET_COOKIE)
            .and_then(|c| c.to_str().ok())
            .and_then(|c| c.split(';').next())
            .unwrap_or_default()
            .to_string();
        let page = r.text().await.unwrap_or_default();
        let Some(at) = page.find("name=\"csrf\" value=\"") else {
            return;
        };
        let token = page[at + 19..at + 19 + 64].to_string();
        let mut n = 0u64;
        while !stop.load(Ordering::Relaxed) {
            n += 1;
            let body: String = url::form_urlencoded::Serializer::new(String::new())
                .append_pair("csrf", &token)
                .append_pair("title", &format!("Posted under load {n}"))
                .append_pair("url", &format!("http://load.example/{n}.html"))
                .finish();
            let ok = client
                .post(format!("{base}/library/{vl}/point"))
                .header(reqwest::header::COOKIE, &cookie)
                .header(
                    reqwest::header::CONTENT_TYPE,
                    "application/x-www-form-urlencoded",
                )
                .body(body)
                .send()
                .await
                .is_ok_and(|r| r.status() == 303);
            let c = if ok { &counts.0 } else { &counts.1 };
            c.fetch_add(1, Ordering::Relaxed);
        }
    });
}

/// `--genvl`.
pub(crate) fn run(bench: &Bench) -> anyhow::Result<()> {
    let tmp = tempfile::tempdir()?;
    let store = tmp.path().join("genvl.db");
    let (file, tree) = library();
    let path = tmp.path().join("library.json");
    std::fs::write(&path, &file)?;
    let start = Instant::now();
    let out = Command::new(&bench.binary)
        .args(["library", "import"])
        .arg(&path)
        .arg("--store")
        .arg(&store)
        .output()?;
    anyhow::ensure!(
        out.status.success(),
        "import: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    println!(
        "import of {} bytes: {} in {:.2} s",
        file.len(),
        String::from_utf8_lossy(&out.stderr).trim(),
        start.elapsed().as_secs_f64()
    );
    let served = serve(bench, &store)?;
    // Warm: the first page of each kind.
    round_trips(&served.base, "/library/2", 3)?;
    let small = format!("/library/{}", tree[1]);
    for (what, path) in [
        ("VL of 10,000 postings, first 500", "/library/2"),
        ("VL of 10,000 postings, last 500", "/library/2?from=9500"),
        ("VL of the tree", small.as_str()),
    ] {
        let ms = round_trips(&served.base, path, 200)?;
        println!(
            "summary page, {what}: p50 {:.2} ms, p99 {:.2} ms (200 round trips)",
            percentile(&ms, 50.0),
            percentile(&ms, 99.0)
        );
    }
    if !super::installed("wrk") {
        println!("wrk is not installed (apt-get install wrk): the load test is left out");
        return Ok(());
    }
    let script = tmp.path().join("views.lua");
    std::fs::write(
        &script,
        wrk_script(tree.iter().map(|id| format!("/library/{id}"))),
    )?;
    let stop = Arc::new(AtomicBool::new(false));
    let counts = Arc::new((AtomicU64::new(0), AtomicU64::new(0)));
    let posting = {
        let (base, stop, counts) = (served.base.clone(), stop.clone(), counts.clone());
        let into = tree[2];
        std::thread::spawn(move || poster(base, into, stop, counts))
    };
    let seconds = 10;
    let load = wrk(&served.base, &script, 100, seconds)?;
    stop.store(true, Ordering::Relaxed);
    let _ = posting.join();
    println!(
        "wrk -t2 -c100 -d{seconds}s over {} summary pages while posting: {load}",
        tree.len()
    );
    println!(
        "posts meanwhile: {} accepted, {} refused or failed",
        counts.0.load(Ordering::Relaxed),
        counts.1.load(Ordering::Relaxed)
    );
    Ok(())
}
