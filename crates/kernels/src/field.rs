//! Elementwise field kernels (`shaders/kernels/field_ops.wgsl`): the GPU side of the field
//! tests and of the `arith field` benchmark (`zkgpu-benches`).

use zkgpu_shaders::contract::field_ops::{self as ops, FieldOpsParams};
use zkgpu_shaders::{Composed, FieldModule, field_ops};

use zkgpu_runtime::{Arith, Checks, GpuContext, GpuError, Pipeline, Result, grid, wgpu};

/// One elementwise operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldOp {
    /// `a + b`
    Add,
    /// `a - b`
    Sub,
    /// `-a`
    Neg,
    /// `2a`
    Double,
    /// `a b` (Montgomery)
    Mul,
    /// `a^2` (Montgomery)
    Square,
    /// `a R`
    ToMont,
    /// `a R^-1`
    FromMont,
    /// `a == 0`, one word (0 or 1) per element
    IsZero,
    /// `a == b`, one word per element
    Eq,
    /// `a b^reps` by `reps` dependent multiplications
    MulChain {
        /// Multiplications per element.
        reps: u32,
    },
}

impl FieldOp {
    /// The kernel's entry point.
    pub fn entry(self) -> &'static str {
        match self {
            FieldOp::Add => ops::entry::FIELD_ADD,
            FieldOp::Sub => ops::entry::FIELD_SUB,
            FieldOp::Neg => ops::entry::FIELD_NEG,
            FieldOp::Double => ops::entry::FIELD_DOUBLE,
            FieldOp::Mul => ops::entry::FIELD_MUL,
            FieldOp::Square => ops::entry::FIELD_SQUARE,
            FieldOp::ToMont => ops::entry::FIELD_TO_MONT,
            FieldOp::FromMont => ops::entry::FIELD_FROM_MONT,
            FieldOp::IsZero => ops::entry::FIELD_IS_ZERO,
            FieldOp::Eq => ops::entry::FIELD_EQ,
            FieldOp::MulChain { .. } => ops::entry::FIELD_MUL_CHAIN,
        }
    }

    /// Whether it reads `b`.
    pub fn binary(self) -> bool {
        matches!(
            self,
            FieldOp::Add | FieldOp::Sub | FieldOp::Mul | FieldOp::Eq | FieldOp::MulChain { .. }
        )
    }

    /// Whether it returns one 0/1 word per element instead of an element.
    pub fn predicate(self) -> bool {
        matches!(self, FieldOp::IsZero | FieldOp::Eq)
    }
}

/// Timing of one [`FieldKernels::bench_mul_chain`] run.
#[derive(Clone, Copy, Debug)]
pub struct ChainBench {
    /// Elements (invocations).
    pub count: u32,
    /// Multiplications per element.
    pub reps: u32,
    /// Median GPU seconds of the timed runs.
    pub seconds: f64,
    /// Field multiplications per second.
    pub mults_per_second: f64,
    /// Seconds it took to create the pipeline when this context first built it.
    pub pipeline_seconds: f64,
}

impl ChainBench {
    /// Times one dispatch of `pipeline` over the grid `(x, y)` with `bg`: a warm-up run, then
    /// `runs` timed ones (at least one); the median, as the chain of `count` elements and
    /// `reps` multiplications each it ran.
    pub(crate) async fn measure(
        ctx: &GpuContext,
        (label, pipeline, bg): (&str, &Pipeline, &wgpu::BindGroup),
        (x, y): (u32, u32),
        (count, reps, runs): (u32, u32, usize),
        pipeline_seconds: f64,
    ) -> Result<Self> {
        let mut times = Vec::with_capacity(runs);
        for i in 0..=runs.max(1) {
            let t = ctx
                .timed_pass(label, |pass| {
                    pass.set_pipeline(&pipeline.pipeline);
                    pass.set_bind_group(0, bg, &[]);
                    pass.dispatch_workgroups(x, y, 1);
                })
                .await?;
            if i > 0 {
                times.push(t);
            }
        }
        times.sort_by(f64::total_cmp);
        let seconds = times[times.len() / 2];
        Ok(Self {
            count,
            reps,
            seconds,
            mults_per_second: f64::from(count) * f64::from(reps) / seconds,
            pipeline_seconds,
        })
    }
}

/// The elementwise kernels of one field.
#[derive(Debug)]
pub struct FieldKernels {
    ctx: GpuContext,
    field: FieldModule,
    module: Composed,
}

const WORKGROUP_SIZE: u32 = 64;

/// The field kernels' pipeline overrides: their `WORKGROUP_SIZE`.
const OVERRIDES: &[(&str, f64)] = &[("WORKGROUP_SIZE", WORKGROUP_SIZE as f64)];

impl FieldKernels {
    /// The kernels of `field` on `ctx`, in the context's arithmetic.
    pub fn new(ctx: &GpuContext, field: FieldModule) -> Self {
        Self {
            ctx: ctx.clone(),
            field,
            module: field_ops(field, ctx.arith()),
        }
    }

    /// The kernels of `field` in `arith`: [`GpuError::Arith`] where the context found it
    /// unusable.
    pub fn with_arith(ctx: &GpuContext, field: FieldModule, arith: Arith) -> Result<Self> {
        ctx.check_arith(arith)?;
        Ok(Self {
            ctx: ctx.clone(),
            field,
            module: field_ops(field, arith),
        })
    }

    /// The arithmetic the kernels multiply with.
    pub fn arith(&self) -> Arith {
        self.module.arith
    }

    /// u32 words per element.
    pub fn words(&self) -> usize {
        self.field.words() as usize
    }

    fn count_of(&self, a: &[u32]) -> Result<u32> {
        let w = self.words();
        if !a.len().is_multiple_of(w) {
            return Err(GpuError::InvalidInput(format!(
                "{} words is not a whole number of {}-word elements",
                a.len(),
                w
            )));
        }
        u32::try_from(a.len() / w)
            .map_err(|_| GpuError::InvalidInput("more than 2^32 elements".into()))
    }

    /// Prepares buffers and a bind group for `op` over `a` (and `b`).
    fn setup(
        &self,
        op: FieldOp,
        a: &[u32],
        b: &[u32],
        pipeline: &Pipeline,
    ) -> Result<(u32, wgpu::Buffer, wgpu::BindGroup, (u32, u32))> {
        let count = self.count_of(a)?;
        if op.binary() && b.len() != a.len() {
            return Err(GpuError::InvalidInput(format!(
                "operands differ in length: {} and {} words",
                a.len(),
                b.len()
            )));
        }
        let (x, y, row_stride) = grid(
            count,
            WORKGROUP_SIZE,
            self.ctx.limits().max_compute_workgroups_per_dimension,
        );
        let reps = match op {
            FieldOp::MulChain { reps } => reps,
            _ => 0,
        };
        let buf_a = self.ctx.storage_buffer("field_ops a", a)?;
        let buf_b = if op.binary() {
            Some(self.ctx.storage_buffer("field_ops b", b)?)
        } else {
            None
        };
        let out = self
            .ctx
            .storage_zeroed("field_ops out", (a.len() * 4) as u64)?;
        let params = self.ctx.uniform_buffer(
            "field_ops params",
            &FieldOpsParams {
                count,
                reps,
                row_stride,
                ..FieldOpsParams::default()
            },
        );
        let mut entries = vec![
            (ops::IN_A, &buf_a),
            (ops::OUT_WORDS, &out),
            (ops::PARAMS, &params),
        ];
        if let Some(bb) = &buf_b {
            entries.push((ops::IN_B, bb));
        }
        let bg = self.ctx.bind_group(pipeline, &entries);
        Ok((count, out, bg, (x, y)))
    }

    /// Runs `op` over the elements of `a` (and `b`), `words()` limbs each, and returns the
    /// output: elements, or one 0/1 word per element for predicates.
    pub async fn run(&self, op: FieldOp, a: &[u32], b: &[u32], checks: Checks) -> Result<Vec<u32>> {
        let pipeline = self
            .ctx
            .pipeline(&self.module, op.entry(), checks, OVERRIDES)
            .await?;
        let (count, out, bg, (x, y)) = self.setup(op, a, b, &pipeline)?;
        self.ctx
            .timed_pass(op.entry(), |pass| {
                pass.set_pipeline(&pipeline.pipeline);
                pass.set_bind_group(0, &bg, &[]);
                pass.dispatch_workgroups(x, y, 1);
            })
            .await?;
        let words: Vec<u32> = self.ctx.read_back(&out, (a.len() * 4) as u64).await?;
        if op.predicate() {
            Ok(words
                .chunks_exact(self.words())
                .take(count as usize)
                .map(|c| c[0])
                .collect())
        } else {
            Ok(words)
        }
    }

    /// Times `a b^reps` over `a.len() / words()` elements: one warm-up run, then `runs` timed
    /// runs; reports the median.
    pub async fn bench_mul_chain(
        &self,
        a: &[u32],
        b: &[u32],
        reps: u32,
        runs: usize,
        checks: Checks,
    ) -> Result<ChainBench> {
        let op = FieldOp::MulChain { reps };
        let pipeline = self
            .ctx
            .pipeline(&self.module, op.entry(), checks, OVERRIDES)
            .await?;
        let pipeline_seconds = self
            .ctx
            .pipeline_seconds(&self.module.name, op.entry(), checks)
            .unwrap_or(0.0);
        let (count, _out, bg, grid) = self.setup(op, a, b, &pipeline)?;
        let kernel = (ops::entry::FIELD_MUL_CHAIN, &*pipeline, &bg);
        ChainBench::measure(
            &self.ctx,
            kernel,
            grid,
            (count, reps, runs),
            pipeline_seconds,
        )
        .await
    }
}
