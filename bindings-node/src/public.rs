//! `PublicIds`: core's public IDs (Speck64/128 under a 128-bit key, fixed-width text).

use crate::convert::{arg, opt_arg, FromArg, Id, Str};
use crate::error::{type_error, OrThrow};
use napi::{sys, Env, JsUnknown};
use napi_derive::napi;
use snowflake_core::{Encoding, PublicIds};

/// A key: the bytes of a `Uint8Array` (a `Buffer` is one), copied.
pub struct Key(Vec<u8>);

impl FromArg for Key {
    fn from_arg(env: sys::napi_env, v: sys::napi_value, at: &str) -> napi::Result<Self> {
        let expected = "the key must be a Uint8Array (or Buffer) of 16 bytes";
        let mut is_typed = false;
        // SAFETY: valid env and value, handed to us by napi.
        napi::check_status!(unsafe { sys::napi_is_typedarray(env, v, &mut is_typed) })?;
        if !is_typed {
            return Err(type_error(env, at, expected, v));
        }
        let (mut kind, mut len, mut data) = (0, 0usize, std::ptr::null_mut());
        let (mut buffer, mut offset) = (std::ptr::null_mut(), 0usize);
        // SAFETY: `v` is a typed array; the out-pointers are valid.
        napi::check_status!(unsafe {
            sys::napi_get_typedarray_info(env, v, &mut kind, &mut len, &mut data, &mut buffer, &mut offset)
        })?;
        if kind != sys::TypedarrayType::uint8_array {
            return Err(type_error(env, at, expected, v));
        }
        let bytes = if len == 0 || data.is_null() {
            Vec::new()
        } else {
            // SAFETY: napi reports `len` bytes at `data` for a Uint8Array, alive during the call.
            unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) }.to_vec()
        };
        Ok(Key(bytes))
    }
}

/// Public IDs: each ID encrypted with Speck64/128 under a 16-byte key and written in a
/// fixed-width encoding (`'base62'`, 11 characters, by default; `'base58'`, `'base36'`,
/// `'base32'`, `'hex'`), so that IDs shown to the world reveal neither their time nor their
/// order; `decode` gives the ID back. Not authentication: any well-formed text decodes to some
/// ID. Throws `ERR_SNOWFLAKE_VALUE` for a key of another length, `ERR_SNOWFLAKE_INVALID_ID` for
/// a text of the wrong width or alphabet.
#[napi(js_name = "PublicIds")]
pub struct JsPublicIds {
    inner: PublicIds,
}

#[napi]
impl JsPublicIds {
    #[napi(constructor, ts_args_type = "key: Uint8Array, encoding?: Encoding")]
    pub fn new(env: Env, key: JsUnknown, encoding: Option<JsUnknown>) -> napi::Result<Self> {
        let key: Key = arg(&env, key, "new PublicIds(key)")?;
        let encoding: Option<Str> = opt_arg(&env, encoding, "new PublicIds(key, encoding)")?;
        let encoding = match encoding {
            Some(name) => name.0.parse::<Encoding>().or_throw(&env)?,
            None => Encoding::Base62,
        };
        let mut key = key;
        let inner = PublicIds::from_key_bytes(&key.0, encoding).or_throw(&env);
        key.0.fill(0);
        Ok(JsPublicIds { inner: inner? })
    }

    /// The public text of `id`.
    #[napi(ts_args_type = "id: bigint | string | number")]
    pub fn encode(&self, env: Env, id: JsUnknown) -> napi::Result<String> {
        let id: Id = arg(&env, id, "publicIds.encode(id)")?;
        Ok(self.inner.encode(id.0).to_string())
    }

    /// The ID of a public text.
    #[napi(ts_args_type = "text: string")]
    pub fn decode(&self, env: Env, text: JsUnknown) -> napi::Result<u64> {
        let text: Str = arg(&env, text, "publicIds.decode(text)")?;
        self.inner.decode(&text.0).or_throw(&env)
    }

    /// The texts' encoding.
    #[napi(getter, ts_return_type = "Encoding")]
    pub fn encoding(&self) -> &'static str {
        self.inner.encoding().name()
    }
}
