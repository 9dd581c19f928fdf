//! No message holds a Redis password (issue 26): random passwords, with every character a
//! careless address can hold unencoded (`/`, `?`, `#`, `@`, `:`, `&`, `=`, `%`, spaces), in
//! every address form a lease takes, through `redact_url`, the options' `Display` and
//! `Debug`, and the error of opening a generator with the address (the connection fails: no
//! server listens there).
#![cfg(all(unix, feature = "lease-redis"))]

use proptest::prelude::*;
use snowflake_core::{redact_url, Generator, Layout, Options, Value};

/// Every address form, with `{p}` where the password goes.
const FORMS: &[&str] = &[
    "redis://:{p}@127.0.0.1:1/0",
    "redis://app:{p}@127.0.0.1:1/0",
    "redis://app:{p}@127.0.0.1:1",
    "rediss://app:{p}@localhost:1/0",
    "redis://app:{p}@[::1]:1/0",
    "redis://{p}@127.0.0.1:1/0",
    "unix:///nonexistent/snowflake-redis.sock?db=2&pass={p}",
    "unix:///nonexistent/snowflake-redis.sock?user=app&password={p}&db=1",
    "redis+sentinel://:{p}@127.0.0.1:1,127.0.0.1:2/mymaster/0",
    "rediss+sentinel://app:{p}@127.0.0.1:1/mymaster",
    "redis+sentinel://127.0.0.1:1/mymaster?sentinel_password={p}",
    "redis://127.0.0.1:1/0?password={p}",
    "redis://127.0.0.1:1/0?PASSWORD={p}&db=1",
    "redis://127.0.0.1:1/0?db=1&Auth_Token={p}",
    "redis://app:{p}",
    "redis://:{p}",
    // The fleet's stores (issue 30).
    "redis+cluster://app:{p}@127.0.0.1:1,127.0.0.1:2",
    "rediss+cluster://:{p}@127.0.0.1:1",
    "postgres://app:{p}@127.0.0.1:1/ids",
    "postgresql://app:{p}@127.0.0.1:1/ids?sslmode=require",
    "postgres://app@127.0.0.1:1/ids?password={p}",
    "mysql://app:{p}@127.0.0.1:1/ids",
    "mysql://app@127.0.0.1:1/ids?password={p}",
];

/// A password: a random core that cannot occur in an address by chance (what the test looks
/// for), inside random characters of every kind.
fn password() -> impl Strategy<Value = (String, String)> {
    let core = "[A-Za-z0-9]{10}";
    let noise = proptest::collection::vec(
        prop::sample::select(vec![
            '/', '?', '#', '@', ':', '&', '=', '%', ' ', '+', '[', ']', ',', 'x', '9', '\\',
        ]),
        0..6,
    );
    (noise.clone(), core, noise).prop_map(|(a, core, b)| {
        let a: String = a.into_iter().collect();
        let b: String = b.into_iter().collect();
        (format!("{a}{core}{b}"), core)
    })
}

fn assert_hidden(text: &str, password: &str, core: &str, what: &str) {
    assert!(!text.contains(core), "{what} shows the password {password:?}: {text}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn no_message_shows_a_redis_password((password, core) in password(), form in prop::sample::select(FORMS)) {
        // Without a host after it, a password's last `@` starts the host: nothing can tell.
        prop_assume!(form.contains("127.0.0.1") || form.contains("localhost") || form.contains("::1") || !password.contains('@'));
        // In the user's place, what comes before a `:` is the user name, which is shown.
        prop_assume!(!form.starts_with("redis://{p}") || !password.contains(':'));
        let url = form.replace("{p}", &password);
        assert_hidden(&redact_url(&url), &password, &core, &format!("redact_url({url:?})"));
        let mut o = Options::default();
        match o.set("lease", Value::Text(&url)) {
            Err(e) => assert_hidden(&e.to_string(), &password, &core, "the option's error"),
            Ok(()) => {
                assert_hidden(&o.to_string(), &password, &core, "the options' Display");
                assert_hidden(&format!("{o:?}"), &password, &core, "the options' Debug");
                let layout = Layout::parse("twitter").unwrap();
                let node = layout.parse_node("datacenter=1").unwrap();
                let o = Options { max_wait_ms: 0, ..o };
                match Generator::new(&layout, node, o) {
                    Err(e) => {
                        assert_hidden(&e.to_string(), &password, &core, &format!("opening {url:?}"));
                        assert_hidden(&format!("{e:?}"), &password, &core, &format!("opening {url:?} (Debug)"));
                    }
                    Ok(_) => panic!("{url}: a lease was claimed where no Redis listens"),
                }
            }
        }
    }
}

#[test]
fn the_issues_addresses_are_masked() {
    // Found by the fuzz test: a password with a `,` after a user, and no `@`, read as two hosts.
    assert_eq!(redact_url("redis://app:9,aAa0aA0a0A"), "redis://***");

    for (url, shown) in [
        ("redis://:Zm9v/YmFy+S3CRET==@host/0", "redis://***@host/0"),
        ("redis://app:S3CRET?x@host:6379/0", "redis://***@host:6379/0"),
        ("redis://host/0?PASSWORD=S3CRET", "redis://host/0?PASSWORD=***"),
        (
            "redis+sentinel://h1:26379/m?sentinel_password=S3CRET&db=2",
            "redis+sentinel://h1:26379/m?sentinel_password=***",
        ),
        ("unix:///run/redis.sock?db=2&Pwd=S3CRET", "unix:///run/redis.sock?db=2&Pwd=***"),
        ("redis://app:pass@word@host/0", "redis://app:***@host/0"),
        ("redis://app:S3CRET", "redis://***"),
        ("redis://:S3/CRET", "redis://***"),
        ("redis://cache:6379/0", "redis://cache:6379/0"),
        (
            "rediss+sentinel://[::1]:26379,10.0.0.2:26379/mymaster/0",
            "rediss+sentinel://[::1]:26379,10.0.0.2:26379/mymaster/0",
        ),
    ] {
        assert_eq!(redact_url(url), shown, "{url}");
    }
}
