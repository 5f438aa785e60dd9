//! The minimal shared-memory ring: what shared memory can do between two processes on this machine, the reference
//! for shm-ring. A file in /dev/shm mapped by both, a control page (the producer's and the consumer's cursors on
//! cache lines of their own) and a power-of-two number of fixed slots of header + payload rounded up to 64 bytes.
//! Single producer, single consumer, batched cursors: the producer reads the consumer's cursor only when its cached
//! limit runs out and publishes its own after every message; the consumer reads the producer's cursor only when it
//! has caught up and publishes its own every `slots / 8` messages or when it has caught up. The per-message work is
//! common.rs's: FULL fills and checksums every payload byte on one side and verifies it on the other; no clock read
//! and no histogram (see common::run_untimed and common::MinimalReceiver).

use std::ffi::CString;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::common::*;
use crate::{Config, PublisherSide};

type Res<T> = Result<T, String>;

const MAGIC: u64 = 0x4950_4342_5249_4E47; // "IPCBRING"
const CONTROL_BYTES: usize = 4096;
const SLOT_ALIGN: usize = 64;

#[repr(C, align(128))]
struct Line(AtomicU64);

/// The control page. `magic` is stored last by the producer (release); `attached` by the consumer once mapped.
#[repr(C)]
struct Control {
    magic: Line,
    slots: Line,
    slot_bytes: Line,
    attached: Line,
    producer: Line,
    consumer: Line,
}

const _: () = assert!(std::mem::size_of::<Control>() <= CONTROL_BYTES);

pub fn slot_bytes(payload: usize) -> usize {
    (HEADER_SIZE + payload).div_ceil(SLOT_ALIGN) * SLOT_ALIGN
}

/// `--slots`, or as many as fit 4 MiB (at least 8, at most 1,024), rounded up to a power of two.
pub fn slot_count(cfg: &Config) -> usize {
    cfg.slots.unwrap_or_else(|| ((4 << 20) / slot_bytes(cfg.payload)).clamp(8, 1024)).max(2).next_power_of_two()
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
    message_bytes: usize,
}

impl Ring {
    fn new(map: Mapping, payload: usize) -> Res<Self> {
        let control = map.control();
        let (slots, bytes) = (control.slots.0.load(Ordering::Relaxed), control.slot_bytes.0.load(Ordering::Relaxed) as usize);
        if !slots.is_power_of_two() || bytes < HEADER_SIZE + payload || CONTROL_BYTES + slots as usize * bytes > map.len {
            return Err(format!("ring: bad geometry ({slots} slots of {bytes} bytes in {} bytes)", map.len));
        }
        Ok(Self { map, mask: slots - 1, slot_bytes: bytes, message_bytes: HEADER_SIZE + payload })
    }

    fn control(&self) -> &Control {
        self.map.control()
    }

    /// The slot of `position`, header + payload long.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    fn slot(&self, position: u64) -> &mut [u8] {
        let offset = CONTROL_BYTES + (position & self.mask) as usize * self.slot_bytes;
        // SAFETY: inside the mapping (checked in `new`); the cursors hand each slot to one side at a time.
        unsafe { std::slice::from_raw_parts_mut(self.map.base.add(offset), self.message_bytes) }
    }
}

pub struct RingPublisher {
    cfg: Config,
    ring: Ring,
    path: String,
    unlinked: bool,
    head: u64,
    limit: u64,
}

impl RingPublisher {
    pub fn create(cfg: &Config, path: &str) -> Res<Self> {
        let (slots, bytes) = (slot_count(cfg), slot_bytes(cfg.payload));
        let map = Mapping::open(path, Some(CONTROL_BYTES + slots * bytes))?;
        let control = map.control();
        control.slots.0.store(slots as u64, Ordering::Relaxed);
        control.slot_bytes.0.store(bytes as u64, Ordering::Relaxed);
        control.magic.0.store(MAGIC, Ordering::Release);
        match Ring::new(map, cfg.payload) {
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

    #[inline(always)]
    fn publish(&mut self) {
        self.head += 1;
        self.ring.control().producer.0.store(self.head, Ordering::Release);
    }
}

impl Drop for RingPublisher {
    fn drop(&mut self) {
        self.unlink();
    }
}

impl PublisherSide for RingPublisher {
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

pub fn subscriber(cfg: &Config, path: &str) -> Res<()> {
    let map = Mapping::open(path, None)?;
    if map.len < CONTROL_BYTES || map.control().magic.0.load(Ordering::Acquire) != MAGIC {
        return Err(format!("ring: {path} is not a ring"));
    }
    let ring = Ring::new(map, cfg.payload)?;
    let control = ring.control();
    control.attached.0.store(1, Ordering::Release);
    let mut rx = MinimalReceiver::new(cfg.payload, cfg.full);
    crate::ready_and_wait_for_start()?;

    let batch = ((ring.mask + 1) / 8).max(1);
    let (mut tail, mut available, mut published) = (0u64, 0u64, 0u64);
    loop {
        if tail == available {
            if published != tail {
                control.consumer.0.store(tail, Ordering::Release);
                published = tail;
            }
            available = control.producer.0.load(Ordering::Acquire);
            if tail == available {
                pause(cfg.wait);
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
    println!("{}", rx.result_line());
    Ok(())
}
