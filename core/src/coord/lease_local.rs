//! Worker-id leases on one host: each process claims a distinct value of a node field (the
//! worker id) by locking a file in a directory; the kernel releases the lock when the process
//! dies, however it dies.
//!
//! Directory: `lease_dir=`, else `$SNOWFLAKE_LEASE_DIR`, else `<tmp>/libsnowflake-leases`; in it
//! one subdirectory per layout (its fingerprint in hex), and in that one file per identity
//! held: `<v1>-<v2>-….lease`, the values of every node field in the layout's order, the
//! leased one included. A lease is the lock on the file of the whole identity it hands out,
//! not on a value of one field: processes that lease different fields of one layout (one
//! `lease_field=worker` with `datacenter=1`, another `lease_field=datacenter` with
//! `worker=0`) can never hold the same identity. A holder keeps a reservation of time in its
//! lease file (the same record as a state file, written in place every `lease_window` of
//! ticks), so the next holder of an identity never issues at or below what the previous
//! holder could have issued, even if it died a microsecond ago, whichever field it leased.

use super::io_err;
use super::mark::Durable;
use crate::error::Error;
use crate::layout::{Layout, Node};
use crate::sys::{ForkGate, HeldLock, InChild};
use std::fs::DirBuilder;
use std::os::unix::fs::DirBuilderExt;
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
    let sub = dir.join(format!("{:016x}", layout.fingerprint()));
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&sub)
        .map_err(|e| io_err("creating the lease directory", &sub, e))?;
    let max = layout.fields()[field].max();
    for value in 0..=max {
        let identity = node.with(field, value);
        let name: Vec<String> = layout.node_values(&identity).map(|(_, v)| v.to_string()).collect();
        let path = sub.join(format!("{}.lease", name.join("-")));
        // The file is opened and locked inside the fork gate: a child never inherits the
        // descriptor between the two, and with it the lock.
        let _gate = ForkGate::enter();
        let file =
            crate::sys::open_private(&path, 0).map_err(|e| io_err("opening the lease file", &path, e))?;
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
    let others: Vec<String> = layout
        .node_values(node)
        .filter(|(name, _)| *name != layout.fields()[field].name())
        .map(|(name, v)| format!("{name}={v}"))
        .collect();
    Err(Error::lease_unavailable(format_args!(
        "all {} values of `{}`{} are held by live processes (lease files in {})",
        max + 1,
        layout.fields()[field].name(),
        if others.is_empty() { String::new() } else { format!(" with {}", others.join(",")) },
        sub.display()
    )))
}
