//! Minimal C ABI over iceoryx2 0.10.0 for the IpcBench C# bindings (`IpcBench.Iceoryx2`).
//!
//! Conventions (see README.md for the full list):
//! * every exported function returns an `int32_t` status: `0` = OK, positive values are
//!   non-error outcomes (`1` = no sample, `2` = timeout), negative values are errors;
//! * on error a thread-local message is stored and can be read with `iox2b_last_error`;
//! * no panic ever crosses the FFI boundary (every body runs inside `catch_unwind`);
//! * all handles are opaque pointers; a handle must be used by one thread at a time
//!   (different handles may be used from different threads concurrently).
//!
//! One module per concern (README.md's file map): `status` (status codes), `ffi` (error plumbing, panic guard,
//! argument checks), `iox` (the iceoryx2 items used), `types` (ABI structs and handles), `slots` (loan and sample
//! tokens), `errors` (error classification), `library`, `node`, `pubsub` (opening a service), `publisher`,
//! `subscriber`, `event`.

#![allow(clippy::missing_safety_doc)]

mod errors;
mod event;
mod ffi;
mod iox;
mod library;
mod node;
mod publisher;
mod pubsub;
mod slots;
mod status;
mod subscriber;
mod types;

pub use status::*;
pub use types::{
    Iox2bEventConfig, Iox2bListener, Iox2bNode, Iox2bNotifier, Iox2bPubSubConfig, Iox2bPublisher, Iox2bSample,
    Iox2bServiceInfo, Iox2bSubscriber,
};
