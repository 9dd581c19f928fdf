//! Leases in the fleet's engines, against real servers started by tests/servers (no mock):
//! PostgreSQL, MariaDB (`lease=mysql://…`) and a Redis Cluster of 3 primaries. For each
//! engine: separate processes get distinct values and repeat no ID; a holder killed with
//! SIGKILL frees its value after the TTL; the server losing its data (TRUNCATE, FLUSHALL) and
//! restarting, or stalled (SIGSTOP) past the TTL, while holders issue, repeats nothing; a host
//! lease; a process whose clock is 10 s ahead (libfaketime) is refused, naming both clocks;
//! and on the cluster, a forced failover while holders issue.
//!
//! Times are judged by the IDs themselves, never by when this thread looked; waits for what
//! must happen have deadlines of minutes. Worker processes are this program run again
//! (`worker_process`, told what to do by `SNOWFLAKE_FLEET_WORKER`).
#![cfg(all(feature = "std", unix))]

#[path = "../../tests/servers/servers.rs"]
mod servers;
use servers::Servers;
use snowflake_core::{Error, ErrorKind, Generator, Layout, Options};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const LAYOUT: &str = "time:41,worker:3,sequence:12;epoch=1288834974657";
const TWO: &str = "time:41,worker:1,sequence:12;epoch=1288834974657";
const MINUTES: Duration = Duration::from_secs(240);
const FAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Postgres,
    Mariadb,
    Cluster,
}

/// A server of one engine, and how a test drives it.
struct Engine {
    kind: Kind,
    servers: Servers,
}

impl Engine {
    fn start(kind: Kind) -> Engine {
        let servers = match kind {
            Kind::Postgres => Servers::start("postgres", &["--tcp"]),
            Kind::Mariadb => Servers::start("mariadb", &["--password", "m4ria-pw"]),
            Kind::Cluster => Servers::start("redis-cluster", &["--primaries", "3", "--replicas", "1"]),
        };
        Engine { kind, servers }
    }

    /// The lease address (a password in it, for MariaDB).
    fn url(&self) -> String {
        match self.kind {
            Kind::Postgres => self.servers.str("/postgres/dsn").to_string(),
            Kind::Mariadb => self.servers.str("/mariadb/url").to_string(),
            Kind::Cluster => self.servers.str("/cluster/url").to_string(),
        }
    }

    /// Runs SQL as the database's administrator.
    fn sql(&self, statement: &str) -> String {
        match self.kind {
            Kind::Postgres => self.servers.admin_sql("postgres", statement),
            Kind::Mariadb => self.servers.admin_sql("mariadb", statement),
            Kind::Cluster => panic!("no SQL in Redis"),
        }
    }

    /// The store loses every lease and mark.
    fn wipe(&mut self) {
        match self.kind {
            Kind::Cluster => {
                self.servers.command("flushall");
            }
            _ => {
                self.sql("DELETE FROM libsnowflake_leases");
            }
        }
    }

    /// The server (for the cluster: the primary that serves our layout's slot) restarted.
    fn restart(&mut self, layout: &Layout) {
        let line = match self.kind {
            Kind::Cluster => format!("restart owner:{}", slot_key(layout)),
            _ => "restart".to_string(),
        };
        self.servers.command(&line);
        if self.kind == Kind::Cluster {
            self.servers.command("await-ok");
        }
    }

    fn freeze(&mut self, layout: &Layout) -> String {
        let target = match self.kind {
            Kind::Cluster => format!("owner:{}", slot_key(layout)),
            Kind::Postgres => "postgres".into(),
            Kind::Mariadb => "mariadb".into(),
        };
        self.servers.command(&format!("freeze {target}"));
        target
    }
}

/// A key in the slot of every lease key of `layout` (its hash tag).
fn slot_key(layout: &Layout) -> String {
    format!("{{{:016x}}}", layout.fingerprint())
}

fn open_with(layout: &Layout, url: &str, options: &str) -> Result<Generator, Error> {
    let mut o = Options::parse(options)?;
    o.set_text("lease", url)?;
    Generator::new(layout, Default::default(), o)
}

/// [`open_with`], again while a reply did not come in time or every value is held by the late
/// claims of earlier tries (a loaded machine): what a test asserts is what the open gives.
fn open_patiently(layout: &Layout, url: &str, options: &str) -> Generator {
    let start = Instant::now();
    loop {
        match open_with(layout, url, options) {
            Ok(g) => return g,
            Err(e)
                if (e.to_string().contains("in time")
                    || e.to_string().contains("are leased")
                    || matches!(e, Error::LeaseLost))
                    && start.elapsed() < MINUTES =>
            {
                eprintln!("opening again: {e}");
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => panic!("{e}"),
        }
    }
}

fn next_id_patiently(g: &Generator) -> u64 {
    let start = Instant::now();
    loop {
        match g.next_id() {
            Ok(id) => return id,
            Err(e) if e.retry_after_ms().is_some() && start.elapsed() < MINUTES => {
                std::thread::sleep(Duration::from_millis(e.retry_after_ms().unwrap_or(10).clamp(1, 200)));
            }
            Err(e) => panic!("{e}"),
        }
    }
}

fn assert_unique<'a>(all: impl IntoIterator<Item = &'a u64>) -> usize {
    let mut seen = HashSet::new();
    for id in all {
        assert!(seen.insert(*id), "ID {id} was issued twice");
    }
    seen.len()
}

// ---------------------------------------------------------------------------------------------
// Worker processes: `SNOWFLAKE_FLEET_WORKER="<layout>|<options>"`, the lease address in
// `SNOWFLAKE_FLEET_URL`. Prints `OPEN <value>` or `OPENERR <code> <message>`, then `ID <id>`
// lines (and `ERR <code> <message>`) until its stdin closes; then `DONE <claims> <losses>`.

#[test]
fn worker_process() {
    let Ok(spec) = std::env::var("SNOWFLAKE_FLEET_WORKER") else { return };
    let (layout, options) = spec.split_once('|').unwrap();
    let layout = Layout::parse(layout).unwrap();
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    writeln!(out, "OPENING").unwrap();
    out.flush().unwrap();
    // Opened again while the store does not answer a claim in time (a loaded machine, several
    // holders claiming at once): what a test asserts is what an open gives.
    let url = std::env::var("SNOWFLAKE_FLEET_URL").unwrap();
    let start = Instant::now();
    let g = loop {
        match open_with(&layout, &url, options) {
            Ok(g) => break g,
            Err(e) if e.to_string().contains("did not answer in time") && start.elapsed() < MINUTES => {
                eprintln!("opening again: {e}");
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => {
                writeln!(out, "OPENERR {} {e}", e.kind().code()).unwrap();
                return;
            }
        }
    };
    writeln!(out, "OPEN {}", g.stats().lease_value.unwrap()).unwrap();
    out.flush().unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let s = stop.clone();
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
        s.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let mut last_error = String::new();
    while !stop.load(std::sync::atomic::Ordering::SeqCst) {
        for _ in 0..64 {
            match g.next_id() {
                Ok(id) => {
                    writeln!(out, "ID {id}").unwrap();
                    last_error.clear();
                }
                Err(e) => {
                    let line = format!("ERR {} {e}", e.kind().code());
                    if line != last_error {
                        writeln!(out, "{line}").unwrap();
                        last_error = line;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                    break;
                }
            }
        }
        out.flush().unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
    let s = g.stats();
    writeln!(out, "DONE {} {}", s.lease_claims, s.lease_losses).unwrap();
    out.flush().unwrap();
}

struct Worker {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Arc<Mutex<Vec<String>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Worker {
    fn spawn(layout: &str, options: &str, url: &str) -> Worker {
        Worker::spawn_with(layout, options, url, &[])
    }

    fn spawn_with(layout: &str, options: &str, url: &str, env: &[(&str, &str)]) -> Worker {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["worker_process", "--exact", "--nocapture", "--test-threads", "1"])
            .env("SNOWFLAKE_FLEET_WORKER", format!("{layout}|{options}"))
            .env("SNOWFLAKE_FLEET_URL", url)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let lines = Arc::new(Mutex::new(vec![]));
        let l = lines.clone();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if ["OPEN ", "OPENERR ", "ID ", "ERR ", "DONE "].iter().any(|p| line.starts_with(p)) {
                    l.lock().unwrap().push(line);
                }
            }
        });
        Worker { stdin: child.stdin.take(), child, lines, reader: Some(reader) }
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    fn ids(&self) -> Vec<u64> {
        self.lines.lock().unwrap().iter().filter_map(|l| l.strip_prefix("ID ")?.parse().ok()).collect()
    }

    fn count(&self, prefix: &str) -> usize {
        self.lines.lock().unwrap().iter().filter(|l| l.starts_with(prefix)).count()
    }

    fn text(&self) -> String {
        let lines = self.lines.lock().unwrap();
        let other: Vec<&String> = lines.iter().filter(|l| !l.starts_with("ID ")).take(20).collect();
        format!("{} lines; other lines: {other:?}", lines.len())
    }

    fn wait(&self, what: &str, pred: impl Fn(&Worker) -> bool) {
        let start = Instant::now();
        while !pred(self) {
            assert!(
                start.elapsed() < MINUTES,
                "worker {}: no {what} after {MINUTES:?}: {}",
                self.pid(),
                self.text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The line it opened with.
    fn open_line(&self) -> String {
        let opened = |l: &String| l.starts_with("OPEN ") || l.starts_with("OPENERR ");
        self.wait("open", |w| w.lines.lock().unwrap().iter().any(opened));
        self.lines.lock().unwrap().iter().find(|l| opened(l)).unwrap().clone()
    }

    fn opened(&self) -> u64 {
        let line = self.open_line();
        line.strip_prefix("OPEN ").and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{line}"))
    }

    fn finish(mut self) -> Vec<u64> {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        self.reader.take().unwrap().join().unwrap();
        let lines = std::mem::take(&mut *self.lines.lock().unwrap());
        assert!(
            status.success(),
            "worker failed ({status}): {:?}",
            lines.iter().rev().take(10).collect::<Vec<_>>()
        );
        assert!(lines.last().is_some_and(|l| l.starts_with("DONE ")), "{:?}", lines.last());
        lines.iter().filter_map(|l| l.strip_prefix("ID ")?.parse().ok()).collect()
    }

    /// Killed with SIGKILL: the IDs it printed.
    fn kill(mut self) -> Vec<u64> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.reader.take().unwrap().join().unwrap();
        self.ids()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// --- the scenarios, each run on every engine ----------------------------------------------

const OPTIONS: &str = "lease_ttl_ms=3000;max_wait_ms=3000";

/// Four processes, four values; their IDs never repeat; the same values again after they end.
fn distinct_values_across_processes(kind: Kind) {
    let engine = Engine::start(kind);
    let url = engine.url();
    let start = Instant::now();
    let mut all = vec![];
    loop {
        let workers: Vec<Worker> = (0..4).map(|_| Worker::spawn(LAYOUT, OPTIONS, &url)).collect();
        let values: HashSet<u64> = workers.iter().map(Worker::opened).collect();
        assert_eq!(values.len(), 4, "four holders, four values: {values:?}");
        for w in &workers {
            w.wait("1000 IDs", |w| w.ids().len() >= 1000);
        }
        for w in workers {
            all.extend(w.finish());
        }
        assert_unique(&all);
        if values.contains(&0) {
            break;
        }
        // A claim of value 0 whose answer did not come in time (flaky.sh: "PostgreSQL ... did
        // not answer in time") holds 0 until its TTL, and the worker that opened again took
        // another value: no holder of 0 to start above, the case's premise, not its subject.
        // The IDs still repeat nothing (above, across the tries); then the case starts again.
        assert!(start.elapsed() < MINUTES, "value 0 had no holder in any try: {values:?}");
        eprintln!("no worker held value 0 ({values:?}): starting again");
    }
    // Released: a newcomer gets the lowest value, and starts above its last holder's IDs.
    let layout = Layout::parse(LAYOUT).unwrap();
    // A release that did not answer in time (a loaded machine) leaves its value held until its
    // TTL: wait for value 0 to come free, never for a duration.
    let start = Instant::now();
    let g = loop {
        let g = open_patiently(&layout, &url, OPTIONS);
        if g.stats().lease_value == Some(0) {
            break g;
        }
        assert!(start.elapsed() < MINUTES, "value 0 never came free: {:?}", g.stats().lease_value);
        drop(g);
        std::thread::sleep(Duration::from_millis(50));
    };
    let skew = g.stats().clock_skew_ms.expect("a lease across hosts reports the clock skew");
    assert!(skew.abs() < 1000, "this host and the local server share a clock: {skew} ms");
    let fresh: Vec<u64> = (0..1000).map(|_| next_id_patiently(&g)).collect();
    assert_unique(all.iter().chain(&fresh));
    let last_of_zero = all.iter().filter(|&&id| layout.decode(id).unwrap().node.get(1) == 0).max().unwrap();
    assert!(fresh[0] > *last_of_zero, "the next holder of a value starts above the last one's IDs");
}

/// A holder killed with SIGKILL: its value frees once its TTL passes, and the next holder
/// repeats none of its IDs.
fn a_killed_holder(kind: Kind) {
    let engine = Engine::start(kind);
    let url = engine.url();
    let two = Layout::parse(TWO).unwrap();
    let start = Instant::now();
    let (killed, v, other) = loop {
        let killed = Worker::spawn(TWO, OPTIONS, &url);
        let v = killed.opened();
        killed.wait("IDs", |w| w.ids().len() >= 2000);
        let other = open_patiently(&two, &url, OPTIONS);
        if other.stats().lease_value == Some(1 - v) {
            break (killed, v, other);
        }
        // The holder's renewals did not reach the store within its TTL (flaky.sh: PostgreSQL
        // did not answer in time), so its value lapsed and `other` took it: the case's premise,
        // not its subject. The two must still repeat nothing; then the case starts again.
        assert_eq!(other.stats().lease_value, Some(v), "two holders, two values");
        let lapsed = killed.kill();
        let after: Vec<u64> = (0..1000).map(|_| next_id_patiently(&other)).collect();
        assert_unique(lapsed.iter().chain(&after));
        assert!(start.elapsed() < MINUTES, "the holder's lease lapsed in every try");
        eprintln!("the holder of {v} lost it before the case began: starting again");
    };
    let before = killed.kill();
    // The only free value, once the killed holder's claim expires.
    let taker = open_patiently(&two, &url, OPTIONS);
    assert_eq!(taker.stats().lease_value, Some(v));
    let taken: Vec<u64> = (0..2000).map(|_| next_id_patiently(&taker)).collect();
    assert!(taken[0] > *before.iter().max().unwrap());
    let others: Vec<u64> = (0..1000).map(|_| next_id_patiently(&other)).collect();
    assert_unique(before.iter().chain(&taken).chain(&others));
}

/// The store loses every lease and mark (DELETE, FLUSHALL), then its server restarts, while
/// holders issue: they claim again and repeat nothing; a newcomer neither.
fn data_lost_and_restarted(kind: Kind) {
    let mut engine = Engine::start(kind);
    let url = engine.url();
    let layout = Layout::parse(LAYOUT).unwrap();
    let workers: Vec<Worker> = (0..3).map(|_| Worker::spawn(LAYOUT, OPTIONS, &url)).collect();
    for w in &workers {
        w.opened();
        w.wait("IDs", |w| w.ids().len() >= 1000);
    }
    engine.wipe();
    let marks: Vec<usize> = workers.iter().map(|w| w.ids().len()).collect();
    for (w, mark) in workers.iter().zip(&marks) {
        w.wait("IDs after the data loss", |w| w.ids().len() >= mark + 2000);
    }
    engine.restart(&layout);
    let marks: Vec<usize> = workers.iter().map(|w| w.ids().len()).collect();
    for (w, mark) in workers.iter().zip(&marks) {
        w.wait("IDs after the restart", |w| w.ids().len() >= mark + 2000);
    }
    engine.wipe();
    let newcomer = open_patiently(&layout, &url, OPTIONS);
    let fresh: Vec<u64> = (0..2000).map(|_| next_id_patiently(&newcomer)).collect();
    let mut all = fresh;
    for w in workers {
        all.extend(w.finish());
    }
    assert_unique(&all);
}

/// The server stalled (SIGSTOP) past the TTL: holders stop before it, with a lease error, and
/// issue again once it answers; nothing repeats.
fn a_stalled_server(kind: Kind) {
    let mut engine = Engine::start(kind);
    let url = engine.url();
    let layout = Layout::parse(LAYOUT).unwrap();
    let workers: Vec<Worker> = (0..2).map(|_| Worker::spawn(LAYOUT, OPTIONS, &url)).collect();
    for w in &workers {
        w.opened();
        w.wait("IDs", |w| w.ids().len() >= 1000);
    }
    let target = engine.freeze(&layout);
    for w in &workers {
        w.wait("a lease error while the server is stopped", |w| w.count("ERR ERR_SNOWFLAKE_LEASE") > 0);
    }
    // Past the TTL: every claim it held has expired by the store's clock.
    std::thread::sleep(Duration::from_millis(4000));
    engine.servers.command(&format!("thaw {target}"));
    let marks: Vec<usize> = workers.iter().map(|w| w.ids().len()).collect();
    for (w, mark) in workers.iter().zip(&marks) {
        w.wait("IDs once the server answers again", |w| w.ids().len() >= mark + 2000);
    }
    let mut all = vec![];
    for w in workers {
        all.extend(w.finish());
    }
    assert_unique(&all);
}

/// A host lease: three processes with one `shared=` name share one value and one state.
fn a_host_lease(kind: Kind) {
    let engine = Engine::start(kind);
    let url = engine.url();
    let dir = std::env::temp_dir().join(format!("fleet-host-{}-{kind:?}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shm = dir.to_str().unwrap().to_string();
    let options = format!("{OPTIONS};shared=fleet-{kind:?}");
    let workers: Vec<Worker> =
        (0..3).map(|_| Worker::spawn_with(LAYOUT, &options, &url, &[("SNOWFLAKE_SHM_DIR", &shm)])).collect();
    let values: HashSet<u64> = workers.iter().map(Worker::opened).collect();
    assert_eq!(values.len(), 1, "one value for the host: {values:?}");
    for w in &workers {
        w.wait("IDs", |w| w.ids().len() >= 2000);
    }
    // Another host's process (another record directory) gets another value.
    let other_dir = dir.join("other");
    std::fs::create_dir_all(&other_dir).unwrap();
    let other =
        Worker::spawn_with(LAYOUT, &options, &url, &[("SNOWFLAKE_SHM_DIR", other_dir.to_str().unwrap())]);
    assert!(!values.contains(&other.opened()), "another host, another value");
    other.wait("IDs", |w| w.ids().len() >= 1000);
    let mut all = other.finish();
    for w in workers {
        all.extend(w.finish());
    }
    assert_unique(&all);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A host lease whose claim moves: the store loses the host's row and another host claims
/// its value, so one process of the host claims another value for the host. The processes
/// issue on the plain path, which reads no claim epoch (see the generator's `plan_plain`):
/// each goes on with the old claim only within what that claim covered, and joins the new
/// one at its next general call (the host's record is checked every 50 ms). Every process of
/// the host ends up issuing the new value, and nothing repeats, across both hosts.
#[test]
fn a_host_lease_whose_claim_moves_is_joined_and_repeats_nothing() {
    let engine = Engine::start(Kind::Postgres);
    let url = engine.url();
    let layout = Layout::parse(LAYOUT).unwrap();
    let value_of = |id: u64| layout.decode(id).unwrap().node.get(1);
    let dir = std::env::temp_dir().join(format!("fleet-move-{}", std::process::id()));
    let other_dir = dir.join("other");
    std::fs::create_dir_all(&other_dir).unwrap();
    let (shm, other_shm) = (dir.to_str().unwrap(), other_dir.to_str().unwrap());
    let options = format!("{OPTIONS};shared=move");
    let host: Vec<Worker> =
        (0..2).map(|_| Worker::spawn_with(LAYOUT, &options, &url, &[("SNOWFLAKE_SHM_DIR", shm)])).collect();
    let held = host[0].opened();
    assert_eq!(host[1].opened(), held, "one value for the host");
    for w in &host {
        w.wait("IDs", |w| w.ids().len() >= 1000);
    }
    // Rounds until another host took the host's value: a round whose host claimed again
    // before the other host's process did (a slow start) gets its own value back. The other
    // hosts' processes are kept, so the host never gets a value back it lost.
    let (mut others, start) = (vec![], Instant::now());
    let lost = loop {
        assert!(
            others.len() < 6 && start.elapsed() < MINUTES,
            "the host's value never moved in {} rounds",
            others.len()
        );
        let rows = engine.sql(&format!("DELETE FROM libsnowflake_leases WHERE name LIKE '%worker={held}'"));
        let other = Worker::spawn_with(LAYOUT, OPTIONS, &url, &[("SNOWFLAKE_SHM_DIR", other_shm)]);
        let took = other.opened();
        others.push(other);
        // Every process of the host issues with the host's value again, whichever it is.
        let seen: Vec<usize> = host.iter().map(|w| w.ids().len()).collect();
        let moved_to = |w: &Worker, from: usize| {
            w.ids().get(from..)?.iter().map(|&id| value_of(id)).find(|&v| v != held)
        };
        if took != held {
            eprintln!(
                "round {}: the host kept {held} ({rows:?} deleted), the other host took {took}",
                others.len()
            );
            continue;
        }
        for (w, &from) in host.iter().zip(&seen) {
            w.wait("IDs of the host's new value", |w| moved_to(w, from).is_some());
        }
        let new: HashSet<u64> = host.iter().zip(&seen).filter_map(|(w, &from)| moved_to(w, from)).collect();
        assert_eq!(new.len(), 1, "the host's processes joined one claim: {new:?}");
        assert!(!new.contains(&took));
        break held;
    };
    for w in &others {
        w.wait("IDs", |w| w.ids().len() >= 1000);
    }
    let (mut all, mut host_ids) = (vec![], HashSet::new());
    for (i, w) in host.into_iter().chain(others).enumerate() {
        let ids = w.finish();
        if i < 2 {
            host_ids.extend(ids.iter().copied());
        }
        all.extend(ids);
    }
    assert_unique(&all);
    // Stronger than no repeat: the host issued with the value it lost only below where the
    // value's next holder started (the old claim's validity and reservation end before it).
    let (old, next): (Vec<u64>, Vec<u64>) =
        all.iter().copied().filter(|&id| value_of(id) == lost).partition(|id| host_ids.contains(id));
    let (last_old, first_next) = (old.iter().max().unwrap(), next.iter().min().unwrap());
    assert!(
        last_old < first_next,
        "the host's last ID of {lost} ({last_old}) is not below its next holder's first ({first_next})"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A process whose clock is 10 s ahead (libfaketime) claims nothing: the refusal names both
/// clocks, the skew and the option; with the option raised it claims.
fn a_clock_ahead_is_refused(kind: Kind) {
    assert!(std::path::Path::new(FAKETIME).exists(), "libfaketime (apt faketime) is needed: {FAKETIME}");
    let engine = Engine::start(kind);
    let url = engine.url();
    let ahead = [("LD_PRELOAD", FAKETIME), ("FAKETIME", "+10s"), ("FAKETIME_DONT_FAKE_MONOTONIC", "1")];
    let refused = Worker::spawn_with(LAYOUT, OPTIONS, &url, &ahead);
    let line = refused.open_line();
    assert!(line.starts_with("OPENERR ERR_SNOWFLAKE_LEASE"), "{line}");
    for part in ["this host's clock reads", "reads", "ms ahead of", "max_clock_skew_ms=1000"] {
        assert!(line.contains(part), "{part:?} in {line}");
    }
    assert!(!line.contains("m4ria-pw"), "no secret in a message: {line}");
    let skew: u64 = line
        .split(" ms ahead of")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("the skew in {line}"));
    assert!((9000..=11000).contains(&skew), "about 10 s: {line}");
    let allowed = Worker::spawn_with(LAYOUT, &format!("{OPTIONS};max_clock_skew_ms=20000"), &url, &ahead);
    allowed.opened();
    allowed.wait("IDs", |w| w.ids().len() >= 100);
    allowed.finish();
}

macro_rules! on_every_engine {
    ($($scenario:ident),*) => {
        mod postgres { $( #[test] fn $scenario() { super::$scenario(super::Kind::Postgres) } )* }
        mod mariadb { $( #[test] fn $scenario() { super::$scenario(super::Kind::Mariadb) } )* }
        mod cluster { $( #[test] fn $scenario() { super::$scenario(super::Kind::Cluster) } )* }
    };
}

on_every_engine!(
    distinct_values_across_processes,
    a_killed_holder,
    data_lost_and_restarted,
    a_stalled_server,
    a_host_lease,
    a_clock_ahead_is_refused
);

// --- the cluster's own -----------------------------------------------------------------------

/// A forced failover of the primary that serves the layout's slot, while four processes
/// issue: nothing repeats (a promoted replica may lack the last writes: claims after it start
/// past what an unrecorded holder may issue).
#[test]
fn a_cluster_failover_while_four_processes_issue_repeats_nothing() {
    let mut engine = Engine::start(Kind::Cluster);
    let url = engine.url();
    let layout = Layout::parse(LAYOUT).unwrap();
    let workers: Vec<Worker> = (0..4).map(|_| Worker::spawn(LAYOUT, OPTIONS, &url)).collect();
    let values: HashSet<u64> = workers.iter().map(Worker::opened).collect();
    assert_eq!(values.len(), 4);
    for w in &workers {
        w.wait("1000 IDs", |w| w.ids().len() >= 1000);
    }
    engine.servers.command(&format!("failover {}", slot_key(&layout)));
    let marks: Vec<usize> = workers.iter().map(|w| w.ids().len()).collect();
    for (w, mark) in workers.iter().zip(&marks) {
        w.wait("IDs from the new primary", |w| w.ids().len() >= mark + 3000);
    }
    let mut all = vec![];
    for w in workers {
        all.extend(w.finish());
    }
    assert_unique(&all);
}

/// The primary that serves the layout's slot stopped (SIGSTOP) and left stopped: every call
/// returns within `max_wait_ms`, refused with a lease error, for as long as it stays stopped;
/// once it resumes, IDs again, none repeated. (The crate's cluster client retried each
/// command on its stopped node and waited out the cluster's own failover detection: calls
/// returned after 5 s, past the 3 s the options allow; now one store timeout, a fifth of the
/// TTL, per attempt, and one attempt per call.)
#[test]
fn a_stopped_cluster_primary_refuses_calls_instead_of_blocking_them() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let mut engine = Engine::start(Kind::Cluster);
    let url = engine.url();
    let layout = Layout::parse(LAYOUT).unwrap();
    let g = Arc::new(open_patiently(&layout, &url, OPTIONS));
    let mut all: Vec<u64> = (0..1000).map(|_| next_id_patiently(&g)).collect();
    let target = engine.freeze(&layout);
    // The calls run on a thread of their own: this one counts their refusals, and resumes the
    // primary whatever they do.
    let (refusals, stop) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicBool::new(false)));
    let errors = Arc::new(Mutex::new(Vec::<(Duration, String)>::new()));
    let caller = {
        let (g, refusals, stop, errors) = (g.clone(), refusals.clone(), stop.clone(), errors.clone());
        std::thread::spawn(move || {
            let mut ids = vec![];
            while !stop.load(Ordering::SeqCst) {
                let called = Instant::now();
                match g.next_id() {
                    Ok(id) => ids.push(id),
                    Err(e) => {
                        errors.lock().unwrap().push((called.elapsed(), format!("{:?}: {e}", e.kind())));
                        refusals.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(20));
                    }
                }
            }
            ids
        })
    };
    let start = Instant::now();
    while refusals.load(Ordering::SeqCst) < 5 && start.elapsed() < MINUTES {
        std::thread::sleep(Duration::from_millis(20));
    }
    let refused = refusals.load(Ordering::SeqCst);
    engine.servers.command(&format!("thaw {target}"));
    stop.store(true, Ordering::SeqCst);
    all.extend(caller.join().unwrap());
    let errors = errors.lock().unwrap().clone();
    assert!(
        refused >= 5,
        "{refused} calls refused while the primary was stopped, then none returned: {errors:?}"
    );
    assert!(errors.iter().all(|(_, e)| e.starts_with("Lease")), "{errors:?}");
    // The bound the options promise a caller (OPTIONS' max_wait_ms), with the store's
    // timeout at a fifth of the TTL well inside it: the measure of the defect, not a guess.
    let max_wait = Duration::from_millis(3000);
    assert!(
        errors.iter().all(|(took, _)| *took < max_wait),
        "a refusal came later than max_wait_ms: {errors:?}"
    );
    all.extend((0..1000).map(|_| next_id_patiently(&g)));
    assert_unique(&all);
}

// --- addresses and secrets -----------------------------------------------------------------

/// A wrong password is refused naming the server, never the password; the password file works.
#[test]
fn mariadb_passwords_never_appear_and_password_files_work() {
    let engine = Engine::start(Kind::Mariadb);
    let port = engine.servers.get("/mariadb/port").to_string();
    let layout = Layout::parse(LAYOUT).unwrap();
    let wrong = format!("mysql://snowflake:Wr0ng-S3CRET@127.0.0.1:{port}/snowflake");
    let e = open_with(&layout, &wrong, OPTIONS).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Lease);
    let text = e.to_string();
    assert!(text.contains("refused the credentials") && !text.contains("Wr0ng-S3CRET"), "{text}");
    assert!(text.contains("snowflake:***@127.0.0.1"), "{text}");
    let dir = std::env::temp_dir().join(format!("fleet-pw-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("password");
    std::fs::write(&file, "m4ria-pw\n").unwrap();
    let plain = format!("mysql://snowflake@127.0.0.1:{port}/snowflake");
    let g = open_patiently(&layout, &plain, &format!("{OPTIONS};lease_password_file={}", file.display()));
    next_id_patiently(&g);
    let both =
        open_with(&layout, &engine.url(), &format!("{OPTIONS};lease_password_file={}", file.display()));
    assert!(both.unwrap_err().to_string().contains("give one"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A MySQL address where nothing listens is refused in a sentence, not in the client crate's
/// wrapper (`DriverError { … }`, as a soak's report printed it).
#[test]
fn mysql_unreachable_reads_as_a_sentence() {
    let layout = Layout::parse(LAYOUT).unwrap();
    let e = open_with(&layout, "mysql://snowflake@127.0.0.1:1/snowflake", OPTIONS).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Lease);
    let text = e.to_string();
    assert!(
        text.contains("cannot reach MySQL at mysql://***@127.0.0.1:1/snowflake: Could not connect"),
        "{text}"
    );
    assert!(!text.contains("Error {"), "{text}");
}

/// The table is created on first use with the documented columns, and a DBA's own table works.
#[test]
fn postgres_table_is_made_on_first_use_and_holds_the_documented_columns() {
    let engine = Engine::start(Kind::Postgres);
    let layout = Layout::parse(LAYOUT).unwrap();
    let g = open_patiently(&layout, &engine.url(), OPTIONS);
    next_id_patiently(&g);
    let columns = engine.sql(
        "SELECT string_agg(column_name, ',' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_name = 'libsnowflake_leases'",
    );
    assert_eq!(columns.trim(), "name,holder,expires_at,mark,mark_server");
    let rows = engine.sql("SELECT name, holder IS NOT NULL, mark IS NOT NULL FROM libsnowflake_leases");
    assert!(rows.contains(&format!("{:016x}:worker=0|t|t", layout.fingerprint())), "{rows}");
    // Unknown sslmode values are refused (a lease never uses TLS unverified).
    let e = open_with(&layout, &format!("{}&sslmode=allow", engine.url()), OPTIONS).unwrap_err();
    assert!(e.to_string().contains("never uses TLS unverified"), "{e}");
}
