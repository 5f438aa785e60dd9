//! ipcbench-native: the native reference for IpcBench's C# transports. One publisher (this process) and M subscriber
//! processes (this executable again, `sub` role) doing the same work per message as the C# path: the 32-byte header,
//! FULL fill + checksum (a faithful port of PayloadChecksum) or HEADER_ONLY, no-loss delivery, spinning/yielding (or,
//! for uds, blocking) waits, closed loop. Prints one JSON line: aggregate delivered msg/s over the measured window, and
//! p50/p99 latency (one-way in stream mode, round trip in round-trip mode).
//!
//! ipcbench-native <iox2|uds> [--payload 8] [--access full|header-only] [--wait spin|yield|block]
//!                 [--mode stream|round-trip] [--duration 2] [--warmup 0.5] [--subscribers 1]
//!
//! Two minimal loops, the references for the harness-overhead and shm-ring bars (no clock read per message, no
//! histogram; msg/s counted by the publisher over a window whose edges a timer thread marks):
//! ipcbench-native iox2 --minimal [--payload 64] [--wait spin|yield] …   sequence number only (HEADER_ONLY)
//! ipcbench-native ring [--payload 8] [--access full|header-only] [--cursor slot-sequence|per-message] [--slots N] …
//!                      a bare SPSC ring in /dev/shm; slot-sequence (default): each slot's own sequence word, stored
//!                      last, says it is written; per-message: a shared producer cursor stored after every message

mod checksum;
mod common;
mod histogram;
mod iox2;
mod ring;
mod uds;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};

use common::*;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Transport {
    Iox2,
    Uds,
    Ring,
}

#[derive(Clone, Debug)]
pub struct Config {
    pub transport: Transport,
    pub payload: usize,
    pub full: bool,
    pub wait: Wait,
    pub round_trip: bool,
    pub duration: f64,
    pub warmup: f64,
    pub subscribers: usize,
    /// No clock read per message and no histogram (ring always; iox2 with --minimal: the sequence number only).
    pub minimal: bool,
    /// Ring slots (a power of two); None = ring::slot_count's default.
    pub slots: Option<usize>,
    /// How the ring's consumer learns that a slot is written (`--cursor`; the ring only).
    pub cursor: ring::Cursor,
}

/// The publisher's side of a transport; the loop around it (pacing, round trips, end of stream) is shared.
pub trait PublisherSide {
    /// Waits until every subscriber attached.
    fn connect(&mut self, deadline_ns: i64) -> Result<(), String>;
    /// Connects to them (after they said READY), so that nothing sent afterwards is dropped.
    fn finish_handshake(&mut self) -> Result<(), String>;
    fn send_message(&mut self, sequence: i64, stamp_ns: i64) -> Result<(), String>;
    fn send_end_of_stream(&mut self, sequence: i64) -> Result<(), String>;
    fn await_echo(&mut self) -> Result<Header, String>;
}

fn usage() -> ! {
    eprintln!(
        "usage: ipcbench-native <iox2|uds> [--payload BYTES] [--access full|header-only] [--wait spin|yield|block]\n\
         \x20                      [--mode stream|round-trip] [--duration SECONDS] [--warmup SECONDS] [--subscribers M]\n\
         \x20      ipcbench-native iox2 --minimal [--payload BYTES] [--wait spin|yield] [--duration S] [--warmup S]\n\
         \x20      ipcbench-native ring [--payload BYTES] [--access full|header-only] [--wait spin|yield] [--slots N]\n\
         \x20                           [--cursor slot-sequence|per-message] [--duration S] [--warmup S]"
    );
    std::process::exit(2);
}

fn parse(args: &[String]) -> (Config, Vec<(String, String)>) {
    let transport = match args.first().map(String::as_str) {
        Some("iox2") | Some("iceoryx2") => Transport::Iox2,
        Some("uds") => Transport::Uds,
        Some("ring") => Transport::Ring,
        _ => usage(),
    };
    let mut cfg = Config {
        transport,
        payload: 8,
        full: true,
        wait: if transport == Transport::Ring { Wait::Spin } else { Wait::Yield },
        round_trip: false,
        duration: 2.0,
        warmup: 0.5,
        subscribers: 1,
        minimal: transport == Transport::Ring,
        slots: None,
        cursor: ring::Cursor::SlotSequence,
    };
    let mut cursor_given = false;
    let mut access_given = false;
    let mut extra = Vec::new();
    let mut i = 1;
    while i < args.len() {
        let key = args[i].as_str();
        if key == "--minimal" {
            cfg.minimal = true;
            i += 1;
            continue;
        }
        let value = args.get(i + 1).cloned().unwrap_or_else(|| usage());
        match key {
            "--payload" => cfg.payload = value.parse().unwrap_or_else(|_| usage()),
            "--access" => {
                access_given = true;
                cfg.full = match value.as_str() { "full" => true, "header-only" | "header" => false, _ => usage() }
            }
            "--wait" => cfg.wait = match value.as_str() { "spin" => Wait::Spin, "yield" => Wait::Yield, "block" => Wait::Block, _ => usage() },
            "--mode" => cfg.round_trip = match value.as_str() { "stream" => false, "round-trip" | "rtt" => true, _ => usage() },
            "--duration" => cfg.duration = value.trim_end_matches('s').parse().unwrap_or_else(|_| usage()),
            "--warmup" => cfg.warmup = value.trim_end_matches('s').parse().unwrap_or_else(|_| usage()),
            "--subscribers" => cfg.subscribers = value.parse().unwrap_or_else(|_| usage()),
            "--slots" => cfg.slots = Some(value.parse().unwrap_or_else(|_| usage())),
            "--cursor" => {
                cursor_given = true;
                cfg.cursor = ring::Cursor::parse(&value).unwrap_or_else(|| usage())
            }
            _ if key.starts_with("--") => extra.push((key.to_string(), value)),
            _ => usage(),
        }
        i += 2;
    }
    if cursor_given && cfg.transport != Transport::Ring {
        eprintln!("ipcbench-native: --cursor is the ring's");
        std::process::exit(2);
    }
    if cfg.transport == Transport::Iox2 && cfg.wait == Wait::Block {
        eprintln!("ipcbench-native: iox2 supports --wait spin|yield (no event service here)");
        std::process::exit(2);
    }
    if cfg.minimal {
        let complaint = match cfg.transport {
            Transport::Uds => Some("uds has no minimal loop"),
            _ if cfg.round_trip => Some("the minimal loops are streams"),
            _ if cfg.wait == Wait::Block => Some("the minimal loops wait by --wait spin|yield"),
            Transport::Ring if cfg.subscribers != 1 => Some("the ring has one subscriber"),
            Transport::Iox2 if access_given && cfg.full => Some("iox2 --minimal writes the sequence number only (header-only)"),
            _ => None,
        };
        if let Some(complaint) = complaint {
            eprintln!("ipcbench-native: {complaint}");
            std::process::exit(2);
        }
        if cfg.transport == Transport::Iox2 {
            cfg.full = false;
        }
    }
    (cfg, extra)
}

/// Subscriber side of the start protocol: say READY on stdout, read `START <measure_from_ns>` from stdin.
pub fn ready_and_wait_for_start() -> Result<i64, String> {
    println!("READY");
    std::io::stdout().flush().map_err(|e| e.to_string())?;
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).map_err(|e| e.to_string())?;
    line.trim()
        .strip_prefix("START ")
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("expected START, got {line:?}"))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = if args.first().map(String::as_str) == Some("sub") {
        run_subscriber(&args[1..])
    } else {
        run_publisher(&args)
    };
    if let Err(e) = result {
        eprintln!("ipcbench-native: {e}");
        std::process::exit(1);
    }
}

fn run_subscriber(args: &[String]) -> Result<(), String> {
    // A subscriber spins until its stream ends: it goes with its publisher if that one is killed.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    let (cfg, extra) = parse(args);
    let name = extra.iter().find(|(k, _)| k == "--name").map(|(_, v)| v.clone()).ok_or("--name is required")?;
    match cfg.transport {
        Transport::Iox2 => iox2::subscriber(&cfg, &name),
        Transport::Uds => uds::subscriber(&cfg, &name),
        Transport::Ring => ring::subscriber(&cfg, &name),
    }
}

fn run_publisher(args: &[String]) -> Result<(), String> {
    let (cfg, _) = parse(args);
    let id = format!("{}-{}", std::process::id(), now_ns());
    // One monomorphized loop per transport: no virtual call per message.
    let line = match cfg.transport {
        Transport::Iox2 => {
            let name = format!("ipcbench-native/{id}");
            with_subscribers(&cfg, args, &name, &mut iox2::Iox2Publisher::create(&cfg, &name)?)
        }
        Transport::Uds => {
            let name = format!("/tmp/ipcbench-native-{id}.sock");
            with_subscribers(&cfg, args, &name, &mut uds::UdsPublisher::create(&cfg, &name)?)
        }
        Transport::Ring => {
            let name = format!("/dev/shm/ipcbench-native-ring-{id}");
            match cfg.cursor {
                ring::Cursor::SlotSequence => with_subscribers(&cfg, args, &name, &mut ring::RingPublisher::<true>::create(&cfg, &name)?),
                ring::Cursor::PerMessage => with_subscribers(&cfg, args, &name, &mut ring::RingPublisher::<false>::create(&cfg, &name)?),
            }
        }
    }?;
    println!("{line}");
    Ok(())
}

/// Starts the subscriber processes, drives the run, and reaps them (killed if the run failed).
fn with_subscribers<S: PublisherSide>(cfg: &Config, args: &[String], name: &str, side: &mut S) -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut children: Vec<Child> = Vec::new();
    let mut result = Ok(String::new());
    for _ in 0..cfg.subscribers {
        let mut command = Command::new(&exe);
        command.arg("sub").args(args).arg("--name").arg(name).stdin(Stdio::piped()).stdout(Stdio::piped());
        match command.spawn() {
            Ok(child) => children.push(child),
            Err(e) => {
                result = Err(format!("spawn subscriber: {e}"));
                break;
            }
        }
    }
    if result.is_ok() {
        result = drive(cfg, side, &mut children);
    }
    if result.is_err() {
        for child in &mut children {
            let _ = child.kill();
        }
    }
    for child in &mut children {
        let _ = child.wait();
    }
    result
}

fn drive<S: PublisherSide>(cfg: &Config, side: &mut S, children: &mut [Child]) -> Result<String, String> {
    side.connect(now_ns() + 20_000_000_000)?;
    let mut readers: Vec<BufReader<std::process::ChildStdout>> =
        children.iter_mut().map(|c| BufReader::new(c.stdout.take().unwrap())).collect();
    for reader in &mut readers {
        let mut line = String::new();
        reader.read_line(&mut line).map_err(|e| e.to_string())?;
        if line.trim() != "READY" {
            return Err(format!("a subscriber did not get ready: {line:?}"));
        }
    }
    side.finish_handshake()?;

    let measure_from = now_ns() + (cfg.warmup * 1e9) as i64;
    let end = measure_from + (cfg.duration * 1e9) as i64;
    for child in children.iter_mut() {
        let stdin = child.stdin.as_mut().unwrap();
        writeln!(stdin, "START {measure_from}").map_err(|e| e.to_string())?;
        stdin.flush().map_err(|e| e.to_string())?;
    }

    let mut rtt = histogram::Histogram::new();
    let mut bad_echoes = 0u64;
    let mut sequence = 0i64;
    let mut untimed = None;
    if cfg.minimal {
        let window = run_untimed(cfg.warmup, cfg.duration, |sequence| side.send_message(sequence, 0))?;
        sequence = window.sent;
        untimed = Some(window);
    } else {
        loop {
            let stamp = now_ns();
            if stamp >= end {
                break;
            }
            side.send_message(sequence, stamp)?;
            if cfg.round_trip {
                for _ in 0..cfg.subscribers {
                    let echo = side.await_echo()?;
                    let now = now_ns();
                    if echo.sequence != sequence {
                        bad_echoes += 1;
                    } else if stamp >= measure_from {
                        rtt.record(now - stamp);
                    }
                }
            }
            sequence += 1;
        }
    }
    let stopped = now_ns();
    side.send_end_of_stream(sequence)?;

    let (mut measured, mut lost, mut corrupted, mut duplicated, mut received) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let mut one_way = (0u64, 0u64);
    let (mut one_way_min, mut one_way_max, mut weighted_mean, mut samples) = (u64::MAX, 0u64, 0f64, 0u64);
    for reader in &mut readers {
        let mut line = String::new();
        reader.read_line(&mut line).map_err(|e| e.to_string())?;
        let field = |name: &str| -> u64 {
            line.split_whitespace()
                .find_map(|kv| kv.strip_prefix(name).and_then(|v| v.strip_prefix('=')).and_then(|v| v.parse().ok()))
                .unwrap_or(0)
        };
        if !line.starts_with("RESULT") {
            return Err(format!("a subscriber failed: {line:?}"));
        }
        received += field("received");
        measured += field("measured");
        lost += field("lost");
        corrupted += field("corrupted");
        duplicated += field("duplicated");
        one_way = (one_way.0.max(field("p50_ns")), one_way.1.max(field("p99_ns")));
        one_way_min = one_way_min.min(field("min_ns"));
        one_way_max = one_way_max.max(field("max_ns"));
        weighted_mean += field("mean_ns") as f64 * field("samples") as f64;
        samples += field("samples");
    }
    let mut seconds = (stopped - measure_from) as f64 / 1e9;
    if let Some(window) = &untimed {
        // Every subscriber gets every message, and none is lost (checked): sent in the window = delivered.
        (measured, seconds) = (window.measured as u64 * cfg.subscribers as u64, window.seconds);
    }
    let (p50, p99) = if cfg.round_trip { (rtt.percentile(50.0), rtt.percentile(99.0)) } else { one_way };
    let (min, mean, max) = if cfg.round_trip {
        (rtt.min() as u64, rtt.mean(), rtt.max() as u64)
    } else if samples == 0 {
        (0, 0.0, 0)
    } else {
        (one_way_min, weighted_mean / samples as f64, one_way_max)
    };
    Ok(format!(
        "{{\"impl\":\"native\",\"minimal\":{},\"transport\":\"{}\",{}\"payload\":{},\"access\":\"{}\",\"wait\":\"{}\",\"mode\":\"{}\",\"subscribers\":{},\
         \"sent\":{},\"received\":{},\"measured\":{},\"seconds\":{:.3},\"msgs_per_sec\":{:.1},\"lost\":{},\"corrupted\":{},\"duplicated\":{},\
         \"bad_echoes\":{},\"latency\":\"{}\",\"p50_us\":{:.3},\"p99_us\":{:.3},\"min_us\":{:.3},\"mean_us\":{:.3},\"max_us\":{:.3}}}",
        cfg.minimal,
        match cfg.transport { Transport::Iox2 => "iox2", Transport::Uds => "uds", Transport::Ring => "ring" },
        // Which ring ran (`--cursor`); the other transports have no such field.
        if cfg.transport == Transport::Ring { format!("\"ring\":\"{}\",", cfg.cursor.name()) } else { String::new() },
        cfg.payload,
        if cfg.full { "full" } else { "header-only" },
        match cfg.wait { Wait::Spin => "spin", Wait::Yield => "yield", Wait::Block => "block" },
        if cfg.round_trip { "round-trip" } else { "stream" },
        cfg.subscribers,
        sequence,
        received,
        measured,
        seconds,
        measured as f64 / seconds,
        lost,
        corrupted,
        duplicated,
        bad_echoes,
        if cfg.minimal { "none" } else if cfg.round_trip { "round-trip" } else { "one-way" },
        p50 as f64 / 1000.0,
        p99 as f64 / 1000.0,
        min as f64 / 1000.0,
        mean / 1000.0,
        max as f64 / 1000.0,
    ))
}
