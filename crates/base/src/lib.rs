//! The small pieces every cinch crate shares, and that know nothing of
//! drivers, turns or sessions:
//! - [`hex`]: lowercase hex, the one way cinch writes hashes, keys and random
//!   ids, and the one source of randomness for them;
//! - [`sync`]: locks that outlive a panic;
//! - [`timestamp`]: a moment, as the store, the API and driver pins write it.

pub mod hex;
pub mod sync;
pub mod timestamp;
