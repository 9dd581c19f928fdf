//! Issue 26's edges of the generator: a caller's time far ahead of the clock is refused on
//! every state that outlives the call (it would lock the identity out), and a time behind the
//! state says why it is refused and what replays need.
#![cfg(all(unix, feature = "std"))]

use snowflake_core::{
    Clock, Error, ErrorKind, Generator, Layout, ManualClock, Options, SystemClock, AHEAD_SLACK_MS,
    RECORD_AHEAD_MS,
};

/// 2080-01-01T00:00:00Z: within the twitter layout (it ends in 2080-09), far from now.
const YEAR_2080_MS: u64 = 3_471_292_800_000;

/// Twitter's fields, with an epoch of this test process's own (twitter's, plus the pid in ms):
/// its host records meet no other test's. These tests leave records a minute ahead of the
/// clock (own-clock generators guard them), and with twitter itself, node values of this
/// process's (below) met the fixed ones of `generator.rs`'s fork cases whenever the pid
/// matched them (`datacenter=27`: CI found that state a minute ahead of the clock).
fn twitter() -> Layout {
    let epoch = 1_288_834_974_657 + u64::from(std::process::id());
    Layout::parse(&format!("time:41,datacenter:5,worker:5,sequence:12;epoch={epoch}")).unwrap()
}

/// Node values of this test process's own (so that runs of these tests on one host share no
/// host state with each other), `index` apart within the process.
fn node(layout: &Layout, index: u64) -> snowflake_core::Node {
    let dc = std::process::id() as u64 % 32;
    layout.parse_node(&format!("datacenter={dc},worker={}", 20 + index)).unwrap()
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("snowflake-edges-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every kind of state that outlives a call, with its options: each refuses a time in 2080,
/// issues on, and a generator opened after it (a restart) is not locked out.
#[test]
fn a_time_far_ahead_is_refused_on_every_state_that_outlives_the_call() {
    let layout = twitter();
    let dir = temp_dir("ahead");
    let mut cases = vec![("the host's state", String::new()), ("process_only", "process_only=true".into())];
    if cfg!(feature = "state-file") {
        let path = dir.join("ids.state");
        cases.push(("a state file", format!("process_only=true;state_file={}", path.display())));
    }
    if cfg!(feature = "lease-local") {
        cases.push(("a local lease", "lease=local".into()));
    }
    for (i, (what, options)) in cases.iter().enumerate() {
        let node = if options.starts_with("lease") {
            layout.parse_node(&format!("datacenter={}", std::process::id() % 32)).unwrap()
        } else {
            node(&layout, i as u64)
        };
        {
            let g = Generator::new(&layout, node, Options::parse(options).unwrap()).unwrap();
            let err = g.next_id_at(YEAR_2080_MS).unwrap_err();
            assert!(matches!(err, Error::AheadOfClock { unix_ms: YEAR_2080_MS, .. }), "{what}: {err:?}");
            assert_eq!(err.kind(), ErrorKind::Value, "{what}");
            let text = err.to_string();
            assert!(text.contains("ahead of the clock") && text.contains("years"), "{what}: {text}");
            assert!(
                text.contains("lock every caller") && text.contains("`isolated` set to true"),
                "{what}: {text}"
            );
            // Refused, so nothing moved: the generator issues at the clock.
            let id = g.next_id().unwrap();
            let ms = layout.decode(id).unwrap().unix_ms;
            assert!(ms <= SystemClock.now_ms() + 1000, "{what}: issued at {ms}");
            // Each of these states is the host's record, whose bound is the tighter one: a
            // time a little ahead (a caller's clock ahead of ours) is taken, one past
            // RECORD_AHEAD_MS is refused as a time too far ahead, saying so.
            g.next_id_at(SystemClock.now_ms() + RECORD_AHEAD_MS / 5)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let err = g.next_id_at(SystemClock.now_ms() + AHEAD_SLACK_MS / 2).unwrap_err();
            assert!(matches!(err, Error::AheadOfClock { .. }), "{what}: {err:?}");
            assert!(err.to_string().contains("ms in the host's record"), "{what}: {err}");
        }
        // A restart (a state file, a lease file) is not locked out either.
        let g =
            Generator::new(&layout, node, Options::parse(&format!("{options};max_wait_ms=3000")).unwrap())
                .unwrap();
        g.next_id().unwrap_or_else(|e| panic!("{what}: after the refused call: {e}"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The bound is the clock + max_drift_ms + AHEAD_SLACK_MS, in whole ticks; an isolated
/// generator (a state of its caller's alone) takes any time.
#[test]
fn the_bound_follows_max_drift_ms_and_spares_isolated_generators() {
    let layout = twitter();
    // A minute ahead of the real clock: an own-clock generator starts above what the host's
    // record of its identity has seen (the real clock's time).
    let now = SystemClock.now_ms() + 60_000;
    let clock = ManualClock::new(now);
    // An own-clock generator's state is the process's (the host's record only guards it).
    let o = Options::parse("max_drift_ms=5000").unwrap();
    let g = Generator::with_clock(&layout, node(&layout, 9), o, &clock).unwrap();
    let err = g.next_id_at(now + 5000 + AHEAD_SLACK_MS + 1).unwrap_err();
    assert_eq!(err, Error::AheadOfClock { unix_ms: now + 6001, ahead_ms: 6001, max_unix_ms: now + 6000 });
    assert!(err.to_string().contains("6001 ms ahead of the clock"), "{err}");
    g.next_id_at(now + 6000).unwrap();

    // A tick of one hour: only the clock's tick (slack and drift are less than a tick).
    let hourly = Layout::parse("time:30,worker:8,sequence:10;epoch=1600000000000;tick=3600s").unwrap();
    // The real clock's hour (a generator of this clock's whose IDs are ahead of the real clock
    // by more than a tick would wait for it when dropped), with a worker of this process's.
    let real = SystemClock.now_ms();
    let start = 1_600_000_000_000 + (real - 1_600_000_000_000) / 3_600_000 * 3_600_000;
    let clock = ManualClock::new(real);
    let worker = hourly.parse_node(&format!("worker={}", std::process::id() % 256)).unwrap();
    let g = Generator::with_clock(&hourly, worker, Options::default(), &clock).unwrap();
    // The hour's last millisecond is within the bound. (A fresh record may start at the next
    // tick, past what a removed copy could still issue, when the kernel's lock list shows a
    // beacon at its offset: then this hour's tick reads full, which is not the bound.)
    match g.next_id_at(start + 3_599_999) {
        Ok(_) | Err(Error::SequenceExhausted { .. }) => {}
        Err(e) => panic!("the hour's last millisecond: {e}"),
    }
    assert!(
        matches!(g.next_id_at(start + 3_600_000), Err(Error::AheadOfClock { max_unix_ms, .. }) if max_unix_ms == start + 3_599_999)
    );

    let lone = Generator::isolated(&layout, node(&layout, 9), Options::default(), &clock).unwrap();
    assert_eq!(layout.decode(lone.next_id_at(YEAR_2080_MS).unwrap()).unwrap().unix_ms, YEAR_2080_MS);
}

/// A time behind the state says that it is behind this identity's state, that replays and
/// backfills need an isolated generator with node values of their own, and why; it is still
/// a ClockBehind kind (with how far behind), never "retry in 6.5 days".
#[test]
fn a_time_behind_the_state_says_why_and_what_replays_need() {
    let layout = twitter();
    let now = SystemClock.now_ms() + 60_000;
    let clock = ManualClock::new(now);
    let g = Generator::with_clock(&layout, node(&layout, 10), Options::default(), &clock).unwrap();
    g.next_id_at(now).unwrap();
    let week_ago = now - 561_600_000; // 6.5 days
    let err = g.next_id_at(week_ago).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ClockBehind);
    assert!(
        matches!(err, Error::BehindState { unix_ms, behind_ms: 561_600_000, shared: true, .. } if unix_ms == week_ago)
    );
    let text = err.to_string();
    for says in [
        &format!("time {week_ago} (Unix ms) is 6 days behind this identity's state"),
        &format!("issued up to {now}"),
        "could repeat one of them",
        "replays and backfills need a generator with `isolated` set to true and node values of their own",
    ] {
        assert!(text.contains(says), "{says:?} not in {text}");
    }
    assert!(!text.contains("retry in"), "{text}");

    let lone = Generator::isolated(&layout, node(&layout, 10), Options::default(), &clock).unwrap();
    lone.next_id_at(now).unwrap();
    let text = lone.next_id_at(week_ago).unwrap_err().to_string();
    assert!(
        text.contains("behind this isolated generator's state") && text.contains("a new isolated generator"),
        "{text}"
    );

    // The live clock behind the state keeps its own message.
    let clock = ManualClock::new(now);
    let g =
        Generator::isolated(&layout, Default::default(), Options::parse("max_wait_ms=0").unwrap(), &clock)
            .unwrap();
    g.next_id().unwrap();
    clock.set(now - 5000);
    assert!(matches!(g.next_id(), Err(Error::ClockBehind { behind_ms: 5000, .. })));
}

/// Item 8: a fresh host record on a layout of coarse ticks issues at once, within the current
/// tick (it said "every sequence number of the current tick is taken; retry in 2668478 ms").
#[test]
fn a_fresh_record_of_coarse_ticks_issues_at_once() {
    let epoch = 1_600_000_000_000;
    for tick in ["60s", "3600s"] {
        let layout =
            Layout::parse(&format!("time:30,worker:10,sequence:12;epoch={epoch};tick={tick}")).unwrap();
        let node = layout.parse_node(&format!("worker={}", std::process::id() % 1024)).unwrap();
        let tick_of_clock = || (SystemClock.now_ms() - epoch) / layout.tick_ms();
        let before = tick_of_clock();
        let g = Generator::new(&layout, node, Options::parse("max_wait_ms=0").unwrap()).unwrap();
        let ids: Vec<u64> =
            (0..100).map(|_| g.next_id().unwrap_or_else(|e| panic!("tick={tick}: {e}"))).collect();
        let after = tick_of_clock();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "tick={tick}");
        let issued = layout.decode(ids[0]).unwrap().tick;
        assert!(
            (before..=after).contains(&issued),
            "tick={tick}: issued at tick {issued}, the clock's {before}..={after}"
        );
    }
}

/// Issue 39: a daily layout whose epoch is today. Its fresh record starts at tick 0 with
/// nothing issued, a state word of 0, which read as "truncated or overwritten while in use":
/// it could not issue at all.
#[test]
fn a_daily_layout_whose_epoch_is_today_issues() {
    let epoch = SystemClock.now_ms() - 1000;
    let layout = Layout::parse(&format!("time:20,worker:10,sequence:20;epoch={epoch};tick=86400s")).unwrap();
    let node = layout.parse_node(&format!("worker={}", std::process::id() % 1024)).unwrap();
    let g = Generator::new(&layout, node, Options::parse("max_wait_ms=0").unwrap()).unwrap();
    let ids: Vec<u64> = (0..10).map(|_| g.next_id().unwrap_or_else(|e| panic!("{e}"))).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(layout.decode(ids[0]).unwrap().tick, 0);
}

/// Issue 39: a generator of a daily layout that borrowed a tick ahead (`max_drift_ms` of a
/// day) waited, when freed, for the clock to pass it: about two days. The wait at the end is
/// bounded in time (`LAST_WAIT_MS`, 10 s), and past it the generator is freed at once.
#[test]
fn freeing_a_generator_a_day_ahead_returns() {
    let epoch = 1_600_000_000_000;
    let layout = Layout::parse(&format!("time:20,worker:10,sequence:2;epoch={epoch};tick=86400s")).unwrap();
    let node = layout.parse_node(&format!("worker={}", (std::process::id() + 1) % 1024)).unwrap();
    let g = Generator::new(&layout, node, Options::parse("max_wait_ms=0;max_drift_ms=86400000").unwrap())
        .unwrap();
    let now_tick = (SystemClock.now_ms() - epoch) / layout.tick_ms();
    // Four IDs a tick: the fifth and later are borrowed from tomorrow.
    let ids: Vec<u64> = (0..6).map(|_| g.next_id().unwrap_or_else(|e| panic!("{e}"))).collect();
    assert!(layout.decode(ids[5]).unwrap().tick > now_tick, "nothing was borrowed ahead");
    let (done, freed) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        drop(g);
        done.send(()).unwrap();
    });
    // The wait it replaces lasted two days; a minute stands for "never" on a loaded machine.
    assert!(freed.recv_timeout(std::time::Duration::from_secs(60)).is_ok(), "free waited for the clock");
}
