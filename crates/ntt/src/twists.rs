//! A plan's table of all twists (its two segments: `TwistSource`), built on the GPU from
//! its two small tables by the elementwise kernel's op 4: one multiplication an entry, where
//! the host would take `2^log_n` multiplications and the table's upload.

use zkgpu_runtime::{dispatch, grid, wgpu};

use crate::engine::ELEMENTWISE;
use crate::params::{EW_WG, EwParams};
use crate::plan::TwistSource;
use crate::{ELEMENT_BYTES, GpuNtt, NttField, Result};
use zkgpu_shaders::contract::ntt_elementwise as ew;

impl<F: NttField> GpuNtt<F> {
    /// The table of `source`'s twists, from `tables`: its segments computed by one dispatch
    /// each, submitted now (queue order puts them before any transform that reads them).
    /// Compiles both of the engine's pipelines side by side first, so that a first transform
    /// waits for the slower of the two, not their sum.
    pub(crate) async fn build_twists(
        &self,
        tables: &wgpu::Buffer,
        source: TwistSource,
    ) -> Result<wgpu::Buffer> {
        self.warm_up().await?;
        let pipeline = self.kernel(ELEMENTWISE).await?;
        let n = 1u64 << source.log_n;
        let entries = source.entries();
        let twists = self
            .ctx
            .storage_zeroed("ntt twists", entries * ELEMENT_BYTES)?;
        // Page 0 is the twist table, page 1 the tables: a page of 2^page_log elements holds
        // either (the tables of a small transform of narrow passes can outnumber its twists).
        let table_len = tables.size() / ELEMENT_BYTES;
        let page_log = entries
            .next_power_of_two()
            .max(table_len.next_power_of_two())
            .trailing_zeros();
        let base = 1u32 << page_log;
        // (entries, offset, hi, lo, tw_k, tw_s): the first pass's segment in its output
        // order, then the strided one.
        let mut segments = vec![(n, 0u64, source.hi, source.lo, source.first_k, 0)];
        if let Some((hi, lo)) = source.strided {
            segments.push((n >> source.first_k, n, hi, lo, 0, source.first_k));
        }
        let mut enc = self
            .ctx
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("ntt twist table"),
            });
        let max = self.ctx.limits().max_compute_workgroups_per_dimension;
        for (len, offset, hi, lo, tw_k, tw_s) in segments {
            let len = len as u32;
            let (gx, gy, _) = grid(len, EW_WG, max);
            let params = self.ctx.uniform_buffer(
                "ntt twist table params",
                &EwParams {
                    op: 4,
                    len,
                    grid_x: gx,
                    a_off: offset as u32,
                    b_off: base + hi,
                    d_off: base + lo,
                    page_log,
                    h: source.h,
                    tw_k,
                    tw_s,
                    ..EwParams::default()
                },
            );
            let bind = self.ctx.bind_group(
                &pipeline,
                &[
                    (ew::EW_DATA, &twists),
                    (ew::EW_DATA1, tables),
                    (ew::EW_DATA2, &self.placeholders[2]),
                    (ew::EW, &params),
                ],
            );
            dispatch(
                &mut enc,
                "ntt twist table",
                &pipeline,
                &bind,
                (gx, gy),
                None,
            );
        }
        self.ctx.queue().submit([enc.finish()]);
        Ok(twists)
    }
}
