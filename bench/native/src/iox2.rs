//! The iceoryx2 reference: iceoryx2 0.10.0 used directly from Rust with the service configuration the C# transport
//! creates (src/IpcBench.Transports/iceoryx2/ServiceLayout.cs): raw byte slices, no-loss (safe overflow off,
//! RetryUntilDelivered), history 0, queue depth from the same formula, 1 borrowed sample per subscriber, 2 loans,
//! static allocation; messages written and read in place in the samples.

use core::mem::MaybeUninit;

use iceoryx2::port::publisher::Publisher;
use iceoryx2::port::subscriber::Subscriber;
use iceoryx2::port::update_connections::UpdateConnections;
use iceoryx2::prelude::*;
use iceoryx2::service::port_factory::publish_subscribe::PortFactory;
use iceoryx2::service::port_factory::PortFactory as _;

use crate::common::*;
use crate::{Config, PublisherSide};

type Svc = ipc::Service;
type Res<T> = Result<T, String>;

fn err<E: core::fmt::Debug>(what: &str) -> impl FnOnce(E) -> String + '_ {
    move |e| format!("iceoryx2: {what}: {e:?}")
}

fn node() -> Res<Node<Svc>> {
    set_log_level(LogLevel::Error);
    NodeBuilder::new()
        .signal_handling_mode(SignalHandlingMode::Disabled)
        .create::<Svc>()
        .map_err(err("node"))
}

fn reply_name(name: &str) -> String {
    format!("{name}/reply")
}

pub struct Iox2Publisher {
    cfg: Config,
    _node: Node<Svc>,
    service: PortFactory<Svc, [u8], ()>,
    publisher: Publisher<Svc, [u8], ()>,
    replies: Option<(PortFactory<Svc, [u8], ()>, Subscriber<Svc, [u8], ()>)>,
}

impl Iox2Publisher {
    pub fn create(cfg: &Config, name: &str) -> Res<Self> {
        let node = node()?;
        let max = HEADER_SIZE + cfg.payload;
        let subs = cfg.subscribers;
        let service = node
            .service_builder(&ServiceName::new(name).map_err(err("service name"))?)
            .publish_subscribe::<[u8]>()
            .enable_safe_overflow(false)
            .history_size(0)
            .max_publishers(1)
            .max_subscribers(subs)
            .max_nodes(subs + 3)
            .subscriber_max_buffer_size(queue_depth(max, subs))
            .subscriber_max_borrowed_samples(1)
            .create()
            .map_err(err("create service"))?;
        let replies = if cfg.round_trip {
            let reply = node
                .service_builder(&ServiceName::new(&reply_name(name)).map_err(err("service name"))?)
                .publish_subscribe::<[u8]>()
                .enable_safe_overflow(false)
                .history_size(0)
                .max_publishers(subs)
                .max_subscribers(1)
                .max_nodes(subs + 3)
                .subscriber_max_buffer_size(2)
                .subscriber_max_borrowed_samples(1)
                .create()
                .map_err(err("create reply service"))?;
            let sub = reply.subscriber_builder().create().map_err(err("reply subscriber"))?;
            Some((reply, sub))
        } else {
            None
        };
        let publisher = service
            .publisher_builder()
            .initial_max_slice_len(max)
            .allocation_strategy(AllocationStrategy::Static)
            .max_loaned_samples(2)
            .backpressure_strategy(BackpressureStrategy::RetryUntilDelivered)
            .create()
            .map_err(err("publisher"))?;
        Ok(Self { cfg: cfg.clone(), _node: node, service, publisher, replies })
    }
}

impl PublisherSide for Iox2Publisher {
    fn connect(&mut self, deadline_ns: i64) -> Res<()> {
        let n = self.cfg.subscribers;
        while self.service.dynamic_config().number_of_subscribers() < n
            || self.replies.as_ref().is_some_and(|(r, _)| r.dynamic_config().number_of_publishers() < n)
        {
            if now_ns() > deadline_ns {
                return Err("iceoryx2: subscribers did not attach in time".into());
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        Ok(())
    }

    fn finish_handshake(&mut self) -> Res<()> {
        self.publisher.update_connections().map_err(err("update_connections"))?;
        if let Some((_, sub)) = &self.replies {
            sub.update_connections().map_err(err("update_connections"))?;
        }
        Ok(())
    }

    #[inline(always)]
    fn send_message(&mut self, sequence: i64, stamp_ns: i64) -> Res<()> {
        let len = HEADER_SIZE + self.cfg.payload;
        let mut sample = self.publisher.loan_slice_uninit(len).map_err(err("loan"))?;
        // The loan is written in place, as the C# publisher writes its span over the sample.
        let buffer = unsafe { &mut *(sample.payload_mut() as *mut [MaybeUninit<u8>] as *mut [u8]) };
        write_message(buffer, self.cfg.payload, self.cfg.full, 0, sequence, stamp_ns);
        let receivers = unsafe { sample.assume_init() }.send().map_err(err("send"))?;
        if receivers < self.cfg.subscribers {
            return Err(format!("iceoryx2: message {sequence} reached {receivers} subscribers"));
        }
        Ok(())
    }

    fn send_end_of_stream(&mut self, sequence: i64) -> Res<()> {
        let mut sample = self.publisher.loan_slice_uninit(HEADER_SIZE).map_err(err("loan"))?;
        let buffer = unsafe { &mut *(sample.payload_mut() as *mut [MaybeUninit<u8>] as *mut [u8]) };
        write_end_of_stream(buffer, 0, sequence);
        unsafe { sample.assume_init() }.send().map_err(err("send"))?;
        Ok(())
    }

    #[inline(always)]
    fn await_echo(&mut self) -> Res<Header> {
        let (_, sub) = self.replies.as_ref().ok_or("not a round trip")?;
        loop {
            if let Some(sample) = sub.receive().map_err(err("receive echo"))? {
                return Ok(Header::read(sample.payload()));
            }
            pause(self.cfg.wait);
        }
    }
}

pub fn subscriber(cfg: &Config, name: &str) -> Res<()> {
    let node = node()?;
    let service = node
        .service_builder(&ServiceName::new(name).map_err(err("service name"))?)
        .publish_subscribe::<[u8]>()
        .enable_safe_overflow(false)
        .history_size(0)
        .open()
        .map_err(err("open service"))?;
    let reply = if cfg.round_trip {
        let reply = node
            .service_builder(&ServiceName::new(&reply_name(name)).map_err(err("service name"))?)
            .publish_subscribe::<[u8]>()
            .enable_safe_overflow(false)
            .history_size(0)
            .open()
            .map_err(err("open reply service"))?;
        let publisher = reply
            .publisher_builder()
            .initial_max_slice_len(HEADER_SIZE)
            .max_loaned_samples(2)
            .backpressure_strategy(BackpressureStrategy::RetryUntilDelivered)
            .create()
            .map_err(err("echo publisher"))?;
        while reply.dynamic_config().number_of_subscribers() < 1 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        publisher.update_connections().map_err(err("update_connections"))?;
        Some((reply, publisher))
    } else {
        None
    };
    let sub = service.subscriber_builder().create().map_err(err("subscriber"))?;
    while service.dynamic_config().number_of_publishers() < 1 {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    sub.update_connections().map_err(err("update_connections"))?;

    if cfg.minimal {
        // The sequence number only: no clock, no histogram, no checksum.
        let mut rx = MinimalReceiver::new(cfg.payload, false);
        crate::ready_and_wait_for_start()?;
        loop {
            match sub.receive().map_err(err("receive"))? {
                Some(sample) => {
                    if let Outcome::EndOfStream = rx.process(sample.payload()) {
                        break;
                    }
                }
                None => pause(cfg.wait),
            }
        }
        println!("{}", rx.result_line());
        return Ok(());
    }

    let mut rx = Receiver::new(cfg.payload, cfg.full, cfg.round_trip, 1);
    rx.measure_from_ns = crate::ready_and_wait_for_start()?;
    let mut echo = [0u8; HEADER_SIZE];
    loop {
        match sub.receive().map_err(err("receive"))? {
            Some(sample) => match rx.process(sample.payload(), &mut echo) {
                Outcome::EndOfStream => break,
                Outcome::Message => {
                    if let Some((_, publisher)) = &reply {
                        // SendCopy of the 32-byte echo, as the C# receiver's Reply does.
                        let mut s = publisher.loan_slice_uninit(HEADER_SIZE).map_err(err("loan echo"))?;
                        let b = unsafe { &mut *(s.payload_mut() as *mut [MaybeUninit<u8>] as *mut [u8]) };
                        b.copy_from_slice(&echo);
                        unsafe { s.assume_init() }.send().map_err(err("send echo"))?;
                    }
                }
            },
            None => pause(cfg.wait),
        }
    }
    println!("{}", rx.result_line());
    Ok(())
}
