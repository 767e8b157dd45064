//! Uploads: parallel writes from the host's threads, large ones through pooled, persistently
//! mapped staging buffers.

use crate::GpuContext;
use crate::error::{GpuError, Result};
#[cfg(not(target_arch = "wasm32"))]
use rayon::prelude::*;
use std::sync::{Arc, PoisonError};

/// How [`GpuContext::write_par_zip`] cuts a write of `words` words per region.
struct UploadPlan {
    /// Words per region the fill gets at a time.
    block: usize,
    /// Words per region of one piece (one task of the host's threads).
    piece: u64,
    /// Words per region of one pooled staging buffer (0 when not pooled).
    stage_words: u64,
    /// Whether the write goes through pooled staging buffers.
    pooled: bool,
}

impl UploadPlan {
    fn new(words: u64, align: usize) -> Self {
        let align = align.max(1);
        // Blocks of at most 16 Ki words (64 KiB) per region, small enough to stay in cache;
        // about four pieces per thread, since the fill may be the expensive part and rows can
        // cost unevenly.
        let block = ((16 << 10) / align).max(1) * align;
        let threads = rayon::current_num_threads().max(1) as u64;
        // Large writes (native) go through pooled staging buffers of UPLOAD_PIECE bytes,
        // allocated once and kept mapped (wgpu's own staging, write_buffer_with, allocates
        // host-visible memory for every write): each holds a whole number of pieces, every
        // piece its own sub-range view, so the fill keeps its parallelism.
        let unit = if block.is_multiple_of(2) {
            block
        } else {
            2 * block
        } as u64;
        let stage_words = (UPLOAD_PIECE / 4 / unit) * unit;
        let pooled =
            cfg!(not(target_arch = "wasm32")) && stage_words > 0 && 4 * words >= UPLOAD_POOLED_MIN;
        // Pieces are cut from one round of a pooled write (the whole write otherwise).
        let per_round = if pooled {
            words.min(stage_words * UPLOAD_ROUND)
        } else {
            words
        };
        let piece = (per_round / (4 * threads))
            .max(1 << 16)
            .next_multiple_of(block as u64);
        let (piece, stage_words) = if pooled {
            let piece = piece.next_multiple_of(unit).min(stage_words);
            (piece, (stage_words / piece) * piece)
        } else {
            (piece, 0)
        };
        Self {
            block,
            piece,
            stage_words,
            pooled,
        }
    }
}

/// Where [`GpuContext::write_par_zip`] writes one piece of one region: wgpu's staging
/// memory for a queued write, or a pooled staging buffer's mapping.
pub(crate) enum UploadView {
    Queue(wgpu::QueueWriteBufferView),
    Mapped(wgpu::BufferViewMut),
}

impl UploadView {
    /// Writes `bytes` at byte `at` of the piece.
    pub(crate) fn write(&mut self, at: usize, bytes: &[u8]) {
        let range = at..at + bytes.len();
        match self {
            Self::Queue(v) => v.slice(range).copy_from_slice(bytes),
            Self::Mapped(v) => v.slice(range).copy_from_slice(bytes),
        }
    }
}

/// Bytes of one pooled upload staging buffer: [`GpuContext::write_par_zip`] writes of at
/// least this size go through pooled, persistently allocated staging memory in pieces of it.
pub(crate) const UPLOAD_PIECE: u64 = 4 << 20;

/// Pooled upload staging buffers kept at most (512 MiB; a write uses at most
/// `2 x UPLOAD_ROUND` per region).
pub(crate) const UPLOAD_POOL_MAX: usize = 128;

/// Staging buffers per region in one round of a pooled write (32 MiB): a round's copies are
/// submitted while the next round is filled, and the round after waits for them.
pub(crate) const UPLOAD_ROUND: u64 = 8;

/// Bytes from which [`GpuContext::write_par_zip`] writes through the pooled staging buffers
/// (one partly filled buffer below [`UPLOAD_PIECE`]): wgpu's queued writes allocate fresh
/// staging memory per call, whose first touch costs page faults.
pub(crate) const UPLOAD_POOLED_MIN: u64 = 256 << 10;

impl GpuContext {
    /// Writes `bytes` bytes into `buffer` from `offset`, produced by `fill` on the host's
    /// threads straight into wgpu's mapped staging memory: no intermediate vector and no
    /// single-threaded copy. `fill(at, block)` writes bytes `at .. at + block.len()` of the
    /// range; `at` and `block.len()` are multiples of `align` (the caller's element size),
    /// blocks are small (tens of KiB, so they stay in cache) and run in any order.
    /// `offset`, `bytes` and `align` must be multiples of 4 (wgpu's copy alignment).
    /// [`GpuContext::write_par_zip`] with one region.
    pub fn write_par(
        &self,
        buffer: &wgpu::Buffer,
        offset: u64,
        bytes: u64,
        align: usize,
        fill: impl Fn(usize, &mut [u8]) + Sync,
    ) -> Result<()> {
        if !bytes.is_multiple_of(4) || !align.is_multiple_of(4) {
            return Err(GpuError::Device(format!(
                "a parallel write of {bytes} bytes in elements of {align}: both must be \
                 multiples of 4"
            )));
        }
        self.write_par_zip(&[(buffer, offset)], bytes / 4, align / 4, |at, blocks| {
            fill(4 * at, bytemuck::cast_slice_mut(&mut *blocks[0]))
        })
    }

    /// [`GpuContext::write_par`] for several regions filled in one pass: `regions[v]` is a
    /// `(buffer, offset)` pair, each region `words` u32 words long, and `fill(at, blocks)`
    /// writes words `at .. at + len` of every region at once (`blocks[v]` for region `v`, all
    /// of length `len`; `at` and `len` multiples of `align` words). Values computed together
    /// (the three sparse products of one constraint row) go straight into each region's
    /// staging memory without an intermediate vector. Offsets must be multiples of 4.
    pub fn write_par_zip(
        &self,
        regions: &[(&wgpu::Buffer, u64)],
        words: u64,
        align: usize,
        fill: impl Fn(usize, &mut [&mut [u32]]) + Sync,
    ) -> Result<()> {
        if words == 0 || regions.is_empty() {
            return Ok(());
        }
        let plan = UploadPlan::new(words, align);
        // Pooled writes go in rounds of at most UPLOAD_ROUND staging buffers per region, two
        // rounds in flight: round k + 2 waits for round k's copies and reuses its buffers,
        // so a write of any size touches at most 2 x UPLOAD_ROUND fresh buffers (the first
        // touch of host-visible memory is what a first large upload pays).
        let round = if plan.pooled {
            plan.stage_words * UPLOAD_ROUND
        } else {
            words
        };
        let mut in_flight = std::collections::VecDeque::new();
        let mut at = 0u64;
        while at < words {
            let end = words.min(at + round);
            if in_flight.len() >= 2
                && let Some(index) = in_flight.pop_front()
            {
                self.wait_for(index)?;
            }
            let (pieces, staged) = self.stage_round(regions, at, end, &plan)?;
            let block = plan.block;
            let fill_piece = |(start, total, mut views): (usize, usize, Vec<UploadView>)| {
                let mut tmp: Vec<Vec<u32>> = vec![vec![0u32; block]; views.len()];
                let mut done = 0usize;
                while done < total {
                    let n = block.min(total - done);
                    let mut blocks: Vec<&mut [u32]> = tmp.iter_mut().map(|t| &mut t[..n]).collect();
                    fill(start + done, &mut blocks);
                    for (view, t) in views.iter_mut().zip(&tmp) {
                        view.write(4 * done, bytemuck::cast_slice(&t[..n]));
                    }
                    done += n;
                }
            };
            #[cfg(not(target_arch = "wasm32"))]
            pieces.into_par_iter().for_each(fill_piece);
            #[cfg(target_arch = "wasm32")]
            pieces.into_iter().for_each(fill_piece);
            in_flight.extend(self.submit_staged(staged));
            at = end;
        }
        Ok(())
    }

    /// The pieces of words `from..to` of every region (start word, words, one view per
    /// region) and, for a pooled write, the staging buffers they are written into
    /// `(staging, destination, offset, bytes)`.
    #[allow(clippy::type_complexity)]
    fn stage_round<'a>(
        &self,
        regions: &[(&'a wgpu::Buffer, u64)],
        from: u64,
        to: u64,
        plan: &UploadPlan,
    ) -> Result<(
        Vec<(usize, usize, Vec<UploadView>)>,
        Vec<(wgpu::Buffer, &'a wgpu::Buffer, u64, u64)>,
    )> {
        let mut pieces = Vec::new();
        let mut staged = Vec::new();
        // The current staging buffers (one per region) and the word where they start.
        let mut current: Vec<wgpu::Buffer> = Vec::new();
        let mut stage_at = from;
        let mut at = from;
        while at < to {
            let len = plan.piece.min(to - at);
            let size = wgpu::BufferSize::new(4 * len)
                .ok_or_else(|| GpuError::Device("empty piece of a parallel write".into()))?;
            if plan.pooled && (current.is_empty() || at == stage_at + plan.stage_words) {
                stage_at = at;
                let bytes = 4 * plan.stage_words.min(to - at);
                current.clear();
                for &(buffer, offset) in regions {
                    let staging = self.upload_staging();
                    current.push(staging.clone());
                    staged.push((staging, buffer, offset + 4 * at, bytes));
                }
            }
            let mut views = Vec::with_capacity(regions.len());
            for (v, &(buffer, offset)) in regions.iter().enumerate() {
                let refused = || {
                    GpuError::Device(format!(
                        "writing {} bytes at {} into a buffer of {} bytes was refused",
                        4 * len,
                        offset + 4 * at,
                        buffer.size()
                    ))
                };
                if offset + 4 * (at + len) > buffer.size() {
                    return Err(refused());
                }
                if plan.pooled {
                    let from = 4 * (at - stage_at);
                    let view = current[v]
                        .slice(from..from + 4 * len)
                        .get_mapped_range_mut()
                        .map_err(|e| GpuError::Device(format!("upload staging: {e}")))?;
                    views.push(UploadView::Mapped(view));
                } else {
                    let view = self
                        .queue
                        .write_buffer_with(buffer, offset + 4 * at, size)
                        .ok_or_else(refused)?;
                    views.push(UploadView::Queue(view));
                }
            }
            pieces.push((at as usize, len as usize, views));
            at += len;
        }
        Ok((pieces, staged))
    }

    /// Submits the copies out of pooled staging buffers `(staging, destination, offset,
    /// bytes)` now, so that every later submission sees the data; each staging buffer is
    /// mapped again once its copy is done (at a later poll), then back in the pool.
    fn submit_staged(
        &self,
        staged: Vec<(wgpu::Buffer, &wgpu::Buffer, u64, u64)>,
    ) -> Option<wgpu::SubmissionIndex> {
        if staged.is_empty() {
            return None;
        }
        let mut enc = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("upload"),
            });
        for (staging, buffer, offset, bytes) in &staged {
            staging.unmap();
            enc.copy_buffer_to_buffer(staging, 0, buffer, *offset, *bytes);
        }
        let index = self.queue.submit([enc.finish()]);
        // Mapped again once the copies are done (at a later poll), then back in the pool.
        for (staging, ..) in staged {
            let pool = Arc::clone(&self.upload_pool);
            let buffer = staging.clone();
            staging.map_async(wgpu::MapMode::Write, .., move |r| {
                let mut pool = pool.lock().unwrap_or_else(PoisonError::into_inner);
                if r.is_ok() && pool.len() < UPLOAD_POOL_MAX {
                    pool.push(buffer);
                }
            });
        }
        Some(index)
    }

    /// Upload staging buffers in the pool now, ready for reuse (each `UPLOAD_PIECE`, 4 MiB;
    /// large writes return theirs once their copies complete and the device is polled).
    pub fn pooled_upload_buffers(&self) -> usize {
        self.upload_pool
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// A pooled upload staging buffer of [`UPLOAD_PIECE`] bytes, mapped for writing: one
    /// from the pool, else a new one.
    pub(crate) fn upload_staging(&self) -> wgpu::Buffer {
        let reused = self
            .upload_pool
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        reused.unwrap_or_else(|| {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("upload (pooled)"),
                size: UPLOAD_PIECE,
                usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: true,
            })
        })
    }
}
