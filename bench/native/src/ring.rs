//! The minimal shared-memory ring: what shared memory can do between two processes on this machine, the reference
//! for shm-ring. A file in /dev/shm mapped by both, a control page (the cursors on cache lines of their own) and a
//! power-of-two number of fixed slots rounded up to 64 bytes. Single producer, single consumer. Two ways to tell the
//! consumer that a slot is written (`--cursor`):
//!
//! - `slot-sequence` (the default; LMAX Disruptor / Aeron style): each slot starts with its own 8-byte sequence word,
//!   then the 32-byte header and the payload. The producer writes header and payload, then stores the slot's word
//!   LAST with release: position + 1 (0 = never written; a slot's word grows by the slot count each lap, so a value
//!   left from the previous lap never passes for the new one). The consumer polls, with acquire, the word of the slot
//!   at its own position, which sits in the slot's first cache line, the one it reads the header from next. No
//!   shared producer cursor is written or read per message.
//! - `per-message`: the slot is header + payload; the producer stores a shared producer cursor with release after
//!   every message and the consumer reads that cursor when it has caught up with what it last saw.
//!
//! In both, the producer reads the consumer's cursor only when its cached limit runs out, and the consumer publishes
//! its cursor every `slots / 8` messages and whenever it has caught up. The per-message work is common.rs's: FULL
//! fills and checksums every payload byte on one side and verifies it on the other; no clock read and no histogram
//! (see common::run_untimed and common::MinimalReceiver).

use std::ffi::CString;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::common::*;
use crate::{Config, PublisherSide};

type Res<T> = Result<T, String>;

const MAGIC: u64 = 0x4950_4342_5249_4E47; // "IPCBRING"
const CONTROL_BYTES: usize = 4096;
const SLOT_ALIGN: usize = 64;
/// The slot's sequence word under `--cursor slot-sequence`, before the header.
const SEQUENCE_BYTES: usize = 8;

/// How the consumer learns that a slot is written (`--cursor`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Cursor {
    /// Each slot's own sequence word, stored last with release (the default).
    SlotSequence,
    /// A shared producer cursor, stored with release after every message.
    PerMessage,
}

impl Cursor {
    pub fn name(self) -> &'static str {
        match self {
            Cursor::SlotSequence => "slot-sequence",
            Cursor::PerMessage => "per-message",
        }
    }

    pub fn parse(name: &str) -> Option<Cursor> {
        match name {
            "slot-sequence" => Some(Cursor::SlotSequence),
            "per-message" => Some(Cursor::PerMessage),
            _ => None,
        }
    }

    /// Where the message (header + payload) starts in its slot.
    const fn message_offset(self) -> usize {
        match self {
            Cursor::SlotSequence => SEQUENCE_BYTES,
            Cursor::PerMessage => 0,
        }
    }

    /// What the control page says of the layout, checked by the subscriber.
    const fn layout(self) -> u64 {
        match self {
            Cursor::SlotSequence => 1,
            Cursor::PerMessage => 2,
        }
    }
}

#[repr(C, align(128))]
struct Line(AtomicU64);

/// The control page. `magic` is stored last by the producer (release); `attached` by the consumer once mapped.
/// `producer` is used by `--cursor per-message` only.
#[repr(C)]
struct Control {
    magic: Line,
    slots: Line,
    slot_bytes: Line,
    layout: Line,
    attached: Line,
    producer: Line,
    consumer: Line,
}

const _: () = assert!(std::mem::size_of::<Control>() <= CONTROL_BYTES);

/// The slot of a `payload`-byte message, rounded up to 64 bytes: header + payload, with the 8-byte sequence word in
/// front under `slot-sequence` (so an 8-byte payload still takes one 64-byte line: 8 + 32 + 8 = 48).
pub fn slot_bytes(payload: usize, cursor: Cursor) -> usize {
    (cursor.message_offset() + HEADER_SIZE + payload).div_ceil(SLOT_ALIGN) * SLOT_ALIGN
}

/// `--slots`, or as many as fit 4 MiB (at least 8, at most 1,024), rounded up to a power of two.
pub fn slot_count(cfg: &Config) -> usize {
    cfg.slots.unwrap_or_else(|| ((4 << 20) / slot_bytes(cfg.payload, cfg.cursor)).clamp(8, 1024)).max(2).next_power_of_two()
}

fn unlink(path: &str) {
    if let Ok(c_path) = CString::new(path) {
        unsafe { libc::unlink(c_path.as_ptr()) };
    }
}

struct Mapping {
    base: *mut u8,
    len: usize,
}

impl Mapping {
    fn open(path: &str, len: Option<usize>) -> Res<Self> {
        let c_path = CString::new(path).map_err(|e| e.to_string())?;
        let flags = if len.is_some() { libc::O_RDWR | libc::O_CREAT | libc::O_EXCL } else { libc::O_RDWR };
        let fd = unsafe { libc::open(c_path.as_ptr(), flags, 0o600) };
        if fd < 0 {
            return Err(format!("ring: open {path}: {}", std::io::Error::last_os_error()));
        }
        let result = (|| {
            let len = match len {
                Some(len) => {
                    if unsafe { libc::ftruncate(fd, len as libc::off_t) } != 0 {
                        return Err(format!("ring: ftruncate {path}: {}", std::io::Error::last_os_error()));
                    }
                    len
                }
                None => {
                    let mut st: libc::stat = unsafe { std::mem::zeroed() };
                    if unsafe { libc::fstat(fd, &mut st) } != 0 {
                        return Err(format!("ring: fstat {path}: {}", std::io::Error::last_os_error()));
                    }
                    st.st_size as usize
                }
            };
            let prot = libc::PROT_READ | libc::PROT_WRITE;
            let base = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED | libc::MAP_POPULATE, fd, 0) };
            if base == libc::MAP_FAILED {
                return Err(format!("ring: mmap {path} ({len} bytes): {}", std::io::Error::last_os_error()));
            }
            Ok(Self { base: base as *mut u8, len })
        })();
        unsafe { libc::close(fd) };
        if result.is_err() && len.is_some() {
            unlink(path);
        }
        result
    }

    fn control(&self) -> &Control {
        unsafe { &*(self.base as *const Control) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

/// The ring as either side sees it: cursors, slot geometry and the slots.
struct Ring {
    map: Mapping,
    mask: u64,
    slot_bytes: usize,
    message_offset: usize,
    message_bytes: usize,
}

impl Ring {
    fn new(map: Mapping, payload: usize, cursor: Cursor) -> Res<Self> {
        let control = map.control();
        let (slots, bytes) = (control.slots.0.load(Ordering::Relaxed), control.slot_bytes.0.load(Ordering::Relaxed) as usize);
        let layout = control.layout.0.load(Ordering::Relaxed);
        if layout != cursor.layout() {
            return Err(format!("ring: the file's layout is {layout}, --cursor {} needs {}", cursor.name(), cursor.layout()));
        }
        let message_offset = cursor.message_offset();
        if !slots.is_power_of_two()
            || bytes % SLOT_ALIGN != 0
            || bytes < message_offset + HEADER_SIZE + payload
            || CONTROL_BYTES + slots as usize * bytes > map.len
        {
            return Err(format!("ring: bad geometry ({slots} slots of {bytes} bytes in {} bytes)", map.len));
        }
        Ok(Self { map, mask: slots - 1, slot_bytes: bytes, message_offset, message_bytes: HEADER_SIZE + payload })
    }

    fn control(&self) -> &Control {
        self.map.control()
    }

    #[inline(always)]
    fn slot_base(&self, position: u64) -> *mut u8 {
        // SAFETY: inside the mapping (checked in `new`).
        unsafe { self.map.base.add(CONTROL_BYTES + (position & self.mask) as usize * self.slot_bytes) }
    }

    /// The message (header + payload) of the slot of `position`.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    fn slot(&self, position: u64) -> &mut [u8] {
        // SAFETY: inside the mapping (checked in `new`); the cursors (and under slot-sequence the slot's sequence word)
        // hand each slot to one side at a time. The message never overlaps the sequence word.
        unsafe { std::slice::from_raw_parts_mut(self.slot_base(position).add(self.message_offset), self.message_bytes) }
    }

    /// The sequence word of the slot of `position` (slot-sequence only): position + 1 once that message is written.
    #[inline(always)]
    fn sequence(&self, position: u64) -> &AtomicU64 {
        debug_assert_eq!(self.message_offset, SEQUENCE_BYTES);
        // SAFETY: the first 8 bytes of a 64-byte aligned slot inside the mapping, only ever accessed atomically.
        unsafe { &*(self.slot_base(position) as *const AtomicU64) }
    }
}

/// The producer. `SLOT_SEQUENCE` picks the cursor mode at compile time: one monomorphized loop per mode, no branch on
/// it per message.
pub struct RingPublisher<const SLOT_SEQUENCE: bool> {
    cfg: Config,
    ring: Ring,
    path: String,
    unlinked: bool,
    head: u64,
    limit: u64,
}

impl<const SLOT_SEQUENCE: bool> RingPublisher<SLOT_SEQUENCE> {
    const CURSOR: Cursor = if SLOT_SEQUENCE { Cursor::SlotSequence } else { Cursor::PerMessage };

    pub fn create(cfg: &Config, path: &str) -> Res<Self> {
        if cfg.cursor != Self::CURSOR {
            return Err(format!("ring: a {} publisher for --cursor {}", Self::CURSOR.name(), cfg.cursor.name()));
        }
        let (slots, bytes) = (slot_count(cfg), slot_bytes(cfg.payload, cfg.cursor));
        // ftruncate zero-fills: every slot's sequence word starts at 0, "never written".
        let map = Mapping::open(path, Some(CONTROL_BYTES + slots * bytes))?;
        let control = map.control();
        control.slots.0.store(slots as u64, Ordering::Relaxed);
        control.slot_bytes.0.store(bytes as u64, Ordering::Relaxed);
        control.layout.0.store(Self::CURSOR.layout(), Ordering::Relaxed);
        control.magic.0.store(MAGIC, Ordering::Release);
        match Ring::new(map, cfg.payload, cfg.cursor) {
            Ok(ring) => Ok(Self { cfg: cfg.clone(), ring, path: path.into(), unlinked: false, head: 0, limit: slots as u64 }),
            Err(e) => {
                unlink(path);
                Err(e)
            }
        }
    }

    fn unlink(&mut self) {
        if !self.unlinked {
            unlink(&self.path);
            self.unlinked = true;
        }
    }

    /// The next free slot, waiting for the consumer when the cached limit has run out.
    #[inline(always)]
    fn claim(&mut self) -> &mut [u8] {
        while self.head == self.limit {
            self.limit = self.ring.control().consumer.0.load(Ordering::Acquire) + self.ring.mask + 1;
            if self.head == self.limit {
                pause(self.cfg.wait);
            }
        }
        self.ring.slot(self.head)
    }

    /// Hands the claimed slot to the consumer: its sequence word (slot-sequence) or the shared producer cursor
    /// (per-message), stored with release after everything else in the slot.
    #[inline(always)]
    fn publish(&mut self) {
        if SLOT_SEQUENCE {
            self.ring.sequence(self.head).store(self.head + 1, Ordering::Release);
            self.head += 1;
        } else {
            self.head += 1;
            self.ring.control().producer.0.store(self.head, Ordering::Release);
        }
    }
}

impl<const SLOT_SEQUENCE: bool> Drop for RingPublisher<SLOT_SEQUENCE> {
    fn drop(&mut self) {
        self.unlink();
    }
}

impl<const SLOT_SEQUENCE: bool> PublisherSide for RingPublisher<SLOT_SEQUENCE> {
    fn connect(&mut self, deadline_ns: i64) -> Res<()> {
        while self.ring.control().attached.0.load(Ordering::Acquire) == 0 {
            if now_ns() > deadline_ns {
                return Err("ring: the subscriber did not attach in time".into());
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        // Both sides have it mapped: the name can go now, so nothing is left behind whatever happens next.
        self.unlink();
        Ok(())
    }

    fn finish_handshake(&mut self) -> Res<()> {
        Ok(())
    }

    #[inline(always)]
    fn send_message(&mut self, sequence: i64, stamp_ns: i64) -> Res<()> {
        let (payload, full) = (self.cfg.payload, self.cfg.full);
        write_message(self.claim(), payload, full, 0, sequence, stamp_ns);
        self.publish();
        Ok(())
    }

    fn send_end_of_stream(&mut self, sequence: i64) -> Res<()> {
        write_end_of_stream(self.claim(), 0, sequence);
        self.publish();
        Ok(())
    }

    fn await_echo(&mut self) -> Res<Header> {
        Err("ring: no round trip".into())
    }
}

/// Maps the ring at `path` as the consumer and says it attached.
fn attach(cfg: &Config, path: &str) -> Res<Ring> {
    let map = Mapping::open(path, None)?;
    if map.len < CONTROL_BYTES || map.control().magic.0.load(Ordering::Acquire) != MAGIC {
        return Err(format!("ring: {path} is not a ring"));
    }
    let ring = Ring::new(map, cfg.payload, cfg.cursor)?;
    ring.control().attached.0.store(1, Ordering::Release);
    Ok(ring)
}

pub fn subscriber(cfg: &Config, path: &str) -> Res<()> {
    let ring = attach(cfg, path)?;
    let mut rx = MinimalReceiver::new(cfg.payload, cfg.full);
    crate::ready_and_wait_for_start()?;
    match cfg.cursor {
        Cursor::SlotSequence => consume_slot_sequence(&ring, &mut rx, cfg.wait),
        Cursor::PerMessage => consume_per_message(&ring, &mut rx, cfg.wait),
    }
    println!("{}", rx.result_line());
    Ok(())
}

/// The consumer's cursor is published every `slots / 8` messages.
fn batch(ring: &Ring) -> u64 {
    ((ring.mask + 1) / 8).max(1)
}

/// `--cursor slot-sequence`: polls the sequence word of the slot at its own position; the producer's cursor is
/// never read. Publishes its own cursor every batch and whenever it has caught up (the slot is not written yet).
fn consume_slot_sequence(ring: &Ring, rx: &mut MinimalReceiver, wait: Wait) {
    let control = ring.control();
    let batch = batch(ring);
    let (mut tail, mut published) = (0u64, 0u64);
    loop {
        if ring.sequence(tail).load(Ordering::Acquire) != tail + 1 {
            if published != tail {
                control.consumer.0.store(tail, Ordering::Release);
                published = tail;
                continue;
            }
            pause(wait);
            continue;
        }
        let outcome = rx.process(ring.slot(tail));
        tail += 1;
        if tail - published >= batch {
            control.consumer.0.store(tail, Ordering::Release);
            published = tail;
        }
        if let Outcome::EndOfStream = outcome {
            break;
        }
    }
}

/// `--cursor per-message`: reads the shared producer cursor only when it has caught up with what it last saw.
/// Publishes its own cursor every batch and whenever it has caught up.
fn consume_per_message(ring: &Ring, rx: &mut MinimalReceiver, wait: Wait) {
    let control = ring.control();
    let batch = batch(ring);
    let (mut tail, mut available, mut published) = (0u64, 0u64, 0u64);
    loop {
        if tail == available {
            if published != tail {
                control.consumer.0.store(tail, Ordering::Release);
                published = tail;
            }
            available = control.producer.0.load(Ordering::Acquire);
            if tail == available {
                pause(wait);
                continue;
            }
        }
        let outcome = rx.process(ring.slot(tail));
        tail += 1;
        if tail - published >= batch {
            control.consumer.0.store(tail, Ordering::Release);
            published = tail;
        }
        if let Outcome::EndOfStream = outcome {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Transport;

    fn config(payload: usize, full: bool, cursor: Cursor, slots: Option<usize>) -> Config {
        Config {
            transport: Transport::Ring,
            payload,
            full,
            wait: Wait::Spin,
            round_trip: false,
            duration: 0.0,
            warmup: 0.0,
            subscribers: 1,
            minimal: true,
            slots,
            cursor,
        }
    }

    #[test]
    fn slots_are_whole_cache_lines_and_the_sequence_word_fits_an_8_byte_message_in_one() {
        for (payload, per_message, slot_sequence) in
            [(0, 64, 64), (8, 64, 64), (24, 64, 64), (25, 64, 128), (32, 64, 128), (1024, 1088, 1088), (1048, 1088, 1088), (1049, 1088, 1152)]
        {
            assert_eq!(slot_bytes(payload, Cursor::PerMessage), per_message, "{payload} B per-message");
            assert_eq!(slot_bytes(payload, Cursor::SlotSequence), slot_sequence, "{payload} B slot-sequence");
        }
        assert_eq!(slot_count(&config(8, true, Cursor::SlotSequence, None)), 1024);
        assert_eq!(slot_count(&config(1024, true, Cursor::SlotSequence, None)), 1024);
        assert_eq!(slot_count(&config(1 << 20, true, Cursor::SlotSequence, None)), 8);
        assert_eq!(slot_count(&config(8, true, Cursor::PerMessage, Some(5))), 8);
    }

    fn path(tag: &str) -> String {
        format!("/dev/shm/ipcbench-native-ring-test-{}-{tag}-{}", std::process::id(), now_ns())
    }

    /// Publisher on this thread, consumer on another, through a real mapping: every message arrives once, intact, in
    /// order, and the end of stream ends the consumer; 8 slots, so the ring wraps thousands of times.
    fn round_trip_through_the_ring<const SLOT_SEQUENCE: bool>(payload: usize, full: bool, slots: usize, messages: i64) {
        let cursor = if SLOT_SEQUENCE { Cursor::SlotSequence } else { Cursor::PerMessage };
        let cfg = config(payload, full, cursor, Some(slots));
        let path = path(cursor.name());
        let mut publisher = RingPublisher::<SLOT_SEQUENCE>::create(&cfg, &path).unwrap();
        let consumer = {
            let (cfg, path) = (cfg.clone(), path.clone());
            std::thread::spawn(move || {
                let ring = attach(&cfg, &path).unwrap();
                let mut rx = MinimalReceiver::new(cfg.payload, cfg.full);
                match cfg.cursor {
                    Cursor::SlotSequence => consume_slot_sequence(&ring, &mut rx, cfg.wait),
                    Cursor::PerMessage => consume_per_message(&ring, &mut rx, cfg.wait),
                }
                (rx.received, rx.lost, rx.corrupted, rx.duplicated)
            })
        };
        publisher.connect(now_ns() + 10_000_000_000).unwrap();
        assert!(!std::path::Path::new(&path).exists(), "the name is unlinked once both sides mapped it");
        for sequence in 0..messages {
            publisher.send_message(sequence, 0).unwrap();
        }
        publisher.send_end_of_stream(messages).unwrap();
        assert_eq!(consumer.join().unwrap(), (messages as u64, 0, 0, 0), "{} {payload} B full={full}", cursor.name());
    }

    #[test]
    fn slot_sequence_delivers_every_message_once_across_wrap_arounds() {
        for (payload, full) in [(8, true), (8, false), (1024, true), (1024, false), (0, true)] {
            round_trip_through_the_ring::<true>(payload, full, 8, 50_000);
        }
        round_trip_through_the_ring::<true>(8, true, 2, 20_000);
        round_trip_through_the_ring::<true>(8, true, 1024, 50_000);
    }

    #[test]
    fn per_message_cursor_delivers_every_message_once_across_wrap_arounds() {
        for (payload, full) in [(8, true), (8, false), (1024, true), (1024, false), (0, true)] {
            round_trip_through_the_ring::<false>(payload, full, 8, 50_000);
        }
    }

    #[test]
    fn a_subscriber_refuses_a_ring_of_the_other_cursor_mode() {
        let layout = path("layout");
        let _publisher = RingPublisher::<false>::create(&config(8, true, Cursor::PerMessage, Some(8)), &layout).unwrap();
        let error = attach(&config(8, true, Cursor::SlotSequence, Some(8)), &layout).err().unwrap();
        assert!(error.contains("layout"), "{error}");
        assert!(RingPublisher::<true>::create(&config(8, true, Cursor::PerMessage, None), &path("mismatch")).is_err());
    }
}
