//! Speed of the host's shared state (issues 6 and 13): `next_id` on the default generator,
//! whose state is in shared memory, against the same on a process-local state
//! (`process_only`, and `isolated`); and four processes on `twitter` together, as a share of
//! the layout's capacity. Prints figures; run with `cargo bench -p snowflake-core --bench shared`.

use snowflake_core::{Generator, Layout, Options};
use std::hint::black_box;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const WIDE: &str = "time:41,worker:1,sequence:22;epoch=1288834974657;tick=1ms";

fn open(spec: &str, options: &str) -> Generator {
    let layout = Layout::parse(spec).unwrap();
    Generator::new(&layout, Default::default(), Options::parse(options).unwrap()).unwrap()
}

fn ns_per_call(g: &Generator) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..7 {
        let n = 2_000_000;
        let start = Instant::now();
        for _ in 0..n {
            black_box(g.next_id().unwrap());
        }
        best = best.min(start.elapsed().as_nanos() as f64 / n as f64);
    }
    best
}

fn main() {
    if let Ok(name) = std::env::var("SNOWFLAKE_BENCH_WORKER") {
        // A worker: next_id on the shared twitter state for the given time, then the count.
        let g = open("twitter", &format!("shared={name}"));
        let until: u64 = std::env::var("SNOWFLAKE_BENCH_MS").unwrap().parse().unwrap();
        let start = Instant::now();
        let mut n = 0u64;
        while start.elapsed() < Duration::from_millis(until) {
            for _ in 0..256 {
                black_box(g.next_id().unwrap());
            }
            n += 256;
        }
        println!("{n}");
        return;
    }
    if std::env::args().any(|a| a == "--list") {
        return; // cargo test --benches asks for a list
    }
    let name = format!("bench-{}", std::process::id());
    let shm = std::env::temp_dir().join(&name);
    std::fs::create_dir_all(&shm).unwrap();
    std::env::set_var("SNOWFLAKE_SHM_DIR", &shm);
    let isolated = open(WIDE, "isolated=true");
    println!("next_id, 22 sequence bits, isolated state:          {:.1} ns", ns_per_call(&isolated));
    drop(isolated);
    let local = open(WIDE, "process_only=true");
    println!("next_id, 22 sequence bits, process_only state:      {:.1} ns", ns_per_call(&local));
    drop(local);
    let shared = open(WIDE, "");
    println!("next_id, 22 sequence bits, default (host's state):  {:.1} ns", ns_per_call(&shared));

    let ms = 3000;
    let start = Instant::now();
    let children: Vec<_> = (0..4)
        .map(|_| {
            Command::new(std::env::current_exe().unwrap())
                .env("SNOWFLAKE_BENCH_WORKER", &name)
                .env("SNOWFLAKE_BENCH_MS", ms.to_string())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let total: u64 = children
        .into_iter()
        .map(|c| {
            String::from_utf8(c.wait_with_output().unwrap().stdout).unwrap().trim().parse::<u64>().unwrap()
        })
        .sum();
    let secs = start.elapsed().as_secs_f64().max(ms as f64 / 1000.0);
    let rate = total as f64 / (ms as f64 / 1000.0);
    println!(
        "4 processes, shared twitter state: {rate:.0} IDs/s = {:.1}% of 4,096,000 (wall {secs:.2}s)",
        100.0 * rate / 4_096_000.0
    );
    let _ = std::fs::remove_dir_all(shm);
}
