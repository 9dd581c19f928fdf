//! `tests/vectors/tables.json`: core's option, error and stats tables as data, which every other
//! language reads: `scripts/tables.py` generates stubs and docs from it (the `.pyi` options,
//! `_errors.py`, `index.d.ts`'s `GeneratorOptions` and `Stats`, the PHP docblock and `Stats`,
//! C's `SnowflakeStats`, the README's and docs' tables),
//! and each binding's tests check their classes and codes against it. This test keeps the
//! file equal to the tables in the code; `SNOWFLAKE_BLESS=1 cargo test -p snowflake-core
//! --test tables` rewrites it after a deliberate change.

use serde_json::{json, Value};
use snowflake_core::{
    OptionType, Spelling, AHEAD_SLACK_MS, CONFLICTS, DETAIL_FIELDS, HTTP_KINDS, KINDS, MAX_IDS_PER_CALL,
    NEEDS, OPTIONS, STATS,
};

fn tables() -> Value {
    let options: Vec<Value> = OPTIONS
        .iter()
        .map(|o| {
            let (ty, min, max) = match o.ty {
                OptionType::Integer { min, max } => ("integer", Some(min), Some(max)),
                OptionType::Bool => ("bool", None, None),
                OptionType::Text => ("text", None, None),
                OptionType::Path => ("path", None, None),
            };
            json!({
                "name": o.name,
                "camel": o.spelled(Spelling::Camel).as_str(),
                "flag": o.spelled(Spelling::Flag).as_str(),
                "type": ty,
                "min": min,
                "max": max,
                "default": o.default,
                "form": o.form,
                "doc": o.doc,
                "feature": o.feature,
            })
        })
        .collect();
    let pairs = |list: &[snowflake_core::Conflict]| -> Vec<Value> {
        list.iter().map(|c| json!({ "a": c.a, "b": c.b, "reason": c.reason })).collect()
    };
    let errors: Vec<Value> = KINDS
        .iter()
        .map(|k| {
            json!({
                "kind": format!("{:?}", k.kind),
                "code": k.code,
                "status": k.status,
                "http_status": k.http_status,
                "c_name": k.c_name,
                "text": k.text,
                "python": k.python,
                "python_builtin": k.python_builtin,
                "php": k.php,
                "php_parent": k.php_parent,
                "node_class": k.node_class,
                "node_code": k.node_code,
                "doc": k.doc,
            })
        })
        .collect();
    // The refusals only `snowflake serve` makes: docs/serve.md's table lists them after the
    // library's kinds.
    let http_errors: Vec<Value> = HTTP_KINDS
        .iter()
        .map(|(code, status, doc)| json!({ "code": code, "http_status": status, "doc": doc }))
        .collect();
    // The numbers that front ends check an argument against before calling core (PHP sizes a
    // buffer by the count), checked against this table by their tests.
    let limits = json!({ "max_ids_per_call": MAX_IDS_PER_CALL, "ahead_slack_ms": AHEAD_SLACK_MS });
    // The stats, in the order of C's struct: scripts/tables.py writes that struct, the stubs and
    // the docs from this section.
    let stats: Vec<Value> = STATS
        .iter()
        .map(|s| {
            json!({
                "name": s.name,
                "camel": s.spelled(Spelling::Camel).as_str(),
                "type": s.ty.as_str(),
                "unit": s.unit,
                "doc": s.doc,
                "present": s.present,
            })
        })
        .collect();
    // The errors' detail fields in the JS packages: their `SnowflakeError` interfaces come from
    // this section (bindings-node/scripts/dts.js, scripts/tables.py for the WASM package).
    let details: Vec<Value> =
        DETAIL_FIELDS.iter().map(|f| json!({ "name": f.name, "ts": f.ts, "doc": f.doc })).collect();
    json!({
        "options": options,
        "conflicts": pairs(CONFLICTS),
        "needs": pairs(NEEDS),
        "errors": errors,
        "http_errors": http_errors,
        "details": details,
        "limits": limits,
        "stats": stats,
    })
}

#[test]
fn tables_json_is_cores() {
    let path = format!("{}/../tests/vectors/tables.json", env!("CARGO_MANIFEST_DIR"));
    let text = serde_json::to_string_pretty(&tables()).unwrap() + "\n";
    if std::env::var_os("SNOWFLAKE_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &text).expect(&path);
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "tests/vectors/tables.json is not core's tables now: regenerate it with \
         `SNOWFLAKE_BLESS=1 cargo test -p snowflake-core --test tables`, then `python3 scripts/tables.py`, and commit both"
    );
}

#[test]
fn every_kind_has_one_row_and_statuses_are_unique() {
    let mut statuses: Vec<u32> = KINDS.iter().map(|k| k.status).collect();
    statuses.sort_unstable();
    statuses.dedup();
    assert_eq!(statuses.len(), KINDS.len(), "a status number is used twice");
    assert_eq!(
        statuses,
        (1..=KINDS.len() as u32).collect::<Vec<_>>(),
        "status numbers are 1..=N, none skipped"
    );
    for k in KINDS {
        assert_eq!(
            KINDS.iter().filter(|o| o.kind == k.kind).count(),
            1,
            "{:?} has more than one row",
            k.kind
        );
        assert_eq!(k.kind.info(), k);
        assert!(k.code.starts_with("ERR_SNOWFLAKE_"), "{}", k.code);
    }
}

#[test]
fn every_kind_has_an_http_status_and_http_codes_are_their_own() {
    for k in KINDS {
        assert!(matches!(k.http_status, 400 | 500 | 503), "{}: {}", k.code, k.http_status);
    }
    for (code, status, _) in HTTP_KINDS {
        assert!(code.starts_with("ERR_SNOWFLAKE_"), "{code}");
        assert!(KINDS.iter().all(|k| k.code != *code), "{code} is a library kind's code too");
        assert_eq!(HTTP_KINDS.iter().filter(|h| h.0 == *code).count(), 1, "{code} twice");
        assert!((400..600).contains(status), "{code}: {status}");
    }
}
