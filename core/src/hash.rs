//! The two hashes whose outputs are part of the format and must never change between
//! versions: SplitMix64 (the `spread:K` sequence start) and FNV-1a 64 (layout fingerprints).

/// SplitMix64's output function (Steele, Lea and Flood, 2014) applied to `x`.
///
/// `sequence_start=spread:K` starts tick `t` at `splitmix64(t) % K`, where `t` is the tick
/// number counted from the layout's epoch.
///
/// ```
/// assert_eq!(snowflake_core::hash::splitmix64(0), 0xe220a8397b1dcdaf);
/// ```
pub const fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// FNV-1a, 64 bits, fed through `core::fmt::Write` so that a `Display` can be hashed without
/// an allocation.
pub(crate) struct Fnv1a(pub u64);

impl Fnv1a {
    pub const fn new() -> Fnv1a {
        Fnv1a(0xcbf2_9ce4_8422_2325)
    }
}

impl core::fmt::Write for Fnv1a {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        for b in s.bytes() {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        Ok(())
    }
}
