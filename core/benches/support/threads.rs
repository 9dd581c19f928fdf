//! Threads started together, for the benches whose rows share one generator between threads
//! (peers.rs and fastpath.rs include this file).
//!
//! Each thread is pinned to a CPU of its own where the process may run on as many CPUs as there
//! are threads: otherwise the scheduler sometimes runs two of them on one CPU, taking turns,
//! and such a round times one thread at a time (on a 2-CPU machine, about 4.5 ns an ID for
//! ours and ferroid's alike, against 11-15 ns when they run at once), which made a row's
//! median move from run to run. With more threads than CPUs they are not pinned: they take
//! turns by necessity, and the row says so.

use std::sync::Barrier;
use std::time::{Duration, Instant};

/// Runs `work` once on each of `threads` threads started at one barrier: the wall time from
/// the start to the last thread's end, and whether every thread ran while every other did (the
/// latest start came before the earliest end; each thread records its own). A round whose
/// threads did not overlap measured one thread at a time, not threads sharing a generator.
pub fn timed_threads(threads: usize, work: impl Fn() + Sync) -> (Duration, bool) {
    let cpus = allowed_cpus();
    let pin = threads > 1 && threads <= cpus.len();
    let start = Barrier::new(threads + 1);
    let (t0, spans) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let (start, work, cpu) = (&start, &work, cpus.get(i).copied());
                s.spawn(move || {
                    if let (true, Some(cpu)) = (pin, cpu) {
                        pin_to(cpu);
                    }
                    start.wait();
                    let begun = Instant::now();
                    work();
                    (begun, Instant::now())
                })
            })
            .collect();
        start.wait();
        let t0 = Instant::now();
        (t0, handles.into_iter().map(|h| h.join().unwrap()).collect::<Vec<_>>())
    });
    let elapsed = t0.elapsed();
    let latest_start = spans.iter().map(|s| s.0).max().unwrap();
    let earliest_end = spans.iter().map(|s| s.1).min().unwrap();
    (elapsed, threads == 1 || latest_start < earliest_end)
}

/// The CPUs this process may run on.
#[cfg(target_os = "linux")]
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is an empty set; sched_getaffinity fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid cpu_set_t of the size passed.
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0 {
        return vec![];
    }
    // SAFETY: CPU_ISSET reads the set, for CPU numbers below its capacity.
    (0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).collect()
}

#[cfg(not(target_os = "linux"))]
fn allowed_cpus() -> Vec<usize> {
    vec![]
}

/// Pins the calling thread to `cpu`.
#[cfg(target_os = "linux")]
fn pin_to(cpu: usize) {
    // SAFETY: as in `allowed_cpus`.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` is one of `allowed_cpus`, below CPU_SETSIZE.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: as in `allowed_cpus`; 0 is the calling thread.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    assert_eq!(rc, 0, "sched_setaffinity: {}", std::io::Error::last_os_error());
}

#[cfg(not(target_os = "linux"))]
fn pin_to(_cpu: usize) {}
