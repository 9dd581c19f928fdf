//! The in-process registry of generator states.
//!
//! Two generators with the same layout and node values draw from one state word, so that
//! "a new generator per request" cannot repeat an ID. The registry keeps states for the life
//! of the process: a state dropped and made anew could repeat IDs if the clock had gone back
//! in between.
//!
//! Generators that share a state must agree on how it moves: one that may run ahead of the
//! clock (`max_drift_ms`) would make one that may not see the clock behind, and fail, at
//! every call; the sequence start and the rollover field change what the word means. So
//! while a generator of an identity lives, another with a different policy is refused with
//! an error that names the difference (a generator made after all of them are gone may
//! choose anew: the state only holds the next free slot).
//!
//! A child of `fork()` gets a copy of the parent's memory, generators included; issuing from
//! the copy would repeat the parent's IDs, so a generator made in another fork generation
//! refuses to issue (see `crate::sys`). Making the same identity anew in the child is refused
//! too: the parent (or a sibling) may still issue from it, and a fresh state would repeat
//! their IDs (a prefork server whose master made a generator with `worker=1` must give each
//! worker its own value, or use a shared state). The registry is only locked inside the fork
//! gate (`crate::sys::ForkGate`), so a child never inherits its lock held.

use crate::error::{Error, Result};
use crate::layout::{Layout, Node};
use crate::options::{Policy, SequenceStart};
use crate::sys::ForkGate;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, Once, Weak};

/// What generators sharing a state must agree on (the rollover field is kept by the entry:
/// it changes the state word's format, so it is fixed for the life of the process).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Terms {
    max_drift_ms: u64,
    sequence_start: SequenceStart,
}

/// The generators of an identity that live now, and the terms they agreed on: each holds an
/// `Arc` of it (through its state cell), the registry a `Weak`.
pub(crate) struct Member {
    pub(crate) state: Arc<AtomicU64>,
    terms: Terms,
    _held: Arc<Held>,
}

struct Entry {
    layout: Layout,
    node: Node,
    rollover: Option<usize>,
    /// Made by an ancestor before a fork(): the ancestor, or a sibling forked from it, may
    /// still issue from this identity, so this process must not make it anew.
    inherited: bool,
    state: Arc<AtomicU64>,
    members: Weak<Member>,
}

static REGISTRY: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
static ATFORK: Once = Once::new();

extern "C" fn none() {}

extern "C" fn child() {
    // No thread was inside the fork gate at the fork, so the lock is free.
    if let Ok(mut entries) = REGISTRY.try_lock() {
        for e in entries.iter_mut() {
            e.inherited = true;
        }
    }
}

/// The state shared by every generator of this process with `layout` and `node` (the
/// rollover field's value aside), as a [`Member`] that the generator keeps while it lives.
///
/// Refused: in a child of `fork()`, an identity that an ancestor made
/// ([`Error::ForkedIdentity`]); an identity that another live generator uses with other
/// terms ([`Error::SharedMismatch`], naming the difference), or with another rollover field
/// ([`Error::Conflict`]).
pub(crate) fn state_for(
    layout: &Layout,
    node: &Node,
    rollover: Option<usize>,
    policy: &Policy,
) -> Result<Arc<Member>> {
    let _gate = ForkGate::enter();
    ATFORK.call_once(|| crate::sys::at_fork(none, none, child));
    let terms = Terms { max_drift_ms: policy.max_drift_ms, sequence_start: policy.sequence_start };
    let mut entries = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    let same = |e: &Entry| {
        e.layout == *layout
            && layout
                .node_fields()
                .all(|(i, _)| Some(i) == rollover || Some(i) == e.rollover || e.node.get(i) == node.get(i))
    };
    let entry = match entries.iter_mut().find(|e| same(e)) {
        Some(e) if e.inherited => return Err(Error::ForkedIdentity),
        Some(e) if e.rollover != rollover => return Err(Error::Conflict),
        Some(e) => e,
        None => {
            entries.push(Entry {
                layout: *layout,
                node: *node,
                rollover,
                inherited: false,
                state: Arc::new(AtomicU64::new(0)),
                members: Weak::new(),
            });
            entries.last_mut().expect("just pushed")
        }
    };
    if let Some(members) = entry.members.upgrade() {
        return match differ(layout, &members.terms, &terms) {
            None => Ok(members),
            Some(e) => Err(e),
        };
    }
    let held = hold(layout, node, rollover, Use::Process)?;
    let members = Arc::new(Member { state: entry.state.clone(), terms, _held: held });
    entry.members = Arc::downgrade(&members);
    Ok(members)
}

/// How a generator of this process uses its identity (layout and node values): mixing two
/// ways in one process would issue the same IDs from two states, so it is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Use {
    /// The process's own use (`process_only`, a clock of its own).
    Process,
    /// The host's shared state of the identity (the default).
    Host,
    /// A lease's value of `field`: the identity is the one with the claimed value.
    Lease { field: usize, value: u64 },
}

/// A [`Use`] of an identity, held by a generator for as long as it lives.
pub(crate) struct Held(());

struct Holder {
    layout: Layout,
    node: Node,
    rollover: Option<usize>,
    how: Use,
    alive: Weak<Held>,
}

static HOLDERS: Mutex<Vec<Holder>> = Mutex::new(Vec::new());

/// Records that a generator uses `layout` and `node` as `how`, refusing when a live generator
/// of this process uses them another way ([`Error::SharedMismatch`], naming it), or with
/// another rollover field ([`Error::Conflict`]: the rollover field's values would meet).
pub(crate) fn hold(layout: &Layout, node: &Node, rollover: Option<usize>, how: Use) -> Result<Arc<Held>> {
    let _gate = ForkGate::enter();
    let mut holders = HOLDERS.lock().unwrap_or_else(|e| e.into_inner());
    holders.retain(|h| h.alive.strong_count() > 0);
    let field = |i: usize| layout.fields().get(i).map_or("?", |f| f.name());
    let same = |h: &Holder| {
        h.layout == *layout
            && layout
                .node_fields()
                .all(|(i, _)| Some(i) == rollover || Some(i) == h.rollover || h.node.get(i) == node.get(i))
    };
    if holders.iter().any(|h| same(h) && h.rollover != rollover) {
        return Err(Error::Conflict);
    }
    if let Some(other) = holders.iter().find(|h| same(h) && h.how != how) {
        let detail = match (other.how, how) {
            (Use::Lease { field: f, value }, _) => format!(
                "a generator of this process holds a lease of {}={value}, and this one was given {}={value} with the same layout and other node values: a leased value is its lease's alone; give this generator other node values, or a lease too",
                field(f),
                field(f)
            ),
            (_, Use::Lease { field: f, value }) => format!(
                "this lease claimed {}={value}, which another generator of this process was given with the same layout and other node values: give that generator other node values, or a lease too",
                field(f)
            ),
            (Use::Process, _) => "another generator of this process with the same layout and node values has process_only=true (or its own clock), so it issues alone, and this one would share the host's state: give both process_only=true, or neither".to_string(),
            (Use::Host, _) => "another generator of this process with the same layout and node values uses the host's shared state, and this one would issue alone (process_only=true, or its own clock): give both the same coordination, or other node values".to_string(),
        };
        let what = match (other.how, how) {
            (Use::Lease { .. }, _) | (_, Use::Lease { .. }) => "lease",
            _ => "process_only",
        };
        return Err(Error::shared_mismatch(what, detail));
    }
    // Another live generator's use, the same in every way: shared (a generator made per
    // request beside a long-lived one would add a holder each time).
    let twin = |h: &Holder| h.how == how && h.rollover == rollover && h.node == *node && h.layout == *layout;
    if let Some(held) = holders.iter().filter(|h| twin(h)).find_map(|h| h.alive.upgrade()) {
        return Ok(held);
    }
    let held = Arc::new(Held(()));
    holders.push(Holder { layout: *layout, node: *node, rollover, how, alive: Arc::downgrade(&held) });
    Ok(held)
}

/// The error for a generator with terms `mine` beside live ones with `theirs`: the host's
/// record's rule and words (`super::admission`), for the terms a state of this process keeps.
fn differ(layout: &Layout, theirs: &Terms, mine: &Terms) -> Option<Error> {
    let words = |t: &Terms| super::admission::terms(None, t.max_drift_ms, t.sequence_start, 0, None);
    let (what, detail) = super::admission::differ(&words(theirs), &words(mine), layout, None)?;
    Some(super::admission::mismatch(what, &detail, "another generator of this process"))
}
