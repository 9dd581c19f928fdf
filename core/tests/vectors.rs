//! The shared vectors in `tests/vectors/`, which every language's tests read too.
#![cfg(feature = "std")]

use serde_json::Value;
use snowflake_core::{decode_str, encode, Encoding, Generator, Layout, ManualClock, Options};

fn load(name: &str) -> Value {
    let path = format!("{}/../tests/vectors/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).expect(&path)).expect(&path)
}

fn u64_of(v: &Value) -> u64 {
    match v {
        Value::String(s) => s.parse().expect("decimal string"),
        Value::Number(n) => n.as_u64().expect("u64"),
        _ => panic!("not a number: {v}"),
    }
}

fn node_of(layout: &Layout, fields: &Value) -> snowflake_core::Result<snowflake_core::Node> {
    let pairs: Vec<(&str, u64)> =
        fields.as_object().unwrap().iter().map(|(k, v)| (k.as_str(), v.as_u64().unwrap())).collect();
    layout.node(&pairs)
}

#[test]
fn layouts_decode_and_bounds() {
    let v = load("layouts.json");
    let layouts = v["layouts"].as_array().unwrap();
    assert!(layouts.len() >= 10);
    for case in layouts {
        let layout = Layout::parse(case["spec"].as_str().unwrap()).unwrap();
        assert_eq!(layout.to_string(), case["canonical"].as_str().unwrap());
        assert_eq!(Layout::parse(&layout.to_string()).unwrap(), layout, "canonical text parses back");
        assert_eq!(layout.fingerprint(), u64_of(&case["fingerprint"]));
        assert_eq!(u64::from(layout.total_bits()), u64_of(&case["total_bits"]));
        assert_eq!(layout.capacity_per_tick(), u64_of(&case["capacity_per_tick"]));
        assert_eq!(layout.epoch_ms(), u64_of(&case["epoch_ms"]));
        assert_eq!(layout.tick_ms(), u64_of(&case["tick_ms"]));
        assert_eq!(layout.last_unix_ms(), u64_of(&case["last_unix_ms"]));
        let fields: Vec<(String, u64, u64)> = layout
            .fields()
            .iter()
            .map(|f| (f.name().to_string(), u64::from(f.bits()), u64::from(f.shift())))
            .collect();
        let expected: Vec<(String, u64, u64)> = case["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["name"].as_str().unwrap().to_string(), u64_of(&f["bits"]), u64_of(&f["shift"])))
            .collect();
        assert_eq!(fields, expected);
        for d in case["decode"].as_array().unwrap() {
            let id = u64_of(&d["id"]);
            let parts = layout.decode(id).unwrap();
            assert_eq!(parts.unix_ms, u64_of(&d["unix_ms"]), "{id}");
            assert_eq!(parts.tick, u64_of(&d["tick"]));
            assert_eq!(parts.sequence, u64_of(&d["sequence"]));
            let mut got: Vec<(String, u64)> =
                layout.node_values(&parts.node).map(|(n, v)| (n.to_string(), v)).collect();
            got.sort();
            let want: Vec<(String, u64)> =
                d["fields"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), u64_of(v))).collect();
            assert_eq!(got, want, "{id}");
            // And back: compose(decode(id)) == id.
            assert_eq!(layout.compose(parts.unix_ms, &parts.node, parts.sequence), Ok(id));
        }
        for b in case["bounds"].as_array().unwrap() {
            let ms = u64_of(&b["unix_ms"]);
            assert_eq!(layout.min_id(ms), Ok(u64_of(&b["min_id"])));
            assert_eq!(layout.max_id(ms), Ok(u64_of(&b["max_id"])));
        }
    }
}

#[test]
fn compose_cases() {
    let v = load("layouts.json");
    for case in v["compose"].as_array().unwrap() {
        let layout = Layout::parse(case["spec"].as_str().unwrap()).unwrap();
        let result = node_of(&layout, &case["fields"])
            .and_then(|node| layout.compose(u64_of(&case["unix_ms"]), &node, u64_of(&case["sequence"])));
        match case.get("id") {
            Some(id) => assert_eq!(result, Ok(u64_of(id)), "{case}"),
            None => assert_eq!(result.unwrap_err().kind().code(), case["error"].as_str().unwrap(), "{case}"),
        }
    }
}

#[test]
fn invalid_layouts() {
    let v = load("layouts.json");
    for case in v["invalid"].as_array().unwrap() {
        let err = Layout::parse(case["spec"].as_str().unwrap()).expect_err(&case.to_string());
        assert_eq!(err.kind().code(), case["error"].as_str().unwrap());
        let msg = err.to_string();
        assert!(msg.contains(case["message_contains"].as_str().unwrap()), "{case}: {msg}");
    }
    for case in v["decode_invalid"].as_array().unwrap() {
        let layout = Layout::parse(case["spec"].as_str().unwrap()).unwrap();
        let err = layout.decode(u64_of(&case["id"])).unwrap_err();
        assert_eq!(err.kind().code(), case["error"].as_str().unwrap());
    }
}

#[test]
fn encodings() {
    let v = load("encodings.json");
    for row in v["ids"].as_array().unwrap() {
        let id = u64_of(&row["id"]);
        for (reverse, key) in [(false, "plain"), (true, "reverse")] {
            for (name, text) in row[key].as_object().unwrap() {
                let e = Encoding::from_name(name).unwrap();
                assert_eq!(&*encode(id, e, reverse), text.as_str().unwrap(), "{id} {name} {reverse}");
                assert_eq!(decode_str(text.as_str().unwrap(), e, reverse), Ok(id));
            }
        }
    }
    for a in v["aliases"].as_array().unwrap() {
        let e = Encoding::from_name(a["encoding"].as_str().unwrap()).unwrap();
        assert_eq!(decode_str(a["text"].as_str().unwrap(), e, false), Ok(u64_of(&a["id"])), "{a}");
    }
    for bad in v["invalid"].as_array().unwrap() {
        let e = Encoding::from_name(bad["encoding"].as_str().unwrap()).unwrap();
        let err = decode_str(bad["text"].as_str().unwrap(), e, false).unwrap_err();
        assert_eq!(snowflake_core::Error::from(err).kind().code(), bad["error"].as_str().unwrap(), "{bad}");
    }
}

#[test]
fn generator_traces() {
    let v = load("generator.json");
    let traces = v["traces"].as_array().unwrap();
    assert!(traces.len() >= 10);
    for trace in traces {
        let name = trace["name"].as_str().unwrap();
        let layout = Layout::parse(trace["layout"].as_str().unwrap()).unwrap();
        let node = layout.parse_node(trace["node_spec"].as_str().unwrap()).unwrap();
        assert_eq!(node, node_of(&layout, &trace["node"]).unwrap());
        let options = Options::parse(trace["options"].as_str().unwrap()).unwrap();
        assert!(options.isolated);
        // Both constructors must follow the trace: isolated, and the registry path honouring
        // `isolated=true`.
        let clock = ManualClock::new(0);
        let a = Generator::isolated(&layout, node, options.clone(), &clock).unwrap();
        let b = Generator::with_clock(&layout, node, options, &clock).unwrap();
        for g in [a, b] {
            for (i, step) in trace["steps"].as_array().unwrap().iter().enumerate() {
                let got = g.next_id_at(u64_of(&step["unix_ms"]));
                match step.get("id") {
                    Some(id) => assert_eq!(got, Ok(u64_of(id)), "{name}: step {i}"),
                    None => assert_eq!(
                        got.map_err(|e| e.kind().code()),
                        Err(step["error"].as_str().unwrap()),
                        "{name}: step {i}"
                    ),
                }
            }
        }
    }
}

#[test]
fn vectors_match_the_model() {
    // The vectors are written by an independent Python model; they must be what it writes now.
    let script = format!("{}/../tests/vectors/make_vectors.py", env!("CARGO_MANIFEST_DIR"));
    let status = std::process::Command::new("python3").arg(&script).arg("--check").status();
    match status {
        Ok(s) => assert!(s.success(), "tests/vectors are stale: run python3 tests/vectors/make_vectors.py"),
        Err(e) => panic!("python3 is needed to check the vectors: {e}"),
    }
}

/// `redis_scripts.json`: the Lua script of every preset, which the bindings' tests compare
/// their `redis_script` with. It is core's output, not the model's: this test keeps it equal
/// to what core writes now, and `SNOWFLAKE_BLESS=1 cargo test -p snowflake-core --test vectors`
/// rewrites it after a deliberate change of the script.
#[cfg(feature = "redis-script")]
#[test]
fn redis_scripts_are_cores() {
    let path = format!("{}/../tests/vectors/redis_scripts.json", env!("CARGO_MANIFEST_DIR"));
    let scripts: Vec<Value> = snowflake_core::PRESETS
        .iter()
        .map(|(name, _)| {
            let layout = Layout::parse(name).unwrap();
            let nodes: Vec<&str> = layout.node_fields().map(|(_, f)| f.name()).collect();
            serde_json::json!({
                "spec": name,
                "node_fields": nodes,
                "script": snowflake_core::redis_script(&layout),
            })
        })
        .collect();
    let text = serde_json::to_string_pretty(&serde_json::json!({ "scripts": scripts })).unwrap() + "\n";
    if std::env::var_os("SNOWFLAKE_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &text).expect(&path);
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "tests/vectors/redis_scripts.json is not what core's redis_script writes now: regenerate it \
         with `SNOWFLAKE_BLESS=1 cargo test -p snowflake-core --test vectors redis_scripts` and commit it"
    );
}

/// `public_ids.json` (issue 14): the model's Speck64/128 texts for several keys and
/// encodings, the Speck paper's vector, and the inputs that must be refused.
#[cfg(feature = "public-ids")]
#[test]
fn public_ids() {
    use snowflake_core::{ErrorKind, PublicIds};
    fn key(v: &Value) -> Vec<u8> {
        let hex = v["key_hex"].as_str().unwrap();
        (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect()
    }
    fn ids(v: &Value) -> snowflake_core::Result<PublicIds> {
        let encoding = Encoding::from_name(v["encoding"].as_str().unwrap_or("base62"));
        let encoding = encoding.ok_or(snowflake_core::Error::BadOption {
            name: snowflake_core::Name::snippet("encoding"),
            reason: "unknown encoding",
        })?;
        PublicIds::from_key_bytes(&key(v), encoding)
    }
    let v = load("public_ids.json");
    assert_eq!(v["cipher"], "Speck64/128");
    let ka = &v["known_answer"];
    assert_eq!(&*ids(ka).unwrap().encode(u64_of(&ka["id"])), ka["text"].as_str().unwrap());
    let mut n = 0;
    for row in v["keys"].as_array().unwrap() {
        let p = ids(row).unwrap();
        for case in row["cases"].as_array().unwrap() {
            let (id, text) = (u64_of(&case["id"]), case["text"].as_str().unwrap());
            assert_eq!(&*p.encode(id), text, "{row:?}");
            assert_eq!(p.decode(text), Ok(id));
            n += 1;
        }
    }
    assert!(n >= 50);
    for bad in v["invalid_keys"].as_array().unwrap().iter().chain(v["invalid_encodings"].as_array().unwrap())
    {
        let err = ids(bad).unwrap_err();
        assert_eq!(err.kind().code(), bad["error"].as_str().unwrap(), "{bad:?}");
    }
    for bad in v["invalid_texts"].as_array().unwrap() {
        let err = ids(bad).unwrap().decode(bad["text"].as_str().unwrap()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidId);
        assert_eq!(err.kind().code(), bad["error"].as_str().unwrap());
    }
}

/// `sql_scripts.json` (issue 14): the PostgreSQL SQL of every preset with the default prefix,
/// or the error of a 64-bit one, which the bindings' `sql("postgres")` must return. Core's
/// output, like `redis_scripts.json`: `SNOWFLAKE_BLESS=1 cargo test -p snowflake-core --test
/// vectors sql_scripts` rewrites it after a deliberate change.
#[cfg(feature = "sql")]
#[test]
fn sql_scripts_are_cores() {
    use snowflake_core::{sql, SqlDialect, DEFAULT_SQL_PREFIX};
    let path = format!("{}/../tests/vectors/sql_scripts.json", env!("CARGO_MANIFEST_DIR"));
    let scripts: Vec<Value> = snowflake_core::PRESETS
        .iter()
        .map(|(name, _)| {
            let layout = Layout::parse(name).unwrap();
            let nodes: Vec<&str> = layout.node_fields().map(|(_, f)| f.name()).collect();
            match sql(&layout, SqlDialect::Postgres, DEFAULT_SQL_PREFIX) {
                Ok(text) => serde_json::json!({
                    "spec": name, "dialect": "postgres", "prefix": DEFAULT_SQL_PREFIX,
                    "node_fields": nodes, "sql": text,
                }),
                Err(e) => serde_json::json!({
                    "spec": name, "dialect": "postgres", "prefix": DEFAULT_SQL_PREFIX,
                    "node_fields": nodes, "error": e.kind().code(),
                }),
            }
        })
        .collect();
    assert!(
        scripts.iter().any(|s| s.get("error").is_some()) && scripts.iter().any(|s| s.get("sql").is_some())
    );
    let text = serde_json::to_string_pretty(&serde_json::json!({ "scripts": scripts })).unwrap() + "\n";
    if std::env::var_os("SNOWFLAKE_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &text).expect(&path);
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "tests/vectors/sql_scripts.json is not what core's sql writes now: regenerate it with \
         `SNOWFLAKE_BLESS=1 cargo test -p snowflake-core --test vectors sql_scripts` and commit it"
    );
}

#[test]
fn uuid_views() {
    let v = load("uuid.json");
    let mut checked = 0;
    for layout_case in v["layouts"].as_array().unwrap() {
        let layout = Layout::parse(layout_case["spec"].as_str().unwrap()).unwrap();
        for case in layout_case["cases"].as_array().unwrap() {
            let id = u64_of(&case["id"]);
            let text = case["uuid"].as_str().unwrap();
            let uuid = layout.to_uuid(id).unwrap();
            assert_eq!(snowflake_core::format_uuid(uuid).as_str(), text, "{id}");
            assert_eq!((uuid >> 80) as u64, u64_of(&case["unix_ms"]));
            assert_eq!(layout.from_uuid(snowflake_core::parse_uuid(text).unwrap()), Ok(id));
            assert_eq!(layout.from_uuid(snowflake_core::parse_uuid(&text.to_uppercase()).unwrap()), Ok(id));
            checked += 1;
        }
    }
    assert!(checked > 50);
    for case in v["to_uuid_invalid"].as_array().unwrap() {
        let layout = Layout::parse(case["spec"].as_str().unwrap()).unwrap();
        let err = layout.to_uuid(u64_of(&case["id"])).unwrap_err();
        assert_eq!(err.kind().code(), case["error"].as_str().unwrap());
    }
    for case in v["from_uuid_invalid"].as_array().unwrap() {
        let layout = Layout::parse(case["spec"].as_str().unwrap()).unwrap();
        let err = snowflake_core::parse_uuid(case["uuid"].as_str().unwrap())
            .and_then(|u| layout.from_uuid(u))
            .unwrap_err();
        assert_eq!(err.kind().code(), case["error"].as_str().unwrap());
        let contains = case["message_contains"].as_str().unwrap();
        assert!(err.to_string().contains(contains), "{err} should contain {contains}");
    }
}
