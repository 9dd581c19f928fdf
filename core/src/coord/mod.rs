//! Coordination: what a generator's state is shared with, layered above the generator (which
//! knows only a state cell and an optional high-water mark, see `crate::generator`).
//!
//! - In this process: [`registry`] refuses two generators of one identity (layout and node
//!   values) that would issue from two states, and keeps the state of generators with a
//!   clock of the caller's.
//! - On the host: [`arbiter`] keeps one record of each identity, which every way of issuing
//!   meets before it issues (the default, `shared=`, `process_only`, `state_file`, each lease
//!   under the value it holds, `rollover`): across processes and users it refuses exactly
//!   what the registry refuses in one process. `isolated` alone stays outside.
//! - Beyond the host: a state file (`state-file`) keeps a durable high-water mark; leases
//!   hand out worker values to a fleet, with one protocol ([`lease`]) over a store of each
//!   kind: Redis, Sentinel and Redis Cluster (`lease-redis`), PostgreSQL (`lease-postgres`),
//!   MySQL and MariaDB (`lease-mysql`), one file each.
//!
//! Every option comes from [`crate::Options`], whose table checks names, types and ranges;
//! this module only wires the backends.

use crate::clock::{Clock, DefaultClock, MonotonicClock};
use crate::error::{Error, Result};
use crate::generator::{Cell, Generator};
use crate::layout::{FieldKind, Layout, Node};
#[cfg(any(feature = "lease-local", feature = "lease-remote"))]
use crate::options::LeaseKind;
use crate::options::Options;
use crate::text::Name;
use std::path::Path;

mod admission;
mod arbiter;
mod hosted;
#[cfg(feature = "lease-remote")]
mod lease;
mod registry;
#[cfg(feature = "state-file")]
mod state_file;

pub use arbiter::{
    container_note, find_shared_state, remove_shared_state, shared_path, shared_states, shm_dir, SharedState,
};
pub use hosted::{HostMark, HostState};

fn bad(name: &str, reason: &'static str) -> Error {
    Error::BadOption { name: Name::snippet(name), reason }
}

/// An [`Error::Io`] about a file.
pub(crate) fn io_err(action: &'static str, target: &Path, source: std::io::Error) -> Error {
    Error::io(action, target.display(), source)
}

/// The index of the rollover field, if `options` name one of `layout`'s fields.
fn rollover_index(layout: &Layout, options: &Options) -> Option<usize> {
    options.rollover.and_then(|r| layout.field(r.as_str())).map(|(i, _)| i)
}

/// The node field a lease claims: `lease_field`, else `worker`, else the only node field.
fn lease_field(layout: &Layout, options: &Options) -> Result<usize> {
    let nodes: Vec<(usize, &crate::layout::Field)> = layout.node_fields().collect();
    let pick = match options.lease_field {
        Some(name) => {
            layout.field(name.as_str()).map(|(i, _)| i).ok_or_else(|| layout.unknown_field(name.as_str()))?
        }
        None => {
            match (layout.field("worker"), nodes.as_slice()) {
                (Some((i, _)), _) => i,
                (None, [(i, _)]) => *i,
                _ => return Err(bad(
                    "lease_field",
                    "the layout has no `worker` field and more than one node field: name the one to lease",
                )),
            }
        }
    };
    if layout.fields()[pick].kind() != FieldKind::Node {
        return Err(Error::NotANodeField { name: Name::snippet(layout.fields()[pick].name()) });
    }
    Ok(pick)
}

/// The node fields the generator sets itself under `options` (a bit per index: the leased
/// field, the rollover field), which node values must leave out. One rule for the code's node
/// values and `SNOWFLAKE_NODE` alike, so that both open, or neither.
pub(crate) fn set_by_generator(layout: &Layout, options: &Options) -> Result<u16> {
    let leased = match options.lease {
        Some(_) => 1 << lease_field(layout, options)?,
        None => 0,
    };
    Ok(leased | options.rollover_bit(layout))
}

impl Generator<DefaultClock> {
    /// A generator on the process's monotonic clock, working with other generators as
    /// `options` say:
    ///
    /// - by default, every generator of this host with the same layout and node values (in
    ///   this process and in every other process of this user) shares one state, and another
    ///   way of issuing with them, or another user's process, is refused while it lives;
    /// - `process_only`, `state_file`, `lease` and `rollover` choose another way (see the
    ///   option table, [`crate::OPTIONS`]); `isolated` gives a state of its own, for tests.
    ///
    /// ```
    /// use snowflake_core::{Generator, Layout, Options};
    /// let layout = Layout::parse("twitter").unwrap();
    /// let node = layout.parse_node("datacenter=1,worker=3").unwrap();
    /// let g = Generator::new(&layout, node, Options::parse("max_wait_ms=0").unwrap()).unwrap();
    /// assert!(g.next_id().unwrap() < g.next_id().unwrap());
    /// ```
    pub fn new(layout: &Layout, node: Node, options: Options) -> Result<Self> {
        options.check_combinations()?;
        layout.check_node_named(&node, set_by_generator(layout, &options)?)?;
        if options.isolated {
            return Generator::build(layout, node, options.policy(), DefaultClock::default());
        }
        open(layout, node, &options)
    }
}

impl<C: Clock> Generator<C> {
    /// A generator of this process reading `clock`, a clock of the caller's: its state is
    /// this process's (shared with every generator of this process with the same layout and
    /// node values and a clock of the caller's), and while it lives no other process of the
    /// host may issue with its layout and node values (it holds their record alone), unless
    /// `options.isolated`. Options that reach beyond the process (`shared`, `state_file`,
    /// `lease`, `process_only`) need the process's clock: use [`Generator::new`].
    pub fn with_clock(layout: &Layout, node: Node, options: Options, clock: C) -> Result<Self> {
        options.check_combinations()?;
        let beyond = options.shared.is_some()
            || options.state_file.is_some()
            || options.lease.is_some()
            || options.process_only;
        if beyond {
            return Err(bad(
                "clock",
                "a generator with its own clock keeps its state in this process: shared, state_file, lease and process_only need Generator::new",
            ));
        }
        layout.check_node_named(&node, options.rollover_bit(layout))?;
        let mut g = Generator::build(layout, node, options.policy(), clock)?;
        if options.isolated {
            return Ok(g);
        }
        let rollover = rollover_index(layout, &options);
        let member = registry::state_for(layout, &node, rollover, &options.policy())?;
        let guard = {
            let policy = options.policy();
            let req = arbiter::Request {
                layout,
                node: &rollover.map_or(node, |r| node.with(r, 0)),
                rollover,
                policy: &policy,
                state_file: None,
                host_lease: None,
                mode: arbiter::Mode::Guard,
                label: None,
                floor: 0,
                reserved: u64::MAX,
                word: g.word_format(),
                // A clock of the caller's may be anywhere: as far as a beacon tells.
                ahead_ms: u64::MAX,
            };
            let record = arbiter::Record::hold(&req).map_err(arbiter::Refused::error)?;
            g.word_format().raise_to(&member.state, record.issued_end(g.word_format()));
            Some(arbiter::Settle { record, state: member.state.clone(), word: g.word_format() })
        };
        g.assemble(Cell::new(std::sync::Arc::new((member, guard)), |(m, _)| &*m.state), None, false);
        Ok(g)
    }
}

fn open(layout: &Layout, node: Node, options: &Options) -> Result<Generator> {
    match &options.lease {
        #[cfg(feature = "lease-local")]
        Some(LeaseKind::Local) => open_local_lease(layout, node, options),
        #[cfg(feature = "lease-remote")]
        Some(kind @ LeaseKind::Store { .. }) => match &options.shared {
            Some(name) => open_host_lease(layout, node, options, name, kind),
            None => open_remote_lease(layout, node, options, kind),
        },
        // Parsing `lease=` refuses a lease whose feature is missing.
        #[allow(unreachable_patterns)]
        Some(_) => Err(bad("lease", "this build of snowflake-core has no backend for this lease")),
        None => open_record(layout, node, options),
    }
}

/// How many ticks a window of `ms` covers (at least one).
fn window_ticks(layout: &Layout, ms: u64) -> u64 {
    (ms / layout.tick_ms()).max(1)
}

/// The field a lease claims, which `node` must leave at 0.
fn leased_field(layout: &Layout, node: &Node, options: &Options) -> Result<usize> {
    let field = lease_field(layout, options)?;
    if node.get(field) != 0 {
        return Err(bad(
            layout.fields()[field].name(),
            "the leased field is claimed by the lease: give it no node value",
        ));
    }
    Ok(field)
}

/// Waits for a fresh record's first tick when it is near (rather than fail the first
/// calls); for a drift of up to 100 ms, until the clock reaches it, so that the first calls
/// have their whole drift to borrow. A far one (a removed copy's holders borrowed far ahead,
/// or a coarse tick) is left to the calls, whose `max_wait_ms` bounds it.
fn wait_ready(layout: &Layout, record: &arbiter::Record, max_drift_ms: u64) {
    let clock = record.clock();
    let ready_ms = record.ready_ms().saturating_add(max_drift_ms.min(100));
    let now_ms = clock.now_ms();
    let carry = (2 * layout.tick_ms()).min(2000);
    if ready_ms > now_ms && ready_ms - now_ms <= arbiter::RECHECK_MS + carry + 200 {
        clock.wait_until_ms(ready_ms);
    }
}

/// The default, `shared=`, `process_only`, a state file and `rollover`: the host's record of
/// the identity, whose state word every generator of it issues from.
fn open_record(layout: &Layout, node: Node, options: &Options) -> Result<Generator> {
    use std::sync::Arc;
    let policy = options.policy();
    let mut g = Generator::build_over(layout, node, policy, MonotonicClock::process(), Cell::closed())?;
    let rollover = rollover_index(layout, options);
    let identity = rollover.map_or(node, |r| node.with(r, 0));
    // Without the `shared` feature, a default generator holds its identity alone (safe,
    // without sharing its state).
    let alone = options.process_only || !cfg!(feature = "shared");
    // A state file: what it says, read before the record is held (its floor, and the
    // reservation of a record set up now).
    #[cfg(feature = "state-file")]
    let state_file = match options.state_file.as_deref() {
        Some(path) => {
            let location = state_file::Location::of(path)?;
            let floor = location.floor((layout.fingerprint(), layout.node_bits(&identity)))?;
            Some((location, floor))
        }
        None => None,
    };
    #[cfg(not(feature = "state-file"))]
    let state_file: Option<((), u64)> = None;
    #[cfg(feature = "state-file")]
    let canonical = state_file.as_ref().map(|(l, _)| l.path.clone());
    #[cfg(not(feature = "state-file"))]
    let canonical: Option<std::path::PathBuf> = None;
    let floor = state_file.as_ref().map_or(0, |(_, f)| *f);
    let held = registry::hold(
        layout,
        &node,
        rollover,
        if alone { registry::Use::Process } else { registry::Use::Host },
    )?;
    let req = arbiter::Request {
        layout,
        node: &identity,
        rollover,
        policy: &policy,
        state_file: canonical.as_deref(),
        host_lease: None,
        mode: if alone { arbiter::Mode::Alone } else { arbiter::Mode::Host },
        label: options.shared.as_deref(),
        floor,
        reserved: if state_file.is_some() { floor } else { u64::MAX },
        word: g.word_format(),
        ahead_ms: policy.max_drift_ms,
    };
    let record = arbiter::Record::hold(&req).map_err(arbiter::Refused::error)?;
    wait_ready(layout, &record, policy.max_drift_ms);
    #[allow(unused_mut)]
    let mut mark: Option<Arc<dyn crate::generator::HighWater>> = None;
    #[cfg(feature = "state-file")]
    if let Some((location, _)) = state_file {
        let (fingerprint, node_bits) = (layout.fingerprint(), layout.node_bits(&identity));
        let window = window_ticks(layout, options.state_window_ms.unwrap_or(1000));
        let durable = state_file::Durable::attach(
            &record,
            location,
            (fingerprint, node_bits),
            window,
            layout.max_tick(),
            policy.max_wait_ms,
            g.word_format(),
        );
        mark = Some(Arc::new(state_file::FileMark(durable)));
    }
    // Set in place: a generator made per request was moved at each step (1.6 KB then).
    g.set_clock(record.clock());
    g.set_validity(record.clone());
    if rollover.is_some() {
        g.set_high(Cell::new(record.clone(), |r| r.high()));
    }
    let cell = Cell::new(Arc::new((record, held)), |(r, _)| r.state());
    g.assemble(cell, mark, !alone);
    Ok(g)
}

/// `lease=local`: the lowest value of the leased field whose record this process can hold
/// alone, and that record's state word.
#[cfg(feature = "lease-local")]
fn open_local_lease(layout: &Layout, node: Node, options: &Options) -> Result<Generator> {
    use std::sync::Arc;
    let field = leased_field(layout, &node, options)?;
    let policy = options.policy();
    let mut g = Generator::build_over(layout, node, policy, MonotonicClock::process(), Cell::closed())?;
    let lease = arbiter::local::claim(layout, &node, field, &policy, g.word_format())?;
    let claimed = node.with(field, lease.value);
    let held = registry::hold(layout, &claimed, None, registry::Use::Lease { field, value: lease.value })?;
    let record = lease.record;
    wait_ready(layout, &record, policy.max_drift_ms);
    g.set_leased(claimed, field, false);
    g.set_clock(record.clock());
    g.set_validity(record.clone());
    let cell = Cell::new(Arc::new((record, held)), |(r, _)| r.state());
    g.assemble(cell, None, false);
    Ok(g)
}

/// A lease's settings from `options`.
#[cfg(feature = "lease-remote")]
fn lease_config(options: &Options) -> lease::Config {
    lease::Config {
        ttl_ms: options.lease_ttl_ms.unwrap_or(5000),
        window_ms: options.state_window_ms.unwrap_or(1000),
        max_wait_ms: options.max_wait_ms,
        max_clock_skew_ms: options.max_clock_skew_ms.unwrap_or(crate::options::DEFAULT_MAX_CLOCK_SKEW_MS),
    }
}

/// The store of a lease's address, for the identity of `field`.
#[cfg(feature = "lease-remote")]
fn open_store(
    kind: &LeaseKind,
    options: &Options,
    layout: &Layout,
    node: &Node,
    field: usize,
) -> Result<Box<dyn lease::Store>> {
    let LeaseKind::Store { scheme, url } = kind else {
        return Err(bad("lease", "a local lease has no store across hosts"));
    };
    let settings = lease::Settings {
        url,
        password_file: options.lease_password_file.as_deref(),
        tls_ca: options.lease_tls_ca.as_deref(),
        tls_cert: options.lease_tls_cert.as_deref(),
        tls_key: options.lease_tls_key.as_deref(),
    };
    let identity = lease::Lease::identity(layout, node, field);
    lease::open_store(scheme, &settings, identity, lease_config(options).ttl_ms)
}

/// A lease of one process in a store across hosts: a state of its own, raised to each
/// claim's floor, with a guard on the record of the value it holds.
#[cfg(feature = "lease-remote")]
fn open_remote_lease(layout: &Layout, node: Node, options: &Options, kind: &LeaseKind) -> Result<Generator> {
    let field = leased_field(layout, &node, options)?;
    let policy = options.policy();
    let clock = MonotonicClock::process();
    let mut g = Generator::build(layout, node, policy, clock)?;
    let state = std::sync::Arc::new(crate::generator::Line::default());
    // Claims, and waits until the claim may issue (see `lease`: at most
    // LEASE_MAX_WINDOW_MS + LEASE_MAX_DRIFT_MS + a tick on an empty store).
    let lease = lease::Lease::open(
        open_store(kind, options, layout, &node, field)?,
        &lease_config(options),
        layout,
        &node,
        field,
        Cell::new(state.clone(), |l| &l.0),
        g.word_format(),
        clock,
        None,
    )?;
    let claimed = node.with(field, lease.value());
    let held = registry::hold(layout, &claimed, None, registry::Use::Lease { field, value: lease.value() })?;
    let cell = Cell::new(std::sync::Arc::new((state, held)), |(l, _)| &l.0);
    g.set_leased(claimed, field, true);
    g.assemble(cell, Some(lease), false);
    Ok(g)
}

/// For `benches/lease.rs`, not part of the API: how long each of `n` renewals of a lease of
/// one process takes on the store that `options` name, each made as its renewal thread makes
/// it (beside that thread, which renews on its own schedule). The value is released after.
#[doc(hidden)]
#[cfg(feature = "lease-remote")]
pub fn lease_renewal_times(
    layout: &Layout,
    node: Node,
    options: &Options,
    n: usize,
) -> Result<Vec<std::time::Duration>> {
    let Some(kind @ LeaseKind::Store { .. }) = &options.lease else {
        return Err(bad(
            "lease",
            "renewals are timed on a store across hosts (redis://, postgres://, mysql://)",
        ));
    };
    let field = leased_field(layout, &node, options)?;
    let clock = MonotonicClock::process();
    let g = Generator::build(layout, node, options.policy(), clock)?;
    let state = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let lease = lease::Lease::open(
        open_store(kind, options, layout, &node, field)?,
        &lease_config(options),
        layout,
        &node,
        field,
        Cell::new(state, |w| w),
        g.word_format(),
        clock,
        None,
    )?;
    Ok(lease.time_renewals(n))
}

/// A host lease (`lease=` a store with `shared=`): the host's processes share one state and
/// one leased value (see `lease`), each holding the value's record with the others.
#[cfg(feature = "lease-remote")]
fn open_host_lease(
    layout: &Layout,
    node: Node,
    options: &Options,
    name: &str,
    kind: &LeaseKind,
) -> Result<Generator> {
    let field = leased_field(layout, &node, options)?;
    let policy = options.policy();
    let mut g = Generator::build(layout, node, policy, MonotonicClock::process())?;
    let req = arbiter::Request {
        layout,
        node: &node,
        rollover: None,
        policy: &policy,
        state_file: None,
        host_lease: Some(field),
        mode: arbiter::Mode::HostLease,
        label: Some(name),
        floor: 0,
        reserved: u64::MAX,
        word: g.word_format(),
        ahead_ms: policy.max_drift_ms.max(crate::LEASE_MAX_WINDOW_MS + crate::LEASE_MAX_DRIFT_MS),
    };
    let record = arbiter::Record::hold(&req).map_err(arbiter::Refused::error)?;
    wait_ready(layout, &record, policy.max_drift_ms);
    let clock = record.clock();
    let host = lease::Host::join(record.clone(), policy.max_wait_ms)?;
    let lease = lease::Lease::open(
        open_store(kind, options, layout, &node, field)?,
        &lease_config(options),
        layout,
        &node,
        field,
        Cell::new(record.clone(), |r| r.state()),
        g.word_format(),
        clock,
        Some(host),
    )?;
    let claimed = node.with(field, lease.value());
    let held = registry::hold(layout, &claimed, None, registry::Use::Lease { field, value: lease.value() })?;
    g.set_clock(clock);
    g.set_validity(record.clone());
    let cell = Cell::new(std::sync::Arc::new((record, held)), |(r, _)| r.state());
    g.set_leased(claimed, field, true);
    g.assemble(cell, Some(lease), false);
    Ok(g)
}
