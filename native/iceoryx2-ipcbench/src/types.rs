//! The `#[repr(C)]` structs of the ABI and the opaque handle types.

use crate::iox::*;
use crate::slots::*;

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
    pub(crate) node: Node<Svc>,
}

pub struct Iox2bPublisher {
    // field order == drop order: loans first, then the port, then the service
    pub(crate) loans: Slots<RawLoan>,
    pub(crate) publisher: RawPublisher,
    pub(crate) service: PubSubFactory<Svc, [u8], ()>,
    pub(crate) max_message_size: usize,
}

pub struct Iox2bSubscriber {
    pub(crate) samples: Slots<RawSample>,
    pub(crate) subscriber: RawSubscriber,
    pub(crate) service: PubSubFactory<Svc, [u8], ()>,
}

pub struct Iox2bNotifier {
    pub(crate) notifier: Notifier<Svc>,
    pub(crate) service: EventFactory<Svc>,
}

pub struct Iox2bListener {
    pub(crate) listener: Listener<Svc>,
    pub(crate) service: EventFactory<Svc>,
}
