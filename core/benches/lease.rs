//! What a Redis lease costs, against real servers (tests/servers): the time a claim takes on an
//! empty Redis (it waits out LEASE_MAX_WINDOW_MS + LEASE_MAX_DRIFT_MS) and on a warm one (the
//! value's exact mark is stored), over TCP, TLS and a unix socket; and IDs a second from one
//! thread with a lease next to the same layout without one. Prints figures; asserts nothing
//! about speed.
//!
//!   cargo bench -p snowflake-core --bench lease --features lease-redis

#[path = "../../tests/servers/servers.rs"]
mod servers;

use servers::Servers;
use snowflake_core::{Generator, Layout, Options};
use std::time::{Duration, Instant};

/// A sequence wide enough that the layout's capacity is not what is measured.
const LAYOUT: &str = "time:41,worker:3,sequence:19;epoch=1288834974657";

fn open(layout: &Layout, url: &str, extra: &str) -> Generator {
    let mut o = Options::parse(&format!("lease_ttl_ms=3000;max_wait_ms=3000;{extra}")).unwrap();
    o.set_text("lease", url).unwrap();
    Generator::new(layout, Default::default(), o).unwrap()
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let v = f();
    (v, start.elapsed())
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
    let plain = Servers::start("redis", &[]);
    let tls = Servers::start("redis", &["--tls"]);
    let ca = format!("lease_tls_ca={}", tls.str("/tls/ca_cert"));
    let forms = [
        ("TCP", plain.str("/redis/url").to_string(), String::new()),
        ("unix socket", format!("unix://{}?db=1", plain.str("/redis/unix_socket")), String::new()),
        ("TLS", format!("rediss://localhost:{}/0", tls.port("/redis/port")), ca),
    ];
    println!("lease claims (lease_ttl_ms=3000), median of 5 for warm claims:");
    for (name, url, extra) in &forms {
        let (g, empty) = timed(|| open(&layout, url, extra));
        drop(g); // releases the value with its exact mark
        let mut warm: Vec<Duration> = (0..5)
            .map(|_| {
                let (g, t) = timed(|| open(&layout, url, extra));
                drop(g);
                t
            })
            .collect();
        warm.sort();
        println!("  {name:<12} empty Redis {:>8.1} ms   warm {:>6.2} ms", ms(empty), ms(warm[2]));
    }
    let leased = open(&layout, &forms[0].1, "");
    let alone = Generator::new(&layout, layout.parse_node("worker=7").unwrap(), Options::default()).unwrap();
    for (how, blocks) in [("next_id", false), ("fill", true)] {
        let (with, without) = (rate(&leased, blocks), rate(&alone, blocks));
        println!(
            "IDs/s from one thread ({how}): {:.1} M with a lease, {:.1} M without ({:.0}%)",
            with / 1e6,
            without / 1e6,
            100.0 * with / without
        );
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
