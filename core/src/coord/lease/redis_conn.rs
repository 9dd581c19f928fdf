//! Where a Redis lease lives and how it is reached, through the `redis` crate's blocking
//! clients: every address form of `lease=`, the credentials (in the address or in
//! `lease_password_file`), TLS (rustls, verified against the system's roots or
//! `lease_tls_ca`, with an optional client certificate), Sentinel, and Redis Cluster
//! (`redis+cluster://host:port,host:port`: one connection to the primary that serves the
//! slot of the lease's keys, as the seeds say, found again after a failover or a move).
//!
//! Every connection has timeouts (connect, TLS handshake, AUTH and each reply), so that a
//! frozen or unreachable server costs a bounded time. Sentinel and Cluster discovery are done
//! here rather than by the crate's clients: its `Sentinel` client's blocking connections have
//! no timeouts (a frozen sentinel would hang the lease's renewal), and its blocking cluster
//! client, reconnecting after a timeout, greets every node of the slot map with a `PING` that
//! has none (a stopped primary would hang every call until it resumed). Every key of a lease
//! lives in one slot (its hash tag), so one node serves it all.
//!
//! No message made here holds a password: addresses are shown through
//! [`crate::options::redact_url`], and the crate's errors never echo credentials.

use crate::error::Error;
use crate::options::redact_url;
use redis::{ConnectionAddr, ConnectionInfo, IntoConnectionInfo, RedisConnectionInfo, TlsCertificates};
use std::path::Path;
use std::time::Duration;

pub(crate) use super::Settings;

enum Place {
    /// One server: TCP (plain or TLS) or a unix socket.
    Direct(ConnectionInfo),
    /// The master named `master`, as the sentinels at `sentinels` say; reached with `node`'s
    /// database and credentials, over TLS when `tls`.
    Sentinel { sentinels: Vec<ConnectionInfo>, master: String, node: RedisConnectionInfo, tls: bool },
    /// A Redis Cluster reached through any of `nodes` (seeds: they name the slot's primary).
    Cluster { nodes: Vec<ConnectionInfo>, node: RedisConnectionInfo, tls: bool },
}

/// A connection to the server that holds the lease's keys (in a cluster: their slot's primary).
pub(crate) struct Conn {
    pub link: redis::Connection,
    /// Behind a Sentinel address, the master it reached, as the sentinels named it: every
    /// script first checks that they still name it (`Target::still_master`).
    master: Option<(String, u16)>,
}

impl From<redis::Connection> for Conn {
    fn from(link: redis::Connection) -> Conn {
        Conn { link, master: None }
    }
}

/// A Redis server (or a Sentinel-managed master) to connect to.
pub(crate) struct Target {
    place: Place,
    certificates: Option<TlsCertificates>,
    /// The address for messages: no password.
    pub shown: String,
    timeout: Duration,
}

/// Why a connection or a command failed, with the message a user should see.
pub(crate) struct Failure {
    pub message: String,
    /// Whether the connection must be made again (an I/O error, a timeout, a server that is
    /// no longer the master): the next call reconnects.
    pub reconnect: bool,
}

fn invalid(url: &str, why: impl std::fmt::Display) -> Error {
    Error::lease_unavailable(format_args!("the lease address `{}` {why}", redact_url(url)))
}

fn read_file(what: &str, path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|e| {
        Error::io(
            if what == "password" {
                "reading the Redis password file"
            } else {
                "reading a TLS file for Redis"
            },
            path.display(),
            e,
        )
    })
}

impl Target {
    /// Parses the address and reads the files the options name (nothing is connected yet).
    pub(crate) fn new(settings: &Settings<'_>, timeout: Duration) -> Result<Target, Error> {
        let url = settings.url;
        let shown = redact_url(url);
        let password = match settings.password_file {
            Some(path) => {
                let bytes = read_file("password", path)?;
                let text = String::from_utf8(bytes).map_err(|_| {
                    Error::lease_unavailable(format_args!(
                        "the Redis password file {} is not UTF-8 text",
                        path.display()
                    ))
                })?;
                let text =
                    text.strip_suffix('\n').map(|t| t.strip_suffix('\r').unwrap_or(t)).unwrap_or(&text);
                if text.is_empty() {
                    return Err(Error::lease_unavailable(format_args!(
                        "the Redis password file {} is empty",
                        path.display()
                    )));
                }
                Some(text.to_string())
            }
            None => None,
        };
        let tls = url.starts_with("rediss://")
            || url.starts_with("rediss+sentinel://")
            || url.starts_with("rediss+cluster://");
        // A user or password must be percent-encoded: one that holds a `/`, `?` or `#` would
        // be read as part of the host, path or query (and shown as such in messages).
        let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
        if !url.starts_with("unix://")
            && after_scheme.rsplit_once('@').is_some_and(|(u, _)| u.contains(['/', '?', '#']))
        {
            return Err(invalid(
                url,
                "has a user or password holding an unencoded `/`, `?`, `#` or `@`: percent-encode them (%2F, %3F, %23, %40), or give the password in lease_password_file",
            ));
        }
        if url.contains('#') {
            return Err(invalid(url, "has a `#` part: a lease never skips the server's certificate check"));
        }
        let certificates = if tls {
            // Every connection's roots, read here: left to the `redis` crate, the system's
            // would be read again at each connection, inside its timeout (hundreds of files:
            // under a busy disk, longer than the timeout).
            let root_cert = match settings.tls_ca {
                Some(path) => read_file("ca", path)?,
                None => pem_of(&super::system_roots("Redis")?),
            };
            let client_tls = match (settings.tls_cert, settings.tls_key) {
                (Some(cert), Some(key)) => Some(redis::ClientTlsConfig {
                    client_cert: read_file("cert", cert)?,
                    client_key: read_file("key", key)?,
                }),
                _ => None,
            };
            Some(TlsCertificates { client_tls, root_cert: Some(root_cert) })
        } else {
            None
        };
        let place = match (url.split_once("+sentinel://"), url.split_once("+cluster://")) {
            (Some((_, rest)), _) => Target::sentinel(url, rest, tls, password)?,
            (_, Some((_, rest))) => Target::cluster(url, rest, tls, password)?,
            // The redis crate reaches unix sockets only on Unix systems; elsewhere (Windows)
            // it cannot read the address at all: say why, as an option that cannot work here.
            (None, None) if url.starts_with("unix://") && !ConnectionAddr::Unix(Default::default()).is_supported() => {
                return Err(crate::coord::bad(
                    "lease",
                    "a unix:// address names Redis's unix socket, and the Redis client has unix sockets only on Unix systems: give the server's host name or IP address and port (redis://host:6379, or rediss:// for TLS)",
                ))
            }
            (None, None) => {
                let info = url.into_connection_info().map_err(|e| {
                    invalid(
                        url,
                        format_args!("is not a Redis address: {}", e.detail().unwrap_or(&e.to_string())),
                    )
                })?;
                let mut redis = info.redis_settings().clone();
                if let Some(password) = password {
                    if redis.password().is_some() {
                        return Err(invalid(
                            url,
                            "has a password, and lease_password_file gives one too: give one",
                        ));
                    }
                    redis = redis.set_password(password);
                }
                Place::Direct(info.set_redis_settings(redis.set_skip_set_lib_name()))
            }
        };
        Ok(Target { place, certificates, shown, timeout })
    }

    /// `[user[:password]@]host[:port],host[:port]/master[/db]`.
    fn sentinel(url: &str, rest: &str, tls: bool, password: Option<String>) -> Result<Place, Error> {
        // The credentials end at the last `@` (a password may hold an unencoded `/`), and no
        // part of the address is echoed in a message but through `redact_url`.
        let (credentials, after) = match rest.rsplit_once('@') {
            Some((c, h)) => (Some(c), h),
            None => (None, rest),
        };
        if after.contains('?') {
            return Err(invalid(
                url,
                "has a `?` part: a Sentinel address takes no parameters (give the password in the address, redis+sentinel://:PASSWORD@host:port/MASTER, or in lease_password_file)",
            ));
        }
        let (hosts, path) = after.split_once('/').unwrap_or((after, ""));
        let mut parts = path.split('/').filter(|p| !p.is_empty());
        let master = parts.next().ok_or_else(|| {
            invalid(url, "names no master: redis+sentinel://host:port,host:port/MASTER[/db]")
        })?;
        let db = match parts.next() {
            Some(d) => d.parse::<i64>().map_err(|_| invalid(url, "has a database that is not a number"))?,
            None => 0,
        };
        if parts.next().is_some() {
            return Err(invalid(url, "has more than /MASTER/DB after the sentinels"));
        }
        let node = node_info(url, credentials, password, db)?;
        let sentinels = host_list(url, hosts, tls, 26379, "sentinel")?
            .into_iter()
            .map(|info| {
                let settings = info.redis_settings().clone().set_skip_set_lib_name();
                info.set_redis_settings(settings)
            })
            .collect::<Vec<_>>();
        if sentinels.is_empty() {
            return Err(invalid(url, "names no sentinel: redis+sentinel://host:port,host:port/MASTER[/db]"));
        }
        Ok(Place::Sentinel { sentinels, master: master.to_string(), node, tls })
    }

    /// `[user[:password]@]host:port,host:port`: the cluster's seed nodes.
    fn cluster(url: &str, rest: &str, tls: bool, password: Option<String>) -> Result<Place, Error> {
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        if !path.is_empty() {
            return Err(invalid(
                url,
                "has a path: a Redis Cluster has one database, redis+cluster://host:port,host:port",
            ));
        }
        let (credentials, hosts) = match authority.rsplit_once('@') {
            Some((c, h)) => (Some(c), h),
            None => (None, authority),
        };
        let node = node_info(url, credentials, password, 0)?;
        let nodes = host_list(url, hosts, tls, 6379, "node")?
            .into_iter()
            .map(|info| info.set_redis_settings(node.clone()))
            .collect::<Vec<_>>();
        if nodes.is_empty() {
            return Err(invalid(url, "names no node: redis+cluster://host:port,host:port"));
        }
        Ok(Place::Cluster { nodes, node, tls })
    }

    /// Whether the address is a Redis Cluster.
    pub(crate) fn is_cluster(&self) -> bool {
        matches!(self.place, Place::Cluster { .. })
    }

    /// A connection with timeouts on every reply, to the server that holds `key` (any key of
    /// the lease: they share one slot).
    pub(crate) fn connect(&self, key: &str) -> Result<Conn, Failure> {
        match &self.place {
            Place::Direct(info) => self.connect_to(info, &self.shown).map(Conn::from),
            Place::Cluster { nodes, node, tls } => {
                // The first seed that answers names the primary; a primary that does not
                // answer is not looked for through the other seeds (each would name it too,
                // and each try would cost a timeout): this call is refused, the next asks again.
                // Seeds are tried for two timeouts at most: cut off from the cluster, a call
                // costs what it costs against one server, not a timeout per seed.
                let mut why = vec![];
                let give_up = std::time::Instant::now() + self.timeout * 2;
                for seed in nodes {
                    if std::time::Instant::now() >= give_up {
                        break;
                    }
                    let shown = format!("node {}", addr_text(seed.addr()));
                    match self.owner_from(seed, &shown, key, node, *tls) {
                        Ok((info, where_)) => return self.connect_to(&info, &where_).map(Conn::from),
                        Err(f) => why.push(f.message),
                    }
                }
                Err(Failure {
                    message: format!(
                        "no node of the Redis Cluster at {} named a reachable primary for the lease's slot: {}",
                        self.shown,
                        why.join("; ")
                    ),
                    reconnect: true,
                })
            }
            Place::Sentinel { sentinels, master, node, tls } => {
                let mut why = vec![];
                for s in sentinels {
                    let shown = addr_text(s.addr());
                    match self.master_from(s, &shown, master, node, *tls) {
                        Ok(conn) => return Ok(conn),
                        Err(f) => why.push(f.message),
                    }
                }
                Err(Failure {
                    message: format!(
                        "no sentinel of {} named a reachable master `{master}`: {}",
                        self.shown,
                        why.join("; ")
                    ),
                    reconnect: true,
                })
            }
        }
    }

    fn master_from(
        &self,
        sentinel: &ConnectionInfo,
        shown: &str,
        master: &str,
        node: &RedisConnectionInfo,
        tls: bool,
    ) -> Result<Conn, Failure> {
        let Some((host, port)) = self.named_by(sentinel, shown, master)? else {
            return Err(Failure {
                message: format!("sentinel {shown} knows no master `{master}`"),
                reconnect: true,
            });
        };
        let info = node_at(&host, port, tls, node, shown)?;
        let where_ = format!("master `{master}` at {}", addr_text(info.addr()));
        let mut conn = self.connect_to(&info, &where_)?;
        // A sentinel's view can be behind: the node it names must say it is the master.
        let role: redis::Value = redis::cmd("ROLE").query(&mut conn).map_err(|e| describe(&e, &where_))?;
        match role {
            redis::Value::Array(items) if matches!(items.first(), Some(redis::Value::BulkString(b)) if b == b"master") => {
                Ok(Conn { link: conn, master: Some((host, port)) })
            }
            _ => Err(Failure { message: format!("{where_} is not a master (yet)"), reconnect: true }),
        }
    }

    /// The master `master` as `sentinel` names it (`None`: it knows no such master).
    fn named_by(
        &self,
        sentinel: &ConnectionInfo,
        shown: &str,
        master: &str,
    ) -> Result<Option<(String, u16)>, Failure> {
        let mut conn = self.connect_to(sentinel, &format!("sentinel {shown}"))?;
        redis::cmd("SENTINEL")
            .arg("get-master-addr-by-name")
            .arg(master)
            .query(&mut conn)
            .map_err(|e| describe(&e, &format!("sentinel {shown}")))
    }

    /// Behind a Sentinel address: whether the master `conn` reached is still the one the
    /// sentinels name. A master that was cut off or stopped while the sentinels failed over
    /// still says it is the master when it comes back, until they make it a replica (seconds
    /// later): a renewal it accepted then would keep a lease alive that the new master has
    /// expired and may have given to another holder, and both would issue the same IDs.
    /// So every script asks every sentinel first. One that names another master means a
    /// failover: `Some(why)`, and the caller connects again, to the master they name. None that
    /// answers means nothing is proven: an error, and the script does not run. An ordinary
    /// server or a cluster connection passes (`None`).
    pub(crate) fn still_master(&self, conn: &Conn) -> Result<Option<String>, Failure> {
        let (Place::Sentinel { sentinels, master, .. }, Some(ours)) = (&self.place, &conn.master) else {
            return Ok(None);
        };
        let mut why = vec![];
        let mut confirmed = false;
        for s in sentinels {
            let shown = addr_text(s.addr());
            match self.named_by(s, &shown, master) {
                Ok(Some(named)) if named == *ours => confirmed = true,
                Ok(named) => {
                    let named = named.map_or("no master".to_string(), |(h, p)| format!("{h}:{p}"));
                    return Ok(Some(format!(
                        "sentinel {shown} of {} names {named} as master `{master}`, not {}:{}, which this lease was using: a failover",
                        self.shown, ours.0, ours.1
                    )));
                }
                Err(f) => why.push(f.message),
            }
        }
        if confirmed {
            return Ok(None);
        }
        Err(Failure {
            message: format!(
                "no sentinel of {} answered, so master `{master}` at {}:{} cannot be confirmed: {}",
                self.shown,
                ours.0,
                ours.1,
                why.join("; ")
            ),
            reconnect: true,
        })
    }

    /// The primary that serves `key`'s slot, as the cluster node `seed` sees it, and its name
    /// for messages (a seed's view can be behind: a stale primary answers MOVED or times out,
    /// and the next call asks again).
    fn owner_from(
        &self,
        seed: &ConnectionInfo,
        shown: &str,
        key: &str,
        node: &RedisConnectionInfo,
        tls: bool,
    ) -> Result<(ConnectionInfo, String), Failure> {
        let mut conn = self.connect_to(seed, shown)?;
        let slot: i64 = redis::cmd("CLUSTER")
            .arg("KEYSLOT")
            .arg(key)
            .query(&mut conn)
            .map_err(|e| describe(&e, shown))?;
        let ranges: redis::Value =
            redis::cmd("CLUSTER").arg("SLOTS").query(&mut conn).map_err(|e| describe(&e, shown))?;
        let int = |v: Option<&redis::Value>| match v {
            Some(redis::Value::Int(n)) => Some(*n),
            _ => None,
        };
        let owner = match &ranges {
            redis::Value::Array(ranges) => ranges.iter().find_map(|r| match r {
                redis::Value::Array(r) if int(r.first())? <= slot && slot <= int(r.get(1))? => match r.get(2)
                {
                    Some(redis::Value::Array(n)) => match (n.first(), int(n.get(1))) {
                        (Some(redis::Value::BulkString(h)), Some(port)) => {
                            Some((String::from_utf8_lossy(h).into_owned(), u16::try_from(port).ok()?))
                        }
                        _ => None,
                    },
                    _ => None,
                },
                _ => None,
            }),
            _ => None,
        };
        let Some((host, port)) = owner else {
            return Err(Failure {
                message: format!(
                    "{shown} names no primary for slot {slot} (the cluster is down or being resharded)"
                ),
                reconnect: true,
            });
        };
        // An empty host is the node that answered (Redis's cluster-preferred-endpoint-type).
        let host = match (host.is_empty() || host == "?", seed.addr()) {
            (true, ConnectionAddr::Tcp(h, _) | ConnectionAddr::TcpTls { host: h, .. }) => h.clone(),
            _ => host,
        };
        let info = node_at(&host, port, tls, node, shown)?;
        let where_ = format!("the primary of slot {slot} at {}", addr_text(info.addr()));
        Ok((info, where_))
    }

    fn connect_to(&self, info: &ConnectionInfo, shown: &str) -> Result<redis::Connection, Failure> {
        let client = match (&self.certificates, info.addr()) {
            (Some(certs), ConnectionAddr::TcpTls { .. }) => {
                install_crypto_provider();
                redis::Client::build_with_tls(info.clone(), certs.clone())
            }
            _ => redis::Client::open(info.clone()),
        }
        .map_err(|e| describe(&e, shown))?;
        let conn = client.get_connection_with_timeout(self.timeout).map_err(|e| describe(&e, shown))?;
        conn.set_read_timeout(Some(self.timeout)).map_err(|e| describe(&e, shown))?;
        conn.set_write_timeout(Some(self.timeout)).map_err(|e| describe(&e, shown))?;
        Ok(conn)
    }
}

/// The server at `host:port` that a sentinel or a cluster node named, over TLS when `tls`, with
/// the database and credentials of the lease address (`node`).
fn node_at(
    host: &str,
    port: u16,
    tls: bool,
    node: &RedisConnectionInfo,
    shown: &str,
) -> Result<ConnectionInfo, Failure> {
    let addr = if tls {
        ConnectionAddr::TcpTls { host: host.to_string(), port, insecure: false, tls_params: None }
    } else {
        ConnectionAddr::Tcp(host.to_string(), port)
    };
    Ok((host, port)
        .into_connection_info()
        .map_err(|e| describe(&e, shown))?
        .set_addr(addr)
        .set_redis_settings(node.clone()))
}

/// rustls needs a process-wide crypto provider: ours (`ring`) unless the program installed one.
fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// Certificates as the PEM text the `redis` crate reads.
fn pem_of(certs: &[rustls::pki_types::CertificateDer<'_>]) -> Vec<u8> {
    use base64::Engine as _;
    let mut pem = Vec::new();
    for cert in certs {
        pem.extend_from_slice(b"-----BEGIN CERTIFICATE-----\n");
        for line in base64::engine::general_purpose::STANDARD.encode(cert).as_bytes().chunks(64) {
            pem.extend_from_slice(line);
            pem.push(b'\n');
        }
        pem.extend_from_slice(b"-----END CERTIFICATE-----\n");
    }
    pem
}

fn addr_text(addr: &ConnectionAddr) -> String {
    match addr {
        ConnectionAddr::Tcp(h, p) | ConnectionAddr::TcpTls { host: h, port: p, .. } if h.contains(':') => {
            format!("[{h}]:{p}")
        }
        ConnectionAddr::Tcp(h, p) | ConnectionAddr::TcpTls { host: h, port: p, .. } => format!("{h}:{p}"),
        ConnectionAddr::Unix(path) => path.display().to_string(),
        _ => "?".to_string(),
    }
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// What a failure means to a user, naming the server (`shown`, no password) and the fix.
pub(crate) fn describe(e: &redis::RedisError, shown: &str) -> Failure {
    let code = e.code().unwrap_or("");
    let text = e.to_string();
    let message = if e.kind() == redis::ErrorKind::AuthenticationFailed || code == "WRONGPASS" {
        format!("Redis at {shown} refused the credentials (wrong password, or no such user): check the address's user and password, or lease_password_file")
    } else if code == "NOAUTH" || text.contains("NOAUTH") {
        format!("Redis at {shown} requires a password: give it in the address (redis://user:password@host) or in lease_password_file")
    } else if text.contains("without any password configured") {
        format!("Redis at {shown} has no password set, but one was given")
    } else if code == "NOPERM"
        || text.contains("NOPERM")
        || text.contains("can't access")
        || text.contains("no permission")
    {
        format!("the Redis user at {shown} may not run the lease's commands: it needs +eval, +get, +set, +pexpire, +del, +time and the keys libsnowflake:* ({})", e.detail().unwrap_or(""))
    } else if code == "READONLY" {
        format!("Redis at {shown} is a read-only replica, not the master")
    } else if e.is_cluster_error() {
        // MOVED, ASK, TRYAGAIN, CLUSTERDOWN: the command did not run; the next call asks the
        // seeds again where the slot is.
        format!("the Redis Cluster at {shown} does not serve the lease's slot here now (a failover or a move: {text}); the next call finds its primary again")
    } else if e.is_timeout() {
        format!("Redis at {shown} did not answer in time")
    } else if e.is_io_error() {
        format!("cannot reach Redis at {shown}: {text}")
    } else {
        format!("Redis at {shown}: {text}")
    };
    let reconnect = e.is_io_error()
        || e.is_timeout()
        || e.is_connection_dropped()
        || e.is_unrecoverable_error()
        || e.is_cluster_error()
        || code == "READONLY"
        || code == "LOADING"
        || code == "MASTERDOWN";
    Failure { message, reconnect }
}

/// The settings of the servers behind a Sentinel or cluster address: database `db`, the
/// address's user and password (percent-decoded), or the password file's.
fn node_info(
    url: &str,
    credentials: Option<&str>,
    password: Option<String>,
    db: i64,
) -> Result<RedisConnectionInfo, Error> {
    let decode = |s: &str| {
        percent_decode(s)
            .ok_or_else(|| invalid(url, "has a user or password that is not percent-encoded UTF-8"))
    };
    let mut node = RedisConnectionInfo::default().set_db(db).set_skip_set_lib_name();
    if let Some(c) = credentials {
        let (user, pass) = c.split_once(':').map_or((c, None), |(u, p)| (u, Some(p)));
        if !user.is_empty() {
            node = node.set_username(decode(user)?);
        }
        if let Some(p) = pass {
            if password.is_some() {
                return Err(invalid(url, "has a password, and lease_password_file gives one too: give one"));
            }
            node = node.set_password(decode(p)?);
        }
    }
    if let Some(p) = password {
        node = node.set_password(p);
    }
    Ok(node)
}

/// The `host[:port],…` list of a Sentinel or cluster address (`what`: "sentinel" or "node"),
/// `port` where a host names none.
fn host_list(url: &str, hosts: &str, tls: bool, port: u16, what: &str) -> Result<Vec<ConnectionInfo>, Error> {
    let scheme = if tls { "rediss" } else { "redis" };
    hosts
        .split(',')
        .filter(|h| !h.is_empty())
        .map(|host| {
            let has_port = if host.starts_with('[') { host.contains("]:") } else { host.contains(':') };
            let host = if has_port { host.to_string() } else { format!("{host}:{port}") };
            format!("{scheme}://{host}").into_connection_info().map_err(|_| {
                invalid(url, format_args!("has a {what} address `{host}` that is not host:port"))
            })
        })
        .collect()
}
