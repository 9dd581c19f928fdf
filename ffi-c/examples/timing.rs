//! The Rust side of tests/c/bench.sh: the same loops as tests/c/bench.c (best of 11 runs), on
//! core's `Generator` directly and on the `extern "C"` functions called from Rust, so the
//! cost of the C boundary can be told apart from the cost of the generator.
//! Run: `cargo run --release -p snowflake-ffi --example timing`.

use snowflake::{
    snowflake_generator_new, snowflake_layout_new, snowflake_next_id, snowflake_next_ids, SnowflakeStatus,
};
use snowflake_core::{Generator, Layout, Options};
use std::hint::black_box;
use std::time::Instant;

const WIDE: &str = "time:41,worker:1,sequence:22;epoch=1288834974657;tick=1ms";
const RUNS: usize = 11;

fn core_generator(spec: &str) -> Generator {
    let layout = Layout::parse(spec).expect("layout");
    Generator::new(&layout, Default::default(), Options { isolated: true, ..Options::default() })
        .expect("generator")
}

fn best_ns_per_call(calls: u64, mut f: impl FnMut() -> u64) -> f64 {
    (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            let mut acc = 0;
            for _ in 0..calls {
                acc ^= f();
            }
            black_box(acc);
            start.elapsed().as_nanos() as f64 / calls as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn best_ids_per_s(batch: usize, ids: usize, mut f: impl FnMut(&mut [u64])) -> f64 {
    let mut buf = vec![0u64; batch];
    (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            let mut done = 0;
            while done < ids {
                f(&mut buf);
                black_box(buf[batch - 1]);
                done += batch;
            }
            done as f64 / start.elapsed().as_secs_f64()
        })
        .fold(0.0, f64::max)
}

fn report(label: &str, wide_ns: f64, twitter_ns: f64, ids_1000: f64, ids_100k: f64) {
    let per_ms = 1e6 / twitter_ns;
    println!("{label:<10} next_id, 22 sequence bits:  {wide_ns:6.2} ns/call");
    println!(
        "{label:<10} next_id, twitter:           {twitter_ns:6.2} ns/call = {per_ms:.0} IDs/ms = {:.1}% of 4096/ms",
        100.0 * per_ms / 4096.0
    );
    println!("{label:<10} next_ids(1000), 22 bits:    {:6.1} M IDs/s", ids_1000 / 1e6);
    println!("{label:<10} next_ids(100000), 22 bits:  {:6.1} M IDs/s", ids_100k / 1e6);
}

fn ffi_generator(spec: &str) -> *mut snowflake::SnowflakeGenerator {
    let spec = std::ffi::CString::new(spec).expect("no NUL");
    let (mut layout, mut g) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: valid C strings and out pointers; the layout handle is leaked (a bench).
    unsafe {
        assert_eq!(snowflake_layout_new(spec.as_ptr(), &mut layout), SnowflakeStatus::Ok);
        assert_eq!(
            snowflake_generator_new(layout, std::ptr::null(), c"isolated=true".as_ptr(), &mut g),
            SnowflakeStatus::Ok
        );
    }
    g
}

fn main() {
    let (wide, twitter) = (core_generator(WIDE), core_generator("twitter"));
    best_ns_per_call(1_000_000, || wide.next_id().unwrap());
    report(
        "Rust core",
        best_ns_per_call(2_000_000, || wide.next_id().unwrap()),
        best_ns_per_call(1_000_000, || twitter.next_id().unwrap()),
        best_ids_per_s(1000, 10_000_000, |b| wide.fill(b).unwrap()),
        best_ids_per_s(100_000, 10_000_000, |b| wide.fill(b).unwrap()),
    );

    let (wide, twitter) = (ffi_generator(WIDE), ffi_generator("twitter"));
    let next = |g: *mut snowflake::SnowflakeGenerator| {
        let mut id = 0;
        // SAFETY: a live handle and a valid out pointer.
        assert_eq!(unsafe { snowflake_next_id(g, &mut id) }, SnowflakeStatus::Ok);
        id
    };
    let fill = |b: &mut [u64]| {
        // SAFETY: a live handle and a buffer of b.len() u64s.
        assert_eq!(unsafe { snowflake_next_ids(wide, b.as_mut_ptr(), b.len()) }, SnowflakeStatus::Ok);
    };
    report(
        "Rust->C fn",
        best_ns_per_call(2_000_000, || next(wide)),
        best_ns_per_call(1_000_000, || next(twitter)),
        best_ids_per_s(1000, 10_000_000, fill),
        best_ids_per_s(100_000, 10_000_000, fill),
    );
}
