//! `Generator`: reads the JS options object into core's `Options`, builds core's `Generator`
//! (whose in-process registry shares one state per layout and node values: across
//! `worker_threads` too, which share the process and so this library's statics), and
//! forwards each call. `nextIdAsync` waits for the clock on libuv's thread pool.

use crate::convert::{arg, is_plain_object, raw, type_of, Count, Object, Str, UnixMs};
use crate::error::{core_error, core_error_at, type_error, OrThrow};
use crate::layout::{node_from, JsLayout};
use napi::bindgen_prelude::{AsyncTask, BigInt, FromNapiValue};
use napi::{sys, Env, JsObject, JsUnknown, NapiValue, Task};
use napi_derive::napi;
use snowflake_core::{
    encode, Encoding, Environment, Error, Generator, GivenOptions, Layout, Name, Spelling, StatValue,
    MAX_IDS_PER_CALL, OPTIONS, STATS,
};
use std::sync::Arc;

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

/// A layout given as a preset name, a spec or a `Layout`, or `None` when `value` is none of
/// them (`at` names the argument in the errors of a bad spec).
fn layout_of(env: sys::napi_env, value: sys::napi_value, at: &str) -> napi::Result<Option<Layout>> {
    // SAFETY: `env` and `value` are live for this call.
    let napi_env = unsafe { Env::from_raw(env) };
    if type_of(env, value)? == sys::ValueType::napi_string {
        // SAFETY: `value` is a string.
        let spec = unsafe { String::from_napi_value(env, value) }?;
        return Layout::parse(&spec).map(Some).map_err(|e| core_error_at(env, at, e));
    }
    // SAFETY: as above; `instance_of` checks the class before the unwrap.
    let unknown = unsafe { napi::JsUnknown::from_raw_unchecked(env, value) };
    if JsLayout::instance_of(napi_env, &unknown).unwrap_or(false) {
        // SAFETY: `value` is an instance of the Layout class.
        let layout: &JsLayout = unsafe { <&JsLayout>::from_napi_value(env, value) }?;
        return Ok(Some(layout.into()));
    }
    Ok(None)
}

fn layout_option(env: sys::napi_env, value: sys::napi_value, at: &str) -> napi::Result<Layout> {
    layout_of(env, value, at)?
        .ok_or_else(|| type_error(env, at, "a layout is a preset name, a spec string or a Layout", value))
}

fn bad_option(env: &Env, name: &str, reason: &'static str) -> napi::Error {
    core_error(env.raw(), Error::BadOption { name: Name::snippet(name), reason })
}

/// A Snowflake ID generator (lock-free; one state per layout and node values in the process).
#[napi(js_name = "Generator")]
pub struct JsGenerator {
    inner: Arc<Generator>,
}

#[napi]
impl JsGenerator {
    /// Builds a generator: `new Generator('twitter', { node: 'datacenter=1,worker=3' })`, or
    /// `new Generator({ layout, node, ...options })`; the layout is a preset name, a spec or a
    /// `Layout`, the node values an object or the text form. Throws `ERR_SNOWFLAKE_VALUE` for
    /// an unknown option, node field or out-of-range value, and a `TypeError` naming the
    /// argument for a value of the wrong type.
    ///
    /// What the arguments leave out (or `new Generator()` altogether) comes from the
    /// environment: the layout from `SNOWFLAKE_LAYOUT` (else `twitter`), the node values from
    /// `SNOWFLAKE_NODE` (else all zeros), each option the code does not give from
    /// `SNOWFLAKE_OPTIONS`; core resolves it, and a malformed variable throws naming it.
    /// `stats().sources` says where each value came from.
    #[napi(
        constructor,
        ts_args_type = "layout?: string | Layout | GeneratorOptions | null, options?: Omit<GeneratorOptions, 'layout'>"
    )]
    pub fn new(env: Env, first: Option<JsUnknown>, second: Option<JsUnknown>) -> napi::Result<Self> {
        // The first argument is the layout, or the options object (which may name the layout).
        let (layout, options, at) = match first {
            None => (None, second, "new Generator(layout, options)"),
            Some(v) => match layout_of(env.raw(), raw(&v), "new Generator(layout)")? {
                Some(layout) => (Some(layout), second, "new Generator(layout, options)"),
                None if is_plain_object(env.raw(), raw(&v))? => {
                    if let Some(extra) = second {
                        return Err(type_error(
                            env.raw(),
                            "new Generator(options, …)",
                            "the options come last: new Generator(layout, options) or new Generator(options)",
                            raw(&extra),
                        ));
                    }
                    (None, Some(v), "new Generator(options)")
                }
                None => {
                    return Err(type_error(
                        env.raw(),
                        "new Generator(layout)",
                        "the first argument is a layout (a preset name, a spec string or a Layout) or the options object",
                        raw(&v),
                    ))
                }
            },
        };
        if let Some(o) = &options {
            if !is_plain_object(env.raw(), raw(o))? {
                return Err(type_error(
                    env.raw(),
                    at,
                    "the options are an object, e.g. { node: 'datacenter=1,worker=3', maxWaitMs: 0 }",
                    raw(o),
                ));
            }
        }
        let options: Option<Object> = options.map(|o| arg(&env, o, at)).transpose()?;
        let field = |name: &str| format!("{}.{name})", at.trim_end_matches(')'));
        let layout = match (layout, options.as_ref().map(|o| o.get("layout")).transpose()?.flatten()) {
            (Some(_), Some(_)) => {
                return Err(bad_option(
                    &env,
                    "layout",
                    "the layout is given twice: as the first argument and as options.layout",
                ))
            }
            (Some(layout), None) => Some(layout),
            (None, Some(v)) => Some(layout_option(env.raw(), v, &field("layout"))?),
            (None, None) => None,
        };
        // What the arguments leave out comes from the environment, then the defaults: core
        // resolves it.
        let environment = Environment::read().or_throw(&env)?;
        let (layout, layout_source) = environment.layout(layout).or_throw(&env)?;
        let node = match options.as_ref().map(|o| o.get("node")).transpose()?.flatten() {
            // SAFETY: `v` is a live value of this call's env.
            Some(v) => Some(node_from(
                &layout,
                &env,
                Some(unsafe { JsUnknown::from_raw_unchecked(env.raw(), v) }),
                &field("node"),
            )?),
            None => None,
        };
        // Every other key goes to core as it is (camelCase): core's option table checks names,
        // types and ranges, with the messages of every other front end. A key given here wins
        // over SNOWFLAKE_OPTIONS.
        let mut o = GivenOptions::new();
        for key in options.as_ref().map(Object::keys).transpose()?.unwrap_or_default() {
            if key == "layout" || key == "node" {
                continue;
            }
            let Some(v) = options.as_ref().and_then(|o| o.get(&key).transpose()).transpose()? else {
                continue;
            };
            let mut text = None;
            let value = crate::convert::value_of(env.raw(), v, &mut text)?;
            o.set_spelled(&key, Spelling::Camel, value).map_err(|e| core_error_at(env.raw(), at, e))?;
        }
        let inner = environment.open(&layout, layout_source, node.as_ref(), &o).or_throw(&env)?;
        Ok(JsGenerator { inner: Arc::new(inner) })
    }

    /// The next ID as a `number`, for layouts of at most 53 bits (such as `js53`), whose IDs
    /// are all exact JavaScript numbers (`Number.isSafeInteger`). Throws `ERR_SNOWFLAKE_VALUE`
    /// on a wider layout, whatever the ID: use `nextId()` (a bigint) there.
    #[napi]
    pub fn next_id_number(&self, env: Env) -> napi::Result<f64> {
        let bits = self.inner.layout().total_bits();
        if bits > 53 {
            return Err(core_error(env.raw(), Error::UnsafeNumber { total_bits: bits }));
        }
        Ok(self.inner.next_id().or_throw(&env)? as f64)
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

    /// `n` increasing IDs, taken a block (one compare-and-swap) per tick, written straight
    /// into the returned array's memory. `n` is at most 2 ** 28 (`MAX_IDS_PER_CALL`: a
    /// `RangeError` above it, or when the memory cannot be had).
    #[napi(ts_args_type = "n: number", ts_return_type = "BigUint64Array")]
    pub fn next_ids(&self, env: Env, n: JsUnknown) -> napi::Result<napi::JsTypedArray> {
        const AT: &str = "generator.nextIds(n)";
        // At most core's MAX_IDS_PER_CALL (a RangeError above it); memory that cannot be had
        // throws too (fill_array), never a fatal V8 abort.
        let n = arg::<Count>(&env, n, AT)?.at_most(&env, AT, MAX_IDS_PER_CALL)?;
        crate::convert::fill_array(&env, n as usize, |ids| self.inner.fill(ids).map_err(|e| e.error))
    }

    /// The next ID at the caller's clock reading `t` (deterministic; never waits). It
    /// continues the state every generator with this layout and node values shares: a time
    /// behind it (by more than `maxDriftMs`) throws `ERR_SNOWFLAKE_CLOCK_BEHIND`, since an ID
    /// there could repeat one already issued; a time more than `maxDriftMs` + 1 s ahead of the
    /// clock throws `ERR_SNOWFLAKE_VALUE`, since the state would stay there and lock every
    /// other caller out. Replays and backfills need `isolated: true` and node values of their
    /// own.
    #[napi(ts_args_type = "t: number | Date")]
    pub fn next_id_at(&self, env: Env, t: JsUnknown) -> napi::Result<u64> {
        let t: UnixMs = arg(&env, t, "generator.nextIdAt(t)")?;
        self.inner.next_id_at(t.0).or_throw(&env)
    }

    /// The next ID without ever blocking: throws where `nextId()` would wait.
    #[napi]
    pub fn try_next_id(&self, env: Env) -> napi::Result<u64> {
        self.inner.try_next_id().or_throw(&env)
    }

    /// Up to `n` IDs of one tick, taken with one compare-and-swap (at least one).
    #[napi(ts_args_type = "n: number")]
    pub fn reserve(&self, env: Env, n: JsUnknown) -> napi::Result<Block> {
        const AT: &str = "generator.reserve(n)";
        let n = arg::<Count>(&env, n, AT)?.at_most(&env, AT, u64::MAX)?;
        let b = self.inner.reserve(n).or_throw(&env)?;
        Ok(Block { first: b.first, count: b.count as f64, stride: b.stride })
    }

    /// The next ID, waiting for the clock (up to `maxWaitMs`) on the thread pool instead of
    /// the event loop.
    #[napi(ts_return_type = "Promise<bigint>")]
    pub fn next_id_async(&self) -> AsyncTask<NextId> {
        AsyncTask::new(NextId { generator: Arc::clone(&self.inner), error: None })
    }

    /// What this generator has done: one property per row of core's stats table (camelCase;
    /// an absent optional one left out), and `sources`.
    #[napi(ts_return_type = "Stats")]
    pub fn stats(&self, env: Env) -> napi::Result<JsObject> {
        let s = self.inner.stats();
        let mut out = env.create_object()?;
        for spec in STATS {
            // Numbers, as they have always been in Node: every stat stays below 2^53 in
            // practice but `lastUnixMs`/`msLeft`, which lose only sub-ms precision beyond it.
            let value = match (spec.get)(&s) {
                StatValue::U64(v) | StatValue::OptionalU64(Some(v)) => v as f64,
                StatValue::OptionalI64(Some(v)) => v as f64,
                StatValue::F64(v) => v,
                StatValue::OptionalU64(None) | StatValue::OptionalI64(None) => continue,
            };
            out.set_named_property(spec.spelled(Spelling::Camel).as_str(), env.create_double(value)?)?;
        }
        let mut sources = env.create_object()?;
        for (name, source) in self.inner.provenance().iter() {
            let name = match OPTIONS.iter().find(|o| o.name == name) {
                Some(o) => o.spelled(Spelling::Camel).as_str().to_string(),
                None => name.to_string(),
            };
            sources.set_named_property(&name, env.create_string(source.as_str())?)?;
        }
        out.set_named_property("sources", sources)?;
        Ok(out)
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

    /// Used by index.js to give each instance its own fast `nextId`, `tryNextId` and
    /// `nextIdString`.
    #[napi(skip_typescript, js_name = "_fastFunction")]
    pub fn fast_function(&self, env: Env, name: JsUnknown) -> napi::Result<napi::JsFunction> {
        let name: Str = arg(&env, name, "_fastFunction(name)")?;
        let call = match name.0.as_str() {
            "nextId" => FastCall::NextId,
            "tryNextId" => FastCall::TryNextId,
            "nextIdString" => FastCall::NextIdString,
            _ => return Err(bad_option(&env, &name.0, "no fast function of that name")),
        };
        let name = name.0;
        let data = Box::into_raw(Box::new(Fast { generator: Arc::clone(&self.inner), call }))
            as *mut std::ffi::c_void;
        let mut f = std::ptr::null_mut();
        // SAFETY: live env; the name is passed with its length; `data` lives until the
        // finalizer added below (or is freed here if the function cannot be made).
        let made = napi::check_status!(unsafe {
            sys::napi_create_function(
                env.raw(),
                name.as_ptr().cast(),
                name.len() as _,
                Some(fast_call),
                data,
                &mut f,
            )
        });
        if let Err(e) = made {
            // SAFETY: `data` was not handed to any function.
            drop(unsafe { Box::from_raw(data as *mut Fast) });
            return Err(e);
        }
        // SAFETY: `f` is the function just created; its finalizer takes back `data`.
        napi::check_status!(unsafe {
            sys::napi_add_finalizer(
                env.raw(),
                f,
                data,
                Some(drop_fast),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        })?;
        // SAFETY: `f` is a function.
        Ok(unsafe { napi::JsFunction::from_raw_unchecked(env.raw(), f) })
    }

    /// For the tests (Node cannot fork): forks the process; the child asks this generator for
    /// an ID, reports the error code it got (`""` for an ID) through a pipe and exits at once.
    /// Returns what the child reported. (A #[napi] impl registers every method it declares:
    /// the method is on every platform, the probe only where there is fork().)
    #[napi(skip_typescript, js_name = "_forkProbe")]
    pub fn fork_probe(&self) -> napi::Result<String> {
        fork_probe(&self.inner)
    }

    /// `Generator(<layout>, node=..., <options>)`.
    #[napi]
    #[allow(clippy::inherent_to_string)]
    pub fn to_string(&self) -> String {
        format!("{:?}", self.inner)
    }
}

/// The fork probe of [`JsGenerator::fork_probe`].
#[cfg(unix)]
fn fork_probe(generator: &Generator) -> napi::Result<String> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(napi::Error::from_reason("pipe() failed"));
    }
    // SAFETY: the child only does what is safe after fork() in a threaded process: the
    // generator's fork check (atomics), write() and _exit().
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let code = match generator.next_id() {
            Ok(_) => "",
            Err(e) => e.kind().code(),
        };
        // SAFETY: writes a static string to the pipe, then leaves without running any
        // destructor or atexit handler of the parent's copy.
        unsafe {
            libc::write(fds[1], code.as_ptr().cast(), code.len());
            libc::_exit(0);
        }
    }
    // SAFETY: closing our copy of the write end lets read() see the end of the data.
    unsafe { libc::close(fds[1]) };
    let mut buf = [0u8; 64];
    let mut len = 0;
    while pid > 0 && len < buf.len() {
        // SAFETY: reads into the rest of `buf`.
        let n = unsafe { libc::read(fds[0], buf[len..].as_mut_ptr().cast(), buf.len() - len) };
        if n <= 0 {
            break;
        }
        len += n as usize;
    }
    // SAFETY: plain descriptor and process calls.
    unsafe {
        libc::close(fds[0]);
        if pid > 0 {
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
    }
    if pid < 0 {
        return Err(napi::Error::from_reason("fork() failed"));
    }
    Ok(String::from_utf8_lossy(&buf[..len]).into_owned())
}

/// There is no fork() to probe.
#[cfg(not(unix))]
fn fork_probe(_: &Generator) -> napi::Result<String> {
    Err(napi::Error::from_reason("_forkProbe: this system has no fork()"))
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
            let reason = e.to_string();
            // Shaped into a JS error in `reject`, on the JS thread that owns the env.
            self.error = Some(e);
            napi::Error::from_reason(reason)
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

/// Which call a fast function makes.
#[derive(Clone, Copy)]
enum FastCall {
    NextId,
    TryNextId,
    NextIdString,
}

/// What a fast function holds.
struct Fast {
    generator: Arc<Generator>,
    call: FastCall,
}

/// `nextId` / `tryNextId` / `nextIdString` as plain N-API functions whose data pointer is
/// the generator: a call skips napi-rs's class dispatch (`napi_unwrap` of `this` and its
/// argument handling), which measured at more than half of a `nextId()` call. Each function
/// owns a `Fast` (an `Arc` of the generator), freed by its finalizer, so it may outlive the
/// object it was read from.
unsafe extern "C" fn fast_call(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let mut data = std::ptr::null_mut();
    // SAFETY: napi hands us a live env and callback info; we ask only for the data pointer.
    let status = unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut data,
        )
    };
    if status != sys::Status::napi_ok || data.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: `data` is the `Box<Fast>` given to `napi_create_function`, alive until the
    // function's finalizer runs.
    let fast = unsafe { &*(data as *const Fast) };
    let result = match fast.call {
        FastCall::NextId | FastCall::NextIdString => fast.generator.next_id(),
        FastCall::TryNextId => fast.generator.try_next_id(),
    };
    match result {
        Ok(id) => {
            let mut out = std::ptr::null_mut();
            if let FastCall::NextIdString = fast.call {
                let text = encode(id, Encoding::Decimal, false);
                // SAFETY: live env; ASCII digits passed with their length.
                unsafe {
                    sys::napi_create_string_latin1(env, text.as_ptr().cast(), text.len() as _, &mut out)
                };
            } else {
                // SAFETY: live env; `out` receives the bigint.
                unsafe { sys::napi_create_bigint_uint64(env, id, &mut out) };
            }
            out
        }
        Err(e) => {
            // SAFETY: live env, no exception pending (core does not call into JS).
            unsafe { napi::JsError::from(core_error(env, e)).throw_into(env) };
            std::ptr::null_mut()
        }
    }
}

unsafe extern "C" fn drop_fast(
    _env: sys::napi_env,
    data: *mut std::ffi::c_void,
    _hint: *mut std::ffi::c_void,
) {
    // SAFETY: `data` came from `Box::into_raw` in `fast_function`; napi runs a finalizer once.
    drop(unsafe { Box::from_raw(data as *mut Fast) });
}
