//! Instructions per ID on the one-ID fast path, ours beside ferroid's, for counting under
//! `valgrind --tool=callgrind` (docs/contributing.md says how): an instruction count is the same
//! for the same binary whatever else the machine runs, which a timing on a shared machine is
//! not. Each row is an `#[inline(never)]` function that issues `n` IDs, so that callgrind's
//! inclusive count of that function, over `n`, is the cost of one ID with nothing else in it.
//!
//! `fastpath ROW THREADS N`: ROW is `ours` (the default generator: the host's record, the
//! cached monotonic clock), `ferroid` (its `AtomicSnowflakeGenerator` and `MonotonicClock`, the
//! same field widths), or one part of ours alone: `clock-ours` (the cached clock's reading),
//! `clock-ferroid`, `cas` (a bare load and compare-and-swap of a word on the heap, as ferroid's),
//! `cas-shm` (the same on a word of a shared file mapping, as the host's record is), `cas-count`
//! (the same as `cas`, and a plain load and store of another word, as the per-thread count's:
//! one thread only, as more would share that word), `cas-count-before` (that store before the
//! compare-and-swap instead), `cas-store` (a store of the slot taken, a value known before the
//! swap, with no load), `fetch-add` (a locked add in place of the load and compare-and-swap),
//! `counted` (an isolated generator: ours without the host's record), and two generators of the
//! general fast path: `process-only` and `lease-local` (built with `--features lease-local`, or
//! `full`). THREADS threads share one generator, each issuing N; it prints the aggregate ns per
//! ID. Without arguments it runs every row once on one thread, then `ours` and `ferroid` on two
//! threads sharing one generator (`ours x2`, `ferroid x2`), and prints ns per ID (wall-clock
//! figures: only for a quiet machine).
//!
//! `scripts/bench-ablate.sh` builds this bench from the tree as it is and from the tree with
//! each patch of `core/benches/ablate/` applied (ours with one part changed), and runs them
//! alternated: what each part of the path costs, on the machine it runs on. What it found on an
//! AMD EPYC (Zen 5, 2 CPUs; issue 44; docs/contributing.md has the table):
//!
//! - One thread is the locked instruction (`cas`, `cas-shm` and `ferroid` alike, 4.7-5.0 ns: the
//!   word's place in shared memory costs nothing) and, for ours, one cycle more (about 0.25 ns,
//!   1.05x ferroid) for either of two things after it: a second store before the next locked
//!   instruction (the caller's keeping of the ID is the first, which costs nothing), or a stored
//!   value composed only after the locked instruction. The count's store is the first, and ours
//!   composes the ID after the swap: without both it is at ferroid's (1.00x), without either
//!   alone it is not. The loads and comparisons beside the locked instruction (the clock's word,
//!   the record's last tick, the slot's checks) cost nothing measurable. The count stays: only a
//!   store an ID keeps `stats().issued` exact. Where that store stands changes nothing (session
//!   25, a second Zen 5 host, 1.05x again): after the swap (`cas-count`), before it
//!   (`cas-count-before`), or a value ready before the swap with no load (`cas-store`), each
//!   costs the same cycle over `cas`; a locked add in place of the compare-and-swap
//!   (`fetch-add`) costs what the compare-and-swap does.
//! - Two threads: a lost compare-and-swap retried at once cost up to 1.19x ferroid in some
//!   hours; with a pause first (as ferroid pauses) 0.8-0.9x in most runs.
//! - The lean path (`lease-local`, `process-only`): 1.05-1.10x ours, with or without the count.

#[path = "support/threads.rs"]
mod threads;

use ferroid::generator::AtomicSnowflakeGenerator;
use ferroid::time::{MonotonicClock as FerroidClock, TimeSource};
use snowflake_core::{Clock, Generator, Layout, MonotonicClock, Options};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
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

/// A word in a shared mapping of a file of its own, as the host's record's words are.
fn shared_word() -> &'static AtomicU64 {
    let file = tempfile_in_shm_dir();
    file.set_len(4096).unwrap();
    // SAFETY: a fresh mapping of a file of 4096 bytes, never unmapped (the process ends first).
    let at = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            std::os::fd::AsRawFd::as_raw_fd(&file),
            0,
        )
    };
    assert_ne!(at, libc::MAP_FAILED, "mmap: {}", std::io::Error::last_os_error());
    // SAFETY: page-aligned, so aligned for an AtomicU64, and alive for the rest of the process.
    unsafe { &*(at as *const AtomicU64) }
}

/// A new file, unlinked at once, where the host's records are ($SNOWFLAKE_SHM_DIR, else /dev/shm).
fn tempfile_in_shm_dir() -> std::fs::File {
    let dir = std::env::var_os("SNOWFLAKE_SHM_DIR").unwrap_or_else(|| "/dev/shm".into());
    let path = std::path::Path::new(&dir).join(format!("fastpath-cas-shm-{}", std::process::id()));
    let file = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    file
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

/// [`row_cas_count`] with the count's store before the compare-and-swap (taken back when the
/// swap is lost): the store moved to the other side of the locked instruction.
#[inline(never)]
fn row_cas_count_before(w: &AtomicU64, count: &AtomicU64, n: u64) {
    for _ in 0..n {
        let before = count.load(Ordering::Relaxed);
        count.store(before.wrapping_add(1), Ordering::Relaxed);
        let cur = w.load(Ordering::Relaxed);
        let ok = w.compare_exchange(cur, cur + 1, Ordering::AcqRel, Ordering::Relaxed).is_ok();
        if !ok {
            count.store(before, Ordering::Relaxed);
        }
        black_box(ok);
    }
}

/// [`row_cas`] and a store of a value known before the swap (the slot taken), with no load
/// before it: a second store, whose value is ready at once.
#[inline(never)]
fn row_cas_store(w: &AtomicU64, slot: &AtomicU64, n: u64) {
    for _ in 0..n {
        let cur = w.load(Ordering::Relaxed);
        let ok = w.compare_exchange(cur, cur + 1, Ordering::AcqRel, Ordering::Relaxed).is_ok();
        if ok {
            slot.store(cur, Ordering::Relaxed);
        }
        black_box(ok);
    }
}

/// A locked add (`lock xadd`) in place of the load and compare-and-swap of [`row_cas`].
#[inline(never)]
fn row_fetch_add(w: &AtomicU64, n: u64) {
    for _ in 0..n {
        black_box(w.fetch_add(1, Ordering::AcqRel));
    }
}

/// Runs `row` on `threads` threads started together, `n` calls each; wall ns per ID. A round
/// whose threads did not all run at once is run again (see [`threads`]).
fn run(threads: usize, n: u64, row: impl Fn(u64) + Sync) -> f64 {
    for _ in 0..100 {
        let (elapsed, overlapped) = threads::timed_threads(threads, || row(n));
        if overlapped {
            return elapsed.as_nanos() as f64 / (n * threads as u64) as f64;
        }
    }
    panic!("{threads} threads never ran at once: is this machine too busy?")
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
    let shm_word = shared_word();
    let rows: [(&str, &(dyn Fn(u64) + Sync)); 13] = [
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
        ("cas-shm", &|n| row_cas(shm_word, n)),
        ("cas-count", &|n| row_cas_count(&word, &count, n)),
        ("cas-count-before", &|n| row_cas_count_before(&word, &count, n)),
        ("cas-store", &|n| row_cas_store(&word, &count, n)),
        ("fetch-add", &|n| row_fetch_add(&word, n)),
    ];
    match args.as_slice() {
        [row, threads, n] => {
            let (_, f) = rows.iter().find(|(name, _)| name == row).expect("unknown row");
            let threads = threads.parse().unwrap();
            println!(
                "{row}: {:.2} ns per ID (wall clock, {threads} threads)",
                run(threads, n.parse().unwrap(), f)
            );
        }
        [] => {
            for (name, f) in rows {
                println!("{name}: {:.2} ns per ID (wall clock, one thread)", run(1, 5_000_000, f));
            }
            // Two threads sharing one generator: the aggregate ns per ID.
            for (name, f) in &rows[..2] {
                println!(
                    "{name} x2: {:.2} ns per ID (wall clock, two threads, aggregate)",
                    run(2, 5_000_000, f)
                );
            }
        }
        _ => panic!("usage: fastpath [ROW THREADS N]"),
    }
}
