//! Publishers: create, loan, send (zero-copy and copying), discard, wait for subscribers.

use core::ffi::c_char;
use core::time::Duration;

use crate::errors::*;
use crate::ffi::*;
use crate::iox::*;
use crate::pubsub::*;
use crate::slots::*;
use crate::status::*;
use crate::types::*;

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
