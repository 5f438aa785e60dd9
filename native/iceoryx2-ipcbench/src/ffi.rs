//! The FFI plumbing: the error type and the thread-local last error, the panic guard every exported body runs in,
//! checked handles, C strings, out-pointers and timeouts.

use core::ffi::c_char;
use core::time::Duration;
use std::cell::RefCell;
use std::ffi::CStr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use crate::iox::*;
use crate::status::*;

pub(crate) struct Error {
    pub(crate) code: i32,
    pub(crate) msg: String,
}

impl Error {
    pub(crate) fn new(code: i32, msg: impl Into<String>) -> Self {
        Self {
            code,
            msg: msg.into(),
        }
    }
}

pub(crate) type Res = Result<i32, Error>;

thread_local! {
    pub(crate) static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

pub(crate) fn set_last_error(msg: String) {
    LAST_ERROR.with(|e| *e.borrow_mut() = msg);
}

#[inline(always)]
pub(crate) fn guard<F: FnOnce() -> Res>(f: F) -> i32 {
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
pub(crate) unsafe fn write_out<T>(out: *mut T, value: T) {
    if !out.is_null() {
        unsafe { out.write(value) };
    }
}

#[inline(always)]
pub(crate) unsafe fn handle<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T, Error> {
    if p.is_null() {
        return Err(Error::new(
            IOX2B_E_INVALID_ARGUMENT,
            format!("{what} handle is null"),
        ));
    }
    Ok(unsafe { &mut *p })
}

pub(crate) unsafe fn c_str<'a>(p: *const c_char, what: &str) -> Result<&'a str, Error> {
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

pub(crate) fn service_name(name: &str) -> Result<ServiceName, Error> {
    ServiceName::new(name).map_err(|e| {
        Error::new(
            IOX2B_E_INVALID_ARGUMENT,
            format!("invalid iceoryx2 service name \"{name}\": {e:?}"),
        )
    })
}

pub(crate) fn timeout_deadline(timeout_us: i64) -> Option<Instant> {
    if timeout_us < 0 {
        None
    } else {
        Some(Instant::now() + Duration::from_micros(timeout_us as u64))
    }
}

pub(crate) fn expired(deadline: Option<Instant>) -> bool {
    matches!(deadline, Some(d) if Instant::now() >= d)
}

/// Polls `cond` until it returns true or the deadline passes. Spins briefly, then sleeps.
pub(crate) fn poll_until<F: FnMut() -> Result<bool, Error>>(timeout_us: i64, mut cond: F) -> Result<bool, Error> {
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
