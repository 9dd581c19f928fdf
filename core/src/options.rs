//! Generator options and their text form (`max_drift_ms=50;max_wait_ms=0;sequence_start=spread:16`),
//! the one syntax of the C API, the CLI and environment variables.

use crate::error::{Error, Result};
use crate::text::Name;
use core::fmt;

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
}

/// How a generator behaves when the clock does not let it issue at once.
///
/// ```
/// use snowflake_core::{Options, SequenceStart};
/// let o = Options::parse("max_drift_ms=50;max_wait_ms=0;sequence_start=spread:16").unwrap();
/// assert_eq!((o.max_drift_ms, o.max_wait_ms, o.sequence_start), (50, 0, SequenceStart::Spread(16)));
/// assert_eq!(Options::parse(&o.to_string()), Ok(o));
/// assert!(Options::parse("max_wait=3").is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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
    /// Give the generator a state of its own instead of the one every generator of this
    /// process with the same layout and node values shares: for tests and replays of
    /// [`crate::Generator::next_id_at`] traces. Two isolated generators with the same node
    /// values can issue the same IDs.
    pub isolated: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options::DEFAULT
    }
}

fn bad(name: &str, reason: &'static str) -> Error {
    Error::BadOption { name: Name::snippet(name), reason }
}

fn number(name: &str, value: &str) -> Result<u64> {
    if value.is_empty() || !value.bytes().all(|c| c.is_ascii_digit()) {
        return Err(bad(name, "must be a non-negative integer"));
    }
    value.parse().map_err(|_| bad(name, "does not fit in 64 bits"))
}

impl Options {
    /// The defaults: no drift, wait up to 1 s, sequence from 0, no rollover.
    pub const DEFAULT: Options = Options {
        max_drift_ms: 0,
        max_wait_ms: 1000,
        sequence_start: SequenceStart::Zero,
        rollover: None,
        isolated: false,
    };

    /// Parses `key=value` pairs separated by `;` (empty text: the defaults). The keys:
    /// `max_drift_ms`, `max_wait_ms`, `sequence_start` (`zero` or `spread:K`), `rollover`
    /// (a node field name), `isolated` (`true` or `false`).
    pub fn parse(spec: &str) -> Result<Options> {
        let mut o = Options::DEFAULT;
        let mut seen = [false; 5];
        for item in spec.split(';').map(str::trim).filter(|s| !s.is_empty()) {
            let (key, value) = item
                .split_once('=')
                .map(|(k, v)| (k.trim(), v.trim()))
                .ok_or(bad(item, "options are written `key=value`, separated by `;`"))?;
            let slot = match key {
                "max_drift_ms" => 0,
                "max_wait_ms" => 1,
                "sequence_start" => 2,
                "rollover" => 3,
                "isolated" => 4,
                _ => {
                    return Err(bad(
                        key,
                        "unknown option (max_drift_ms, max_wait_ms, sequence_start, rollover, isolated)",
                    ))
                }
            };
            if core::mem::replace(&mut seen[slot], true) {
                return Err(bad(key, "the option is given twice"));
            }
            match slot {
                0 => o.max_drift_ms = number(key, value)?,
                1 => o.max_wait_ms = number(key, value)?,
                2 => o.sequence_start = Options::parse_sequence_start(value)?,
                4 => {
                    o.isolated = match value {
                        "true" | "1" => true,
                        "false" | "0" => false,
                        _ => return Err(bad(key, "isolated is `true` or `false`")),
                    }
                }
                _ => {
                    if !Name::is_valid_field_name(value) {
                        return Err(bad(value, "rollover names a node field of the layout"));
                    }
                    o.rollover = Name::new(value);
                }
            }
        }
        Ok(o)
    }

    /// Parses `zero` or `spread:K`.
    pub fn parse_sequence_start(value: &str) -> Result<SequenceStart> {
        if value == "zero" {
            return Ok(SequenceStart::Zero);
        }
        match value.strip_prefix("spread:") {
            Some(k) => match number("sequence_start", k)? {
                0 => Err(bad("sequence_start", "spread:K needs K >= 1")),
                k => Ok(SequenceStart::Spread(k)),
            },
            None => Err(bad(value, "sequence_start is `zero` or `spread:K`")),
        }
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

impl fmt::Display for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "max_drift_ms={};max_wait_ms={};sequence_start={}",
            self.max_drift_ms, self.max_wait_ms, self.sequence_start
        )?;
        if let Some(r) = &self.rollover {
            write!(f, ";rollover={r}")?;
        }
        if self.isolated {
            f.write_str(";isolated=true")?;
        }
        Ok(())
    }
}
