//! `Layout`, `Parts` and `Field`: core's layouts in Python's terms. Parsing, decoding,
//! composing and the range-query bounds are core's; this file converts arguments and results.

use crate::error::{type_error, Error};
use crate::time::{to_datetime, unix_ms};
use crate::value::text_of;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{IntoPyDict, PyDict, PyString, PyTuple, PyType};
use snowflake_core::{FieldKind, Node, MAX_FIELDS, PRESETS};

/// A layout: which bits of an ID hold the time, the sequence and each node field, with the
/// epoch and the tick.
///
/// ``Layout(spec)`` accepts a preset name (``"twitter"``, ``"discord"``, ``"instagram"``,
/// ``"sonyflake"``, ``"baidu"``, ``"mastodon"``, ``"game"``, ``"js53"``) or the text form
/// ``"time:41,datacenter:5,worker:5,sequence:12;epoch=1288834974657;tick=1ms"`` (fields from
/// the most significant bit down; ``epoch=`` in Unix ms or RFC 3339 UTC; ``tick=`` ``Nms`` or
/// ``Ns``). ``str(layout)`` is the canonical form, which parses back to an equal layout.
/// Raises :class:`LayoutError` (a ``ValueError``) naming what is wrong with a bad spec.
#[pyclass(name = "Layout", module = "libsnowflake", frozen)]
#[derive(Clone, Copy)]
pub struct PyLayout(pub snowflake_core::Layout);

impl From<snowflake_core::Layout> for PyLayout {
    fn from(l: snowflake_core::Layout) -> PyLayout {
        PyLayout(l)
    }
}

impl From<PyLayout> for snowflake_core::Layout {
    fn from(l: PyLayout) -> snowflake_core::Layout {
        l.0
    }
}

/// `uuid.UUID`, imported once.
fn uuid_class(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    static UUID: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    UUID.import(py, "uuid", "UUID")
}

/// A layout from a `Layout` or a spec string (what `Generator(layout=...)` accepts).
pub fn layout_arg(value: &Bound<'_, PyAny>) -> PyResult<snowflake_core::Layout> {
    if let Ok(l) = value.cast::<PyLayout>() {
        return Ok(l.get().0);
    }
    if let Ok(s) = value.cast::<PyString>() {
        return Ok(snowflake_core::Layout::parse(&text_of(s)?).map_err(Error)?);
    }
    Err(type_error("layout", "a Layout or a spec string such as \"twitter\"", value))
}

/// Node values from a mapping (`{"worker": 3}`), the text form (`"worker=3,datacenter=1"`)
/// or `None` (all zero), checked by core against the layout.
pub fn node_arg<'py>(layout: &snowflake_core::Layout, value: Option<&Bound<'py, PyAny>>) -> PyResult<Node> {
    let value = match value {
        None => return Ok(Node::default()),
        Some(v) if v.is_none() => return Ok(Node::default()),
        Some(v) => v,
    };
    if let Ok(s) = value.cast::<PyString>() {
        return Ok(layout.parse_node(&text_of(s)?).map_err(Error)?);
    }
    // Each name, its value, and the text a value of text is read into.
    let mut given: Vec<(Bound<'py, PyString>, Bound<'py, PyAny>, Option<String>)> =
        Vec::with_capacity(MAX_FIELDS);
    let mut add = |name: Bound<'py, PyAny>, v: Bound<'py, PyAny>| -> PyResult<()> {
        let name = name
            .cast_into::<PyString>()
            .map_err(|e| type_error("node field name", "a str", e.into_inner().as_any()))?;
        given.push((name, v, None));
        Ok(())
    };
    if let Ok(d) = value.cast::<PyDict>() {
        // A dict's pairs in place (its `items()` would make a view and a tuple a pair: a
        // generator is made per request).
        for (name, v) in d.iter() {
            add(name, v)?;
        }
    } else if value.hasattr("items")? {
        for item in value.call_method0("items")?.try_iter()? {
            let (name, v): (Bound<'py, PyAny>, Bound<'py, PyAny>) = item?.extract()?;
            add(name, v)?;
        }
    } else {
        return Err(type_error("node", "a mapping such as {\"worker\": 3}", value));
    }
    // Core checks each value against its field (a float, a bool, a negative number: a typed
    // error naming the field), as for every front end.
    let mut pairs = Vec::with_capacity(given.len());
    for (name, v, text) in given.iter_mut() {
        pairs.push((text_of(name)?, crate::value::value_of(v, text)?));
    }
    Ok(layout.node_from_values(pairs.iter().map(|(n, v)| (&**n, *v))).map_err(Error)?)
}

/// The node values of `node` as a dict, in layout order.
pub fn node_dict<'py>(
    py: Python<'py>,
    layout: &snowflake_core::Layout,
    node: &Node,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, v) in layout.node_values(node) {
        d.set_item(name, v)?;
    }
    Ok(d)
}

#[pymethods]
impl PyLayout {
    #[new]
    #[pyo3(signature = (spec))]
    fn new(spec: &Bound<'_, PyAny>) -> PyResult<Self> {
        let s = spec.cast::<PyString>().map_err(|_| type_error("spec", "a str such as \"twitter\"", spec))?;
        Ok(PyLayout(snowflake_core::Layout::parse(&s.to_cow()?).map_err(Error)?))
    }

    /// The presets by name, in the order of the documentation: ``{"twitter": Layout(...), ...}``.
    #[staticmethod]
    fn presets(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
        let d = PyDict::new(py);
        for (name, spec) in PRESETS {
            d.set_item(name, PyLayout(snowflake_core::Layout::parse(spec).map_err(Error)?))?;
        }
        Ok(d)
    }

    /// The epoch, in Unix milliseconds.
    #[getter]
    fn epoch_ms(&self) -> u64 {
        self.0.epoch_ms()
    }

    /// The length of a tick, in milliseconds.
    #[getter]
    fn tick_ms(&self) -> u64 {
        self.0.tick_ms()
    }

    /// The sum of the field widths: every ID is below ``2 ** total_bits``.
    #[getter]
    fn total_bits(&self) -> u8 {
        self.0.total_bits()
    }

    /// How many IDs one node can issue in one tick: ``2 ** sequence_bits``.
    #[getter]
    fn capacity_per_tick(&self) -> u64 {
        self.0.capacity_per_tick()
    }

    /// The last instant the layout can represent, in Unix milliseconds.
    #[getter]
    fn last_unix_ms(&self) -> u64 {
        self.0.last_unix_ms()
    }

    /// The largest ID of the layout: ``2 ** total_bits - 1``.
    #[getter]
    fn max_value(&self) -> u64 {
        self.0.max_value()
    }

    /// A stable 64-bit fingerprint (FNV-1a of the canonical text), the same in every language.
    #[getter]
    fn fingerprint(&self) -> u64 {
        self.0.fingerprint()
    }

    /// The fields, from the most significant bit down.
    #[getter]
    fn fields(&self) -> Vec<PyField> {
        self.0.fields().iter().map(|f| PyField(*f)).collect()
    }

    /// The names of the node fields (every field but ``time`` and ``sequence``), high to low.
    #[getter]
    fn node_fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.0.node_fields().map(|(_, f)| f.name()).collect::<Vec<_>>())
    }

    /// The parts of ``id``: its time, sequence and node field values. Raises
    /// :class:`InvalidIdError` when ``id`` has bits set above the layout's width.
    #[pyo3(signature = (id))]
    fn decode(&self, id: &Bound<'_, PyAny>) -> PyResult<PyParts> {
        let p = self.0.decode(crate::value::whole_arg(id, "id", u64::MAX)?).map_err(Error)?;
        let fields = self.0.node_values(&p.node).map(|(n, v)| (n.to_owned(), v)).collect();
        Ok(PyParts { id: p.id, unix_ms: p.unix_ms, tick: p.tick, sequence: p.sequence, fields })
    }

    /// The ID of the instant ``time`` (Unix ms or an aware ``datetime``; any instant of its
    /// tick), the node ``fields`` (a mapping naming every node field, or none) and ``sequence``. Raises
    /// :class:`ValueRangeError` for a value that does not fit its field and
    /// :class:`TimeRangeError` for an instant outside the layout.
    #[pyo3(signature = (time, fields = None, sequence = 0))]
    fn compose(
        &self,
        time: &Bound<'_, PyAny>,
        fields: Option<&Bound<'_, PyAny>>,
        sequence: u64,
    ) -> PyResult<u64> {
        let ms = unix_ms(time)?;
        let node = node_arg(&self.0, fields)?;
        Ok(self.0.compose(ms, &node, sequence).map_err(Error)?)
    }

    /// The smallest ID of the tick holding ``time`` (Unix ms or an aware ``datetime``): with
    /// :meth:`max_id`, the bounds of ``WHERE id BETWEEN min_id(a) AND max_id(b)``.
    #[pyo3(signature = (time))]
    fn min_id(&self, time: &Bound<'_, PyAny>) -> PyResult<u64> {
        Ok(self.0.min_id(unix_ms(time)?).map_err(Error)?)
    }

    /// The largest ID of the tick holding ``time`` (Unix ms or an aware ``datetime``).
    #[pyo3(signature = (time))]
    fn max_id(&self, time: &Bound<'_, PyAny>) -> PyResult<u64> {
        Ok(self.0.max_id(unix_ms(time)?).map_err(Error)?)
    }

    /// The UUIDv7 view of ``id``, a :class:`uuid.UUID`: version 7, RFC 9562's variant, the
    /// ID's Unix-ms time in its 48-bit timestamp (what PostgreSQL's ``uuid_extract_timestamp``
    /// and every UUIDv7 tool read) and the ID's other bits after it. Lossless
    /// (``from_uuid(to_uuid(id)) == id``) and order-preserving within the layout. Raises
    /// :class:`InvalidIdError` for an ID outside the layout and :class:`TimeRangeError` for
    /// one past 2^48 - 1 Unix ms (the year 10889).
    #[pyo3(signature = (id))]
    #[allow(clippy::wrong_self_convention)] // the public names every front end shares (a layout's view)
    fn to_uuid<'py>(&self, py: Python<'py>, id: &Bound<'_, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let uuid = self.0.to_uuid(crate::value::whole_arg(id, "id", u64::MAX)?).map_err(Error)?;
        uuid_class(py)?.call((), Some(&[("int", uuid)].into_py_dict(py)?))
    }

    /// The ID whose UUIDv7 view is ``uuid`` (a :class:`uuid.UUID` or its 36-character text).
    /// Raises :class:`InvalidIdError` for a UUID that no ID of this layout maps to (another
    /// version or variant, a random UUIDv7; another layout's view only where its shape
    /// differs: the view does not record the layout, docs/layouts.md).
    #[pyo3(signature = (uuid))]
    #[allow(clippy::wrong_self_convention)] // the public names every front end shares (a layout's view)
    fn from_uuid(&self, uuid: &Bound<'_, PyAny>) -> PyResult<u64> {
        let value: u128 = if uuid.is_instance(uuid_class(uuid.py())?)? {
            uuid.getattr("int")?.extract()?
        } else if let Ok(s) = uuid.cast::<PyString>() {
            snowflake_core::parse_uuid(&s.to_cow()?).map_err(Error)?
        } else {
            return Err(type_error("uuid", "a uuid.UUID or its text", uuid));
        };
        Ok(self.0.from_uuid(value).map_err(Error)?)
    }

    /// The layout's Lua script for Redis, for clients that have no binding (the text of
    /// ``snowflake redis-script --layout SPEC``). Load it with ``SCRIPT LOAD`` and call
    /// ``EVALSHA <sha1> 1 <state-key> <node values in layout order>``: it returns the ID as a
    /// decimal string. Semantics of a generator with ``max_drift_ms=0, max_wait_ms=0``: a full
    /// tick or a clock behind the stored tick is an error reply
    /// (``ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED retry_after_ms=N``, ``ERR_SNOWFLAKE_CLOCK_BEHIND ...``).
    fn redis_script(&self) -> String {
        snowflake_core::redis_script(&self.0)
    }

    /// Whether this layout fits a fleet: ``hosts`` issuing IDs, ``processes_per_host`` each,
    /// ``peak_per_second`` IDs a second per host, for ``years`` from now; and which way to
    /// coordinate (``advice``: ``"shared"``, ``"lease per process"``, ``"lease per host"`` or
    /// ``"does not fit"``). Core's planner (``snowflake plan``): a dict of its figures.
    #[pyo3(signature = (*, hosts, processes_per_host = 1, peak_per_second, years))]
    fn plan<'py>(
        &self,
        py: Python<'py>,
        hosts: u64,
        processes_per_host: u64,
        peak_per_second: u64,
        years: u64,
    ) -> PyResult<Bound<'py, PyDict>> {
        use snowflake_core::plan::{plan, Fleet, PlanValue};
        use snowflake_core::Clock;
        let fleet = Fleet { hosts, processes_per_host, peak_per_second, years };
        let p = plan(&self.0, &fleet, snowflake_core::SystemClock.now_ms());
        let d = PyDict::new(py);
        for (name, value) in p.entries() {
            match value {
                PlanValue::Count(n) => d.set_item(name, n)?,
                PlanValue::Number(x) => d.set_item(name, x)?,
                PlanValue::Bool(b) => d.set_item(name, b)?,
                PlanValue::UnixMs(ms) => d.set_item(name, ms)?,
                PlanValue::Text(t) => d.set_item(name, t)?,
            }
        }
        Ok(d)
    }

    /// SQL that installs this layout's ID functions in a database (the text of
    /// ``snowflake sql --layout SPEC --dialect postgres``): for ``dialect="postgres"`` (12 or
    /// later), ``PREFIX_next_id(<node values in layout order>)``, ``PREFIX_next_id_at(...,
    /// unix_ms)``, ``PREFIX_min_id(timestamptz)``, ``PREFIX_max_id(timestamptz)`` and
    /// ``PREFIX_decode(bigint)``. Raises :class:`ValueRangeError` for a 64-bit layout (PostgreSQL's
    /// ``bigint`` is signed), an unknown dialect or a bad prefix.
    #[pyo3(signature = (dialect, *, prefix = "snowflake"))]
    fn sql(&self, dialect: &str, prefix: &str) -> Result<String, Error> {
        Ok(snowflake_core::sql(&self.0, dialect.parse()?, prefix)?)
    }

    fn __str__(&self) -> String {
        self.0.to_string()
    }

    fn __repr__(&self) -> String {
        format!("Layout('{}')", self.0)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<PyLayout>().is_ok_and(|o| o.get().0 == self.0)
    }

    fn __hash__(&self) -> u64 {
        self.0.fingerprint()
    }

    /// Pickles as its canonical text (layouts travel to `spawn`ed processes).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        Ok((slf.get_type().into_any(), (slf.get().0.to_string(),)))
    }
}

/// One bit field of a layout: ``name``, ``bits``, ``shift`` (its lowest bit's position),
/// ``kind`` (``"time"``, ``"sequence"`` or ``"node"``) and ``max`` (``2 ** bits - 1``).
#[pyclass(name = "Field", module = "libsnowflake", frozen)]
#[derive(Clone, Copy)]
pub struct PyField(snowflake_core::Field);

#[pymethods]
impl PyField {
    /// The field's name.
    #[getter]
    fn name(&self) -> &str {
        self.0.name()
    }
    /// The field's width in bits.
    #[getter]
    fn bits(&self) -> u8 {
        self.0.bits()
    }
    /// The position of the field's lowest bit in the ID.
    #[getter]
    fn shift(&self) -> u8 {
        self.0.shift()
    }
    /// ``"time"``, ``"sequence"`` or ``"node"``.
    #[getter]
    fn kind(&self) -> &'static str {
        match self.0.kind() {
            FieldKind::Time => "time",
            FieldKind::Sequence => "sequence",
            FieldKind::Node => "node",
        }
    }
    /// The largest value the field holds: ``2 ** bits - 1``.
    #[getter]
    fn max(&self) -> u64 {
        self.0.max()
    }
    fn __repr__(&self) -> String {
        format!(
            "Field(name='{}', bits={}, shift={}, kind='{}')",
            self.0.name(),
            self.0.bits(),
            self.0.shift(),
            self.kind()
        )
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<PyField>().is_ok_and(|o| o.get().0 == self.0)
    }
    fn __hash__(&self) -> u64 {
        u64::from(self.0.shift()) << 8 | u64::from(self.0.bits())
    }
}

/// The parts of a decoded ID (immutable): ``id``, ``unix_ms`` (the start of its tick),
/// ``tick`` (ticks since the epoch), ``sequence``, ``fields`` (node field values by name)
/// and ``datetime`` (``unix_ms`` as a timezone-aware UTC ``datetime``).
#[pyclass(name = "Parts", module = "libsnowflake", frozen)]
#[derive(PartialEq, Eq)]
pub struct PyParts {
    id: u64,
    unix_ms: u64,
    tick: u64,
    sequence: u64,
    fields: Vec<(String, u64)>,
}

#[pymethods]
impl PyParts {
    /// The ID.
    #[getter]
    fn id(&self) -> u64 {
        self.id
    }
    /// The start of the ID's tick, in Unix milliseconds.
    #[getter]
    fn unix_ms(&self) -> u64 {
        self.unix_ms
    }
    /// Ticks since the layout's epoch.
    #[getter]
    fn tick(&self) -> u64 {
        self.tick
    }
    /// The sequence number within the tick.
    #[getter]
    fn sequence(&self) -> u64 {
        self.sequence
    }
    /// The node field values by name, in layout order (a new dict on each access).
    #[getter]
    fn fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (n, v) in &self.fields {
            d.set_item(n, v)?;
        }
        Ok(d)
    }
    /// ``unix_ms`` as a timezone-aware UTC ``datetime``.
    #[getter]
    fn datetime<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_datetime(py, self.unix_ms)
    }
    fn __repr__(&self) -> String {
        let fields: Vec<String> = self.fields.iter().map(|(n, v)| format!("'{n}': {v}")).collect();
        format!(
            "Parts(id={}, unix_ms={}, tick={}, sequence={}, fields={{{}}})",
            self.id,
            self.unix_ms,
            self.tick,
            self.sequence,
            fields.join(", ")
        )
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<PyParts>().is_ok_and(|o| *o.get() == *self)
    }
    fn __hash__(&self) -> u64 {
        self.id
    }
}
