//! macOS: the extension module's Python symbols resolve at load time (see Cargo.toml).

fn main() {
    pyo3_build_config::add_extension_module_link_args();
}
