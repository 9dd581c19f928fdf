//! Worker-id leases on one host (`lease=local`): each process claims a distinct value of a
//! node field (the worker id) by holding the host's record of the identity with that value
//! alone (see `arbiter`, [`Mode::LocalLease`]). The kernel releases the hold when the process
//! dies, however it dies; the record's state word is the value's high-water mark, so the next
//! holder starts above whatever the last one issued, even if it died a microsecond ago.
//!
//! A lease is the record of the whole identity it hands out, not of a value of one field:
//! processes that lease different fields of one layout, or that were given the value by hand,
//! or that hold it as a Redis lease's, all meet on the same record, and only one of them
//! issues with it. Records live beside the host's other records (`SNOWFLAKE_SHM_DIR`, else
//! `/dev/shm`), so `TMPDIR`, systemd's `PrivateTmp` and temporary-file cleaners do not split a
//! host's leases.

use super::{Mode, Record, Refused, Request};
use crate::clock::Clock;
use crate::error::Error;
use crate::generator::Word;
use crate::layout::{Layout, Node};
use crate::options::Policy;
use std::sync::Arc;

/// A claimed value: its field, the value, and the record held.
pub(crate) struct LocalLease {
    pub value: u64,
    pub record: Arc<Record>,
}

/// How many more free values a claim looks at when the first one's IDs are ahead of the clock
/// (a Redis lease of it, say, started ahead of the clock and just let it go).
const LOOK_FURTHER: usize = 16;

/// Claims the lowest value of `field` (index into `layout.fields()`) whose record no process
/// uses, for `node`'s other values; preferring, among the first few free ones, one whose
/// last IDs the clock has passed (so that the first call need not wait, or fail).
pub(crate) fn claim(
    layout: &Layout,
    node: &Node,
    field: usize,
    policy: &Policy,
    word: Word,
) -> Result<LocalLease, Error> {
    let max = layout.fields()[field].max();
    let mut last_taken = None;
    let mut best: Option<(u64, LocalLease)> = None;
    let mut looked = 0;
    for value in 0..=max {
        let identity = node.with(field, value);
        let req = Request {
            layout,
            node: &identity,
            rollover: None,
            policy,
            state_file: None,
            host_lease: None,
            mode: Mode::LocalLease,
            label: None,
            floor: 0,
            reserved: u64::MAX,
            word,
            ahead_ms: policy.max_drift_ms,
        };
        match Record::hold(&req) {
            Ok(record) => {
                let clock = record.clock();
                let start_ms = layout.unix_ms_of(record.issued_end(word).min(layout.max_tick()));
                let wait_ms = start_ms.saturating_sub(clock.now_ms().saturating_add(policy.max_drift_ms));
                let lease = LocalLease { value, record };
                if wait_ms <= policy.max_wait_ms.min(50) {
                    return Ok(lease);
                }
                if best.as_ref().is_none_or(|(w, _)| wait_ms < *w) {
                    best = Some((wait_ms, lease)); // the one held before is let go
                }
                looked += 1;
                if looked > LOOK_FURTHER {
                    break;
                }
            }
            Err(Refused::Taken(e)) => last_taken = Some(e),
            Err(Refused::Failed(e)) => return Err(e),
        }
    }
    if let Some((_, lease)) = best {
        return Ok(lease);
    }
    let others: Vec<String> = layout
        .node_values(node)
        .filter(|(name, _)| *name != layout.fields()[field].name())
        .map(|(name, v)| format!("{name}={v}"))
        .collect();
    Err(Error::lease_unavailable(format_args!(
        "all {} values of `{}`{} are used by live processes of this host{}",
        max + 1,
        layout.fields()[field].name(),
        if others.is_empty() { String::new() } else { format!(" with {}", others.join(",")) },
        last_taken.map_or(String::new(), |e| format!(" (the last: {e})"))
    )))
}
