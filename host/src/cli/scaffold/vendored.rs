//! The driver SDK's sources and the contract's WIT, embedded at build time
//! (see `host/build.rs`), so that a scaffold builds with no cinch checkout.

include!(concat!(env!("OUT_DIR"), "/vendored_sdk.rs"));
