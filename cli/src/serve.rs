//! `snowflake serve`: the generator of `next`, configured the same way (flags, SNOWFLAKE_*
//! variables, `--options`), behind core's HTTP engine (`snowflake_core::serve`). This file only
//! reads the service's own flags and the token; the engine checks them.

use crate::{Failure, GeneratorArgs};
use clap::Args;
use std::path::PathBuf;

/// Serve IDs over HTTP to programs in any language (docs/serve.md).
///
/// Opens the generator `next` would open (a client of the host's record like every process:
/// it never repeats the IDs of in-process generators of the same layout and node values here)
/// and answers /v1/ids?n=N, /v1/decode/{id}, /v1/uuid/{id}, /v1/layout, /healthz, /readyz and
/// /metrics. Loopback only unless a bearer token is set. Prints one JSON line on stdout once it
/// answers ({"listening": "ADDR:PORT", "url": …}); stops gracefully on SIGTERM.
#[derive(Args, Debug)]
#[command(after_help = "\
Examples:
  snowflake serve                                        http://127.0.0.1:8405, twitter layout
  snowflake serve --node datacenter=1,worker=7 --listen 127.0.0.1:0      a port the kernel picks
  SNOWFLAKE_SERVE_TOKEN_FILE=/etc/snowflake/token snowflake serve --listen 0.0.0.0:8405
  snowflake serve --lease local --tls-cert cert.pem --tls-key key.pem
  curl -s 'http://127.0.0.1:8405/v1/ids?n=3'")]
pub struct ServeArgs {
    /// The address to listen on (port 0: any free port, printed when ready).
    #[arg(long, value_name = "ADDR:PORT", env = "SNOWFLAKE_SERVE_LISTEN", default_value = snowflake_core_listen())]
    pub listen: String,
    /// A file holding the bearer token clients must send (else $SNOWFLAKE_SERVE_TOKEN; required
    /// off loopback). Never give a token on the command line.
    #[arg(long, value_name = "PATH", env = "SNOWFLAKE_SERVE_TOKEN_FILE")]
    pub token_file: Option<PathBuf>,
    /// A PEM certificate chain: serve HTTPS (with --tls-key).
    #[arg(long, value_name = "PATH", env = "SNOWFLAKE_SERVE_TLS_CERT", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The certificate's PEM private key.
    #[arg(long, value_name = "PATH", env = "SNOWFLAKE_SERVE_TLS_KEY", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// The most IDs one request may ask for.
    #[arg(long, value_name = "N", env = "SNOWFLAKE_SERVE_MAX_BATCH", default_value_t = 100_000)]
    pub max_batch: u64,
    /// The largest request body, in bytes.
    #[arg(long, value_name = "BYTES", env = "SNOWFLAKE_SERVE_MAX_BODY_BYTES", default_value_t = 4096)]
    pub max_body_bytes: u64,
    /// The most connections open at once (past it: 503).
    #[arg(long, value_name = "N", env = "SNOWFLAKE_SERVE_MAX_CONNECTIONS", default_value_t = 1024)]
    pub max_connections: u64,
    /// How long a client has to send its headers (else closed), then its body (else 408).
    #[arg(long, value_name = "MS", env = "SNOWFLAKE_SERVE_REQUEST_TIMEOUT_MS", default_value_t = 10_000)]
    pub request_timeout_ms: u64,
    /// How long SIGTERM waits for the requests under way.
    #[arg(long, value_name = "MS", env = "SNOWFLAKE_SERVE_DRAIN_TIMEOUT_MS", default_value_t = 10_000)]
    pub drain_timeout_ms: u64,
    /// The layout, node values and options, as `next` takes them.
    #[command(flatten)]
    pub config: GeneratorArgs,
}

const fn snowflake_core_listen() -> &'static str {
    "127.0.0.1:8405"
}

/// The bearer token: from --token-file (its first line), else $SNOWFLAKE_SERVE_TOKEN.
#[cfg_attr(not(feature = "serve"), allow(dead_code))]
fn token(args: &ServeArgs) -> Result<Option<String>, Failure> {
    if let Some(path) = &args.token_file {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::Input(format!("--token-file {}: {e}", path.display())))?;
        let line = text.lines().next().unwrap_or("").trim().to_string();
        if line.is_empty() {
            return Err(Failure::Input(format!("--token-file {}: the file holds no token", path.display())));
        }
        return Ok(Some(line));
    }
    match std::env::var("SNOWFLAKE_SERVE_TOKEN") {
        Ok(t) if t.trim().is_empty() => Err(Failure::Input("SNOWFLAKE_SERVE_TOKEN is set but empty".into())),
        Ok(t) => Ok(Some(t.trim().to_string())),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => {
            Err(Failure::Input("SNOWFLAKE_SERVE_TOKEN is not UTF-8".into()))
        }
    }
}

#[cfg(not(feature = "serve"))]
pub fn run(_args: &ServeArgs) -> Result<(), Failure> {
    Err(Failure::Input(
        "this snowflake was built without `serve`; build it with `cargo build --release -p snowflake-cli --features serve` (or `full`), or install the packaged CLI (docs/serve.md)".into(),
    ))
}

#[cfg(feature = "serve")]
pub fn run(args: &ServeArgs) -> Result<(), Failure> {
    use snowflake_core::serve::{self, ServeOptions};
    use std::io::Write;
    let listen = args.listen.parse().map_err(|_| {
        Failure::Input(format!(
            "--listen `{}`: not an address and port (127.0.0.1:8405, [::1]:8405)",
            args.listen
        ))
    })?;
    let options = ServeOptions {
        listen,
        token: token(args)?,
        tls: args.tls_cert.clone().zip(args.tls_key.clone()),
        max_batch: args.max_batch,
        max_body_bytes: args.max_body_bytes,
        max_connections: args.max_connections,
        request_timeout_ms: args.request_timeout_ms,
        drain_timeout_ms: args.drain_timeout_ms,
    };
    // The service's own settings first: a refusal of them opens no generator.
    options.check()?;
    let config = crate::commands::resolve_config(&args.config)?;
    let (layout, node) = (config.layout, config.node);
    let generator = config.open()?;
    let summary = serve::run(generator, layout, node, options, |ready| {
        let scheme = if ready.tls { "https" } else { "http" };
        let line = format!(
            "{{\"listening\":\"{}\",\"url\":\"{scheme}://{}\",\"tls\":{}}}",
            ready.listen, ready.listen, ready.tls
        );
        // The line a supervisor or test waits for: the service answers from now on.
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
        eprintln!("snowflake: serving on {scheme}://{} (SIGTERM stops it gracefully)", ready.listen);
    })?;
    eprintln!(
        "snowflake: stopped: {} requests, {} IDs issued, {} connections cut at the drain's end, {} ms of borrowed time waited out",
        summary.requests, summary.issued, summary.cut, summary.waited_out_ms
    );
    Ok(())
}
