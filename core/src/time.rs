//! RFC 3339 UTC timestamps to and from Unix milliseconds, without an allocator.

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
const fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

const fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719468;
    let era = if z >= 0 { z } else { z - 146096 } / 146097;
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn digits(b: &[u8]) -> Option<u64> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0u64, |n, c| n * 10 + u64::from(c - b'0')))
}

/// Parses an RFC 3339 timestamp in UTC (`Z` or `+00:00`), with up to millisecond precision
/// (further digits must be zeros), into Unix milliseconds. Instants before 1970 are `None`.
///
/// ```
/// use snowflake_core::time::parse_rfc3339;
/// assert_eq!(parse_rfc3339("2010-11-04T01:42:54.657Z"), Some(1288834974657));
/// assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
/// assert_eq!(parse_rfc3339("2010-11-04 01:42:54"), None);
/// ```
pub fn parse_rfc3339(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let year = digits(&b[0..4])? as i64;
    let month = digits(&b[5..7])? as u32;
    let day = digits(&b[8..10])? as u32;
    let hour = digits(&b[11..13])?;
    let minute = digits(&b[14..16])?;
    let second = digits(&b[17..19])?;
    let mut rest = &b[19..];
    let mut millis = 0u64;
    if rest.first() == Some(&b'.') {
        let n = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 || n > 9 {
            return None;
        }
        let frac = &rest[1..1 + n];
        for (i, c) in frac.iter().enumerate() {
            let d = u64::from(c - b'0');
            if i < 3 {
                millis += d * [100, 10, 1][i];
            } else if d != 0 {
                return None; // finer than a millisecond
            }
        }
        rest = &rest[1 + n..];
    }
    if !(rest == b"Z" || rest == b"z" || rest == b"+00:00" || rest == b"-00:00") {
        return None;
    }
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let month_days = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if !(1..=12).contains(&month) || day == 0 || day > month_days[month as usize - 1] {
        return None;
    }
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    if days < 0 {
        return None;
    }
    let secs = days as u64 * 86400 + hour * 3600 + minute * 60 + second;
    Some(secs * 1000 + millis)
}

/// The length of [`format_rfc3339`]'s output for years up to 9999.
pub const RFC3339_LEN: usize = 24;

/// Writes `unix_ms` as `YYYY-MM-DDTHH:MM:SS.mmmZ` into `buf` and returns it, or `None` past
/// the year 9999.
///
/// ```
/// let mut buf = [0u8; snowflake_core::time::RFC3339_LEN];
/// assert_eq!(snowflake_core::time::format_rfc3339(1462015105796, &mut buf), Some("2016-04-30T11:18:25.796Z"));
/// ```
pub fn format_rfc3339(unix_ms: u64, buf: &mut [u8; RFC3339_LEN]) -> Option<&str> {
    let secs = unix_ms / 1000;
    let (y, m, d) = civil_from_days((secs / 86400) as i64);
    if y > 9999 {
        return None;
    }
    let sod = secs % 86400;
    let fields: [(usize, u64, usize); 7] = [
        (0, y as u64, 4),
        (5, u64::from(m), 2),
        (8, u64::from(d), 2),
        (11, sod / 3600, 2),
        (14, sod / 60 % 60, 2),
        (17, sod % 60, 2),
        (20, unix_ms % 1000, 3),
    ];
    *buf = *b"0000-00-00T00:00:00.000Z";
    for (at, mut v, width) in fields {
        for i in (0..width).rev() {
            buf[at + i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
    }
    core::str::from_utf8(buf).ok()
}
