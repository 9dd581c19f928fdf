//! JS values in and out. IDs are `bigint` in and out (a `number` is taken only when it is a
//! safe integer, so nothing is ever rounded at 2^53); times are a number of Unix ms or a
//! `Date`; anything of another type is a `TypeError` that names the call and the parameter.
//! Each argument type checks its value itself ([`FromArg`]), because napi-rs's own conversions
//! throw plain `Error`s with napi status codes and know no parameter names.

use crate::error::{core_error, core_error_at, kind_error, type_error};
pub use crate::js::type_of;
use crate::js::{describe, number};
use napi::bindgen_prelude::FromNapiValue;
use napi::{sys, Env, JsObject, JsUnknown, NapiValue};
use snowflake_core::ErrorKind;

/// `Number.MAX_SAFE_INTEGER`.
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

fn is_safe_integer(f: f64) -> bool {
    f.fract() == 0.0 && f.abs() <= MAX_SAFE
}

/// Core's `Value` of a JS value: how options and node values are handed over (core checks
/// types and ranges, with the same messages as every other front end). `text` keeps a
/// string's bytes alive for the value.
pub fn value_of<'a>(
    env: sys::napi_env,
    v: sys::napi_value,
    text: &'a mut Option<String>,
) -> napi::Result<snowflake_core::Value<'a>> {
    use snowflake_core::Value;
    Ok(match type_of(env, v)? {
        sys::ValueType::napi_undefined | sys::ValueType::napi_null => Value::Unset,
        sys::ValueType::napi_boolean => {
            // SAFETY: `v` is a boolean.
            Value::Bool(unsafe { bool::from_napi_value(env, v) }?)
        }
        sys::ValueType::napi_number => Value::Float(number(env, v)?),
        sys::ValueType::napi_bigint => Value::Int(bigint_i128(env, v)?),
        sys::ValueType::napi_string => {
            // SAFETY: `v` is a string.
            Value::Text(text.insert(unsafe { String::from_napi_value(env, v) }?))
        }
        sys::ValueType::napi_symbol => Value::Other("a symbol"),
        sys::ValueType::napi_function => Value::Other("a function"),
        _ => Value::Other("an object"),
    })
}

/// A bigint as an `i128`; beyond it, the nearest bound (out of every range anyway).
fn bigint_i128(env: sys::napi_env, v: sys::napi_value) -> napi::Result<i128> {
    let mut sign = 0;
    let mut count = 2usize;
    let mut words = [0u64; 2];
    // SAFETY: `v` is a bigint; `words` has room for `count` words.
    napi::check_status!(unsafe {
        sys::napi_get_value_bigint_words(env, v, &mut sign, &mut count, words.as_mut_ptr())
    })?;
    let magnitude = u128::from(words[0]) | (u128::from(words[1]) << 64);
    let fits = count <= 2 && magnitude <= i128::MAX as u128;
    Ok(match (sign != 0, fits) {
        (false, true) => magnitude as i128,
        (true, true) => -(magnitude as i128),
        (false, false) => i128::MAX,
        (true, false) => i128::MIN,
    })
}

/// A u64 as a JS number, or as a bigint above `Number.MAX_SAFE_INTEGER`.
pub fn u64_to_js(env: &Env, v: u64) -> napi::Result<JsUnknown> {
    if v as f64 <= MAX_SAFE {
        env.create_double(v as f64).map(|n| n.into_unknown())
    } else {
        env.create_bigint_from_u64(v).and_then(|b| b.into_unknown())
    }
}

/// An argument read from JS, checked against what it must be. `at` names the call and the
/// parameter (`layout.decode(id)`, `new Generator(options.node)`): every message of a value of
/// the wrong type starts with it, so a caller knows which argument of which call was wrong.
pub trait FromArg: Sized {
    /// Reads `v`, a live value of `env`, as `Self`.
    fn from_arg(env: sys::napi_env, v: sys::napi_value, at: &str) -> napi::Result<Self>;
}

/// The handle of an argument.
pub fn raw(v: &JsUnknown) -> sys::napi_value {
    // SAFETY: an argument's handle stays valid for the call that received it, which is the
    // only place it is used.
    unsafe { napi::NapiRaw::raw(v) }
}

/// Reads argument `v` (which napi-rs hands over untyped) as `T`.
pub fn arg<T: FromArg>(env: &Env, v: JsUnknown, at: &str) -> napi::Result<T> {
    T::from_arg(env.raw(), raw(&v), at)
}

/// Reads an optional argument: `undefined` (or `null`, or left out) is `None`.
pub fn opt_arg<T: FromArg>(env: &Env, v: Option<JsUnknown>, at: &str) -> napi::Result<Option<T>> {
    v.map(|v| arg(env, v, at)).transpose()
}

/// An ID: a bigint from 0 to 2^64 - 1, a decimal string (as JSON, `pg`'s `BIGINT` and
/// `nextIdString()` give it), or a non-negative safe-integer number.
pub struct Id(pub u64);

impl FromArg for Id {
    fn from_arg(env: sys::napi_env, v: sys::napi_value, at: &str) -> napi::Result<Self> {
        const EXPECTED: &str = "an ID must be a bigint, a decimal string, or a number that is a safe integer";
        match type_of(env, v)? {
            sys::ValueType::napi_bigint => {
                let (mut out, mut lossless) = (0u64, false);
                // SAFETY: `v` is a bigint.
                napi::check_status!(unsafe {
                    sys::napi_get_value_bigint_uint64(env, v, &mut out, &mut lossless)
                })?;
                if lossless {
                    Ok(Id(out))
                } else {
                    Err(kind_error(
                        env,
                        ErrorKind::InvalidId,
                        &format!("{at}: an ID is a bigint from 0n to 2n ** 64n - 1n"),
                    ))
                }
            }
            sys::ValueType::napi_string => {
                // SAFETY: `v` is a string.
                let text = unsafe { String::from_napi_value(env, v) }?;
                // Core's strict decimal reading: digits only, no sign, space or wrap.
                snowflake_core::decode_str(&text, snowflake_core::Encoding::Decimal, false)
                    .map(Id)
                    .map_err(|e| core_error_at(env, at, e.into()))
            }
            sys::ValueType::napi_number => {
                let f = number(env, v)?;
                if !is_safe_integer(f) {
                    Err(type_error(
                        env,
                        at,
                        "a number is taken as an ID only when Number.isSafeInteger(id); pass a bigint or a decimal string",
                        v,
                    ))
                } else if f < 0.0 {
                    Err(kind_error(env, ErrorKind::InvalidId, &format!("{at}: an ID is never negative")))
                } else {
                    Ok(Id(f as u64))
                }
            }
            _ => Err(type_error(env, at, EXPECTED, v)),
        }
    }
}

/// An instant: a non-negative integer number of Unix milliseconds, or a `Date`.
pub struct UnixMs(pub u64);

impl FromArg for UnixMs {
    fn from_arg(env: sys::napi_env, v: sys::napi_value, at: &str) -> napi::Result<Self> {
        const EXPECTED: &str = "a time must be a number of Unix milliseconds (an integer) or a Date";
        let f = match type_of(env, v)? {
            sys::ValueType::napi_number => number(env, v)?,
            sys::ValueType::napi_object => {
                let mut is_date = false;
                // SAFETY: valid env and value.
                napi::check_status!(unsafe { sys::napi_is_date(env, v, &mut is_date) })?;
                if !is_date {
                    return Err(type_error(env, at, EXPECTED, v));
                }
                let mut f = 0.0;
                // SAFETY: `v` is a Date.
                napi::check_status!(unsafe { sys::napi_get_date_value(env, v, &mut f) })?;
                if f.is_nan() {
                    return Err(kind_error(env, ErrorKind::TimeRange, &format!("{at}: the Date is invalid")));
                }
                f
            }
            _ => return Err(type_error(env, at, EXPECTED, v)),
        };
        if !is_safe_integer(f) {
            return Err(type_error(env, at, EXPECTED, v));
        }
        // Core's rule for a caller's time: before 1970 is ERR_SNOWFLAKE_TIME_RANGE, as a time
        // before the layout's epoch (`nextIdAt(-1)` and `nextIdAt(0)` throw one class).
        snowflake_core::Value::Float(f).instant("t").map(UnixMs).map_err(|e| core_error_at(env, at, e))
    }
}

/// A count: a whole number (core's rule: a fraction, a bigint or another type is a
/// `TypeError`, a negative or too large one a `RangeError` with `ERR_SNOWFLAKE_VALUE`),
/// checked against the call's own maximum by [`Count::at_most`].
pub struct Count(f64);

impl FromArg for Count {
    fn from_arg(env: sys::napi_env, v: sys::napi_value, at: &str) -> napi::Result<Self> {
        match type_of(env, v)? {
            sys::ValueType::napi_number => Ok(Count(number(env, v)?)),
            _ => Err(core_error_at(
                env,
                at,
                snowflake_core::Error::WrongType {
                    name: snowflake_core::Name::snippet("n"),
                    expected: "a whole number",
                    got: snowflake_core::Name::snippet(&describe(env, v)),
                },
            )),
        }
    }
}

impl Count {
    /// The count, from 0 to `max`, or core's error naming the call and `n`.
    pub fn at_most(&self, env: &Env, at: &str, max: u64) -> napi::Result<u64> {
        snowflake_core::Value::Float(self.0).whole("n", 0, max).map_err(|e| core_error_at(env.raw(), at, e))
    }
}

/// A string.
pub struct Str(pub String);

impl FromArg for Str {
    fn from_arg(env: sys::napi_env, v: sys::napi_value, at: &str) -> napi::Result<Self> {
        if type_of(env, v)? != sys::ValueType::napi_string {
            return Err(type_error(env, at, "expected a string", v));
        }
        // SAFETY: `v` is a string.
        Ok(Str(unsafe { String::from_napi_value(env, v) }?))
    }
}

/// Whether `v` is a plain object: an object, not null, not an array.
pub fn is_plain_object(env: sys::napi_env, v: sys::napi_value) -> napi::Result<bool> {
    let mut is_array = false;
    // SAFETY: valid env and value.
    napi::check_status!(unsafe { sys::napi_is_array(env, v, &mut is_array) })?;
    Ok(type_of(env, v)? == sys::ValueType::napi_object && !is_array)
}

/// A plain object (not null, not an array), read property by property.
pub struct Object {
    pub env: sys::napi_env,
    pub obj: JsObject,
}

impl FromArg for Object {
    fn from_arg(env: sys::napi_env, v: sys::napi_value, at: &str) -> napi::Result<Self> {
        if !is_plain_object(env, v)? {
            return Err(type_error(env, at, "expected a plain object", v));
        }
        // SAFETY: `v` is an object.
        Ok(Object { env, obj: unsafe { JsObject::from_raw_unchecked(env, v) } })
    }
}

impl Object {
    /// The own enumerable string keys, in property order.
    pub fn keys(&self) -> napi::Result<Vec<String>> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: valid env and object; `raw` receives an array of strings.
        napi::check_status!(unsafe {
            sys::napi_get_all_property_names(
                self.env,
                napi::NapiRaw::raw(&self.obj),
                sys::KeyCollectionMode::own_only,
                sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
                sys::KeyConversion::numbers_to_strings,
                &mut raw,
            )
        })?;
        // SAFETY: napi returned an array.
        let names = unsafe { JsObject::from_raw_unchecked(self.env, raw) };
        let len = names.get_array_length()?;
        (0..len).map(|i| names.get_element::<napi::JsString>(i)?.into_utf8()?.into_owned()).collect()
    }

    /// The value of `key`, or `None` when it is `undefined`. The key goes to JS as a string
    /// with its length, so any key works (one holding a NUL too).
    pub fn get(&self, key: &str) -> napi::Result<Option<sys::napi_value>> {
        let (mut name, mut raw) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: valid env; the key is passed with its length; `name` receives the string.
        napi::check_status!(unsafe {
            sys::napi_create_string_utf8(self.env, key.as_ptr().cast(), key.len() as _, &mut name)
        })?;
        // SAFETY: valid env, object and key; `raw` receives the value.
        napi::check_status!(unsafe {
            sys::napi_get_property(self.env, napi::NapiRaw::raw(&self.obj), name, &mut raw)
        })?;
        Ok(if type_of(self.env, raw)? == sys::ValueType::napi_undefined { None } else { Some(raw) })
    }

    /// Reads `key` as `T` (which checks its type), or `None` when it is `undefined`; `at`
    /// names the property in messages (`encode(options.reverse)`).
    pub fn get_as<T: FromArg>(&self, key: &str, at: &str) -> napi::Result<Option<T>> {
        match self.get(key)? {
            Some(v) => T::from_arg(self.env, v, at).map(Some),
            None => Ok(None),
        }
    }
}

/// A boolean.
pub struct Bool(pub bool);

impl FromArg for Bool {
    fn from_arg(env: sys::napi_env, v: sys::napi_value, at: &str) -> napi::Result<Self> {
        if type_of(env, v)? != sys::ValueType::napi_boolean {
            return Err(type_error(env, at, "expected a boolean", v));
        }
        // SAFETY: `v` is a boolean.
        Ok(Bool(unsafe { bool::from_napi_value(env, v) }?))
    }
}

/// A non-negative integer (a sequence number): a safe-integer number or a bigint.
pub struct Uint(pub u64);

impl FromArg for Uint {
    fn from_arg(env: sys::napi_env, v: sys::napi_value, at: &str) -> napi::Result<Self> {
        const EXPECTED: &str = "expected a non-negative integer (a safe-integer number or a bigint)";
        match type_of(env, v)? {
            sys::ValueType::napi_bigint => {
                let (mut out, mut lossless) = (0u64, false);
                // SAFETY: `v` is a bigint.
                napi::check_status!(unsafe {
                    sys::napi_get_value_bigint_uint64(env, v, &mut out, &mut lossless)
                })?;
                if lossless {
                    Ok(Uint(out))
                } else {
                    Err(kind_error(
                        env,
                        ErrorKind::Value,
                        &format!("{at}: the value must be from 0 to 2^64 - 1"),
                    ))
                }
            }
            sys::ValueType::napi_number => {
                let f = number(env, v)?;
                if !is_safe_integer(f) {
                    Err(type_error(env, at, EXPECTED, v))
                } else if f < 0.0 {
                    Err(kind_error(env, ErrorKind::Value, &format!("{at}: the value {f} is negative")))
                } else {
                    Ok(Uint(f as u64))
                }
            }
            _ => Err(type_error(env, at, EXPECTED, v)),
        }
    }
}

/// A new `BigUint64Array` of `n` IDs, written by `fill` straight into the array's memory (no
/// copy): how `nextIds` hands a batch to JS. Throws the core error `fill` returns.
///
/// The memory is this library's, allocated fallibly and handed to V8 as an external
/// `ArrayBuffer`: `napi_create_arraybuffer` aborts the whole process ("ArrayBuffer allocation
/// failed") when V8 cannot get the memory, where this throws a `RangeError`.
pub fn fill_array(
    env: &Env,
    n: usize,
    fill: impl FnOnce(&mut [u64]) -> Result<(), snowflake_core::Error>,
) -> napi::Result<napi::JsTypedArray> {
    if n == 0 {
        return env.create_arraybuffer(0)?.into_raw().into_typedarray(napi::TypedArrayType::BigUint64, 0, 0);
    }
    let mut ids: Vec<u64> = Vec::new();
    if ids.try_reserve_exact(n).is_err() {
        return Err(core_error(
            env.raw(),
            snowflake_core::Error::BadOption {
                name: snowflake_core::Name::snippet("n"),
                reason: "the memory for that many IDs cannot be had: take fewer at a time",
            },
        ));
    }
    ids.resize(n, 0);
    if let Err(e) = fill(&mut ids) {
        return Err(core_error(env.raw(), e));
    }
    let boxed = Box::new(ids);
    let data = boxed.as_ptr() as *mut std::ffi::c_void;
    let hint = Box::into_raw(boxed);
    let mut buffer = std::ptr::null_mut();
    // SAFETY: `data` points to `n` u64s owned by `*hint`, which lives until V8 calls
    // `drop_ids` (once, when the ArrayBuffer is collected, or at once if making it fails).
    let status = unsafe {
        sys::napi_create_external_arraybuffer(
            env.raw(),
            data,
            n * 8,
            Some(drop_ids),
            hint.cast(),
            &mut buffer,
        )
    };
    if status != sys::Status::napi_ok {
        // SAFETY: V8 did not take the data: it is still ours alone.
        let ids = unsafe { Box::from_raw(hint) };
        if status == sys::Status::napi_no_external_buffers_allowed {
            // A runtime that allows no external buffer (a V8 sandbox): a copy into its own.
            let mut copy = env.create_arraybuffer(n * 8)?;
            let bytes: &mut [u8] = copy.as_mut();
            for (slot, id) in bytes.chunks_exact_mut(8).zip(ids.iter()) {
                slot.copy_from_slice(&id.to_ne_bytes());
            }
            return copy.into_raw().into_typedarray(napi::TypedArrayType::BigUint64, n, 0);
        }
        napi::check_status!(status)?;
    }
    // SAFETY: `buffer` is the ArrayBuffer just made.
    let buffer = unsafe { napi::JsArrayBuffer::from_raw_unchecked(env.raw(), buffer) };
    buffer.into_typedarray(napi::TypedArrayType::BigUint64, n, 0)
}

/// Frees the IDs of an external `ArrayBuffer` made by [`fill_array`].
unsafe extern "C" fn drop_ids(
    _env: sys::napi_env,
    _data: *mut std::ffi::c_void,
    hint: *mut std::ffi::c_void,
) {
    // SAFETY: `hint` is the Box made by `fill_array`, handed to V8 once.
    drop(unsafe { Box::from_raw(hint.cast::<Vec<u64>>()) });
}
