//! Workers sharing one run through PostgreSQL (`spinneret worker`),
//! against a real server the test suite starts, on the benchmark's
//! synthetic web: several sites whose pages link across sites (a leaf of
//! one task is a document of another), redirect across sites, and keep
//! a directory from robots. Each test compares with one `spinneret crawl`
//! of the same web into an SQLite file.

use crate::common::{command, expect_exit};
use spinneret_store::testing::TestPg;
use spinneret_store::{Store, StoreLocation};
use spinneret_tests::harness::Setup;
use spinneret_tests::server::TestWeb;
use spinneret_tests::synthetic::Shape;
use std::collections::{BTreeMap, HashMap};
use std::process::{Child, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

const SHAPE: Shape = Shape {
    pages: 180,
    sites: 6,
    leaves: 0,
};

/// What a run found of each URL: its category, status and redirect chain.
type Found = BTreeMap<String, (String, Option<u16>, Vec<(String, u16)>)>;

fn found(store: &Store, run: i64) -> Found {
    store
        .run_results(run, None)
        .unwrap()
        .into_iter()
        .map(|(r, _)| {
            let hops = r
                .redirects
                .iter()
                .map(|h| (h.url.clone(), h.status))
                .collect();
            (r.url, (r.category.as_str().to_string(), r.status, hops))
        })
        .collect()
}

/// Assert that two runs found the same, saying where they differ.
fn assert_same(shared: &Found, alone: &Found) {
    let mut differences = Vec::new();
    for (url, found) in shared {
        match alone.get(url) {
            None => differences.push(format!("only shared: {url} {found:?}")),
            Some(a) if a != found => {
                differences.push(format!("{url}: shared {found:?}, alone {a:?}"))
            }
            Some(_) => {}
        }
    }
    for (url, found) in alone {
        if !shared.contains_key(url) {
            differences.push(format!("only alone: {url} {found:?}"));
        }
    }
    assert!(
        differences.is_empty(),
        "{} differences of {} URLs:\n{}",
        differences.len(),
        alone.len(),
        differences[..differences.len().min(30)].join("\n")
    );
}

/// A synthetic web and its configuration (`settings` first).
fn web_and_setup(shape: Shape, delay: Duration, settings: &str) -> (TestWeb, Setup) {
    let port = Arc::new(OnceLock::new());
    let web = TestWeb::start(shape.slow_web(port.clone(), delay));
    let _ = port.set(web.port());
    let text = format!("{settings}\n{}", shape.tasks_toml(web.port(), false));
    let setup = Setup::new(&web, &text);
    (web, setup)
}

/// What one `spinneret crawl` into the SQLite file finds; the web's log is
/// cleared after.
fn one_crawl(web: &TestWeb, setup: &Setup) -> Found {
    let config = setup.config_path.to_str().unwrap();
    let out = command().args(["-qq", "crawl", config]).output().unwrap();
    expect_exit(&out, 1);
    let store = Store::open(&setup.path().join("store.db")).unwrap();
    let run = store.last_run().unwrap().unwrap().id;
    web.clear_log();
    found(&store, run)
}

fn worker(setup: &Setup, url: &str, name: &str, extra: &[&str]) -> Child {
    worker_saying(setup, url, name, "-q", extra)
}

/// A worker whose log says `level` (`-q`: errors only; `-v`: more).
fn worker_saying(setup: &Setup, url: &str, name: &str, level: &str, extra: &[&str]) -> Child {
    command()
        .args([
            level,
            "worker",
            setup.config_path.to_str().unwrap(),
            "--store",
            url,
        ])
        .args(["--name", name])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Wait for a worker; its exit status and what it printed.
fn finish(child: Child) -> (Option<i32>, String, String) {
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Requests per host and path.
fn requests_per_url(web: &TestWeb) -> HashMap<(String, String), usize> {
    let mut counts = HashMap::new();
    for r in web.requests() {
        *counts.entry((r.host, r.path)).or_insert(0) += 1;
    }
    counts
}

fn open(url: &str) -> Store {
    Store::open_at(StoreLocation::postgres(url, None).unwrap()).unwrap()
}

#[test]
fn three_workers_find_what_one_crawl_finds_and_request_each_url_once() {
    let Some(pg) = TestPg::shared() else {
        return;
    };
    let (web, setup) = web_and_setup(SHAPE, Duration::ZERO, "per_site_connections = 2");
    let alone = one_crawl(&web, &setup);
    let url = pg.database_url();
    let workers: Vec<Child> = (1..=3)
        .map(|i| worker(&setup, &url, &format!("w{i}"), &[]))
        .collect();
    let ends: Vec<_> = workers.into_iter().map(finish).collect();
    // The worker that finished the run speaks for it (something is
    // broken: exit status 1); the others say their share and exit 0.
    assert!(alone.len() > 300, "{}", alone.len());
    one_finisher(&ends, &url, &alone);
    // Each URL requested once (robots.txt too), whichever worker held it.
    let counts = requests_per_url(&web);
    let twice: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "requested more than once: {twice:?}");
    // No site ever had more connections than its limit, over all workers.
    for s in 0..SHAPE.sites {
        let host = Shape::host(s);
        assert!(
            web.most_in_flight(&host) <= 2,
            "{host}: {}",
            web.most_in_flight(&host)
        );
    }
}

#[test]
fn a_worker_killed_mid_run_loses_nothing_and_its_sites_are_taken_over() {
    let Some(pg) = TestPg::shared() else {
        return;
    };
    // Each page takes 150 ms: the run lasts long enough to kill a worker in it.
    let (web, setup) = web_and_setup(
        SHAPE,
        Duration::from_millis(150),
        "per_site_connections = 2",
    );
    let alone = one_crawl(&web, &setup);
    let url = pg.database_url();
    // Each worker says who it is in its From header, so that the web's
    // log tells their requests apart.
    let doomed = worker(
        &setup,
        &url,
        "doomed",
        &["--lease", "2s", "--from", "doomed@example.org"],
    );
    let survivor = worker(&setup, &url, "survivor", &["--lease", "2s"]);
    // Kill the first once it is well under way.
    let started = Instant::now();
    let from_doomed =
        |r: &spinneret_tests::server::Logged| r.header("from") == Some("doomed@example.org");
    while web.requests().iter().filter(|r| from_doomed(r)).count() < 150 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the worker to kill made no progress"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut doomed = doomed;
    doomed.kill().unwrap();
    let killed_at = Instant::now();
    let _ = doomed.wait();
    let before = web.requests();
    let (code, out, err) = finish(survivor);
    assert_eq!(code, Some(1), "{out}\n{err}");
    assert!(out.contains("it finished the run"), "{out}\n{err}");
    let store = open(&url);
    let run = store.last_run().unwrap().unwrap();
    assert_eq!(run.status, "finished");
    assert_same(&found(&store, run.id), &alone);
    // Made again: only what the killed worker had not stored, which is no
    // more than what it requested in the second before it died (its
    // writer commits a batch every half second, and it meets the run every
    // tenth of a second).
    let by_doomed = |r: &&spinneret_tests::server::Logged| from_doomed(r);
    let doomed_made = before.iter().filter(by_doomed).count();
    // Both had their share before the kill.
    assert!(
        before.iter().any(|r| !from_doomed(r)),
        "the survivor made no request before the kill"
    );
    let counts = requests_per_url(&web);
    let again: usize = counts.values().map(|n| n - 1).sum();
    let last_second = before
        .iter()
        .filter(by_doomed)
        .filter(|r| killed_at.duration_since(r.at) < Duration::from_secs(1))
        .count();
    let robots_again = counts
        .iter()
        .filter(|((_, path), n)| path == "/robots.txt" && **n > 1)
        .count();
    eprintln!(
        "killed worker: {again} requests made again ({robots_again} of them robots.txt); it made {doomed_made} requests, {last_second} of them in the second before the kill; {} requests in all",
        web.requests().len()
    );
    assert!(
        again < doomed_made,
        "nothing the killed worker stored was kept"
    );
    // The robots.txt the killed worker stored is read from the store.
    assert_eq!(robots_again, 0, "robots.txt requested again");
    assert!(
        again <= last_second,
        "{again} made again; the killed worker made {last_second} in its last second"
    );
}

#[test]
fn two_configurations_share_one_database_without_mixing() {
    let Some(pg) = TestPg::shared() else {
        return;
    };
    let small = Shape {
        pages: 60,
        sites: 3,
        leaves: 0,
    };
    let (web_a, setup_a) = web_and_setup(small, Duration::ZERO, "");
    let (web_b, setup_b) = web_and_setup(small, Duration::ZERO, "");
    let alone_a = one_crawl(&web_a, &setup_a);
    let alone_b = one_crawl(&web_b, &setup_b);
    let url = pg.database_url();
    let workers = vec![
        worker(&setup_a, &url, "a1", &[]),
        worker(&setup_b, &url, "b1", &[]),
        worker(&setup_a, &url, "a2", &[]),
        worker(&setup_b, &url, "b2", &[]),
    ];
    let ends: Vec<_> = workers.into_iter().map(finish).collect();
    assert_eq!(
        ends.iter()
            .filter(|(_, out, _)| out.contains("it finished the run"))
            .count(),
        2,
        "{ends:#?}"
    );
    // Each run holds its own web's URLs (each web on its own port), and
    // all of them.
    let store = open(&url);
    let last = store.last_run().unwrap().unwrap().id;
    assert_eq!(last, 2);
    let mut runs: Vec<Found> = (1..=last).map(|run| found(&store, run)).collect();
    let port_of = |found: &Found| {
        let first = found.keys().next().expect("a result");
        url::Url::parse(first).unwrap().port().unwrap()
    };
    runs.sort_by_key(|f| port_of(f) != web_a.port());
    for (run, (web, alone)) in runs.iter().zip([(&web_a, &alone_a), (&web_b, &alone_b)]) {
        assert!(run.keys().all(|u| u.contains(&format!(":{}/", web.port()))));
        assert_same(run, alone);
    }
}

#[test]
fn a_worker_needs_a_store_on_a_database_server() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("c.toml");
    std::fs::write(
        &config,
        "store = \"store.db\"\n[[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example/\"\n",
    )
    .unwrap();
    let out = command()
        .args(["worker", config.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = expect_exit(&out, 2);
    assert!(
        stderr.contains("workers share a run through a PostgreSQL store"),
        "{stderr}"
    );
    assert!(stderr.contains("spinneret crawl"), "{stderr}");
}

/// Three workers on a server of the test's own; `fault` is done to the
/// database once the web has answered `after` requests. Each worker's
/// requests say its name in their From header. Checks what every fault
/// must leave: the run finished once, by one worker; what it found is what
/// one crawl finds; each URL requested once; every worker made requests.
/// Returns what the workers said on stderr.
fn three_workers_ride_out(lease: &str, after: usize, fault: impl FnOnce(&mut TestPg)) -> String {
    let Some(mut pg) = TestPg::own() else {
        return String::new();
    };
    let (web, setup) = web_and_setup(
        SHAPE,
        Duration::from_millis(150),
        "per_site_connections = 2",
    );
    let alone = one_crawl(&web, &setup);
    let url = pg.database_url();
    let names = ["w1", "w2", "w3"];
    let workers: Vec<Child> = names
        .iter()
        .map(|name| {
            let from = format!("{name}@example.org");
            worker_saying(
                &setup,
                &url,
                name,
                "-v",
                &["--lease", lease, "--from", &from],
            )
        })
        .collect();
    // The fault comes when the crawl is well under way, whatever the
    // machine's pace.
    let started = Instant::now();
    // (The log, not `served`, which counts the crawl alone too.)
    while web.requests().len() < after {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the workers made {} requests",
            web.requests().len()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let before_fault = web.requests().len();
    fault(&mut pg);
    let ends: Vec<_> = workers.into_iter().map(finish).collect();
    one_finisher(&ends, &url, &alone);
    // Nothing checked was lost, so nothing was requested again.
    let counts = requests_per_url(&web);
    let twice: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "requested more than once: {twice:?}");
    // The sites stayed spread over the workers: each that had sites
    // before the fault made requests after it. (Not that all three had
    // sites before it: one that joins after the others shared the sites
    // out is handed some back within a second or two; see docs/scale.md.)
    let requests = web.requests();
    let (before, after) = requests.split_at(before_fault);
    let by = |rs: &[spinneret_tests::server::Logged], name: &str| {
        let from = format!("{name}@example.org");
        rs.iter()
            .filter(|r| r.header("from") == Some(from.as_str()))
            .count()
    };
    let mut working = 0;
    for name in names {
        if by(before, name) > 0 {
            working += 1;
            assert!(
                by(after, name) > 0,
                "{name} made no request after the fault: {ends:#?}"
            );
        }
    }
    assert!(working >= 2, "the sites were not shared: {ends:#?}");
    ends.iter()
        .map(|(_, _, err)| err.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn workers_ride_out_a_restart_of_the_database() {
    // Stopped as `pg_ctl restart` stops it (a fast shutdown, every session
    // ended), and started again a few seconds later: within the lease.
    let said = three_workers_ride_out("15s", 150, |pg| {
        pg.stop();
        std::thread::sleep(Duration::from_secs(3));
        pg.start_again();
    });
    if said.is_empty() {
        return;
    }
    assert!(said.contains("the database is unreachable"), "{said}");
    assert!(said.contains("waiting up to 5 min"), "{said}");
    assert!(said.contains("the database answers again"), "{said}");
}

#[test]
fn workers_ride_out_the_database_away_for_longer_than_a_lease() {
    // Every lease runs out while the database is away: the first worker
    // back starts them all again, so none is taken for dead and no site
    // changes hands.
    let said = three_workers_ride_out("2s", 150, |pg| {
        pg.stop();
        std::thread::sleep(Duration::from_secs(6));
        pg.start_again();
    });
    if said.is_empty() {
        return;
    }
    assert!(said.contains("the database answers again"), "{said}");
    assert!(said.contains("every lease starts again"), "{said}");
    assert!(!said.contains("took over the site"), "{said}");
}

/// Requests whose From header names `name` (each worker of these tests
/// says `NAME@example.org`).
fn from(name: &str) -> impl Fn(&spinneret_tests::server::Logged) -> bool + '_ {
    move |r| {
        r.header("from")
            .is_some_and(|f| f.strip_suffix("@example.org") == Some(name))
    }
}

/// Wait until `done` says the web's log is as wanted (at most a minute).
fn wait_for(web: &TestWeb, what: &str, done: impl Fn(&[spinneret_tests::server::Logged]) -> bool) {
    let started = Instant::now();
    while !done(&web.requests()) {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "waited a minute for {what}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Each URL requested at most once: the URLs requested more often.
fn requested_twice(web: &TestWeb) -> Vec<((String, String), usize)> {
    let mut twice: Vec<_> = requests_per_url(web)
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .collect();
    twice.sort();
    twice
}

/// The ends of some workers: exactly one finished the run (exit status 1:
/// something is broken), none failed; the run is finished and found what
/// one crawl finds.
fn one_finisher(ends: &[(Option<i32>, String, String)], url: &str, alone: &Found) {
    let finishers: Vec<_> = ends
        .iter()
        .filter(|(_, out, _)| out.contains("it finished the run"))
        .collect();
    assert_eq!(finishers.len(), 1, "{ends:#?}");
    assert_eq!(finishers[0].0, Some(1), "{ends:#?}");
    for (code, out, err) in ends {
        assert!(matches!(code, Some(0 | 1)), "{out}\n{err}");
        assert!(!err.contains("ERROR"), "{err}");
    }
    let store = open(url);
    let run = store.last_run().unwrap().unwrap();
    assert_eq!(run.status, "finished");
    assert_eq!(run.id, 1, "the workers kept to one run");
    assert_same(&found(&store, run.id), alone);
}

/// Rebalancing: a worker started after the first has claimed every site
/// (and read every site's robots.txt) is handed sites back by it (held
/// more than its share: held / live workers, rounded up), and works them;
/// the handover requests nothing twice, robots.txt included, and no site
/// ever has more connections than its limit.
#[test]
fn a_worker_started_late_is_handed_sites_and_works_them() {
    let Some(pg) = TestPg::shared() else {
        return;
    };
    let shape = Shape {
        pages: 360,
        sites: 6,
        leaves: 0,
    };
    let (web, setup) = web_and_setup(
        shape,
        Duration::from_millis(150),
        "per_site_connections = 2",
    );
    let alone = one_crawl(&web, &setup);
    let url = pg.database_url();
    let first = worker_saying(
        &setup,
        &url,
        "first",
        "-v",
        &["--from", "first@example.org"],
    );
    // Every site claimed: the first worker read each one's robots.txt.
    wait_for(&web, "the first worker to read every robots.txt", |log| {
        (0..shape.sites).all(|s| {
            let host = Shape::host(s);
            log.iter()
                .any(|r| r.host == host && r.path == "/robots.txt" && from("first")(r))
        })
    });
    let late = worker_saying(&setup, &url, "late", "-v", &["--from", "late@example.org"]);
    let ends = vec![finish(first), finish(late)];
    one_finisher(&ends, &url, &alone);
    let requests = web.requests();
    let by_late = requests.iter().filter(|r| from("late")(r)).count();
    assert!(by_late > 0, "the late worker made no request: {ends:#?}");
    assert!(ends[0].2.contains("more than its share"), "{}", ends[0].2);
    let twice = requested_twice(&web);
    assert!(twice.is_empty(), "requested more than once: {twice:?}");
    for s in 0..shape.sites {
        let host = Shape::host(s);
        assert!(
            web.most_in_flight(&host) <= 2,
            "{host}: {}",
            web.most_in_flight(&host)
        );
    }
    eprintln!("late worker: {by_late} of {} requests", requests.len());
}

/// A worker stopped (SIGSTOP) for longer than its lease is taken for
/// dead: the other takes its sites over. Continued (SIGCONT), it sends no
/// request before a meeting tells it so (its leases are not known to
/// hold), stores what was answered, hands back what it still holds and
/// joins the run afresh (and is handed sites back by the other, which
/// holds more than its share). Each URL has one result, one worker
/// finishes, the continued worker requests nothing the other requested,
/// and what is requested twice is only what it had not stored when it
/// was stopped (no more than it requested in its last second).
#[cfg(unix)]
#[test]
fn a_worker_taken_for_dead_rejoins_cleanly() {
    let Some(pg) = TestPg::shared() else {
        return;
    };
    let (web, setup) = web_and_setup(
        Shape {
            pages: 360,
            sites: 6,
            leaves: 0,
        },
        Duration::from_millis(150),
        "per_site_connections = 2",
    );
    let alone = one_crawl(&web, &setup);
    let url = pg.database_url();
    let lease = ["--lease", "2s"];
    let sleeper = worker_saying(
        &setup,
        &url,
        "sleeper",
        "-v",
        &[&lease[..], &["--from", "sleeper@example.org"]].concat(),
    );
    let other = worker_saying(
        &setup,
        &url,
        "other",
        "-v",
        &[&lease[..], &["--from", "other@example.org"]].concat(),
    );
    wait_for(&web, "both workers to be under way", |log| {
        log.iter().filter(|r| from("sleeper")(r)).count() >= 40
            && log.iter().any(|r| from("other")(r))
    });
    let signal = |sig: &str, child: &Child| {
        let ok = std::process::Command::new("kill")
            .args([sig, &child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill {sig}");
    };
    signal("-STOP", &sleeper);
    let stopped_at = Instant::now();
    let before_stop = web.requests().len();
    // The other takes the sleeper's sites over: it requests on a host
    // only the sleeper had requested before the stop.
    let sleepers_hosts: std::collections::HashSet<String> = web.requests()[..before_stop]
        .iter()
        .filter(|r| from("sleeper")(r))
        .map(|r| r.host.clone())
        .collect();
    let others_hosts: std::collections::HashSet<String> = web.requests()[..before_stop]
        .iter()
        .filter(|r| from("other")(r))
        .map(|r| r.host.clone())
        .collect();
    wait_for(&web, "the other worker to take a site over", |log| {
        log[before_stop..].iter().any(|r| {
            from("other")(r) && sleepers_hosts.contains(&r.host) && !others_hosts.contains(&r.host)
        })
    });
    let continued_at = web.requests().len();
    signal("-CONT", &sleeper);
    let ends = vec![finish(sleeper), finish(other)];
    one_finisher(&ends, &url, &alone);
    assert!(
        ends[0].2.contains("joins the run afresh"),
        "the sleeper did not find its sites taken over: {}",
        ends[0].2
    );
    let requests = web.requests();
    // Continued, the sleeper requested nothing the other requested (the
    // sites it took over, then handed back): what it requests again is
    // only its own, what was in flight when it was stopped (those
    // requests time out as it is continued, unanswered).
    let by_other: std::collections::HashSet<(&str, &str)> = requests
        .iter()
        .filter(|r| from("other")(r))
        .map(|r| (r.host.as_str(), r.path.as_str()))
        .collect();
    let again_after: Vec<_> = requests[continued_at..]
        .iter()
        .filter(|r| from("sleeper")(r) && by_other.contains(&(r.host.as_str(), r.path.as_str())))
        .map(|r| format!("{} {}", r.host, r.path))
        .collect();
    assert!(
        again_after.is_empty(),
        "continued, the sleeper requested what the other had: {again_after:?}"
    );
    // Requested twice: only what the sleeper had not stored when stopped.
    let twice = requested_twice(&web);
    let again: usize = twice.iter().map(|(_, n)| n - 1).sum();
    let last_second = requests[..before_stop]
        .iter()
        .filter(|r| from("sleeper")(r))
        .filter(|r| stopped_at.duration_since(r.at) < Duration::from_secs(1))
        .count();
    eprintln!(
        "stopped worker: {again} requests made twice; it made {last_second} in the second before the stop; {} requests in all",
        requests.len()
    );
    assert!(
        again <= last_second,
        "{again} made twice ({twice:?}); the sleeper made {last_second} in its last second"
    );
}

/// A worker started while its database is down waits for it (saying so),
/// as a running worker does, and does the run once it is back.
#[test]
fn a_worker_started_while_the_database_is_down_waits_for_it() {
    let Some(mut pg) = TestPg::own() else {
        return;
    };
    let (web, setup) = web_and_setup(SHAPE, Duration::ZERO, "");
    let alone = one_crawl(&web, &setup);
    let url = pg.database_url();
    pg.stop();
    let early = worker_saying(&setup, &url, "early", "-v", &[]);
    // The fault: the database comes up a while after the worker started.
    std::thread::sleep(Duration::from_secs(2));
    pg.start_again();
    let ends = vec![finish(early)];
    one_finisher(&ends, &url, &alone);
    let said = &ends[0].2;
    assert!(said.contains("the database is unreachable"), "{said}");
    assert!(said.contains("waiting up to 5 min"), "{said}");
    assert!(said.contains("the database answers again"), "{said}");
    let twice = requested_twice(&web);
    assert!(twice.is_empty(), "requested more than once: {twice:?}");
}
