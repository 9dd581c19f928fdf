//! The Node binding of libsnowflake (npm package `libsnowflake`), built with napi-rs.
//!
//! It holds no ID logic: each module converts JS arguments, calls the matching
//! `snowflake-core` module and maps its errors (`error.rs`) to JS errors with a stable `code`.
//! IDs cross the boundary as `bigint`, never as a rounded `number`.

// napi-rs registers the exports only outside `cfg(test)`.
#![cfg_attr(test, allow(dead_code))]

mod convert;
mod encoding;
mod error;
mod generator;
mod js;
mod layout;
mod public;

use napi_derive::napi;

/// The library version (from Cargo; equal to the npm package's).
#[napi]
pub const VERSION: &str = snowflake_core::VERSION;
