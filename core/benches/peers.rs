//! `next_id` next to the fastest Rust peers, in one run, on a layout whose capacity is not the
//! limit (`time:41,worker:1,sequence:22`: 4M IDs a millisecond, so nobody waits for the clock):
//!
//! - ours: `Generator::new` (the process's state for its identity, the cached monotonic
//!   clock; what every binding calls);
//! - ferroid 2's lock-free `AtomicSnowflakeGenerator` with its `MonotonicClock` (a background
//!   thread ticks an atomic every millisecond);
//! - snowflaked's `sync::Generator` (a mutex and `SystemTime` per ID).
//!
//! Then the same generators shared by 2, 4 and 8 threads (each thread issues its share of a
//! batch; the time is the batch's wall time over its IDs: the aggregate cost of one ID). On a
//! machine with fewer cores than threads, the threads also take turns on the cores: compare
//! ours with ferroid's in the same row, not rows with each other.
//!
//! Last, the one-thread and threads rows again with ours and ferroid's alternated round by
//! round: the figures to compare on a shared machine.
//!
//! `cargo bench -p snowflake-core --bench peers` (`-- --warm-up-time 1 --measurement-time 3`
//! for a shorter run). Figures, not assertions: compare the lines of one run.

use criterion::{black_box, criterion_group, BenchmarkId, Criterion};
use ferroid::generator::AtomicSnowflakeGenerator;
use ferroid::time::MonotonicClock as FerroidClock;
use snowflake_core::{Generator, Layout, Options};
use std::sync::Barrier;
use std::time::{Duration, Instant};

const WIDE: &str = "time:41,worker:1,sequence:22;epoch=1288834974657";

ferroid::define_snowflake_id!(
    /// The same field widths in ferroid's terms.
    WideId, u64,
    reserved: 0,
    timestamp: 41,
    machine_id: 1,
    sequence: 22
);

fn peers(c: &mut Criterion) {
    let layout = Layout::parse(WIDE).unwrap();
    let ours = Generator::new(&layout, layout.parse_node("worker=1").unwrap(), Options::default()).unwrap();
    let ferroid: AtomicSnowflakeGenerator<WideId, FerroidClock> =
        AtomicSnowflakeGenerator::new(1, FerroidClock::with_epoch(ferroid::time::TWITTER_EPOCH));
    let snowflaked = snowflaked::sync::Generator::new(1);

    let mut group = c.benchmark_group("peers/next_id (time:41,worker:1,sequence:22)");
    group
        .bench_function("libsnowflake Generator::next_id", |b| b.iter(|| black_box(ours.next_id().unwrap())));
    group.bench_function("ferroid AtomicSnowflakeGenerator::next_id", |b| {
        b.iter(|| black_box(ferroid.next_id(|_| std::hint::spin_loop())))
    });
    group.bench_function("snowflaked sync::Generator::generate", |b| {
        b.iter(|| black_box(snowflaked.generate::<u64>()))
    });
    group.finish();

    let mut group = c.benchmark_group("peers/next_id shared by threads, aggregate per ID");
    for threads in [2, 4, 8] {
        group.bench_with_input(BenchmarkId::new("libsnowflake", threads), &threads, |b, &n| {
            b.iter_custom(|iters| shared(n, iters, || black_box(ours.next_id().unwrap())))
        });
        group.bench_with_input(BenchmarkId::new("ferroid", threads), &threads, |b, &n| {
            b.iter_custom(|iters| shared(n, iters, || black_box(ferroid.next_id(|_| std::hint::spin_loop()))))
        });
    }
    group.finish();
}

/// `iters` calls of `issue` split between `threads` threads that start together: the wall
/// time from the start to the last thread's end.
fn shared<T>(threads: u64, iters: u64, issue: impl Fn() -> T + Sync) -> Duration {
    let start = Barrier::new(threads as usize + 1);
    let each = iters.div_ceil(threads);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                start.wait();
                for _ in 0..each {
                    issue();
                }
            });
        }
        start.wait();
        let t0 = Instant::now();
        // The scope joins every thread before it returns.
        t0
    })
    .elapsed()
}

/// The same rows again, ours and ferroid's alternated round by round (15 rounds of 4M IDs),
/// printed as the median of each round's ratio: on a machine shared with other work, load
/// that comes and goes meets both sides of a round alike, which criterion's groups, measured
/// one after the other, cannot promise.
fn alternated() {
    let layout = Layout::parse(WIDE).unwrap();
    let ours = Generator::new(&layout, layout.parse_node("worker=1").unwrap(), Options::default()).unwrap();
    let ferroid: AtomicSnowflakeGenerator<WideId, FerroidClock> =
        AtomicSnowflakeGenerator::new(1, FerroidClock::with_epoch(ferroid::time::TWITTER_EPOCH));
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!("alternated, median of 15 rounds (ns per ID, aggregate; ratio ours / ferroid):");
    for threads in [1, 2, 4, 8] {
        let (mut a, mut b, mut r) = (vec![], vec![], vec![]);
        for _ in 0..15 {
            let n = 4_000_000;
            let x = shared(threads, n, || black_box(ours.next_id().unwrap())).as_nanos() as f64 / n as f64;
            let y = shared(threads, n, || black_box(ferroid.next_id(|_| std::hint::spin_loop()))).as_nanos()
                as f64
                / n as f64;
            a.push(x);
            b.push(y);
            r.push(x / y);
        }
        println!(
            "  {threads} thread(s): libsnowflake {:.2} ns, ferroid {:.2} ns, ratio {:.2}",
            median(a),
            median(b),
            median(r)
        );
    }
}

criterion_group!(benches, peers);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    // `cargo bench` passes --bench; `cargo test --benches` does not, and wants no figures.
    if std::env::args().any(|a| a == "--bench") {
        alternated();
    }
}
