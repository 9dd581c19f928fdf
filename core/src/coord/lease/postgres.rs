//! The lease store in PostgreSQL (`lease=postgres://…`, `postgresql://…`): `super::sql`'s
//! table through tokio-postgres (the client beneath the `postgres` crate), driven by a
//! current-thread runtime of its own so that every statement has a timeout (the blocking
//! `postgres` crate has none, and a frozen server would hang the lease's renewal), with TLS
//! through rustls.
//!
//! Commits are made durable (`synchronous_commit = on` in the session, whatever the server's
//! default), and a mark is trusted only when written by the same run of the same server: its
//! cluster's system identifier, its timeline (a promoted standby starts a new one) and its
//! start (`pg_postmaster_start_time()`) are stored with every mark. A promoted standby, or a
//! restart that lost commits, makes the next claim start past what an unrecorded holder may
//! issue.

use super::sql::{self, Cell, Db, Dialect, Param, SqlStore, Tls};
use super::{Failure, Identity, Store};
use crate::error::Error;
use crate::options::redact_url;
use std::time::Duration;
use tokio_postgres::types::{ToSql, Type};

static POSTGRES: Dialect = Dialect {
    name: "PostgreSQL",
    now_ms: "CAST(FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) AS BIGINT)",
    // The cluster (system identifier), its history (the timeline of the WAL written now: a
    // promotion starts a new one) and the server's start (a restart), hashed to a BIGINT. Each
    // function is open to every role; the current WAL position exists on a primary only,
    // where marks are written.
    server: "(SELECT CAST(CAST('x' || SUBSTR(MD5(system_identifier::text || ':' || SUBSTR(pg_walfile_name(pg_current_wal_lsn()), 1, 8) || ':' || CAST(EXTRACT(EPOCH FROM pg_postmaster_start_time()) * 1000000 AS BIGINT)::text), 1, 16) AS BIT(64)) AS BIGINT) FROM pg_control_system())",
    server_literal: false,
    create: "CREATE TABLE IF NOT EXISTS {} (name TEXT PRIMARY KEY, holder TEXT, expires_at BIGINT, mark BIGINT, mark_server BIGINT)",
    insert_missing: "INSERT INTO {} (name) VALUES (?) ON CONFLICT (name) DO NOTHING",
    returning: true,
};

struct Pg {
    runtime: tokio::runtime::Runtime,
    client: tokio_postgres::Client,
    timeout: Duration,
    shown: String,
}

/// `?` placeholders as PostgreSQL's `$1`, `$2`, ...
fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut n = 0;
    for c in sql.chars() {
        if c == '?' {
            n += 1;
            out.push('$');
            out.push_str(&n.to_string());
        } else {
            out.push(c);
        }
    }
    out
}

impl Pg {
    fn run<T>(
        &self,
        what: &str,
        f: impl std::future::Future<Output = Result<T, tokio_postgres::Error>>,
    ) -> Result<T, Failure> {
        match self.runtime.block_on(async { tokio::time::timeout(self.timeout, f).await }) {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(failure(&e, &self.shown, what)),
            Err(_) => {
                Err(Failure { message: format!("PostgreSQL at {} did not answer in time", self.shown) })
            }
        }
    }

    fn params(params: &[Param<'_>]) -> Vec<Box<dyn ToSql + Sync + Send>> {
        params
            .iter()
            .map(|p| -> Box<dyn ToSql + Sync + Send> {
                match p {
                    Param::Int(n) => Box::new(*n),
                    Param::Text(t) => Box::new(t.to_string()),
                }
            })
            .collect()
    }
}

impl Db for Pg {
    fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Vec<Cell>>, Failure> {
        let sql = numbered(sql);
        let boxes = Pg::params(params);
        let refs: Vec<&(dyn ToSql + Sync)> = boxes.iter().map(|b| &**b as &(dyn ToSql + Sync)).collect();
        let rows = self.run("a query", self.client.query(&sql, &refs))?;
        Ok(rows
            .iter()
            .map(|row| {
                (0..row.len())
                    .map(|i| match *row.columns()[i].type_() {
                        Type::INT8 => row.get::<_, Option<i64>>(i).map_or(Cell::Null, Cell::Int),
                        Type::INT4 => {
                            row.get::<_, Option<i32>>(i).map_or(Cell::Null, |n| Cell::Int(n.into()))
                        }
                        _ => {
                            row.try_get::<_, Option<String>>(i).ok().flatten().map_or(Cell::Null, Cell::Text)
                        }
                    })
                    .collect()
            })
            .collect())
    }

    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64, Failure> {
        if params.is_empty() {
            // BEGIN, COMMIT, DDL: the simple protocol.
            let rows = self.run("a statement", self.client.simple_query(sql))?;
            return Ok(rows
                .iter()
                .filter_map(|m| match m {
                    tokio_postgres::SimpleQueryMessage::CommandComplete(n) => Some(*n),
                    _ => None,
                })
                .sum());
        }
        let sql = numbered(sql);
        let boxes = Pg::params(params);
        let refs: Vec<&(dyn ToSql + Sync)> = boxes.iter().map(|b| &**b as &(dyn ToSql + Sync)).collect();
        self.run("a statement", self.client.execute(&sql, &refs))
    }
}

/// What a PostgreSQL error means to a user (no secret: the crate's errors hold none, and
/// addresses are shown redacted).
fn failure(e: &tokio_postgres::Error, shown: &str, what: &str) -> Failure {
    let message = match e.as_db_error() {
        Some(db) if db.code().code() == "28P01" || db.code().code() == "28000" => format!(
            "PostgreSQL at {shown} refused the credentials: check the address's user and password, or lease_password_file ({})",
            db.message()
        ),
        Some(db) if db.code().code() == "42501" => format!(
            "the PostgreSQL user at {shown} may not use the table {}: it needs SELECT, INSERT and UPDATE on it ({})",
            sql::TABLE,
            db.message()
        ),
        Some(db) => format!("PostgreSQL at {shown} refused {what}: {} ({})", db.message(), db.code().code()),
        None if e.is_closed() => format!("the connection to PostgreSQL at {shown} was closed"),
        None => format!("cannot reach PostgreSQL at {shown}: {e}"),
    };
    Failure { message }
}

/// A PostgreSQL store for `lease=postgres://…`.
pub(super) fn open(
    settings: &super::Settings<'_>,
    identity: Identity,
    ttl_ms: u64,
) -> Result<Box<dyn Store>, Error> {
    let url = settings.url;
    let shown = redact_url(url);
    let (rest, tls) = sql::take_sslmode(url)?;
    let mut config: tokio_postgres::Config = rest.parse().map_err(|e: tokio_postgres::Error| {
        Error::lease_unavailable(format_args!("the lease address `{shown}` is not a PostgreSQL address: {e}"))
    })?;
    // A host that is a path (`host=/run/postgresql`, or `%2F…` in the address) is the
    // directory of the server's unix socket. tokio-postgres reads it so only where it has unix
    // sockets (`Host::Unix`); elsewhere (Windows) it keeps the path as a host name to resolve,
    // which would fail later as an unknown host, or reach a host of that name.
    if config
        .get_hosts()
        .iter()
        .any(|h| matches!(h, tokio_postgres::config::Host::Tcp(name) if name.starts_with('/')))
    {
        return Err(crate::coord::bad(
            "lease",
            "this PostgreSQL address names a unix socket (a host that is a path, such as host=/run/postgresql), and the PostgreSQL client has unix sockets only on Unix systems: give the server's host name or IP address and port (postgres://user@host:5432/db)",
        ));
    }
    if let Some(path) = settings.password_file {
        if config.get_password().is_some() {
            return Err(Error::lease_unavailable(format_args!(
                "the lease address `{shown}` has a password, and lease_password_file gives one too: give one"
            )));
        }
        config.password(sql::password_from(path, "PostgreSQL")?);
    }
    let timeout = super::timeout(ttl_ms);
    config.connect_timeout(timeout);
    config.application_name("libsnowflake");
    let tls_config = match tls {
        Tls::Off => {
            config.ssl_mode(tokio_postgres::config::SslMode::Disable);
            None
        }
        Tls::Verified => {
            config.ssl_mode(tokio_postgres::config::SslMode::Require);
            let client = settings.tls_cert.zip(settings.tls_key);
            Some(sql::rustls_config(settings.tls_ca, client, "PostgreSQL")?)
        }
    };
    let connect_shown = shown.clone();
    let connect: sql::Connect = Box::new(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Failure { message: format!("cannot start the PostgreSQL client's runtime: {e}") })?;
        let shown = connect_shown.clone();
        let connected = runtime.block_on(async {
            tokio::time::timeout(timeout, async {
                match &tls_config {
                    Some(c) => {
                        let tls = tokio_postgres_rustls::MakeRustlsConnect::new(c.clone());
                        let (client, conn) = config.connect(tls).await?;
                        tokio::spawn(async move {
                            let _ = conn.await;
                        });
                        Ok(client)
                    }
                    None => {
                        let (client, conn) = config.connect(tokio_postgres::NoTls).await?;
                        tokio::spawn(async move {
                            let _ = conn.await;
                        });
                        Ok(client)
                    }
                }
            })
            .await
        });
        let client = match connected {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => return Err(failure(&e, &shown, "the connection")),
            Err(_) => {
                return Err(Failure { message: format!("PostgreSQL at {shown} did not answer in time") })
            }
        };
        let mut pg = Pg { runtime, client, timeout, shown };
        pg.execute("SET synchronous_commit = on", &[])?;
        // A holder stopped inside a claim's transaction (SIGSTOP, a VM stall) would hold its
        // row's lock, and keep the value from every other host, for as long as it stays
        // stopped: the server ends such a session after a TTL (its claim was never committed).
        pg.execute(&format!("SET idle_in_transaction_session_timeout = {ttl_ms}"), &[])?;
        Ok(Box::new(pg) as Box<dyn Db>)
    });
    Ok(Box::new(SqlStore::new(&POSTGRES, connect, shown, identity, false)))
}
