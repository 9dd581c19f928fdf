//! Criterion benches for the figures in issue 2: `next_id` against the layout's capacity and
//! against a clock read plus a compare-and-swap, `next_ids` throughput, two threads sharing one
//! generator, a generator made per request. Run: `cargo bench -p snowflake-core`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use snowflake_core::{decode_str, encode, Clock, Encoding, Generator, Layout, MonotonicClock, Options};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// 22 sequence bits: 4M IDs a millisecond, so the clock never limits.
const WIDE: &str = "time:41,worker:1,sequence:22;epoch=1288834974657;tick=1ms";

fn generator(spec: &str) -> Generator {
    let layout = Layout::parse(spec).unwrap();
    let opts = Options { isolated: true, ..Options::default() };
    Generator::new(&layout, Default::default(), opts).unwrap()
}

fn baseline(c: &mut Criterion) {
    let mut g = c.benchmark_group("baseline");
    let clock = MonotonicClock::default();
    g.bench_function("clock read (MonotonicClock::now_ms)", |b| b.iter(|| black_box(clock.now_ms())));
    let word = AtomicU64::new(0);
    g.bench_function("one compare-and-swap", |b| {
        b.iter(|| {
            let cur = word.load(Ordering::Acquire);
            black_box(word.compare_exchange(cur, cur + 1, Ordering::AcqRel, Ordering::Acquire))
        })
    });
    g.finish();
}

fn next_id(c: &mut Criterion) {
    let mut g = c.benchmark_group("next_id");
    g.throughput(Throughput::Elements(1));
    let wide = generator(WIDE);
    g.bench_function("22 sequence bits (capacity not the limit)", |b| {
        b.iter(|| black_box(wide.next_id().unwrap()))
    });
    let twitter = generator("twitter");
    g.bench_function("twitter (4096 per ms: capacity-bound)", |b| {
        b.iter(|| black_box(twitter.next_id().unwrap()))
    });
    g.finish();
}

fn next_ids(c: &mut Criterion) {
    let mut g = c.benchmark_group("next_ids");
    let wide = generator(WIDE);
    for n in [1000usize, 100_000] {
        let mut buf = vec![0u64; n];
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("22 sequence bits", n), &n, |b, _| {
            b.iter(|| wide.fill(black_box(&mut buf)).unwrap())
        });
    }
    g.finish();
}

/// Capacity figures are not criterion's kind of number (they are bound by the wall clock),
/// so they are measured over a fixed time and printed.
fn capacity(c: &mut Criterion) {
    let _ = c;
    let layout = Layout::parse("twitter").unwrap();
    let capacity_per_s = layout.capacity_per_tick() as f64 * 1000.0 / layout.tick_ms() as f64;
    let secs = 2.0;
    let run = |threads: usize| {
        let g = Arc::new(generator("twitter"));
        g.next_id().unwrap();
        let start = Instant::now();
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let g = g.clone();
                std::thread::spawn(move || {
                    let mut n = 0u64;
                    while start.elapsed() < Duration::from_secs_f64(secs) {
                        for _ in 0..256 {
                            black_box(g.next_id().unwrap());
                        }
                        n += 256;
                    }
                    n
                })
            })
            .collect();
        let total: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
        let rate = total as f64 / start.elapsed().as_secs_f64();
        println!(
            "capacity/twitter next_id, {threads} thread(s): {:.0} IDs/s = {:.2}% of {:.0}",
            rate,
            100.0 * rate / capacity_per_s,
            capacity_per_s
        );
    };
    run(1);
    run(2);
    let g = generator("twitter");
    let mut buf = vec![0u64; 1_000_000];
    g.next_id().unwrap();
    let start = Instant::now();
    g.fill(&mut buf).unwrap();
    let rate = buf.len() as f64 / start.elapsed().as_secs_f64();
    println!(
        "capacity/twitter fill(1_000_000): {:.0} IDs/s = {:.2}% of capacity",
        rate,
        100.0 * rate / capacity_per_s
    );
}

fn encodings(c: &mut Criterion) {
    let mut g = c.benchmark_group("encode");
    let id = 1_541_815_603_606_036_480u64;
    for e in Encoding::ALL {
        g.bench_function(e.name(), |b| b.iter(|| black_box(encode(black_box(id), e, false))));
        let text = encode(id, e, false);
        g.bench_function(format!("parse {}", e.name()), |b| {
            b.iter(|| black_box(decode_str(black_box(&text), e, false)))
        });
    }
    g.finish();
}

/// A generator made per request, as a PHP-FPM or gunicorn handler makes one (issue 44: <= 3 us
/// in Python and PHP, whose calls add their own cost to this): `Generator::new` and its first
/// `next_id`, with another generator of the identity alive in the process (the record open);
/// and the same from the texts, as a front end starts (the layout's text, the node's).
fn per_request(c: &mut Criterion) {
    let mut g = c.benchmark_group("a generator per request");
    let shm = std::env::temp_dir().join(format!("bench-generator-{}", std::process::id()));
    std::fs::create_dir_all(&shm).unwrap();
    // Records of its own (set before this bench's generators read the environment).
    std::env::set_var("SNOWFLAKE_SHM_DIR", &shm);
    let layout = Layout::parse(WIDE).unwrap();
    let node = layout.parse_node("worker=1").unwrap();
    let held = Generator::new(&layout, node, Options::default()).unwrap();
    g.bench_function("Generator::new + next_id (identity held)", |b| {
        b.iter(|| black_box(Generator::new(&layout, node, Options::default()).unwrap().next_id().unwrap()))
    });
    g.bench_function("the same from the layout's and node's texts", |b| {
        b.iter(|| {
            let layout = Layout::parse(black_box(WIDE)).unwrap();
            let node = layout.parse_node(black_box("worker=1")).unwrap();
            black_box(Generator::new(&layout, node, Options::default()).unwrap().next_id().unwrap())
        })
    });
    g.finish();
    drop(held);
    let _ = std::fs::remove_dir_all(shm);
}

criterion_group!(benches, baseline, next_id, next_ids, encodings, capacity, per_request);
criterion_main!(benches);
