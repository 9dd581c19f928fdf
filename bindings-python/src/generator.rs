//! `Generator`, `Block` and `Stats`: core's generator in Python's terms.
//!
//! # The GIL
//! Every call into the core generator is made while attached to the interpreter (holding the
//! GIL). The generator reads the time through [`PyClock`], whose `wait_until_ms` detaches for
//! the wait, so a thread waiting for the next tick (a full tick, a clock behind) never holds
//! up the others. Nothing else blocks; large batches are copied out detached too.
//!
//! # fork()
//! Core handles fork() for every binding (its `pthread_atfork` handler runs in `os.fork()`,
//! `multiprocessing` and gunicorn alike): it refuses to issue from a generator inherited
//! through `fork()`, and refuses to *re-create* in a child a generator its parent had (same
//! layout and node values), since the parent, or a sibling, may still issue from it; both
//! raise ForkedProcessError. Shared and leased generators keep working across fork().

use crate::error::{type_error, Error};
use crate::layout::{layout_arg, node_arg, node_dict, PyLayout};
use crate::time::unix_ms;
use crate::value::{value_of, whole_arg};
use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyCFunction, PyDict, PyList, PyString, PyType};
use snowflake_core::{
    Block, Clock, Environment, GivenOptions, MonotonicClock, SequenceStart, StatValue, Stats,
    MAX_IDS_PER_CALL, STATS,
};
use std::sync::Mutex;

/// The process's monotonic clock (that of core's default generators), waiting detached from
/// the interpreter.
#[derive(Clone, Copy, Debug)]
pub struct PyClock(MonotonicClock);

impl Default for PyClock {
    fn default() -> PyClock {
        PyClock(MonotonicClock::process())
    }
}

impl Clock for PyClock {
    #[inline]
    fn now_ms(&self) -> u64 {
        self.0.now_ms()
    }

    #[inline]
    fn now_ms_cached(&self) -> u64 {
        self.0.now_ms_cached()
    }

    #[inline]
    fn monotonic_offset_ms(&self) -> Option<i64> {
        self.0.monotonic_offset_ms()
    }

    fn wait_until_ms(&self, unix_ms: u64) {
        // Attached or not (a large `next_ids` fills detached), the wait lets other threads run.
        Python::attach(|py| py.detach(|| self.0.wait_until_ms(unix_ms)));
    }
}

fn array_class(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    static ARRAY: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    ARRAY.import(py, "array", "array")
}

/// A Snowflake ID generator: thread-safe, lock-free, and never repeating an ID.
///
/// ``layout`` is a :class:`Layout` or a spec; ``node`` maps the layout's node fields to this
/// process's values (``{"datacenter": 1, "worker": 3}``: every node field named; the text form
/// ``"datacenter=1,worker=3"`` works too). What is left unset comes from the environment: the
/// layout from ``SNOWFLAKE_LAYOUT`` (else ``"twitter"``), the node values from
/// ``SNOWFLAKE_NODE`` (else all zeros), each option not given from ``SNOWFLAKE_OPTIONS`` (the
/// options text); a malformed variable raises, naming it. ``stats().sources`` says where each
/// value came from.
///
/// The options are the keyword arguments of core's option table, one per option (the README's
/// "Every option" table, and this class's stub, list them with their types and defaults):
/// the policies when a tick is full or the clock goes back (``max_drift_ms``,
/// ``max_wait_ms``, ``rollover``, ...), and how the state is shared beyond this process
/// (``shared``, ``state_file``, ``lease``, ...). Core checks each: a wrong type or an unknown
/// name raises :class:`SnowflakeTypeError` (a ``TypeError``), a value out of range
/// :class:`ValueRangeError`, with the message every front end gives. ``options="..."`` takes
/// the same options as text, as C and ``SNOWFLAKE_OPTIONS`` write them
/// (``"lease=rediss://...;lease_password_file=/run/secrets/redis"``); keywords add to it, and
/// an option given both ways is refused. ``SNOWFLAKE_OPTIONS`` fills only the options the code
/// gives neither way: where both name a key, the code's value wins.
///
/// Every generator of a process with the same layout and node values shares one state, so
/// making a new one per request cannot repeat an ID; ``isolated=True`` gives a generator a
/// state of its own (for tests and :meth:`next_id_at` replays only: two isolated generators
/// with the same node values can issue the same IDs).
///
/// After ``fork()``, an inherited generator of one process raises
/// :class:`ForkedProcessError`, and so does making one with the parent's node values in the
/// child: a child needs its own node values (or a ``shared`` or ``lease`` generator).
#[pyclass(name = "Generator", module = "libsnowflake", frozen)]
pub struct PyGenerator {
    inner: snowflake_core::Generator<PyClock>,
    isolated: bool,
}

impl PyGenerator {
    /// `n` IDs through core's `fill`, a tick's capacity at a time, each chunk handed to
    /// `take` as soon as it is filled: turning IDs into Python objects happens while the
    /// next tick is awaited, so a batch on a layout whose capacity is the limit runs at it.
    fn fill_chunks(
        &self,
        py: Python<'_>,
        n: usize,
        mut take: impl FnMut(&[u64]) -> PyResult<()>,
    ) -> PyResult<()> {
        let chunk =
            usize::try_from(self.inner.layout().capacity_per_tick()).unwrap_or(usize::MAX).clamp(1, 1 << 16);
        let mut buf = vec![0u64; chunk.min(n)];
        let mut left = n;
        while left > 0 {
            let k = left.min(buf.len());
            // IDs written before a failure are dropped (never reissued): Python gets the error.
            self.inner.fill(&mut buf[..k]).map_err(|e| Error(e.error))?;
            take(&buf[..k])?;
            left -= k;
        }
        let _ = py;
        Ok(())
    }
}

#[pymethods]
impl PyGenerator {
    #[new]
    #[pyo3(signature = (layout = None, node = None, *, options = None, **keywords), text_signature = "(layout=None, node=None, *, options=None, **keywords)")]
    fn new(
        py: Python<'_>,
        layout: Option<&Bound<'_, PyAny>>,
        node: Option<&Bound<'_, PyAny>>,
        options: Option<&Bound<'_, PyAny>>,
        keywords: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        // What the arguments leave unset (None) comes from the environment (SNOWFLAKE_LAYOUT,
        // SNOWFLAKE_NODE, SNOWFLAKE_OPTIONS), then the defaults: core resolves it.
        let env = Environment::read().map_err(Error)?;
        let given_layout = match layout {
            Some(l) if !l.is_none() => Some(layout_arg(l)?),
            _ => None,
        };
        let (layout, layout_source) = env.layout(given_layout).map_err(Error)?;
        let node = match node {
            Some(n) if !n.is_none() => Some(node_arg(&layout, Some(n))?),
            _ => None,
        };
        let text = match options {
            Some(t) if !t.is_none() => match t.cast::<PyString>() {
                Ok(t) => crate::value::text_of(t)?.into_owned(),
                Err(_) => {
                    return Err(type_error("options", "a string of `key=value` pairs separated by `;`", t))
                }
            },
            _ => String::new(),
        };
        // Every option goes to core as it is: the text whole, each keyword one at a time.
        // Core's table checks names, types and ranges (the same checks, and messages, as every
        // other front end), and refuses an option given both ways; what the code gives neither
        // way comes from SNOWFLAKE_OPTIONS, key by key.
        let keywords: Vec<(String, Bound<'_, PyAny>)> = match keywords {
            Some(d) => d
                .iter()
                .map(|(k, v)| Ok((crate::value::text_of(k.cast::<PyString>()?)?.into_owned(), v)))
                .collect::<PyResult<_>>()?,
            None => Vec::new(),
        };
        let mut texts = vec![None; keywords.len()];
        let mut values = Vec::with_capacity(keywords.len());
        for ((key, value), text) in keywords.iter().zip(texts.iter_mut()) {
            values.push((key.as_str(), value_of(value, text)?));
        }
        let o = GivenOptions::parse_with_keywords(&text, values).map_err(Error)?;
        // Only the code sets `isolated` (SNOWFLAKE_OPTIONS may not).
        let isolated = o.options().isolated;
        // Files, locks, maybe Redis and a wait for a lease's floor: detached.
        let inner = py
            .detach(|| env.open(&layout, layout_source, node.as_ref(), &o))
            .map_err(Error)?
            .map_clock(PyClock);
        Ok(PyGenerator { inner, isolated })
    }

    /// The next ID. Waits for the clock (at most ``max_wait_ms``, without holding the GIL)
    /// when the tick is full or the clock is behind, then raises
    /// :class:`SequenceExhaustedError` or :class:`ClockBehindError`.
    fn next_id(&self) -> Result<u64, Error> {
        Ok(self.inner.next_id()?)
    }

    /// The next ID, for ``asyncio``: ``await generator.next_id_async()`` never blocks the
    /// event loop. An ID that is there at once is returned at once; when the tick is full or
    /// the clock is behind, :meth:`next_id` waits for the clock on the loop's default executor
    /// (at most ``max_wait_ms``, then raises as :meth:`next_id` does) while the loop runs on.
    fn next_id_async<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        static NEXT_ID_ASYNC: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        NEXT_ID_ASYNC.import(slf.py(), "libsnowflake._aio", "next_id_async")?.call1((slf,))
    }

    /// The next ID, never waiting: raises :class:`SequenceExhaustedError` or
    /// :class:`ClockBehindError` (with ``retry_after_ms``) at once where :meth:`next_id`
    /// would wait.
    fn try_next_id(&self) -> Result<u64, Error> {
        Ok(self.inner.try_next_id()?)
    }

    /// The next ID at the caller's clock reading ``time`` (Unix ms or an aware ``datetime``)
    /// instead of the system's: deterministic, for engines with their own time. Never waits.
    ///
    /// It continues the state that every generator with this layout and node values shares:
    /// a time behind it (by more than ``max_drift_ms``) raises :class:`ClockBehindError`,
    /// since an ID there could repeat one already issued; a time more than ``max_drift_ms``
    /// + 1 s ahead of the clock raises :class:`ValueRangeError`, since the state would stay
    /// there and lock every other caller out. Replays and backfills need a generator with
    /// ``isolated=True`` and node values of their own.
    #[pyo3(signature = (time))]
    fn next_id_at(&self, time: &Bound<'_, PyAny>) -> PyResult<u64> {
        Ok(self.inner.next_id_at(unix_ms(time)?).map_err(Error)?)
    }

    /// ``n`` new IDs, increasing, as a list. Takes a block of IDs per tick with one atomic
    /// operation; waits for the next tick like :meth:`next_id` (without holding the GIL).
    /// On an error, IDs already taken are dropped (never reissued). ``n`` is at most
    /// ``MAX_IDS_PER_CALL`` (2**28; more raises :class:`ValueRangeError` at once); a list that
    /// memory cannot hold raises ``MemoryError``.
    #[pyo3(signature = (n))]
    fn next_ids<'py>(&self, py: Python<'py>, n: &Bound<'_, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let n = whole_arg(n, "n", MAX_IDS_PER_CALL)? as usize;
        // The list's slots first, so that a count memory cannot hold is a MemoryError at once;
        // then each int, checked: a failed allocation raises, it never aborts the interpreter
        // (PyO3's conversion of a u64 panics on one).
        // SAFETY: PyList_New returns a new reference or NULL with an exception set.
        let list = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyList_New(n as ffi::Py_ssize_t)) }?
            .cast_into::<PyList>()?;
        let mut at: ffi::Py_ssize_t = 0;
        self.fill_chunks(py, n, |ids| {
            for &id in ids {
                // SAFETY: a new reference or NULL with an exception set; PyList_SetItem steals
                // it into slot `at` (< n) of the list made above, which nothing else holds yet.
                // A list dropped with empty slots (an error partway) is fine: they are NULL.
                unsafe {
                    let int = ffi::PyLong_FromUnsignedLongLong(id);
                    if int.is_null() || ffi::PyList_SetItem(list.as_ptr(), at, int) != 0 {
                        return Err(PyErr::fetch(py));
                    }
                }
                at += 1;
            }
            Ok(())
        })?;
        Ok(list)
    }

    /// ``n`` new IDs, increasing, as an ``array.array('Q')``: written straight into memory,
    /// without a Python object per ID (the fastest way to take many).
    #[pyo3(signature = (n))]
    fn next_ids_array<'py>(&self, py: Python<'py>, n: &Bound<'_, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let n = whole_arg(n, "n", MAX_IDS_PER_CALL)? as usize;
        let len = n * 8;
        let bytes = PyBytes::new_with(py, len, |buf| {
            let mut at = 0;
            self.fill_chunks(py, n, |ids| {
                for (slot, id) in buf[at..at + ids.len() * 8].chunks_exact_mut(8).zip(ids) {
                    slot.copy_from_slice(&id.to_ne_bytes());
                }
                at += ids.len() * 8;
                Ok(())
            })
        })?;
        array_class(py)?.call1(("Q", bytes))
    }

    /// Up to ``n`` IDs of one tick taken with one atomic operation, as a :class:`Block`
    /// (``first``, ``count``, ``stride``): fewer than ``n`` when the tick has less room.
    /// Waits like :meth:`next_id`.
    #[pyo3(signature = (n))]
    fn reserve(&self, n: &Bound<'_, PyAny>) -> PyResult<PyBlock> {
        Ok(PyBlock(self.inner.reserve(whole_arg(n, "n", u64::MAX)?).map_err(Error)?))
    }

    /// What this generator has done, how far ahead of the clock its state is, and where its
    /// configuration came from (``sources``).
    fn stats(&self, py: Python<'_>) -> PyResult<PyStats> {
        let s = self.inner.stats();
        let sources = PyDict::new(py);
        for (name, source) in self.inner.provenance().iter() {
            sources.set_item(name, source.as_str())?;
        }
        Ok(PyStats { stats: s, sources: sources.unbind() })
    }

    /// The layout.
    #[getter]
    fn layout(&self) -> PyLayout {
        PyLayout(*self.inner.layout())
    }

    /// The node values, by field name.
    #[getter]
    fn node<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        node_dict(py, self.inner.layout(), self.inner.node())
    }

    /// How far ahead of the clock the generator may issue, in ms.
    #[getter]
    fn max_drift_ms(&self) -> u64 {
        self.inner.policy().max_drift_ms
    }

    /// How long :meth:`next_id` may wait for the clock, in ms.
    #[getter]
    fn max_wait_ms(&self) -> u64 {
        self.inner.policy().max_wait_ms
    }

    /// ``"zero"`` or ``"spread:K"``.
    #[getter]
    fn sequence_start(&self) -> String {
        match self.inner.policy().sequence_start {
            SequenceStart::Zero => "zero".to_owned(),
            s => s.to_string(),
        }
    }

    /// The rollover field, or ``None``.
    #[getter]
    fn rollover(&self) -> Option<String> {
        self.inner.policy().rollover.map(|r| r.as_str().to_owned())
    }

    /// Whether the generator has a state of its own.
    #[getter]
    fn isolated(&self) -> bool {
        self.isolated
    }

    fn __iter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    /// ``next(generator)`` is :meth:`next_id`; iteration never ends by itself.
    fn __next__(&self) -> Result<u64, Error> {
        Ok(self.inner.next_id()?)
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.inner)
    }

    /// Refuses: a copy of a generator in another process would repeat its IDs.
    fn __reduce__(&self) -> PyResult<()> {
        Err(PyTypeError::new_err(
            "a Generator cannot be pickled: a copy in another process would repeat its IDs; create one in each process with its own node values",
        ))
    }
}

/// A run of IDs of one tick taken with one atomic operation: ``first``, ``first + stride``,
/// ..., ``count`` of them, increasing. Iterate it, or ``list(block)``.
#[pyclass(name = "Block", module = "libsnowflake", frozen)]
pub struct PyBlock(Block);

#[pymethods]
impl PyBlock {
    /// The first ID.
    #[getter]
    fn first(&self) -> u64 {
        self.0.first
    }
    /// How many IDs.
    #[getter]
    fn count(&self) -> u64 {
        self.0.count
    }
    /// The distance between consecutive IDs (``1 << sequence_shift``).
    #[getter]
    fn stride(&self) -> u64 {
        self.0.stride
    }
    /// The last ID.
    #[getter]
    fn last(&self) -> u64 {
        self.0.first + (self.0.count - 1) * self.0.stride
    }
    fn __len__(&self) -> usize {
        self.0.count as usize
    }
    fn __iter__(&self) -> BlockIter {
        BlockIter { block: self.0, next: Mutex::new(0) }
    }
    fn __contains__(&self, id: &Bound<'_, PyAny>) -> bool {
        let Ok(id) = id.extract::<u64>() else {
            return false;
        };
        id >= self.0.first && id <= self.last() && (id - self.0.first).is_multiple_of(self.0.stride)
    }
    fn __repr__(&self) -> String {
        format!("Block(first={}, count={}, stride={})", self.0.first, self.0.count, self.0.stride)
    }
}

/// An iterator over a :class:`Block`'s IDs.
#[pyclass(name = "BlockIterator", module = "libsnowflake", frozen)]
pub struct BlockIter {
    block: Block,
    next: Mutex<u64>,
}

#[pymethods]
impl BlockIter {
    fn __iter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }
    fn __next__(&self) -> Option<u64> {
        let mut i = self.next.lock().unwrap_or_else(|e| e.into_inner());
        let id = self.block.get(*i)?;
        *i += 1;
        Some(id)
    }
}

/// What a generator has done: one read-only attribute per row of core's stats table
/// (``issued``, ``waits``, ``waited_ms``, ..., ``years_left``, ``clock_skew_ms``, listed in
/// docs/policies.md), and ``sources``: where the layout, the node values and each option came
/// from (``"code"``, ``"default"``, or the environment variable's name, ``"SNOWFLAKE_LAYOUT"``,
/// ``"SNOWFLAKE_NODE"``, ``"SNOWFLAKE_OPTIONS"``).
#[pyclass(name = "Stats", module = "libsnowflake", frozen)]
pub struct PyStats {
    /// Core's stats, read through its table by the properties [`PyStats::add_table`] makes.
    stats: Stats,
    /// Where each value came from: ``{"layout": ..., "node": ..., "max_drift_ms": ..., ...}``.
    #[pyo3(get)]
    sources: Py<PyDict>,
}

/// One stat as a Python value: an ``int``, ``None`` when absent, or a ``float``.
fn stat_to_py(py: Python<'_>, value: StatValue) -> PyResult<Py<PyAny>> {
    Ok(match value {
        StatValue::U64(v) | StatValue::OptionalU64(Some(v)) => v.into_pyobject(py)?.into_any().unbind(),
        StatValue::OptionalI64(Some(v)) => v.into_pyobject(py)?.into_any().unbind(),
        StatValue::OptionalU64(None) | StatValue::OptionalI64(None) => py.None(),
        StatValue::F64(v) => v.into_pyobject(py)?.into_any().unbind(),
    })
}

impl PyStats {
    /// Gives the ``Stats`` class one read-only property per row of core's stats table, with the
    /// row's doc: a stat added to core appears here with no change to this binding.
    pub(crate) fn add_table(ty: &Bound<'_, PyType>) -> PyResult<()> {
        let py = ty.py();
        let property = py.import("builtins")?.getattr("property")?;
        for spec in STATS {
            let get =
                PyCFunction::new_closure(py, None, None, move |args, _kwargs| -> PyResult<Py<PyAny>> {
                    let this = args.get_item(0)?;
                    let this = this.cast::<PyStats>()?;
                    stat_to_py(args.py(), (spec.get)(&this.get().stats))
                })?;
            ty.setattr(spec.name, property.call1((get, py.None(), py.None(), spec.doc))?)?;
        }
        Ok(())
    }
}

#[pymethods]
impl PyStats {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let mut out = String::from("Stats(");
        for (i, spec) in STATS.iter().enumerate() {
            let shown = match (spec.get)(&self.stats) {
                StatValue::F64(v) => format!("{v:.2}"),
                other => stat_to_py(py, other)?.bind(py).repr()?.to_string(),
            };
            out += &format!("{}{}={shown}", if i == 0 { "" } else { ", " }, spec.name);
        }
        Ok(out + ")")
    }
}
