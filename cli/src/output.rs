//! Text forms of what the commands print: decoded IDs (plain and JSON), times, numbers.
//!
//! JSON is written by hand: field names are lowercase identifiers (core checks them), times
//! are ASCII and everything else is a number, so nothing but a configuration's text
//! ([`json_string`]) needs escaping, and no JSON crate has to be built for the CLI.

use snowflake_core::time::{format_rfc3339, RFC3339_LEN};
use snowflake_core::{FieldKind, Layout, Parts};
use std::io::{self, Write};

/// Writes `unix_ms` as RFC 3339 (`2016-04-30T11:18:25.796Z`); past the year 9999, which
/// RFC 3339 cannot write (only `mastodon`'s 48-bit time reaches it), `+` and the Unix ms.
pub fn time(unix_ms: u64) -> String {
    let mut buf = [0u8; RFC3339_LEN];
    match format_rfc3339(unix_ms, &mut buf) {
        Some(s) => s.to_string(),
        None => format!("after 9999-12-31 ({unix_ms} Unix ms)"),
    }
}

/// `text` as a JSON string, quoted and escaped (a configuration's paths and names may hold
/// anything).
pub fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `4096000` as `4,096,000`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Writes decoded IDs as JSON objects on one line (no newline), e.g.
/// `{"id":"175928847299117063","unix_ms":1462015105796,"time":"2016-04-30T11:18:25.796Z","sequence":7,"fields":{"worker":1,"process":0}}`.
/// The ID is a string so that JavaScript reads it without rounding; a time past 9999 is `null`.
/// Consecutive IDs mostly share a tick, so the time text is kept from one to the next.
pub struct JsonWriter<'a> {
    layout: &'a Layout,
    unix_ms: Option<u64>,
    time: String,
}

impl<'a> JsonWriter<'a> {
    pub fn new(layout: &'a Layout) -> Self {
        JsonWriter { layout, unix_ms: None, time: String::new() }
    }

    pub fn write(&mut self, out: &mut impl Write, parts: &Parts) -> io::Result<()> {
        if self.unix_ms != Some(parts.unix_ms) {
            let mut buf = [0u8; RFC3339_LEN];
            self.time = match format_rfc3339(parts.unix_ms, &mut buf) {
                Some(s) => format!("\"{s}\""),
                None => "null".to_string(),
            };
            self.unix_ms = Some(parts.unix_ms);
        }
        write!(
            out,
            "{{\"id\":\"{}\",\"unix_ms\":{},\"time\":{},\"sequence\":{},\"fields\":{{",
            parts.id, parts.unix_ms, self.time, parts.sequence
        )?;
        for (i, (name, value)) in self.layout.node_values(&parts.node).enumerate() {
            let comma = if i == 0 { "" } else { "," };
            write!(out, "{comma}\"{name}\":{value}")?;
        }
        out.write_all(b"}}")
    }
}

/// One decoded ID as a line of text (no newline), fields in the layout's order:
/// `175928847299117063  2016-04-30T11:18:25.796Z  worker=1 process=0 sequence=7`.
pub fn write_plain(out: &mut impl Write, layout: &Layout, parts: &Parts) -> io::Result<()> {
    write!(out, "{}  {}  ", parts.id, time(parts.unix_ms))?;
    let mut sep = "";
    for (i, field) in layout.fields().iter().enumerate() {
        let value = match field.kind() {
            FieldKind::Time => continue,
            FieldKind::Sequence => parts.sequence,
            FieldKind::Node => parts.node.get(i),
        };
        write!(out, "{sep}{}={value}", field.name())?;
        sep = " ";
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(4_096_000), "4,096,000");
        assert_eq!(grouped(u64::MAX), "18,446,744,073,709,551,615");
    }
}
