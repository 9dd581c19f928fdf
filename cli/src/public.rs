//! `snowflake public encode|decode`: public IDs (core's `PublicIds`), with the key read from a
//! file, never from the command line (which other users of the host can read in `ps`).

use crate::Failure;
use clap::{Args, Subcommand};
use snowflake_core::{Encoding, PublicIds};
use std::io::{self, BufRead, BufWriter, IsTerminal, Write};

/// Encrypt IDs into public IDs that hide their time and order, or decrypt them back.
///
/// Speck64/128 under a 128-bit key, written fixed-width (base62, 11 characters, by default).
/// The key file holds the key's 16 bytes, or 32 hex digits. This is not authentication: any
/// well-formed text decodes to some ID.
#[derive(Args, Debug)]
#[command(after_help = "\
Examples:
  snowflake public encode --key-file public.key 1541815603606036480
  snowflake public decode --key-file public.key 7n3ZkqW0aBc
  snowflake next -n 3 | snowflake public encode --key-file public.key
  (umask 077; head -c 16 /dev/urandom > public.key)     a new random key")]
pub struct PublicArgs {
    #[command(subcommand)]
    pub command: PublicCommand,
}

/// What `snowflake public` does.
#[derive(Subcommand, Debug)]
pub enum PublicCommand {
    /// Print the public ID of each ID (decimal), one a line.
    Encode(PublicIo),
    /// Print the ID (decimal) of each public ID, one a line.
    Decode(PublicIo),
}

/// The arguments of `public encode` and `public decode`.
#[derive(Args, Debug)]
pub struct PublicIo {
    /// The file holding the key: 16 bytes, or 32 hex digits.
    #[arg(long, value_name = "FILE")]
    pub key_file: String,
    /// The public IDs' encoding: base62 (11 characters), base58, base36, base32 or hex.
    #[arg(long, default_value = "base62", value_name = "ENCODING")]
    pub encoding: String,
    /// IDs (encode) or public IDs (decode); none: read standard input, one a line.
    #[arg(value_name = "VALUE")]
    pub values: Vec<String>,
}

/// The key in `path`: 32 hex digits (and whitespace around them), or else the raw bytes, which
/// core checks are 16.
fn read_key(path: &str) -> Result<Vec<u8>, Failure> {
    let bytes =
        std::fs::read(path).map_err(|e| Failure::Input(format!("reading the key file `{path}`: {e}")))?;
    if let Ok(text) = std::str::from_utf8(&bytes) {
        let t = text.trim();
        if t.len() == 32 && t.bytes().all(|c| c.is_ascii_hexdigit()) {
            return Ok((0..16).map(|i| u8::from_str_radix(&t[2 * i..2 * i + 2], 16).unwrap_or(0)).collect());
        }
    }
    Ok(bytes)
}

/// The arguments, or the non-empty lines of standard input.
fn inputs(values: &[String]) -> Result<Vec<(String, String)>, Failure> {
    if !values.is_empty() {
        return Ok(values.iter().map(|v| (v.trim().to_string(), String::new())).collect());
    }
    let stdin = io::stdin();
    if stdin.is_terminal() {
        return Err(Failure::Input(
            "nothing to do: give values as arguments, or one a line on standard input".into(),
        ));
    }
    let mut out = Vec::new();
    for (i, line) in stdin.lock().lines().enumerate() {
        let line = line.map_err(|e| Failure::Input(format!("reading standard input: {e}")))?;
        if !line.trim().is_empty() {
            out.push((line.trim().to_string(), format!("line {}: ", i + 1)));
        }
    }
    Ok(out)
}

/// `snowflake public encode|decode`. Every value is checked before the first line is written.
pub fn run(args: &PublicArgs) -> Result<(), Failure> {
    let (io_args, encode) = match &args.command {
        PublicCommand::Encode(a) => (a, true),
        PublicCommand::Decode(a) => (a, false),
    };
    let encoding: Encoding = io_args.encoding.parse()?;
    let key = read_key(&io_args.key_file)?;
    let ids = PublicIds::from_key_bytes(&key, encoding).map_err(|e| {
        Failure::Input(format!(
            "{e} (the key file `{}` must hold 16 bytes, or 32 hex digits)",
            io_args.key_file
        ))
    })?;
    let mut lines = Vec::new();
    for (text, place) in inputs(&io_args.values)? {
        let line = if encode {
            snowflake_core::decode_str(&text, Encoding::Decimal, false)
                .map(|id| ids.encode(id).to_string())
                .map_err(snowflake_core::Error::from)
        } else {
            ids.decode(&text).map(|id| id.to_string())
        };
        lines.push(line.map_err(|e| Failure::Input(format!("{e} ({place}`{}`)", text.escape_debug())))?);
    }
    let mut out = BufWriter::new(io::stdout().lock());
    for line in lines {
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    Ok(())
}
