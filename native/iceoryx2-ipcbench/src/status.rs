//! Status codes every exported function returns, and the messaging-pattern constants.

/// Bumped whenever a signature or a struct layout of this ABI changes.
pub const IOX2B_ABI_VERSION: i32 = 2;

pub const IOX2B_OK: i32 = 0;
pub const IOX2B_NO_SAMPLE: i32 = 1;
pub const IOX2B_TIMEOUT: i32 = 2;

pub const IOX2B_E_INVALID_ARGUMENT: i32 = -1;
pub const IOX2B_E_PANIC: i32 = -2;
pub const IOX2B_E_NODE_CREATION_FAILED: i32 = -3;
pub const IOX2B_E_SERVICE_OPEN_FAILED: i32 = -4;
pub const IOX2B_E_SERVICE_INCOMPATIBLE: i32 = -5;
pub const IOX2B_E_SERVICE_CAPACITY_EXCEEDED: i32 = -6;
pub const IOX2B_E_PORT_LIMIT_EXCEEDED: i32 = -7;
pub const IOX2B_E_PORT_CREATION_FAILED: i32 = -8;
pub const IOX2B_E_PAYLOAD_TOO_LARGE: i32 = -9;
pub const IOX2B_E_LOAN_FAILED: i32 = -10;
pub const IOX2B_E_SEND_FAILED: i32 = -11;
pub const IOX2B_E_DELIVERY_TIMEOUT: i32 = -12;
pub const IOX2B_E_RECEIVE_FAILED: i32 = -13;
pub const IOX2B_E_EXCEEDS_MAX_BORROWS: i32 = -14;
pub const IOX2B_E_INVALID_TOKEN: i32 = -15;
pub const IOX2B_E_CONNECTION_FAILED: i32 = -16;
pub const IOX2B_E_EVENT_FAILED: i32 = -17;
pub const IOX2B_E_BUFFER_TOO_SMALL: i32 = -18;
pub const IOX2B_E_CLEANUP_FAILED: i32 = -19;
pub const IOX2B_E_INTERNAL: i32 = -20;

/// `pattern` argument of `iox2b_service_exists` / `iox2b_service_hash`.
pub const IOX2B_PATTERN_PUBLISH_SUBSCRIBE: u32 = 0;
pub const IOX2B_PATTERN_EVENT: u32 = 1;
