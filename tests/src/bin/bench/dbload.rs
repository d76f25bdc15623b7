//! What a shared run asks of its database, measured for `--workers`: the
//! workers reach PostgreSQL through a counting proxy (the bytes each way
//! and the round trips: a turn from the server's answer back to the
//! client's next request), the database's own statistics give its
//! transactions, rows and write-ahead log written and its tables' size, and the server processes'
//! CPU time (theirs and their exited backends') what its work cost. Each
//! is given per URL with a result and per site (a lease), the inputs of
//! the projection in docs/scale.md.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// What passed through the proxy.
#[derive(Default)]
pub(crate) struct Traffic {
    pub(crate) to_server: AtomicU64,
    pub(crate) to_client: AtomicU64,
    pub(crate) round_trips: AtomicU64,
    pub(crate) connections: AtomicU64,
}

/// A TCP proxy on loopback to the database server at `port`, counting
/// what passes ([`Traffic`]); it runs until the process ends.
pub(crate) struct CountingProxy {
    pub(crate) port: u16,
    pub(crate) traffic: Arc<Traffic>,
}

impl CountingProxy {
    pub(crate) fn start(server_port: u16) -> std::io::Result<CountingProxy> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let traffic = Arc::new(Traffic::default());
        let t = traffic.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(server) = TcpStream::connect(("127.0.0.1", server_port)) else {
                    continue;
                };
                t.connections.fetch_add(1, Ordering::Relaxed);
                relay(client, server, t.clone());
            }
        });
        Ok(CountingProxy { port, traffic })
    }
}

/// Copy both ways between `client` and `server`, counting.
fn relay(client: TcpStream, server: TcpStream, traffic: Arc<Traffic>) {
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    // Whether the server spoke last: the client's next bytes are a new
    // round trip.
    let answered = Arc::new(AtomicBool::new(true));
    let pipe = |mut from: TcpStream, mut to: TcpStream, up: bool| {
        let (traffic, answered) = (traffic.clone(), answered.clone());
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let n = match from.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                if up {
                    traffic.to_server.fetch_add(n as u64, Ordering::Relaxed);
                    if answered.swap(false, Ordering::Relaxed) {
                        traffic.round_trips.fetch_add(1, Ordering::Relaxed);
                    }
                } else {
                    traffic.to_client.fetch_add(n as u64, Ordering::Relaxed);
                    answered.store(true, Ordering::Relaxed);
                }
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
            let _ = to.shutdown(Shutdown::Write);
        });
    };
    match (client.try_clone(), server.try_clone()) {
        (Ok(c), Ok(s)) => {
            pipe(c, server, true);
            pipe(s, client, false);
        }
        _ => {
            let _ = client.shutdown(Shutdown::Both);
        }
    }
}

/// The CPU time so far, in seconds, of the database server listening on
/// `port` (other servers may run beside it: the test suite's): its
/// postmaster's own and that of the children it has reaped (backends
/// that ended), and its live children's.
pub(crate) fn server_cpu_secs(port: u16) -> f64 {
    // SAFETY: sysconf only reads a system constant.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    // (pid, ppid, utime + stime, cutime + cstime) of every `postgres`.
    let mut procs = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0.0;
    };
    for entry in dir.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u64>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid … utime stime cutime cstime
        let Some((comm, rest)) = stat.split_once(") ") else {
            continue;
        };
        if !comm.ends_with("(postgres") {
            continue;
        }
        let f: Vec<u64> = rest
            .split_whitespace()
            .map(|x| x.parse().unwrap_or(0))
            .collect();
        if f.len() >= 15 {
            // From `state` on: ppid is the 2nd field, utime the 12th.
            procs.push((pid, f[1], f[11] + f[12], f[13] + f[14]));
        }
    }
    let listens = |pid: u64| {
        std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
            let args: Vec<&[u8]> = c.split(|b| *b == 0).collect();
            args.windows(2)
                .any(|w| w[0] == b"-p" && w[1] == port.to_string().as_bytes())
        })
    };
    let Some(&(master, _, own, reaped)) = procs.iter().find(|p| listens(p.0)) else {
        return 0.0;
    };
    let children: u64 = procs.iter().filter(|p| p.1 == master).map(|p| p.2).sum();
    (own + reaped + children) as f64 / ticks
}

/// What `psql` answers to `sql` on the database of `url`, unaligned and
/// without headers (`-At`), trimmed.
fn psql(url: &str, sql: &str) -> anyhow::Result<String> {
    let out = Command::new("psql")
        .args([url, "-Atq", "-c", sql])
        .output()?;
    anyhow::ensure!(
        out.status.success(),
        "psql: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The database's transactions (committed and rolled back), rows
/// written (inserted, updated, deleted) and the size in bytes of the
/// store's tables with their indexes and TOAST (not the catalogue every
/// database has), from its own statistics.
pub(crate) fn database_figures(url: &str) -> anyhow::Result<(u64, u64, u64)> {
    // The statistics are sent to the collector at a transaction's end:
    // a moment for the last ones.
    std::thread::sleep(std::time::Duration::from_millis(700));
    let text = psql(
        url,
        "SELECT xact_commit + xact_rollback, tup_inserted + tup_updated + tup_deleted, \
         (SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c \
          JOIN pg_namespace n ON n.oid = c.relnamespace \
          WHERE n.nspname = 'public' AND c.relkind = 'r') \
         FROM pg_stat_database WHERE datname = current_database()",
    )?;
    let f: Vec<u64> = text
        .split('|')
        .map(|x| x.trim().parse().unwrap_or(0))
        .collect();
    anyhow::ensure!(f.len() == 3, "psql said: {text}");
    Ok((f[0], f[1], f[2]))
}

/// The write-ahead log the server has written so far, in bytes
/// (`pg_stat_wal`, the whole server's: the benchmark's server serves its
/// databases alone).
pub(crate) fn wal_bytes(url: &str) -> anyhow::Result<u64> {
    Ok(psql(url, "SELECT wal_bytes FROM pg_stat_wal")?.parse::<f64>()? as u64)
}

/// The URLs of the run with a result in the store.
pub(crate) fn results(url: &str) -> anyhow::Result<u64> {
    Ok(psql(url, "SELECT count(*) FROM results")?.parse()?)
}
