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
