//! A run shared by worker processes (`spinneret worker`), on PostgreSQL.
//!
//! The run's frontier lives in the database, partitioned by site: a row of
//! `shared_frontier` is one task reaching one URL (or a redirect hop one
//! worker asks another to check), offered by whichever worker found it and
//! taken by the worker that holds the URL's site. A site is held through a
//! lease in `shared_sites` (claimed with `FOR UPDATE SKIP LOCKED`, renewed
//! by each heartbeat, taken over when it expires), so one worker at a time
//! requests a site's URLs: robots.txt and per-site politeness hold across
//! all workers without a question per request. `shared_workers` says which
//! workers are alive and which are idle in which phase; `shared_runs` holds
//! the run's phase (documents, then leaves, then crawled) and which worker
//! finishes it (the report stage and mail, once).
//!
//! Times are the database's clock (`clock_timestamp()`, milliseconds), so
//! the workers' clocks need not agree.
//!
//! A worker's leases are renewed by a thread of its own (`LeaseKeeper`),
//! on a schedule of their own, whatever the crawl is doing. Every
//! statement here survives a lost connection when the store rides out
//! outages (`Store::ride_out`): it is run again, whole, once the database
//! is back; each is written so that running it twice does what running it
//! once does, or is told it was lost (`take`, `try_to_finish`). A run that
//! no worker was heard from for longer than any lease (the database down,
//! or cut off from every worker) is thawed by the first worker back:
//! every worker's lease starts again, so that no one is taken for dead
//! for the database's outage (`thaw`).

use crate::db::{Conn, Ints, Texts, TxMode, params};
use crate::reconnect::{self, RideOut};
use crate::{RunIds, Store, StoreError, StoreLocation};
use spinneret_core::model::TaskRecord;
use std::time::Duration;

/// The database's clock, in milliseconds since the Unix epoch.
const NOW_MS: &str = "(extract(epoch from clock_timestamp()) * 1000)::BIGINT";

/// The advisory lock (transaction-scoped) under which a worker finds or
/// begins the shared run of its configuration ("SPINSHRD").
const JOIN_LOCK: i64 = 0x5350_494E_5348_5244;

/// The phases of a shared run, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedPhase {
    /// Documents are fetched with GET and parsed; leaves wait.
    Documents,
    /// Every document is done: the leaves are tested with HEAD.
    Leaves,
    /// The frontier is drained: the workers store what they hold and leave;
    /// the last of them finishes the run.
    Crawled,
    /// A worker is finishing the run (the report stage and mail), or has.
    Finishing,
}

impl SharedPhase {
    /// The phase's name, as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            SharedPhase::Documents => "documents",
            SharedPhase::Leaves => "leaves",
            SharedPhase::Crawled => "crawled",
            SharedPhase::Finishing => "finishing",
        }
    }

    fn parse(s: &str) -> SharedPhase {
        match s {
            "documents" => SharedPhase::Documents,
            "leaves" => SharedPhase::Leaves,
            "crawled" => SharedPhase::Crawled,
            _ => SharedPhase::Finishing,
        }
    }
}

/// One row of the shared frontier: task `task` reached `url` (task 0: a
/// redirect hop to check for the worker whose chain goes through it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedReach {
    /// The URL's site (`urls::site_key`).
    pub site: String,
    /// The URL.
    pub url: String,
    /// The task's id in the store; 0 for a redirect hop.
    pub task: i64,
    /// Whether the task wants it as a document (for a hop: by GET).
    pub traverse: bool,
    /// How it was referred to (`RefKind::as_str`).
    pub kind: String,
    /// The page that referred to it.
    pub referrer: Option<String>,
    /// The decision the finding worker made (`Decision::role`, or
    /// `excluded` and `held` for the two a task keeps to itself).
    pub decision: String,
    /// Its reason ("" for none).
    pub reason: String,
    /// Links from the task's top, for a document.
    pub depth: i64,
}

impl Store {
    /// Join the newest shared run of `config` that is still crawling, or
    /// begin one: under a lock, so that workers started together agree.
    /// On PostgreSQL only.
    pub fn join_shared_run(
        &self,
        config: Option<&str>,
        options: &str,
        tasks: &[TaskRecord<'_>],
    ) -> Result<RunIds, StoreError> {
        if !matches!(self.location, StoreLocation::Postgres(_)) {
            return Err(needs_server());
        }
        let tx = self.conn.transaction(TxMode::Deferred)?;
        tx.execute("SELECT pg_advisory_xact_lock(?1)", params![JOIN_LOCK])?;
        let open: Option<i64> = tx.query_opt(
            "SELECT s.run_id FROM shared_runs s JOIN runs r ON r.id = s.run_id
             WHERE r.config IS NOT DISTINCT FROM ?1 AND s.phase IN ('documents', 'leaves')
             ORDER BY s.run_id DESC LIMIT 1",
            params![config],
            |r| r.get(0),
        )?;
        let ids = match open {
            Some(run) => RunIds {
                run,
                tasks: self.insert_tasks(run, tasks)?,
                resumed: true,
            },
            None => {
                let ids = self.begin_run(config, options, tasks)?;
                tx.execute(
                    "INSERT INTO shared_runs (run_id) VALUES (?1)",
                    params![ids.run],
                )?;
                ids
            }
        };
        tx.commit()?;
        Ok(ids)
    }

    /// Join shared run `run` again (a worker that stopped its work in it
    /// and left), if it is still crawling; `None` when it is not.
    pub fn rejoin_shared_run(
        &self,
        run: i64,
        tasks: &[TaskRecord<'_>],
    ) -> Result<Option<RunIds>, StoreError> {
        if !matches!(self.location, StoreLocation::Postgres(_)) {
            return Err(needs_server());
        }
        let crawling: bool = self.riding_out(|s| {
            s.conn.query_row(
                "SELECT EXISTS (SELECT 1 FROM shared_runs WHERE run_id = ?1
                                  AND phase IN ('documents', 'leaves'))",
                params![run],
                |r| r.get(0),
            )
        })?;
        if !crawling {
            return Ok(None);
        }
        Ok(Some(RunIds {
            run,
            tasks: self.riding_out(|s| s.insert_tasks(run, tasks))?,
            resumed: true,
        }))
    }

    /// This worker's connection to shared run `run`: a connection of its
    /// own, so that the coordination never waits behind the store's reads,
    /// and a thread that renews its leases (`LeaseKeeper`). `worker` names
    /// the worker (unique among the run's); its leases last `lease` unless
    /// renewed. It rides out a lost database as the store does.
    pub fn shared_run(
        &self,
        run: i64,
        worker: &str,
        lease: Duration,
    ) -> Result<SharedRun, StoreError> {
        if !matches!(self.location, StoreLocation::Postgres(_)) {
            return Err(needs_server());
        }
        let mut shared = SharedRun {
            conn: self.location.connect()?,
            run,
            worker: worker.to_string(),
            lease_ms: lease.as_millis().min(i64::MAX as u128) as i64,
            ride: self.ride_out.get(),
            keeper: None,
        };
        // Two live workers of one name would share one flag and one set
        // of leases.
        let live: bool = shared.conn.query_row(
            &format!(
                "SELECT EXISTS (SELECT 1 FROM shared_workers WHERE run_id = ?1 AND worker = ?2
                                  AND heartbeat + lease_ms > {NOW_MS})"
            ),
            params![run, worker],
            |r| r.get(0),
        )?;
        if live {
            return Err(StoreError::Unsupported(format!(
                "a worker named `{worker}` is working in run {run} already (heard from within its lease); give this one another --name"
            )));
        }
        // A worker of this name that stopped without leaving (killed, its
        // machine lost): what it held goes back to the run first.
        shared.leave()?;
        // A run no one was heard from: every lease starts again before
        // this worker counts as alive (see `thaw`).
        thaw(&shared.conn, run)?;
        shared.conn.execute(
            &format!(
                "INSERT INTO shared_workers (run_id, worker, heartbeat, lease_ms)
                 VALUES (?1, ?2, {NOW_MS}, ?3)
                 ON CONFLICT (run_id, worker) DO UPDATE
                 SET heartbeat = excluded.heartbeat, lease_ms = excluded.lease_ms, idle_in = NULL"
            ),
            params![run, worker, shared.lease_ms],
        )?;
        shared.keeper = Some(LeaseKeeper::start(
            self.location.connect()?,
            run,
            worker,
            lease,
            shared.ride,
        )?);
        Ok(shared)
    }
}

fn needs_server() -> StoreError {
    StoreError::Unsupported(
        "workers share a run through a PostgreSQL store (store = \"postgres://…\")".into(),
    )
}

/// Insert `reaches` into run `run`'s shared frontier (each (URL, task,
/// traverse) once: `ON CONFLICT DO NOTHING`), and their sites into
/// `shared_sites`, in `tx`.
fn insert_reaches(tx: &Conn, run: i64, reaches: &[SharedReach]) -> Result<(), StoreError> {
    if reaches.is_empty() {
        return Ok(());
    }
    let mut sites: Vec<&str> = reaches.iter().map(|r| r.site.as_str()).collect();
    sites.sort_unstable();
    sites.dedup();
    let sites: Vec<Option<&str>> = sites.into_iter().map(Some).collect();
    let col = |f: fn(&SharedReach) -> Option<&str>| -> Vec<Option<&str>> {
        reaches.iter().map(f).collect()
    };
    let (site, url, kind) = (
        col(|r| Some(&r.site)),
        col(|r| Some(&r.url)),
        col(|r| Some(&r.kind)),
    );
    let (referrer, decision, reason) = (
        col(|r| r.referrer.as_deref()),
        col(|r| Some(&r.decision)),
        col(|r| Some(&r.reason)),
    );
    let task: Vec<Option<i64>> = reaches.iter().map(|r| Some(r.task)).collect();
    let traverse: Vec<Option<i64>> = reaches
        .iter()
        .map(|r| Some(i64::from(r.traverse)))
        .collect();
    let depth: Vec<Option<i64>> = reaches.iter().map(|r| Some(r.depth)).collect();
    // Sites in key order, so that two workers offering together never
    // wait on each other's rows in opposite orders.
    tx.execute(
        "INSERT INTO shared_sites (run_id, site)
         SELECT ?1, s FROM unnest(?2::text[]) AS s ORDER BY s
         ON CONFLICT DO NOTHING",
        params![run, Texts(&sites)],
    )?;
    tx.execute(
        "INSERT INTO shared_frontier
           (run_id, site, url, task_id, traverse, kind, referrer, decision, reason, depth)
         SELECT ?1, * FROM unnest(?2::text[], ?3::text[], ?4::bigint[], ?5::bigint[],
                                  ?6::text[], ?7::text[], ?8::text[], ?9::text[], ?10::bigint[])
         ON CONFLICT DO NOTHING",
        params![
            run,
            Texts(&site),
            Texts(&url),
            Ints(&task),
            Ints(&traverse),
            Texts(&kind),
            Texts(&referrer),
            Texts(&decision),
            Texts(&reason),
            Ints(&depth)
        ],
    )?;
    Ok(())
}

/// A worker's part in a shared run (see the module's documentation).
pub struct SharedRun {
    conn: Conn,
    run: i64,
    worker: String,
    lease_ms: i64,
    /// How it waits for a database that went away.
    ride: Option<RideOut>,
    /// The thread that renews its leases; stopped when it is dropped.
    keeper: Option<LeaseKeeper>,
}

/// A site a worker holds, and the generation of its lease: a lease taken
/// over by another worker (and perhaps given back) has a greater one.
pub type HeldSite = (String, i64);

/// A site claimed: its key, its lease's generation, and how long its
/// next request must wait (the politeness its last holder owed it).
pub type ClaimedSite = (String, i64, Duration);

/// Start every lease of run `run` again, when no worker of it has been
/// heard from within its lease: the database was down, or cut off from
/// every worker, and they are all coming back; none of them is to be taken
/// for dead for it. Each worker's heartbeat becomes now and each lease it
/// holds lasts its length from now. (A worker that did die meanwhile is
/// taken for dead one lease later.) Run first on every new connection of
/// a worker's, before anything that counts who is alive.
fn thaw(conn: &Conn, run: i64) -> Result<(), StoreError> {
    let thawed = conn.returning(
        &format!(
            "WITH silent AS (
               SELECT EXISTS (SELECT 1 FROM shared_workers WHERE run_id = ?1)
                  AND NOT EXISTS (SELECT 1 FROM shared_workers
                                  WHERE run_id = ?1 AND heartbeat + lease_ms > {NOW_MS}) AS yes),
             workers AS (
               UPDATE shared_workers SET heartbeat = {NOW_MS}
               WHERE run_id = ?1 AND (SELECT yes FROM silent)
               RETURNING worker, lease_ms)
             UPDATE shared_sites s SET lease_until = {NOW_MS} + w.lease_ms
             FROM workers w WHERE s.run_id = ?1 AND s.worker = w.worker
             RETURNING s.site"
        ),
        params![run],
        |r| r.get::<_, String>(0),
    )?;
    if !thawed.is_empty() {
        tracing::info!(
            "no worker of run {run} was heard from within its lease (the database was away): every lease starts again ({} sites)",
            thawed.len()
        );
    }
    Ok(())
}

/// Renews a worker's leases and says it is alive, every fifth of its lease
/// (at most every 2 s), on a connection and thread of its own: a long
/// meeting with the run, or the crawl busy otherwise, never has it taken
/// for dead. A lost connection is made again at the next tick.
struct LeaseKeeper {
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl LeaseKeeper {
    fn start(
        conn: Conn,
        run: i64,
        worker: &str,
        lease: Duration,
        ride: Option<RideOut>,
    ) -> Result<LeaseKeeper, StoreError> {
        let every = (lease / 5).clamp(Duration::from_millis(100), Duration::from_secs(2));
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let worker = worker.to_string();
        let lease_ms = lease.as_millis().min(i64::MAX as u128) as i64;
        let thread = std::thread::Builder::new()
            .name("lease-keeper".into())
            .spawn(move || {
                let mut lost = false;
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(every)
                {
                    if lost {
                        // Quietly: the worker's own statements say when
                        // the database is away and when it is back.
                        if conn.reconnect().and_then(|()| thaw(&conn, run)).is_err() {
                            continue;
                        }
                        lost = false;
                    }
                    if let Err(e) = renew(&conn, run, &worker, lease_ms) {
                        lost = ride.is_some() && e.is_lost();
                        if !lost {
                            tracing::debug!("the leases of worker {worker} were not renewed: {e}");
                        }
                    }
                }
            })
            .map_err(|e| StoreError::Io(format!("cannot start the lease keeper: {e}")))?;
        Ok(LeaseKeeper {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for LeaseKeeper {
    fn drop(&mut self) {
        self.stop.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Say `worker` is alive and renew every lease it holds (not whether it
/// is idle: that is said at its meetings).
fn renew(conn: &Conn, run: i64, worker: &str, lease_ms: i64) -> Result<(), StoreError> {
    conn.execute(
        &format!(
            "UPDATE shared_workers SET heartbeat = {NOW_MS} WHERE run_id = ?1 AND worker = ?2"
        ),
        params![run, worker],
    )?;
    conn.execute(
        &format!(
            "UPDATE shared_sites SET lease_until = {NOW_MS} + ?3
             WHERE run_id = ?1 AND worker = ?2"
        ),
        params![run, worker, lease_ms],
    )?;
    Ok(())
}

impl SharedRun {
    /// Run `f` on this worker's connection, again whole after a lost
    /// connection is made again (the run thawed first); `f` is told
    /// whether an earlier attempt was lost.
    fn retry<T>(
        &self,
        what: &str,
        f: impl FnMut(&Conn, bool) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let run = self.run;
        reconnect::retrying(&self.conn, self.ride, what, &|c| thaw(c, run), f)
    }

    /// The run.
    pub fn run(&self) -> i64 {
        self.run
    }

    /// This worker's name.
    pub fn worker(&self) -> &str {
        &self.worker
    }

    /// Offer reaches to the shared frontier: each (URL, task, traverse)
    /// once per run, whoever offers it first; their sites become claimable.
    pub fn offer(&self, reaches: &[SharedReach]) -> Result<(), StoreError> {
        if reaches.is_empty() {
            return Ok(());
        }
        // Offered twice, a reach is kept once (`ON CONFLICT DO NOTHING`).
        self.retry("offering reaches", |c, _| {
            let tx = c.transaction(TxMode::Deferred)?;
            insert_reaches(&tx, self.run, reaches)?;
            tx.commit()
        })
    }

    /// Hand sites this worker holds back to the run, so that a worker
    /// with fewer than its share claims them (rebalancing): `reaches` (what
    /// this worker's tasks reached on them and have not settled) are
    /// offered, every reach of theirs becomes untaken, and each site's
    /// lease is let go. `pause` is, per site, how long its next request
    /// must wait (its politeness interval from this worker's last
    /// request): a claim returns what is left of it. Returns the sites
    /// let go (those this worker still held). Run twice, it does what it
    /// did once.
    pub fn release(
        &self,
        sites: &[(String, Duration)],
        reaches: &[SharedReach],
    ) -> Result<Vec<String>, StoreError> {
        if sites.is_empty() {
            return Ok(Vec::new());
        }
        let names: Vec<Option<&str>> = sites.iter().map(|(s, _)| Some(s.as_str())).collect();
        let pauses: Vec<Option<i64>> = sites
            .iter()
            .map(|(_, p)| Some(p.as_millis().min(i64::MAX as u128) as i64))
            .collect();
        self.retry("handing sites back", |c, _| {
            let tx = c.transaction(TxMode::Deferred)?;
            insert_reaches(&tx, self.run, reaches)?;
            tx.execute(
                "UPDATE shared_frontier SET taken = 0
                 WHERE run_id = ?1 AND site = ANY(?2::text[])
                   AND site IN (SELECT site FROM shared_sites WHERE run_id = ?1 AND worker = ?3)",
                params![self.run, Texts(&names), self.worker],
            )?;
            let let_go = tx.returning(
                &format!(
                    "UPDATE shared_sites s SET worker = NULL, lease_until = {NOW_MS} + p.pause
                     FROM unnest(?2::text[], ?3::bigint[]) AS p(site, pause)
                     WHERE s.run_id = ?1 AND s.site = p.site AND s.worker = ?4
                     RETURNING s.site"
                ),
                params![self.run, Texts(&names), Ints(&pauses), self.worker],
                |r| r.get::<_, String>(0),
            )?;
            tx.commit()?;
            Ok(let_go)
        })
    }

    /// Claim up to `most` sites no live worker holds: those with reaches
    /// nobody has taken, and those whose holder's lease ran out (a worker
    /// that died). Returns the sites claimed, each with its lease's
    /// generation (more than 1: a worker held it before, and what it
    /// checked is in the store) and how long its next request must wait
    /// (a site handed back by [`SharedRun::release`] keeps the politeness
    /// its last holder owed it). A claim whose answer was lost with the
    /// connection is not lost: its sites are this worker's, and the next
    /// [`SharedRun::heartbeat`] returns them.
    pub fn claim(&self, most: usize) -> Result<Vec<ClaimedSite>, StoreError> {
        if most == 0 {
            return Ok(Vec::new());
        }
        self.retry("claiming sites", |c, _| {
            c.returning(
                &format!(
                    "WITH free AS (
                       SELECT s.site, s.worker IS NULL AND s.lease_until > {NOW_MS} AS paused,
                              s.lease_until - {NOW_MS} AS left_ms
                       FROM shared_sites s
                       WHERE s.run_id = ?1
                         AND ((s.worker IS NULL AND EXISTS (
                                SELECT 1 FROM shared_frontier f
                                WHERE f.run_id = ?1 AND f.site = s.site AND f.taken = 0))
                              OR (s.worker IS NOT NULL AND s.worker <> ?2 AND s.lease_until < {NOW_MS}))
                       ORDER BY s.site LIMIT ?4
                       FOR UPDATE SKIP LOCKED)
                     UPDATE shared_sites s SET worker = ?2, lease_until = {NOW_MS} + ?3,
                       generation = generation + 1
                     FROM free
                     WHERE s.run_id = ?1 AND s.site = free.site
                     RETURNING s.site, s.generation,
                               CASE WHEN free.paused THEN free.left_ms ELSE 0 END"
                ),
                params![self.run, self.worker, self.lease_ms, most as i64],
                |r| {
                    let wait: i64 = r.get(2)?;
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        Duration::from_millis(wait.max(0) as u64),
                    ))
                },
            )
        })
    }

    /// How many sites are waiting for a worker, how many live workers
    /// hold, and how many workers are alive (this one included): what a
    /// fair claim is.
    pub fn claimable(&self) -> Result<(i64, i64, i64), StoreError> {
        self.retry("counting sites", |c, _| {
            c.query_row(
                &format!(
                    "SELECT
                       (SELECT count(*) FROM shared_sites s WHERE s.run_id = ?1
                          AND ((s.worker IS NULL AND EXISTS (SELECT 1 FROM shared_frontier f
                                 WHERE f.run_id = ?1 AND f.site = s.site AND f.taken = 0))
                               OR (s.worker IS NOT NULL AND s.lease_until < {NOW_MS}))),
                       (SELECT count(*) FROM shared_sites s WHERE s.run_id = ?1
                          AND s.worker IS NOT NULL AND s.lease_until >= {NOW_MS}),
                       (SELECT count(*) FROM shared_workers w WHERE w.run_id = ?1
                          AND w.heartbeat + w.lease_ms > {NOW_MS})"
                ),
                params![self.run],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
        })
    }

    /// Take the reaches of `sites` that this worker holds (a site it
    /// thinks it holds but lost is left to its holder): with `all`, every
    /// reach of theirs (a site just claimed: what its last holder took
    /// may not all be stored), else those not taken yet. Taking any marks
    /// this worker busy in the same transaction, so that no one sees the
    /// frontier drained and this worker idle while it has work. A take
    /// whose answer was lost with the connection may have been kept: it
    /// is asked again for every reach of the sites (the crawl knows those
    /// it had already).
    pub fn take(&self, sites: &[String], all: bool) -> Result<Vec<SharedReach>, StoreError> {
        if sites.is_empty() {
            return Ok(Vec::new());
        }
        let sites: Vec<Option<&str>> = sites.iter().map(|s| Some(s.as_str())).collect();
        let rows = self.retry("taking reaches", |c, again| {
            let tx = c.transaction(TxMode::Deferred)?;
            // Two statements, so that each is planned for its rows: the
            // untaken ones through their partial index.
            let sql = match all || again {
                true => "UPDATE shared_frontier SET taken = 1
                         WHERE run_id = ?1 AND site = ANY(?2::text[])
                           AND site IN (SELECT site FROM shared_sites
                                        WHERE run_id = ?1 AND worker = ?3)
                         RETURNING id, site, url, task_id, traverse, kind, referrer, decision, reason, depth",
                false => "UPDATE shared_frontier SET taken = 1
                          WHERE run_id = ?1 AND site = ANY(?2::text[]) AND taken = 0
                            AND site IN (SELECT site FROM shared_sites
                                         WHERE run_id = ?1 AND worker = ?3)
                          RETURNING id, site, url, task_id, traverse, kind, referrer, decision, reason, depth",
            };
            let rows = tx.returning(sql, params![self.run, Texts(&sites), self.worker], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    SharedReach {
                        site: r.get(1)?,
                        url: r.get(2)?,
                        task: r.get(3)?,
                        traverse: r.get::<_, i64>(4)? != 0,
                        kind: r.get(5)?,
                        referrer: r.get(6)?,
                        decision: r.get(7)?,
                        reason: r.get(8)?,
                        depth: r.get(9)?,
                    },
                ))
            })?;
            if !rows.is_empty() {
                tx.execute(
                    "UPDATE shared_workers SET idle_in = NULL WHERE run_id = ?1 AND worker = ?2",
                    params![self.run, self.worker],
                )?;
            }
            tx.commit()?;
            Ok(rows)
        })?;
        let mut rows = rows;
        // In the order they were offered: the first reach of a URL stands,
        // as in one process.
        rows.sort_unstable_by_key(|(id, _)| *id);
        Ok(rows.into_iter().map(|(_, r)| r).collect())
    }

    /// Renew this worker's leases and say it is alive, idle in `idle_in`
    /// (`None`: busy). Returns the sites it holds, with their leases'
    /// generations: one missing from those it thought it held, or of
    /// another generation, was taken over (its lease had run out).
    pub fn heartbeat(&self, idle_in: Option<SharedPhase>) -> Result<Vec<HeldSite>, StoreError> {
        self.retry("renewing the leases", |c, _| {
            let tx = c.transaction(TxMode::Deferred)?;
            tx.execute(
                &format!(
                    "UPDATE shared_workers SET heartbeat = {NOW_MS}, idle_in = ?3
                     WHERE run_id = ?1 AND worker = ?2"
                ),
                params![self.run, self.worker, idle_in.map(SharedPhase::as_str)],
            )?;
            let held = tx.returning(
                &format!(
                    "UPDATE shared_sites SET lease_until = {NOW_MS} + ?3
                     WHERE run_id = ?1 AND worker = ?2 RETURNING site, generation"
                ),
                params![self.run, self.worker, self.lease_ms],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            tx.commit()?;
            Ok(held)
        })
    }

    /// The run's phase.
    pub fn phase(&self) -> Result<SharedPhase, StoreError> {
        let phase: String = self.retry("reading the run's phase", |c, _| {
            c.query_row(
                "SELECT phase FROM shared_runs WHERE run_id = ?1",
                params![self.run],
                |r| r.get(0),
            )
        })?;
        Ok(SharedPhase::parse(&phase))
    }

    /// Move the run from phase `from` to the next, if the frontier is
    /// drained there: no reach untaken, every live worker idle in `from`,
    /// and every site held by one of them (a dead worker's sites are taken
    /// over first). True when this call moved it (a move whose answer was
    /// lost reads as false: the caller reads the phase).
    pub fn advance(&self, from: SharedPhase) -> Result<bool, StoreError> {
        let to = match from {
            SharedPhase::Documents => SharedPhase::Leaves,
            SharedPhase::Leaves => SharedPhase::Crawled,
            _ => return Ok(false),
        };
        let moved = self.retry("moving the run's phase on", |c, _| {
            c.execute(
                &format!(
                    "UPDATE shared_runs SET phase = ?3 WHERE run_id = ?1 AND phase = ?2
                       AND NOT EXISTS (SELECT 1 FROM shared_frontier
                                       WHERE run_id = ?1 AND taken = 0)
                       AND NOT EXISTS (SELECT 1 FROM shared_workers
                                       WHERE run_id = ?1 AND heartbeat + lease_ms > {NOW_MS}
                                         AND idle_in IS DISTINCT FROM ?2)
                       AND NOT EXISTS (SELECT 1 FROM shared_sites s
                                       WHERE s.run_id = ?1 AND s.worker IS NOT NULL
                                         AND NOT EXISTS (
                                           SELECT 1 FROM shared_workers w
                                           WHERE w.run_id = ?1 AND w.worker = s.worker
                                             AND w.heartbeat + w.lease_ms > {NOW_MS} AND w.idle_in = ?2))"
                ),
                params![self.run, from.as_str(), to.as_str()],
            )
        })?;
        Ok(moved == 1)
    }

    /// Give up this worker's sites (their reaches become claimable again,
    /// whole) and leave the run: a worker stopped before the end.
    pub fn leave(&self) -> Result<(), StoreError> {
        self.retry("leaving the run", |c, _| {
            let tx = c.transaction(TxMode::Deferred)?;
            tx.execute(
                "UPDATE shared_frontier SET taken = 0 WHERE run_id = ?1 AND site IN (
                   SELECT site FROM shared_sites WHERE run_id = ?1 AND worker = ?2)",
                params![self.run, self.worker],
            )?;
            tx.execute(
                "UPDATE shared_sites SET worker = NULL, lease_until = 0
                 WHERE run_id = ?1 AND worker = ?2",
                params![self.run, self.worker],
            )?;
            tx.execute(
                "DELETE FROM shared_workers WHERE run_id = ?1 AND worker = ?2",
                params![self.run, self.worker],
            )?;
            tx.commit()
        })
    }

    /// Once the run is crawled and this worker has stored all it holds:
    /// say so, and wait until every other live worker has too or another
    /// finishes the run (a worker that died meanwhile stops counting when
    /// its lease runs out). True for the worker that finishes it: it runs
    /// the report stage and mail, once for the run. The run's frontier is
    /// deleted then; its results stay.
    pub fn stored_all(&self) -> Result<bool, StoreError> {
        loop {
            if self.try_to_finish()? {
                return Ok(true);
            }
            if self.phase()? == SharedPhase::Finishing {
                return Ok(false);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Say this worker stored all it holds; finish the run if every other
    /// live worker has (true: this one finishes it). A claim of the
    /// finish whose answer was lost is found again by its name.
    fn try_to_finish(&self) -> Result<bool, StoreError> {
        let won = self.retry("finishing the run", |c, again| {
            c.execute(
                &format!(
                    "UPDATE shared_workers SET idle_in = 'stored', heartbeat = {NOW_MS}
                     WHERE run_id = ?1 AND worker = ?2"
                ),
                params![self.run, self.worker],
            )?;
            let won = c.execute(
                &format!(
                    "UPDATE shared_runs SET phase = 'finishing', finisher = ?2
                     WHERE run_id = ?1 AND phase = 'crawled'
                       AND NOT EXISTS (SELECT 1 FROM shared_workers
                                       WHERE run_id = ?1 AND heartbeat + lease_ms > {NOW_MS}
                                         AND idle_in IS DISTINCT FROM 'stored')"
                ),
                params![self.run, self.worker],
            )? == 1;
            match won || !again {
                true => Ok(won),
                false => c.query_row(
                    "SELECT EXISTS (SELECT 1 FROM shared_runs WHERE run_id = ?1
                                      AND phase = 'finishing' AND finisher = ?2)",
                    params![self.run, self.worker],
                    |r| r.get(0),
                ),
            }
        })?;
        if won {
            self.retry("deleting the run's frontier", |c, _| {
                let tx = c.transaction(TxMode::Deferred)?;
                for table in ["shared_frontier", "shared_sites", "shared_workers"] {
                    tx.execute(
                        &format!("DELETE FROM {table} WHERE run_id = ?1"),
                        params![self.run],
                    )?;
                }
                tx.commit()
            })?;
        }
        Ok(won)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spinneret_core::model::TaskKind;

    fn reach(site: &str, url: &str, task: i64) -> SharedReach {
        SharedReach {
            site: site.into(),
            url: url.into(),
            task,
            traverse: true,
            kind: "a".into(),
            referrer: None,
            decision: "traverse".into(),
            reason: String::new(),
            depth: 1,
        }
    }

    /// The sites claimed and their generations.
    fn sites(claimed: Vec<ClaimedSite>) -> Vec<(String, i64)> {
        claimed.into_iter().map(|(s, g, _)| (s, g)).collect()
    }

    fn task() -> TaskRecord<'static> {
        TaskRecord {
            name: "site",
            kind: TaskKind::Site,
            top: "http://a.example/",
            email: None,
            output: std::path::Path::new("out"),
            changed_days: 7,
            expiring_days: 3,
        }
    }

    /// A store on a new database of the suite's server, and a run of its
    /// (with the task's id); `None` without PostgreSQL.
    fn a_shared_run() -> Option<(Store, RunIds)> {
        let pg = crate::testing::TestPg::shared()?;
        let store = Store::open_at(StoreLocation::Postgres(Box::new(pg.database()))).unwrap();
        let ids = store
            .join_shared_run(Some("c.toml"), "{}", &[task()])
            .unwrap();
        Some((store, ids))
    }

    /// A worker of the run with its lease keeper stopped: its leases run
    /// out as those of a worker not heard from.
    fn silent(store: &Store, run: i64, name: &str, lease: Duration) -> SharedRun {
        let mut w = store.shared_run(run, name, lease).unwrap();
        w.keeper = None;
        w
    }

    /// Every worker of `run` last heard from, and every lease ended, long ago.
    fn all_silent(store: &Store, run: i64) {
        store
            .conn
            .execute(
                "UPDATE shared_workers SET heartbeat = heartbeat - 3600000 WHERE run_id = ?1",
                params![run],
            )
            .unwrap();
        store
            .conn
            .execute(
                "UPDATE shared_sites SET lease_until = lease_until - 3600000
                 WHERE run_id = ?1 AND worker IS NOT NULL",
                params![run],
            )
            .unwrap();
    }

    /// A run no worker was heard from (the database away for longer than
    /// every lease) is thawed by the first worker back: every lease starts
    /// again, no site changes hands. A run where one worker was heard
    /// from is not: the silent one is taken for dead.
    #[test]
    fn the_first_worker_back_thaws_a_run_no_one_was_heard_from() {
        let Some((store, ids)) = a_shared_run() else {
            return;
        };
        let t = ids.tasks["site"];
        let lease = Duration::from_secs(60);
        let w1 = silent(&store, ids.run, "w1", lease);
        let w2 = silent(&store, ids.run, "w2", lease);
        w1.offer(&[
            reach("a:80", "http://a.example/", t),
            reach("b:80", "http://b.example/", t),
        ])
        .unwrap();
        assert_eq!(sites(w1.claim(1).unwrap()), [("a:80".into(), 1)]);
        assert_eq!(sites(w2.claim(1).unwrap()), [("b:80".into(), 1)]);

        all_silent(&store, ids.run);
        // Before the thaw, each would take the other's site for dead.
        assert_eq!(w1.claimable().unwrap(), (2, 0, 0));
        thaw(&w1.conn, ids.run).unwrap();
        assert_eq!(w1.claimable().unwrap(), (0, 2, 2), "every lease again");
        assert!(w1.claim(5).unwrap().is_empty());
        assert!(w2.claim(5).unwrap().is_empty());
        assert_eq!(w1.heartbeat(None).unwrap(), [("a:80".into(), 1)]);
        assert_eq!(w2.heartbeat(None).unwrap(), [("b:80".into(), 1)]);
        // Thawed once: a second thaw finds workers heard from.
        thaw(&w2.conn, ids.run).unwrap();
        assert_eq!(w2.heartbeat(None).unwrap(), [("b:80".into(), 1)]);

        // Only w2 silent: w1 was heard from, so w2 is taken for dead.
        store
            .conn
            .execute(
                "UPDATE shared_workers SET heartbeat = heartbeat - 3600000
                 WHERE run_id = ?1 AND worker = 'w2'",
                params![ids.run],
            )
            .unwrap();
        store
            .conn
            .execute(
                "UPDATE shared_sites SET lease_until = lease_until - 3600000
                 WHERE run_id = ?1 AND worker = 'w2'",
                params![ids.run],
            )
            .unwrap();
        thaw(&w1.conn, ids.run).unwrap();
        assert_eq!(sites(w1.claim(5).unwrap()), [("b:80".into(), 2)]);
        assert!(w2.heartbeat(None).unwrap().is_empty(), "w2 lost b");
    }

    /// `take` takes only the reaches of sites the worker holds: not those
    /// of a site another holds, nor of one it held and lost, nor of one
    /// nobody holds; those stay untaken for their holder.
    #[test]
    fn take_refuses_the_reaches_of_sites_the_worker_does_not_hold() {
        let Some((store, ids)) = a_shared_run() else {
            return;
        };
        let t = ids.tasks["site"];
        let lease = Duration::from_secs(60);
        let w1 = store.shared_run(ids.run, "w1", lease).unwrap();
        let w2 = silent(&store, ids.run, "w2", lease);
        let (a, b, c) = (
            reach("a:80", "http://a.example/", t),
            reach("b:80", "http://b.example/", t),
            reach("c:80", "http://c.example/", t),
        );
        w1.offer(&[a.clone(), b.clone(), c.clone()]).unwrap();
        assert_eq!(sites(w1.claim(1).unwrap()), [("a:80".into(), 1)]);
        assert_eq!(sites(w2.claim(1).unwrap()), [("b:80".into(), 1)]);
        // b is w2's, c nobody's: w1 takes neither, even asked for all.
        let asked: Vec<String> = ["a:80", "b:80", "c:80"].map(String::from).to_vec();
        assert_eq!(w1.take(&asked, true).unwrap(), std::slice::from_ref(&a));
        assert_eq!(w1.claimable().unwrap().0, 1, "c is still waiting");
        // w2's lease runs out and w1 takes b over: w2 takes nothing of it
        // (and learns it lost b at its heartbeat).
        store
            .conn
            .execute(
                "UPDATE shared_sites SET lease_until = 0 WHERE run_id = ?1 AND worker = 'w2'",
                params![ids.run],
            )
            .unwrap();
        assert_eq!(sites(w1.claim(1).unwrap()), [("b:80".into(), 2)]);
        assert!(w2.take(&["b:80".into()], true).unwrap().is_empty());
        assert!(w2.heartbeat(None).unwrap().is_empty());
        assert_eq!(w1.take(&["b:80".into()], false).unwrap(), [b]);
        assert_eq!(sites(w1.claim(1).unwrap()), [("c:80".into(), 1)]);
        assert_eq!(w1.take(&["c:80".into()], false).unwrap(), [c]);
    }

    /// A worker over its share hands a site back: what it reached there
    /// is offered, every reach of the site is untaken again, and the
    /// worker that claims it (a new generation: what was checked there is
    /// in the store) waits what is left of the site's politeness.
    #[test]
    fn a_site_handed_back_is_claimed_whole_by_another_worker() {
        let Some((store, ids)) = a_shared_run() else {
            return;
        };
        let t = ids.tasks["site"];
        let lease = Duration::from_secs(60);
        let w1 = store.shared_run(ids.run, "w1", lease).unwrap();
        let w2 = store.shared_run(ids.run, "w2", lease).unwrap();
        let (a, b) = (
            reach("a:80", "http://a.example/", t),
            reach("b:80", "http://b.example/", t),
        );
        w1.offer(&[a.clone(), b.clone()]).unwrap();
        assert_eq!(w1.claim(5).unwrap().len(), 2);
        assert_eq!(
            w1.take(&["a:80".into(), "b:80".into()], false)
                .unwrap()
                .len(),
            2
        );
        assert_eq!(w1.claimable().unwrap(), (0, 2, 2));
        assert!(w2.claim(5).unwrap().is_empty(), "both are w1's");
        // w1 found b's page 2 and had not checked it: offered with b.
        let b2 = reach("b:80", "http://b.example/2", t);
        let released = w1
            .release(
                &[("b:80".into(), Duration::from_secs(30))],
                std::slice::from_ref(&b2),
            )
            .unwrap();
        assert_eq!(released, ["b:80"]);
        assert_eq!(w1.heartbeat(None).unwrap(), [("a:80".into(), 1)]);
        assert!(w1.take(&["b:80".into()], true).unwrap().is_empty());
        assert_eq!(w2.claimable().unwrap(), (1, 1, 2));
        // Handed back twice, once.
        assert!(
            w1.release(&[("b:80".into(), Duration::ZERO)], &[])
                .unwrap()
                .is_empty()
        );
        let claimed = w2.claim(5).unwrap();
        assert_eq!(sites(claimed.clone()), [("b:80".into(), 2)]);
        let wait = claimed[0].2;
        assert!(
            wait > Duration::from_secs(20) && wait <= Duration::from_secs(30),
            "{wait:?}"
        );
        assert_eq!(w2.take(&["b:80".into()], true).unwrap(), [b, b2]);
        // A dead worker's site is claimed without a wait.
        w2.leave().unwrap();
        assert_eq!(w1.claim(5).unwrap(), [("b:80".into(), 3, Duration::ZERO)]);
    }

    /// The protocol on a real server: joining, offering once, claiming,
    /// taking, the phases, leaving, a lease taken over, finishing once.
    #[test]
    fn workers_share_a_run_through_the_database() {
        let Some(pg) = crate::testing::TestPg::shared() else {
            return;
        };
        let location = StoreLocation::Postgres(Box::new(pg.database()));
        let store = Store::open_at(location).unwrap();
        let task = TaskRecord {
            name: "site",
            kind: TaskKind::Site,
            top: "http://a.example/",
            email: None,
            output: std::path::Path::new("out"),
            changed_days: 7,
            expiring_days: 3,
        };
        // Workers started together join one run; another configuration's
        // workers begin their own.
        let ids = store
            .join_shared_run(Some("c.toml"), "{}", std::slice::from_ref(&task))
            .unwrap();
        let again = store
            .join_shared_run(Some("c.toml"), "{}", std::slice::from_ref(&task))
            .unwrap();
        assert_eq!(again.run, ids.run);
        let other = store
            .join_shared_run(Some("d.toml"), "{}", std::slice::from_ref(&task))
            .unwrap();
        assert_ne!(other.run, ids.run);
        let t = ids.tasks["site"];
        let lease = Duration::from_secs(60);
        let w1 = store.shared_run(ids.run, "w1", lease).unwrap();
        let w2 = store.shared_run(ids.run, "w2", lease).unwrap();
        // A live worker's name is not taken twice.
        let err = store.shared_run(ids.run, "w2", lease).err().unwrap();
        assert!(
            err.to_string().contains("give this one another --name"),
            "{err}"
        );

        // Each (URL, task, traverse) once, whoever offers it.
        let a = reach("a:80", "http://a.example/", t);
        let b = reach("b:80", "http://b.example/", t);
        w1.offer(&[a.clone(), b.clone()]).unwrap();
        w2.offer(std::slice::from_ref(&a)).unwrap();
        assert_eq!(w1.claimable().unwrap(), (2, 0, 2));
        // A site goes to one worker.
        assert_eq!(sites(w1.claim(1).unwrap()), [("a:80".into(), 1)]);
        assert_eq!(sites(w2.claim(5).unwrap()), [("b:80".into(), 1)]);
        assert!(w1.claim(5).unwrap().is_empty());
        assert_eq!(
            w1.take(&["a:80".into()], false).unwrap(),
            std::slice::from_ref(&a)
        );
        assert!(w1.take(&["a:80".into()], false).unwrap().is_empty());

        // The documents phase ends when nothing is untaken and every live
        // worker is idle in it.
        w1.heartbeat(Some(SharedPhase::Documents)).unwrap();
        assert!(
            !w1.advance(SharedPhase::Documents).unwrap(),
            "b's reach is untaken"
        );
        assert_eq!(
            w2.take(&["b:80".into()], false).unwrap(),
            std::slice::from_ref(&b)
        );
        assert!(!w1.advance(SharedPhase::Documents).unwrap(), "w2 is busy");
        w2.heartbeat(Some(SharedPhase::Documents)).unwrap();
        assert!(w2.advance(SharedPhase::Documents).unwrap());
        assert_eq!(w1.phase().unwrap(), SharedPhase::Leaves);
        assert!(!w1.advance(SharedPhase::Documents).unwrap(), "once");

        // A worker that stops hands its sites back, whole.
        w2.leave().unwrap();
        assert_eq!(sites(w1.claim(5).unwrap()), [("b:80".into(), 2)]);
        assert_eq!(
            w1.take(&["b:80".into()], true).unwrap(),
            std::slice::from_ref(&b)
        );

        // A worker whose lease runs out has its sites taken over; it finds
        // out at its next heartbeat.
        let w3 = store
            .shared_run(ids.run, "w3", Duration::from_millis(1))
            .unwrap();
        let c = reach("c:80", "http://c.example/", t);
        w3.offer(std::slice::from_ref(&c)).unwrap();
        assert_eq!(sites(w3.claim(5).unwrap()), [("c:80".into(), 1)]);
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(sites(w1.claim(5).unwrap()), [("c:80".into(), 2)]);
        assert!(w3.heartbeat(None).unwrap().is_empty());
        assert_eq!(w1.take(&["c:80".into()], true).unwrap(), [c]);

        // The run is finished once, by the last worker to store what it had.
        w1.heartbeat(Some(SharedPhase::Leaves)).unwrap();
        assert!(w1.advance(SharedPhase::Leaves).unwrap());
        let w4 = store.shared_run(ids.run, "w4", lease).unwrap();
        assert!(!w1.try_to_finish().unwrap(), "w4 has not stored all yet");
        assert!(w4.stored_all().unwrap());
        assert!(!w1.stored_all().unwrap(), "w4 finishes it");
        assert_eq!(w4.phase().unwrap(), SharedPhase::Finishing);
        // A finished run is not joined again.
        let next = store
            .join_shared_run(Some("c.toml"), "{}", &[task])
            .unwrap();
        assert_ne!(next.run, ids.run);
    }

    #[test]
    fn a_store_file_has_no_shared_runs() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.db")).unwrap();
        let err = store.join_shared_run(None, "{}", &[]).unwrap_err();
        assert!(err.to_string().contains("PostgreSQL"), "{err}");
    }
}
