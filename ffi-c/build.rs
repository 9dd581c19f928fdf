//! Gives the shared library the soname cargo-c gives a library: `libsnowflake.so.<major>`
//! from 1.0 on, and `libsnowflake.so.0.<minor>` before it, since under semver a 0.x minor
//! release may break the ABI. Programs linked against 0.1 then keep loading 0.1 when 0.2 is
//! installed beside it. ffi-c/Makefile names the installed files and links the same way. On
//! macOS the install name is `@rpath/libsnowflake.0.<minor>.dylib`.

fn main() {
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").expect("cargo sets CARGO_PKG_VERSION_MAJOR");
    let minor = std::env::var("CARGO_PKG_VERSION_MINOR").expect("cargo sets CARGO_PKG_VERSION_MINOR");
    let abi = if major == "0" { format!("0.{minor}") } else { major };
    if target_os == "linux" || target_os == "freebsd" || target_os == "android" {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libsnowflake.so.{abi}");
    } else if target_os == "macos" {
        // The same on macOS, as an install name that a program finds through its rpath:
        // scripts/dist.sh ships the file under this name, with libsnowflake.dylib linking to it.
        println!("cargo:rustc-cdylib-link-arg=-Wl,-install_name,@rpath/libsnowflake.{abi}.dylib");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
