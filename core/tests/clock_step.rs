//! A real clock step: this program re-runs itself under libfaketime, whose wall clock the
//! parent steps back by 3 s (by rewriting `FAKETIME_TIMESTAMP_FILE`) while the child issues IDs
//! as fast as it can. On the system clock the child must see the step (clock-behind errors)
//! and never repeat or reorder an ID; on the default monotonic clock (faketime told not to
//! fake CLOCK_MONOTONIC) it must not even notice.
//!
//! The parent steps the clock once the child has issued 1000 IDs, and stops it once it has
//! seen the step and issued 100 IDs after it, when its clock caught up again (system), or
//! issued 2000 more (monotonic): the run follows the child, not a schedule a loaded machine
//! could miss.
//!
//! Without libfaketime (apt `faketime`) this fails: `make deps` installs it.

use snowflake_core::{Error, Generator, Layout, MonotonicClock, Options, SystemClock};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const LIB: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

fn child(clock: &str) {
    let layout = Layout::parse("twitter").unwrap();
    let node = layout.parse_node("datacenter=0,worker=1").unwrap();
    let options = Options { max_wait_ms: 200, ..Options::default() };
    let next: Box<dyn Fn() -> Result<u64, Error>> = match clock {
        "system" => {
            let g = Generator::with_clock(&layout, node, options, SystemClock).unwrap();
            Box::new(move || g.next_id())
        }
        _ => {
            let g = Generator::with_clock(&layout, node, options, MonotonicClock::default()).unwrap();
            Box::new(move || g.next_id())
        }
    };
    let stop = std::env::var("SNOWFLAKE_CLOCK_STEP_STOP").unwrap();
    let out = std::io::stdout();
    let mut out = out.lock();
    while !Path::new(&stop).exists() {
        match next() {
            Ok(id) => writeln!(out, "{id}").unwrap(),
            Err(e @ Error::ClockBehind { .. }) => {
                writeln!(out, "behind {}", e.retry_after_ms().unwrap()).unwrap()
            }
            Err(e) => writeln!(out, "error {e}").unwrap(),
        }
        // Unbuffered pacing: a few thousand IDs, not millions.
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// Runs the child under faketime, steps its clock back 3 s once it has issued 1000 IDs;
/// returns the IDs and how many clock-behind errors it saw.
fn run(clock: &str) -> (Vec<u64>, usize) {
    let dir = std::env::temp_dir().join(format!("snowflake-clock-step-{}-{clock}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let stamp = dir.join("faketime");
    let stop = dir.join("stop");
    std::fs::write(&stamp, "+0\n").unwrap();
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.env("SNOWFLAKE_CLOCK_STEP_CHILD", clock)
        .env("SNOWFLAKE_CLOCK_STEP_STOP", &stop)
        .env("LD_PRELOAD", LIB)
        .env("FAKETIME_TIMESTAMP_FILE", &stamp)
        .env("FAKETIME_NO_CACHE", "1")
        .stdout(Stdio::piped());
    if clock == "monotonic" {
        cmd.env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
    }
    let mut child = cmd.spawn().expect("run the child");
    let (mut ids, mut behind, mut after_step, mut after_behind) = (vec![], 0, None, None);
    // A bound for a hang, far beyond what a loaded machine takes.
    let deadline = Instant::now() + Duration::from_secs(120);
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if line.starts_with("behind") {
            behind += 1;
            after_behind.get_or_insert(ids.len());
        } else if let Ok(id) = line.parse() {
            ids.push(id);
        } else {
            panic!("child: unexpected `{line}`");
        }
        let enough = match (after_step, after_behind) {
            (_, Some(n)) => ids.len() >= n + 100,
            (Some(n), None) => clock == "monotonic" && ids.len() >= n + 2000,
            _ => false,
        };
        if after_step.is_none() && ids.len() == 1000 {
            std::fs::write(&stamp, "-3s\n").unwrap();
            after_step = Some(ids.len());
        } else if enough || Instant::now() > deadline {
            let _ = std::fs::write(&stop, "");
        }
    }
    assert!(child.wait().unwrap().success(), "child failed");
    let _ = std::fs::remove_dir_all(&dir);
    (ids, behind)
}

fn check(clock: &str) {
    let (ids, behind) = run(clock);
    assert!(ids.len() >= 1000, "{clock}: only {} IDs", ids.len());
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{clock}: IDs repeated or went back");
    if clock == "system" {
        assert!(behind > 0, "system clock: the step back was not seen (is libfaketime working?)");
    } else {
        assert_eq!(behind, 0, "monotonic clock: a wall-clock step must change nothing");
    }
    println!("test clock_step_{clock} ... ok ({} IDs, {behind} clock-behind errors)", ids.len());
}

fn main() {
    if let Ok(clock) = std::env::var("SNOWFLAKE_CLOCK_STEP_CHILD") {
        child(&clock);
        return;
    }
    assert!(std::path::Path::new(LIB).exists(), "{LIB} is missing: apt-get install faketime (make deps)");
    check("system");
    check("monotonic");
    println!("\ntest result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out");
}
