//! The buffers values cross in: the I/O buffer (text and small records, both ways) and the
//! out area (64-bit words). The module is single-threaded (wasm32 without threads), and each
//! export reads its input from the I/O buffer before it writes its answer there.

use core::cell::UnsafeCell;
use core::fmt;

/// The I/O buffer's size: a layout spec, a key, an error message with the names it lists.
pub const IO_LEN: usize = 16 * 1024;
/// Words in the out area: the decoded parts (as `f64`) from word 0, the node fields' exact
/// `u64` values from word [`OUT_EXACT`].
pub const OUT_WORDS: usize = 64;
/// Where the exact node field values of a decode start in the out area.
pub const OUT_EXACT: usize = 32;

#[repr(C, align(8))]
struct Buffers {
    io: UnsafeCell<[u8; IO_LEN]>,
    out: UnsafeCell<[u64; OUT_WORDS]>,
}

// SAFETY: wasm32-unknown-unknown runs one thread; on other targets (clippy, host builds) the
// buffers are only ever touched by the JS layer's calls, which do not run there.
unsafe impl Sync for Buffers {}

static BUFFERS: Buffers = Buffers { io: UnsafeCell::new([0; IO_LEN]), out: UnsafeCell::new([0; OUT_WORDS]) };

/// The address of the I/O buffer, for the JS layer.
#[no_mangle]
pub extern "C" fn sf_io() -> *mut u8 {
    BUFFERS.io.get().cast()
}

/// The size of the I/O buffer.
#[no_mangle]
pub extern "C" fn sf_io_len() -> i32 {
    IO_LEN as i32
}

/// The address of the out area (`OUT_WORDS` 64-bit words).
#[no_mangle]
pub extern "C" fn sf_out() -> *mut u64 {
    BUFFERS.out.get().cast()
}

fn io() -> &'static mut [u8; IO_LEN] {
    // SAFETY: one thread, and no export holds two of these borrows across a write.
    unsafe { &mut *BUFFERS.io.get() }
}

/// The first `len` bytes of the I/O buffer (clamped to its size).
pub fn bytes(len: i32) -> &'static [u8] {
    &io()[..(len.max(0) as usize).min(IO_LEN)]
}

/// Copies `bytes` of the I/O buffer out, so that the answer can be written over them.
pub fn copy<const N: usize>(from: usize, len: usize) -> ([u8; N], usize) {
    let mut out = [0u8; N];
    let len = len.min(N).min(IO_LEN.saturating_sub(from));
    out[..len].copy_from_slice(&io()[from..from + len]);
    (out, len)
}

/// Writes `s` to the I/O buffer; its length.
pub fn put_str(s: &str) -> i32 {
    let mut w = Writer::default();
    let _ = fmt::Write::write_str(&mut w, s);
    w.len as i32
}

/// Sets word `i` of the out area.
pub fn out_u64(i: usize, v: u64) {
    // SAFETY: one thread; `i` is below OUT_WORDS (an index panics otherwise).
    unsafe { (*BUFFERS.out.get())[i] = v }
}

/// Sets word `i` of the out area to a double.
pub fn out_f64(i: usize, v: f64) {
    out_u64(i, v.to_bits());
}

/// Writes text to the I/O buffer from its start, dropping what does not fit.
#[derive(Default)]
pub struct Writer {
    /// Bytes written.
    pub len: usize,
}

impl fmt::Write for Writer {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let buf = io();
        let n = s.len().min(IO_LEN - self.len);
        // Cut at a character boundary, so that the JS side always reads valid UTF-8.
        let n = (0..=n).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
        buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// A reader of the records the JS layer writes (node values, options, a sequence): each value
/// is a tag byte and its payload.
pub struct Record {
    pos: usize,
}

impl Record {
    /// A reader from byte `pos` of the I/O buffer.
    pub fn at(pos: usize) -> Record {
        Record { pos }
    }

    fn take(&mut self, n: usize) -> &'static [u8] {
        let start = self.pos.min(IO_LEN);
        let end = (start + n).min(IO_LEN);
        self.pos = end;
        &io()[start..end]
    }

    /// One byte.
    pub fn u8(&mut self) -> u8 {
        self.take(1).first().copied().unwrap_or(0)
    }

    fn u16(&mut self) -> usize {
        let b = self.take(2);
        if b.len() == 2 {
            usize::from(u16::from_le_bytes([b[0], b[1]]))
        } else {
            0
        }
    }

    fn word(&mut self) -> [u8; 8] {
        let mut w = [0u8; 8];
        let b = self.take(8);
        w[..b.len()].copy_from_slice(b);
        w
    }

    /// A string: a 16-bit length and UTF-8 bytes (the JS layer's TextEncoder writes valid
    /// UTF-8; anything else reads as empty).
    pub fn str(&mut self) -> &'static str {
        let n = self.u16();
        core::str::from_utf8(self.take(n)).unwrap_or("")
    }

    /// A value: 0 unset, 1 a number (f64), 2 a bigint (i128, low word first), 3 a boolean,
    /// 4 a string, 5 a value of another JS type (its name).
    pub fn value(&mut self) -> snowflake_core::Value<'static> {
        use snowflake_core::Value;
        match self.u8() {
            1 => Value::Float(f64::from_le_bytes(self.word())),
            2 => {
                let low = u64::from_le_bytes(self.word());
                let high = i64::from_le_bytes(self.word());
                Value::Int((i128::from(high) << 64) | i128::from(low))
            }
            3 => Value::Bool(self.u8() != 0),
            4 => Value::Text(self.str()),
            5 => Value::Other(self.str()),
            _ => Value::Unset,
        }
    }
}

/// The UTF-8 text of the I/O buffer's first `len` bytes (the JS layer writes valid UTF-8).
pub fn text(len: i32) -> &'static str {
    core::str::from_utf8(bytes(len)).unwrap_or("")
}

/// Zeroes the I/O buffer's first `len` bytes (after a key passed through it).
pub fn wipe(len: usize) {
    io()[..len.min(IO_LEN)].fill(0);
}
