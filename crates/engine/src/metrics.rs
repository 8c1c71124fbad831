//! The counts a turn's life records through the `metrics` facade: failed
//! calls into a driver and requests its egress proxy refused.
//!
//! Recording goes nowhere until a process installs a recorder: `cinch
//! serve` installs the Prometheus one and exposes it on `GET /metrics` (the
//! host's `metrics` module, which also describes these names).

/// Calls into a driver that failed (a panic, a trap, past its time or
/// memory), by `harness`: the turn went on without its driver.
pub const DRIVER_FAILURES: &str = "cinch_driver_failures_total";
/// Requests the egress proxy of a turn refused (a host not in its
/// environment's `allowed_hosts`), by `harness`; `setup` for setup commands.
pub const EGRESS_REFUSED: &str = "cinch_egress_refused_total";

/// Counts a failed call into `harness`'s driver.
pub(crate) fn driver_failed(harness: &str) {
    metrics::counter!(DRIVER_FAILURES, "harness" => harness.to_owned()).increment(1);
}

/// Counts a request the egress proxy refused to `harness`'s turn (`setup`
/// for a setup command).
pub fn egress_refused(harness: &str) {
    metrics::counter!(EGRESS_REFUSED, "harness" => harness.to_owned()).increment(1);
}
