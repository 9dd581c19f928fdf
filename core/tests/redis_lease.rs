//! `lease=redis://…` against real servers started by tests/servers (no mock): every address
//! form (password, ACL user, password file, TLS verified or refused, mutual TLS, IPv6, unix
//! socket, Sentinel), and the faults a lease must survive without repeating an ID: a deleted
//! key, Redis restarted empty while holders run, a Sentinel failover while 4 processes issue,
//! a holder frozen (SIGSTOP) past its TTL while another claims its value, one frozen while it
//! opens (it gets an error, not a lapsed lease), a frozen Redis, and issue 15's cases 3
//! (holders with different settings after Redis lost its data) and 4 (holders leasing
//! different fields of one layout).
//!
//! Times are judged by the IDs' own instants (the generator's clock when it issued them), never
//! by when this thread got to see them. TTLs are seconds long, so that Redis's replies
//! (timeout TTL/5) arrive in time on a loaded machine; a wait for something that must happen
//! has a deadline of minutes. Worker processes are this program run again (`worker_process`,
//! told what to do by `SNOWFLAKE_REDIS_WORKER`).
#![cfg(all(feature = "std", unix))]

mod common;
use common::{start_redis, start_redis_with, Conn, Reply, Servers};
use snowflake_core::{Error, ErrorKind, Generator, Layout, Options};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const LAYOUT: &str = "time:41,worker:3,sequence:12;epoch=1288834974657";
const MINUTES: Duration = Duration::from_secs(180);

fn layout() -> Layout {
    Layout::parse(LAYOUT).unwrap()
}

fn open_with(layout: &Layout, node: &str, options: &str) -> Result<Generator, Error> {
    let options = Options::parse(options)?;
    Generator::new(layout, layout.parse_node(node)?, options)
}

/// A generator leasing through `url`. These tests are about addresses, not timing: a long TTL,
/// so that Redis's replies (timed out after TTL/5) and a TLS handshake have seconds to come on
/// a loaded machine.
/// Whether `e` says that Redis did not answer within the lease's timeout (TTL/5): a loaded
/// machine's doing, which says nothing of what a test asserts.
fn late(e: &Error) -> bool {
    e.to_string().contains("did not answer in time")
}

/// Opens a lease at `url`. A reply that did not come in time (TTL/5, 2 s here: a TLS handshake
/// on a loaded machine can take longer) says nothing of what the test asserts, such as a
/// refusal that names the certificate: a few tries, then the result as it is.
fn open_url(url: &str, extra: &str) -> Result<Generator, Error> {
    let mut options = Options::parse(&format!("lease_ttl_ms=30000;max_wait_ms=3000;{extra}"))?;
    options.set_text("lease", url)?;
    for _ in 0..4 {
        match Generator::new(&layout(), Default::default(), options.clone()) {
            Err(e) if late(&e) => eprintln!("opening again: {e}"),
            result => return result,
        }
    }
    Generator::new(&layout(), Default::default(), options)
}

fn open(port: u16, ttl_ms: u64) -> Result<Generator, Error> {
    open_with(&layout(), "", &options(port, ttl_ms))
}

/// [`open`] where the test needs it open: again while Redis does not answer in time (see
/// [`open_patiently`]).
fn open_ok(port: u16, ttl_ms: u64) -> Generator {
    open_patiently(&layout(), "", &options(port, ttl_ms))
}

fn options(port: u16, ttl_ms: u64) -> String {
    format!("lease=redis://127.0.0.1:{port}/0;lease_ttl_ms={ttl_ms};max_wait_ms=3000")
}

fn worker(g: &Generator) -> u64 {
    g.stats().lease_value.expect("a leased generator reports its value")
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

/// The instant an ID was issued at (its tick's start).
fn issued_at(id: u64) -> u64 {
    layout().decode(id).unwrap().unix_ms
}

fn keys(admin: &mut Conn, pattern: &str) -> Vec<String> {
    match admin.call(&["KEYS", pattern]) {
        Reply::Array(k) => k
            .into_iter()
            .map(|r| match r {
                Reply::Bulk(Some(s)) => s,
                r => panic!("{r:?}"),
            })
            .collect(),
        r => panic!("{r:?}"),
    }
}

fn assert_unique<'a>(all: impl IntoIterator<Item = &'a u64>) -> usize {
    let mut seen = HashSet::new();
    for id in all {
        assert!(seen.insert(*id), "ID {id} was issued twice");
    }
    seen.len()
}

/// [`open_with`], again while Redis "did not answer in time" (a short TTL times Redis's replies
/// out after TTL/5, 50 ms at least, which a loaded machine can miss), and while the claims of
/// those late tries still hold every value. What a test asserts is what the open gives, not
/// that it came in time.
fn open_patiently(layout: &Layout, node: &str, options: &str) -> Generator {
    let start = Instant::now();
    loop {
        match open_with(layout, node, options) {
            Ok(g) => return g,
            // Or the lease lapsed while it opened (a TTL of 100 ms cannot be kept on a loaded
            // machine through the 2 s wait of a claim on an empty Redis).
            Err(e) if (late(&e) || matches!(e, Error::LeaseLost)) && start.elapsed() < MINUTES => {
                eprintln!("opening again: {e}");
            }
            // A claim whose reply came too late still took its value in Redis, for one TTL:
            // tries in quick succession can hold every value for a moment. They lapse.
            Err(e)
                if e.to_string().contains("values of")
                    && e.to_string().contains("are leased")
                    && start.elapsed() < MINUTES =>
            {
                eprintln!("opening again after the late claims lapse: {e}");
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => panic!("{e}"),
        }
    }
}

/// `g.next_id()`, again after an error that says when to retry: on a loaded machine Redis may
/// not answer within a short TTL's timeout (TTL/5), and the generator says so rather than
/// issue unguarded. What a test asserts is what the IDs are, not that each came at once.
fn next_id_patiently(g: &Generator) -> u64 {
    let start = Instant::now();
    loop {
        match g.next_id() {
            Ok(id) => return id,
            Err(e) if e.retry_after_ms().is_some() && start.elapsed() < MINUTES => {
                eprintln!("next_id again: {e}");
                std::thread::sleep(Duration::from_millis(e.retry_after_ms().unwrap_or(10).clamp(1, 200)));
            }
            Err(e) => panic!("{e}"),
        }
    }
}

/// Redis loses its data (FLUSHALL), then a holder opens with `options` and gets `value`, the
/// value a paused holder held. On a loaded machine a claim whose reply came too late still
/// took the lowest free value for one TTL, and the next try gets another: then Redis loses
/// its data again, until the first try is in time.
fn after_a_data_loss_claim(port: u16, layout: &Layout, options: &str, value: Option<u64>) -> Generator {
    let mut admin = Conn::connect(port);
    let start = Instant::now();
    loop {
        assert_eq!(admin.call(&["FLUSHALL"]), Reply::Simple("OK".into()));
        let b = open_patiently(layout, "", options);
        if b.stats().lease_value == value {
            return b;
        }
        assert!(start.elapsed() < MINUTES, "never claimed {value:?} after a data loss: {:?}", b.stats());
        eprintln!("claimed {:?}, not {value:?} (late claims held it): Redis loses its data again", b.stats());
    }
}

/// Calls `next_id` until `until` says stop; the IDs, and the errors met (their kinds).
fn issue_while(g: &Generator, mut until: impl FnMut(&[u64], usize) -> bool) -> (Vec<u64>, Vec<Error>) {
    let (mut ids, mut errors) = (vec![], vec![]);
    let start = Instant::now();
    while !until(&ids, errors.len()) {
        assert!(start.elapsed() < MINUTES, "no end after {MINUTES:?}: {} IDs, errors {errors:?}", ids.len());
        match g.next_id() {
            Ok(id) => ids.push(id),
            Err(e) => {
                errors.push(e);
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        if ids.len() % 64 == 0 {
            std::thread::sleep(Duration::from_micros(300));
        }
    }
    (ids, errors)
}

// ---------------------------------------------------------------------------------------------
// Worker processes: `SNOWFLAKE_REDIS_WORKER="<layout>|<options>"`; the lease address comes in
// `SNOWFLAKE_REDIS_URL` (it may hold `;` or `|`). Prints `OPEN <value>` or
// `OPENERR <code> <message>`, then `ID <id>` lines (and `ERR <code> <message>`) until its stdin
// closes; then `DONE <claims> <losses> <value>`.

#[test]
fn worker_process() {
    let Ok(spec) = std::env::var("SNOWFLAKE_REDIS_WORKER") else { return };
    let (layout, options) = spec.split_once('|').unwrap();
    let layout = Layout::parse(layout).unwrap();
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    let mut o = Options::parse(options).unwrap();
    o.set_text("lease", &std::env::var("SNOWFLAKE_REDIS_URL").unwrap()).unwrap();
    writeln!(out, "OPENING").unwrap();
    out.flush().unwrap();
    let g = match Generator::new(&layout, Default::default(), o) {
        Ok(g) => g,
        Err(e) => {
            writeln!(out, "OPENERR {} {e}", e.kind().code()).unwrap();
            return;
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
    let mut claims = 1;
    while !stop.load(std::sync::atomic::Ordering::SeqCst) {
        let s = g.stats();
        if s.lease_claims != claims {
            claims = s.lease_claims;
            writeln!(out, "CLAIMED {claims} {}", s.lease_value.unwrap()).unwrap();
        }
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
    writeln!(out, "DONE {} {} {}", s.lease_claims, s.lease_losses, s.lease_value.unwrap()).unwrap();
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

    /// [`Worker::spawn`], with more environment variables.
    fn spawn_with(layout: &str, options: &str, url: &str, env: &[(&str, &str)]) -> Worker {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["worker_process", "--exact", "--nocapture", "--test-threads", "1"])
            .env("SNOWFLAKE_REDIS_WORKER", format!("{layout}|{options}"))
            .env("SNOWFLAKE_REDIS_URL", url)
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
                if line.ends_with("OPENING") {
                    // After libtest's `test worker_process ... `, on the same line.
                    l.lock().unwrap().push("OPENING".into());
                } else if ["OPEN ", "OPENERR ", "ID ", "ERR ", "DONE ", "CLAIMED "]
                    .iter()
                    .any(|p| line.starts_with(p))
                {
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
        let errs: Vec<&String> = lines.iter().filter(|l| !l.starts_with("ID ")).take(20).collect();
        format!("{} IDs; other lines: {errs:?}", lines.len())
    }

    /// Waits (minutes at most) until `pred` holds on the worker's lines.
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

    /// The value it opened with.
    fn opened(&self) -> u64 {
        let opened = |l: &String| l.starts_with("OPEN ") || l.starts_with("OPENERR ");
        self.wait("open", |w| w.lines.lock().unwrap().iter().any(opened));
        let lines = self.lines.lock().unwrap();
        let line = lines.iter().find(|l| opened(l)).unwrap();
        line.strip_prefix("OPEN ").and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{line}"))
    }

    /// Closes its stdin, waits for it to end; its lines.
    fn finish(mut self) -> Vec<String> {
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
        lines
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn ids_of(lines: &[String]) -> Vec<u64> {
    lines.iter().filter_map(|l| l.strip_prefix("ID ")?.parse().ok()).collect()
}

// ---------------------------------------------------------------------------------------------

#[test]
fn racing_claimants_get_distinct_values() {
    let server = start_redis();
    let port = server.port;
    let threads: Vec<_> = (0..8).map(|_| std::thread::spawn(move || open_ok(port, 5000))).collect();
    let gens: Vec<Generator> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let workers: HashSet<u64> = gens.iter().map(worker).collect();
    assert_eq!(workers.len(), 8, "8 claimants, 8 values of a 3-bit field");
    let err = open(port, 5000).unwrap_err();
    assert!(err.to_string().contains("all 8 values of `worker` are leased"), "{err}");
    assert!(err.retry_after_ms().is_some(), "a full field says when to retry");
    let mut all = HashSet::new();
    for g in &gens {
        assert_eq!(g.stats().lease_claims, 1);
        for _ in 0..10_000 {
            assert!(all.insert(next_id_patiently(g)));
        }
    }
}

#[test]
fn a_deleted_key_is_claimed_again_and_a_newcomer_with_its_value_starts_above() {
    let server = start_redis();
    let ttl = 3000;
    for attempt in 0.. {
        assert!(attempt < 5, "the newcomer never got the deleted value first: the premise of the test");
        let old = open_ok(server.port, ttl);
        let w = worker(&old);
        let first: Vec<u64> = (0..1000).map(|_| next_id_patiently(&old)).collect();
        let mut admin = Conn::connect(server.port);
        let owner = format!("libsnowflake:*:worker={w}");
        let [key] = &keys(&mut admin, &owner)[..] else { panic!("one key names the whole identity") };
        assert_eq!(admin.call(&["DEL", key]), Reply::Int(1));
        // No earlier than the deletion. A newcomer claims the freed value (before the holder
        // notices, most of the time) and starts above the holder's stored reservation.
        let deleted_ms = now_ms();
        let newcomer = open_ok(server.port, ttl);
        if worker(&newcomer) != w {
            continue; // the holder claimed its value back first
        }
        let new_ids: Vec<u64> = (0..1000).map(|_| next_id_patiently(&newcomer)).collect();
        // The holder notices (its renewal or its next reservation finds the key another's),
        // and claims again on its next call: another value, since its own is taken.
        let (late, errors) = issue_while(&old, |ids, _| old.stats().lease_losses >= 1 && ids.len() >= 1000);
        let s = old.stats();
        // One loss at least (a starved renewal on a loaded machine can lapse the lease once
        // more), and a claim after each.
        assert!(s.lease_losses >= 1 && s.lease_claims == s.lease_losses + 1, "{s:?} {errors:?}");
        assert_ne!(s.lease_value, Some(w), "its value is the newcomer's now");
        let with_w: Vec<u64> =
            late.iter().copied().filter(|id| layout().decode(*id).unwrap().node.get(1) == w).collect();
        for id in first.iter().chain(&with_w) {
            assert!(
                issued_at(*id) < deleted_ms + ttl,
                "issued with the deleted value {} ms after",
                issued_at(*id) - deleted_ms
            );
            assert!(*id < new_ids[0], "the newcomer starts above the holder's IDs");
        }
        assert_eq!(
            layout().decode(*late.last().unwrap()).unwrap().node.get(1),
            s.lease_value.unwrap(),
            "IDs carry the new value"
        );
        let more: Vec<u64> = (0..1000).map(|_| next_id_patiently(&newcomer)).collect();
        assert_unique(first.iter().chain(&late).chain(&new_ids).chain(&more));
        return;
    }
}

/// The lean path reads a lease's claim without its seqlock (see `FastMark::last_tick`): a
/// claim that changes while other threads issue must never lend its node value to a slot
/// checked against the claim before it. Two threads issue through one holder while its key is
/// deleted, round after round, and a newcomer takes the value: the holder claims another,
/// which starts past the margin of an unknown mark (4 s here), so each thread's first ID with
/// the new value lies seconds past its last with the old one. A slot of the old claim given
/// the new value would sit within milliseconds of it.
#[test]
fn claims_that_change_under_issuing_threads_mix_nothing() {
    let server = start_redis();
    let ttl = 3000;
    let holder = Arc::new(open_ok(server.port, ttl));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (g, stop) = (holder.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut ids = vec![];
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    match g.next_id() {
                        Ok(id) => ids.push(id),
                        Err(_) => std::thread::sleep(Duration::from_millis(5)),
                    }
                }
                ids
            })
        })
        .collect();
    let mut admin = Conn::connect(server.port);
    let (mut newcomers, mut kept) = (vec![], vec![]);
    // Rounds until the holder's value changed twice: a round whose holder noticed the loss
    // before the newcomer claimed (a slow Redis, a loaded machine) takes its own value back.
    // Each newcomer keeps a value of the 8, so 6 rounds at most.
    let (mut changed, start) = (0, Instant::now());
    for round in 1.. {
        assert!(
            round <= 6 && start.elapsed() < MINUTES,
            "the value changed {changed} times in {round} rounds"
        );
        // The holder's current claim issues.
        let issued = holder.stats().issued;
        while holder.stats().issued < issued + 1000 {
            assert!(start.elapsed() < MINUTES, "round {round}: no IDs: {:?}", holder.stats());
            std::thread::sleep(Duration::from_millis(10));
        }
        let (w, claims) = (worker(&holder), holder.stats().lease_claims);
        let [key] = &keys(&mut admin, &format!("libsnowflake:*:worker={w}"))[..] else {
            panic!("one key names the identity")
        };
        admin.call(&["DEL", key]);
        let newcomer = open_ok(server.port, ttl);
        newcomers.push((0..200).map(|_| next_id_patiently(&newcomer)).collect::<Vec<u64>>());
        // Kept open, so that the holder never gets the value back.
        kept.push(newcomer);
        while holder.stats().lease_claims <= claims {
            assert!(start.elapsed() < MINUTES, "the holder never claimed again: {:?}", holder.stats());
            std::thread::sleep(Duration::from_millis(10));
        }
        if worker(&holder) != w {
            changed += 1;
            if changed == 2 {
                break;
            }
        }
    }
    // The last claim issues for a moment too.
    let before = holder.stats().issued;
    while holder.stats().issued < before + 1000 {
        std::thread::sleep(Duration::from_millis(10));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let per_thread: Vec<Vec<u64>> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let s = holder.stats();
    let mut changes = 0;
    for ids in &per_thread {
        for pair in ids.windows(2) {
            let (a, b) = (layout().decode(pair[0]).unwrap(), layout().decode(pair[1]).unwrap());
            if a.node.get(1) != b.node.get(1) {
                changes += 1;
                assert!(
                    b.unix_ms
                        >= a.unix_ms
                            + snowflake_core::LEASE_MAX_WINDOW_MS
                            + snowflake_core::LEASE_MAX_DRIFT_MS,
                    "worker={} at {} came {} ms after worker={} at {}: a slot of the old claim",
                    b.node.get(1),
                    b.unix_ms,
                    b.unix_ms - a.unix_ms,
                    a.node.get(1),
                    a.unix_ms
                );
            }
        }
    }
    // The premise: a thread issued across a change of value (each claim issued 1000 IDs, by
    // either thread).
    assert!(changes >= 1, "no change of value seen by a thread: {s:?}");
    assert_unique(per_thread.iter().flatten().chain(newcomers.iter().flatten()));
}

#[test]
fn a_lapsed_holder_takes_its_own_value_back_when_it_is_free() {
    let server = start_redis();
    let mut admin = Conn::connect(server.port);
    let start = Instant::now();
    loop {
        // A claim again starts at the stored mark, which may be further ahead than the default
        // wait when a starved renewal lapsed the lease before (a loaded machine): the call waits.
        let g = open_patiently(
            &layout(),
            "",
            &format!("lease=redis://127.0.0.1:{}/0;lease_ttl_ms=3000;max_wait_ms=10000", server.port),
        );
        let w = worker(&g);
        let before: Vec<u64> = (0..500).map(|_| next_id_patiently(&g)).collect();
        let key = keys(&mut admin, &format!("libsnowflake:*:worker={w}")).remove(0);
        assert_eq!(admin.call(&["DEL", &key]), Reply::Int(1));
        // The next call after the holder notices claims again, and succeeds: no error is seen.
        let (after, errors) = issue_while(&g, |ids, _| g.stats().lease_claims >= 2 && ids.len() >= 500);
        // The premise is that Redis answers within the TTL's timeout (600 ms here). Under
        // `flaky.sh`'s load one reply came later ("did not answer in time"), which the call
        // rightly reports, and a claim whose reply came late may hold the value for a TTL: the
        // case runs again with a new holder (for `MINUTES` at most, then it fails with the errors).
        if !errors.is_empty() && errors.iter().all(late) && start.elapsed() < MINUTES {
            eprintln!("again, Redis did not answer in time: {errors:?}");
            continue;
        }
        assert_eq!(errors, [], "the value was free: claimed again within the call");
        let s = g.stats();
        assert!(s.lease_losses >= 1 && s.lease_claims == s.lease_losses + 1, "{s:?}");
        assert_eq!(s.lease_value, Some(w), "the same value again");
        assert_unique(before.iter().chain(&after));
        assert!(after.windows(2).all(|p| p[0] < p[1]), "still increasing");
        return;
    }
}

#[test]
fn redis_restarted_empty_while_holders_run_repeats_nothing() {
    let mut server = start_redis();
    let url = format!("redis://127.0.0.1:{}/0", server.port);
    let workers: Vec<Worker> =
        (0..3).map(|_| Worker::spawn(LAYOUT, "lease_ttl_ms=2000;max_wait_ms=3000", &url)).collect();
    for w in &workers {
        w.opened();
        w.wait("1000 IDs", |w| w.ids().len() >= 1000);
    }
    server.servers.command("restart"); // empty: no high-water mark survives
    for w in &workers {
        w.wait("a claim after the restart", |w| w.count("CLAIMED ") > 0);
        let mark = w.ids().len();
        w.wait("IDs after the claim", |w| w.ids().len() >= mark + 2000);
    }
    let mut all = vec![];
    for w in workers {
        let lines = w.finish();
        let done = lines.last().unwrap();
        let claims: u64 = done.split(' ').nth(1).unwrap().parse().unwrap();
        assert!(claims >= 2, "each holder claimed again after the restart: {done}");
        all.extend(ids_of(&lines));
    }
    assert_unique(&all);
}

#[test]
fn closing_releases_the_value_with_its_exact_high_water_mark() {
    let server = start_redis();
    let g = open_ok(server.port, 5000);
    let w = worker(&g);
    let last = (0..100).map(|_| next_id_patiently(&g)).last().unwrap();
    drop(g);
    // The mark stored is the exact end of what was issued (the tick after the last ID's), not
    // the reservation ahead of it: the next holder need not wait for anything.
    let mut admin = Conn::connect(server.port);
    let [key] = &keys(&mut admin, &format!("libsnowflake:*:worker={w}:hwm"))[..] else { panic!() };
    let tick = layout().decode(last).unwrap().tick;
    assert_eq!(admin.call(&["GET", key]), Reply::Bulk(Some((tick + 1).to_string())), "the exact mark");
    assert_eq!(admin.call(&["EXISTS", key.trim_end_matches(":hwm")]), Reply::Int(0), "released");
    let started = Instant::now();
    let again = open_ok(server.port, 5000);
    eprintln!("a claim on a warm Redis took {:?}", started.elapsed());
    assert_eq!(worker(&again), w, "released: the same value is free");
    assert!(next_id_patiently(&again) > last);
}

/// Review finding: a child of fork() dropping its copy of the generator (an exiting
/// interpreter) must not release the parent's lease, or a newcomer would take the value
/// while the parent still issues with it.
#[test]
fn a_forked_child_does_not_release_the_parents_lease() {
    let server = start_redis();
    let parent = open_ok(server.port, 5000);
    let w = worker(&parent);
    // SAFETY: the child drops a bitwise copy (the only one it ever drops) and _exits.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        drop(unsafe { std::ptr::read(&parent) });
        unsafe { libc::_exit(0) };
    }
    let mut status = 0;
    unsafe { libc::waitpid(pid, &mut status, 0) };
    let newcomer = open_ok(server.port, 5000);
    assert_ne!(worker(&newcomer), w, "the parent's value was released by its child");
    // The parent still issues (an ID that reserves time may wait for a Redis late to answer
    // within this TTL's second: the premise is a Redis that answers).
    next_id_patiently(&parent);
}

/// A lease's value is its process's (a host lease's, its host's processes'): a copy in a child
/// of fork() issues nothing, by any way of asking, though the lean path has no fork check of
/// its own under a lease (its last tick reads 0 in the child). The parent goes on.
///
/// The premise, that the child's readings were within what the copy's last tick allowed (50 ms
/// past the last check of the host's record of the value), is checked after: the parent's own lean path, which no
/// call extended meanwhile, still issues. If not (a slow child), the fork is tried again.
#[test]
fn a_forked_childs_copy_of_a_lease_issues_nothing() {
    let server = start_redis();
    // Reservations of a second: the child's room.
    let options = format!("{};state_window_ms=1000", options(server.port, 5000));
    let alone = open_patiently(&layout(), "", &options);
    let shared = open_patiently(&layout(), "", &format!("{options};shared=fork-{}", std::process::id()));
    for attempt in 0.. {
        assert!(attempt < 10, "the child never ran within its copies' reservations");
        // Both on the lean path just before the fork, each just past a general call (which
        // checks the host's record of the value: the lean path's room is 50 ms from it), the
        // premise's witness last.
        let mut last: Vec<u64> = [&shared, &alone]
            .iter()
            .map(|g| {
                issue_while(g, |_, _| g.next_id_fast().is_some());
                issue_while(g, |_, _| g.next_id_fast().is_none());
                next_id_patiently(g)
            })
            .collect();
        last.reverse();
        // SAFETY: the child calls this crate's issuing paths, which take no lock in a child,
        // and _exits without dropping anything.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            // The clock's cache runs in the child again once a generator made there reads it
            // in a burst: the copies are asked while it runs and is read (their lean path's
            // state), a thousand times, so they meet their last tick, not a stopped cache.
            let fresh = Generator::isolated(
                &layout(),
                Default::default(),
                Options::default(),
                snowflake_core::MonotonicClock::process(),
            )
            .unwrap();
            let (mut code, mut asked, since) = (0, 0, Instant::now());
            while asked < 1000 && since.elapsed() < MINUTES {
                let _ = fresh.next_id();
                if !snowflake_core::clock_cache_read() {
                    continue;
                }
                asked += 1;
                for g in [&alone, &shared] {
                    if g.next_id_fast().is_some() {
                        code = 1;
                    }
                }
            }
            for g in [&alone, &shared] {
                if !matches!(g.next_id(), Err(Error::Forked))
                    || !matches!(g.try_next_id(), Err(Error::Forked))
                {
                    code = if code == 0 { 2 } else { code };
                }
            }
            if asked < 1000 {
                code = 3;
            }
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status));
        assert_eq!(
            libc::WEXITSTATUS(status),
            0,
            "child: 1 = the fast path issued an ID, 2 = next_id or try_next_id did not refuse, 3 = the clock cache never ran in the child"
        );
        // (The host lease's lean path also checks the host's record every 50 ms, which may have
        // run out in the child: the lease of one process is the premise's witness.)
        // (A cache idle while the parent waited is marked again by the first call: a few.)
        let since = Instant::now();
        let after = std::iter::repeat_with(|| alone.next_id_fast())
            .find(|id| id.is_some() || since.elapsed() > Duration::from_millis(5))
            .flatten();
        for (g, last) in [&alone, &shared].into_iter().zip(&last) {
            assert!(next_id_patiently(g) > *last, "the parent goes on");
        }
        if after.is_some() {
            return;
        }
        eprintln!("the child outlasted a reservation: forking again");
    }
}

// --- addresses and secrets -------------------------------------------------------------------

fn assert_refused(result: Result<Generator, Error>, says: &str, secret: &str) -> Error {
    let err = result.expect_err("must be refused");
    assert_eq!(err.kind(), ErrorKind::Lease, "{err}");
    let text = err.to_string();
    assert!(text.contains(says), "`{text}` should say `{says}`");
    assert!(!text.contains(secret) && !format!("{err:?}").contains(secret), "the secret leaked: {text}");
    err
}

#[test]
fn passwords_acl_users_and_password_files() {
    let limited = "user leaser on >l3aser-pw resetkeys ~libsnowflake:* -@all +eval +get +set +pexpire +del +time +ping +auth +select";
    let no_keys = "user stranger on >str4nger-pw resetkeys ~other:* +@all";
    let server = start_redis_with(&[
        "--password",
        "s3cret-pw",
        "--user",
        "app:app-pw",
        "--config",
        limited,
        "--config",
        no_keys,
    ]);
    let port = server.port;
    let dir = server.servers.str("/dir").to_string();
    let g = open_url(&format!("redis://:s3cret-pw@127.0.0.1:{port}/0"), "").unwrap();
    assert!(g.next_id().is_ok());
    let shown = format!("{g:?} {:?} {}", g.policy(), g.stats().lease_value.unwrap());
    assert!(!shown.contains("s3cret"), "{shown}");
    let g = open_url(&format!("redis://app:app-pw@127.0.0.1:{port}/0"), "").unwrap();
    assert!(g.next_id().is_ok());
    // The user that may touch only the lease keys, and only with the lease's commands.
    let g = open_url(&format!("redis://leaser:l3aser-pw@127.0.0.1:{port}/0"), "").unwrap();
    assert!(g.next_id().is_ok());
    // A password from a file (a mounted Kubernetes Secret: a final newline is no part of it).
    let file = format!("{dir}/redis-password");
    std::fs::write(&file, "s3cret-pw\n").unwrap();
    let g = open_url(&format!("redis://127.0.0.1:{port}/0"), &format!("lease_password_file={file}")).unwrap();
    assert!(g.next_id().is_ok());
    let g = open_url(&format!("redis://app@127.0.0.1:{port}/0"), &format!("lease_password_file={file}"));
    assert_refused(g, "refused the credentials", "s3cret");
    std::fs::write(&file, "app-pw").unwrap();
    let g =
        open_url(&format!("redis://app@127.0.0.1:{port}/0"), &format!("lease_password_file={file}")).unwrap();
    assert!(g.next_id().is_ok());

    // Refusals that name the problem and never the secret.
    assert_refused(
        open_url(&format!("redis://:wr0ng-s3cret@127.0.0.1:{port}/0"), ""),
        "refused the credentials",
        "wr0ng-s3cret",
    );
    assert_refused(
        open_url(&format!("redis://app:wr0ng-s3cret@127.0.0.1:{port}/0"), ""),
        "refused the credentials",
        "wr0ng-s3cret",
    );
    assert_refused(open_url(&format!("redis://127.0.0.1:{port}/0"), ""), "requires a password", "s3cret");
    assert_refused(
        open_url(&format!("redis://stranger:str4nger-pw@127.0.0.1:{port}/0"), ""),
        "may not run",
        "str4nger-pw",
    );
    assert_refused(
        open_url(&format!("redis://:s3cret-pw@127.0.0.1:{port}/0"), &format!("lease_password_file={file}")),
        "give one",
        "s3cret",
    );
    let missing = format!("{dir}/no-such-file");
    let err = open_url(&format!("redis://127.0.0.1:{port}/0"), &format!("lease_password_file={missing}"))
        .unwrap_err();
    assert!(err.to_string().contains("no-such-file"), "{err}");
    // Options never show the password, in Display or Debug.
    let mut o = Options::parse("lease_ttl_ms=3000").unwrap();
    o.set_text("lease", &format!("redis://app:s3cret-pw@127.0.0.1:{port}/0")).unwrap();
    assert!(!o.to_string().contains("s3cret") && !format!("{o:?}").contains("s3cret"), "{o} {o:?}");
    assert!(o.to_string().contains("redis://app:***@127.0.0.1"), "{o}");
}

#[test]
fn tls_is_verified_and_an_unverified_server_refused() {
    let server = start_redis_with(&["--tls", "--password", "tls-pw"]);
    let port = server.port;
    let ca = server.servers.str("/tls/ca_cert").to_string();
    let other_ca = server.servers.str("/tls/other_ca_cert").to_string();
    for host in ["127.0.0.1", "localhost"] {
        let g =
            open_url(&format!("rediss://:tls-pw@{host}:{port}/0"), &format!("lease_tls_ca={ca}")).unwrap();
        // (Patiently: its first ID stores a reservation, whose reply a loaded machine can delay
        // past the timeout, which the call reports as retryable; flaky.sh met it.)
        next_id_patiently(&g);
    }
    // The system's roots do not know this server's CA; nor does another CA.
    assert_refused(open_url(&format!("rediss://:tls-pw@127.0.0.1:{port}/0"), ""), "certificate", "tls-pw");
    assert_refused(
        open_url(&format!("rediss://:tls-pw@127.0.0.1:{port}/0"), &format!("lease_tls_ca={other_ca}")),
        "certificate",
        "tls-pw",
    );
    assert_refused(
        open_url(&format!("rediss://:tls-pw@127.0.0.1:{port}/0#insecure"), ""),
        "never skips",
        "tls-pw",
    );
    // Plain text to a TLS port is no Redis conversation.
    assert!(open_url(&format!("redis://:tls-pw@127.0.0.1:{port}/0"), "").is_err());
    // Certificates are for rediss://.
    let err = open_url(&format!("redis://127.0.0.1:{port}/0"), &format!("lease_tls_ca={ca}")).unwrap_err();
    assert!(err.to_string().contains("rediss://"), "{err}");
}

/// Without `lease_tls_ca`, a server is verified against the system's roots, read when the
/// lease opens and not at each connection: the `redis` crate would read them again at every
/// connection, inside its timeout (hundreds of files, which a busy disk can make slower than
/// the timeout: "did not answer in time", as CI saw). The worker's system store is the test's
/// CA alone (`SSL_CERT_FILE`), removed once the lease is open; Redis restarts (its data kept),
/// so the worker must connect again to hold its lease past the TTL.
#[test]
fn the_system_roots_are_read_once_not_at_each_connection() {
    let mut server = start_redis_with(&["--tls"]);
    let dir = std::env::temp_dir().join(format!("snowflake-roots-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let roots = dir.join("roots.pem");
    std::fs::copy(server.servers.str("/tls/ca_cert"), &roots).unwrap();
    let ttl = 6000;
    let w = Worker::spawn_with(
        LAYOUT,
        &format!("lease_ttl_ms={ttl};max_wait_ms=3000"),
        &format!("rediss://localhost:{}/0", server.port),
        &[("SSL_CERT_FILE", roots.to_str().unwrap()), ("SSL_CERT_DIR", dir.to_str().unwrap())],
    );
    let value = w.opened();
    std::fs::remove_file(&roots).unwrap();
    let restarted_ms = now_ms();
    server.servers.command("restart keep");
    // An ID from after the TTL that every claim before the restart ends within: issued under a
    // renewal (or a claim) made over a connection to the restarted server.
    w.wait("ID issued a TTL after the restart", |w| {
        w.ids().iter().any(|id| issued_at(*id) > restarted_ms + ttl)
    });
    let lines = w.finish();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_unique(&ids_of(&lines));
    // Held throughout, or (a renewal starved on a loaded machine) claimed again after a lapse.
    let done: Vec<u64> = lines.last().unwrap()[5..].split(' ').map(|n| n.parse().unwrap()).collect();
    assert!(done[0] == done[1] + 1 && (done[1] > 0 || done[2] == value), "{done:?}, opened with {value}");
}

#[test]
fn mutual_tls_needs_the_client_certificate() {
    let server = start_redis_with(&["--mtls"]);
    let port = server.port;
    let s = &server.servers;
    let (ca, cert, key) = (s.str("/tls/ca_cert"), s.str("/tls/client_cert"), s.str("/tls/client_key"));
    let url = format!("rediss://127.0.0.1:{port}/0");
    let g = open_url(&url, &format!("lease_tls_ca={ca};lease_tls_cert={cert};lease_tls_key={key}")).unwrap();
    assert!(g.next_id().is_ok());
    assert!(open_url(&url, &format!("lease_tls_ca={ca}")).is_err(), "no client certificate: refused");
    let err = open_url(&url, &format!("lease_tls_ca={ca};lease_tls_cert={cert}")).unwrap_err();
    assert!(err.to_string().contains("lease_tls_key"), "{err}");
}

#[test]
fn ipv6_and_unix_socket_addresses() {
    let server = start_redis_with(&["--ipv6", "--password", "v6-pw"]);
    let port = server.port;
    let socket = server.servers.str("/redis/unix_socket").to_string();
    let g = open_url(&format!("redis://:v6-pw@[::1]:{port}/0"), "").unwrap();
    let a = next_id_patiently(&g);
    let u = open_url(&format!("unix://{socket}?db=3&pass=v6-pw"), "").unwrap();
    let b = next_id_patiently(&u);
    assert_eq!((worker(&g), worker(&u)), (0, 0), "databases 0 and 3 are apart");
    assert_ne!(a, b);
    let mut admin = Conn::connect(port);
    assert_eq!(admin.call(&["AUTH", "v6-pw"]), Reply::Simple("OK".into()));
    assert_eq!(admin.call(&["SELECT", "3"]), Reply::Simple("OK".into()));
    assert_eq!(
        keys(&mut admin, "libsnowflake:*worker=0").len(),
        1,
        "the unix-socket holder's key is in db 3"
    );
    assert_refused(
        open_url(&format!("unix://{socket}?db=3&pass=n0pe-v6"), ""),
        "refused the credentials",
        "n0pe-v6",
    );
    let mut o = Options::default();
    o.set_text("lease", &format!("unix://{socket}?db=3&pass=v6-pw")).unwrap();
    assert!(!o.to_string().contains("v6-pw") && o.to_string().contains("pass=***"), "{o}");
}

// --- faults ----------------------------------------------------------------------------------

/// The lease address of a Sentinel set of tests/servers: every sentinel, its master, db 0.
fn sentinel_url(sentinel: &Servers) -> String {
    let addrs: Vec<&str> =
        sentinel.get("/sentinel_addrs").as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    format!("redis+sentinel://{}/{}/0", addrs.join(","), sentinel.str("/master_name"))
}

#[test]
fn a_sentinel_failover_while_four_processes_issue_repeats_nothing() {
    let mut sentinel = Servers::start("sentinel", &["--replicas", "1", "--sentinels", "3"]);
    let url = sentinel_url(&sentinel);
    let workers: Vec<Worker> =
        (0..4).map(|_| Worker::spawn(LAYOUT, "lease_ttl_ms=3000;max_wait_ms=3000", &url)).collect();
    let values: HashSet<u64> = workers.iter().map(Worker::opened).collect();
    assert_eq!(values.len(), 4, "four holders, four values");
    for w in &workers {
        w.wait("1000 IDs", |w| w.ids().len() >= 1000);
    }
    sentinel.command("failover");
    let marks: Vec<usize> = workers.iter().map(|w| w.ids().len()).collect();
    for (w, mark) in workers.iter().zip(&marks) {
        w.wait("IDs from the new master", |w| w.ids().len() >= mark + 3000);
    }
    let mut all = vec![];
    for w in workers {
        all.extend(ids_of(&w.finish()));
    }
    assert_unique(&all);
}

/// Issue 38's Sentinel repeat, found by the fault suite's soak: the master is stopped, the
/// sentinels fail over, and the old master comes back still saying it is the master (until the
/// sentinels make it a replica, seconds later). A holder whose renewals went on to it kept a
/// lease that the new master let expire and gave to a newcomer: 340 repeated IDs. Every script
/// now first asks the sentinels which master they name, so the holder renews on the new master,
/// and the newcomer finds the value held.
///
/// The key is followed on the new master until the holder's last renewal before the stop has
/// run out there (its expiry, `PEXPIRETIME`, is the server's own record): renewed past it, and
/// a newcomer then finds the value held; or gone, when the failover itself outlasted the TTL
/// (a loaded machine: `flaky.sh` met it), and then the holder must not have issued from the
/// value past that expiry until it claimed again (the old code issued on, renewing on the old
/// master). Both read what the servers and the IDs record, not a race with the TTL.
#[test]
fn a_master_back_from_a_stop_after_a_failover_never_keeps_a_lease_alive() {
    const TWO: &str = "time:41,worker:1,sequence:12;epoch=1288834974657";
    const EPOCH_MS: u64 = 1288834974657;
    const OPTIONS: &str = "lease_ttl_ms=6000;max_wait_ms=3000";
    let mut sentinel =
        Servers::start("sentinel", &["--replicas", "1", "--sentinels", "3", "--down-after-ms", "1000"]);
    let url = sentinel_url(&sentinel);
    let holder = Worker::spawn(TWO, OPTIONS, &url);
    let v = holder.opened();
    let other = Worker::spawn(TWO, OPTIONS, &url);
    assert_ne!(other.opened(), v, "two holders, both values");
    holder.wait("IDs", |w| w.ids().len() >= 1000);
    // The holder's key, as the replica (the next master) has it.
    let replica_port = sentinel.get("/replicas/0/port").as_u64().unwrap() as u16;
    let mut replica = Conn::connect(replica_port);
    let pattern = format!("libsnowflake:*:worker={v}");
    let start = Instant::now();
    while keys(&mut replica, &pattern).len() != 1 {
        assert!(start.elapsed() < MINUTES, "the replica never had the holder's key");
        std::thread::sleep(Duration::from_millis(20));
    }
    let key = keys(&mut replica, &pattern).remove(0);
    let old = sentinel.str("/master/name").to_string();
    // The key's expiry, Unix ms, on a server's clock (this host's); negative: no key.
    let expiry = |c: &mut Conn| match c.call(&["PEXPIRETIME", &key]) {
        Reply::Int(ms) => ms,
        r => panic!("{r:?}"),
    };
    sentinel.command(&format!("freeze {old}"));
    // What the replica has once the master is stopped: the expiry of the holder's last renewal
    // before the stop (a renewal still in the replication stream may land after it).
    let at_stop = expiry(&mut replica);
    assert!(at_stop >= 0, "the holder's key expired on the replica before the stop");
    sentinel.command("await-master new");
    sentinel.command(&format!("thaw {old}"));
    // The old master is back and says it is the master. Follow the key on the new one, which
    // takes nothing from the old one any more, from the expiry it has now.
    let new_port = sentinel.get("/master/port").as_u64().unwrap() as u16;
    let mut new_master = Conn::connect(new_port);
    let named = expiry(&mut new_master);
    let first = if named >= 0 { named } else { at_stop };
    let start = Instant::now();
    let renewed = named >= 0
        && loop {
            let now = expiry(&mut new_master);
            if now < 0 {
                break false;
            }
            if now > first {
                break true;
            }
            assert!(start.elapsed() < MINUTES, "the key neither expired nor was renewed on the new master");
            std::thread::sleep(Duration::from_millis(20));
        };
    // A newcomer now: where the holder renewed on the master the sentinels name, the value is
    // held, and it gets nothing (the other value is the other holder's).
    let newcomer = Worker::spawn(TWO, OPTIONS, &url);
    newcomer.wait("the end of its open", |w| w.count("OPEN ") + w.count("OPENERR ") > 0);
    let mut all = vec![];
    // A newcomer that opened ends first, releasing its value, which the holder may need back.
    let mut newcomer_lines = vec![];
    if newcomer.count("OPEN ") > 0 {
        newcomer.wait("IDs", |w| w.ids().len() >= 2000);
        newcomer_lines = newcomer.finish();
        all.extend(ids_of(&newcomer_lines));
    }
    let before = holder.ids().len();
    holder.wait("IDs after the failover", |w| w.ids().len() >= before + 2000);
    let holder_lines = holder.finish();
    all.extend(ids_of(&holder_lines));
    all.extend(ids_of(&other.finish()));
    assert_unique(&all);
    let ms = |id: u64| (id >> 13) + EPOCH_MS;
    let of_v = |lines: &[String]| -> Vec<u64> {
        ids_of(lines).into_iter().filter(|id| (id >> 12) & 1 == v).collect()
    };
    // The holder's IDs from `v` stamped past `at` (50 ms more: this host's wall clock beside
    // the library's, which moves with the monotonic clock) before its next claim: none but the
    // batch of 64 that a claim again inside it may print before the worker's `CLAIMED` line.
    let claimed = holder_lines.iter().position(|l| l.starts_with("CLAIMED ")).unwrap_or(holder_lines.len());
    let past = |at: u64| of_v(&holder_lines[..claimed]).into_iter().filter(|&id| ms(id) > at + 50).count();
    if !renewed {
        let n = past(first as u64);
        assert!(
            n <= 64,
            "the key of `worker`={v} expired on the new master at {first} (Unix ms), and the holder issued {n} IDs from it later without claiming it again"
        );
    }
    if let Some(&taken) = of_v(&newcomer_lines).first() {
        let n = past(ms(taken));
        assert!(
            n <= 64,
            "a newcomer issued from `worker`={v} at {} (renewed on the new master: {renewed}), and the holder issued {n} IDs from it later without claiming it again",
            ms(taken)
        );
    }
}

#[test]
fn a_holder_stopped_past_its_ttl_repeats_nothing_and_issues_again_once_a_value_is_free() {
    const TWO: &str = "time:41,worker:1,sequence:12;epoch=1288834974657";
    let server = start_redis();
    let url = format!("redis://127.0.0.1:{}/0", server.port);
    let two = Layout::parse(TWO).unwrap();
    let stopped = Worker::spawn(TWO, "lease_ttl_ms=2000;max_wait_ms=3000", &url);
    let v = stopped.opened();
    stopped.wait("IDs", |w| w.ids().len() >= 1000);
    let other = open_patiently(&two, "", &format!("lease={url};lease_ttl_ms=2000"));
    assert_ne!(other.stats().lease_value, Some(v));
    let start = Instant::now();
    stop_outside_setup(stopped.pid(), start);
    // Its key expires in Redis (nobody renews it): follow Redis, not a clock.
    let mut admin = Conn::connect(server.port);
    while !keys(&mut admin, &format!("libsnowflake:*:worker={v}")).is_empty() {
        assert!(start.elapsed() < MINUTES);
        std::thread::sleep(Duration::from_millis(50));
    }
    let taker = open_patiently(&two, "", &format!("lease={url};lease_ttl_ms=2000"));
    assert_eq!(taker.stats().lease_value, Some(v), "the stopped holder's value is the only free one");
    let mut taken: Vec<u64> = (0..2000).map(|_| next_id_patiently(&taker)).collect();
    assert_eq!(unsafe { libc::kill(stopped.pid(), libc::SIGCONT) }, 0);
    // Woken, it finds its lease lapsed and no value free: it says so, and issues nothing.
    stopped.wait("an error", |w| w.count("ERR ") > 0);
    let frozen_ids = stopped.ids().len();
    taken.extend((0..2000).map(|_| next_id_patiently(&taker)));
    // Freed, the value is claimed again by the woken holder, which issues again.
    drop(taker);
    stopped.wait("IDs after the value was freed", |w| w.ids().len() >= frozen_ids + 2000);
    let lines = stopped.finish();
    assert!(
        lines.iter().any(|l| l.starts_with("ERR ERR_SNOWFLAKE_LEASE")),
        "{:?}",
        &lines.iter().filter(|l| !l.starts_with("ID")).collect::<Vec<_>>()
    );
    let others: Vec<u64> = (0..1000).map(|_| next_id_patiently(&other)).collect();
    assert_unique(ids_of(&lines).iter().chain(&taken).chain(&others));
}

/// The state of a process (`T` once stopped), from /proc.
fn process_state(pid: i32) -> char {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    stat.rsplit_once(") ").and_then(|(_, rest)| rest.chars().next()).unwrap()
}

/// Whether process `pid` holds a `flock` (a host record's set-up lock, which it holds for a
/// moment while it opens the record), where `/proc/locks` lists them.
fn holds_flock(pid: i32) -> bool {
    let locks = std::fs::read_to_string("/proc/locks").unwrap();
    locks.lines().any(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        f.get(1) == Some(&"FLOCK") && f.get(4) == Some(&pid.to_string().as_str())
    })
}

/// Stops `pid` (SIGSTOP) outside its record's set-up lock: stopped inside it, the process
/// would rightly make every other opener of the record wait (and then refuse, naming it),
/// which is another test's premise. It runs on for a moment and is stopped again.
fn stop_outside_setup(pid: i32, start: Instant) {
    loop {
        assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
        while process_state(pid) != 'T' {
            assert!(start.elapsed() < MINUTES);
            std::thread::sleep(Duration::from_millis(5));
        }
        if !holds_flock(pid) {
            return;
        }
        eprintln!("stopped inside its set-up lock: it runs on for a moment");
        assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Opening never returns a lapsed lease: a process stopped (SIGSTOP) while it opens (waiting
/// out the first claim on an empty Redis), past its TTL, while another process takes its
/// value, gets an error when it wakes, not a generator whose lease lapsed.
#[test]
fn opening_never_returns_a_lapsed_lease() {
    const TWO: &str = "time:41,worker:1,sequence:12;epoch=1288834974657";
    let two = Layout::parse(TWO).unwrap();
    for attempt in 0.. {
        assert!(attempt < 5, "the opener was never stopped inside its open: the premise of the test");
        // A Redis of its own each time: the first claim of a value waits only on an empty one.
        let server = start_redis();
        let url = format!("redis://127.0.0.1:{}/0", server.port);
        // The other value stays held whatever the machine's load: a TTL no starved renewal
        // outlives.
        let other = open_patiently(&two, "", &format!("lease={url};lease_ttl_ms=60000"));
        let v = 1 - worker(&other);
        let opener = Worker::spawn(TWO, "lease_ttl_ms=2000;max_wait_ms=3000", &url);
        // Its claim is in Redis: it now waits out about 2 s before `open` returns. Stop it.
        let mut admin = Conn::connect(server.port);
        let pattern = format!("libsnowflake:*:worker={v}");
        let start = Instant::now();
        while keys(&mut admin, &pattern).is_empty() {
            if opener.count("OPENERR ") > 0 {
                break;
            }
            assert!(start.elapsed() < MINUTES, "no claim: {}", opener.text());
            std::thread::sleep(Duration::from_millis(5));
        }
        if opener.count("OPENERR ") > 0 {
            // Its first claim met a Redis slow to answer under the machine's load ("did not
            // answer in time", as its 2 s TTL allows): it never claimed, so no premise.
            eprintln!("attempt {attempt}: the opener failed before it claimed ({}); again", opener.text());
            continue;
        }
        stop_outside_setup(opener.pid(), start);
        // Nobody renews its key now: it expires (follow Redis, not a clock), and the value
        // goes to another process.
        while !keys(&mut admin, &pattern).is_empty() {
            assert!(start.elapsed() < MINUTES);
            std::thread::sleep(Duration::from_millis(50));
        }
        let taker = open_patiently(&two, "", &format!("lease={url};lease_ttl_ms=2000"));
        assert_eq!(worker(&taker), v, "the stopped opener's value is the only free one");
        if opener.count("OPEN ") > 0 {
            // It returned from open before it stopped (a slow poll here): no premise.
            eprintln!("attempt {attempt}: the opener had opened before it was stopped; again");
            continue;
        }
        assert_eq!(unsafe { libc::kill(opener.pid(), libc::SIGCONT) }, 0);
        opener.wait("the end of open", |w| w.count("OPEN ") + w.count("OPENERR ") > 0);
        let line = opener
            .lines
            .lock()
            .unwrap()
            .iter()
            .find(|l| l.starts_with("OPEN ") || l.starts_with("OPENERR "))
            .cloned()
            .unwrap();
        assert!(
            // Its value is taken and the other held ("all 2 values of `worker` are leased"), or
            // its claim again met a Redis slow to answer: either way no generator.
            line.starts_with("OPENERR ERR_SNOWFLAKE_LEASE"),
            "woken past its TTL with its value taken, open must fail: {line}"
        );
        let ids: Vec<u64> =
            [&taker, &other].iter().flat_map(|g| (0..1000).map(|_| next_id_patiently(g))).collect();
        assert_unique(&ids);
        return;
    }
}

#[test]
fn a_frozen_redis_stops_holders_before_the_ttl_and_they_recover_by_themselves() {
    let mut server = start_redis();
    let ttl = 3000;
    let g = open_ok(server.port, ttl);
    let before: Vec<u64> = (0..1000).map(|_| next_id_patiently(&g)).collect();
    server.servers.command("freeze");
    let frozen_ms = now_ms(); // no earlier than the freeze
    let (during, errors) = issue_while(&g, |_, errors| errors > 0);
    let last = issued_at(*during.last().unwrap_or(before.last().unwrap()));
    assert!(last < frozen_ms + ttl, "stopped before the TTL ran out: issued {} ms after", last - frozen_ms);
    assert_eq!(errors[0].kind(), ErrorKind::Lease, "{}", errors[0]);
    // Past the TTL, still frozen: every call fails (quickly, without a Redis call for each).
    while now_ms() < frozen_ms + ttl + 500 {
        assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::Lease);
        std::thread::sleep(Duration::from_millis(50));
    }
    server.servers.command("thaw");
    let (after, _) = issue_while(&g, |ids, _| ids.len() >= 2000);
    assert!(g.stats().lease_claims >= 2 && g.stats().lease_losses >= 1, "{:?}", g.stats());
    assert_unique(before.iter().chain(&during).chain(&after));
}

/// Issue 31: a held lease issues on the fast path (loads and compares, no call), and that
/// path closes before the lease's validity ends (4/5 of the TTL after the last renewal sent),
/// by a tenth of the TTL: room for the cheap clock reading's lag. Redis frozen: no renewal
/// comes, and no ID from the fast path is from later than 7/10 of the TTL after the freeze.
#[test]
fn a_lease_issues_on_the_fast_path_until_before_its_validity_ends() {
    let mut server = start_redis();
    let ttl = 2000;
    let g = open_ok(server.port, ttl);
    // The premise: the fast path still open once Redis is frozen. On a loaded machine the
    // freeze can take longer than what is left of the path (7/10 of the TTL after the last
    // renewal): then Redis is thawed, the path waited for again, and the freeze tried again.
    let mut attempts = 0;
    let (frozen_ms, mut last_fast) = loop {
        attempts += 1;
        assert!(attempts <= 20, "the fast path never outlived a freeze: {:?}", g.stats());
        // A claim's first call takes the general path, which opens the fast one (a renewal
        // that came late on a loaded machine closes it until the next claim).
        issue_while(&g, |_, _| g.next_id_fast().is_some());
        server.servers.command("freeze");
        let frozen_ms = now_ms(); // no earlier than the last renewal's send time
        if let Some(id) = g.next_id_fast() {
            break (frozen_ms, Some(id));
        }
        server.servers.command("thaw");
        issue_while(&g, |_, _| g.next_id_fast().is_some());
    };
    while now_ms() < frozen_ms + ttl {
        if let Some(id) = g.next_id_fast() {
            last_fast = Some(id);
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    let last = issued_at(last_fast.expect("the fast path issued after the freeze, until it closed"));
    // The clocks: the test's wall clock, the generator's monotonic one anchored to it at start.
    assert!(
        last < frozen_ms + ttl * 7 / 10 + 20,
        "the fast path issued {} ms after the freeze (TTL {ttl} ms)",
        last - frozen_ms
    );
    assert!(g.next_id_fast().is_none());
    assert_eq!(g.next_id().unwrap_err().kind(), ErrorKind::Lease);
    server.servers.command("thaw");
    let (after, _) = issue_while(&g, |ids, _| ids.len() >= 100);
    assert!(after.iter().all(|&id| id > last_fast.unwrap()));
    // Claimed again, the fast path opens again: at once, or, where a renewal came late on a
    // loaded machine (flaky.sh met it), once one comes in time (`issue_while` gives it minutes).
    let (more, _) = issue_while(&g, |_, _| g.next_id_fast().is_some());
    assert!(more.iter().all(|&id| id > last_fast.unwrap()));
}

/// Issue 15, case 3: after Redis lost its data, the next holder's start must cover what a
/// holder with larger settings may still issue. Holder A: TTL 60 s, window 30 s (lowered to
/// LEASE_MAX_WINDOW_MS), issuing; FLUSHALL; holder B with a TTL of 500 ms claims A's value
/// and issues beside A, which goes on until it notices the loss and claims another value.
/// (B's TTL was 100 ms: Redis's replies then time out after 50 ms, which flaky.sh's load
/// exceeded for minutes on end, so B never opened.)
/// B is kept (renewing) until then: closed earlier, it would free the value, and A could take
/// it back legitimately (flaky.sh met that: Redis answered late, so A noticed after B closed).
#[test]
fn after_a_data_loss_holders_with_other_settings_repeat_nothing() {
    let server = start_redis();
    let port = server.port;
    let a = open_patiently(
        &layout(),
        "",
        &format!(
            "lease=redis://127.0.0.1:{port}/0;lease_ttl_ms=60000;state_window_ms=30000;max_wait_ms=3000"
        ),
    );
    // A pauses (between two calls, so it cannot notice the loss first) while Redis loses its
    // data and B claims; then both issue, A until it has noticed and claimed again.
    use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
    let (hold, parked, stop) = (AtomicBool::new(false), AtomicBool::new(false), AtomicBool::new(false));
    let (a_ids, (b_ids, b_value, b)) = std::thread::scope(|scope| {
        let a_side = scope.spawn(|| {
            issue_while(&a, |_, _| {
                while hold.load(SeqCst) {
                    parked.store(true, SeqCst);
                    std::thread::sleep(Duration::from_millis(1));
                }
                stop.load(SeqCst) && a.stats().lease_claims >= 2
            })
            .0
        });
        struct Stop<'a>(&'a AtomicBool, &'a AtomicBool);
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                self.0.store(false, SeqCst);
                self.1.store(true, SeqCst);
            }
        }
        let b = {
            let _stop = Stop(&hold, &stop);
            std::thread::sleep(Duration::from_millis(300));
            let a_value = a.stats().lease_value;
            hold.store(true, SeqCst);
            while !parked.load(SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
            let b = after_a_data_loss_claim(
                port,
                &layout(),
                &format!("lease=redis://127.0.0.1:{port}/0;lease_ttl_ms=500;max_wait_ms=3000"),
                a_value,
            );
            hold.store(false, SeqCst);
            let (ids, _) = issue_while(&b, |ids, _| ids.len() >= 20_000);
            (ids, a_value, b)
        };
        (a_side.join().unwrap(), b)
    });
    assert_unique(a_ids.iter().chain(&b_ids));
    let a_stats = a.stats();
    assert!(a_stats.lease_claims >= 2, "A never noticed the loss: {a_stats:?}");
    // A claimed another value than B's while B held it. A took B's value only if B's lease had
    // lapsed by then (a 500 ms TTL whose renewals a loaded machine delays): B's next call then
    // finds it lost, counts the loss, and claims another value. A B that still holds the value
    // issues with it, and fails this.
    if a_stats.lease_value == b_value {
        next_id_patiently(&b);
        let b_stats = b.stats();
        assert!(
            b_stats.lease_losses >= 1 && b_stats.lease_value != b_value,
            "A took {b_value:?} while B still held it: A {a_stats:?}, B {b_stats:?}"
        );
    }
}

/// Issue 15, case 3 with drift: A runs ahead of its clock by up to max_drift_ms (the cap,
/// LEASE_MAX_DRIFT_MS) on a layout of 16 IDs a tick; Redis loses its data; B, with no drift,
/// claims A's value (A makes no call meanwhile, so it cannot claim it back first) and issues.
/// A larger drift is refused with a Redis lease. B's TTL is a minute, so that it holds the
/// value for certain when A claims again: with 100 ms, a loaded machine (`flaky.sh`) let B's
/// renewals miss it, and A took its old value back, legitimately, failing the last assert.
#[test]
fn after_a_data_loss_a_holder_that_ran_ahead_is_not_repeated() {
    const SMALL: &str = "time:41,worker:3,sequence:4;epoch=1288834974657";
    let small = Layout::parse(SMALL).unwrap();
    let server = start_redis();
    let url = format!("redis://127.0.0.1:{}/0", server.port);
    let err = open_with(&small, "", &format!("lease={url};max_drift_ms=5000")).unwrap_err();
    assert!(err.to_string().contains("at most 1000"), "{err}");
    let a = open_patiently(
        &small,
        "",
        &format!("lease={url};lease_ttl_ms=3000;max_drift_ms=1000;max_wait_ms=3000"),
    );
    let mut a_ids = vec![];
    let mut buf = [0u64; 64];
    while a.stats().drift_ms < 700 {
        match a.fill(&mut buf) {
            Ok(()) => a_ids.extend_from_slice(&buf),
            // A reservation refused for the moment on a loaded machine ("did not answer in
            // time", CI met it): the IDs written before it count, and A goes on.
            Err(e) if late(&e.error) => a_ids.extend_from_slice(&buf[..e.written]),
            Err(e) => panic!("A's fill failed: {e:?}"),
        }
    }
    let b = after_a_data_loss_claim(
        server.port,
        &small,
        &format!("lease={url};lease_ttl_ms=60000;max_wait_ms=3000"),
        a.stats().lease_value,
    );
    let (b_ids, _) = issue_while(&b, |ids, _| ids.len() >= 20_000);
    let (a_after, _) = issue_while(&a, |ids, _| ids.len() >= 2_000);
    assert_unique(a_ids.iter().chain(&b_ids).chain(&a_after));
    assert_ne!(a.stats().lease_value, b.stats().lease_value, "{:?}", a.stats());
}

/// Issue 15, case 4: holders leasing different fields of one layout meet on one key per
/// identity, so that none is handed another's identity.
#[test]
fn holders_of_different_lease_fields_never_share_an_identity() {
    const TWO_FIELDS: &str = "time:41,datacenter:1,worker:1,sequence:12;epoch=1288834974657";
    let l = Layout::parse(TWO_FIELDS).unwrap();
    let server = start_redis();
    let url = format!("redis://127.0.0.1:{}/0", server.port);
    let by_worker = open_patiently(&l, "datacenter=1", &format!("lease={url};lease_field=worker"));
    assert_eq!(by_worker.stats().lease_value, Some(0), "datacenter=1,worker=0");
    let first = open_patiently(&l, "worker=0", &format!("lease={url};lease_field=datacenter"));
    assert_eq!(first.stats().lease_value, Some(0), "datacenter=0,worker=0");
    // datacenter=1,worker=0 is held by the first holder: no value of `datacenter` is left.
    let err = open_with(&l, "worker=0", &format!("lease={url};lease_field=datacenter")).unwrap_err();
    assert!(err.to_string().contains("all 2 values of `datacenter` are leased"), "{err}");
    let mut all = vec![];
    for g in [&by_worker, &first] {
        all.extend((0..5000).map(|_| next_id_patiently(g)));
    }
    assert_unique(&all);
}

#[test]
fn opening_on_an_empty_redis_waits_at_most_the_documented_bound() {
    let server = start_redis();
    let before_ms = now_ms();
    let started = Instant::now();
    let g = open_ok(server.port, 3000);
    eprintln!("a claim on an empty Redis took {:?}", started.elapsed());
    // Redis has no mark: the first ID is LEASE_MAX_WINDOW_MS + LEASE_MAX_DRIFT_MS + a tick
    // past the claim, by the ID's own instant.
    let id = next_id_patiently(&g);
    assert!(issued_at(id) >= before_ms + 2000, "{} ms after", issued_at(id) - before_ms);
}
