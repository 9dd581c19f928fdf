//! `snowflake`: generate, decode and inspect Snowflake-style 64-bit IDs from the shell.
//!
//! This crate only parses arguments, formats output and maps errors to exit codes; every
//! rule (layouts, node values, options, encodings, times) is `snowflake-core`'s, so the
//! command line accepts and rejects exactly what every binding does.
//!
//! Exit codes: 0 success (also when a reader such as `head` closes the pipe early), 1 when
//! the generator cannot issue (clock behind, sequence exhausted, a clock outside the layout's
//! time range) or output fails, 2 for bad input, always as one line `snowflake: error: ...`
//! on stderr with nothing on stdout.

mod commands;
mod diagram;
mod options;
mod output;
mod public;
mod serve;
mod shared;
mod sql;

use clap::{Args, Parser, Subcommand};
use std::io::{self, Write};
use std::process::ExitCode;

const EXAMPLES: &str = "\
Examples:
  snowflake next -n 5
  snowflake next --layout discord --node worker=1,process=3 --format base62
  SNOWFLAKE_NODE=datacenter=1,worker=7 snowflake next   (the layout, node and options from the environment)
  snowflake decode --layout discord 175928847299117063
  snowflake decode --layout discord --explain 175928847299117063
  snowflake layouts
  snowflake bounds --layout twitter 2024-01-01T00:00:00Z
  snowflake bench --seconds 2
  snowflake plan --hosts 1000 --processes-per-host 50 --peak-per-second 100000 --years 10
  snowflake shared list
  snowflake serve --listen 127.0.0.1:8405       IDs over HTTP (the `serve` feature)

A layout is a preset name (twitter, discord, instagram, sonyflake, baidu, mastodon, game, js53)
or a spec: time:41,datacenter:5,worker:5,sequence:12;epoch=1288834974657;tick=1ms";

/// Snowflake-style 64-bit time-ordered unique IDs: generate, decode, inspect.
#[derive(Parser, Debug)]
#[command(name = "snowflake", version, after_help = EXAMPLES, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    // DESIGN.md calls it "generate": both names work.
    #[command(visible_alias = "generate")]
    Next(NextArgs),
    Decode(DecodeArgs),
    Layouts(LayoutsArgs),
    Bounds(BoundsArgs),
    Bench(BenchArgs),
    RedisScript(RedisScriptArgs),
    Plan(PlanArgs),
    Sql(sql::SqlArgs),
    Public(public::PublicArgs),
    Shared(shared::SharedArgs),
    Config(ConfigArgs),
    Uuid(UuidArgs),
    Serve(serve::ServeArgs),
}

/// Print N new IDs, one a line.
///
/// Runs on one host with the same layout and node values never repeat an ID, nor repeat the
/// IDs of any other program of this user there with them: they share the host's state of the
/// layout and node values (see `snowflake shared`). Runs on different hosts need node values
/// of their own.
#[derive(Args, Debug)]
#[command(after_help = "\
Examples:
  snowflake next                                  one twitter-layout ID, node values 0
  snowflake next -n 1000000 > ids.txt             a million IDs, fast
  snowflake next --node datacenter=1,worker=7 -n 3
  snowflake next --layout discord --node worker=1 --format base62
  snowflake next --layout 'time:41,shard:13,sequence:10;epoch=2011-08-24T21:07:01.721Z' -n 2
  snowflake next -n 3 --format json               one decoded JSON object a line
  snowflake next -n 10 --max-drift-ms 50 --max-wait-ms 0
  snowflake next --shared orders -n 5             name the host's state `orders` (snowflake shared list)
  snowflake next --lease local -n 5               claim a free worker value on this host
  snowflake next --state-file ids.state -n 5      never repeat an ID after a clock step back
  snowflake next --options 'shared=orders;max_wait_ms=0'  any option in the text form
  SNOWFLAKE_NODE=datacenter=1,worker=7 snowflake next     node values from the environment
  snowflake config                                 where each value comes from

What a flag leaves unset comes from the environment: the layout from SNOWFLAKE_LAYOUT, the
node values from SNOWFLAKE_NODE, each option from SNOWFLAKE_OPTIONS (the text form); then the
defaults (twitter, all zeros). A malformed variable is an error that names it.")]
pub struct NextArgs {
    /// How many IDs.
    #[arg(short = 'n', long = "count", default_value_t = 1, value_name = "N")]
    pub count: u64,
    /// Output: decimal, hex, base32, base36, base58, base62 (fixed width, sortable) or json.
    #[arg(short, long, default_value = "decimal", value_name = "FORMAT")]
    pub format: String,
    /// The layout, node values and options.
    #[command(flatten)]
    pub config: GeneratorArgs,
}

/// A generator's configuration on the command line; what it leaves unset comes from the
/// environment (SNOWFLAKE_LAYOUT, SNOWFLAKE_NODE, SNOWFLAKE_OPTIONS), then the defaults.
#[derive(Args, Debug)]
pub struct GeneratorArgs {
    /// Preset name or layout spec [default: $SNOWFLAKE_LAYOUT, else twitter].
    #[arg(short, long, value_name = "SPEC")]
    pub layout: Option<String>,
    /// Node field values, `name=value,...`: every node field of the layout, or none for all
    /// zeros [default: $SNOWFLAKE_NODE, else all zeros].
    #[arg(long, value_name = "name=v,...")]
    pub node: Option<String>,
    /// Any option in the text form every binding reads, e.g. `shared=orders;max_wait_ms=0`
    /// (the flags below are the same options, one each; a key given both ways is an error).
    /// A key given neither way comes from $SNOWFLAKE_OPTIONS.
    #[arg(long, value_name = "key=value;...")]
    pub options: Option<String>,
    /// Every generator option of core's table, as a flag.
    #[command(flatten)]
    pub flags: options::OptionFlags,
}

/// Print the configuration `next` would use, and where each value comes from: a flag
/// (`code`), an environment variable (SNOWFLAKE_LAYOUT, SNOWFLAKE_NODE, SNOWFLAKE_OPTIONS), or
/// the default. Opens no generator.
#[derive(Args, Debug)]
#[command(after_help = "\
Examples:
  snowflake config
  SNOWFLAKE_NODE=datacenter=1,worker=7 SNOWFLAKE_OPTIONS='max_wait_ms=0' snowflake config
  snowflake config --layout discord --json")]
pub struct ConfigArgs {
    /// One JSON object: {"layout": {"value": …, "source": …}, "node": …, "options": {…}}.
    #[arg(long)]
    pub json: bool,
    /// The layout, node values and options, as `next` takes them.
    #[command(flatten)]
    pub config: GeneratorArgs,
}

/// Print the UUIDv7 view of IDs, or the IDs of UUIDs.
///
/// Each argument that is a UUID (36 characters with hyphens) prints its ID; any other prints
/// the UUID of the ID (decimal). The UUID is version 7 with RFC 9562's variant; its 48-bit
/// timestamp is the ID's Unix-ms time (what PostgreSQL's uuid_extract_timestamp and every
/// UUIDv7 tool read), the ID's other bits follow it: lossless, and sorted as the IDs are.
/// Values come from the arguments, or from standard input (one a line) when there are none.
#[derive(Args, Debug)]
#[command(after_help = "\
Examples:
  snowflake uuid 1541815603606036480
  snowflake uuid 0181ab11-8149-75e8-8000-000000000000
  snowflake next -n 3 | snowflake uuid --layout twitter")]
pub struct UuidArgs {
    /// Preset name or layout spec [default: $SNOWFLAKE_LAYOUT, else twitter].
    #[arg(short, long, value_name = "SPEC")]
    pub layout: Option<String>,
    /// IDs (decimal) or UUIDs (none: read standard input).
    #[arg(value_name = "ID|UUID")]
    pub values: Vec<String>,
}

/// Print the parts of IDs (time, sequence, node fields).
///
/// IDs come from the arguments, or from standard input (one a line) when there are none.
/// Every ID is checked before anything is printed.
#[derive(Args, Debug)]
#[command(after_help = "\
Examples:
  snowflake decode 1541815603606036480
  snowflake decode --layout discord --json 175928847299117063
  snowflake decode --layout discord --from base62 0Czks0tP37X
  snowflake decode --layout discord --explain 175928847299117063
  snowflake next -n 3 | snowflake decode")]
pub struct DecodeArgs {
    /// Preset name or layout spec [default: $SNOWFLAKE_LAYOUT, else twitter].
    #[arg(short, long, value_name = "SPEC")]
    pub layout: Option<String>,
    /// One JSON object a line: {"id":"…","unix_ms":…,"time":"…","sequence":…,"fields":{…}}.
    #[arg(long, conflicts_with = "explain")]
    pub json: bool,
    /// How the IDs are written: decimal, hex, base32, base36, base58, base62.
    #[arg(long, default_value = "decimal", value_name = "ENCODING")]
    pub from: String,
    /// Draw the layout's bits with each field's value in binary and decimal.
    #[arg(long)]
    pub explain: bool,
    /// IDs to decode (none: read standard input).
    #[arg(value_name = "ID")]
    pub ids: Vec<String>,
}

/// Does a layout fit a fleet: its hosts (node values), its peak rate per host (sequence
/// values a tick), its years (time values)? Which coordination to use: one shared state per
/// host, a lease per process, or a lease per host. Without --layout, every preset; when none
/// fits, a custom layout that does, with an epoch of today.
#[derive(Args, Debug)]
#[command(after_help = "\
Examples:
  snowflake plan --hosts 1000 --processes-per-host 50 --peak-per-second 100000 --years 10
  snowflake shared list
  snowflake plan --hosts 10 --processes-per-host 8 --peak-per-second 5000 --years 20 --layout twitter
  snowflake plan --hosts 1000 --processes-per-host 50 --peak-per-second 100000 --years 10 --json")]
pub struct PlanArgs {
    /// Hosts issuing IDs at the same time.
    #[arg(long, value_name = "N")]
    pub hosts: u64,
    /// Processes per host that issue IDs (PHP-FPM workers, gunicorn workers, ...).
    #[arg(long, value_name = "P", default_value_t = 1)]
    pub processes_per_host: u64,
    /// The peak rate of one host, in IDs per second.
    #[arg(long, value_name = "R")]
    pub peak_per_second: u64,
    /// How many years from now the layout must keep issuing.
    #[arg(long, value_name = "Y")]
    pub years: u64,
    /// Plan this layout only (a preset name or a spec).
    #[arg(short, long, value_name = "SPEC")]
    pub layout: Option<String>,
    /// One JSON object a layout, for scripts.
    #[arg(long)]
    pub json: bool,
}

/// Print a Lua script that issues a layout's IDs inside Redis, for clients without a binding.
///
/// Load it once (`SCRIPT LOAD`), then call `EVALSHA <sha1> 1 <state-key> <node values in layout
/// order>`: it answers the next ID as a decimal string, exact to the last bit (Lua numbers are
/// doubles; the script composes the ID in two exact 32-bit halves). One state key per set of
/// node values, each a whole number in digits. It never waits: a full tick, a clock behind the
/// stored one, or the tick of Redis's own start (IDs of before a restart may be there) is an
/// error (`ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED retry_after_ms=N`, `ERR_SNOWFLAKE_CLOCK_BEHIND ...`).
#[derive(Args, Debug)]
#[command(after_help = "\
Examples:
  snowflake redis-script > snowflake.lua          the twitter layout
  sha=$(redis-cli SCRIPT LOAD \"$(cat snowflake.lua)\")
  redis-cli EVALSHA $sha 1 ids:dc1:w3 1 3         datacenter=1, worker=3
  snowflake redis-script --layout discord")]
pub struct RedisScriptArgs {
    /// Preset name or layout spec.
    #[arg(short, long, default_value = "twitter", value_name = "SPEC")]
    pub layout: String,
}

/// Show layouts: spec, capacity, last instant, and a diagram of their bits.
#[derive(Args, Debug)]
#[command(after_help = "\
Examples:
  snowflake layouts                               every preset
  snowflake layouts sonyflake discord
  snowflake layouts 'time:40,shard:12,sequence:12;epoch=2024-01-01T00:00:00Z'")]
pub struct LayoutsArgs {
    /// Presets or specs to show (none: every preset).
    #[arg(value_name = "SPEC")]
    pub layouts: Vec<String>,
}

/// Print the smallest and largest ID of a tick, for `WHERE id BETWEEN min AND max`.
///
/// With two times: the smallest ID of the first one's tick and the largest of the second's.
#[derive(Args, Debug)]
#[command(after_help = "\
Examples:
  snowflake bounds 2024-01-01T00:00:00Z
  snowflake bounds --layout discord 1462015105796
  snowflake bounds --layout discord 2024-01-01T00:00:00Z 2024-02-01T00:00:00Z")]
pub struct BoundsArgs {
    /// Preset name or layout spec [default: $SNOWFLAKE_LAYOUT, else twitter].
    #[arg(short, long, value_name = "SPEC")]
    pub layout: Option<String>,
    /// An RFC 3339 UTC time (2024-01-01T00:00:00Z) or Unix milliseconds.
    #[arg(value_name = "TIME")]
    pub time: String,
    /// The end of a range (same forms); default: TIME.
    #[arg(value_name = "UNTIL")]
    pub until: Option<String>,
}

/// Measure how many IDs per second `next_id` and `next_ids` issue here.
#[derive(Args, Debug)]
#[command(after_help = "\
Examples:
  snowflake bench
  snowflake bench --layout 'time:41,sequence:22;epoch=1288834974657' --seconds 2")]
pub struct BenchArgs {
    /// Preset name or layout spec.
    #[arg(short, long, default_value = "twitter", value_name = "SPEC")]
    pub layout: String,
    /// How long to run each measurement, in seconds.
    #[arg(short, long, default_value_t = 1.0, value_name = "S")]
    pub seconds: f64,
}

/// Why a command failed, which decides the exit code.
#[derive(Debug)]
pub enum Failure {
    /// Bad input (layout, node, option, ID, encoding, time): exit 2.
    Input(String),
    /// The generator could not issue (clock behind, sequence exhausted): exit 1.
    Runtime(String),
    /// Writing the output failed: exit 1, or 0 when the reader closed the pipe.
    Io(io::Error),
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Failure {
        Failure::Io(e)
    }
}

impl From<snowflake_core::Error> for Failure {
    fn from(e: snowflake_core::Error) -> Failure {
        use snowflake_core::ErrorKind;
        // A CLI built from a checkout leaves the stores out (cli/Cargo.toml): say how to get them.
        if let snowflake_core::Error::MissingFeature { .. } = e {
            return Failure::Input(format!(
                "{e}: this snowflake was built without the lease stores; build it with `cargo build --release -p snowflake-cli --features full`, or install the packaged CLI (docs/cli.md)"
            ));
        }
        match e.kind() {
            ErrorKind::Layout
            | ErrorKind::Value
            | ErrorKind::Type
            | ErrorKind::InvalidId
            | ErrorKind::TimeRange
            | ErrorKind::SharedMismatch => Failure::Input(e.to_string()),
            // The clock, the sequence, a fork, a lease, a file: not the caller's input.
            _ => Failure::Runtime(e.to_string()),
        }
    }
}

fn error_line(message: &str) {
    // Ignore a failing stderr: there is nowhere left to report it.
    let _ = writeln!(io::stderr().lock(), "snowflake: error: {message}");
}

const SUBCOMMANDS: [&str; 13] = [
    "next",
    "decode",
    "layouts",
    "bounds",
    "bench",
    "redis-script",
    "plan",
    "sql",
    "public",
    "shared",
    "config",
    "uuid",
    "serve",
];

/// Clap's usage errors, folded into the one-line form of every other error.
fn usage_error(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("invalid arguments");
    let mut message = first.strip_prefix("error: ").unwrap_or(first).to_string();
    // What follows the first line: the missing arguments, possible values, a tip; then the
    // usage and a pointer to --help, which the pointer below replaces.
    let details: Vec<&str> = lines
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .map(|l| l.trim_start_matches('[').trim_end_matches(']'))
        .collect();
    if !details.is_empty() {
        message.push_str(if message.ends_with(':') { " " } else { "; " });
        message.push_str(&details.join("; "));
    }
    let command = std::env::args().nth(1).filter(|c| SUBCOMMANDS.contains(&c.as_str()));
    match command {
        Some(c) => message.push_str(&format!(" (see `snowflake {c} --help`)")),
        None => message.push_str(" (see `snowflake --help`)"),
    }
    message
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            return match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                    let _ = e.print();
                    ExitCode::SUCCESS
                }
                ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                    let _ = e.print();
                    ExitCode::from(2)
                }
                _ => {
                    error_line(&usage_error(&e));
                    ExitCode::from(2)
                }
            };
        }
    };
    let result = match cli.command {
        Command::Next(args) => commands::next(&args),
        Command::Decode(args) => commands::decode(&args),
        Command::Layouts(args) => commands::layouts(&args),
        Command::Bounds(args) => commands::bounds(&args),
        Command::Bench(args) => commands::bench(&args),
        Command::RedisScript(args) => commands::redis_script(&args),
        Command::Plan(args) => commands::plan(&args),
        Command::Sql(args) => sql::run(&args),
        Command::Public(args) => public::run(&args),
        Command::Shared(args) => shared::run(&args),
        Command::Config(args) => commands::config(&args),
        Command::Uuid(args) => commands::uuid(&args),
        Command::Serve(args) => serve::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Input(message)) => {
            error_line(&message);
            ExitCode::from(2)
        }
        Err(Failure::Runtime(message)) => {
            error_line(&message);
            ExitCode::from(1)
        }
        // `snowflake next | head`: the reader has all it wanted; that is a success.
        Err(Failure::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(Failure::Io(e)) => {
            error_line(&format!("writing the output: {e}"));
            ExitCode::from(1)
        }
    }
}
