//! The capacity planner: whether a layout fits a fleet — its hosts (node values), its peak
//! rate per host (sequence values per tick), its lifetime (time values) — and which way of
//! coordinating processes to use; and, when nothing fits, a layout that does.
//!
//! The arithmetic, for a layout with `n` node bits, `s` sequence bits, `t` time bits and a
//! tick of `k` ms:
//! - node values: `2^n`, across all node fields (what leases hand out);
//! - capacity of one node value: `2^s` IDs a tick, `2^s * 1000 / k` a second;
//! - lifetime: the epoch plus `2^t` ticks.
//!
//! One state per host (the default, or a host lease) needs one node value per host; a lease
//! per process needs one per process.
//!
//! ```
//! use snowflake_core::{plan::{plan, Fleet, Advice}, Layout};
//! let fleet = Fleet { hosts: 1_000, processes_per_host: 50, peak_per_second: 100_000, years: 10 };
//! let twitter = plan(&Layout::parse("twitter").unwrap(), &fleet, 1_767_225_600_000);
//! assert_eq!(twitter.node_values, 1_024);
//! assert!(twitter.hosts_fit && !twitter.processes_fit);
//! assert_eq!(twitter.advice, Advice::LeasePerHost);
//! ```

use crate::layout::Layout;
#[cfg(feature = "std")]
use crate::time;

/// What a fleet needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fleet {
    /// Hosts issuing IDs at the same time.
    pub hosts: u64,
    /// Processes per host that issue IDs (PHP-FPM workers, gunicorn workers, ...).
    pub processes_per_host: u64,
    /// The peak rate of one host, in IDs per second.
    pub peak_per_second: u64,
    /// How many years from now the layout must keep issuing.
    pub years: u64,
}

/// Which way of coordinating processes a plan recommends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Advice {
    /// One host: every process shares one state (the default; `shared=` names it).
    Shared,
    /// A lease per process (`lease=`): enough node values for every process of the fleet.
    LeasePerProcess,
    /// A lease per host, shared by its processes (`lease=` with a shared state): enough node
    /// values for the hosts, not for every process.
    LeasePerHost,
    /// The layout does not fit (too few node values, too short a life, or no capacity left).
    DoesNotFit,
}

impl Advice {
    /// A short name (`shared`, `lease per process`, `lease per host`, `does not fit`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Advice::Shared => "shared",
            Advice::LeasePerProcess => "lease per process",
            Advice::LeasePerHost => "lease per host",
            Advice::DoesNotFit => "does not fit",
        }
    }
}

/// What the planner found for one layout and fleet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plan {
    /// Node values of the layout: `2^(node bits)`, 1 with no node field.
    pub node_values: u64,
    /// Whether every host can have a node value of its own.
    pub hosts_fit: bool,
    /// Whether every process of the fleet can have a node value of its own.
    pub processes_fit: bool,
    /// IDs one node value can issue in a second.
    pub capacity_per_second: u64,
    /// IDs one host can issue in a second with the advised coordination: one node value's
    /// capacity with one state per host, that times the processes with a lease per process.
    pub host_capacity_per_second: u64,
    /// The peak rate of one host as a share of its capacity (above 1.0, bursts wait for the
    /// next tick at the default policies).
    pub peak_share: f64,
    /// IDs in one tick of one node value: a burst up to this many never waits for the clock.
    pub burst_per_tick: u64,
    /// The last instant the layout can represent, in Unix ms.
    pub last_unix_ms: u64,
    /// Years from the planning instant to that last instant (0 once it has passed).
    pub years_left: f64,
    /// Whether the layout lasts the years asked.
    pub lasts: bool,
    /// The recommendation.
    pub advice: Advice,
}

/// One value of a [`Plan`], for front ends that turn a plan into their own dict or object.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PlanValue {
    /// A count.
    Count(u64),
    /// A share or a number of years.
    Number(f64),
    /// A yes or no.
    Bool(bool),
    /// An instant, in Unix ms.
    UnixMs(u64),
    /// Text.
    Text(&'static str),
}

impl Plan {
    /// The plan's fields as `(snake_case name, value)`, in one order for every front end: a
    /// field added here reaches Python's dict, Node's object, PHP's array and the CLI's JSON.
    pub fn entries(&self) -> [(&'static str, PlanValue); 11] {
        use PlanValue::*;
        [
            ("node_values", Count(self.node_values)),
            ("hosts_fit", Bool(self.hosts_fit)),
            ("processes_fit", Bool(self.processes_fit)),
            ("capacity_per_second", Count(self.capacity_per_second)),
            ("host_capacity_per_second", Count(self.host_capacity_per_second)),
            ("peak_share", Number(self.peak_share)),
            ("burst_per_tick", Count(self.burst_per_tick)),
            ("last_unix_ms", UnixMs(self.last_unix_ms)),
            ("years_left", Number(self.years_left)),
            ("lasts", Bool(self.lasts)),
            ("advice", Text(self.advice.as_str())),
        ]
    }

    /// The plan as one JSON object (what `snowflake plan --json` prints, and the C call gives).
    pub fn write_json(&self, out: &mut impl core::fmt::Write) -> core::fmt::Result {
        out.write_char('{')?;
        for (i, (name, value)) in self.entries().iter().enumerate() {
            if i > 0 {
                out.write_char(',')?;
            }
            write!(out, "\"{name}\":")?;
            match value {
                PlanValue::Count(n) | PlanValue::UnixMs(n) => write!(out, "{n}")?,
                PlanValue::Number(x) => write!(out, "{x}")?,
                PlanValue::Bool(b) => write!(out, "{b}")?,
                // The texts are fixed ASCII words: nothing to escape.
                PlanValue::Text(t) => write!(out, "\"{t}\"")?,
            }
        }
        out.write_char('}')
    }
}

const MS_PER_YEAR: f64 = 365.25 * 86_400_000.0;

/// The plan of `layout` for `fleet`, at the instant `now_ms` (Unix ms).
pub fn plan(layout: &Layout, fleet: &Fleet, now_ms: u64) -> Plan {
    let node_bits: u32 = layout.node_fields().map(|(_, f)| u32::from(f.bits())).sum();
    let node_values = if node_bits >= 64 { u64::MAX } else { 1u64 << node_bits };
    let hosts_fit = fleet.hosts <= node_values;
    let processes = fleet.hosts.saturating_mul(fleet.processes_per_host.max(1));
    let processes_fit = processes <= node_values;
    let burst_per_tick = layout.capacity_per_tick();
    let per_second = u128::from(burst_per_tick) * 1000 / u128::from(layout.tick_ms());
    let capacity_per_second = u64::try_from(per_second).unwrap_or(u64::MAX);
    let last_unix_ms = layout.last_unix_ms();
    let years_left = last_unix_ms.saturating_sub(now_ms) as f64 / MS_PER_YEAR;
    let lasts = years_left >= fleet.years as f64;
    let advice = if !lasts || !hosts_fit {
        Advice::DoesNotFit
    } else if fleet.hosts <= 1 {
        Advice::Shared
    } else if processes_fit {
        Advice::LeasePerProcess
    } else {
        Advice::LeasePerHost
    };
    let host_capacity_per_second = match advice {
        Advice::LeasePerProcess => capacity_per_second.saturating_mul(fleet.processes_per_host.max(1)),
        _ => capacity_per_second,
    };
    Plan {
        node_values,
        hosts_fit,
        processes_fit,
        capacity_per_second,
        host_capacity_per_second,
        peak_share: fleet.peak_per_second as f64 / host_capacity_per_second as f64,
        burst_per_tick,
        last_unix_ms,
        years_left,
        lasts,
        advice,
    }
}

/// The bits that hold `n` different values (at least 1).
fn bits_for(n: u64) -> u32 {
    (64 - n.saturating_sub(1).leading_zeros()).max(1)
}

/// A custom layout that fits `fleet` from `now_ms`, when one does (63 bits at most, so its
/// IDs are positive signed 64-bit numbers): `time:T,worker:W,sequence:S`, a millisecond tick
/// (or a coarser one when the years need it), node values for every host (a lease per host)
/// and a sequence twice the peak of a tick, with an epoch of today (midnight UTC), written in
/// its canonical text.
///
/// ```
/// use snowflake_core::{plan::{plan, propose, Fleet, Advice}, Layout};
/// let fleet = Fleet { hosts: 100_000, processes_per_host: 10, peak_per_second: 20_000, years: 30 };
/// let now = 1_767_225_600_000; // 2026-01-01
/// let spec = propose(&fleet, now).unwrap();
/// let layout = Layout::parse(&spec).unwrap();
/// assert!(layout.total_bits() <= 63);
/// assert_ne!(plan(&layout, &fleet, now).advice, Advice::DoesNotFit);
/// ```
#[cfg(feature = "std")]
pub fn propose(fleet: &Fleet, now_ms: u64) -> Option<String> {
    let today = now_ms - now_ms % 86_400_000;
    let node = if fleet.hosts <= 1 { 0 } else { bits_for(fleet.hosts) };
    for tick_ms in [1u64, 2, 4, 8, 10, 100, 1000] {
        let per_tick = (u128::from(fleet.peak_per_second) * u128::from(tick_ms)).div_ceil(1000) as u64;
        let sequence = bits_for(per_tick.saturating_mul(2).max(2));
        // A year of margin beyond the years asked.
        let span = ((fleet.years as f64 + 1.0) * MS_PER_YEAR / tick_ms as f64) as u64;
        let time_bits = bits_for(span);
        if time_bits + node + sequence > 63 {
            continue;
        }
        let mut buf = [0u8; time::RFC3339_LEN];
        let epoch = time::format_rfc3339(today, &mut buf)?;
        let tick = if tick_ms % 1000 == 0 { format!("{}s", tick_ms / 1000) } else { format!("{tick_ms}ms") };
        let spec = match node {
            0 => format!("time:{time_bits},sequence:{sequence};epoch={epoch};tick={tick}"),
            n => format!("time:{time_bits},worker:{n},sequence:{sequence};epoch={epoch};tick={tick}"),
        };
        return Layout::parse(&spec).ok().map(|l| l.to_string());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const JAN_2026: u64 = 1_767_225_600_000;

    #[test]
    fn the_issue_fleet_on_the_presets() {
        // 1,000 hosts of 50 PHP-FPM workers: twitter's 10 node bits hold every host, not every
        // process; 4,096 IDs a ms a host.
        let fleet = Fleet { hosts: 1_000, processes_per_host: 50, peak_per_second: 100_000, years: 10 };
        let p = plan(&Layout::parse("twitter").unwrap(), &fleet, JAN_2026);
        assert_eq!((p.node_values, p.hosts_fit, p.processes_fit), (1 << 10, true, false));
        assert_eq!(p.capacity_per_second, 4_096_000);
        assert_eq!(p.advice, Advice::LeasePerHost);
        // baidu has expired: its 28 bits of seconds from 2016 ended in 2024.
        let p = plan(&Layout::parse("baidu").unwrap(), &fleet, JAN_2026);
        assert!(!p.lasts && p.years_left == 0.0);
        assert_eq!(p.advice, Advice::DoesNotFit);
        // instagram: 8,192 shards, but only 1,024 IDs a ms.
        let p = plan(&Layout::parse("instagram").unwrap(), &fleet, JAN_2026);
        assert!(p.hosts_fit && !p.processes_fit);
        // mastodon has no node field: one host only.
        let p = plan(&Layout::parse("mastodon").unwrap(), &fleet, JAN_2026);
        assert_eq!((p.node_values, p.advice), (1, Advice::DoesNotFit));
        let one = Fleet { hosts: 1, ..fleet };
        assert_eq!(plan(&Layout::parse("mastodon").unwrap(), &one, JAN_2026).advice, Advice::Shared);
        let small = Fleet { hosts: 10, processes_per_host: 8, ..fleet };
        assert_eq!(
            plan(&Layout::parse("twitter").unwrap(), &small, JAN_2026).advice,
            Advice::LeasePerProcess
        );
    }

    #[test]
    #[cfg(feature = "std")]
    fn proposals_fit_and_are_the_smallest_sequence_for_the_peak() {
        for (hosts, peak, years) in
            [(1, 1_000, 10), (10, 5_000_000, 50), (100_000, 20_000, 30), (1 << 20, 10, 5)]
        {
            let fleet = Fleet { hosts, processes_per_host: 50, peak_per_second: peak, years };
            let spec = propose(&fleet, JAN_2026).unwrap();
            let l = Layout::parse(&spec).unwrap();
            let p = plan(&l, &fleet, JAN_2026);
            assert!(p.lasts && p.hosts_fit && p.peak_share <= 0.5, "{spec}: {p:?}");
            assert!(l.total_bits() <= 63, "{spec}");
            assert_eq!(l.epoch_ms(), JAN_2026);
        }
        // 100,000 hosts at 100,000 IDs/s each for 30 years: 17 node bits, and the time and
        // sequence bits of a peak that high over that long need 47 more at any tick. No
        // proposal in 63 bits.
        let fleet = Fleet { hosts: 100_000, processes_per_host: 1, peak_per_second: 100_000, years: 30 };
        assert_eq!(propose(&fleet, JAN_2026), None);
    }
}
