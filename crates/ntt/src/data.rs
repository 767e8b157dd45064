//! Data on the device: batches of vectors paged into buffers, their uploads, writes and
//! downloads, and the encoders that carry recorded work.

use crate::pool::PagePool;
use crate::{ELEMENT_BYTES, GpuNtt, MAX_PAGES, NttError, NttField, Result};
use zkgpu_limbs::unpack_into;
use zkgpu_runtime::GpuError;
use zkgpu_runtime::wgpu;

/// Copies of one downloaded vector, recorded by [`GpuNtt::record_download`].
#[derive(Debug)]
#[must_use = "finish the download with GpuNtt::finish_download"]
pub struct PendingDownload {
    pub(crate) pieces: Vec<zkgpu_runtime::PendingReadback>,
    pub(crate) len: usize,
}

/// A command encoder of one engine's device ([`GpuNtt::encoder`]): engines of another context
/// refuse it, so that no work of one device is recorded into another's commands.
#[derive(Debug)]
pub struct NttEncoder {
    pub(crate) enc: wgpu::CommandEncoder,
    pub(crate) context: zkgpu_runtime::ContextId,
}

impl NttEncoder {
    /// The context it records for.
    pub fn context(&self) -> zkgpu_runtime::ContextId {
        self.context
    }

    /// The wgpu encoder, to record other work of the same device into the same submission.
    pub fn raw(&mut self) -> &mut wgpu::CommandEncoder {
        &mut self.enc
    }
}

/// `batch` vectors of `len` field elements each, resident on the GPU, with a scratch copy of
/// the same size for the passes to alternate with. The elements (vector after vector) are
/// paged across up to [`MAX_PAGES`] buffers of `2^page_log` elements, each within one storage
/// binding.
#[derive(Debug)]
pub struct DeviceVec<F> {
    /// The context whose device holds the buffers.
    pub(crate) context: zkgpu_runtime::ContextId,
    pub(crate) data: Vec<wgpu::Buffer>,
    pub(crate) scratch: Vec<wgpu::Buffer>,
    pub(crate) len: usize,
    pub(crate) batch: usize,
    pub(crate) page_log: u32,
    /// Where the pages go when the vector is dropped (the engine's [`PagePool`]).
    pub(crate) pool: std::sync::Arc<PagePool>,
    pub(crate) _field: std::marker::PhantomData<F>,
}

impl<F> Drop for DeviceVec<F> {
    fn drop(&mut self) {
        let data = std::mem::take(&mut self.data);
        let scratch = std::mem::take(&mut self.scratch);
        self.pool.give(data.into_iter().chain(scratch));
    }
}

impl<F> DeviceVec<F> {
    /// The context that made it (engines of another refuse it).
    pub fn context(&self) -> zkgpu_runtime::ContextId {
        self.context
    }

    /// Elements per vector.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the vectors are empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of vectors.
    pub fn batch(&self) -> usize {
        self.batch
    }

    /// The buffers holding the data (packed elements, vector after vector, `2^page_log`
    /// elements per buffer).
    pub fn pages(&self) -> &[wgpu::Buffer] {
        &self.data
    }

    /// log2 of the elements per page.
    pub fn page_log(&self) -> u32 {
        self.page_log
    }

    /// `(page, byte offset in it, bytes)` pieces of elements `start..end` of the batch.
    pub(crate) fn pieces(&self, start: u64, end: u64) -> Vec<(usize, u64, u64)> {
        let page = 1u64 << self.page_log;
        let mut out = Vec::new();
        let mut e = start;
        while e < end {
            let k = e >> self.page_log;
            let stop = end.min((k + 1) * page);
            out.push((
                k as usize,
                (e - k * page) * ELEMENT_BYTES,
                (stop - e) * ELEMENT_BYTES,
            ));
            e = stop;
        }
        out
    }
}

/// The elements of each page of `batch` vectors of `len` elements paged by `2^page_log`
/// (at least one page), or why they cannot be bound.
pub(crate) fn page_elements(len: usize, batch: usize, page_log: u32) -> Result<Vec<u64>> {
    let total = (len as u64)
        .checked_mul(batch as u64)
        .filter(|&t| t <= u64::from(u32::MAX))
        .ok_or_else(|| {
            NttError::Shape(format!(
                "{batch} x {len} elements exceed the kernels' 2^32 element indices"
            ))
        })?;
    let page = 1u64 << page_log;
    let pages = total.div_ceil(page).max(1);
    if pages > MAX_PAGES as u64 {
        return Err(NttError::Shape(format!(
            "{batch} x {len} elements need {pages} storage bindings of 2^{page_log} \
             elements ({} bytes each); the kernels bind at most {MAX_PAGES}",
            page * ELEMENT_BYTES
        )));
    }
    Ok((0..pages)
        .map(|k| page.min(total - (k * page).min(total)))
        .collect())
}

impl<F: NttField> GpuNtt<F> {
    /// Uploads `vectors` (all of one length) as one batch.
    pub fn upload_batch(&self, vectors: &[&[F]]) -> Result<DeviceVec<F>> {
        let len = vectors.first().map_or(0, |v| v.len());
        if vectors.iter().any(|v| v.len() != len) {
            return Err(NttError::Shape(
                "every vector of a batch must have the same length".into(),
            ));
        }
        // Every element is written below: kept pages need no clearing.
        let dv = self.alloc(len, vectors.len(), false)?;
        for (i, v) in vectors.iter().enumerate() {
            self.write(&dv, i, v)?;
        }
        Ok(dv)
    }

    /// Uploads one vector.
    pub fn upload(&self, values: &[F]) -> Result<DeviceVec<F>> {
        self.upload_batch(&[values])
    }

    /// `batch` zero vectors of `len` elements.
    pub fn zeroed(&self, len: usize, batch: usize) -> Result<DeviceVec<F>> {
        self.alloc(len, batch, true)
    }

    /// `batch` vectors of `len` elements in pages kept from dropped vectors where their sizes
    /// match (docs/ntt.md, "Device buffers"), else new ones; `zero`: data pages read as zero
    /// (a kept one is cleared on the GPU, in a submission of its own so that it precedes
    /// every later write). Scratch pages are written before they are read, so never cleared.
    pub(crate) fn alloc(&self, len: usize, batch: usize, zero: bool) -> Result<DeviceVec<F>> {
        let page_log = self.page_log();
        let pages = page_elements(len, batch, page_log)?;
        self.pool
            .note_set(2 * pages.iter().sum::<u64>() * ELEMENT_BYTES);
        let mut cleared = Vec::new();
        let mut alloc = |label: &str, clear: bool| -> Result<Vec<wgpu::Buffer>> {
            let mut out = Vec::with_capacity(pages.len());
            for &elems in &pages {
                let bytes = (elems * ELEMENT_BYTES).max(4);
                if let Some(b) = self.pool.take(bytes) {
                    if clear {
                        cleared.push(b.clone());
                    }
                    out.push(b);
                } else {
                    out.push(self.new_page(label, bytes)?);
                }
            }
            Ok(out)
        };
        let data = alloc("ntt data", zero)?;
        let scratch = alloc("ntt scratch", false)?;
        if !cleared.is_empty() {
            let mut enc = self
                .ctx
                .device()
                .create_command_encoder(&Default::default());
            for b in &cleared {
                enc.clear_buffer(b, 0, None);
            }
            self.ctx.queue().submit([enc.finish()]);
        }
        Ok(DeviceVec {
            context: self.ctx.id(),
            data,
            scratch,
            len,
            batch,
            page_log,
            pool: self.pool.clone(),
            _field: std::marker::PhantomData,
        })
    }

    /// A new page of `bytes` bytes; where the device is out of memory, the kept pages are
    /// freed and the allocation tried once more.
    fn new_page(&self, label: &str, bytes: u64) -> Result<wgpu::Buffer> {
        match self.ctx.storage_zeroed(label, bytes) {
            Err(GpuError::OutOfMemory { .. }) if self.pool.release() > 0 => {
                Ok(self.ctx.storage_zeroed(label, bytes)?)
            }
            r => Ok(r?),
        }
    }

    /// The three bindings of `pages`, placeholders where there are fewer.
    pub(crate) fn page_bindings<'a>(
        &'a self,
        pages: &'a [wgpu::Buffer],
        writable: bool,
    ) -> [&'a wgpu::Buffer; 3] {
        let [ro, rw1, rw2] = &self.placeholders;
        let spare = if writable { [rw1, rw2] } else { [ro, ro] };
        [
            pages.first().unwrap_or(spare[0]),
            pages.get(1).unwrap_or(spare[0]),
            pages.get(2).unwrap_or(spare[1]),
        ]
    }

    /// `Ok` when `dv` was made by this engine's context: buffers of another device are
    /// refused before anything is recorded.
    pub(crate) fn own(&self, dv: &DeviceVec<F>) -> Result<()> {
        Ok(dv.context.check(self.ctx.id(), "these device vectors")?)
    }

    /// Overwrites the start of vector `index` with `values` (the rest keeps its contents).
    pub fn write(&self, dv: &DeviceVec<F>, index: usize, values: &[F]) -> Result<()> {
        self.own(dv)?;
        if index >= dv.batch || values.len() > dv.len {
            return Err(NttError::Shape(format!(
                "writing {} elements into vector {index} of a {} x {} batch",
                values.len(),
                dv.batch,
                dv.len
            )));
        }
        let start = (index * dv.len) as u64;
        let mut at = 0usize;
        for (page, offset, bytes) in dv.pieces(start, start + values.len() as u64) {
            let piece = &values[at..at + (bytes / ELEMENT_BYTES) as usize];
            // Packed on the host's threads straight into the staging memory.
            self.ctx.write_par(
                &dv.data[page],
                offset,
                bytes,
                ELEMENT_BYTES as usize,
                |first, block| {
                    let words: &mut [u32] = bytemuck::cast_slice_mut(block);
                    let first = first / ELEMENT_BYTES as usize;
                    for (w, x) in words.as_chunks_mut::<8>().0.iter_mut().zip(&piece[first..]) {
                        x.write_packed(w);
                    }
                },
            )?;
            at += piece.len();
        }
        Ok(())
    }

    /// Writes every vector of `dv` in one pass over its rows, from the host's threads straight
    /// into the upload's staging memory: `fill(row, blocks)` writes rows `row .. row + k` of
    /// each vector, `blocks[v]` holding vector `v`'s `8 k` words (arkworks' packed words,
    /// [`PackedWords::write_packed`]). For values computed row by row for all vectors at once
    /// (the witness map's sparse products), with no intermediate vectors.
    ///
    /// [`PackedWords::write_packed`]: zkgpu_limbs::PackedWords::write_packed
    pub fn write_rows(
        &self,
        dv: &DeviceVec<F>,
        fill: impl Fn(usize, &mut [&mut [u32]]) + Sync,
    ) -> Result<()> {
        self.own(dv)?;
        let len = dv.len as u64;
        let page = 1u64 << dv.page_log;
        // Rows where some vector crosses into its next page: the pieces must not span one.
        let mut cuts: Vec<u64> = (0..dv.batch as u64)
            .flat_map(|v| {
                let start = v * len;
                let first = start.next_multiple_of(page);
                (first..start + len)
                    .step_by(page as usize)
                    .map(move |g| g - start)
            })
            .filter(|&r| r > 0)
            .chain([0, len])
            .collect();
        cuts.sort_unstable();
        cuts.dedup();
        let fill = &fill;
        for w in cuts.windows(2) {
            let (r0, r1) = (w[0], w[1]);
            let regions: Vec<(&wgpu::Buffer, u64)> = (0..dv.batch as u64)
                .map(|v| {
                    let g = v * len + r0;
                    (
                        &dv.data[(g >> dv.page_log) as usize],
                        (g & (page - 1)) * ELEMENT_BYTES,
                    )
                })
                .collect();
            self.ctx
                .write_par_zip(&regions, 8 * (r1 - r0), 8, |at, blocks| {
                    fill(r0 as usize + at / 8, blocks)
                })?;
        }
        Ok(())
    }

    /// Downloads vector `index`.
    pub async fn download(&self, dv: &DeviceVec<F>, index: usize) -> Result<Vec<F>> {
        let mut enc = self.encoder();
        let pending = self.record_download(&mut enc, dv, index)?;
        let submission = self.ctx.queue().submit([enc.enc.finish()]);
        self.finish_download(pending, submission).await
    }

    /// Records into `enc` the copies that download vector `index` of `dv`: put them in the
    /// encoder of the transforms that produce it, so the download rides in their submission
    /// rather than queueing behind another thread's work; then [`GpuNtt::finish_download`]
    /// with that submission's index (from [`GpuNtt::submit_indexed`]).
    pub fn record_download(
        &self,
        enc: &mut NttEncoder,
        dv: &DeviceVec<F>,
        index: usize,
    ) -> Result<PendingDownload> {
        self.own(dv)?;
        self.own_encoder(enc)?;
        let enc = &mut enc.enc;
        if index >= dv.batch {
            return Err(NttError::Shape(format!(
                "vector {index} of a batch of {}",
                dv.batch
            )));
        }
        let start = (index * dv.len) as u64;
        let pieces = dv
            .pieces(start, start + dv.len as u64)
            .into_iter()
            .map(|(page, offset, bytes)| {
                let n = (bytes / ELEMENT_BYTES) as usize;
                self.ctx
                    .record_read_back(enc, &dv.data[page], offset, n, ELEMENT_BYTES as usize)
            })
            .collect();
        Ok(PendingDownload {
            pieces,
            len: dv.len,
        })
    }

    /// Waits for `submission` (which holds the copies `pending` recorded) and unpacks the
    /// vector on the host's threads straight from the mapped staging memory.
    pub async fn finish_download(
        &self,
        pending: PendingDownload,
        submission: wgpu::SubmissionIndex,
    ) -> Result<Vec<F>> {
        let mut out = zkgpu_limbs::filled_par(pending.len, F::zero());
        self.finish_download_into(pending, submission, &mut out)
            .await?;
        Ok(out)
    }

    /// [`GpuNtt::finish_download`] into `out` (the vector's length): no new host memory, so
    /// no page faults of a fresh allocation (a transform in place writes back into its input).
    pub(crate) async fn finish_download_into(
        &self,
        pending: PendingDownload,
        submission: wgpu::SubmissionIndex,
        out: &mut [F],
    ) -> Result<()> {
        if out.len() != pending.len {
            return Err(NttError::Shape(format!(
                "downloading {} elements into {}",
                pending.len,
                out.len()
            )));
        }
        let mut at = 0usize;
        for piece in pending.pieces {
            let n = piece.len();
            self.ctx
                .finish_read_back(
                    piece,
                    submission.clone(),
                    &mut out[at..at + n],
                    |bytes, out, first| unpack_into(bytemuck::cast_slice(bytes), out, at + first),
                )
                .await?
                .map_err(|e| {
                    NttError::Gpu(GpuError::Device(format!(
                        "the GPU returned a non-canonical element: {e}"
                    )))
                })?;
            at += n;
        }
        Ok(())
    }

    /// A command encoder on this engine's device, for `record_*` and `submit`.
    pub fn encoder(&self) -> NttEncoder {
        NttEncoder {
            enc: self
                .ctx
                .device()
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("ntt") }),
            context: self.ctx.id(),
        }
    }

    /// Submits `enc` and waits for the GPU; returns the wall seconds from submit to done.
    pub fn submit(&self, enc: NttEncoder) -> Result<f64> {
        self.submit_indexed(enc).map(|(t, _)| t)
    }

    /// [`GpuNtt::submit`], also returning the submission's index. Waits for this submission
    /// only, not for work another thread submits after it.
    pub fn submit_indexed(&self, enc: NttEncoder) -> Result<(f64, wgpu::SubmissionIndex)> {
        self.own_encoder(&enc)?;
        let t = web_time::Instant::now();
        let index = self.ctx.submit_and_wait(enc.enc)?;
        Ok((t.elapsed().as_secs_f64(), index))
    }

    /// `Ok` when `enc` records for this engine's device.
    pub(crate) fn own_encoder(&self, enc: &NttEncoder) -> Result<()> {
        Ok(enc.context.check(self.ctx.id(), "this command encoder")?)
    }
}
