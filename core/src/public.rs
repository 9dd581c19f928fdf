//! Public IDs: a keyed, reversible permutation of the 64-bit IDs, for IDs shown to the world.
//!
//! A Snowflake ID in a URL tells anyone when the record was made and, from two of them, how
//! many records a service makes in between. [`PublicIds`] encrypts the ID with
//! **Speck64/128** (the 64-bit-block, 128-bit-key member of the NSA's Speck family, 27
//! rounds; the implementation is RustCrypto's `speck-cipher` crate) and writes the 64-bit
//! ciphertext in a fixed-width encoding, base62 (11 characters) by default. With the key,
//! [`PublicIds::decode`] gives the ID back; without it, consecutive IDs give texts that share
//! no order, no prefix and no time.
//!
//! It is **not authentication**: every 11-character base62 text below 2^64 decodes to *some*
//! ID, so a forged or mistyped text is not detected here; look the decoded ID up (and check
//! that the caller may see it) as for any ID. It is a permutation of 64-bit values, so two
//! IDs never share a text, and it reveals nothing about the key; it is deterministic, so the
//! same ID always gives the same text under one key.
//!
//! The byte conventions are those of the Speck paper's test vectors (and of the crate): the
//! 16 key bytes are the key words `l2 l1 l0 k0` written big-endian, and the block is the ID's
//! 8 bytes big-endian (`x` = the high 32 bits, `y` = the low 32 bits). So the paper's
//! Speck64/128 vector holds here:
//!
//! ```
//! use snowflake_core::{Encoding, PublicIds};
//! let key = 0x1b1a1918_13121110_0b0a0908_03020100u128.to_be_bytes();
//! let ids = PublicIds::with_encoding(key, Encoding::Hex)?;
//! assert_eq!(&*ids.encode(0x3b726574_7475432d), "8c6fa548454e028b");
//! assert_eq!(ids.decode("8c6fa548454e028b")?, 0x3b726574_7475432d);
//! # Ok::<(), snowflake_core::Error>(())
//! ```

use crate::encoding::{decode_str, encode, Encoded, Encoding};
use crate::error::{Error, Result};
use crate::text::Name;
use speck_cipher::cipher::{Block, BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use speck_cipher::Speck64_128;

/// The length of a public-ID key in bytes (128 bits).
pub const PUBLIC_KEY_LEN: usize = 16;

/// Encrypts IDs into fixed-width public texts and back, under one 128-bit key.
///
/// ```
/// use snowflake_core::PublicIds;
/// let ids = PublicIds::new(*b"0123456789abcdef");
/// let text = ids.encode(175928847299117063);
/// assert_eq!(text.len(), 11);
/// assert_eq!(ids.decode(&text)?, 175928847299117063);
/// // A neighbouring ID gives an unrelated text.
/// assert_ne!(&text[..4], &ids.encode(175928847299117064)[..4]);
/// # Ok::<(), snowflake_core::Error>(())
/// ```
#[derive(Clone)]
pub struct PublicIds {
    cipher: Speck64_128,
    encoding: Encoding,
}

impl core::fmt::Debug for PublicIds {
    /// Never shows the key (nor its round keys).
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "PublicIds(Speck64/128, {})", self.encoding)
    }
}

impl PublicIds {
    /// Public IDs under `key`, written in base62 (11 characters).
    pub fn new(key: [u8; PUBLIC_KEY_LEN]) -> PublicIds {
        PublicIds { cipher: Speck64_128::new(&key.into()), encoding: Encoding::Base62 }
    }

    /// Public IDs under `key`, written in `encoding`, which must be one of the fixed-width
    /// encodings (hex, base32, base36, base58, base62): a decimal text's length would vary.
    ///
    /// ```
    /// use snowflake_core::{Encoding, ErrorKind, PublicIds};
    /// let ids = PublicIds::with_encoding([7; 16], Encoding::Base32)?;
    /// assert_eq!(ids.encode(1).len(), 13);
    /// assert_eq!(PublicIds::with_encoding([7; 16], Encoding::Decimal).unwrap_err().kind(), ErrorKind::Value);
    /// # Ok::<(), snowflake_core::Error>(())
    /// ```
    pub fn with_encoding(key: [u8; PUBLIC_KEY_LEN], encoding: Encoding) -> Result<PublicIds> {
        if encoding.width().is_none() {
            return Err(Error::BadOption {
                name: Name::snippet(encoding.name()),
                reason: "public IDs need a fixed-width encoding (hex, base32, base36, base58, base62)",
            });
        }
        Ok(PublicIds { encoding, ..PublicIds::new(key) })
    }

    /// Like [`PublicIds::with_encoding`] from a key of any length, which must be 16 bytes: for
    /// the bindings, whose keys arrive as byte strings. The error names the length, never the
    /// key's bytes.
    ///
    /// ```
    /// use snowflake_core::{Encoding, PublicIds};
    /// let err = PublicIds::from_key_bytes(b"too short", Encoding::Base62).unwrap_err();
    /// assert!(err.to_string().contains("9 bytes"), "{err}");
    /// ```
    pub fn from_key_bytes(key: &[u8], encoding: Encoding) -> Result<PublicIds> {
        let key: [u8; PUBLIC_KEY_LEN] = key.try_into().map_err(|_| Error::BadOption {
            name: key_length_name(key.len()),
            reason: "a public-ID key is exactly 16 bytes (128 bits)",
        })?;
        PublicIds::with_encoding(key, encoding)
    }

    /// The encoding of the texts.
    pub const fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The ciphertext of `id` (the permutation itself, before encoding).
    #[inline]
    pub fn encrypt(&self, id: u64) -> u64 {
        let mut block = Block::<Speck64_128>::from(id.to_be_bytes());
        self.cipher.encrypt_block(&mut block);
        u64::from_be_bytes(block.into())
    }

    /// The ID whose ciphertext is `value` (the inverse of [`PublicIds::encrypt`]).
    #[inline]
    pub fn decrypt(&self, value: u64) -> u64 {
        let mut block = Block::<Speck64_128>::from(value.to_be_bytes());
        self.cipher.decrypt_block(&mut block);
        u64::from_be_bytes(block.into())
    }

    /// The public text of `id`.
    #[inline]
    pub fn encode(&self, id: u64) -> Encoded {
        encode(self.encrypt(id), self.encoding, false)
    }

    /// The ID of a public text, strictly parsed (the length, the alphabet and the range of the
    /// encoding, as [`crate::decode_str`]): an error of kind `InvalidId` otherwise. Any valid
    /// text decodes to some ID: this is not authentication.
    #[inline]
    pub fn decode(&self, text: &str) -> Result<u64> {
        Ok(self.decrypt(decode_str(text, self.encoding, false)?))
    }
}

/// `key of N bytes`, for the error of a key of the wrong length (without an allocator).
fn key_length_name(len: usize) -> Name {
    struct Buf([u8; crate::MAX_NAME_LEN], usize);
    impl core::fmt::Write for Buf {
        fn write_str(&mut self, s: &str) -> core::fmt::Result {
            let n = s.len().min(self.0.len() - self.1);
            self.0[self.1..self.1 + n].copy_from_slice(&s.as_bytes()[..n]);
            self.1 += n;
            Ok(())
        }
    }
    let mut buf = Buf([0; crate::MAX_NAME_LEN], 0);
    let _ = core::fmt::write(&mut buf, format_args!("key of {len} bytes"));
    Name::snippet(core::str::from_utf8(&buf.0[..buf.1]).unwrap_or("key"))
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;

    #[test]
    fn the_speck_paper_vector() {
        // "The SIMON and SPECK Families of Lightweight Block Ciphers", Appendix C, Speck64/128.
        let key = 0x1b1a1918_13121110_0b0a0908_03020100u128.to_be_bytes();
        let ids = PublicIds::new(key);
        assert_eq!(ids.encrypt(0x3b726574_7475432d), 0x8c6fa548_454e028b);
        assert_eq!(ids.decrypt(0x8c6fa548_454e028b), 0x3b726574_7475432d);
    }

    #[test]
    fn round_trips_and_is_a_permutation_on_a_sample() {
        let ids = PublicIds::new(*b"sixteen byte key");
        let mut seen = std::collections::BTreeSet::new();
        for id in (0..5000u64).chain([u64::MAX, u64::MAX - 1, 1 << 63]) {
            let text = ids.encode(id);
            assert_eq!(text.len(), 11);
            assert_eq!(ids.decode(&text), Ok(id));
            assert!(seen.insert(text.to_string()), "two IDs gave one text");
        }
    }

    #[test]
    fn bad_texts_are_invalid_ids_and_bad_keys_values() {
        use crate::{ErrorKind, ParseIdError};
        let ids = PublicIds::new([0; 16]);
        assert_eq!(
            ids.decode("0Czks0tP37"),
            Err(Error::InvalidId(ParseIdError::Length { expected: 11, got: 10 }))
        );
        assert_eq!(ids.decode("0Czks0tP37-"), Err(Error::InvalidId(ParseIdError::Char { position: 10 })));
        assert_eq!(ids.decode("LygHa16AHYG"), Err(Error::InvalidId(ParseIdError::Overflow)));
        for len in [0usize, 15, 17, 32] {
            let err = PublicIds::from_key_bytes(&vec![b'Z'; len], Encoding::Base62).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Value);
            let msg = err.to_string();
            assert!(
                msg.contains(&format!("key of {len} bytes")) && msg.contains("exactly 16 bytes"),
                "{msg}"
            );
            assert!(!msg.contains("ZZ"), "the key's bytes never appear: {msg}");
        }
        assert!(format!("{:?}", PublicIds::new([0x5a; 16])).starts_with("PublicIds(Speck64/128"));
    }
}
