//! The Rust client of `tests/servers/serve.py` (see tests/servers/README.md), included by each
//! crate's tests with `#[path = ".../tests/servers/servers.rs"] mod servers;`.
//!
//! `Servers::start("redis", &["--password", "pw"])` returns once the server answers its
//! protocol; `info` is serve.py's JSON description. Dropping it (a test that passed, failed or
//! panicked) stops the servers and removes their files; so does the kernel closing our end of
//! the pipe when this process dies in any other way.
#![allow(dead_code)]

use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// serve.py, found from the crate that includes this file (one level below the repository).
pub const SERVE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/servers/serve.py");

pub struct Servers {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    /// serve.py's description of the servers, updated by every command.
    pub info: Value,
}

impl Servers {
    /// Starts `kind` (redis, sentinel, postgres, fpm, certs) with serve.py's options; panics
    /// with the server's log when it cannot.
    pub fn start(kind: &str, args: &[&str]) -> Servers {
        Servers::try_start(kind, args).unwrap_or_else(|e| panic!("{e}"))
    }

    pub fn try_start(kind: &str, args: &[&str]) -> Result<Servers, String> {
        let mut child = Command::new("python3")
            .arg(SERVE)
            .arg(kind)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run python3 {SERVE}: {e}"))?;
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut s = Servers { child, stdin, stdout, info: Value::Null };
        s.info = s.reply(&format!("starting {kind} {}", args.join(" ")))?;
        Ok(s)
    }

    fn reply(&mut self, what: &str) -> Result<Value, String> {
        let mut line = String::new();
        match self.stdout.read_line(&mut line) {
            Ok(0) | Err(_) => {
                let status = self.child.wait().map(|s| s.to_string()).unwrap_or_default();
                return Err(format!("{what}: serve.py ended without an answer ({status})"));
            }
            Ok(_) => {}
        }
        let v: Value = serde_json::from_str(&line).map_err(|e| format!("{what}: {e}: {line}"))?;
        if v["ok"] != Value::Bool(true) {
            return Err(format!("{what}: {}\n{}", v["error"], v["log"].as_str().unwrap_or("")));
        }
        Ok(v)
    }

    /// One command (`restart`, `kill master`, `freeze`, `failover`...); returns the new
    /// description. Panics when it fails.
    pub fn command(&mut self, line: &str) -> &Value {
        self.try_command(line).unwrap_or_else(|e| panic!("{e}"))
    }

    pub fn try_command(&mut self, line: &str) -> Result<&Value, String> {
        let stdin = self.stdin.as_mut().ok_or("stopped")?;
        writeln!(stdin, "{line}").and_then(|_| stdin.flush()).map_err(|e| format!("{line}: {e}"))?;
        self.info = self.reply(line)?;
        Ok(&self.info)
    }

    /// A field of the description, e.g. `get("/redis/port")`.
    pub fn get(&self, pointer: &str) -> &Value {
        self.info.pointer(pointer).unwrap_or_else(|| panic!("no {pointer} in {}", self.info))
    }

    pub fn port(&self, pointer: &str) -> u16 {
        self.get(pointer).as_u64().and_then(|p| u16::try_from(p).ok()).expect("a port")
    }

    pub fn str(&self, pointer: &str) -> &str {
        self.get(pointer).as_str().unwrap_or_else(|| panic!("{pointer} is not a string"))
    }

    /// Runs `statement` as the administrator of this set's `kind` of database (`postgres`:
    /// psql as `snowflake` on its socket; `mariadb`: the client command serve.py gives), and
    /// returns what it printed, one row a line; panics naming the statement when it fails.
    pub fn admin_sql(&self, kind: &str, statement: &str) -> String {
        let out = match kind {
            "postgres" => Command::new(format!("{}/psql", self.str("/postgres/bin_dir")))
                .args(["-X", "-q", "-A", "-t", "-h", self.str("/postgres/socket_dir")])
                .args(["-p", &self.port("/postgres/port").to_string(), "-U", "snowflake", "-d", "postgres"])
                .args(["-c", statement])
                .output(),
            "mariadb" => {
                let argv: Vec<&str> = self
                    .get("/mariadb/client")
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| a.as_str().unwrap())
                    .collect();
                Command::new(argv[0])
                    .args(&argv[1..])
                    .args(["--batch", "--skip-column-names", "-e", statement])
                    .output()
            }
            other => panic!("no SQL in {other}"),
        }
        .unwrap_or_else(|e| panic!("{statement}: {e}"));
        assert!(out.status.success(), "{statement}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        // End of input: serve.py stops the servers, removes their files, then exits.
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}
