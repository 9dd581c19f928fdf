//! `SnowflakeLayout`: core's [`Layout`] behind an opaque handle, with its field names kept as
//! C strings so that `SnowflakeField.name` can point into the handle.

use crate::error::{fail_with, ffi_boundary, non_null, SnowflakeStatus};
use crate::{str_arg, write_c_string};
use snowflake_core::{Error, FieldKind, Layout, Name, MAX_FIELDS};
use std::ffi::{c_char, CString};

/// The most fields a layout has: the length of `SnowflakeParts.fields`.
pub const SNOWFLAKE_MAX_FIELDS: usize = 16;

/// The bytes a UUID's text takes with its NUL: the smallest `len` of `snowflake_layout_to_uuid`.
pub const SNOWFLAKE_UUID_TEXT_SIZE: usize = 37;

// A literal above so that cbindgen writes the macro; this keeps it core's length + the NUL.
const _: () = assert!(SNOWFLAKE_UUID_TEXT_SIZE == snowflake_core::UUID_TEXT_LEN + 1);

// `SnowflakeParts.fields` is written `[u64; 16]` (not `[u64; SNOWFLAKE_MAX_FIELDS]`) so that
// the macro-free PHP header spells the length out; this keeps the three in step.
const _: () = assert!(SNOWFLAKE_MAX_FIELDS == MAX_FIELDS);

/// An opaque, immutable layout: the bit fields of an ID, an epoch and a tick. Made by
/// `snowflake_layout_new`, released by `snowflake_layout_free`. Safe to share between threads.
pub struct SnowflakeLayout {
    _private: [u8; 0],
}

/// What the handle points to.
pub(crate) struct LayoutHandle {
    pub(crate) layout: Layout,
    names: Vec<CString>,
}

/// # Safety
/// `p` is a non-NULL pointer returned by `snowflake_layout_new` and not yet freed.
pub(crate) unsafe fn handle<'a>(p: *const SnowflakeLayout) -> &'a LayoutHandle {
    // SAFETY: guaranteed by the caller; the handle was made from a `Box<LayoutHandle>`.
    unsafe { &*p.cast::<LayoutHandle>() }
}

/// What a field holds.
///
/// cbindgen:prefix-with-name=false
// The C names are `SNOWFLAKE_FIELD_TIME`, ... (API.md), not `SNOWFLAKE_FIELD_KIND_TIME`, so the
// variants carry the prefix themselves.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(clippy::enum_variant_names)]
pub enum SnowflakeFieldKind {
    /// Ticks since the epoch; always the first (highest) field.
    SnowflakeFieldTime = 0,
    /// The counter within a tick.
    SnowflakeFieldSequence = 1,
    /// A value fixed per generator (datacenter, worker, ...), or the rollover counter.
    SnowflakeFieldNode = 2,
}

/// One bit field of a layout.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SnowflakeField {
    /// The name, NUL-terminated; owned by the layout and valid while it lives.
    pub name: *const c_char,
    /// The width in bits.
    pub bits: u8,
    /// The position of the field's lowest bit in the ID.
    pub shift: u8,
    /// What the field holds.
    pub kind: SnowflakeFieldKind,
}

/// A decoded ID.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SnowflakeParts {
    /// The ID.
    pub id: u64,
    /// The start of its tick, in Unix milliseconds.
    pub unix_ms: u64,
    /// Ticks since the layout's epoch.
    pub tick: u64,
    /// The sequence number.
    pub sequence: u64,
    /// How many entries of `fields` are used: the layout's field count.
    pub field_count: usize,
    /// The value of every field in layout order (`time` = the tick and `sequence` included);
    /// `SNOWFLAKE_MAX_FIELDS` entries.
    pub fields: [u64; 16],
}

/// Parses a layout spec (`"time:41,datacenter:5,worker:5,sequence:12;epoch=1288834974657;tick=1ms"`)
/// or a preset name (`"twitter"`, `"discord"`, `"instagram"`, `"sonyflake"`, `"baidu"`,
/// `"mastodon"`, `"game"`) into `*out`. `SNOWFLAKE_STATUS_LAYOUT` for a bad spec, with the
/// reason in `snowflake_last_error()`.
///
/// # Safety
/// `spec` is a NUL-terminated string; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn snowflake_layout_new(
    spec: *const c_char,
    out: *mut *mut SnowflakeLayout,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(spec, out);
        // SAFETY: non-NULL, NUL-terminated by contract.
        let spec = unsafe { str_arg(spec, "spec") }?;
        let layout = Layout::parse(spec)?;
        let names = layout
            .fields()
            .iter()
            .map(|f| CString::new(f.name()).expect("field names are lowercase identifiers"))
            .collect();
        let handle = Box::into_raw(Box::new(LayoutHandle { layout, names }));
        // SAFETY: `out` is non-NULL and valid for a write by contract.
        unsafe { *out = handle.cast() };
        Ok(())
    })
}

/// Releases a layout (NULL: nothing). Generators made from it stay valid: they keep their own
/// copy.
///
/// # Safety
/// `layout` is NULL or a handle from `snowflake_layout_new` not yet freed; it is not used
/// afterwards.
#[no_mangle]
pub unsafe extern "C" fn snowflake_layout_free(layout: *mut SnowflakeLayout) {
    ffi_boundary!({
        if !layout.is_null() {
            // SAFETY: made by `Box::into_raw` in `snowflake_layout_new`, freed once.
            drop(unsafe { Box::from_raw(layout.cast::<LayoutHandle>()) });
        }
    })
}

/// Writes the canonical text of the layout (integer epoch, `tick=` always written) and a NUL
/// into `buf`. 1024 bytes always fit; `SNOWFLAKE_STATUS_BUFFER_TOO_SMALL` (nothing written)
/// when `len` is less than the text's length + 1.
///
/// # Safety
/// `layout` is a live handle; `buf` is valid for `len` bytes of writes.
#[no_mangle]
pub unsafe extern "C" fn snowflake_layout_to_string(
    layout: *const SnowflakeLayout,
    buf: *mut c_char,
    len: usize,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(layout, buf);
        // SAFETY: a live handle by contract.
        let text = unsafe { handle(layout) }.layout.to_string();
        // SAFETY: `buf` holds `len` bytes by contract.
        unsafe { write_c_string(&text, buf, len) }
    })
}

/// Writes the layout's Lua script for Redis (core's `redis_script`: run it as
/// `EVALSHA <sha1> 1 <state-key> <node values in layout order>`; it returns the ID as a
/// decimal string) and a NUL into `buf`. The script is a few kilobytes: when `needed` is not
/// NULL, `*needed` receives the bytes it takes (text + NUL) both on success and on
/// `SNOWFLAKE_STATUS_BUFFER_TOO_SMALL` (the one output written on a failure, so that a caller
/// can ask the size with `buf = NULL, len = 0` and call again). `buf` may be NULL only when
/// `len` is 0; nothing is written into `buf` unless the status is `SNOWFLAKE_STATUS_OK`.
///
/// # Safety
/// `layout` is a live handle; `buf` is NULL with `len == 0`, or valid for `len` bytes of
/// writes; `needed` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn snowflake_layout_redis_script(
    layout: *const SnowflakeLayout,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(layout);
        // SAFETY: a live handle by contract.
        let script = snowflake_core::redis_script(&unsafe { handle(layout) }.layout);
        // SAFETY: as the contract says.
        unsafe { write_sized(&script, buf, len, needed, "the script") }
    })
}

/// Writes `text` and a NUL into `buf[..len]`, and its size (text + NUL) into `*needed` when
/// `needed` is not NULL, on success and on `SNOWFLAKE_STATUS_BUFFER_TOO_SMALL` alike: the
/// size-query convention of the calls whose text has no fixed bound (`buf = NULL, len = 0`
/// asks the size).
///
/// # Safety
/// `buf` is NULL with `len == 0`, or valid for `len` bytes of writes; `needed` is NULL or
/// valid for a write.
unsafe fn write_sized(
    text: &str,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
    what: &str,
) -> crate::error::FfiResult {
    if len > 0 && buf.is_null() {
        return Err(crate::error::FfiReturn::null_argument("buf"));
    }
    if !needed.is_null() {
        // SAFETY: non-NULL, valid for a write by contract.
        unsafe { *needed = text.len() + 1 };
    }
    if buf.is_null() {
        // len == 0 here: a size query, which never fits.
        return Err(fail_with(
            SnowflakeStatus::BufferTooSmall,
            format_args!("the buffer holds 0 bytes; {} are needed ({what} and its NUL)", text.len() + 1),
        ));
    }
    // SAFETY: `buf` holds `len` bytes by contract.
    unsafe { write_c_string(text, buf, len) }
}

/// Writes core's capacity plan of `layout` for a fleet (`hosts` issuing IDs,
/// `processes_per_host` each, `peak_per_second` IDs a second per host, for `years` from now)
/// as one JSON object (what `snowflake plan --json` prints: `node_values`, `hosts_fit`,
/// `processes_fit`, `capacity_per_second`, `host_capacity_per_second`, `peak_share`,
/// `burst_per_tick`, `last_unix_ms`, `years_left`, `lasts`, `advice`) and a NUL into `buf`,
/// with the size-query convention of `snowflake_layout_redis_script`. `now_unix_ms` is the
/// instant planned from (0: now); pass the same one to the size query and the call, so that
/// both write the same text.
///
/// # Safety
/// `layout` is a live handle; `buf` is NULL with `len == 0`, or valid for `len` bytes of
/// writes; `needed` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn snowflake_layout_plan(
    layout: *const SnowflakeLayout,
    hosts: u64,
    processes_per_host: u64,
    peak_per_second: u64,
    years: u64,
    now_unix_ms: u64,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(layout);
        use snowflake_core::{plan, Clock};
        let fleet = plan::Fleet { hosts, processes_per_host, peak_per_second, years };
        let now = if now_unix_ms == 0 { snowflake_core::SystemClock.now_ms() } else { now_unix_ms };
        // SAFETY: a live handle by contract.
        let p = plan::plan(&unsafe { handle(layout) }.layout, &fleet, now);
        let mut json = String::new();
        let _ = p.write_json(&mut json);
        // SAFETY: as the contract says.
        unsafe { write_sized(&json, buf, len, needed, "the plan") }
    })
}

/// A stable 64-bit fingerprint of the layout (FNV-1a of its canonical text); 0 if `layout`
/// is NULL.
///
/// # Safety
/// `layout` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn snowflake_layout_fingerprint(layout: *const SnowflakeLayout) -> u64 {
    ffi_boundary!({
        non_null!(layout);
        // SAFETY: a live handle by contract.
        unsafe { handle(layout) }.layout.fingerprint()
    })
}

/// How many fields the layout has (`time`, `sequence` and the node fields); 0 if `layout` is
/// NULL.
///
/// # Safety
/// `layout` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn snowflake_layout_field_count(layout: *const SnowflakeLayout) -> usize {
    ffi_boundary!({
        non_null!(layout);
        // SAFETY: a live handle by contract.
        unsafe { handle(layout) }.layout.fields().len()
    })
}

/// The field at `index` (0 = `time`, the highest), into `*out`. `SNOWFLAKE_STATUS_VALUE` when
/// `index >= snowflake_layout_field_count(layout)`.
///
/// # Safety
/// `layout` is a live handle; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn snowflake_layout_field(
    layout: *const SnowflakeLayout,
    index: usize,
    out: *mut SnowflakeField,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(layout, out);
        // SAFETY: a live handle by contract.
        let h = unsafe { handle(layout) };
        let fields = h.layout.fields();
        let Some(f) = fields.get(index) else {
            return Err(Error::ValueRange {
                name: Name::snippet("field index"),
                value: index as i128,
                min: 0,
                max: fields.len() as u64 - 1,
            }
            .into());
        };
        let field = SnowflakeField {
            name: h.names[index].as_ptr(),
            bits: f.bits(),
            shift: f.shift(),
            kind: match f.kind() {
                FieldKind::Time => SnowflakeFieldKind::SnowflakeFieldTime,
                FieldKind::Sequence => SnowflakeFieldKind::SnowflakeFieldSequence,
                FieldKind::Node => SnowflakeFieldKind::SnowflakeFieldNode,
            },
        };
        // SAFETY: valid for a write by contract.
        unsafe { *out = field };
        Ok(())
    })
}

/// The layout's epoch and tick length, the last instant it can represent (all in ms), and
/// its width in bits. Any output may be NULL (not wanted).
///
/// # Safety
/// `layout` is a live handle; each non-NULL output is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn snowflake_layout_info(
    layout: *const SnowflakeLayout,
    epoch_ms: *mut u64,
    tick_ms: *mut u64,
    last_unix_ms: *mut u64,
    total_bits: *mut u8,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(layout);
        // SAFETY: a live handle by contract.
        let l = unsafe { handle(layout) }.layout;
        // SAFETY: each output is NULL (skipped) or valid for a write, by contract.
        unsafe {
            if let Some(p) = epoch_ms.as_mut() {
                *p = l.epoch_ms();
            }
            if let Some(p) = tick_ms.as_mut() {
                *p = l.tick_ms();
            }
            if let Some(p) = last_unix_ms.as_mut() {
                *p = l.last_unix_ms();
            }
            if let Some(p) = total_bits.as_mut() {
                *p = l.total_bits();
            }
        }
        Ok(())
    })
}

/// Decodes `id` into `*out`. `SNOWFLAKE_STATUS_INVALID_ID` when `id` has bits set above the
/// layout's width.
///
/// # Safety
/// `layout` is a live handle; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn snowflake_layout_decode(
    layout: *const SnowflakeLayout,
    id: u64,
    out: *mut SnowflakeParts,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(layout, out);
        // SAFETY: a live handle by contract.
        let l = &unsafe { handle(layout) }.layout;
        let p = l.decode(id)?;
        let mut parts = SnowflakeParts {
            id,
            unix_ms: p.unix_ms,
            tick: p.tick,
            sequence: p.sequence,
            field_count: 0,
            fields: [0; 16],
        };
        for (slot, f) in parts.fields.iter_mut().zip(l.fields()) {
            *slot = f.get(id);
        }
        parts.field_count = l.fields().len();
        // SAFETY: valid for a write by contract.
        unsafe { *out = parts };
        Ok(())
    })
}

/// The value of the field called `name` in `parts`, decoded by `snowflake_layout_decode` with
/// this layout: a node field (`"worker"`), or `"time"` (the tick) or `"sequence"`. C's way to
/// read a field by name rather than by its position in `parts->fields` (C++:
/// `parts.field("worker")`). `SNOWFLAKE_STATUS_VALUE` when the layout has no such field, or
/// when `parts` holds another layout's number of fields.
///
/// ```c
/// uint64_t worker;
/// if (snowflake_layout_field_value(layout, &parts, "worker", &worker) == SNOWFLAKE_STATUS_OK) ...
/// ```
///
/// # Safety
/// `layout` is a live handle; `parts` points to a `SnowflakeParts`; `name` is NUL-terminated;
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn snowflake_layout_field_value(
    layout: *const SnowflakeLayout,
    parts: *const SnowflakeParts,
    name: *const c_char,
    out: *mut u64,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(layout, parts, name, out);
        // SAFETY: a live handle by contract.
        let l = &unsafe { handle(layout) }.layout;
        // SAFETY: NUL-terminated by contract.
        let name = unsafe { str_arg(name, "name") }?;
        // SAFETY: points to a SnowflakeParts by contract.
        let parts = unsafe { &*parts };
        if parts.field_count != l.fields().len() {
            return Err(Error::BadOption {
                name: Name::snippet("parts"),
                reason: "were not decoded with this layout (another number of fields)",
            }
            .into());
        }
        let (index, _) = l.field(name).ok_or_else(|| l.unknown_field(name))?;
        // SAFETY: valid for a write by contract.
        unsafe { *out = parts.fields[index] };
        Ok(())
    })
}

/// The ID of the instant `unix_ms`, the node values `node` (text: `"datacenter=1,worker=3"`,
/// every node field of the layout; NULL or `""` for all zeros) and `sequence`, each checked against its range
/// (`SNOWFLAKE_STATUS_TIME_RANGE`, `SNOWFLAKE_STATUS_VALUE`).
///
/// # Safety
/// `layout` is a live handle; `node` is NULL or NUL-terminated; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn snowflake_layout_compose(
    layout: *const SnowflakeLayout,
    unix_ms: u64,
    node: *const c_char,
    sequence: u64,
    out: *mut u64,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(layout, out);
        // SAFETY: a live handle by contract.
        let l = &unsafe { handle(layout) }.layout;
        // SAFETY: NULL or NUL-terminated by contract.
        let node = l.parse_node(unsafe { crate::opt_str_arg(node, "node") }?)?;
        let id = l.compose(unix_ms, &node, sequence)?;
        // SAFETY: valid for a write by contract.
        unsafe { *out = id };
        Ok(())
    })
}

/// The smallest ID of the tick holding `unix_ms` (the lower bound of a `WHERE id BETWEEN`
/// range query). `SNOWFLAKE_STATUS_TIME_RANGE` outside the layout's range.
///
/// # Safety
/// `layout` is a live handle; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn snowflake_layout_min_id(
    layout: *const SnowflakeLayout,
    unix_ms: u64,
    out: *mut u64,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(layout, out);
        // SAFETY: a live handle by contract.
        let id = unsafe { handle(layout) }.layout.min_id(unix_ms)?;
        // SAFETY: valid for a write by contract.
        unsafe { *out = id };
        Ok(())
    })
}

/// The largest ID of the tick holding `unix_ms` (the upper bound of a range query).
/// `SNOWFLAKE_STATUS_TIME_RANGE` outside the layout's range.
///
/// # Safety
/// `layout` is a live handle; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn snowflake_layout_max_id(
    layout: *const SnowflakeLayout,
    unix_ms: u64,
    out: *mut u64,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(layout, out);
        // SAFETY: a live handle by contract.
        let id = unsafe { handle(layout) }.layout.max_id(unix_ms)?;
        // SAFETY: valid for a write by contract.
        unsafe { *out = id };
        Ok(())
    })
}

/// Writes the UUIDv7 view of `id` (36 characters, lowercase, hyphenated) and a NUL into `buf`
/// (`len` at least 37, `SNOWFLAKE_UUID_TEXT_SIZE`). Version 7, RFC 9562's variant, the ID's
/// Unix-ms time in the 48-bit timestamp (what PostgreSQL's `uuid_extract_timestamp` reads),
/// the ID's other bits after it: lossless (`snowflake_layout_from_uuid` gives the ID back)
/// and in the same order as the IDs of the layout (docs/layouts.md, "UUIDv7 view").
/// `SNOWFLAKE_STATUS_INVALID_ID` for an ID outside the layout, `SNOWFLAKE_STATUS_TIME_RANGE`
/// for one whose time is past 2^48 - 1 ms (the year 10889).
///
/// # Safety
/// `layout` is a live handle; `buf` is valid for `len` bytes of writes.
#[no_mangle]
pub unsafe extern "C" fn snowflake_layout_to_uuid(
    layout: *const SnowflakeLayout,
    id: u64,
    buf: *mut c_char,
    len: usize,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(layout, buf);
        // SAFETY: a live handle by contract.
        let uuid = unsafe { handle(layout) }.layout.to_uuid(id)?;
        // SAFETY: `buf` holds `len` bytes by contract.
        unsafe { write_c_string(snowflake_core::format_uuid(uuid).as_str(), buf, len) }
    })
}

/// The ID whose UUIDv7 view is `uuid` (the 36-character hyphenated text, either case), into
/// `*out`. `SNOWFLAKE_STATUS_INVALID_ID` for malformed text, another version or variant, or a
/// UUID that no ID of this layout maps to (a random UUIDv7; another layout's view only where
/// its shape differs: the view does not record the layout, docs/layouts.md).
///
/// # Safety
/// `layout` is a live handle; `uuid` is NUL-terminated; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn snowflake_layout_from_uuid(
    layout: *const SnowflakeLayout,
    uuid: *const c_char,
    out: *mut u64,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(layout, uuid, out);
        // SAFETY: NUL-terminated by contract.
        let text = unsafe { str_arg(uuid, "uuid") }?;
        // SAFETY: a live handle by contract.
        let id = unsafe { handle(layout) }.layout.from_uuid(snowflake_core::parse_uuid(text)?)?;
        // SAFETY: valid for a write by contract.
        unsafe { *out = id };
        Ok(())
    })
}
