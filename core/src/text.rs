//! `Name`: a short piece of text stored inline, so that layouts, node values and errors
//! stay `Copy` and work without an allocator.

use core::fmt;

/// The longest field name (and the longest piece of text an error quotes), in bytes.
pub const MAX_NAME_LEN: usize = 32;

/// A field name, or a snippet of bad input quoted by an error; at most [`MAX_NAME_LEN`] bytes.
///
/// ```
/// use snowflake_core::Name;
/// let n = Name::new("worker").unwrap();
/// assert_eq!(n.as_str(), "worker");
/// assert!(Name::new("x".repeat(40).as_str()).is_none());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Name {
    len: u8,
    bytes: [u8; MAX_NAME_LEN],
}

impl Name {
    /// The text `s`, or `None` when it is longer than [`MAX_NAME_LEN`] bytes.
    pub fn new(s: &str) -> Option<Name> {
        if s.len() > MAX_NAME_LEN {
            return None;
        }
        let mut bytes = [0u8; MAX_NAME_LEN];
        bytes[..s.len()].copy_from_slice(s.as_bytes());
        Some(Name { len: s.len() as u8, bytes })
    }

    /// The text `s` cut (at a character boundary) to fit, for quoting bad input in errors.
    pub fn snippet(s: &str) -> Name {
        let mut end = s.len().min(MAX_NAME_LEN);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        Name::new(&s[..end]).unwrap_or(Name::EMPTY)
    }

    /// The empty name.
    pub const EMPTY: Name = Name { len: 0, bytes: [0; MAX_NAME_LEN] };

    /// The text.
    pub fn as_str(&self) -> &str {
        // Built only from whole `&str`s cut at character boundaries.
        core::str::from_utf8(&self.bytes[..self.len as usize]).unwrap_or("")
    }

    /// Whether `s` is a valid field name: a lowercase letter, then lowercase letters, digits
    /// or `_`, at most [`MAX_NAME_LEN`] bytes.
    pub fn is_valid_field_name(s: &str) -> bool {
        let b = s.as_bytes();
        !b.is_empty()
            && b.len() <= MAX_NAME_LEN
            && b[0].is_ascii_lowercase()
            && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_')
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}
