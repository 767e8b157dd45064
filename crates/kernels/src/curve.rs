//! The curve VM on the GPU (`shaders/kernels/curve_vm.wgsl`): applies a group's formula
//! programs to many points at once, or accumulates chains of points per invocation.

use std::marker::PhantomData;
use zkgpu_shaders::contract::curve_vm as vm;

use zkgpu_curves::{
    GpuCurve, Program, decode_projective, encode_affine, encode_affine_packed, encode_projective,
};
use zkgpu_limbs::LimbEncode;
use zkgpu_shaders::contract::curve_vm::VmParams;
use zkgpu_shaders::{Composed, curve_vm_fq2};

use zkgpu_runtime::{Checks, GpuContext, GpuError, Pipeline, Result, grid, wgpu};

/// One dispatch of the VM: what each invocation loads, runs and stores.
#[derive(Clone, Copy, Debug)]
pub struct VmJob<'a> {
    /// Entry point: `madd`, `add` or `dbl`.
    pub entry: &'a str,
    /// Per invocation, the first registers (limbs, `n_load` registers each).
    pub init: &'a [u32],
    /// Registers loaded from `init` per invocation.
    pub n_load: u32,
    /// Registers loaded before each run from `stream` (0: none).
    pub stream_regs: u32,
    /// First register the stream fills.
    pub stream_reg: u32,
    /// The stream: records of `stream_regs` registers, each register packed (canonical
    /// values in `C::packed_reg_words()` 32-bit words, as [`encode_affine_packed`] writes
    /// them); run `s` of invocation `i` reads record `(i * steps + s) mod records` (a stream
    /// shorter than `count * steps` records repeats).
    pub stream: &'a [u32],
    /// Runs per invocation.
    pub steps: u32,
    /// Registers stored per invocation.
    pub n_store: u32,
}

/// Timing of one [`CurveVm::bench`] run.
#[derive(Clone, Copy, Debug)]
pub struct VmBench {
    /// Median GPU seconds.
    pub seconds: f64,
    /// Formula applications per second.
    pub ops_per_second: f64,
    /// Seconds to create the pipeline when the context first built it.
    pub pipeline_seconds: f64,
}

/// The formula programs of group `C`, uploaded, with their interpreter pipeline.
#[derive(Debug)]
pub struct CurveVm<C: GpuCurve> {
    ctx: GpuContext,
    workgroup_size: u32,
    program: Program<C::Base>,
    module: Composed,
    code: wgpu::Buffer,
    consts: u32,
    _curve: PhantomData<C>,
}

const DEFAULT_WORKGROUP_SIZE: u32 = 64;

impl<C: GpuCurve> CurveVm<C> {
    /// Uploads `C`'s program.
    pub fn new(ctx: &GpuContext) -> Result<Self> {
        Self::with_workgroup_size(ctx, DEFAULT_WORKGROUP_SIZE)
    }

    /// Uploads `C`'s program for the context's arithmetic; dispatches use workgroups of
    /// `workgroup_size` invocations.
    pub fn with_workgroup_size(ctx: &GpuContext, workgroup_size: u32) -> Result<Self> {
        Self::with_program(ctx, C::program(ctx.arith()), workgroup_size)
    }

    /// Uploads another program over `C`'s base field (for measuring the interpreter itself,
    /// or for running another arithmetic's program: the module has the VM's Karatsuba
    /// instructions where the program uses them, `Program::fq2_ops`).
    pub fn with_program(
        ctx: &GpuContext,
        program: &Program<C::Base>,
        workgroup_size: u32,
    ) -> Result<Self> {
        if workgroup_size == 0 || workgroup_size > ctx.limits().max_compute_workgroup_size_x {
            return Err(GpuError::InvalidInput(format!(
                "workgroup size {workgroup_size} is outside the device's range"
            )));
        }
        let prog = program;
        let (words, consts) = zkgpu_curves::program_words::<C>(prog);
        Ok(Self {
            ctx: ctx.clone(),
            workgroup_size,
            program: program.clone(),
            module: curve_vm_fq2(C::GROUP, ctx.arith(), program.fq2_ops()),
            code: ctx.storage_buffer(&format!("{} vm code", C::ID), &words)?,
            consts,
            _curve: PhantomData,
        })
    }

    fn words() -> u32 {
        <C::Base as LimbEncode>::WORDS as u32
    }

    /// Registers per coordinate-form point: accumulator (4 coordinates) and affine
    /// ([`GpuCurve::AFFINE_REGS`]).
    pub fn acc_regs() -> u32 {
        4 * C::DEGREE as u32
    }
    /// Registers of an affine point.
    pub fn affine_regs() -> u32 {
        C::AFFINE_REGS as u32
    }

    async fn prepare(&self, job: &VmJob<'_>, checks: Checks) -> Result<Prepared> {
        let w = Self::words();
        let per_inv = (job.n_load * w) as usize;
        if job.n_load == 0 || !job.init.len().is_multiple_of(per_inv) {
            return Err(GpuError::InvalidInput(format!(
                "init holds {} words, not a whole number of {}-register invocations",
                job.init.len(),
                job.n_load
            )));
        }
        let count = u32::try_from(job.init.len() / per_inv)
            .map_err(|_| GpuError::InvalidInput("too many invocations".into()))?;
        let record = job.stream_regs as usize * C::packed_reg_words();
        let stream_records = job.stream.len().checked_div(record).unwrap_or(0);
        if record > 0 && (stream_records == 0 || !job.stream.len().is_multiple_of(record)) {
            return Err(GpuError::InvalidInput(format!(
                "stream holds {} words, not a whole, non-zero number of {}-register records",
                job.stream.len(),
                job.stream_regs
            )));
        }
        let stream_records = u32::try_from(stream_records)
            .map_err(|_| GpuError::InvalidInput("stream too long".into()))?;
        let entry = self
            .program
            .entry(job.entry)
            .map_err(|e| GpuError::InvalidInput(e.to_string()))?;
        let pipeline = self
            .ctx
            .pipeline(
                &self.module,
                vm::entry::CURVE_VM_EXEC,
                checks,
                &[("WORKGROUP_SIZE", f64::from(self.workgroup_size))],
            )
            .await?;
        let (x, y, row_stride) = grid(
            count,
            self.workgroup_size,
            self.ctx.limits().max_compute_workgroups_per_dimension,
        );
        let init = self.ctx.storage_buffer("vm init", job.init)?;
        let stream = self.ctx.storage_buffer("vm stream", job.stream)?;
        let out_bytes = u64::from(count) * u64::from(job.n_store * w) * 4;
        let out = self.ctx.storage_zeroed("vm out", out_bytes)?;
        let params = self.ctx.uniform_buffer(
            "vm params",
            &VmParams {
                count,
                row_stride,
                entry,
                consts: self.consts,
                n_load: job.n_load,
                n_store: job.n_store,
                steps: job.steps,
                stream_reg: job.stream_reg,
                stream_regs: job.stream_regs,
                stream_records,
                ..VmParams::default()
            },
        );
        let bind = self.ctx.bind_group(
            &pipeline,
            &[
                (vm::VM_CODE, &self.code),
                (vm::VM_INIT, &init),
                (vm::VM_STREAM, &stream),
                (vm::VM_OUT, &out),
                (vm::PARAMS, &params),
            ],
        );
        Ok(Prepared {
            pipeline,
            bind,
            out,
            out_bytes,
            grid: (x, y),
            count,
        })
    }

    /// Runs `job` and returns the stored registers' limbs.
    pub async fn exec(&self, job: &VmJob<'_>, checks: Checks) -> Result<Vec<u32>> {
        let p = self.prepare(job, checks).await?;
        self.ctx
            .timed_pass(vm::entry::CURVE_VM_EXEC, |pass| {
                pass.set_pipeline(&p.pipeline.pipeline);
                pass.set_bind_group(0, &p.bind, &[]);
                pass.dispatch_workgroups(p.grid.0, p.grid.1, 1);
            })
            .await?;
        self.ctx.read_back(&p.out, p.out_bytes).await
    }

    /// Times `job`: one warm-up, then `runs` timed runs (median).
    pub async fn bench(&self, job: &VmJob<'_>, runs: usize, checks: Checks) -> Result<VmBench> {
        let p = self.prepare(job, checks).await?;
        let mut times = Vec::new();
        for i in 0..=runs.max(1) {
            let t = self
                .ctx
                .timed_pass(vm::entry::CURVE_VM_EXEC, |pass| {
                    pass.set_pipeline(&p.pipeline.pipeline);
                    pass.set_bind_group(0, &p.bind, &[]);
                    pass.dispatch_workgroups(p.grid.0, p.grid.1, 1);
                })
                .await?;
            if i > 0 {
                times.push(t);
            }
        }
        times.sort_by(f64::total_cmp);
        let seconds = times[times.len() / 2];
        Ok(VmBench {
            seconds,
            ops_per_second: f64::from(p.count) * f64::from(job.steps) / seconds,
            pipeline_seconds: self
                .ctx
                .pipeline_seconds(&self.module.name, vm::entry::CURVE_VM_EXEC, checks)
                .unwrap_or(0.0),
        })
    }

    /// `p[i] + q[i]` by the `add` program.
    pub async fn add(
        &self,
        p: &[C::Projective],
        q: &[C::Projective],
    ) -> Result<Vec<C::Projective>> {
        if p.len() != q.len() {
            return Err(GpuError::InvalidInput(format!(
                "{} and {} points",
                p.len(),
                q.len()
            )));
        }
        let (ep, eq) = (encode_projective::<C>(p), encode_projective::<C>(q));
        let init = interleave(&ep, C::acc_words(), &eq, C::acc_words());
        self.run_points("add", &init, 2 * Self::acc_regs()).await
    }

    /// `p[i] + q[i]` by the `madd` program (`q` affine).
    pub async fn madd(&self, p: &[C::Projective], q: &[C::Affine]) -> Result<Vec<C::Projective>> {
        if p.len() != q.len() {
            return Err(GpuError::InvalidInput(format!(
                "{} and {} points",
                p.len(),
                q.len()
            )));
        }
        let (ep, eq) = (encode_projective::<C>(p), encode_affine::<C>(q));
        let init = interleave(&ep, C::acc_words(), &eq, C::affine_words());
        self.run_points("madd", &init, Self::acc_regs() + Self::affine_regs())
            .await
    }

    /// `2 p[i]` by the `dbl` program.
    pub async fn double(&self, p: &[C::Projective]) -> Result<Vec<C::Projective>> {
        self.run_points("dbl", &encode_projective::<C>(p), Self::acc_regs())
            .await
    }

    /// Per invocation `i`: `start[i] + points[i * steps] + ... + points[i * steps + steps - 1]`,
    /// one `madd` per point: the shape of MSM bucket accumulation.
    pub async fn madd_chain(
        &self,
        start: &[C::Projective],
        points: &[C::Affine],
    ) -> Result<Vec<C::Projective>> {
        if start.is_empty() || !points.len().is_multiple_of(start.len()) {
            return Err(GpuError::InvalidInput(format!(
                "{} points do not split evenly over {} chains",
                points.len(),
                start.len()
            )));
        }
        let steps = u32::try_from(points.len() / start.len())
            .map_err(|_| GpuError::InvalidInput("chain too long".into()))?;
        let init = encode_projective::<C>(start);
        let stream = encode_affine_packed::<C>(points);
        let job = VmJob {
            entry: "madd",
            init: &init,
            n_load: Self::acc_regs(),
            stream_regs: Self::affine_regs(),
            stream_reg: Self::acc_regs(),
            stream: &stream,
            steps,
            n_store: Self::acc_regs(),
        };
        let out = self.exec(&job, Checks::Default).await?;
        decode_projective::<C>(&out)
            .map_err(|e| GpuError::Device(format!("GPU output does not decode: {e}")))
    }

    async fn run_points(
        &self,
        entry: &str,
        init: &[u32],
        n_load: u32,
    ) -> Result<Vec<C::Projective>> {
        let job = VmJob {
            entry,
            init,
            n_load,
            stream_regs: 0,
            stream_reg: 0,
            stream: &[],
            steps: 1,
            n_store: Self::acc_regs(),
        };
        let out = self.exec(&job, Checks::Default).await?;
        decode_projective::<C>(&out)
            .map_err(|e| GpuError::Device(format!("GPU output does not decode: {e}")))
    }
}

struct Prepared {
    pipeline: std::sync::Arc<Pipeline>,
    bind: wgpu::BindGroup,
    out: wgpu::Buffer,
    out_bytes: u64,
    grid: (u32, u32),
    count: u32,
}

/// Alternates records of `a` (`wa` words each) and `b` (`wb` words each).
fn interleave(a: &[u32], wa: usize, b: &[u32], wb: usize) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    for (x, y) in a.chunks_exact(wa).zip(b.chunks_exact(wb)) {
        out.extend_from_slice(x);
        out.extend_from_slice(y);
    }
    out
}
