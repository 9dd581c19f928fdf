//! Coordination: what a generator's state is shared with, layered above the generator (which
//! knows only a state cell and an optional high-water mark, see `crate::generator`).
//!
//! - In this process: [`registry`] gives every generator with the same layout and node values
//!   one state, so "a new generator per request" cannot repeat an ID.
//!
//! Beyond one process (DESIGN §5), each a cargo feature:
//!
//! - `shared=<name>`: every process of the host that opens the name draws from one state in
//!   shared memory (see [`crate::shm_dir`]). No repeat, and IDs increase across processes.
//! - `state_file=<path>`: a durable high-water mark; a restart after the clock stepped back
//!   never repeats an ID.
//! - `lease=local`: each process claims a distinct value of the worker field (`lease_field=`)
//!   with file locks in a directory (`lease_dir=`); `lease=redis://host:port/db` does the same
//!   across hosts with keys in Redis (`lease_ttl_ms=`).
//!
//! They use the same text form as the other options (`shared=orders;max_wait_ms=0`), parsed by
//! [`Coordination::parse_options`], so C, PHP, Python, Node and the CLI name them alike.

use crate::clock::{Clock, DefaultClock, MonotonicClock};
use crate::error::{Error, ErrorKind};
use crate::generator::{Cell, Generator};
use crate::layout::{FieldKind, Layout, Node};
use crate::options::Options;
use crate::text::Name;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

#[cfg(all(unix, feature = "lease-local"))]
mod lease_local;
#[cfg(all(unix, feature = "lease-redis"))]
mod lease_redis;
#[cfg(all(unix, any(feature = "state-file", feature = "lease-local")))]
mod mark;
mod registry;
#[cfg(all(unix, feature = "lease-redis"))]
mod resp;
#[cfg(unix)]
mod run_lock;
#[cfg(all(unix, feature = "shared"))]
mod shared;

#[cfg(all(unix, feature = "lease-local"))]
pub use lease_local::default_lease_dir;
#[cfg(all(unix, feature = "shared"))]
pub use shared::{shared_path, shm_dir};

/// How a generator works with the generators of other processes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coordination {
    /// The name of a shared state (`shared=`).
    pub shared: Option<String>,
    /// A durable high-water mark file (`state_file=`).
    pub state_file: Option<PathBuf>,
    /// How far ahead the state file reserves, in ms (`state_window_ms=`, default 1000).
    pub state_window_ms: Option<u64>,
    /// A worker-id lease (`lease=local`).
    pub lease: Option<LeaseKind>,
    /// The node field the lease claims (`lease_field=`; default `worker`, or the only node field).
    pub lease_field: Option<String>,
    /// The lease directory (`lease_dir=`; default [`crate::default_lease_dir`]).
    pub lease_dir: Option<PathBuf>,
    /// A Redis lease's time to live, in ms (`lease_ttl_ms=`, default 5000).
    pub lease_ttl_ms: Option<u64>,
    /// Take turns with the other processes of this host that have the same layout and node
    /// values (`run_lock=true`): the process waits for an exclusive lock on its identity, held until its last
    /// generator of it is dropped and the clock has left the tick of its last ID.
    pub run_lock: bool,
}

/// Where leases are kept.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LeaseKind {
    /// File locks in a directory of this host.
    Local,
    /// Keys in Redis, at `redis://host:port/db`.
    Redis(String),
}

fn bad(name: &str, reason: &'static str) -> Error {
    Error::BadOption { name: Name::snippet(name), reason }
}

impl Coordination {
    /// Whether nothing is asked beyond one process.
    pub fn is_empty(&self) -> bool {
        self.shared.is_none() && self.state_file.is_none() && self.lease.is_none() && !self.run_lock
    }

    /// Parses an options text that may mix generator options and coordination options:
    /// `max_wait_ms=0;shared=orders;state_file=/var/lib/app/ids.state;lease=local`.
    ///
    /// ```
    /// use snowflake_core::{Coordination, LeaseKind};
    /// let (options, c) = Coordination::parse_options("max_wait_ms=0;shared=orders").unwrap();
    /// assert_eq!((options.max_wait_ms, c.shared.as_deref()), (0, Some("orders")));
    /// assert_eq!(Coordination::parse_options("lease=local").unwrap().1.lease, Some(LeaseKind::Local));
    /// assert!(Coordination::parse_options("lease=zookeeper").is_err());
    /// ```
    pub fn parse_options(text: &str) -> Result<(Options, Coordination), Error> {
        let mut c = Coordination::default();
        let mut rest = String::new();
        for item in text.split(';').map(str::trim).filter(|s| !s.is_empty()) {
            let (key, value) = match item.split_once('=') {
                Some((k, v)) => (k.trim(), v.trim()),
                None => {
                    rest.push_str(item);
                    rest.push(';');
                    continue;
                }
            };
            let dup = |set: bool| if set { Err(bad(key, "the option is given twice")) } else { Ok(()) };
            match key {
                "shared" => {
                    dup(c.shared.is_some())?;
                    if !valid_shared_name(value) {
                        return Err(bad(
                            value,
                            "a shared name is 1 to 64 of A-Z a-z 0-9 . _ - (not starting with .)",
                        ));
                    }
                    c.shared = Some(value.to_string());
                }
                "state_file" => {
                    dup(c.state_file.is_some())?;
                    if value.is_empty() {
                        return Err(bad(key, "state_file needs a path"));
                    }
                    c.state_file = Some(PathBuf::from(value));
                }
                "state_window_ms" => {
                    dup(c.state_window_ms.is_some())?;
                    let ms = value.parse::<u64>().ok().filter(|ms| (1..=86_400_000).contains(ms));
                    c.state_window_ms =
                        Some(ms.ok_or(bad(key, "a whole number of ms from 1 to 86400000 (a day)"))?);
                }
                "lease" => {
                    dup(c.lease.is_some())?;
                    c.lease = Some(match value {
                        "local" => LeaseKind::Local,
                        url if url.starts_with("redis://") && valid_redis_url(url) => {
                            LeaseKind::Redis(url.to_string())
                        }
                        _ => return Err(bad(value, "lease is `local` or `redis://host:port/db`")),
                    });
                }
                "lease_field" => {
                    dup(c.lease_field.is_some())?;
                    c.lease_field = Some(value.to_string());
                }
                "lease_ttl_ms" => {
                    dup(c.lease_ttl_ms.is_some())?;
                    let ms = value.parse::<u64>().ok().filter(|ms| (100..=86_400_000).contains(ms));
                    c.lease_ttl_ms =
                        Some(ms.ok_or(bad(key, "a whole number of ms from 100 to 86400000 (a day)"))?);
                }
                "run_lock" => {
                    c.run_lock = match value {
                        "true" | "1" => true,
                        "false" | "0" => false,
                        _ => return Err(bad(key, "run_lock is `true` or `false`")),
                    }
                }
                "lease_dir" => {
                    dup(c.lease_dir.is_some())?;
                    c.lease_dir = Some(PathBuf::from(value));
                }
                _ => {
                    rest.push_str(item);
                    rest.push(';');
                }
            }
        }
        Ok((Options::parse(&rest)?, c))
    }
}

/// Why a generator could not be opened.
#[derive(Debug)]
#[non_exhaustive]
pub enum OpenError {
    /// A bad layout, node value or option.
    Core(Error),
    /// A file, lock or map failed.
    Io(IoError),
    /// The shared state holds another layout, node or policy, or is not this user's.
    Mismatch {
        /// What differs: `layout`, `node`, `max_drift_ms`, `sequence_start`, `rollover`,
        /// `state_file`, `owner`, `file`.
        what: &'static str,
        /// The difference, spelled out.
        detail: String,
    },
    /// A state file is corrupt, or belongs to another layout or node.
    StateFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// No worker value could be claimed.
    Lease {
        /// Why.
        detail: String,
    },
}

impl OpenError {
    /// The family of the error (and its stable code).
    pub fn kind(&self) -> ErrorKind {
        match self {
            OpenError::Core(e) => e.kind(),
            OpenError::Io(_) => ErrorKind::Io,
            OpenError::Mismatch { .. } => ErrorKind::SharedMismatch,
            OpenError::StateFile { .. } => ErrorKind::StateFile,
            OpenError::Lease { .. } => ErrorKind::Lease,
        }
    }
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenError::Core(e) => e.fmt(f),
            OpenError::Io(e) => e.fmt(f),
            OpenError::Mismatch { what, detail } => {
                write!(f, "the shared state was made with another {what}: {detail}")
            }
            OpenError::StateFile { path, detail } => write!(f, "state file {}: {detail}", path.display()),
            OpenError::Lease { detail } => write!(f, "no worker id to lease: {detail}"),
        }
    }
}

impl std::error::Error for OpenError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            OpenError::Core(e) => Some(e),
            OpenError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<Error> for OpenError {
    fn from(e: Error) -> OpenError {
        OpenError::Core(e)
    }
}

impl From<IoError> for OpenError {
    fn from(e: IoError) -> OpenError {
        OpenError::Io(e)
    }
}

/// The node field a lease claims.
pub(crate) fn lease_field(layout: &Layout, c: &Coordination) -> Result<usize, OpenError> {
    let nodes: Vec<(usize, &crate::layout::Field)> = layout.node_fields().collect();
    let pick =
        match c.lease_field.as_deref() {
            Some(name) => {
                layout.field(name).map(|(i, _)| i).ok_or(Error::UnknownField { name: Name::snippet(name) })?
            }
            None => match (layout.field("worker"), nodes.as_slice()) {
                (Some((i, _)), _) => i,
                (None, [(i, _)]) => *i,
                _ => return Err(bad(
                    "lease_field",
                    "the layout has no `worker` field and more than one node field: name the one to lease",
                )
                .into()),
            },
        };
    if layout.fields()[pick].kind() != FieldKind::Node {
        return Err(Error::NotANodeField { name: Name::snippet(layout.fields()[pick].name()) }.into());
    }
    Ok(pick)
}

/// Whether `name` can name a shared state: 1 to 64 of `A-Z a-z 0-9 . _ -`, not starting with `.`.
pub fn valid_shared_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && !name.starts_with('.')
        && name.bytes().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
}

fn valid_redis_url(url: &str) -> bool {
    #[cfg(all(unix, feature = "lease-redis"))]
    return resp::Url::parse(url).is_some();
    #[cfg(not(all(unix, feature = "lease-redis")))]
    return !url.is_empty();
}

/// Failures outside the library's own rules (files, locks, maps, networks): what was being
/// done, where, and the OS error.
#[derive(Debug)]
pub struct IoError {
    /// What was being done.
    pub action: &'static str,
    /// The file or address.
    pub target: String,
    /// The OS error.
    pub source: io::Error,
}

impl fmt::Display for IoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.action, self.target, self.source)
    }
}

impl std::error::Error for IoError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

pub(crate) fn io_err(action: &'static str, target: &Path, source: io::Error) -> IoError {
    IoError { action, target: target.display().to_string(), source }
}

/// The index of the rollover field, if `options` name one of `layout`'s fields.
fn rollover_index(layout: &Layout, options: &Options) -> Option<usize> {
    options.rollover.and_then(|r| layout.field(r.as_str())).map(|(i, _)| i)
}

/// A build of the crate without the cargo feature that `option` needs.
#[allow(dead_code)]
fn missing_feature(option: &'static str) -> OpenError {
    let reason = match option {
        "shared" => "this build of snowflake-core has no `shared` feature",
        "state_file" => "this build of snowflake-core has no `state-file` feature",
        "lease=local" => "this build of snowflake-core has no `lease-local` feature",
        _ => "this build of snowflake-core has no `lease-redis` feature",
    };
    bad(option, reason).into()
}

impl Generator<DefaultClock> {
    /// A generator on the process's monotonic clock. Every generator of this process with the
    /// same layout and node values shares one state, so making "a new generator per request"
    /// cannot repeat an ID (unless `options.isolated`).
    pub fn new(layout: &Layout, node: Node, options: Options) -> Result<Self, Error> {
        Generator::with_clock(layout, node, options, DefaultClock::default())
    }
}

impl<C: Clock> Generator<C> {
    /// Like [`Generator::new`] (the state is shared with every generator of this process with
    /// the same layout and node values, unless `options.isolated`) but reading `clock`.
    pub fn with_clock(layout: &Layout, node: Node, options: Options, clock: C) -> Result<Self, Error> {
        let g = Generator::build(layout, node, options, clock)?;
        if options.isolated {
            return Ok(g);
        }
        let state = registry::state_for(layout, &node, rollover_index(layout, &options))?;
        Ok(g.assemble(Cell::new(state, |w| w), None, false))
    }
}

impl Generator<MonotonicClock> {
    /// A generator that works with the generators of other processes as `coordination`
    /// says (shared state, durable high-water mark, worker-id lease); with an empty
    /// coordination, the same as [`Generator::new`].
    ///
    /// ```
    /// # #[cfg(feature = "lease-local")] {
    /// use snowflake_core::{Coordination, Generator, Layout, Options};
    /// let layout = Layout::parse("twitter").unwrap();
    /// let dir = std::env::temp_dir().join(format!("snowflake-doc-{}", std::process::id()));
    /// let (options, coordination) = Coordination::parse_options(&format!("lease=local;lease_dir={}", dir.display())).unwrap();
    /// let a = Generator::open(&layout, Default::default(), options, &coordination).unwrap();
    /// let b = Generator::open(&layout, Default::default(), options, &coordination).unwrap();
    /// let worker = |g: &Generator| layout.node_values(g.node()).find(|(n, _)| *n == "worker").unwrap().1;
    /// assert_ne!(worker(&a), worker(&b)); // two leases, two worker values
    /// # std::fs::remove_dir_all(&dir).ok();
    /// # }
    /// ```
    pub fn open(
        layout: &Layout,
        node: Node,
        options: Options,
        coordination: &Coordination,
    ) -> Result<Self, OpenError> {
        open(layout, node, options, coordination)
    }
}

#[cfg(not(unix))]
fn open(layout: &Layout, node: Node, options: Options, c: &Coordination) -> Result<Generator, OpenError> {
    if !c.is_empty() {
        return Err(bad("shared", "shared state, state files and leases need a Unix system").into());
    }
    Ok(Generator::new(layout, node, options)?)
}

#[cfg(unix)]
fn open(layout: &Layout, node: Node, options: Options, c: &Coordination) -> Result<Generator, OpenError> {
    if c.is_empty() {
        return Ok(Generator::new(layout, node, options)?);
    }
    if c.run_lock && (c.lease.is_some() || c.shared.is_some()) {
        return Err(bad(
            "run_lock",
            "run_lock keeps processes with one identity apart; shared and lease are other ways to do that: give one",
        )
        .into());
    }
    if c.lease.is_some() && c.shared.is_some() {
        return Err(bad(
            "lease",
            "lease and shared are alternatives: a lease gives each process its own worker value, shared gives all processes one state",
        )
        .into());
    }
    if options.rollover.is_some() && (c.state_file.is_some() || c.lease.is_some()) {
        // The rollover counter lives in the state word only: after a restart (or a lease
        // hand-over) it would start again at 0 and could reuse a value the previous process
        // issued with, at ticks below the stored mark.
        return Err(bad(
            "rollover",
            "rollover cannot be combined with state_file or lease: choose rollover for steps back within a process, or a state file / lease across restarts",
        )
        .into());
    }
    if let Some(kind) = &c.lease {
        return open_leased(layout, node, options, c, kind);
    }
    if let Some(name) = &c.shared {
        return open_shared(layout, node, options, c, name);
    }
    open_in_process(layout, node, options, c)
}

/// How many ticks a window of `ms` covers (at least one).
#[cfg(all(
    unix,
    any(feature = "state-file", feature = "lease-local", feature = "lease-redis", feature = "shared")
))]
fn window_ticks(layout: &Layout, ms: u64) -> u64 {
    (ms / layout.tick_ms()).max(1)
}

#[cfg(unix)]
fn open_leased(
    layout: &Layout,
    node: Node,
    options: Options,
    c: &Coordination,
    kind: &LeaseKind,
) -> Result<Generator, OpenError> {
    let field = lease_field(layout, c)?;
    if node.get(field) != 0 {
        return Err(bad(
            layout.fields()[field].name(),
            "the leased field is claimed by the lease: give it no node value",
        )
        .into());
    }
    if Some(field) == rollover_index(layout, &options) {
        return Err(bad("lease_field", "the leased field cannot be the rollover field").into());
    }
    if c.state_file.is_some() {
        return Err(bad(
            "state_file",
            "a lease keeps its own high-water mark (in the lease file or in Redis): give no state_file",
        )
        .into());
    }
    // Check everything else before claiming anything.
    Generator::build(layout, node, options, MonotonicClock::process())?;
    match kind {
        #[cfg(feature = "lease-local")]
        LeaseKind::Local => {
            let dir = c.lease_dir.clone().unwrap_or_else(default_lease_dir);
            // Lease files reserve in short windows: a lease changes hands when a process
            // dies, and the next holder waits out at most the rest of it.
            let window = window_ticks(layout, c.state_window_ms.unwrap_or(50));
            let lease = lease_local::claim(&dir, layout, &node, field, window)?;
            let g = Generator::build(
                layout,
                node.with(lease.field, lease.value),
                options,
                MonotonicClock::process(),
            )?;
            let state = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
            let durable = std::sync::Arc::new(lease.durable);
            g.word_format().raise_to(&state, durable.floor);
            durable.attach(Some(state.clone()), g.word_format());
            let mark = std::sync::Arc::new(mark::FileMark { durable, mapped: None });
            Ok(g.assemble(Cell::new(state, |w| w), Some(mark), false))
        }
        #[cfg(feature = "lease-redis")]
        LeaseKind::Redis(url) => {
            let clock = MonotonicClock::process();
            let timing = lease_redis::Timing {
                ttl_ms: c.lease_ttl_ms.unwrap_or(5000),
                window_ms: c.state_window_ms.unwrap_or(1000),
                max_drift_ms: options.max_drift_ms,
            };
            let lease = lease_redis::RedisLease::claim(url, layout, &node, field, timing, &clock)?;
            let g = Generator::build(layout, node.with(lease.field, lease.value), options, clock)?;
            let state = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
            g.word_format().raise_to(&state, lease.floor);
            lease.attach(state.clone(), g.word_format());
            // Without a stored high-water mark the floor is a TTL ahead: wait for it here
            // rather than fail the first calls.
            clock.wait_until_ms(layout.unix_ms_of(lease.floor));
            Ok(g.assemble(Cell::new(state, |w| w), Some(lease), false))
        }
        #[cfg(not(feature = "lease-local"))]
        LeaseKind::Local => Err(missing_feature("lease=local")),
        #[cfg(not(feature = "lease-redis"))]
        LeaseKind::Redis(_) => Err(missing_feature("lease=redis")),
    }
}

#[cfg(all(unix, feature = "state-file"))]
fn state_file(
    layout: &Layout,
    node: &Node,
    options: &Options,
    c: &Coordination,
    path: &Path,
) -> Result<mark::Durable, OpenError> {
    let state_node = match rollover_index(layout, options) {
        Some(r) => node.with(r, 0),
        None => *node,
    };
    mark::Durable::state_file(
        path,
        layout.fingerprint(),
        layout.node_bits(&state_node),
        window_ticks(layout, c.state_window_ms.unwrap_or(1000)),
        layout.max_tick(),
    )
}

#[cfg(unix)]
fn open_shared(
    layout: &Layout,
    node: Node,
    options: Options,
    c: &Coordination,
    name: &str,
) -> Result<Generator, OpenError> {
    #[cfg(feature = "shared")]
    {
        use std::sync::Arc;
        let g = Generator::build(layout, node, options, MonotonicClock::process())?;
        // A state set up now starts above the state file's record, with the file's
        // reservation: written before the file is marked set up, under its lock, so no
        // process ever issues from it unguarded; one joining later changes nothing.
        #[cfg(feature = "state-file")]
        let durable =
            c.state_file.as_deref().map(|p| state_file(layout, &node, &options, c, p)).transpose()?;
        #[cfg(feature = "state-file")]
        let (initial_state, initial_reserved) =
            durable.as_ref().map_or((0, u64::MAX), |d| (g.word_format().floor(d.floor, 0), d.floor));
        #[cfg(not(feature = "state-file"))]
        let (initial_state, initial_reserved) = match c.state_file {
            Some(_) => return Err(missing_feature("state_file")),
            None => (0, u64::MAX),
        };
        let identity = shared::Identity {
            layout,
            node: &node,
            options: &options,
            rollover: rollover_index(layout, &options),
            state_file: c.state_file.as_deref(),
            initial_state,
            initial_reserved,
        };
        let map = Arc::new(shared::Mapping::open(name, &identity)?);
        let g = g.with_clock_of(MonotonicClock::with_offset_ns(map.anchor_ns()));
        #[allow(unused_mut)]
        let mut mark: Option<Arc<dyn crate::generator::HighWater>> = None;
        #[cfg(feature = "state-file")]
        if let Some(durable) = durable {
            mark = Some(Arc::new(mark::FileMark { durable: Arc::new(durable), mapped: Some(map.clone()) }));
        }
        Ok(g.assemble(Cell::new(map, |m| m.state()), mark, true))
    }
    #[cfg(not(feature = "shared"))]
    {
        let _ = (layout, node, options, c, name);
        Err(missing_feature("shared"))
    }
}

/// The process's registry state for this identity, guarded by a state file (one reservation
/// per file in this process) and/or the run lock.
#[cfg(unix)]
fn open_in_process(
    layout: &Layout,
    node: Node,
    options: Options,
    c: &Coordination,
) -> Result<Generator, OpenError> {
    use std::sync::Arc;
    let g = Generator::build(layout, node, options, MonotonicClock::process())?;
    let state = registry::state_for(layout, &node, rollover_index(layout, &options))?;
    // The lock first: a state file is read only once the previous holder has closed it.
    let lock = match c.run_lock {
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
    if let Some(path) = c.state_file.as_deref() {
        #[cfg(feature = "state-file")]
        {
            let durable = mark::open_in_process(path, || state_file(layout, &node, &options, c, path))?;
            g.word_format().raise_to(&state, durable.floor);
            durable.attach(Some(state.clone()), g.word_format());
            mark = Some(Arc::new(mark::FileMark { durable, mapped: None }));
        }
        #[cfg(not(feature = "state-file"))]
        {
            let _ = path;
            return Err(missing_feature("state_file"));
        }
    }
    let cell = match lock {
        Some(lock) => Cell::new(lock, |l| &l.state),
        None => Cell::new(state, |w| w),
    };
    Ok(g.assemble(cell, mark, false))
}
