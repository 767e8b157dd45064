//! Chains of multiplications over packed words (`shaders/kernels/arith_check.wgsl`) in one
//! field arithmetic: how the curve VM multiplies, for the `arith field` benchmark and the
//! arithmetics' tests.

use zkgpu_runtime::{Arith, Checks, GpuContext, GpuError, Pipeline, Result, grid, wgpu};
use zkgpu_shaders::contract::arith_check::{self as chk, ArithParams};
use zkgpu_shaders::{Composed, FieldModule, arith_check};

use crate::field::ChainBench;

const WORKGROUP_SIZE: u32 = 64;
const OVERRIDES: &[(&str, f64)] = &[("WORKGROUP_SIZE", WORKGROUP_SIZE as f64)];
const ENTRY: &str = chk::entry::ARITH_MUL_CHAIN;

/// `a b^reps` elementwise over packed words, in one arithmetic.
#[derive(Debug)]
pub struct PackedChain {
    ctx: GpuContext,
    words: usize,
    module: Composed,
}

impl PackedChain {
    /// The chain over the prime field `field` in `arith`: [`GpuError::Arith`] where the
    /// context found `arith` unusable, [`GpuError::InvalidInput`] for an extension field.
    pub fn new(ctx: &GpuContext, field: FieldModule, arith: Arith) -> Result<Self> {
        if !field.is_prime() {
            return Err(GpuError::InvalidInput(format!(
                "{} is not a prime field: its elements have no packed form",
                field.id()
            )));
        }
        ctx.check_arith(arith)?;
        Ok(Self {
            ctx: ctx.clone(),
            words: field.packed_words() as usize,
            module: arith_check(field, arith),
        })
    }

    async fn setup(
        &self,
        a: &[u32],
        b: &[u32],
        reps: u32,
    ) -> Result<(
        std::sync::Arc<Pipeline>,
        wgpu::BindGroup,
        wgpu::Buffer,
        (u32, u32),
    )> {
        if a.len() != b.len() || !a.len().is_multiple_of(self.words) {
            return Err(GpuError::InvalidInput(format!(
                "operands of {} and {} words are not equal counts of {}-word elements",
                a.len(),
                b.len(),
                self.words
            )));
        }
        let count = u32::try_from(a.len() / self.words)
            .map_err(|_| GpuError::InvalidInput("more than 2^32 elements".into()))?;
        let pipeline = self
            .ctx
            .pipeline(&self.module, ENTRY, Checks::TrustedLoops, OVERRIDES)
            .await?;
        let (x, y, row_stride) = grid(
            count,
            WORKGROUP_SIZE,
            self.ctx.limits().max_compute_workgroups_per_dimension,
        );
        let buf_a = self.ctx.storage_buffer("packed chain a", a)?;
        let buf_b = self.ctx.storage_buffer("packed chain b", b)?;
        let out = self
            .ctx
            .storage_zeroed("packed chain out", (a.len() * 4) as u64)?;
        let params = self.ctx.uniform_buffer(
            "packed chain params",
            &ArithParams {
                count,
                reps,
                row_stride,
                ..ArithParams::default()
            },
        );
        let bg = self.ctx.bind_group(
            &pipeline,
            &[
                (chk::CHECK_A, &buf_a),
                (chk::CHECK_B, &buf_b),
                (chk::CHECK_OUT, &out),
                (chk::CHECK, &params),
            ],
        );
        Ok((pipeline, bg, out, (x, y)))
    }

    /// `a b^reps` for packed canonical elements `a` and `b` (equal lengths).
    pub async fn run(&self, a: &[u32], b: &[u32], reps: u32) -> Result<Vec<u32>> {
        let (pipeline, bg, out, (x, y)) = self.setup(a, b, reps).await?;
        self.ctx
            .timed_pass(ENTRY, |pass| {
                pass.set_pipeline(&pipeline.pipeline);
                pass.set_bind_group(0, &bg, &[]);
                pass.dispatch_workgroups(x, y, 1);
            })
            .await?;
        self.ctx.read_back(&out, (a.len() * 4) as u64).await
    }

    /// Times `a b^reps`: one warm-up run, then `runs` timed ones; the median.
    pub async fn bench(&self, a: &[u32], b: &[u32], reps: u32, runs: usize) -> Result<ChainBench> {
        let (pipeline, bg, _out, (x, y)) = self.setup(a, b, reps).await?;
        let pipeline_seconds = self
            .ctx
            .pipeline_seconds(&self.module.name, ENTRY, Checks::TrustedLoops)
            .unwrap_or(0.0);
        let count = (a.len() / self.words) as u32;
        let kernel = (ENTRY, &*pipeline, &bg);
        ChainBench::measure(
            &self.ctx,
            kernel,
            (x, y),
            (count, reps, runs),
            pipeline_seconds,
        )
        .await
    }
}
