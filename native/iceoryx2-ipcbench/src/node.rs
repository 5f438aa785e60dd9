//! Nodes: create and destroy.

use core::ffi::c_char;

use crate::ffi::*;
use crate::iox::*;
use crate::status::*;
use crate::types::*;

/// Creates a node. `name` may be null. Dead nodes are cleaned up on creation (iceoryx2 default).
#[no_mangle]
pub unsafe extern "C" fn iox2b_node_create(name: *const c_char, out_node: *mut *mut Iox2bNode) -> i32 {
    guard(|| {
        if out_node.is_null() {
            return Err(Error::new(IOX2B_E_INVALID_ARGUMENT, "out_node is null"));
        }
        let mut builder = NodeBuilder::new().signal_handling_mode(SignalHandlingMode::Disabled);
        if !name.is_null() {
            let n = unsafe { c_str(name, "node name") }?;
            let nn = NodeName::new(n).map_err(|e| {
                Error::new(IOX2B_E_INVALID_ARGUMENT, format!("invalid node name \"{n}\": {e:?}"))
            })?;
            builder = builder.name(&nn);
        }
        let node = builder.create::<Svc>().map_err(|e| {
            Error::new(IOX2B_E_NODE_CREATION_FAILED, format!("cannot create iceoryx2 node: {e:?}"))
        })?;
        unsafe { *out_node = Box::into_raw(Box::new(Iox2bNode { node })) };
        Ok(IOX2B_OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn iox2b_node_destroy(node: *mut Iox2bNode) -> i32 {
    guard(|| {
        if !node.is_null() {
            drop(unsafe { Box::from_raw(node) });
        }
        Ok(IOX2B_OK)
    })
}
