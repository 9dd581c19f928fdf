//! The generator options of `next` as flags, made from core's option table (`OPTIONS`): one
//! flag per option (`--max-drift-ms`, `--state-file`, ...), with the table's value form and
//! doc as its help, so the CLI offers every option core has, checked by core alone.

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use snowflake_core::{OptionType, Spelling, OPTIONS, RETIRED};
use std::ffi::OsString;

/// The option flags given, as `(option name, value)` in the table's order: a path as the
/// operating system gave it (Linux paths need not be UTF-8), every other value as text.
#[derive(Debug, Default)]
pub struct OptionFlags(pub Vec<(&'static str, FlagValue)>);

/// A flag's value.
#[derive(Debug)]
pub enum FlagValue {
    Text(String),
    Path(OsString),
}

/// `--max-drift-ms` for `max_drift_ms`; made once, for clap's `&'static str`s.
fn flag(name: &'static str) -> &'static str {
    let spelled = Spelling::Flag.spell(name);
    Box::leak(spelled.as_str().trim_start_matches("--").to_string().into_boxed_str())
}

impl Args for OptionFlags {
    fn augment_args(mut cmd: Command) -> Command {
        for spec in OPTIONS {
            let mut help = spec.doc.to_string();
            if !spec.default.is_empty() {
                help.push_str(&format!(" [default: {}]", spec.default));
            }
            let mut arg = Arg::new(spec.name)
                .long(flag(spec.name))
                .value_name(spec.form)
                .help(help)
                .action(ArgAction::Set)
                .help_heading("Generator options (core's option table)");
            arg = match spec.ty {
                // `--isolated` alone means true, `--isolated=false` false: a value only after
                // `=`, so that the flag never takes the next argument (`--isolated -n 2`).
                OptionType::Bool => arg.num_args(0..=1).require_equals(true).default_missing_value("true"),
                OptionType::Path => arg.allow_hyphen_values(true).value_parser(clap::value_parser!(OsString)),
                _ => arg.allow_hyphen_values(true),
            };
            cmd = cmd.arg(arg);
        }
        // A retired option's flag is refused by core with what replaced it, not by clap as
        // an unknown argument.
        for r in RETIRED {
            cmd = cmd
                .arg(Arg::new(r.name).long(flag(r.name)).hide(true).num_args(0..=1).action(ArgAction::Set));
        }
        cmd
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        OptionFlags::augment_args(cmd)
    }
}

impl FromArgMatches for OptionFlags {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut flags = OptionFlags::default();
        flags.update_from_arg_matches(matches)?;
        Ok(flags)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        for spec in OPTIONS {
            if spec.ty == OptionType::Path {
                if let Some(value) = matches.get_one::<OsString>(spec.name) {
                    self.0.push((spec.name, FlagValue::Path(value.clone())));
                }
            } else if let Some(value) = matches.get_one::<String>(spec.name) {
                self.0.push((spec.name, FlagValue::Text(value.clone())));
            }
        }
        for r in RETIRED {
            if matches.contains_id(r.name) && matches.value_source(r.name).is_some() {
                self.0.push((r.name, FlagValue::Text(String::new())));
            }
        }
        Ok(())
    }
}
