//! SQL that issues, bounds and decodes a layout's IDs inside a database: PostgreSQL 12 or later
//! (`snowflake sql --layout L --dialect postgres`).
//!
//! The script installs, for a prefix `P` (default `snowflake`, optionally schema-qualified):
//! - `P_next_id(<node values in layout order>, max_drift_ms => 0, max_wait_ms => 1000)`;
//! - `P_next_ids(<node values>, n, max_drift_ms => 0, max_wait_ms => 1000)`: `n` IDs
//!   (`SETOF bigint`), a tick's worth of slots at a time;
//! - `P_next_id_at(<node values>, unix_ms, max_drift_ms => 0)`: the caller's clock, never
//!   waits (the shared generator vectors run through it); a time behind the state by more
//!   than `max_drift_ms`, or ahead of the server's clock by more than `max_drift_ms` + 1 s, is
//!   refused: replays and backfills need a prefix of their own;
//! - `P_min_id(timestamptz)`, `P_max_id(timestamptz)`: the bounds of a tick, for range queries;
//! - `P_decode(bigint)`: `time`, `unix_ms`, `sequence` and each node field;
//! - `P_state` and `P_offset`, the sequences that hold the state; `P_issue`, which issues
//!   when `P_next_id`'s own common case does not apply, and `P_recover`, a session's first
//!   check of the state after a crash or restart.
//!
//! # Exactness
//!
//! The state is the generator's (see `generator.rs`): the last issued *slot*
//! `tick * 2^sequence_bits + sequence`, so that `nextval` gives the next free one. The rules are
//! core's for `sequence_start=zero` without `rollover`: a new tick starts at sequence 0; a full
//! tick carries into the next; the clock may be behind the state by at most `max_drift_ms`;
//! the last slot of the layout's last tick is never issued. So one prefix fed the same clock
//! readings issues the same IDs as a core generator, bit for bit (the shared vectors check it).
//!
//! # Concurrency
//!
//! The state lives in sequences because sequences are the one non-transactional store of
//! PostgreSQL: a value taken is never given back by a rollback, so a rolled-back transaction's
//! IDs are never handed out again while the server runs. A table row would be rolled back with
//! its transaction (an ID a client already used could be issued again) and would lock every
//! other session out until that transaction ends.
//!
//! A slot is a value `v` of `P_state` plus the offset `o` held in `P_offset`. Within a tick,
//! an ID is `nextval('P_state')` and three reads (issue 31: until then every ID took an
//! advisory lock and an exception block, a quarter of `nextval()`'s rate from 8 sessions):
//! - a session reads `o`, takes `v`, reads `o` again, and issues `v + o` only if both reads
//!   gave the same `o`, not negative;
//! - a jump to a new tick (the clock passed the state) runs under a session-level advisory
//!   lock, taken and released inside the function (never held across a statement, let alone a
//!   transaction) and released by an exception handler if anything, a cancel included,
//!   interrupts it. It makes `o` negative (`-1 - o`), takes `v_j`, issues its slot `s` (or a
//!   block of `P_next_ids` ending at `s`) and sets `o := s - v_j`;
//! - so a value taken while a jump was under way is never issued (its session read a
//!   negative or another `o`), and one taken outside is issued with the offset in force when
//!   it was taken. `s` is at least `v_j + o` and above every slot issued before, so offsets
//!   never shrink, the slots of successive values increase, and no two values share a slot:
//!   sessions never repeat, whatever the clock does. The clock only decides when to jump.
//!
//! The clock is read under the lock for a jump, so a session that waited for the lock never
//! mistakes the others' progress for a clock that went back. Within a session, IDs of one set
//! of node values increase. A state made before `P_offset` existed held the slots themselves:
//! the install script creates the offset at 0, which keeps them.
//!
//! One prefix has one state for all node values (as the slots of every node value are
//! distinct, IDs stay unique): the IDs of a given set of node values are the same as core's
//! when one set is used per prefix, the usual case (one database, one node); otherwise the
//! sets share each tick's sequence numbers. Install a prefix per node (a schema per shard, as
//! Instagram does) to give each its own.
//!
//! # Crashes
//!
//! A sequence's WAL reaches the disk with the next commit that flushes, not when the value is
//! taken: after a crash (`kill -9`, a backend that died, a power cut) the sequence comes back
//! as of its last record on disk, and the slots taken since, by transactions that rolled back,
//! committed with `synchronous_commit = off`, or were still open, are not in it. Writing a mark
//! and flushing it before each slot would cost a WAL flush per ID (or per window) inside the
//! caller's transaction, which a rollback would take back anyway. Instead the lost slots are
//! bounded by the clock:
//! - every slot is at most `max_drift_ms` (itself at most [`SQL_MAX_DRIFT_MS`]) plus
//!   [`crate::AHEAD_SLACK_MS`] ahead of the server's clock when it is taken (`P_next_id_at`
//!   refuses a time beyond, which would also lock every session out until the clock caught up);
//! - a crash is followed by a new run of the server: a start (`pg_postmaster_start_time()`), or
//!   a crash recovery by the running postmaster, which resets the shared statistics
//!   (`pg_stat_get_bgwriter_stat_reset_time()`);
//! - so each session's first call raises the state past the tick of its run's start plus that
//!   margin (2 s), unless the state was created in this run (its comment says in which): a
//!   jump (`P_recover`) whatever `P_state` and `P_offset` came back as, a jump left halfway
//!   (a negative offset) included, and
//!   a session setting then spares the check for the session's life, which ends with the run.
//!
//! A promotion of a standby is a new timeline, not a new run (the standby's postmaster started
//! long before), and an asynchronous standby lacks the old primary's last slots: `P_timeline`
//! names the timeline whose start the state was raised past, and the first call on another
//! raises the slots past the clock *then* plus the same margin (once per timeline, under the
//! lock). The timeline is read from the current WAL file's name, which any role may do; a
//! session on a standby checks nothing until it is promoted. Not covered: the standby's clock
//! behind the old primary's by more than the margin's slack.
//!
//! After a restart, IDs therefore start up to 2 s ahead of the clock: a call with
//! `max_drift_ms = 0` waits for it (up to `max_wait_ms`). What is not covered: the server's
//! clock stepping back across the crash, and a restore of an older backup while the old
//! server still runs. No lock or write is added per ID: a `current_setting` read.
//!
//! # The clock
//!
//! `clock_timestamp()`, the server's wall clock, read when the slot is taken (not `now()`,
//! which stands still within a transaction). When the clock is behind the state by more than
//! `max_drift_ms` (it went back, or a full tick carried ahead), `P_next_id` waits for it with
//! `pg_sleep`, outside the lock, at most `max_wait_ms` in total, then raises
//! `ERR_SNOWFLAKE_CLOCK_BEHIND` or `ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED`, as core's generator does.
//! Errors carry the stable code of core's table of kinds (`KINDS`, written in from it) at the
//! start of the message, and a SQLSTATE: `22023` (ERR_SNOWFLAKE_VALUE), `22008`
//! (ERR_SNOWFLAKE_TIME_RANGE), `22003` (ERR_SNOWFLAKE_INVALID_ID), `55000`
//! (ERR_SNOWFLAKE_CLOCK_BEHIND, ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED).
//!
//! PostgreSQL's `bigint` is signed: layouts of 63 bits or fewer map to positive `bigint`s; a
//! 64-bit layout is refused.

use crate::error::{Error, ErrorKind, Result};
use crate::generator::AHEAD_SLACK_MS;
use crate::hash::Fnv1a;
use crate::layout::{FieldKind, Layout};
use crate::text::Name;
use core::fmt::{self, Write};
use core::str::FromStr;

/// The SQL dialects [`sql`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SqlDialect {
    /// PostgreSQL 12 or later (PL/pgSQL).
    Postgres,
}

impl SqlDialect {
    /// Every dialect.
    pub const ALL: [SqlDialect; 1] = [SqlDialect::Postgres];

    /// The dialect's name: `postgres`.
    pub const fn name(self) -> &'static str {
        match self {
            SqlDialect::Postgres => "postgres",
        }
    }

    /// The dialect called `name` (`postgres`, or its alias `postgresql`).
    ///
    /// ```
    /// use snowflake_core::SqlDialect;
    /// assert_eq!("postgres".parse::<SqlDialect>(), Ok(SqlDialect::Postgres));
    /// assert!("mysql".parse::<SqlDialect>().is_err());
    /// ```
    pub fn from_name(name: &str) -> Option<SqlDialect> {
        match name {
            "postgres" | "postgresql" => Some(SqlDialect::Postgres),
            _ => None,
        }
    }
}

impl FromStr for SqlDialect {
    type Err = Error;
    fn from_str(s: &str) -> Result<SqlDialect> {
        SqlDialect::from_name(s)
            .ok_or(Error::BadOption { name: Name::snippet(s), reason: "unknown SQL dialect (postgres)" })
    }
}

impl fmt::Display for SqlDialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The largest `max_drift_ms` the PostgreSQL functions take (a larger one is refused): after a
/// crash, the server's first IDs start this much, plus [`AHEAD_SLACK_MS`], ahead of its start,
/// past anything the run before may have issued and lost from its WAL (see [`sql`]).
pub const SQL_MAX_DRIFT_MS: u64 = 1000;

/// What follows the layout's marker in the comment of a state created by the install script:
/// the server run it was created in.
const BORN: &str = "; created in the server run of ";

/// The server's run, as an SQL expression (microseconds): it changes with every start, and
/// with every crash recovery without a restart of the postmaster (a backend killed), which
/// resets the shared statistics; never within a run but by `pg_stat_reset_shared('bgwriter')`.
const RUN: &str = "(extract(epoch FROM greatest(pg_postmaster_start_time(), coalesce(pg_stat_get_bgwriter_stat_reset_time(), pg_postmaster_start_time()))) * 1000000)::bigint";

/// The timeline of the WAL written now, as an SQL expression (a primary's only): a promotion
/// starts a new one. The first 8 hex digits of the current WAL file's name; both functions are
/// open to every role.
const CURRENT_TIMELINE: &str =
    "('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint";

/// The prefix of the SQL objects when none is given.
pub const DEFAULT_SQL_PREFIX: &str = "snowflake";

/// Node field names that the functions' own parameters or columns use.
const RESERVED: [&str; 4] = ["unix_ms", "n", "max_drift_ms", "max_wait_ms"];

/// The longest object suffix (`_next_id_at`): PostgreSQL cuts names at 63 bytes.
const LONGEST_SUFFIX: usize = "_next_id_at".len();

/// The SQL that installs the functions of `layout` in `dialect`, their names starting with
/// `prefix` (`snowflake`, or schema-qualified: `ids.snowflake`). Running it again replaces the
/// functions and keeps the state; over a state made for another layout it fails.
///
/// Errors (kind `Value`): a 64-bit layout (PostgreSQL's `bigint` is signed), a layout whose last
/// instant does not fit in `bigint` milliseconds, a node field named `unix_ms`, `max_drift_ms`
/// or `max_wait_ms`, a prefix that is not one or two lowercase identifiers.
///
/// ```
/// use snowflake_core::{sql, Layout, SqlDialect};
/// // Instagram's fields with one bit less of time: 63 bits, positive bigints until 2046.
/// let layout = Layout::parse("time:40,shard:13,sequence:10;epoch=1314220021721")?;
/// let text = sql(&layout, SqlDialect::Postgres, "snowflake")?;
/// assert!(text.contains("FUNCTION \"snowflake_next_id\"(\"shard\" bigint, max_drift_ms bigint DEFAULT 0, max_wait_ms bigint DEFAULT 1000)"));
/// assert!(sql(&Layout::parse("discord")?, SqlDialect::Postgres, "snowflake").is_err()); // 64 bits
/// # Ok::<(), snowflake_core::Error>(())
/// ```
pub fn sql(layout: &Layout, dialect: SqlDialect, prefix: &str) -> Result<String> {
    match dialect {
        SqlDialect::Postgres => postgres(layout, prefix),
    }
}

fn bad(name: &str, reason: &'static str) -> Error {
    Error::BadOption { name: Name::snippet(name), reason }
}

fn is_identifier(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_lowercase() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_')
}

/// `"schema"."name_suffix"` or `"name_suffix"`.
struct Names<'a> {
    schema: Option<&'a str>,
    base: &'a str,
}

impl Names<'_> {
    fn of(&self, suffix: &str) -> String {
        match self.schema {
            Some(schema) => format!("\"{schema}\".\"{}_{suffix}\"", self.base),
            None => format!("\"{}_{suffix}\"", self.base),
        }
    }
}

fn parse_prefix(prefix: &str) -> Result<Names<'_>> {
    let (schema, base) = match prefix.split_once('.') {
        Some((s, b)) => (Some(s), b),
        None => (None, prefix),
    };
    if !schema.is_none_or(is_identifier) || !is_identifier(base) {
        return Err(bad(
            prefix,
            "an SQL prefix is a lowercase identifier (letters, digits, `_`), optionally after a schema: `snowflake`, `ids.snowflake`",
        ));
    }
    if base.len() + LONGEST_SUFFIX > 63 || schema.is_some_and(|s| s.len() > 63) {
        return Err(bad(prefix, "the prefix is too long: PostgreSQL names have at most 63 bytes, and the longest suffix is `_next_id_at`"));
    }
    Ok(Names { schema, base })
}

fn postgres(layout: &Layout, prefix: &str) -> Result<String> {
    let names = parse_prefix(prefix)?;
    if layout.total_bits() > 63 {
        return Err(bad(
            "postgres",
            "a 64-bit layout does not fit PostgreSQL's signed bigint: use a layout of 63 bits or fewer (e.g. one bit less of time)",
        ));
    }
    if layout.last_unix_ms() > i64::MAX as u64 {
        return Err(bad("postgres", "the layout's last instant does not fit in bigint milliseconds"));
    }
    let nodes: Vec<_> = layout.node_fields().map(|(_, f)| *f).collect();
    if let Some(f) = nodes.iter().find(|f| RESERVED.contains(&f.name())) {
        return Err(bad(f.name(), "this node field name is a parameter of the SQL functions (unix_ms, n, max_drift_ms, max_wait_ms): rename the field"));
    }
    debug_assert!(layout.fields().iter().filter(|f| f.kind() == FieldKind::Node).count() == nodes.len());

    let seq = layout.sequence();
    let (epoch, tick, last_ms) = (layout.epoch_ms(), layout.tick_ms(), layout.last_unix_ms());
    let seq_bits = seq.bits();
    let seq_max = seq.max();
    let last_slot = (layout.max_tick() << seq_bits) | seq_max;
    let state = names.of("state");
    let offset = names.of("offset");
    let timeline = names.of("timeline");
    let issue = names.of("issue");
    let recover = names.of("recover");
    let marker = format!("libsnowflake state of {layout}");
    let mut h = Fnv1a::new();
    let _ = write!(h, "libsnowflake advisory lock {prefix}");
    let lock_key = h.0 as i64;
    let guc = format!("libsnowflake.state_{:016x}", h.0);

    let params: Vec<String> = nodes.iter().map(|f| format!("\"{}\" bigint", f.name())).collect();
    let quoted: Vec<String> = nodes.iter().map(|f| format!("\"{}\"", f.name())).collect();
    // One IF on the common path (a PL/pgSQL statement costs about as much as a sequence
    // read), then the one that names the value.
    let mut checks = String::new();
    if !nodes.is_empty() {
        let any: Vec<String> = nodes
            .iter()
            .map(|f| {
                format!("\"{n}\" IS NULL OR \"{n}\" < 0 OR \"{n}\" > {max}", n = f.name(), max = f.max())
            })
            .collect();
        let _ = writeln!(checks, "  IF {} THEN", any.join(" OR "));
        for f in &nodes {
            let _ = write!(
                checks,
                "    IF \"{n}\" IS NULL OR \"{n}\" < 0 OR \"{n}\" > {max} THEN\n      RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = format('{e_value} {n} = %s is out of range: the largest allowed is {max}', coalesce(\"{n}\"::text, 'NULL'));\n    END IF;\n",
                n = f.name(),
                max = f.max(),
                e_value = ErrorKind::Value.code(),
            );
        }
        let _ = writeln!(checks, "  END IF;");
    }
    let node_bits = if nodes.is_empty() {
        "0".to_string()
    } else {
        let parts: Vec<String> =
            nodes.iter().map(|f| format!("(\"{}\" << {})", f.name(), f.shift())).collect();
        parts.join(" | ")
    };
    let comma = if nodes.is_empty() { "" } else { ", " };
    // `(("a" >> 5) | ("b" >> 5)) = 0 AND `: every node value within its bits (false for a
    // negative one, NULL for NULL), in few operators.
    let nodes_valid = if nodes.is_empty() {
        String::new()
    } else {
        let parts: Vec<String> =
            nodes.iter().map(|f| format!("(\"{}\" >> {})", f.name(), f.bits())).collect();
        format!("({}) = 0 AND ", parts.join(" | "))
    };
    // `next_id`'s common case stays this far from the layout's end (its last slot within
    // max_drift_ms of the clock is then never the layout's last): milliseconds since the epoch.
    let fast_d_max =
        (i128::from(layout.max_tick()) - 1 - i128::from(SQL_MAX_DRIFT_MS / tick)) * i128::from(tick);
    let fast_d_max = fast_d_max.max(-1);
    let per_tick = |ms: &str| if tick == 1 { ms.to_string() } else { format!("{ms} / {tick}") };

    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(w, "-- libsnowflake: IDs of the layout {layout}");
    let _ = writeln!(
        w,
        "-- for PostgreSQL 12 or later. Generated by `snowflake sql --dialect postgres`; do not edit."
    );
    let _ = writeln!(w, "--");
    let _ = writeln!(
        w,
        "--   {}({}{comma}max_drift_ms => 0, max_wait_ms => 1000) RETURNS bigint",
        names.of("next_id"),
        quoted.join(", ")
    );
    let _ = writeln!(
        w,
        "--   {}({}{comma}n, max_drift_ms => 0, max_wait_ms => 1000) RETURNS SETOF bigint: n IDs at once",
        names.of("next_ids"),
        quoted.join(", ")
    );
    let _ = writeln!(
        w,
        "--   {}({}{comma}unix_ms, max_drift_ms => 0) RETURNS bigint: at the caller's clock, never waits",
        names.of("next_id_at"),
        quoted.join(", ")
    );
    let _ = writeln!(
        w,
        "--   {}(timestamptz), {}(timestamptz) RETURNS bigint: WHERE id BETWEEN the two",
        names.of("min_id"),
        names.of("max_id")
    );
    let _ = writeln!(
        w,
        "--   {}(bigint) RETURNS (time, unix_ms, sequence{comma}{})",
        names.of("decode"),
        quoted.join(", ")
    );
    let _ = writeln!(w, "--");
    let _ = writeln!(
        w,
        "-- The state is the sequences {state} and {offset}: a slot (tick * 2^{seq_bits} + sequence) is a"
    );
    let _ = writeln!(
        w,
        "-- value of the first plus the second. They are shared by every session and node value of this"
    );
    let _ = writeln!(
        w,
        "-- prefix. Within a tick an ID takes a nextval, with no lock; a new tick moves the offset under a"
    );
    let _ = writeln!(
        w,
        "-- session advisory lock (key {lock_key}) held for a few statements. Run the script again to"
    );
    let _ = writeln!(
        w,
        "-- replace the functions: the state is kept. Callers need EXECUTE on the functions and USAGE,"
    );
    let _ = writeln!(w, "-- SELECT, UPDATE on the sequences (state, offset, timeline).");
    let _ = write!(
        w,
        r#"
DO $install$
DECLARE
  _comment text := obj_description(to_regclass('{state_lit}'), 'pg_class');
BEGIN
  IF to_regclass('{state_lit}') IS NOT NULL
     AND _comment IS DISTINCT FROM '{marker}' AND NOT starts_with(_comment, '{marker}{born}') THEN
    RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = format('{e_value} {state_lit} already holds the state of another layout (%s): install this layout under another prefix', _comment);
  END IF;
  IF to_regclass('{state_lit}') IS NULL THEN
    CREATE SEQUENCE {state} AS bigint MINVALUE 0 START 0 CACHE 1 NO CYCLE;
    -- Born in this server's run: until the server restarts, it has lost no write (see {issue}).
    EXECUTE format('COMMENT ON SEQUENCE {state} IS %L', '{marker}{born}' || {run}::text);
    IF to_regclass('{offset_lit}') IS NOT NULL THEN
      PERFORM setval('{offset_lit}', 0);
    END IF;
  END IF;
  -- Made by this version: a state made before it held the slots themselves, which an offset
  -- of 0 keeps.
  IF to_regclass('{offset_lit}') IS NULL THEN
    CREATE SEQUENCE {offset} AS bigint MINVALUE -9223372036854775808 START 0 CACHE 1 NO CYCLE;
    PERFORM setval('{offset_lit}', 0);
    COMMENT ON SEQUENCE {offset} IS 'libsnowflake: slot = value of {state_lit} + this offset; negative while a jump is under way';
  END IF;
  -- The timeline whose start the state was raised past (see {recover}): this one for a state
  -- made now, none for an older state (its first call after this install raises it once).
  IF to_regclass('{timeline_lit}') IS NULL THEN
    CREATE SEQUENCE {timeline} AS bigint MINVALUE 0 START 0 CACHE 1 NO CYCLE;
    COMMENT ON SEQUENCE {timeline} IS 'libsnowflake: the timeline (a promotion starts a new one) whose start {state_lit} was raised past';
    IF _comment IS NULL AND NOT pg_is_in_recovery() THEN
      PERFORM setval('{timeline_lit}', {current_timeline});
    END IF;
  END IF;
END
$install$;

-- A slot is a value v of {state_lit} plus the offset o in {offset_lit}: nextval gives each
-- session a value of its own, so within a tick an ID costs a nextval and three reads, with no
-- lock and no other write. Only a jump to a new tick moves o, under the advisory lock: it
-- first makes o negative (-1 - o), then takes v_j = nextval, issues its slot s (or a block
-- ending at s) and sets o := s - v_j. A session issues v + o only if it read the same o, not
-- negative, before and after its nextval: then no jump overlapped the nextval, and v + o is
-- the slot of v. Offsets never shrink (s is at least v_j's slot under the old offset, and
-- above every slot issued before), so the slots of successive values increase, and two values
-- never share a slot. The clock decides when to jump, never which slot is free: a clock that
-- goes back makes sessions wait (or borrow up to max_drift_ms), never repeat.
--
-- After a crash the sequences come back as of their last WAL record written to disk: the
-- values taken after it (by transactions that rolled back, committed with
-- synchronous_commit = off, or were still open) are not in them. Every slot is at most
-- {margin_ms} ms (max_drift_ms, at most {max_drift_ms}, plus {slack_ms}) ahead of the server's
-- clock when it is taken, and a crash is followed by a new run (a start, or a reset of the
-- shared statistics by crash recovery), so each session's first call moves the slots above
-- the tick of this run's start plus {margin_ms} ms, unless the state was created in this run.
-- After that, a session setting ({guc}) spares the check: a session does not outlive its
-- server's run.
--
-- A promoted standby (asynchronous: the primary's last slots may not have reached it) is not
-- a new run: its postmaster started long before. Its WAL is a new timeline, though: the first
-- call on a timeline that {timeline_lit} does not name raises the slots past the clock now
-- plus {margin_ms} ms, past anything the old primary issued before it was lost (the residue:
-- the standby's clock behind the old primary's). A session of a standby checks nothing, so
-- that it checks once promoted.
CREATE OR REPLACE FUNCTION {recover}()
RETURNS void LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  _run bigint := {run};
  _e bigint;
  _o bigint;
  _v bigint;
  _floor bigint;
  _x text;
  _tl bigint;
BEGIN
  IF pg_is_in_recovery() THEN
    RETURN;
  END IF;
  _tl := {current_timeline};
  IF coalesce(pg_sequence_last_value('{timeline_lit}'), 0) <> _tl THEN
    BEGIN
      _x := pg_advisory_lock({lock_key})::text;
      IF coalesce(pg_sequence_last_value('{timeline_lit}'), 0) <> _tl THEN
        _e := pg_sequence_last_value('{offset_lit}');
        _o := CASE WHEN _e >= 0 THEN _e ELSE -1 - _e END;
        _floor := least(greatest((CAST(floor(extract(epoch FROM clock_timestamp()) * 1000) AS bigint) + {margin_ms} - {epoch}) / {tick} + 1, 0) << {seq_bits}, {last_slot});
        IF _e < 0 OR coalesce(pg_sequence_last_value('{state_lit}'), -1) + 1 + _o < _floor THEN
          _x := setval('{offset_lit}', -1 - _o)::text;
          _v := nextval('{state_lit}');
          _x := setval('{offset_lit}', greatest(_v + _o, _floor - 1) - _v)::text;
        END IF;
        _x := setval('{timeline_lit}', _tl)::text;
      END IF;
      _x := pg_advisory_unlock({lock_key})::text;
    EXCEPTION WHEN OTHERS OR query_canceled THEN
      _x := pg_advisory_unlock({lock_key})::text;
      RAISE;
    END;
  END IF;
  IF obj_description('{state_lit}'::regclass, 'pg_class') IS DISTINCT FROM '{marker}{born}' || _run::text THEN
    BEGIN
      _x := pg_advisory_lock({lock_key})::text;
      _e := pg_sequence_last_value('{offset_lit}');
      _o := CASE WHEN _e >= 0 THEN _e ELSE -1 - _e END;
      _floor := least(greatest((_run / 1000 + {margin_ms} - {epoch}) / {tick} + 1, 0) << {seq_bits}, {last_slot});
      IF _e < 0 OR coalesce(pg_sequence_last_value('{state_lit}'), -1) + 1 + _o < _floor THEN
        _x := setval('{offset_lit}', -1 - _o)::text;
        _v := nextval('{state_lit}');
        -- _v takes the slot before the floor (never issued), the next value the floor.
        _x := setval('{offset_lit}', greatest(_v + _o, _floor - 1) - _v)::text;
      END IF;
      _x := pg_advisory_unlock({lock_key})::text;
    EXCEPTION WHEN OTHERS OR query_canceled THEN
      _x := pg_advisory_unlock({lock_key})::text;
      RAISE;
    END;
  END IF;
  _x := set_config('{guc}', 'checked', false);
END
$fn$;

-- Takes one slot and returns the ID with the node bits given; waits for the clock at most
-- _max_wait_ms when it is behind. _at_ms: the caller's clock reading (never waits), or NULL
-- for clock_timestamp(). {next_id} tries the common case itself first.
CREATE OR REPLACE FUNCTION {issue}(_node_bits bigint, _at_ms bigint, _max_drift_ms bigint, _max_wait_ms bigint)
RETURNS bigint LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  _ms bigint;
  _now bigint;
  _first_ms bigint;
  _t bigint;
  _e bigint;
  _o bigint;
  _v bigint;
  _n bigint;
  _l bigint;
  _slot bigint;
  _drift bigint;
  _limit bigint;
  _target bigint;
  -- Calls are assigned (not PERFORMed): PL/pgSQL evaluates an assignment of one expression
  -- directly, without a query of its own, which halves the cost of an ID.
  _x text;
BEGIN
  IF _max_drift_ms IS NULL OR _max_drift_ms < 0 OR _max_drift_ms > {max_drift_ms} THEN
    RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = format('{e_value} max_drift_ms = %s is out of range: from 0 to {max_drift_ms} (a cap, so that after a crash the server knows how far ahead of its clock IDs may have been issued)', coalesce(_max_drift_ms::text, 'NULL'));
  END IF;
  IF _max_wait_ms IS NULL OR _max_wait_ms < 0 THEN
    RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = format('{e_value} max_wait_ms = %s: must be a non-negative integer', coalesce(_max_wait_ms::text, 'NULL'));
  END IF;
  _drift := _max_drift_ms / {tick};
  IF current_setting('{guc}', true) IS DISTINCT FROM 'checked' THEN
    PERFORM {recover}();
  END IF;
  LOOP
    IF _at_ms IS NULL THEN
      _ms := floor(date_part('epoch', clock_timestamp()) * 1000)::bigint;
    ELSE
      -- The caller's time: no slot further than the clock + max_drift_ms + {slack_ms} ms.
      _ms := _at_ms;
      _now := floor(date_part('epoch', clock_timestamp()) * 1000)::bigint;
      _limit := (greatest(_now, {epoch}) + _max_drift_ms + {slack_ms} - {epoch}) / {tick};
    END IF;
    IF _ms < {epoch} OR _ms > {last_ms} THEN
      RAISE EXCEPTION USING ERRCODE = '22008', MESSAGE = format('{e_time_range} time %s (Unix ms) is outside the layout''s range [{epoch}, {last_ms}]', _ms);
    END IF;
    _t := (_ms - {epoch}) / {tick};
    IF _t > _limit THEN
      RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = format('{e_value} time %s (Unix ms) is %s ms ahead of the server''s clock: {next_id_at} takes times at most max_drift_ms + {slack_ms} ms ahead (now up to %s), or the state would stay there and lock every session out until the clock caught up; replays and backfills need a prefix of their own', _ms, _ms - _now, {epoch} + (_limit + 1) * {tick} - 1);
    END IF;
    -- The next slot, _n, if no other session takes one first.
    _e := pg_sequence_last_value('{offset_lit}');
    _n := coalesce(pg_sequence_last_value('{state_lit}'), -1) + 1 + greatest(_e, 0);
    _l := _n >> {seq_bits};
    IF _e >= 0 AND _l >= _t AND _l - _t <= _drift AND _n < {last_slot} AND (_limit IS NULL OR _l <= _limit) THEN
      -- Within the tick (or borrowing): no lock.
      _v := nextval('{state_lit}');
      IF pg_sequence_last_value('{offset_lit}') = _e THEN
        _slot := _v + _e;
        _l := _slot >> {seq_bits};
        -- Others may have taken the slots up to the tick's end meanwhile.
        IF _l - _t <= _drift AND _slot < {last_slot} AND (_limit IS NULL OR _l <= _limit) THEN
          RETURN (_l << {time_shift}) | _node_bits | ((_slot & {seq_max}) << {seq_shift});
        END IF;
      END IF;
      -- A jump overlapped the nextval, or the slot is past what may be issued: _v is never
      -- issued; again.
      CONTINUE;
    END IF;
    IF _e < 0 OR _l < _t THEN
      -- A new tick, or another session's jump under way: a jump, under the lock.
      _slot := NULL;
      BEGIN
        _x := pg_advisory_lock({lock_key})::text;
        IF _at_ms IS NULL THEN
          -- Read under the lock, so a session that waited for it never takes the others'
          -- progress for a clock that went back.
          _ms := floor(date_part('epoch', clock_timestamp()) * 1000)::bigint;
          _t := (_ms - {epoch}) / {tick};
        END IF;
        _e := pg_sequence_last_value('{offset_lit}');
        _o := CASE WHEN _e >= 0 THEN _e ELSE -1 - _e END;
        IF _ms <= {last_ms} AND (_e < 0 OR (coalesce(pg_sequence_last_value('{state_lit}'), -1) + 1 + _o) >> {seq_bits} < _t) THEN
          -- Sessions that read the offset before this and take a value after it issue nothing.
          _x := setval('{offset_lit}', -1 - _o)::text;
          _v := nextval('{state_lit}');
          _slot := greatest(_v + _o, _t << {seq_bits});
          _l := _slot >> {seq_bits};
          IF _l - _t <= _drift AND _slot < {last_slot} AND (_limit IS NULL OR _l <= _limit) THEN
            _x := setval('{offset_lit}', _slot - _v)::text;
          ELSE
            -- Others ran ahead meanwhile: nothing issued, _v never will be.
            _x := setval('{offset_lit}', _o)::text;
            _slot := NULL;
          END IF;
        END IF;
        _x := pg_advisory_unlock({lock_key})::text;
      EXCEPTION WHEN OTHERS OR query_canceled THEN
        _x := pg_advisory_unlock({lock_key})::text;
        RAISE;
      END;
      IF _slot IS NOT NULL THEN
        RETURN ((_slot >> {seq_bits}) << {time_shift}) | _node_bits | ((_slot & {seq_max}) << {seq_shift});
      END IF;
      CONTINUE;
    END IF;
    -- The next slot is ahead of the clock by more than max_drift_ms, the layout's last, or
    -- past what next_id_at may take: nothing was taken.
    IF _l - _t <= _drift AND _n >= {last_slot} THEN
      RAISE EXCEPTION USING ERRCODE = '22008', MESSAGE = '{e_time_range} time {past_ms} (Unix ms) is past the layout''s last instant {last_ms}';
    END IF;
    IF _l - _t <= _drift THEN
      RAISE EXCEPTION USING ERRCODE = '55000', MESSAGE = format('{e_sequence_exhausted} retry_after_ms=%s: every sequence number up to max_drift_ms + {slack_ms} ms ahead of the server''s clock is taken; retry later', (_l - _limit) * {tick});
    END IF;
    _first_ms := coalesce(_first_ms, _ms);
    _target := {epoch} + (_l - _drift) * {tick};
    IF _at_ms IS NULL AND _target <= _first_ms + _max_wait_ms THEN
      PERFORM pg_sleep((_target - _ms) / 1000.0);
    ELSIF (_n & {seq_max}) = 0 AND _l - _t = _drift + 1 THEN
      RAISE EXCEPTION USING ERRCODE = '55000', MESSAGE = format('{e_sequence_exhausted} retry_after_ms=%s: every sequence number of the current tick is taken; retry later (or raise max_wait_ms / max_drift_ms)', _target - _ms);
    ELSIF _at_ms IS NOT NULL THEN
      RAISE EXCEPTION USING ERRCODE = '55000', MESSAGE = format('{e_clock_behind} behind_ms=%s retry_after_ms=%s: time %s (Unix ms) is %s ms behind the state of {state_lit} (its IDs have been issued up to %s), so an ID at that time could repeat one of them; replays and backfills need a prefix of their own', {epoch} + _l * {tick} - _ms, _target - _ms, _ms, {epoch} + _l * {tick} - _ms, {epoch} + _l * {tick});
    ELSE
      RAISE EXCEPTION USING ERRCODE = '55000', MESSAGE = format('{e_clock_behind} behind_ms=%s retry_after_ms=%s: the server clock is behind the last issued ID (it moved back, more IDs were borrowed ahead than max_drift_ms allows, or the server restarted less than {margin_ms} ms ago)', {epoch} + _l * {tick} - _ms, _target - _ms);
    END IF;
  END LOOP;
END
$fn$;

CREATE OR REPLACE FUNCTION {next_id}({params}{comma}max_drift_ms bigint DEFAULT 0, max_wait_ms bigint DEFAULT 1000)
RETURNS bigint LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  _d bigint;
  _e bigint;
  _hi bigint;
  _n bigint;
BEGIN
  -- The common case, once this session has checked the state ({recover}): the next slot is
  -- in the clock's tick (or within max_drift_ms ahead), and no jump overlaps the nextval that
  -- takes it (see {issue}); not near the layout's end. Anything else, {issue} handles. Few and
  -- small expressions: PL/pgSQL prepares each one again in every transaction, which costs
  -- more than evaluating it.
  _d := floor(date_part('epoch', clock_timestamp()) * 1000)::bigint - {epoch};
  _e := pg_sequence_last_value('{offset_lit}');
  -- The last slot that may be issued now.
  _hi := CASE WHEN max_drift_ms BETWEEN 0 AND {max_drift_ms} THEN (({d_ticks} + {drift_ticks}) << {seq_bits}) | {seq_max} END;
  _n := CASE WHEN _e >= 0 AND {nodes_valid}_d BETWEEN 0 AND {fast_d_max} AND max_wait_ms >= 0
      AND coalesce(pg_sequence_last_value('{state_lit}'), -1) + 1 + _e BETWEEN {d_ticks} << {seq_bits} AND _hi
      AND current_setting('{guc}', true) = 'checked'
    THEN nextval('{state_lit}') + _e END;
  IF pg_sequence_last_value('{offset_lit}') = _e AND _n <= _hi THEN
    RETURN ((_n >> {seq_bits}) << {time_shift}) | {node_bits} | ((_n & {seq_max}) << {seq_shift});
  END IF;
{checks}  RETURN {issue}({node_bits}, NULL, max_drift_ms, max_wait_ms);
END
$fn$;

-- n IDs in one call, in blocks: each block is a jump (see {issue}) that takes up to the
-- rest of the slots that may be issued now, so a block costs the same whatever its size.
-- Waits for the clock at most max_wait_ms between blocks.
CREATE OR REPLACE FUNCTION {next_ids}({params}{comma}n bigint, max_drift_ms bigint DEFAULT 0, max_wait_ms bigint DEFAULT 1000)
RETURNS SETOF bigint LANGUAGE plpgsql VOLATILE ROWS 1000 AS $fn$
DECLARE
  _left bigint := n;
  _ms bigint;
  _first_ms bigint;
  _t bigint;
  _e bigint;
  _o bigint;
  _v bigint;
  _first bigint;
  _count bigint;
  _target bigint;
  _x text;
BEGIN
{checks}  IF n IS NULL OR n < 0 OR n > {max_ids} THEN
    RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = format('{e_value} n = %s is out of range: from 0 to {max_ids}', coalesce(n::text, 'NULL'));
  END IF;
  IF max_drift_ms IS NULL OR max_drift_ms < 0 OR max_drift_ms > {max_drift_ms} THEN
    RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = format('{e_value} max_drift_ms = %s is out of range: from 0 to {max_drift_ms} (a cap, so that after a crash the server knows how far ahead of its clock IDs may have been issued)', coalesce(max_drift_ms::text, 'NULL'));
  END IF;
  IF max_wait_ms IS NULL OR max_wait_ms < 0 THEN
    RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = format('{e_value} max_wait_ms = %s: must be a non-negative integer', coalesce(max_wait_ms::text, 'NULL'));
  END IF;
  IF current_setting('{guc}', true) IS DISTINCT FROM 'checked' THEN
    PERFORM {recover}();
  END IF;
  WHILE _left > 0 LOOP
    _count := 0;
    BEGIN
      _x := pg_advisory_lock({lock_key})::text;
      _ms := floor(date_part('epoch', clock_timestamp()) * 1000)::bigint;
      IF _ms >= {epoch} AND _ms <= {last_ms} THEN
        _t := (_ms - {epoch}) / {tick};
        _e := pg_sequence_last_value('{offset_lit}');
        _o := CASE WHEN _e >= 0 THEN _e ELSE -1 - _e END;
        _x := setval('{offset_lit}', -1 - _o)::text;
        _v := nextval('{state_lit}');
        _first := greatest(_v + _o, _t << {seq_bits});
        -- Up to the last slot of the last tick within max_drift_ms, never the layout's last.
        _count := greatest(least(_left, least((least(_t + max_drift_ms / {tick}, {max_tick}) << {seq_bits}) | {seq_max}, {last_slot} - 1) - _first + 1), 0);
        IF _count > 0 THEN
          -- _v takes the block's last slot.
          _x := setval('{offset_lit}', _first + _count - 1 - _v)::text;
        ELSE
          -- Nothing issued, and _v never will be.
          _x := setval('{offset_lit}', _o)::text;
        END IF;
      END IF;
      _x := pg_advisory_unlock({lock_key})::text;
    EXCEPTION WHEN OTHERS OR query_canceled THEN
      _x := pg_advisory_unlock({lock_key})::text;
      RAISE;
    END;
    IF _count > 0 THEN
      RETURN QUERY SELECT ((_s >> {seq_bits}) << {time_shift}) | {node_bits} | ((_s & {seq_max}) << {seq_shift}) FROM generate_series(_first, _first + _count - 1) _s;
      _left := _left - _count;
      _first_ms := NULL;
    ELSIF _ms < {epoch} OR _ms > {last_ms} THEN
      RAISE EXCEPTION USING ERRCODE = '22008', MESSAGE = format('{e_time_range} time %s (Unix ms) is outside the layout''s range [{epoch}, {last_ms}]', _ms);
    ELSIF _first >= {last_slot} THEN
      RAISE EXCEPTION USING ERRCODE = '22008', MESSAGE = '{e_time_range} time {past_ms} (Unix ms) is past the layout''s last instant {last_ms}';
    ELSE
      -- The state is ahead of the clock by more than max_drift_ms: wait for it.
      _first_ms := coalesce(_first_ms, _ms);
      _target := {epoch} + ((_first >> {seq_bits}) - max_drift_ms / {tick}) * {tick};
      IF _target <= _first_ms + max_wait_ms THEN
        PERFORM pg_sleep((_target - _ms) / 1000.0);
      ELSIF (_first & {seq_max}) = 0 AND (_first >> {seq_bits}) - _t = max_drift_ms / {tick} + 1 THEN
        RAISE EXCEPTION USING ERRCODE = '55000', MESSAGE = format('{e_sequence_exhausted} retry_after_ms=%s: every sequence number of the current tick is taken; retry later (or raise max_wait_ms / max_drift_ms)', _target - _ms);
      ELSE
        RAISE EXCEPTION USING ERRCODE = '55000', MESSAGE = format('{e_clock_behind} behind_ms=%s retry_after_ms=%s: the server clock is behind the last issued ID (it moved back, more IDs were borrowed ahead than max_drift_ms allows, or the server restarted less than {margin_ms} ms ago)', {epoch} + (_first >> {seq_bits}) * {tick} - _ms, _target - _ms);
      END IF;
    END IF;
  END LOOP;
END
$fn$;

CREATE OR REPLACE FUNCTION {next_id_at}({params}{comma}unix_ms bigint, max_drift_ms bigint DEFAULT 0)
RETURNS bigint LANGUAGE plpgsql VOLATILE AS $fn$
BEGIN
{checks}  IF unix_ms IS NULL THEN
    RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = '{e_value} unix_ms is NULL';
  END IF;
  RETURN {issue}({node_bits}, unix_ms, max_drift_ms, 0);
END
$fn$;

CREATE OR REPLACE FUNCTION {min_id}(timestamptz)
RETURNS bigint LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
DECLARE
  _ms bigint;
BEGIN
  IF isfinite($1) THEN
    _ms := floor(extract('epoch' FROM $1) * 1000)::bigint;
  END IF;
  IF _ms IS NULL OR _ms < {epoch} OR _ms > {last_ms} THEN
    RAISE EXCEPTION USING ERRCODE = '22008', MESSAGE = format('{e_time_range} %s is outside the layout''s range [{epoch}, {last_ms}] (Unix ms)', $1);
  END IF;
  RETURN ((_ms - {epoch}) / {tick}) << {time_shift};
END
$fn$;

CREATE OR REPLACE FUNCTION {max_id}(timestamptz)
RETURNS bigint LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
  SELECT {min_id}($1) | {low_mask}
$fn$;

CREATE OR REPLACE FUNCTION {decode}(bigint, OUT "time" timestamptz, OUT unix_ms bigint, OUT "sequence" bigint{out_nodes})
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
BEGIN
  IF $1 < 0 OR $1 > {max_value} THEN
    RAISE EXCEPTION USING ERRCODE = '22003', MESSAGE = format('{e_invalid_id} ID %s has bits set above the layout''s {total_bits} bits', $1);
  END IF;
  unix_ms := {epoch} + ($1 >> {time_shift}) * {tick};
  "time" := to_timestamp(unix_ms / 1000.0);
  "sequence" := ($1 >> {seq_shift}) & {seq_max};
{decode_nodes}END
$fn$;
"#,
        state_lit = state.replace('\'', "''"),
        offset_lit = offset.replace('\'', "''"),
        timeline_lit = timeline.replace('\'', "''"),
        timeline = timeline,
        current_timeline = CURRENT_TIMELINE,
        born = BORN,
        run = RUN,
        guc = guc,
        margin_ms = SQL_MAX_DRIFT_MS + AHEAD_SLACK_MS,
        max_drift_ms = SQL_MAX_DRIFT_MS,
        slack_ms = AHEAD_SLACK_MS,
        e_value = ErrorKind::Value.code(),
        e_time_range = ErrorKind::TimeRange.code(),
        e_invalid_id = ErrorKind::InvalidId.code(),
        e_clock_behind = ErrorKind::ClockBehind.code(),
        e_sequence_exhausted = ErrorKind::SequenceExhausted.code(),
        tick = tick,
        epoch = epoch,
        last_ms = last_ms,
        past_ms = u128::from(last_ms) + 1,
        seq_bits = seq_bits,
        seq_max = seq_max,
        seq_shift = seq.shift(),
        time_shift = layout.time().shift(),
        last_slot = last_slot,
        low_mask = (1u64 << layout.time().shift()) - 1,
        max_value = layout.max_value(),
        total_bits = layout.total_bits(),
        next_id = names.of("next_id"),
        next_ids = names.of("next_ids"),
        d_ticks = per_tick("_d"),
        drift_ticks = per_tick("max_drift_ms"),
        max_ids = crate::MAX_IDS_PER_CALL,
        max_tick = layout.max_tick(),
        next_id_at = names.of("next_id_at"),
        min_id = names.of("min_id"),
        max_id = names.of("max_id"),
        decode = names.of("decode"),
        params = params.join(", "),
        out_nodes = nodes.iter().map(|f| format!(", OUT \"{}\" bigint", f.name())).collect::<String>(),
        decode_nodes = nodes
            .iter()
            .map(|f| format!("  \"{n}\" := ($1 >> {s}) & {m};\n", n = f.name(), s = f.shift(), m = f.max()))
            .collect::<String>(),
    );
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    fn pg(spec: &str, prefix: &str) -> Result<String> {
        sql(&Layout::parse(spec).unwrap(), SqlDialect::Postgres, prefix)
    }

    #[test]
    fn names_and_signatures_follow_the_layout() {
        let text = pg("twitter", "snowflake").unwrap();
        assert!(text.starts_with("-- libsnowflake: IDs of the layout time:41,datacenter:5,worker:5,sequence:12;epoch=1288834974657;tick=1ms\n"));
        assert!(text.contains("FUNCTION \"snowflake_next_id\"(\"datacenter\" bigint, \"worker\" bigint, max_drift_ms bigint DEFAULT 0, max_wait_ms bigint DEFAULT 1000)"));
        assert!(text.contains("FUNCTION \"snowflake_next_id_at\"(\"datacenter\" bigint, \"worker\" bigint, unix_ms bigint, max_drift_ms bigint DEFAULT 0)"));
        assert!(text.contains("FUNCTION \"snowflake_next_ids\"(\"datacenter\" bigint, \"worker\" bigint, n bigint, max_drift_ms bigint DEFAULT 0, max_wait_ms bigint DEFAULT 1000)\nRETURNS SETOF bigint"));
        assert!(text.contains("CREATE SEQUENCE \"snowflake_offset\" AS bigint MINVALUE -9223372036854775808"));
        assert!(text.contains("(\"datacenter\" << 17) | (\"worker\" << 12)"));
        assert!(text.contains("OUT \"sequence\" bigint, OUT \"datacenter\" bigint, OUT \"worker\" bigint)"));
        let text = pg("time:47,sequence:16;epoch=0;tick=1ms", "ids.sf").unwrap();
        assert!(text.contains("FUNCTION \"ids\".\"sf_next_id\"(max_drift_ms bigint DEFAULT 0"));
        assert!(text.contains("RETURN \"ids\".\"sf_issue\"(0, NULL, max_drift_ms, max_wait_ms);"));
        assert!(text.contains("nextval('\"ids\".\"sf_state\"')"));
        assert!(text.contains("pg_sequence_last_value('\"ids\".\"sf_offset\"')"));
    }

    #[test]
    fn refusals_are_value_errors_that_say_why() {
        for (spec, prefix, says) in [
            ("discord", "snowflake", "64-bit layout"),
            ("time:41,sequence:23;epoch=0;tick=1ms", "snowflake", "64-bit layout"),
            ("time:41,unix_ms:10,sequence:12;epoch=0", "snowflake", "parameter of the SQL functions"),
            ("time:41,n:10,sequence:12;epoch=0", "snowflake", "parameter of the SQL functions"),
            ("time:54,sequence:1;epoch=0;tick=1s", "snowflake", "bigint milliseconds"),
            ("twitter", "Snowflake", "lowercase identifier"),
            ("twitter", "a.b.c", "lowercase identifier"),
            ("twitter", "x; DROP TABLE t", "lowercase identifier"),
            ("twitter", "", "lowercase identifier"),
            ("twitter", &"p".repeat(53), "too long"),
        ] {
            let err = pg(spec, prefix).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Value, "{spec} {prefix}");
            assert!(err.to_string().contains(says), "{spec} {prefix}: {err}");
        }
        assert!(pg("twitter", &"p".repeat(52)).is_ok());
        assert_eq!("mysql".parse::<SqlDialect>().unwrap_err().kind(), ErrorKind::Value);
    }

    #[test]
    fn every_preset_of_63_bits_or_fewer_has_sql() {
        for (name, _) in crate::PRESETS {
            let layout = Layout::parse(name).unwrap();
            assert_eq!(
                sql(&layout, SqlDialect::Postgres, DEFAULT_SQL_PREFIX).is_ok(),
                layout.total_bits() <= 63,
                "{name}"
            );
        }
    }
}
