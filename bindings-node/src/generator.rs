//! `Generator`: reads the JS options object into core's `Options`, builds core's `Generator`
//! (whose in-process registry shares one state per layout and node values: across
//! `worker_threads` too, which share the process and so this library's statics), and
//! forwards each call. `nextIdAsync` waits for the clock on libuv's thread pool.

use crate::convert::{Bool, Count, Ids, Object, Str, UnixMs};
use crate::error::{core_error, type_error, OrThrow};
use crate::layout::{node_from, JsLayout};
use napi::bindgen_prelude::{AsyncTask, BigInt, FromNapiValue};
use napi::{sys, Env, JsObject, NapiValue, Task};
use napi_derive::napi;
use snowflake_core::{encode, Encoding, Error, Generator, Layout, Name, Options};
use std::sync::Arc;

/// The options of `new Generator(...)`. Only `layout` is required.
#[napi(object)]
#[allow(dead_code)] // Declares the TypeScript type; the constructor reads the object itself.
pub struct GeneratorOptions {
    /// A preset name, a spec, or a `Layout`.
    #[napi(ts_type = "string | Layout")]
    pub layout: String,
    /// This node's field values, e.g. `{ datacenter: 1, worker: 3 }` (those left out are 0).
    #[napi(ts_type = "Record<string, number | bigint>")]
    pub node: Option<String>,
    /// How far ahead of the clock the generator may issue, in ms (default 0: never).
    pub max_drift_ms: Option<f64>,
    /// How long `nextId()` may block for the clock before it throws, in ms (default 1000;
    /// 0: never block).
    pub max_wait_ms: Option<f64>,
    /// `'zero'` (default) or `'spread:K'`.
    #[napi(ts_type = "'zero' | `spread:${number}`")]
    pub sequence_start: Option<String>,
    /// A node field to bump, instead of waiting, when the clock goes back.
    pub rollover: Option<String>,
    /// A state of its own instead of the one shared by every generator of this process with
    /// the same layout and node values: for tests and `nextIdAt` replays only. Two isolated
    /// generators with the same node values can issue the same IDs.
    pub isolated: Option<bool>,
}

/// A block of IDs taken at once: `first + BigInt(i) * stride` for `i < count`.
#[napi(object, object_from_js = false)]
pub struct Block {
    /// The first ID.
    pub first: u64,
    /// How many IDs.
    pub count: f64,
    /// The distance between two consecutive IDs.
    pub stride: u64,
}

/// What a generator has done.
#[napi(object, object_from_js = false)]
pub struct Stats {
    /// IDs issued through this generator.
    pub issued: f64,
    /// How many times it waited for the clock.
    pub waits: f64,
    /// Total time spent waiting, in ms.
    pub waited_ms: f64,
    /// How many times it found the clock behind by more than `maxDriftMs`.
    pub clock_behind: f64,
    /// How many times it bumped the rollover field.
    pub rollovers: f64,
    /// How far ahead of the clock the shared state is now, in ms.
    pub drift_ms: f64,
}

const OPTION_NAMES: &str = "layout, node, maxDriftMs, maxWaitMs, sequenceStart, rollover, isolated";

fn layout_option(env: sys::napi_env, value: sys::napi_value) -> napi::Result<Layout> {
    // SAFETY: `env` and `value` are live for this call.
    let napi_env = unsafe { Env::from_raw(env) };
    if let Ok(Str(spec)) = unsafe { Str::from_napi_value(env, value) } {
        return Layout::parse(&spec).or_throw(&napi_env);
    }
    // SAFETY: as above; `instance_of` checks the class before the unwrap.
    let unknown = unsafe { napi::JsUnknown::from_raw_unchecked(env, value) };
    if JsLayout::instance_of(napi_env, &unknown).unwrap_or(false) {
        let layout: &JsLayout = unsafe { <&JsLayout>::from_napi_value(env, value) }?;
        return Ok(layout.into());
    }
    Err(type_error(
        env,
        "`layout` must be a preset name, a spec string or a Layout",
        value,
    ))
}

fn bad_option(env: &Env, name: &str, reason: &'static str) -> napi::Error {
    core_error(
        env.raw(),
        Error::BadOption {
            name: Name::snippet(name),
            reason,
        },
    )
}

/// A Snowflake ID generator (lock-free; one state per layout and node values in the process).
#[napi(js_name = "Generator")]
pub struct JsGenerator {
    inner: Arc<Generator>,
}

#[napi]
impl JsGenerator {
    /// Builds a generator; throws `ERR_SNOWFLAKE_VALUE` for an unknown option, node field or
    /// out-of-range value, and a `TypeError` for a value of the wrong type.
    #[napi(constructor, ts_args_type = "options: GeneratorOptions")]
    pub fn new(env: Env, options: Object) -> napi::Result<Self> {
        for key in options.keys()? {
            if !OPTION_NAMES.split(", ").any(|k| k == key) {
                return Err(bad_option(&env, &key, "unknown option (layout, node, maxDriftMs, maxWaitMs, sequenceStart, rollover, isolated)"));
            }
        }
        let layout = match options.get("layout")? {
            Some(v) => layout_option(env.raw(), v)?,
            None => {
                return Err(bad_option(
                    &env,
                    "layout",
                    "the layout is required (a preset name such as 'twitter', or a spec)",
                ))
            }
        };
        let node = node_from(&layout, &env, options.get_as::<Object>("node")?)?;
        let mut o = Options::default();
        if let Some(Count(ms)) = options.get_as::<Count>("maxDriftMs")? {
            o.max_drift_ms = ms;
        }
        if let Some(Count(ms)) = options.get_as::<Count>("maxWaitMs")? {
            o.max_wait_ms = ms;
        }
        if let Some(Str(s)) = options.get_as::<Str>("sequenceStart")? {
            o.sequence_start = Options::parse_sequence_start(&s).or_throw(&env)?;
        }
        if let Some(Str(s)) = options.get_as::<Str>("rollover")? {
            o.rollover = Some(
                Name::new(&s)
                    .ok_or(Error::UnknownField {
                        name: Name::snippet(&s),
                    })
                    .or_throw(&env)?,
            );
        }
        if let Some(Bool(b)) = options.get_as::<Bool>("isolated")? {
            o.isolated = b;
        }
        let inner = Generator::new(&layout, node, o).or_throw(&env)?;
        Ok(JsGenerator {
            inner: Arc::new(inner),
        })
    }

    /// The next ID. Blocks for the clock at most `maxWaitMs` (when the tick is full or the
    /// clock is behind), then throws `ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED` or
    /// `ERR_SNOWFLAKE_CLOCK_BEHIND` with `retryAfterMs`.
    #[napi]
    pub fn next_id(&self, env: Env) -> napi::Result<u64> {
        self.inner.next_id().or_throw(&env)
    }

    /// The next ID as a decimal string (the JSON-safe form).
    #[napi]
    pub fn next_id_string(&self, env: Env) -> napi::Result<String> {
        let id = self.inner.next_id().or_throw(&env)?;
        Ok(encode(id, Encoding::Decimal, false).to_string())
    }

    /// `n` increasing IDs, taken a block (one compare-and-swap) per tick.
    #[napi(ts_args_type = "n: number", ts_return_type = "BigUint64Array")]
    pub fn next_ids(&self, env: Env, n: Count) -> napi::Result<Ids> {
        let n = usize::try_from(n.0)
            .map_err(|_| bad_option(&env, "n", "too many IDs for one array"))?;
        let mut ids = vec![0u64; n];
        self.inner.next_ids(&mut ids).or_throw(&env)?;
        Ok(Ids(ids))
    }

    /// The next ID at the caller's clock reading `t` (deterministic; never waits).
    #[napi(ts_args_type = "t: number | Date")]
    pub fn next_id_at(&self, env: Env, t: UnixMs) -> napi::Result<u64> {
        self.inner.next_id_at(t.0).or_throw(&env)
    }

    /// The next ID without ever blocking: throws where `nextId()` would wait.
    #[napi]
    pub fn try_next_id(&self, env: Env) -> napi::Result<u64> {
        self.inner.try_next_id().or_throw(&env)
    }

    /// Up to `n` IDs of one tick, taken with one compare-and-swap (at least one).
    #[napi(ts_args_type = "n: number")]
    pub fn reserve(&self, env: Env, n: Count) -> napi::Result<Block> {
        let b = self.inner.reserve(n.0).or_throw(&env)?;
        Ok(Block {
            first: b.first,
            count: b.count as f64,
            stride: b.stride,
        })
    }

    /// The next ID, waiting for the clock (up to `maxWaitMs`) on the thread pool instead of
    /// the event loop.
    #[napi(ts_return_type = "Promise<bigint>")]
    pub fn next_id_async(&self) -> AsyncTask<NextId> {
        AsyncTask::new(NextId {
            generator: Arc::clone(&self.inner),
            error: None,
        })
    }

    /// What this generator has done.
    #[napi]
    pub fn stats(&self) -> Stats {
        let s = self.inner.stats();
        Stats {
            issued: s.issued as f64,
            waits: s.waits as f64,
            waited_ms: s.waited_ms as f64,
            clock_behind: s.clock_behind as f64,
            rollovers: s.rollovers as f64,
            drift_ms: s.drift_ms as f64,
        }
    }

    /// The layout.
    #[napi(getter, ts_return_type = "Layout")]
    pub fn layout(&self) -> JsLayout {
        JsLayout::from(*self.inner.layout())
    }

    /// The node values, by name.
    #[napi(getter, ts_return_type = "Record<string, number>")]
    pub fn node(&self, env: Env) -> napi::Result<JsObject> {
        let mut out = env.create_object()?;
        let layout = self.inner.layout();
        for (name, value) in layout.node_values(self.inner.node()) {
            out.set_named_property(name, crate::convert::u64_to_js(&env, value)?)?;
        }
        Ok(out)
    }

    /// `Generator(<layout>, node=..., <options>)`.
    #[napi]
    #[allow(clippy::inherent_to_string)]
    pub fn to_string(&self) -> String {
        format!("{:?}", self.inner)
    }
}

/// `nextIdAsync`: `Generator::next_id` on a libuv worker thread.
pub struct NextId {
    generator: Arc<Generator>,
    error: Option<Error>,
}

impl Task for NextId {
    type Output = u64;
    type JsValue = BigInt;

    fn compute(&mut self) -> napi::Result<u64> {
        self.generator.next_id().map_err(|e| {
            // Shaped into a JS error in `reject`, on the JS thread that owns the env.
            self.error = Some(e);
            napi::Error::from_reason(e.to_string())
        })
    }

    fn resolve(&mut self, _env: Env, id: u64) -> napi::Result<BigInt> {
        Ok(BigInt::from(id))
    }

    fn reject(&mut self, env: Env, err: napi::Error) -> napi::Result<BigInt> {
        Err(match self.error.take() {
            Some(e) => core_error(env.raw(), e),
            None => err,
        })
    }
}
