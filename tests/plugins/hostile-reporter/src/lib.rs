//! A reporter that misbehaves on purpose in `finish`, as `{"behave": ...}` says:
//! `loop` (never returns), `hog` (allocates without end), `trap` (panics),
//! `flood` (writes past any output cap), `escape` (tries the file system, the
//! environment and the network, and writes down what it got), `count`
//! (behaves: counts its runs in its key-value space and writes the count
//! to `runs.txt`), `fetch` (fetches each of its `urls` through the host and
//! writes what came back to `fetch.txt`), `well` (behaves: writes `ok.txt`).

use spinneret_sdk::reporter::*;

/// The misbehaving reporter.
pub struct Hostile {
    behave: String,
    urls: Vec<String>,
}

impl Reporter for Hostile {
    fn configure(config: serde_json::Value) -> Result<Self, String> {
        let behave = config["behave"].as_str().unwrap_or("well").to_string();
        let urls = spinneret_sdk::settings::strings("hostile", &config, "urls")?;
        Ok(Hostile { behave, urls })
    }

    fn begin(
        &mut self,
        _run: RunInfo,
        _task: TaskInfo,
        _counts: TaskCounts,
        _out: &mut dyn Output,
    ) -> Result<(), String> {
        Ok(())
    }

    fn finish(&mut self, out: &mut dyn Output) -> Result<(), String> {
        match self.behave.as_str() {
            "loop" => {
                let mut n: u64 = 0;
                loop {
                    n = std::hint::black_box(n.wrapping_add(1));
                }
            }
            "hog" => {
                let mut keep: Vec<Vec<u8>> = Vec::new();
                loop {
                    keep.push(vec![1u8; 1 << 20]);
                    std::hint::black_box(&keep);
                }
            }
            "trap" => panic!("this reporter traps on purpose"),
            "flood" => {
                let chunk = vec![b'x'; 64 * 1024];
                for i in 0.. {
                    out.write(&format!("flood-{i}.txt"), &chunk)?;
                }
                Ok(())
            }
            "escape" => {
                let file = std::fs::read_to_string("/etc/passwd")
                    .map(|_| "read".to_string())
                    .unwrap_or_else(|e| format!("denied: {e}"));
                let dir = std::fs::read_dir("/")
                    .map(|_| "listed".to_string())
                    .unwrap_or_else(|e| format!("denied: {e}"));
                let env = std::env::vars().count();
                let net = std::net::TcpStream::connect("127.0.0.1:1")
                    .map(|_| "connected".to_string())
                    .unwrap_or_else(|e| format!("denied: {e}"));
                out.write(
                    "escape.txt",
                    format!("file: {file}\ndir: {dir}\nenv: {env}\nnet: {net}\n").as_bytes(),
                )
            }
            "fetch" => {
                let mut text = String::new();
                for url in &self.urls {
                    let line = match spinneret_sdk::http::get(url) {
                        Ok(r) => format!("{url} -> status {}", r.status),
                        Err(e) => format!("{url} -> error: {e}"),
                    };
                    text.push_str(&line);
                    text.push('\n');
                }
                out.write("fetch.txt", text.as_bytes())
            }
            "count" => {
                let runs = spinneret_sdk::kv::get("runs")
                    .and_then(|v| String::from_utf8(v).ok())
                    .and_then(|s| s.parse::<u64>().ok())
                    .unwrap_or(0)
                    + 1;
                spinneret_sdk::kv::set("runs", runs.to_string().as_bytes())?;
                out.write("runs.txt", runs.to_string().as_bytes())
            }
            _ => out.write("ok.txt", b"ok"),
        }
    }
}

spinneret_sdk::export_reporter!(Hostile);
