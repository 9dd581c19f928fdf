//! The committed headers are what cbindgen generates from the code now: `include/snowflake.h`
//! (C and C++) and `include/snowflake_php.h` (PHP FFI). A stale header fails here, in
//! `cargo test`; `SNOWFLAKE_BLESS=1 cargo test -p snowflake-ffi --test headers` rewrites both.

use std::path::{Path, PathBuf};

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn include_dir() -> PathBuf {
    crate_dir().parent().expect("ffi-c lives in the workspace root").join("include")
}

/// The version macros, from Cargo's version: the header and `snowflake_version()` cannot
/// disagree, and a C test checks that they do not.
fn version_macros() -> String {
    format!(
        "\n#define SNOWFLAKE_VERSION \"{}\"\n#define SNOWFLAKE_VERSION_MAJOR {}\n#define SNOWFLAKE_VERSION_MINOR {}\n#define SNOWFLAKE_VERSION_PATCH {}\n",
        env!("CARGO_PKG_VERSION"),
        env!("CARGO_PKG_VERSION_MAJOR"),
        env!("CARGO_PKG_VERSION_MINOR"),
        env!("CARGO_PKG_VERSION_PATCH"),
    )
}

fn generate(config_file: &str, with_version: bool) -> String {
    let mut config = cbindgen::Config::from_file(crate_dir().join(config_file))
        .unwrap_or_else(|e| panic!("reading ffi-c/{config_file}: {e}"));
    if with_version {
        config.after_includes = Some(version_macros());
    }
    let mut out = Vec::new();
    cbindgen::Builder::new()
        .with_config(config)
        .with_src(crate_dir().join("src/lib.rs"))
        .generate()
        .unwrap_or_else(|e| panic!("cbindgen with ffi-c/{config_file}: {e}"))
        .write(&mut out);
    String::from_utf8(out).expect("cbindgen writes UTF-8")
}

fn check(name: &str, generated: &str) {
    let path = include_dir().join(name);
    if std::env::var_os("SNOWFLAKE_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, generated).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != generated {
        let line = committed
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .map_or_else(|| committed.lines().count().min(generated.lines().count()) + 1, |i| i + 1);
        panic!(
            "include/{name} is stale: it differs from what cbindgen generates now (first at line {line}).\n\
             Regenerate it with `SNOWFLAKE_BLESS=1 cargo test -p snowflake-ffi --test headers` and commit it."
        );
    }
}

/// Resolves cbindgen's `#if __STDC_VERSION__ >= 202311L` blocks (around `#[repr(u32)]` enums)
/// as pre-C23 C: keeps the `#else` branch, drops the C23 one. PHP's FFI parser has no
/// preprocessor, and reads the result as C99.
fn resolve_c23_conditionals(text: &str) -> String {
    let mut out = String::new();
    let (mut inside, mut keep) = (false, true);
    for line in text.lines() {
        let directive = line.trim_start();
        if directive.starts_with("#if __STDC_VERSION__ >= 202311L") {
            (inside, keep) = (true, false);
        } else if inside && directive.starts_with("#else") {
            keep = true;
        } else if inside && directive.starts_with("#endif") {
            (inside, keep) = (false, true);
        } else if keep {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[test]
fn snowflake_h_is_current() {
    check("snowflake.h", &generate("cbindgen.toml", true));
}

#[test]
fn snowflake_php_h_is_current() {
    let php = resolve_c23_conditionals(&generate("cbindgen-php.toml", false));
    // PHP's FFI parser accepts no other preprocessor line.
    for line in php.lines().filter(|l| l.trim_start().starts_with('#')) {
        assert!(
            line.starts_with("#define FFI_SCOPE ") || line.starts_with("#define FFI_LIB "),
            "snowflake_php.h may hold no preprocessor line but FFI_SCOPE and FFI_LIB: {line}"
        );
    }
    check("snowflake_php.h", &php);
}

/// `/** … */` doc text: the comment's lines without their ` * ` lead.
fn doc_text(lines: &[&str]) -> String {
    lines
        .iter()
        .map(|l| l.trim().trim_start_matches("/**").trim_end_matches("*/").trim())
        .map(|l| l.strip_prefix("* ").unwrap_or(l.trim_start_matches('*')))
        // rustdoc's `# Safety` heading, as a paragraph of the function's section.
        .map(|l| if l == "# Safety" { "**Safety**:" } else { l })
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

/// The section of the API a function belongs to, by its name.
fn section_of(name: &str) -> usize {
    const PREFIXES: [&str; 6] = [
        "snowflake_layout_",
        "snowflake_options_",
        "snowflake_generator_",
        "snowflake_next_",
        "snowflake_public_",
        "",
    ];
    let i = PREFIXES.iter().position(|p| name.starts_with(p)).unwrap_or(5);
    match name {
        // The generator's calls that do not carry its name.
        "snowflake_fill" | "snowflake_reserve" | "snowflake_reserve_at" | "snowflake_try_next_id" => 2,
        _ if i == 3 => 2,
        _ => i,
    }
}

/// ffi-c/API.md, the C API's reference, generated from the header so that it cannot go
/// stale: every status, constant, type and function of `snowflake.h` with its documentation,
/// under a short introduction.
fn api_md(header: &str) -> String {
    let lines: Vec<&str> = header.lines().collect();
    let (mut statuses, mut constants, mut types) = (Vec::new(), Vec::new(), Vec::new());
    let mut functions: [Vec<(String, String)>; 6] = Default::default();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].trim_start().starts_with("/**") {
            i += 1;
            continue;
        }
        let start = i;
        while !lines[i].trim_end().ends_with("*/") {
            i += 1;
        }
        let doc = doc_text(&lines[start..=i]);
        i += 1;
        let Some(&decl) = lines.get(i) else { break };
        let t = decl.trim();
        if let Some(rest) = t.strip_prefix("SNOWFLAKE_STATUS_") {
            let (name, value) = rest.trim_end_matches(',').split_once(" = ").expect("a status has a value");
            statuses.push(format!("| {value} | `SNOWFLAKE_STATUS_{name}` | {} |", doc.replace('\n', " ")));
        } else if let Some(rest) = t.strip_prefix("#define ") {
            constants.push(format!("- `{rest}`: {}", doc.replace('\n', " ")));
        } else if t.starts_with("enum SnowflakeStatus") {
            // Its values are the table of statuses, read from its members below.
            types.push(format!("`SnowflakeStatus` (a `uint32_t`): {}", doc.replace('\n', " ")));
        } else if t.starts_with("enum ") || t.starts_with("typedef struct") {
            // The declaration whole, as the header has it (a struct with its fields' docs).
            let end = if t.ends_with(';') {
                i
            } else {
                (i..lines.len()).find(|&j| lines[j].starts_with('}')).expect("a body ends")
            };
            let body = lines[i..=end].join("\n");
            types.push(format!("{doc}\n\n```c\n{body}\n```"));
            i = end;
        } else if t.contains("snowflake_") && t.ends_with(");") {
            let name = t.split('(').next().unwrap_or("").rsplit([' ', '*']).next().unwrap_or("").to_string();
            functions[section_of(&name)].push((name, format!("```c\n{t}\n```\n\n{doc}")));
        }
        i += 1;
    }
    let mut out = String::from(
        "# The C API (snowflake.h)\n\n\
         <!-- Generated from include/snowflake.h by ffi-c/tests/headers.rs; do not edit: \
         `SNOWFLAKE_BLESS=1 cargo test -p snowflake-ffi --test headers` rewrites it. -->\n\n\
         Every function, type and status of `snowflake.h`, with the header's own documentation.\n\
         Two libraries implement it: `libsnowflake` (`.so` and `.a`; pkg-config `snowflake`,\n\
         CMake `snowflake::snowflake`) and `libsnowflake_minimal.a` (pkg-config\n\
         `snowflake-minimal`, CMake `snowflake::minimal`), the same functions without leases: on\n\
         it a `lease=` option fails with `SNOWFLAKE_STATUS_VALUE` and\n\
         `libsnowflake_minimal has no leases: link libsnowflake`. How to build and link, and\n\
         examples: docs/c.md.\n\n\
         Conventions: `snowflake_<object>_<verb>`; the handle first; inputs before outputs; a\n\
         buffer followed by its `size_t`; outputs written only on `SNOWFLAKE_STATUS_OK`; every\n\
         pointer checked (`SNOWFLAKE_STATUS_NULL_ARGUMENT`); no panic crosses the boundary\n\
         (`SNOWFLAKE_STATUS_PANIC`); strings are NUL-terminated UTF-8. After any other status,\n\
         `snowflake_last_error()` gives this thread's detail.\n\n## Statuses\n\n\
         | value | name | meaning |\n|---|---|---|\n",
    );
    out.push_str(&statuses.join("\n"));
    out.push_str("\n\n## Constants\n\n");
    out.push_str(&constants.join("\n"));
    out.push_str("\n\n## Types\n\n");
    out.push_str(&types.join("\n\n"));
    let titles = ["Layouts", "Options", "Generators", "", "Public IDs", "The library, errors and encodings"];
    for (title, fns) in titles.iter().zip(functions.iter()) {
        if fns.is_empty() {
            continue;
        }
        out.push_str(&format!("\n\n## {title}\n"));
        for (name, text) in fns {
            out.push_str(&format!("\n### `{name}`\n\n{text}\n"));
        }
    }
    out
}

#[test]
fn api_md_is_current() {
    let generated = api_md(&generate("cbindgen.toml", true));
    assert!(
        generated.contains("`SNOWFLAKE_STATUS_PANIC`")
            && generated.contains("### `snowflake_layout_field_value`")
    );
    let path = crate_dir().join("API.md");
    if std::env::var_os("SNOWFLAKE_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "ffi-c/API.md is stale: regenerate it with `SNOWFLAKE_BLESS=1 cargo test -p snowflake-ffi --test headers` and commit it"
    );
}
