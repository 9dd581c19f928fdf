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

use super::arbiter::{Mode, Record, Refused, Request};
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

/// Claims the lowest value of `field` (index into `layout.fields()`) whose record no process
/// uses, for `node`'s other values.
pub(crate) fn claim(
    layout: &Layout,
    node: &Node,
    field: usize,
    policy: &Policy,
    word: Word,
) -> Result<LocalLease, Error> {
    let max = layout.fields()[field].max();
    let mut last_taken = None;
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
            Ok(record) => return Ok(LocalLease { value, record }),
            Err(Refused::Taken(e)) => last_taken = Some(e),
            Err(Refused::Failed(e)) => return Err(e),
        }
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
