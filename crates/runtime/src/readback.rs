//! Readback: downloads recorded beside the kernels that produce the data, in pooled staging
//! pieces read on the host's threads.

use crate::GpuContext;
use crate::error::{GpuError, Result};
#[cfg(not(target_arch = "wasm32"))]
use rayon::prelude::*;
use std::sync::PoisonError;
use web_time::Instant;

/// Bytes of a pooled readback staging buffer. Reusing staging memory matters: a fresh
/// host-visible allocation is faulted in page by page on the first read, which measured
/// 1-2 GB/s on the H100's host.
pub(crate) const READBACK_PIECE: u64 = 8 << 20;

/// Pooled readback buffers kept at most (512 MiB).
pub(crate) const READBACK_POOL_MAX: usize = 64;

/// Copies into staging memory recorded by [`GpuContext::record_read_back`], to be finished
/// by [`GpuContext::finish_read_back`] once their submission is made.
#[derive(Debug)]
#[must_use = "finish the readback, or its staging memory is lost to the pool"]
pub struct PendingReadback {
    /// Staging buffer, bytes used, whether it returns to the pool.
    pub(crate) stagings: Vec<(wgpu::Buffer, usize, bool)>,
    /// Elements per staging piece.
    pub(crate) per: usize,
    /// Elements in all.
    pub(crate) len: usize,
}

impl PendingReadback {
    /// Elements it reads back.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether it reads nothing.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl GpuContext {
    /// Copies the first `bytes` bytes of `buffer` (which needs `COPY_SRC`) back to the host.
    pub async fn read_back<T: bytemuck::Pod + Send>(
        &self,
        buffer: &wgpu::Buffer,
        bytes: u64,
    ) -> Result<Vec<T>> {
        self.read_back_range(buffer, 0, bytes).await
    }

    /// Copies `bytes` bytes of `buffer` from `offset` (a multiple of 4) back to the host.
    pub async fn read_back_range<T: bytemuck::Pod + Send>(
        &self,
        buffer: &wgpu::Buffer,
        offset: u64,
        bytes: u64,
    ) -> Result<Vec<T>> {
        let size = std::mem::size_of::<T>();
        let mut out = vec![T::zeroed(); bytes as usize / size];
        self.read_back_par(buffer, offset, &mut out, size, |bytes, out: &mut [T], _| {
            bytemuck::cast_slice_mut::<T, u8>(out).copy_from_slice(bytes);
            Ok::<(), std::convert::Infallible>(())
        })
        .await?
        .unwrap_or_else(|never| match never {});
        Ok(out)
    }

    /// Reads `out.len()` elements of `elem_bytes` bytes each from `buffer` at `offset` (a
    /// multiple of 4): the GPU copies them into staging pieces of 8 MiB (pooled and reused
    /// across calls, see [`GpuContext::release_staging`]), and the host's
    /// threads hand each mapped piece to `read(bytes, elements, first_index)`, which fills
    /// the matching run of `out` (no intermediate copy). The first error `read` returns is
    /// returned.
    pub async fn read_back_par<T: Send, E: Send>(
        &self,
        buffer: &wgpu::Buffer,
        offset: u64,
        out: &mut [T],
        elem_bytes: usize,
        read: impl Fn(&[u8], &mut [T], usize) -> std::result::Result<(), E> + Sync,
    ) -> Result<std::result::Result<(), E>> {
        let mut enc = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("readback"),
            });
        let pending = self.record_read_back(&mut enc, buffer, offset, out.len(), elem_bytes);
        let index = self.queue.submit([enc.finish()]);
        self.finish_read_back(pending, index, out, read).await
    }

    /// The first half of [`GpuContext::read_back_par`]: records into `enc` the copies of
    /// `len` elements of `elem_bytes` bytes from `offset` of `buffer` into staging memory, so
    /// that a download can ride in the same submission as the work that produces the data
    /// (behind nothing another thread queues meanwhile). Submit `enc`, then pass the
    /// submission's index to [`GpuContext::finish_read_back`].
    pub fn record_read_back(
        &self,
        enc: &mut wgpu::CommandEncoder,
        buffer: &wgpu::Buffer,
        offset: u64,
        len: usize,
        elem_bytes: usize,
    ) -> PendingReadback {
        let label = "readback";
        let bytes = (len * elem_bytes) as u64;
        // Pieces of the pool's size (a whole number of elements), each its own staging buffer:
        // pooled ones where a piece fills one, else fresh ones of the piece's size.
        let per = ((READBACK_PIECE as usize) / elem_bytes.max(1)).max(1);
        let piece = (per * elem_bytes) as u64;
        let mut stagings = Vec::new();
        let mut at = 0u64;
        while at < bytes {
            let len = piece.min(bytes - at);
            let size = len.next_multiple_of(4);
            let pooled = if size <= READBACK_PIECE && len >= READBACK_PIECE / 8 {
                let buf = self
                    .readback_pool
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .pop();
                Some(buf.unwrap_or_else(|| {
                    self.device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("readback (pooled)"),
                        size: READBACK_PIECE,
                        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                        mapped_at_creation: false,
                    })
                }))
            } else {
                None
            };
            let is_pooled = pooled.is_some();
            let staging = pooled.unwrap_or_else(|| {
                self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(label),
                    size,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            });
            enc.copy_buffer_to_buffer(buffer, offset + at, &staging, 0, size);
            stagings.push((staging, len as usize, is_pooled));
            at += len;
        }
        PendingReadback { stagings, per, len }
    }

    /// The second half of [`GpuContext::read_back_par`]: waits for submission `index` (which
    /// holds the copies `pending` recorded), maps the staging memory and hands it to `read` on
    /// the host's threads, as `read_back_par` does. `out` must have the recorded length.
    pub async fn finish_read_back<T: Send, E: Send>(
        &self,
        pending: PendingReadback,
        index: wgpu::SubmissionIndex,
        out: &mut [T],
        read: impl Fn(&[u8], &mut [T], usize) -> std::result::Result<(), E> + Sync,
    ) -> Result<std::result::Result<(), E>> {
        let label = "readback";
        let PendingReadback { stagings, per, len } = pending;
        if out.len() != len {
            return Err(GpuError::InvalidInput(format!(
                "a readback of {len} elements into {} places",
                out.len()
            )));
        }
        if stagings.is_empty() {
            return Ok(Ok(()));
        }
        let mut receivers = Vec::new();
        for (staging, _, _) in &stagings {
            let (tx, rx) = futures_channel::oneshot::channel();
            staging.map_async(wgpu::MapMode::Read, .., move |r| {
                let _ = tx.send(r);
            });
            receivers.push(rx);
        }
        let t_wait = Instant::now();
        self.mapped(index, receivers, label).await?;
        let waited = t_wait.elapsed().as_secs_f64();
        let mut views = Vec::with_capacity(stagings.len());
        for (staging, len, _) in &stagings {
            let view = staging
                .slice(..)
                .get_mapped_range()
                .map_err(|e| GpuError::Readback {
                    label: label.into(),
                    message: e.to_string(),
                })?;
            views.push((view, *len));
        }
        let t_read = Instant::now();
        let read_view =
            |(k, ((view, len), out)): (usize, (&(wgpu::BufferView, usize), &mut [T]))| {
                read(&view[..*len], out, k * per)
            };
        #[cfg(not(target_arch = "wasm32"))]
        let result = views
            .par_iter()
            .zip(out.par_chunks_mut(per))
            .enumerate()
            .try_for_each(read_view);
        #[cfg(target_arch = "wasm32")]
        let result = views
            .iter()
            .zip(out.chunks_mut(per))
            .enumerate()
            .try_for_each(read_view);
        drop(views);
        tracing::debug!(
            bytes = stagings.iter().map(|s| s.1).sum::<usize>(),
            pieces = stagings.len(),
            wait_ms = waited * 1e3,
            map_ms = (t_read - t_wait).as_secs_f64() * 1e3 - waited * 1e3,
            read_ms = t_read.elapsed().as_secs_f64() * 1e3,
            "readback"
        );
        let mut pool = self
            .readback_pool
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for (staging, _, is_pooled) in stagings {
            staging.unmap();
            if is_pooled && pool.len() < READBACK_POOL_MAX {
                pool.push(staging);
            }
        }
        Ok(result)
    }

    /// Waits until every staging buffer of a readback is mapped: natively by blocking in the
    /// driver until submission `index` is done, or, with
    /// [`GpuContext::set_yielding_waits`], by polling without blocking and yielding to this
    /// thread's other futures between polls; on wasm32 the page's event loop maps them.
    async fn mapped(
        &self,
        index: wgpu::SubmissionIndex,
        receivers: Vec<MapReceiver>,
        label: &str,
    ) -> Result<()> {
        let dropped = || GpuError::Readback {
            label: label.into(),
            message: "map callback dropped".into(),
        };
        let failed = |e: wgpu::BufferAsyncError| GpuError::Readback {
            label: label.into(),
            message: e.to_string(),
        };
        #[cfg(not(target_arch = "wasm32"))]
        if self
            .yielding_waits
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            for mut rx in receivers {
                loop {
                    match rx.try_recv() {
                        Ok(Some(r)) => break r.map_err(failed)?,
                        Ok(None) => {
                            self.device
                                .poll(wgpu::PollType::Poll)
                                .map_err(|e| GpuError::Poll(e.to_string()))?;
                            YieldNow(false).await;
                        }
                        Err(_) => return Err(dropped()),
                    }
                }
            }
            return self.check_device();
        }
        self.wait_for(index)?;
        for rx in receivers {
            rx.await.map_err(|_| dropped())?.map_err(failed)?;
        }
        Ok(())
    }
}

/// The receiving end of a staging buffer's map callback.
type MapReceiver =
    futures_channel::oneshot::Receiver<std::result::Result<(), wgpu::BufferAsyncError>>;

/// Pending once (waking itself at once), then ready: lets the other futures of a joined
/// group run between two polls of the device.
#[cfg(not(target_arch = "wasm32"))]
struct YieldNow(bool);

#[cfg(not(target_arch = "wasm32"))]
impl std::future::Future for YieldNow {
    type Output = ();
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if self.0 {
            return std::task::Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    }
}
