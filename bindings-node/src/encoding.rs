//! `encode` / `decodeStr`: core's fixed-width, sortable encodings.

use crate::convert::{arg, opt_arg, Bool, Id, Object, Str};
use crate::error::OrThrow;
use napi::{Env, JsUnknown};
use napi_derive::napi;
use snowflake_core::{Encoding, Error, Name};

/// The options of `encode` and `decodeStr`.
#[napi(object)]
#[allow(dead_code)] // Declares the TypeScript type; the functions read the object themselves.
pub struct EncodeOptions {
    /// Encode `2n ** 64n - 1n - id`, so that the newest ID sorts first.
    pub reverse: Option<bool>,
}

fn encoding(env: &Env, name: &str) -> napi::Result<Encoding> {
    name.parse::<Encoding>().or_throw(env)
}

fn reverse(env: &Env, options: Option<JsUnknown>, call: &str) -> napi::Result<bool> {
    let Some(options) = opt_arg::<Object>(env, options, &format!("{call}(options)"))? else {
        return Ok(false);
    };
    for key in options.keys()? {
        if key != "reverse" {
            let e = Error::BadOption { name: Name::snippet(&key), reason: "unknown option (reverse)" };
            return Err(Err::<(), _>(e).or_throw(env).unwrap_err());
        }
    }
    Ok(options.get_as::<Bool>("reverse", &format!("{call}(options.reverse)"))?.is_some_and(|b| b.0))
}

/// `id` as `'decimal'`, `'hex'` (16), `'base32'` (Crockford, 13), `'base36'` (13),
/// `'base58'` (11) or `'base62'` (11): fixed-width encodings sort like the numbers.
#[napi(ts_args_type = "id: bigint | string | number, encoding: Encoding, options?: EncodeOptions")]
pub fn encode(
    env: Env,
    id: JsUnknown,
    encoding_name: JsUnknown,
    options: Option<JsUnknown>,
) -> napi::Result<String> {
    let id: Id = arg(&env, id, "encode(id)")?;
    let encoding_name: Str = arg(&env, encoding_name, "encode(id, encoding)")?;
    let e = encoding(&env, &encoding_name.0)?;
    Ok(snowflake_core::encode(id.0, e, reverse(&env, options, "encode")?).to_string())
}

/// Parses an encoded ID, strictly (length, alphabet, overflow); the inverse of `encode` with
/// the same `reverse`.
#[napi(ts_args_type = "text: string, encoding: Encoding, options?: EncodeOptions")]
pub fn decode_str(
    env: Env,
    text: JsUnknown,
    encoding_name: JsUnknown,
    options: Option<JsUnknown>,
) -> napi::Result<u64> {
    let text: Str = arg(&env, text, "decodeStr(text)")?;
    let encoding_name: Str = arg(&env, encoding_name, "decodeStr(text, encoding)")?;
    let e = encoding(&env, &encoding_name.0)?;
    snowflake_core::decode_str(&text.0, e, reverse(&env, options, "decodeStr")?).or_throw(&env)
}
