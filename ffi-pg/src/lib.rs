//! The PostgreSQL extension `snowflake`: core's generator inside the server.
//!
//! `CREATE EXTENSION snowflake` (with `shared_preload_libraries = 'snowflake'`) installs, in
//! schema `snowflake`, functions over any layout text or preset (`next_id`, `next_ids`,
//! `next_ids_array`, `next_id_at`, `decode`, `min_id`, `max_id`, `to_uuid`, `from_uuid`), and
//! `snowflake.install(layout, prefix)`, which writes the surface of `snowflake sql` over them
//! (`PREFIX_next_id(<node values>, max_drift_ms, max_wait_ms)`, ...). Every preset that fits a
//! `bigint` (63 bits or fewer: twitter, sonyflake, baidu and js53; the 64-bit ones are refused,
//! as by `snowflake sql`) is installed so in a schema of its own
//! (`snowflake_twitter.snowflake_next_id(datacenter, worker)`), so moving from the PL/pgSQL
//! functions is a `search_path` change.
//!
//! # What it guarantees
//!
//! - **One state per identity in the server.** A layout and node values have one state word
//!   in the server's shared memory, used by every backend of every database: one
//!   compare-and-swap per ID (core's generator), no lock on the way. A table of
//!   [`SLOTS`] identities; a new identity takes the table's lock once.
//! - **A durable high-water mark ahead of what is issued.** No ID is issued at a tick past the
//!   reservation, and the reservation is moved by writing the mark into the sequence
//!   `snowflake.mark` (WAL-logged, like every sequence) and flushing the WAL to that record
//!   *before* the IDs above the old end are handed out, whatever the caller's transaction does
//!   afterwards (a rollback, `synchronous_commit = off`). One write and one flush per
//!   [`WINDOW_MS`] of issued time, under the table's lock; never per ID.
//! - **After a crash** (the postmaster killed, or a backend: the shared memory is made anew),
//!   an identity starts at the mark, past everything the run before issued.
//! - **After a promotion** (a new timeline), the mark that reached the standby may be older than
//!   what the old primary issued (asynchronous replication): the mark records the timeline it
//!   was written on, and an identity whose mark is of another timeline starts past the clock
//!   plus the most the old primary may have reserved ahead of its clock ([`promotion_margin_ms`]).
//!   Not covered: a standby whose clock is behind the old primary's by more than that margin.
//! - Bad input raises core's typed error with its SQLSTATE (`ErrorKind::sqlstate`) and its
//!   stable code first in the message.

use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::{pg_shmem_init, PGRXSharedMemory, PgLwLock};
use snowflake_core::{
    Error, Generator, HostMark, HostState, Layout, Name, Options, Value, AHEAD_SLACK_MS, SQL_MAX_DRIFT_MS,
};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

pgrx::pg_module_magic!();

/// How many identities (layout and node values) the server's shared memory holds.
pub const SLOTS: usize = 512;

/// How far past the tick being issued a mark reserves: one WAL flush per this much issued time.
pub const WINDOW_MS: u64 = 100;

/// Microseconds between the Unix epoch and PostgreSQL's (2000-01-01).
const PG_EPOCH_US: i64 = 946_684_800_000_000;

#[derive(Clone, Copy, Default)]
#[repr(C)]
struct Slot {
    used: u64,
    fingerprint: u64,
    node_bits: u64,
    word: u64,
    reserved: u64,
}

#[derive(Clone, Copy)]
#[repr(C)]
struct Table {
    slots: [Slot; SLOTS],
    /// The highest mark written and flushed in this run, Unix ms, and the database whose
    /// sequence holds it (0: none yet).
    mark_ms: u64,
    mark_db: u64,
}

impl Default for Table {
    fn default() -> Table {
        Table { slots: [Slot::default(); SLOTS], mark_ms: 0, mark_db: 0 }
    }
}

// SAFETY: plain integers; the words used lock-free are accessed only as atomics.
unsafe impl PGRXSharedMemory for Table {}

static TABLE: PgLwLock<Table> = unsafe { PgLwLock::new(c"snowflake_identities") };

/// Whether the library was loaded by `shared_preload_libraries` (the shared memory exists).
static PRELOADED: AtomicBool = AtomicBool::new(false);

#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    // SAFETY: read once, in the postmaster or a backend, on PostgreSQL's one thread.
    if unsafe { pg_sys::process_shared_preload_libraries_in_progress } {
        pg_shmem_init!(TABLE = Table::default());
        PRELOADED.store(true, Ordering::Release);
    }
}

/// Raises `e` as an SQL error: its SQLSTATE, its stable code first in the message.
fn raise(e: Error) -> ! {
    let code = match e.kind().sqlstate() {
        "22023" => PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
        "42804" => PgSqlErrorCode::ERRCODE_DATATYPE_MISMATCH,
        "22003" => PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
        "22008" => PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW,
        "55000" => PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        "55P03" => PgSqlErrorCode::ERRCODE_LOCK_NOT_AVAILABLE,
        "58000" => PgSqlErrorCode::ERRCODE_SYSTEM_ERROR,
        _ => PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
    };
    ereport!(ERROR, code, format!("{} {e}", e.kind().code()));
}

trait OrRaise<T> {
    fn or_raise(self) -> T;
}
impl<T> OrRaise<T> for Result<T, Error> {
    fn or_raise(self) -> T {
        self.unwrap_or_else(|e| raise(e))
    }
}

fn value_error(name: &str, value: i128, min: u64, max: u64) -> Error {
    Error::ValueRange { name: Name::snippet(name), value, min, max }
}

thread_local! {
    static LAYOUTS: RefCell<HashMap<String, Layout>> = RefCell::new(HashMap::new());
    static GENERATORS: RefCell<HashMap<(u64, u64, u64, u64), Rc<Generator>>> = RefCell::new(HashMap::new());
}

/// The layout of `spec` (a preset's name or layout text), parsed once per backend.
fn layout_of(spec: &str) -> Layout {
    if let Some(l) = LAYOUTS.with(|m| m.borrow().get(spec).copied()) {
        return l;
    }
    let l = Layout::parse(spec).or_raise();
    if l.total_bits() > 63 {
        raise(Error::BadOption {
            name: Name::snippet("layout"),
            reason: "a 64-bit layout has IDs above bigint's range: PostgreSQL needs 63 bits or fewer",
        });
    }
    LAYOUTS.with(|m| m.borrow_mut().insert(spec.to_owned(), l));
    l
}

/// The node values, in the layout's order of node fields, as core's `Node`, and their bits.
fn node_of(layout: &Layout, values: &[Option<i64>]) -> (snowflake_core::Node, u64) {
    let names: Vec<&str> = layout.node_fields().map(|(_, f)| f.name()).collect();
    if values.len() != names.len() {
        raise(value_error("node values", values.len() as i128, names.len() as u64, names.len() as u64));
    }
    let pairs = names.iter().zip(values).map(|(n, v)| (*n, v.map_or(Value::Unset, |v| Value::Int(v.into()))));
    let node = layout.node_from_values(pairs).or_raise();
    let bits = layout.compose(layout.epoch_ms(), &node, 0).or_raise();
    (node, bits)
}

fn options(max_drift_ms: i64, max_wait_ms: i64) -> Options {
    if !(0..=SQL_MAX_DRIFT_MS as i64).contains(&max_drift_ms) {
        // The cap bounds how far ahead of its clock a primary may have issued, which a
        // promoted standby must start past.
        raise(value_error("max_drift_ms", max_drift_ms.into(), 0, SQL_MAX_DRIFT_MS));
    }
    let mut o = Options::default();
    o.set("max_drift_ms", Value::Int(max_drift_ms.into())).or_raise();
    o.set("max_wait_ms", Value::Int(max_wait_ms.into())).or_raise();
    o
}

fn now_unix_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// How far past its clock a primary may have reserved, which a promoted standby starts past:
/// the largest `max_drift_ms`, the slack of `next_id_at`, a window and a tick.
pub fn promotion_margin_ms(layout: &Layout) -> u64 {
    SQL_MAX_DRIFT_MS + AHEAD_SLACK_MS + WINDOW_MS + layout.tick_ms()
}

/// The mark as stored in `snowflake.mark`: Unix ms above 16 bits of the timeline.
fn encode_mark(unix_ms: u64, timeline: u32) -> i64 {
    ((unix_ms << 16) | u64::from(timeline & 0xffff)) as i64
}

fn current_timeline() -> u32 {
    // SAFETY: called only outside recovery (checked first), where it is the insert timeline.
    unsafe { pg_sys::GetWALInsertionTimeLine() }
}

/// The server's mark writer: the sequence `snowflake.mark` of the database in use.
struct SequenceMark {
    layout: Layout,
}

impl HostMark for SequenceMark {
    fn extend(&self, reserved: &AtomicU64, tick: u64) -> snowflake_core::Result<()> {
        let window = (WINDOW_MS / self.layout.tick_ms()).max(1);
        let end = tick.saturating_add(window).min(self.layout.max_tick().saturating_add(1));
        let end_ms = self.layout.unix_ms_of(end);
        let mut table = TABLE.exclusive();
        if reserved.load(Ordering::Acquire) > tick {
            return Ok(()); // another backend extended it
        }
        // SAFETY: a backend's global.
        let db = u64::from(unsafe { pg_sys::MyDatabaseId }.to_u32());
        if table.mark_db != db || table.mark_ms < end_ms {
            let mark = encode_mark(
                end_ms.max(if table.mark_db == db { table.mark_ms } else { 0 }),
                current_timeline(),
            );
            Spi::get_one_with_args::<i64>("SELECT pg_catalog.setval('snowflake.mark', $1)", &[mark.into()])
                .map_err(|e| Error::BadOption {
                name: Name::snippet("snowflake.mark"),
                reason: spi_reason(&e),
            })?;
            // The sequence's record is in the WAL; make it durable before any ID above the old
            // end is issued, whatever becomes of this transaction. Flushed to the end of the
            // record this backend just wrote (the insert position may lie past a page header
            // that nothing has been written to yet, which XLogFlush refuses).
            // SAFETY: a backend's global, read right after its own insert; a plain call.
            unsafe { pg_sys::XLogFlush(pg_sys::XactLastRecEnd) };
            table.mark_ms = table.mark_ms.max(end_ms);
            table.mark_db = db;
        }
        reserved.fetch_max(end, Ordering::AcqRel);
        Ok(())
    }
}

fn spi_reason(_e: &pgrx::spi::Error) -> &'static str {
    "the mark could not be written (is the extension installed in this database, and may this role UPDATE snowflake.mark?)"
}

/// The durable mark of this database's sequence: (Unix ms, timeline), or none yet.
fn read_mark() -> Option<(u64, u32)> {
    let (v, called) = Spi::get_two::<i64, bool>("SELECT last_value, is_called FROM snowflake.mark")
        .unwrap_or_else(|_| {
            raise(Error::BadOption {
                name: Name::snippet("snowflake.mark"),
                reason: "cannot be read: is the extension installed in this database?",
            })
        });
    match (v, called) {
        (Some(v), Some(true)) if v > 0 => Some(((v as u64) >> 16, (v as u64 & 0xffff) as u32)),
        _ => None,
    }
}

/// The generator of an identity with these options, in this backend; its state in the
/// server's shared memory.
fn generator(layout: &Layout, values: &[Option<i64>], max_drift_ms: i64, max_wait_ms: i64) -> Rc<Generator> {
    let (node, bits) = node_of(layout, values);
    let key = (layout.fingerprint(), bits, max_drift_ms as u64, max_wait_ms as u64);
    if let Some(g) = GENERATORS.with(|m| m.borrow().get(&key).cloned()) {
        return g;
    }
    let opts = options(max_drift_ms, max_wait_ms);
    if !PRELOADED.load(Ordering::Acquire) {
        raise(Error::BadOption {
            name: Name::snippet("shared_preload_libraries"),
            reason: "the snowflake extension keeps its state in shared memory: add 'snowflake' to shared_preload_libraries and restart the server",
        });
    }
    // SAFETY: a plain call in a backend.
    if unsafe { pg_sys::RecoveryInProgress() } {
        // A standby issues nothing: its state would miss the primary's, and once promoted it
        // starts from the mark of its new timeline.
        ereport!(
            ERROR,
            PgSqlErrorCode::ERRCODE_READ_ONLY_SQL_TRANSACTION,
            "ERR_SNOWFLAKE_VALUE a standby issues no IDs (it is in recovery): issue on the primary"
        );
    }
    let (word, reserved) = slot(
        layout,
        bits,
        || floor_ms(layout),
        |state| {
            Generator::hosted(layout, node, opts.clone(), state, Arc::new(SequenceMark { layout: *layout }))
        },
    );
    let g = Rc::new(
        Generator::hosted(
            layout,
            node,
            opts,
            HostState { word, reserved },
            Arc::new(SequenceMark { layout: *layout }),
        )
        .or_raise(),
    );
    GENERATORS.with(|m| m.borrow_mut().insert(key, g.clone()));
    g
}

/// Where a new identity's state starts in this run: the mark, or past the clock when the mark
/// is of another timeline (a promotion).
fn floor_ms(layout: &Layout) -> u64 {
    let timeline = current_timeline();
    match read_mark() {
        Some((ms, tl)) if tl == timeline & 0xffff => ms,
        Some((ms, _)) => ms.max(now_unix_ms() + promotion_margin_ms(layout)),
        None => 0,
    }
}

/// The identity's words in shared memory: found, or made with the state raised to `floor`
/// before any other backend can see them.
fn slot(
    layout: &Layout,
    bits: u64,
    floor: impl FnOnce() -> u64,
    make: impl FnOnce(HostState) -> snowflake_core::Result<Generator>,
) -> (&'static AtomicU64, &'static AtomicU64) {
    let fp = layout.fingerprint();
    let words = |s: &Slot| {
        // SAFETY: the table lives in shared memory mapped for the backend's life; the two
        // words are only ever used as atomics.
        unsafe {
            (
                AtomicU64::from_ptr(core::ptr::addr_of!(s.word) as *mut u64),
                AtomicU64::from_ptr(core::ptr::addr_of!(s.reserved) as *mut u64),
            )
        }
    };
    {
        let t = TABLE.share();
        if let Some(s) = t.slots.iter().find(|s| s.used == 1 && s.fingerprint == fp && s.node_bits == bits) {
            let s: *const Slot = s;
            // SAFETY: see `words`.
            return words(unsafe { &*s });
        }
    }
    // Read before the lock: it takes the sequence's own locks.
    let floor = floor();
    let mut t = TABLE.exclusive();
    if let Some(s) = t.slots.iter().find(|s| s.used == 1 && s.fingerprint == fp && s.node_bits == bits) {
        let s: *const Slot = s;
        // SAFETY: see `words`.
        return words(unsafe { &*s });
    }
    let Some(s) = t.slots.iter_mut().find(|s| s.used == 0) else {
        drop(t);
        raise(Error::BadOption {
            name: Name::snippet("identities"),
            reason: "the server's table of identities (layout and node values) is full: 512 per server run",
        })
    };
    *s = Slot { used: 0, fingerprint: fp, node_bits: bits, word: 0, reserved: 0 };
    let s: *mut Slot = s;
    // SAFETY: see `words`.
    let (word, reserved) = words(unsafe { &*s });
    let g = match make(HostState { word, reserved }) {
        Ok(g) => g,
        Err(e) => {
            drop(t);
            raise(e)
        }
    };
    if let Err(e) = g.raise_hosted(floor.max(layout.epoch_ms())) {
        drop(t);
        raise(e)
    }
    // SAFETY: under the exclusive lock.
    unsafe { (*s).used = 1 };
    drop(t);
    (word, reserved)
}

fn ts_to_unix_ms(ts: TimestampWithTimeZone) -> Result<u64, Error> {
    let us: i64 = ts.into();
    if ts.is_infinity() || ts.is_neg_infinity() {
        return Err(value_error("timestamptz", us.into(), 0, u64::MAX));
    }
    let unix_us = us.saturating_add(PG_EPOCH_US);
    if unix_us < 0 {
        return Err(Error::TimeRange { unix_ms: 0, first_unix_ms: 0, last_unix_ms: u64::MAX });
    }
    Ok((unix_us / 1000) as u64)
}

fn unix_ms_to_ts(unix_ms: u64) -> TimestampWithTimeZone {
    let us = (unix_ms as i64) * 1000 - PG_EPOCH_US;
    TimestampWithTimeZone::try_from(us)
        .unwrap_or_else(|_| raise(value_error("unix_ms", unix_ms.into(), 0, u64::MAX)))
}

/// A bigint as an ID: a negative one is a 64-bit pattern above every 63-bit layout's width,
/// which core refuses as it refuses any ID outside the layout.
fn id_of(id: i64) -> u64 {
    id as u64
}

fn count_of(n: i64) -> u64 {
    if n < 0 || n as u64 > snowflake_core::MAX_IDS_PER_CALL {
        raise(value_error("n", n.into(), 0, snowflake_core::MAX_IDS_PER_CALL));
    }
    n as u64
}

/// One ID of `layout` (a preset's name or layout text) for the node values `node`.
#[pg_extern(volatile, parallel_unsafe)]
fn next_id(
    layout: &str,
    node: Vec<Option<i64>>,
    max_drift_ms: default!(i64, 0),
    max_wait_ms: default!(i64, 1000),
) -> i64 {
    let l = layout_of(layout);
    generator(&l, &node, max_drift_ms, max_wait_ms).next_id().or_raise() as i64
}

/// `n` IDs, increasing, taken a tick's worth at a time.
#[pg_extern(volatile, parallel_unsafe)]
fn next_ids_array(
    layout: &str,
    node: Vec<Option<i64>>,
    n: i64,
    max_drift_ms: default!(i64, 0),
    max_wait_ms: default!(i64, 1000),
) -> Vec<i64> {
    let l = layout_of(layout);
    let n = count_of(n);
    let g = generator(&l, &node, max_drift_ms, max_wait_ms);
    let mut out = vec![0u64; n as usize];
    g.fill(&mut out).map_err(Error::from).or_raise();
    // IDs of a 63-bit layout are below 2^63: the same bits as i64.
    out.into_iter().map(|id| id as i64).collect()
}

/// `n` IDs as a set of rows.
#[pg_extern(volatile, parallel_unsafe)]
fn next_ids(
    layout: &str,
    node: Vec<Option<i64>>,
    n: i64,
    max_drift_ms: default!(i64, 0),
    max_wait_ms: default!(i64, 1000),
) -> SetOfIterator<'static, i64> {
    SetOfIterator::new(next_ids_array(layout, node, n, max_drift_ms, max_wait_ms))
}

/// One ID at the caller's time (never waits); a time behind the state by more than
/// `max_drift_ms`, or ahead of the server's clock by more than 1 s, is refused.
#[pg_extern(volatile, parallel_unsafe)]
fn next_id_at(layout: &str, node: Vec<Option<i64>>, unix_ms: i64, max_drift_ms: default!(i64, 0)) -> i64 {
    let l = layout_of(layout);
    if unix_ms < 0 {
        raise(Error::TimeRange { unix_ms: 0, first_unix_ms: l.epoch_ms(), last_unix_ms: l.last_unix_ms() });
    }
    generator(&l, &node, max_drift_ms, 0).next_id_at(unix_ms as u64).or_raise() as i64
}

/// The smallest ID of the tick of `at`.
#[pg_extern(immutable, parallel_safe, strict)]
fn min_id(layout: &str, at: TimestampWithTimeZone) -> i64 {
    let l = layout_of(layout);
    l.min_id(ts_to_unix_ms(at).or_raise()).or_raise() as i64
}

/// The largest ID of the tick of `at`.
#[pg_extern(immutable, parallel_safe, strict)]
fn max_id(layout: &str, at: TimestampWithTimeZone) -> i64 {
    let l = layout_of(layout);
    l.max_id(ts_to_unix_ms(at).or_raise()).or_raise() as i64
}

/// The parts of `id`: the start of its tick, its sequence and its node values (in the
/// layout's order).
#[pg_extern(immutable, parallel_safe, strict)]
fn decode(
    layout: &str,
    id: i64,
) -> TableIterator<
    'static,
    (name!(time, TimestampWithTimeZone), name!(unix_ms, i64), name!(sequence, i64), name!(node, Vec<i64>)),
> {
    let l = layout_of(layout);
    let p = l.decode(id_of(id)).or_raise();
    let node: Vec<i64> = l.node_values(&p.node).map(|(_, v)| v as i64).collect();
    TableIterator::once((unix_ms_to_ts(p.unix_ms), p.unix_ms as i64, p.sequence as i64, node))
}

/// The UUIDv7 view of `id` (lossless and order-preserving, see core's `uuid`).
#[pg_extern(immutable, parallel_safe, strict)]
fn to_uuid(layout: &str, id: i64) -> pgrx::Uuid {
    let l = layout_of(layout);
    pgrx::Uuid::from_bytes(l.to_uuid(id_of(id)).or_raise().to_be_bytes())
}

/// The ID whose UUIDv7 view is `uuid`; any other UUID is refused.
#[pg_extern(immutable, parallel_safe, strict)]
fn from_uuid(layout: &str, uuid: pgrx::Uuid) -> i64 {
    let l = layout_of(layout);
    let bytes: [u8; 16] = *uuid;
    l.from_uuid(u128::from_be_bytes(bytes)).or_raise() as i64
}

/// The SQL that `install` runs: the surface of `snowflake sql` for `layout` under `prefix`.
#[pg_extern(immutable, parallel_safe, strict)]
fn install_sql(layout: &str, prefix: &str) -> String {
    let l = layout_of(layout);
    wrappers(&l, prefix)
}

/// Quotes an SQL identifier.
fn ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// Quotes an SQL literal.
fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The wrappers that give `layout` the surface of `snowflake sql` under `prefix` (`name` or
/// `schema.name`): SQL functions that PostgreSQL inlines into a call of the generic ones.
fn wrappers(layout: &Layout, prefix: &str) -> String {
    let (schema, base) = match prefix.split_once('.') {
        Some((s, b)) => (Some(s), b),
        None => (None, prefix),
    };
    let name = |suffix: &str| match schema {
        Some(s) => format!("{}.{}", ident(s), ident(&format!("{base}{suffix}"))),
        None => ident(&format!("{base}{suffix}")),
    };
    let spec = literal(&layout.to_string());
    let fields: Vec<&str> = layout.node_fields().map(|(_, f)| f.name()).collect();
    let params: String = fields.iter().map(|f| format!("{} bigint, ", ident(f))).collect();
    let array =
        format!("ARRAY[{}]::bigint[]", fields.iter().map(|f| ident(f)).collect::<Vec<_>>().join(", "));
    let outs: String = fields.iter().map(|f| format!(", OUT {} bigint", ident(f))).collect();
    let picks: String = (1..=fields.len()).map(|i| format!(", d.node[{i}]")).collect();
    format!(
        "CREATE OR REPLACE FUNCTION {next_id}({params}max_drift_ms bigint DEFAULT 0, max_wait_ms bigint DEFAULT 1000)
RETURNS bigint LANGUAGE sql VOLATILE AS $fn$ SELECT snowflake.next_id({spec}, {array}, max_drift_ms, max_wait_ms) $fn$;
CREATE OR REPLACE FUNCTION {next_ids}({params}n bigint, max_drift_ms bigint DEFAULT 0, max_wait_ms bigint DEFAULT 1000)
RETURNS SETOF bigint LANGUAGE sql VOLATILE ROWS 1000 AS $fn$ SELECT snowflake.next_ids({spec}, {array}, n, max_drift_ms, max_wait_ms) $fn$;
CREATE OR REPLACE FUNCTION {next_ids_array}({params}n bigint, max_drift_ms bigint DEFAULT 0, max_wait_ms bigint DEFAULT 1000)
RETURNS bigint[] LANGUAGE sql VOLATILE AS $fn$ SELECT snowflake.next_ids_array({spec}, {array}, n, max_drift_ms, max_wait_ms) $fn$;
CREATE OR REPLACE FUNCTION {next_id_at}({params}unix_ms bigint, max_drift_ms bigint DEFAULT 0)
RETURNS bigint LANGUAGE sql VOLATILE AS $fn$ SELECT snowflake.next_id_at({spec}, {array}, unix_ms, max_drift_ms) $fn$;
CREATE OR REPLACE FUNCTION {min_id}(timestamptz)
RETURNS bigint LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$ SELECT snowflake.min_id({spec}, $1) $fn$;
CREATE OR REPLACE FUNCTION {max_id}(timestamptz)
RETURNS bigint LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$ SELECT snowflake.max_id({spec}, $1) $fn$;
CREATE OR REPLACE FUNCTION {decode}(bigint, OUT \"time\" timestamptz, OUT unix_ms bigint, OUT \"sequence\" bigint{outs})
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$ SELECT d.time, d.unix_ms, d.sequence{picks} FROM snowflake.decode({spec}, $1) d $fn$;
CREATE OR REPLACE FUNCTION {to_uuid}(bigint)
RETURNS uuid LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$ SELECT snowflake.to_uuid({spec}, $1) $fn$;
CREATE OR REPLACE FUNCTION {from_uuid}(uuid)
RETURNS bigint LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$ SELECT snowflake.from_uuid({spec}, $1) $fn$;
",
        next_id = name("_next_id"),
        next_ids = name("_next_ids"),
        next_ids_array = name("_next_ids_array"),
        next_id_at = name("_next_id_at"),
        min_id = name("_min_id"),
        max_id = name("_max_id"),
        decode = name("_decode"),
        to_uuid = name("_to_uuid"),
        from_uuid = name("_from_uuid"),
    )
}

pgrx::extension_sql!(
    r#"
CREATE SEQUENCE snowflake.mark MINVALUE 0 START 0;
COMMENT ON SEQUENCE snowflake.mark IS 'the durable high-water mark of the snowflake extension: Unix ms << 16 | timeline';
CREATE FUNCTION snowflake.install(layout text, prefix text DEFAULT 'snowflake') RETURNS void
LANGUAGE plpgsql VOLATILE AS $fn$ BEGIN EXECUTE snowflake.install_sql(layout, prefix); END $fn$;
CREATE SCHEMA snowflake_twitter;
CREATE SCHEMA snowflake_sonyflake;
CREATE SCHEMA snowflake_baidu;
CREATE SCHEMA snowflake_js53;
SELECT snowflake.install(p, 'snowflake_' || p || '.snowflake')
  FROM unnest(ARRAY['twitter', 'sonyflake', 'baidu', 'js53']) AS p;
"#,
    name = "presets",
    requires = [install_sql]
);
