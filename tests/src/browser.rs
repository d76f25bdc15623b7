//! Headless Chromium (Debian's `chromium`), driven over the DevTools
//! protocol, for the tests of pages a person looks at: what the page shows,
//! that its links work, what it loaded and that nothing failed.
//!
//! Chromium is started with a fresh profile and without its background
//! networking (this machine has no network beyond loopback), on a
//! DevTools port of its choosing; the test talks to one page through a
//! flattened session and keeps every event it hears.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

/// A running headless Chromium with one page.
pub struct Browser {
    child: Child,
    ws: WebSocket<MaybeTlsStream<TcpStream>>,
    session: String,
    next: u64,
    /// The call awaiting its answer, named when DevTools falls silent.
    pending: String,
    /// Every event heard so far (`method`, `params`).
    pub events: Vec<(String, Value)>,
    _profile: tempfile::TempDir,
    /// One Chromium at a time in a test binary: several at once on a small
    /// machine, beside the rest of the suite, left DevTools silent for
    /// 30 s.
    _turn: std::sync::MutexGuard<'static, ()>,
}

/// Held by the running [`Browser`].
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Chromium's path: `$CHROMIUM`, or Debian's `/usr/bin/chromium`; `None`
/// (with a note) when it is not installed, a failure under CI, whose
/// `.ci/run` installs it.
pub fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    if path.is_file() {
        return Some(path);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "chromium is not installed; .ci/run installs it (apt-get install chromium)"
    );
    eprintln!(
        "SKIPPED: chromium is not installed (apt-get install chromium); the browser check did not run"
    );
    None
}

impl Browser {
    /// Start Chromium at `path` and open one blank page.
    pub fn start(path: &std::path::Path) -> Browser {
        Browser::start_with(path, &[])
    }

    /// Start Chromium at `path` with `extra` arguments (such as
    /// `--host-resolver-rules=MAP *.example 127.0.0.1`, for a test web's
    /// host names) and open one blank page.
    pub fn start_with(path: &std::path::Path, extra: &[&str]) -> Browser {
        // A test that failed with the browser held it: the next may go on.
        let turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
        let profile = tempfile::tempdir().unwrap();
        let mut child = Command::new(path)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--allow-file-access-from-files",
                "--remote-debugging-port=0",
            ])
            .args(extra)
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("chromium starts");
        // It says where DevTools listens on its standard error.
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(at) = line.find("ws://") {
                    let _ = tx.send(line[at..].trim().to_string());
                }
            }
        });
        let url = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("chromium says where DevTools listens within 30 s");
        let (ws, _) = tungstenite::connect(url.as_str()).expect("DevTools accepts the connection");
        if let MaybeTlsStream::Plain(s) = ws.get_ref() {
            s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        }
        let mut b = Browser {
            child,
            ws,
            session: String::new(),
            next: 0,
            pending: String::new(),
            events: Vec::new(),
            _profile: profile,
            _turn: turn,
        };
        let target = b.call_browser("Target.createTarget", json!({"url": "about:blank"}));
        let attached = b.call_browser(
            "Target.attachToTarget",
            json!({"targetId": target["targetId"], "flatten": true}),
        );
        b.session = attached["sessionId"].as_str().unwrap().to_string();
        for domain in [
            "Page.enable",
            "Network.enable",
            "Runtime.enable",
            "Log.enable",
        ] {
            b.call(domain, json!({}));
        }
        // Keyboard input goes to the focused page; a headless browser has
        // two (the first blank tab and ours), and which one holds focus
        // differs between Chromium versions: ours is brought to the front
        // and told it has focus, as Puppeteer does.
        b.call("Page.bringToFront", json!({}));
        b.call(
            "Emulation.setFocusEmulationEnabled",
            json!({"enabled": true}),
        );
        b
    }

    #[track_caller]
    fn send(&mut self, method: &str, params: Value, session: Option<String>) -> Value {
        self.next += 1;
        self.pending = format!("{method} {params}");
        let id = self.next;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = Value::String(s);
        }
        self.ws.send(Message::Text(msg.to_string().into())).unwrap();
        loop {
            let m: Value = self.read();
            if m["id"].as_u64() == Some(id) {
                self.pending.clear();
                assert!(m.get("error").is_none(), "{method}: {m}");
                return m["result"].clone();
            }
        }
    }

    /// Read one message, keeping it if it is an event.
    #[track_caller]
    fn read(&mut self) -> Value {
        loop {
            let msg = match self.ws.read() {
                Ok(msg) => msg,
                Err(e) => {
                    // What was asked, and the last events with what they
                    // said (a console entry's text), to tell a call
                    // Chromium never answered from an event that never came.
                    let last: Vec<String> = self
                        .events
                        .iter()
                        .rev()
                        .take(8)
                        .map(|(m, p)| match m.as_str() {
                            "Log.entryAdded" => format!("{m} {}", p["entry"]),
                            "Runtime.consoleAPICalled" => format!("{m} {}", p["args"]),
                            _ => m.clone(),
                        })
                        .collect();
                    let waiting = if self.pending.is_empty() {
                        "no call (waiting for an event)".to_string()
                    } else {
                        self.pending.chars().take(300).collect()
                    };
                    panic!(
                        "DevTools said nothing for 30 s ({e}); awaiting the answer to: {waiting}; the last events, newest first: {last:?}"
                    )
                }
            };
            if let Message::Text(t) = msg {
                let v: Value = serde_json::from_str(t.as_str()).unwrap();
                if let Some(m) = v["method"].as_str() {
                    self.events.push((m.to_string(), v["params"].clone()));
                }
                return v;
            }
        }
    }

    #[track_caller]
    fn call_browser(&mut self, method: &str, params: Value) -> Value {
        self.send(method, params, None)
    }

    /// Call `method` on the page; its result.
    #[track_caller]
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let s = self.session.clone();
        self.send(method, params, Some(s))
    }

    /// Wait until the page has fired `method` more times than `seen`.
    #[track_caller]
    fn wait_for(&mut self, method: &str, seen: usize) {
        let end = Instant::now() + Duration::from_secs(30);
        while self.events.iter().filter(|(m, _)| m == method).count() <= seen {
            assert!(Instant::now() < end, "no {method} within 30 s");
            self.read();
        }
    }

    fn loads(&self) -> usize {
        self.events
            .iter()
            .filter(|(m, _)| m == "Page.loadEventFired")
            .count()
    }

    /// Open `url` and wait until it has loaded.
    #[track_caller]
    pub fn open(&mut self, url: &str) {
        let seen = self.loads();
        self.call("Page.navigate", json!({"url": url}));
        self.wait_for("Page.loadEventFired", seen);
    }

    /// Wait until the page has drawn two frames: input is routed by what
    /// was drawn, and a key pressed before a busy headless Chromium has
    /// drawn the new page can reach nothing.
    #[track_caller]
    pub fn settle(&mut self) {
        self.eval(
            "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))",
        );
    }

    /// Wait for a page load after the first `seen` events (a form
    /// submitted with the keyboard).
    #[track_caller]
    pub fn wait_for_load_after(&mut self, seen: usize) {
        let end = Instant::now() + Duration::from_secs(30);
        while !self.events[seen..]
            .iter()
            .any(|(m, _)| m == "Page.loadEventFired")
        {
            assert!(
                Instant::now() < end,
                "no page load within 30 s; events since: {:?}",
                self.events[seen..]
                    .iter()
                    .map(|(m, _)| m)
                    .collect::<Vec<_>>()
            );
            self.read();
        }
    }

    /// Run `script` (an expression) in the page and wait for the page it
    /// leads to to load (a click on a link).
    #[track_caller]
    pub fn follow(&mut self, script: &str) {
        let seen = self.loads();
        self.eval(script);
        self.wait_for("Page.loadEventFired", seen);
    }

    /// The value of the expression `script` in the page.
    #[track_caller]
    pub fn eval(&mut self, script: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": script, "returnByValue": true, "awaitPromise": true}),
        );
        assert!(r.get("exceptionDetails").is_none(), "{script}: {r}");
        r["result"]["value"].clone()
    }

    /// Refuse every network request from now on (the page must live on
    /// what is on disk).
    pub fn offline(&mut self) {
        self.call(
            "Network.emulateNetworkConditions",
            json!({"offline": true, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}),
        );
    }

    /// The URL of every request the page made.
    pub fn requested(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|(m, _)| m == "Network.requestWillBeSent")
            .filter_map(|(_, p)| p["request"]["url"].as_str().map(str::to_string))
            .collect()
    }

    /// What went wrong: failed requests, uncaught exceptions and errors on
    /// the console.
    pub fn problems(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|(m, p)| match m.as_str() {
                "Network.loadingFailed" => Some(format!("request failed: {p}")),
                "Runtime.exceptionThrown" => Some(format!("exception: {p}")),
                "Log.entryAdded" if p["entry"]["level"] == "error" => {
                    Some(format!("console: {}", p["entry"]["text"]))
                }
                "Runtime.consoleAPICalled" if p["type"] == "error" => Some(format!("console: {p}")),
                _ => None,
            })
            .collect()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
