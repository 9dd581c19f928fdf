//! Beyond one process, with real processes: this program re-runs itself as workers (the
//! `SNOWFLAKE_WORKER` environment variable says what to do) and checks what they print.
//!
//! - `shared=`: 4 processes x 200k IDs from one shared state: no duplicate in the union, each
//!   process's IDs increasing; the speed together on `twitter`; a mismatching open names the
//!   difference; the file is 0600; processes killed with SIGKILL mid-run leave a state the
//!   others go on with; a shared generator keeps working in a child of fork().
//! - `state_file=`: generate, stop, step the real clock back 10 s (libfaketime), start again:
//!   no repeat; a torn, corrupt or foreign file is an error.
//! - `lease=local`: 16 processes claim the 16 values of a 4-bit worker field; a 17th is refused;
//!   after one is killed a new process gets its value and issues above the dead one's IDs.

use snowflake_core::{Generator, Layout, Options};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const FAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

// ---------------------------------------------------------------------------------------------
// The worker: opens a generator from SNOWFLAKE_WORKER="layout|node|options|count|hold_ms" and
// prints `ok <node>` (or `error <code> <message>`), then one ID a line, then `done`.

fn worker(spec: &str) {
    if let Some(requests) = std::env::var("SNOWFLAKE_WORKER_REQUESTS").ok().and_then(|r| r.parse().ok()) {
        return per_request_worker(spec, requests);
    }
    let parts: Vec<&str> = spec.split('|').collect();
    let (layout, node, options, count, hold_ms) =
        (parts[0], parts[1], parts[2], parts[3].parse::<u64>().unwrap(), parts[4].parse::<u64>().unwrap());
    let layout = Layout::parse(layout).unwrap();
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    // Racers that together ask for more than a tick holds may each lose every tick to the
    // others for longer than the default second under a loaded machine (no fair share is
    // promised), and then fail with SEQUENCE_EXHAUSTED, as documented. These tests count
    // repeats, not waits: a worker waits up to a minute unless its spec names max_wait_ms.
    let opened = Options::parse(options)
        .map(|mut o| {
            if !options.contains("max_wait_ms") {
                o.max_wait_ms = 60_000;
            }
            o
        })
        .and_then(|o| Ok((layout.parse_node(node)?, o)))
        .and_then(|(n, o)| Generator::new(&layout, n, o));
    let g = match opened {
        Ok(g) => g,
        Err(e) => {
            writeln!(out, "error {} {e}", e.kind().code()).unwrap();
            return;
        }
    };
    let node: Vec<String> = layout.node_values(g.node()).map(|(n, v)| format!("{n}={v}")).collect();
    writeln!(out, "ok {}", node.join(",")).unwrap();
    out.flush().unwrap();
    let mut buf = vec![0u64; 4096];
    let mut left = count;
    while left > 0 {
        let n = left.min(buf.len() as u64) as usize;
        // One ID a call, as most callers do; flushed in batches so a SIGKILL loses little.
        for (i, slot) in buf[..n].iter_mut().enumerate() {
            *slot = match g.next_id() {
                Ok(id) => id,
                Err(e) => {
                    // The batch's IDs first: every ID issued is compared.
                    for id in &buf[..i] {
                        writeln!(out, "{id}").unwrap();
                    }
                    writeln!(out, "error {} {e}", e.kind().code()).unwrap();
                    // As a C program's `return 1` without freeing the generator, Node's
                    // `process.exit` or a PHP fatal error: no destructor runs.
                    if std::env::var_os("SNOWFLAKE_WORKER_EXIT").is_some() {
                        out.flush().unwrap();
                        std::process::exit(1);
                    }
                    return;
                }
            };
        }
        for id in &buf[..n] {
            writeln!(out, "{id}").unwrap();
        }
        out.flush().unwrap();
        left -= n as u64;
    }
    writeln!(out, "done").unwrap();
    out.flush().unwrap();
    std::thread::sleep(Duration::from_millis(hold_ms));
}

/// The worker as a PHP-FPM or gunicorn worker is written: a generator made for each of
/// `requests` requests, `count / requests` IDs each, and let go at the request's end. Prints
/// `ok`, the IDs, `done`.
fn per_request_worker(spec: &str, requests: u64) {
    let parts: Vec<&str> = spec.split('|').collect();
    let layout = Layout::parse(parts[0]).unwrap();
    let node = layout.parse_node(parts[1]).unwrap();
    let each = parts[3].parse::<u64>().unwrap() / requests;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    writeln!(out, "ok").unwrap();
    for _ in 0..requests {
        let g = match Options::parse(parts[2]).and_then(|o| Generator::new(&layout, node, o)) {
            Ok(g) => g,
            Err(e) => {
                writeln!(out, "error {} {e}", e.kind().code()).unwrap();
                return;
            }
        };
        for _ in 0..each {
            match g.next_id() {
                Ok(id) => writeln!(out, "{id}").unwrap(),
                // The record removed under this request's generator (as documented, it stops,
                // and the next request's generator joins the record at its name).
                Err(e) => {
                    writeln!(out, "failed {}", e.kind().code()).unwrap();
                    break;
                }
            }
        }
    }
    writeln!(out, "done").unwrap();
}

// ---------------------------------------------------------------------------------------------

struct Output {
    head: String,
    ids: Vec<u64>,
    tail: Option<String>,
}

fn spawn(spec: &str, env: &[(&str, &str)]) -> Child {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.env("SNOWFLAKE_WORKER", spec).stdout(Stdio::piped()).stderr(Stdio::inherit());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.spawn().unwrap()
}

fn collect(child: Child) -> Output {
    let out = child.wait_with_output().unwrap();
    parse(&String::from_utf8(out.stdout).unwrap())
}

fn parse(text: &str) -> Output {
    // Only whole lines: a worker killed with SIGKILL can die in the middle of writing one,
    // and a cut-off number is a prefix of an ID, not an ID it issued.
    let whole = match text.rfind('\n') {
        Some(end) => &text[..=end],
        None => "",
    };
    let mut lines = whole.lines();
    let head = lines.next().unwrap_or("").to_string();
    let mut ids = vec![];
    let mut tail = None;
    for line in lines {
        match line.parse() {
            Ok(id) => ids.push(id),
            Err(_) => tail = Some(line.to_string()),
        }
    }
    Output { head, ids, tail }
}

fn run(spec: &str) -> Output {
    collect(spawn(spec, &[]))
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("snowflake-processes-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn unique_and_increasing(outputs: &[Output]) -> usize {
    let mut all = HashSet::new();
    for o in outputs {
        assert!(o.ids.windows(2).all(|w| w[0] < w[1]), "a process's IDs went back");
        for id in &o.ids {
            assert!(all.insert(*id), "duplicate ID {id}");
        }
    }
    all.len()
}

fn shared_name(test: &str) -> String {
    format!("test-{}-{test}", std::process::id())
}

/// The path of the host's shared state of `layout` and `node` in `shm`.
fn state_path(shm: &Path, layout: &str, node: &str) -> PathBuf {
    let layout = Layout::parse(layout).unwrap();
    let path = snowflake_core::shared_path(&layout, &layout.parse_node(node).unwrap(), None);
    shm.join(path.file_name().unwrap())
}

// ---------------------------------------------------------------------------------------------

fn shared_four_processes() {
    let name = shared_name("four");
    let spec = format!("twitter|datacenter=0,worker=7|shared={name}|200000|0");
    let start = Instant::now();
    let children: Vec<Child> = (0..4).map(|_| spawn(&spec, &[])).collect();
    let outputs: Vec<Output> = children.into_iter().map(collect).collect();
    let secs = start.elapsed().as_secs_f64();
    for o in &outputs {
        assert_eq!(o.head, "ok datacenter=0,worker=7");
        assert_eq!(o.tail.as_deref(), Some("done"));
        assert_eq!(o.ids.len(), 200_000);
    }
    assert_eq!(unique_and_increasing(&outputs), 800_000);
    // The host's record: every user may read it (to meet it), only its owner write it.
    let mode =
        std::fs::metadata(state_path(&snowflake_core::shm_dir().unwrap(), "twitter", "worker=7")).unwrap();
    assert_eq!(std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777, 0o644);
    println!(
        "    4 processes: 800k IDs in {secs:.2}s = {:.0} IDs/s ({:.1}% of twitter's 4.096M/s, process start-up included)",
        800_000.0 / secs,
        100.0 * 800_000.0 / secs / 4_096_000.0
    );
}

/// One state per layout and node values on a host: a name is a label, so another layout or
/// node values under one name is another state, and two names of one identity are one state.
/// Processes that use a state at once must agree on its terms; once none uses it, the next
/// configuration takes it over, above everything issued.
fn shared_mismatch_names_the_difference() {
    let name = shared_name("mismatch");
    let mut holder = spawn(&format!("twitter|datacenter=0,worker=1|shared={name}|1000|60000"), &[]);
    let (head, held, _out) = read_until_done(&mut holder);
    assert_eq!(head, "ok datacenter=0,worker=1");
    for spec in [
        format!("discord|worker=1,process=0|shared={name}|1|0"),
        format!("twitter|datacenter=0,worker=2|shared={name}|1|0"),
    ] {
        assert!(run(&spec).head.starts_with("ok"), "{spec}: another identity is another state");
    }
    for (spec, needle) in [
        (format!("twitter|datacenter=0,worker=1|shared={name};max_drift_ms=5|1|0"), "max_drift_ms=0, not 5"),
        ("twitter|datacenter=0,worker=1|max_drift_ms=5|1|0".to_string(), "max_drift_ms=0, not 5"),
        (
            format!("twitter|datacenter=0,worker=1|shared={name};sequence_start=spread:4|1|0"),
            "sequence_start=zero, not spread:4",
        ),
        ("twitter|datacenter=0,worker=1|shared=../etc|1|0".to_string(), "shared name"),
    ] {
        let o = run(&spec);
        assert!(o.head.starts_with("error ERR_SNOWFLAKE_"), "{spec}: {}", o.head);
        assert!(o.head.contains(needle), "{spec}: {}", o.head);
    }
    // max_wait_ms is each caller's own business: not a mismatch. Another name, or none, is
    // the same state: no repeat.
    assert!(run(&format!("twitter|datacenter=0,worker=1|shared={name};max_wait_ms=0|1|0"))
        .head
        .starts_with("ok"));
    let others: Vec<Output> = ["shared=other", "", "sequence_start=zero"]
        .iter()
        .map(|o| run(&format!("twitter|datacenter=0,worker=1|{o}|20000|0")))
        .collect();
    for o in &others {
        assert_eq!(o.tail.as_deref(), Some("done"), "{}", o.head);
    }
    let _ = holder.kill();
    let _ = holder.wait();
    let holder = Output { head, ids: held, tail: None };
    // Once the holder is gone, another max_drift_ms takes the state over, above its IDs.
    let after = run("twitter|datacenter=0,worker=1|max_drift_ms=5|1000|0");
    assert_eq!(after.tail.as_deref(), Some("done"), "{}", after.head);
    let mut all = vec![&holder, &after];
    all.extend(others.iter());
    assert_eq!(repeats(&all), 0);
    assert!(after.ids[0] > others.iter().flat_map(|o| o.ids.iter()).copied().max().unwrap());
}

fn shared_survives_kill_9() {
    let name = shared_name("kill");
    let spec = format!("time:41,worker:10,sequence:12;epoch=1288834974657|worker=3|shared={name}|2000000|0");
    let mut outputs = vec![];
    for round in 0..6 {
        let mut victims: Vec<(Child, BufReader<std::process::ChildStdout>, String)> = (0..2)
            .map(|_| {
                let mut child = spawn(&spec, &[]);
                let out = BufReader::new(child.stdout.take().unwrap());
                (child, out, String::new())
            })
            .collect();
        // Killed while issuing, not before it began (a loaded machine may take a while to
        // start a process): each has printed its head line and its first IDs.
        for (_, out, text) in &mut victims {
            out.read_line(text).unwrap();
            out.read_line(text).unwrap();
        }
        std::thread::sleep(Duration::from_millis(30 + 20 * round));
        for (mut v, mut out, mut text) in victims {
            let _ = v.kill(); // SIGKILL, at whatever instruction it is
            out.read_to_string(&mut text).unwrap();
            let _ = v.wait();
            outputs.push(parse(&text));
        }
    }
    let after =
        run(&format!("time:41,worker:10,sequence:12;epoch=1288834974657|worker=3|shared={name}|100000|0"));
    assert_eq!(after.tail.as_deref(), Some("done"));
    outputs.push(after);
    let n = unique_and_increasing(&outputs);
    assert!(n > 100_000);
}

fn shared_works_across_fork() {
    let name = shared_name("fork");
    let layout = Layout::parse("twitter").unwrap();
    let options = Options::parse(&format!("shared={name}")).unwrap();
    let g = Generator::new(&layout, layout.parse_node("datacenter=0,worker=9").unwrap(), options.clone())
        .unwrap();
    let dir = tmp("fork");
    let child_file = dir.join("child");
    // SAFETY: the child issues IDs, writes a file and _exits.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let ids: Vec<String> =
            (0..50_000).map(|_| g.next_id().map(|id| id.to_string()).unwrap_or_default()).collect();
        std::fs::write(&child_file, ids.join("\n")).unwrap();
        unsafe { libc::_exit(0) };
    }
    let parent: Vec<u64> = (0..50_000).map(|_| g.next_id().unwrap()).collect();
    let mut status = 0;
    unsafe { libc::waitpid(pid, &mut status, 0) };
    let child: Vec<u64> = std::fs::read_to_string(&child_file)
        .unwrap()
        .lines()
        .map(|l| l.parse().expect("child issued"))
        .collect();
    assert_eq!(child.len(), 50_000);
    let outputs = [
        Output { head: String::new(), ids: parent, tail: None },
        Output { head: String::new(), ids: child, tail: None },
    ];
    assert_eq!(unique_and_increasing(&outputs), 100_000);
    let _ = std::fs::remove_dir_all(dir);
}

fn state_file_survives_a_clock_step_back() {
    let dir = tmp("state");
    let state = dir.join("ids.state");
    let stamp = dir.join("faketime");
    let env = |s: &Path| {
        vec![
            ("LD_PRELOAD", FAKETIME.to_string()),
            ("FAKETIME_TIMESTAMP_FILE", s.display().to_string()),
            ("FAKETIME_NO_CACHE", "1".to_string()),
        ]
    };
    // The host's record is removed before each start, as a reboot clears /dev/shm: the state
    // file is then the only memory of a restart.
    let record = state_path(&snowflake_core::shm_dir().unwrap(), "twitter", "worker=4");
    let spec = |count: u64, extra: &str| {
        let _ = std::fs::remove_file(&record);
        format!(
            "twitter|datacenter=0,worker=4|state_file={};process_only=true{extra}|{count}|0",
            state.display()
        )
    };
    let run_env = |spec: &str| {
        let e = env(&stamp);
        let e: Vec<(&str, &str)> = e.iter().map(|(k, v)| (*k, v.as_str())).collect();
        collect(spawn(spec, &e))
    };
    std::fs::write(&stamp, "+0\n").unwrap();
    let first = run_env(&spec(20_000, ""));
    assert_eq!(first.tail.as_deref(), Some("done"), "{}", first.head);
    // The clock steps back 10 s; the process restarts. max_wait_ms=0: it must refuse, not repeat.
    std::fs::write(&stamp, "-10s\n").unwrap();
    let refused = run_env(&spec(10, ";max_wait_ms=0"));
    assert!(refused.ids.is_empty(), "issued {} IDs 10 s in the past", refused.ids.len());
    assert!(
        refused.tail.as_deref().unwrap_or("").contains("ERR_SNOWFLAKE_CLOCK_BEHIND"),
        "{:?}",
        refused.tail
    );
    // Even with a generous drift allowance it only issues above the old IDs.
    let borrowed = run_env(&spec(1000, ";max_drift_ms=20000;max_wait_ms=0"));
    assert_eq!(borrowed.tail.as_deref(), Some("done"), "{:?}", borrowed.tail);
    assert!(borrowed.ids[0] > *first.ids.last().unwrap());
    // Back to the real time: on it goes, above everything.
    std::fs::write(&stamp, "+0\n").unwrap();
    let again = run_env(&spec(20_000, ""));
    assert_eq!(again.tail.as_deref(), Some("done"));
    unique_and_increasing(&[first, borrowed, again]);

    // Torn, corrupt and foreign files are errors, never a silent reset.
    let good = std::fs::read(&state).unwrap();
    std::fs::write(&state, &good[..20]).unwrap();
    let torn = run(&spec(1, ""));
    assert!(
        torn.head.contains("ERR_SNOWFLAKE_STATE_FILE") && torn.head.contains("torn or corrupt"),
        "{}",
        torn.head
    );
    let mut bad = good.clone();
    bad[33] ^= 0x40;
    std::fs::write(&state, &bad).unwrap();
    assert!(run(&spec(1, "")).head.contains("checksum"));
    std::fs::write(&state, &good).unwrap();
    let foreign = run(&format!("twitter|datacenter=0,worker=5|state_file={}|1|0", state.display()));
    assert!(foreign.head.contains("other node values"), "{}", foreign.head);
    let _ = std::fs::remove_dir_all(dir);
}

fn local_leases() {
    let dir = tmp("lease");
    let layout = "time:41,worker:4,sequence:12;epoch=1288834974657";
    let spec = |hold: u64| format!("{layout}||lease=local|1000|{hold}");
    let mut holders: Vec<(Child, BufReader<std::process::ChildStdout>)> = vec![];
    let mut claimed = HashSet::new();
    for _ in 0..16 {
        let mut child = spawn(&spec(60_000), &[]);
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut head = String::new();
        out.read_line(&mut head).unwrap();
        assert!(head.starts_with("ok worker="), "{head}");
        assert!(claimed.insert(head.trim().to_string()), "{head} claimed twice");
        holders.push((child, out));
    }
    assert_eq!(claimed.len(), 16);
    let refused = run(&spec(0));
    assert!(
        refused.head.contains("ERR_SNOWFLAKE_LEASE") && refused.head.contains("all 16 values"),
        "{}",
        refused.head
    );
    // Read what holder 5 issued, kill it; a newcomer gets its value and issues above it.
    let (mut victim, mut out) = holders.remove(5);
    let mut dead_ids = vec![];
    loop {
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        match line.trim().parse::<u64>() {
            Ok(id) => dead_ids.push(id),
            Err(_) => break, // "done"
        }
    }
    victim.kill().unwrap();
    victim.wait().unwrap();
    let newcomer = run(&spec(0));
    let dead_worker = Layout::parse(layout).unwrap().decode(dead_ids[0]).unwrap().node.get(1);
    assert_eq!(newcomer.head, format!("ok worker={dead_worker}"));
    assert!(newcomer.ids[0] > *dead_ids.last().unwrap(), "the new holder issued at or below the old one");
    for (mut c, _) in holders {
        let _ = c.kill();
        let _ = c.wait();
    }
    let _ = std::fs::remove_dir_all(dir);
}

fn record_end(path: &Path) -> u64 {
    let b = std::fs::read(path).unwrap();
    u64::from_le_bytes(b[32..40].try_into().unwrap())
}

fn fork_and<F: FnOnce() -> i32>(child: F) -> i32 {
    // SAFETY: the child runs `child` and _exits.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        let code = child();
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    unsafe { libc::waitpid(pid, &mut status, 0) };
    libc::WEXITSTATUS(status)
}

/// Review finding: a child of fork() dropping its copy of a state-file generator must not
/// lower the parent's reservation.
fn a_forked_child_leaves_the_parents_state_file_alone() {
    let dir = tmp("forkdrop");
    let path = dir.join("ids.state");
    let layout = Layout::parse("twitter").unwrap();
    let o = Options::parse(&format!("state_file={};state_window_ms=60000", path.display())).unwrap();
    let g = Generator::new(&layout, layout.parse_node("datacenter=0,worker=11").unwrap(), o.clone()).unwrap();
    let first = g.next_id().unwrap();
    let reserved = record_end(&path);
    // The child drops its copy of the generator (as an exiting interpreter would); the
    // parent keeps its own and goes on.
    // SAFETY: in the child, the bitwise copy is the only one ever dropped (it _exits).
    assert_eq!(
        fork_and(|| {
            drop(unsafe { std::ptr::read(&g) });
            0
        }),
        0
    );
    assert_eq!(record_end(&path), reserved, "the child's drop rewrote the parent's record");
    assert!(g.next_id().unwrap() > first);
    let _ = std::fs::remove_dir_all(dir);
}

/// Review finding: a pool's bank must not be handed out again in a child of fork().
fn a_pools_bank_is_not_inherited() {
    let name = shared_name("poolfork");
    let layout = Layout::parse("twitter").unwrap();
    let o = Options::parse(&format!("shared={name}")).unwrap();
    let g = Generator::new(&layout, Default::default(), o.clone()).unwrap();
    let mut pool: snowflake_core::Pool<'_, _, 4> = snowflake_core::Pool::new(&g);
    g.next_id().unwrap();
    assert!(pool.bank().unwrap() > 0);
    let dir = tmp("poolfork");
    let file = dir.join("child");
    let file2 = file.clone();
    let code = fork_and(|| {
        assert_eq!(pool.banked(), 0);
        let ids: Vec<String> = (0..3).map(|_| pool.next_id().unwrap().to_string()).collect();
        std::fs::write(&file2, ids.join("\n")).unwrap();
        0
    });
    assert_eq!(code, 0);
    let child: HashSet<u64> =
        std::fs::read_to_string(&file).unwrap().lines().map(|l| l.parse().unwrap()).collect();
    // The parent hands out its bank; the child's IDs are none of them.
    let parent: Vec<u64> = (0..pool.banked()).map(|_| pool.next_id().unwrap()).collect();
    assert!(!parent.is_empty());
    assert!(parent.iter().all(|id| !child.contains(id)), "the child repeated the parent's banked IDs");
    assert_eq!(child.len(), 3);
    let _ = std::fs::remove_dir_all(dir);
}

/// Review finding: the rollover counter is not kept across restarts or lease hand-overs, so
/// rollover with a state file or a lease is refused (a restarted process could reuse a counter
/// value at ticks below the stored mark).
fn rollover_with_a_state_file_or_lease_is_refused() {
    let layout = Layout::parse("time:41,era:2,worker:8,sequence:12;epoch=1288834974657").unwrap();
    let dir = tmp("rollover");
    let state = dir.join("never-created.state");
    for spec in [
        format!("state_file={};rollover=era", state.display()),
        "lease=local;lease_field=worker;rollover=era".to_string(),
    ] {
        let o = Options::parse(&spec).unwrap();
        let err = Generator::new(&layout, Default::default(), o.clone()).unwrap_err();
        assert!(err.to_string().contains("rollover cannot be combined"), "{spec}: {err}");
    }
    assert!(!state.exists());
    let _ = std::fs::remove_dir_all(dir);
}

/// Review finding: a process joining a shared state with a state file must not push the
/// others ahead of the clock.
fn joining_a_durable_shared_state_does_not_stall_the_others() {
    let dir = tmp("join");
    let name = shared_name("join");
    let layout = Layout::parse("twitter").unwrap();
    let spec = format!("shared={name};state_file={};max_wait_ms=0", dir.join("s").display());
    let o = Options::parse(&spec).unwrap();
    let first = Generator::new(&layout, Default::default(), o.clone()).unwrap();
    first.next_id().unwrap();
    let second = Generator::new(&layout, Default::default(), o.clone()).unwrap();
    for _ in 0..100 {
        first.next_id().unwrap();
        second.next_id().unwrap();
    }
    let _ = std::fs::remove_dir_all(dir);
}

// ---------------------------------------------------------------------------------------------
// Issue 15: repeated IDs and hangs found by a hostile review. Each test reproduced its defect
// before the fix.

/// The IDs of `outputs` that appear more than once.
fn repeats(outputs: &[&Output]) -> usize {
    let mut all = HashSet::new();
    outputs.iter().flat_map(|o| o.ids.iter()).filter(|id| !all.insert(**id)).count()
}

/// Reads a worker's head line and its IDs up to `done` (the worker then holds its generator
/// for its hold time).
fn read_until_done(child: &mut Child) -> (String, Vec<u64>, BufReader<std::process::ChildStdout>) {
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut head = String::new();
    out.read_line(&mut head).unwrap();
    let mut ids = vec![];
    if head.starts_with("ok") {
        loop {
            let mut line = String::new();
            if out.read_line(&mut line).unwrap() == 0 {
                break;
            }
            match line.trim().parse::<u64>() {
                Ok(id) => ids.push(id),
                Err(_) => break, // "done" (or an error)
            }
        }
    }
    (head.trim().to_string(), ids, out)
}

/// Case 1: two processes with one identity and one state file, neither sharing a state, each
/// kept a state of its own under the file and repeated about half their IDs. Now processes
/// with one identity share the host's state by default, and its state file with it; a
/// process that keeps its state alone (`process_only`) holds the file (`<file>.users`) while
/// it uses it, and any other process is refused meanwhile.
fn one_state_file_one_state() {
    let dir = tmp("onefile");
    let state = dir.join("ids.state");
    let spec = |count: u64, hold: u64, extra: &str| {
        format!("twitter|datacenter=0,worker=4|state_file={}{extra}|{count}|{hold}", state.display())
    };
    // Two processes at once, as the review ran them, and a third under a name: one state.
    let racers: Vec<Child> = (0..2).map(|_| spawn(&spec(300_000, 0, ""), &[])).collect();
    let named = spawn(&spec(100_000, 0, &format!(";shared={}", shared_name("onefile"))), &[]);
    let mut outputs: Vec<Output> = racers.into_iter().map(collect).collect();
    outputs.push(collect(named));
    for o in &outputs {
        assert_eq!(o.tail.as_deref(), Some("done"), "{}", o.head);
    }
    assert_eq!(unique_and_increasing(&outputs), 700_000);

    // A process that issues alone holds the identity's record: another is refused meanwhile,
    // by the arbiter, naming it.
    let alone = ";process_only=true";
    let mut holder = spawn(&spec(1000, 60_000, alone), &[]);
    let (head, held_ids, _out) = read_until_done(&mut holder);
    assert_eq!(head, "ok datacenter=0,worker=4");
    for extra in [alone, ""] {
        let second = run(&spec(1000, 0, extra));
        assert!(
            second.head.contains("ERR_SNOWFLAKE_SHARED_MISMATCH")
                && second.head.contains(&format!("process {}", holder.id()))
                && second.head.contains("process_only"),
            "a second process used the identity: {}",
            second.head
        );
        assert!(second.ids.is_empty());
    }
    let _ = holder.kill();
    let _ = holder.wait();
    // Once it is gone the next one goes on, above everything it issued.
    let next = run(&spec(1000, 0, ""));
    assert_eq!(next.tail.as_deref(), Some("done"), "{}", next.head);
    assert!(next.ids[0] > *held_ids.last().unwrap());
    let all_before = outputs.iter().flat_map(|o| o.ids.iter()).copied().max().unwrap();
    assert!(next.ids[0] > all_before);

    // Two that keep their states alone: never a repeat (one of them is refused, unless the
    // other was already done).
    let racers: Vec<Child> = (0..2).map(|_| spawn(&spec(300_000, 0, alone), &[])).collect();
    let outputs: Vec<Output> = racers.into_iter().map(collect).collect();
    assert!(outputs.iter().any(|o| o.tail.as_deref() == Some("done")));
    for o in &outputs {
        assert!(
            o.head.starts_with("ok") || o.head.contains("issues alone (process_only=true)"),
            "{}",
            o.head
        );
    }
    assert_eq!(repeats(&outputs.iter().collect::<Vec<_>>()), 0);
    let _ = std::fs::remove_dir_all(dir);
}

/// Case 6: one state file under two spellings in one process got two reservations (the path
/// was canonicalized only once the file existed): dropping one generator lowered the record
/// below what the other went on issuing, so a restart with the clock behind repeated its
/// IDs. A state file is now known by what it is: every spelling shares one reservation, and
/// the record always covers every ID issued.
fn one_state_file_under_two_spellings() {
    let dir = tmp("spellings");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::os::unix::fs::symlink(&dir, dir.join("link")).unwrap();
    let layout = Layout::parse("twitter").unwrap();
    let node = layout.parse_node("datacenter=0,worker=12").unwrap();
    let path = dir.join("x.state");
    let open = |spelling: &Path| {
        let o = Options::parse(&format!("state_file={};state_window_ms=60000", spelling.display())).unwrap();
        Generator::new(&layout, node, o).unwrap()
    };
    // Opened before the file exists, under three spellings.
    let (a, b, c) = (open(&dir.join("sub/../x.state")), open(&dir.join("link/x.state")), open(&path));
    c.next_id().unwrap();
    std::thread::sleep(Duration::from_millis(5));
    a.next_id().unwrap();
    b.next_id().unwrap();
    drop((a, b));
    let mut last = 0;
    let until = Instant::now() + Duration::from_millis(30);
    while Instant::now() < until {
        last = c.next_id().unwrap();
    }
    let last_tick = layout.tick_of(layout.decode(last).unwrap().unix_ms).unwrap();
    assert!(
        record_end(&path) > last_tick,
        "the state file's record ({}) is below an ID issued under it (tick {last_tick})",
        record_end(&path)
    );
    drop(c);
    let _ = std::fs::remove_dir_all(dir);
}

/// Case 7: children of fork() hung forever when another thread of the parent held one of the
/// library's locks at the fork (a reservation's extend lock, the state-file table). Three
/// threads issue from a shared state with a state file that needs a write every tick while
/// the main thread forks children that issue from it and open a state file of their own;
/// each must finish (a generous minute: a hang is the failure, not a slow child).
fn forks_under_load_never_hang() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    let dir = tmp("forkload");
    let name = shared_name("forkload");
    let layout = Layout::parse("twitter").unwrap();
    // A child descheduled while it holds the state file's lock (40 children on a loaded
    // machine) may hold it past the default 1 s wait, which is a Busy, not a hang: the calls
    // wait a minute, so only a lock that is never released fails the case.
    let spec = format!(
        "shared={name};state_file={};state_window_ms=1;max_wait_ms=60000",
        dir.join("shared.state").display()
    );
    let g = Arc::new(
        Generator::new(
            &layout,
            layout.parse_node("datacenter=0,worker=13").unwrap(),
            Options::parse(&spec).unwrap(),
        )
        .unwrap(),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let issued = Arc::new(Mutex::new(Vec::new()));
    let threads: Vec<_> = (0..3)
        .map(|_| {
            let (g, stop, issued) = (g.clone(), stop.clone(), issued.clone());
            std::thread::spawn(move || {
                let mut mine = vec![];
                while !stop.load(Ordering::Relaxed) {
                    mine.push(g.next_id().unwrap());
                }
                issued.lock().unwrap().extend(mine);
            })
        })
        .collect();
    let mut children = vec![];
    for i in 0..40 {
        std::thread::sleep(Duration::from_millis(3));
        let out = dir.join(format!("child{i}"));
        let own = dir.join(format!("child{i}.state"));
        // SAFETY: the child issues IDs, writes a file and _exits.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            // A few IDs: each needs a write of the state file (a tick's window), which the
            // parent's threads are busy with too.
            let mut ids: Vec<String> =
                (0..3).map(|_| g.next_id().map(|id| id.to_string()).unwrap_or_default()).collect();
            // A node of its own: children run at the same time, each with its own state file.
            let node = layout.parse_node(&format!("datacenter={},worker={}", 1 + i / 32, i % 32)).unwrap();
            let o = Options::parse(&format!("state_file={}", own.display())).unwrap();
            let code = match Generator::new(&layout, node, o) {
                Ok(mine) => {
                    ids.extend((0..100).map(|_| mine.next_id().map(|id| id.to_string()).unwrap_or_default()));
                    0
                }
                Err(_) => 3,
            };
            std::fs::write(&out, ids.join("\n")).unwrap();
            unsafe { libc::_exit(code) };
        }
        children.push((pid, out));
    }
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut hung = 0;
    let mut all: Vec<u64> = issued.lock().unwrap().clone();
    for (pid, out) in children {
        let mut status = 0;
        loop {
            // SAFETY: waiting for our own child.
            let done = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            if done == pid {
                assert_eq!(libc::WEXITSTATUS(status), 0, "a child could not open a generator of its own");
                let text = std::fs::read_to_string(&out).unwrap();
                let ids: Vec<u64> = text.lines().map(|l| l.parse().expect("the child issued")).collect();
                assert_eq!(ids.len(), 103);
                all.extend(ids);
                break;
            }
            if Instant::now() > deadline {
                unsafe { libc::kill(pid, libc::SIGKILL) };
                unsafe { libc::waitpid(pid, &mut status, 0) };
                hung += 1;
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    assert_eq!(hung, 0, "{hung} of 40 children of fork() hung");
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "a child repeated an ID");
    let _ = std::fs::remove_dir_all(dir);
}

/// Case 4: local leases on different lease fields of one layout handed out one identity
/// twice (`lease_field=worker` with datacenter=1 took dc=1,w=0; `lease_field=datacenter` with
/// worker=0 then took dc=1 too). A lease is now the lock of the whole identity it hands out.
fn leases_on_different_fields_never_share_an_identity() {
    let dir = tmp("leasefields");
    let layout = "time:41,datacenter:2,worker:2,sequence:12;epoch=1288834974657";
    let lease = "lease=local";
    let mut holders = vec![];
    let mut claimed = vec![];
    let by_worker = format!("{layout}|datacenter=1|{lease};lease_field=worker|2000|60000");
    let mut first = spawn(&by_worker, &[]);
    let (head, ids, out) = read_until_done(&mut first);
    assert_eq!(head, "ok datacenter=1,worker=0");
    claimed.push(Output { head: head.clone(), ids, tail: None });
    holders.push((first, out));
    // The four datacenters with worker=0: dc=1,w=0 is taken, so three are handed out.
    let by_datacenter = format!("{layout}|worker=0|{lease};lease_field=datacenter|2000|60000");
    for _ in 0..4 {
        let mut child = spawn(&by_datacenter, &[]);
        let (head, ids, out) = read_until_done(&mut child);
        claimed.push(Output { head, ids, tail: None });
        holders.push((child, out));
    }
    let heads: Vec<&str> = claimed.iter().map(|o| o.head.as_str()).collect();
    assert_eq!(heads.iter().filter(|h| **h == "ok datacenter=1,worker=0").count(), 1, "{heads:?}");
    assert!(
        heads[4].contains("ERR_SNOWFLAKE_LEASE")
            && heads[4].contains("all 4 values of `datacenter` with worker=0"),
        "{heads:?}"
    );
    assert_eq!(repeats(&claimed.iter().collect::<Vec<_>>()), 0);
    for (mut c, _) in holders {
        let _ = c.kill();
        let _ = c.wait();
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Case 5: a shared-memory file removed while processes use it (systemd-logind's RemoveIPC
/// at logout, a temporary-file cleaner) went unnoticed: new processes set up a fresh state
/// beside the live one and repeated its IDs. Now the live process notices (its path no longer
/// names its file) and stops, and a fresh state starts above what it could still issue.
fn a_removed_shared_file_is_noticed() {
    let dir = tmp("removeipc");
    let shm = dir.join("shm");
    std::fs::create_dir_all(&shm).unwrap();
    let env = [("SNOWFLAKE_SHM_DIR", shm.to_str().unwrap())];
    let name = shared_name("removeipc");
    // 64 IDs a millisecond: each process issues for seconds, into the same ticks.
    let layout = "time:41,worker:10,sequence:6;epoch=1288834974657";
    let mut old = spawn(&format!("{layout}|worker=5|shared={name}|400000|0"), &env);
    let mut out = BufReader::new(old.stdout.take().unwrap());
    let mut head = String::new();
    out.read_line(&mut head).unwrap();
    assert!(head.starts_with("ok"), "{head}");
    // Once it issues, its file goes, as RemoveIPC removes it; a new process comes.
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    let file = state_path(&shm, layout, "worker=5");
    std::fs::remove_file(&file).unwrap();
    let new = spawn(&format!("{layout}|worker=5|shared={name}|64000|0"), &env);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    old.wait().unwrap();
    let old = parse(&format!("{head}{first}{rest}"));
    let new = collect(new);
    assert_eq!(new.tail.as_deref(), Some("done"), "{}", new.head);
    assert_eq!(repeats(&[&old, &new]), 0, "a fresh state beside a live one repeated its IDs");
    let tail = old.tail.unwrap_or_default();
    assert!(tail.contains("ERR_SNOWFLAKE_SHARED_MISMATCH") && tail.contains("RemoveIPC"), "{tail}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 39: a holder borrowing ahead (`max_drift_ms=300`) whose record is removed
/// (`remove`) or truncated (not `remove`) under it, and which exits as soon as it is told
/// (`exit`: without freeing its generator, as a C program's `return 1`), before a new process
/// comes: the new one made a record anew from the clock, below the IDs the holder had
/// borrowed (6,352 of 82,416 after a removal; 12,464 of 317,008 after a truncation, whose
/// holder skipped even the wait of a clean exit). The holder now waits for the clock to pass
/// what it issued, by its own memory, before the error returns.
fn lost_record_then_gone(what: &str, remove: bool, exit: bool) {
    let dir = tmp(&format!("lost-{what}"));
    let shm = dir.join("shm");
    std::fs::create_dir_all(&shm).unwrap();
    let mut env = vec![("SNOWFLAKE_SHM_DIR", shm.to_str().unwrap())];
    if exit {
        env.push(("SNOWFLAKE_WORKER_EXIT", "1"));
    }
    let name = shared_name(&format!("lost-{what}"));
    // 64 IDs a millisecond: a holder that issues as fast as it can runs ahead by its drift.
    let layout = "time:41,worker:10,sequence:6;epoch=1288834974657";
    let mut old = spawn(&format!("{layout}|worker=6|shared={name};max_drift_ms=300|4000000|0"), &env);
    let mut out = BufReader::new(old.stdout.take().unwrap());
    let mut head = String::new();
    out.read_line(&mut head).unwrap();
    assert!(head.starts_with("ok"), "{head}");
    // Once it has borrowed ahead (a line is printed only after a batch of 4,096 IDs, 64 ms
    // of the clock's), its record goes.
    let mut first = String::new();
    for _ in 0..3 * 4096 {
        out.read_line(&mut first).unwrap();
    }
    let file = state_path(&shm, layout, "worker=6");
    if remove {
        std::fs::remove_file(&file).unwrap();
    } else {
        std::fs::OpenOptions::new().write(true).open(&file).unwrap().set_len(0).unwrap();
    }
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    old.wait().unwrap();
    let old = parse(&format!("{head}{first}{rest}"));
    // The holder is gone, and its beacon with it: the new process makes the record anew.
    let new = spawn(&format!("{layout}|worker=6|shared={name}|64000|0"), &env);
    let new = collect(new);
    assert_eq!(new.tail.as_deref(), Some("done"), "{what}: {}", new.head);
    let tail = old.tail.clone().unwrap_or_default();
    assert!(tail.contains("ERR_SNOWFLAKE_SHARED_MISMATCH"), "{what}: {tail}");
    assert_eq!(repeats(&[&old, &new]), 0, "{what}: a record made anew repeated a lost holder's borrowed IDs");
    let _ = std::fs::remove_dir_all(dir);
}

/// A layout of 256 IDs a millisecond.
const TEXT_256: &str = "time:41,worker:10,sequence:8;epoch=1288834974657";

/// [`TEXT_256`], its node values `node`, and their record's path in the run's
/// SNOWFLAKE_SHM_DIR.
fn identity_256(node: &str) -> (Layout, snowflake_core::Node, PathBuf) {
    let shm = PathBuf::from(std::env::var_os("SNOWFLAKE_SHM_DIR").unwrap());
    let layout = Layout::parse(TEXT_256).unwrap();
    (layout, layout.parse_node(node).unwrap(), state_path(&shm, TEXT_256, node))
}

/// Session 15: freeing the last generator of an identity waited for the clock to pass the
/// record's validity, 50 ms beyond it (a generator made per request and freed waited that
/// long each time, in PHP and Python alike). What a process issued at its own clock's readings
/// ends at the clock's tick (and its drift): only that is waited for now. Each round frees
/// the last generator, removes the record and makes it anew at once, in the same millisecond:
/// the new one starts past what the freed one issued. Where the process may have issued ahead
/// of the clock (a drift, a caller's time), freeing still waits for the clock to pass it.
fn a_record_made_anew_after_the_last_generator_goes_repeats_nothing() {
    let (layout, node, file) = identity_256("worker=12");
    let mut seen = HashSet::new();
    let mut issue = |id: u64, how: &str| {
        assert!(seen.insert(id), "{how}: {id} repeated ({:?})", layout.decode(id));
    };
    // At the clock, no drift: freed, removed and made anew 300 times. (The process keeps the
    // record once its last generator goes: the next generator finds its file gone, lets go of
    // it, with the wait a free has, and makes it anew; that is what is timed.)
    let mut opens = vec![];
    for _ in 0..300 {
        let t = Instant::now();
        let g = Generator::new(&layout, node, Options::default()).unwrap();
        opens.push(t.elapsed());
        for _ in 0..100 {
            let id = g.next_id().unwrap();
            issue(id, "at the clock");
        }
        drop(g);
        std::fs::remove_file(&file).unwrap();
    }
    opens.sort();
    eprintln!(
        "letting go of a removed record and making it anew: median {:?}, max {:?}",
        opens[opens.len() / 2],
        opens[opens.len() - 1]
    );
    // Ahead of the clock by a drift (2,560 IDs at once: about 10 ms ahead), and by a caller's
    // time 30 ms ahead (200 IDs, less than a tick holds: a caller's time never waits). The
    // record is truncated before the generator goes (as a cleaner could), so that what the
    // process issued is known from its own memory alone, not from the state word; then it is
    // removed and made anew, and the new one issues at the clock until it has passed what the
    // freed one issued.
    for (how, options, count) in [("a drift", "max_drift_ms=20", 2560), ("a caller's time", "", 200)] {
        for _ in 0..5 {
            let g = Generator::new(&layout, node, Options::parse(options).unwrap()).unwrap();
            let mut end_ms = 0;
            for _ in 0..count {
                let id = if options.is_empty() { g.next_id_at(now_ms() + 30) } else { g.next_id() };
                let id = id.unwrap();
                issue(id, how);
                end_ms = end_ms.max(layout.decode(id).unwrap().unix_ms);
            }
            std::fs::OpenOptions::new().write(true).open(&file).unwrap().set_len(0).unwrap();
            drop(g);
            std::fs::remove_file(&file).unwrap();
            let g = Generator::new(&layout, node, Options::default()).unwrap();
            loop {
                let id = g.next_id().unwrap();
                issue(id, how);
                if layout.decode(id).unwrap().unix_ms > end_ms {
                    break;
                }
            }
            drop(g);
            std::fs::remove_file(&file).unwrap();
        }
    }
}

/// Session 16: a process keeps the host's record of an identity open once its last generator
/// goes, so that a generator made per request neither opens it nor waits at its free (89 us a
/// request in PHP before, with nothing else holding the identity). Four processes and this
/// one make a generator per request, 400 requests each, while the record is removed under
/// them twice and made anew: nothing repeats. This process removes it between two of its
/// requests, and none of them fails: a kept record whose file went is let go of, and opened
/// anew at its name. (A request of another process whose generator is alive at the removal
/// stops, as documented; its next request's generator joins the new record.)
fn a_generator_per_request_keeps_the_record_and_repeats_nothing() {
    let (layout, node, file) = identity_256("worker=14");
    let text = TEXT_256;
    let children: Vec<Child> = (0..4)
        .map(|_| spawn(&format!("{text}|worker=14||40000|0"), &[("SNOWFLAKE_WORKER_REQUESTS", "400")]))
        .collect();
    let mut mine = vec![];
    let mut opens = vec![];
    for request in 0..400 {
        if request == 100 || request == 250 {
            // As RemoveIPC or a cleaner would, between two requests of this process.
            let _ = std::fs::remove_file(&file);
        }
        let t = Instant::now();
        let g = Generator::new(&layout, node, Options::default()).unwrap();
        opens.push(t.elapsed());
        for _ in 0..100 {
            mine.push(g.next_id().unwrap());
        }
        drop(g);
        if request == 0 {
            let state =
                snowflake_core::shared_states().unwrap().into_iter().find(|s| s.path == file).unwrap();
            assert!(state.in_use, "the record was let go of with its last generator");
        }
    }
    opens.sort();
    eprintln!(
        "a generator per request: median {:?}, max {:?}",
        opens[opens.len() / 2],
        opens[opens.len() - 1]
    );
    let mut outputs: Vec<Output> = children.into_iter().map(collect).collect();
    for o in &outputs {
        assert_eq!(o.tail.as_deref(), Some("done"), "{}", o.head);
    }
    outputs.push(Output { head: "ok".into(), ids: mine, tail: None });
    assert_eq!(repeats(&outputs.iter().collect::<Vec<_>>()), 0, "generators made per request repeated IDs");
}

/// A record kept open after its last generator is let go of when a generator of this process
/// needs the identity another way (`process_only`, other terms), and another process's
/// `process_only` generator is refused while it is kept, as beside a live generator. At a
/// clean exit the process lets go of it with the wait of a free: a holder that borrowed 300
/// ms ahead and exited, whose record is removed at once and made anew, repeats nothing.
fn a_kept_record_is_let_go_of_when_needed() {
    let text = TEXT_256;
    let layout = Layout::parse(text).unwrap();
    let node = layout.parse_node("worker=15").unwrap();
    let g = Generator::new(&layout, node, Options::default()).unwrap();
    let mut seen: HashSet<u64> = (0..1000).map(|_| g.next_id().unwrap()).collect();
    drop(g);
    let other = run(&format!("{text}|worker=15|process_only=true|10|0"));
    assert!(other.head.starts_with("error ERR_SNOWFLAKE_SHARED_MISMATCH"), "{}", other.head);
    // Other terms, then process_only, in this process: each lets go of the kept one.
    for options in ["max_drift_ms=5", "process_only=true", ""] {
        let g = Generator::new(&layout, node, Options::parse(options).unwrap()).unwrap();
        for _ in 0..1000 {
            assert!(seen.insert(g.next_id().unwrap()), "{options}: an ID repeated");
        }
    }
    // Removing the record from this process lets go of its own kept use first (an error that
    // says the IDs are still ahead of the clock is waited out: the last ones are in this tick).
    let shm = PathBuf::from(std::env::var_os("SNOWFLAKE_SHM_DIR").unwrap());
    let file = state_path(&shm, text, "worker=15");
    loop {
        match snowflake_core::remove_shared_state(file.to_str().unwrap()) {
            Ok(_) => break,
            Err(e) if e.to_string().contains("ahead of this clock") => std::thread::yield_now(),
            Err(e) => panic!("removing the record this process kept: {e}"),
        }
    }
    assert!(!file.exists());
    // A process_only generator lives no longer: a process of its own may take the identity.
    let g = Generator::new(&layout, node, Options::parse("process_only=true").unwrap()).unwrap();
    drop(g);
    let other = run(&format!("{text}|worker=15|process_only=true|10|0"));
    assert_eq!(other.tail.as_deref(), Some("done"), "{}", other.head);

    // The wait at a clean exit: 256 IDs a millisecond, 300 ms of drift.
    let dir = tmp("kept-exit");
    let shm = dir.join("shm");
    std::fs::create_dir_all(&shm).unwrap();
    let env = [("SNOWFLAKE_SHM_DIR", shm.to_str().unwrap())];
    let file = state_path(&shm, text, "worker=16");
    for round in 0..3 {
        let old = collect(spawn(&format!("{text}|worker=16|max_drift_ms=300|200000|0"), &env));
        assert_eq!(old.tail.as_deref(), Some("done"), "{}", old.head);
        let ahead = layout.decode(*old.ids.last().unwrap()).unwrap().unix_ms.saturating_sub(now_ms());
        std::fs::remove_file(&file).unwrap();
        let new = collect(spawn(&format!("{text}|worker=16||64000|0"), &env));
        assert_eq!(new.tail.as_deref(), Some("done"), "{}", new.head);
        assert_eq!(
            repeats(&[&old, &new]),
            0,
            "round {round}: a record made anew after a clean exit repeated"
        );
        eprintln!("round {round}: the exited holder's IDs ran {ahead} ms ahead when it was gone");
    }
    let _ = std::fs::remove_dir_all(dir);
}

fn a_holder_that_exits_on_removal_repeats_nothing() {
    lost_record_then_gone("removed-exit", true, true);
}

fn a_holder_of_a_truncated_record_repeats_nothing() {
    lost_record_then_gone("truncated-exit", false, true);
    lost_record_then_gone("truncated-drop", false, false);
}

/// A worker run as `user` (by `setpriv`, as tests/arbiter/test_arbiter.py runs them: this test runs
/// as root, as CI does).
fn spawn_as(user: &str, spec: &str, env: &[(&str, &str)]) -> Child {
    let mut cmd = Command::new("setpriv");
    cmd.args([&format!("--reuid={user}"), "--regid=nogroup", "--clear-groups", "--"])
        .arg(std::env::current_exe().unwrap())
        .env("SNOWFLAKE_WORKER", spec)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.spawn().unwrap()
}

/// A directory where every user may make records, as /dev/shm (sticky, 1777).
fn users_shm(name: &str) -> (PathBuf, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tmp(name);
    let shm = dir.join("shm");
    std::fs::create_dir_all(&shm).unwrap();
    std::fs::set_permissions(&shm, std::fs::Permissions::from_mode(0o1777)).unwrap();
    (dir, shm)
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64
}

/// Issue 39: two users on a layout of 2-day ticks. One ID puts a record's exclusive end at the
/// next tick, about 2 days ahead: past the old "a day plus a minute" cut-off for poisoned
/// marks, so the second user ignored a real mark and repeated the first's IDs (10 of 20). A
/// mark within the newcomer's own reach (its tick, its drift, the tick's end) is a floor.
fn two_users_on_coarse_ticks_repeat_nothing() {
    let (dir, shm) = users_shm("coarse-users");
    let env = [("SNOWFLAKE_SHM_DIR", shm.to_str().unwrap())];
    // The epoch a second ago: the clock is at the start of tick 0, which ends 2 days ahead.
    let layout = format!("time:20,worker:10,sequence:12;epoch={};tick=172800s", now_ms() - 1000);
    let spec = format!("{layout}|worker=9|max_wait_ms=0|10|0");
    let first = collect(spawn_as("nobody", &spec, &env));
    assert_eq!(first.tail.as_deref(), Some("done"), "{}", first.head);
    assert_eq!(first.ids.len(), 10);
    let second = collect(spawn(&spec, &env));
    assert_eq!(repeats(&[&first, &second]), 0, "root repeated nobody's IDs on a 2-day tick");
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 39: another user plants a mark a day ahead in its own record of the victim's identity.
/// The victim accepted it as a floor, copied it into its own record, and was refused for a
/// day ("retry in 86,399,968 ms"), even once the planted file was gone. A foreign mark beyond
/// the newcomer's reach is now refused, naming the user, and never copied.
fn a_planted_mark_is_refused_and_never_copied() {
    use std::os::unix::fs::FileExt;
    let (dir, shm) = users_shm("planted");
    let env = [("SNOWFLAKE_SHM_DIR", shm.to_str().unwrap())];
    let epoch = 1_288_834_974_657;
    let layout = format!("time:41,worker:10,sequence:12;epoch={epoch}");
    let spec = format!("{layout}|worker=11|max_wait_ms=0|3|0");
    let attacker = collect(spawn_as("nobody", &spec, &env));
    assert_eq!(attacker.tail.as_deref(), Some("done"), "{}", attacker.head);
    let planted: Vec<PathBuf> = std::fs::read_dir(&shm).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(planted.len(), 1, "{planted:?}");
    // The state word (offset 1024): a day ahead, sequence 0 (12 bits).
    let tick = now_ms() + 86_400_000 - epoch;
    let file = std::fs::OpenOptions::new().write(true).open(&planted[0]).unwrap();
    file.write_at(&(tick << 12).to_le_bytes(), 1024).unwrap();
    drop(file);
    let victim = collect(spawn(&spec, &env));
    assert!(
        victim.head.starts_with("error ERR_SNOWFLAKE_SHARED_MISMATCH") && victim.head.contains("user nobody"),
        "a planted mark was taken: {} {:?}",
        victim.head,
        victim.tail
    );
    // The planted file goes: the victim issues at the clock (nothing was copied).
    std::fs::remove_file(&planted[0]).unwrap();
    let before = now_ms();
    let victim = collect(spawn(&spec, &env));
    assert_eq!(victim.tail.as_deref(), Some("done"), "{} {:?}", victim.head, victim.tail);
    let layout = Layout::parse(&layout).unwrap();
    let issued_ms = layout.decode(victim.ids[0]).unwrap().unix_ms;
    assert!(issued_ms < before + 60_000, "the victim issued at {issued_ms}, a day ahead of {before}");
    let _ = std::fs::remove_dir_all(dir);
}

/// A worker in a time namespace of its own whose offsets are `offsets`
/// (`/proc/self/timens_offsets`' lines: `monotonic 0 900000000\n`), as `unshare --time` or a
/// CRIU restore makes one.
fn spawn_in_time_namespace(spec: &str, env: &[(&str, &str)], offsets: &'static str) -> Child {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.env("SNOWFLAKE_WORKER", spec).stdout(Stdio::piped()).stderr(Stdio::inherit());
    for (k, v) in env {
        cmd.env(k, v);
    }
    // SAFETY: only system calls between fork and exec; the namespace is entered at exec.
    unsafe {
        cmd.pre_exec(move || {
            const CLONE_NEWTIME: libc::c_int = 0x80;
            if libc::unshare(CLONE_NEWTIME) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let fd = libc::open(c"/proc/self/timens_offsets".as_ptr(), libc::O_WRONLY);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let n = libc::write(fd, offsets.as_ptr().cast(), offsets.len());
            libc::close(fd);
            if n != offsets.len() as isize {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.spawn().unwrap()
}

/// Issue 39: a process whose `CLOCK_MONOTONIC` runs ahead of the record's users' joins them:
/// 0.9 s (within the 1 s tolerance), or 5 s in a time namespace that shifts boottime with
/// monotonic (which `/proc/uptime` then shows shifted too, so the check saw nothing). The
/// record is removed; the processes stop (the joiner without freeing its generator); a new
/// process makes the record anew from its own clock: below the fast joiner's IDs (13,808 of
/// 75,904; 8,400 of 73,072). Now the joiner's waits and beacon carry how far ahead it runs,
/// and a namespace's offset is seen (refused while others use the record).
fn shifted_joiner(what: &str, offsets: &'static str, new_count: u64, refused: bool) {
    let dir = tmp(&format!("shifted-{what}"));
    let shm = dir.join("shm");
    std::fs::create_dir_all(&shm).unwrap();
    let env = [("SNOWFLAKE_SHM_DIR", shm.to_str().unwrap())];
    let name = shared_name(&format!("shifted-{what}"));
    let layout = "time:41,worker:10,sequence:6;epoch=1288834974657";
    let spec = format!("{layout}|worker=7|shared={name}|100000000|0");
    let mut holder = spawn(&spec, &env);
    let mut holder_out = BufReader::new(holder.stdout.take().unwrap());
    let mut holder_text = String::new();
    holder_out.read_line(&mut holder_text).unwrap();
    assert!(holder_text.starts_with("ok"), "{holder_text}");
    let mut joiner = spawn_in_time_namespace(&spec, &[env[0], ("SNOWFLAKE_WORKER_EXIT", "1")], offsets);
    let mut joiner_out = BufReader::new(joiner.stdout.take().unwrap());
    let mut joiner_text = String::new();
    joiner_out.read_line(&mut joiner_text).unwrap();
    assert_eq!(!joiner_text.starts_with("ok"), refused, "{what}: {joiner_text}");
    if joiner_text.starts_with("ok") {
        // Issuing from its clock, ahead of the holder's: its first batches.
        for _ in 0..4 * 4096 {
            joiner_out.read_line(&mut joiner_text).unwrap();
        }
    } else {
        assert!(joiner_text.contains("clock"), "{what}: {joiner_text}");
    }
    std::fs::remove_file(state_path(&shm, layout, "worker=7")).unwrap();
    // Both were told, and are gone: the record is made anew from the clock.
    joiner_out.read_to_string(&mut joiner_text).unwrap();
    holder_out.read_to_string(&mut holder_text).unwrap();
    joiner.wait().unwrap();
    holder.wait().unwrap();
    let new = collect(spawn(&format!("{layout}|worker=7|shared={name}|{new_count}|0"), &env));
    assert_eq!(new.tail.as_deref(), Some("done"), "{what}: {}", new.head);
    let (holder, joiner) = (parse(&holder_text), parse(&joiner_text));
    assert_eq!(
        repeats(&[&holder, &joiner, &new]),
        0,
        "{what}: a record made anew repeated a fast joiner's IDs ({})",
        joiner.head
    );
    let _ = std::fs::remove_dir_all(dir);
}

fn a_joiner_ahead_within_the_tolerance_repeats_nothing() {
    shifted_joiner("0.9s", "monotonic 0 900000000\n", 64_000, false);
}

fn a_time_namespace_shifting_boottime_too_repeats_nothing() {
    // The new process issues for 6 s: across every tick the 5 s joiner could have reached.
    shifted_joiner("namespace-5s", "monotonic 5 0\nboottime 5 0\n", 384_000, true);
}

/// Issue 39: rollover counters reaching a live or left identity, each from another process.
/// `(first, second, what the first does)`: the second must be refused, naming the rollover;
/// before, each pair was let through and repeated IDs once the clock stepped back.
/// - `rollover=clock` beside `rollover=worker`: both reach `clock=1,worker=5` (1,000 of 2,006);
/// - a 13-bit rollover field beside a process at `clock=4100`, above the 4,095 values probed
///   (817 of 206,100);
/// - a value used by a process that has since exited (its IDs are still there to repeat).
fn rollover_reaching_a_live_or_left_identity_is_refused() {
    let dir = tmp("rollover-reach");
    let shm = dir.join("shm");
    std::fs::create_dir_all(&shm).unwrap();
    let env = [("SNOWFLAKE_SHM_DIR", shm.to_str().unwrap())];
    let narrow = "time:41,clock:3,worker:5,sequence:12;epoch=1288834974657";
    let wide = "time:41,clock:13,worker:5,sequence:5;epoch=1288834974657";
    let cases = [
        (narrow, "worker=5|rollover=clock", "clock=1|rollover=worker", true),
        (wide, "clock=4100,worker=5|-", "worker=5|rollover=clock", true),
        (narrow, "clock=2,worker=6|-", "worker=6|rollover=clock", false),
    ];
    for (layout, first, second, live) in cases {
        let first = first.replace("|-", "|");
        let hold_ms = if live { 600_000 } else { 0 };
        let mut holder = spawn(&format!("{layout}|{first}|1|{hold_ms}"), &env);
        let (head, ids, _out) = read_until_done(&mut holder);
        assert!(head.starts_with("ok") && ids.len() == 1, "{first}: {head}");
        if !live {
            holder.wait().unwrap();
        }
        let joiner = collect(spawn(&format!("{layout}|{second}|1|0"), &env));
        let _ = holder.kill();
        let _ = holder.wait();
        assert!(
            joiner.head.starts_with("error ERR_SNOWFLAKE_SHARED_MISMATCH")
                && joiner.head.contains("rollover"),
            "{first} ({}) then {second}: {}",
            if live { "live" } else { "left" },
            joiner.head
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 39: a clean exit's wait for borrowed IDs is bounded in time, and says so when it gives
/// up: a process of a daily layout that borrowed tomorrow's tick (`max_drift_ms` of a day)
/// waited about two days in `Drop`, saying nothing.
fn a_clean_exit_a_day_ahead_says_it_did_not_wait() {
    let dir = tmp("exit-ahead");
    let shm = dir.join("shm");
    std::fs::create_dir_all(&shm).unwrap();
    let layout = "time:20,worker:10,sequence:2;epoch=1600000000000;tick=86400s";
    // Four IDs a tick: the fifth and sixth are borrowed from tomorrow.
    let spec = format!("{layout}|worker=12|max_wait_ms=0;max_drift_ms=86400000|6|0");
    let child = Command::new(std::env::current_exe().unwrap())
        .env("SNOWFLAKE_WORKER", spec)
        .env("SNOWFLAKE_SHM_DIR", &shm)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = parse(&String::from_utf8(out.stdout).unwrap());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stdout.tail.as_deref(), Some("done"), "{}", stdout.head);
    assert!(stderr.contains("did not wait") && stderr.contains("ahead of the clock"), "{stderr}");
    let _ = std::fs::remove_dir_all(dir);
}

// ---------------------------------------------------------------------------------------------
// Mixing kinds of generator for one identity (issue 13, step 2): made safe, or refused with an
// error that names the other generator; never a silent repeat.

const MIX_NODE: &str = "datacenter=3,worker=7";

fn twitter_gen(node: &str, options: &str) -> snowflake_core::Result<Generator> {
    let layout = Layout::parse("twitter").unwrap();
    Generator::new(&layout, layout.parse_node(node)?, Options::parse(options)?)
}

/// Draws `n` IDs from each generator in turn, one at a time: the repeats among them.
fn interleaved_repeats(gens: &[&Generator], n: usize) -> usize {
    let mut seen = HashSet::new();
    let mut repeats = 0;
    for _ in 0..n {
        for g in gens {
            repeats += usize::from(!seen.insert(g.next_id().unwrap()));
        }
    }
    repeats
}

/// (a) A plain generator and a `shared=` one of the same identity in one process.
fn mixing_plain_and_shared_in_one_process() {
    let name = shared_name("mixplain");
    let plain = twitter_gen(MIX_NODE, "").unwrap();
    let shared = twitter_gen(MIX_NODE, &format!("shared={name}")).unwrap();
    assert_eq!(interleaved_repeats(&[&plain, &shared], 20_000), 0, "plain + shared={name} repeated IDs");
}

/// (b) `shared=` under two names for one identity, in one process and in two processes.
fn mixing_two_shared_names() {
    let (one, two) = (shared_name("mixname1"), shared_name("mixname2"));
    let a = twitter_gen(MIX_NODE, &format!("shared={one}")).unwrap();
    let b = twitter_gen(MIX_NODE, &format!("shared={two}")).unwrap();
    assert_eq!(interleaved_repeats(&[&a, &b], 20_000), 0, "shared={one} + shared={two} in one process");
    drop((a, b));
    // Two processes, one name each, drawing at once (100 ms of twitter's capacity each).
    let children: Vec<Child> = [&one, &two]
        .iter()
        .map(|name| spawn(&format!("twitter|{MIX_NODE}|shared={name}|400000|0"), &[]))
        .collect();
    let outputs: Vec<Output> = children.into_iter().map(collect).collect();
    for o in &outputs {
        assert_eq!(o.head, format!("ok {MIX_NODE}"));
        assert_eq!(o.tail.as_deref(), Some("done"));
    }
    assert_eq!(repeats(&[&outputs[0], &outputs[1]]), 0, "shared={one} and shared={two} in two processes");
}

/// (c) A local lease holding worker=v and a plain generator given worker=v: refused, naming
/// the lease.
fn mixing_a_lease_and_a_plain_generator() {
    let dir = tmp("mixlease");
    let leased = twitter_gen("datacenter=3", "lease=local").unwrap();
    let layout = Layout::parse("twitter").unwrap();
    let v = layout.decode(leased.next_id().unwrap()).unwrap().node.get(2);
    let err =
        twitter_gen(&format!("datacenter=3,worker={v}"), "").expect_err("a plain generator beside the lease");
    assert_eq!(err.kind().code(), "ERR_SNOWFLAKE_SHARED_MISMATCH", "{err}");
    assert!(err.to_string().contains("lease"), "does not name the lease: {err}");
    // The refusal changed nothing: the lease still issues.
    assert!(leased.next_id().is_ok());
    drop(leased);
    let _ = std::fs::remove_dir_all(dir);
}

/// (d) A `process_only` generator and a plain one of the same identity: refused, naming the
/// other, whichever comes first.
fn mixing_process_only_and_plain() {
    let own = twitter_gen(MIX_NODE, "process_only=true").unwrap();
    let err = twitter_gen(MIX_NODE, "").expect_err("a plain generator beside a process_only one");
    assert_eq!(err.kind().code(), "ERR_SNOWFLAKE_SHARED_MISMATCH", "{err}");
    assert!(err.to_string().contains("process_only"), "does not name the process_only generator: {err}");
    assert!(own.next_id().is_ok());
    drop(own);
    let plain = twitter_gen(MIX_NODE, "").unwrap();
    let err =
        twitter_gen(MIX_NODE, "process_only=true").expect_err("a process_only generator beside a plain one");
    assert_eq!(err.kind().code(), "ERR_SNOWFLAKE_SHARED_MISMATCH", "{err}");
    assert!(plain.next_id().is_ok());
}

/// Issue 13: where the host's records cannot be kept, opening fails with an error that names
/// the path and the fix, and issues nothing. Issue 25: every way of issuing meets the record,
/// `process_only` too.
fn no_shared_memory_is_an_error_that_names_the_fix() {
    let env = [("SNOWFLAKE_SHM_DIR", "/nonexistent/snowflake-shm")];
    for (node, options) in [
        ("datacenter=1,worker=1", ""),
        ("datacenter=1,worker=1", "process_only=true"),
        ("datacenter=1", "lease=local"),
    ] {
        let o = collect(spawn(&format!("twitter|{node}|{options}|10|0"), &env));
        assert!(o.head.starts_with("error ERR_SNOWFLAKE_IO"), "{options}: {}", o.head);
        assert!(o.head.contains("/nonexistent/snowflake-shm"), "{options}: {}", o.head);
        assert!(o.head.contains("set SNOWFLAKE_SHM_DIR"), "{options}: {}", o.head);
        assert!(o.ids.is_empty());
    }
}

fn main() {
    if let Ok(spec) = std::env::var("SNOWFLAKE_WORKER") {
        worker(&spec);
        return;
    }
    assert!(
        Path::new(FAKETIME).exists(),
        "{FAKETIME} is missing: apt-get install faketime (bash scripts/install-deps.sh)"
    );
    // Shared states and leases of this run (and of the workers, who inherit the variables) in
    // a directory of its own: other runs of these tests on the machine never meet them.
    let own = tmp("coordination");
    std::env::set_var("SNOWFLAKE_SHM_DIR", own.join("shm"));
    std::fs::create_dir_all(own.join("shm")).unwrap();
    let tests: [(&str, fn()); 31] = [
        ("mixing_plain_and_shared_in_one_process", mixing_plain_and_shared_in_one_process),
        ("mixing_two_shared_names", mixing_two_shared_names),
        ("mixing_a_lease_and_a_plain_generator", mixing_a_lease_and_a_plain_generator),
        ("mixing_process_only_and_plain", mixing_process_only_and_plain),
        ("no_shared_memory_is_an_error_that_names_the_fix", no_shared_memory_is_an_error_that_names_the_fix),
        (
            "a_forked_child_leaves_the_parents_state_file_alone",
            a_forked_child_leaves_the_parents_state_file_alone,
        ),
        ("a_pools_bank_is_not_inherited", a_pools_bank_is_not_inherited),
        ("rollover_with_a_state_file_or_lease_is_refused", rollover_with_a_state_file_or_lease_is_refused),
        (
            "joining_a_durable_shared_state_does_not_stall_the_others",
            joining_a_durable_shared_state_does_not_stall_the_others,
        ),
        ("shared_four_processes", shared_four_processes),
        ("shared_mismatch_names_the_difference", shared_mismatch_names_the_difference),
        ("shared_survives_kill_9", shared_survives_kill_9),
        ("shared_works_across_fork", shared_works_across_fork),
        ("state_file_survives_a_clock_step_back", state_file_survives_a_clock_step_back),
        ("local_leases", local_leases),
        ("one_state_file_one_state", one_state_file_one_state),
        ("one_state_file_under_two_spellings", one_state_file_under_two_spellings),
        ("forks_under_load_never_hang", forks_under_load_never_hang),
        (
            "leases_on_different_fields_never_share_an_identity",
            leases_on_different_fields_never_share_an_identity,
        ),
        ("a_removed_shared_file_is_noticed", a_removed_shared_file_is_noticed),
        (
            "a_record_made_anew_after_the_last_generator_goes_repeats_nothing",
            a_record_made_anew_after_the_last_generator_goes_repeats_nothing,
        ),
        ("a_holder_that_exits_on_removal_repeats_nothing", a_holder_that_exits_on_removal_repeats_nothing),
        ("a_holder_of_a_truncated_record_repeats_nothing", a_holder_of_a_truncated_record_repeats_nothing),
        ("two_users_on_coarse_ticks_repeat_nothing", two_users_on_coarse_ticks_repeat_nothing),
        ("a_planted_mark_is_refused_and_never_copied", a_planted_mark_is_refused_and_never_copied),
        (
            "a_joiner_ahead_within_the_tolerance_repeats_nothing",
            a_joiner_ahead_within_the_tolerance_repeats_nothing,
        ),
        (
            "a_time_namespace_shifting_boottime_too_repeats_nothing",
            a_time_namespace_shifting_boottime_too_repeats_nothing,
        ),
        (
            "rollover_reaching_a_live_or_left_identity_is_refused",
            rollover_reaching_a_live_or_left_identity_is_refused,
        ),
        ("a_clean_exit_a_day_ahead_says_it_did_not_wait", a_clean_exit_a_day_ahead_says_it_did_not_wait),
        (
            "a_generator_per_request_keeps_the_record_and_repeats_nothing",
            a_generator_per_request_keeps_the_record_and_repeats_nothing,
        ),
        ("a_kept_record_is_let_go_of_when_needed", a_kept_record_is_let_go_of_when_needed),
    ];
    let filter = std::env::args().nth(1).filter(|a| !a.starts_with('-'));
    let mut passed = 0;
    for (name, test) in tests {
        if filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        let start = Instant::now();
        test();
        println!("test {name} ... ok ({:.1}s)", start.elapsed().as_secs_f64());
        passed += 1;
    }
    let _ = std::fs::remove_dir_all(own);
    println!("\ntest result: ok. {passed} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out");
}
