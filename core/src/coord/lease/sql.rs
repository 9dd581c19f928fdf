//! The lease store in a SQL database: one table, `libsnowflake_leases`, created on first use,
//! written in the SQL that PostgreSQL, MySQL and MariaDB share; the client of each database
//! is one small file (`postgres`, `mysql`) behind the [`Db`] trait. The protocol
//! is `super`'s (`coord::lease`).
//!
//! The table (docs/processes.md gives it for DBAs who create it by hand):
//!
//! | column | what it holds |
//! |---|---|
//! | `name` (primary key) | the identity: the layout's fingerprint and every node value, the leased field's included (`0123456789abcdef:datacenter=1,worker=5`) |
//! | `holder` | the holder's token; NULL when free |
//! | `expires_at` | when the claim lapses unless renewed, Unix ms on the database's clock |
//! | `mark` | the high-water mark: the exclusive end tick of what the holders may have issued |
//! | `mark_server` | which server, in which run, wrote the mark: a mark written before a failover or a restart is not trusted alone |
//!
//! - **Claim**: reads the candidates' rows, then takes the first free one (no row, no holder,
//!   our token, or expired) under a row lock (`SELECT … FOR UPDATE`) in a transaction, and
//!   sets the holder and expiry. Renewals, reservations and releases are single `UPDATE`s
//!   that check the token and the expiry, so they serialize with a claim on the row's lock.
//! - Every time is the database's clock, so that hosts' clocks never decide who holds what.

use super::{Ask, Claimed, Failure, Identity, Store};
use crate::error::Error;
use std::fmt::Write as _;

/// The table every SQL lease store uses.
pub(crate) const TABLE: &str = "libsnowflake_leases";

/// A value passed to a statement.
pub(crate) enum Param<'a> {
    Int(i64),
    Text(&'a str),
}

/// A value read from a row: every column the store reads is a BIGINT or text.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Cell {
    Null,
    Int(i64),
    Text(String),
}

impl Cell {
    fn int(&self) -> Option<i64> {
        match self {
            Cell::Int(n) => Some(*n),
            Cell::Text(t) => t.parse().ok(),
            Cell::Null => None,
        }
    }
    fn text(&self) -> Option<&str> {
        match self {
            Cell::Text(t) => Some(t),
            _ => None,
        }
    }
}

/// What differs between the databases: their SQL dialect's few words.
pub(crate) struct Dialect {
    /// The database's name, for messages.
    pub name: &'static str,
    /// The database's clock in Unix ms, as an expression.
    pub now_ms: &'static str,
    /// Which server wrote a mark, in which run, as a BIGINT expression.
    pub server: &'static str,
    /// Whether a mark's `server` is written as the value read on connecting rather than as
    /// the expression: a replica that applies the statement (MySQL's statement-based binary
    /// log) would evaluate the expression itself and store its own run, which it would then
    /// trust once promoted. PostgreSQL replicates the rows written, so its expression stays.
    pub server_literal: bool,
    /// `CREATE TABLE IF NOT EXISTS …`.
    pub create: &'static str,
    /// Inserts a free row for a name unless it exists: `{}` is the table.
    pub insert_missing: &'static str,
    /// Whether an `UPDATE` can return a column (`RETURNING`).
    pub returning: bool,
}

/// A connection to a database, made by the store file of each database.
pub(crate) trait Db: Send {
    /// Runs a statement with `?` placeholders; its rows.
    fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Vec<Cell>>, Failure>;
    /// Runs a statement; how many rows it matched.
    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64, Failure>;
}

/// Connects a [`Db`] (the address and its files were checked when the store was made).
pub(crate) type Connect = Box<dyn Fn() -> Result<Box<dyn Db>, Failure> + Send>;

/// A lease store in a SQL database.
pub(crate) struct SqlStore {
    dialect: &'static Dialect,
    connect: Connect,
    db: Option<Box<dyn Db>>,
    /// The address for messages (no secret).
    shown: String,
    identity: Identity,
    /// Whether no mark is trusted alone (a database whose commits are not durable).
    always_stale: bool,
    /// The server's run as read on this connection (`Dialect::server_literal`).
    server: Option<i64>,
}

/// How many values one claim call reads.
const SCAN: u64 = 1024;

/// The longest `name` kept as it is; a longer one is `<fingerprint>:#<hash>` (two identities
/// that met on one hashed name would only exclude each other, never repeat).
const MAX_NAME: usize = 255;

impl SqlStore {
    pub(crate) fn new(
        dialect: &'static Dialect,
        connect: Connect,
        shown: String,
        identity: Identity,
        always_stale: bool,
    ) -> SqlStore {
        SqlStore { dialect, connect, db: None, shown, identity, always_stale, server: None }
    }

    fn name_of(&self, value: u64) -> String {
        let name = self.identity.name(value);
        if name.len() <= MAX_NAME {
            return name;
        }
        let mut h = crate::hash::Fnv1a::new();
        let _ = h.write_str(&name);
        format!("{:016x}:#{:016x}", self.identity.fingerprint, h.0)
    }

    /// The connection, made (and the table created) when there is none.
    fn db(&mut self) -> Result<&mut Box<dyn Db>, Failure> {
        if self.db.is_none() {
            let mut db = ensure_table(self.dialect, &self.connect, &self.shown)?;
            self.server = None;
            if self.dialect.server_literal {
                let rows = db.query(&format!("SELECT {}", self.dialect.server), &[])?;
                self.server = rows.first().and_then(|r| r.first()).and_then(Cell::int);
                if self.server.is_none() {
                    return Err(Failure {
                        message: format!(
                            "{} at {} did not say which server it is",
                            self.dialect.name, self.shown
                        ),
                    });
                }
            }
            self.db = Some(db);
        }
        Ok(self.db.as_mut().expect("connected above"))
    }

    /// Runs `f` on the connection; a failure drops it (the next call connects again: a
    /// statement cut short leaves a connection in an unknown state).
    fn with<T>(&mut self, f: impl FnOnce(&mut dyn Db, &Dialect) -> Result<T, Failure>) -> Result<T, Failure> {
        let dialect = self.dialect;
        self.db()?;
        let db = self.db.as_mut().expect("connected above");
        match f(&mut **db, dialect) {
            Ok(v) => Ok(v),
            Err(e) => {
                self.db = None;
                Err(e)
            }
        }
    }

    /// What a mark's `mark_server` is set to: the expression, or a placeholder and the value
    /// this connection read (`Dialect::server_literal`).
    fn server_sql(&self) -> (&'static str, Option<i64>) {
        match (self.dialect.server_literal, self.server) {
            (true, Some(v)) => ("?", Some(v)),
            _ => (self.dialect.server, None),
        }
    }

    /// Takes `name` for `ask.token` if it is free, under its row's lock. `None`: not free (or
    /// its mark is poisoned: counted in `claimed`).
    fn take(&mut self, name: &str, ask: &Ask<'_>, claimed: &mut Claimed) -> Result<bool, Failure> {
        let always_stale = self.always_stale;
        let d = self.dialect;
        let insert = d.insert_missing.replace("{}", TABLE);
        let select = format!(
            "SELECT holder, CASE WHEN holder IS NULL OR holder = ? OR expires_at <= {now} THEN 1 ELSE 0 END, mark, mark_server, {server} FROM {TABLE} WHERE name = ? FOR UPDATE",
            now = d.now_ms,
            server = d.server
        );
        let update = format!("UPDATE {TABLE} SET holder = ?, expires_at = {} + ? WHERE name = ?", d.now_ms);
        let ttl = ask.ttl_ms as i64;
        self.with(|db, _| {
            db.execute(&insert, &[Param::Text(name)])?;
            db.execute("BEGIN", &[])?;
            let rows = db.query(&select, &[Param::Text(ask.token), Param::Text(name)])?;
            let row = rows.into_iter().next().unwrap_or_default();
            let cell = |i: usize| row.get(i).cloned().unwrap_or(Cell::Null);
            let ours = cell(0).text() == Some(ask.token);
            let free = cell(1).int() == Some(1);
            let mark = cell(2).int().and_then(|m| u64::try_from(m).ok());
            let poisoned = !ours && mark.is_some_and(|m| m > ask.bound);
            if !free || poisoned {
                db.execute("ROLLBACK", &[])?;
                if free {
                    claimed.skipped += 1;
                    claimed.furthest = claimed.furthest.max(mark.unwrap_or(0));
                }
                return Ok(false);
            }
            db.execute(&update, &[Param::Text(ask.token), Param::Int(ttl), Param::Text(name)])?;
            db.execute("COMMIT", &[])?;
            claimed.ours = ours;
            claimed.mark = mark;
            // A row without a mark written in this run (none, or a NULL server) proves nothing.
            claimed.mark_stale = always_stale || cell(3) == Cell::Null || cell(3) != cell(4);
            Ok(true)
        })
    }
}

/// A connection on which the table exists: created unless it exists; a user who may not create
/// it but finds it made by a DBA goes on. The table is looked for on a new connection, never on
/// the one whose CREATE failed: a CREATE that did not answer in time (a metadata lock held by
/// other sessions, a loaded server) may still answer, and its late answer would be read as the
/// next statement's (a clock read or the server's run read as no row: the refusals without a
/// cause of issue 38's soak).
fn ensure_table(d: &Dialect, connect: &Connect, shown: &str) -> Result<Box<dyn Db>, Failure> {
    let create = d.create.replace("{}", TABLE);
    let mut db = connect()?;
    let Err(e) = db.execute(&create, &[]) else { return Ok(db) };
    drop(db);
    let mut db = connect()?;
    match db.query(&format!("SELECT name FROM {TABLE} WHERE 1 = 0"), &[]) {
        Ok(_) => Ok(db),
        Err(_) => Err(Failure {
            message: format!(
                "the table {TABLE} does not exist in {} at {shown} and cannot be created ({}): create it as docs/processes.md shows, or grant this user CREATE",
                d.name, e.message
            ),
        }),
    }
}

impl Store for SqlStore {
    fn name(&self) -> &'static str {
        self.dialect.name
    }

    fn place(&self) -> String {
        format!(
            "{} at {} (table {TABLE}, names {}*{})",
            self.dialect.name,
            self.shown,
            self.name_of(0).trim_end_matches(&format!("0{}", self.identity.tail)),
            self.identity.tail
        )
    }

    fn scan(&self) -> u64 {
        SCAN
    }

    fn clock_ms(&mut self) -> Result<u64, Failure> {
        let shown = self.shown.clone();
        self.with(|db, d| {
            let rows = db.query(&format!("SELECT {}", d.now_ms), &[])?;
            rows.first()
                .and_then(|r| r.first())
                .and_then(Cell::int)
                .and_then(|n| u64::try_from(n).ok())
                .ok_or_else(|| Failure { message: format!("{} at {shown} gave no clock reading", d.name) })
        })
    }

    fn claim(&mut self, ask: &Ask<'_>) -> Result<Claimed, Failure> {
        let mut order: Vec<u64> = ask.prefer.into_iter().collect();
        order.extend((ask.from..ask.to).filter(|v| Some(*v) != ask.prefer));
        let names: Vec<String> = order.iter().map(|&v| self.name_of(v)).collect();
        // The candidates' rows, unlocked: which are worth a locked look.
        let sql = format!(
            "SELECT name, CASE WHEN holder IS NULL OR holder = ? OR expires_at <= {} THEN 1 ELSE 0 END, mark FROM {TABLE} WHERE name IN ({})",
            self.dialect.now_ms,
            vec!["?"; names.len()].join(", ")
        );
        let mut params = vec![Param::Text(ask.token)];
        params.extend(names.iter().map(|n| Param::Text(n)));
        let rows = self.with(|db, _| db.query(&sql, &params))?;
        let seen: std::collections::HashMap<String, (bool, Option<i64>)> = rows
            .into_iter()
            .filter_map(|r| {
                Some((r.first()?.text()?.to_string(), (r.get(1)?.int() == Some(1), r.get(2)?.int())))
            })
            .collect();
        let mut claimed = Claimed::default();
        for (value, name) in order.iter().zip(&names) {
            if let Some((free, _)) = seen.get(name) {
                if !free {
                    continue;
                }
            }
            if self.take(name, ask, &mut claimed)? {
                claimed.value = Some(*value);
                return Ok(claimed);
            }
        }
        Ok(claimed)
    }

    fn renew(&mut self, value: u64, token: &str, ttl_ms: u64) -> Result<Option<u64>, Failure> {
        let name = self.name_of(value);
        let shown = self.shown.clone();
        self.with(|db, d| {
            let now = d.now_ms;
            let update = format!(
                "UPDATE {TABLE} SET expires_at = {now} + ? WHERE name = ? AND holder = ? AND expires_at > {now}"
            );
            let params = [Param::Int(ttl_ms as i64), Param::Text(&name), Param::Text(token)];
            let (held, rows) = if d.returning {
                let rows = db.query(&format!("{update} RETURNING {now}"), &params)?;
                (!rows.is_empty(), rows)
            } else {
                let held = db.execute(&update, &params)? == 1;
                (held, db.query(&format!("SELECT {now}"), &[])?)
            };
            let clock = rows.first().and_then(|r| r.first()).and_then(Cell::int).and_then(|n| u64::try_from(n).ok());
            match (held, clock) {
                (true, Some(ms)) => Ok(Some(ms)),
                (true, None) => Err(Failure { message: format!("{} at {shown} gave no clock reading", d.name) }),
                (false, _) => Ok(None),
            }
        })
    }

    fn set_mark(&mut self, value: u64, token: &str, end: u64) -> Result<bool, Failure> {
        let name = self.name_of(value);
        self.db()?;
        let (server, literal) = self.server_sql();
        self.with(|db, d| {
            let sql = format!(
                "UPDATE {TABLE} SET mark = GREATEST(COALESCE(mark, 0), ?), mark_server = {server} WHERE name = ? AND holder = ? AND expires_at > {}",
                d.now_ms
            );
            let mut p = vec![Param::Int(end as i64)];
            p.extend(literal.map(Param::Int));
            p.extend([Param::Text(&name), Param::Text(token)]);
            Ok(db.execute(&sql, &p)? == 1)
        })
    }

    fn release(&mut self, value: u64, token: &str, end: u64) -> Result<(), Failure> {
        let name = self.name_of(value);
        self.db()?;
        let (server, literal) = self.server_sql();
        self.with(|db, _| {
            let sql = format!(
                "UPDATE {TABLE} SET mark = ?, mark_server = {server}, holder = NULL, expires_at = NULL WHERE name = ? AND holder = ?"
            );
            let mut p = vec![Param::Int(end as i64)];
            p.extend(literal.map(Param::Int));
            p.extend([Param::Text(&name), Param::Text(token)]);
            db.execute(&sql, &p).map(|_| ())
        })
    }

    fn unclaim(&mut self, value: u64, token: &str) -> Result<(), Failure> {
        let name = self.name_of(value);
        self.with(|db, _| {
            let sql =
                format!("UPDATE {TABLE} SET holder = NULL, expires_at = NULL WHERE name = ? AND holder = ?");
            db.execute(&sql, &[Param::Text(&name), Param::Text(token)]).map(|_| ())
        })
    }
}

/// The query part of a database address split into what libsnowflake reads (`sslmode`) and
/// the rest, for the client; an unknown `sslmode` is refused.
pub(crate) fn take_sslmode(url: &str) -> Result<(String, Tls), Error> {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut rest = vec![];
    let mut tls = Tls::Off;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("sslmode", mode)) => {
                tls = match mode {
                    "disable" => Tls::Off,
                    "require" | "verify-ca" | "verify-full" => Tls::Verified,
                    _ => {
                        return Err(Error::lease_unavailable(format_args!(
                            "the lease address `{}` has sslmode={}: a lease takes sslmode=disable (the default), or require, verify-ca or verify-full, which all verify the server's certificate and name (against lease_tls_ca, else the system's roots): a lease never uses TLS unverified",
                            crate::options::redact_url(url),
                            if mode.len() <= 16 { mode } else { "…" }
                        )))
                    }
                }
            }
            _ => rest.push(pair),
        }
    }
    let url = if rest.is_empty() { base.to_string() } else { format!("{base}?{}", rest.join("&")) };
    Ok((url, tls))
}

/// Whether a database connection uses TLS.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tls {
    Off,
    /// TLS, the server's certificate and name verified.
    Verified,
}

/// The rustls configuration of a verified connection: `lease_tls_ca`, else the system's roots;
/// a client certificate when given.
pub(crate) fn rustls_config(
    ca: Option<&std::path::Path>,
    client: Option<(&std::path::Path, &std::path::Path)>,
    what: &str,
) -> Result<rustls::ClientConfig, Error> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    let bad = |path: &std::path::Path, e: &dyn std::fmt::Display| {
        Error::lease_unavailable(format_args!(
            "the TLS file {} for {what} cannot be used: {e}",
            path.display()
        ))
    };
    match ca {
        Some(path) => {
            for cert in CertificateDer::pem_file_iter(path).map_err(|e| bad(path, &e))? {
                roots.add(cert.map_err(|e| bad(path, &e))?).map_err(|e| bad(path, &e))?;
            }
            if roots.is_empty() {
                return Err(bad(path, &"it holds no PEM certificate"));
            }
        }
        None => {
            roots.add_parsable_certificates(super::system_roots(what)?);
        }
    }
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::lease_unavailable(format_args!("TLS for {what}: {e}")))?
        .with_root_certificates(roots);
    match client {
        Some((cert, key)) => {
            let chain = CertificateDer::pem_file_iter(cert)
                .map_err(|e| bad(cert, &e))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| bad(cert, &e))?;
            let key = PrivateKeyDer::from_pem_file(key).map_err(|e| bad(key, &e))?;
            builder.with_client_auth_cert(chain, key).map_err(|e| bad(cert, &e))
        }
        None => Ok(builder.with_no_client_auth()),
    }
}

/// The password of `lease_password_file` (a final newline dropped).
pub(crate) fn password_from(path: &std::path::Path, what: &str) -> Result<String, Error> {
    let bytes =
        std::fs::read(path).map_err(|e| Error::io("reading the lease password file", path.display(), e))?;
    let text = String::from_utf8(bytes).map_err(|_| {
        Error::lease_unavailable(format_args!(
            "the {what} password file {} is not UTF-8 text",
            path.display()
        ))
    })?;
    let text = text.strip_suffix('\n').map(|t| t.strip_suffix('\r').unwrap_or(t)).unwrap_or(&text);
    if text.is_empty() {
        return Err(Error::lease_unavailable(format_args!(
            "the {what} password file {} is empty",
            path.display()
        )));
    }
    Ok(text.to_string())
}
