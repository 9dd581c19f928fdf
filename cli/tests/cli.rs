//! Runs the built `snowflake` binary the way a shell would and checks what it prints and
//! how it exits.

use snowflake_core::{decode_str, encode, Encoding, Layout};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Output, Stdio};

const DISCORD_ID: &str = "175928847299117063";
const DISCORD_JSON: &str = r#"{"id":"175928847299117063","unix_ms":1462015105796,"time":"2016-04-30T11:18:25.796Z","sequence":7,"fields":{"worker":1,"process":0}}"#;

/// The built binary, with the host's records (its shared states and local leases) in this
/// worktree's target/tmp: never those of other runs on the machine. Each test
/// (by its thread's name) gets a shared-state directory of its own: tests run at once, and
/// runs with one layout and node values but other terms (max_drift_ms) refuse each other
/// while both run, as they should.
fn snowflake_cmd() -> Command {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{}", std::process::id()));
    let test = std::thread::current().name().unwrap_or("main").replace("::", "-");
    let shm = dir.join(format!("shm-{test}"));
    std::fs::create_dir_all(&shm).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_snowflake"));
    cmd.env("TMPDIR", &dir).env("SNOWFLAKE_SHM_DIR", &shm);
    // The configuration variables are each test's own choice.
    for name in ["SNOWFLAKE_LAYOUT", "SNOWFLAKE_NODE", "SNOWFLAKE_OPTIONS"] {
        cmd.env_remove(name);
    }
    cmd
}

/// A run with the configuration variables `vars` set.
fn snowflake_env(args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut cmd = snowflake_cmd();
    cmd.envs(vars.iter().copied());
    cmd.args(args).stdin(Stdio::null()).output().expect("run snowflake")
}

fn snowflake(args: &[&str]) -> Output {
    snowflake_cmd().args(args).stdin(Stdio::null()).output().expect("run snowflake")
}

fn snowflake_with_stdin(args: &[&str], input: &str) -> Output {
    let mut child = snowflake_cmd()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run snowflake");
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// stdout of a run that must succeed, silently but for a layout's lifetime warning (for the
/// layouts with under 10 years left, such as `game`).
fn ok_or_warned(args: &[&str]) -> String {
    let out = snowflake(args);
    assert!(out.status.success(), "{args:?}: {:?} {}", out.status, String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.is_empty()
            || (stderr.starts_with("snowflake: warning: layout ") && stderr.lines().count() == 1),
        "{args:?}: {stderr}"
    );
    String::from_utf8(out.stdout).unwrap()
}

/// stdout of a run that must succeed silently.
fn ok(args: &[&str]) -> String {
    let out = snowflake(args);
    assert!(out.status.success(), "{args:?}: {:?} {}", out.status, String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn next_prints_n_unique_increasing_ids_in_every_encoding() {
    for encoding in Encoding::ALL {
        let text = ok(&["next", "-n", "5000", "--format", encoding.name()]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5000, "{encoding}");
        let ids: Vec<u64> = lines.iter().map(|l| decode_str(l, encoding, false).unwrap()).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{encoding}: not strictly increasing");
        if let Some(width) = encoding.width() {
            assert!(lines.iter().all(|l| l.len() == width), "{encoding}: not fixed width");
            assert!(lines.windows(2).all(|w| w[0] < w[1]), "{encoding}: text does not sort");
        }
        let twitter = Layout::parse("twitter").unwrap();
        for &id in &ids {
            let parts = twitter.decode(id).unwrap();
            assert!(twitter.node_values(&parts.node).all(|(_, v)| v == 0));
        }
    }
}

#[test]
fn next_json_lines_are_decoded_ids() {
    let text =
        ok(&["next", "-n", "300", "--layout", "discord", "--node", "worker=3,process=4", "--format", "json"]);
    let discord = Layout::parse("discord").unwrap();
    let mut previous = 0;
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let id: u64 = v["id"].as_str().unwrap().parse().unwrap();
        assert!(id > previous);
        previous = id;
        let parts = discord.decode(id).unwrap();
        assert_eq!(v["unix_ms"].as_u64(), Some(parts.unix_ms));
        assert_eq!(v["sequence"].as_u64(), Some(parts.sequence));
        assert_eq!(v["fields"], serde_json::json!({"worker": 3, "process": 4}));
        // The same line decode --json prints.
        assert_eq!(ok(&["decode", "--layout", "discord", "--json", &id.to_string()]).trim_end(), line);
    }
    assert_eq!(text.lines().count(), 300);
}

#[test]
fn next_honours_layout_node_and_options() {
    let spec = "time:41,shard:13,sequence:10;epoch=2011-08-24T21:07:01.721Z";
    let text = ok(&[
        "next",
        "-n",
        "3000",
        "--layout",
        spec,
        "--node",
        "shard=4097",
        "--max-drift-ms",
        "5",
        "--max-wait-ms",
        "0",
        "--sequence-start",
        "spread:8",
    ]);
    let layout = Layout::parse(spec).unwrap();
    let ids: Vec<u64> = text.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(ids.len(), 3000);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    for id in ids {
        let parts = layout.decode(id).unwrap();
        assert_eq!(layout.node_values(&parts.node).collect::<Vec<_>>(), [("shard", 4097)]);
    }
    assert_eq!(ok(&["next", "-n", "0"]), "");
}

#[test]
fn a_generator_that_may_not_wait_prints_what_it_issued_then_fails_with_status_1() {
    // max_wait_ms=0: the first full tick ends the run (10M IDs cannot all fit in ticks that
    // come along exactly when asked).
    let out = snowflake(&["next", "-n", "10000000", "--max-wait-ms", "0"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with("snowflake: error: every sequence number of the current tick is taken; retry in"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1);
    let ids: Vec<u64> = String::from_utf8(out.stdout).unwrap().lines().map(|l| l.parse().unwrap()).collect();
    assert!(!ids.is_empty() && ids.len() < 10_000_000);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn back_to_back_runs_never_repeat_an_id() {
    // Each run is a new process with a new generator state; `next` waits out its last tick
    // before it exits, so the next run starts in a later one.
    let mut ids = Vec::new();
    for _ in 0..20 {
        ids.extend(ok(&["next", "-n", "3"]).lines().map(|l| l.parse::<u64>().unwrap()));
    }
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
}

/// `max_wait_ms` for runs that share one state at full speed: each call of theirs waits for
/// many ticks that the others fill, and its budget is wall-clock time from its first wait. A
/// run stopped for a second within one such call (a loaded machine's scheduler; `kill -STOP`
/// for 1.5 s does it every time) then fails with "every sequence number of the current tick is
/// taken" on the next full tick, as the budget says. These tests are about sharing one state,
/// not about that budget: a budget the scheduler cannot use up keeps it out of their premise.
/// It waits no longer than the ticks need.
const UNSTARVED_WAIT_MS: &str = "600000";

#[test]
fn runs_at_the_same_time_with_the_same_node_values_never_repeat_an_id() {
    // Without the per-node run lock these would start in the same millisecond, each with a
    // fresh state, and issue the same IDs.
    let children: Vec<_> = (0..4)
        .map(|_| {
            snowflake_cmd()
                .args([
                    "next",
                    "-n",
                    "20000",
                    "--node",
                    "datacenter=0,worker=9",
                    "--max-wait-ms",
                    UNSTARVED_WAIT_MS,
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // Read every child's output at once: a run that holds the lock may be waiting for its
    // reader.
    let outputs: Vec<_> = children
        .into_iter()
        .map(|child| std::thread::spawn(move || child.wait_with_output().unwrap()))
        .collect();
    let mut all = std::collections::HashSet::new();
    for output in outputs {
        let out = output.join().unwrap();
        assert!(out.status.success() && out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
        for line in String::from_utf8(out.stdout).unwrap().lines() {
            assert!(all.insert(line.to_string()), "{line} issued twice");
        }
    }
    assert_eq!(all.len(), 80_000);
}

/// Issue 15, case 1: two runs with one `--state-file` at once repeated almost every ID. They
/// share the host's state of their layout and node values, and the state file with it.
#[test]
fn runs_with_one_state_file_share_one_state() {
    let dir = std::env::temp_dir().join(format!("snowflake-cli-statefile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let state = dir.join("ids.state");
    let children: Vec<_> = (0..2)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_snowflake"))
                .args([
                    "next",
                    "-n",
                    "300000",
                    "--node",
                    "datacenter=0,worker=11",
                    "--state-file",
                    state.to_str().unwrap(),
                    "--max-wait-ms",
                    UNSTARVED_WAIT_MS,
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outputs: Vec<_> =
        children.into_iter().map(|c| std::thread::spawn(move || c.wait_with_output().unwrap())).collect();
    let mut runs = vec![];
    for output in outputs {
        let out = output.join().unwrap();
        assert!(out.status.success() && out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
        runs.push(
            String::from_utf8(out.stdout)
                .unwrap()
                .lines()
                .map(|l| l.parse::<u64>().unwrap())
                .collect::<Vec<_>>(),
        );
    }
    for run in &runs {
        assert!(run.windows(2).all(|w| w[0] < w[1]), "a run's IDs went back");
    }
    let mut all: Vec<u64> = runs.concat();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 600_000);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 15, case 2: a layout without a `time` field (`sequence:22`) was accepted, its
/// sequence doubling as the time, and repeated IDs. The first field must be `time`.
#[test]
fn a_layout_without_time_is_refused() {
    // An epoch a second ago: 22 bits of milliseconds reach an hour past it, so the old parser's
    // layout issued (and repeated) IDs rather than failing on its time range.
    let now_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis();
    let epoch = now_ms - 1000;
    for layout in [
        format!("sequence:22;epoch={epoch}"),
        format!("sequence:12,time:41;epoch={epoch}"),
        format!("time:41,time:5,sequence:12;epoch={epoch}"),
    ] {
        let layout = layout.as_str();
        let out = snowflake(&["next", "-n", "100000", "--layout", layout]);
        assert_eq!(out.status.code(), Some(2), "{layout}");
        assert!(out.stdout.is_empty(), "{layout}: issued IDs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("must be `time`") || err.contains("`time` appears more than once"),
            "{layout}: {err}"
        );
    }
}

#[test]
fn a_run_killed_midway_leaves_the_next_run_nothing_to_repeat() {
    // The killed run's IDs are in the host's record of its identity, which the next run
    // starts above, whatever instant the first died at.
    for round in 0..5 {
        let node = format!("datacenter=0,worker={}", 20 + round);
        let mut first = snowflake_cmd()
            .args(["next", "-n", "100000000", "--node", &node])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut reader = BufReader::new(first.stdout.take().unwrap());
        let mut seen = std::collections::HashSet::new();
        let mut line = String::new();
        while seen.len() < 50_000 && reader.read_line(&mut line).unwrap() > 0 {
            seen.insert(line.trim_end().to_string());
            line.clear();
        }
        first.kill().unwrap();
        // What it printed before it died, up to its last whole line.
        while reader.read_line(&mut line).unwrap() > 0 {
            if line.ends_with('\n') {
                seen.insert(line.trim_end().to_string());
            }
            line.clear();
        }
        first.wait().unwrap();
        let second = snowflake(&["next", "-n", "50000", "--node", &node]);
        assert!(second.status.success(), "{}", String::from_utf8_lossy(&second.stderr));
        for id in String::from_utf8(second.stdout).unwrap().lines() {
            assert!(!seen.contains(id), "round {round}: {id} issued by the killed run and the next");
        }
    }
}

#[test]
fn options_reach_cores_coordination_between_processes() {
    let dir = std::env::temp_dir().join(format!("snowflake-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |args: &[&str]| {
        snowflake_cmd()
            .args(args)
            .env("SNOWFLAKE_SHM_DIR", &dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    // One shared state: runs at the same time draw from it without repeating an ID.
    let children: Vec<_> =
        (0..3).map(|_| run(&["next", "-n", "20000", "--options", "shared=clitest"])).collect();
    let outputs: Vec<_> =
        children.into_iter().map(|c| std::thread::spawn(move || c.wait_with_output().unwrap())).collect();
    let mut all = std::collections::HashSet::new();
    for output in outputs {
        let out = output.join().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        for line in String::from_utf8(out.stdout).unwrap().lines() {
            assert!(all.insert(line.to_string()), "{line} issued twice");
        }
    }
    assert_eq!(all.len(), 60_000);
    // The state is listed under its name, and removed once no run uses it and the clock has
    // passed its IDs.
    let shared = |args: &[&str]| run(args).wait_with_output().unwrap();
    let list = String::from_utf8(shared(&["shared", "list"]).stdout).unwrap();
    assert!(
        list.contains("\tuser root (uid 0)\tclitest\thost\tunused\t")
            || list.contains("\tclitest\thost\tunused\t"),
        "{list}"
    );
    let show = String::from_utf8(shared(&["shared", "show", "clitest"]).stdout).unwrap();
    assert!(show.contains("node: datacenter=0,worker=0") && show.contains("in use: no"), "{show}");
    let mut removed = shared(&["shared", "remove", "clitest"]);
    for _ in 0..100 {
        if removed.status.success() {
            break;
        }
        // Its last IDs may still be ahead of the clock: refused, with the time to wait for.
        assert!(String::from_utf8_lossy(&removed.stderr).contains("ahead of this clock"));
        std::thread::sleep(std::time::Duration::from_millis(20));
        removed = shared(&["shared", "remove", "clitest"]);
    }
    assert!(removed.status.success(), "{}", String::from_utf8_lossy(&removed.stderr));
    assert!(String::from_utf8(shared(&["shared", "list"]).stdout).unwrap().is_empty());
    let missing = shared(&["shared", "remove", "clitest"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("is named `clitest`"));

    // While a run uses the state, another with other terms is bad input, and removing it
    // is refused; a state no run uses is taken over.
    // The holder blocks on its full pipe once it has issued, still holding the state.
    let mut holder = run(&["next", "-n", "20000000", "--shared", "clitest"]);
    let mut first = String::new();
    BufReader::new(holder.stdout.as_mut().unwrap()).read_line(&mut first).unwrap();
    assert!(first.trim().parse::<u64>().is_ok(), "{first}");
    let mut refused = false;
    for _ in 0..3 {
        let out = run(&["next", "--max-drift-ms", "5"]).wait_with_output().unwrap();
        if out.status.code() == Some(2) {
            let stderr = String::from_utf8(out.stderr).unwrap();
            assert!(stderr.contains("max_drift_ms=0, not 5"), "{stderr}");
            let busy = shared(&["shared", "remove", "clitest"]);
            let busy = String::from_utf8_lossy(&busy.stderr);
            assert!(
                busy.contains(&format!("process {} of ", holder.id())) && busy.contains("stop the processes"),
                "{busy}"
            );
            refused = true;
            break;
        }
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    assert!(refused, "never refused while the holder ran");
    let _ = holder.kill();
    let _ = holder.wait();
    let out = run(&["next", "--max-drift-ms", "5"]).wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // The flags say the same as the options text.
    let children: Vec<_> = (0..2).map(|_| run(&["next", "-n", "20000", "--shared", "cliflag"])).collect();
    let mut all = std::collections::HashSet::new();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        for line in String::from_utf8(out.stdout).unwrap().lines() {
            assert!(all.insert(line.to_string()), "{line} issued twice");
        }
    }
    assert_eq!(all.len(), 40_000);
    let out = run(&["next", "--shared", "x;lease=local"]).wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    // Core checks the name (one check for every front end); `;` is no shared name's.
    assert!(String::from_utf8(out.stderr).unwrap().contains("a shared name is 1 to 64"));
    let state = dir.join("ids.state");
    let out = run(&["next", "-n", "3", "--state-file", state.to_str().unwrap()]).wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read(&state).unwrap().len(), 48, "the state file holds its record");
    // A path may hold `=`, `;` and spaces: the flag's value reaches core whole.
    std::fs::create_dir_all(dir.join("dir=with eq")).unwrap();
    let odd = dir.join("dir=with eq").join("ids;one.state");
    let out =
        run(&["next", "-n", "3", "--node", "datacenter=0,worker=9", "--state-file", odd.to_str().unwrap()])
            .wait_with_output()
            .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read(&odd).unwrap().len(), 48, "the state file at a path with `=`, `;` and a space");

    // A leased worker value.
    let out = run(&["next", "-n", "3", "--node", "datacenter=2", "--options", "lease=local"])
        .wait_with_output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let twitter = Layout::parse("twitter").unwrap();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let parts = twitter.decode(line.parse().unwrap()).unwrap();
        assert_eq!(twitter.node_values(&parts.node).next(), Some(("datacenter", 2)));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 25: `--run-lock` (and `run_lock=`, `lease_dir=`) are retired: refused with what
/// replaced them, exit 2, nothing issued; a boolean flag still takes no value after it.
#[test]
fn retired_options_are_refused_with_the_reason() {
    for args in [
        vec!["next", "--run-lock", "-n", "2"],
        vec!["next", "--run-lock", "true", "-n", "2"],
        vec!["next", "-n", "2", "--options", "run_lock=true"],
        vec!["next", "-n", "2", "--options", "lease=local;lease_dir=/tmp"],
        vec!["next", "-n", "2", "--lease-dir", "/tmp", "--lease", "local"],
    ] {
        let out = snowflake(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}: issued IDs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("was retired") && err.contains("remove the option"), "{args:?}: {err}");
    }
}

#[test]
fn decode_json_prints_discords_documented_example_exactly() {
    assert_eq!(ok(&["decode", "--layout", "discord", "--json", DISCORD_ID]), format!("{DISCORD_JSON}\n"));
}

#[test]
fn decode_plain_names_every_field() {
    assert_eq!(
        ok(&["decode", "--layout", "discord", DISCORD_ID]),
        "175928847299117063  2016-04-30T11:18:25.796Z  worker=1 process=0 sequence=7\n"
    );
}

#[test]
fn decode_reads_every_encoding() {
    let id = DISCORD_ID.parse::<u64>().unwrap();
    for encoding in Encoding::ALL {
        let text = encode(id, encoding, false).to_string();
        let out = ok(&["decode", "--layout", "discord", "--json", "--from", encoding.name(), &text]);
        assert_eq!(out, format!("{DISCORD_JSON}\n"), "{encoding}: {text}");
    }
    // Crockford base32 reads lower case too.
    let lower = encode(id, Encoding::Base32, false).to_lowercase();
    assert_eq!(
        ok(&["decode", "--layout", "discord", "--json", "--from", "base32", &lower]),
        format!("{DISCORD_JSON}\n")
    );
}

#[test]
fn decode_reads_standard_input_when_no_id_is_given() {
    let out = snowflake_with_stdin(
        &["decode", "--layout", "discord", "--json"],
        &format!("{DISCORD_ID}\n\n  {DISCORD_ID}  \n"),
    );
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), format!("{DISCORD_JSON}\n{DISCORD_JSON}\n"));

    let ids = ok(&["next", "-n", "50"]);
    let out = snowflake_with_stdin(&["decode", "--json"], &ids);
    assert!(out.status.success());
    let decoded: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(decoded, ids.lines().collect::<Vec<_>>());
}

#[test]
fn decode_explain_draws_the_bits_and_the_values() {
    let text = ok(&["decode", "--layout", "discord", "--explain", DISCORD_ID]);
    for expected in [
        "ID 175928847299117063",
        "  layout time:42,worker:5,process:5,sequence:12;epoch=1420070400000;tick=1ms",
        "   63                                      22 21 17 16 12 11         0",
        "  +------------------------------------------+-----+-----+------------+",
        "  |                time (42)                 |wk(5)|pr(5)|sequence(12)|",
        "  |000000100111000100000110010110101100000100|00001|00000|000000000111|",
        "  |               41944705796                |  1  |  0  |     7      |",
        "  wk = worker, pr = process",
        "  time      bits 63-22  41944705796 ms after the epoch 2015-01-01T00:00:00.000Z",
        "= 2016-04-30T11:18:25.796Z (Unix ms 1462015105796)",
        "  worker    bits 21-17  1 (of 0..31)",
        "  sequence  bits 11-0   7 (of 0..4095 in the tick)",
    ] {
        assert!(text.lines().any(|l| l.contains(expected)), "missing {expected:?} in\n{text}");
    }
    // A 63-bit layout shows its unused top bit.
    let text = ok(&["decode", "--explain", &(1u64 << 62).to_string()]);
    assert!(text.contains(&format!("|0|1{}|00000|00000|{}|", "0".repeat(40), "0".repeat(12))), "{text}");
    assert!(text.contains("bit 63 is unused"), "{text}");
}

#[test]
fn layouts_lists_every_preset_with_capacity_last_instant_and_diagram() {
    let text = ok(&["layouts"]);
    for (name, spec) in snowflake_core::PRESETS {
        assert!(text.contains(&format!("{name}  {spec}\n")), "{name}");
    }
    for expected in [
        "  capacity  4,096,000 IDs/s per node (4,096 per 1 ms tick)",
        "  capacity  25,600 IDs/s per node (256 per 10 ms tick)",
        "  capacity  8,192 IDs/s per node (8,192 per 1 s tick)",
        // baidu's 28 bits of seconds ran out in 2024.
        "  last      2024-11-20T13:24:15.999Z  (past: no new IDs; decode only)",
        "  63 62                                     22 21 17 16 12 11         0",
        "  |0|                time (41)                |dc(5)|wk(5)|sequence(12)|",
        "  |               time (39)               |pf | area (11) | app |seq(6)|",
        "  pf = platform, seq = sequence",
        "  +-+---------------------------------------+--------+----------------+",
        "  |0|               time (39)               |sequence|  machine (16)  |",
    ] {
        assert!(text.lines().any(|l| l == expected), "missing {expected:?} in\n{text}");
    }
    // How long each has left (issue 13).
    let twitter_last =
        text.lines().find(|l| l.starts_with("  last      2080-07-10T17:30:30.208Z  (")).unwrap();
    assert!(twitter_last.ends_with(" years left)"), "{twitter_last}");
    // Every diagram row is within 100 columns.
    assert!(text.lines().all(|l| l.len() <= 100));
    let custom = ok(&["layouts", "time:40,shard:12,sequence:12;epoch=2024-01-01T00:00:00Z"]);
    assert!(
        custom.starts_with("custom  time:40,shard:12,sequence:12;epoch=1704067200000;tick=1ms\n"),
        "{custom}"
    );
}

#[test]
fn bounds_give_the_first_and_last_id_of_a_tick_or_a_range() {
    assert_eq!(
        ok(&["bounds", "1288834974657"]),
        "min 0  2010-11-04T01:42:54.657Z\nmax 4194303  2010-11-04T01:42:54.657Z\n"
    );
    let text = ok(&["bounds", "--layout", "discord", "2016-04-30T11:18:25.796Z"]);
    let bounds: Vec<u64> =
        text.lines().map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap()).collect();
    let id: u64 = DISCORD_ID.parse().unwrap();
    assert_eq!(bounds, [41944705796 << 22, (41944705796 << 22) | ((1 << 22) - 1)]);
    assert!(bounds[0] <= id && id <= bounds[1]);

    // A range, on a layout whose tick is 10 ms: from the start of the first tick to the end
    // of the last.
    let text = ok(&["bounds", "--layout", "sonyflake", "1462015105796", "2016-05-01T00:00:00Z"]);
    assert_eq!(
        text,
        "min 88056066750808064  2016-04-30T11:18:25.790Z\nmax 88132728930697215  2016-05-01T00:00:00.009Z\n"
    );
}

#[test]
fn bench_reports_both_paths() {
    let text = ok(&["bench", "--seconds", "0.05", "--layout", "time:41,sequence:22;epoch=1288834974657"]);
    assert!(text.contains("capacity  4,194,304,000 IDs/s per node"), "{text}");
    for what in ["next_id ", "next_ids "] {
        let line =
            text.lines().find(|l| l.starts_with(what)).unwrap_or_else(|| panic!("no {what} in {text}"));
        assert!(line.contains("IDs/s") && line.contains("% of capacity"), "{line}");
    }
}

#[test]
fn every_bad_input_is_one_stderr_line_exit_2_and_no_output() {
    let cases: &[&[&str]] = &[
        &["next", "--layout", "tweeter"],
        &["next", "--layout", "time:41,sequence:0"],
        &["next", "--layout", "time:41,worker:10,sequence:12,sequence:1"],
        &["next", "--layout", "time:41,sequence:12;epoch=yesterday"],
        &["next", "--node", "worker=32"],
        &["next", "--node", "shard=1"],
        &["next", "--node", "worker"],
        &["next", "--node", "sequence=1"],
        &["next", "--format", "base64"],
        &["next", "--sequence-start", "spread:0"],
        &["next", "--sequence-start", "spread:5000"],
        // (An epoch the clock has not reached is the clock's, exit 1: see
        // a_time_range_from_the_clock_exits_1.)
        &["next", "-n", "many"],
        &["next", "--max-wait-ms", "-1"],
        &["next", "--options", "bogus=1"],
        &["next", "--options", "shared=../etc"],
        &["next", "--options", "lease=zookeeper"],
        &["next", "--options", "max_wait_ms=0", "--max-wait-ms", "5"],
        &["next", "--sequence-start", "spread:4;shared=x"],
        &["next", "--options", "rollover=shard"],
        &["next", "--no-such-flag"],
        &["decode", "12x4"],
        &["decode", "18446744073709551616"],
        &["decode", "9223372036854775808"],
        &["decode", "--from", "base64", "1"],
        &["decode", "--from", "base62", "0Czks0tP37"],
        &["decode", "--from", "hex", "zzzzzzzzzzzzzzzz"],
        &["decode", "--layout", "nope", "1"],
        &["decode", "1", "2", "x"],
        &["decode", "--json", "--explain", "1"],
        &["bounds", "yesterday"],
        &["bounds", "2016-02-30T00:00:00Z"],
        &["bounds", "--layout", "discord", "2000-01-01T00:00:00Z"],
        &["bounds", "2024-01-02T00:00:00Z", "2024-01-01T00:00:00Z"],
        &["bounds"],
        &["bench", "--seconds", "0"],
        &["bench", "--layout", "time:65,sequence:1"],
        &["layouts", "twitter", "time:41"],
        // Issue 13: a custom spec states its epoch; node values name every field or none.
        &["next", "--layout", "time:41,worker:10,sequence:12"],
        &["next", "--node", "datacenter=1"],
        &["next", "--node", "worker=1"],
        &["frobnicate"],
    ];
    for args in cases {
        let out = snowflake(args);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?} printed {:?}", String::from_utf8_lossy(&out.stdout));
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("snowflake: error: ") && stderr.ends_with('\n'), "{args:?}: {stderr}");
    }
    // Bad input on standard input, after good lines: still nothing printed.
    let out = snowflake_with_stdin(&["decode"], &format!("{DISCORD_ID}\n{DISCORD_ID}\nbad\n"));
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "snowflake: error: invalid ID string: character 0 of the ID string is not in the encoding's alphabet (line 3: `bad`)\n"
    );
}

#[test]
fn errors_carry_cores_message() {
    let out = snowflake(&["next", "--node", "worker=32"]);
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "snowflake: error: worker = 32 is out of range: the largest allowed is 31\n"
    );
    // Clap's usage errors, folded into one line that still names what is missing.
    let out = snowflake(&["bounds"]);
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "snowflake: error: the following required arguments were not provided: <TIME> (see `snowflake bounds --help`)\n"
    );
    let out = snowflake(&["next", "--layout", "time:41,sequence:0"]);
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "snowflake: error: invalid layout: field `sequence` has zero width\n"
    );
}

#[test]
fn a_closed_pipe_ends_quietly_with_status_0() {
    let mut child = snowflake_cmd()
        .args(["next", "-n", "100000000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert!(first.trim().parse::<u64>().is_ok(), "{first}");
    // The reader (and with it the pipe) is dropped here, like `| head -1`.
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn every_subcommand_has_help_with_examples() {
    for sub in [
        "next",
        "decode",
        "layouts",
        "bounds",
        "bench",
        "redis-script",
        "sql",
        "public",
        "config",
        "uuid",
        "serve",
    ] {
        let text = ok(&[sub, "--help"]);
        assert!(text.contains("Examples:\n  snowflake "), "{sub}: {text}");
    }
    assert!(ok(&["--help"]).contains("Examples:"));
}

/// `snowflake serve` (tests/serve runs the service itself): beyond loopback without a token it
/// refuses to start, before it opens anything; a build without the feature says how to get it.
#[test]
fn serve_needs_a_token_beyond_loopback() {
    let out = snowflake_cmd()
        .args(["serve", "--listen", "0.0.0.0:0"])
        .env_remove("SNOWFLAKE_SERVE_TOKEN")
        .env_remove("SNOWFLAKE_SERVE_TOKEN_FILE")
        .stdin(Stdio::null())
        .output()
        .expect("run snowflake");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(out.stdout.is_empty());
    if cfg!(feature = "serve") {
        assert!(err.contains("not a loopback address, and no bearer token is set"), "{err}");
    } else {
        assert!(err.contains("built without `serve`"), "{err}");
    }
}

#[test]
fn redis_script_prints_the_layouts_lua() {
    let lua = ok(&["redis-script", "--layout", "discord"]);
    assert!(lua.contains("-- EVALSHA <sha1> 1 <state-key> <worker> <process>"), "{lua}");
    assert!(lua.contains("local EPOCH = 1420070400000"));
    assert!(lua.contains("return string.reverse(table.concat(digits))"));
    let out = snowflake(&["redis-script", "--layout", "time:41"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}

/// Issue 18's fleet: 1,000 hosts of 50 PHP-FPM workers. `snowflake plan` names twitter too
/// small for a lease per process and large enough for a lease per host; its figures are the
/// layout's arithmetic.
#[test]
fn plan_names_twitter_right_for_a_thousand_hosts() {
    let out = snowflake(&[
        "plan",
        "--hosts",
        "1000",
        "--processes-per-host",
        "50",
        "--peak-per-second",
        "100000",
        "--years",
        "10",
        "--layout",
        "twitter",
        "--json",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let twitter = Layout::parse("twitter").unwrap();
    let node_bits: u32 = twitter.node_fields().map(|(_, f)| u32::from(f.bits())).sum();
    assert_eq!(v["node_values"], 1u64 << node_bits);
    assert!(1u64 << node_bits >= 1_000 && 1u64 << node_bits < 50_000);
    assert_eq!((v["hosts_fit"].as_bool(), v["processes_fit"].as_bool()), (Some(true), Some(false)));
    assert_eq!(v["capacity_per_second"], twitter.capacity_per_tick() * 1000 / twitter.tick_ms());
    assert_eq!(v["last_unix_ms"], twitter.last_unix_ms());
    assert_eq!(v["advice"], "lease per host");
    // Every preset is planned; one that fits nothing leads to a proposal.
    let out = snowflake(&[
        "plan",
        "--hosts",
        "100000",
        "--processes-per-host",
        "50",
        "--peak-per-second",
        "10000",
        "--years",
        "30",
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("nothing above fits; this layout does"), "{text}");
    let spec = text.lines().last().unwrap().trim();
    assert!(Layout::parse(spec).unwrap().total_bits() <= 63, "{spec}");
    let out = snowflake(&["plan", "--hosts", "0", "--peak-per-second", "1", "--years", "1"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn sql_prints_cores_text_and_refuses_64_bit_layouts() {
    let vectors: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/vectors/sql_scripts.json"))
            .unwrap(),
    )
    .unwrap();
    for v in vectors["scripts"].as_array().unwrap() {
        let spec = v["spec"].as_str().unwrap();
        if let Some(sql) = v["sql"].as_str() {
            assert_eq!(ok_or_warned(&["sql", "--layout", spec, "--dialect", "postgres"]), sql, "{spec}");
            assert_eq!(ok_or_warned(&["sql", "--layout", spec, "--prefix", "snowflake"]), sql, "{spec}");
        } else {
            let out = snowflake(&["sql", "--layout", spec]);
            assert_eq!(out.status.code(), Some(2), "{spec}");
            assert!(out.stdout.is_empty());
            assert!(String::from_utf8_lossy(&out.stderr).contains("64-bit layout"), "{spec}");
        }
    }
    assert!(ok(&["sql", "--prefix", "ids.orders"])
        .contains("FUNCTION \"ids\".\"orders_next_id\"(\"datacenter\" bigint"));
    for bad in [["--dialect", "mysql"], ["--prefix", "Bad Prefix"]] {
        let out = snowflake(&["sql", bad[0], bad[1]]);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(out.stdout.is_empty());
    }
}

/// A key file in a fresh temporary directory.
fn key_file(name: &str, bytes: &[u8]) -> (std::path::PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("snowflake-cli-key-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("key");
    std::fs::write(&path, bytes).unwrap();
    let text = path.to_str().unwrap().to_string();
    (dir, text)
}

#[test]
fn public_encodes_and_decodes_the_shared_vectors_with_a_key_file() {
    let vectors: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/vectors/public_ids.json"))
            .unwrap(),
    )
    .unwrap();
    for (i, row) in vectors["keys"].as_array().unwrap().iter().enumerate() {
        let hex = row["key_hex"].as_str().unwrap();
        let raw: Vec<u8> = (0..16).map(|j| u8::from_str_radix(&hex[2 * j..2 * j + 2], 16).unwrap()).collect();
        // The same key as 16 raw bytes and as 32 hex digits with a newline.
        for (form, bytes) in [("raw", raw), ("hex", format!("{hex}\n").into_bytes())] {
            let (dir, path) = key_file(&format!("{i}-{form}"), &bytes);
            let cases = row["cases"].as_array().unwrap();
            let ids: Vec<&str> = cases.iter().map(|c| c["id"].as_str().unwrap()).collect();
            let texts: Vec<&str> = cases.iter().map(|c| c["text"].as_str().unwrap()).collect();
            let encoding = row["encoding"].as_str().unwrap();
            let mut args = vec!["public", "encode", "--key-file", &path, "--encoding", encoding];
            args.extend(&ids);
            assert_eq!(ok(&args).lines().collect::<Vec<_>>(), texts, "{encoding} {form}");
            let out = snowflake_with_stdin(
                &["public", "decode", "--key-file", &path, "--encoding", encoding],
                &(texts.join("\n") + "\n"),
            );
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            assert_eq!(String::from_utf8(out.stdout).unwrap().lines().collect::<Vec<_>>(), ids);
            std::fs::remove_dir_all(dir).unwrap();
        }
    }
}

#[test]
fn public_refuses_bad_keys_and_texts_before_printing_anything() {
    let (dir, short) = key_file("short", b"SECRET-15-bytes");
    let out = snowflake(&["public", "encode", "--key-file", &short, "1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("key of 15 bytes") && err.contains("32 hex digits") && !err.contains("SECRET"),
        "{err}"
    );
    std::fs::remove_dir_all(dir).unwrap();
    let (dir, key) = key_file("good", b"0123456789abcdef");
    for (args, says) in [
        (vec!["public", "decode", "--key-file", &key, "AyJykrccOzH", "0Czks0tP37"], "10 characters"),
        (vec!["public", "encode", "--key-file", &key, "1", "18446744073709551616"], "`18446744073709551616`"),
        (vec!["public", "encode", "--key-file", &key, "--encoding", "decimal", "1"], "fixed-width"),
        (vec!["public", "encode", "--key-file", "/nonexistent/key", "1"], "reading the key file"),
    ] {
        let out = snowflake(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}: printed before failing");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(says),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The key is never an argument.
    let out = snowflake(&["public", "encode", "--key", "0123456789abcdef", "1"]);
    assert_eq!(out.status.code(), Some(2));
    std::fs::remove_dir_all(dir).unwrap();
}

#[path = "../../tests/servers/servers.rs"]
mod servers;

/// `--lease` with every form of Redis address, against real servers (tests/servers): a
/// password in the URL, IPv6 with the password from a file, a unix socket with `db` and `pass`,
/// TLS verified against a CA file, and Sentinel. Each run claims a value and prints IDs that
/// no other run repeats; no run shows the password.
/// A CLI built from a checkout without `full` leaves the store clients out, and says how to get
/// them rather than fail with a word a user does not know. (Built in one cargo run with a
/// crate that has them, such as `cargo test --workspace`, it has them: core's features are
/// the run's, which core's table tells, and then the lease is tried.)
#[test]
fn a_store_lease_on_a_cli_without_the_stores_says_how_to_build_one() {
    let out = snowflake(&["next", "--lease", "redis://127.0.0.1:1/0", "--max-wait-ms", "0"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if snowflake_core::LeaseScheme::of("redis://").unwrap().built {
        assert!(!out.status.success() && !stderr.contains("--features full"), "{stderr}");
    } else {
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("--features full") && stderr.contains("lease-redis"), "{stderr}");
    }
}

// The store clients are the CLI's `stores` feature: `cargo test --workspace --features
// snowflake-cli/full` (scripts/suites.sh) runs this.
#[cfg(feature = "stores")]
#[test]
fn next_leases_through_every_form_of_redis_address() {
    let plain = servers::Servers::start("redis", &["--password", "cl1-pw", "--ipv6"]);
    let tls = servers::Servers::start("redis", &["--tls"]);
    let sentinel = servers::Servers::start("sentinel", &["--replicas", "1", "--sentinels", "3"]);
    let port = plain.port("/redis/port");
    let sentinels: Vec<&str> =
        sentinel.get("/sentinel_addrs").as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    let forms: Vec<(String, Vec<String>)> = vec![
        (format!("redis://:cl1-pw@127.0.0.1:{port}/0"), vec![]),
        (
            format!("redis://[::1]:{port}/0"),
            vec!["--lease-password-file".into(), plain.str("/password_file").into()],
        ),
        (format!("unix://{}?db=2&pass=cl1-pw", plain.str("/redis/unix_socket")), vec![]),
        (
            format!("rediss://localhost:{}/0", tls.port("/redis/port")),
            vec!["--lease-tls-ca".into(), tls.str("/tls/ca_cert").into()],
        ),
        (format!("redis+sentinel://{}/{}/0", sentinels.join(","), sentinel.str("/master_name")), vec![]),
    ];
    let mut all = std::collections::HashSet::new();
    for (url, extra) in &forms {
        let mut args =
            vec!["next", "--layout", "time:41,worker:3,sequence:12;epoch=1288834974657", "-n", "2000"];
        args.extend(["--lease", url.as_str(), "--lease-ttl-ms", "30000"]);
        args.extend(extra.iter().map(String::as_str));
        let out = ok(&args);
        let ids: Vec<u64> = out.lines().map(|l| l.trim().parse().unwrap()).collect();
        assert_eq!(ids.len(), 2000, "{url}");
        for id in ids {
            assert!(all.insert(id), "{url}: ID {id} repeated");
        }
    }
    // A wrong password names the problem, never the password.
    let url = format!("redis://:wr0ng-cl1@127.0.0.1:{port}/0");
    let out = snowflake(&["next", "--layout", "twitter", "--lease", &url]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("refused the credentials") && !err.contains("wr0ng-cl1"),
        "{err}"
    );
}

/// Issue 13: the CLI warns on stderr when a layout it uses has under 10 years left, and still
/// does what it was asked; a layout with decades left gets no warning.
#[test]
fn a_layout_with_under_ten_years_left_is_warned_about() {
    // `game` ends on 2036-04-02.
    let out = snowflake(&["next", "-n", "2", "--layout", "game"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 2);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.starts_with("snowflake: warning: layout time:39,"), "{stderr}");
    assert!(
        stderr.contains("ends at 2036-04-02T13:56:53.887Z, in ") && stderr.contains(" years"),
        "{stderr}"
    );
    let out = snowflake(&["layouts", "game"]);
    assert!(String::from_utf8(out.stderr).unwrap().contains("warning: layout"));
    for args in [&["next", "-n", "1"][..], &["layouts"], &["redis-script", "--layout", "twitter"]] {
        let out = snowflake(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(out.stderr.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

/// Issue 26: a boolean flag took the next argument (`next --run-lock -n 2` gave "unexpected
/// argument '2'"). A boolean flag alone means true, `--flag=false` false; its value only ever
/// follows `=`, and is `true` or `false` (core's one spelling).
#[test]
fn a_boolean_flag_never_takes_the_next_argument() {
    for args in [
        &["next", "--isolated", "-n", "2"][..],
        &["next", "--process-only", "-n", "2"],
        &["next", "-n", "2", "--process-only", "--format", "hex"],
        &["next", "--isolated=true", "-n", "2"],
        &["next", "--process-only=false", "--isolated", "-n", "2"],
    ] {
        let out = ok(args);
        assert_eq!(out.lines().count(), 2, "{args:?}: {out}");
    }
    for (args, says) in [
        (&["next", "--isolated=1", "-n", "2"][..], "`isolated` must be `true` or `false`, not `1`"),
        (&["next", "--isolated=yes"], "`isolated` must be `true` or `false`, not `yes`"),
        (&["next", "--options", "isolated=1"], "`isolated` must be `true` or `false`, not `1`"),
        (&["next", "--isolated", "true"], "unexpected argument 'true'"),
    ] {
        let out = snowflake(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

/// Issue 26: the clock outside the layout's time range exited 2, "bad input", where the
/// input was fine: the layout ended (or has not begun) by the clock. It exits 1, as a clock
/// that stopped the generator does; a time the caller gave (`bounds`) is still input, 2.
#[test]
fn a_time_range_from_the_clock_exits_1() {
    let now_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis();
    for layout in [
        "time:10,sequence:2;epoch=0".to_string(),
        format!("time:41,sequence:12;epoch={}", now_ms + 86_400_000),
    ] {
        let out = snowflake(&["next", "--layout", &layout]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{layout}: {stderr}");
        assert!(stderr.contains("snowflake: error: time ") && out.stdout.is_empty(), "{layout}: {stderr}");
    }
    let out = snowflake(&["bounds", "--layout", "discord", "2000-01-01T00:00:00Z"]);
    assert_eq!(out.status.code(), Some(2));
}

/// Issue 26: a state-file path that is not UTF-8 was refused ("invalid UTF-8 was detected");
/// Linux allows it. It is used as given, end to end: the file is made at that very name, and
/// a second run continues above the first.
#[cfg(target_os = "linux")]
#[test]
fn a_state_file_path_that_is_not_utf8_is_used_as_given() {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cli-{}-non-utf8", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut name = dir.clone().into_os_string().into_vec();
    name.extend_from_slice(b"/ids-\xff\xfe.state");
    let path = std::ffi::OsString::from_vec(name);
    let run = || {
        let out = snowflake_cmd()
            .args(["next", "-n", "3", "--process-only", "--state-file"])
            .arg(&path)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().lines().map(|l| l.parse::<u64>().unwrap()).collect::<Vec<_>>()
    };
    let first = run();
    assert!(std::path::Path::new(&path).exists(), "the state file is at its very name");
    assert!(std::fs::read_dir(&dir)
        .unwrap()
        .any(|e| e.unwrap().file_name().as_bytes() == b"ids-\xff\xfe.state"));
    let second = run();
    assert!(second[0] > first[2], "{first:?} then {second:?}");
    // Given twice (a flag and --options): refused like any option.
    let out = snowflake_cmd()
        .args(["next", "--options", "state_file=x", "--state-file"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn next_with_no_flags_takes_the_environment_and_config_says_where_each_value_came_from() {
    let vars = [
        ("SNOWFLAKE_LAYOUT", "discord"),
        ("SNOWFLAKE_NODE", "worker=9,process=4"),
        ("SNOWFLAKE_OPTIONS", "max_wait_ms=0"),
    ];
    let out = snowflake_env(&["next", "-n", "3", "--format", "json"], &vars);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 3);
    assert!(text.lines().all(|l| l.ends_with(r#""fields":{"worker":9,"process":4}}"#)), "{text}");
    // A flag wins over its variable; decode reads SNOWFLAKE_LAYOUT too.
    let out = snowflake_env(&["next", "--node", "worker=1,process=2"], &vars);
    let id = String::from_utf8(out.stdout).unwrap();
    let out = snowflake_env(&["decode", "--json", id.trim()], &vars);
    assert!(String::from_utf8(out.stdout).unwrap().contains(r#""fields":{"worker":1,"process":2}"#));
    // config: each value and its source.
    let out = snowflake_env(&["config", "--max-drift-ms", "5"], &vars);
    let text = String::from_utf8(out.stdout).unwrap();
    let line = |name: &str| {
        text.lines().find(|l| l.starts_with(&format!("{name} "))).unwrap_or_default().to_string()
    };
    assert!(
        line("layout").starts_with("layout               time:42,worker:5,process:5")
            && line("layout").ends_with("SNOWFLAKE_LAYOUT"),
        "{text}"
    );
    assert!(
        line("node").contains("worker=9,process=4") && line("node").ends_with("SNOWFLAKE_NODE"),
        "{text}"
    );
    assert!(
        line("max_wait_ms").ends_with("SNOWFLAKE_OPTIONS") && line("max_drift_ms").ends_with("code"),
        "{text}"
    );
    assert!(line("sequence_start").ends_with("default"), "{text}");
    let json = String::from_utf8(snowflake_env(&["config", "--json"], &vars).stdout).unwrap();
    assert!(json.contains(r#""node":{"value":"worker=9,process=4","source":"SNOWFLAKE_NODE"}"#), "{json}");
    assert!(json.contains(r#""max_wait_ms":{"value":"0","source":"SNOWFLAKE_OPTIONS"}"#), "{json}");
}

/// The variables are read in one pass over the environment: each by its exact name (a longer
/// name that begins with it is another variable), and a value that
/// is not UTF-8 is refused by name, with nothing issued.
#[cfg(unix)]
#[test]
fn the_environment_is_read_by_exact_name_and_a_value_not_utf8_is_refused() {
    use std::os::unix::ffi::OsStrExt;
    let vars = [
        ("SNOWFLAKE_NODEX", "worker=3"),
        ("SNOWFLAKE_NODE", "worker=9,process=4"),
        ("SNOWFLAKE_LAYOUT", "discord"),
    ];
    let out = snowflake_env(&["next", "--format", "json"], &vars);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8(out.stdout).unwrap().contains(r#""fields":{"worker":9,"process":4}"#));
    let mut cmd = snowflake_cmd();
    cmd.env("SNOWFLAKE_LAYOUT", "discord").env("SNOWFLAKE_NODE", std::ffi::OsStr::from_bytes(b"worker=\xff"));
    let out = cmd.args(["next"]).stdin(Stdio::null()).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing issued: {:?}", out.stdout);
    assert!(stderr.contains("SNOWFLAKE_NODE") && stderr.contains("not valid UTF-8"), "{stderr}");
}

/// Issue 29: options written with `,` get the `;` hint from `--options` and a flag too (core's
/// `set_text`), as C and SNOWFLAKE_OPTIONS get it; it said only "must be a non-negative integer".
#[test]
fn options_written_with_a_comma_get_the_semicolon_hint() {
    for args in [
        &["next", "--options", "max_wait_ms=0,max_drift_ms=5"][..],
        &["next", "--max-wait-ms", "0,max_drift_ms=5"],
    ] {
        let out = snowflake(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("options are separated by `;`, not `,`"), "{args:?}: {stderr}");
    }
}

#[test]
fn a_malformed_variable_is_one_line_naming_it_and_exit_2() {
    for (name, value, message) in [
        ("SNOWFLAKE_LAYOUT", "twiter", "environment variable SNOWFLAKE_LAYOUT=\"twiter\": invalid layout"),
        (
            "SNOWFLAKE_NODE",
            "datacenter=1,worker=$(POD_INDEX)",
            "environment variable SNOWFLAKE_NODE=\"datacenter=1,worker=$(POD_INDEX)\": `worker`",
        ),
        ("SNOWFLAKE_NODE", "", "set but empty"),
        (
            "SNOWFLAKE_OPTIONS",
            "lease=redis://app:s3cret@cache/0;max_wait=1",
            "SNOWFLAKE_OPTIONS=\"lease=redis://app:***@cache/0;max_wait=1\"",
        ),
    ] {
        let out = snowflake_env(&["next"], &[(name, value)]);
        assert_eq!(out.status.code(), Some(2), "{name}={value}");
        assert!(out.stdout.is_empty());
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.starts_with("snowflake: error: ") && err.contains(message) && err.lines().count() == 1,
            "{err}"
        );
        assert!(!err.contains("s3cret"), "{err}");
    }
}

#[test]
fn uuid_converts_both_ways_and_refuses_foreign_uuids() {
    assert_eq!(ok(&["uuid", "1541815603606036480"]), "0181ab11-8149-75e8-8000-000000000000\n");
    assert_eq!(ok(&["uuid", "0181AB11-8149-75E8-8000-000000000000"]), "1541815603606036480\n");
    let ids = ok(&["next", "-n", "100"]);
    let uuids = String::from_utf8(snowflake_with_stdin(&["uuid"], &ids).stdout).unwrap();
    let lines: Vec<&str> = uuids.lines().collect();
    assert_eq!(lines.len(), 100);
    let mut sorted = lines.clone();
    sorted.sort();
    assert_eq!(lines, sorted, "UUIDs sort as their IDs");
    assert_eq!(String::from_utf8(snowflake_with_stdin(&["uuid"], &uuids).stdout).unwrap(), ids);
    for bad in ["0181ab11-8149-65e8-8000-000000000000", "0181ab11-8149-75e8-8000-000000000001", "12a"] {
        let out = snowflake(&["uuid", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(out.stdout.is_empty());
    }
}
