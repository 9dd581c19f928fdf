//! What a lease costs in each engine, against real servers (tests/servers): the time a claim
//! takes on an empty store (it waits out LEASE_MAX_WINDOW_MS + LEASE_MAX_DRIFT_MS) and on a warm
//! one (the value's exact mark is stored); the time a renewal takes; and IDs a second from one
//! thread with a lease next to the same layout without one. Redis over TCP, TLS and a unix
//! socket, a Redis Cluster of 3 primaries (with a replica each), PostgreSQL 15 and MariaDB
//! (both committing durably), each on this host. Prints figures; asserts nothing about speed.
//!
//!   cargo bench -p snowflake-core --bench lease --features lease-redis,lease-postgres,lease-mysql

#[path = "../../tests/servers/servers.rs"]
mod servers;

use servers::Servers;
use snowflake_core::{lease_renewal_times, Generator, Layout, Options};
use std::time::{Duration, Instant};

/// A sequence wide enough that the layout's capacity is not what is measured.
const LAYOUT: &str = "time:41,worker:3,sequence:19;epoch=1288834974657";
/// Warm claims timed per store (a Redis Cluster's take about 2 s each: no mark is trusted
/// there alone, see docs/cli.md), and renewals.
const CLAIMS: usize = 5;
const RENEWALS: usize = 51;

fn options(url: &str, extra: &str) -> Options {
    let mut o = Options::parse(&format!("lease_ttl_ms=3000;max_wait_ms=3000;{extra}")).unwrap();
    o.set_text("lease", url).unwrap();
    o
}

fn open(layout: &Layout, url: &str, extra: &str) -> Generator {
    Generator::new(layout, Default::default(), options(url, extra)).unwrap()
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let v = f();
    (v, start.elapsed())
}

fn median(mut times: Vec<Duration>) -> f64 {
    times.sort();
    ms(times[times.len() / 2])
}

/// IDs a second from one thread over about a second, by `fill` (blocks) and by `next_id`.
fn rate(g: &Generator, blocks: bool) -> f64 {
    let mut buf = [0u64; 256];
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < Duration::from_secs(1) {
        for _ in 0..64 {
            if blocks {
                g.fill(&mut buf).unwrap();
            } else {
                for slot in buf.iter_mut() {
                    *slot = g.next_id().unwrap();
                }
            }
            n += buf.len() as u64;
        }
    }
    std::hint::black_box(buf);
    n as f64 / start.elapsed().as_secs_f64()
}

fn main() {
    let layout = Layout::parse(LAYOUT).unwrap();
    let redis = Servers::start("redis", &[]);
    let tls = Servers::start("redis", &["--tls"]);
    let cluster = Servers::start("redis-cluster", &["--primaries", "3", "--replicas", "1"]);
    // Durable, as a DBA's database is (the test servers turn fsync off for speed): a renewal
    // is a commit, and its fsync is most of its time.
    let durable = ["--tcp", "--pg-config", "fsync=on", "--pg-config", "synchronous_commit=on"];
    let postgres = Servers::start("postgres", &durable);
    let mariadb = Servers::start(
        "mariadb",
        &["--password", "m4ria-pw", "--mysql-config", "innodb_flush_log_at_trx_commit=1"],
    );
    let ca = format!("lease_tls_ca={}", tls.str("/tls/ca_cert"));
    let stores = [
        ("Redis, TCP", redis.str("/redis/url").to_string(), String::new()),
        ("Redis, unix socket", format!("unix://{}?db=1", redis.str("/redis/unix_socket")), String::new()),
        ("Redis, TLS", format!("rediss://localhost:{}/0", tls.port("/redis/port")), ca),
        ("Redis Cluster", cluster.str("/cluster/url").to_string(), String::new()),
        ("PostgreSQL 15", postgres.str("/postgres/dsn").to_string(), String::new()),
        ("MariaDB", mariadb.str("/mariadb/url").to_string(), String::new()),
    ];
    println!("lease_ttl_ms=3000; median of {CLAIMS} warm claims and of {RENEWALS} renewals, in ms:");
    println!("  {:<20} {:>11} {:>10} {:>10}", "store", "empty store", "warm claim", "renewal");
    for (name, url, extra) in &stores {
        let (g, empty) = timed(|| open(&layout, url, extra));
        drop(g); // releases the value with its exact mark
        let warm = (0..CLAIMS)
            .map(|_| {
                let (g, t) = timed(|| open(&layout, url, extra));
                drop(g);
                t
            })
            .collect();
        let renewals =
            lease_renewal_times(&layout, Default::default(), &options(url, extra), RENEWALS).unwrap();
        println!("  {name:<20} {:>11.1} {:>10.2} {:>10.2}", ms(empty), median(warm), median(renewals));
    }
    let alone = Generator::new(&layout, layout.parse_node("worker=7").unwrap(), Options::default()).unwrap();
    println!("IDs/s from one thread, in millions (a generator without a lease: the same layout):");
    for (how, blocks) in [("next_id", false), ("fill", true)] {
        let without = rate(&alone, blocks);
        println!("  {how:<8} without a lease {:>7.1}", without / 1e6);
        for (name, url, extra) in &stores {
            let leased = open(&layout, url, extra);
            let with = rate(&leased, blocks);
            println!("  {how:<8} {name:<22} {:>7.1} ({:.0}%)", with / 1e6, 100.0 * with / without);
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
