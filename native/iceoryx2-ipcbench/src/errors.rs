//! iceoryx2 errors classified into IOX2B_E_* codes, with a message naming the service.

use crate::ffi::*;
use crate::iox::*;
use crate::status::*;

pub(crate) fn pubsub_open_error(name: &str, e: PublishSubscribeOpenOrCreateError) -> Error {
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

pub(crate) fn event_open_error(name: &str, e: EventOpenOrCreateError) -> Error {
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

pub(crate) fn loan_error(e: LoanError, len: usize, max: usize) -> Error {
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

pub(crate) fn send_error(e: SendError) -> Error {
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

pub(crate) fn receive_error(e: ReceiveError) -> Error {
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
