//! C's view of each type of stat in core's stats table, which the generated
//! `stats_struct.rs` picks by the row's type: C has no null, so an absent optional value is
//! -1 (a node field's value, at most 63 bits) or a flag beside the value.

use snowflake_core::{StatValue, Stats, STATS};

/// Row `name` of core's stats table, read from `s`: `stats_struct.rs` (generated from the
/// same table) names only rows that exist, so a miss is a bug, caught as a panic.
fn stat(s: &Stats, name: &str) -> StatValue {
    match STATS.iter().find(|row| row.name == name) {
        Some(row) => (row.get)(s),
        None => panic!("SnowflakeStats names {name}, which core's stats table does not have"),
    }
}

pub(crate) fn u64_of(s: &Stats, name: &str) -> u64 {
    match stat(s, name) {
        StatValue::U64(v) => v,
        other => panic!("stat {name} is {other:?}, not a u64"),
    }
}

pub(crate) fn f64_of(s: &Stats, name: &str) -> f64 {
    match stat(s, name) {
        StatValue::F64(v) => v,
        other => panic!("stat {name} is {other:?}, not an f64"),
    }
}

/// -1 when absent: the value is a node field's, of at most 63 bits.
pub(crate) fn optional_u64_of(s: &Stats, name: &str) -> i64 {
    match stat(s, name) {
        StatValue::OptionalU64(v) => {
            v.map_or(-1, |v| i64::try_from(v).expect("a node field has at most 63 bits"))
        }
        other => panic!("stat {name} is {other:?}, not an optional u64"),
    }
}

pub(crate) fn is_present(s: &Stats, name: &str) -> bool {
    match stat(s, name) {
        StatValue::OptionalI64(v) => v.is_some(),
        StatValue::OptionalU64(v) => v.is_some(),
        other => panic!("stat {name} is {other:?}, not optional"),
    }
}

pub(crate) fn optional_i64_of(s: &Stats, name: &str) -> i64 {
    match stat(s, name) {
        StatValue::OptionalI64(v) => v.unwrap_or(0),
        other => panic!("stat {name} is {other:?}, not an optional i64"),
    }
}
