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
        // SAFETY: every `Name` is made by `Name::new` (the bytes of a whole `&str`), by
        // `Name::snippet` (a `&str` cut at a character boundary, through `new`) or is `EMPTY`,
        // and its bytes never change after: `bytes[..len]` is UTF-8. Unchecked, as layouts
        // look their fields up by name each time a generator is made.
        unsafe { core::str::from_utf8_unchecked(&self.bytes[..self.len as usize]) }
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

/// How a front end spells names made of lowercase words joined by `_` (option names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Spelling {
    /// `max_drift_ms`: the text form, C, Python, PHP.
    Snake,
    /// `maxDriftMs`: Node.
    Camel,
    /// `--max-drift-ms`: the CLI's flags.
    Flag,
}

impl Spelling {
    /// `snake_name` as this spelling writes it.
    ///
    /// ```
    /// use snowflake_core::Spelling;
    /// assert_eq!(Spelling::Camel.spell("max_drift_ms").as_str(), "maxDriftMs");
    /// assert_eq!(Spelling::Flag.spell("max_drift_ms").as_str(), "--max-drift-ms");
    /// ```
    pub fn spell(self, snake_name: &str) -> Name {
        let mut out = [0u8; MAX_NAME_LEN];
        let mut n = 0;
        let mut push = |b: u8| {
            if n < out.len() {
                out[n] = b;
                n += 1;
            }
        };
        if self == Spelling::Flag {
            push(b'-');
            push(b'-');
        }
        let mut upper = false;
        for &b in snake_name.as_bytes() {
            match (b, self) {
                (b'_', Spelling::Snake) => push(b'_'),
                (b'_', Spelling::Flag) => push(b'-'),
                (b'_', Spelling::Camel) => upper = true,
                (b, _) if upper => {
                    push(b.to_ascii_uppercase());
                    upper = false;
                }
                (b, _) => push(b),
            }
        }
        Name::snippet(core::str::from_utf8(&out[..n]).unwrap_or(""))
    }
}

/// Writes formatted text into a [`Name`], cut to fit.
pub(crate) fn format_name(args: fmt::Arguments<'_>) -> Name {
    struct Buf {
        bytes: [u8; MAX_NAME_LEN],
        len: usize,
    }
    impl fmt::Write for Buf {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            for c in s.chars() {
                let mut tmp = [0u8; 4];
                let e = c.encode_utf8(&mut tmp);
                if self.len + e.len() > MAX_NAME_LEN {
                    return Err(fmt::Error);
                }
                self.bytes[self.len..self.len + e.len()].copy_from_slice(e.as_bytes());
                self.len += e.len();
            }
            Ok(())
        }
    }
    let mut buf = Buf { bytes: [0; MAX_NAME_LEN], len: 0 };
    let _ = fmt::write(&mut buf, args);
    Name::snippet(core::str::from_utf8(&buf.bytes[..buf.len]).unwrap_or(""))
}

/// `v` in decimal, written at the end of `buf`: the digits, without the formatting machinery
/// (for text that is hashed, such as a layout's fingerprint).
pub(crate) fn decimal(mut v: u64, buf: &mut [u8; 20]) -> &str {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    core::str::from_utf8(&buf[i..]).unwrap_or("")
}

/// `v` as 16 lowercase hexadecimal digits, zero-padded (as `{v:016x}` writes it).
pub(crate) fn hex16(v: u64, buf: &mut [u8; 16]) -> &str {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (i, b) in buf.iter_mut().enumerate() {
        *b = DIGITS[((v >> (60 - 4 * i)) & 0xf) as usize];
    }
    core::str::from_utf8(buf).unwrap_or("")
}

/// The edit distance (insertions, deletions, substitutions, and swaps of two neighbours)
/// between `a` and `b`, ASCII case ignored; `usize::MAX` when either is longer than 64 bytes.
/// Typos are near: `wroker` is 1 from `worker`, `SNOWFLAKE_NOD` 1 from `SNOWFLAKE_NODE`.
///
/// ```
/// use snowflake_core::text_distance;
/// assert_eq!(text_distance("wroker", "worker"), 1);
/// assert_eq!(text_distance("snowflake_node", "SNOWFLAKE_NODE"), 0);
/// assert_eq!(text_distance("SNOWFLAKE_NOD", "SNOWFLAKE_NODE"), 1);
/// assert_eq!(text_distance("SNOWFLAKE_USER", "SNOWFLAKE_NODE"), 4);
/// ```
pub fn text_distance(a: &str, b: &str) -> usize {
    const MAX: usize = 64;
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() > MAX || b.len() > MAX {
        return usize::MAX;
    }
    // Three rows of the Damerau-Levenshtein table (optimal string alignment), on the stack:
    // row `i` at `(i % 3) * W`, so that moving to the next row moves no memory.
    const W: usize = MAX + 1;
    let mut t = [0usize; 3 * W];
    for (j, cell) in t.iter_mut().enumerate().take(b.len() + 1) {
        *cell = j;
    }
    for i in 1..=a.len() {
        let (cur, prev, prev2) = ((i % 3) * W, ((i - 1) % 3) * W, ((i + 1) % 3) * W);
        t[cur] = i;
        for j in 1..=b.len() {
            let same = a[i - 1].eq_ignore_ascii_case(&b[j - 1]);
            let mut d = (t[prev + j] + 1).min(t[cur + j - 1] + 1).min(t[prev + j - 1] + usize::from(!same));
            if i > 1
                && j > 1
                && a[i - 1].eq_ignore_ascii_case(&b[j - 2])
                && a[i - 2].eq_ignore_ascii_case(&b[j - 1])
            {
                d = d.min(t[prev2 + j - 2] + 1);
            }
            t[cur + j] = d;
        }
    }
    t[(a.len() % 3) * W + b.len()]
}

#[cfg(test)]
mod number_tests {
    #[test]
    fn decimal_and_hex16_write_what_the_formatter_writes() {
        for v in [0, 1, 9, 10, 41, 1000, 1288834974657, u64::MAX - 1, u64::MAX] {
            assert_eq!(super::decimal(v, &mut [0; 20]), alloc_free(v, false));
            assert_eq!(super::hex16(v, &mut [0; 16]), alloc_free(v, true));
        }
    }

    /// `{v}` or `{v:016x}`, written into a fixed buffer (the crate may be `no_std`).
    fn alloc_free(v: u64, hex: bool) -> heapless_str::Buf {
        let mut b = heapless_str::Buf::default();
        let _ = if hex {
            core::fmt::write(&mut b, format_args!("{v:016x}"))
        } else {
            core::fmt::write(&mut b, format_args!("{v}"))
        };
        b
    }

    mod heapless_str {
        #[derive(Default)]
        pub struct Buf {
            bytes: [u8; 32],
            len: usize,
        }
        impl core::fmt::Write for Buf {
            fn write_str(&mut self, s: &str) -> core::fmt::Result {
                self.bytes[self.len..self.len + s.len()].copy_from_slice(s.as_bytes());
                self.len += s.len();
                Ok(())
            }
        }
        impl PartialEq<Buf> for &str {
            fn eq(&self, other: &Buf) -> bool {
                self.as_bytes() == &other.bytes[..other.len]
            }
        }
        impl core::fmt::Debug for Buf {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(core::str::from_utf8(&self.bytes[..self.len]).unwrap_or("?"))
            }
        }
    }
}

#[cfg(all(test, feature = "std"))]
mod distance_tests {
    use proptest::prelude::*;

    /// The optimal string alignment distance from its whole table: what `text_distance`, with
    /// three rows in rotation, must give.
    fn full_table(a: &[u8], b: &[u8]) -> usize {
        let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for (i, row) in d.iter_mut().enumerate() {
            row[0] = i;
        }
        for (j, cell) in d[0].iter_mut().enumerate() {
            *cell = j;
        }
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                let cost = usize::from(!a[i - 1].eq_ignore_ascii_case(&b[j - 1]));
                d[i][j] = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
                if i > 1
                    && j > 1
                    && a[i - 1].eq_ignore_ascii_case(&b[j - 2])
                    && a[i - 2].eq_ignore_ascii_case(&b[j - 1])
                {
                    d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
                }
            }
        }
        d[a.len()][b.len()]
    }

    proptest! {
        #[test]
        fn three_rows_give_the_whole_tables_distance(a in "[A-Za-z_]{0,30}", b in "[A-Za-z_]{0,30}") {
            prop_assert_eq!(super::text_distance(&a, &b), full_table(a.as_bytes(), b.as_bytes()));
        }

        #[test]
        fn typos_of_our_names_too(name in "SNOWFLAKE_(NODE|LAYOUT|OPTIONS)", edits in proptest::collection::vec((0usize..24, "[A-Z_]"), 0..3)) {
            let mut typo = name.clone().into_bytes();
            for (at, c) in &edits {
                let at = at % (typo.len() + 1);
                typo.insert(at, c.as_bytes()[0]);
            }
            let typo = String::from_utf8(typo).unwrap();
            prop_assert_eq!(super::text_distance(&typo, &name), full_table(typo.as_bytes(), name.as_bytes()));
        }
    }
}
