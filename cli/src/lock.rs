//! One `snowflake next` at a time per layout and node values on this host.
//!
//! Each run is a new process with a new generator state: two runs at the same time with the
//! same node values would issue the same IDs. `next` holds an exclusive `flock(2)` on a file
//! named after the layout's fingerprint and the node values from before its first ID until
//! it has waited out its last tick, so such runs take turns instead (runs on other hosts
//! still need node values of their own). The kernel drops the lock when the process dies,
//! so a crashed run never leaves it held.
//!
//! Core's own answers (`--options shared=NAME`, `lease=local`) replace the lock when given.
//! It is not the default because a shared state records the generator's policy, and a run
//! with another `--max-drift-ms` than the last would then be refused: the lock asks nothing
//! of the user.

use snowflake_core::{Layout, Node};
use std::fs::File;
use std::path::PathBuf;

/// Held until dropped (or the process ends).
pub struct RunLock {
    _file: File,
}

fn path(layout: &Layout, node: &Node) -> PathBuf {
    let mut name = format!("{:016x}", layout.fingerprint());
    for (_, value) in layout.node_values(node) {
        name.push_str(&format!("-{value}"));
    }
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    std::env::temp_dir().join(format!("snowflake-{uid}")).join(format!("{name}.lock"))
}

/// Waits for and takes the lock of `layout` and `node`.
pub fn acquire(layout: &Layout, node: &Node) -> Result<RunLock, String> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    use std::os::unix::io::AsRawFd;
    let path = path(layout, node);
    let fail = |e: std::io::Error| format!("cannot lock {}: {e}", path.display());
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(fail)?;
    }
    let file =
        File::options().create(true).truncate(false).write(true).mode(0o600).open(&path).map_err(fail)?;
    loop {
        // SAFETY: a valid open descriptor, owned by `file` for as long as the lock is held.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
            return Ok(RunLock { _file: file });
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(fail(e));
        }
    }
}
