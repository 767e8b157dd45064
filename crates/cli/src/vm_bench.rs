//! `zkgpu bench vm`: the cost of each curve-VM instruction, in BLS12-381 Fq multiplications,
//! from synthetic programs run through the same interpreter (`shaders/kernels/curve_vm.wgsl`).

use ark_ff::UniformRand;
use ark_std::rand::{SeedableRng, rngs::StdRng};
use clap::Args;
use zkgpu_curves::Bls12_381G1;
use zkgpu_curves::vm::{Asm, Program, Reg};
use zkgpu_limbs::encode_slice;
use zkgpu_runtime::curve::{CurveVm, VmJob};
use zkgpu_runtime::{Checks, GpuContext};

type Fq = ark_bls12_381::Fq;

/// Arguments of `zkgpu bench vm`.
#[derive(Args, Debug)]
pub struct VmArgs {
    /// log2 of the number of invocations [default: 18 on a GPU, 8 on a software adapter].
    #[arg(long)]
    log_n: Option<u32>,
    /// Program runs per invocation.
    #[arg(long, default_value_t = 16)]
    steps: u32,
    /// Timed runs after a warm-up; the median is reported.
    #[arg(long, default_value_t = 5)]
    runs: usize,
}

/// The instruction kinds measured against MUL, each as `10 x (MUL; kind)`.
const KINDS: [&str; 6] = ["add", "sub", "dbl", "copy", "jnz", "ldc"];

fn programs() -> Program<Fq> {
    let mut a = Asm::<Fq>::new();
    let r = Reg;
    a.entry("mul20");
    for _ in 0..20 {
        a.mul(r(0), r(0), r(1));
    }
    a.halt();
    for kind in KINDS {
        a.entry(kind);
        for _ in 0..10 {
            a.mul(r(0), r(0), r(1));
            match kind {
                "add" => a.add(r(2), r(2), r(3)),
                "sub" => a.sub(r(2), r(2), r(3)),
                "dbl" => a.dbl(r(2), r(2)),
                "copy" => {
                    a.copy(r(2), r(3));
                }
                "jnz" => {
                    let next = a.label();
                    a.jnz(r(3), next);
                    a.place(next);
                }
                _ => a.load_const(r(2), Fq::from(3u64)),
            }
        }
        a.halt();
    }
    a.finish()
}

/// `zkgpu bench vm`.
pub fn run(args: &VmArgs) -> Result<(), Box<dyn std::error::Error>> {
    let ctx = GpuContext::from_env_blocking()?;
    let software = ctx.info().device_type == zkgpu_runtime::wgpu::DeviceType::Cpu;
    let log_n = args.log_n.unwrap_or(if software { 8 } else { 18 });
    if log_n > 22 {
        return Err("--log-n must be at most 22".into());
    }
    let n = 1usize << log_n;
    let prog = programs();
    let vm = CurveVm::<Bls12_381G1>::with_program(&ctx, &prog, 64)?;
    let mut rng = StdRng::seed_from_u64(3);
    let regs: Vec<Fq> = (0..n * 4).map(|_| Fq::rand(&mut rng)).collect();
    let init = encode_slice(&regs);
    let time = |entry: &str| -> Result<f64, Box<dyn std::error::Error>> {
        let job = VmJob {
            entry,
            init: &init,
            n_load: 4,
            stream_regs: 0,
            stream_reg: 0,
            stream: &[],
            steps: args.steps,
            n_store: 1,
        };
        Ok(pollster::block_on(vm.bench(&job, args.runs, Checks::TrustedLoops))?.seconds)
    };
    // Warm the clocks, then measure.
    time("mul20")?;
    let base = time("mul20")?;
    let per_mul = base / 20.0;
    let total_muls = (n as f64) * f64::from(args.steps) * 20.0;
    println!("adapter: {} ({:?})", ctx.info().name, ctx.info().backend);
    println!(
        "MUL through the VM: {:.3e} BLS12-381 Fq multiplications/s ({n} invocations x {} runs x 20)",
        total_muls / base,
        args.steps
    );
    println!("{:<6} {:>12} {:>16}", "instr", "ps / instr", "in MULs");
    for kind in KINDS {
        let t = time(kind)?;
        let extra = (t - base / 2.0) / 10.0;
        let per_instr = extra / (n as f64 * f64::from(args.steps));
        println!(
            "{kind:<6} {:>12.1} {:>16.3}",
            per_instr * 1e12,
            extra / per_mul
        );
    }
    println!(
        "(cost of one instruction of each kind per invocation, from 10 x (MUL; instr) against 20 x MUL)"
    );
    rounds_experiment(&ctx, n, args.runs)
}

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct RoundsParams {
    count: u32,
    row_stride: u32,
    steps: u32,
    stream_records: u32,
}

/// BLS12-381 G1 mixed-addition chains: the curve VM's `madd` against the rounds kernel
/// (`shaders/kernels/g1_madd_rounds.wgsl`), same inputs, both checked against arkworks.
fn rounds_experiment(
    ctx: &GpuContext,
    n: usize,
    runs: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    use ark_ec::{CurveGroup, PrimeGroup};
    use zkgpu_curves::{GpuCurve, decode_projective, encode_affine, encode_projective};
    use zkgpu_runtime::grid;
    type G1 = ark_bls12_381::G1Projective;

    let steps = 64u32;
    let records = 256usize;
    let mut rng = StdRng::seed_from_u64(11);
    let pool: Vec<G1> = (0..records).map(|_| G1::rand(&mut rng)).collect();
    let pool_affine = G1::normalize_batch(&pool);
    let stream = encode_affine::<Bls12_381G1>(&pool_affine);
    let g = G1::generator();
    let starts: Vec<G1> = (0..n).map(|i| pool[i % records] + g).collect();
    let init = encode_projective::<Bls12_381G1>(&starts);
    let want = |i: usize| {
        (0..steps as usize).fold(starts[i], |acc, s| {
            acc + pool_affine[(i * steps as usize + s) % records]
        })
    };

    // The curve VM.
    let vm = CurveVm::<Bls12_381G1>::new(ctx)?;
    let acc_regs = CurveVm::<Bls12_381G1>::acc_regs();
    let job = VmJob {
        entry: "madd",
        init: &init,
        n_load: acc_regs,
        stream_regs: CurveVm::<Bls12_381G1>::affine_regs(),
        stream_reg: acc_regs,
        stream: &stream,
        steps,
        n_store: acc_regs,
    };
    let out = decode_projective::<Bls12_381G1>(&pollster::block_on(
        vm.exec(&job, Checks::TrustedLoops),
    )?)?;
    for (i, got) in out.iter().take(4).enumerate() {
        if *got != want(i) {
            return Err("curve VM madd chain differs from arkworks".into());
        }
    }
    let vm_rate = pollster::block_on(vm.bench(&job, runs, Checks::TrustedLoops))?.ops_per_second;

    // The rounds kernel.
    let module = zkgpu_shaders::g1_madd_rounds();
    let t0 = std::time::Instant::now();
    let pipeline =
        ctx.pipeline_blocking(&module, "g1_madd_rounds_chain", Checks::TrustedLoops, &[])?;
    let pipeline_s = t0.elapsed().as_secs_f64();
    let count = n as u32;
    let (x, y, row_stride) = grid(count, 64, ctx.limits().max_compute_workgroups_per_dimension);
    let acc_in = ctx.storage_buffer("rounds acc in", &init)?;
    let pts = ctx.storage_buffer("rounds points", &stream)?;
    let acc_out = ctx.storage_zeroed("rounds acc out", (init.len() * 4) as u64)?;
    let params = ctx.uniform_buffer(
        "rounds params",
        &RoundsParams {
            count,
            row_stride,
            steps,
            stream_records: records as u32,
        },
    );
    let bind = ctx.bind_group(
        &pipeline,
        &[(1, &acc_in), (2, &pts), (3, &acc_out), (4, &params)],
    );
    let dispatch = |pass: &mut zkgpu_runtime::wgpu::ComputePass<'_>| {
        pass.set_pipeline(&pipeline.pipeline);
        pass.set_bind_group(0, &bind, &[]);
        pass.dispatch_workgroups(x, y, 1);
    };
    pollster::block_on(ctx.timed_pass("rounds", dispatch))?;
    let words: Vec<u32> =
        pollster::block_on(ctx.read_back(&acc_out, (4 * Bls12_381G1::acc_words() * 4) as u64))?;
    let out = decode_projective::<Bls12_381G1>(&words)?;
    for (i, got) in out.iter().enumerate() {
        if *got != want(i) {
            return Err(format!("rounds kernel chain {i} differs from arkworks").into());
        }
    }
    let mut times = Vec::new();
    for _ in 0..runs.max(1) {
        times.push(pollster::block_on(ctx.timed_pass("rounds", dispatch))?);
    }
    times.sort_by(f64::total_cmp);
    let rounds_rate = f64::from(count) * f64::from(steps) / times[times.len() / 2];
    println!();
    println!("BLS12-381 G1 madd chains, {n} x {steps} (both checked against arkworks):");
    println!("  curve VM:      {vm_rate:.3e} madd/s");
    println!("  rounds kernel: {rounds_rate:.3e} madd/s (pipeline {pipeline_s:.3} s)");
    Ok(())
}
