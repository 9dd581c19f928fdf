//! The subcommands. Each one parses its input with core first, so that bad input fails
//! before anything reaches stdout, then writes through one locked, buffered stdout.

use crate::output::{self, grouped};
use crate::{
    diagram, BenchArgs, BoundsArgs, ConfigArgs, DecodeArgs, Failure, GeneratorArgs, LayoutsArgs, NextArgs,
    PlanArgs, RedisScriptArgs, UuidArgs,
};
use snowflake_core::{
    decode_str, encode, format_uuid, parse_uuid, time, Clock, Config, Encoding, Environment, Error,
    Generator, GivenOptions, Layout, MonotonicClock, Options, Source, SystemClock, Value, PRESETS,
};
use std::io::{self, BufRead, BufWriter, IsTerminal, Write};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// IDs asked of the generator at once: large enough that a call per tick is all it costs,
/// small enough (128 KiB) that output starts at once.
const CHUNK: usize = 1 << 14;

fn stdout() -> BufWriter<io::StdoutLock<'static>> {
    BufWriter::with_capacity(1 << 16, io::stdout().lock())
}

/// What `next --format` writes.
#[derive(Clone, Copy)]
enum Format {
    Encoded(Encoding),
    Json,
}

fn parse_format(name: &str) -> Result<Format, Failure> {
    if name == "json" {
        return Ok(Format::Json);
    }
    match name.parse::<Encoding>() {
        Ok(e) => Ok(Format::Encoded(e)),
        Err(_) => Err(Failure::Input(format!(
            "`{name}`: unknown format (decimal, hex, base32, base36, base58, base62, json)"
        ))),
    }
}

/// Capacity of one node, in IDs per second.
fn capacity_per_second(layout: &Layout) -> u64 {
    let per_second = u128::from(layout.capacity_per_tick()) * 1000 / u128::from(layout.tick_ms());
    u64::try_from(per_second).unwrap_or(u64::MAX)
}

/// The layout a command issues IDs with (or code that issues them): parsed, with core's
/// warning on stderr when it has under `LIFETIME_WARNING_YEARS` left.
pub fn layout_in_use(spec: &str) -> Result<Layout, Failure> {
    let layout = Layout::parse(spec)?;
    if let Some(warning) = layout.lifetime_warning(SystemClock.now_ms()) {
        eprintln!("snowflake: {warning}");
    }
    Ok(layout)
}

/// The layout of a command that only reads IDs: `--layout`, else `SNOWFLAKE_LAYOUT`, else
/// twitter.
pub fn layout_or_env(given: Option<&str>) -> Result<Layout, Failure> {
    let given = given.map(Layout::parse).transpose()?;
    Ok(Environment::read()?.layout(given)?.0)
}

/// The configuration of `next` and `config`: the flags, then the environment, then the
/// defaults (core's `Environment`, as every binding resolves it).
pub(crate) fn resolve_config(args: &GeneratorArgs) -> Result<Config, Failure> {
    let env = Environment::read()?;
    let given_layout = args.layout.as_deref().map(Layout::parse).transpose()?;
    let (layout, layout_source) = env.layout(given_layout)?;
    if let Some(warning) = layout.lifetime_warning(SystemClock.now_ms()) {
        eprintln!("snowflake: {warning}");
    }
    let node = args.node.as_deref().map(|text| layout.parse_node(text)).transpose()?;
    Ok(env.config(layout, layout_source, node, parse_options(args)?)?)
}

pub fn next(args: &NextArgs) -> Result<(), Failure> {
    let format = parse_format(&args.format)?;
    let config = resolve_config(&args.config)?;
    // A hint for a person at a terminal (scripts that read stderr see nothing new).
    if !config.options.isolated && std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        if let Some(note) = snowflake_core::container_note(&config.layout, &config.node) {
            eprintln!("snowflake: note: {note}");
        }
    }
    let layout = config.layout;
    let generator = config.open()?;
    let count = args.count;

    // The generator runs on its own thread, a chunk ahead of the formatting: on a layout
    // whose capacity is the limit it spends most of its time waiting for the next tick,
    // and the formatting of the previous chunk fits in those waits.
    let (full_tx, full_rx) = mpsc::sync_channel::<Result<Vec<u64>, Error>>(2);
    let (empty_tx, empty_rx) = mpsc::channel::<Vec<u64>>();
    // The generator moves into the producer thread, and is dropped there when it has issued
    // its last ID.
    std::thread::scope(|scope| {
        let producer = scope.spawn(move || {
            let mut left = count;
            while left > 0 {
                let mut ids = empty_rx.try_recv().unwrap_or_default();
                ids.resize(left.min(CHUNK as u64) as usize, 0);
                // When the generator fails partway (max_wait_ms=0 and a full tick, say), the
                // IDs it wrote are printed before the error.
                let (done, failure) = match generator.fill(&mut ids) {
                    Ok(()) => (ids.len(), None),
                    Err(e) => (e.written, Some(e.error)),
                };
                ids.truncate(done);
                if done > 0 {
                    left -= done as u64;
                    // A closed channel: the output side has stopped (a closed pipe, an error).
                    if full_tx.send(Ok(ids)).is_err() {
                        break;
                    }
                }
                if let Some(e) = failure {
                    let _ = full_tx.send(Err(e));
                    break;
                }
            }
        });
        let result = write_ids(full_rx, &empty_tx, &layout, format);
        let _ = producer.join();
        result
    })
}

fn write_ids(
    chunks: mpsc::Receiver<Result<Vec<u64>, Error>>,
    recycle: &mpsc::Sender<Vec<u64>>,
    layout: &Layout,
    format: Format,
) -> Result<(), Failure> {
    let mut out = stdout();
    let mut json = output::JsonWriter::new(layout);
    for chunk in chunks {
        // The input was checked when the generator opened: what stops it now is the clock
        // (behind, a full tick, outside the layout's time range), a lease or a file, exit 1.
        let ids = chunk.map_err(|e| Failure::Runtime(e.to_string()))?;
        match format {
            Format::Encoded(Encoding::Decimal) => {
                for &id in &ids {
                    // std's integer formatting: two digits per step, no division by a
                    // runtime base.
                    writeln!(out, "{id}")?;
                }
            }
            Format::Encoded(e) => {
                for &id in &ids {
                    out.write_all(encode(id, e, false).as_bytes())?;
                    out.write_all(b"\n")?;
                }
            }
            Format::Json => {
                for &id in &ids {
                    json.write(&mut out, &layout.decode(id)?)?;
                    out.write_all(b"\n")?;
                }
            }
        }
        let _ = recycle.send(ids);
    }
    out.flush()?;
    Ok(())
}

/// The generator options of `next`: the flags and `--options`, each key once, checked by
/// core (a value may hold `;` when given as a flag). A path that is not UTF-8 (Linux allows
/// it) goes to core as a path. Runs of `next` with the same layout and node values share the
/// host's state (core's default), with each other and with every other program of this user
/// on the host.
fn parse_options(args: &GeneratorArgs) -> Result<GivenOptions, Failure> {
    use crate::options::FlagValue;
    let flags = args.flags.0.iter().map(|(k, v)| match v {
        FlagValue::Text(t) => Ok((*k, Value::Text(t.as_str()))),
        FlagValue::Path(p) => Ok((*k, p.to_str().map_or(Value::Path(std::path::Path::new(p)), Value::Text))),
    });
    let text = Options::text_pairs(args.options.as_deref().unwrap_or(""))
        .map(|pair| pair.map(|(k, v)| (k, Value::Text(v))));
    let mut given = GivenOptions::new();
    for pair in flags.chain(text) {
        let (key, value) = pair?;
        if given.is_given(key) {
            return Err(Error::BadOption {
                name: snowflake_core::Name::snippet(key),
                reason: "the option is given twice",
            }
            .into());
        }
        match value {
            Value::Text(text) => given.set_text(key, text)?,
            value => given.set(key, value)?,
        }
    }
    Ok(given)
}

/// `snowflake config`: what `next` would use, and where each value comes from.
pub fn config(args: &ConfigArgs) -> Result<(), Failure> {
    let config = resolve_config(&args.config)?;
    let layout = config.layout;
    let node: Vec<String> = layout.node_values(&config.node).map(|(n, v)| format!("{n}={v}")).collect();
    let node = node.join(",");
    // Each option's value as the options text writes it (the defaults of the first three too).
    let options_text = config.options.to_string();
    let value_of = |name: &str| {
        Options::text_pairs(&options_text)
            .filter_map(|p| p.ok())
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
    };
    let p = config.provenance;
    let mut out = stdout();
    if args.json {
        let mut line = format!(
            "{{\"layout\":{{\"value\":{},\"source\":\"{}\"}},\"node\":{{\"value\":{},\"source\":\"{}\"}},\"options\":{{",
            output::json_string(&layout.to_string()),
            p.layout,
            output::json_string(&node),
            p.node
        );
        for (i, spec) in snowflake_core::OPTIONS.iter().enumerate() {
            let value = value_of(spec.name).map_or("null".to_string(), |v| output::json_string(&v));
            line.push_str(&format!(
                "{}\"{}\":{{\"value\":{value},\"source\":\"{}\"}}",
                if i == 0 { "" } else { "," },
                spec.name,
                p.options[i]
            ));
        }
        line.push_str("}}");
        writeln!(out, "{line}")?;
    } else {
        writeln!(out, "{:<20} {:<60} {}", "layout", layout, p.layout)?;
        writeln!(out, "{:<20} {:<60} {}", "node", if node.is_empty() { "(none)" } else { &node }, p.node)?;
        for (i, spec) in snowflake_core::OPTIONS.iter().enumerate() {
            // Unset options from nowhere are left out; a value from a flag or the environment
            // is always shown.
            if let Some(value) =
                value_of(spec.name).or_else(|| (p.options[i] != Source::Default).then(String::new))
            {
                writeln!(out, "{:<20} {:<60} {}", spec.name, value, p.options[i])?;
            }
        }
    }
    out.flush()?;
    Ok(())
}

/// `snowflake uuid`: IDs to UUIDs and back; every value is checked before the first line.
pub fn uuid(args: &UuidArgs) -> Result<(), Failure> {
    let layout = layout_or_env(args.layout.as_deref())?;
    let mut lines = Vec::new();
    let mut convert = |text: &str| -> Result<(), Failure> {
        let text = text.trim();
        if text.contains('-') {
            let id = layout.from_uuid(parse_uuid(text)?)?;
            lines.push(id.to_string());
        } else {
            let id = decode_str(text, Encoding::Decimal, false)
                .map_err(|e| Failure::Input(format!("`{}`: {}", quoted(text), Error::from(e))))?;
            lines.push(format_uuid(layout.to_uuid(id)?).to_string());
        }
        Ok(())
    };
    if args.values.is_empty() {
        for line in io::stdin().lock().lines() {
            let line = line?;
            if !line.trim().is_empty() {
                convert(&line)?;
            }
        }
    } else {
        for v in &args.values {
            convert(v)?;
        }
    }
    let mut out = stdout();
    for line in lines {
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    Ok(())
}

/// Cuts untrusted input short for an error message.
fn quoted(text: &str) -> String {
    let mut s: String = text.chars().take(40).collect();
    if s.len() < text.len() {
        s.push('…');
    }
    s
}

pub fn decode(args: &DecodeArgs) -> Result<(), Failure> {
    let layout = layout_or_env(args.layout.as_deref())?;
    let encoding: Encoding = args.from.parse()?;

    // Every ID is parsed and checked against the layout before the first line is written.
    let mut ids = Vec::new();
    let mut check = |text: &str, place: String| -> Result<(), Failure> {
        let parsed = decode_str(text, encoding, false)
            .map_err(Error::from)
            .and_then(|id| layout.decode(id).map(|_| id));
        match parsed {
            Ok(id) => {
                ids.push(id);
                Ok(())
            }
            Err(e) => Err(Failure::Input(format!("{e} ({place}`{}`)", quoted(text)))),
        }
    };
    if args.ids.is_empty() {
        let stdin = io::stdin();
        if stdin.is_terminal() {
            return Err(Failure::Input(
                "no ID to decode: give IDs as arguments, or one a line on standard input".into(),
            ));
        }
        for (i, line) in stdin.lock().lines().enumerate() {
            let line = line.map_err(|e| Failure::Input(format!("reading standard input: {e}")))?;
            let text = line.trim();
            if !text.is_empty() {
                check(text, format!("line {}: ", i + 1))?;
            }
        }
    } else {
        for text in &args.ids {
            check(text.trim(), String::new())?;
        }
    }

    let mut out = stdout();
    let mut json = output::JsonWriter::new(&layout);
    for (i, &id) in ids.iter().enumerate() {
        let parts = layout.decode(id)?;
        if args.json {
            json.write(&mut out, &parts)?;
            out.write_all(b"\n")?;
        } else if args.explain {
            if i > 0 {
                out.write_all(b"\n")?;
            }
            writeln!(out, "ID {id}")?;
            writeln!(out, "  layout {layout}")?;
            writeln!(out)?;
            out.write_all(diagram::draw(&layout, Some(id), "  ").as_bytes())?;
            writeln!(out)?;
            out.write_all(diagram::field_table(&layout, id, "  ").as_bytes())?;
        } else {
            output::write_plain(&mut out, &layout, &parts)?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    Ok(())
}

pub fn layouts(args: &LayoutsArgs) -> Result<(), Failure> {
    let chosen: Vec<(String, Layout)> = if args.layouts.is_empty() {
        PRESETS
            .iter()
            .map(|(name, spec)| Ok((name.to_string(), Layout::parse(spec)?)))
            .collect::<Result<_, Error>>()?
    } else {
        args.layouts
            .iter()
            .map(|spec| {
                let layout = Layout::parse(spec)?;
                let name = PRESETS.iter().find(|(n, _)| n == spec).map_or("custom", |(n, _)| n);
                Ok((name.to_string(), layout))
            })
            .collect::<Result<_, Error>>()?
    };
    let mut out = stdout();
    for (i, (name, layout)) in chosen.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        let tick = if layout.tick_ms() % 1000 == 0 {
            format!("{} s", layout.tick_ms() / 1000)
        } else {
            format!("{} ms", layout.tick_ms())
        };
        writeln!(out, "{name}  {layout}")?;
        writeln!(
            out,
            "  capacity  {} IDs/s per node ({} per {tick} tick)",
            grouped(capacity_per_second(layout)),
            grouped(layout.capacity_per_tick()),
        )?;
        writeln!(out, "  epoch     {}", output::time(layout.epoch_ms()))?;
        let now = SystemClock.now_ms();
        let left = if layout.last_unix_ms() < now {
            "  (past: no new IDs; decode only)".to_string()
        } else {
            format!("  ({:.1} years left)", layout.years_left(now))
        };
        writeln!(out, "  last      {}{left}", output::time(layout.last_unix_ms()))?;
        // A layout named on the command line is one the user means to use.
        if !args.layouts.is_empty() {
            if let Some(warning) = layout.lifetime_warning(now) {
                eprintln!("snowflake: {warning}");
            }
        }
        writeln!(out)?;
        out.write_all(diagram::draw(layout, None, "  ").as_bytes())?;
    }
    out.flush()?;
    Ok(())
}

/// An instant given as Unix milliseconds or RFC 3339 UTC.
fn parse_time(text: &str) -> Result<u64, Failure> {
    let text = text.trim();
    let unix_ms = if !text.is_empty() && text.bytes().all(|c| c.is_ascii_digit()) {
        text.parse().ok()
    } else {
        time::parse_rfc3339(text)
    };
    unix_ms.ok_or_else(|| {
        Failure::Input(format!(
            "time `{}` is neither Unix milliseconds nor an RFC 3339 UTC timestamp like 2024-01-01T00:00:00Z",
            quoted(text)
        ))
    })
}

pub fn bounds(args: &BoundsArgs) -> Result<(), Failure> {
    let layout = layout_or_env(args.layout.as_deref())?;
    let from = parse_time(&args.time)?;
    let until = match &args.until {
        Some(text) => parse_time(text)?,
        None => from,
    };
    if until < from {
        return Err(Failure::Input(format!(
            "the range ends ({}) before it starts ({})",
            output::time(until),
            output::time(from)
        )));
    }
    let (min, max) = (layout.min_id(from)?, layout.max_id(until)?);
    let (first_ms, last_ms) =
        (layout.decode(min)?.unix_ms, layout.decode(max)?.unix_ms + layout.tick_ms() - 1);
    let mut out = stdout();
    writeln!(out, "min {min}  {}", output::time(first_ms))?;
    writeln!(out, "max {max}  {}", output::time(last_ms))?;
    out.flush()?;
    Ok(())
}

pub fn bench(args: &BenchArgs) -> Result<(), Failure> {
    let layout = layout_in_use(&args.layout)?;
    if !(args.seconds.is_finite() && args.seconds > 0.0 && args.seconds <= 3600.0) {
        return Err(Failure::Input(format!("--seconds {} is not between 0 and 3600", args.seconds)));
    }
    let duration = Duration::from_secs_f64(args.seconds);
    // Isolated: the bench must not move the state that other generators of this process
    // share (there are none here, but the figures should not depend on it either).
    let options = Options { isolated: true, ..Options::DEFAULT };
    let capacity = capacity_per_second(&layout) as f64;

    let mut out = stdout();
    writeln!(out, "layout    {layout}")?;
    writeln!(out, "capacity  {} IDs/s per node", grouped(capacity as u64))?;
    out.flush()?;

    let generator = Generator::new(&layout, layout.node(&[])?, options.clone())?;
    let start = start_of_next_tick(&layout)?;
    let (mut issued, mut last) = (0u64, 0u64);
    while start.elapsed() < duration {
        for _ in 0..1024 {
            last = std::hint::black_box(generator.next_id()?);
        }
        issued += 1024;
    }
    report(&mut out, "next_id", issued, until_end_of_tick(&layout, last, start), capacity)?;

    let generator = Generator::new(&layout, layout.node(&[])?, options)?;
    let mut buf = vec![0u64; CHUNK];
    let start = start_of_next_tick(&layout)?;
    let mut issued = 0u64;
    while start.elapsed() < duration {
        generator.fill(&mut buf).map_err(Error::from)?;
        std::hint::black_box(&buf);
        issued += buf.len() as u64;
    }
    let took = until_end_of_tick(&layout, buf[CHUNK - 1], start);
    report(&mut out, "next_ids", issued, took, capacity)?;
    out.flush()?;
    Ok(())
}

/// Measurements span whole ticks: they start when a tick starts and end when the tick of the
/// last ID ends. Otherwise a run that issues a whole tick early and stops before the tick is
/// over would report more than the layout's capacity.
fn start_of_next_tick(layout: &Layout) -> Result<Instant, Failure> {
    let clock = MonotonicClock::process();
    let tick = layout.tick_of(clock.now_ms())?;
    clock.wait_until_ms(layout.unix_ms_of(tick + 1));
    Ok(Instant::now())
}

fn until_end_of_tick(layout: &Layout, last_id: u64, start: Instant) -> Duration {
    MonotonicClock::process().wait_until_ms(layout.unix_ms_of(layout.time().get(last_id) + 1));
    start.elapsed()
}

fn report(out: &mut impl Write, what: &str, issued: u64, took: Duration, capacity: f64) -> io::Result<()> {
    let per_second = issued as f64 / took.as_secs_f64();
    writeln!(
        out,
        "{what:<9} {:>13} IDs/s  {:>6.2}% of capacity  {:>7.1} ns/ID",
        grouped(per_second as u64),
        100.0 * per_second / capacity,
        1e9 / per_second,
    )
}

/// `snowflake redis-script`: the layout's Lua script for Redis.
pub fn redis_script(args: &RedisScriptArgs) -> Result<(), Failure> {
    let layout = layout_in_use(&args.layout)?;
    let mut out = std::io::stdout().lock();
    out.write_all(snowflake_core::redis_script(&layout).as_bytes())?;
    out.flush()?;
    Ok(())
}

pub fn plan(args: &PlanArgs) -> Result<(), Failure> {
    use snowflake_core::plan::{plan, propose, Advice, Fleet};
    if args.hosts == 0 || args.peak_per_second == 0 || args.years == 0 {
        return Err(Failure::Input("--hosts, --peak-per-second and --years must be at least 1".into()));
    }
    let fleet = Fleet {
        hosts: args.hosts,
        processes_per_host: args.processes_per_host.max(1),
        peak_per_second: args.peak_per_second,
        years: args.years,
    };
    let now = SystemClock.now_ms();
    let chosen: Vec<(String, Layout)> = match &args.layout {
        Some(spec) => {
            let name = PRESETS.iter().find(|(n, _)| n == spec).map_or("custom", |(n, _)| n);
            vec![(name.to_string(), Layout::parse(spec)?)]
        }
        None => PRESETS
            .iter()
            .map(|(n, spec)| Ok((n.to_string(), Layout::parse(spec)?)))
            .collect::<Result<_, Error>>()?,
    };
    let mut out = stdout();
    let processes = fleet.hosts.saturating_mul(fleet.processes_per_host);
    if !args.json {
        writeln!(
            out,
            "fleet: {} hosts x {} processes ({} processes), peak {} IDs/s a host, {} years from {}",
            grouped(fleet.hosts),
            grouped(fleet.processes_per_host),
            grouped(processes),
            grouped(fleet.peak_per_second),
            fleet.years,
            &output::time(now)[..10],
        )?;
    }
    let mut any_fits = false;
    for (name, layout) in &chosen {
        let p = plan(layout, &fleet, now);
        any_fits |= p.advice != Advice::DoesNotFit;
        if args.json {
            let mut v = String::new();
            p.write_json(&mut v).map_err(|_| Failure::Runtime("formatting the plan".into()))?;
            // Names and specs are ASCII without quotes or backslashes (the layout grammar).
            let v = format!("{{\"layout\":\"{name}\",\"spec\":\"{layout}\",{}", &v[1..]);
            writeln!(out, "{v}")?;
            continue;
        }
        let yes = |b: bool| if b { "fits" } else { "does NOT fit" };
        let lasts = if p.lasts { "lasts" } else { "does NOT last" };
        writeln!(out, "\n{name}  {layout}")?;
        writeln!(
            out,
            "  hosts      {} node values: one per host {}; one per process ({}) {}",
            grouped(p.node_values),
            yes(p.hosts_fit),
            grouped(processes),
            yes(p.processes_fit)
        )?;
        writeln!(
            out,
            "  capacity   {} IDs/s a host ({} a tick of a node value): the peak is {:.1}% of it{}",
            grouped(p.host_capacity_per_second),
            grouped(p.burst_per_tick),
            p.peak_share * 100.0,
            if p.peak_share > 1.0 { " (bursts wait for the next tick at the default policies)" } else { "" }
        )?;
        writeln!(
            out,
            "  lifetime   until {} ({:.1} years left): {lasts} the {} years asked",
            &output::time(p.last_unix_ms)[..10],
            p.years_left,
            fleet.years,
        )?;
        let why = match p.advice {
            Advice::Shared => "one host: every process shares one state (the default)",
            Advice::LeasePerProcess => {
                "each process leases a node value of its own (lease=local or lease=redis://...)"
            }
            Advice::LeasePerHost => {
                "each host leases a node value, shared by its processes (lease with a shared state)"
            }
            Advice::DoesNotFit => "choose another layout",
        };
        writeln!(out, "  advice     {}: {why}", p.advice.as_str())?;
    }
    if !any_fits && !args.json {
        match propose(&fleet, now) {
            Some(spec) => writeln!(
                out,
                "\nnothing above fits; this layout does (63 bits or fewer, epoch {}):\n  {spec}",
                &output::time(Layout::parse(&spec)?.epoch_ms())[..10]
            )?,
            None => writeln!(out, "\nno layout of 63 bits fits: fewer hosts, a lower peak or fewer years")?,
        }
    }
    out.flush()?;
    Ok(())
}
