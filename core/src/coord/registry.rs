//! The in-process registry of generator states.
//!
//! Two generators with the same layout and node values draw from one state word, so that
//! "a new generator per request" cannot repeat an ID. The registry keeps states for the life
//! of the process: a state dropped and made anew could repeat IDs if the clock had gone back
//! in between.
//!
//! A child of `fork()` gets a copy of the parent's memory, generators included; issuing from
//! the copy would repeat the parent's IDs, so a generator made in another fork generation
//! refuses to issue (see `crate::sys`). Making the same identity anew in the child is refused
//! too: the parent (or a sibling) may still issue from
//! it, and a fresh state would repeat their IDs (a prefork server whose master made a
//! generator with `worker=1` must give each worker its own value, or use a shared state). The registry's lock is taken around `fork()` (prepare/parent/
//! child handlers) so that a child never inherits it held.

use crate::error::{Error, Result};
use crate::layout::{Layout, Node};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Once};

struct Entry {
    layout: Layout,
    node: Node,
    rollover: Option<usize>,
    /// Made by an ancestor before a fork(): the ancestor, or a sibling forked from it, may
    /// still issue from this identity, so this process must not make it anew.
    inherited: bool,
    cell: Arc<AtomicU64>,
}

/// A spin lock, because the atfork handlers must take it in one function and release it in
/// another; it guards a few pointer-sized operations.
struct Registry {
    locked: AtomicBool,
    entries: UnsafeCell<Vec<Entry>>,
}

// SAFETY: `entries` is only touched while `locked` is held.
unsafe impl Sync for Registry {}

static REGISTRY: Registry = Registry { locked: AtomicBool::new(false), entries: UnsafeCell::new(Vec::new()) };
static ATFORK: Once = Once::new();

impl Registry {
    fn lock(&self) {
        while self.locked.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
            std::hint::spin_loop();
        }
    }
    fn unlock(&self) {
        self.locked.store(false, Ordering::Release);
    }
}

#[cfg(unix)]
extern "C" fn prepare() {
    REGISTRY.lock();
}
#[cfg(unix)]
extern "C" fn parent() {
    REGISTRY.unlock();
}
#[cfg(unix)]
extern "C" fn child() {
    // SAFETY: the lock is held (taken in `prepare`) and this is the only thread of the child.
    for e in unsafe { &mut *REGISTRY.entries.get() } {
        e.inherited = true;
    }
    REGISTRY.unlock();
}

fn install_atfork() {
    #[cfg(unix)]
    ATFORK.call_once(|| crate::sys::at_fork(prepare, parent, child));
}

/// The state shared by every generator of this process with `layout` and `node` (the
/// rollover field's value aside).
///
/// In a child of `fork()`, an identity that an ancestor made is refused
/// ([`Error::ForkedIdentity`]): the ancestor, or a sibling forked from it, may still issue
/// from it, and a fresh state here would repeat their IDs.
pub(crate) fn state_for(layout: &Layout, node: &Node, rollover: Option<usize>) -> Result<Arc<AtomicU64>> {
    install_atfork();
    REGISTRY.lock();
    // SAFETY: the lock is held until `unlock` below.
    let entries = unsafe { &mut *REGISTRY.entries.get() };
    let same = |e: &Entry| {
        e.layout == *layout
            && layout
                .node_fields()
                .all(|(i, _)| Some(i) == rollover || Some(i) == e.rollover || e.node.get(i) == node.get(i))
    };
    let result = match entries.iter().find(|e| same(e)) {
        Some(e) if e.inherited => Err(Error::ForkedIdentity),
        Some(e) if e.rollover == rollover => Ok(e.cell.clone()),
        Some(_) => Err(Error::Conflict),
        None => {
            let cell = Arc::new(AtomicU64::new(0));
            entries.push(Entry {
                layout: *layout,
                node: *node,
                rollover,
                inherited: false,
                cell: cell.clone(),
            });
            Ok(cell)
        }
    };
    REGISTRY.unlock();
    result
}
