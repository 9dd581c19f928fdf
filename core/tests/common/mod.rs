//! Test helpers: real servers of the test's own (tests/servers, the one implementation every
//! language's tests use), and a tiny RESP client.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;

#[path = "../../../tests/servers/servers.rs"]
mod servers;
pub use servers::Servers;

/// A Redis reply.
#[derive(Debug, PartialEq)]
pub enum Reply {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(Option<String>),
    Array(Vec<Reply>),
}

pub struct Conn {
    r: BufReader<TcpStream>,
    w: TcpStream,
}

impl Conn {
    pub fn connect(port: u16) -> Conn {
        let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        Conn { r: BufReader::new(s.try_clone().unwrap()), w: s }
    }
    pub fn send(&mut self, args: &[&str]) {
        let mut buf = format!("*{}\r\n", args.len());
        for a in args {
            buf.push_str(&format!("${}\r\n{a}\r\n", a.len()));
        }
        self.w.write_all(buf.as_bytes()).unwrap();
    }
    pub fn read(&mut self) -> Reply {
        let mut line = String::new();
        self.r.read_line(&mut line).unwrap();
        let (kind, rest) = line.trim_end().split_at(1);
        match kind {
            "+" => Reply::Simple(rest.into()),
            "-" => Reply::Error(rest.into()),
            ":" => Reply::Int(rest.parse().unwrap()),
            "$" => {
                let n: i64 = rest.parse().unwrap();
                if n < 0 {
                    return Reply::Bulk(None);
                }
                let mut data = vec![0u8; n as usize + 2];
                std::io::Read::read_exact(&mut self.r, &mut data).unwrap();
                Reply::Bulk(Some(String::from_utf8(data[..n as usize].to_vec()).unwrap()))
            }
            "*" => Reply::Array((0..rest.parse::<i64>().unwrap()).map(|_| self.read()).collect()),
            _ => panic!("bad reply {line}"),
        }
    }
    pub fn call(&mut self, args: &[&str]) -> Reply {
        self.send(args);
        self.read()
    }
}

/// A `redis-server` of the test's own, started by tests/servers/serve.py: it answers PING
/// before `start_redis` returns, on a port no other server holds; dropping it stops it and
/// removes its files.
pub struct Redis {
    pub servers: Servers,
    pub port: u16,
}

pub fn start_redis() -> Redis {
    start_redis_with(&[])
}

/// With serve.py's options (`--password`, `--tls`, ...).
pub fn start_redis_with(args: &[&str]) -> Redis {
    let servers = Servers::start("redis", args);
    let port = servers.port("/redis/port");
    Redis { servers, port }
}

impl Redis {
    /// SIGKILL: the server is gone, its address kept for `start`.
    pub fn kill(&mut self) {
        self.servers.command("kill");
    }

    /// Starts it again on the same address, empty (no persistence).
    pub fn start(&mut self) {
        self.servers.command("start");
        assert_eq!(self.servers.port("/redis/port"), self.port, "restarted on the same address");
    }
}
