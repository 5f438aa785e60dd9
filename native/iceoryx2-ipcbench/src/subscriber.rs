//! Subscribers: create, receive (one, a batch, a copy), release, wait for publishers.

use core::ffi::c_char;

use crate::errors::*;
use crate::ffi::*;
use crate::iox::*;
use crate::pubsub::*;
use crate::slots::*;
use crate::status::*;
use crate::types::*;

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
pub(crate) fn release_token(s: &mut Iox2bSubscriber, token: u64) -> Result<(), Error> {
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
pub(crate) unsafe fn fill_batch(s: &mut Iox2bSubscriber, out: *mut Iox2bSample, max: usize) -> Result<usize, Error> {
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
