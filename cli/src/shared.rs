//! `snowflake shared`: the host's records of identities, which every generator meets.

use crate::Failure;
use clap::{Args, Subcommand};
use std::io::Write;

/// List, show or remove this host's records of identities (in $SNOWFLAKE_SHM_DIR, else
/// /dev/shm), every user's.
///
/// Every generator but an isolated one meets the host's one record of its layout and node
/// values (one file per user and identity): the default shares its state word with every
/// process of the user that uses them; process_only, leases and state files are refused or
/// made safe there, and another user's process is refused while one uses them. A record
/// lives until it is removed or the host reboots (/dev/shm is memory); once no process uses
/// it, a new configuration takes it over, keeping its high-water mark. Removing it is needed
/// only to reclaim its 4 KiB: `remove` refuses while a process uses it, or while its IDs are
/// ahead of the clock.
#[derive(Args, Debug)]
#[command(after_help = "\
Examples:
  snowflake shared list              path, user, name, mode, in use (by which processes), layout,
                                     node values, terms, next free time, clock offset
  snowflake shared show orders       one state, by its shared= name, file name or path
  snowflake shared remove orders     remove it (refused while a process uses it)")]
pub struct SharedArgs {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Subcommand, Debug)]
pub enum Action {
    /// One line a record: path, user, name, mode, in use (by which processes) or unused,
    /// layout, node values, terms, next free time, this process's clock against its users'.
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
    let pids: Vec<String> = s.pids.iter().map(u32::to_string).collect();
    writeln!(out, "path: {}", s.path.display())?;
    writeln!(out, "user: {}", s.user)?;
    writeln!(out, "name: {name}")?;
    writeln!(out, "mode: {}", s.mode)?;
    match (s.in_use, pids.is_empty()) {
        (false, _) => writeln!(out, "in use: no")?,
        (true, true) => writeln!(out, "in use: yes")?,
        (true, false) => writeln!(out, "in use: yes, by process {}", pids.join(", "))?,
    }
    writeln!(out, "layout: {}", s.layout)?;
    writeln!(out, "node: {}", s.node)?;
    writeln!(out, "terms: {}", s.terms)?;
    writeln!(out, "next free time: {next}")?;
    writeln!(out, "clock anchor: wall - monotonic = {} ms", s.anchor_ms)?;
    writeln!(out, "this process's monotonic clock against its users': {:+} ms", s.time_base_off_ms)
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
