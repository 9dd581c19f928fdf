//! What a JS value is: its type, a number's value, and a short description of it for
//! messages (below both the conversions and the errors, which each need them).

use napi::sys;

pub fn type_of(env: sys::napi_env, v: sys::napi_value) -> napi::Result<sys::napi_valuetype> {
    let mut t = 0;
    // SAFETY: valid env and value, handed to us by napi.
    napi::check_status!(unsafe { sys::napi_typeof(env, v, &mut t) })?;
    Ok(t)
}

pub fn number(env: sys::napi_env, v: sys::napi_value) -> napi::Result<f64> {
    let mut f = 0.0;
    // SAFETY: `v` is a number (checked by the caller).
    napi::check_status!(unsafe { sys::napi_get_value_double(env, v, &mut f) })?;
    Ok(f)
}

/// A short description of a JS value for a `TypeError` message: its type, and the value of
/// a number.
pub fn describe(env: sys::napi_env, v: sys::napi_value) -> String {
    match type_of(env, v) {
        Ok(sys::ValueType::napi_undefined) => "undefined".into(),
        Ok(sys::ValueType::napi_null) => "null".into(),
        Ok(sys::ValueType::napi_boolean) => "a boolean".into(),
        Ok(sys::ValueType::napi_number) => match number(env, v) {
            Ok(f) => format!("the number {f}"),
            Err(_) => "a number".into(),
        },
        Ok(sys::ValueType::napi_string) => "a string".into(),
        Ok(sys::ValueType::napi_symbol) => "a symbol".into(),
        Ok(sys::ValueType::napi_bigint) => "a bigint".into(),
        Ok(sys::ValueType::napi_function) => "a function".into(),
        Ok(_) => "an object".into(),
        Err(_) => "an unknown value".into(),
    }
}
