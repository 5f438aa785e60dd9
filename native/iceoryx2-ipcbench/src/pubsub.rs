//! Opening a publish-subscribe service, shared by publishers and subscribers.

use core::ffi::c_char;

use crate::errors::*;
use crate::ffi::*;
use crate::iox::*;
use crate::status::*;
use crate::types::*;

pub(crate) fn open_pubsub(node: &Iox2bNode, name: &str, cfg: &Iox2bPubSubConfig) -> Result<PubSubFactory<Svc, [u8], ()>, Error> {
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

pub(crate) unsafe fn pubsub_args<'a>(
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

pub(crate) fn service_info(service: &PubSubFactory<Svc, [u8], ()>, out: *mut Iox2bServiceInfo) {
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
