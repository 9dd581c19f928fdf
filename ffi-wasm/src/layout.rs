//! `Layout`: core's `Layout::parse`, decode, compose, the range-query bounds and the UUIDv7
//! view, over a handle.

use crate::error::{answer, fail};
use crate::io::{self, out_f64, out_u64, Record, Writer, OUT_EXACT};
use alloc::boxed::Box;
use core::fmt::Write;
use snowflake_core::{Error, FieldKind, Layout, LayoutError, Node, Value, PRESETS};

/// The layout of a handle made by [`sf_layout_new`].
pub fn of(handle: i32) -> &'static Layout {
    // SAFETY: the JS layer passes only live handles of this type (it forgets a handle when it
    // frees it).
    unsafe { &*(handle as usize as *const Layout) }
}

/// Parses the I/O buffer's first `len` bytes (a spec or a preset name); a handle.
#[no_mangle]
pub extern "C" fn sf_layout_new(len: i32) -> i32 {
    let result = Layout::parse(io::text(len)).map_err(|e| match e {
        // Core without std has no clock to suggest today's date as the epoch; JS has one.
        Error::Layout(LayoutError::NoEpoch { last_unix_ms, today_unix_ms: None }) => {
            let now_ms = crate::clock::system_now_ms();
            let today_unix_ms = (now_ms > 0).then(|| now_ms / 86_400_000 * 86_400_000);
            Error::Layout(LayoutError::NoEpoch { last_unix_ms, today_unix_ms })
        }
        e => e,
    });
    answer(result, |layout| Box::into_raw(Box::new(layout)) as usize as i32)
}

/// Frees a layout.
#[no_mangle]
pub extern "C" fn sf_layout_free(handle: i32) {
    // SAFETY: a live handle of sf_layout_new, freed once.
    drop(unsafe { Box::from_raw(handle as usize as *mut Layout) });
}

/// What the JS object keeps: the canonical spec and the numbers of the getters, as JSON.
#[no_mangle]
pub extern "C" fn sf_layout_describe(handle: i32) -> i32 {
    let l = of(handle);
    let mut w = Writer::default();
    // The fingerprint as a decimal string: a u64, which JSON numbers do not hold.
    let _ = write!(
        w,
        "{{\"spec\":\"{l}\",\"epochMs\":{},\"tickMs\":{},\"totalBits\":{},\"capacityPerTick\":{},\"lastUnixMs\":{},\"fingerprint\":\"{}\",\"fields\":[",
        l.epoch_ms(),
        l.tick_ms(),
        l.total_bits(),
        l.capacity_per_tick(),
        l.last_unix_ms(),
        l.fingerprint()
    );
    for (i, f) in l.fields().iter().enumerate() {
        let kind = match f.kind() {
            FieldKind::Time => "time",
            FieldKind::Sequence => "sequence",
            FieldKind::Node => "node",
        };
        let sep = if i == 0 { "" } else { "," };
        let _ = write!(
            w,
            "{sep}{{\"name\":\"{}\",\"bits\":{},\"shift\":{},\"kind\":\"{kind}\"}}",
            f.name(),
            f.bits(),
            f.shift()
        );
    }
    let _ = w.write_str("]}");
    w.len as i32
}

/// The presets, name -> canonical spec, as JSON.
#[no_mangle]
pub extern "C" fn sf_presets() -> i32 {
    let mut w = Writer::default();
    let _ = w.write_char('{');
    for (i, (name, spec)) in PRESETS.iter().enumerate() {
        match Layout::parse(spec) {
            Ok(l) => {
                let _ = write!(w, "{}\"{name}\":\"{l}\"", if i == 0 { "" } else { "," });
            }
            Err(e) => return fail(&e),
        }
    }
    let _ = w.write_char('}');
    w.len as i32
}

/// Decodes `id`: the out area gets the unix ms, tick and sequence (as doubles, words 0..3) and
/// each node field's value (as a double from word 3, exactly from word `OUT_EXACT`); the
/// number of node fields.
#[no_mangle]
pub extern "C" fn sf_layout_decode(handle: i32, id: u64) -> i32 {
    let l = of(handle);
    answer(l.decode(id), |parts| {
        out_f64(0, parts.unix_ms as f64);
        out_f64(1, parts.tick as f64);
        out_f64(2, parts.sequence as f64);
        let mut n = 0;
        for (_, value) in l.node_values(&parts.node) {
            out_f64(3 + n, value as f64);
            out_u64(OUT_EXACT + n, value);
            n += 1;
        }
        n as i32
    })
}

/// An instant the JS layer passes as a number: core's reading of a front end's time
/// (`Value::instant`: a whole number of ms from 0).
pub fn instant(t: f64) -> Result<u64, snowflake_core::Error> {
    Value::Float(t).instant("t")
}

/// Node values from a record: a string (the text form) or an object (a count and
/// `(name, value)` pairs), or nothing (all zeros).
pub fn node(l: &Layout, r: &mut Record) -> Result<Node, snowflake_core::Error> {
    match r.u8() {
        1 => l.parse_node(r.str()),
        2 => {
            let count = r.u8();
            // Core reads the pairs; `node_from_values` checks every value against its field.
            let mut pairs = [("", Value::Unset); snowflake_core::MAX_FIELDS + 1];
            let count = usize::from(count).min(pairs.len());
            for pair in pairs.iter_mut().take(count) {
                let name = r.str();
                *pair = (name, r.value());
            }
            l.node_from_values(pairs.into_iter().take(count))
        }
        _ => Ok(Node::default()),
    }
}

/// The ID of instant `t` with the node values and sequence of the I/O buffer's record
/// (`sequence` value, then node values); in word 0 of the out area.
#[no_mangle]
pub extern "C" fn sf_layout_compose(handle: i32, t: f64) -> i32 {
    let l = of(handle);
    let mut r = Record::at(0);
    let sequence = r.value();
    let result = (|| {
        let t = instant(t)?;
        let node = node(l, &mut r)?;
        let sequence = match sequence {
            Value::Unset => 0,
            v => v.whole("sequence", 0, u64::MAX)?,
        };
        l.compose(t, &node, sequence)
    })();
    answer(result, |id| {
        out_u64(0, id);
        0
    })
}

/// The smallest ID of the tick holding `t`, in word 0 of the out area.
#[no_mangle]
pub extern "C" fn sf_layout_min_id(handle: i32, t: f64) -> i32 {
    answer(instant(t).and_then(|t| of(handle).min_id(t)), |id| {
        out_u64(0, id);
        0
    })
}

/// The largest ID of the tick holding `t`, in word 0 of the out area.
#[no_mangle]
pub extern "C" fn sf_layout_max_id(handle: i32, t: f64) -> i32 {
    answer(instant(t).and_then(|t| of(handle).max_id(t)), |id| {
        out_u64(0, id);
        0
    })
}

/// The UUIDv7 view of `id`, as text in the I/O buffer.
#[no_mangle]
pub extern "C" fn sf_layout_to_uuid(handle: i32, id: u64) -> i32 {
    answer(of(handle).to_uuid(id), |uuid| io::put_str(snowflake_core::format_uuid(uuid).as_str()))
}

/// The ID whose UUIDv7 view is the I/O buffer's text, in word 0 of the out area.
#[no_mangle]
pub extern "C" fn sf_layout_from_uuid(handle: i32, len: i32) -> i32 {
    answer(snowflake_core::parse_uuid(io::text(len)).and_then(|u| of(handle).from_uuid(u)), |id| {
        out_u64(0, id);
        0
    })
}
