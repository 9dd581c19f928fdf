//! The generator options of `next` as flags, made from core's option table (`OPTIONS`): one
//! flag per option (`--max-drift-ms`, `--state-file`, ...), with the table's value form and
//! doc as its help, so the CLI offers every option core has, checked by core alone.

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use snowflake_core::{OptionType, Spelling, OPTIONS, RETIRED};

/// The option flags given, as `(option name, value text)` in the table's order.
#[derive(Debug, Default)]
pub struct OptionFlags(pub Vec<(&'static str, String)>);

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
                .allow_hyphen_values(true)
                .help_heading("Generator options (core's option table)");
            if spec.ty == OptionType::Bool {
                // `--process-only` alone means true.
                arg = arg.num_args(0..=1).default_missing_value("true");
            }
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
            if let Some(value) = matches.get_one::<String>(spec.name) {
                self.0.push((spec.name, value.clone()));
            }
        }
        for r in RETIRED {
            if matches.contains_id(r.name) && matches.value_source(r.name).is_some() {
                self.0.push((r.name, String::new()));
            }
        }
        Ok(())
    }
}
