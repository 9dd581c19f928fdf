//! The shared vectors (`tests/vectors/*.json`), through the command line: what every binding
//! must agree on, `snowflake decode`, `bounds` and `layouts` must print.

use serde_json::Value;
use std::io::Write;
use std::process::{Command, Output, Stdio};

fn vectors(name: &str) -> Value {
    let path = format!("{}/../tests/vectors/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn run(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_snowflake"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn stdout_of(args: &[&str], input: &str) -> String {
    let out = run(args, input);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn assert_bad_input(args: &[&str]) {
    let out = run(args, "");
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    assert!(out.stdout.is_empty(), "{args:?}");
    assert_eq!(String::from_utf8(out.stderr).unwrap().lines().count(), 1, "{args:?}");
}

#[test]
fn decode_and_bounds_agree_with_the_layout_vectors() {
    let v = vectors("layouts.json");
    for layout in v["layouts"].as_array().unwrap() {
        let spec = layout["spec"].as_str().unwrap();
        let listed = stdout_of(&["layouts", spec], "");
        assert!(listed.contains(layout["canonical"].as_str().unwrap()), "{spec}: {listed}");

        let cases = layout["decode"].as_array().unwrap();
        let input: String = cases.iter().map(|c| format!("{}\n", c["id"].as_str().unwrap())).collect();
        let lines = stdout_of(&["decode", "--json", "--layout", spec], &input);
        assert_eq!(lines.lines().count(), cases.len(), "{spec}");
        for (case, line) in cases.iter().zip(lines.lines()) {
            let got: Value = serde_json::from_str(line).unwrap();
            for key in ["id", "unix_ms", "sequence", "fields"] {
                assert_eq!(got[key], case[key], "{spec} {key}: {line}");
            }
        }

        for case in layout["bounds"].as_array().into_iter().flatten() {
            let at = case["unix_ms"].as_u64().unwrap().to_string();
            let text = stdout_of(&["bounds", "--layout", spec, &at], "");
            let got: Vec<&str> = text.lines().map(|l| l.split_whitespace().nth(1).unwrap()).collect();
            assert_eq!(
                got,
                [case["min_id"].as_str().unwrap(), case["max_id"].as_str().unwrap()],
                "{spec} {at}"
            );
        }
    }
    for case in v["invalid"].as_array().unwrap() {
        assert_bad_input(&["layouts", case["spec"].as_str().unwrap()]);
    }
    for case in v["decode_invalid"].as_array().unwrap() {
        assert_bad_input(&[
            "decode",
            "--layout",
            case["spec"].as_str().unwrap(),
            case["id"].as_str().unwrap(),
        ]);
    }
}

#[test]
fn decode_from_agrees_with_the_encoding_vectors() {
    let v = vectors("encodings.json");
    let ids = v["ids"].as_array().unwrap();
    // mastodon is 64 bits wide: every u64 is one of its IDs.
    for encoding in ["decimal", "hex", "base32", "base36", "base58", "base62"] {
        let input: String =
            ids.iter().map(|c| format!("{}\n", c["plain"][encoding].as_str().unwrap())).collect();
        let lines = stdout_of(&["decode", "--json", "--layout", "mastodon", "--from", encoding], &input);
        let got: Vec<Value> =
            lines.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].clone()).collect();
        let want: Vec<Value> = ids.iter().map(|c| c["id"].clone()).collect();
        assert_eq!(got, want, "{encoding}");
    }
    for case in v["aliases"].as_array().unwrap() {
        let (encoding, text) = (case["encoding"].as_str().unwrap(), case["text"].as_str().unwrap());
        let line = stdout_of(&["decode", "--json", "--layout", "mastodon", "--from", encoding, text], "");
        assert_eq!(serde_json::from_str::<Value>(&line).unwrap()["id"], case["id"], "{encoding} {text}");
    }
    for case in v["invalid"].as_array().unwrap() {
        let (encoding, text) = (case["encoding"].as_str().unwrap(), case["text"].as_str().unwrap());
        assert_bad_input(&["decode", "--layout", "mastodon", "--from", encoding, text]);
    }
}
