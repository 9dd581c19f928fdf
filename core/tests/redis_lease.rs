//! `lease=redis://…` against a real `redis-server` started here: racing claimants get distinct
//! values; a holder whose key is deleted, or whose Redis stops, stops issuing before its TTL
//! ends; the next holder starts above everything the previous one issued, also after Redis
//! restarts empty; a closed holder releases its value.
//!
//! Times are judged by the IDs' own instants (the generator's clock when it issued them), never
//! by when this thread got to see them: a loaded machine may hold a thread back for a while.
//! TTLs are long enough that Redis's replies (timeout TTL/5) arrive in time under load.
#![cfg(all(feature = "std", unix))]

mod common;
use common::{start_redis, Conn, Reply};
use snowflake_core::{Error, Generator, Layout, Options};
use std::collections::HashSet;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const LAYOUT: &str = "time:41,worker:3,sequence:12;epoch=1288834974657";

fn open(port: u16, ttl_ms: u64) -> Result<Generator, Error> {
    let layout = Layout::parse(LAYOUT).unwrap();
    let options =
        Options::parse(&format!("lease=redis://127.0.0.1:{port}/0;lease_ttl_ms={ttl_ms};max_wait_ms=50"))
            .unwrap();
    Generator::new(&layout, Default::default(), options)
}

fn worker(g: &Generator) -> u64 {
    g.node().get(1)
}

/// Issues until the first error (or `limit`), pausing a little between IDs.
fn issue_until_error(g: &Generator, limit: Duration) -> (Vec<u64>, Option<Error>) {
    let start = Instant::now();
    let mut ids = vec![];
    while start.elapsed() < limit {
        match g.next_id() {
            Ok(id) => ids.push(id),
            Err(e) => return (ids, Some(e)),
        }
        std::thread::sleep(Duration::from_micros(300));
    }
    (ids, None)
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

/// The instant an ID was issued at (its tick's start).
fn issued_at(id: u64) -> u64 {
    Layout::parse(LAYOUT).unwrap().decode(id).unwrap().unix_ms
}

#[test]
fn racing_claimants_get_distinct_values() {
    let server = start_redis();
    let port = server.port;
    let threads: Vec<_> = (0..8).map(|_| std::thread::spawn(move || open(port, 5000))).collect();
    let gens: Vec<Generator> = threads.into_iter().map(|t| t.join().unwrap().unwrap()).collect();
    let workers: HashSet<u64> = gens.iter().map(worker).collect();
    assert_eq!(workers.len(), 8, "8 claimants, 8 values of a 3-bit field");
    let err = open(port, 5000).unwrap_err();
    assert!(err.to_string().contains("all 8 values of `worker` are leased"), "{err}");
    let mut all = HashSet::new();
    for g in &gens {
        for _ in 0..10_000 {
            assert!(all.insert(g.next_id().unwrap()));
        }
    }
}

#[test]
fn a_deleted_key_stops_the_holder_and_the_next_starts_above_it() {
    let server = start_redis();
    let ttl = 3000;
    let old = open(server.port, ttl).unwrap();
    let w = worker(&old);
    let first: Vec<u64> = (0..1000).map(|_| old.next_id().unwrap()).collect();
    let mut admin = Conn::connect(server.port);
    let keys = match admin.call(&["KEYS", &format!("libsnowflake:*:worker:{w}")]) {
        Reply::Array(k) => k,
        r => panic!("{r:?}"),
    };
    assert_eq!(keys.len(), 1);
    let Reply::Bulk(Some(key)) = &keys[0] else { panic!() };
    assert_eq!(admin.call(&["DEL", key]), Reply::Int(1));
    // No earlier than the deletion. The old holder must stop (its renewal finds the key gone),
    // having issued nothing a TTL after it.
    let deleted_ms = now_ms();
    let (late, err) = issue_until_error(&old, Duration::from_secs(120));
    assert_eq!(err, Some(Error::LeaseLost), "the old holder must stop");
    let last = issued_at(*late.last().unwrap_or(first.last().unwrap()));
    assert!(last < deleted_ms + ttl, "it issued at {last}, {} ms after the deletion", last - deleted_ms);
    // A newcomer claims the freed value and starts above the old holder's reservation.
    let newcomer = open(server.port, ttl).unwrap();
    assert_eq!(worker(&newcomer), w, "the freed value is claimed again");
    let new_ids: Vec<u64> = (0..1000).map(|_| newcomer.next_id().unwrap()).collect();
    let old_max = late.iter().chain(&first).max().unwrap();
    assert!(new_ids[0] > *old_max, "the new holder starts above the old holder's IDs");
}

#[test]
fn redis_stopping_stops_issuing_before_the_ttl_and_a_restart_repeats_nothing() {
    let mut server = start_redis();
    let port = server.port;
    let ttl = 3000;
    let g = open(port, ttl).unwrap();
    let before: Vec<u64> = (0..500).map(|_| g.next_id().unwrap()).collect();
    std::thread::sleep(Duration::from_millis(ttl / 2)); // a renewal has happened
    server.kill();
    let killed_ms = now_ms(); // no earlier than the kill
    let (during, err) = issue_until_error(&g, Duration::from_secs(120));
    assert_eq!(err, Some(Error::LeaseLost));
    let last = issued_at(*during.last().unwrap_or(before.last().unwrap()));
    assert!(last < killed_ms + ttl, "stopped before the TTL ran out: issued {} ms after", last - killed_ms);
    // Redis comes back empty (no persistence) on the same address: no high-water mark
    // survives. A new holder of the same value must still never repeat an ID.
    server.start();
    let next = open(port, ttl).unwrap();
    assert_eq!(worker(&next), worker(&g), "the only value in use is free again: same value");
    let after: Vec<u64> = (0..500).map(|_| next.next_id().unwrap()).collect();
    let old: HashSet<u64> = before.iter().chain(&during).copied().collect();
    assert!(after.iter().all(|id| !old.contains(id)));
    assert!(after[0] > *old.iter().max().unwrap());
}

#[test]
fn closing_releases_the_value_with_its_exact_high_water_mark() {
    let server = start_redis();
    let g = open(server.port, 5000).unwrap();
    let w = worker(&g);
    let last = (0..100).map(|_| g.next_id().unwrap()).last().unwrap();
    drop(g);
    // The mark stored is the exact end of what was issued (the tick after the last ID's), not
    // the reservation ahead of it: the next holder need not wait for anything.
    let mut admin = Conn::connect(server.port);
    let Reply::Array(keys) = admin.call(&["KEYS", &format!("libsnowflake:*:worker:{w}:hwm")]) else {
        panic!()
    };
    let [Reply::Bulk(Some(key))] = &keys[..] else { panic!("{keys:?}") };
    let tick = Layout::parse(LAYOUT).unwrap().decode(last).unwrap().tick;
    assert_eq!(admin.call(&["GET", key]), Reply::Bulk(Some((tick + 1).to_string())), "the exact mark");
    assert_eq!(admin.call(&["EXISTS", key.trim_end_matches(":hwm")]), Reply::Int(0), "released");
    let again = open(server.port, 5000).unwrap();
    assert_eq!(worker(&again), w, "released: the same value is free");
    assert!(again.next_id().unwrap() > last);
}

/// Review finding: a child of fork() dropping its copy of the generator (an exiting
/// interpreter) must not release the parent's lease, or a newcomer would take the value
/// while the parent still issues with it.
#[test]
fn a_forked_child_does_not_release_the_parents_lease() {
    let server = start_redis();
    let parent = open(server.port, 5000).unwrap();
    let w = worker(&parent);
    // SAFETY: the child drops a bitwise copy (the only one it ever drops) and _exits.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        drop(unsafe { std::ptr::read(&parent) });
        unsafe { libc::_exit(0) };
    }
    let mut status = 0;
    unsafe { libc::waitpid(pid, &mut status, 0) };
    let newcomer = open(server.port, 5000).unwrap();
    assert_ne!(worker(&newcomer), w, "the parent's value was released by its child");
    assert!(parent.next_id().is_ok());
}
