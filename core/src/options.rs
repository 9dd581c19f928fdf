//! The option table: every option of a generator, with its name, type, range, default, a
//! one-line doc and the options it cannot be combined with. Core alone validates options;
//! every front end hands its native values over one key at a time ([`Options::set`]), or
//! the text form `key=value;…` ([`Options::parse`], [`Options::set_text`]) for C, the CLI
//! and environment variables. Stubs and docs (`.pyi`, `index.d.ts`, PHP docblocks, the CLI's
//! flags, the README's table) are generated from [`OPTIONS`] or checked against it.
//!
//! ```
//! use snowflake_core::{Options, SequenceStart, Value};
//! let mut o = Options::parse("max_drift_ms=50;max_wait_ms=0").unwrap();
//! o.set("sequence_start", Value::Text("spread:16")).unwrap();
//! assert_eq!((o.max_drift_ms, o.max_wait_ms, o.sequence_start), (50, 0, SequenceStart::Spread(16)));
//! assert_eq!(Options::parse(&o.to_string()), Ok(o));
//! assert!(Options::parse("max_wait=3").unwrap_err().to_string().contains("max_wait_ms"));
//! ```

use crate::error::{Error, Result};
#[cfg(feature = "std")]
use crate::schemes::LeaseScheme;
use crate::text::{format_name, Name, Spelling, MAX_NAME_LEN};
use crate::value::{check_range, Value};
use core::fmt;

/// What an option's value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionType {
    /// A whole number from `min` to `max` (milliseconds for the `_ms` options).
    Integer {
        /// The smallest value.
        min: u64,
        /// The largest value.
        max: u64,
    },
    /// `true` or `false`.
    Bool,
    /// Text; [`OptionSpec::form`] says which.
    Text,
    /// A file system path (any bytes but NUL: `=`, `;` and spaces too).
    Path,
}

/// One row of the option table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionSpec {
    /// The name (`max_drift_ms`); see [`OptionSpec::spelled`] for the other spellings.
    pub name: &'static str,
    /// What the value is.
    pub ty: OptionType,
    /// The default, as text; `""` when unset by default.
    pub default: &'static str,
    /// The form of a value, for help texts: `MS`, `zero|spread:K`, `NAME`, `PATH`, ...
    pub form: &'static str,
    /// One line: what it does.
    pub doc: &'static str,
    /// The cargo feature of `snowflake-core` that provides it (`None`: always there).
    pub feature: Option<&'static str>,
}

/// An option given with another it cannot be combined with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// One option.
    pub a: &'static str,
    /// The other.
    pub b: &'static str,
    /// Why not.
    pub reason: &'static str,
}

const DAY_MS: u64 = 86_400_000;

/// Every option, in the order of the docs.
pub const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "max_drift_ms",
        ty: OptionType::Integer { min: 0, max: DAY_MS },
        default: "0",
        form: "MS",
        doc: "How far ahead of the clock IDs may be issued when a tick is full or the clock went back (0: never, classic Snowflake).",
        feature: None,
    },
    OptionSpec {
        name: "max_wait_ms",
        ty: OptionType::Integer { min: 0, max: DAY_MS },
        default: "1000",
        form: "MS",
        doc: "How long a call may wait for the clock before it fails (0: never block).",
        feature: None,
    },
    OptionSpec {
        name: "sequence_start",
        ty: OptionType::Text,
        default: "zero",
        form: "zero|spread:K",
        doc: "Where each tick's sequence starts: 0, or a hash of the tick below K so that id % N shards evenly at low traffic.",
        feature: None,
    },
    OptionSpec {
        name: "rollover",
        ty: OptionType::Text,
        default: "",
        form: "FIELD",
        doc: "A node field the generator bumps, instead of waiting, when the clock goes back by more than max_drift_ms.",
        feature: None,
    },
    OptionSpec {
        name: "isolated",
        ty: OptionType::Bool,
        default: "false",
        form: "true|false",
        doc: "A state of its own, for tests and replays only: two isolated generators with the same node values can repeat IDs.",
        feature: None,
    },
    OptionSpec {
        name: "process_only",
        ty: OptionType::Bool,
        default: "false",
        form: "true|false",
        doc: "Issue alone: this process holds the host's record of its layout and node values, and any other process with them (any language, any user) is refused while it lives; a copy in a child of fork() refuses to issue.",
        feature: None,
    },
    OptionSpec {
        name: "shared",
        ty: OptionType::Text,
        default: "",
        form: "NAME",
        doc: "A name for this host's shared state of the layout and node values, shown by `snowflake shared list` (1 to 64 of A-Z a-z 0-9 . _ -). Every generator shares it by default; two names for one layout and node values name one state.",
        feature: Some("shared"),
    },
    OptionSpec {
        name: "state_file",
        ty: OptionType::Path,
        default: "",
        form: "PATH",
        doc: "A durable high-water mark: a restart after the clock stepped back never repeats an ID.",
        feature: Some("state-file"),
    },
    OptionSpec {
        name: "state_window_ms",
        ty: OptionType::Integer { min: 1, max: DAY_MS },
        default: "1000",
        form: "MS",
        doc: "How far ahead the state file (or a lease's mark) reserves time: one write per window.",
        feature: None,
    },
    OptionSpec {
        name: "lease",
        ty: OptionType::Text,
        default: "",
        form: "local|redis://ADDRESS|rediss://ADDRESS|unix://PATH|redis+sentinel://SENTINELS|rediss+sentinel://SENTINELS|redis+cluster://NODES|rediss+cluster://NODES|postgres://ADDRESS|postgresql://ADDRESS|mysql://ADDRESS",
        doc: "Claim a free value of the worker field for this process: on this host (local), or across hosts in Redis (TLS, unix socket, Sentinel, Cluster), PostgreSQL, or MySQL/MariaDB.",
        feature: None,
    },
    OptionSpec {
        name: "lease_field",
        ty: OptionType::Text,
        default: "",
        form: "FIELD",
        doc: "The node field a lease claims (default: `worker`, or the only node field).",
        feature: None,
    },
    OptionSpec {
        name: "lease_ttl_ms",
        ty: OptionType::Integer { min: 100, max: DAY_MS },
        default: "5000",
        form: "MS",
        doc: "How long a lease across hosts lives unless renewed; a holder stops issuing before it ends, and claims again on its next call.",
        feature: Some("lease-remote"),
    },
    OptionSpec {
        name: "max_clock_skew_ms",
        ty: OptionType::Integer { min: 1, max: 3_600_000 },
        default: "1000",
        form: "MS",
        doc: "How far this host's clock may be from the lease store's (Redis TIME, the database's clock): a claim is refused beyond it, and a renewal that finds it beyond counts it in stats().",
        feature: Some("lease-remote"),
    },
    OptionSpec {
        name: "lease_password_file",
        ty: OptionType::Path,
        default: "",
        form: "PATH",
        doc: "A file holding the lease store's password (a mounted Kubernetes Secret), instead of one in the URL; a final newline is ignored.",
        feature: Some("lease-remote"),
    },
    OptionSpec {
        name: "lease_tls_ca",
        ty: OptionType::Path,
        default: "",
        form: "PATH",
        doc: "PEM CA certificates that the lease store's certificate must chain to (rediss://, or sslmode=require|verify-ca|verify-full); default: the system's roots, read when the generator opens.",
        feature: Some("lease-remote"),
    },
    OptionSpec {
        name: "lease_tls_cert",
        ty: OptionType::Path,
        default: "",
        form: "PATH",
        doc: "A PEM client certificate for a lease store over TLS that asks for one (mutual TLS); give lease_tls_key too.",
        feature: Some("lease-remote"),
    },
    OptionSpec {
        name: "lease_tls_key",
        ty: OptionType::Path,
        default: "",
        form: "PATH",
        doc: "The PEM private key of lease_tls_cert.",
        feature: Some("lease-remote"),
    },
];

/// The names of [`OPTIONS`], in order.
pub const OPTION_NAMES: &[&str] = &{
    let mut names = [""; OPTIONS.len()];
    let mut i = 0;
    while i < OPTIONS.len() {
        names[i] = OPTIONS[i].name;
        i += 1;
    }
    names
};

/// Options that cannot be given together.
pub const CONFLICTS: &[Conflict] = &[
    Conflict {
        a: "lease",
        b: "state_file",
        reason: "a lease keeps its own high-water mark (in the lease file or in Redis): give no state_file",
    },
    Conflict {
        a: "rollover",
        b: "state_file",
        reason: "rollover cannot be combined with state_file or lease: the rollover counter is not stored across restarts; choose rollover for steps back within a process, or a state file across restarts",
    },
    Conflict {
        a: "rollover",
        b: "lease",
        reason: "rollover cannot be combined with state_file or lease: the rollover counter is not handed over with a lease; choose rollover for steps back within a process, or a lease",
    },
    Conflict {
        a: "isolated",
        b: "shared",
        reason: "an isolated generator has a state of its own: it cannot share one",
    },
    Conflict { a: "isolated", b: "lease", reason: "an isolated generator has a state of its own: it cannot hold a lease" },
    Conflict {
        a: "isolated",
        b: "state_file",
        reason: "an isolated generator has a state of its own, for tests: it keeps no state file",
    },
    Conflict {
        a: "isolated",
        b: "process_only",
        reason: "an isolated generator has a state of its own, which is already within this process: give one of them",
    },
    Conflict {
        a: "process_only",
        b: "shared",
        reason: "process_only keeps the state within this process and shared names the host's state: choose one",
    },
    Conflict {
        a: "process_only",
        b: "lease",
        reason: "a leased generator has a value of its own, so its state is already its process's: drop process_only",
    },
];

/// An option that a release retired: giving it is an error that says what replaced it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retired {
    /// Its name (snake case).
    pub name: &'static str,
    /// Why, and what to do instead.
    pub reason: &'static str,
}

/// The retired options: each is refused with its reason, in every spelling (`run_lock`,
/// `runLock`, `--run-lock`), never silently ignored.
pub const RETIRED: &[Retired] = &[
    Retired {
        name: "run_lock",
        reason: "run_lock was retired: every generator of a layout and node values on a host now meets the host's one record of them, so processes with the same identity never repeat each other's IDs with nothing set; remove the option",
    },
    Retired {
        name: "lease_dir",
        reason: "lease_dir was retired: local leases are kept beside the host's other records (SNOWFLAKE_SHM_DIR, else /dev/shm), so that TMPDIR and PrivateTmp cannot split a host; remove the option",
    },
];

/// Whether `key` is an option's name in the text form (snake_case), current or retired.
pub(crate) fn is_option_name(key: &str) -> bool {
    OPTIONS.iter().any(|o| o.name == key) || retired(key).is_some()
}

/// The retired option `name` names, in any spelling.
fn retired(name: &str) -> Option<&'static Retired> {
    let name = name.trim_start_matches('-');
    RETIRED.iter().find(|r| {
        let mut snake = [0u8; MAX_NAME_LEN];
        let mut n = 0;
        for c in name.bytes() {
            let (c, under) = match c {
                b'-' => (b'_', false),
                b'A'..=b'Z' => (c.to_ascii_lowercase(), true),
                c => (c, false),
            };
            if under && n < MAX_NAME_LEN {
                snake[n] = b'_';
                n += 1;
            }
            if n < MAX_NAME_LEN {
                snake[n] = c;
                n += 1;
            }
        }
        &snake[..n] == r.name.as_bytes()
    })
}

/// Options that mean something only with another.
pub const NEEDS: &[Conflict] = &[
    Conflict {
        a: "lease_field",
        b: "lease",
        reason: "lease_field names the field a lease claims: give lease too",
    },
    Conflict {
        a: "lease_ttl_ms",
        b: "lease",
        reason: "lease_ttl_ms is a lease's time to live: give lease=redis://…, postgres://… or mysql://… too",
    },
    Conflict {
        a: "max_clock_skew_ms",
        b: "lease",
        reason: "max_clock_skew_ms bounds this host's clock against a lease store's: give lease=redis://…, postgres://… or mysql://… too",
    },
    Conflict {
        a: "lease_password_file",
        b: "lease",
        reason: "lease_password_file holds the password of a lease store: give lease=redis://…, postgres://… or mysql://… too",
    },
    Conflict {
        a: "lease_tls_ca",
        b: "lease",
        reason: "lease_tls_ca is for a lease store over TLS: give lease=rediss://… (or a database address with sslmode=require) too",
    },
    Conflict {
        a: "lease_tls_cert",
        b: "lease_tls_key",
        reason: "a client certificate needs its key: give lease_tls_key too",
    },
    Conflict {
        a: "lease_tls_key",
        b: "lease_tls_cert",
        reason: "lease_tls_key is the key of a client certificate: give lease_tls_cert too",
    },
    Conflict {
        a: "lease_tls_cert",
        b: "lease",
        reason: "lease_tls_cert is for a lease store over TLS: give lease=rediss://… (or a database address with sslmode=require) too",
    },
];

/// How far ahead of the clock a Redis lease's holder reserves time, at most (a larger
/// `state_window_ms` is lowered to it for a Redis lease). One of the two caps that every
/// holder obeys, so that a claimant that finds no high-water mark (a new Redis, or one that
/// lost its data) knows how far ahead any earlier holder may have issued: it starts
/// [`LEASE_MAX_WINDOW_MS`] + [`LEASE_MAX_DRIFT_MS`] + one tick ahead of its clock.
pub const LEASE_MAX_WINDOW_MS: u64 = 1000;

/// The largest `max_drift_ms` a generator with a lease across hosts may have (larger is
/// refused): the other cap of [`LEASE_MAX_WINDOW_MS`].
pub const LEASE_MAX_DRIFT_MS: u64 = 1000;

/// `max_clock_skew_ms`'s default: a host whose clock is more than a second from its lease
/// store's claims no value.
pub const DEFAULT_MAX_CLOCK_SKEW_MS: u64 = 1000;

impl OptionSpec {
    /// The row of `name` (in any [`Spelling`]).
    ///
    /// ```
    /// let spec = snowflake_core::OptionSpec::find("maxDriftMs").unwrap();
    /// assert_eq!((spec.name, spec.spelled(snowflake_core::Spelling::Flag).as_str()), ("max_drift_ms", "--max-drift-ms"));
    /// ```
    pub fn find(name: &str) -> Option<&'static OptionSpec> {
        OPTIONS.iter().find(|o| {
            o.name == name || [Spelling::Camel, Spelling::Flag].iter().any(|s| o.spelled(*s).as_str() == name)
        })
    }

    /// The name as `spelling` writes it.
    pub fn spelled(&self, spelling: Spelling) -> Name {
        spelling.spell(self.name)
    }
}

/// Where each tick's sequence starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum SequenceStart {
    /// At 0.
    #[default]
    Zero,
    /// At `splitmix64(tick) % K` (see [`crate::hash::splitmix64`]), so that `id % N` is even
    /// for sharding when traffic is low. The tick's capacity shrinks by the start; the
    /// sequence never wraps, so IDs stay increasing.
    Spread(u64),
}

impl SequenceStart {
    /// The first sequence number of `tick`.
    #[inline]
    pub const fn start(self, tick: u64) -> u64 {
        match self {
            SequenceStart::Zero => 0,
            SequenceStart::Spread(k) => crate::hash::splitmix64(tick) % k,
        }
    }

    /// Parses `zero` or `spread:K`.
    pub fn parse(value: &str) -> Result<SequenceStart> {
        if value == "zero" {
            return Ok(SequenceStart::Zero);
        }
        match value.strip_prefix("spread:") {
            Some(k) => match parse_integer("sequence_start", k, 0, u64::MAX)? {
                0 => Err(bad("sequence_start", "spread:K needs K >= 1")),
                k => Ok(SequenceStart::Spread(k)),
            },
            None => Err(bad(value, "sequence_start is `zero` or `spread:K`")),
        }
    }
}

/// Where a lease is kept.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
#[cfg(feature = "std")]
pub enum LeaseKind {
    /// File locks in a directory of this host.
    Local,
    /// A store across hosts ([`LEASE_SCHEMES`](crate::LEASE_SCHEMES)'s row `scheme`), at the
    /// address `url` (which may hold a password: its `Debug` does not show it).
    Store {
        /// The store's row.
        scheme: &'static LeaseScheme,
        /// The store's address.
        url: String,
    },
}

#[cfg(feature = "std")]
impl LeaseKind {
    /// The address of a lease across hosts (`None` for `local`).
    pub fn address(&self) -> Option<&str> {
        match self {
            LeaseKind::Local => None,
            LeaseKind::Store { url, .. } => Some(url),
        }
    }

    /// The row of a lease across hosts (`None` for `local`).
    pub fn scheme(&self) -> Option<&'static LeaseScheme> {
        match self {
            LeaseKind::Local => None,
            LeaseKind::Store { scheme, .. } => Some(scheme),
        }
    }

    /// Whether the address asks for TLS (see [`LeaseScheme::tls`]).
    fn tls(&self) -> bool {
        match self {
            LeaseKind::Local => false,
            LeaseKind::Store { scheme, url } => scheme.tls(url),
        }
    }
}

#[cfg(feature = "std")]
impl fmt::Debug for LeaseKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LeaseKind::Local => f.write_str("Local"),
            LeaseKind::Store { scheme, url } => f.debug_tuple(scheme.name).field(&redact_url(url)).finish(),
        }
    }
}

/// The generator's policy: what it does when the clock does not let it issue at once. Plain
/// data, kept by the generator (the rest of [`Options`] is used when it is opened).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Policy {
    /// See [`Options::max_drift_ms`].
    pub max_drift_ms: u64,
    /// See [`Options::max_wait_ms`].
    pub max_wait_ms: u64,
    /// See [`Options::sequence_start`].
    pub sequence_start: SequenceStart,
    /// See [`Options::rollover`].
    pub rollover: Option<Name>,
}

/// Every option of a generator. Build one with [`Options::default`] and [`Options::set`] (or
/// struct update syntax in Rust), or parse the text form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// How far ahead of the clock the generator may issue (in ms) when a tick is full or the
    /// clock went back. 0: never run ahead (classic Snowflake).
    pub max_drift_ms: u64,
    /// How long `next_id` may block waiting for the clock before it fails. 0: never block.
    pub max_wait_ms: u64,
    /// Where each tick's sequence starts.
    pub sequence_start: SequenceStart,
    /// A node field that the generator bumps, instead of waiting, when the clock goes back
    /// by more than `max_drift_ms`.
    pub rollover: Option<Name>,
    /// A state of its own instead of the one every generator of this process with the same
    /// layout and node values shares: for tests and replays of `next_id_at` traces. Two
    /// isolated generators with the same node values can issue the same IDs.
    pub isolated: bool,
    /// The state shared only by this process's generators, not the host's shared state
    /// (`process_only=true`): two processes with the same node values can repeat IDs.
    pub process_only: bool,
    /// The name of the host's shared state (`shared=`), a label: every generator without
    /// `process_only`, `isolated` or a lease uses the host's state of its identity.
    #[cfg(feature = "std")]
    pub shared: Option<String>,
    /// A durable high-water mark file (`state_file=`).
    #[cfg(feature = "std")]
    pub state_file: Option<std::path::PathBuf>,
    /// How far ahead a state file or lease reserves, in ms (`state_window_ms=`).
    #[cfg(feature = "std")]
    pub state_window_ms: Option<u64>,
    /// A worker-id lease (`lease=local`, `lease=redis://…`).
    #[cfg(feature = "std")]
    pub lease: Option<LeaseKind>,
    /// The node field the lease claims (`lease_field=`).
    #[cfg(feature = "std")]
    pub lease_field: Option<Name>,
    /// A lease's time to live, in ms (`lease_ttl_ms=`).
    #[cfg(feature = "std")]
    pub lease_ttl_ms: Option<u64>,
    /// How far this host's clock may be from the lease store's, in ms (`max_clock_skew_ms=`;
    /// [`DEFAULT_MAX_CLOCK_SKEW_MS`] when unset).
    #[cfg(feature = "std")]
    pub max_clock_skew_ms: Option<u64>,
    /// A file holding the Redis password (`lease_password_file=`).
    #[cfg(feature = "std")]
    pub lease_password_file: Option<std::path::PathBuf>,
    /// The CA certificates a `rediss://` server must chain to (`lease_tls_ca=`).
    #[cfg(feature = "std")]
    pub lease_tls_ca: Option<std::path::PathBuf>,
    /// A client certificate for mutual TLS (`lease_tls_cert=`).
    #[cfg(feature = "std")]
    pub lease_tls_cert: Option<std::path::PathBuf>,
    /// The client certificate's key (`lease_tls_key=`).
    #[cfg(feature = "std")]
    pub lease_tls_key: Option<std::path::PathBuf>,
}

impl Default for Options {
    fn default() -> Options {
        Options::DEFAULT
    }
}

fn bad(name: &str, reason: &'static str) -> Error {
    Error::BadOption { name: Name::snippet(name), reason }
}

/// The one spelling of a boolean option in the text form (C, the CLI's flags and `--options`),
/// as the table says: `true` or `false`, exactly. Not `1`, `yes` or `True`: a front end whose
/// language has booleans passes one ([`Value::Bool`]), and every other value of any type is
/// [`Error::WrongType`], so that `isolated=1` means the same nowhere rather than something
/// somewhere.
///
/// ```
/// use snowflake_core::{ErrorKind, Options};
/// assert!(Options::parse("isolated=true").unwrap().isolated);
/// for text in ["1", "0", "yes", "True", "TRUE", "on", ""] {
///     let err = Options::parse(&format!("isolated={text}")).unwrap_err();
///     assert_eq!(err.kind(), ErrorKind::Type, "{text}");
/// }
/// ```
pub fn bool_of_text(text: &str) -> Option<bool> {
    match text {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// The hint for `key=value` whose value holds another option after a `,`
/// (`max_wait_ms=0,max_drift_ms=5`): options are separated by `;`. Given only when the value
/// was refused, so that a path or a Sentinel address with a `,` stays valid.
fn comma_hint(key: &str, value: &str) -> Option<Error> {
    let next_is_option = value.split(',').skip(1).any(|item| {
        item.split_once('=').is_some_and(|(name, _)| OPTIONS.iter().any(|o| o.name == name.trim()))
    });
    next_is_option.then(|| {
        bad(key, "options are separated by `;`, not `,` (`max_wait_ms=0;max_drift_ms=5`; node values are separated by `,`)")
    })
}

fn parse_integer(name: &str, text: &str, min: u64, max: u64) -> Result<u64> {
    if text.is_empty() || !text.bytes().all(|c| c.is_ascii_digit()) {
        return Err(bad(name, "must be a non-negative integer, written in digits"));
    }
    let value = text.parse::<u64>().map_err(|_| bad(name, "does not fit in 64 bits"))?;
    check_range(name, i128::from(value), min, max)
}

/// Whether `name` can name a shared state: 1 to 64 of `A-Z a-z 0-9 . _ -`, not starting with `.`.
pub fn valid_shared_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && !name.starts_with('.')
        && name.bytes().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
}

/// `url` with its secrets replaced by `***`, for messages, `Display` and `Debug`. Each rule
/// below masks a part of the text, on its own, and the text shows only what no rule masked:
///
/// - the userinfo, everything between the scheme and the **last** `@`: a password may hold an
///   unencoded `/`, `?`, `#` or `@`, which a parser would take for the end of the authority
///   and print the rest. When the userinfo holds none of `/?#` the user name before its first
///   `:` is kept (`app:***`); otherwise all of it is masked;
/// - when what follows the last `@` (or the scheme, with no `@`) is not `host[:port],…`,
///   the scheme's path (a database; a Sentinel master) and `key=value` pairs of the keys an
///   address takes (`redis://:S3CRET`, a password without its `@host`): everything after the
///   scheme;
/// - the value of every query key that contains `pass`, `pwd`, `secret` or `token`, in any
///   case (`pass=`, `PASSWORD=`, `sentinel_password=`, `auth_token=`), and everything after
///   it (an unencoded `&` in the password would otherwise show its end as another pair);
/// - a `#` part (a lease refuses one; a password may hold a `#`).
///
/// ```
/// use snowflake_core::redact_url;
/// assert_eq!(redact_url("redis://app:s3cret@cache:6379/0"), "redis://app:***@cache:6379/0");
/// assert_eq!(redact_url("redis://cache:6379/0"), "redis://cache:6379/0");
/// assert_eq!(redact_url("unix:///run/redis.sock?db=2&user=app&pass=s3cret"), "unix:///run/redis.sock?db=2&user=app&pass=***");
/// assert_eq!(redact_url("redis://:Zm9v/YmFy+S3CRET==@host/0"), "redis://***@host/0");
/// assert_eq!(redact_url("redis://app:S3CRET?x@host/0"), "redis://***@host/0");
/// assert_eq!(redact_url("redis://host/0?PASSWORD=S3CRET&db=1"), "redis://host/0?PASSWORD=***");
/// assert_eq!(redact_url("redis://app:S3CRET/0"), "redis://***"); // no `@`, and not host:port
/// assert_eq!(redact_url("redis+sentinel://[::1]:26379,h2:26379/mymaster"), "redis+sentinel://[::1]:26379,h2:26379/mymaster");
/// assert_eq!(redact_url("redis+cluster://app:S3CRET@h1:7000,h2:7001"), "redis+cluster://app:***@h1:7000,h2:7001");
/// assert_eq!(redact_url("postgres://app:S3CRET@db:5432/ids?sslmode=require"), "postgres://app:***@db:5432/ids?sslmode=require");
/// assert_eq!(redact_url("postgresql://app:S3CRET@/ids?host=/run/postgresql"), "postgresql://app:***@/ids?host=/run/postgresql");
/// assert_eq!(redact_url("mysql://app:S3C/RET@db/ids"), "mysql://***@db/ids");
/// // A user name alone is masked too (a password written where the user goes stays hidden).
/// assert_eq!(redact_url("mysql://app@db/ids?password=S3CRET"), "mysql://***@db/ids?password=***");
/// ```
#[cfg(feature = "std")]
pub fn redact_url(url: &str) -> String {
    let start = url.find("://").map_or(0, |i| i + 3);
    let scheme = &url[..start];
    let rest = &url[start..];
    // Masked ranges of `url` (byte offsets).
    let mut masked: Vec<(usize, usize)> = vec![];
    // `host[:port],…` and the path a scheme takes: a database number, a Sentinel master (and
    // a database); a unix socket's path is any.
    let authority = |text: &str| {
        let end = text.find(['/', '?', '#']).unwrap_or(text.len());
        let path_end = text.find(['?', '#']).unwrap_or(text.len());
        let path = text[end..path_end].strip_prefix('/').unwrap_or("");
        let db = |d: &str| d.bytes().all(|c| c.is_ascii_digit());
        let path_ok = match scheme {
            "redis://" | "rediss://" => db(path),
            "redis+sentinel://" | "rediss+sentinel://" => {
                let (master, rest) = path.split_once('/').unwrap_or((path, ""));
                master.bytes().all(|c| c.is_ascii_alphanumeric() || b"._-".contains(&c)) && db(rest)
            }
            "redis+cluster://" | "rediss+cluster://" => path.is_empty(),
            // A database name.
            "postgres://" | "postgresql://" | "mysql://" => {
                path.bytes().all(|c| c.is_ascii_alphanumeric() || b"._-".contains(&c))
            }
            _ => true,
        };
        // Query pairs are `key=value` with keys the addresses take (a secret's value is
        // masked below); anything else may be a password's end.
        let query_ok = match text[path_end..].strip_prefix('?') {
            None => !text[path_end..].starts_with('?'),
            Some(query) => query.split('&').all(|pair| {
                pair.split_once('=').is_some_and(|(k, _)| {
                    is_secret_key(k)
                        || [
                            "db",
                            "protocol",
                            "user",
                            "username",
                            "sentinel_username",
                            "sslmode",
                            "host",
                            "port",
                            "dbname",
                            "socket",
                            "prefer_socket",
                            "application_name",
                            "connect_timeout",
                        ]
                        .contains(&k)
                })
            }),
        };
        // A list of hosts only where the scheme takes one (Sentinel, a cluster): in a plain
        // address `app:9,S3CRET` is a password's text, not two hosts.
        let hosts_ok = if scheme.contains("+sentinel") || scheme.contains("+cluster") {
            text[..end].split(',').all(is_host_port)
        } else {
            is_host_port(&text[..end])
        };
        path_ok && query_ok && hosts_ok
    };
    match rest.rfind('@') {
        // What follows the userinfo must be a host: else the `@` was a password's.
        // (PostgreSQL's `user@/db?host=/run/postgresql` names no host: a unix socket.)
        Some(at)
            if authority(&rest[at + 1..])
                && (!rest[at + 1..].starts_with(['/', '?', '#'])
                    || (scheme.starts_with("postgres") && rest[at + 1..].starts_with('/'))) =>
        {
            let userinfo = &rest[..at];
            let from = match userinfo.split_once(':') {
                Some((user, _)) if !userinfo.contains(['/', '?', '#']) => start + user.len() + 1,
                _ => start,
            };
            masked.push((from, start + at));
        }
        Some(_) => masked.push((start, url.len())),
        None if !authority(rest) => masked.push((start, url.len())),
        None => {}
    }
    // Every `?` or `&` may start a pair (one in a password too): a secret key's value, and
    // all after it.
    for (i, c) in url.char_indices().skip_while(|&(i, _)| i < start) {
        if c == '?' || c == '&' {
            let pair = &url[i + 1..];
            let key_end = pair.find(['=', '&', '?', '#', '/']).unwrap_or(pair.len());
            if pair[key_end..].starts_with('=') && is_secret_key(&pair[..key_end]) {
                masked.push((i + 1 + key_end + 1, url.len()));
            }
        }
    }
    if let Some(hash) = rest.find('#') {
        masked.push((start + hash, url.len()));
    }
    masked.sort_unstable();
    let mut out = String::with_capacity(url.len());
    let mut at = 0;
    for (from, to) in masked {
        if to <= at {
            continue;
        }
        if from > at {
            out.push_str(&url[at..from]);
            out.push_str("***");
        } else if !out.ends_with("***") {
            out.push_str("***");
        }
        at = to;
    }
    out.push_str(&url[at.min(url.len())..]);
    out
}

/// Whether `text` is `host`, `host:port`, `[v6]` or `[v6]:port` (or empty: `unix:///path`).
#[cfg(feature = "std")]
fn is_host_port(text: &str) -> bool {
    let (host, port) = match text.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((addr, after)) if addr.bytes().all(|c| c.is_ascii_hexdigit() || b":.%".contains(&c)) => {
                (None, after.strip_prefix(':').or(if after.is_empty() { Some("") } else { None }))
            }
            _ => return false,
        },
        None => match text.split_once(':') {
            Some((host, port)) if !host.is_empty() && !port.is_empty() => (Some(host), Some(port)),
            Some(_) => return false,
            None => (Some(text), Some("")),
        },
    };
    host.is_none_or(|h| h.bytes().all(|c| c.is_ascii_alphanumeric() || b".-_%".contains(&c)))
        && port.is_some_and(|p| p.bytes().all(|c| c.is_ascii_digit()))
}

/// Whether a query key names a secret: it contains `pass`, `pwd`, `secret` or `token`, in any
/// case.
#[cfg(feature = "std")]
fn is_secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    ["pass", "pwd", "secret", "token"].iter().any(|s| key.contains(s))
}

impl Options {
    /// The defaults: no drift, wait up to 1 s, sequence from 0, no rollover, the process's
    /// shared state for its identity.
    pub const DEFAULT: Options = Options {
        max_drift_ms: 0,
        max_wait_ms: 1000,
        sequence_start: SequenceStart::Zero,
        rollover: None,
        isolated: false,
        process_only: false,
        #[cfg(feature = "std")]
        shared: None,
        #[cfg(feature = "std")]
        state_file: None,
        #[cfg(feature = "std")]
        state_window_ms: None,
        #[cfg(feature = "std")]
        lease: None,
        #[cfg(feature = "std")]
        lease_field: None,
        #[cfg(feature = "std")]
        lease_ttl_ms: None,
        #[cfg(feature = "std")]
        max_clock_skew_ms: None,
        #[cfg(feature = "std")]
        lease_password_file: None,
        #[cfg(feature = "std")]
        lease_tls_ca: None,
        #[cfg(feature = "std")]
        lease_tls_cert: None,
        #[cfg(feature = "std")]
        lease_tls_key: None,
    };

    /// The bit of the rollover field's index in `layout`'s fields (0 without one): a field the
    /// generator sets itself, which node values leave out.
    pub fn rollover_bit(&self, layout: &crate::Layout) -> u16 {
        self.rollover.and_then(|r| layout.field(r.as_str())).map_or(0, |(i, _)| 1 << i)
    }

    /// The policy the generator keeps.
    pub const fn policy(&self) -> Policy {
        Policy {
            max_drift_ms: self.max_drift_ms,
            max_wait_ms: self.max_wait_ms,
            sequence_start: self.sequence_start,
            rollover: self.rollover,
        }
    }

    /// Parses `key=value` pairs separated by `;` (empty text: the defaults). A value cannot
    /// hold `;` here: use [`Options::set_text`] for such a value. Combinations are checked
    /// when a generator is opened with the options ([`Options::check_combinations`]).
    pub fn parse(text: &str) -> Result<Options> {
        Options::from_pairs(Options::text_pairs(text))
    }

    /// The `(key, value)` pairs of the text form `key=value;…`, trimmed, empty items skipped.
    pub fn text_pairs(text: &str) -> impl Iterator<Item = Result<(&str, &str)>> {
        text.split(';').map(str::trim).filter(|s| !s.is_empty()).map(|item| {
            item.split_once('=').map(|(k, v)| (k.trim(), v.trim())).ok_or(bad(
                item,
                "options are written `key=value`, separated by `;` (node values are separated by `,`)",
            ))
        })
    }

    /// Options from `(key, value-text)` pairs (the CLI's flags and its `--options` text,
    /// say): each set with [`Options::set_text`]; a key given twice is an error.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = Result<(&'a str, &'a str)>>) -> Result<Options> {
        let mut o = Options::DEFAULT;
        o.set_pairs(pairs, &mut [false; OPTIONS.len()])?;
        Ok(o)
    }

    /// Sets each `(key, value-text)` pair, marking its key in `seen` (by its index in
    /// [`OPTIONS`]): a key already seen is an error. The one reading of the text form
    /// ([`Options::from_pairs`], and the environment's `GivenOptions`).
    pub(crate) fn set_pairs<'a>(
        &mut self,
        pairs: impl IntoIterator<Item = Result<(&'a str, &'a str)>>,
        seen: &mut [bool; OPTIONS.len()],
    ) -> Result<()> {
        for pair in pairs {
            let (key, value) = pair?;
            if let Some(r) = retired(key) {
                return Err(bad(r.name, r.reason));
            }
            let index = OPTIONS.iter().position(|s| s.name == key).ok_or(Error::UnknownOption {
                name: Name::snippet(key),
                spelling: Spelling::Snake,
                known: OPTION_NAMES,
            })?;
            if core::mem::replace(&mut seen[index], true) {
                return Err(bad(key, "the option is given twice"));
            }
            self.set_text(key, value)?;
        }
        Ok(())
    }

    /// [`Options::set`] for a front end whose options are keyword arguments (Python): an
    /// unknown name is [`Error::UnknownKeyword`], of kind [`crate::ErrorKind::Type`], as
    /// Python raises `TypeError` for an unexpected keyword; the message lists the options. A
    /// retired option is refused with its reason, as everywhere.
    ///
    /// ```
    /// use snowflake_core::{Error, ErrorKind, Options, Value};
    /// let err = Options::default().set_keyword("max_wait", Value::Int(0)).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::Type);
    /// assert!(err.to_string().contains("max_wait_ms"));
    /// let err = Options::default().set_keyword("run_lock", Value::Bool(true)).unwrap_err();
    /// assert!(err.to_string().contains("run_lock was retired"));
    /// ```
    pub fn set_keyword(&mut self, name: &str, value: Value<'_>) -> Result<()> {
        if let Some(r) = retired(name) {
            return Err(bad(r.name, r.reason));
        }
        let spec = OPTIONS
            .iter()
            .find(|o| o.name == name)
            .ok_or(Error::UnknownKeyword { name: Name::snippet(name), known: OPTION_NAMES })?;
        self.set_spec(spec, name, value)
    }

    /// Sets one option from its text form (as in `key=value`, but the value may hold `;`,
    /// `=` and spaces: for C's one-at-a-time call and the CLI's flags). A refused value that
    /// holds another option after a `,` gets the hint that options are separated by `;`,
    /// whichever way the text came (the CLI's `--options`, its flags, C, the environment).
    ///
    /// ```
    /// use snowflake_core::Options;
    /// let err = Options::default().set_text("max_wait_ms", "0,max_drift_ms=5").unwrap_err();
    /// assert!(err.to_string().contains("separated by `;`"), "{err}");
    /// ```
    pub fn set_text(&mut self, name: &str, text: &str) -> Result<()> {
        self.set_text_alone(name, text).map_err(|e| comma_hint(name, text).unwrap_or(e))
    }

    fn set_text_alone(&mut self, name: &str, text: &str) -> Result<()> {
        let spec = Options::spec(name, Spelling::Snake)?;
        let value = match spec.ty {
            OptionType::Integer { min, max } => {
                Value::Int(i128::from(parse_integer(spec.name, text, min, max)?))
            }
            OptionType::Bool => match bool_of_text(text) {
                Some(b) => Value::Bool(b),
                None => {
                    return Err(Error::WrongType {
                        name: Name::snippet(name),
                        expected: "`true` or `false`",
                        got: format_name(format_args!("`{text}`")),
                    })
                }
            },
            OptionType::Text | OptionType::Path => Value::Text(text),
        };
        self.set_spec(spec, name, value)
    }

    /// Sets one option from a front end's native value (see [`Value`]); `name` in the snake
    /// or camel spelling. A value of the wrong type is [`Error::OptionType`]; one out of range
    /// [`Error::OptionRange`]; [`Value::Unset`] restores the default.
    ///
    /// ```
    /// use snowflake_core::{Error, Options, Value};
    /// let mut o = Options::default();
    /// o.set("maxWaitMs", Value::Float(0.0)).unwrap();
    /// assert_eq!(o.max_wait_ms, 0);
    /// assert!(matches!(o.set("max_wait_ms", Value::Text("5")), Err(Error::WrongType { .. })));
    /// assert!(matches!(o.set("max_wait_ms", Value::Int(-1)), Err(Error::ValueRange { .. })));
    /// ```
    pub fn set(&mut self, name: &str, value: Value<'_>) -> Result<()> {
        let spelling =
            if name.contains(|c: char| c.is_ascii_uppercase()) { Spelling::Camel } else { Spelling::Snake };
        self.set_spelled(name, spelling, value)
    }

    /// [`Options::set`] for a front end with one spelling of names (Node: camel, Python and
    /// PHP: snake): a name in another spelling is [`Error::UnknownOption`], listing the names
    /// in this one.
    pub fn set_spelled(&mut self, name: &str, spelling: Spelling, value: Value<'_>) -> Result<()> {
        let spec = Options::spec(name, spelling)?;
        self.set_spec(spec, name, value)
    }

    fn spec(name: &str, spelling: Spelling) -> Result<&'static OptionSpec> {
        if let Some(r) = retired(name) {
            return Err(bad(r.name, r.reason));
        }
        OPTIONS.iter().find(|o| o.spelled(spelling).as_str() == name).ok_or(Error::UnknownOption {
            name: Name::snippet(name),
            spelling,
            known: OPTION_NAMES,
        })
    }

    /// Sets `spec` to `value`; errors name the option as the caller spelled it (`shown`).
    fn set_spec(&mut self, spec: &'static OptionSpec, shown: &str, value: Value<'_>) -> Result<()> {
        let name = spec.name;
        let wrong = |value: &Value<'_>| Error::WrongType {
            name: Name::snippet(shown),
            expected: match spec.ty {
                OptionType::Integer { .. } => "a whole number",
                OptionType::Bool => "true or false",
                OptionType::Text => "a string",
                OptionType::Path => "a path",
            },
            got: Name::snippet(value.type_name()),
        };
        if let Value::Unset = value {
            self.reset(name);
            return Ok(());
        }
        if let Some(feature) = spec.feature {
            if !feature_enabled(feature) {
                return Err(Error::MissingFeature { option: Name::snippet(shown), feature });
            }
        }
        match spec.ty {
            OptionType::Integer { min, max } => self.set_integer(name, value.whole(shown, min, max)?),
            OptionType::Bool => match value {
                Value::Bool(b) => self.set_bool(name, b),
                other => Err(wrong(&other)),
            },
            OptionType::Text => match value {
                Value::Text(t) => self.set_str(name, t),
                other => Err(wrong(&other)),
            },
            OptionType::Path => match value {
                Value::Text(t) if t.is_empty() => Err(bad(shown, "needs a path")),
                #[cfg(feature = "std")]
                Value::Text(t) => self.set_path(name, std::path::Path::new(t)),
                #[cfg(feature = "std")]
                Value::Path(p) => self.set_path(name, p),
                other => Err(wrong(&other)),
            },
        }
    }

    /// Puts option `name` back to its default.
    fn reset(&mut self, name: &str) {
        let d = Options::DEFAULT;
        match name {
            "max_drift_ms" => self.max_drift_ms = d.max_drift_ms,
            "max_wait_ms" => self.max_wait_ms = d.max_wait_ms,
            "sequence_start" => self.sequence_start = d.sequence_start,
            "rollover" => self.rollover = d.rollover,
            "isolated" => self.isolated = d.isolated,
            "process_only" => self.process_only = d.process_only,
            #[cfg(feature = "std")]
            "shared" => self.shared = None,
            #[cfg(feature = "std")]
            "state_file" => self.state_file = None,
            #[cfg(feature = "std")]
            "state_window_ms" => self.state_window_ms = None,
            #[cfg(feature = "std")]
            "lease" => self.lease = None,
            #[cfg(feature = "std")]
            "lease_field" => self.lease_field = None,
            #[cfg(feature = "std")]
            "lease_ttl_ms" => self.lease_ttl_ms = None,
            #[cfg(feature = "std")]
            "max_clock_skew_ms" => self.max_clock_skew_ms = None,
            #[cfg(feature = "std")]
            "lease_password_file" => self.lease_password_file = None,
            #[cfg(feature = "std")]
            "lease_tls_ca" => self.lease_tls_ca = None,
            #[cfg(feature = "std")]
            "lease_tls_cert" => self.lease_tls_cert = None,
            #[cfg(feature = "std")]
            "lease_tls_key" => self.lease_tls_key = None,
            _ => {}
        }
    }

    fn set_integer(&mut self, name: &str, n: u64) -> Result<()> {
        match name {
            "max_drift_ms" => self.max_drift_ms = n,
            "max_wait_ms" => self.max_wait_ms = n,
            #[cfg(feature = "std")]
            "state_window_ms" => self.state_window_ms = Some(n),
            #[cfg(feature = "std")]
            "lease_ttl_ms" => self.lease_ttl_ms = Some(n),
            #[cfg(feature = "std")]
            "max_clock_skew_ms" => self.max_clock_skew_ms = Some(n),
            _ => return Err(Error::MissingFeature { option: Name::snippet(name), feature: "std" }),
        }
        Ok(())
    }

    fn set_bool(&mut self, name: &str, b: bool) -> Result<()> {
        match name {
            "isolated" => self.isolated = b,
            "process_only" => self.process_only = b,
            _ => return Err(Error::MissingFeature { option: Name::snippet(name), feature: "std" }),
        }
        Ok(())
    }

    fn set_str(&mut self, name: &str, text: &str) -> Result<()> {
        match name {
            "sequence_start" => self.sequence_start = SequenceStart::parse(text)?,
            "rollover" | "lease_field" => {
                if !Name::is_valid_field_name(text) {
                    return Err(bad(text, "names a node field of the layout"));
                }
                let field = Name::new(text);
                if name == "rollover" {
                    self.rollover = field;
                } else {
                    #[cfg(feature = "std")]
                    {
                        self.lease_field = field;
                    }
                }
            }
            #[cfg(feature = "std")]
            "shared" => {
                if !valid_shared_name(text) {
                    return Err(bad(
                        text,
                        "a shared name is 1 to 64 of A-Z a-z 0-9 . _ - (not starting with .)",
                    ));
                }
                self.shared = Some(text.into());
            }
            #[cfg(feature = "std")]
            "lease" => {
                self.lease = Some(match text {
                    "local" if feature_enabled("lease-local") => LeaseKind::Local,
                    "local" => {
                        return Err(Error::MissingFeature {
                            option: Name::snippet("lease"),
                            feature: "lease-local",
                        })
                    }
                    url => match LeaseScheme::of(url) {
                        // The address itself is checked when the lease is claimed.
                        Some(scheme) if scheme.built => LeaseKind::Store { scheme, url: url.into() },
                        Some(scheme) => {
                            return Err(Error::MissingFeature {
                                option: Name::snippet("lease"),
                                feature: scheme.feature,
                            })
                        }
                        None => return Err(no_store()),
                    },
                })
            }
            _ => return Err(Error::MissingFeature { option: Name::snippet(name), feature: "std" }),
        }
        Ok(())
    }

    #[cfg(feature = "std")]
    fn set_path(&mut self, name: &str, path: &std::path::Path) -> Result<()> {
        match name {
            "state_file" => self.state_file = Some(path.into()),
            "lease_password_file" => self.lease_password_file = Some(path.into()),
            "lease_tls_ca" => self.lease_tls_ca = Some(path.into()),
            "lease_tls_cert" => self.lease_tls_cert = Some(path.into()),
            "lease_tls_key" => self.lease_tls_key = Some(path.into()),
            _ => unreachable!("the table's path options"),
        }
        Ok(())
    }

    /// Whether option `name` is given (differs from its unset default).
    fn is_given(&self, name: &str) -> bool {
        match name {
            "rollover" => self.rollover.is_some(),
            "isolated" => self.isolated,
            "process_only" => self.process_only,
            #[cfg(feature = "std")]
            "shared" => self.shared.is_some(),
            #[cfg(feature = "std")]
            "state_file" => self.state_file.is_some(),
            #[cfg(feature = "std")]
            "lease" => self.lease.is_some(),
            #[cfg(feature = "std")]
            "lease_field" => self.lease_field.is_some(),
            #[cfg(feature = "std")]
            "lease_ttl_ms" => self.lease_ttl_ms.is_some(),
            #[cfg(feature = "std")]
            "max_clock_skew_ms" => self.max_clock_skew_ms.is_some(),
            #[cfg(feature = "std")]
            "lease_password_file" => self.lease_password_file.is_some(),
            #[cfg(feature = "std")]
            "lease_tls_ca" => self.lease_tls_ca.is_some(),
            #[cfg(feature = "std")]
            "lease_tls_cert" => self.lease_tls_cert.is_some(),
            #[cfg(feature = "std")]
            "lease_tls_key" => self.lease_tls_key.is_some(),
            _ => false,
        }
    }

    /// Refuses the combinations of [`CONFLICTS`] and [`NEEDS`].
    pub fn check_combinations(&self) -> Result<()> {
        for c in CONFLICTS {
            if self.is_given(c.a) && self.is_given(c.b) {
                return Err(bad(c.a, c.reason));
            }
        }
        for c in NEEDS {
            if self.is_given(c.a) && !self.is_given(c.b) {
                return Err(bad(c.a, c.reason));
            }
        }
        #[cfg(feature = "std")]
        if self.state_window_ms.is_some() && self.state_file.is_none() && self.lease.is_none() {
            return Err(bad(
                "state_window_ms",
                "state_window_ms is how far a state file or a lease reserves: give state_file or lease too",
            ));
        }
        #[cfg(feature = "std")]
        if self.shared.is_some() && self.lease == Some(LeaseKind::Local) {
            return Err(bad(
                "lease",
                "a host lease (lease with shared) needs a store across hosts (lease=redis://…, postgres://… or mysql://…): a local lease is one process's; with shared alone, a host's processes need no lease",
            ));
        }
        #[cfg(feature = "std")]
        if self.lease == Some(LeaseKind::Local) {
            for (name, given) in [
                ("lease_ttl_ms", self.lease_ttl_ms.is_some()),
                ("max_clock_skew_ms", self.max_clock_skew_ms.is_some()),
                ("lease_password_file", self.lease_password_file.is_some()),
                ("lease_tls_ca", self.lease_tls_ca.is_some()),
                ("lease_tls_cert", self.lease_tls_cert.is_some()),
            ] {
                if given {
                    return Err(bad(
                        name,
                        "this option is for a lease across hosts (Redis, PostgreSQL, MySQL); a local lease lives as long as its process and has no store",
                    ));
                }
            }
        } else if let Some(kind) = &self.lease {
            if self.max_drift_ms > LEASE_MAX_DRIFT_MS {
                return Err(bad(
                    "max_drift_ms",
                    "with a lease across hosts max_drift_ms is at most 1000 (LEASE_MAX_DRIFT_MS): every holder obeys this cap, so that after the store loses its data the next holder knows how far ahead an earlier one may have issued",
                ));
            }
            if !kind.tls() && (self.lease_tls_ca.is_some() || self.lease_tls_cert.is_some()) {
                return Err(bad(
                    if self.lease_tls_ca.is_some() { "lease_tls_ca" } else { "lease_tls_cert" },
                    "TLS certificates are for a lease address over TLS: rediss://, rediss+sentinel://, rediss+cluster://, or a database address with sslmode=require (verify-ca, verify-full)",
                ));
            }
        }
        Ok(())
    }
}

/// Whether this build has cargo feature `name`.
#[allow(clippy::match_like_matches_macro)] // each arm is its own `cfg!`
/// The refusal of a `lease=` that names no store. `Error` is `Copy`, so its text is static: a
/// test holds it to every form of [`crate::LEASE_SCHEMES`].
#[cfg(feature = "std")]
const NO_STORE: &str = "lease is `local`, or the address of a store across hosts: redis://[user[:password]@]host[:port][/db], rediss://… (TLS), unix:///path/redis.sock?db=N, redis+sentinel://host:port,host:port/master[/db], redis+cluster://host:port,host:port, postgres://user@host[:port]/db[?sslmode=require], or mysql://user@host[:port]/db[?sslmode=require]";

#[cfg(feature = "std")]
fn no_store() -> Error {
    bad("lease", NO_STORE)
}

// Each arm is a `cfg!`, true or false by the build: a `matches!` would hide which is which.
#[allow(clippy::match_like_matches_macro)]
const fn feature_enabled(name: &str) -> bool {
    match name.as_bytes() {
        b"shared" => cfg!(feature = "shared"),
        b"state-file" => cfg!(feature = "state-file"),
        b"lease-local" => cfg!(feature = "lease-local"),
        b"lease-remote" => cfg!(feature = "lease-remote"),
        b"redis-script" => cfg!(feature = "redis-script"),
        b"std" => cfg!(feature = "std"),
        _ => false,
    }
}

impl fmt::Display for SequenceStart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SequenceStart::Zero => f.write_str("zero"),
            SequenceStart::Spread(k) => write!(f, "spread:{k}"),
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "max_drift_ms={};max_wait_ms={};sequence_start={}",
            self.max_drift_ms, self.max_wait_ms, self.sequence_start
        )?;
        if let Some(r) = &self.rollover {
            write!(f, ";rollover={r}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Options {
    /// The text form, which [`Options::parse`] reads back (a path or name holding `;` aside).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.policy())?;
        if self.isolated {
            f.write_str(";isolated=true")?;
        }
        if self.process_only {
            f.write_str(";process_only=true")?;
        }
        #[cfg(feature = "std")]
        {
            if let Some(s) = &self.shared {
                write!(f, ";shared={s}")?;
            }
            if let Some(p) = &self.state_file {
                write!(f, ";state_file={}", p.display())?;
            }
            if let Some(ms) = self.state_window_ms {
                write!(f, ";state_window_ms={ms}")?;
            }
            match &self.lease {
                Some(LeaseKind::Local) => f.write_str(";lease=local")?,
                Some(kind) => write!(f, ";lease={}", redact_url(kind.address().unwrap_or_default()))?,
                None => {}
            }
            if let Some(field) = &self.lease_field {
                write!(f, ";lease_field={field}")?;
            }
            if let Some(ms) = self.lease_ttl_ms {
                write!(f, ";lease_ttl_ms={ms}")?;
            }
            if let Some(ms) = self.max_clock_skew_ms {
                write!(f, ";max_clock_skew_ms={ms}")?;
            }
            for (name, path) in [
                ("lease_password_file", &self.lease_password_file),
                ("lease_tls_ca", &self.lease_tls_ca),
                ("lease_tls_cert", &self.lease_tls_cert),
                ("lease_tls_key", &self.lease_tls_key),
            ] {
                if let Some(p) = path {
                    write!(f, ";{name}={}", p.display())?;
                }
            }
        }
        Ok(())
    }
}

/// Where one of a generator's values came from: the code that made it, an environment
/// variable (`SNOWFLAKE_LAYOUT`, `SNOWFLAKE_NODE`, `SNOWFLAKE_OPTIONS`), or the default.
///
/// ```
/// use snowflake_core::Source;
/// assert_eq!(Source::Environment("SNOWFLAKE_NODE").as_str(), "SNOWFLAKE_NODE");
/// assert_eq!(Source::Default.to_string(), "default");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    /// Nobody gave it: the default.
    Default,
    /// The code that made the generator gave it.
    Code,
    /// The environment variable named.
    Environment(&'static str),
}

impl Source {
    /// `default`, `code`, or the variable's name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Source::Default => "default",
            Source::Code => "code",
            Source::Environment(variable) => variable,
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a generator's layout, node values and each option came from (see
/// `Config` in the `env` module, which records it, and `Generator::provenance`).
/// `Display` writes `layout=SOURCE;node=SOURCE;OPTION=SOURCE;…` in the table's order.
///
/// ```
/// use snowflake_core::{Provenance, Source};
/// let p = Provenance::CODE;
/// assert_eq!(p.option("max_wait_ms"), Some(Source::Code));
/// assert_eq!(p.iter().next(), Some(("layout", Source::Code)));
/// assert!(p.to_string().starts_with("layout=code;node=code;max_drift_ms=code;"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Provenance {
    /// Where the layout came from.
    pub layout: Source,
    /// Where the node values came from.
    pub node: Source,
    /// Where each option came from, in the order of [`OPTIONS`].
    pub options: [Source; OPTIONS.len()],
}

impl Provenance {
    /// Everything from the code: what a generator made by `Generator::new` records (the code
    /// handed over every value, defaults included).
    pub const CODE: Provenance =
        Provenance { layout: Source::Code, node: Source::Code, options: [Source::Code; OPTIONS.len()] };

    /// Where option `name` (snake_case) came from; `None` for a name not in the table.
    pub fn option(&self, name: &str) -> Option<Source> {
        OPTIONS.iter().position(|o| o.name == name).map(|i| self.options[i])
    }

    /// `("layout", source)`, `("node", source)`, then each option's name and source.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, Source)> + '_ {
        [("layout", self.layout), ("node", self.node)]
            .into_iter()
            .chain(OPTIONS.iter().zip(self.options.iter()).map(|(o, s)| (o.name, *s)))
    }
}

impl fmt::Display for Provenance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (name, source)) in self.iter().enumerate() {
            write!(f, "{}{name}={source}", if i == 0 { "" } else { ";" })?;
        }
        Ok(())
    }
}

#[cfg(all(test, feature = "std"))]
mod tests {
    #[test]
    fn the_refusal_of_an_address_of_no_store_lists_every_form_of_every_store() {
        for scheme in &crate::LEASE_SCHEMES {
            for form in scheme.forms.split(", ") {
                assert!(super::NO_STORE.contains(form), "{}: {form}", scheme.name);
            }
        }
    }
}
