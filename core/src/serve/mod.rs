//! `snowflake serve`'s engine: one generator's IDs over HTTP/1.1, for languages without a
//! binding (Java, Go, Ruby, .NET, shells).
//!
//! The service is one more client of the host's record: it opens its generator like every
//! process does (shared state, state file, lease), so it never repeats the IDs of in-process
//! generators of the same identity on the host, nor another service's; the arbiter refuses
//! what it refuses anywhere else.
//!
//! What it guarantees:
//! - **Loopback unless told**: a listening address off loopback needs a bearer token
//!   ([`ServeOptions::token`]), compared in constant time; `/healthz` and `/readyz` answer
//!   without it (probes), every other path needs it.
//! - **Bounded**: request bodies ([`ServeOptions::max_body_bytes`], 413 before reading more),
//!   batches ([`ServeOptions::max_batch`]), open connections (past
//!   [`ServeOptions::max_connections`] a new one gets a 503 and is closed) and time (a
//!   request's headers within [`ServeOptions::request_timeout_ms`], then its body within it,
//!   else a 408 and the connection is closed: a slow client (slowloris) holds one connection
//!   for that long at most, and is told why).
//! - **Typed errors**: every refusal is JSON `{"error":{"kind","message","status"}}`, `kind`
//!   being the library's stable code (`ERR_SNOWFLAKE_VALUE`, ...) or one of [`HTTP_KINDS`] for
//!   what only HTTP has (a wrong token, an unknown path); the status is the kind's in core's
//!   error table ([`crate::KindInfo::http_status`], [`HTTP_KINDS`]); a clock or sequence
//!   refusal carries `retry_after_ms` and a `Retry-After` header.
//! - **Graceful stop** ([`run`] returns on SIGTERM or SIGINT): it stops accepting, answers the
//!   requests under way (each connection closes after its current response), waits for them up
//!   to [`ServeOptions::drain_timeout_ms`], drops the generator (which releases its lease and
//!   its hold on the host's record) and waits out the time its state had borrowed ahead of the
//!   clock, so that whatever starts next on this host finds the clock past it.

mod http;

use crate::{Error, Generator, Layout, Name, Node};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub use crate::HTTP_KINDS;

/// The address `snowflake serve` listens on when none is given: loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8405";
/// The largest batch a request may ask for by default ([`ServeOptions::max_batch`]).
pub const DEFAULT_MAX_BATCH: u64 = 100_000;
/// The largest request body by default, in bytes (parameters fit in far less).
pub const DEFAULT_MAX_BODY_BYTES: u64 = 4096;
/// The most connections open at once by default.
pub const DEFAULT_MAX_CONNECTIONS: u64 = 1024;
/// How long a client has to send a request's headers, and then its body, by default.
pub const DEFAULT_REQUEST_TIMEOUT_MS: u64 = 10_000;
/// How long a graceful stop waits for requests under way by default.
pub const DEFAULT_DRAIN_TIMEOUT_MS: u64 = 10_000;

/// What the service does besides issuing: where it listens, who may ask, and its limits.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// The address to listen on (port 0: one the kernel picks, announced through `on_ready`).
    pub listen: SocketAddr,
    /// The bearer token clients must send (`Authorization: Bearer …`); required off loopback.
    pub token: Option<String>,
    /// A PEM certificate chain and its PEM private key: serve HTTPS (rustls) instead of HTTP.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// The most IDs one request may ask for.
    pub max_batch: u64,
    /// The largest request body, in bytes.
    pub max_body_bytes: u64,
    /// The most connections open at once.
    pub max_connections: u64,
    /// How long a client has for its headers, then for its body, in ms.
    pub request_timeout_ms: u64,
    /// How long a graceful stop waits for requests under way, in ms.
    pub drain_timeout_ms: u64,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            listen: DEFAULT_LISTEN.parse().expect("a valid address"),
            token: None,
            tls: None,
            max_batch: DEFAULT_MAX_BATCH,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            request_timeout_ms: DEFAULT_REQUEST_TIMEOUT_MS,
            drain_timeout_ms: DEFAULT_DRAIN_TIMEOUT_MS,
        }
    }
}

impl ServeOptions {
    /// Refuses what would make the service unsafe or useless: no token off loopback, an empty
    /// token, a limit of 0, a batch above [`crate::MAX_IDS_PER_CALL`].
    pub fn check(&self) -> Result<(), Error> {
        let bad = |name: &str, reason: &'static str| Error::BadOption { name: Name::snippet(name), reason };
        if self.token.as_deref().is_some_and(|t| t.trim().is_empty()) {
            return Err(bad("token", "is empty"));
        }
        if !self.listen.ip().is_loopback() && self.token.is_none() {
            return Err(bad(
                "listen",
                "is not a loopback address, and no bearer token is set: give one (a token file or SNOWFLAKE_SERVE_TOKEN), or listen on 127.0.0.1 or ::1",
            ));
        }
        let range = |name: &str, value: u64, max: u64| {
            if value == 0 || value > max {
                Err(Error::ValueRange { name: Name::snippet(name), value: value.into(), min: 1, max })
            } else {
                Ok(())
            }
        };
        range("max_batch", self.max_batch, crate::MAX_IDS_PER_CALL)?;
        range("max_body_bytes", self.max_body_bytes, 1 << 20)?;
        range("max_connections", self.max_connections, 1 << 20)?;
        range("request_timeout_ms", self.request_timeout_ms, 3_600_000)?;
        range("drain_timeout_ms", self.drain_timeout_ms, 3_600_000)?;
        Ok(())
    }
}

/// What [`run`] tells its caller once the service answers.
#[derive(Clone, Copy, Debug)]
pub struct Ready {
    /// The address it listens on (with the kernel's port when port 0 was asked).
    pub listen: SocketAddr,
    /// Whether it speaks HTTPS.
    pub tls: bool,
}

/// What a stopped service did.
#[derive(Clone, Copy, Debug, Default)]
pub struct Summary {
    /// Requests answered.
    pub requests: u64,
    /// IDs issued.
    pub issued: u64,
    /// Connections still open when the drain time ran out (closed without their answer).
    pub cut: u64,
    /// How long the stop waited, from releasing the generator, for the clock to pass the time
    /// its state had borrowed ahead (0 when it had borrowed none), in ms.
    pub waited_out_ms: u64,
}

/// The counters of `/metrics` beyond the generator's own [`crate::Stats`].
pub(crate) struct Counters {
    pub requests: AtomicU64,
    pub connections: AtomicU64,
    pub refused_connections: AtomicU64,
    /// Refusals by kind: the library's kinds in [`crate::KINDS`]' order, then [`HTTP_KINDS`].
    pub refusals: Vec<AtomicU64>,
    /// Set when issuing failed with a lease error, cleared when it succeeds again.
    pub lease_failing: AtomicBool,
    pub stopping: AtomicBool,
}

/// Everything a request handler reads.
pub(crate) struct Shared {
    pub generator: Generator,
    pub layout: Layout,
    pub node: Node,
    pub options: ServeOptions,
    pub counters: Counters,
}

impl Shared {
    /// Whether the service should be given traffic: not stopping, and its identity held (a
    /// lease counts as held while it has been claimed more times than it lapsed, and issuing
    /// with it has not failed since).
    pub fn ready(&self) -> bool {
        if self.counters.stopping.load(Ordering::Relaxed)
            || self.counters.lease_failing.load(Ordering::Relaxed)
        {
            return false;
        }
        let s = self.generator.stats();
        s.lease_value.is_none() || s.lease_claims > s.lease_losses
    }
}

/// Serves `generator`'s IDs (of `layout` and `node`, for `/v1/layout` and `/v1/decode`) until
/// SIGTERM or SIGINT, then stops gracefully (module docs). `on_ready` is called once the
/// listening socket is bound and the service answers.
///
/// ```no_run
/// # #[cfg(feature = "serve")] {
/// use snowflake_core::serve::{run, ServeOptions};
/// use snowflake_core::Config;
/// let config = Config::from_env().unwrap();
/// let (layout, node) = (config.layout, config.node);
/// let generator = config.open().unwrap();
/// run(generator, layout, node, ServeOptions::default(), |ready| println!("listening on {}", ready.listen)).unwrap();
/// # }
/// ```
pub fn run(
    generator: Generator,
    layout: Layout,
    node: Node,
    options: ServeOptions,
    on_ready: impl FnOnce(Ready),
) -> Result<Summary, Error> {
    options.check()?;
    let tls = options.tls.as_ref().map(|(cert, key)| http::tls_acceptor(cert, key)).transpose()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("snowflake-serve")
        .build()
        .map_err(|e| Error::io("start", "the service's runtime", e))?;
    let refusals = (0..crate::KINDS.len() + HTTP_KINDS.len()).map(|_| AtomicU64::new(0)).collect();
    let shared = Arc::new(Shared {
        generator,
        layout,
        node,
        options,
        counters: Counters {
            requests: AtomicU64::new(0),
            connections: AtomicU64::new(0),
            refused_connections: AtomicU64::new(0),
            refusals,
            lease_failing: AtomicBool::new(false),
            stopping: AtomicBool::new(false),
        },
    });
    let cut = runtime.block_on(http::serve(shared.clone(), tls, on_ready))?;
    // Tasks of connections cut at the drain's end still hold the state: end them first.
    runtime.shutdown_timeout(Duration::from_millis(100));
    let mut summary = Summary {
        requests: shared.counters.requests.load(Ordering::Relaxed),
        issued: shared.generator.stats().issued,
        cut,
        waited_out_ms: 0,
    };
    // The instant the clock passes what the state borrowed ahead of it.
    let borrowed_until = std::time::Instant::now() + Duration::from_millis(shared.generator.stats().drift_ms);
    let released = std::time::Instant::now();
    // Every task has ended with the runtime, so this is the last reference: dropping it
    // releases the lease and the generator's hold on the host's record (which may itself wait
    // for the clock to pass what this process could have issued: then nothing is left here).
    drop(shared);
    let now = std::time::Instant::now();
    if borrowed_until > released {
        std::thread::sleep(borrowed_until.saturating_duration_since(now));
        summary.waited_out_ms = released.elapsed().as_millis() as u64;
    }
    Ok(summary)
}
