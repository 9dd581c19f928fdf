//! Layouts: which bits of an ID hold the time, the sequence and each node field; their text
//! form, the presets, and decoding and composing IDs.
//!
//! A layout is plain data (`Copy`, no allocation). Parsing checks every rule once, so every
//! method on a `Layout` can rely on them: `time` first, one `sequence`, unique names, widths
//! that add up to at most 64, and a time range that fits in 64-bit Unix milliseconds.

use crate::error::{Error, LayoutError, Result};
use crate::hash::Fnv1a;
use crate::text::Name;
use crate::value::Value;
use core::fmt;
use core::str::FromStr;

pub use crate::limits::MAX_FIELDS;

/// The presets, by name, with their specs (DESIGN §2). `Layout::parse` accepts the names.
pub const PRESETS: [(&str, &str); 8] = [
    ("twitter", "time:41,datacenter:5,worker:5,sequence:12;epoch=1288834974657;tick=1ms"),
    ("discord", "time:42,worker:5,process:5,sequence:12;epoch=1420070400000;tick=1ms"),
    ("instagram", "time:41,shard:13,sequence:10;epoch=1314220021721;tick=1ms"),
    ("sonyflake", "time:39,sequence:8,machine:16;epoch=1409529600000;tick=10ms"),
    ("baidu", "time:28,worker:22,sequence:13;epoch=1463673600000;tick=1s"),
    ("mastodon", "time:48,sequence:16;epoch=0;tick=1ms"),
    ("game", "time:39,platform:3,area:11,app:5,sequence:6;epoch=1541001600000;tick=1ms"),
    // Every ID below 2^53, a safe JavaScript number: 64 workers of 64 IDs a ms (64,000 a
    // second each) from 2026-01-01 until 2095-09-07 (`snowflake plan` chose it: docs/layouts.md).
    ("js53", "time:41,worker:6,sequence:6;epoch=1767225600000;tick=1ms"),
];

/// What a field holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldKind {
    /// Ticks since the epoch; always the highest field.
    Time,
    /// The counter within a tick.
    Sequence,
    /// A value fixed per generator (datacenter, worker, shard, ...), or the rollover counter.
    Node,
}

/// One bit field of a layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Field {
    name: Name,
    bits: u8,
    shift: u8,
    kind: FieldKind,
}

impl Field {
    const UNUSED: Field = Field { name: Name::EMPTY, bits: 0, shift: 0, kind: FieldKind::Node };

    /// The field's name.
    pub fn name(&self) -> &str {
        self.name.as_str()
    }
    /// The field's width in bits.
    pub const fn bits(&self) -> u8 {
        self.bits
    }
    /// The position of the field's lowest bit in the ID.
    pub const fn shift(&self) -> u8 {
        self.shift
    }
    /// What the field holds.
    pub const fn kind(&self) -> FieldKind {
        self.kind
    }
    /// The largest value the field holds: `2^bits - 1`.
    pub const fn max(&self) -> u64 {
        u64::MAX >> (64 - self.bits as u32)
    }
    /// The field's value in `id`.
    #[inline]
    pub const fn get(&self, id: u64) -> u64 {
        (id >> self.shift) & self.max()
    }
}

/// The values of a layout's node fields, indexed like [`Layout::fields`] (the entries of
/// `time` and `sequence` are zero). Build one with [`Layout::node`] or [`Layout::parse_node`],
/// which check every value against its field's width.
///
/// It also remembers which fields were named, so that a generator can refuse a mapping that
/// names some node fields but forgets others (which would silently be 0); equality and hashing
/// look at the values only.
#[derive(Clone, Copy, Debug, Default)]
pub struct Node {
    values: [u64; MAX_FIELDS],
    /// Bit `i` set: the field at index `i` was named.
    named: u16,
}

impl PartialEq for Node {
    fn eq(&self, other: &Node) -> bool {
        self.values == other.values
    }
}

impl Eq for Node {}

impl core::hash::Hash for Node {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.values.hash(state);
    }
}

impl Node {
    /// The same values, with the same fields named (equality looks at the values only).
    pub(crate) fn same(&self, other: &Node) -> bool {
        self.values == other.values && self.named == other.named
    }

    /// Whether the field at `index` in [`Layout::fields`] was named when the values were
    /// built (all zeros by default: none was).
    pub const fn is_named(&self, index: usize) -> bool {
        index < MAX_FIELDS && self.named & (1 << index) != 0
    }

    /// Whether no field was named (`{}`, `''`): node values that give none, so that the
    /// environment's apply ([`crate::Environment::node`]).
    pub const fn is_empty(&self) -> bool {
        self.named == 0
    }

    /// The value of the field at `index` in [`Layout::fields`].
    pub const fn get(&self, index: usize) -> u64 {
        self.values[index]
    }

    /// The same values with the field at `index` set to `value` (unchecked: the callers
    /// check the range).
    pub(crate) const fn with(mut self, index: usize, value: u64) -> Node {
        self.values[index] = value;
        self
    }
}

/// The parts of a decoded ID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parts {
    /// The ID.
    pub id: u64,
    /// Ticks since the layout's epoch.
    pub tick: u64,
    /// The start of the tick, in Unix milliseconds.
    pub unix_ms: u64,
    /// The sequence number.
    pub sequence: u64,
    /// The node field values.
    pub node: Node,
}

/// A layout: the bit fields of an ID from the most significant bit down, an epoch and a tick.
///
/// ```
/// use snowflake_core::Layout;
/// let discord = Layout::parse("discord").unwrap();
/// let parts = discord.decode(175928847299117063).unwrap();
/// assert_eq!(parts.unix_ms, 1462015105796);
/// assert_eq!(parts.sequence, 7);
/// let fields: Vec<_> = discord.node_values(&parts.node).collect();
/// assert_eq!(fields, [("worker", 1), ("process", 0)]);
/// assert_eq!(discord.to_string(), "time:42,worker:5,process:5,sequence:12;epoch=1420070400000;tick=1ms");
/// ```
#[derive(Clone, Copy)]
pub struct Layout {
    fields: [Field; MAX_FIELDS],
    len: u8,
    seq: u8,
    total_bits: u8,
    epoch_ms: u64,
    tick_ms: u64,
    /// [`Layout::fingerprint`], taken once (a generator made per request asks for it).
    fingerprint: u64,
}

/// Equal layouts are the same fields, sequence, epoch and tick: the slots past the fields are
/// all unused, and are not compared (a generator made per request compares its layout with
/// the process's others several times).
impl PartialEq for Layout {
    fn eq(&self, other: &Layout) -> bool {
        (self.seq, self.total_bits, self.epoch_ms, self.tick_ms)
            == (other.seq, other.total_bits, other.epoch_ms, other.tick_ms)
            && self.fields() == other.fields()
    }
}

impl Eq for Layout {}

impl core::hash::Hash for Layout {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.fields().hash(state);
        (self.seq, self.total_bits, self.epoch_ms, self.tick_ms).hash(state);
    }
}

fn split_kv(s: &str) -> Option<(&str, &str)> {
    let (k, v) = s.split_once('=')?;
    Some((k.trim(), v.trim()))
}

fn parse_u64(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn parse_tick(s: &str) -> core::result::Result<u64, LayoutError> {
    let bad = LayoutError::BadTick { text: Name::snippet(s) };
    let (num, mult) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1000)
    } else {
        return Err(bad);
    };
    let n = parse_u64(num.trim()).ok_or(bad)?;
    if n == 0 {
        return Err(LayoutError::TickZero);
    }
    n.checked_mul(mult).ok_or(bad)
}

/// Midnight UTC of today, in Unix ms, for the epoch a [`LayoutError::NoEpoch`] suggests.
fn today_unix_ms() -> Option<u64> {
    #[cfg(feature = "std")]
    {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).ok()?;
        Some(now.as_secs() / 86_400 * 86_400_000)
    }
    #[cfg(not(feature = "std"))]
    None
}

impl Layout {
    /// Parses a spec (`time:41,datacenter:5,worker:5,sequence:12;epoch=1288834974657;tick=1ms`)
    /// or a preset name. A spec must state its epoch (a preset has its own).
    ///
    /// ```
    /// use snowflake_core::{Layout, LayoutError, Error};
    /// let l = Layout::parse("time:41,worker:10,sequence:12;epoch=2010-11-04T01:42:54.657Z").unwrap();
    /// assert_eq!(l.epoch_ms(), 1288834974657);
    /// assert_eq!(Layout::parse("time:41,sequence:12,sequence:2;epoch=0"), Err(Error::Layout(LayoutError::TwoSequences)));
    /// let err = Layout::parse("time:41,worker:10,sequence:12").unwrap_err();
    /// assert!(matches!(err, Error::Layout(LayoutError::NoEpoch { .. })));
    /// assert!(err.to_string().contains("T00:00:00Z` (today)"));
    /// ```
    pub fn parse(spec: &str) -> Result<Layout> {
        // A front end that makes a generator per request hands the same spec each time: the
        // last few layouts parsed are kept (parsing is a pure function of the text).
        #[cfg(feature = "std")]
        {
            if let Some(layout) = memo::get(spec) {
                return Ok(layout);
            }
            let layout = Layout::parse_text(spec)?;
            memo::put(spec, &layout);
            Ok(layout)
        }
        #[cfg(not(feature = "std"))]
        Layout::parse_text(spec)
    }

    /// [`Layout::parse`], every time.
    fn parse_text(spec: &str) -> Result<Layout> {
        let spec = spec.trim();
        if spec.is_empty() {
            return Err(LayoutError::Empty.into());
        }
        if !spec.contains(':') && !spec.contains(';') {
            return match PRESETS.iter().find(|(name, _)| *name == spec) {
                Some((_, preset)) => Layout::parse_text(preset),
                None => Err(LayoutError::UnknownPreset { name: Name::snippet(spec) }.into()),
            };
        }
        let (fields_text, options_text) = match spec.split_once(';') {
            Some((f, o)) => (f, Some(o)),
            None => (spec, None),
        };
        let mut layout = Layout {
            fields: [Field::UNUSED; MAX_FIELDS],
            len: 0,
            seq: 0,
            total_bits: 0,
            epoch_ms: 0,
            tick_ms: 1,
            fingerprint: 0,
        };
        let mut total: u32 = 0;
        let mut seen_seq = false;
        for (i, text) in fields_text.split(',').enumerate() {
            let text = text.trim();
            let (name, bits) =
                text.split_once(':').ok_or(LayoutError::BadField { text: Name::snippet(text) })?;
            let (name, bits) = (name.trim(), bits.trim());
            if !Name::is_valid_field_name(name) {
                return Err(LayoutError::BadName { name: Name::snippet(name) }.into());
            }
            let name = Name::snippet(name);
            let bits = parse_u64(bits).ok_or(LayoutError::BadWidth { name })?;
            if bits == 0 {
                return Err(LayoutError::ZeroWidth { name }.into());
            }
            total = total.saturating_add(bits.min(u64::from(u32::MAX)) as u32);
            if i >= MAX_FIELDS {
                return Err(LayoutError::TooManyFields.into());
            }
            // `time` and `sequence` are reserved: the first field is `time` (and no other
            // is, as names are unique), a field called `sequence` is the sequence.
            let kind = match name.as_str() {
                "time" if i == 0 => FieldKind::Time,
                _ if i == 0 => return Err(LayoutError::TimeNotFirst.into()),
                "sequence" => FieldKind::Sequence,
                _ => FieldKind::Node,
            };
            if layout.fields[..i].iter().any(|f| f.name == name) {
                return Err(if kind == FieldKind::Sequence {
                    LayoutError::TwoSequences
                } else {
                    LayoutError::DuplicateName { name }
                }
                .into());
            }
            if kind == FieldKind::Sequence {
                seen_seq = true;
                layout.seq = i as u8;
            }
            layout.fields[i] = Field { name, bits: bits.min(64) as u8, shift: 0, kind };
            layout.len = i as u8 + 1;
        }
        if total > 64 {
            return Err(LayoutError::TooWide { total_bits: total }.into());
        }
        if !seen_seq {
            return Err(LayoutError::NoSequence.into());
        }
        let mut shift = total;
        for f in &mut layout.fields[..layout.len as usize] {
            shift -= u32::from(f.bits);
            f.shift = shift as u8;
        }
        layout.total_bits = total as u8;

        let (mut epoch_seen, mut tick_seen) = (false, false);
        for opt in options_text.into_iter().flat_map(|o| o.split(';')) {
            let opt = opt.trim();
            if opt.is_empty() {
                continue;
            }
            let (key, value) =
                split_kv(opt).ok_or(LayoutError::UnknownOption { name: Name::snippet(opt) })?;
            let seen = match key {
                "epoch" => &mut epoch_seen,
                "tick" => &mut tick_seen,
                _ => return Err(LayoutError::UnknownOption { name: Name::snippet(key) }.into()),
            };
            if core::mem::replace(seen, true) {
                return Err(LayoutError::DuplicateOption { name: Name::snippet(key) }.into());
            }
            if key == "epoch" {
                layout.epoch_ms = parse_u64(value)
                    .or_else(|| crate::time::parse_rfc3339(value))
                    .ok_or(LayoutError::BadEpoch { text: Name::snippet(value) })?;
            } else {
                layout.tick_ms = parse_tick(value)?;
            }
        }
        let span = (u128::from(layout.max_tick()) + 1) * u128::from(layout.tick_ms);
        if u128::from(layout.epoch_ms) + span - 1 > u128::from(u64::MAX) {
            return Err(LayoutError::TimeRangeOverflow.into());
        }
        // Last, so that a spec with other faults hears about those first.
        if !epoch_seen {
            return Err(LayoutError::NoEpoch {
                last_unix_ms: layout.last_unix_ms(),
                today_unix_ms: today_unix_ms(),
            }
            .into());
        }
        let mut h = Fnv1a::new();
        let _ = layout.write_canonical(&mut h);
        layout.fingerprint = h.0;
        Ok(layout)
    }

    /// The preset called `name`, if there is one.
    ///
    /// ```
    /// assert_eq!(snowflake_core::Layout::preset("sonyflake").unwrap().tick_ms(), 10);
    /// ```
    pub fn preset(name: &str) -> Option<Layout> {
        PRESETS.iter().find(|(n, _)| *n == name).and_then(|(_, spec)| Layout::parse(spec).ok())
    }

    /// The fields, from the most significant down.
    pub fn fields(&self) -> &[Field] {
        &self.fields[..self.len as usize]
    }

    /// The field called `name` and its index in [`Layout::fields`].
    pub fn field(&self, name: &str) -> Option<(usize, &Field)> {
        self.fields().iter().enumerate().find(|(_, f)| f.name == name)
    }

    /// The node fields (all but `time` and `sequence`) with their indexes.
    pub fn node_fields(&self) -> impl Iterator<Item = (usize, &Field)> + '_ {
        self.fields().iter().enumerate().filter(|(_, f)| f.kind == FieldKind::Node)
    }

    /// The `time` field.
    pub const fn time(&self) -> &Field {
        &self.fields[0]
    }

    /// The `sequence` field.
    pub const fn sequence(&self) -> &Field {
        &self.fields[self.seq as usize]
    }

    /// The epoch, in Unix milliseconds.
    pub const fn epoch_ms(&self) -> u64 {
        self.epoch_ms
    }

    /// The length of a tick, in milliseconds.
    pub const fn tick_ms(&self) -> u64 {
        self.tick_ms
    }

    /// The sum of the field widths; IDs are below `2^total_bits`.
    pub const fn total_bits(&self) -> u8 {
        self.total_bits
    }

    /// The largest ID of this layout.
    pub const fn max_value(&self) -> u64 {
        u64::MAX >> (64 - self.total_bits as u32)
    }

    /// The last tick the time field holds.
    pub const fn max_tick(&self) -> u64 {
        self.time().max()
    }

    /// How many IDs one node can issue in one tick: `2^sequence_bits`.
    pub const fn capacity_per_tick(&self) -> u64 {
        1 << self.sequence().bits
    }

    /// The last instant the layout can represent, in Unix milliseconds (the end of its last
    /// tick).
    ///
    /// ```
    /// let twitter = snowflake_core::Layout::parse("twitter").unwrap();
    /// assert_eq!(twitter.last_unix_ms(), 1288834974657 + (1 << 41) - 1); // 2080-07-10
    /// ```
    pub const fn last_unix_ms(&self) -> u64 {
        // Checked at parse time not to overflow.
        self.epoch_ms + (self.max_tick() * self.tick_ms) + (self.tick_ms - 1)
    }

    /// How long the layout has left at `now_unix_ms`: milliseconds until its last instant
    /// (0 once past it).
    ///
    /// ```
    /// let twitter = snowflake_core::Layout::parse("twitter").unwrap();
    /// assert_eq!(twitter.ms_left(twitter.last_unix_ms() - 5), 5);
    /// assert_eq!(twitter.ms_left(u64::MAX), 0);
    /// ```
    pub const fn ms_left(&self, now_unix_ms: u64) -> u64 {
        self.last_unix_ms().saturating_sub(now_unix_ms)
    }

    /// [`Layout::ms_left`] in years of 365.2425 days.
    ///
    /// ```
    /// let twitter = snowflake_core::Layout::parse("twitter").unwrap();
    /// let years = twitter.years_left(1_700_000_000_000); // 2023-11-14
    /// assert!(years > 56.6 && years < 56.7, "{years}");
    /// ```
    pub fn years_left(&self, now_unix_ms: u64) -> f64 {
        years_of_ms(self.ms_left(now_unix_ms))
    }

    /// A warning when the layout has less than [`LIFETIME_WARNING_YEARS`] left at
    /// `now_unix_ms` (its `Display` says when it ends and what to do), else `None`.
    ///
    /// ```
    /// let game = snowflake_core::Layout::parse("game").unwrap(); // ends 2036-04-02
    /// let w = game.lifetime_warning(1_800_000_000_000).unwrap(); // 2027-01-15
    /// assert!(w.to_string().starts_with("warning: layout time:39,"), "{w}");
    /// assert!(w.to_string().contains("2036-04-02"), "{w}");
    /// assert!(game.lifetime_warning(1_500_000_000_000).is_none()); // 2017: 18 years left
    /// ```
    pub fn lifetime_warning(&self, now_unix_ms: u64) -> Option<LifetimeWarning> {
        let years_left = self.years_left(now_unix_ms);
        (years_left < LIFETIME_WARNING_YEARS as f64).then_some(LifetimeWarning { layout: *self, years_left })
    }

    /// The tick holding `unix_ms`, or a [`Error::TimeRange`] outside the layout's range.
    #[inline]
    pub fn tick_of(&self, unix_ms: u64) -> Result<u64> {
        if unix_ms < self.epoch_ms || unix_ms > self.last_unix_ms() {
            return Err(self.time_range_error(unix_ms));
        }
        let since = unix_ms - self.epoch_ms;
        Ok(if self.tick_ms == 1 { since } else { since / self.tick_ms })
    }

    pub(crate) fn time_range_error(&self, unix_ms: u64) -> Error {
        Error::TimeRange { unix_ms, first_unix_ms: self.epoch_ms, last_unix_ms: self.last_unix_ms() }
    }

    /// The start of tick `tick`, in Unix milliseconds.
    pub const fn unix_ms_of(&self, tick: u64) -> u64 {
        self.epoch_ms + tick * self.tick_ms
    }

    /// A stable 64-bit fingerprint of the layout: FNV-1a 64 of its canonical text. Two layouts
    /// are equal exactly when their canonical texts are.
    ///
    /// ```
    /// let a = snowflake_core::Layout::parse("twitter").unwrap();
    /// let b = snowflake_core::Layout::parse("time:41, datacenter:5, worker:5, sequence:12; tick=1ms; epoch=2010-11-04T01:42:54.657Z").unwrap();
    /// assert_eq!(a.fingerprint(), b.fingerprint());
    /// ```
    pub const fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// The canonical text (see `Display`) written piece by piece, without the formatting
    /// machinery: `Display` and [`Layout::fingerprint`] (taken once, as the layout is parsed)
    /// both write through it, so the two cannot differ.
    fn write_canonical(&self, out: &mut impl fmt::Write) -> fmt::Result {
        for (i, field) in self.fields().iter().enumerate() {
            if i > 0 {
                out.write_str(",")?;
            }
            out.write_str(field.name.as_str())?;
            out.write_str(":")?;
            out.write_str(crate::text::decimal(u64::from(field.bits), &mut [0; 20]))?;
        }
        out.write_str(";epoch=")?;
        out.write_str(crate::text::decimal(self.epoch_ms, &mut [0; 20]))?;
        out.write_str(";tick=")?;
        if self.tick_ms.is_multiple_of(1000) {
            out.write_str(crate::text::decimal(self.tick_ms / 1000, &mut [0; 20]))?;
            out.write_str("s")
        } else {
            out.write_str(crate::text::decimal(self.tick_ms, &mut [0; 20]))?;
            out.write_str("ms")
        }
    }

    /// Node values from `(name, value)` pairs; fields left out are 0 (a generator refuses a
    /// mapping that leaves out some but not all, see [`Layout::check_node_named`]).
    ///
    /// ```
    /// use snowflake_core::{Layout, Error};
    /// let twitter = Layout::parse("twitter").unwrap();
    /// let node = twitter.node(&[("worker", 3), ("datacenter", 1)]).unwrap();
    /// assert!(matches!(twitter.node(&[("worker", 32)]), Err(Error::ValueRange { max: 31, .. })));
    /// assert!(matches!(twitter.node(&[("shard", 1)]), Err(Error::UnknownField { .. })));
    /// # let _ = node;
    /// ```
    pub fn node(&self, pairs: &[(&str, u64)]) -> Result<Node> {
        let mut node = Node::default();
        let mut set = [false; MAX_FIELDS];
        for &(name, value) in pairs {
            let (i, field) = self.field(name).ok_or_else(|| self.unknown_field(name))?;
            if field.kind != FieldKind::Node {
                return Err(Error::NotANodeField { name: field.name });
            }
            if core::mem::replace(&mut set[i], true) {
                return Err(Error::BadOption { name: field.name, reason: "the value is given twice" });
            }
            if value > field.max() {
                return Err(Error::ValueRange {
                    name: field.name,
                    value: i128::from(value),
                    min: 0,
                    max: field.max(),
                });
            }
            node.values[i] = value;
            node.named |= 1 << i;
        }
        Ok(node)
    }

    /// Checks that `node` names every node field but those in `exempt` (a bit per index in
    /// [`Layout::fields`]: fields the generator sets itself, a leased or a rollover field), or
    /// names none (the all-zero default); and that it names no exempt field. A forgotten field
    /// would otherwise be 0, and two services that forget it would share its value.
    ///
    /// ```
    /// use snowflake_core::{Error, Layout};
    /// let twitter = Layout::parse("twitter").unwrap();
    /// twitter.check_node_named(&twitter.parse_node("datacenter=1,worker=3").unwrap(), 0).unwrap();
    /// twitter.check_node_named(&twitter.parse_node("").unwrap(), 0).unwrap();
    /// let err = twitter.check_node_named(&twitter.parse_node("datacenter=1").unwrap(), 0).unwrap_err();
    /// assert!(err.to_string().contains("no value for `worker`"), "{err}");
    /// // A leased worker (index 2) must be left out.
    /// twitter.check_node_named(&twitter.parse_node("datacenter=1").unwrap(), 1 << 2).unwrap();
    /// assert!(twitter.check_node_named(&twitter.parse_node("datacenter=1,worker=0").unwrap(), 1 << 2).is_err());
    /// ```
    pub fn check_node_named(&self, node: &Node, exempt: u16) -> Result<()> {
        let (mut missing, mut extra) = (0u16, 0u16);
        for (i, _) in self.node_fields() {
            let bit = 1u16 << i;
            match (node.named & bit != 0, exempt & bit != 0) {
                (true, true) => extra |= bit,
                (false, false) => missing |= bit,
                _ => {}
            }
        }
        if let Some(i) = (0..MAX_FIELDS).find(|i| extra & (1 << i) != 0) {
            return Err(Error::BadOption {
                name: self.fields[i].name,
                reason:
                    "this field is set by the generator (the lease or the rollover): give it no node value",
            });
        }
        if node.named == 0 || missing == 0 {
            return Ok(());
        }
        let (missing, more) = self.node_names(missing);
        Err(Error::MissingNodeValues { missing, more })
    }

    /// The names of the node fields in `mask` (a bit per index), as many as fit in a
    /// `Name` joined by `, `, and how many more there are.
    fn node_names(&self, mask: u16) -> (Name, u8) {
        let mut text = [0u8; crate::text::MAX_NAME_LEN];
        let (mut len, mut more) = (0usize, 0u8);
        for (i, f) in self.node_fields() {
            if mask & (1 << i) == 0 {
                continue;
            }
            let name = f.name().as_bytes();
            let sep: &[u8] = if len == 0 { b"" } else { b", " };
            if more == 0 && len + sep.len() + name.len() <= text.len() {
                text[len..len + sep.len()].copy_from_slice(sep);
                text[len + sep.len()..len + sep.len() + name.len()].copy_from_slice(name);
                len += sep.len() + name.len();
            } else {
                more += 1;
            }
        }
        (Name::snippet(core::str::from_utf8(&text[..len]).unwrap_or("")), more)
    }

    /// The error for `name`, a field this layout does not have: it names the nearest node
    /// field when `name` looks like a typo of it, and lists the layout's node fields, so that
    /// `wroker=7` says what was meant in every front end.
    ///
    /// ```
    /// let twitter = snowflake_core::Layout::parse("twitter").unwrap();
    /// assert_eq!(
    ///     twitter.unknown_field("wroker").to_string(),
    ///     "the layout has no field `wroker`: did you mean `worker`? (its node fields: datacenter, worker)"
    /// );
    /// assert_eq!(
    ///     twitter.unknown_field("shard").to_string(),
    ///     "the layout has no field `shard` (its node fields: datacenter, worker)"
    /// );
    /// ```
    pub fn unknown_field(&self, name: &str) -> Error {
        let all = self.node_fields().fold(0u16, |m, (i, _)| m | (1 << i));
        let (fields, more) = self.node_names(all);
        let near = fields
            .as_str()
            .split(", ")
            .zip(1u8..)
            .map(|(f, k)| (crate::text::text_distance(name, f), f.len(), k))
            // A typo is a letter or two off, and never most of a short name.
            .filter(|&(d, len, _)| d <= 2 && d * 3 <= len)
            .min_by_key(|&(d, _, _)| d)
            .map_or(0, |(_, _, k)| k);
        Error::UnknownField { name: Name::snippet(name), fields, more, near }
    }

    /// Node values from a front end's `(name, value)` pairs (a Python dict, a JS object, a
    /// PHP array): each value is checked with [`Value::whole`] against its field, so every
    /// front end refuses a fraction, a boolean or a negative number alike, naming the field.
    ///
    /// ```
    /// use snowflake_core::{Layout, Value};
    /// let twitter = Layout::parse("twitter").unwrap();
    /// let node = twitter.node_from_values([("worker", Value::Int(3)), ("datacenter", Value::Float(1.0))]).unwrap();
    /// assert_eq!(node, twitter.parse_node("datacenter=1,worker=3").unwrap());
    /// let err = twitter.node_from_values([("worker", Value::Int(-1))]).unwrap_err();
    /// assert_eq!(err.to_string(), "worker = -1 is out of range: the smallest allowed is 0");
    /// ```
    pub fn node_from_values<'a>(
        &self,
        pairs: impl IntoIterator<Item = (&'a str, Value<'a>)>,
    ) -> Result<Node> {
        let mut checked = [("", 0u64); MAX_FIELDS];
        let mut n = 0;
        for (name, value) in pairs {
            let (_, field) = self.field(name).ok_or_else(|| self.unknown_field(name))?;
            if field.kind != FieldKind::Node {
                return Err(Error::NotANodeField { name: field.name });
            }
            if n == MAX_FIELDS {
                return Err(Error::BadOption { name: Name::snippet(name), reason: "too many node values" });
            }
            checked[n] = (name, value.whole(name, 0, field.max())?);
            n += 1;
        }
        self.node(&checked[..n])
    }

    /// Node values from text: `datacenter=1,worker=3` (empty for all zeros).
    ///
    /// ```
    /// let twitter = snowflake_core::Layout::parse("twitter").unwrap();
    /// assert_eq!(twitter.parse_node("worker=3, datacenter=1"), twitter.node(&[("datacenter", 1), ("worker", 3)]));
    /// assert!(twitter.parse_node("worker=x").is_err());
    /// ```
    pub fn parse_node(&self, spec: &str) -> Result<Node> {
        // A front end that makes a generator per request hands the same text each time.
        #[cfg(feature = "std")]
        {
            static LAST: crate::memo::Memo<(Layout, std::boxed::Box<str>), Node, 8> =
                crate::memo::Memo::new();
            if let Some(node) = LAST.get(|(layout, text)| **text == *spec && layout == self) {
                return Ok(node);
            }
            let node = self.parse_node_text(spec)?;
            if spec.len() <= 256 {
                LAST.put((*self, spec.into()), node);
            }
            Ok(node)
        }
        #[cfg(not(feature = "std"))]
        self.parse_node_text(spec)
    }

    /// [`Layout::parse_node`], every time.
    fn parse_node_text(&self, spec: &str) -> Result<Node> {
        if spec.contains(';') {
            return Err(Error::BadOption {
                name: Name::snippet(spec),
                reason: "node values are separated by `,` (options by `;`, and they go in the options, not the node values)",
            });
        }
        let mut pairs = [("", Value::Unset); MAX_FIELDS];
        let mut n = 0;
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (name, value) = split_kv(item).ok_or(Error::BadOption {
                name: Name::snippet(item),
                reason: "node values are written `name=value`, separated by `,`",
            })?;
            // A whole number, signed so that `worker=-1` is a range error naming the field,
            // as from every front end; anything else says what a node value is.
            let (negative, digits) = value.strip_prefix('-').map_or((false, value), |v| (true, v));
            let value = match parse_u64(digits) {
                Some(v) if negative => Value::Int(-i128::from(v)),
                Some(v) => Value::Int(i128::from(v)),
                None => {
                    return Err(Error::BadOption {
                        name: Name::snippet(name),
                        reason: "a node value is a whole number in digits (`worker=3`)",
                    })
                }
            };
            if n == MAX_FIELDS {
                return Err(Error::BadOption { name: Name::snippet(name), reason: "too many node values" });
            }
            pairs[n] = (name, value);
            n += 1;
        }
        self.node_from_values(pairs[..n].iter().copied())
    }

    /// The node fields' `(name, value)` pairs of `node`, from the most significant down.
    pub fn node_values<'a>(&'a self, node: &'a Node) -> impl Iterator<Item = (&'a str, u64)> + 'a {
        self.node_fields().map(move |(i, f)| (f.name(), node.values[i]))
    }

    /// The bits of the node fields of `node`, in place.
    pub(crate) fn node_bits(&self, node: &Node) -> u64 {
        self.node_fields().fold(0, |acc, (i, f)| acc | (node.values[i] << f.shift))
    }

    /// The ID of `tick`, `node` and `sequence` (all already in range).
    #[inline]
    pub(crate) const fn compose_raw(&self, tick: u64, node_bits: u64, sequence: u64) -> u64 {
        (tick << self.fields[0].shift) | node_bits | (sequence << self.sequence().shift)
    }

    /// The ID of the instant `unix_ms` (any instant within its tick), node values and a
    /// sequence number, each checked against its range.
    ///
    /// ```
    /// use snowflake_core::Layout;
    /// let discord = Layout::parse("discord").unwrap();
    /// let node = discord.node(&[("worker", 1), ("process", 0)]).unwrap();
    /// assert_eq!(discord.compose(1462015105796, &node, 7), Ok(175928847299117063));
    /// ```
    pub fn compose(&self, unix_ms: u64, node: &Node, sequence: u64) -> Result<u64> {
        self.check_node_named(node, 0)?;
        let tick = self.tick_of(unix_ms)?;
        let seq = self.sequence();
        if sequence > seq.max() {
            return Err(Error::ValueRange {
                name: seq.name,
                value: i128::from(sequence),
                min: 0,
                max: seq.max(),
            });
        }
        for (i, f) in self.node_fields() {
            if node.values[i] > f.max() {
                return Err(Error::ValueRange {
                    name: f.name,
                    value: i128::from(node.values[i]),
                    min: 0,
                    max: f.max(),
                });
            }
        }
        Ok(self.compose_raw(tick, self.node_bits(node), sequence))
    }

    /// The parts of `id`; an error when `id` has bits set above the layout's width.
    pub fn decode(&self, id: u64) -> Result<Parts> {
        if id > self.max_value() {
            return Err(Error::IdRange { id, bits: self.total_bits });
        }
        let tick = self.time().get(id);
        let mut node = Node::default();
        for (i, f) in self.node_fields() {
            node.values[i] = f.get(id);
        }
        Ok(Parts { id, tick, unix_ms: self.unix_ms_of(tick), sequence: self.sequence().get(id), node })
    }

    /// The smallest ID of the tick holding `unix_ms`: with [`Layout::max_id`], the bounds of a
    /// `WHERE id BETWEEN` range query.
    ///
    /// ```
    /// let twitter = snowflake_core::Layout::parse("twitter").unwrap();
    /// let (lo, hi) = (twitter.min_id(1288834974657).unwrap(), twitter.max_id(1288834974657).unwrap());
    /// assert_eq!((lo, hi), (0, (1 << 22) - 1));
    /// ```
    pub fn min_id(&self, unix_ms: u64) -> Result<u64> {
        Ok(self.tick_of(unix_ms)? << self.time().shift)
    }

    /// The largest ID of the tick holding `unix_ms`.
    pub fn max_id(&self, unix_ms: u64) -> Result<u64> {
        let low = (1u64 << self.time().shift) - 1;
        Ok(self.min_id(unix_ms)? | low)
    }
}

/// Below this many years left, [`Layout::lifetime_warning`] warns (the CLI prints it).
pub const LIFETIME_WARNING_YEARS: u32 = 10;

/// Milliseconds in years of 365.2425 days.
pub fn years_of_ms(ms: u64) -> f64 {
    ms as f64 / (365.2425 * 86_400_000.0)
}

/// A layout that runs out within [`LIFETIME_WARNING_YEARS`]: see [`Layout::lifetime_warning`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LifetimeWarning {
    layout: Layout,
    years_left: f64,
}

impl LifetimeWarning {
    /// The years left (0 once the layout is past its last instant).
    pub const fn years_left(&self) -> f64 {
        self.years_left
    }
}

impl fmt::Display for LifetimeWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; crate::time::RFC3339_LEN];
        let last = crate::time::format_rfc3339(self.layout.last_unix_ms(), &mut buf)
            .unwrap_or("after the year 9999");
        write!(f, "warning: layout {} ", self.layout)?;
        if self.years_left <= 0.0 {
            write!(f, "ended at {last}: it issues no more IDs")?;
        } else {
            write!(f, "ends at {last}, in {:.1} years", self.years_left)?;
        }
        f.write_str("; plan the move to a layout with a later epoch, more time bits or a longer tick")
    }
}

impl FromStr for Layout {
    type Err = Error;
    fn from_str(s: &str) -> Result<Layout> {
        Layout::parse(s)
    }
}

impl fmt::Display for Layout {
    /// The canonical text: fields, integer epoch, tick always written (`Ns` when whole
    /// seconds, else `Nms`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_canonical(f)
    }
}

impl fmt::Debug for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Layout(\"{self}\")")
    }
}

/// The last layouts [`Layout::parse`] made, by their text (one longer than `LONGEST` is not
/// kept).
#[cfg(feature = "std")]
mod memo {
    use super::Layout;

    const LONGEST: usize = 256;

    static LAST: crate::memo::Memo<std::boxed::Box<str>, Layout, 8> = crate::memo::Memo::new();

    pub(super) fn get(spec: &str) -> Option<Layout> {
        LAST.get(|text| &**text == spec)
    }

    pub(super) fn put(spec: &str, layout: &Layout) {
        if spec.len() <= LONGEST {
            LAST.put(spec.into(), *layout);
        }
    }
}

#[cfg(all(test, feature = "std"))]
mod memo_tests {
    use super::Layout;
    use std::string::ToString;

    #[test]
    fn a_text_parsed_again_gives_its_layout_and_a_bad_one_is_refused_each_time() {
        for _ in 0..3 {
            let layout = Layout::parse("time:41,worker:2,sequence:21;epoch=7").unwrap();
            assert_eq!(layout.to_string(), "time:41,worker:2,sequence:21;epoch=7;tick=1ms");
            assert!(Layout::parse("time:41,sequence:99;epoch=7").is_err());
        }
        // More texts than are kept, twice over: each gives its own layout.
        for _ in 0..2 {
            for bits in 1..=11 {
                let text = std::format!("time:41,worker:{bits},sequence:12;epoch=1");
                assert_eq!(Layout::parse(&text).unwrap().to_string(), std::format!("{text};tick=1ms"));
            }
        }
    }
}
