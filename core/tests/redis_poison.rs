//! A Redis lease's claim passes over a value whose stored high-water mark is far in the future
//! (issue 26: one `next_id_at` of 2080 stored by an old version, or a clock far ahead, would
//! lock that value out for every host), says so when no value is left, and a holder refuses
//! such a time itself. Against a real redis-server (tests/servers).
#![cfg(all(feature = "lease-redis", unix))]

mod common;
use common::{start_redis, Conn, Reply};
use snowflake_core::{ErrorKind, Generator, Layout, Options};

/// 2080-01-01T00:00:00Z.
const YEAR_2080_MS: u64 = 3_471_292_800_000;

fn key(layout: &Layout, node: &str) -> String {
    format!("libsnowflake:{{{:016x}}}:{node}", layout.fingerprint())
}

fn open(layout: &Layout, port: u16) -> Result<Generator, snowflake_core::Error> {
    let o = Options::parse(&format!("lease=redis://127.0.0.1:{port}/0;lease_ttl_ms=30000;max_wait_ms=3000"))
        .unwrap();
    Generator::new(layout, Default::default(), o)
}

#[test]
fn a_claim_passes_over_a_value_whose_mark_is_far_in_the_future() {
    let redis = start_redis();
    let mut c = Conn::connect(redis.port);
    let layout = Layout::parse("time:41,worker:3,sequence:12;epoch=1288834974657").unwrap();
    let poisoned_tick = layout.tick_of(YEAR_2080_MS).unwrap().to_string();
    // Values 0 and 1 carry a mark of 2080; 2 a mark that is not even a number.
    for (v, mark) in [(0, poisoned_tick.as_str()), (1, poisoned_tick.as_str()), (2, "garbage")] {
        let hwm = format!("{}:hwm", key(&layout, &format!("worker={v}")));
        assert_eq!(c.call(&["SET", &hwm, mark]), Reply::Simple("OK".into()));
    }
    let g = open(&layout, redis.port).expect("a free value without a poisoned mark is claimed");
    assert_eq!(g.stats().lease_value, Some(3), "the lowest value whose mark is usable");
    let id = g.next_id().unwrap();
    assert!(layout.decode(id).unwrap().unix_ms < YEAR_2080_MS - 1_000_000_000);
    // The poisoned values are left alone (not taken, their marks kept).
    for v in 0..3 {
        let k = key(&layout, &format!("worker={v}"));
        assert_eq!(c.call(&["EXISTS", &k]), Reply::Int(0), "worker={v} was not claimed");
    }

    // With every other value held, the refusal counts the poisoned ones and says why.
    let held: Vec<Generator> = (0..4).map(|_| open(&layout, redis.port).unwrap()).collect();
    let err = open(&layout, redis.port).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Lease);
    let text = err.to_string();
    assert!(text.contains("5 are leased, and 3 were passed over"), "{text}");
    assert!(text.contains("ahead of this host's clock") && text.contains("next_id_at"), "{text}");
    drop(held);
}

#[test]
fn a_holder_refuses_a_time_far_ahead_and_its_mark_stays_near_the_clock() {
    let redis = start_redis();
    let mut c = Conn::connect(redis.port);
    let layout = Layout::parse("time:41,worker:3,sequence:12;epoch=1288834974657").unwrap();
    let g = open(&layout, redis.port).unwrap();
    let value = g.stats().lease_value.unwrap();
    let err = g.next_id_at(YEAR_2080_MS).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Value, "{err}");
    g.next_id().unwrap();
    let hwm = format!("{}:hwm", key(&layout, &format!("worker={value}")));
    let Reply::Bulk(Some(mark)) = c.call(&["GET", &hwm]) else { panic!("no mark stored") };
    let mark: u64 = mark.parse().unwrap();
    let now_tick = layout.tick_of(layout.decode(g.next_id().unwrap()).unwrap().unix_ms).unwrap();
    assert!(mark <= now_tick + 10_000, "the stored mark {mark} is near the clock's tick {now_tick}");
}
