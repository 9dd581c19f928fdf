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
//! round: the figures to compare on a shared machine, with the CPU, the load before and after,
//! and each row's spread; a round whose threads did not overlap is run again.
//!
//! `cargo bench -p snowflake-core --bench peers` (`-- --warm-up-time 1 --measurement-time 3`
//! for a shorter run; `-- --alternated` for the alternated rows alone, which
//! `scripts/bench-peers.sh` runs 3 times for the median ratio and its range). Figures, not
//! assertions: compare the lines of one run.

#[path = "support/threads.rs"]
mod threads;

use criterion::{black_box, criterion_group, BenchmarkId, Criterion};
use ferroid::generator::AtomicSnowflakeGenerator;
use ferroid::time::MonotonicClock as FerroidClock;
use snowflake_core::{Generator, Layout, Options};
use std::time::Duration;

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
    timed_threads(threads, iters, issue).0
}

/// [`shared`], and whether every thread ran while every other did (see [`threads`]).
fn timed_threads<T>(threads: u64, iters: u64, issue: impl Fn() -> T + Sync) -> (Duration, bool) {
    let each = iters.div_ceil(threads);
    threads::timed_threads(threads as usize, || {
        for _ in 0..each {
            issue();
        }
    })
}

/// `/proc/loadavg`'s first three figures (empty where there is none).
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// The CPU's model name, family and model (a VM's name alone, such as "AMD EPYC", is the same
/// for CPUs generations apart), and how many CPUs this process may run on.
fn cpu() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        info.lines()
            .find(|l| l.split(':').next().is_some_and(|k| k.trim() == name))
            .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
    };
    let model = field("model name").unwrap_or_else(|| "unknown".into());
    let generation = match (field("cpu family"), field("model")) {
        (Some(f), Some(m)) => format!(" (family {f}, model {m})"),
        _ => String::new(),
    };
    format!("{model}{generation}, {} CPUs", std::thread::available_parallelism().map_or(0, |n| n.get()))
}

/// Minimum, median and maximum.
fn spread(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[0], v[v.len() / 2], v[v.len() - 1])
}

/// Rounds per row, and IDs per thread in a round: 2M IDs take a thread 5-30 ms, hundreds of
/// times what starting a thread does, so threads that start at one barrier run together
/// (checked: a round whose threads did not overlap is run again).
const ROUNDS: usize = 15;
const PER_THREAD: u64 = 2_000_000;

/// The same rows again, ours and ferroid's alternated round by round (15 rounds), each round's
/// ratio taken within the round: on a machine shared with other work, load that comes and goes
/// meets both sides of a round alike, which criterion's groups, measured one after the other,
/// cannot promise. Prints the CPU, the load before and after, and each row's spread (minimum,
/// median, maximum) of ns per ID and of the ratio; then one `RATIO` line per row for
/// scripts/bench-peers.sh, which runs the whole set 3 times.
fn alternated() {
    let layout = Layout::parse(WIDE).unwrap();
    let ours = Generator::new(&layout, layout.parse_node("worker=1").unwrap(), Options::default()).unwrap();
    let ferroid: AtomicSnowflakeGenerator<WideId, FerroidClock> =
        AtomicSnowflakeGenerator::new(1, FerroidClock::with_epoch(ferroid::time::TWITTER_EPOCH));
    println!("cpu: {}", cpu());
    println!("load before: {}", load());
    println!("alternated, {ROUNDS} rounds of {PER_THREAD} IDs a thread (ns per ID, aggregate; min / median / max):");
    let mut lines = vec![];
    for threads in [1u64, 2, 4, 8] {
        let n = PER_THREAD * threads;
        let (mut a, mut b, mut r) = (vec![], vec![], vec![]);
        let mut refused = 0;
        while r.len() < ROUNDS {
            let (x, x_ok) = timed_threads(threads, n, || black_box(ours.next_id().unwrap()));
            let (y, y_ok) =
                timed_threads(threads, n, || black_box(ferroid.next_id(|_| std::hint::spin_loop())));
            if !(x_ok && y_ok) {
                refused += 1;
                assert!(
                    refused < 10 * ROUNDS,
                    "{threads} threads never overlapped: is this machine too busy?"
                );
                continue;
            }
            let (x, y) = (x.as_nanos() as f64 / n as f64, y.as_nanos() as f64 / n as f64);
            a.push(x);
            b.push(y);
            r.push(x / y);
        }
        let ((a0, a1, a2), (b0, b1, b2), (r0, r1, r2)) = (spread(a), spread(b), spread(r));
        println!(
            "  {threads} thread(s): libsnowflake {a0:.2} / {a1:.2} / {a2:.2} ns, ferroid {b0:.2} / {b1:.2} / {b2:.2} ns, \
             ratio {r0:.2} / {r1:.2} / {r2:.2}{}",
            if refused > 0 { format!(" ({refused} rounds run again: threads did not overlap)") } else { String::new() }
        );
        lines.push(format!("RATIO threads={threads} median={r1:.3} min={r0:.3} max={r2:.3}"));
    }
    println!("load after: {}", load());
    for l in lines {
        println!("{l}");
    }
}

criterion_group!(benches, peers);

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` does not, and wants no figures.
    let bench = std::env::args().any(|a| a == "--bench");
    // `-- --alternated`: only the alternated rows (what scripts/bench-peers.sh runs).
    if !std::env::args().any(|a| a == "--alternated") {
        benches();
        Criterion::default().configure_from_args().final_summary();
    }
    if bench {
        alternated();
    }
}
