//! Who may issue with an identity (a layout and node values) beside whom: the ways of issuing,
//! and the terms that generators sharing one state must agree on. One table of each, read by
//! the in-process registry (`super::registry`) and by the host's record (`super::arbiter`), so
//! that a disagreement is found by one rule and told in one message, whether the other
//! generator is in this process or in another.

use crate::error::Error;
use crate::layout::Layout;
use crate::options::SequenceStart;

/// A way of issuing with an identity, as the host's record stores it (the number is the word
/// in its header, so it never changes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The default, and `shared=NAME`: every such process of the user shares the state word.
    Host = 1,
    /// `process_only`: this process alone issues with the identity, from the state word.
    Alone = 2,
    /// `lease=local`: the value this process holds alone, and its state word.
    LocalLease = 3,
    /// A clock of the caller's: this process alone uses the identity, from a state of its
    /// own.
    Guard = 4,
    /// The value a lease across hosts holds (of one process, or a host's): shared only with
    /// other leases of it, between which the store decides (a lapsed holder issues nothing).
    LeaseGuard = 5,
    /// A host lease's own state (another key: the identity but the leased field).
    HostLease = 6,
}

/// A way's row of [`WAYS`].
pub(crate) struct Way {
    pub mode: Mode,
    /// Whether a process of this way uses the record alone (no other process may join it).
    pub exclusive: bool,
    /// What a process of this way does, told to one that meets it.
    pub does: &'static str,
    /// What a newcomer of this way would do, told to it when it is refused.
    pub would: &'static str,
    /// Its name in `snowflake shared list`.
    pub listed: &'static str,
}

/// Every way of issuing, in the order of their numbers.
pub(crate) const WAYS: [Way; 6] = [
    Way {
        mode: Mode::Host,
        exclusive: false,
        does: "issues from the host's shared state (the default, or shared=)",
        would: "issue from the host's shared state",
        listed: "host",
    },
    Way {
        mode: Mode::Alone,
        exclusive: true,
        does: "issues alone (process_only=true)",
        would: "issue alone (process_only)",
        listed: "process_only",
    },
    Way {
        mode: Mode::LocalLease,
        exclusive: true,
        does: "holds it as a local lease (lease=local)",
        would: "hold it as a local lease",
        listed: "lease=local",
    },
    Way {
        mode: Mode::Guard,
        exclusive: true,
        does: "issues alone with a clock of its own",
        would: "issue alone with a clock of its own",
        listed: "own clock",
    },
    Way {
        mode: Mode::LeaseGuard,
        exclusive: false,
        does: "holds it as the value of a lease across hosts (Redis, PostgreSQL or MySQL)",
        would: "hold it as the value of a lease across hosts",
        listed: "store lease value",
    },
    Way {
        mode: Mode::HostLease,
        exclusive: false,
        does: "shares a host lease",
        would: "share the host lease",
        listed: "host lease",
    },
];

impl Mode {
    /// This way's row.
    pub(crate) fn way(self) -> &'static Way {
        &WAYS[self as usize - 1]
    }

    /// Whether a process of this way uses the record alone.
    pub(crate) fn exclusive(self) -> bool {
        self.way().exclusive
    }

    /// The way whose number is `w`, as a record's header stores it.
    pub(crate) fn from_word(w: u64) -> Option<Mode> {
        WAYS.iter().map(|way| way.mode).find(|m| *m as u64 == w)
    }

    /// What a process of this way does, for messages.
    pub(crate) fn describe(self) -> &'static str {
        self.way().does
    }
}

/// A term that generators sharing one state must agree on; [`TERMS`] gives their order, which
/// is the order of the words a record stores them in.
pub(crate) struct Term {
    pub name: &'static str,
    /// Whether its value is told as `name=value` ("max_drift_ms=0, not 5") rather than in
    /// words of its own ("no rollover field, not rollover=worker").
    named: bool,
    /// The term's word as text, for the identity's `layout`.
    show: fn(u64, &Layout) -> String,
}

fn field_name(layout: &Layout, k: u64) -> &str {
    layout.fields().get(k as usize).map_or("?", |f| f.name())
}

/// Every term, in the record's order: the rollover field, `max_drift_ms`, `sequence_start`,
/// the state file, the host lease's field.
pub(crate) const TERMS: [Term; 5] = [
    Term {
        name: "rollover",
        named: false,
        show: |k, l| match k {
            0 => "no rollover field".to_string(),
            k => format!("rollover={}", field_name(l, k - 1)),
        },
    },
    Term { name: "max_drift_ms", named: true, show: |k, _| k.to_string() },
    Term {
        name: "sequence_start",
        named: true,
        show: |k, _| match k {
            0 => "zero".to_string(),
            k => format!("spread:{k}"),
        },
    },
    Term {
        name: "state_file",
        named: false,
        show: |k, _| if k == 0 { "no state_file" } else { "a state_file" }.to_string(),
    },
    Term {
        name: "lease",
        named: false,
        show: |k, l| match k {
            0 => "no host lease".to_string(),
            k => format!("a host lease of `{}`", field_name(l, k - 1)),
        },
    },
];

/// The word of a sequence start among the terms.
pub(crate) fn sequence_word(s: SequenceStart) -> u64 {
    match s {
        SequenceStart::Zero => 0,
        SequenceStart::Spread(k) => k,
    }
}

/// The terms of a generator as words, in [`TERMS`]'s order.
pub(crate) fn terms(
    rollover: Option<usize>,
    max_drift_ms: u64,
    sequence_start: SequenceStart,
    state_file: u64,
    host_lease: Option<usize>,
) -> [u64; 5] {
    [
        rollover.map_or(0, |i| i as u64 + 1),
        max_drift_ms,
        sequence_word(sequence_start),
        state_file,
        host_lease.map_or(0, |i| i as u64 + 1),
    ]
}

/// The first term on which a generator with `mine` differs from those with `theirs`: its name,
/// and both sides as text ("max_drift_ms=0, not 5"). `mine_state_file` names this generator's
/// state file, where it has one.
pub(crate) fn differ(
    theirs: &[u64; 5],
    mine: &[u64; 5],
    layout: &Layout,
    mine_state_file: Option<&std::path::Path>,
) -> Option<(&'static str, String)> {
    let i = (0..TERMS.len()).find(|&i| theirs[i] != mine[i])?;
    let term = &TERMS[i];
    let their_text = match (term.name, theirs[i]) {
        // Another file than this generator's: its path is not in the record, only a hash.
        ("state_file", k) if k != 0 => "another state_file".to_string(),
        (_, k) => (term.show)(k, layout),
    };
    let my_text = match (term.name, mine_state_file) {
        ("state_file", Some(path)) => path.display().to_string(),
        ("state_file", None) => "none".to_string(),
        _ => (term.show)(mine[i], layout),
    };
    let named = if term.named { format!("{}=", term.name) } else { String::new() };
    Some((term.name, format!("{named}{their_text}, not {my_text}")))
}

/// The refusal of a generator whose terms differ from those of the generators that use its
/// identity now: `who` names them ("another generator of this process", "process 12 of user
/// www-data, through /dev/shm/…"), `detail` is [`differ`]'s.
pub(crate) fn mismatch(what: &'static str, detail: &str, who: &str) -> Error {
    Error::shared_mismatch(
        what,
        format_args!(
            "{who} issues with this layout and node values with {detail}. Generators that issue with one layout and node values at once share one state and must agree on {what}: give this one the same, or stop the others first (once none is left, the next one may choose anew, and the state keeps its high-water mark). `snowflake shared list` shows the host's records and who uses them"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_way_is_its_own_row_at_its_number() {
        for (i, way) in WAYS.iter().enumerate() {
            assert_eq!(way.mode as usize, i + 1);
            assert_eq!(Mode::from_word(i as u64 + 1), Some(way.mode));
        }
        assert_eq!(Mode::from_word(0), None);
        assert_eq!(Mode::from_word(WAYS.len() as u64 + 1), None);
    }

    #[test]
    fn the_first_term_that_differs_is_told_with_both_sides() {
        let layout = Layout::parse("twitter").unwrap();
        let a = terms(None, 0, SequenceStart::Zero, 0, None);
        assert_eq!(differ(&a, &a, &layout, None), None);
        let b = terms(None, 5, SequenceStart::Spread(4), 0, None);
        assert_eq!(differ(&a, &b, &layout, None), Some(("max_drift_ms", "max_drift_ms=0, not 5".into())));
        let c = terms(None, 0, SequenceStart::Spread(4), 0, None);
        assert_eq!(
            differ(&a, &c, &layout, None),
            Some(("sequence_start", "sequence_start=zero, not spread:4".into()))
        );
        let d = terms(Some(2), 0, SequenceStart::Zero, 0, None);
        assert_eq!(
            differ(&d, &a, &layout, None),
            Some(("rollover", "rollover=worker, not no rollover field".into()))
        );
    }
}
