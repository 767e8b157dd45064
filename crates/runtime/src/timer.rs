//! Timestamp queries around compute passes: one engine-independent way to time the passes of
//! a command buffer on devices that have timestamps.

use crate::{GpuContext, Result};

/// Timestamp queries for up to `passes` compute passes of one command buffer: pass `k` writes
/// queries `2k` (its beginning) and `2k + 1` (its end); [`PassTimer::resolve`] copies them
/// into a buffer in the same encoder and [`PassTimer::seconds`] reads them after the
/// submission has run.
#[derive(Debug)]
pub struct PassTimer {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    passes: u32,
}

impl GpuContext {
    /// A timer for `passes` compute passes, or None where the device has no timestamp queries
    /// (callers then time submit to done on the host).
    pub fn pass_timer(&self, label: &str, passes: u32) -> Option<PassTimer> {
        if !self.has_timestamps() || passes == 0 {
            return None;
        }
        let set = self.device().create_query_set(&wgpu::QuerySetDescriptor {
            label: Some(label),
            ty: wgpu::QueryType::Timestamp,
            count: 2 * passes,
        });
        let resolve = self.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: 16 * u64::from(passes),
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        Some(PassTimer {
            set,
            resolve,
            passes,
        })
    }
}

impl PassTimer {
    /// The timestamp writes of pass `pass`: its beginning where `begin`, its end where `end`
    /// (a span of several passes writes the first's beginning and the last's end).
    pub fn writes(
        &self,
        pass: u32,
        begin: bool,
        end: bool,
    ) -> wgpu::ComputePassTimestampWrites<'_> {
        debug_assert!(pass < self.passes, "pass {pass} of {}", self.passes);
        wgpu::ComputePassTimestampWrites {
            query_set: &self.set,
            beginning_of_pass_write_index: begin.then_some(2 * pass),
            end_of_pass_write_index: end.then_some(2 * pass + 1),
        }
    }

    /// Records the copy of every query into the timer's buffer (after the timed passes).
    pub fn resolve(&self, enc: &mut wgpu::CommandEncoder) {
        enc.resolve_query_set(&self.set, 0..2 * self.passes, &self.resolve, 0);
    }

    /// Each pass's GPU time in seconds (end minus beginning; zero where a driver reports
    /// zeros or a pass wrote no queries), once the submission holding the passes has run.
    pub async fn seconds(&self, ctx: &GpuContext) -> Result<Vec<f64>> {
        let ticks: Vec<u64> = ctx
            .read_back(&self.resolve, 16 * u64::from(self.passes))
            .await?;
        let period = f64::from(ctx.queue().get_timestamp_period()) * 1e-9;
        Ok(ticks
            .as_chunks::<2>()
            .0
            .iter()
            .map(|[begin, end]| end.saturating_sub(*begin) as f64 * period)
            .collect())
    }
}
