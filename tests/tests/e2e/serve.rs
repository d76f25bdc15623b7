//! `spinneret serve` as a server on a network: clients that connect and
//! send nothing, trickle their headers or hold connections open cannot
//! take it down (before, ~20,000 silent connections did).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::common::{Served, serve};

fn served(args: &[&str]) -> (tempfile::TempDir, Served) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.db");
    let mut all: Vec<&std::ffi::OsStr> = vec!["--store".as_ref(), store.as_os_str()];
    all.extend(args.iter().map(|a| std::ffi::OsStr::new(*a)));
    let s = serve(&all);
    (dir, s)
}

/// Import the archive lines `archive` into the store file `store`.
fn import(store: &std::path::Path, archive: &str) {
    let file = store.with_extension("wwww");
    std::fs::write(&file, archive).unwrap();
    let out = crate::common::spinneret(&[
        "archive",
        "import",
        file.to_str().unwrap(),
        "--store",
        store.to_str().unwrap(),
    ]);
    crate::common::expect_exit(&out, 0);
}

fn connect(s: &Served) -> TcpStream {
    let addr = s.base.trim_start_matches("http://");
    let stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream
}

/// All the server sends on `stream` until it closes it.
fn read_to_close(stream: &mut TcpStream) -> String {
    let mut got = Vec::new();
    match stream.read_to_end(&mut got) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        Err(e) => panic!("the server kept the connection open: {e}"),
    }
    String::from_utf8_lossy(&got).into_owned()
}

const REQUEST: &[u8] = b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

/// A client that sends part of a request's head and then nothing is
/// closed once its header time is up; so is one that sends nothing.
#[test]
fn a_client_slow_with_its_headers_is_closed_at_the_header_timeout() {
    let (_d, s) = served(&["--header-timeout", "1s"]);
    let mut trickle = connect(&s);
    trickle.write_all(b"GET / HTTP/1.1\r\nHost: local").unwrap();
    let mut silent = connect(&s);
    // Closed without an answer to a request it never finished.
    assert!(!read_to_close(&mut trickle).contains("200 OK"));
    assert!(!read_to_close(&mut silent).contains("200 OK"));
    // The server goes on answering.
    let mut c = connect(&s);
    c.write_all(REQUEST).unwrap();
    let answer = read_to_close(&mut c);
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
}

/// Past `--max-connections`, a connection waits until one closes, and is
/// answered then.
#[test]
fn connections_past_the_cap_wait_for_one_to_close() {
    let (_d, s) = served(&["--max-connections", "2", "--header-timeout", "60s"]);
    let mut held = [connect(&s), connect(&s)];
    for h in &mut held {
        h.write_all(b"GET / HTTP/1.1\r\n").unwrap();
    }
    let mut waiting = connect(&s);
    waiting.write_all(REQUEST).unwrap();
    // Not answered while both are held.
    waiting.set_nonblocking(true).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let mut none = [0u8; 1];
    match waiting.read(&mut none) {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("answered past the cap: {other:?}"),
    }
    waiting.set_nonblocking(false).unwrap();
    // One held connection closes: the waiting one is answered.
    let [first, _second] = held;
    drop(first);
    let answer = read_to_close(&mut waiting);
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
}

/// The bounds are checked as they are given.
#[test]
fn bounds_that_cannot_work_are_refused() {
    for (args, said) in [
        (
            ["--max-connections", "0"],
            "invalid value '0' for '--max-connections <N>': 0 is not in 1..=65536",
        ),
        (
            ["--header-timeout", "0s"],
            "invalid value '0s' for '--header-timeout <DURATION>': `0s` is no time at all; write e.g. \"10s\"",
        ),
    ] {
        let out = crate::common::spinneret(&[&["serve"][..], &args[..]].concat());
        let stderr = crate::common::expect_exit(&out, 2);
        assert!(stderr.contains(said), "{stderr}");
    }
}

/// A `javascript:` URL in the store (a page's link, an imported archive's
/// line) is shown on the search page as text, never as a link a reader
/// could click (before, `href="javascript:…"`; the page's CSP was all
/// that stopped it).
#[test]
fn a_javascript_url_in_the_store_is_shown_and_never_linked() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.db");
    import(
        &store,
        "T http://a.example/ Home\n\
         R javascript:alert(document.cookie) http://a.example/ Click me\n\
         R http://b.example/ http://a.example/ Click here\n\
         C http://a.example/\n",
    );
    let s = serve(&["--store".as_ref(), store.as_os_str()]);
    let (status, _, page) = crate::common::get(&s, "/?q=anchor%3Aclick&mode=urls");
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("<a class=\"result\">Click me</a>"), "{page}");
    assert!(
        page.contains("<a class=\"result\" href=\"http://b.example/\">Click here</a>"),
        "{page}"
    );
    assert!(
        !page.to_ascii_lowercase().contains("href=\"javascript"),
        "{page}"
    );
}

/// A client that stops sending a request's body, or trickles it, is
/// answered 408 and closed at the idle timeout (before, the stalled one
/// kept its connection for good: 256 of them stopped the server).
#[test]
fn a_request_body_stalled_or_trickled_is_cut_off_at_the_idle_timeout() {
    let (_d, s) = served(&["--idle-timeout", "1s"]);
    let post = b"POST /library/login HTTP/1.1\r\nHost: localhost\r\n\
                 Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\nna";
    let mut stalled = connect(&s);
    stalled.write_all(post).unwrap();
    let answer = read_to_close(&mut stalled);
    assert!(
        answer.starts_with("HTTP/1.1 408 Request Timeout\r\n"),
        "{answer}"
    );
    assert!(
        answer.ends_with("the request did not arrive whole within 1s\n"),
        "{answer}"
    );
    // A byte every 100 ms is progress, but the body has the same time to
    // arrive whole.
    let mut trickle = connect(&s);
    trickle.write_all(post).unwrap();
    let writer = {
        let mut w = trickle.try_clone().unwrap();
        std::thread::spawn(move || {
            for _ in 0..100 {
                std::thread::sleep(Duration::from_millis(100));
                if w.write_all(b"x").is_err() {
                    break;
                }
            }
        })
    };
    let answer = read_to_close(&mut trickle);
    assert!(
        answer.starts_with("HTTP/1.1 408 Request Timeout\r\n"),
        "{answer}"
    );
    writer.join().unwrap();
}

/// What cannot be read as one request for one host is refused: two Host
/// headers, a request target naming another host, parameters given twice;
/// and `FIELD:*` is said in the query's terms, not tantivy's.
#[test]
fn ambiguous_requests_are_refused_with_the_reason() {
    let (_d, s) = served(&["--allow-host", "search.example.org"]);
    let ask = |raw: &str| {
        let mut c = connect(&s);
        c.write_all(raw.as_bytes()).unwrap();
        read_to_close(&mut c)
    };
    let two =
        ask("GET / HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\nConnection: close\r\n\r\n");
    assert!(two.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{two}");
    assert!(
        two.ends_with("a request names one host: it has two Host headers\n"),
        "{two}"
    );
    let absolute =
        ask("GET http://evil.example/ HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    assert!(
        absolute.starts_with("HTTP/1.1 421 Misdirected Request\r\n"),
        "{absolute}"
    );
    // The proxy's name, passed through, is answered; another is not.
    let proxied = ask("GET / HTTP/1.1\r\nHost: search.example.org\r\nConnection: close\r\n\r\n");
    assert!(proxied.starts_with("HTTP/1.1 200 OK\r\n"), "{proxied}");
    let other = ask("GET / HTTP/1.1\r\nHost: other.example.org\r\nConnection: close\r\n\r\n");
    assert!(
        other.starts_with("HTTP/1.1 421 Misdirected Request\r\n"),
        "{other}"
    );

    let (status, _, page) = crate::common::get(&s, "/?q=a&mode=urls&mode=bogus");
    assert_eq!(status, 400);
    assert!(page.contains("the parameters cannot be read; use q, mode (documents or urls), page and limit, each once"), "{page}");
    let (status, _, body) = crate::common::get(&s, "/api/search?q=url%3A*");
    assert_eq!(status, 400);
    assert!(
        body.contains("`FIELD:*` (every entry with a field) cannot be searched"),
        "{body}"
    );
}

/// `serve` keeps its index current: a document imported into the store
/// while it serves is found after a refresh (every 10 s), through the
/// refresher's own connection to the store.
#[test]
fn what_is_added_to_the_store_while_serving_is_found() {
    let (dir, s) = served(&[]);
    let store = dir.path().join("s.db");
    let total = || {
        let (status, _, body) = crate::common::get(&s, "/api/search?q=zanzibar");
        assert_eq!(status, 200, "{body}");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        v["total"].as_u64().unwrap()
    };
    assert_eq!(total(), 0);
    import(
        &store,
        "T http://b.example/two.html Zanzibar notes\nC http://b.example/two.html\n",
    );
    let end = std::time::Instant::now() + Duration::from_secs(40);
    while total() == 0 {
        assert!(
            std::time::Instant::now() < end,
            "the import was not found within 40 s"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    assert_eq!(total(), 1);
}

/// One client (one address) holds at most `--max-connections-per-client`
/// connections: past them it is answered 503 with Retry-After and closed
/// at once, and another client is served however many connections the
/// first keeps open or trickles on (before, 256 kept-alive connections of
/// one client starved every other).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_client_cannot_take_every_connection_from_the_others() {
    let (_d, s) = served(&[
        "--max-connections",
        "8",
        "--max-connections-per-client",
        "3",
        "--header-timeout",
        "60s",
    ]);
    let addr: std::net::SocketAddr = s.base.trim_start_matches("http://").parse().unwrap();
    let mut held = Vec::new();
    for _ in 0..3 {
        let mut c = connect(&s);
        c.write_all(b"GET / HTTP/1.1\r\n").unwrap();
        held.push(c);
    }
    // Twenty more from the same client: each told to come back, and closed.
    for _ in 0..20 {
        let mut c = connect(&s);
        c.write_all(REQUEST).unwrap();
        let answer = read_to_close(&mut c);
        assert!(
            answer.starts_with("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\n"),
            "{answer}"
        );
        assert!(answer.ends_with(
            "this client has as many connections open as one client may; try again shortly\n"
        ));
    }
    // Another client (another loopback address) is answered at once.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.2:0".parse().unwrap()).unwrap();
    let other = socket.connect(addr).await.unwrap().into_std().unwrap();
    other.set_nonblocking(false).unwrap();
    other
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut other = other;
    other.write_all(REQUEST).unwrap();
    let answer = read_to_close(&mut other);
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    // The first client's share comes back as its connections close (once
    // the server has seen the close: the client retries, as told).
    held.pop();
    let mut answer = String::new();
    for _ in 0..100 {
        let mut c = connect(&s);
        c.write_all(REQUEST).unwrap();
        answer = read_to_close(&mut c);
        if !answer.starts_with("HTTP/1.1 503 ") {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
}

/// A body no route takes, or one declared larger than any form, is
/// answered at once without being read (before, a POST declaring 10 GB
/// held its connection for the whole idle timeout).
#[test]
fn a_body_that_cannot_be_taken_is_refused_at_once() {
    let (_d, s) = served(&["--idle-timeout", "120s"]);
    for (request, status) in [
        (
            "POST /api/search HTTP/1.1\r\nHost: localhost\r\nContent-Length: 10000000000\r\n\r\nq=",
            "HTTP/1.1 405 Method Not Allowed\r\n",
        ),
        (
            "PUT / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nab",
            "HTTP/1.1 405 Method Not Allowed\r\n",
        ),
        (
            "POST /library/1/point HTTP/1.1\r\nHost: localhost\r\nContent-Length: 10000000000\r\n\r\ntitle=",
            "HTTP/1.1 413 Payload Too Large\r\n",
        ),
    ] {
        let mut c = connect(&s);
        c.write_all(request.as_bytes()).unwrap();
        let answer = read_to_close(&mut c);
        assert!(answer.starts_with(status), "{request}: {answer}");
    }
}
