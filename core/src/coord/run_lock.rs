//! The run lock (`run_lock=true`): processes of this host with the same layout and node
//! values take turns instead of sharing a state.
//!
//! Each process that opens a generator with it waits for an exclusive `flock(2)` on a file
//! named after the layout's fingerprint and the node values, and holds it until its last
//! generator of that identity is dropped; the drop first waits until the wall clock has left
//! the tick of the last ID issued, so the next holder (a new process with a new state)
//! starts in a later tick. The kernel drops the lock when the process dies, so a crashed
//! holder never leaves it held. This is how the CLI's `snowflake next` keeps two runs with the
//! same node values apart without asking anything of the user: a shared state would record
//! the generator's policy, and a run with another `--max-drift-ms` would then be refused.
//!
//! The wait is a poll (try the lock, sleep, try again), outside the fork gate: a fork in
//! another thread never waits for a whole run of another process, and a child never inherits
//! a half-taken lock. A state file opened with the run lock is taken after it, and let go
//! before it (the generator drops its high-water mark first), so the next run finds the file
//! free and its last record written.

use crate::clock::{Clock, MonotonicClock, SystemClock};
use crate::generator::Word;
use crate::layout::{Layout, Node};
use crate::sys::{ForkGate, HeldLock, InChild};
use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A held run lock, with the state it guards.
pub(crate) struct RunLock {
    lock: HeldLock,
    pub(crate) state: Arc<AtomicU64>,
    word: Word,
    layout: Layout,
    /// How long the drop may wait for the clock: the generator is never further ahead of it
    /// than its drift and a tick, unless the wall clock was stepped back while it ran.
    patience_ms: u64,
    fork_generation: u64,
}

fn path(layout: &Layout, node: &Node) -> PathBuf {
    let mut name = format!("{:016x}", layout.fingerprint());
    for (_, value) in layout.node_values(node) {
        name.push_str(&format!("-{value}"));
    }
    std::env::temp_dir().join(format!("snowflake-{}", crate::sys::euid())).join(format!("{name}.lock"))
}

/// The run locks this process holds: one per identity, shared by its generators (a second
/// `flock` on the same file from this process would wait for the first forever). Locked only
/// inside the fork gate.
static HELD: std::sync::Mutex<Vec<(PathBuf, std::sync::Weak<RunLock>)>> = std::sync::Mutex::new(Vec::new());

impl RunLock {
    /// The run lock of `layout` and `node` for this process: the one it holds, or a new one
    /// taken after waiting for other processes to release it.
    pub(crate) fn hold(
        layout: &Layout,
        node: &Node,
        state: Arc<AtomicU64>,
        word: Word,
        max_drift_ms: u64,
    ) -> Result<Arc<RunLock>, crate::error::Error> {
        let mut pause = Duration::from_millis(1);
        loop {
            if let Some((lock, start_ms)) = RunLock::try_hold(layout, node, &state, word, max_drift_ms)? {
                // Start within this generator's drift of its own clock, so that its first ID
                // does not wait (or fail with `max_wait_ms=0`) because its clock lags the last
                // holder's. Outside the fork gate: a wait for the clock.
                if let Some(start_ms) = start_ms {
                    let clock = MonotonicClock::process();
                    if start_ms <= clock.now_ms().saturating_add(3 * layout.tick_ms()) {
                        clock.wait_until_ms(start_ms);
                    }
                }
                return Ok(lock);
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }

    /// One try: the lock this process holds, or the lock taken now (with the time its state
    /// may start issuing at), or `None` while another process (or a generator of this
    /// process being dropped) holds it.
    #[allow(clippy::type_complexity)]
    fn try_hold(
        layout: &Layout,
        node: &Node,
        state: &Arc<AtomicU64>,
        word: Word,
        max_drift_ms: u64,
    ) -> Result<Option<(Arc<RunLock>, Option<u64>)>, crate::error::Error> {
        use std::os::unix::fs::DirBuilderExt;
        let _gate = ForkGate::enter();
        let path = path(layout, node);
        let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
        held.retain(|(_, w)| w.strong_count() > 0);
        if let Some(lock) = held.iter().find(|(p, _)| *p == path).and_then(|(_, w)| w.upgrade()) {
            return Ok(Some((lock, None)));
        }
        let fail = |e: std::io::Error| super::io_err("locking", &path, e);
        if let Some(dir) = path.parent() {
            std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(fail)?;
        }
        let file = crate::sys::open_private(&path, 0).map_err(fail)?;
        let Some(lock) = HeldLock::try_take(file, true, InChild::Dropped).map_err(fail)? else {
            return Ok(None);
        };
        let drift_ticks = max_drift_ms.div_ceil(layout.tick_ms());
        let floor = match read_record(lock.file()) {
            Record::Never => 0,
            Record::Released(end) => end,
            Record::Held => tick_now(layout).saturating_add(2).saturating_add(drift_ticks),
        };
        word.raise_to(state, floor);
        write_record(lock.file(), HOLDING).map_err(fail)?;
        let start_ms = layout.unix_ms_of(floor.saturating_sub(drift_ticks).min(layout.max_tick()));
        let lock = Arc::new(RunLock {
            lock,
            state: state.clone(),
            word,
            layout: *layout,
            patience_ms: max_drift_ms.saturating_add(layout.tick_ms()).saturating_add(1000),
            fork_generation: crate::sys::fork_generation(),
        });
        held.push((path, Arc::downgrade(&lock)));
        Ok(Some((lock, Some(start_ms))))
    }
}

/// What the lock file says of the last holder: its first 8 bytes, little-endian.
enum Record {
    /// Nobody held it yet (an empty file).
    Never,
    /// The last holder let go cleanly, with nothing issued at or after this tick.
    Released(u64),
    /// The last holder died holding it (or its layout has a rollover field, whose state has
    /// no single end): where it stopped is unknown.
    Held,
}

const HOLDING: u64 = u64::MAX;

fn read_record(file: &File) -> Record {
    use std::os::unix::fs::FileExt;
    let mut buf = [0u8; 8];
    match file.read_exact_at(&mut buf, 0) {
        Ok(()) => match u64::from_le_bytes(buf) {
            HOLDING => Record::Held,
            end => Record::Released(end),
        },
        Err(e)
            if e.kind() == std::io::ErrorKind::UnexpectedEof
                && file.metadata().is_ok_and(|m| m.len() == 0) =>
        {
            Record::Never
        }
        Err(_) => Record::Held,
    }
}

fn write_record(file: &File, value: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.write_all_at(&value.to_le_bytes(), 0)
}

/// The wall clock's tick now (the layout's ends outside its range).
fn tick_now(layout: &Layout) -> u64 {
    let now = SystemClock.now_ms();
    layout.tick_of(now).unwrap_or(if now < layout.epoch_ms() { 0 } else { layout.max_tick() })
}

impl Drop for RunLock {
    fn drop(&mut self) {
        // A child of fork() holds a copy of the parent's run lock, not the lock: leave it.
        if self.fork_generation != crate::sys::current_fork_generation() {
            return;
        }
        let Some(end) = self.word.issued_end(self.state.load(Ordering::Acquire)) else { return };
        let after_ms = self.layout.unix_ms_of(end.min(self.layout.max_tick()));
        let clock = SystemClock;
        if after_ms <= clock.now_ms().saturating_add(self.patience_ms) {
            clock.wait_until_ms(after_ms);
        }
        // The next holder starts exactly here: a record it can trust more than its clock,
        // which may lag this one's. (Unwritten, it finds HOLDING and starts past the clock.)
        let _ = write_record(self.lock.file(), end);
        // Dropping `lock` (after this) releases the lock.
    }
}
