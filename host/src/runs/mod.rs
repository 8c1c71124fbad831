//! Runs: what every service that runs turns shares, below them all. The
//! live events of each run ([`live`]) live here.

pub mod live;
