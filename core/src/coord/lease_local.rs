//! Worker-id leases on one host: each process claims a distinct value of a node field (the
//! worker id) by locking a file in a directory; the kernel releases the lock when the process
//! dies, however it dies.
//!
//! Directory: `lease_dir=`, else `$SNOWFLAKE_LEASE_DIR`, else `<tmp>/libsnowflake-leases`; in it
//! one subdirectory per layout and set of other node values, and one file per value. A holder
//! keeps a reservation of time in its lease file (the same record as a state file, written
//! in place every `lease_window` of ticks), so the next holder of a value never issues at or
//! below what the previous holder could have issued, even if it died a microsecond ago.

use super::io_err;
use super::mark::Durable;
use crate::error::Error;
use crate::layout::{Layout, Node};
use crate::sys::{ForkGate, HeldLock, InChild};
use std::fs::{DirBuilder, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The default lease directory.
pub fn default_lease_dir() -> PathBuf {
    std::env::var_os("SNOWFLAKE_LEASE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("libsnowflake-leases"))
}

/// A claimed value: its field, the value, and the reservation kept in its file.
pub(crate) struct LocalLease {
    pub field: usize,
    pub value: u64,
    pub durable: Durable,
}

/// Claims the first free value of `field` (index into `layout.fields()`).
pub(crate) fn claim(
    dir: &Path,
    layout: &Layout,
    node: &Node,
    field: usize,
    window_ticks: u64,
) -> Result<LocalLease, Error> {
    let others = layout.node_bits(&node.with(field, 0));
    let sub =
        dir.join(format!("{:016x}-{:016x}-{}", layout.fingerprint(), others, layout.fields()[field].name()));
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&sub)
        .map_err(|e| io_err("creating the lease directory", &sub, e))?;
    let max = layout.fields()[field].max();
    for value in 0..=max {
        let identity = node.with(field, value);
        let path = sub.join(format!("{value}.lease"));
        // The file is opened and locked inside the fork gate: a child never inherits the
        // descriptor between the two, and with it the lock.
        let _gate = ForkGate::enter();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_CLOEXEC)
            .open(&path)
            .map_err(|e| io_err("opening the lease file", &path, e))?;
        let lock = match HeldLock::try_take(file, true, InChild::Dropped)
            .map_err(|e| io_err("locking the lease file", &path, e))?
        {
            Some(lock) => lock,
            None => continue,
        };
        let node_bits = layout.node_bits(&identity);
        let durable =
            Durable::held(lock, &path, layout.fingerprint(), node_bits, window_ticks, layout.max_tick())?;
        return Ok(LocalLease { field, value, durable });
    }
    Err(Error::lease_unavailable(format_args!(
        "all {} values of `{}` are held by live processes (lease files in {})",
        max + 1,
        layout.fields()[field].name(),
        sub.display()
    )))
}
