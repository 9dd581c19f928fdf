//! Errors: every core error becomes a JS `Error` whose `code` is the stable
//! `ErrorKind::code()` (`ERR_SNOWFLAKE_CLOCK_BEHIND`, ...) and whose detail fields
//! (`behindMs`, `retryAfterMs`, `field`, `max`, ...) are set from the error's data, so callers
//! branch on data, never on message text. Detail fields are JSON-safe (numbers, strings; an ID
//! or a value above 2^53 as a decimal string) so that logging an error never throws. A JS
//! value of the wrong type is a `TypeError` with Node's own code for that mistake,
//! `ERR_INVALID_ARG_TYPE`.
//!
//! napi-rs throws an `napi::Error` made from a JS value (`Error::from(JsUnknown)`) as that very
//! value, which is how the shaped objects reach JS unchanged.

use napi::{sys, Env, JsObject, NapiValue};
use snowflake_core::{Error, ParseIdError};

/// The `code` of a `TypeError` for an argument of the wrong JS type.
pub const ERR_INVALID_ARG_TYPE: &str = "ERR_INVALID_ARG_TYPE";

/// The constructor a JS error is made with.
#[derive(Clone, Copy)]
pub enum Class {
    Error,
    TypeError,
    RangeError,
}

/// A JS error object with `code` and `message`; `detail` sets more properties on it.
pub fn make(
    env: sys::napi_env,
    class: Class,
    code: &str,
    message: &str,
    detail: impl FnOnce(&mut Details),
) -> napi::Error {
    let built = (|| -> napi::Result<napi::Error> {
        // SAFETY: `env` is the live environment of the call that is failing.
        let env = unsafe { Env::from_raw(env) };
        let code_js = env.create_string(code)?;
        let message_js = env.create_string(message)?;
        let mut raw = std::ptr::null_mut();
        let create = match class {
            Class::Error => sys::napi_create_error,
            Class::TypeError => sys::napi_create_type_error,
            Class::RangeError => sys::napi_create_range_error,
        };
        // SAFETY: valid env and string values; `raw` receives the new object.
        let status = unsafe {
            create(env.raw(), napi::NapiRaw::raw(&code_js), napi::NapiRaw::raw(&message_js), &mut raw)
        };
        if status != sys::Status::napi_ok {
            return Err(napi::Error::from_reason(message.to_owned()));
        }
        // SAFETY: `raw` was just created as an object by napi.
        let mut details =
            Details { env, obj: unsafe { JsObject::from_raw_unchecked(env.raw(), raw) }, result: Ok(()) };
        detail(&mut details);
        details.result?;
        Ok(napi::Error::from(details.obj.into_unknown()))
    })();
    built.unwrap_or_else(|e| e)
}

/// Sets detail properties on an error object being built.
pub struct Details {
    env: Env,
    obj: JsObject,
    result: napi::Result<()>,
}

/// Core's detail fields ([`Error::details`]) as properties of the error object.
impl snowflake_core::Details for Details {
    /// A number, or a decimal string above `Number.MAX_SAFE_INTEGER`: detail fields stay
    /// JSON-safe, because errors get logged as JSON.
    fn u64(&mut self, name: &str, value: u64) {
        if value as f64 <= 9_007_199_254_740_991.0 {
            if self.result.is_ok() {
                self.result =
                    self.env.create_double(value as f64).and_then(|v| self.obj.set_named_property(name, v));
            }
        } else {
            self.str(name, &value.to_string());
        }
    }
    /// A signed number, as `u64` does (a negative one as a number).
    fn i128(&mut self, name: &str, value: i128) {
        match u64::try_from(value) {
            Ok(v) => self.u64(name, v),
            Err(_) if value >= -9_007_199_254_740_991 => {
                if self.result.is_ok() {
                    self.result = self
                        .env
                        .create_double(value as f64)
                        .and_then(|v| self.obj.set_named_property(name, v));
                }
            }
            Err(_) => self.str(name, &value.to_string()),
        }
    }
    /// An ID, as a decimal string (JSON-safe, like `u64`).
    fn id(&mut self, name: &str, value: u64) {
        self.str(name, &value.to_string());
    }
    /// A string.
    fn str(&mut self, name: &str, value: &str) {
        if self.result.is_ok() {
            self.result = self.env.create_string(value).and_then(|v| self.obj.set_named_property(name, v));
        }
    }
}

/// The JS error for a core error: the constructor and `code` of its kind in core's table,
/// and its data as properties.
pub fn core_error(env: sys::napi_env, e: Error) -> napi::Error {
    shaped(env, e, None)
}

fn shaped(env: sys::napi_env, e: Error, at: Option<&str>) -> napi::Error {
    let info = e.kind().info();
    let message = match at {
        Some(at) => format!("{at}: {e}"),
        None => e.to_string(),
    };
    make(env, class_of(info.node_class), info.node_code, &message, |d| e.details(d))
}

/// A `TypeError` (`ERR_INVALID_ARG_TYPE`) naming the call and parameter (`at`), saying what
/// was expected and what came: `layout.decode(id): an ID must be …; got an object`.
pub fn type_error(env: sys::napi_env, at: &str, expected: &str, got: sys::napi_value) -> napi::Error {
    let got = crate::js::describe(env, got);
    make(env, Class::TypeError, ERR_INVALID_ARG_TYPE, &format!("{at}: {expected}; got {got}"), |_| {})
}

/// [`core_error`] for an argument: the message starts with the call and parameter (`at`).
pub fn core_error_at(env: sys::napi_env, at: &str, e: Error) -> napi::Error {
    shaped(env, e, Some(at))
}

/// The JS error of `kind` with `message`, for the few errors the binding finds itself (a
/// negative bigint for an ID, an invalid Date): the constructor and code of the kind's row in
/// core's table, as every other error of that kind, so that a code always comes with one class.
pub fn kind_error(env: sys::napi_env, kind: snowflake_core::ErrorKind, message: &str) -> napi::Error {
    let info = kind.info();
    make(env, class_of(info.node_class), info.node_code, message, |_| {})
}

fn class_of(node_class: &str) -> Class {
    match node_class {
        "TypeError" => Class::TypeError,
        "RangeError" => Class::RangeError,
        _ => Class::Error,
    }
}

/// `result.or_throw(env)`: a core result as a napi result that throws the shaped error.
pub trait OrThrow<T> {
    fn or_throw(self, env: &Env) -> napi::Result<T>;
}

impl<T> OrThrow<T> for Result<T, Error> {
    #[inline]
    fn or_throw(self, env: &Env) -> napi::Result<T> {
        self.map_err(|e| core_error(env.raw(), e))
    }
}

impl<T> OrThrow<T> for Result<T, ParseIdError> {
    #[inline]
    fn or_throw(self, env: &Env) -> napi::Result<T> {
        self.map_err(|e| core_error(env.raw(), e.into()))
    }
}
