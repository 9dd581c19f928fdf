//! The Redis script against a real `redis-server` (apt `redis-server`) of the test's own
//! (tests/servers): 8 concurrent clients take 200k IDs; none repeats, each decodes to its
//! client's node and to a time within a second of Redis's clock; IDs above 2^53 (and above
//! 2^63) are exact.
#![cfg(feature = "std")]

use snowflake_core::{redis_script, Layout};
use std::collections::HashSet;

mod common;
use common::{start_redis, Conn, Reply};

fn redis_ms(c: &mut Conn) -> u64 {
    match c.call(&["TIME"]) {
        Reply::Array(v) => match (&v[0], &v[1]) {
            (Reply::Bulk(Some(s)), Reply::Bulk(Some(us))) => {
                s.parse::<u64>().unwrap() * 1000 + us.parse::<u64>().unwrap() / 1000
            }
            r => panic!("{r:?}"),
        },
        r => panic!("{r:?}"),
    }
}

fn load(c: &mut Conn, layout: &Layout) -> String {
    match c.call(&["SCRIPT", "LOAD", &redis_script(layout)]) {
        Reply::Bulk(Some(sha)) => sha,
        r => panic!("SCRIPT LOAD: {r:?}"),
    }
}

/// Takes `n` IDs, pipelined 64 at a time; retries a full tick.
fn take(c: &mut Conn, sha: &str, key: &str, node: &[&str], n: usize) -> (Vec<u64>, usize) {
    let mut args = vec!["EVALSHA", sha, "1", key];
    args.extend_from_slice(node);
    let (mut ids, mut retries) = (Vec::with_capacity(n), 0);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while ids.len() < n {
        assert!(std::time::Instant::now() < deadline, "no ID for 2 minutes ({retries} retries)");
        let batch = (n - ids.len()).min(64);
        for _ in 0..batch {
            c.send(&args);
        }
        for _ in 0..batch {
            match c.read() {
                Reply::Bulk(Some(s)) => ids.push(s.parse().unwrap()),
                Reply::Error(e) if e.starts_with("ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED") => retries += 1,
                // The first second after Redis starts (see `a_restart_never_repeats_a_tick`).
                Reply::Error(e) if e.contains("Redis started within this tick") => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    retries += 1
                }
                r => panic!("{r:?}"),
            }
        }
    }
    (ids, retries)
}

#[test]
fn eight_clients_200k_ids_exact_and_unique() {
    let server = start_redis();
    let layout = Layout::parse("twitter").unwrap();
    let sha = load(&mut Conn::connect(server.port), &layout);
    let before = redis_ms(&mut Conn::connect(server.port));
    let threads: Vec<_> = (0..8)
        .map(|i| {
            let (sha, port) = (sha.clone(), server.port);
            std::thread::spawn(move || {
                // Two nodes, four clients each: clients of one node share its state key.
                let worker = if i % 2 == 0 { "3" } else { "31" };
                let key = format!("ids:dc1:w{worker}");
                let (ids, _) = take(&mut Conn::connect(port), &sha, &key, &["1", worker], 25_000);
                (worker.parse::<u64>().unwrap(), ids)
            })
        })
        .collect();
    let mut all = HashSet::new();
    let mut results = vec![];
    for t in threads {
        results.push(t.join().unwrap());
    }
    let after = redis_ms(&mut Conn::connect(server.port));
    for (worker, ids) in &results {
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "one client's IDs increase");
        for &id in ids {
            assert!(all.insert(id), "duplicate {id}");
            let p = layout.decode(id).unwrap();
            let node: Vec<_> = layout.node_values(&p.node).collect();
            assert_eq!(node, [("datacenter", 1), ("worker", *worker)], "{id}");
            assert!(p.unix_ms + 1000 >= before && p.unix_ms <= after + 1000, "{id} at {}", p.unix_ms);
            assert!(id > 1 << 53, "the test must cover IDs beyond a double's precision");
        }
    }
    assert_eq!(all.len(), 200_000);
}

#[test]
fn ids_above_i64_max_are_exact_and_bad_input_is_refused() {
    let server = start_redis();
    let mut c = Conn::connect(server.port);
    let layout = Layout::parse("time:41,app:7,sequence:16;epoch=0;tick=1ms").unwrap();
    let sha = load(&mut c, &layout);
    let (ids, _) = take(&mut c, &sha, "big", &["127"], 1000);
    for id in ids {
        assert!(id > i64::MAX as u64);
        let p = layout.decode(id).unwrap();
        assert_eq!(layout.node_values(&p.node).next(), Some(("app", 127)));
        // Every bit as the library composes it.
        assert_eq!(layout.compose(p.unix_ms, &p.node, p.sequence), Ok(id));
    }
    for (args, needle) in [
        (vec!["128"], "app = 128 is out of range: the largest allowed is 127"),
        (vec!["x"], "app = x: a node value is a whole number in digits"),
        // Issue 26: tonumber() took all of these (the last one as 1).
        (vec!["1.0"], "app = 1.0: a node value is a whole number in digits"),
        (vec!["0x1"], "app = 0x1: a node value is a whole number in digits"),
        (vec![" 1"], "app =  1: a node value is a whole number in digits"),
        (vec!["1e0"], "app = 1e0: a node value is a whole number in digits"),
        (vec!["-0"], "app = -0: a node value is a whole number in digits"),
        (vec!["0.99999999999999999"], "a node value is a whole number in digits"),
        (vec!["18446744073709551616"], "a node value is a whole number in digits"),
        (vec!["18446744073709551615"], "is out of range: the largest allowed is 127"),
        (vec![], "expected 1 node values, got 0"),
    ] {
        let mut a = vec!["EVALSHA", sha.as_str(), "1", "k"];
        a.extend(args);
        match c.call(&a) {
            Reply::Error(e) => assert!(e.starts_with("ERR_SNOWFLAKE_VALUE") && e.contains(needle), "{e}"),
            r => panic!("{r:?}"),
        }
    }
    // Leading zeros are digits too.
    take(&mut c, &sha, "zeros", &["007"], 1);
    // A stored tick ahead of Redis's clock (a clock step back): refused, never repeated.
    let far = layout.tick_of(redis_ms(&mut c)).unwrap() + 5000;
    c.call(&["HSET", "ahead", "t", &far.to_string(), "s", "0"]);
    match c.call(&["EVALSHA", &sha, "1", "ahead", "1"]) {
        Reply::Error(e) => assert!(e.starts_with("ERR_SNOWFLAKE_CLOCK_BEHIND behind_ms="), "{e}"),
        r => panic!("{r:?}"),
    }
}

/// A node field wider than 53 bits: its values are read and placed exactly (Lua's doubles
/// would round them).
#[test]
fn node_values_above_2_53_are_exact() {
    let server = start_redis();
    let mut c = Conn::connect(server.port);
    // 16 one-second ticks from a few seconds ago: 58 bits are left for the field.
    let epoch = redis_ms(&mut c) - 3000;
    let layout = Layout::parse(&format!("time:4,big:58,sequence:2;epoch={epoch};tick=1s")).unwrap();
    let sha = load(&mut c, &layout);
    let big = (1u64 << 58) - 3; // 288230376151711741: not a double
    let (ids, _) = take(&mut c, &sha, "wide", &[&big.to_string()], 2);
    for id in ids {
        let p = layout.decode(id).unwrap();
        assert_eq!(layout.node_values(&p.node).next(), Some(("big", big)), "{id}");
    }
}

/// Issue 26: Redis restarted empty (SHUTDOWN NOSAVE, no persistence) within the tick of its
/// last IDs gave the same IDs again. The script never issues at the tick that holds Redis's
/// start: 200 IDs before a restart and 200 after, on a 1-second tick, never meet.
#[test]
fn a_restart_never_repeats_a_tick() {
    let mut server = start_redis();
    let layout = Layout::parse("time:30,worker:4,sequence:16;epoch=1600000000000;tick=1s").unwrap();
    let mut c = Conn::connect(server.port);
    let sha = load(&mut c, &layout);
    let (before, _) = take(&mut c, &sha, "restart", &["3"], 200);
    server.kill();
    server.start();
    let mut c = Conn::connect(server.port);
    let sha = load(&mut c, &layout);
    // At once after the start: refused with when to retry, not issued.
    match c.call(&["EVALSHA", &sha, "1", "restart", "3"]) {
        Reply::Error(e) => {
            assert!(e.starts_with("ERR_SNOWFLAKE_CLOCK_BEHIND behind_ms="), "{e}");
            assert!(e.contains("retry_after_ms=") && e.contains("Redis started within this tick"), "{e}");
        }
        Reply::Bulk(Some(id)) => {
            // Only when the start was in an earlier tick than now (a slow restart).
            let id: u64 = id.parse().unwrap();
            assert!(!before.contains(&id), "{id} issued again");
        }
        r => panic!("{r:?}"),
    }
    let (after, _) = take(&mut c, &sha, "restart", &["3"], 200);
    let last_before = layout.decode(*before.last().unwrap()).unwrap().unix_ms;
    for id in &after {
        assert!(!before.contains(id), "{id} issued before the restart and again after it");
        assert!(layout.decode(*id).unwrap().unix_ms > last_before, "after the restart, a later tick");
    }
}
