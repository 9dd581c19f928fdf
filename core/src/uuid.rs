//! The UUIDv7 view of an ID: a lossless, order-preserving map from a layout's IDs to RFC 9562
//! version 7 UUIDs whose timestamp is the ID's time, for databases and tools that want a
//! UUID column (PostgreSQL's `uuid_extract_timestamp`, every UUIDv7 library) while the
//! application keeps its 64-bit IDs.
//!
//! # The bit mapping
//!
//! For a layout of `T` time bits above `L` lower bits (node fields and sequence, in the
//! layout's order; `L = total_bits - T`, 1 to 63):
//!
//! ```text
//!  bits 127..80  unix_ts_ms   the start of the ID's tick, in Unix ms: epoch + tick * tick_ms
//!  bits  79..76  ver          0b0111 (7)
//!  bits  75..64  rand_a  ┐    the ID's L lower bits, from the most significant down, then
//!  bits  63..62  var     │    zeros: the 74 bits of rand_a and rand_b read as one number
//!  bits  61..0   rand_b  ┘    are `lower << (74 - L)`; var is 0b10 (RFC 9562)
//! ```
//!
//! - **Lossless.** The tick comes back from the timestamp (`(unix_ts_ms - epoch) / tick_ms`)
//!   and the lower bits from rand: `from_uuid(to_uuid(id)) == id` for every ID of the layout.
//! - **Order-preserving.** The timestamp grows with the tick, and within a tick rand holds the
//!   lower bits in order; so UUIDs compared as bytes (PostgreSQL's `uuid` order, Python's
//!   `UUID` order, the text compared as a string) sort exactly as their IDs. Only within one
//!   layout: another layout's IDs map to other UUIDs.
//! - **Strict the other way.** `from_uuid` refuses a UUID that no ID of the layout maps to:
//!   another version or variant, a time before the epoch, past the layout's end or not at a
//!   tick's start, or a bit set in rand below the `L` it holds. Any other UUIDv7 (random
//!   bits) is refused, never decoded into some ID.
//! - **The edges.** An ID's time is never before 1970 (an epoch is Unix ms, `>= 0`), so the
//!   timestamp never underflows. Layouts whose last instant is past 2^48 - 1 ms (the year
//!   10889), such as `time:50,...`, hold IDs no UUIDv7 can carry: `to_uuid` refuses those
//!   with [`Error::UuidTimeRange`] (no clock reaches them before that year).
//!
//! ```
//! use snowflake_core::{format_uuid, parse_uuid, Layout};
//! let twitter = Layout::parse("twitter")?;
//! let id = 1541815603606036480; // a tweet of 2022-06-28T16:07:40.105Z
//! let uuid = twitter.to_uuid(id)?;
//! assert_eq!(format_uuid(uuid).as_str(), "0181ab11-8149-75e8-8000-000000000000");
//! assert_eq!(uuid >> 80, 1656432460105);            // the timestamp every UUIDv7 tool reads
//! assert_eq!(twitter.from_uuid(parse_uuid("0181AB11-8149-75E8-8000-000000000000")?)?, id);
//! assert!(twitter.to_uuid(id + 1)? > uuid);
//! # Ok::<(), snowflake_core::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::layout::Layout;

/// The bits of rand_a and rand_b together.
const RAND_BITS: u32 = 74;
/// The last instant a UUIDv7's 48-bit timestamp holds, in Unix ms.
pub const UUID_MAX_UNIX_MS: u64 = (1 << 48) - 1;
/// The length of a UUID's text form (`8-4-4-4-12` hex digits).
pub const UUID_TEXT_LEN: usize = 36;

impl Layout {
    /// The UUIDv7 of `id` (see the module's bit mapping), as a 128-bit number: the UUID's 16
    /// bytes big-endian. [`format_uuid`] writes its text form.
    ///
    /// Errors: [`Error::IdRange`] for an ID with bits above the layout's width;
    /// [`Error::UuidTimeRange`] for an ID whose time is past 2^48 - 1 Unix ms.
    #[allow(clippy::wrong_self_convention)] // the public names every front end shares (a layout's view)
    pub fn to_uuid(&self, id: u64) -> Result<u128> {
        let parts = self.decode(id)?;
        if parts.unix_ms > UUID_MAX_UNIX_MS {
            return Err(Error::UuidTimeRange { unix_ms: parts.unix_ms });
        }
        let lower_bits = u32::from(self.time().shift());
        let lower = u128::from(id & ((1u64 << lower_bits) - 1));
        let rand = lower << (RAND_BITS - lower_bits);
        let rand_a = rand >> 62;
        let rand_b = rand & ((1 << 62) - 1);
        Ok((u128::from(parts.unix_ms) << 80) | (0x7 << 76) | (rand_a << 64) | (0b10 << 62) | rand_b)
    }

    /// The ID whose UUIDv7 is `uuid` ([`Layout::to_uuid`] undone); [`Error::InvalidUuid`]
    /// for a UUID that is not one of this layout's.
    #[allow(clippy::wrong_self_convention)] // the public names every front end shares (a layout's view)
    pub fn from_uuid(&self, uuid: u128) -> Result<u64> {
        if (uuid >> 76) & 0xF != 7 {
            return Err(Error::InvalidUuid {
                reason: "its version is not 7 (the digit after the second hyphen)",
            });
        }
        if (uuid >> 62) & 0b11 != 0b10 {
            return Err(Error::InvalidUuid {
                reason: "its variant is not RFC 9562's (the digit after the third hyphen is 8, 9, a or b)",
            });
        }
        let unix_ms = (uuid >> 80) as u64;
        let not_ours = Error::InvalidUuid {
            reason:
                "its time is not the start of one of the layout's ticks: not the UUID of an ID of this layout",
        };
        let tick = self.tick_of(unix_ms).map_err(|_| not_ours.clone())?;
        if self.unix_ms_of(tick) != unix_ms {
            return Err(not_ours);
        }
        let lower_bits = u32::from(self.time().shift());
        let rand = ((uuid >> 64) & 0xFFF) << 62 | (uuid & ((1 << 62) - 1));
        if rand & ((1 << (RAND_BITS - lower_bits)) - 1) != 0 {
            return Err(Error::InvalidUuid {
                reason:
                    "it has bits set that no ID of this layout sets (a random UUIDv7, or another layout's)",
            });
        }
        let lower = (rand >> (RAND_BITS - lower_bits)) as u64;
        Ok((tick << lower_bits) | lower)
    }
}

/// A UUID's text form: 36 lowercase characters, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct UuidText([u8; UUID_TEXT_LEN]);

impl UuidText {
    /// The text.
    pub fn as_str(&self) -> &str {
        // Only ASCII hex digits and hyphens are ever written.
        core::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl core::fmt::Display for UuidText {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl core::fmt::Debug for UuidText {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

/// The text form of `uuid` (lowercase, hyphenated), without allocating.
pub fn format_uuid(uuid: u128) -> UuidText {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = [b'-'; UUID_TEXT_LEN];
    let mut nibble = 0;
    for (i, slot) in out.iter_mut().enumerate() {
        if matches!(i, 8 | 13 | 18 | 23) {
            continue;
        }
        *slot = HEX[((uuid >> (124 - 4 * nibble)) & 0xF) as usize];
        nibble += 1;
    }
    UuidText(out)
}

/// The UUID written `text`: the hyphenated form of RFC 9562 (36 characters, hex digits in
/// either case). Anything else (no hyphens, braces, `urn:uuid:`, spaces) is
/// [`Error::InvalidUuid`].
pub fn parse_uuid(text: &str) -> Result<u128> {
    let bytes = text.as_bytes();
    if bytes.len() != UUID_TEXT_LEN {
        return Err(Error::InvalidUuid {
            reason: "a UUID is written as 36 characters: 8-4-4-4-12 hex digits separated by hyphens",
        });
    }
    let mut value = 0u128;
    for (i, &c) in bytes.iter().enumerate() {
        if matches!(i, 8 | 13 | 18 | 23) {
            if c != b'-' {
                return Err(Error::InvalidUuid {
                    reason: "a UUID has hyphens after its 8th, 12th, 16th and 20th hex digits",
                });
            }
            continue;
        }
        let digit = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return Err(Error::InvalidUuid { reason: "a UUID's characters are hex digits and hyphens" }),
        };
        value = (value << 4) | u128::from(digit);
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PRESETS;

    #[test]
    fn round_trip_and_order_at_every_presets_edges() {
        for (name, _) in PRESETS {
            let layout = Layout::parse(name).unwrap();
            let max = layout.max_value();
            let mut ids = [0, 1, 2, max / 3, max / 2, max - 1, max];
            ids.sort_unstable();
            let mut previous = None;
            for id in ids {
                let uuid = layout.to_uuid(id).unwrap();
                assert_eq!(layout.from_uuid(uuid), Ok(id), "{name} {id}");
                assert_eq!(parse_uuid(format_uuid(uuid).as_str()), Ok(uuid));
                assert_eq!((uuid >> 76) & 0xF, 7);
                assert_eq!((uuid >> 62) & 0b11, 0b10);
                assert_eq!((uuid >> 80) as u64, layout.decode(id).unwrap().unix_ms);
                if let Some(p) = previous {
                    assert!(uuid > p && format_uuid(uuid).as_str() > format_uuid(p).as_str());
                }
                previous = Some(uuid);
            }
        }
    }

    /// What docs/layouts.md says the view cannot tell apart: it records the time and the
    /// lower bits, not the layout.
    #[test]
    fn another_layouts_view_is_told_apart_only_by_its_shape() {
        let (twitter, discord) = (Layout::parse("twitter").unwrap(), Layout::parse("discord").unwrap());
        let (instagram, sonyflake) =
            (Layout::parse("instagram").unwrap(), Layout::parse("sonyflake").unwrap());
        let id = 175928847299117063; // Discord's documented example
        let view = discord.to_uuid(id).unwrap();
        // The same shape (22 lower bits, 1 ms ticks): read as an ID of the same instant whose
        // lower bits are twitter's fields.
        let read = twitter.from_uuid(view).unwrap();
        assert_eq!(twitter.decode(read).unwrap().unix_ms, discord.decode(id).unwrap().unix_ms);
        assert_eq!(read & ((1 << 22) - 1), id & ((1 << 22) - 1));
        // More lower bits (instagram's 23) take any view of fewer.
        assert!(instagram.from_uuid(twitter.to_uuid(read).unwrap()).is_ok());
        // Told apart: a time off the tick (sonyflake's 10 ms), bits below the view's width.
        let off_tick = discord
            .to_uuid(
                discord
                    .compose(1_700_000_000_003, &discord.parse_node("worker=1,process=1").unwrap(), 1)
                    .unwrap(),
            )
            .unwrap();
        assert!(sonyflake.from_uuid(off_tick).is_err());
        let low_bit = instagram
            .to_uuid(
                instagram.compose(1_700_000_000_000, &instagram.parse_node("shard=0").unwrap(), 1).unwrap(),
            )
            .unwrap();
        assert!(twitter.from_uuid(low_bit).is_err());
    }

    #[test]
    fn refuses_what_no_id_maps_to() {
        let twitter = Layout::parse("twitter").unwrap();
        let uuid = twitter.to_uuid(1541815603606036480).unwrap();
        assert!(twitter.from_uuid(uuid ^ (1 << 76)).is_err()); // version 6
        assert!(twitter.from_uuid(uuid ^ (1 << 63)).is_err()); // variant 0b00
        assert!(twitter.from_uuid(uuid | 1).is_err()); // a bit below the 22 lower bits
        let sonyflake = Layout::parse("sonyflake").unwrap();
        let uuid = sonyflake.to_uuid(12345 << 24).unwrap();
        assert!(sonyflake.from_uuid(uuid + (1 << 80)).is_err()); // 1 ms into a 10 ms tick
        assert!(twitter.from_uuid(0x0000_0000_0000_7000_8000_0000_0000_0000).is_err()); // 1970: before the epoch
        let wide = Layout::parse("time:50,sequence:14;epoch=0;tick=1ms").unwrap();
        assert!(matches!(wide.to_uuid(1 << 62), Err(Error::UuidTimeRange { .. })));
        assert_eq!(wide.from_uuid(wide.to_uuid(((1 << 48) - 1) << 14).unwrap()), Ok(((1 << 48) - 1) << 14));
        assert!(matches!(twitter.to_uuid(1 << 63), Err(Error::IdRange { .. })));
        for bad in [
            "",
            "0181ab4a-ae49-75e0-8000-00000000000",
            "0181ab4aae4975e08000000000000000",
            "0181ab4a-ae49-75e0-8000-00000000000g",
            "{181ab4a-ae49-75e0-8000-000000000000",
        ] {
            assert!(matches!(parse_uuid(bad), Err(Error::InvalidUuid { .. })), "{bad}");
        }
    }
}
