//! The Unix-domain-socket reference, shaped like the C# `uds` transport (src/IpcBench.Transports/Streams): one stream
//! connection per subscriber, the publisher writes each message (header + payload from one send buffer) to every
//! connection, the subscriber cuts frames out of a receive buffer of max(256 KiB, 2 messages) by the header's payload
//! length. SPIN/YIELD poll non-blocking sockets; BLOCK uses blocking ones.

use std::io::{ErrorKind, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};

use crate::common::*;
use crate::{Config, PublisherSide};

type Res<T> = Result<T, String>;

fn write_all(stream: &mut UnixStream, mut data: &[u8], wait: Wait) -> Res<()> {
    while !data.is_empty() {
        match stream.write(data) {
            Ok(0) => return Err("uds: peer closed".into()),
            Ok(n) => data = &data[n..],
            Err(e) if e.kind() == ErrorKind::WouldBlock => pause(wait),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("uds: write failed: {e}")),
        }
    }
    Ok(())
}

/// FramedReceiver: messages are spans of the receive buffer.
pub struct Framed {
    stream: UnixStream,
    buffer: Vec<u8>,
    start: usize,
    end: usize,
    pending: usize,
    wait: Wait,
    max: usize,
}

impl Framed {
    fn new(stream: UnixStream, max: usize, wait: Wait) -> Self {
        Self { stream, buffer: vec![0; (256 * 1024).max(2 * max)], start: 0, end: 0, pending: 0, wait, max }
    }

    /// (offset, length) of the next message in `buffer`, or None at end of stream.
    #[inline(always)]
    fn next(&mut self) -> Res<Option<(usize, usize)>> {
        loop {
            let available = self.end - self.start;
            let mut needed = HEADER_SIZE;
            if available >= HEADER_SIZE {
                let payload = i32::from_le_bytes(self.buffer[self.start..self.start + 4].try_into().unwrap());
                needed = HEADER_SIZE + payload as usize;
                if payload < 0 || needed > self.max {
                    return Err(format!("uds: framing lost ({payload} payload bytes)"));
                }
                if available >= needed {
                    self.pending = needed;
                    return Ok(Some((self.start, needed)));
                }
            }
            if self.buffer.len() - self.start < needed {
                self.buffer.copy_within(self.start..self.end, 0);
                self.start = 0;
                self.end = available;
            }
            match self.stream.read(&mut self.buffer[self.end..]) {
                Ok(0) => return Ok(None),
                Ok(n) => self.end += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => pause(self.wait),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(format!("uds: read failed: {e}")),
            }
        }
    }

    #[inline(always)]
    fn release(&mut self) {
        self.start += self.pending;
        self.pending = 0;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
    }
}

pub struct UdsPublisher {
    cfg: Config,
    path: String,
    listener: UnixListener,
    links: Vec<Framed>,
    buffer: Vec<u8>,
    next_reply: usize,
}

impl UdsPublisher {
    pub fn create(cfg: &Config, path: &str) -> Res<Self> {
        let _ = std::fs::remove_file(path);
        let listener = UnixListener::bind(path).map_err(|e| format!("uds: bind {path}: {e}"))?;
        Ok(Self {
            cfg: cfg.clone(),
            path: path.to_string(),
            listener,
            links: Vec::new(),
            buffer: vec![0; HEADER_SIZE + cfg.payload],
            next_reply: 0,
        })
    }
}

impl Drop for UdsPublisher {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl PublisherSide for UdsPublisher {
    fn connect(&mut self, _deadline_ns: i64) -> Res<()> {
        while self.links.len() < self.cfg.subscribers {
            let (stream, _) = self.listener.accept().map_err(|e| format!("uds: accept: {e}"))?;
            stream.set_nonblocking(self.cfg.wait != Wait::Block).map_err(|e| e.to_string())?;
            self.links.push(Framed::new(stream, HEADER_SIZE + self.cfg.payload, self.cfg.wait));
        }
        Ok(())
    }

    fn finish_handshake(&mut self) -> Res<()> {
        Ok(())
    }

    #[inline(always)]
    fn send_message(&mut self, sequence: i64, stamp_ns: i64) -> Res<()> {
        write_message(&mut self.buffer, self.cfg.payload, self.cfg.full, 0, sequence, stamp_ns);
        for link in &mut self.links {
            write_all(&mut link.stream, &self.buffer, self.cfg.wait)?;
        }
        Ok(())
    }

    fn send_end_of_stream(&mut self, sequence: i64) -> Res<()> {
        let mut eos = [0u8; HEADER_SIZE];
        write_end_of_stream(&mut eos, 0, sequence);
        for link in &mut self.links {
            write_all(&mut link.stream, &eos, self.cfg.wait)?;
        }
        Ok(())
    }

    #[inline(always)]
    fn await_echo(&mut self) -> Res<Header> {
        let link = &mut self.links[self.next_reply];
        self.next_reply = (self.next_reply + 1) % self.cfg.subscribers;
        let (offset, _) = link.next()?.ok_or("uds: subscriber closed")?;
        let header = Header::read(&link.buffer[offset..]);
        link.release();
        Ok(header)
    }
}

pub fn subscriber(cfg: &Config, path: &str) -> Res<()> {
    let stream = UnixStream::connect(path).map_err(|e| format!("uds: connect {path}: {e}"))?;
    stream.set_nonblocking(cfg.wait != Wait::Block).map_err(|e| e.to_string())?;
    let mut writer = stream.try_clone().map_err(|e| e.to_string())?;
    let mut link = Framed::new(stream, HEADER_SIZE + cfg.payload, cfg.wait);
    let mut rx = Receiver::new(cfg.payload, cfg.full, cfg.round_trip, 1);
    rx.measure_from_ns = crate::ready_and_wait_for_start()?;
    let mut echo = [0u8; HEADER_SIZE];
    while let Some((offset, len)) = link.next()? {
        let outcome = rx.process(&link.buffer[offset..offset + len], &mut echo);
        if matches!(outcome, Outcome::EndOfStream) {
            break;
        }
        if cfg.round_trip {
            write_all(&mut writer, &echo, cfg.wait)?;
        }
        link.release();
    }
    println!("{}", rx.result_line());
    Ok(())
}
