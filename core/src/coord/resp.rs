//! A minimal Redis client (RESP2 over TCP) for `lease=redis://host:port/db`: enough to run a
//! few commands and scripts, with timeouts, and nothing else.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// A reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reply {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Vec<Reply>),
}

impl Reply {
    pub(crate) fn as_int(&self) -> Option<i64> {
        match self {
            Reply::Int(n) => Some(*n),
            _ => None,
        }
    }
}

/// Where a Redis server is: `redis://host:port/db` (port 6379 and db 0 by default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Url {
    pub host: String,
    pub port: u16,
    pub db: u32,
}

impl Url {
    pub(crate) fn parse(text: &str) -> Option<Url> {
        let rest = text.strip_prefix("redis://")?;
        let (hostport, db) = match rest.split_once('/') {
            Some((h, "")) => (h, 0),
            Some((h, d)) => (h, d.parse().ok()?),
            None => (rest, 0),
        };
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) => (h, p.parse().ok()?),
            None => (hostport, 6379),
        };
        if host.is_empty() {
            return None;
        }
        Some(Url { host: host.to_string(), port, db })
    }
}

pub(crate) struct Conn {
    r: BufReader<TcpStream>,
    w: TcpStream,
}

fn protocol(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("redis protocol: {what}"))
}

impl Conn {
    pub(crate) fn connect(url: &Url, timeout: Duration) -> io::Result<Conn> {
        let addr = (url.host.as_str(), url.port)
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address"))?;
        let s = TcpStream::connect_timeout(&addr, timeout)?;
        s.set_read_timeout(Some(timeout))?;
        s.set_write_timeout(Some(timeout))?;
        s.set_nodelay(true)?;
        let mut c = Conn { r: BufReader::new(s.try_clone()?), w: s };
        if url.db != 0 {
            if let Reply::Error(e) = c.call(&[b"SELECT", url.db.to_string().as_bytes()])? {
                return Err(protocol(&e));
            }
        }
        Ok(c)
    }

    pub(crate) fn call(&mut self, args: &[&[u8]]) -> io::Result<Reply> {
        let mut buf = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            buf.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            buf.extend_from_slice(a);
            buf.extend_from_slice(b"\r\n");
        }
        self.w.write_all(&buf)?;
        self.read()
    }

    fn read(&mut self) -> io::Result<Reply> {
        self.read_at(0)
    }

    /// Replies nest at most 4 deep and bulk strings are at most 1 MiB: nothing this client
    /// sends asks for more, and a bad server must not make it allocate or recurse without end.
    fn read_at(&mut self, depth: usize) -> io::Result<Reply> {
        if depth > 4 {
            return Err(protocol("replies nested too deep"));
        }
        let mut line = String::new();
        if self.r.read_line(&mut line)? == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "redis closed the connection"));
        }
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            return Err(protocol("empty line"));
        }
        if !line.is_char_boundary(1) {
            return Err(protocol("unknown reply type"));
        }
        let (kind, rest) = line.split_at(1);
        let int = |s: &str| s.parse::<i64>().map_err(|_| protocol("bad integer"));
        Ok(match kind {
            "+" => Reply::Simple(rest.to_string()),
            "-" => Reply::Error(rest.to_string()),
            ":" => Reply::Int(int(rest)?),
            "$" => match int(rest)? {
                n if n < 0 => Reply::Bulk(None),
                n if n > 1 << 20 => return Err(protocol("bulk string too long")),
                n => {
                    let mut data = vec![0u8; n as usize + 2];
                    self.r.read_exact(&mut data)?;
                    data.truncate(n as usize);
                    Reply::Bulk(Some(data))
                }
            },
            "*" => match int(rest)? {
                n if n < 0 => Reply::Array(vec![]),
                n if n > 1 << 16 => return Err(protocol("array too long")),
                n => Reply::Array((0..n).map(|_| self.read_at(depth + 1)).collect::<io::Result<_>>()?),
            },
            _ => return Err(protocol("unknown reply type")),
        })
    }
}
