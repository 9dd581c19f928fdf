//! Gives the shared library a soname that carries the major version (`libsnowflake.so.0`), so
//! that a future incompatible ABI can be installed beside this one and programs linked
//! against it keep loading the version they were built for.

fn main() {
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if target_os == "linux" || target_os == "freebsd" || target_os == "android" {
        let major = std::env::var("CARGO_PKG_VERSION_MAJOR").expect("cargo sets CARGO_PKG_VERSION_MAJOR");
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libsnowflake.so.{major}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
