//! Instructions per ID on the one-ID fast path, ours beside ferroid's, for counting under
//! `valgrind --tool=callgrind` (docs/contributing.md says how): an instruction count is the same
//! for the same binary whatever else the machine runs, which a timing on a shared machine is
//! not. Each row is an `#[inline(never)]` function that issues `n` IDs, so that callgrind's
//! inclusive count of that function, over `n`, is the cost of one ID with nothing else in it.
//!
//! `fastpath ROW THREADS N`: ROW is `ours` (the default generator: the host's record, the
//! cached monotonic clock), `ferroid` (its `AtomicSnowflakeGenerator` and `MonotonicClock`, the
//! same field widths), or one part of ours alone: `clock-ours` (the cached clock's reading),
//! `clock-ferroid`, `cas` (a bare load and compare-and-swap of a word, as ferroid's), `cas-count`
//! (the same, and a plain load and store of another word, as the per-thread count's: one thread
//! only, as more would share that word; see below), `counted`
//! (an isolated generator: ours without the host's record), and two generators of the general
//! fast path: `process-only` and `lease-local` (built with `--features lease-local`, or
//! `full`). THREADS threads share one
//! generator, each issuing N. Without arguments it runs every row once on one thread and
//! prints ns per ID (a wall-clock figure: only for a quiet machine).
//!
//! What the rows showed on an AMD EPYC (Zen 5, 2.6 GHz; issue 44), with a throw-away harness
//! beside them: a loop of locked compare-and-swaps costs the same with or without the rest of
//! our path (the clock's word, the record's last tick, the slot's checks: loads and arithmetic
//! that wait beside the locked instruction). What costs is a second store between two of them
//! (the locked instruction waits for the store buffer to drain), or a stored value composed
//! only after it: about 0.25 ns an ID either way, not both. `cas` stores one word an ID (the
//! caller's), as ferroid's path does; `cas-count` adds the count's store, as ours does (4.76
//! and 4.98 ns there, and `ours` 5.00): the one-thread gap to ferroid on that host is that store.
//!
//! Where the leased rows' gap lies (issue 44, the same host, three runs of every row): `ours`
//! 5.05-5.16 ns, and the three rows of the general fast path alike, `counted` 6.69-6.76,
//! `process-only` 6.68-6.86 and `lease-local` 6.74-6.86. A lease's own checks (its claim's
//! generation before and after the compare-and-swap, its validity and its reservation) cost
//! about 0.1 ns; the other 1.6 ns is the general path itself beside the plain one: the plain
//! path's try first, then a fork check, the reading again, the epoch and the tick's division,
//! the layout's end and the loop. So a lease gains from a plain path of its own, not from
//! cheaper lease checks: the lean path (`Generator::next_id_lean`). With it, on the same host
//! (three runs): `ours` 5.04-5.08 ns, `counted` 5.29-5.59, `process-only` 5.42-5.65,
//! `lease-local` 5.38-5.87.
//!
//! Two changes tried on that CPU model and not kept (every row alternated with `main`'s binary,
//! the median of 12 and 15 rounds):
//! - the count's slot and its value read *before* the compare-and-swap, so that only its store
//!   is left after the locked instruction: `ours` went from 5.06 to 5.27 ns (three more values
//!   live across the locked instruction), and the lean rows did not move;
//! - one reading of the cache word for the plain path's try and the lean path's: `ours` 5.02
//!   against 5.05, `lease-local` 5.54 against 5.51, `process-only` 5.54 both, within the rounds'
//!   spread. The lean path's machine code has no spill; beside the plain path it has about 15
//!   more instructions before the locked one and three more taken branches (the plain path's
//!   declined try, the mark's tests), and those rows stay about 0.5 ns above `ours`.
//!
//! In the same runs `cas` read 4.74-4.83 ns and `cas-count` 4.96-5.08, `ferroid` 4.82-4.83
//! and `ours` 5.02-5.06: ours is `cas-count`, ferroid is `cas`.

use ferroid::generator::AtomicSnowflakeGenerator;
use ferroid::time::{MonotonicClock as FerroidClock, TimeSource};
use snowflake_core::{Clock, Generator, Layout, MonotonicClock, Options};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::Instant;

const WIDE: &str = "time:41,worker:1,sequence:22;epoch=1288834974657";

ferroid::define_snowflake_id!(
    /// The same field widths in ferroid's terms.
    WideId, u64,
    reserved: 0,
    timestamp: 41,
    machine_id: 1,
    sequence: 22
);

type Ferroid = AtomicSnowflakeGenerator<WideId, FerroidClock>;

#[inline(never)]
fn row_ours(g: &Generator, n: u64) {
    for _ in 0..n {
        black_box(g.next_id().unwrap());
    }
}

#[inline(never)]
fn row_counted(g: &Generator, n: u64) {
    for _ in 0..n {
        black_box(g.next_id().unwrap());
    }
}

#[inline(never)]
fn row_process_only(g: &Generator, n: u64) {
    for _ in 0..n {
        black_box(g.next_id().unwrap());
    }
}

#[inline(never)]
fn row_lease_local(g: &Generator, n: u64) {
    for _ in 0..n {
        black_box(g.next_id().unwrap());
    }
}

#[inline(never)]
fn row_ferroid(g: &Ferroid, n: u64) {
    for _ in 0..n {
        black_box(g.next_id(|_| std::hint::spin_loop()));
    }
}

#[inline(never)]
fn row_clock_ours(c: &MonotonicClock, n: u64) {
    for _ in 0..n {
        black_box(c.now_ms_cached());
    }
}

#[inline(never)]
fn row_clock_ferroid(c: &FerroidClock, n: u64) {
    for _ in 0..n {
        black_box(<FerroidClock as TimeSource<u64>>::current_millis(c));
    }
}

#[inline(never)]
fn row_cas(w: &AtomicU64, n: u64) {
    for _ in 0..n {
        let cur = w.load(Ordering::Relaxed);
        black_box(w.compare_exchange(cur, cur + 1, Ordering::AcqRel, Ordering::Relaxed).is_ok());
    }
}

#[inline(never)]
fn row_cas_count(w: &AtomicU64, count: &AtomicU64, n: u64) {
    for _ in 0..n {
        let cur = w.load(Ordering::Relaxed);
        let ok = w.compare_exchange(cur, cur + 1, Ordering::AcqRel, Ordering::Relaxed).is_ok();
        // As `Issued::add_own`: a word no other thread writes, a plain load and store.
        count.store(count.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
        black_box(ok);
    }
}

/// Runs `row` on `threads` threads started together, `n` calls each; wall ns per ID.
fn run(threads: usize, n: u64, row: impl Fn(u64) + Sync) -> f64 {
    let start = Barrier::new(threads + 1);
    let t0 = std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                start.wait();
                row(n);
            });
        }
        start.wait();
        Instant::now()
    });
    t0.elapsed().as_nanos() as f64 / (n * threads as u64) as f64
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let layout = Layout::parse(WIDE).unwrap();
    let node = layout.parse_node("worker=1").unwrap();
    let ours = Generator::new(&layout, node, Options::default()).unwrap();
    let counted = Generator::new(&layout, node, Options { isolated: true, ..Options::default() }).unwrap();
    // Other node values: one identity is held one way at a time.
    let alone = Generator::new(
        &layout,
        layout.parse_node("worker=0").unwrap(),
        Options::parse("process_only=true").unwrap(),
    )
    .unwrap();
    // A lease of its own layout (the leased field is the only node field).
    let leased_layout = Layout::parse("time:41,worker:2,sequence:21;epoch=1288834974657").unwrap();
    let leased =
        Options::parse("lease=local").and_then(|o| Generator::new(&leased_layout, Default::default(), o));
    let ferroid: Ferroid =
        AtomicSnowflakeGenerator::new(1, FerroidClock::with_epoch(ferroid::time::TWITTER_EPOCH));
    let clock = MonotonicClock::process();
    let fclock = FerroidClock::with_epoch(ferroid::time::TWITTER_EPOCH);
    let word = AtomicU64::new(0);
    let count = AtomicU64::new(0);
    // Both clocks' tickers running before anything is counted: a burst of readings starts ours.
    let warm = Instant::now();
    while warm.elapsed().as_millis() < 20 {
        black_box(ours.next_id().unwrap());
        black_box(ferroid.next_id(|_| std::hint::spin_loop()));
    }
    let rows: [(&str, &(dyn Fn(u64) + Sync)); 9] = [
        ("ours", &|n| row_ours(&ours, n)),
        ("ferroid", &|n| row_ferroid(&ferroid, n)),
        ("counted", &|n| row_counted(&counted, n)),
        ("process-only", &|n| row_process_only(&alone, n)),
        ("lease-local", &|n| {
            row_lease_local(leased.as_ref().expect("lease=local needs --features lease-local"), n)
        }),
        ("clock-ours", &|n| row_clock_ours(&clock, n)),
        ("clock-ferroid", &|n| row_clock_ferroid(&fclock, n)),
        ("cas", &|n| row_cas(&word, n)),
        ("cas-count", &|n| row_cas_count(&word, &count, n)),
    ];
    match args.as_slice() {
        [row, threads, n] => {
            let (_, f) = rows.iter().find(|(name, _)| name == row).expect("unknown row");
            run(threads.parse().unwrap(), n.parse().unwrap(), f);
        }
        [] => {
            for (name, f) in rows {
                println!("{name}: {:.2} ns per ID (wall clock, one thread)", run(1, 5_000_000, f));
            }
        }
        _ => panic!("usage: fastpath [ROW THREADS N]"),
    }
}
