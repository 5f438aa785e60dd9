//! The event service: notifiers and listeners, for blocking waits.

use core::ffi::c_char;
use std::time::Instant;

use crate::errors::*;
use crate::ffi::*;
use crate::iox::*;
use crate::status::*;
use crate::types::*;

pub(crate) fn open_event(node: &Iox2bNode, name: &str, cfg: &Iox2bEventConfig) -> Result<EventFactory<Svc>, Error> {
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

pub(crate) unsafe fn event_args<'a>(
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
