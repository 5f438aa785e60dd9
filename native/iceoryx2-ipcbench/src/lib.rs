//! Minimal C ABI over iceoryx2 0.10.0 for the IpcBench C# bindings (`IpcBench.Iceoryx2`).
//!
//! Conventions (see README.md for the full list):
//! * every exported function returns an `int32_t` status: `0` = OK, positive values are
//!   non-error outcomes (`1` = no sample, `2` = timeout), negative values are errors;
//! * on error a thread-local message is stored and can be read with `iox2b_last_error`;
//! * no panic ever crosses the FFI boundary (every body runs inside `catch_unwind`);
//! * all handles are opaque pointers; a handle must be used by one thread at a time
//!   (different handles may be used from different threads concurrently).

#![allow(clippy::missing_safety_doc)]

use core::ffi::c_char;
use core::mem::MaybeUninit;
use core::time::Duration;
use std::cell::RefCell;
use std::ffi::CStr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use iceoryx2::config::Config;
use iceoryx2::port::listener::{Listener, ListenerCreateError, ListenerWaitError};
use iceoryx2::port::notifier::{Notifier, NotifierCreateError};
use iceoryx2::port::publisher::{Publisher, PublisherCreateError};
use iceoryx2::port::subscriber::{Subscriber, SubscriberCreateError};
use iceoryx2::port::update_connections::UpdateConnections;
use iceoryx2::port::{BackpressureAction, BackpressureInfo, LoanError, ReceiveError, SendError};
use iceoryx2::prelude::*;
use iceoryx2::sample::Sample;
use iceoryx2::sample_mut_uninit::SampleMutUninit;
use iceoryx2::service::builder::event::{EventCreateError, EventOpenError, EventOpenOrCreateError};
use iceoryx2::service::builder::publish_subscribe::{
    PublishSubscribeCreateError, PublishSubscribeOpenError, PublishSubscribeOpenOrCreateError,
};
use iceoryx2::service::port_factory::event::PortFactory as EventFactory;
use iceoryx2::service::port_factory::publish_subscribe::PortFactory as PubSubFactory;
use iceoryx2::service::service_hash::ServiceHash;

type Svc = ipc::Service;
type RawPublisher = Publisher<Svc, [u8], ()>;
type RawSubscriber = Subscriber<Svc, [u8], ()>;
type RawLoan = SampleMutUninit<Svc, [MaybeUninit<u8>], ()>;
type RawSample = Sample<Svc, [u8], ()>;

// ---------------------------------------------------------------------------------------------
// status codes
// ---------------------------------------------------------------------------------------------

/// Bumped whenever a signature or a struct layout of this ABI changes.
pub const IOX2B_ABI_VERSION: i32 = 2;

pub const IOX2B_OK: i32 = 0;
pub const IOX2B_NO_SAMPLE: i32 = 1;
pub const IOX2B_TIMEOUT: i32 = 2;

pub const IOX2B_E_INVALID_ARGUMENT: i32 = -1;
pub const IOX2B_E_PANIC: i32 = -2;
pub const IOX2B_E_NODE_CREATION_FAILED: i32 = -3;
pub const IOX2B_E_SERVICE_OPEN_FAILED: i32 = -4;
pub const IOX2B_E_SERVICE_INCOMPATIBLE: i32 = -5;
pub const IOX2B_E_SERVICE_CAPACITY_EXCEEDED: i32 = -6;
pub const IOX2B_E_PORT_LIMIT_EXCEEDED: i32 = -7;
pub const IOX2B_E_PORT_CREATION_FAILED: i32 = -8;
pub const IOX2B_E_PAYLOAD_TOO_LARGE: i32 = -9;
pub const IOX2B_E_LOAN_FAILED: i32 = -10;
pub const IOX2B_E_SEND_FAILED: i32 = -11;
pub const IOX2B_E_DELIVERY_TIMEOUT: i32 = -12;
pub const IOX2B_E_RECEIVE_FAILED: i32 = -13;
pub const IOX2B_E_EXCEEDS_MAX_BORROWS: i32 = -14;
pub const IOX2B_E_INVALID_TOKEN: i32 = -15;
pub const IOX2B_E_CONNECTION_FAILED: i32 = -16;
pub const IOX2B_E_EVENT_FAILED: i32 = -17;
pub const IOX2B_E_BUFFER_TOO_SMALL: i32 = -18;
pub const IOX2B_E_CLEANUP_FAILED: i32 = -19;
pub const IOX2B_E_INTERNAL: i32 = -20;

/// `pattern` argument of `iox2b_service_exists` / `iox2b_service_hash`.
pub const IOX2B_PATTERN_PUBLISH_SUBSCRIBE: u32 = 0;
pub const IOX2B_PATTERN_EVENT: u32 = 1;

// ---------------------------------------------------------------------------------------------
// error plumbing
// ---------------------------------------------------------------------------------------------

struct Error {
    code: i32,
    msg: String,
}

impl Error {
    fn new(code: i32, msg: impl Into<String>) -> Self {
        Self {
            code,
            msg: msg.into(),
        }
    }
}

type Res = Result<i32, Error>;

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

fn set_last_error(msg: String) {
    LAST_ERROR.with(|e| *e.borrow_mut() = msg);
}

#[inline(always)]
fn guard<F: FnOnce() -> Res>(f: F) -> i32 {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(code)) => code,
        Ok(Err(e)) => {
            set_last_error(e.msg);
            e.code
        }
        Err(payload) => {
            let what = if let Some(s) = payload.downcast_ref::<&str>() {
                (*s).to_string()
            } else if let Some(s) = payload.downcast_ref::<String>() {
                s.clone()
            } else {
                "unknown panic payload".to_string()
            };
            set_last_error(format!("panic inside the native iceoryx2 binding: {what}"));
            IOX2B_E_PANIC
        }
    }
}

#[inline(always)]
unsafe fn write_out<T>(out: *mut T, value: T) {
    if !out.is_null() {
        unsafe { out.write(value) };
    }
}

#[inline(always)]
unsafe fn handle<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T, Error> {
    if p.is_null() {
        return Err(Error::new(
            IOX2B_E_INVALID_ARGUMENT,
            format!("{what} handle is null"),
        ));
    }
    Ok(unsafe { &mut *p })
}

unsafe fn c_str<'a>(p: *const c_char, what: &str) -> Result<&'a str, Error> {
    if p.is_null() {
        return Err(Error::new(IOX2B_E_INVALID_ARGUMENT, format!("{what} is null")));
    }
    unsafe { CStr::from_ptr(p) }.to_str().map_err(|_| {
        Error::new(
            IOX2B_E_INVALID_ARGUMENT,
            format!("{what} is not valid UTF-8"),
        )
    })
}

fn service_name(name: &str) -> Result<ServiceName, Error> {
    ServiceName::new(name).map_err(|e| {
        Error::new(
            IOX2B_E_INVALID_ARGUMENT,
            format!("invalid iceoryx2 service name \"{name}\": {e:?}"),
        )
    })
}

fn timeout_deadline(timeout_us: i64) -> Option<Instant> {
    if timeout_us < 0 {
        None
    } else {
        Some(Instant::now() + Duration::from_micros(timeout_us as u64))
    }
}

fn expired(deadline: Option<Instant>) -> bool {
    matches!(deadline, Some(d) if Instant::now() >= d)
}

/// Polls `cond` until it returns true or the deadline passes. Spins briefly, then sleeps.
fn poll_until<F: FnMut() -> Result<bool, Error>>(timeout_us: i64, mut cond: F) -> Result<bool, Error> {
    let deadline = timeout_deadline(timeout_us);
    let mut round: u32 = 0;
    loop {
        if cond()? {
            return Ok(true);
        }
        if expired(deadline) {
            return Ok(false);
        }
        round += 1;
        if round < 64 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// token slots (loans / borrowed samples) -- no allocation on the hot path
// ---------------------------------------------------------------------------------------------

/// Fixed-size table of outstanding loans or samples. A token is `(generation << 32) | (index + 1)`
/// so 0 is never a valid token and a stale token (already sent/released) is detected. Free slots are
/// a stack of indexes: a batch of 16 samples is inserted without scanning the table for each one.
struct Slots<T> {
    // Initialized exactly where `occupied` is set. Not `Option<T>`: a loan is a ~200-byte value, and moving it into
    // and out of an `Option` cost a measurable share of a small message's send (memcpys on every call).
    items: Box<[MaybeUninit<T>]>,
    occupied: Vec<bool>,
    generations: Vec<u32>,
    free: Vec<u32>,
}

impl<T> Slots<T> {
    fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Self {
            items: (0..capacity).map(|_| MaybeUninit::uninit()).collect(),
            occupied: vec![false; capacity],
            generations: vec![0; capacity],
            // popped from the end: slot 0 first
            free: (0..capacity as u32).rev().collect(),
        }
    }

    #[inline]
    fn is_full(&self) -> bool {
        self.free.is_empty()
    }

    /// Caller must check `is_full()` first.
    #[inline]
    fn insert(&mut self, value: T) -> (u64, &mut T) {
        let index = self.free.pop().expect("Slots::insert called while full") as usize;
        let generation = self.generations[index].wrapping_add(1).max(1);
        self.generations[index] = generation;
        self.occupied[index] = true;
        let slot = self.items[index].write(value);
        (((generation as u64) << 32) | (index as u64 + 1), slot)
    }

    #[inline]
    fn index_of(&self, token: u64) -> Option<usize> {
        let index = (token & 0xffff_ffff) as usize;
        if index == 0 || index > self.items.len() {
            return None;
        }
        let index = index - 1;
        (self.occupied[index] && self.generations[index] == (token >> 32) as u32).then_some(index)
    }

    #[inline]
    fn take(&mut self, token: u64) -> Option<T> {
        let index = self.index_of(token)?;
        self.occupied[index] = false;
        self.free.push(index as u32);
        // SAFETY: occupied, so initialized; no longer marked occupied, so never read or dropped again.
        Some(unsafe { self.items[index].assume_init_read() })
    }

    fn clear(&mut self) -> usize {
        let mut n = 0;
        for (item, occupied) in self.items.iter_mut().zip(self.occupied.iter_mut()) {
            if core::mem::take(occupied) {
                // SAFETY: it was occupied, so initialized, and is marked free before anything can see it again.
                unsafe { item.assume_init_drop() };
                n += 1;
            }
        }
        self.free.clear();
        self.free.extend((0..self.items.len() as u32).rev());
        n
    }
}

impl<T> Drop for Slots<T> {
    fn drop(&mut self) {
        self.clear();
    }
}

// ---------------------------------------------------------------------------------------------
// public structs
// ---------------------------------------------------------------------------------------------

/// Publish-subscribe service configuration. Every process that opens the same service must pass
/// the same values (iceoryx2 verifies the safe-overflow setting for equality and the capacities
/// as "at least"). A 0 in a count field means "iceoryx2 default, not verified".
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Iox2bPubSubConfig {
    /// Largest payload in bytes a publisher can loan (publisher `initial_max_slice_len`). Must be > 0.
    pub max_message_size: u64,
    pub max_publishers: u32,
    pub max_subscribers: u32,
    pub max_nodes: u32,
    /// Per-subscriber queue depth (`subscriber_max_buffer_size`).
    pub subscriber_buffer_size: u32,
    /// How many samples one subscriber may hold at the same time.
    pub subscriber_max_borrowed_samples: u32,
    /// How many loans one publisher may hold at the same time.
    pub publisher_max_loaned_samples: u32,
    /// 0 = no-loss (safe overflow off + RetryUntilDelivered), 1 = lossy (safe overflow on:
    /// the oldest queued sample of a full subscriber is overwritten).
    pub lossy: u32,
    pub reserved: u32,
    /// No-loss mode only: a send that cannot deliver to a full subscriber for this long fails
    /// with IOX2B_E_DELIVERY_TIMEOUT. <= 0 = retry forever.
    pub send_timeout_us: i64,
}

/// Event service configuration (0 = iceoryx2 default, not verified).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Iox2bEventConfig {
    pub max_notifiers: u32,
    pub max_listeners: u32,
    pub max_nodes: u32,
    pub event_id_max_value: u32,
}

/// A received sample: `data`/`len` point into shared memory and stay valid until the sample is
/// released (by token) or the subscriber is destroyed.
#[repr(C)]
pub struct Iox2bSample {
    pub data: *const u8,
    pub len: usize,
    pub token: u64,
}

/// Snapshot of a service's dynamic and static configuration.
#[repr(C)]
pub struct Iox2bServiceInfo {
    pub publishers: u64,
    pub subscribers: u64,
    pub max_publishers: u64,
    pub max_subscribers: u64,
    pub max_nodes: u64,
    pub subscriber_buffer_size: u64,
    pub subscriber_max_borrowed_samples: u64,
    pub safe_overflow: u32,
    pub reserved: u32,
}

pub struct Iox2bNode {
    node: Node<Svc>,
}

pub struct Iox2bPublisher {
    // field order == drop order: loans first, then the port, then the service
    loans: Slots<RawLoan>,
    publisher: RawPublisher,
    service: PubSubFactory<Svc, [u8], ()>,
    max_message_size: usize,
}

pub struct Iox2bSubscriber {
    samples: Slots<RawSample>,
    subscriber: RawSubscriber,
    service: PubSubFactory<Svc, [u8], ()>,
}

pub struct Iox2bNotifier {
    notifier: Notifier<Svc>,
    service: EventFactory<Svc>,
}

pub struct Iox2bListener {
    listener: Listener<Svc>,
    service: EventFactory<Svc>,
}

// ---------------------------------------------------------------------------------------------
// error classification
// ---------------------------------------------------------------------------------------------

fn pubsub_open_error(name: &str, e: PublishSubscribeOpenOrCreateError) -> Error {
    use PublishSubscribeOpenError as O;
    let (code, hint) = match e {
        PublishSubscribeOpenOrCreateError::PublishSubscribeOpenError(o) => match o {
            O::IncompatibleOverflowBehavior => (
                IOX2B_E_SERVICE_INCOMPATIBLE,
                "the existing service uses a different delivery mode (lossy/safe-overflow vs no-loss); every process must use the same mode",
            ),
            O::IncompatibleTypes => (
                IOX2B_E_SERVICE_INCOMPATIBLE,
                "the existing service has a different payload type (not a raw byte slice service)",
            ),
            O::IncompatibleMessagingPattern => (
                IOX2B_E_SERVICE_INCOMPATIBLE,
                "a service with this name exists with another messaging pattern",
            ),
            O::IncompatibleAttributes => (IOX2B_E_SERVICE_INCOMPATIBLE, "incompatible service attributes"),
            O::VersionMismatch => (
                IOX2B_E_SERVICE_INCOMPATIBLE,
                "the service was created by an incompatible iceoryx2 version",
            ),
            O::DoesNotSupportRequestedMinBufferSize => (
                IOX2B_E_SERVICE_INCOMPATIBLE,
                "the existing service has a smaller subscriber buffer size than requested",
            ),
            O::DoesNotSupportRequestedMinHistorySize => (
                IOX2B_E_SERVICE_INCOMPATIBLE,
                "the existing service has a smaller history than requested",
            ),
            O::DoesNotSupportRequestedMinSubscriberBorrowedSamples => (
                IOX2B_E_SERVICE_INCOMPATIBLE,
                "the existing service allows fewer borrowed samples per subscriber than requested",
            ),
            O::DoesNotSupportRequestedAmountOfPublishers => (
                IOX2B_E_SERVICE_CAPACITY_EXCEEDED,
                "the existing service supports fewer publishers than requested (max_publishers)",
            ),
            O::DoesNotSupportRequestedAmountOfSubscribers => (
                IOX2B_E_SERVICE_CAPACITY_EXCEEDED,
                "the existing service supports fewer subscribers than requested (max_subscribers)",
            ),
            O::DoesNotSupportRequestedAmountOfNodes => (
                IOX2B_E_SERVICE_CAPACITY_EXCEEDED,
                "the existing service supports fewer nodes than requested (max_nodes)",
            ),
            O::ExceedsMaxNumberOfNodes => (
                IOX2B_E_SERVICE_CAPACITY_EXCEEDED,
                "the service already has its maximum number of nodes attached",
            ),
            O::IsMarkedForDestruction => (
                IOX2B_E_SERVICE_OPEN_FAILED,
                "the service is being removed; retry",
            ),
            O::InsufficientPermissions => (IOX2B_E_SERVICE_OPEN_FAILED, "insufficient permissions"),
            O::ServiceInCorruptedState | O::HangsInCreation => (
                IOX2B_E_SERVICE_OPEN_FAILED,
                "the service is corrupted or its creator died; run iox2b_cleanup_dead_nodes",
            ),
            _ => (IOX2B_E_SERVICE_OPEN_FAILED, "the service could not be opened"),
        },
        PublishSubscribeOpenOrCreateError::PublishSubscribeCreateError(c) => match c {
            PublishSubscribeCreateError::InsufficientPermissions => {
                (IOX2B_E_SERVICE_OPEN_FAILED, "insufficient permissions")
            }
            PublishSubscribeCreateError::ServiceInCorruptedState
            | PublishSubscribeCreateError::HangsInCreation => (
                IOX2B_E_SERVICE_OPEN_FAILED,
                "stale service resources; run iox2b_cleanup_dead_nodes",
            ),
            _ => (IOX2B_E_SERVICE_OPEN_FAILED, "the service could not be created"),
        },
        PublishSubscribeOpenOrCreateError::SystemInFlux => (
            IOX2B_E_SERVICE_OPEN_FAILED,
            "the service is being created or removed concurrently; retry",
        ),
    };
    Error::new(
        code,
        format!("cannot open or create publish-subscribe service \"{name}\": {hint} [{e:?}]"),
    )
}

fn event_open_error(name: &str, e: EventOpenOrCreateError) -> Error {
    let (code, hint) = match e {
        EventOpenOrCreateError::EventOpenError(o) => match o {
            EventOpenError::IncompatibleMessagingPattern => (
                IOX2B_E_SERVICE_INCOMPATIBLE,
                "a service with this name exists with another messaging pattern",
            ),
            EventOpenError::IncompatibleAttributes
            | EventOpenError::IncompatibleDeadline
            | EventOpenError::IncompatibleNotifierCreatedEvent
            | EventOpenError::IncompatibleNotifierDroppedEvent
            | EventOpenError::IncompatibleNotifierDeadEvent
            | EventOpenError::VersionMismatch => (
                IOX2B_E_SERVICE_INCOMPATIBLE,
                "the existing event service has an incompatible configuration",
            ),
            EventOpenError::DoesNotSupportRequestedAmountOfNotifiers => (
                IOX2B_E_SERVICE_CAPACITY_EXCEEDED,
                "the existing event service supports fewer notifiers than requested",
            ),
            EventOpenError::DoesNotSupportRequestedAmountOfListeners => (
                IOX2B_E_SERVICE_CAPACITY_EXCEEDED,
                "the existing event service supports fewer listeners than requested",
            ),
            EventOpenError::DoesNotSupportRequestedMaxEventId => (
                IOX2B_E_SERVICE_CAPACITY_EXCEEDED,
                "the existing event service supports a smaller max event id than requested",
            ),
            EventOpenError::DoesNotSupportRequestedAmountOfNodes
            | EventOpenError::ExceedsMaxNumberOfNodes => (
                IOX2B_E_SERVICE_CAPACITY_EXCEEDED,
                "the event service node limit is exceeded",
            ),
            _ => (IOX2B_E_SERVICE_OPEN_FAILED, "the event service could not be opened"),
        },
        EventOpenOrCreateError::EventCreateError(c) => match c {
            EventCreateError::EventIdExceedsMaxSupportedValue => (
                IOX2B_E_INVALID_ARGUMENT,
                "event_id_max_value exceeds the supported maximum",
            ),
            _ => (IOX2B_E_SERVICE_OPEN_FAILED, "the event service could not be created"),
        },
        EventOpenOrCreateError::SystemInFlux => (
            IOX2B_E_SERVICE_OPEN_FAILED,
            "the service is being created or removed concurrently; retry",
        ),
    };
    Error::new(
        code,
        format!("cannot open or create event service \"{name}\": {hint} [{e:?}]"),
    )
}

fn loan_error(e: LoanError, len: usize, max: usize) -> Error {
    match e {
        LoanError::ExceedsMaxLoanSize => Error::new(
            IOX2B_E_PAYLOAD_TOO_LARGE,
            format!("payload of {len} bytes exceeds the publisher's max_message_size of {max} bytes"),
        ),
        LoanError::ExceedsMaxLoans => Error::new(
            IOX2B_E_LOAN_FAILED,
            "too many outstanding loans: send or discard a loaned sample first (publisher_max_loaned_samples)",
        ),
        LoanError::OutOfMemory => Error::new(
            IOX2B_E_LOAN_FAILED,
            "the publisher's data segment is out of memory (all samples are held by subscribers or loans)",
        ),
        LoanError::InternalFailure => Error::new(IOX2B_E_INTERNAL, "loan failed: internal failure"),
    }
}

fn send_error(e: SendError) -> Error {
    match e {
        SendError::UnableToDeliver => Error::new(
            IOX2B_E_DELIVERY_TIMEOUT,
            "a subscriber's buffer stayed full for longer than send_timeout_us; the sample was not delivered to it",
        ),
        SendError::LoanError(l) => loan_error(l, 0, 0),
        SendError::ConnectionError(c) => Error::new(
            IOX2B_E_CONNECTION_FAILED,
            format!("send failed: a connection to a subscriber could not be established [{c:?}]"),
        ),
        other => Error::new(IOX2B_E_SEND_FAILED, format!("send failed [{other:?}]")),
    }
}

fn receive_error(e: ReceiveError) -> Error {
    match e {
        ReceiveError::ExceedsMaxBorrows => Error::new(
            IOX2B_E_EXCEEDS_MAX_BORROWS,
            "the subscriber holds the maximum number of samples; release one first",
        ),
        ReceiveError::ConnectionFailure(c) => Error::new(
            IOX2B_E_CONNECTION_FAILED,
            format!("receive failed: a connection to a publisher could not be established [{c:?}]"),
        ),
    }
}

// ---------------------------------------------------------------------------------------------
// library-level functions
// ---------------------------------------------------------------------------------------------

#[no_mangle]
pub extern "C" fn iox2b_abi_version() -> i32 {
    IOX2B_ABI_VERSION
}

/// Copies the calling thread's last error message (UTF-8, NUL-terminated, truncated to
/// `len - 1` bytes) into `buf` and returns the full message length in bytes (excluding NUL).
#[no_mangle]
pub unsafe extern "C" fn iox2b_last_error(buf: *mut c_char, len: usize) -> i32 {
    guard(|| {
        let n = LAST_ERROR.with(|e| {
            let e = e.borrow();
            let bytes = e.as_bytes();
            if !buf.is_null() && len > 0 {
                let n = bytes.len().min(len - 1);
                unsafe {
                    core::ptr::copy_nonoverlapping(bytes.as_ptr(), buf as *mut u8, n);
                    *buf.add(n) = 0;
                }
            }
            bytes.len()
        });
        Ok(n.min(i32::MAX as usize) as i32)
    })
}

/// 0 = trace, 1 = debug, 2 = info, 3 = warn, 4 = error, 5 = fatal (iceoryx2's own console log).
#[no_mangle]
pub extern "C" fn iox2b_set_log_level(level: i32) -> i32 {
    guard(|| {
        let l = match level {
            0 => LogLevel::Trace,
            1 => LogLevel::Debug,
            2 => LogLevel::Info,
            3 => LogLevel::Warn,
            4 => LogLevel::Error,
            5 => LogLevel::Fatal,
            _ => {
                return Err(Error::new(
                    IOX2B_E_INVALID_ARGUMENT,
                    format!("log level {level} is not in 0..=5"),
                ))
            }
        };
        set_log_level(l);
        Ok(IOX2B_OK)
    })
}

/// Removes the stale resources of every dead node (a process that died without cleaning up).
#[no_mangle]
pub unsafe extern "C" fn iox2b_cleanup_dead_nodes(out_cleaned: *mut u64, out_failed: *mut u64) -> i32 {
    guard(|| {
        let mut cleaned = 0u64;
        let mut failed = 0u64;
        let mut last_failure = String::new();
        Node::<Svc>::list(Config::global_config(), |state| {
            if let NodeState::Dead(view) = state {
                match view.try_remove_stale_resources() {
                    Ok(()) => cleaned += 1,
                    Err(e) => {
                        failed += 1;
                        last_failure = format!("{e:?}");
                    }
                }
            }
            CallbackProgression::Continue
        })
        .map_err(|e| Error::new(IOX2B_E_CLEANUP_FAILED, format!("cannot list nodes: {e:?}")))?;
        unsafe {
            write_out(out_cleaned, cleaned);
            write_out(out_failed, failed);
        }
        if failed > 0 && cleaned == 0 {
            set_last_error(format!(
                "{failed} dead node(s) could not be cleaned up (last failure: {last_failure})"
            ));
        }
        Ok(IOX2B_OK)
    })
}

fn pattern(p: u32) -> Result<MessagingPattern, Error> {
    match p {
        IOX2B_PATTERN_PUBLISH_SUBSCRIBE => Ok(MessagingPattern::PublishSubscribe),
        IOX2B_PATTERN_EVENT => Ok(MessagingPattern::Event),
        _ => Err(Error::new(IOX2B_E_INVALID_ARGUMENT, format!("unknown messaging pattern {p}"))),
    }
}

/// `*out_exists` = 1 if a service with this name and pattern exists (in any process).
#[no_mangle]
pub unsafe extern "C" fn iox2b_service_exists(name: *const c_char, pattern_kind: u32, out_exists: *mut i32) -> i32 {
    guard(|| {
        let name = unsafe { c_str(name, "service name") }?;
        let sn = service_name(name)?;
        let exists = Svc::does_exist(&sn, Config::global_config(), pattern(pattern_kind)?)
            .map_err(|e| Error::new(IOX2B_E_INTERNAL, format!("cannot query service \"{name}\": {e:?}")))?;
        unsafe { write_out(out_exists, exists as i32) };
        Ok(IOX2B_OK)
    })
}

/// Writes the service hash (the token iceoryx2 uses in its /dev/shm and /tmp/iceoryx2 file
/// names) as a NUL-terminated string. Returns its length.
#[no_mangle]
pub unsafe extern "C" fn iox2b_service_hash(name: *const c_char, pattern_kind: u32, buf: *mut c_char, len: usize) -> i32 {
    guard(|| {
        let name = unsafe { c_str(name, "service name") }?;
        let sn = service_name(name)?;
        let hash = ServiceHash::new::<<Svc as iceoryx2::service::Service>::ServiceNameHasher>(
            &sn,
            pattern(pattern_kind)?,
        );
        let s = hash.as_str().as_bytes();
        if buf.is_null() || len <= s.len() {
            return Err(Error::new(
                IOX2B_E_BUFFER_TOO_SMALL,
                format!("buffer too small for the service hash ({} bytes needed)", s.len() + 1),
            ));
        }
        unsafe {
            core::ptr::copy_nonoverlapping(s.as_ptr(), buf as *mut u8, s.len());
            *buf.add(s.len()) = 0;
        }
        Ok(s.len() as i32)
    })
}

// ---------------------------------------------------------------------------------------------
// node
// ---------------------------------------------------------------------------------------------

/// Creates a node. `name` may be null. Dead nodes are cleaned up on creation (iceoryx2 default).
#[no_mangle]
pub unsafe extern "C" fn iox2b_node_create(name: *const c_char, out_node: *mut *mut Iox2bNode) -> i32 {
    guard(|| {
        if out_node.is_null() {
            return Err(Error::new(IOX2B_E_INVALID_ARGUMENT, "out_node is null"));
        }
        let mut builder = NodeBuilder::new().signal_handling_mode(SignalHandlingMode::Disabled);
        if !name.is_null() {
            let n = unsafe { c_str(name, "node name") }?;
            let nn = NodeName::new(n).map_err(|e| {
                Error::new(IOX2B_E_INVALID_ARGUMENT, format!("invalid node name \"{n}\": {e:?}"))
            })?;
            builder = builder.name(&nn);
        }
        let node = builder.create::<Svc>().map_err(|e| {
            Error::new(IOX2B_E_NODE_CREATION_FAILED, format!("cannot create iceoryx2 node: {e:?}"))
        })?;
        unsafe { *out_node = Box::into_raw(Box::new(Iox2bNode { node })) };
        Ok(IOX2B_OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn iox2b_node_destroy(node: *mut Iox2bNode) -> i32 {
    guard(|| {
        if !node.is_null() {
            drop(unsafe { Box::from_raw(node) });
        }
        Ok(IOX2B_OK)
    })
}

// ---------------------------------------------------------------------------------------------
// publish-subscribe
// ---------------------------------------------------------------------------------------------

fn open_pubsub(node: &Iox2bNode, name: &str, cfg: &Iox2bPubSubConfig) -> Result<PubSubFactory<Svc, [u8], ()>, Error> {
    let sn = service_name(name)?;
    let mut b = node
        .node
        .service_builder(&sn)
        .publish_subscribe::<[u8]>()
        .enable_safe_overflow(cfg.lossy != 0)
        .history_size(0);
    if cfg.max_publishers > 0 {
        b = b.max_publishers(cfg.max_publishers as usize);
    }
    if cfg.max_subscribers > 0 {
        b = b.max_subscribers(cfg.max_subscribers as usize);
    }
    if cfg.max_nodes > 0 {
        b = b.max_nodes(cfg.max_nodes as usize);
    }
    if cfg.subscriber_buffer_size > 0 {
        b = b.subscriber_max_buffer_size(cfg.subscriber_buffer_size as usize);
    }
    if cfg.subscriber_max_borrowed_samples > 0 {
        b = b.subscriber_max_borrowed_samples(cfg.subscriber_max_borrowed_samples as usize);
    }
    b.open_or_create().map_err(|e| pubsub_open_error(name, e))
}

unsafe fn pubsub_args<'a>(
    node: *mut Iox2bNode,
    name: *const c_char,
    cfg: *const Iox2bPubSubConfig,
) -> Result<(&'a Iox2bNode, &'a str, Iox2bPubSubConfig), Error> {
    let node = unsafe { handle(node, "node") }?;
    let name = unsafe { c_str(name, "service name") }?;
    if cfg.is_null() {
        return Err(Error::new(IOX2B_E_INVALID_ARGUMENT, "config is null"));
    }
    Ok((node, name, unsafe { *cfg }))
}

fn service_info(service: &PubSubFactory<Svc, [u8], ()>, out: *mut Iox2bServiceInfo) {
    let d = service.dynamic_config();
    let s = service.static_config();
    unsafe {
        write_out(
            out,
            Iox2bServiceInfo {
                publishers: d.number_of_publishers() as u64,
                subscribers: d.number_of_subscribers() as u64,
                max_publishers: s.max_publishers() as u64,
                max_subscribers: s.max_subscribers() as u64,
                max_nodes: s.max_nodes() as u64,
                subscriber_buffer_size: s.subscriber_max_buffer_size() as u64,
                subscriber_max_borrowed_samples: s.subscriber_max_borrowed_samples() as u64,
                safe_overflow: s.has_safe_overflow() as u32,
                reserved: 0,
            },
        )
    };
}

/// Opens or creates the service `name` and creates a publisher on it (one call).
#[no_mangle]
pub unsafe extern "C" fn iox2b_publisher_create(
    node: *mut Iox2bNode,
    name: *const c_char,
    cfg: *const Iox2bPubSubConfig,
    out_publisher: *mut *mut Iox2bPublisher,
) -> i32 {
    guard(|| {
        let (node, name, cfg) = unsafe { pubsub_args(node, name, cfg) }?;
        if out_publisher.is_null() {
            return Err(Error::new(IOX2B_E_INVALID_ARGUMENT, "out_publisher is null"));
        }
        if cfg.max_message_size == 0 || cfg.max_message_size > (1u64 << 40) {
            return Err(Error::new(
                IOX2B_E_INVALID_ARGUMENT,
                format!("max_message_size {} is out of range (1 ..= 2^40)", cfg.max_message_size),
            ));
        }
        let max_message_size = cfg.max_message_size as usize;
        let service = open_pubsub(node, name, &cfg)?;
        let max_loans = if cfg.publisher_max_loaned_samples > 0 {
            cfg.publisher_max_loaned_samples as usize
        } else {
            2
        };
        let mut b = service
            .publisher_builder()
            .initial_max_slice_len(max_message_size)
            .allocation_strategy(AllocationStrategy::Static)
            .max_loaned_samples(max_loans);
        if cfg.lossy != 0 {
            b = b.backpressure_strategy(BackpressureStrategy::DiscardData);
        } else {
            b = b.backpressure_strategy(BackpressureStrategy::RetryUntilDelivered);
            if cfg.send_timeout_us > 0 {
                let limit = Duration::from_micros(cfg.send_timeout_us as u64);
                b = b.set_backpressure_handler(move |info: &BackpressureInfo| {
                    if info.elapsed_time < limit {
                        BackpressureAction::Retry
                    } else {
                        BackpressureAction::DiscardDataAndFail
                    }
                });
            }
        }
        let publisher = b.create().map_err(|e| match e {
            PublisherCreateError::ExceedsMaxSupportedPublishers => Error::new(
                IOX2B_E_PORT_LIMIT_EXCEEDED,
                format!(
                    "cannot create publisher on \"{name}\": the service already has its maximum of {} publisher(s)",
                    service.static_config().max_publishers()
                ),
            ),
            other => Error::new(
                IOX2B_E_PORT_CREATION_FAILED,
                format!("cannot create publisher on \"{name}\": {other:?}"),
            ),
        })?;
        let p = Iox2bPublisher {
            loans: Slots::new(max_loans),
            publisher,
            service,
            max_message_size,
        };
        unsafe { *out_publisher = Box::into_raw(Box::new(p)) };
        Ok(IOX2B_OK)
    })
}

/// Destroys the publisher; outstanding loans are discarded.
#[no_mangle]
pub unsafe extern "C" fn iox2b_publisher_destroy(publisher: *mut Iox2bPublisher) -> i32 {
    guard(|| {
        if !publisher.is_null() {
            drop(unsafe { Box::from_raw(publisher) });
        }
        Ok(IOX2B_OK)
    })
}

/// Loans an uninitialized shared-memory buffer of exactly `len` bytes. The caller writes into
/// `*out_data` and then calls `iox2b_publisher_send(token)` or `iox2b_publisher_discard(token)`.
#[no_mangle]
pub unsafe extern "C" fn iox2b_publisher_loan(
    publisher: *mut Iox2bPublisher,
    len: usize,
    out_data: *mut *mut u8,
    out_token: *mut u64,
) -> i32 {
    guard(|| {
        let p = unsafe { handle(publisher, "publisher") }?;
        if out_data.is_null() || out_token.is_null() {
            return Err(Error::new(IOX2B_E_INVALID_ARGUMENT, "out_data/out_token is null"));
        }
        if len > p.max_message_size {
            return Err(loan_error(LoanError::ExceedsMaxLoanSize, len, p.max_message_size));
        }
        if p.loans.is_full() {
            return Err(loan_error(LoanError::ExceedsMaxLoans, len, p.max_message_size));
        }
        let loan = p
            .publisher
            .loan_slice_uninit(len)
            .map_err(|e| loan_error(e, len, p.max_message_size))?;
        let (token, loan) = p.loans.insert(loan);
        unsafe {
            *out_data = loan.payload_mut().as_mut_ptr() as *mut u8;
            *out_token = token;
        }
        Ok(IOX2B_OK)
    })
}

/// Sends a loaned sample (the whole loaned length). `*out_receivers` = number of subscribers
/// it was delivered to.
#[no_mangle]
pub unsafe extern "C" fn iox2b_publisher_send(publisher: *mut Iox2bPublisher, token: u64, out_receivers: *mut u64) -> i32 {
    guard(|| {
        let p = unsafe { handle(publisher, "publisher") }?;
        let loan = p.loans.take(token).ok_or_else(|| {
            Error::new(IOX2B_E_INVALID_TOKEN, "unknown loan token (already sent or discarded?)")
        })?;
        // SAFETY: the caller promised to initialize the loaned bytes; bytes have no invalid values.
        let sample = unsafe { loan.assume_init() };
        let n = sample.send().map_err(send_error)?;
        unsafe { write_out(out_receivers, n as u64) };
        Ok(IOX2B_OK)
    })
}

/// Sends the loan `token` like `iox2b_publisher_send` and then, in the same call, loans the next buffer of
/// `next_len` bytes (a publisher loop pays one native call per message instead of two). `out_data` /
/// `out_token` NULL = no next loan. A failed next loan is not an error of this call (the message was sent):
/// `*out_token` = 0 and a later `iox2b_publisher_loan` reports why.
#[no_mangle]
pub unsafe extern "C" fn iox2b_publisher_send_and_loan(
    publisher: *mut Iox2bPublisher,
    token: u64,
    out_receivers: *mut u64,
    next_len: usize,
    out_data: *mut *mut u8,
    out_token: *mut u64,
) -> i32 {
    guard(|| {
        let p = unsafe { handle(publisher, "publisher") }?;
        let wants_next = !out_data.is_null() && !out_token.is_null();
        if wants_next {
            unsafe {
                *out_data = core::ptr::null_mut();
                *out_token = 0;
            }
        }
        let loan = p.loans.take(token).ok_or_else(|| {
            Error::new(IOX2B_E_INVALID_TOKEN, "unknown loan token (already sent or discarded?)")
        })?;
        // SAFETY: the caller promised to initialize the loaned bytes; bytes have no invalid values.
        let n = unsafe { loan.assume_init() }.send().map_err(send_error)?;
        unsafe { write_out(out_receivers, n as u64) };
        if wants_next && next_len <= p.max_message_size && !p.loans.is_full() {
            if let Ok(next) = p.publisher.loan_slice_uninit(next_len) {
                let (next_token, next) = p.loans.insert(next);
                unsafe {
                    *out_data = next.payload_mut().as_mut_ptr() as *mut u8;
                    *out_token = next_token;
                }
            }
        }
        Ok(IOX2B_OK)
    })
}

/// Returns a loaned sample to the publisher without sending it.
#[no_mangle]
pub unsafe extern "C" fn iox2b_publisher_discard(publisher: *mut Iox2bPublisher, token: u64) -> i32 {
    guard(|| {
        let p = unsafe { handle(publisher, "publisher") }?;
        p.loans.take(token).ok_or_else(|| {
            Error::new(IOX2B_E_INVALID_TOKEN, "unknown loan token (already sent or discarded?)")
        })?;
        Ok(IOX2B_OK)
    })
}

/// Loan + copy `len` bytes from `data` + send, in one call.
#[no_mangle]
pub unsafe extern "C" fn iox2b_publisher_send_copy(
    publisher: *mut Iox2bPublisher,
    data: *const u8,
    len: usize,
    out_receivers: *mut u64,
) -> i32 {
    guard(|| {
        let p = unsafe { handle(publisher, "publisher") }?;
        if data.is_null() && len > 0 {
            return Err(Error::new(IOX2B_E_INVALID_ARGUMENT, "data is null"));
        }
        if len > p.max_message_size {
            return Err(loan_error(LoanError::ExceedsMaxLoanSize, len, p.max_message_size));
        }
        let mut loan = p
            .publisher
            .loan_slice_uninit(len)
            .map_err(|e| loan_error(e, len, p.max_message_size))?;
        if len > 0 {
            unsafe {
                core::ptr::copy_nonoverlapping(data, loan.payload_mut().as_mut_ptr() as *mut u8, len)
            };
        }
        let n = unsafe { loan.assume_init() }.send().map_err(send_error)?;
        unsafe { write_out(out_receivers, n as u64) };
        Ok(IOX2B_OK)
    })
}

/// Waits until the service has at least `min_subscribers` subscribers, then connects to them
/// (`update_connections`). Must complete before the first send: samples sent to a subscriber
/// that is not connected yet are not delivered to it. timeout_us < 0 = forever.
/// Returns IOX2B_OK or IOX2B_TIMEOUT; `*out_subscribers` = current subscriber count.
#[no_mangle]
pub unsafe extern "C" fn iox2b_publisher_wait_for_subscribers(
    publisher: *mut Iox2bPublisher,
    min_subscribers: u32,
    timeout_us: i64,
    out_subscribers: *mut u64,
) -> i32 {
    guard(|| {
        let p = unsafe { handle(publisher, "publisher") }?;
        let mut count = 0usize;
        let ok = poll_until(timeout_us, || {
            count = p.service.dynamic_config().number_of_subscribers();
            Ok(count >= min_subscribers as usize)
        })?;
        p.publisher.update_connections().map_err(|e| {
            Error::new(IOX2B_E_CONNECTION_FAILED, format!("cannot connect to the subscribers: {e:?}"))
        })?;
        unsafe { write_out(out_subscribers, count as u64) };
        Ok(if ok { IOX2B_OK } else { IOX2B_TIMEOUT })
    })
}

#[no_mangle]
pub unsafe extern "C" fn iox2b_publisher_update_connections(publisher: *mut Iox2bPublisher) -> i32 {
    guard(|| {
        let p = unsafe { handle(publisher, "publisher") }?;
        p.publisher.update_connections().map_err(|e| {
            Error::new(IOX2B_E_CONNECTION_FAILED, format!("cannot connect to the subscribers: {e:?}"))
        })?;
        Ok(IOX2B_OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn iox2b_publisher_service_info(publisher: *mut Iox2bPublisher, out: *mut Iox2bServiceInfo) -> i32 {
    guard(|| {
        let p = unsafe { handle(publisher, "publisher") }?;
        service_info(&p.service, out);
        Ok(IOX2B_OK)
    })
}

/// Opens or creates the service `name` and creates a subscriber on it (one call).
/// `cfg.max_message_size` is not used by subscribers.
#[no_mangle]
pub unsafe extern "C" fn iox2b_subscriber_create(
    node: *mut Iox2bNode,
    name: *const c_char,
    cfg: *const Iox2bPubSubConfig,
    out_subscriber: *mut *mut Iox2bSubscriber,
) -> i32 {
    guard(|| {
        let (node, name, cfg) = unsafe { pubsub_args(node, name, cfg) }?;
        if out_subscriber.is_null() {
            return Err(Error::new(IOX2B_E_INVALID_ARGUMENT, "out_subscriber is null"));
        }
        let service = open_pubsub(node, name, &cfg)?;
        let subscriber = service.subscriber_builder().create().map_err(|e| match e {
            SubscriberCreateError::ExceedsMaxSupportedSubscribers => Error::new(
                IOX2B_E_PORT_LIMIT_EXCEEDED,
                format!(
                    "cannot create subscriber on \"{name}\": the service already has its maximum of {} subscriber(s)",
                    service.static_config().max_subscribers()
                ),
            ),
            other => Error::new(
                IOX2B_E_PORT_CREATION_FAILED,
                format!("cannot create subscriber on \"{name}\": {other:?}"),
            ),
        })?;
        let borrow = service.static_config().subscriber_max_borrowed_samples();
        let s = Iox2bSubscriber {
            samples: Slots::new(borrow),
            subscriber,
            service,
        };
        unsafe { *out_subscriber = Box::into_raw(Box::new(s)) };
        Ok(IOX2B_OK)
    })
}

/// Destroys the subscriber; all samples still held are released first.
#[no_mangle]
pub unsafe extern "C" fn iox2b_subscriber_destroy(subscriber: *mut Iox2bSubscriber) -> i32 {
    guard(|| {
        if !subscriber.is_null() {
            drop(unsafe { Box::from_raw(subscriber) });
        }
        Ok(IOX2B_OK)
    })
}

#[inline(always)]
fn release_token(s: &mut Iox2bSubscriber, token: u64) -> Result<(), Error> {
    if token != 0 && s.samples.take(token).is_none() {
        return Err(Error::new(
            IOX2B_E_INVALID_TOKEN,
            "unknown sample token (already released?)",
        ));
    }
    Ok(())
}

/// Optionally releases `release_token` (0 = none) and then receives the next sample.
/// Returns IOX2B_OK with `*out` filled, or IOX2B_NO_SAMPLE with `*out` zeroed.
#[no_mangle]
pub unsafe extern "C" fn iox2b_subscriber_receive(
    subscriber: *mut Iox2bSubscriber,
    release: u64,
    out: *mut Iox2bSample,
) -> i32 {
    guard(|| {
        let s = unsafe { handle(subscriber, "subscriber") }?;
        if out.is_null() {
            return Err(Error::new(IOX2B_E_INVALID_ARGUMENT, "out is null"));
        }
        release_token(s, release)?;
        if s.samples.is_full() {
            return Err(receive_error(ReceiveError::ExceedsMaxBorrows));
        }
        match s.subscriber.receive().map_err(receive_error)? {
            Some(sample) => {
                let (token, sample) = s.samples.insert(sample);
                let payload = sample.payload();
                unsafe {
                    out.write(Iox2bSample {
                        data: payload.as_ptr(),
                        len: payload.len(),
                        token,
                    })
                };
                Ok(IOX2B_OK)
            }
            None => {
                unsafe {
                    out.write(Iox2bSample {
                        data: core::ptr::null(),
                        len: 0,
                        token: 0,
                    })
                };
                Ok(IOX2B_NO_SAMPLE)
            }
        }
    })
}

/// Receives up to `max` samples into `out[0..]` (bounded by the free borrow slots); returns how many.
/// An error after the first sample ends the batch early instead: the samples already taken must reach
/// the caller, and the next receive reports the error again.
#[inline(always)]
unsafe fn fill_batch(s: &mut Iox2bSubscriber, out: *mut Iox2bSample, max: usize) -> Result<usize, Error> {
    let mut n = 0usize;
    while n < max && !s.samples.is_full() {
        match s.subscriber.receive() {
            Ok(Some(sample)) => {
                let (token, sample) = s.samples.insert(sample);
                let payload = sample.payload();
                unsafe {
                    out.add(n).write(Iox2bSample {
                        data: payload.as_ptr(),
                        len: payload.len(),
                        token,
                    })
                };
                n += 1;
            }
            Ok(None) => break,
            Err(e) => {
                if n == 0 {
                    return Err(receive_error(e));
                }
                break;
            }
        }
    }
    Ok(n)
}

/// Receives up to `max` samples (bounded by the free borrow slots). `*out_count` = number filled.
/// Returns IOX2B_OK if at least one sample was received, otherwise IOX2B_NO_SAMPLE.
#[no_mangle]
pub unsafe extern "C" fn iox2b_subscriber_receive_batch(
    subscriber: *mut Iox2bSubscriber,
    out: *mut Iox2bSample,
    max: usize,
    out_count: *mut usize,
) -> i32 {
    guard(|| {
        let s = unsafe { handle(subscriber, "subscriber") }?;
        if out.is_null() || out_count.is_null() {
            return Err(Error::new(IOX2B_E_INVALID_ARGUMENT, "out/out_count is null"));
        }
        let n = unsafe { fill_batch(s, out, max) }?;
        unsafe { *out_count = n };
        Ok(if n > 0 { IOX2B_OK } else { IOX2B_NO_SAMPLE })
    })
}

/// Releases the `held` samples in `samples[0..held]` (tokens 0 are skipped), then receives up to `max`
/// samples into `samples[0..]`, in one call: the batch a receiver has finished with becomes the next one.
/// `held` = 0 only receives; `max` = 0 only releases. `*out_count` = number received.
/// Returns IOX2B_OK if at least one sample was received, otherwise IOX2B_NO_SAMPLE. An unknown token
/// releases every valid one, receives nothing and fails with IOX2B_E_INVALID_TOKEN.
#[no_mangle]
pub unsafe extern "C" fn iox2b_subscriber_release_and_receive_batch(
    subscriber: *mut Iox2bSubscriber,
    samples: *mut Iox2bSample,
    held: usize,
    max: usize,
    out_count: *mut usize,
) -> i32 {
    guard(|| {
        let s = unsafe { handle(subscriber, "subscriber") }?;
        if out_count.is_null() || (samples.is_null() && (held > 0 || max > 0)) {
            return Err(Error::new(IOX2B_E_INVALID_ARGUMENT, "samples/out_count is null"));
        }
        unsafe { *out_count = 0 };
        let mut unknown = 0usize;
        for i in 0..held {
            let token = unsafe { (*samples.add(i)).token };
            if token != 0 && s.samples.take(token).is_none() {
                unknown += 1;
            }
        }
        if unknown > 0 {
            return Err(Error::new(
                IOX2B_E_INVALID_TOKEN,
                format!("{unknown} of {held} sample tokens are unknown (already released?)"),
            ));
        }
        let n = unsafe { fill_batch(s, samples, max) }?;
        unsafe { *out_count = n };
        Ok(if n > 0 { IOX2B_OK } else { IOX2B_NO_SAMPLE })
    })
}

#[no_mangle]
pub unsafe extern "C" fn iox2b_subscriber_release(subscriber: *mut Iox2bSubscriber, token: u64) -> i32 {
    guard(|| {
        let s = unsafe { handle(subscriber, "subscriber") }?;
        if token == 0 {
            return Err(Error::new(IOX2B_E_INVALID_TOKEN, "sample token 0 is never valid"));
        }
        release_token(s, token)?;
        Ok(IOX2B_OK)
    })
}

/// Releases every sample the subscriber holds. `*out_released` = how many.
#[no_mangle]
pub unsafe extern "C" fn iox2b_subscriber_release_all(subscriber: *mut Iox2bSubscriber, out_released: *mut usize) -> i32 {
    guard(|| {
        let s = unsafe { handle(subscriber, "subscriber") }?;
        let n = s.samples.clear();
        unsafe { write_out(out_released, n) };
        Ok(IOX2B_OK)
    })
}

/// Receive + copy into `buf` + release, in one call. `*out_len` = the sample's length. If the
/// sample is larger than `cap`, the first `cap` bytes are copied, the sample is released and
/// IOX2B_E_BUFFER_TOO_SMALL is returned. IOX2B_NO_SAMPLE if nothing was available.
#[no_mangle]
pub unsafe extern "C" fn iox2b_subscriber_receive_copy(
    subscriber: *mut Iox2bSubscriber,
    buf: *mut u8,
    cap: usize,
    out_len: *mut usize,
) -> i32 {
    guard(|| {
        let s = unsafe { handle(subscriber, "subscriber") }?;
        if (buf.is_null() && cap > 0) || out_len.is_null() {
            return Err(Error::new(IOX2B_E_INVALID_ARGUMENT, "buf/out_len is null"));
        }
        if s.samples.is_full() {
            return Err(receive_error(ReceiveError::ExceedsMaxBorrows));
        }
        match s.subscriber.receive().map_err(receive_error)? {
            Some(sample) => {
                let payload = sample.payload();
                let n = payload.len().min(cap);
                if n > 0 {
                    unsafe { core::ptr::copy_nonoverlapping(payload.as_ptr(), buf, n) };
                }
                unsafe { *out_len = payload.len() };
                if payload.len() > cap {
                    return Err(Error::new(
                        IOX2B_E_BUFFER_TOO_SMALL,
                        format!("sample of {} bytes truncated to the {cap}-byte buffer", payload.len()),
                    ));
                }
                Ok(IOX2B_OK)
            }
            None => {
                unsafe { *out_len = 0 };
                Ok(IOX2B_NO_SAMPLE)
            }
        }
    })
}

/// `*out_has` = 1 if a receive would return a sample.
#[no_mangle]
pub unsafe extern "C" fn iox2b_subscriber_has_samples(subscriber: *mut Iox2bSubscriber, out_has: *mut i32) -> i32 {
    guard(|| {
        let s = unsafe { handle(subscriber, "subscriber") }?;
        let has = s.subscriber.has_samples().map_err(|e| {
            Error::new(IOX2B_E_CONNECTION_FAILED, format!("cannot connect to the publishers: {e:?}"))
        })?;
        unsafe { write_out(out_has, has as i32) };
        Ok(IOX2B_OK)
    })
}

/// Waits until the service has at least `min_publishers` publishers, then connects to them.
/// Returns IOX2B_OK or IOX2B_TIMEOUT; `*out_publishers` = current publisher count.
#[no_mangle]
pub unsafe extern "C" fn iox2b_subscriber_wait_for_publishers(
    subscriber: *mut Iox2bSubscriber,
    min_publishers: u32,
    timeout_us: i64,
    out_publishers: *mut u64,
) -> i32 {
    guard(|| {
        let s = unsafe { handle(subscriber, "subscriber") }?;
        let mut count = 0usize;
        let ok = poll_until(timeout_us, || {
            count = s.service.dynamic_config().number_of_publishers();
            Ok(count >= min_publishers as usize)
        })?;
        s.subscriber.update_connections().map_err(|e| {
            Error::new(IOX2B_E_CONNECTION_FAILED, format!("cannot connect to the publishers: {e:?}"))
        })?;
        unsafe { write_out(out_publishers, count as u64) };
        Ok(if ok { IOX2B_OK } else { IOX2B_TIMEOUT })
    })
}

#[no_mangle]
pub unsafe extern "C" fn iox2b_subscriber_update_connections(subscriber: *mut Iox2bSubscriber) -> i32 {
    guard(|| {
        let s = unsafe { handle(subscriber, "subscriber") }?;
        s.subscriber.update_connections().map_err(|e| {
            Error::new(IOX2B_E_CONNECTION_FAILED, format!("cannot connect to the publishers: {e:?}"))
        })?;
        Ok(IOX2B_OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn iox2b_subscriber_service_info(subscriber: *mut Iox2bSubscriber, out: *mut Iox2bServiceInfo) -> i32 {
    guard(|| {
        let s = unsafe { handle(subscriber, "subscriber") }?;
        service_info(&s.service, out);
        Ok(IOX2B_OK)
    })
}

// ---------------------------------------------------------------------------------------------
// events
// ---------------------------------------------------------------------------------------------

fn open_event(node: &Iox2bNode, name: &str, cfg: &Iox2bEventConfig) -> Result<EventFactory<Svc>, Error> {
    let sn = service_name(name)?;
    let mut b = node.node.service_builder(&sn).event();
    if cfg.max_notifiers > 0 {
        b = b.max_notifiers(cfg.max_notifiers as usize);
    }
    if cfg.max_listeners > 0 {
        b = b.max_listeners(cfg.max_listeners as usize);
    }
    if cfg.max_nodes > 0 {
        b = b.max_nodes(cfg.max_nodes as usize);
    }
    if cfg.event_id_max_value > 0 {
        b = b.event_id_max_value(cfg.event_id_max_value as usize);
    }
    b.open_or_create().map_err(|e| event_open_error(name, e))
}

unsafe fn event_args<'a>(
    node: *mut Iox2bNode,
    name: *const c_char,
    cfg: *const Iox2bEventConfig,
) -> Result<(&'a Iox2bNode, &'a str, Iox2bEventConfig), Error> {
    let node = unsafe { handle(node, "node") }?;
    let name = unsafe { c_str(name, "service name") }?;
    let cfg = if cfg.is_null() {
        Iox2bEventConfig {
            max_notifiers: 0,
            max_listeners: 0,
            max_nodes: 0,
            event_id_max_value: 0,
        }
    } else {
        unsafe { *cfg }
    };
    Ok((node, name, cfg))
}

/// Opens or creates the event service `name` and creates a notifier on it. `cfg` may be null.
#[no_mangle]
pub unsafe extern "C" fn iox2b_notifier_create(
    node: *mut Iox2bNode,
    name: *const c_char,
    cfg: *const Iox2bEventConfig,
    out_notifier: *mut *mut Iox2bNotifier,
) -> i32 {
    guard(|| {
        let (node, name, cfg) = unsafe { event_args(node, name, cfg) }?;
        if out_notifier.is_null() {
            return Err(Error::new(IOX2B_E_INVALID_ARGUMENT, "out_notifier is null"));
        }
        let service = open_event(node, name, &cfg)?;
        let notifier = service.notifier_builder().create().map_err(|e| {
            let code = if e == NotifierCreateError::ExceedsMaxSupportedNotifiers {
                IOX2B_E_PORT_LIMIT_EXCEEDED
            } else {
                IOX2B_E_PORT_CREATION_FAILED
            };
            Error::new(code, format!("cannot create notifier on \"{name}\": {e:?}"))
        })?;
        unsafe { *out_notifier = Box::into_raw(Box::new(Iox2bNotifier { notifier, service })) };
        Ok(IOX2B_OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn iox2b_notifier_destroy(notifier: *mut Iox2bNotifier) -> i32 {
    guard(|| {
        if !notifier.is_null() {
            drop(unsafe { Box::from_raw(notifier) });
        }
        Ok(IOX2B_OK)
    })
}

/// Wakes every listener of the event service. `*out_listeners` = how many were notified.
#[no_mangle]
pub unsafe extern "C" fn iox2b_notifier_notify(notifier: *mut Iox2bNotifier, event_id: u64, out_listeners: *mut u64) -> i32 {
    guard(|| {
        let n = unsafe { handle(notifier, "notifier") }?;
        let count = n
            .notifier
            .notify_with_custom_event_id(EventId::new(event_id as usize))
            .map_err(|e| Error::new(IOX2B_E_EVENT_FAILED, format!("notify failed: {e:?}")))?;
        unsafe { write_out(out_listeners, count as u64) };
        Ok(IOX2B_OK)
    })
}

/// `*out_listeners` = number of listeners currently attached to the notifier's event service.
#[no_mangle]
pub unsafe extern "C" fn iox2b_notifier_listener_count(notifier: *mut Iox2bNotifier, out_listeners: *mut u64) -> i32 {
    guard(|| {
        let n = unsafe { handle(notifier, "notifier") }?;
        unsafe { write_out(out_listeners, n.service.dynamic_config().number_of_listeners() as u64) };
        Ok(IOX2B_OK)
    })
}

/// Opens or creates the event service `name` and creates a listener on it. `cfg` may be null.
#[no_mangle]
pub unsafe extern "C" fn iox2b_listener_create(
    node: *mut Iox2bNode,
    name: *const c_char,
    cfg: *const Iox2bEventConfig,
    out_listener: *mut *mut Iox2bListener,
) -> i32 {
    guard(|| {
        let (node, name, cfg) = unsafe { event_args(node, name, cfg) }?;
        if out_listener.is_null() {
            return Err(Error::new(IOX2B_E_INVALID_ARGUMENT, "out_listener is null"));
        }
        let service = open_event(node, name, &cfg)?;
        let listener = service.listener_builder().create().map_err(|e| {
            let code = if e == ListenerCreateError::ExceedsMaxSupportedListeners {
                IOX2B_E_PORT_LIMIT_EXCEEDED
            } else {
                IOX2B_E_PORT_CREATION_FAILED
            };
            Error::new(code, format!("cannot create listener on \"{name}\": {e:?}"))
        })?;
        unsafe { *out_listener = Box::into_raw(Box::new(Iox2bListener { listener, service })) };
        Ok(IOX2B_OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn iox2b_listener_destroy(listener: *mut Iox2bListener) -> i32 {
    guard(|| {
        if !listener.is_null() {
            drop(unsafe { Box::from_raw(listener) });
        }
        Ok(IOX2B_OK)
    })
}

/// Waits for notifications and consumes all pending ones. timeout_us < 0 = block until
/// notified, 0 = non-blocking check, > 0 = timed wait (the thread sleeps in the kernel).
/// Returns IOX2B_OK with `*out_count` = number of notifications consumed (> 0), or
/// IOX2B_TIMEOUT with `*out_count` = 0. Signals (EINTR) do not end the wait early.
#[no_mangle]
pub unsafe extern "C" fn iox2b_listener_wait(listener: *mut Iox2bListener, timeout_us: i64, out_count: *mut u64) -> i32 {
    guard(|| {
        let l = unsafe { handle(listener, "listener") }?;
        let deadline = timeout_deadline(timeout_us);
        loop {
            let r = if timeout_us == 0 {
                l.listener.try_wait(|_| {})
            } else if let Some(d) = deadline {
                let left = d.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    l.listener.try_wait(|_| {})
                } else {
                    l.listener.timed_wait(|_| {}, left)
                }
            } else {
                l.listener.blocking_wait(|_| {})
            };
            match r {
                Ok(n) if n > 0 => {
                    unsafe { write_out(out_count, n) };
                    return Ok(IOX2B_OK);
                }
                Ok(_) => {}
                Err(ListenerWaitError::InterruptSignal) => {}
                Err(e) => {
                    return Err(Error::new(IOX2B_E_EVENT_FAILED, format!("listener wait failed: {e:?}")));
                }
            }
            if timeout_us == 0 || expired(deadline) {
                unsafe { write_out(out_count, 0) };
                return Ok(IOX2B_TIMEOUT);
            }
        }
    })
}

/// `*out_notifiers` = number of notifiers currently attached to the listener's event service.
#[no_mangle]
pub unsafe extern "C" fn iox2b_listener_notifier_count(listener: *mut Iox2bListener, out_notifiers: *mut u64) -> i32 {
    guard(|| {
        let l = unsafe { handle(listener, "listener") }?;
        unsafe { write_out(out_notifiers, l.service.dynamic_config().number_of_notifiers() as u64) };
        Ok(IOX2B_OK)
    })
}
