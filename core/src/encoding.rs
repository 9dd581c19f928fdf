//! String forms of IDs: decimal, and fixed-width, zero-padded encodings whose lexicographic
//! order is the numeric order (so they sort correctly as text keys). `reverse` encodes
//! `u64::MAX - id`, so that the newest ID sorts first. Parsing is strict: wrong length,
//! a character outside the alphabet, or a value above `u64::MAX` is an error, never a wrap.
//! Nothing here allocates.

use crate::error::ParseIdError;
use core::fmt;
use core::str::FromStr;

/// An ID encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// Decimal digits, no padding (1 to 20 characters): the JSON-safe form for JavaScript.
    Decimal,
    /// 16 lowercase hex digits (upper case accepted when parsing).
    Hex,
    /// 13 characters of Crockford's base32 (`0-9A-Z` less `I L O U`); parsing accepts lower
    /// case and reads `I`/`L` as 1 and `O` as 0.
    Base32,
    /// 13 characters `0-9a-z` (upper case accepted when parsing).
    Base36,
    /// 11 characters of the Bitcoin alphabet.
    Base58,
    /// 11 characters `0-9A-Za-z`.
    Base62,
}

const HEX: &[u8; 16] = b"0123456789abcdef";
const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const BASE36: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
const BASE58: &[u8; 58] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Marks a byte outside an alphabet in the tables below.
const NONE: u8 = 0xff;

/// A byte -> digit table for `alphabet`; with `fold`, lower case reads as upper case (or the
/// reverse, for alphabets written in lower case).
const fn values(alphabet: &[u8], fold: bool) -> [u8; 256] {
    let mut t = [NONE; 256];
    let mut i = 0;
    while i < alphabet.len() {
        let c = alphabet[i];
        t[c as usize] = i as u8;
        if fold {
            t[c.to_ascii_lowercase() as usize] = i as u8;
            t[c.to_ascii_uppercase() as usize] = i as u8;
        }
        i += 1;
    }
    t
}

/// Crockford's base32 also reads I and L as 1 and O as 0, in either case.
const fn crockford_values() -> [u8; 256] {
    let mut t = values(CROCKFORD, true);
    t[b'I' as usize] = 1;
    t[b'i' as usize] = 1;
    t[b'L' as usize] = 1;
    t[b'l' as usize] = 1;
    t[b'O' as usize] = 0;
    t[b'o' as usize] = 0;
    t
}

static DECIMAL_VALUES: [u8; 256] = values(b"0123456789", false);
static HEX_VALUES: [u8; 256] = values(HEX, true);
static BASE32_VALUES: [u8; 256] = crockford_values();
static BASE36_VALUES: [u8; 256] = values(BASE36, true);
static BASE58_VALUES: [u8; 256] = values(BASE58, false);
static BASE62_VALUES: [u8; 256] = values(BASE62, false);

/// The longest encoded ID (a 20-digit decimal).
pub const MAX_ENCODED_LEN: usize = 20;

impl Encoding {
    /// All encodings.
    pub const ALL: [Encoding; 6] = [
        Encoding::Decimal,
        Encoding::Hex,
        Encoding::Base32,
        Encoding::Base36,
        Encoding::Base58,
        Encoding::Base62,
    ];

    /// The encoding's name: `decimal`, `hex`, `base32`, `base36`, `base58`, `base62`.
    pub const fn name(self) -> &'static str {
        match self {
            Encoding::Decimal => "decimal",
            Encoding::Hex => "hex",
            Encoding::Base32 => "base32",
            Encoding::Base36 => "base36",
            Encoding::Base58 => "base58",
            Encoding::Base62 => "base62",
        }
    }

    /// The encoding called `name`.
    pub fn from_name(name: &str) -> Option<Encoding> {
        Encoding::ALL.into_iter().find(|e| e.name() == name)
    }

    /// The fixed width of the encoding; `None` for decimal.
    pub const fn width(self) -> Option<usize> {
        match self {
            Encoding::Decimal => None,
            Encoding::Hex => Some(16),
            Encoding::Base32 | Encoding::Base36 => Some(13),
            Encoding::Base58 | Encoding::Base62 => Some(11),
        }
    }
}

impl FromStr for Encoding {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<Encoding, crate::Error> {
        Encoding::from_name(s).ok_or(crate::Error::BadOption {
            name: crate::Name::snippet(s),
            reason: "unknown encoding (decimal, hex, base32, base36, base58, base62)",
        })
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An encoded ID: a short string held inline. Derefs to `&str`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Encoded {
    buf: [u8; MAX_ENCODED_LEN],
    start: u8,
}

impl Encoded {
    /// The text.
    pub fn as_str(&self) -> &str {
        // Only ASCII from the alphabets is ever written.
        core::str::from_utf8(&self.buf[self.start as usize..]).unwrap_or("")
    }
}

impl core::ops::Deref for Encoded {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Display for Encoded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Encoded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// Encodes `id` (`u64::MAX - id` when `reverse`).
///
/// ```
/// use snowflake_core::{encode, Encoding};
/// assert_eq!(&*encode(175928847299117063, Encoding::Base62, false), "0Czks0tP37X");
/// assert_eq!(&*encode(255, Encoding::Hex, false), "00000000000000ff");
/// assert_eq!(&*encode(0, Encoding::Hex, true), "ffffffffffffffff");
/// ```
pub fn encode(id: u64, encoding: Encoding, reverse: bool) -> Encoded {
    let v = if reverse { u64::MAX - id } else { id };
    // One instance per base, so that the divisions are by constants (a multiply and a shift).
    let (buf, first) = match encoding {
        Encoding::Decimal => digits::<10>(v, b"0123456789"),
        Encoding::Hex => digits::<16>(v, HEX),
        Encoding::Base32 => digits::<32>(v, CROCKFORD),
        Encoding::Base36 => digits::<36>(v, BASE36),
        Encoding::Base58 => digits::<58>(v, BASE58),
        Encoding::Base62 => digits::<62>(v, BASE62),
    };
    let start = match encoding.width() {
        Some(w) => MAX_ENCODED_LEN - w,
        None => first.min(MAX_ENCODED_LEN - 1),
    };
    Encoded { buf, start: start as u8 }
}

/// The digits of `v` in base `B`, right-aligned and padded with the alphabet's zero; and the
/// index of the first significant digit.
#[inline]
fn digits<const B: u64>(mut v: u64, alphabet: &[u8]) -> ([u8; MAX_ENCODED_LEN], usize) {
    let mut buf = [alphabet[0]; MAX_ENCODED_LEN];
    let mut i = MAX_ENCODED_LEN;
    while v > 0 {
        i -= 1;
        buf[i] = alphabet[(v % B) as usize];
        v /= B;
    }
    (buf, i)
}

/// Parses an encoded ID, strictly (the inverse of [`encode`] with the same `reverse`).
///
/// ```
/// use snowflake_core::{decode_str, Encoding, ParseIdError};
/// assert_eq!(decode_str("0Czks0tP37X", Encoding::Base62, false), Ok(175928847299117063));
/// assert_ne!(decode_str("0czks0tp37x", Encoding::Base62, false), Ok(175928847299117063)); // base62 is case-sensitive
/// assert_eq!(decode_str("18446744073709551616", Encoding::Decimal, false), Err(ParseIdError::Overflow));
/// assert_eq!(decode_str("0o0i", Encoding::Base32, false), Err(ParseIdError::Length { expected: 13, got: 4 }));
/// ```
pub fn decode_str(s: &str, encoding: Encoding, reverse: bool) -> Result<u64, ParseIdError> {
    let b = s.as_bytes();
    if b.is_empty() {
        return Err(ParseIdError::Empty);
    }
    match encoding.width() {
        Some(w) if b.len() != w => return Err(ParseIdError::Length { expected: w as u8, got: b.len() }),
        None if b.len() > MAX_ENCODED_LEN => return Err(ParseIdError::Overflow),
        _ => {}
    }
    // One instance per base, as in `encode`: the digit table and the multiplier are constants
    // in each loop, also for callers whose encoding is only known at run time.
    let v = match encoding {
        Encoding::Decimal => parse_digits::<10>(b, &DECIMAL_VALUES),
        Encoding::Hex => parse_fixed::<16, 16>(b, &HEX_VALUES),
        Encoding::Base32 => parse_fixed::<32, 13>(b, &BASE32_VALUES),
        Encoding::Base36 => parse_fixed::<36, 13>(b, &BASE36_VALUES),
        Encoding::Base58 => parse_fixed::<58, 11>(b, &BASE58_VALUES),
        Encoding::Base62 => parse_fixed::<62, 11>(b, &BASE62_VALUES),
    }?;
    Ok(if reverse { u64::MAX - v } else { v })
}

/// The value of base-`B` digits read through `values`: the first character outside the
/// alphabet, or a value above `u64::MAX`, is an error.
#[inline]
fn parse_digits<const B: u64>(b: &[u8], values: &[u8; 256]) -> Result<u64, ParseIdError> {
    let mut v: u64 = 0;
    for (position, &c) in b.iter().enumerate() {
        let d = match values[c as usize] {
            NONE => return Err(ParseIdError::Char { position }),
            d => u64::from(d),
        };
        v = v.checked_mul(B).and_then(|v| v.checked_add(d)).ok_or(ParseIdError::Overflow)?;
    }
    Ok(v)
}

/// The value of the `N` base-`B` digits of a fixed-width encoding, as [`parse_digits`] (the
/// same errors, in the same order) but faster: the first `N - 1` digits cannot overflow (a
/// compile-time check), so they are read unchecked in two independent halves, which the
/// processor computes side by side, and only the last digit is checked; a character outside
/// the alphabet is looked for in one pass first, since it is reported before any overflow.
#[inline]
fn parse_fixed<const B: u64, const N: usize>(b: &[u8], values: &[u8; 256]) -> Result<u64, ParseIdError> {
    const { assert!(B <= 64 && N >= 3 && B.checked_pow(N as u32 - 1).is_some()) };
    let Ok(b) = <&[u8; N]>::try_from(b) else {
        return Err(ParseIdError::Length { expected: N as u8, got: b.len() });
    };
    let d: [u8; N] = core::array::from_fn(|i| values[b[i] as usize]);
    // Every digit is below 64 and NONE is 0xff: one OR of all of them shows whether any is NONE.
    if d.iter().fold(0, |any, &x| any | x) > 63 {
        let position = d.iter().position(|&x| x == NONE).unwrap_or(0);
        return Err(ParseIdError::Char { position });
    }
    let half = (N - 1) / 2;
    let read = |digits: &[u8]| digits.iter().fold(0u64, |v, &x| v * B + u64::from(x));
    let v = read(&d[..half]) * B.pow((N - 1 - half) as u32) + read(&d[half..N - 1]);
    v.checked_mul(B).and_then(|v| v.checked_add(u64::from(d[N - 1]))).ok_or(ParseIdError::Overflow)
}
