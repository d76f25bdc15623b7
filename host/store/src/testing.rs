//! A real PostgreSQL server for the store's tests: one cluster per test
//! binary, made with `initdb` in a temporary directory and started with
//! `postgres` on a free loopback port, a new database for each test.
//!
//! `initdb` and `postgres` refuse to run as root (CI runs as root): then
//! the directory is given to the `postgres` user (Debian's package makes
//! it) and both run as that user through `setpriv`. A watchdog process
//! stops the server and removes its directory when the test binary ends,
//! however it ends. Without PostgreSQL installed, the tests that need it
//! say they are skipped, except under CI (`CI` set), where they fail.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

/// The test binary's server.
pub struct TestPg {
    port: u16,
    /// Its directory (data, socket, log, certificates).
    dir: PathBuf,
    /// The certificate authority that signed its TLS certificate, when
    /// `openssl` could make one (without, it speaks no TLS).
    root_cert: Option<PathBuf>,
    /// How the server is started (again, after [`TestPg::stop`]).
    command: ServerCommand,
    /// The server, while it runs: it outlives this process, which never
    /// waits for it (the watchdog stops it).
    server: Option<std::process::Child>,
    /// The watchdog.
    _watchdog: std::process::Child,
}

impl Drop for TestPg {
    /// A server of a test's own stops with it (the binary's shared one is
    /// never dropped: the watchdog stops it).
    fn drop(&mut self) {
        self.stop();
    }
}

/// What starts a test server: its programs' directory, whether it runs
/// as the `postgres` user, and its arguments.
struct ServerCommand {
    bin: PathBuf,
    root: bool,
    args: Vec<std::ffi::OsString>,
}

/// Where PostgreSQL's server programs are: on `PATH`, or Debian's
/// `/usr/lib/postgresql/VERSION/bin` (the newest).
fn bin_dir() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            if dir.join("initdb").is_file() && dir.join("postgres").is_file() {
                return Some(dir);
            }
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse().ok()?;
            Some((v, e.path().join("bin")))
        })
        .filter(|(_, bin)| bin.join("initdb").is_file())
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

/// `program`, as the `postgres` user when this process is root (through
/// `setpriv`, which becomes the program: its process id is the server's).
fn as_server_user(program: &Path, root: bool) -> Command {
    match root {
        true => {
            let mut c = Command::new("setpriv");
            c.args([
                "--reuid=postgres",
                "--regid=postgres",
                "--init-groups",
                "--",
            ])
            .arg(program);
            c
        }
        false => Command::new(program),
    }
}

impl ServerCommand {
    /// Start the server, its log appended to `dir/server.log`.
    fn spawn(&self, dir: &Path) -> std::process::Child {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("server.log"))
            .expect("a log file");
        as_server_user(&self.bin.join("postgres"), self.root)
            .args(&self.args)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("postgres starts")
    }
}

/// A certificate authority and a server certificate it signed for
/// `localhost` and 127.0.0.1 (`server.crt`, `server.key`) in `dir`; the
/// authority's certificate, or `None` when `openssl` cannot make them.
fn make_certificates(dir: &Path) -> Option<PathBuf> {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let extensions = dir.join("server.ext");
    std::fs::write(
        &extensions,
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n\
         keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
    )
    .ok()?;
    let steps: [Vec<&str>; 3] = [
        [
            &["req", "-x509"][..],
            &ec,
            &["-keyout", "ca.key", "-out", "ca.crt"],
        ]
        .concat(),
        [
            &["req"][..],
            &ec,
            &["-keyout", "server.key", "-out", "server.csr"],
        ]
        .concat(),
        vec![
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-extfile",
            "server.ext",
        ],
    ];
    for (i, step) in steps.iter().enumerate() {
        let mut c = Command::new("openssl");
        c.args(step)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stderr(Stdio::null());
        c.stdout(Stdio::null());
        if i < 2 {
            let subject = if i == 0 {
                "/CN=spinneret test CA"
            } else {
                "/CN=localhost"
            };
            c.args(["-subj", subject, "-days", "2"]);
        } else {
            c.args(["-days", "2"]);
        }
        if !c.status().is_ok_and(|s| s.success()) {
            return None;
        }
    }
    // The server refuses a key others may read.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        dir.join("server.key"),
        std::fs::Permissions::from_mode(0o600),
    )
    .ok()?;
    Some(dir.join("ca.crt"))
}

/// Make `dir` and what it holds the `postgres` user's.
fn give_to_postgres(dir: &Path) {
    let chown = Command::new("chown")
        .args(["-R", "postgres:"])
        .arg(dir)
        .status()
        .expect("chown");
    assert!(chown.success(), "cannot give {} to postgres", dir.display());
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

impl TestPg {
    /// The test binary's server, started at the first call; `None` (after
    /// saying so) when PostgreSQL is not installed and this is not CI.
    pub fn shared() -> Option<&'static TestPg> {
        static SERVER: OnceLock<Option<TestPg>> = OnceLock::new();
        SERVER
            .get_or_init(|| match bin_dir() {
                Some(bin) => Some(TestPg::start(&bin)),
                None if std::env::var_os("CI").is_some() => {
                    panic!("PostgreSQL is not installed (initdb, postgres); .ci/run installs it")
                }
                None => {
                    eprintln!("PostgreSQL is not installed: its tests are skipped");
                    None
                }
            })
            .as_ref()
    }

    /// A server of the caller's own, not shared with the other tests of
    /// the binary: for a test that stops and starts it ([`TestPg::stop`],
    /// [`TestPg::start_again`]). `None` as for [`TestPg::shared`].
    pub fn own() -> Option<TestPg> {
        match bin_dir() {
            Some(bin) => Some(TestPg::start(&bin)),
            None if std::env::var_os("CI").is_some() => {
                panic!("PostgreSQL is not installed (initdb, postgres); .ci/run installs it")
            }
            None => {
                eprintln!("PostgreSQL is not installed: its tests are skipped");
                None
            }
        }
    }

    /// Stop the server as `pg_ctl stop` does by default (a fast shutdown:
    /// every session is ended, with an error that says so), and wait until
    /// it has.
    pub fn stop(&mut self) {
        if let Some(mut server) = self.server.take() {
            // `setpriv` became the server: its process id is the server's.
            let _ = Command::new("kill")
                .args(["-INT", &server.id().to_string()])
                .status();
            let _ = server.wait();
        }
    }

    /// Start the stopped server again, on its port and data, and wait until
    /// it takes connections.
    pub fn start_again(&mut self) {
        assert!(self.server.is_none(), "the server runs");
        let server = self.command.spawn(&self.dir);
        self.server = Some(server);
        self.wait_until_up();
    }

    fn wait_until_up(&mut self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            // A server that stopped (its port taken meanwhile) is said now.
            if let Some(Ok(Some(status))) = self.server.as_mut().map(|s| s.try_wait()) {
                panic!("postgres stopped ({status}); its log: {}", self.log());
            }
            assert!(
                std::time::Instant::now() < deadline,
                "postgres did not start; its log: {}",
                self.log()
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    fn start(bin: &Path) -> TestPg {
        let root = is_root();
        // Not `tempfile`'s guard: the watchdog removes it, after the server stops.
        let dir = tempfile::Builder::new()
            .prefix("spinneret-pg-")
            .tempdir()
            .expect("a temporary directory")
            .keep();
        let data = dir.join("data");
        if root {
            give_to_postgres(&dir);
        }
        let out = as_server_user(&bin.join("initdb"), root)
            .args(["--no-sync", "-A", "trust", "-U", "postgres", "-E", "UTF8"])
            .args(["--locale=C", "-D"])
            .arg(&data)
            .output()
            .expect("initdb runs");
        if !out.status.success() {
            let _ = std::fs::remove_dir_all(&dir);
            panic!("initdb failed: {}", String::from_utf8_lossy(&out.stderr));
        }
        let root_cert = make_certificates(&dir);
        if root {
            give_to_postgres(&dir);
        }
        let mut tls = Vec::new();
        if root_cert.is_some() {
            for (key, file) in [
                ("ssl_cert_file", "server.crt"),
                ("ssl_key_file", "server.key"),
            ] {
                tls.push("-c".to_string());
                tls.push(format!("{key}={}", dir.join(file).display()));
            }
            tls.extend(["-c".into(), "ssl=on".into()]);
        }
        let port = free_port();
        let mut args: Vec<std::ffi::OsString> = vec!["-D".into(), data.clone().into()];
        args.extend(["-p".into(), port.to_string().into(), "-k".into()]);
        args.push(dir.clone().into());
        for a in [
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            "fsync=off",
            "-c",
            "synchronous_commit=off",
            "-c",
            "full_page_writes=off",
            "-c",
            "log_connections=on",
        ] {
            args.push(a.into());
        }
        args.extend(tls.into_iter().map(Into::into));
        let command = ServerCommand {
            bin: bin.to_path_buf(),
            root,
            args,
        };
        let server = command.spawn(&dir);
        // The watchdog: when this process is gone, stop the server (fast
        // shutdown; whichever process it is now, after a restart: the
        // first line of its pid file) and remove its directory.
        let script = format!(
            "while kill -0 {me} 2>/dev/null; do sleep 1; done; \
             pg=$(head -n 1 '{data}/postmaster.pid' 2>/dev/null); \
             if [ -n \"$pg\" ]; then kill -INT $pg 2>/dev/null; \
             while kill -0 $pg 2>/dev/null; do sleep 0.2; done; fi; rm -rf '{dir}'",
            me = std::process::id(),
            data = data.display(),
            dir = dir.display()
        );
        // In a process group of its own: a Ctrl-C to the tests does not
        // stop it before it has cleaned up.
        let watchdog = Command::new("sh")
            .process_group(0)
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the watchdog starts");
        let mut pg = TestPg {
            port,
            dir,
            root_cert,
            command,
            server: Some(server),
            _watchdog: watchdog,
        };
        pg.wait_until_up();
        pg
    }

    /// A new, empty database for one test: its URL, as a user gives it
    /// (`store = "postgres://…"`).
    pub fn database_url(&self) -> String {
        let config = self.database();
        format!(
            "postgres://postgres@127.0.0.1:{}/{}",
            self.port,
            config.get_dbname().unwrap_or_default()
        )
    }

    /// The certificate to trust for the server's TLS (`PGSSLROOTCERT`),
    /// when it speaks TLS.
    pub fn root_cert(&self) -> Option<&Path> {
        self.root_cert.as_deref()
    }

    /// What the server has logged (each connection, and whether it used TLS).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }

    /// The connection settings of a database on the server.
    fn config(&self, db: &str) -> tokio_postgres::Config {
        let mut config = tokio_postgres::Config::new();
        config
            .host("127.0.0.1")
            .port(self.port)
            .user("postgres")
            .dbname(db);
        config
    }

    /// End every session connected to the database of `database_url` (as
    /// an administrator's `pg_terminate_backend`, or a restart of the
    /// server, ends them): how many were ended.
    pub fn end_sessions(&self, database_url: &str) -> i64 {
        let db = database_url.rsplit('/').next().unwrap_or_default();
        let admin = crate::db::Conn::Pg(
            crate::db::PgConn::connect(&self.config("postgres"))
                .expect("an administrator's connection to the test server"),
        );
        admin
            .query_row(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = ?1",
                crate::db::params![db],
                |r| r.get::<_, i64>(0),
            )
            .expect("the sessions ended")
    }

    /// A new, empty database for one test: its connection settings.
    pub fn database(&self) -> tokio_postgres::Config {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let name = format!("t{}", NEXT.fetch_add(1, Ordering::Relaxed));
        // The server accepts connections a moment before it accepts logins.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let admin = loop {
            match crate::db::PgConn::connect(&self.config("postgres")) {
                Ok(c) => break crate::db::Conn::Pg(c),
                Err(e) if std::time::Instant::now() < deadline => {
                    let _ = e;
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                Err(e) => panic!("cannot connect to the test server: {e}"),
            }
        };
        admin
            .execute_batch(&format!("CREATE DATABASE {name}"))
            .expect("a test database");
        self.config(&name)
    }
}

/// A new store on each backend: an SQLite file in `dir`, and a new
/// database on the test binary's PostgreSQL server when there is one.
pub fn stores(dir: &Path) -> Vec<crate::Store> {
    let mut stores = vec![crate::Store::open(&dir.join("s.db")).unwrap()];
    if let Some(pg) = TestPg::shared() {
        let location = crate::StoreLocation::Postgres(Box::new(pg.database()));
        stores.push(crate::Store::open_at(location).unwrap());
    }
    stores
}
