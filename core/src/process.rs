//! Beyond one process (DESIGN §5): the options that make generators of many processes work
//! together, and the errors of setting them up.
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

use crate::clock::MonotonicClock;
use crate::error::{Error, ErrorKind};
use crate::generator::Generator;
use crate::layout::{FieldKind, Layout, Node};
use crate::options::Options;
use crate::shared::IoError;
use crate::text::Name;
use std::fmt;
use std::path::PathBuf;

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
        self.shared.is_none() && self.state_file.is_none() && self.lease.is_none()
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
                    if !crate::shared::valid_shared_name(value) {
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
                        url if url.starts_with("redis://") && crate::resp::Url::parse(url).is_some() => {
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

impl Generator<MonotonicClock> {
    /// A generator that works with the generators of other processes as `coordination`
    /// says (shared state, durable high-water mark, worker-id lease); with an empty
    /// coordination, the same as [`Generator::new`].
    ///
    /// ```
    /// use snowflake_core::{Coordination, Generator, Layout, Options};
    /// let layout = Layout::parse("twitter").unwrap();
    /// let dir = std::env::temp_dir().join(format!("snowflake-doc-{}", std::process::id()));
    /// let (options, coordination) = Coordination::parse_options(&format!("lease=local;lease_dir={}", dir.display())).unwrap();
    /// let a = Generator::open(&layout, Default::default(), options, &coordination).unwrap();
    /// let b = Generator::open(&layout, Default::default(), options, &coordination).unwrap();
    /// let worker = |g: &Generator| layout.node_values(g.node()).find(|(n, _)| *n == "worker").unwrap().1;
    /// assert_ne!(worker(&a), worker(&b)); // two leases, two worker values
    /// # std::fs::remove_dir_all(&dir).ok();
    /// ```
    pub fn open(
        layout: &Layout,
        node: Node,
        options: Options,
        coordination: &Coordination,
    ) -> Result<Self, OpenError> {
        Generator::open_coordinated(layout, node, options, coordination)
    }
}
