//! A plan's table of all twists, built on the GPU from its two small tables by the
//! elementwise kernel's op 4: one multiplication an entry, where the host would take
//! `2^log_n` multiplications and the table's upload.

use zkgpu_runtime::{dispatch, grid, wgpu};

use crate::engine::ELEMENTWISE;
use crate::params::{EW_WG, EwParams};
use crate::plan::TwistSource;
use crate::{ELEMENT_BYTES, GpuNtt, NttField, Result};
use zkgpu_shaders::contract::ntt_elementwise as ew;

impl<F: NttField> GpuNtt<F> {
    /// The table of `source`'s `2^log_n` twists, from `tables`: computed by one dispatch,
    /// submitted now (queue order puts it before any transform that reads it). Compiles
    /// both of the engine's pipelines side by side first, so that a first transform waits for
    /// the slower of the two, not their sum.
    pub(crate) async fn build_twists(
        &self,
        tables: &wgpu::Buffer,
        source: TwistSource,
    ) -> Result<wgpu::Buffer> {
        self.warm_up().await?;
        let pipeline = self.kernel(ELEMENTWISE).await?;
        let n = 1u64 << source.log_n;
        let twists = self.ctx.storage_zeroed("ntt twists", n * ELEMENT_BYTES)?;
        // Page 0 is the twist table, page 1 the tables: a page of 2^page_log elements holds
        // either (the tables of a small transform of narrow passes can outnumber its twists).
        let table_len = tables.size() / ELEMENT_BYTES;
        let page_log = source
            .log_n
            .max(table_len.next_power_of_two().trailing_zeros());
        let base = 1u32 << page_log;
        let len = n as u32;
        let max = self.ctx.limits().max_compute_workgroups_per_dimension;
        let (gx, gy, _) = grid(len, EW_WG, max);
        let params = self.ctx.uniform_buffer(
            "ntt twist table params",
            &EwParams {
                op: 4,
                len,
                grid_x: gx,
                a_off: 0,
                b_off: base + source.hi,
                d_off: base + source.lo,
                page_log,
                h: source.h,
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
        let mut enc = self
            .ctx
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("ntt twist table"),
            });
        dispatch(
            &mut enc,
            "ntt twist table",
            &pipeline,
            &bind,
            (gx, gy),
            None,
        );
        self.ctx.queue().submit([enc.finish()]);
        Ok(twists)
    }
}
