//! The one-call transforms from host memory: `fft` / `ifft` (and their futures) over an
//! ark-poly domain, the upload, the transform and the download in one submission.

#[cfg(not(target_arch = "wasm32"))]
use zkgpu_runtime::BlockOn;

use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use web_time::Instant;

use crate::{Direction, GpuNtt, NttField, Radix2Domain, Result};

impl<F: NttField> GpuNtt<F> {
    /// `domain.fft_in_place(values)` on the GPU: the same resizing (to the domain's size,
    /// zero-padding a shorter input and, as arkworks does, dropping the elements of a longer
    /// one) and the same result. The result is written into `values`' memory (after an
    /// error its elements are unspecified). Blocks this thread until the GPU is done (native
    /// only; [`GpuNtt::fft_async`] is the same as a future, for the browser).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn fft(&self, domain: &impl Radix2Domain<F>, values: &mut Vec<F>) -> Result<()> {
        self.fft_async(domain, values).block_on()
    }

    /// [`GpuNtt::fft`] as a future.
    pub async fn fft_async(
        &self,
        domain: &impl Radix2Domain<F>,
        values: &mut Vec<F>,
    ) -> Result<()> {
        self.host_transform(domain.radix2()?, values, Direction::Forward)
            .await
    }

    /// `domain.ifft_in_place(values)` on the GPU (same resizing and result); blocks (native
    /// only; [`GpuNtt::ifft_async`] is the future).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn ifft(&self, domain: &impl Radix2Domain<F>, values: &mut Vec<F>) -> Result<()> {
        self.ifft_async(domain, values).block_on()
    }

    /// [`GpuNtt::ifft`] as a future.
    pub async fn ifft_async(
        &self,
        domain: &impl Radix2Domain<F>,
        values: &mut Vec<F>,
    ) -> Result<()> {
        self.host_transform(domain.radix2()?, values, Direction::Inverse)
            .await
    }

    pub(crate) async fn host_transform(
        &self,
        domain: &Radix2EvaluationDomain<F>,
        values: &mut Vec<F>,
        dir: Direction,
    ) -> Result<()> {
        values.resize(domain.size(), F::zero());
        let start = Instant::now();
        let mut dv = self.upload_beside_setup(domain, dir, values)?;
        let uploaded = start.elapsed().as_secs_f64();
        // The transform and the download's copies in one submission; the result is unpacked
        // into `values` (already the domain's size).
        let mut enc = self.encoder();
        self.record_transform(&mut enc, &mut dv, domain, dir, None)
            .await?;
        let pending = self.record_download(&mut enc, &dv, 0)?;
        let recorded = start.elapsed().as_secs_f64();
        let (_, submission) = self.submit_indexed(enc)?;
        self.finish_download_into(pending, submission, values)
            .await?;
        tracing::debug!(
            log_n = domain.log_size_of_group,
            upload_ms = uploaded * 1e3,
            record_ms = (recorded - uploaded) * 1e3,
            run_and_download_ms = (start.elapsed().as_secs_f64() - recorded) * 1e3,
            "transform from host"
        );
        Ok(())
    }

    /// Uploads `values`; on a first call (no plan of `domain` in direction `dir` yet, native
    /// only) the plan and the pass's pipeline are made on a thread beside the upload: the
    /// upload is the host's memory work, pipeline creation the driver's (tens of
    /// milliseconds in a new device even from the pipeline cache), so a first call waits for
    /// the longer of the two instead of both.
    fn upload_beside_setup(
        &self,
        domain: &Radix2EvaluationDomain<F>,
        dir: Direction,
        values: &[F],
    ) -> Result<crate::DeviceVec<F>> {
        #[cfg(not(target_arch = "wasm32"))]
        if domain.size() > 1 && !self.has_plan(domain, dir) {
            return std::thread::scope(|s| {
                let setup = s.spawn(|| {
                    self.plan(domain, dir).block_on()?;
                    self.kernel(crate::engine::PASS).block_on().map(drop)
                });
                let uploaded = self.upload(values);
                setup
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
                uploaded
            });
        }
        #[cfg(target_arch = "wasm32")]
        let _ = (domain, dir);
        self.upload(values)
    }
}
