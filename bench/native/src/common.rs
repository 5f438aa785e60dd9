//! What every message costs on both sides, exactly as src/IpcBench.Workload does it: the 32-byte header
//! (MessageHeader.cs), the publisher's fill + checksum under FULL (PublisherWorker.cs), the subscriber's checks,
//! verification, sequence tracking and latency recording (ReceiverWorker.cs).

use crate::checksum;
use crate::histogram::Histogram;

pub const HEADER_SIZE: usize = 32;
pub const FLAG_END_OF_STREAM: u16 = 1;
pub const FLAG_FULL_PAYLOAD: u16 = 2;

/// CLOCK_MONOTONIC in nanoseconds, shared by every process (as MonotonicClock.NowNs).
#[inline(always)]
pub fn now_ns() -> i64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as i64 * 1_000_000_000 + ts.tv_nsec as i64
}

#[derive(Clone, Copy, Default, Debug)]
pub struct Header {
    pub payload_length: i32,
    pub publisher_index: u16,
    pub flags: u16,
    pub sequence: i64,
    pub send_timestamp_ns: i64,
    pub checksum: u64,
}

impl Header {
    #[inline(always)]
    pub fn read(m: &[u8]) -> Header {
        Header {
            payload_length: i32::from_le_bytes(m[0..4].try_into().unwrap()),
            publisher_index: u16::from_le_bytes(m[4..6].try_into().unwrap()),
            flags: u16::from_le_bytes(m[6..8].try_into().unwrap()),
            sequence: i64::from_le_bytes(m[8..16].try_into().unwrap()),
            send_timestamp_ns: i64::from_le_bytes(m[16..24].try_into().unwrap()),
            checksum: u64::from_le_bytes(m[24..32].try_into().unwrap()),
        }
    }

    #[inline(always)]
    pub fn write(&self, m: &mut [u8]) {
        m[0..4].copy_from_slice(&self.payload_length.to_le_bytes());
        m[4..6].copy_from_slice(&self.publisher_index.to_le_bytes());
        m[6..8].copy_from_slice(&self.flags.to_le_bytes());
        m[8..16].copy_from_slice(&self.sequence.to_le_bytes());
        m[16..24].copy_from_slice(&self.send_timestamp_ns.to_le_bytes());
        m[24..32].copy_from_slice(&self.checksum.to_le_bytes());
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Wait {
    Spin,
    Yield,
    Block,
}

/// Idle.Pause: SPIN = a few PAUSE instructions (Thread.SpinWait(8)), YIELD = sched_yield.
#[inline(always)]
pub fn pause(wait: Wait) {
    match wait {
        Wait::Spin => {
            for _ in 0..8 {
                std::hint::spin_loop();
            }
        }
        _ => std::thread::yield_now(),
    }
}

/// PublisherWorker's per-message work on the loaned buffer `message` (header + payload).
#[inline(always)]
pub fn write_message(message: &mut [u8], payload_bytes: usize, full: bool, publisher_index: i32, sequence: i64, stamp_ns: i64) {
    let mut header = Header {
        payload_length: payload_bytes as i32,
        publisher_index: publisher_index as u16,
        flags: if full { FLAG_FULL_PAYLOAD } else { 0 },
        sequence,
        send_timestamp_ns: stamp_ns,
        checksum: 0,
    };
    if full {
        // One pass fills and checksums, as PublisherWorker's FillAndCompute.
        let payload = &mut message[HEADER_SIZE..HEADER_SIZE + payload_bytes];
        header.checksum = checksum::fill_and_compute(payload, checksum::fill_byte(sequence, publisher_index), sequence as u64);
    }
    header.write(message);
}

pub fn write_end_of_stream(message: &mut [u8], publisher_index: i32, sequence: i64) {
    Header {
        payload_length: 0,
        publisher_index: publisher_index as u16,
        flags: FLAG_END_OF_STREAM,
        sequence,
        send_timestamp_ns: now_ns(),
        checksum: 0,
    }
    .write(message);
}

/// Sequence tracking of one publisher's stream (ReceiverWorker): the next expected sequence, gaps counted as lost,
/// anything older as duplicated.
#[inline(always)]
pub fn track_sequence(next: &mut i64, sequence: i64, lost: &mut u64, duplicated: &mut u64) {
    if sequence == *next {
        *next += 1;
    } else if sequence > *next {
        *lost += (sequence - *next) as u64;
        *next = sequence + 1;
    } else {
        *duplicated += 1;
    }
}

/// The messages an end-of-stream marker (carrying the next sequence) says were never delivered.
#[inline(always)]
pub fn end_of_stream_gap(next: &mut i64, sequence: i64) -> u64 {
    if sequence > *next {
        let gap = (sequence - *next) as u64;
        *next = sequence;
        gap
    } else {
        0
    }
}

/// ReceiverWorker: counters, sequence tracking and one-way latency of one subscriber.
pub struct Receiver {
    pub payload_bytes: usize,
    pub full: bool,
    pub round_trip: bool,
    pub total_publishers: usize,
    pub measure_from_ns: i64,
    pub next_sequence: Vec<i64>,
    pub received: u64,
    pub lost: u64,
    pub corrupted: u64,
    pub duplicated: u64,
    pub measured: u64,
    pub measured_bytes: u64,
    pub end_of_streams: usize,
    pub latency: Histogram,
}

pub enum Outcome {
    Message,
    EndOfStream,
}

impl Receiver {
    pub fn new(payload_bytes: usize, full: bool, round_trip: bool, total_publishers: usize) -> Self {
        Self {
            payload_bytes,
            full,
            round_trip,
            total_publishers,
            measure_from_ns: 0,
            next_sequence: vec![0; total_publishers],
            received: 0,
            lost: 0,
            corrupted: 0,
            duplicated: 0,
            measured: 0,
            measured_bytes: 0,
            end_of_streams: 0,
            latency: Histogram::new(),
        }
    }

    /// Processes one message; under round trip `echo` receives the 32-byte echo to send back.
    #[inline(always)]
    pub fn process(&mut self, message: &[u8], echo: &mut [u8; HEADER_SIZE]) -> Outcome {
        let header = Header::read(message);
        if header.flags & FLAG_END_OF_STREAM != 0 {
            if (header.publisher_index as usize) < self.total_publishers {
                self.lost += end_of_stream_gap(&mut self.next_sequence[header.publisher_index as usize], header.sequence);
            }
            self.end_of_streams += 1;
            return Outcome::EndOfStream;
        }

        let now = now_ns();
        self.received += 1;
        if !self.is_intact(&header, message) {
            self.corrupted += 1;
        } else {
            let next = &mut self.next_sequence[header.publisher_index as usize];
            track_sequence(next, header.sequence, &mut self.lost, &mut self.duplicated);
        }

        if header.send_timestamp_ns >= self.measure_from_ns {
            self.measured += 1;
            self.measured_bytes += header.payload_length as u64;
            if !self.round_trip {
                self.latency.record(now - header.send_timestamp_ns);
            }
        }

        if self.round_trip {
            let mut e = header;
            e.payload_length = 0;
            e.write(echo);
        }
        Outcome::Message
    }

    #[inline(always)]
    fn is_intact(&self, header: &Header, message: &[u8]) -> bool {
        if message.len() != HEADER_SIZE + self.payload_bytes
            || header.payload_length as usize != self.payload_bytes
            || header.payload_length < 0
            || header.publisher_index as usize >= self.total_publishers
            || header.sequence < 0
        {
            return false;
        }
        if self.full {
            return header.flags & FLAG_FULL_PAYLOAD != 0
                && checksum::compute(&message[HEADER_SIZE..], header.sequence as u64) == header.checksum;
        }
        true
    }

    pub fn result_line(&self) -> String {
        format!(
            "RESULT received={} measured={} measured_bytes={} lost={} corrupted={} duplicated={} p50_ns={} p99_ns={} min_ns={} mean_ns={:.0} max_ns={} samples={}",
            self.received,
            self.measured,
            self.measured_bytes,
            self.lost,
            self.corrupted,
            self.duplicated,
            self.latency.percentile(50.0),
            self.latency.percentile(99.0),
            self.latency.min(),
            self.latency.mean(),
            self.latency.max(),
            self.latency.count()
        )
    }
}

/// The subscriber of the minimal loops (`ring`, `iox2 --minimal`): no clock and no histogram. It always checks the
/// sequence; under `full` (the ring's FULL) also the payload length, the FULL flag and the checksum of every payload
/// byte. One publisher.
pub struct MinimalReceiver {
    pub payload_bytes: usize,
    pub full: bool,
    pub next_sequence: i64,
    pub received: u64,
    pub lost: u64,
    pub corrupted: u64,
    pub duplicated: u64,
}

impl MinimalReceiver {
    pub fn new(payload_bytes: usize, full: bool) -> Self {
        Self { payload_bytes, full, next_sequence: 0, received: 0, lost: 0, corrupted: 0, duplicated: 0 }
    }

    #[inline(always)]
    pub fn process(&mut self, message: &[u8]) -> Outcome {
        let flags = u16::from_le_bytes(message[6..8].try_into().unwrap());
        let sequence = i64::from_le_bytes(message[8..16].try_into().unwrap());
        if flags & FLAG_END_OF_STREAM != 0 {
            self.lost += end_of_stream_gap(&mut self.next_sequence, sequence);
            return Outcome::EndOfStream;
        }
        self.received += 1;
        if self.full {
            let header = Header::read(message);
            if message.len() < HEADER_SIZE + self.payload_bytes
                || header.payload_length as usize != self.payload_bytes
                || flags & FLAG_FULL_PAYLOAD == 0
                || checksum::compute(&message[HEADER_SIZE..HEADER_SIZE + self.payload_bytes], sequence as u64) != header.checksum
            {
                self.corrupted += 1;
                return Outcome::Message;
            }
        }
        track_sequence(&mut self.next_sequence, sequence, &mut self.lost, &mut self.duplicated);
        Outcome::Message
    }

    /// The same RESULT line as Receiver's; `measured` is counted by the publisher here (no stamps to tell).
    pub fn result_line(&self) -> String {
        format!(
            "RESULT received={} lost={} corrupted={} duplicated={}",
            self.received, self.lost, self.corrupted, self.duplicated
        )
    }
}

/// What a publisher sent in the measured window of an untimed loop.
pub struct Window {
    pub sent: i64,
    pub measured: i64,
    pub seconds: f64,
}

/// The minimal loops' publisher: calls `send` with sequence 0, 1, 2… back to back with no clock read per message. A
/// timer thread flips a flag at the end of the warmup and at the end of the window; the loop reads the clock only
/// then, to note the sequence and the time of each edge.
pub fn run_untimed(warmup: f64, duration: f64, mut send: impl FnMut(i64) -> Result<(), String>) -> Result<Window, String> {
    use std::sync::atomic::{AtomicU8, Ordering};
    use std::sync::Arc;
    let phase = Arc::new(AtomicU8::new(0));
    let timer = Arc::clone(&phase);
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs_f64(warmup));
        timer.store(1, Ordering::Relaxed);
        std::thread::sleep(std::time::Duration::from_secs_f64(duration));
        timer.store(2, Ordering::Relaxed);
    });
    let (mut sequence, mut seen) = (0i64, 0u8);
    let (mut from_sequence, mut from_ns) = (0i64, now_ns());
    loop {
        let now_phase = phase.load(Ordering::Relaxed);
        if now_phase != seen {
            let now = now_ns();
            if seen == 0 {
                (from_sequence, from_ns) = (sequence, now);
            }
            if now_phase == 2 {
                return Ok(Window { sent: sequence, measured: sequence - from_sequence, seconds: (now - from_ns) as f64 / 1e9 });
            }
            seen = now_phase;
        }
        send(sequence)?;
        sequence += 1;
    }
}

/// Queue depth per subscriber, as src/IpcBench.Transports/iceoryx2/ServiceLayout.QueueDepth with its defaults
/// (4 MiB per subscriber, 2..256 messages, at most 64 MiB per publisher).
pub fn queue_depth(max_message_bytes: usize, subscribers: usize) -> usize {
    let slot = max_message_bytes as i64 + 64;
    let depth = ((4i64 << 20) / slot).clamp(2, 256);
    let fitting = (((64i64 << 20) / slot) - 2) / subscribers as i64 - 1;
    depth.min(fitting).max(2) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(payload: usize, sequence: i64, flags: u16) -> Vec<u8> {
        let mut m = vec![0u8; HEADER_SIZE + payload];
        write_message(&mut m, payload, flags & FLAG_FULL_PAYLOAD != 0, 0, sequence, 0);
        if flags & FLAG_END_OF_STREAM != 0 {
            write_end_of_stream(&mut m, 0, sequence);
        }
        m
    }

    #[test]
    fn the_minimal_receiver_counts_gaps_duplicates_and_corrupted_payloads() {
        let mut rx = MinimalReceiver::new(100, true);
        for sequence in [0, 1, 3, 3] {
            rx.process(&message(100, sequence, FLAG_FULL_PAYLOAD));
        }
        let mut bad = message(100, 4, FLAG_FULL_PAYLOAD);
        bad[HEADER_SIZE + 99] ^= 1;
        rx.process(&bad);
        assert!(matches!(rx.process(&message(0, 7, FLAG_END_OF_STREAM)), Outcome::EndOfStream));
        // 2 lost, then 3 again, 4 corrupted (so 4, 5, 6 are counted lost at the end of the stream).
        assert_eq!((rx.received, rx.lost, rx.duplicated, rx.corrupted), (5, 4, 1, 1));
    }

    /// The same values as the C# test Queue_depth_follows_the_message_size_and_the_shared_memory_budget.
    #[test]
    fn queue_depth_matches_the_csharp_service_layout() {
        for (max, subs, expected) in [
            (8 + 32, 1, 256),
            (1024 + 32, 4, 256),
            (65536 + 32, 1, 63),
            (524288 + 32, 1, 7),
            (65536 + 32, 64, 14),
            (64 * 1024 * 1024 + 32, 1, 2),
        ] {
            assert_eq!(queue_depth(max, subs), expected, "{max} B, {subs} subscriber(s)");
        }
    }
}
