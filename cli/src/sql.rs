//! `snowflake sql`: the SQL that issues, bounds and decodes a layout's IDs in a database.

use crate::Failure;
use clap::Args;
use snowflake_core::SqlDialect;
use std::io::Write;

/// Print SQL that installs a layout's ID functions in PostgreSQL (12 or later).
///
/// It installs PREFIX_next_id(<node values in layout order>), PREFIX_next_id_at(<node values>,
/// unix_ms) for a fixed clock, PREFIX_min_id(timestamptz) / PREFIX_max_id(timestamptz) for range
/// queries and PREFIX_decode(bigint), over one sequence (PREFIX_state) that no rollback or crash
/// gives back. Sessions take turns under an advisory lock held for a few statements; a server
/// clock that went back is waited for (max_wait_ms, default 1000) and then an error, never a
/// repeated ID. Layouts of 64 bits are refused: PostgreSQL's bigint is signed.
#[derive(Args, Debug)]
#[command(after_help = "\
Examples:
  snowflake sql --layout instagram | psql              snowflake_next_id(shard)
  psql -c 'CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_next_id(5), body text)'
  snowflake sql --layout twitter --prefix ids.tw | psql   ids.tw_next_id(datacenter, worker)
  psql -c 'SELECT * FROM snowflake_decode(1541815603606036480)'")]
pub struct SqlArgs {
    /// Preset name or layout spec (of 63 bits or fewer).
    #[arg(short, long, default_value = "twitter", value_name = "SPEC")]
    pub layout: String,
    /// The SQL dialect: postgres.
    #[arg(long, default_value = "postgres", value_name = "DIALECT")]
    pub dialect: String,
    /// The start of every object's name, optionally schema-qualified (`ids.snowflake`).
    #[arg(long, default_value = snowflake_core::DEFAULT_SQL_PREFIX, value_name = "PREFIX")]
    pub prefix: String,
}

/// `snowflake sql`.
pub fn run(args: &SqlArgs) -> Result<(), Failure> {
    let layout = crate::commands::layout_in_use(&args.layout)?;
    let dialect: SqlDialect = args.dialect.parse()?;
    let text = snowflake_core::sql(&layout, dialect, &args.prefix)?;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}
