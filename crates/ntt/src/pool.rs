//! Device buffers of dropped vectors, kept for the next vector of the same page sizes.
//!
//! Every large buffer the engine makes is an allocation of the device's memory allocator, and
//! what it costs depends on what else is allocated: wgpu's Vulkan allocator (gpu-allocator)
//! sub-allocates buffers from blocks of 128-256 MiB, gives a buffer larger than a block a
//! block of its own, and frees a block the moment it empties unless it is the last one. A
//! transform's data and scratch pages that do not fit the blocks already there (beside a
//! plan's twist table, say) then get a fresh block on every call and free it on drop: a
//! driver allocation of hundreds of MiB per transform. The pool keeps the pages instead.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};
use zkgpu_runtime::wgpu;

/// Buffers smaller than this are not kept: the allocator sub-allocates them from its blocks
/// at little cost (16 MiB: 2^19 elements).
pub(crate) const POOL_MIN_BYTES: u64 = 16 << 20;

/// The pages of dropped vectors, oldest first, and how many bytes they hold.
#[derive(Debug, Default)]
pub(crate) struct PagePool {
    state: Mutex<PoolState>,
}

#[derive(Debug, Default)]
struct PoolState {
    free: VecDeque<wgpu::Buffer>,
    /// Bytes of the buffers in `free`.
    bytes: u64,
    /// The most bytes one vector set (data and scratch pages) has held: the pool keeps at
    /// most this much, so an engine never holds more idle memory than one vector once used.
    cap: u64,
    /// Whether buffers are kept at all.
    disabled: bool,
}

impl PagePool {
    fn state(&self) -> std::sync::MutexGuard<'_, PoolState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Turns keeping on or off (off frees what is kept).
    pub(crate) fn set_enabled(&self, on: bool) {
        let mut s = self.state();
        s.disabled = !on;
        if !on {
            s.free.clear();
            s.bytes = 0;
        }
    }

    /// A kept buffer of exactly `bytes` bytes, if there is one.
    pub(crate) fn take(&self, bytes: u64) -> Option<wgpu::Buffer> {
        let mut s = self.state();
        let i = s.free.iter().position(|b| b.size() == bytes)?;
        let buffer = s.free.remove(i)?;
        s.bytes -= bytes;
        Some(buffer)
    }

    /// Records that one vector set holds `bytes` bytes (raises the cap).
    pub(crate) fn note_set(&self, bytes: u64) {
        let mut s = self.state();
        s.cap = s.cap.max(bytes);
    }

    /// Keeps the large ones of `buffers` (a dropped vector's pages). Over the cap, buffers of
    /// sizes not among these go first, oldest first, then the oldest of the rest.
    pub(crate) fn give(&self, buffers: impl IntoIterator<Item = wgpu::Buffer>) {
        let mut s = self.state();
        if s.disabled {
            return;
        }
        let mut sizes = Vec::new();
        for b in buffers {
            if b.size() >= POOL_MIN_BYTES {
                sizes.push(b.size());
                s.bytes += b.size();
                s.free.push_back(b);
            }
        }
        while s.bytes > s.cap {
            let i = s
                .free
                .iter()
                .position(|b| !sizes.contains(&b.size()))
                .unwrap_or(0);
            let Some(b) = s.free.remove(i) else {
                break;
            };
            s.bytes -= b.size();
        }
    }

    /// Frees every kept buffer; returns their bytes.
    pub(crate) fn release(&self) -> u64 {
        let mut s = self.state();
        s.free.clear();
        std::mem::take(&mut s.bytes)
    }

    /// Bytes kept now.
    pub(crate) fn bytes(&self) -> u64 {
        self.state().bytes
    }
}
