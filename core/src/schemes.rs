//! The stores a lease across hosts can be held in: one row each, with the address schemes that
//! name it, the cargo feature that builds it, how its address asks for TLS, and its name as
//! messages say it. Parsing `lease=` reads this table, and so does every message about a
//! store; `coord::lease` opens a row's store through the one `open()` every store file has.
//!
//! A new store is its file under `coord/lease/`, its row here and its feature.
//!
//! ```
//! use snowflake_core::{LeaseScheme, LeaseStore};
//! let s = LeaseScheme::of("rediss+sentinel://h1:26379,h2:26379/mymaster").unwrap();
//! assert_eq!((s.store, s.name), (LeaseStore::Redis, "Redis"));
//! assert!(s.tls("rediss+sentinel://h1:26379/mymaster"));
//! assert_eq!(LeaseScheme::of("postgresql://u@db/app?sslmode=require").unwrap().name, "PostgreSQL");
//! assert!(LeaseScheme::of("memcached://h").is_none());
//! ```

/// A store a lease across hosts can be held in: the key of its row in [`LEASE_SCHEMES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LeaseStore {
    /// Keys in Redis: one server, a Sentinel-managed master, or a Redis Cluster.
    Redis,
    /// Rows of a PostgreSQL table.
    Postgres,
    /// Rows of a MySQL or MariaDB table.
    Mysql,
}

/// How a store's address asks for TLS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlsBy {
    /// A scheme that ends in `s`: `rediss://`, `rediss+sentinel://`, `rediss+cluster://`.
    Scheme,
    /// A query parameter `sslmode=` other than `disable`.
    Sslmode,
}

/// One store's row: see [`LEASE_SCHEMES`].
#[derive(Debug, PartialEq, Eq)]
pub struct LeaseScheme {
    /// The store.
    pub store: LeaseStore,
    /// Its name in messages: "a lease in {name}".
    pub name: &'static str,
    /// The beginnings of the addresses it takes.
    pub prefixes: &'static [&'static str],
    /// The snowflake-core feature that builds its client.
    pub feature: &'static str,
    /// Whether this build has that feature.
    pub built: bool,
    /// How its address asks for TLS.
    pub tls: TlsBy,
    /// Its address forms, for the message that refuses an address of no store.
    pub forms: &'static str,
}

/// Every store a lease across hosts can be held in.
pub const LEASE_SCHEMES: [LeaseScheme; 3] = [
    LeaseScheme {
        store: LeaseStore::Redis,
        name: "Redis",
        prefixes: &[
            "redis://",
            "rediss://",
            "unix://",
            "redis+sentinel://",
            "rediss+sentinel://",
            "redis+cluster://",
            "rediss+cluster://",
        ],
        feature: "lease-redis",
        built: cfg!(feature = "lease-redis"),
        tls: TlsBy::Scheme,
        forms: "redis://[user[:password]@]host[:port][/db], rediss://… (TLS), unix:///path/redis.sock?db=N, redis+sentinel://host:port,host:port/master[/db], redis+cluster://host:port,host:port",
    },
    LeaseScheme {
        store: LeaseStore::Postgres,
        name: "PostgreSQL",
        prefixes: &["postgres://", "postgresql://"],
        feature: "lease-postgres",
        built: cfg!(feature = "lease-postgres"),
        tls: TlsBy::Sslmode,
        forms: "postgres://user@host[:port]/db[?sslmode=require]",
    },
    LeaseScheme {
        store: LeaseStore::Mysql,
        name: "MySQL",
        prefixes: &["mysql://"],
        feature: "lease-mysql",
        built: cfg!(feature = "lease-mysql"),
        tls: TlsBy::Sslmode,
        forms: "mysql://user@host[:port]/db[?sslmode=require]",
    },
];

impl LeaseScheme {
    /// The row of the store whose scheme begins `url`.
    pub fn of(url: &str) -> Option<&'static LeaseScheme> {
        LEASE_SCHEMES.iter().find(|s| s.prefixes.iter().any(|p| url.starts_with(p)))
    }

    /// The row of `store`.
    pub fn row(store: LeaseStore) -> &'static LeaseScheme {
        match LEASE_SCHEMES.iter().find(|s| s.store == store) {
            Some(row) => row,
            None => unreachable!("every LeaseStore has a row in LEASE_SCHEMES (tested)"),
        }
    }

    /// Whether `url`, an address of this store, asks for TLS.
    pub fn tls(&self, url: &str) -> bool {
        match self.tls {
            TlsBy::Scheme => url.starts_with("rediss"),
            TlsBy::Sslmode => url.split_once('?').is_some_and(|(_, q)| {
                q.split('&').any(|p| p.starts_with("sslmode=") && p != "sslmode=disable")
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_store_has_one_row_and_no_prefix_is_two_stores() {
        for store in [LeaseStore::Redis, LeaseStore::Postgres, LeaseStore::Mysql] {
            assert_eq!(LEASE_SCHEMES.iter().filter(|s| s.store == store).count(), 1);
            assert_eq!(LeaseScheme::row(store).store, store);
        }
        for a in &LEASE_SCHEMES {
            for p in a.prefixes {
                assert_eq!(LeaseScheme::of(p).map(|s| s.store), Some(a.store), "{p}");
            }
            assert!(a.forms.starts_with(a.prefixes[0]), "{}'s forms begin with its first scheme", a.name);
        }
    }

    #[test]
    fn tls_is_asked_by_the_scheme_or_sslmode() {
        let redis = LeaseScheme::row(LeaseStore::Redis);
        assert!(redis.tls("rediss://h:6380/0") && redis.tls("rediss+cluster://a:1,b:2"));
        assert!(!redis.tls("redis://h/0") && !redis.tls("unix:///run/redis.sock"));
        let pg = LeaseScheme::row(LeaseStore::Postgres);
        assert!(pg.tls("postgres://u@h/db?sslmode=verify-full"));
        assert!(!pg.tls("postgres://u@h/db?sslmode=disable") && !pg.tls("postgres://u@h/db"));
    }
}
