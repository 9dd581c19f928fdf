//! `snowflake shared`: the host's shared states, which every generator uses by default.

use crate::Failure;
use clap::{Args, Subcommand};
use std::io::Write;

/// List, show or remove this host's shared states (in $SNOWFLAKE_SHM_DIR, else /dev/shm).
///
/// Every generator without `process_only`, `isolated` or a lease keeps its state in one file
/// per layout and node values, shared by every process of this user on this host that uses
/// them. A state lives until it is removed or the host reboots (/dev/shm is memory); once no
/// process uses it, a new configuration takes it over, keeping its high-water mark. Removing
/// it is needed only to reclaim its 4 KiB: `remove` refuses while a process uses it, or while
/// its IDs are ahead of the clock.
#[derive(Args, Debug)]
#[command(after_help = "\
Examples:
  snowflake shared list              path, name, in use, layout, node values, terms, next free time
  snowflake shared show orders       one state, by its shared= name, file name or path
  snowflake shared remove orders     remove it (refused while a process uses it)")]
pub struct SharedArgs {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Subcommand, Debug)]
pub enum Action {
    /// One line a state: path, name, in use or unused, layout, node values, terms, next free time.
    List,
    /// One state, field by field.
    Show {
        /// Its `shared=` name, its file name or its path.
        which: String,
    },
    /// Removes a state that no process uses.
    Remove {
        /// Its `shared=` name, its file name or its path.
        which: String,
    },
}

fn show(out: &mut impl Write, s: &snowflake_core::SharedState) -> std::io::Result<()> {
    let name = if s.name.is_empty() { "-" } else { &s.name };
    let mut buf = [0u8; snowflake_core::time::RFC3339_LEN];
    let next = snowflake_core::time::format_rfc3339(s.next_ms, &mut buf).unwrap_or("-");
    writeln!(out, "path: {}", s.path.display())?;
    writeln!(out, "name: {name}")?;
    writeln!(out, "in use: {}", if s.in_use { "yes" } else { "no" })?;
    writeln!(out, "layout: {}", s.layout)?;
    writeln!(out, "node: {}", s.node)?;
    writeln!(out, "terms: {}", s.terms)?;
    writeln!(out, "next free time: {next}")
}

/// `snowflake shared`.
pub fn run(args: &SharedArgs) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match &args.action {
        Action::List => {
            for s in snowflake_core::shared_states()? {
                writeln!(out, "{s}")?;
            }
        }
        Action::Show { which } => show(&mut out, &snowflake_core::find_shared_state(which)?)?,
        Action::Remove { which } => {
            let s = snowflake_core::remove_shared_state(which)?;
            writeln!(out, "removed {}", s.path.display())?;
        }
    }
    out.flush()?;
    Ok(())
}
