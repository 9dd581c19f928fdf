//! Errors: a core error written to the I/O buffer as JSON, with the `code` and JS class
//! (`name`) of its kind's row in core's table ([`snowflake_core::KINDS`]: the Node package's
//! `node_code` and `node_class`), core's message, and the detail fields the Node package sets
//! (`field`, `min`, `max`, `retryAfterMs`, ...). Numbers above 2^53 and IDs are decimal
//! strings, as there, so that an error always logs as JSON.

use crate::io::Writer;
use core::fmt::{self, Write};
use snowflake_core::{Error, ErrorKind, KindInfo, KINDS};

/// A JSON object being written.
struct Json {
    w: Writer,
}

/// Writes what it is given as the inside of a JSON string.
struct Escaped<'a>(&'a mut Writer);

impl Write for Escaped<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for c in s.chars() {
            match c {
                '"' => self.0.write_str("\\\"")?,
                '\\' => self.0.write_str("\\\\")?,
                c if (c as u32) < 0x20 => write!(self.0, "\\u{:04x}", c as u32)?,
                c => self.0.write_char(c)?,
            }
        }
        Ok(())
    }
}

impl Json {
    fn key(&mut self, name: &str) {
        let _ = write!(self.w, ",\"{name}\":");
    }
    fn str(&mut self, name: &str, value: impl fmt::Display) {
        self.key(name);
        let _ = self.w.write_char('"');
        let _ = write!(Escaped(&mut self.w), "{value}");
        let _ = self.w.write_char('"');
    }
    fn u64(&mut self, name: &str, value: u64) {
        if value < (1 << 53) {
            self.key(name);
            let _ = write!(self.w, "{value}");
        } else {
            self.str(name, value);
        }
    }
    fn i128(&mut self, name: &str, value: i128) {
        match u64::try_from(value) {
            Ok(v) => self.u64(name, v),
            Err(_) if value >= -((1 << 53) - 1) => {
                self.key(name);
                let _ = write!(self.w, "{value}");
            }
            Err(_) => self.str(name, value),
        }
    }
}

/// Core's detail fields ([`Error::details`]) as the object's members.
impl snowflake_core::Details for Json {
    fn str(&mut self, name: &str, value: &str) {
        Json::str(self, name, value);
    }
    fn u64(&mut self, name: &str, value: u64) {
        Json::u64(self, name, value);
    }
    fn i128(&mut self, name: &str, value: i128) {
        Json::i128(self, name, value);
    }
    /// An ID, as a decimal string (above 2^53 a number would lose its low bits).
    fn id(&mut self, name: &str, value: u64) {
        Json::str(self, name, value);
    }
}

/// Writes the error of `info`'s kind with `message` and the detail fields `detail` sets;
/// minus its length, which every export returns on failure.
fn write(info: &KindInfo, message: impl fmt::Display, detail: impl FnOnce(&mut Json)) -> i32 {
    let mut json = Json { w: Writer::default() };
    let _ = write!(json.w, "{{\"code\":\"{}\",\"name\":\"{}\"", info.node_code, info.node_class);
    json.str("message", message);
    detail(&mut json);
    let _ = json.w.write_char('}');
    -(json.w.len as i32)
}

/// A core error, as the I/O buffer's JSON; minus its length.
pub fn fail(e: &Error) -> i32 {
    write(e.kind().info(), e, |d| e.details(d))
}

/// `result` as an export's return value: `ok`'s on success, the written error on failure.
pub fn answer<T>(result: Result<T, Error>, ok: impl FnOnce(T) -> i32) -> i32 {
    match result {
        Ok(v) => ok(v),
        Err(e) => fail(&e),
    }
}

/// The error of the kind whose stable code (`ERR_SNOWFLAKE_INVALID_ID`, ...) is the I/O
/// buffer's first `code_len` bytes, with the message after them, up to `len`: for what the JS
/// layer finds itself (an argument of the wrong JS type, a negative bigint, an invalid Date),
/// so that its errors too take their code and class from core's table. An unknown code is
/// a bug of the JS layer, reported as such (`ERR_SNOWFLAKE_PANIC`).
#[no_mangle]
pub extern "C" fn sf_error(code_len: i32, len: i32) -> i32 {
    let (code, code_len) = crate::io::copy::<64>(0, code_len.max(0) as usize);
    let (message, message_len) =
        crate::io::copy::<1024>(code_len, (len.max(0) as usize).saturating_sub(code_len));
    let code = core::str::from_utf8(&code[..code_len]).unwrap_or("");
    let message = core::str::from_utf8(&message[..message_len]).unwrap_or("");
    match KINDS.iter().find(|k| k.code == code) {
        Some(info) => write(info, message, |_| {}),
        None => {
            write(ErrorKind::Panic.info(), format_args!("the JS layer named no error kind: {code}"), |_| {})
        }
    }
}
