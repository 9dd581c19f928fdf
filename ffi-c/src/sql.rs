//! `snowflake_layout_sql`: core's [`snowflake_core::sql`] for a layout handle.

use crate::error::{fail_with, ffi_boundary, non_null, SnowflakeStatus};
use crate::layout::{handle, SnowflakeLayout};
use crate::{opt_str_arg, str_arg, write_c_string};
use snowflake_core::{SqlDialect, DEFAULT_SQL_PREFIX};
use std::ffi::c_char;

/// Writes the SQL that installs the layout's ID functions in a database (core's `sql`, the
/// text of `snowflake sql`) and a NUL into `buf`. `dialect`: `"postgres"` (PostgreSQL 12 or
/// later: `PREFIX_next_id(<node values in layout order>)`, `PREFIX_next_id_at(..., unix_ms)`,
/// `PREFIX_min_id(timestamptz)`, `PREFIX_max_id(timestamptz)`, `PREFIX_decode(bigint)`);
/// `prefix`: the start of every object's name, optionally schema-qualified, or NULL for
/// `"snowflake"`. `SNOWFLAKE_STATUS_VALUE` for a 64-bit layout (PostgreSQL's bigint is
/// signed), an unknown dialect or a bad prefix.
///
/// Sizes work as for `snowflake_layout_redis_script`: when `needed` is not NULL, `*needed`
/// receives the bytes the text takes (text + NUL) on success and on
/// `SNOWFLAKE_STATUS_BUFFER_TOO_SMALL`, so `buf = NULL, len = 0` asks the size; nothing is
/// written into `buf` unless the status is `SNOWFLAKE_STATUS_OK`.
///
/// # Safety
/// `layout` is a live handle; `dialect` is NUL-terminated; `prefix` is NULL or NUL-terminated;
/// `buf` is NULL with `len == 0`, or valid for `len` bytes of writes; `needed` is NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn snowflake_layout_sql(
    layout: *const SnowflakeLayout,
    dialect: *const c_char,
    prefix: *const c_char,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(layout, dialect);
        if len > 0 {
            non_null!(buf);
        }
        // SAFETY: non-NULL, NUL-terminated by contract.
        let dialect: SqlDialect = unsafe { str_arg(dialect, "dialect") }?.parse()?;
        // SAFETY: NULL or NUL-terminated by contract.
        let prefix = match unsafe { opt_str_arg(prefix, "prefix") }? {
            "" if prefix.is_null() => DEFAULT_SQL_PREFIX,
            p => p,
        };
        // SAFETY: a live handle by contract.
        let text = snowflake_core::sql(&unsafe { handle(layout) }.layout, dialect, prefix)?;
        if !needed.is_null() {
            // SAFETY: non-NULL, valid for a write by contract.
            unsafe { *needed = text.len() + 1 };
        }
        if buf.is_null() {
            // len == 0 here: a size query, which never fits.
            return Err(fail_with(
                SnowflakeStatus::BufferTooSmall,
                format_args!("the buffer holds 0 bytes; {} are needed (the SQL and its NUL)", text.len() + 1),
            ));
        }
        // SAFETY: `buf` holds `len` bytes by contract.
        unsafe { write_c_string(&text, buf, len) }
    })
}
