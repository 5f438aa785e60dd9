//! Every iceoryx2 item the crate uses, and the port types it instantiates: the one place that names iceoryx2's API.

use core::mem::MaybeUninit;

pub(crate) use iceoryx2::config::Config;
pub(crate) use iceoryx2::port::listener::{Listener, ListenerCreateError, ListenerWaitError};
pub(crate) use iceoryx2::port::notifier::{Notifier, NotifierCreateError};
pub(crate) use iceoryx2::port::publisher::{Publisher, PublisherCreateError};
pub(crate) use iceoryx2::port::subscriber::{Subscriber, SubscriberCreateError};
pub(crate) use iceoryx2::port::update_connections::UpdateConnections;
pub(crate) use iceoryx2::port::{BackpressureAction, BackpressureInfo, LoanError, ReceiveError, SendError};
pub(crate) use iceoryx2::prelude::*;
pub(crate) use iceoryx2::sample::Sample;
pub(crate) use iceoryx2::sample_mut_uninit::SampleMutUninit;
pub(crate) use iceoryx2::service::builder::event::{EventCreateError, EventOpenError, EventOpenOrCreateError};
pub(crate) use iceoryx2::service::builder::publish_subscribe::{
    PublishSubscribeCreateError, PublishSubscribeOpenError, PublishSubscribeOpenOrCreateError,
};
pub(crate) use iceoryx2::service::port_factory::event::PortFactory as EventFactory;
pub(crate) use iceoryx2::service::port_factory::publish_subscribe::PortFactory as PubSubFactory;
pub(crate) use iceoryx2::service::service_hash::ServiceHash;

pub(crate) type Svc = ipc::Service;
pub(crate) type RawPublisher = Publisher<Svc, [u8], ()>;
pub(crate) type RawSubscriber = Subscriber<Svc, [u8], ()>;
pub(crate) type RawLoan = SampleMutUninit<Svc, [MaybeUninit<u8>], ()>;
pub(crate) type RawSample = Sample<Svc, [u8], ()>;
