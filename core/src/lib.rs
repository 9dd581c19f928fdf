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
//!   that hide their time and order; [`sql`] and [`redis_script`]: the same IDs issued inside
//!   PostgreSQL and Redis.
//!
//! `#![no_std]` without the default `std` feature: layouts, encodings and isolated
//! generators over a [`ManualClock`] or your own [`Clock`] still work.
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
//! generator.next_ids(&mut batch)?;
//! assert!(batch.windows(2).all(|w| w[0] < w[1]) && batch[0] > id);
//! # Ok::<(), snowflake_core::Error>(())
//! ```
#![cfg_attr(not(feature = "std"), no_std)]
#![warn(missing_docs)]
#![forbid(unsafe_op_in_unsafe_fn)]

mod clock;
#[cfg(all(feature = "std", unix))]
mod durable;
mod encoding;
mod error;
mod generator;
pub mod hash;
mod layout;
#[cfg(all(feature = "std", unix))]
mod lease;
mod options;
mod pool;
#[cfg(all(feature = "std", unix))]
mod process;
#[cfg(feature = "public-ids")]
mod public;
#[cfg(all(feature = "std", unix))]
mod redis_lease;
#[cfg(feature = "std")]
mod redis_script;
#[cfg(feature = "std")]
mod registry;
#[cfg(all(feature = "std", unix))]
mod resp;
#[cfg(all(feature = "std", unix))]
mod shared;
#[cfg(feature = "std")]
mod sql;
mod text;
pub mod time;

pub use clock::{Clock, DefaultClock, ManualClock};
#[cfg(feature = "std")]
pub use clock::{MonotonicClock, SystemClock};
pub use encoding::{decode_str, encode, Encoded, Encoding, MAX_ENCODED_LEN};
pub use error::{Error, ErrorKind, LayoutError, ParseIdError, Result};
pub use generator::{Block, Generator, Stats};
pub use layout::{Field, FieldKind, Layout, Node, Parts, MAX_FIELDS, PRESETS};
pub use options::{Options, SequenceStart};
pub use pool::Pool;
#[cfg(feature = "public-ids")]
pub use public::{PublicIds, PUBLIC_KEY_LEN};
#[cfg(feature = "std")]
pub use redis_script::redis_script;
#[cfg(feature = "std")]
pub use sql::{sql, SqlDialect, DEFAULT_SQL_PREFIX};
pub use text::{Name, MAX_NAME_LEN};
#[cfg(all(feature = "std", unix))]
pub use {
    lease::default_lease_dir,
    process::{Coordination, LeaseKind, OpenError},
    shared::{shared_path, shm_dir, IoError},
};

/// The crate's version, from Cargo.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The README's Rust examples, compiled and run as doctests.
#[cfg(all(doctest, feature = "std"))]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
