//! `Layout`: parses a spec (or preset name) with core's `Layout::parse`, and forwards decode,
//! compose and the range-query bounds.

use crate::convert::{arg, is_plain_object, opt_arg, u64_to_js, Id, Object, Str, Uint, UnixMs};
use crate::error::{core_error_at, type_error, OrThrow};
use napi::{Env, JsObject, JsUnknown};
use napi_derive::napi;
use snowflake_core::{FieldKind, Layout, Node, PRESETS};

/// One bit field of a layout, from the most significant down.
#[napi(object, object_from_js = false)]
pub struct FieldInfo {
    /// `time`, `sequence` or a node field's name.
    pub name: String,
    /// Width in bits.
    pub bits: u32,
    /// Position of the field's lowest bit.
    pub shift: u32,
    /// What the field holds.
    #[napi(ts_type = "'time' | 'sequence' | 'node'")]
    pub kind: String,
}

/// The parts of a decoded ID.
#[napi(object, object_from_js = false)]
pub struct Parts {
    /// The start of the ID's tick, in Unix milliseconds.
    pub unix_ms: f64,
    /// Ticks since the layout's epoch.
    pub tick: f64,
    /// The sequence number within the tick.
    pub sequence: f64,
    /// The node field values, by name, from the most significant field down.
    #[napi(ts_type = "Record<string, number>")]
    pub fields: JsObject,
    /// `unixMs` as a `Date`.
    #[napi(ts_type = "Date")]
    pub date: JsUnknown,
}

/// A layout: which bits of an ID hold the time, the sequence and each node field, its epoch
/// and its tick. `new Layout('twitter')`, or a spec such as
/// `'time:41,datacenter:5,worker:5,sequence:12;epoch=1288834974657;tick=1ms'`.
#[napi(js_name = "Layout")]
pub struct JsLayout {
    pub(crate) inner: Layout,
}

impl From<Layout> for JsLayout {
    fn from(inner: Layout) -> Self {
        JsLayout { inner }
    }
}

impl From<&JsLayout> for Layout {
    fn from(l: &JsLayout) -> Layout {
        l.inner
    }
}

/// Node values from an object such as `{ datacenter: 1, worker: 3 }`, or the text form
/// `'datacenter=1,worker=3'` that C, Python, PHP, the CLI and `SNOWFLAKE_NODE` take (read by
/// core): every node field of the layout, or none (`{}`, `''`) for all zeros. `at` names the
/// argument in messages.
pub(crate) fn node_from(
    layout: &Layout,
    env: &Env,
    fields: Option<JsUnknown>,
    at: &str,
) -> napi::Result<Node> {
    let Some(fields) = fields else {
        return Ok(Node::default());
    };
    let raw = crate::convert::raw(&fields);
    if crate::convert::type_of(env.raw(), raw)? == napi::sys::ValueType::napi_string {
        let text: Str = arg(env, fields, at)?;
        return layout.parse_node(&text.0).map_err(|e| core_error_at(env.raw(), at, e));
    }
    if !is_plain_object(env.raw(), raw)? {
        return Err(type_error(
            env.raw(),
            at,
            "node values are a plain object ({ datacenter: 1, worker: 3 }) or a string ('datacenter=1,worker=3')",
            raw,
        ));
    }
    let fields: Object = arg(env, fields, at)?;
    // A key whose value is `undefined` is left out, as JS spreads and defaults expect.
    let mut keys = Vec::new();
    let mut raw = Vec::new();
    for key in fields.keys()? {
        if let Some(v) = fields.get(&key)? {
            keys.push(key);
            raw.push(v);
        }
    }
    let mut texts: Vec<Option<String>> = vec![None; keys.len()];
    // Core checks each value against its field: a fraction, NaN, a boolean or a negative
    // number is an error naming the field, as in every front end.
    let mut values = Vec::with_capacity(keys.len());
    for (v, text) in raw.into_iter().zip(texts.iter_mut()) {
        values.push(crate::convert::value_of(env.raw(), v, text)?);
    }
    layout
        .node_from_values(keys.iter().map(String::as_str).zip(values))
        .map_err(|e| core_error_at(env.raw(), at, e))
}

#[napi]
impl JsLayout {
    /// Parses a spec or a preset name; throws `ERR_SNOWFLAKE_LAYOUT` naming the problem.
    #[napi(constructor, ts_args_type = "spec: string")]
    pub fn new(env: Env, spec: JsUnknown) -> napi::Result<Self> {
        let spec: Str = arg(&env, spec, "new Layout(spec)")?;
        Layout::parse(&spec.0).or_throw(&env).map(JsLayout::from)
    }

    /// The presets: name -> canonical spec.
    #[napi(ts_return_type = "Record<string, string>")]
    pub fn presets(env: Env) -> napi::Result<JsObject> {
        let mut out = env.create_object()?;
        for (name, spec) in PRESETS {
            let canonical = Layout::parse(spec).or_throw(&env)?.to_string();
            out.set_named_property(name, env.create_string(&canonical)?)?;
        }
        Ok(out)
    }

    /// The canonical spec (integer epoch, `tick=` always written); parsing it gives this
    /// layout back.
    #[napi]
    #[allow(clippy::inherent_to_string)]
    pub fn to_string(&self) -> String {
        self.inner.to_string()
    }

    /// The layout's Lua script for Redis, for clients that have no binding (the text of
    /// `snowflake redis-script --layout SPEC`): load it with `SCRIPT LOAD` and call
    /// `EVALSHA <sha1> 1 <state-key> <node values in layout order>`; it returns the ID as a
    /// decimal string (`BigInt(reply)`).
    #[napi]
    pub fn redis_script(&self) -> String {
        snowflake_core::redis_script(&self.inner)
    }

    /// Whether this layout fits a fleet: `hosts` issuing IDs, `processesPerHost` each,
    /// `peakPerSecond` IDs a second per host, for `years` from now; and which way to
    /// coordinate (`advice`). Core's planner (`snowflake plan`): an object of its figures.
    #[napi(
        ts_args_type = "fleet: { hosts: number, processesPerHost?: number, peakPerSecond: number, years: number }",
        ts_return_type = "{ nodeValues: number, hostsFit: boolean, processesFit: boolean, capacityPerSecond: number, hostCapacityPerSecond: number, peakShare: number, burstPerTick: number, lastUnixMs: number, yearsLeft: number, lasts: boolean, advice: 'shared' | 'lease per process' | 'lease per host' | 'does not fit' }"
    )]
    pub fn plan(&self, env: Env, fleet: JsUnknown) -> napi::Result<JsObject> {
        let fleet: Object = arg(&env, fleet, "layout.plan(fleet)")?;
        use snowflake_core::plan::{plan, Fleet, PlanValue};
        use snowflake_core::{Clock, Spelling, Value};
        let mut numbers = [0u64; 4];
        for (slot, (key, required)) in numbers.iter_mut().zip([
            ("hosts", true),
            ("processesPerHost", false),
            ("peakPerSecond", true),
            ("years", true),
        ]) {
            let mut text = None;
            let value = match fleet.get(key)? {
                Some(v) => crate::convert::value_of(env.raw(), v, &mut text)?,
                None => Value::Unset,
            };
            *slot = match value {
                Value::Unset if !required => 1,
                v => v
                    .whole(key, 0, u64::MAX)
                    .map_err(|e| core_error_at(env.raw(), "layout.plan(fleet)", e))?,
            };
        }
        let [hosts, processes_per_host, peak_per_second, years] = numbers;
        let fleet = Fleet { hosts, processes_per_host, peak_per_second, years };
        let p = plan(&self.inner, &fleet, snowflake_core::SystemClock.now_ms());
        let mut out = env.create_object()?;
        for (name, value) in p.entries() {
            let key = Spelling::Camel.spell(name);
            match value {
                PlanValue::Count(n) | PlanValue::UnixMs(n) => {
                    out.set_named_property(key.as_str(), u64_to_js(&env, n)?)?
                }
                PlanValue::Number(x) => out.set_named_property(key.as_str(), env.create_double(x)?)?,
                PlanValue::Bool(b) => out.set_named_property(key.as_str(), env.get_boolean(b)?)?,
                PlanValue::Text(t) => out.set_named_property(key.as_str(), env.create_string(t)?)?,
            }
        }
        Ok(out)
    }

    /// The SQL that installs this layout's ID functions in a database (the text of
    /// `snowflake sql --layout SPEC`): for `'postgres'` (12 or later),
    /// `PREFIX_next_id(<node values in layout order>)`, `PREFIX_next_id_at(..., unix_ms)`,
    /// `PREFIX_min_id(timestamptz)`, `PREFIX_max_id(timestamptz)` and `PREFIX_decode(bigint)`.
    /// Throws `ERR_SNOWFLAKE_VALUE` for a 64-bit layout (PostgreSQL's bigint is signed), an
    /// unknown dialect or a bad prefix (default `'snowflake'`).
    #[napi(ts_args_type = "dialect: 'postgres', prefix?: string")]
    pub fn sql(&self, env: Env, dialect: JsUnknown, prefix: Option<JsUnknown>) -> napi::Result<String> {
        let dialect: Str = arg(&env, dialect, "layout.sql(dialect)")?;
        let prefix: Option<Str> = opt_arg(&env, prefix, "layout.sql(dialect, prefix)")?;
        let dialect = dialect.0.parse::<snowflake_core::SqlDialect>().or_throw(&env)?;
        let prefix = prefix.map_or(snowflake_core::DEFAULT_SQL_PREFIX.to_string(), |p| p.0);
        snowflake_core::sql(&self.inner, dialect, &prefix).or_throw(&env)
    }

    /// The parts of `id` (a bigint, a decimal string such as `pg` returns for a `BIGINT`, or a
    /// safe-integer number); throws `ERR_SNOWFLAKE_INVALID_ID` for a malformed string or when
    /// `id` has bits above the layout's width.
    #[napi(ts_args_type = "id: bigint | string | number")]
    pub fn decode(&self, env: Env, id: JsUnknown) -> napi::Result<Parts> {
        let id: Id = arg(&env, id, "layout.decode(id)")?;
        let parts = self.inner.decode(id.0).or_throw(&env)?;
        let mut fields = env.create_object()?;
        for (name, value) in self.inner.node_values(&parts.node) {
            fields.set_named_property(name, u64_to_js(&env, value)?)?;
        }
        Ok(Parts {
            unix_ms: parts.unix_ms as f64,
            tick: parts.tick as f64,
            sequence: parts.sequence as f64,
            fields,
            date: env.create_date(parts.unix_ms as f64)?.into_unknown(),
        })
    }

    /// The ID of instant `t` (any instant of its tick), node `fields` (every node field, or
    /// none for all zeros; an object or the text `'datacenter=1,worker=3'`) and `sequence`,
    /// each checked against its range.
    #[napi(
        ts_args_type = "t: number | Date, fields?: Record<string, number | bigint> | string, sequence?: number | bigint"
    )]
    pub fn compose(
        &self,
        env: Env,
        t: JsUnknown,
        fields: Option<JsUnknown>,
        sequence: Option<JsUnknown>,
    ) -> napi::Result<u64> {
        let t: UnixMs = arg(&env, t, "layout.compose(t)")?;
        let node = node_from(&self.inner, &env, fields, "layout.compose(t, fields)")?;
        let sequence: Option<Uint> = opt_arg(&env, sequence, "layout.compose(t, fields, sequence)")?;
        self.inner.compose(t.0, &node, sequence.map_or(0, |s| s.0)).or_throw(&env)
    }

    /// The UUIDv7 view of `id` (a bigint, a decimal string or a safe-integer number; 36
    /// lowercase characters): version 7, RFC 9562's variant, the ID's Unix-ms time in its 48-bit
    /// timestamp (what PostgreSQL's `uuid_extract_timestamp` and every UUIDv7 tool read), the
    /// ID's other bits after it. Lossless (`fromUuid(toUuid(id)) === id`) and sorted as the IDs
    /// are.
    #[napi(ts_args_type = "id: bigint | string | number")]
    #[allow(clippy::wrong_self_convention)] // the public names every front end shares (a layout's view)
    pub fn to_uuid(&self, env: Env, id: JsUnknown) -> napi::Result<String> {
        let id: Id = arg(&env, id, "layout.toUuid(id)")?;
        let uuid = self.inner.to_uuid(id.0).or_throw(&env)?;
        Ok(snowflake_core::format_uuid(uuid).to_string())
    }

    /// The ID whose UUIDv7 view is `uuid` (its 36-character text, either case); throws
    /// `ERR_SNOWFLAKE_INVALID_ID` for a UUID that no ID of this layout maps to.
    #[napi(ts_args_type = "uuid: string")]
    #[allow(clippy::wrong_self_convention)] // the public names every front end shares (a layout's view)
    pub fn from_uuid(&self, env: Env, uuid: JsUnknown) -> napi::Result<u64> {
        let uuid: Str = arg(&env, uuid, "layout.fromUuid(uuid)")?;
        let value = snowflake_core::parse_uuid(&uuid.0).or_throw(&env)?;
        self.inner.from_uuid(value).or_throw(&env)
    }

    /// The smallest ID of the tick holding `t`: with `maxId`, the bounds of a
    /// `WHERE id BETWEEN` range query.
    #[napi(ts_args_type = "t: number | Date")]
    pub fn min_id(&self, env: Env, t: JsUnknown) -> napi::Result<u64> {
        let t: UnixMs = arg(&env, t, "layout.minId(t)")?;
        self.inner.min_id(t.0).or_throw(&env)
    }

    /// The largest ID of the tick holding `t`.
    #[napi(ts_args_type = "t: number | Date")]
    pub fn max_id(&self, env: Env, t: JsUnknown) -> napi::Result<u64> {
        let t: UnixMs = arg(&env, t, "layout.maxId(t)")?;
        self.inner.max_id(t.0).or_throw(&env)
    }

    /// The fields, from the most significant down.
    #[napi(getter)]
    pub fn fields(&self) -> Vec<FieldInfo> {
        self.inner
            .fields()
            .iter()
            .map(|f| FieldInfo {
                name: f.name().to_owned(),
                bits: u32::from(f.bits()),
                shift: u32::from(f.shift()),
                kind: match f.kind() {
                    FieldKind::Time => "time",
                    FieldKind::Sequence => "sequence",
                    FieldKind::Node => "node",
                }
                .to_owned(),
            })
            .collect()
    }

    /// The epoch, in Unix milliseconds.
    #[napi(getter)]
    pub fn epoch_ms(&self) -> f64 {
        self.inner.epoch_ms() as f64
    }

    /// The length of a tick, in milliseconds.
    #[napi(getter)]
    pub fn tick_ms(&self) -> f64 {
        self.inner.tick_ms() as f64
    }

    /// The sum of the field widths; every ID is below `2n ** BigInt(totalBits)`.
    #[napi(getter)]
    pub fn total_bits(&self) -> u32 {
        u32::from(self.inner.total_bits())
    }

    /// How many IDs one node can issue in one tick.
    #[napi(getter)]
    pub fn capacity_per_tick(&self) -> f64 {
        self.inner.capacity_per_tick() as f64
    }

    /// The last instant the layout can represent, in Unix milliseconds.
    #[napi(getter)]
    pub fn last_unix_ms(&self) -> f64 {
        self.inner.last_unix_ms() as f64
    }

    /// A stable 64-bit fingerprint of the layout (equal layouts, equal fingerprints).
    #[napi(getter)]
    pub fn fingerprint(&self) -> u64 {
        self.inner.fingerprint()
    }
}
