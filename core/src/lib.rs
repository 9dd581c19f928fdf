//! # snowflake-core
//!
//! Snowflake-style 64-bit, time-ordered, unique IDs: the one implementation behind
//! libsnowflake's C, C++, PHP, Python and Node bindings, which all produce bit-for-bit the
//! same IDs.
//!
//! - [`Layout`]: the bit fields of an ID (`time:41,datacenter:5,worker:5,sequence:12;epoch=…;tick=1ms`,
//!   or a preset such as `twitter`), decoding, composing and range-query bounds.
//! - [`Generator`]: lock-free (one `AtomicU64`, one compare-and-swap an ID or a block of IDs),
//!   with explicit policies for full ticks and clocks that go back (`max_drift_ms`,
//!   `max_wait_ms`, `rollover`), fork detection, and one shared state per identity within a
//!   process.
//! - [`encode`] / [`decode_str`]: fixed-width, sortable strings (hex, Crockford base32, base36,
//!   base58, base62), strictly parsed, without allocating.
//! - `PublicIds` (feature `public-ids`): IDs encrypted with Speck64/128 into fixed-width texts
//!   that hide their time and order; `sql` (feature `sql`) and `redis_script` (feature
//!   `redis-script`): the same IDs issued inside PostgreSQL and Redis.
//!
//! `#![no_std]` without the default `std` feature: layouts, encodings and isolated
//! generators over a [`ManualClock`] or your own [`Clock`] still work.
//!
//! # Modules, and what each may use
//!
//! Dependencies point one way: a module uses only those listed below it.
//!
//! | module | what it is | may use |
//! |---|---|---|
//! | `env` | (`std`) configuration from the environment (`SNOWFLAKE_LAYOUT`, `SNOWFLAKE_NODE`, `SNOWFLAKE_OPTIONS`) for what the code left unset, and where each value came from | everything below |
//! | `coord` | (`std`) what a generator's state is shared with, in three rooms: `registry` (this process: one state per identity, the fork gate); `arbiter/` (the host: its one record of each identity, which every way of issuing meets before it issues, the listing of `snowflake shared`, and the local lease, a client of the record) and the state file (`state-file`) beside it; `lease/` (beyond the host: one protocol, the host lease, and one file per store: Redis, PostgreSQL, MySQL) | everything below |
//! | `plan` | the capacity planner: does a layout fit a fleet's hosts, peak and years; a layout that does | `layout`, `time` |
//! | `redis_script`, `sql`, `public` | code for other systems: (`redis-script`) the Lua script that issues a layout's IDs inside Redis; (`sql`) the PL/pgSQL that issues, bounds and decodes them inside PostgreSQL; (`public-ids`) `PublicIds`, IDs encrypted for the world to see | the ground floor |
//! | `generator` | the lock-free state machine over one 64-bit word; knows a state cell and an optional high-water mark, never which backend provides them; the state word's format; [`Pool`]; the stats table ([`STATS`]) | the ground floor |
//! | `options` | the option table ([`OPTIONS`]): every option's name, type, range, default, doc and refused combinations; [`Options`] set one key at a time or parsed from text | `layout` (a rollover field is one of its fields), the ground floor |
//! | `sys` | (`std`) every `unsafe` system call, one file per OS family: the monotonic clock, the one function that opens every file, locks and what the kernel lists of them, mappings guarded against truncation, the fork hooks; the fork gate and the locks a child of `fork()` does not keep | `hash` (Windows names its objects by a hash of the path) |
//! | `clock` | [`Clock`], [`ManualClock`]; with `std` the system and monotonic clocks | `sys` |
//! | `uuid` | the UUIDv7 view of a layout's IDs (`Layout::to_uuid`, `from_uuid`), UUID text | `layout`, `error` |
//! | `layout`, `value`, `encoding`, `error`, `limits`, `time`, `text`, `hash` | the `no_std` ground floor: layouts, [`Value`] (a front end's value and the one range check), encodings, the one error type and its table of kinds ([`KINDS`]), the numbers several modules share ([`MAX_FIELDS`], [`AHEAD_SLACK_MS`], [`RECORD_AHEAD_MS`]), RFC 3339, inline names, hashes | each other, one way: `layout` → `value` → `error` → `limits`, `text`, `hash` |
//!
//! ```
//! use snowflake_core::{Generator, Layout, Options, encode, Encoding};
//!
//! let layout = Layout::parse("time:41,datacenter:5,worker:5,sequence:12;epoch=2010-11-04T01:42:54.657Z;tick=1ms")?;
//! let node = layout.parse_node("datacenter=1,worker=7")?;
//! let generator = Generator::new(&layout, node, Options { max_wait_ms: 0, ..Options::default() })?;
//!
//! let id = generator.next_id()?;
//! let parts = layout.decode(id)?;
//! assert_eq!(layout.node_values(&parts.node).collect::<Vec<_>>(), [("datacenter", 1), ("worker", 7)]);
//! assert_eq!(encode(id, Encoding::Base62, false).len(), 11);
//!
//! let mut batch = [0u64; 1000];
//! generator.fill(&mut batch)?;
//! assert!(batch.windows(2).all(|w| w[0] < w[1]) && batch[0] > id);
//! # Ok::<(), snowflake_core::Error>(())
//! ```
#![cfg_attr(not(feature = "std"), no_std)]
#![warn(missing_docs)]
#![forbid(unsafe_op_in_unsafe_fn)]
// With only some of the coordination features, helpers that only the others use are unused;
// the full build (CI's clippy) still reports dead code.
#![cfg_attr(
    not(all(feature = "shared", feature = "state-file", feature = "lease-local", feature = "lease-redis")),
    allow(dead_code)
)]

mod clock;
#[cfg(feature = "std")]
mod coord;
mod encoding;
#[cfg(feature = "std")]
mod env;
mod error;
mod generator;
pub mod hash;
mod layout;
mod limits;
#[cfg(feature = "std")]
mod memo;
mod options;
pub mod plan;
#[cfg(feature = "public-ids")]
mod public;
#[cfg(feature = "redis-script")]
mod redis_script;
mod schemes;
#[cfg(feature = "serve")]
pub mod serve;
#[cfg(feature = "sql")]
mod sql;
#[cfg(feature = "std")]
mod sys;
mod text;
pub mod time;
mod uuid;
mod value;

pub use clock::{Clock, DefaultClock, ManualClock};
#[cfg(feature = "std")]
pub use clock::{MonotonicClock, SystemClock};
#[cfg(feature = "lease-remote")]
#[doc(hidden)]
pub use coord::lease_renewal_times;

/// For tests, not part of the API: whether the process's clock cache runs and its current
/// millisecond was read, the state in which the fast paths use it (a test in a child of
/// `fork()`, where the cache starts anew, waits for it).
#[doc(hidden)]
#[cfg(feature = "std")]
pub fn clock_cache_read() -> bool {
    clock::cache_word() & clock::CACHE_READ != 0
}
#[cfg(feature = "std")]
pub use coord::{
    container_note, find_shared_state, remove_shared_state, shared_path, shared_states, shm_dir, HostMark,
    HostState, SharedState,
};
pub use encoding::{decode_str, encode, Encoded, Encoding, MAX_ENCODED_LEN};
#[cfg(feature = "std")]
pub use env::{
    near_miss, Config, Environment, GivenOptions, DEFAULT_LAYOUT, ENV_LAYOUT, ENV_NODE, ENV_OPTIONS,
    ENV_REQUIRE_NODE,
};
#[cfg(feature = "std")]
pub use error::IoError;
pub use error::{
    DetailField, Details, Error, ErrorKind, KindInfo, LayoutError, ParseIdError, Result, DETAIL_FIELDS,
    HTTP_KINDS, KINDS,
};
pub use generator::{
    Block, FillError, Generator, Pool, StatSpec, StatType, StatValue, Stats, MAX_IDS_PER_CALL, STATS,
};
pub use layout::{
    years_of_ms, Field, FieldKind, Layout, LifetimeWarning, Node, Parts, LIFETIME_WARNING_YEARS, PRESETS,
};
pub use limits::{AHEAD_SLACK_MS, MAX_FIELDS, RECORD_AHEAD_MS};
#[cfg(feature = "std")]
pub use options::{bool_of_text, redact_url, LeaseKind, LEASE_MAX_DRIFT_MS, LEASE_MAX_WINDOW_MS};
pub use options::{
    valid_shared_name, Conflict, OptionSpec, OptionType, Options, Policy, Provenance, Retired, SequenceStart,
    Source, CONFLICTS, NEEDS, OPTIONS, OPTION_NAMES, RETIRED,
};
#[cfg(feature = "public-ids")]
pub use public::{PublicIds, PUBLIC_KEY_LEN};
#[cfg(feature = "redis-script")]
pub use redis_script::redis_script;
pub use schemes::{LeaseScheme, LeaseStore, TlsBy, LEASE_SCHEMES};
#[cfg(feature = "sql")]
pub use sql::{sql, SqlDialect, DEFAULT_SQL_PREFIX, SQL_MAX_DRIFT_MS};
pub use text::{text_distance, Name, Spelling, MAX_NAME_LEN};
pub use uuid::{format_uuid, parse_uuid, UuidText, UUID_MAX_UNIX_MS, UUID_TEXT_LEN};
pub use value::Value;

/// The crate's version, from Cargo.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The README's Rust examples, compiled and run as doctests.
#[cfg(all(doctest, feature = "std"))]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// docs/rust.md's examples, compiled and run as doctests.
#[cfg(all(doctest, feature = "std"))]
#[doc = include_str!("../../docs/rust.md")]
pub struct RustDocsDoctests;
