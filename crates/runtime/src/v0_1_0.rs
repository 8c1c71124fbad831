//! Contract version 0.1.0: its bindings, and the conversion of what a driver
//! returns into the SDK's types, which the rest of the host works with.

use cinch_driver_sdk as sdk;

wasmtime::component::bindgen!({
    world: "harness-driver",
    path: "../../wit/0.1.0",
});

use self::cinch::driver::types as wit;

pub(crate) use HarnessDriverPre as Pre;

super::convert::conversions! {
    brief {}
    // A 0.1.0 driver runs no harness but its own.
    info(info) { harnesses: Vec::new(), }
    // 0.1.0 turns carry neither the brief's text, the harness nor a policy:
    // its drivers only read output.
    turn(turn) {}
    event {}
}
