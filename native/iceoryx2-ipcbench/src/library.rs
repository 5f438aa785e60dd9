//! Library-level functions: ABI version, last error, log level, dead-node cleanup, service queries.

use core::ffi::c_char;

use crate::ffi::*;
use crate::iox::*;
use crate::status::*;

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

pub(crate) fn pattern(p: u32) -> Result<MessagingPattern, Error> {
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
