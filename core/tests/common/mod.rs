//! Test helpers: a `redis-server` of our own on a free loopback port, and a tiny RESP client.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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

pub struct Server(pub Child, pub u16);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn start_redis() -> Server {
    // The probe listener is dropped (the port freed) before redis-server binds it.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    start_redis_on(port)
}

/// A `redis-server` on `port` (no persistence: a restart starts empty).
pub fn start_redis_on(port: u16) -> Server {
    let child = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .stdout(Stdio::null())
        .spawn()
        .expect("redis-server is needed (apt-get install redis-server; bash scripts/install-deps.sh)");
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(start.elapsed() < Duration::from_secs(10), "redis-server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    Server(child, port)
}
