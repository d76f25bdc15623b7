//! A real OCI registry on loopback for the sharing tests: Debian's
//! `docker-registry` (the CNCF distribution registry), started on a free
//! port with its storage in a temporary directory, stopped when dropped.
//! `.ci/run` installs it; on a machine without it the tests that need it
//! say so and skip, except under CI (`CI` set), where its absence fails.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running registry.
pub struct Registry {
    child: Child,
    port: u16,
    _storage: tempfile::TempDir,
}

fn binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SPINNERET_TEST_REGISTRY") {
        return Some(PathBuf::from(p));
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("docker-registry"))
            .find(|p| p.is_file())
    })
}

impl Registry {
    /// Start a registry, or `None` (with a note on stderr) when
    /// `docker-registry` is not installed and this is not CI.
    pub fn start() -> Option<Registry> {
        let Some(bin) = binary() else {
            assert!(
                std::env::var_os("CI").is_none(),
                "docker-registry is not installed; .ci/run installs it (apt-get install -y docker-registry)"
            );
            eprintln!(
                "SKIPPED: docker-registry is not installed (apt-get install -y docker-registry); the OCI registry test did not run"
            );
            return None;
        };
        let storage = tempfile::tempdir().expect("temp dir");
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let config = storage.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:{port}\n",
                storage.path().join("data").display()
            ),
        )
        .expect("write the registry config");
        let child = Command::new(&bin)
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
        let registry = Registry {
            child,
            port,
            _storage: storage,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "docker-registry did not listen on 127.0.0.1:{port} within 20 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(registry)
    }

    /// `127.0.0.1:PORT`.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
