//! Random input through the C API, called as C calls it (the extern "C" functions, with
//! NUL-terminated strings and output pointers): layout specs, node values, option texts, ID
//! strings and encodings. Every call returns a status of the table (never `PANIC`), writes its
//! output only on success, and what succeeds checks out: a layout reads back from its text, an
//! ID decodes to the node values it was made with, an encoded ID decodes to itself.

use proptest::prelude::*;
use snowflake::*;
use std::ffi::{c_char, CStr, CString};
use std::ptr;

/// Text with the characters specs, options and IDs are made of, and some they must refuse.
const TEXT: &str = "[a-z0-9:,;=_\\-TZ. /\u{e9}\u{1F600}]{0,60}";

fn c(s: &str) -> CString {
    // Interior NULs cannot reach C through a C string: they end it there.
    CString::new(s.replace('\0', "")).unwrap()
}

/// A status from the table, never a caught panic.
fn typed(status: SnowflakeStatus, what: &str) -> bool {
    assert_ne!(status, SnowflakeStatus::Panic, "{what}: {}", last_error());
    if status != SnowflakeStatus::Ok {
        assert!(!last_error().is_empty(), "{what}: {status:?} without a message");
    }
    status == SnowflakeStatus::Ok
}

fn last_error() -> String {
    // SAFETY: a static or thread-local NUL-terminated string.
    unsafe { CStr::from_ptr(snowflake_last_error()) }.to_string_lossy().into_owned()
}

fn spec() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "twitter",
            "discord",
            "instagram",
            "sonyflake",
            "baidu",
            "mastodon",
            "game",
            "nope"
        ])
        .prop_map(str::to_string),
        (
            0u32..70,
            prop::sample::select(vec!["worker", "sequence", "time", "x"]),
            0u32..30,
            0u32..30,
            prop::sample::select(vec![
                "",
                ";epoch=0",
                ";epoch=1288834974657",
                ";epoch=-1",
                ";epoch=2024-01-01T00:00:00Z"
            ]),
            prop::sample::select(vec!["", ";tick=1ms", ";tick=0s", ";tick=10ms", ";tick=x"]),
        )
            .prop_map(|(t, name, n, s, epoch, tick)| format!(
                "time:{t},{name}:{n},sequence:{s}{epoch}{tick}"
            )),
        TEXT,
    ]
}

fn node_text() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(
            (
                prop::sample::select(vec![
                    "worker",
                    "datacenter",
                    "process",
                    "shard",
                    "machine",
                    "time",
                    "sequence",
                    "x"
                ]),
                prop_oneof![
                    (0i64..40).prop_map(|v| v.to_string()),
                    Just("-1".to_string()),
                    Just("1.5".to_string()),
                    Just("18446744073709551616".to_string()),
                    Just("true".to_string()),
                ],
            ),
            0..4
        )
        .prop_map(|pairs| pairs
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")),
        TEXT,
    ]
}

fn options_text() -> impl Strategy<Value = String> {
    prop_oneof![
        (
            prop::sample::select(vec![
                "max_drift_ms",
                "max_wait_ms",
                "sequence_start",
                "rollover",
                "isolated",
                "bogus"
            ]),
            prop::sample::select(vec!["0", "5", "-1", "1.5", "true", "spread:4", "worker", "", "x;y"]),
        )
            .prop_map(|(k, v)| format!("{k}={v};isolated=true")),
        TEXT,
    ]
}

/// A live layout from `spec`, or `None` with a typed error.
fn layout(spec: &str) -> Option<*mut SnowflakeLayout> {
    let mut out: *mut SnowflakeLayout = ptr::null_mut();
    let text = c(spec);
    // SAFETY: a NUL-terminated string and a pointer to write to.
    let ok = typed(unsafe { snowflake_layout_new(text.as_ptr(), &mut out) }, spec);
    assert_eq!(ok, !out.is_null(), "{spec}: the handle is written exactly on success");
    ok.then_some(out)
}

fn layout_text(l: *const SnowflakeLayout) -> String {
    let mut buf = [0 as c_char; 512];
    // SAFETY: a live handle and a buffer of its length.
    assert!(typed(unsafe { snowflake_layout_to_string(l, buf.as_mut_ptr(), buf.len()) }, "to_string"));
    // SAFETY: written NUL-terminated on success.
    unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap().to_string()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn layout_specs_parse_and_read_back_or_fail_typed(spec in spec()) {
        if let Some(l) = layout(&spec) {
            let text = layout_text(l);
            let again = layout(&text).expect("the canonical text parses");
            prop_assert_eq!(layout_text(again), text.clone());
            // SAFETY: live handles, freed once.
            unsafe {
                prop_assert_eq!(snowflake_layout_fingerprint(l), snowflake_layout_fingerprint(again));
                snowflake_layout_free(again);
                snowflake_layout_free(l);
            }
        }
    }

    #[test]
    fn generators_issue_ids_of_their_node_values_or_fail_typed(
        spec in prop_oneof![Just("twitter".to_string()), Just("discord".to_string()), spec()],
        node in node_text(),
        options in options_text(),
        unix_ms in prop_oneof![Just(1_800_000_000_000u64), any::<u64>()],
    ) {
        let Some(l) = layout(&spec) else { return Ok(()) };
        let (node_c, options_c) = (c(&node), c(&options));
        let mut g: *mut SnowflakeGenerator = ptr::null_mut();
        // SAFETY: a live layout, NUL-terminated strings, a pointer to write to.
        let made = typed(unsafe { snowflake_generator_new(l, node_c.as_ptr(), options_c.as_ptr(), &mut g) }, &node);
        prop_assert_eq!(made, !g.is_null());
        if made {
            let mut id = 0u64;
            // SAFETY: a live generator and a u64 to write to.
            if typed(unsafe { snowflake_next_id_at(g, unix_ms, &mut id) }, "next_id_at") {
                let mut parts = SnowflakeParts { id: 0, unix_ms: 0, tick: 0, sequence: 0, field_count: 0, fields: [0; 16] };
                // SAFETY: a live layout and parts to write to.
                let ok = typed(unsafe { snowflake_layout_decode(l, id, &mut parts) }, "decode");
                prop_assert!(ok);
                // Each node value given is in the ID; the others are 0 only when none is given.
                // The rollover field is the generator's own (docs/layouts.md: it is left out of
                // the node values), 0 in a first ID.
                let rollover = options
                    .split(';')
                    .filter_map(|kv| kv.split_once('='))
                    .find(|(k, _)| k.trim() == "rollover")
                    .map(|(_, v)| v.trim().to_string());
                let given: Vec<(String, u64)> = node
                    .split(',')
                    .filter_map(|kv| kv.split_once('='))
                    .map(|(k, v)| (k.trim().to_string(), v.trim().parse().unwrap()))
                    .collect();
                for i in 0..parts.field_count {
                    let mut field = SnowflakeField { name: ptr::null(), bits: 0, shift: 0, kind: SnowflakeFieldKind::SnowflakeFieldTime };
                    // SAFETY: a live layout and a field to write to.
                    let ok = typed(unsafe { snowflake_layout_field(l, i, &mut field) }, "field");
                    prop_assert!(ok);
                    if field.kind != SnowflakeFieldKind::SnowflakeFieldNode {
                        continue;
                    }
                    // SAFETY: written NUL-terminated, owned by the live layout.
                    let name = unsafe { CStr::from_ptr(field.name) }.to_str().unwrap().to_string();
                    let want = given.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
                    prop_assert!(
                        given.is_empty() || want.is_some() || rollover.as_deref() == Some(name.as_str()),
                        "{}: {} left out of {:?} was accepted (options {:?})", spec, name, node, options
                    );
                    prop_assert_eq!(parts.fields[i], want.unwrap_or(0));
                }
            }
            // SAFETY: a live generator, freed once.
            unsafe { snowflake_generator_free(g) };
        }
        // SAFETY: a live layout, freed once.
        unsafe { snowflake_layout_free(l) };
    }

    #[test]
    fn id_strings_and_encodings_round_trip_or_fail_typed(
        text in TEXT,
        encoding in prop_oneof![
            prop::sample::select(vec!["decimal", "hex", "base32", "base36", "base58", "base62"]).prop_map(str::to_string),
            TEXT,
        ],
        id: u64,
        reverse: bool,
    ) {
        let (text_c, encoding_c) = (c(&text), c(&encoding));
        let mut out = 0u64;
        // SAFETY: NUL-terminated strings and a u64 to write to.
        if typed(unsafe { snowflake_decode_str(text_c.as_ptr(), encoding_c.as_ptr(), reverse, &mut out) }, &text) {
            let mut buf = [0 as c_char; 32];
            // SAFETY: a buffer of its length.
            let ok = typed(unsafe { snowflake_encode(out, encoding_c.as_ptr(), reverse, buf.as_mut_ptr(), buf.len()) }, "encode");
            prop_assert!(ok);
            let mut back = 0u64;
            // SAFETY: written NUL-terminated.
            let ok = typed(unsafe { snowflake_decode_str(buf.as_ptr(), encoding_c.as_ptr(), reverse, &mut back) }, "decode");
            prop_assert!(ok);
            prop_assert_eq!(back, out);
        } else {
            prop_assert_eq!(out, 0, "nothing written on failure");
        }
        let mut buf = [0 as c_char; 32];
        // SAFETY: a buffer of its length.
        if typed(unsafe { snowflake_encode(id, encoding_c.as_ptr(), reverse, buf.as_mut_ptr(), buf.len()) }, &encoding) {
            let mut back = 0u64;
            // SAFETY: written NUL-terminated.
            let ok = typed(unsafe { snowflake_decode_str(buf.as_ptr(), encoding_c.as_ptr(), reverse, &mut back) }, "decode");
            prop_assert!(ok);
            prop_assert_eq!(back, id);
        }
    }
}
