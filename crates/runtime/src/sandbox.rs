//! A store's data: the sandbox every driver instance runs in.

use wasmtime::ResourceLimiter;
use wasmtime_wasi::{ResourceTable, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use super::Limits;
use super::stderr::BoundedOutput;

/// A store's data: an empty WASI context and the driver's limits.
pub(super) struct Sandbox {
    wasi: WasiCtx,
    table: ResourceTable,
    /// The store's resource limiter.
    pub(super) memory: MemoryCap,
    /// What the guest wrote to its stderr, to explain a failure.
    pub(super) stderr: BoundedOutput,
    /// The limits the driver runs under.
    pub(super) limits: Limits,
}

impl Sandbox {
    /// A sandbox with nothing granted, its memory capped at `limits`.
    pub(super) fn new(limits: Limits) -> Self {
        let stderr = BoundedOutput::new(limits.stderr_bytes);
        // No preopened directories, environment, arguments or sockets.
        let wasi = WasiCtxBuilder::new()
            .stderr(stderr.clone())
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .build();
        Self {
            wasi,
            table: ResourceTable::new(),
            memory: MemoryCap {
                limit: limits.memory_bytes,
                refused_growth: false,
            },
            stderr,
            limits,
        }
    }
}

impl WasiView for Sandbox {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// Caps linear memory and remembers whether a growth was refused, so that
/// the trap that follows (the guest's allocator aborting) is named for what
/// it is.
pub(super) struct MemoryCap {
    limit: usize,
    refused_growth: bool,
}

impl MemoryCap {
    /// Whether the guest asked for memory it did not get: past the cap, or
    /// past what its memory's type or the system allows.
    pub(super) fn refused_growth(&self) -> bool {
        self.refused_growth
    }
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let allowed = desired <= self.limit;
        self.refused_growth |= !allowed;
        Ok(allowed)
    }

    // Called for a growth this limiter allowed that still failed, and for
    // one beyond the memory's own type, which never reaches
    // `memory_growing`: the guest is out of memory all the same.
    fn memory_grow_failed(&mut self, _error: wasmtime::Error) -> wasmtime::Result<()> {
        self.refused_growth = true;
        Ok(())
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 1 << 20)
    }
}
