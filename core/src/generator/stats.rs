//! The stats table ([`STATS`]): every field of [`Stats`] as data, with its name, type, unit,
//! doc and how to read it. The front ends show stats by walking this table, never by naming
//! fields: the C struct (`ffi-c/src/stats_struct.rs`), the Python `.pyi`, Node's `Stats`
//! interface, PHP's `Stats` class and the docs are generated from it (through
//! `tests/vectors/tables.json` and `scripts/tables.py`), and the Python and Node bindings
//! build their stats objects by walking it. A new stat is one field of [`Stats`] and one row
//! here; rows are only ever appended, since the C struct's layout follows their order and a
//! program built against an older header reads the fields that were there then.

use super::Stats;
use crate::text::{Name, Spelling};

/// The type of a stat: how it is stored, and so how each language shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatType {
    /// A `u64` count that stays far below 2^63 (C `uint64_t`).
    Count,
    /// A `u64` duration in ms that stays far below 2^63 (C `uint64_t`).
    Ms,
    /// A `u64` in ms that may use all 64 bits: an instant, or a span to the layout's end
    /// (C `uint64_t`; PHP an `int`, or a decimal string above `PHP_INT_MAX`).
    WideMs,
    /// An optional `u64` below 2^63 (a node field's value): absent is `None` / `null` /
    /// `undefined`, and -1 in C's `int64_t`.
    OptionalU64,
    /// An optional `i64`: absent is `None` / `null` / `undefined`; C gives it a `bool` flag
    /// (named in the row's [`StatSpec::present`]) before the `int64_t`.
    OptionalI64,
    /// An `f64` (C `double`).
    F64,
}

impl StatType {
    /// The name `tests/vectors/tables.json` gives the type.
    pub const fn as_str(self) -> &'static str {
        match self {
            StatType::Count => "count",
            StatType::Ms => "ms",
            StatType::WideMs => "wide_ms",
            StatType::OptionalU64 => "optional_u64",
            StatType::OptionalI64 => "optional_i64",
            StatType::F64 => "f64",
        }
    }
}

/// One stat's value, as [`StatSpec::get`] reads it from [`Stats`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StatValue {
    /// A [`StatType::Count`], [`StatType::Ms`] or [`StatType::WideMs`].
    U64(u64),
    /// A [`StatType::OptionalU64`].
    OptionalU64(Option<u64>),
    /// A [`StatType::OptionalI64`].
    OptionalI64(Option<i64>),
    /// A [`StatType::F64`].
    F64(f64),
}

/// One row of [`STATS`].
#[derive(Clone, Copy, Debug)]
pub struct StatSpec {
    /// The snake_case name (C, Python; Node and PHP spell it camelCase: [`StatSpec::spelled`]).
    pub name: &'static str,
    /// How it is stored.
    pub ty: StatType,
    /// What it counts or measures in: `"IDs"`, `"ms"`, `"Unix ms"`, `"years"`, ...
    pub unit: &'static str,
    /// One line for the docs and the generated stubs.
    pub doc: &'static str,
    /// For a [`StatType::OptionalI64`], the name of C's `bool` that says it is present;
    /// `""` otherwise.
    pub present: &'static str,
    /// Reads the stat from [`Stats`].
    pub get: fn(&Stats) -> StatValue,
}

impl StatSpec {
    /// The name as `spelling` writes it.
    ///
    /// ```
    /// let spec = &snowflake_core::STATS[2];
    /// assert_eq!(spec.spelled(snowflake_core::Spelling::Camel).as_str(), "waitedMs");
    /// ```
    pub fn spelled(&self, spelling: Spelling) -> Name {
        spelling.spell(self.name)
    }
}

/// Every stat, in the order of C's `SnowflakeStats` (append only).
///
/// ```
/// use snowflake_core::{Generator, Layout, StatValue, Options, STATS};
/// let g = Generator::new(&Layout::parse("twitter").unwrap(), Default::default(), Options::default()).unwrap();
/// g.next_id().unwrap();
/// let s = g.stats();
/// let issued = STATS.iter().find(|spec| spec.name == "issued").unwrap();
/// assert_eq!((issued.get)(&s), StatValue::U64(1));
/// ```
pub const STATS: &[StatSpec] = &[
    StatSpec {
        name: "issued",
        ty: StatType::Count,
        unit: "IDs",
        doc: "IDs issued through this generator.",
        present: "",
        get: |s| StatValue::U64(s.issued),
    },
    StatSpec {
        name: "waits",
        ty: StatType::Count,
        unit: "waits",
        doc: "How many times it waited for the clock.",
        present: "",
        get: |s| StatValue::U64(s.waits),
    },
    StatSpec {
        name: "waited_ms",
        ty: StatType::Ms,
        unit: "ms",
        doc: "Total time spent waiting, in ms.",
        present: "",
        get: |s| StatValue::U64(s.waited_ms),
    },
    StatSpec {
        name: "clock_behind",
        ty: StatType::Count,
        unit: "times",
        doc: "How many times it found the clock behind by more than `max_drift_ms`.",
        present: "",
        get: |s| StatValue::U64(s.clock_behind),
    },
    StatSpec {
        name: "rollovers",
        ty: StatType::Count,
        unit: "times",
        doc: "How many times it bumped the rollover field.",
        present: "",
        get: |s| StatValue::U64(s.rollovers),
    },
    StatSpec {
        name: "drift_ms",
        ty: StatType::Ms,
        unit: "ms",
        doc: "How far ahead of the clock the shared state is now, in ms.",
        present: "",
        get: |s| StatValue::U64(s.drift_ms),
    },
    StatSpec {
        name: "lease_claims",
        ty: StatType::Count,
        unit: "claims",
        doc: "How many times a lease was claimed: 1 for a lease held since the generator opened, one more each time a lapsed lease was claimed again (0 without a lease).",
        present: "",
        get: |s| StatValue::U64(s.lease_claims),
    },
    StatSpec {
        name: "lease_losses",
        ty: StatType::Count,
        unit: "losses",
        doc: "How many times the lease lapsed: not renewed in time, or found taken or deleted.",
        present: "",
        get: |s| StatValue::U64(s.lease_losses),
    },
    StatSpec {
        name: "lease_value",
        ty: StatType::OptionalU64,
        unit: "value",
        doc: "The leased field's value the generator issues with now (absent without a lease).",
        present: "",
        get: |s| StatValue::OptionalU64(s.lease_value),
    },
    StatSpec {
        name: "last_unix_ms",
        ty: StatType::WideMs,
        unit: "Unix ms",
        doc: "The layout's last usable instant, in Unix ms.",
        present: "",
        get: |s| StatValue::U64(s.last_unix_ms),
    },
    StatSpec {
        name: "ms_left",
        ty: StatType::WideMs,
        unit: "ms",
        doc: "How long the layout has left by the generator's clock, in ms (0 once past its end).",
        present: "",
        get: |s| StatValue::U64(s.ms_left),
    },
    StatSpec {
        name: "years_left",
        ty: StatType::F64,
        unit: "years",
        doc: "`ms_left` in years of 365.2425 days.",
        present: "",
        get: |s| StatValue::F64(s.years_left()),
    },
    StatSpec {
        name: "clock_skew_ms",
        ty: StatType::OptionalI64,
        unit: "ms",
        doc: "This host's clock minus the lease store's (Redis `TIME`, the database's clock) at the last claim or renewal, in ms (absent without a lease across hosts).",
        present: "clock_skew_measured",
        get: |s| StatValue::OptionalI64(s.clock_skew_ms),
    },
    StatSpec {
        name: "skewed_renewals",
        ty: StatType::Count,
        unit: "renewals",
        doc: "How many renewals found the clocks further apart than `max_clock_skew_ms`.",
        present: "",
        get: |s| StatValue::U64(s.skewed_renewals),
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_row_reads_its_own_field_with_its_type() {
        // Distinct values in every field: a row that read another field would show it.
        let s = Stats {
            issued: 1,
            waits: 2,
            waited_ms: 3,
            clock_behind: 4,
            rollovers: 5,
            drift_ms: 6,
            lease_claims: 7,
            lease_losses: 8,
            lease_value: Some(9),
            last_unix_ms: 10,
            ms_left: 31_556_952_000,
            clock_skew_ms: Some(-12),
            skewed_renewals: 13,
        };
        let expected = [
            ("issued", StatValue::U64(1)),
            ("waits", StatValue::U64(2)),
            ("waited_ms", StatValue::U64(3)),
            ("clock_behind", StatValue::U64(4)),
            ("rollovers", StatValue::U64(5)),
            ("drift_ms", StatValue::U64(6)),
            ("lease_claims", StatValue::U64(7)),
            ("lease_losses", StatValue::U64(8)),
            ("lease_value", StatValue::OptionalU64(Some(9))),
            ("last_unix_ms", StatValue::U64(10)),
            ("ms_left", StatValue::U64(31_556_952_000)),
            ("years_left", StatValue::F64(1.0)),
            ("clock_skew_ms", StatValue::OptionalI64(Some(-12))),
            ("skewed_renewals", StatValue::U64(13)),
        ];
        assert_eq!(STATS.len(), expected.len());
        for (spec, (name, value)) in STATS.iter().zip(expected) {
            assert_eq!((spec.name, (spec.get)(&s)), (name, value));
        }
        for spec in STATS {
            let fits = matches!(
                (spec.ty, (spec.get)(&s)),
                (StatType::Count | StatType::Ms | StatType::WideMs, StatValue::U64(_))
                    | (StatType::OptionalU64, StatValue::OptionalU64(_))
                    | (StatType::OptionalI64, StatValue::OptionalI64(_))
                    | (StatType::F64, StatValue::F64(_))
            );
            assert!(fits, "{}: its type and its value disagree", spec.name);
            assert_eq!(spec.present.is_empty(), spec.ty != StatType::OptionalI64, "{}", spec.name);
        }
    }
}
