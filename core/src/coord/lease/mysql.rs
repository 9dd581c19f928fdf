//! The lease store in MySQL or MariaDB (`lease=mysql://…`): `super::sql`'s table through the
//! `mysql` crate's blocking connection, with read, write and connect timeouts, TLS through
//! rustls, and `CLIENT_FOUND_ROWS` (an `UPDATE` counts the rows it matched).
//!
//! A mark is trusted only when written by the server answering now, in its current run, with
//! the replication history it has now: MySQL's `@@server_uuid`, MariaDB's `@@server_id` and
//! `@@gtid_domain_id` with its `@@gtid_slave_pos` (which moves whenever the server has applied
//! another primary's transactions: a former primary brought back as a replica and promoted
//! again no longer trusts the marks it wrote before), and the server's start (`UNIX_TIMESTAMP()`
//! less `Uptime`, both of the statement's start, so one run gives one value). They are hashed
//! to a BIGINT read once per connection and written as a value, not as the expression: a
//! replica applying a statement-based binary log would evaluate the expression itself and
//! store its own run, which it would trust once promoted. A promoted replica, a failback or a
//! restart makes the next claim start past what an unrecorded holder may issue. A server whose
//! commits are not durable (`innodb_flush_log_at_trx_commit` other than 1) never has its marks
//! trusted alone.

use super::sql::{self, Cell, Db, Dialect, Param, SqlStore, Tls};
use super::{Failure, Identity, Store};
use crate::error::Error;
use crate::options::redact_url;
use mysql::prelude::Queryable;

const NOW_MS: &str = "CAST(FLOOR(UNIX_TIMESTAMP(NOW(6)) * 1000) AS SIGNED)";
const CREATE: &str = "CREATE TABLE IF NOT EXISTS {} (name VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY, holder VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL, expires_at BIGINT NULL, mark BIGINT NULL, mark_server BIGINT NULL) ENGINE=InnoDB";

static MYSQL: Dialect = Dialect {
    name: "MySQL",
    now_ms: NOW_MS,
    // With performance_schema off the start reads NULL, which CONCAT_WS leaves out: the
    // server's UUID alone (a restart of a durable server keeps its marks).
    server: "CAST(CONV(SUBSTR(MD5(CONCAT_WS(':', @@server_uuid, UNIX_TIMESTAMP() - CAST((SELECT VARIABLE_VALUE FROM performance_schema.global_status WHERE VARIABLE_NAME = 'Uptime') AS SIGNED))), 1, 15), 16, 10) AS SIGNED)",
    server_literal: true,
    create: CREATE,
    insert_missing: "INSERT IGNORE INTO {} (name) VALUES (?)",
    returning: false,
};

static MARIADB: Dialect = Dialect {
    name: "MySQL",
    now_ms: NOW_MS,
    server: "CAST(CONV(SUBSTR(MD5(CONCAT_WS(':', @@server_id, @@gtid_domain_id, UNIX_TIMESTAMP() - CAST((SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'UPTIME') AS SIGNED), @@gtid_slave_pos)), 1, 15), 16, 10) AS SIGNED)",
    server_literal: true,
    create: CREATE,
    insert_missing: "INSERT IGNORE INTO {} (name) VALUES (?)",
    returning: false,
};

struct My {
    conn: mysql::Conn,
    shown: String,
}

fn params(params: &[Param<'_>]) -> mysql::Params {
    if params.is_empty() {
        return mysql::Params::Empty;
    }
    mysql::Params::Positional(
        params
            .iter()
            .map(|p| match p {
                Param::Int(n) => mysql::Value::Int(*n),
                Param::Text(t) => mysql::Value::Bytes(t.as_bytes().to_vec()),
            })
            .collect(),
    )
}

fn cell(v: mysql::Value) -> Cell {
    match v {
        mysql::Value::NULL => Cell::Null,
        mysql::Value::Int(n) => Cell::Int(n),
        mysql::Value::UInt(n) => i64::try_from(n).map_or(Cell::Null, Cell::Int),
        mysql::Value::Bytes(b) => Cell::Text(String::from_utf8_lossy(&b).into_owned()),
        _ => Cell::Null,
    }
}

impl Db for My {
    fn query(&mut self, sql: &str, p: &[Param<'_>]) -> Result<Vec<Vec<Cell>>, Failure> {
        let rows: Vec<mysql::Row> =
            if p.is_empty() { self.conn.query(sql) } else { self.conn.exec(sql, params(p)) }
                .map_err(|e| failure(&e, &self.shown))?;
        Ok(rows.into_iter().map(|r| r.unwrap().into_iter().map(cell).collect()).collect())
    }

    fn execute(&mut self, sql: &str, p: &[Param<'_>]) -> Result<u64, Failure> {
        if p.is_empty() {
            // BEGIN, COMMIT, DDL: the text protocol.
            self.conn.query_drop(sql)
        } else {
            self.conn.exec_drop(sql, params(p))
        }
        .map_err(|e| failure(&e, &self.shown))?;
        Ok(self.conn.affected_rows())
    }
}

/// What a MySQL error means to a user (no secret: addresses are shown redacted, and the
/// server's messages name a user, never a password).
fn failure(e: &mysql::Error, shown: &str) -> Failure {
    let message = match e {
        mysql::Error::MySqlError(m) if m.code == 1045 => format!(
            "MySQL at {shown} refused the credentials: check the address's user and password, or lease_password_file ({})",
            m.message
        ),
        mysql::Error::MySqlError(m) if [1142, 1044, 1227].contains(&m.code) => format!(
            "the MySQL user at {shown} may not use the table {}: it needs SELECT, INSERT and UPDATE on it ({})",
            sql::TABLE,
            m.message
        ),
        mysql::Error::MySqlError(m) => format!("MySQL at {shown}: {} ({})", m.message, m.code),
        e if timed_out(e) => format!("MySQL at {shown} did not answer in time"),
        mysql::Error::UrlError(_) => format!("the lease address `{shown}` is not a MySQL address"),
        // The crate's Display wraps each kind in its type's name (`DriverError { … }`): the
        // inner error alone reads as a sentence.
        mysql::Error::TlsError(t) => format!("cannot reach MySQL at {shown}: TLS: {t}"),
        other => {
            let inner: &dyn std::fmt::Display = match other {
                mysql::Error::IoError(io) => io,
                mysql::Error::DriverError(d) => d,
                mysql::Error::CodecError(c) => c,
                other => other,
            };
            format!("cannot reach MySQL at {shown}: {inner}")
        }
    };
    Failure { message }
}

/// A read or write past the socket's timeout (EAGAIN or ETIMEDOUT), from the socket itself or
/// from the packet codec reading from it.
fn timed_out(e: &mysql::Error) -> bool {
    let io = match e {
        mysql::Error::IoError(io) => Some(io),
        mysql::Error::CodecError(codec) => {
            std::error::Error::source(codec).and_then(|s| s.downcast_ref::<std::io::Error>())
        }
        _ => None,
    };
    io.is_some_and(|io| matches!(io.kind(), std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock))
}

/// A MySQL (or MariaDB) store for `lease=mysql://…`.
pub(super) fn open(
    settings: &super::Settings<'_>,
    identity: Identity,
    ttl_ms: u64,
) -> Result<Box<dyn Store>, Error> {
    let url = settings.url;
    let shown = redact_url(url);
    let (rest, tls) = sql::take_sslmode(url)?;
    let opts = mysql::Opts::from_url(&rest).map_err(|e| {
        Error::lease_unavailable(format_args!(
            "the lease address `{shown}` is not a MySQL address: {}",
            // The crate's URL errors may quote the address: name the kind only.
            match e {
                mysql::UrlError::UnknownParameter(..) => "an unknown parameter (a lease takes sslmode=…, and the mysql crate's own: socket, prefer_socket, …)",
                mysql::UrlError::InvalidValue(..) => "a parameter with an invalid value",
                mysql::UrlError::UnsupportedScheme(..) => "not a mysql:// URL",
                _ => "it cannot be parsed",
            }
        ))
    })?;
    let mut builder = mysql::OptsBuilder::from_opts(opts);
    if let Some(path) = settings.password_file {
        if mysql::Opts::from_url(&rest).ok().and_then(|o| o.get_pass().map(str::to_string)).is_some() {
            return Err(Error::lease_unavailable(format_args!(
                "the lease address `{shown}` has a password, and lease_password_file gives one too: give one"
            )));
        }
        builder = builder.pass(Some(sql::password_from(path, "MySQL")?));
    }
    let timeout = super::timeout(ttl_ms);
    builder = builder
        .read_timeout(Some(timeout))
        .write_timeout(Some(timeout))
        .tcp_connect_timeout(Some(timeout))
        .prefer_socket(false)
        .additional_capabilities(mysql::consts::CapabilityFlags::CLIENT_FOUND_ROWS)
        // MariaDB (10.3 and later, in the comment MySQL skips) ends a session left idle in a
        // transaction after a TTL: a holder stopped inside a claim's transaction would hold its
        // row's lock, and keep the value from every other host, for as long as it stays
        // stopped. (MySQL has no such setting: there, until the holder resumes.)
        .init(vec![format!(
            "SET time_zone = '+00:00' /*M!100300 , idle_transaction_timeout = {} */",
            ttl_ms.div_ceil(1000)
        )]);
    if tls == Tls::Verified {
        let mut ssl = mysql::SslOpts::default();
        if let Some(ca) = settings.tls_ca {
            ssl = ssl.with_root_cert_path(Some(std::borrow::Cow::Owned(ca.to_path_buf())));
        }
        if let (Some(cert), Some(key)) = (settings.tls_cert, settings.tls_key) {
            ssl = ssl.with_client_identity(Some(mysql::ClientIdentity::new(
                cert.to_path_buf(),
                key.to_path_buf(),
            )));
        }
        builder = builder.ssl_opts(Some(ssl));
    }
    let opts: mysql::Opts = builder.into();
    let connect_shown = shown.clone();
    let connect: sql::Connect = Box::new(move || {
        let conn = mysql::Conn::new(opts.clone()).map_err(|e| failure(&e, &connect_shown))?;
        Ok(Box::new(My { conn, shown: connect_shown.clone() }) as Box<dyn Db>)
    });
    // Whether commits survive a crash (else no mark is trusted alone), and which dialect: a
    // probe that fails refuses the open (a guess would write MySQL's statements to MariaDB).
    let mut probe = connect().map_err(|f| Error::lease_unavailable(f.message))?;
    let mut first = |sql: &str| {
        probe
            .query(sql, &[])
            .map(|rows| rows.into_iter().next().and_then(|r| r.into_iter().next()).unwrap_or(Cell::Null))
            .map_err(|f| Error::lease_unavailable(f.message))
    };
    let durable = match first("SELECT @@innodb_flush_log_at_trx_commit")? {
        Cell::Int(n) => n == 1,
        Cell::Text(t) => t == "1",
        Cell::Null => false,
    };
    let mariadb = matches!(first("SELECT VERSION()")?, Cell::Text(t) if t.contains("MariaDB"));
    drop(probe);
    let dialect = if mariadb { &MARIADB } else { &MYSQL };
    Ok(Box::new(SqlStore::new(dialect, connect, shown, identity, !durable)))
}
