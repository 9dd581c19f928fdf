//! The HTTP side of the service: the accept loop with its limits, TLS, the routes, the JSON
//! and text answers, `/metrics`, and the graceful stop.

use super::{Ready, Shared};
use crate::{decode_str, format_uuid, parse_uuid, Encoding, Error, ErrorKind, Name, HTTP_KINDS, KINDS};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Body as _, Incoming};
use hyper::header::{HeaderValue, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, RETRY_AFTER};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::fmt::Write as _;
use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};

// Rows of HTTP_KINDS (core's error table), counted in `/metrics` after the library's kinds.
const UNAUTHORIZED: usize = 0;
const NOT_FOUND: usize = 1;
const METHOD: usize = 2;
const TIMEOUT: usize = 3;
const TOO_LARGE: usize = 4;
const UNAVAILABLE: usize = 5;

type Body = Full<Bytes>;

fn json_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn response(status: u16, content_type: &'static str, body: impl Into<Bytes>) -> Response<Body> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

fn error_body(code: &str, message: &str, status: u16, retry_after_ms: Option<u64>) -> String {
    let mut out = String::from("{\"error\":{\"kind\":");
    json_string(&mut out, code);
    out.push_str(",\"message\":");
    json_string(&mut out, message);
    let _ = write!(out, ",\"status\":{status}");
    if let Some(ms) = retry_after_ms {
        let _ = write!(out, ",\"retry_after_ms\":{ms}");
    }
    out.push_str("}}\n");
    out
}

/// An answer for a library error, counted under its kind.
fn library_error(shared: &Shared, e: &Error) -> Response<Body> {
    let kind = e.kind();
    if let Some(i) = KINDS.iter().position(|k| k.kind == kind) {
        shared.counters.refusals[i].fetch_add(1, Ordering::Relaxed);
    }
    let status = kind.info().http_status;
    let retry = e.retry_after_ms();
    let mut r = response(status, "application/json", error_body(kind.code(), &e.to_string(), status, retry));
    if let Some(ms) = retry {
        // Whole seconds, rounded up: a client that honours it never retries too early.
        r.headers_mut().insert(RETRY_AFTER, HeaderValue::from(ms.div_ceil(1000).max(1)));
    }
    r
}

/// An answer for a refusal of [`HTTP_KINDS`], counted under it.
fn http_error(shared: &Shared, which: usize, message: &str) -> Response<Body> {
    shared.counters.refusals[KINDS.len() + which].fetch_add(1, Ordering::Relaxed);
    let (code, status, _) = HTTP_KINDS[which];
    let mut r = response(status, "application/json", error_body(code, message, status, None));
    if which == UNAUTHORIZED {
        r.headers_mut().insert("www-authenticate", HeaderValue::from_static("Bearer"));
    }
    r
}

/// Loads a PEM certificate chain and key into a rustls acceptor (TLS 1.2 and 1.3, `ring`).
pub(crate) fn tls_acceptor(cert: &Path, key: &Path) -> Result<tokio_rustls::TlsAcceptor, Error> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let bad = |path: &Path, e: &dyn std::fmt::Display| {
        Error::io(
            "read",
            path.display(),
            std::io::Error::new(std::io::ErrorKind::InvalidData, format!("not a usable PEM file: {e}")),
        )
    };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(|e| bad(cert, &e))?
        .collect::<Result<_, _>>()
        .map_err(|e| bad(cert, &e))?;
    if certs.is_empty() {
        return Err(bad(cert, &"no certificate in it"));
    }
    let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| bad(key, &e))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|b| b.with_no_client_auth().with_single_cert(certs, key_der))
        .map_err(|e| bad(key, &e))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

/// Waits for SIGTERM or SIGINT (Ctrl-C elsewhere).
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            // No signal handling at all (a seccomp sandbox, say): the default actions apply.
            _ => std::future::pending::<()>().await,
        }
    }
    #[cfg(not(unix))]
    {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// The accept loop, until a stop signal; then the drain. Returns how many connections were
/// still open when the drain time ran out.
pub(crate) async fn serve(
    shared: Arc<Shared>,
    tls: Option<tokio_rustls::TlsAcceptor>,
    on_ready: impl FnOnce(Ready),
) -> Result<u64, Error> {
    let listen = shared.options.listen;
    let listener = TcpListener::bind(listen).await.map_err(|e| Error::io("listen on", listen, e))?;
    let bound = listener.local_addr().map_err(|e| Error::io("listen on", listen, e))?;
    let max = shared.options.max_connections as usize;
    let slots = Arc::new(Semaphore::new(max));
    let (stop_tx, stop_rx) = watch::channel(false);
    let stop = stop_signal();
    tokio::pin!(stop);
    on_ready(Ready { listen: bound, tls: tls.is_some() });
    loop {
        let (stream, _) = tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                // Out of descriptors, a connection reset before accept: the next one may do.
                Err(_) => {
                    tokio::task::yield_now().await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            shared.counters.refused_connections.fetch_add(1, Ordering::Relaxed);
            let body = http_error(&shared, UNAVAILABLE, "too many connections (max_connections); retry");
            tokio::spawn(refuse(stream, tls.clone(), body, shared.options.request_timeout_ms));
            continue;
        };
        let shared = shared.clone();
        let tls = tls.clone();
        let stop_rx = stop_rx.clone();
        tokio::spawn(async move {
            shared.counters.connections.fetch_add(1, Ordering::Relaxed);
            let timeout = Duration::from_millis(shared.options.request_timeout_ms);
            match tls {
                Some(acceptor) => {
                    if let Ok(Ok(stream)) = tokio::time::timeout(timeout, acceptor.accept(stream)).await {
                        connection(stream, shared.clone(), stop_rx).await;
                    }
                }
                None => connection(stream, shared.clone(), stop_rx).await,
            }
            shared.counters.connections.fetch_sub(1, Ordering::Relaxed);
            drop(slot);
        });
    }
    // Stop: no new connection; readiness off; each connection closes after its current answer.
    drop(listener);
    shared.counters.stopping.store(true, Ordering::Relaxed);
    let _ = stop_tx.send(true);
    let drain = Duration::from_millis(shared.options.drain_timeout_ms);
    let drained = tokio::time::timeout(drain, slots.acquire_many(max as u32)).await.is_ok();
    Ok(if drained { 0 } else { shared.counters.connections.load(Ordering::Relaxed) })
}

/// A connection over the limit: its 503, then closed (whatever it sends is not read).
async fn refuse(
    stream: tokio::net::TcpStream,
    tls: Option<tokio_rustls::TlsAcceptor>,
    response: Response<Body>,
    timeout_ms: u64,
) {
    let write = async move {
        match tls {
            Some(acceptor) => {
                if let Ok(mut s) = acceptor.accept(stream).await {
                    answer_and_close(&mut s, response).await;
                }
            }
            None => answer_and_close(&mut { stream }, response).await,
        }
    };
    let _ = tokio::time::timeout(Duration::from_millis(timeout_ms), write).await;
}

/// Writes `response` (its status, content type and body) on a stream that hyper does not
/// drive, as the connection's last answer, then closes the stream's write side.
async fn answer_and_close<S: AsyncWrite + Unpin>(stream: &mut S, response: Response<Body>) {
    let status = response.status();
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json")
        .to_owned();
    let body = response.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let head = format!(
        "HTTP/1.1 {} {}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or(""),
        body.len()
    );
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(&body).await;
    let _ = stream.shutdown().await;
}

async fn connection<S>(stream: S, shared: Arc<Shared>, mut stop: watch::Receiver<bool>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let timeout = Duration::from_millis(shared.options.request_timeout_ms);
    let service = {
        let shared = shared.clone();
        service_fn(move |req| {
            let shared = shared.clone();
            async move { Ok::<_, Infallible>(handle(req, &shared).await) }
        })
    };
    let mut conn = http1::Builder::new()
        .timer(TokioTimer::new())
        // Headers slower than this (slowloris) end the connection: with a 408, below.
        .header_read_timeout(timeout)
        .keep_alive(true)
        .serve_connection(TokioIo::new(stream), service);
    if *stop.borrow() {
        Pin::new(&mut conn).graceful_shutdown();
    }
    let ended = tokio::select! {
        ended = &mut conn => ended,
        _ = stop.changed() => {
            Pin::new(&mut conn).graceful_shutdown();
            (&mut conn).await
        }
    };
    if !ended.is_err_and(|e| e.is_timeout()) {
        return;
    }
    // hyper ends a connection whose headers are late with an error and writes nothing; its
    // parts give the stream back, and the 408 that every other refusal gets goes on it. Only
    // for a request begun (its first bytes unparsed in the buffer): an idle keep-alive
    // connection is closed without an answer, since its client may be sending its next request
    // already, and would take an unsolicited 408 for that request's answer.
    let parts = conn.into_parts();
    if parts.read_buf.is_empty() {
        return;
    }
    let answer =
        http_error(&shared, TIMEOUT, "the request's headers did not arrive within request_timeout_ms");
    let mut stream = parts.io.into_inner();
    let _ = tokio::time::timeout(timeout, answer_and_close(&mut stream, answer)).await;
}

/// The token given in `Authorization: Bearer …`, compared in time independent of where it
/// differs.
fn authorized(shared: &Shared, req: &Request<Incoming>) -> bool {
    let Some(token) = shared.options.token.as_deref() else {
        return true;
    };
    let Some(given) = req.headers().get(AUTHORIZATION).and_then(|v| v.as_bytes().strip_prefix(b"Bearer "))
    else {
        return false;
    };
    let want = token.as_bytes();
    let mut diff = u8::from(given.len() != want.len());
    for (i, w) in want.iter().enumerate() {
        diff |= w ^ given.get(i).copied().unwrap_or(0);
    }
    diff == 0
}

async fn handle(req: Request<Incoming>, shared: &Shared) -> Response<Body> {
    shared.counters.requests.fetch_add(1, Ordering::Relaxed);
    // The URI's parts are shared bytes: a clone to look at while the request moves on.
    let uri = req.uri().clone();
    let path = uri.path();
    match path {
        "/healthz" => return response(200, "application/json", "{\"status\":\"ok\"}\n"),
        "/readyz" => {
            return if shared.ready() {
                response(200, "application/json", "{\"ready\":true}\n")
            } else {
                response(503, "application/json", "{\"ready\":false}\n")
            };
        }
        _ => {}
    }
    if !authorized(shared, &req) {
        return http_error(
            shared,
            UNAUTHORIZED,
            "a bearer token is required (Authorization: Bearer <token>), and this one is not it",
        );
    }
    let method = req.method();
    let get_only = |shared: &Shared| http_error(shared, METHOD, "this path takes GET");
    match path {
        "/v1/ids" => {
            if method != Method::GET && method != Method::POST {
                return http_error(shared, METHOD, "/v1/ids takes GET or POST");
            }
            // A request without a body (a GET, most of them) waits for nothing: the body's
            // reader (its timer, its buffer) is a future of its own, made only for a body, so
            // that this one stays small.
            let body = if req.body().is_end_stream() {
                Bytes::new()
            } else {
                match Box::pin(read_body(req, shared)).await {
                    Ok(b) => b,
                    Err(r) => return r,
                }
            };
            ids(shared, uri.query().unwrap_or(""), &body)
        }
        "/v1/layout" if method == Method::GET => layout(shared),
        "/metrics" if method == Method::GET => metrics(shared),
        "/v1/layout" | "/metrics" => get_only(shared),
        p if p.starts_with("/v1/decode/") || p.starts_with("/v1/uuid/") => {
            if method != Method::GET {
                return get_only(shared);
            }
            let (what, value) = p[4..].split_once('/').unwrap_or(("", ""));
            let value = percent_decode(value);
            match if what == "decode" { decode(shared, &value) } else { uuid(shared, &value) } {
                Ok(r) => r,
                Err(e) => library_error(shared, &e),
            }
        }
        _ => http_error(
            shared,
            NOT_FOUND,
            "no such path (/v1/ids, /v1/decode/{id}, /v1/uuid/{id}, /v1/layout, /healthz, /readyz, /metrics)",
        ),
    }
}

/// A request's body, refused past `max_body_bytes` (by its Content-Length before reading any,
/// else as it arrives) or when it does not arrive within `request_timeout_ms`.
async fn read_body(req: Request<Incoming>, shared: &Shared) -> Result<Bytes, Response<Body>> {
    let max = shared.options.max_body_bytes;
    let too_large =
        || http_error(shared, TOO_LARGE, &format!("the request body is over {max} bytes (max_body_bytes)"));
    let declared =
        req.headers().get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max) {
        return Err(too_large());
    }
    let timeout = Duration::from_millis(shared.options.request_timeout_ms);
    match tokio::time::timeout(timeout, Limited::new(req.into_body(), max as usize).collect()).await {
        Ok(Ok(b)) => Ok(b.to_bytes()),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        // The client went away or sent a malformed body: whoever reads this answer gets a 400.
        Ok(Err(_)) => Err(library_error(
            shared,
            &Error::BadOption {
                name: Name::snippet("body"),
                reason: "could not be read (malformed, or cut short)",
            },
        )),
        Err(_) => {
            Err(http_error(shared, TIMEOUT, "the request body did not arrive within request_timeout_ms"))
        }
    }
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// What `/v1/ids` answers with.
#[derive(Clone, Copy, PartialEq)]
enum Format {
    /// `{"ids":["…"]}` (or `{"id":"…"}` without `n`).
    Json,
    /// The same with numbers, for clients whose numbers hold 64 bits.
    Number,
    /// One decimal ID a line.
    Text,
}

/// The parameters of `/v1/ids`, from the query and a form body alike: `n` and `format`. An
/// unknown or repeated parameter is refused, as core refuses an unknown option.
fn ids_params(shared: &Shared, query: &str, body: &[u8]) -> Result<(Option<u64>, Format), Error> {
    let body = std::str::from_utf8(body).map_err(|_| Error::BadOption {
        name: Name::snippet("body"),
        reason: "is not UTF-8 form text (n=…&format=…)",
    })?;
    let (mut n, mut format) = (None, None);
    for pair in query.split('&').chain(body.trim().split('&')).filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = percent_decode(value);
        match percent_decode(key).as_str() {
            "n" if n.is_none() => {
                let parsed = value.trim().parse::<u64>().map_err(|_| Error::WrongType {
                    name: Name::snippet("n"),
                    expected: "a whole number of IDs",
                    got: Name::snippet(&value),
                })?;
                if parsed == 0 || parsed > shared.options.max_batch {
                    return Err(Error::ValueRange {
                        name: Name::snippet("n"),
                        value: parsed.into(),
                        min: 1,
                        max: shared.options.max_batch,
                    });
                }
                n = Some(parsed);
            }
            "format" if format.is_none() => {
                format = Some(match value.as_str() {
                    "json" => Format::Json,
                    "number" => Format::Number,
                    "text" => Format::Text,
                    _ => {
                        return Err(Error::BadOption {
                            name: Name::snippet("format"),
                            reason: "is not one of json, number, text",
                        })
                    }
                });
            }
            "n" | "format" => {
                return Err(Error::BadOption {
                    name: Name::snippet(&percent_decode(key)),
                    reason: "is given twice",
                })
            }
            other => {
                return Err(Error::BadOption {
                    name: Name::snippet(other),
                    reason: "is not a parameter of /v1/ids (n, format)",
                })
            }
        }
    }
    Ok((n, format.unwrap_or(Format::Json)))
}

/// `v` in decimal at the end of `out`, without going through `fmt`.
fn push_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(crate::text::decimal(v, &mut [0u8; 20]).as_bytes());
}

/// Readiness follows the last answer's lease. Written only when it changes: a store on every
/// request would move the word's cache line between the runtime's threads on each one.
fn set_lease_failing(shared: &Shared, failing: bool) {
    let flag = &shared.counters.lease_failing;
    if flag.load(Ordering::Relaxed) != failing {
        flag.store(failing, Ordering::Relaxed);
    }
}

fn ids(shared: &Shared, query: &str, body: &[u8]) -> Response<Body> {
    let (n, format) = match ids_params(shared, query, body) {
        Ok(p) => p,
        Err(e) => return library_error(shared, &e),
    };
    let count = n.unwrap_or(1) as usize;
    let mut issued = Vec::with_capacity(count);
    let result = if count == 1 {
        // One ID: the generator's fast path, as a library caller's `next_id`.
        shared.generator.next_id().map(|id| issued.push(id))
    } else {
        issued.resize(count, 0);
        if count as u64 > shared.layout.capacity_per_tick() {
            // A batch beyond one tick's capacity may wait for the clock: off the runtime's
            // threads' async duty while it does, so that other connections go on.
            tokio::task::block_in_place(|| shared.generator.fill(&mut issued)).map_err(Error::from)
        } else {
            shared.generator.fill(&mut issued).map_err(Error::from)
        }
    };
    if let Err(e) = result {
        // What was written is lost, never handed out twice: the whole request is refused.
        set_lease_failing(shared, e.kind() == ErrorKind::Lease);
        return library_error(shared, &e);
    }
    set_lease_failing(shared, false);
    let mut out = Vec::with_capacity(count * 22 + 16);
    let content_type = match format {
        Format::Text => {
            for id in &issued {
                push_u64(&mut out, *id);
                out.push(b'\n');
            }
            "text/plain; charset=utf-8"
        }
        Format::Json | Format::Number => {
            let quote: &[u8] = if format == Format::Json { b"\"" } else { b"" };
            if n.is_none() {
                out.extend_from_slice(b"{\"id\":");
                out.extend_from_slice(quote);
                push_u64(&mut out, issued[0]);
                out.extend_from_slice(quote);
                out.extend_from_slice(b"}\n");
            } else {
                out.extend_from_slice(b"{\"ids\":[");
                for (i, id) in issued.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    out.extend_from_slice(quote);
                    push_u64(&mut out, *id);
                    out.extend_from_slice(quote);
                }
                out.extend_from_slice(b"]}\n");
            }
            "application/json"
        }
    };
    response(200, content_type, out)
}

fn layout(shared: &Shared) -> Response<Body> {
    let l = &shared.layout;
    let mut out = String::from("{\"spec\":");
    json_string(&mut out, &l.to_string());
    let _ = write!(
        out,
        ",\"epoch_ms\":{},\"tick_ms\":{},\"bits\":{},\"fields\":[",
        l.epoch_ms(),
        l.tick_ms(),
        l.total_bits()
    );
    for (i, f) in l.fields().iter().enumerate() {
        out.push_str(if i == 0 { "{\"name\":" } else { ",{\"name\":" });
        json_string(&mut out, f.name());
        let _ = write!(out, ",\"bits\":{},\"shift\":{}}}", f.bits(), f.shift());
    }
    out.push_str("],\"node\":{");
    for (i, (name, value)) in l.node_values(&shared.node).enumerate() {
        if i > 0 {
            out.push(',');
        }
        json_string(&mut out, name);
        let _ = write!(out, ":{value}");
    }
    let _ = writeln!(
        out,
        "}},\"last_unix_ms\":{},\"max_batch\":{}}}",
        l.last_unix_ms(),
        shared.options.max_batch
    );
    response(200, "application/json", out)
}

/// An ID in decimal, checked as core checks one.
fn parse_id(text: &str) -> Result<u64, Error> {
    decode_str(text, Encoding::Decimal, false).map_err(Error::from)
}

fn decode(shared: &Shared, text: &str) -> Result<Response<Body>, Error> {
    let parts = shared.layout.decode(parse_id(text)?)?;
    let mut buf = [0u8; crate::time::RFC3339_LEN];
    let mut out = String::new();
    let _ = write!(out, "{{\"id\":\"{}\",\"unix_ms\":{},\"time\":", parts.id, parts.unix_ms);
    match crate::time::format_rfc3339(parts.unix_ms, &mut buf) {
        Some(t) => json_string(&mut out, t),
        None => out.push_str("null"),
    }
    let _ = write!(out, ",\"sequence\":{},\"fields\":{{", parts.sequence);
    for (i, (name, value)) in shared.layout.node_values(&parts.node).enumerate() {
        if i > 0 {
            out.push(',');
        }
        json_string(&mut out, name);
        let _ = write!(out, ":{value}");
    }
    out.push_str("}}\n");
    Ok(response(200, "application/json", out))
}

/// `/v1/uuid/{id}`: the UUIDv7 of an ID, or (given a UUID) its ID; both in the answer.
fn uuid(shared: &Shared, text: &str) -> Result<Response<Body>, Error> {
    let (id, uuid) = if text.contains('-') {
        let uuid = parse_uuid(text)?;
        (shared.layout.from_uuid(uuid)?, uuid)
    } else {
        let id = parse_id(text)?;
        (id, shared.layout.to_uuid(id)?)
    };
    let out = format!("{{\"id\":\"{id}\",\"uuid\":\"{}\"}}\n", format_uuid(uuid));
    Ok(response(200, "application/json", out))
}

/// `/metrics` in Prometheus' text format (version 0.0.4).
fn metrics(shared: &Shared) -> Response<Body> {
    let s = shared.generator.stats();
    let c = &shared.counters;
    let mut out = String::with_capacity(4096);
    let mut metric = |name: &str, ty: &str, help: &str, value: &dyn std::fmt::Display| {
        let _ = write!(
            out,
            "# HELP snowflake_{name} {help}\n# TYPE snowflake_{name} {ty}\nsnowflake_{name} {value}\n"
        );
    };
    metric("ids_issued_total", "counter", "IDs issued by this service.", &s.issued);
    metric("waits_total", "counter", "Times the generator waited for the clock.", &s.waits);
    metric("waited_ms_total", "counter", "Time spent waiting for the clock, in ms.", &s.waited_ms);
    metric(
        "clock_behind_total",
        "counter",
        "Times the clock was found behind by more than max_drift_ms.",
        &s.clock_behind,
    );
    metric("drift_ms", "gauge", "How far ahead of the clock the state is, in ms.", &s.drift_ms);
    metric("requests_total", "counter", "HTTP requests received.", &c.requests.load(Ordering::Relaxed));
    metric("connections", "gauge", "Connections open now.", &c.connections.load(Ordering::Relaxed));
    metric(
        "connections_refused_total",
        "counter",
        "Connections refused past max_connections.",
        &c.refused_connections.load(Ordering::Relaxed),
    );
    metric(
        "ready",
        "gauge",
        "1 while the service holds its identity (its lease included) and is not stopping.",
        &u8::from(shared.ready()),
    );
    metric(
        "lease_held",
        "gauge",
        "1 while a lease is held (1 without a lease: the identity is held by the host's record).",
        // A lapse is counted when the holder next renews or issues; a lease error from the
        // last issue says so first.
        &u8::from(
            s.lease_value.is_none()
                || (s.lease_claims > s.lease_losses && !c.lease_failing.load(Ordering::Relaxed)),
        ),
    );
    metric("lease_claims_total", "counter", "Leases claimed.", &s.lease_claims);
    metric("lease_losses_total", "counter", "Leases lapsed.", &s.lease_losses);
    if let Some(v) = s.lease_value {
        metric("lease_value", "gauge", "The leased field's value.", &v);
    }
    if let Some(skew) = s.clock_skew_ms {
        metric(
            "clock_offset_ms",
            "gauge",
            "This host's clock minus the lease store's, in ms, at the last claim or renewal.",
            &skew,
        );
    }
    metric("ms_left", "gauge", "How long the layout has left, in ms.", &s.ms_left);
    let _ = write!(out, "# HELP snowflake_refusals_total Requests refused, by kind (the library's codes, and HTTP's).\n# TYPE snowflake_refusals_total counter\n");
    let codes = KINDS.iter().map(|k| k.code).chain(HTTP_KINDS.iter().map(|k| k.0));
    for (code, count) in codes.zip(&c.refusals) {
        let _ =
            writeln!(out, "snowflake_refusals_total{{kind=\"{code}\"}} {}", count.load(Ordering::Relaxed));
    }
    response(200, "text/plain; version=0.0.4; charset=utf-8", out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_writer_matches_display() {
        for v in [0, 1, 9, 10, 99, 1234567890123, u64::MAX] {
            let mut out = Vec::new();
            push_u64(&mut out, v);
            assert_eq!(out, v.to_string().into_bytes());
        }
    }

    #[test]
    fn http_kinds_are_where_their_indices_say() {
        let at = |i: usize| HTTP_KINDS[i].0;
        assert_eq!(at(UNAUTHORIZED), "ERR_SNOWFLAKE_UNAUTHORIZED");
        assert_eq!(at(NOT_FOUND), "ERR_SNOWFLAKE_NOT_FOUND");
        assert_eq!(at(METHOD), "ERR_SNOWFLAKE_METHOD");
        assert_eq!(at(TIMEOUT), "ERR_SNOWFLAKE_TIMEOUT");
        assert_eq!(at(TOO_LARGE), "ERR_SNOWFLAKE_TOO_LARGE");
        assert_eq!(at(UNAVAILABLE), "ERR_SNOWFLAKE_UNAVAILABLE");
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%20b+c"), "a b c");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
        assert_eq!(percent_decode("%41"), "A");
    }
}
