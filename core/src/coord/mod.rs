//! Coordination: what a generator's state is shared with, layered above the generator (which
//! knows only a state cell and an optional high-water mark, see `crate::generator`).
//!
//! - In this process: [`registry`] gives every generator with the same layout and node values
//!   one state, so "a new generator per request" cannot repeat an ID.
//!
//! Beyond one process (DESIGN §5), each behind a cargo feature:
//!
//! - `shared=<name>` (`shared`): every process of the host that opens the name draws from one
//!   state in shared memory (see [`crate::shm_dir`]). No repeat, and IDs increase across
//!   processes.
//! - `state_file=<path>` (`state-file`): a durable high-water mark; a restart after the clock
//!   stepped back never repeats an ID.
//! - `lease=local` (`lease-local`): each process claims a distinct value of the worker field
//!   (`lease_field=`) with file locks in a directory (`lease_dir=`); `lease=redis://…`
//!   (`lease-redis`) does the same across hosts with keys in Redis (`lease_ttl_ms=`), and
//!   claims again when its lease lapsed.
//! - `run_lock=true`: processes with the same identity take turns (see `run_lock`).
//!
//! Every option comes from [`crate::Options`], whose table checks names, types and ranges;
//! this module only wires the backends.

use crate::clock::{Clock, DefaultClock, MonotonicClock};
use crate::error::{Error, Result};
use crate::generator::{Cell, Generator};
use crate::layout::{FieldKind, Layout, Node};
use crate::options::{LeaseKind, Options};
use crate::text::Name;
use std::path::Path;

#[cfg(all(unix, feature = "lease-local"))]
mod lease_local;
#[cfg(all(unix, feature = "lease-redis"))]
mod lease_redis;
#[cfg(all(unix, any(feature = "state-file", feature = "lease-local")))]
mod mark;
#[cfg(all(unix, feature = "lease-redis"))]
mod redis_conn;
mod registry;
#[cfg(unix)]
mod run_lock;
#[cfg(all(unix, feature = "shared"))]
mod shared;

#[cfg(all(unix, feature = "lease-local"))]
pub use lease_local::default_lease_dir;
#[cfg(all(unix, feature = "shared"))]
pub use shared::{find_shared_state, remove_shared_state, shared_path, shared_states, shm_dir, SharedState};

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
    let pick =
        match options.lease_field {
            Some(name) => layout.field(name.as_str()).map(|(i, _)| i).ok_or(Error::UnknownField { name })?,
            None => match (layout.field("worker"), nodes.as_slice()) {
                (Some((i, _)), _) => i,
                (None, [(i, _)]) => *i,
                _ => return Err(bad(
                    "lease_field",
                    "the layout has no `worker` field and more than one node field: name the one to lease",
                )),
            },
        };
    if layout.fields()[pick].kind() != FieldKind::Node {
        return Err(Error::NotANodeField { name: Name::snippet(layout.fields()[pick].name()) });
    }
    Ok(pick)
}

/// Whether `options` ask for nothing beyond this process.
fn in_process_only(options: &Options) -> bool {
    options.shared.is_none() && options.state_file.is_none() && options.lease.is_none() && !options.run_lock
}

/// Whether a generator with `options` uses the host's shared state of its identity: the
/// default, unless it keeps a state of its own (`isolated`, `process_only`), holds a lease
/// (a value of its own; with `shared=`, a host lease) or takes turns (`run_lock`).
#[cfg(feature = "shared")]
fn uses_host_state(options: &Options) -> bool {
    !options.isolated && !options.process_only && options.lease.is_none() && !options.run_lock
}

impl Generator<DefaultClock> {
    /// A generator on the process's monotonic clock, working with other generators as
    /// `options` say:
    ///
    /// - by default, every generator of this process with the same layout and node values
    ///   shares one state, so making "a new generator per request" cannot repeat an ID
    ///   (`isolated` gives it a state of its own, for tests);
    /// - `shared`, `state_file`, `lease` and `run_lock` reach beyond the process (see the
    ///   option table, [`crate::OPTIONS`]).
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
        let leased = match options.lease {
            Some(_) => 1 << lease_field(layout, &options)?,
            None => 0,
        };
        layout.check_node_named(&node, leased | options.rollover_bit(layout))?;
        #[cfg(all(unix, feature = "shared"))]
        if uses_host_state(&options) {
            return open_shared(layout, node, &options);
        }
        // No host state on this system yet: a state of this process's own would let two
        // processes of one identity repeat each other's IDs, so the default is refused, never
        // quietly narrowed to the process.
        #[cfg(all(not(unix), feature = "shared"))]
        if uses_host_state(&options) {
            return Err(bad("process_only", NO_HOST_STATE));
        }
        if in_process_only(&options) {
            return Generator::with_clock(layout, node, options, DefaultClock::default());
        }
        open(layout, node, &options)
    }
}

impl<C: Clock> Generator<C> {
    /// A generator of this process reading `clock` (the state is shared with every generator
    /// of this process with the same layout and node values, unless `options.isolated`).
    /// Options that reach beyond the process (`shared`, `state_file`, `lease`, `run_lock`) need
    /// the process's clock: use [`Generator::new`].
    pub fn with_clock(layout: &Layout, node: Node, options: Options, clock: C) -> Result<Self> {
        options.check_combinations()?;
        if !in_process_only(&options) {
            return Err(bad(
                "clock",
                "a generator with its own clock works within this process only: shared, state_file, lease and run_lock need Generator::new",
            ));
        }
        layout.check_node_named(&node, options.rollover_bit(layout))?;
        let g = Generator::build(layout, node, options.policy(), clock)?;
        if options.isolated {
            return Ok(g);
        }
        let member = registry::state_for(layout, &node, rollover_index(layout, &options), &options.policy())?;
        Ok(g.assemble(Cell::new(member, |m| &*m.state), None, false))
    }
}

/// Why a generator that would use the host's state is refused where there is none.
#[cfg(all(not(unix), feature = "shared"))]
const NO_HOST_STATE: &str = "this system has no host-wide state for libsnowflake yet, so the default generator, which shares its \
     layout and node values with every process of the host, cannot be made here: set process_only=true when this is the only \
     process that issues with these layout and node values (or isolated=true in tests)";

#[cfg(not(unix))]
fn open(_: &Layout, _: Node, _: &Options) -> Result<Generator> {
    Err(bad("shared", "shared state, state files, leases and the run lock need a Unix system"))
}

#[cfg(unix)]
fn open(layout: &Layout, node: Node, options: &Options) -> Result<Generator> {
    if let Some(kind) = &options.lease {
        #[cfg(all(feature = "shared", feature = "lease-redis"))]
        if let (Some(name), LeaseKind::Redis(url)) = (&options.shared, kind) {
            return open_host_lease(layout, node, options, name, url);
        }
        return open_leased(layout, node, options, kind);
    }
    open_in_process(layout, node, options)
}

/// How many ticks a window of `ms` covers (at least one).
#[cfg(unix)]
#[allow(dead_code)]
fn window_ticks(layout: &Layout, ms: u64) -> u64 {
    (ms / layout.tick_ms()).max(1)
}

/// The field a lease claims, which `node` must leave at 0.
#[cfg(unix)]
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

/// A Redis lease's settings from `options`.
#[cfg(all(unix, feature = "lease-redis"))]
fn redis_config<'a>(options: &'a Options, url: &'a str) -> lease_redis::Config<'a> {
    lease_redis::Config {
        settings: redis_conn::Settings {
            url,
            password_file: options.lease_password_file.as_deref(),
            tls_ca: options.lease_tls_ca.as_deref(),
            tls_cert: options.lease_tls_cert.as_deref(),
            tls_key: options.lease_tls_key.as_deref(),
        },
        ttl_ms: options.lease_ttl_ms.unwrap_or(5000),
        window_ms: options.state_window_ms.unwrap_or(1000),
        max_wait_ms: options.max_wait_ms,
    }
}

#[cfg(unix)]
fn open_leased(layout: &Layout, node: Node, options: &Options, kind: &LeaseKind) -> Result<Generator> {
    // Checked in every build (the option's error), used only by the lease features' arms: a
    // build with neither (the default `std`) compiles without a warning for the user.
    #[cfg_attr(not(any(feature = "lease-local", feature = "lease-redis")), allow(unused_variables))]
    let field = leased_field(layout, &node, options)?;
    // Check everything else before claiming anything.
    Generator::build(layout, node, options.policy(), MonotonicClock::process())?;
    match kind {
        #[cfg(feature = "lease-local")]
        LeaseKind::Local => {
            use std::sync::Arc;
            let dir = options.lease_dir.clone().unwrap_or_else(default_lease_dir);
            // Lease files reserve in short windows: a lease changes hands when a process
            // dies, and the next holder waits out at most the rest of it.
            let window = window_ticks(layout, options.state_window_ms.unwrap_or(50));
            let lease = lease_local::claim(&dir, layout, &node, field, window)?;
            let node = node.with(lease.field, lease.value);
            let held =
                registry::hold(layout, &node, None, registry::Use::Lease { field, value: lease.value })?;
            let g = Generator::build(layout, node, options.policy(), MonotonicClock::process())?.leased(
                node,
                lease.field,
                false,
            );
            let state = Arc::new(std::sync::atomic::AtomicU64::new(0));
            let durable = mark::Use::own(lease.durable);
            g.word_format().raise_to(&state, durable.floor);
            durable.attach(Some(state.clone()), g.word_format());
            let mark = Arc::new(mark::FileMark { durable, mapped: None });
            Ok(g.assemble(Cell::new(Arc::new((state, held)), |(w, _)| &**w), Some(mark), false))
        }
        #[cfg(feature = "lease-redis")]
        LeaseKind::Redis(url) => {
            let clock = MonotonicClock::process();
            let g = Generator::build(layout, node, options.policy(), clock)?;
            let state = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
            // Claims, and waits until the claim may issue (see lease_redis: at most
            // LEASE_MAX_WINDOW_MS + LEASE_MAX_DRIFT_MS + a tick on an empty Redis).
            let lease = lease_redis::RedisLease::open(
                &redis_config(options, url),
                layout,
                &node,
                field,
                Cell::new(state.clone(), |w| w),
                g.word_format(),
                clock,
                None,
            )?;
            let claimed = node.with(field, lease.value());
            let held =
                registry::hold(layout, &claimed, None, registry::Use::Lease { field, value: lease.value() })?;
            let cell = Cell::new(std::sync::Arc::new((state, held)), |(w, _)| &**w);
            Ok(g.leased(claimed, field, true).assemble(cell, Some(lease), false))
        }
        // The option table refuses a lease whose feature is missing.
        #[allow(unreachable_patterns)]
        _ => Err(bad("lease", "this build of snowflake-core has no backend for this lease")),
    }
}

/// What a state file records of a generator: the layout's fingerprint, the node bits (the
/// rollover field's aside), the window in ticks, the layout's last tick.
#[cfg(all(unix, feature = "state-file"))]
fn state_file_terms(layout: &Layout, node: &Node, options: &Options) -> (u64, u64, u64, u64) {
    let state_node = match rollover_index(layout, options) {
        Some(r) => node.with(r, 0),
        None => *node,
    };
    (
        layout.fingerprint(),
        layout.node_bits(&state_node),
        window_ticks(layout, options.state_window_ms.unwrap_or(1000)),
        layout.max_tick(),
    )
}

/// The host's shared state of the generator's identity (see `shared`), with a state file's
/// guard when `options` name one.
#[cfg(all(unix, feature = "shared"))]
fn open_shared(layout: &Layout, node: Node, options: &Options) -> Result<Generator> {
    use std::sync::Arc;
    let g = Generator::build(layout, node, options.policy(), MonotonicClock::process())?;
    // A state set up now starts above the state file's record, with the file's reservation:
    // written before the file is marked set up, under its lock, so no process ever issues
    // from it unguarded; one joining later changes nothing. Every process of the shared
    // state holds the file's `.users` lock shared, so that no process keeping a state of its
    // own can use the file meanwhile; the state is known by the file's canonical path.
    #[cfg(feature = "state-file")]
    let durable = match options.state_file.as_deref() {
        Some(path) => {
            let (fingerprint, node_bits, window, max_tick) = state_file_terms(layout, &node, options);
            let location = mark::Location::of(path)?;
            Some(mark::Durable::state_file(
                location,
                fingerprint,
                node_bits,
                window,
                max_tick,
                mark::Sharing::Shared,
            )?)
        }
        None => None,
    };
    #[cfg(feature = "state-file")]
    let (initial_state, initial_reserved, state_file) = durable
        .as_ref()
        .map_or((0, u64::MAX, None), |d| (g.word_format().floor(d.floor, 0), d.floor, Some(d.path())));
    #[cfg(not(feature = "state-file"))]
    let (initial_state, initial_reserved, state_file) = (0, u64::MAX, None);
    let identity = shared::Identity {
        layout,
        node: &node,
        policy: &options.policy(),
        rollover: rollover_index(layout, options),
        state_file,
        word: g.word_format(),
        initial_state,
        initial_reserved,
        host_lease: None,
        label: options.shared.as_deref(),
    };
    let held = registry::hold(layout, &node, identity.rollover, registry::Use::Host)?;
    let (map, clock) = join_shared(layout, &identity)?;
    let g = g.with_clock_of(clock).with_validity(map.clone());
    #[allow(unused_mut)]
    let mut mark: Option<Arc<dyn crate::generator::HighWater>> = None;
    #[cfg(feature = "state-file")]
    if let Some(durable) = durable {
        mark = Some(Arc::new(mark::FileMark { durable: mark::Use::own(durable), mapped: Some(map.clone()) }));
    }
    Ok(g.assemble(Cell::new(Arc::new((map, held)), |(m, _)| m.state()), mark, true))
}

/// Opens the host's shared state of `identity`, and the clock its processes share.
#[cfg(all(unix, feature = "shared"))]
fn join_shared(
    layout: &Layout,
    identity: &shared::Identity<'_>,
) -> Result<(std::sync::Arc<shared::Mapping>, MonotonicClock)> {
    let map = std::sync::Arc::new(shared::Mapping::open(identity)?);
    let clock = MonotonicClock::with_offset_ns(map.anchor_ns());
    // The first check that the file is at its path, from a reading taken before it.
    crate::generator::Validity::renew(&*map, clock.now_ms())?;
    // A fresh state starts a little ahead of the clock (see `shared`): wait for it here,
    // rather than fail the first calls; and, for a drift of up to 100 ms, until the clock
    // reaches its first tick, so that the first calls have their whole drift to borrow.
    let drift = identity.policy.max_drift_ms.min(100);
    let ready_ms = map.ready_ms().saturating_add(drift);
    let now_ms = clock.now_ms();
    // A layout of coarse ticks (a second and more) may start a whole tick ahead: that wait is
    // left to the calls, whose max_wait_ms bounds it (then an error that says when to retry).
    let carry = (2 * layout.tick_ms()).min(2000);
    if ready_ms > now_ms && ready_ms - now_ms <= shared::RECHECK_MS + carry + 100 + drift {
        clock.wait_until_ms(ready_ms);
    }
    Ok((map, clock))
}

/// A host lease (`lease=redis://…` with `shared=`): the host's processes share one state and
/// one leased value (see `lease_redis`).
#[cfg(all(unix, feature = "shared", feature = "lease-redis"))]
fn open_host_lease(
    layout: &Layout,
    node: Node,
    options: &Options,
    name: &str,
    url: &str,
) -> Result<Generator> {
    let field = leased_field(layout, &node, options)?;
    let g = Generator::build(layout, node, options.policy(), MonotonicClock::process())?;
    let identity = shared::Identity {
        layout,
        node: &node,
        policy: &options.policy(),
        rollover: None,
        state_file: None,
        word: g.word_format(),
        initial_state: 0,
        initial_reserved: u64::MAX,
        host_lease: Some(field),
        label: Some(name),
    };
    let (map, clock) = join_shared(layout, &identity)?;
    let host = lease_redis::Host::join(map.clone())?;
    let lease = lease_redis::RedisLease::open(
        &redis_config(options, url),
        layout,
        &node,
        field,
        Cell::new(map.clone(), |m| m.state()),
        g.word_format(),
        clock,
        Some(host),
    )?;
    let claimed = node.with(field, lease.value());
    let held = registry::hold(layout, &claimed, None, registry::Use::Lease { field, value: lease.value() })?;
    let g = g.with_clock_of(clock).with_validity(map.clone());
    let cell = Cell::new(std::sync::Arc::new((map, held)), |(m, _)| m.state());
    Ok(g.leased(claimed, field, true).assemble(cell, Some(lease), false))
}

/// The process's registry state for this identity, guarded by a state file (one reservation
/// per file in this process) and/or the run lock.
#[cfg(unix)]
fn open_in_process(layout: &Layout, node: Node, options: &Options) -> Result<Generator> {
    use std::sync::Arc;
    let g = Generator::build(layout, node, options.policy(), MonotonicClock::process())?;
    let member = registry::state_for(layout, &node, rollover_index(layout, options), &options.policy())?;
    let state = member.state.clone();
    // The lock first: a state file is read only once the previous holder has closed it.
    let lock = match options.run_lock {
        true => Some(run_lock::RunLock::hold(
            layout,
            &node,
            state.clone(),
            g.word_format(),
            options.max_drift_ms,
        )?),
        false => None,
    };
    #[allow(unused_mut)]
    let mut mark: Option<Arc<dyn crate::generator::HighWater>> = None;
    #[cfg(feature = "state-file")]
    if let Some(path) = options.state_file.as_deref() {
        let (fingerprint, node_bits, window, max_tick) = state_file_terms(layout, &node, options);
        let durable = mark::open_in_process(path, fingerprint, node_bits, window, max_tick)?;
        g.word_format().raise_to(&state, durable.floor);
        durable.attach(Some(state.clone()), g.word_format());
        mark = Some(Arc::new(mark::FileMark { durable, mapped: None }));
    }
    // The generator keeps its registry membership (its terms) and the run lock alive.
    let cell = Cell::new(Arc::new((member, lock)), |(m, _)| &*m.state);
    Ok(g.assemble(cell, mark, false))
}
