//! `libsnowflake._native`: the Python binding of snowflake-core. Each file mirrors a core
//! module and only converts arguments, forwards to core and maps errors (`error.rs`); the
//! public names are re-exported by `libsnowflake/__init__.py`.

mod encoding;
mod error;
mod generator;
mod layout;
mod public;
mod time;
mod value;

use pyo3::prelude::*;

/// The compiled half of libsnowflake; import from ``libsnowflake`` instead.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<layout::PyLayout>()?;
    m.add_class::<layout::PyParts>()?;
    m.add_class::<layout::PyField>()?;
    m.add_class::<generator::PyGenerator>()?;
    m.add_class::<generator::PyBlock>()?;
    m.add_class::<generator::BlockIter>()?;
    m.add_class::<generator::PyStats>()?;
    generator::PyStats::add_table(&m.py().get_type::<generator::PyStats>())?;
    m.add_class::<public::PyPublicIds>()?;
    m.add_function(wrap_pyfunction!(encoding::encode, m)?)?;
    m.add_function(wrap_pyfunction!(encoding::decode_str, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
