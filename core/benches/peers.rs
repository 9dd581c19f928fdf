//! `next_id` next to the fastest Rust peers, in one run, on a layout whose capacity is not the
//! limit (`time:41,worker:1,sequence:22`: 4M IDs a millisecond, so nobody waits for the clock):
//!
//! - ours: `Generator::new` (the process's state for its identity, the cached monotonic
//!   clock; what every binding calls);
//! - ferroid 2's lock-free `AtomicSnowflakeGenerator` with its `MonotonicClock` (a background
//!   thread ticks an atomic every millisecond);
//! - snowflaked's `sync::Generator` (a mutex and `SystemTime` per ID).
//!
//! `cargo bench -p snowflake-core --bench peers`. Figures, not assertions: compare the lines
//! of one run.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use ferroid::generator::AtomicSnowflakeGenerator;
use ferroid::time::MonotonicClock as FerroidClock;
use snowflake_core::{Generator, Layout, Options};

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
}

criterion_group!(benches, peers);
criterion_main!(benches);
