//! Issue 38: leases under the faults that production stores and networks have, which repeated
//! IDs before it (each a regression test; the randomised suite is tests/faults/):
//!
//! 1. **Redis restarts from an RDB snapshot.** Host A holds a value at capacity, running
//!    ahead of its clock (`max_drift_ms=1000`); Redis saves a snapshot, A's reservations move
//!    past it, Redis is killed and reloads the older file; host B claims A's value and must not
//!    trust the snapshot's mark (another run of Redis wrote it).
//! 2. **Skew within the allowed limit, then a data loss.** Host A's clock 0.9 s ahead of the
//!    store's, host B's 0.9 s behind (each within `max_clock_skew_ms=1000`); the store loses
//!    every lease (FLUSHALL, TRUNCATE) while A issues ahead of its clock; B claims A's value and
//!    must start past anything A may have issued: window + drift + twice the skew + a tick past
//!    the store's clock. On Redis, PostgreSQL and MariaDB.
//!
//! 3. **MySQL and MariaDB: a failback.** A holds a value on the primary and gives it back; the
//!    primary dies, the replica is promoted, the old primary comes back as its replica. Its
//!    replication stops (behind) while X claims the value on the new primary and runs ahead
//!    of its clock; the new primary dies right after and the old one is promoted again: its
//!    copy of the value has A's mark, written by this very server (`@@server_id`, all that
//!    was stored before), but in another run, before it replicated another primary. B claims
//!    the value there and must not trust that mark.
//!
//! 4. **MariaDB with a lazy flush** (`innodb_flush_log_at_trx_commit` other than 1: a crash can
//!    lose the last second of commits, marks included). A mark read there is never exact, even
//!    one its holder released cleanly: the next claim starts past the margin.
//! 5. **A `CREATE TABLE IF NOT EXISTS` that answers late** (MariaDB; the table lookup is
//!    shared by every SQL store). Its late answer was read as the next statement's: the
//!    claim's clock or the server's run came back as no row, a refusal without a cause.
//! 6. **A claim the store answers slowly** (PostgreSQL; the check is every store's). The
//!    store's clock read after the claim was judged against this host's clock of before it:
//!    a round trip of over a second, with a clock behind within the allowed skew, was refused
//!    as "ahead of this host's clock" (flaky.sh met it in case 3).
//!
//! Hosts are processes with their own `SNOWFLAKE_SHM_DIR` and their own clock (libfaketime,
//! the monotonic clock left real). A is stopped (SIGSTOP) before the fault, so that B claims
//! its value and A's IDs issued up to then are what B must not repeat. Waits follow the
//! processes (A's own IDs say how far ahead it ran), with deadlines of minutes.
#![cfg(all(feature = "std", unix))]

#[path = "../../tests/servers/servers.rs"]
mod servers;
use servers::Servers;
use snowflake_core::{Generator, Layout, Options};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Two values, four IDs a millisecond: a holder reaches capacity (and runs ahead of its
/// clock) even on a loaded machine.
const LAYOUT: &str = "time:41,worker:1,sequence:2;epoch=1288834974657";
const MINUTES: Duration = Duration::from_secs(240);
const FAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";
/// A: at capacity, up to a second ahead of its clock.
const AHEAD: &str = "lease_ttl_ms=3000;max_drift_ms=1000;max_wait_ms=3000";
/// B: the defaults but the TTL. TTLs of seconds: a store's replies time out after TTL/5.
const PLAIN: &str = "lease_ttl_ms=3000;max_wait_ms=3000";

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

fn issued_at(id: u64) -> u64 {
    Layout::parse(LAYOUT).unwrap().decode(id).unwrap().unix_ms
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Redis,
    Postgres,
    Mariadb,
}

struct Store {
    kind: Kind,
    servers: Servers,
}

impl Store {
    fn start(kind: Kind) -> Store {
        let servers = match kind {
            Kind::Redis => Servers::start("redis", &[]),
            Kind::Postgres => Servers::start("postgres", &["--tcp"]),
            Kind::Mariadb => Servers::start("mariadb", &["--password", "m4ria-pw"]),
        };
        Store { kind, servers }
    }

    fn url(&self) -> String {
        match self.kind {
            Kind::Redis => self.servers.str("/redis/url").to_string(),
            Kind::Postgres => self.servers.str("/postgres/dsn").to_string(),
            Kind::Mariadb => self.servers.str("/mariadb/url").to_string(),
        }
    }

    /// Runs an administrator's command: a Redis command, or an SQL statement.
    fn admin(&self, command: &str) -> String {
        match self.kind {
            Kind::Redis => {
                let out = Command::new("redis-cli")
                    .args(["-p", &self.servers.get("/redis/port").to_string()])
                    .args(command.split(' '))
                    .output()
                    .unwrap();
                let text = String::from_utf8_lossy(&out.stdout).into_owned();
                assert!(
                    out.status.success() && !text.starts_with("ERR"),
                    "{command}: {text} {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                text
            }
            Kind::Postgres => self.servers.admin_sql("postgres", command),
            Kind::Mariadb => self.servers.admin_sql("mariadb", command),
        }
    }

    /// The store loses every lease and mark.
    fn wipe(&self) {
        match self.kind {
            Kind::Redis => self.admin("FLUSHALL"),
            _ => self.admin("TRUNCATE libsnowflake_leases"),
        };
    }
}

// ---------------------------------------------------------------------------------------------
// Holders: this program run again (`SNOWFLAKE_FAULT_WORKER="<options>"`, the address in
// `SNOWFLAKE_FAULT_URL`). Prints `OPEN <value>` or `OPENERR <message>`, then `ID <id>` lines
// (and `ERR <message>`) until its stdin closes; then `DONE`.

#[test]
fn worker_process() {
    let Ok(options) = std::env::var("SNOWFLAKE_FAULT_WORKER") else { return };
    let layout = Layout::parse(LAYOUT).unwrap();
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    let mut o = Options::parse(&options).unwrap();
    o.set_text("lease", &std::env::var("SNOWFLAKE_FAULT_URL").unwrap()).unwrap();
    // The test harness's own words start the first line: ours start on the next.
    writeln!(out, "OPENING").unwrap();
    out.flush().unwrap();
    // A holder started `gated` opens once the test writes a line (the fault made first).
    if std::env::var_os("SNOWFLAKE_FAULT_GATED").is_some() {
        writeln!(out, "GATED").unwrap();
        out.flush().unwrap();
        std::io::stdin().read_line(&mut String::new()).unwrap();
    }
    let start = Instant::now();
    let g = loop {
        match Generator::new(&layout, Default::default(), o.clone()) {
            Ok(g) => break g,
            Err(e) if e.to_string().contains("in time") && start.elapsed() < MINUTES => {
                std::thread::sleep(Duration::from_millis(100))
            }
            Err(e) => {
                writeln!(out, "OPENERR {e}").unwrap();
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
    let mut buf = [0u64; 16];
    while !stop.load(std::sync::atomic::Ordering::SeqCst) {
        match g.fill(&mut buf) {
            Ok(()) => {
                for id in buf {
                    writeln!(out, "ID {id}").unwrap();
                }
            }
            Err(e) => {
                writeln!(out, "ERR {e}").unwrap();
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        out.flush().unwrap();
    }
    writeln!(out, "DONE").unwrap();
    out.flush().unwrap();
}

struct Worker {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Arc<Mutex<Vec<String>>>,
    reader: Option<std::thread::JoinHandle<()>>,
    _shm: std::path::PathBuf,
}

impl Worker {
    /// A holder on a host of its own (its own record directory), its clock `offset` from the
    /// real one (`+0.9s`, `-0.9s`, or `""`).
    fn spawn(name: &str, options: &str, url: &str, offset: &str) -> Worker {
        Worker::start(name, options, url, offset, false)
    }

    /// A holder as [`Worker::spawn`] makes, which opens only at [`Worker::go`].
    fn gated(name: &str, options: &str, url: &str, offset: &str) -> Worker {
        let w = Worker::start(name, options, url, offset, true);
        w.wait("its start", |w| w.lines.lock().unwrap().iter().any(|l| l == "GATED"));
        w
    }

    fn go(&mut self) {
        writeln!(self.stdin.as_mut().unwrap(), "go").unwrap();
    }

    fn start(name: &str, options: &str, url: &str, offset: &str, gated: bool) -> Worker {
        static SPAWNED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = SPAWNED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let shm = std::env::temp_dir().join(format!("lease-faults-{}-{n}-{name}", std::process::id()));
        std::fs::create_dir_all(&shm).unwrap();
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args(["worker_process", "--exact", "--nocapture", "--test-threads", "1"])
            .env("SNOWFLAKE_FAULT_WORKER", options)
            .env("SNOWFLAKE_FAULT_URL", url)
            .env("SNOWFLAKE_SHM_DIR", &shm)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        if gated {
            cmd.env("SNOWFLAKE_FAULT_GATED", "1");
        }
        if !offset.is_empty() {
            assert!(std::path::Path::new(FAKETIME).exists(), "libfaketime (apt faketime) is needed");
            cmd.env("LD_PRELOAD", FAKETIME).env("FAKETIME", offset).env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
        }
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let lines = Arc::new(Mutex::new(vec![]));
        let l = lines.clone();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if ["OPEN", "ID ", "ERR ", "DONE", "GATED"].iter().any(|p| line.starts_with(p)) {
                    l.lock().unwrap().push(line);
                }
            }
        });
        Worker { stdin: child.stdin.take(), child, lines, reader: Some(reader), _shm: shm }
    }

    fn ids(&self) -> Vec<u64> {
        self.lines.lock().unwrap().iter().filter_map(|l| l.strip_prefix("ID ")?.parse().ok()).collect()
    }

    fn last_id(&self) -> Option<u64> {
        self.lines.lock().unwrap().iter().rev().find_map(|l| l.strip_prefix("ID ")?.parse().ok())
    }

    fn wait(&self, what: &str, pred: impl Fn(&Worker) -> bool) {
        let start = Instant::now();
        while !pred(self) {
            if start.elapsed() > MINUTES {
                let lines = self.lines.lock().unwrap().clone();
                let other: Vec<&String> =
                    lines.iter().filter(|l| !l.starts_with("ID ")).rev().take(5).collect();
                panic!("no {what} after {MINUTES:?}: {other:?}");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn opened(&self) -> u64 {
        self.wait("open", |w| w.lines.lock().unwrap().iter().any(|l| l.starts_with("OPEN")));
        let line = self.lines.lock().unwrap().iter().find(|l| l.starts_with("OPEN")).unwrap().clone();
        line.strip_prefix("OPEN ").and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{line}"))
    }

    fn signal(&self, sig: &str) {
        assert!(Command::new("kill").args([sig, &self.child.id().to_string()]).status().unwrap().success());
    }

    fn finish(mut self) -> Vec<u64> {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        self.reader.take().unwrap().join().unwrap();
        assert!(status.success(), "holder failed ({status})");
        self.ids()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self._shm);
    }
}

/// How many IDs of `b` A issued too.
fn repeats(a: &[u64], b: &[u64]) -> usize {
    let seen: HashSet<u64> = a.iter().copied().collect();
    b.iter().filter(|id| seen.contains(id)).count()
}

/// Waits until A's last ID is at least `ahead_ms` ahead of A's clock (`offset_ms` from the
/// real one): A ran ahead of its clock, as a holder at capacity with `max_drift_ms` does.
fn wait_ahead(a: &Worker, offset_ms: i64, ahead_ms: u64) {
    a.wait("IDs ahead of the holder's clock", |a| {
        a.last_id().is_some_and(|id| issued_at(id) as i64 >= now_ms() as i64 + offset_ms + ahead_ms as i64)
    });
}

/// B, once A is stopped and the fault made: B claims A's value, issues 8000 IDs (2 s at
/// capacity); then A goes on, and both end. Returns (A's IDs, B's IDs, how far B's first ID
/// was ahead of the real clock when B started: the cost of safety, as a figure).
fn b_claims_after(url: &str, a: Worker, b_offset: &str, fault: impl FnOnce()) -> (Vec<u64>, Vec<u64>, i64) {
    let value = a.opened();
    a.signal("-STOP");
    fault();
    let started_at = now_ms();
    let b = Worker::spawn("b", PLAIN, url, b_offset);
    assert_eq!(b.opened(), value, "B claims the value A held");
    b.wait("8000 IDs", |b| b.ids().len() >= 8000);
    a.signal("-CONT");
    let b_ids = b.finish();
    let a_ids = a.finish();
    (a_ids, b_ids.clone(), issued_at(b_ids[0]) as i64 - started_at as i64)
}

/// Case 1: Redis killed after a snapshot and restarted from it.
#[test]
fn redis_restarted_from_a_snapshot_repeats_nothing() {
    let mut store = Store::start(Kind::Redis);
    let a = Worker::spawn("a", AHEAD, &store.url(), "");
    a.opened();
    wait_ahead(&a, 0, 500);
    store.admin("SAVE");
    let saved_at = now_ms();
    // The snapshot's claim of A has a TTL of 3 s: once that has passed, the snapshot holds A's
    // value free, with a mark that A's reservations have since moved past.
    // (By the real clock: A's own IDs run ahead of it.)
    a.wait("the snapshot's claim to expire", |_| now_ms() >= saved_at + 3200);
    wait_ahead(&a, 0, 700);
    let url = store.url();
    let (a_ids, b_ids, ahead_ms) = b_claims_after(&url, a, "", || {
        store.servers.command("kill redis");
        store.servers.command("start redis keep");
        assert!(store.admin("DBSIZE").trim() != "0", "Redis reloaded its snapshot");
    });
    let n = repeats(&a_ids, &b_ids);
    eprintln!(
        "snapshot restart: {n} repeats of {} IDs; B's first ID {ahead_ms} ms past its start",
        a_ids.len() + b_ids.len()
    );
    assert_eq!(n, 0, "B repeated {n} of A's IDs after Redis reloaded a snapshot");
}

/// Case 2: A 0.9 s ahead of the store's clock, B 0.9 s behind, then a data loss.
fn skew_then_data_loss(kind: Kind) {
    let store = Store::start(kind);
    let a = Worker::spawn("a", AHEAD, &store.url(), "+0.9s");
    a.opened();
    wait_ahead(&a, 900, 700);
    let (a_ids, b_ids, ahead_ms) = b_claims_after(&store.url(), a, "-0.9s", || store.wipe());
    let n = repeats(&a_ids, &b_ids);
    eprintln!(
        "{kind:?}, skew and data loss: {n} repeats of {} IDs; B's first ID {ahead_ms} ms past its start",
        a_ids.len() + b_ids.len()
    );
    assert_eq!(n, 0, "{kind:?}: B repeated {n} of A's IDs after a skew within the limit and a data loss");
}

#[test]
fn redis_skew_within_the_limit_then_flushall_repeats_nothing() {
    skew_then_data_loss(Kind::Redis);
}

#[test]
fn postgres_skew_within_the_limit_then_truncate_repeats_nothing() {
    skew_then_data_loss(Kind::Postgres);
}

#[test]
fn mariadb_skew_within_the_limit_then_truncate_repeats_nothing() {
    skew_then_data_loss(Kind::Mariadb);
}

/// An SQL statement as MariaDB's root, on the primary (`mariadb`) or the replica (`replica`).
fn maria(s: &Servers, who: &str, statement: &str) -> String {
    let pointer = if who == "replica" { "/mariadb/replica/client" } else { "/mariadb/client" };
    let argv: Vec<&str> = s.get(pointer).as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    let out = Command::new(argv[0])
        .args(&argv[1..])
        .args(["--batch", "--skip-column-names", "-e", statement])
        .output()
        .unwrap();
    assert!(out.status.success(), "{who}: {statement}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Waits until `statement` gives `want` on `who`; a failure says what it gave last and how
/// `who`'s replication stands (a broken one never catches up).
fn maria_wait(s: &Servers, who: &str, what: &str, statement: &str, want: &str) {
    let start = Instant::now();
    loop {
        let got = maria(s, who, statement);
        if got == want {
            return;
        }
        if start.elapsed() > MINUTES {
            let status = maria(s, who, "SHOW ALL SLAVES STATUS");
            panic!("no {what} after {MINUTES:?}: {statement} gave {got:?}, not {want:?}; {who}'s replication: {status}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Case 3: a MariaDB failback right after a claim on the other server.
#[test]
fn mariadb_failback_after_a_claim_repeats_nothing() {
    let mut s = Servers::start("mariadb", &["--password", "m4ria-pw", "--replica"]);
    let primary_url = s.str("/mariadb/url").to_string();
    let replica_url = s.str("/mariadb/replica/url").to_string();
    let replica_port = s.port("/mariadb/replica/port");
    // 1. A's mark, written on the primary, reaches the replica.
    let a = Worker::spawn("a", PLAIN, &primary_url, "");
    let value = a.opened();
    a.wait("IDs", |a| a.ids().len() >= 100);
    let a_ids = a.finish();
    // What A left on the primary, whether or not its release came in time on a loaded machine
    // (a release is best effort): the replica has it once it shows the same rows.
    let rows = "SELECT CONCAT_WS(' ', name, IFNULL(holder, '-'), IFNULL(mark, '-'), IFNULL(mark_server, '-')) FROM libsnowflake_leases ORDER BY name";
    let left = maria(&s, "mariadb", rows);
    let marked = maria(&s, "mariadb", "SELECT COUNT(*) FROM libsnowflake_leases WHERE mark IS NOT NULL");
    assert_eq!(marked, "1", "A left no mark: {left}");
    maria_wait(&s, "replica", "A's last write on the replica", rows, &left);
    // 2. A failover, and the old primary back as the new one's replica, caught up.
    s.command("kill mariadb");
    s.command("promote");
    s.command("start mariadb");
    maria(
        &s,
        "mariadb",
        &format!(
            "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={replica_port}, MASTER_USER='repl', MASTER_PASSWORD='r3pl-pw', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1; START SLAVE"
        ),
    );
    maria(&s, "replica", "CREATE TABLE caught_up (a INT)");
    maria_wait(
        &s,
        "mariadb",
        "the old primary caught up",
        "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_NAME = 'caught_up'",
        "1",
    );
    // 3. The old primary's replication stops (behind: a stopped process would still get what
    //    the new primary had sent into its socket) while X claims A's value on the new primary
    //    and runs ahead of its clock.
    maria(&s, "mariadb", "STOP SLAVE");
    // A's value free on the new primary by its own clock (released, or A's claim expired), so
    // that X's claim of the lowest free value is A's.
    maria_wait(
        &s,
        "replica",
        "A's value free on the new primary",
        "SELECT COUNT(*) FROM libsnowflake_leases WHERE holder IS NULL OR expires_at <= CAST(FLOOR(UNIX_TIMESTAMP(NOW(6)) * 1000) AS SIGNED)",
        "1",
    );
    let x = Worker::spawn("x", AHEAD, &replica_url, "");
    assert_eq!(x.opened(), value, "X claims the value A held");
    wait_ahead(&x, 0, 700);
    // 4. The new primary dies right after; the old one, without X's claim, is promoted again.
    let (x_ids, b_ids, ahead_ms) = b_claims_after(&primary_url, x, "-0.9s", || {
        s.command("kill replica");
        maria(&s, "mariadb", "RESET SLAVE ALL");
    });
    let n = repeats(&x_ids, &b_ids) + repeats(&a_ids, &b_ids);
    eprintln!(
        "MariaDB failback: {n} repeats of {} IDs; B's first ID {ahead_ms} ms past its start",
        x_ids.len() + b_ids.len()
    );
    assert_eq!(n, 0, "B repeated {n} IDs after a failback to a server that trusted its own old mark");
}

/// Case 6: a claim the store answered slowly (a loaded store or host, a round trip of a second
/// or more) is not refused as a clock far behind. The store's clock, read after the claim, was
/// judged against this host's clock of before the claim, so the round trip counted as skew:
/// flaky.sh met "the high-water mark stored for `worker`=0 is 6200 ms ahead of this host's
/// clock" in case 3 (B's clock 0.9 s behind, within the allowed skew, and a round trip of
/// 1.3 s). Here a transaction holds the leases' table in EXCLUSIVE mode for 1.7 s: B's claim
/// (an UPDATE) waits for it, the clock readings (`SELECT` of the time) do not.
#[test]
fn postgres_a_claim_answered_slowly_is_not_taken_for_a_clock_behind() {
    let store = Arc::new(Store::start(Kind::Postgres));
    // The table, made by a first holder; then no mark (a new store): B's claim reads the store's
    // clock after it.
    Worker::spawn("a", PLAIN, &store.url(), "").finish();
    store.wipe();
    // TTL 10 s: replies time out after 2 s, beyond the lock.
    let mut b = Worker::gated("b", "lease_ttl_ms=10000;max_wait_ms=3000", &store.url(), "-0.9s");
    let locker = {
        let store = store.clone();
        std::thread::spawn(move || {
            store.admin(
                "BEGIN; LOCK TABLE libsnowflake_leases IN EXCLUSIVE MODE; SELECT pg_sleep(1.7); COMMIT",
            )
        })
    };
    let held = "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation \
                WHERE c.relname = 'libsnowflake_leases' AND l.mode = 'ExclusiveLock' AND l.granted";
    let start = Instant::now();
    while store.admin(held).trim() != "1" {
        assert!(start.elapsed() < MINUTES, "the lock was never taken");
        std::thread::sleep(Duration::from_millis(10));
    }
    let locked_at = Instant::now();
    b.go();
    let value = b.opened();
    let waited = locked_at.elapsed();
    locker.join().unwrap();
    b.wait("1000 IDs", |b| b.ids().len() >= 1000);
    let ids = b.finish();
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), ids.len(), "B repeated its own IDs");
    eprintln!("a claim answered {waited:?} after the lock was taken: value {value}");
}

/// Case 5: a claim's `CREATE TABLE IF NOT EXISTS` waits on a metadata lock (a DBA's `LOCK
/// TABLES`, an `ALTER`, a long transaction) past the store's timeout, and the lock goes just
/// after. The library looked for the table on that same connection: its next statement read
/// the CREATE's late answer, and every one after read the answer before its own (the open was
/// refused: "did not say which server it is", before ca366d5 "gave no clock reading").
/// Now a connection whose CREATE failed is dropped, and the open succeeds.
#[test]
fn mariadb_a_late_create_table_answer_is_never_read_as_another_statements() {
    let s = Servers::start("mariadb", &["--password", "m4ria-pw"]);
    let url = s.str("/mariadb/url").to_string();
    let layout = Layout::parse(LAYOUT).unwrap();
    // A store timeout of 2 s (a fifth of the TTL): the slack this test's waits have.
    let options = "lease_ttl_ms=10000;max_wait_ms=3000";
    let open = move |url: &str| {
        let mut o = Options::parse(options).unwrap();
        o.set_text("lease", url).unwrap();
        Generator::new(&layout, Default::default(), o)
    };
    drop(open(&url).expect("the first open creates the table"));
    // Another session holds the table's lock until told.
    let argv: Vec<String> = s
        .get("/mariadb/client")
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    let mut locker = Command::new(&argv[0])
        .args(&argv[1..])
        .args(["--unbuffered", "--batch", "--skip-column-names"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut to_locker = locker.stdin.take().unwrap();
    writeln!(to_locker, "LOCK TABLES libsnowflake_leases WRITE; SELECT 'locked';").unwrap();
    let mut line = String::new();
    BufReader::new(locker.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "locked");
    let opener = {
        let url = url.clone();
        std::thread::spawn(move || open(&url).map(|g| g.next_id()))
    };
    // The state: the library's CREATE has waited past its 2 s, so it has given up on it and
    // sent what comes next; then the lock goes, and the CREATE answers.
    maria_wait(
        &s,
        "mariadb",
        "the library's CREATE waiting past its timeout",
        "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'CREATE TABLE IF NOT EXISTS libsnowflake_leases%' AND TIME_MS > 2100",
        "1",
    );
    writeln!(to_locker, "UNLOCK TABLES;").unwrap();
    drop(to_locker);
    locker.wait().unwrap();
    match opener.join().unwrap() {
        Ok(Ok(_)) => {}
        // A loaded machine may take longer than the store's timeout even to look: that
        // refusal names its cause; an answer out of step does not.
        Err(e) | Ok(Err(e)) => {
            assert!(e.to_string().contains("did not answer in time"), "the open was refused: {e}")
        }
    }
}

/// Case 4: MariaDB whose commits are not durable. A releases its value cleanly (an exact mark,
/// written by this very run of the server); B claims it and must still start past the margin
/// (window 1 s + drift 0 + twice the allowed skew 2 s + a tick, past the store's clock read
/// after the claim), not at A's mark: what a crash would have lost cannot be told apart.
#[test]
fn mariadb_with_a_lazy_flush_never_trusts_a_mark_alone() {
    let store = Store::start(Kind::Mariadb);
    store.admin("SET GLOBAL innodb_flush_log_at_trx_commit = 2");
    let a = Worker::spawn("a", PLAIN, &store.url(), "");
    let value = a.opened();
    a.wait("IDs", |a| a.ids().len() >= 100);
    let a_ids = a.finish();
    // A's release is one statement with the store's timeout: on a loaded server it may not
    // land (CI met that: B found A's row still held and claimed value 1), and the row lapses
    // at its expiry instead. B starts once the value is free either way, as a claim judges it;
    // a lapsed lease's mark is no more to be trusted alone than a released one's.
    maria_wait(
        &store.servers,
        "mariadb",
        "A's value free (released, or lapsed)",
        &format!(
            "SELECT COUNT(*) FROM libsnowflake_leases WHERE name LIKE '%:worker={value}' AND (holder IS NULL OR expires_at <= CAST(FLOOR(UNIX_TIMESTAMP(NOW(6)) * 1000) AS SIGNED))"
        ),
        "1",
    );
    let started_at = now_ms();
    let b = Worker::spawn("b", PLAIN, &store.url(), "");
    assert_eq!(b.opened(), value, "B claims the value A held");
    b.wait("IDs", |b| b.ids().len() >= 100);
    let b_ids = b.finish();
    let ahead_ms = issued_at(b_ids[0]) as i64 - started_at as i64;
    eprintln!("lazy flush: B's first ID {ahead_ms} ms past its start");
    assert_eq!(repeats(&a_ids, &b_ids), 0);
    assert!(
        ahead_ms >= 3000,
        "B's first ID was {ahead_ms} ms past its start: it trusted a mark on a server that may lose commits"
    );
}
