//! `arith field`: Montgomery multiplication throughput of every field on the GPU,
//! checked against arkworks and compared with arkworks on all CPU cores, in the same run.

use std::time::Instant;

use ark_ff::{Field, UniformRand};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use clap::{Args, ValueEnum};
use rayon::prelude::*;
use zkgpu_kernels::field::{FieldKernels, FieldOp};
use zkgpu_limbs::{LimbEncode, decode_slice, encode_slice};
use zkgpu_runtime::{Checks, GpuContext};
use zkgpu_shaders::FieldModule;

use crate::ChecksArg;

/// The measured ceiling of BLS12-381 Fq multiplications on the H100 (docs/gpu.md).
pub const H100_FQ_CEILING: f64 = 8.87e9;
/// The measured u32 multiply-add peak of the H100.
pub const H100_MULADD_PEAK: f64 = 16.45e12;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum FieldArg {
    #[value(name = "bls12-381-fq")]
    Bls12_381Fq,
    #[value(name = "bls12-381-fr")]
    Bls12_381Fr,
    #[value(name = "bls12-377-fq")]
    Bls12_377Fq,
    #[value(name = "bls12-377-fr")]
    Bls12_377Fr,
    #[value(name = "bls12-381-fq2")]
    Bls12_381Fq2,
    #[value(name = "bls12-377-fq2")]
    Bls12_377Fq2,
    #[value(name = "bn254-fq")]
    Bn254Fq,
    #[value(name = "bn254-fr")]
    Bn254Fr,
    #[value(name = "bn254-fq2")]
    Bn254Fq2,
    #[value(name = "ed-on-bls12-377-fr")]
    EdOnBls12_377Fr,
}

/// Arguments of `arith field`.
#[derive(Args, Debug)]
pub struct FieldArgs {
    /// Fields to run (repeatable); all ten by default.
    #[arg(long, value_enum)]
    field: Vec<FieldArg>,
    /// log2 of the number of elements, one invocation each [default: 20 on a GPU, 12 on a
    /// software adapter].
    #[arg(long)]
    log_n: Option<u32>,
    /// Dependent multiplications per element [default: 512 on a GPU, 16 on a software adapter].
    #[arg(long)]
    reps: Option<u32>,
    /// Timed runs after one warm-up; the median is reported.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Shader runtime checks.
    #[arg(long, value_enum, default_value = "both")]
    checks: ChecksArg,
}

struct Row {
    field: &'static str,
    limbs: u32,
    checks: Checks,
    pipeline_s: f64,
    gpu_s: f64,
    gpu_rate: f64,
    cpu_rate: f64,
    u32_muls_per_op: usize,
}

fn module_of(f: FieldArg) -> FieldModule {
    match f {
        FieldArg::Bls12_381Fq => FieldModule::Bls12_381Fq,
        FieldArg::Bls12_381Fr => FieldModule::Bls12_381Fr,
        FieldArg::Bls12_377Fq => FieldModule::Bls12_377Fq,
        FieldArg::Bls12_377Fr => FieldModule::Bls12_377Fr,
        FieldArg::Bls12_381Fq2 => FieldModule::Bls12_381Fq2,
        FieldArg::Bls12_377Fq2 => FieldModule::Bls12_377Fq2,
        FieldArg::Bn254Fq => FieldModule::Bn254Fq,
        FieldArg::Bn254Fr => FieldModule::Bn254Fr,
        FieldArg::Bn254Fq2 => FieldModule::Bn254Fq2,
        FieldArg::EdOnBls12_377Fr => FieldModule::EdOnBls12_377Fr,
    }
}

/// u32 multiplications in one generated multiplication of `m` (3 base ones for Fq2).
fn u32_muls(m: FieldModule) -> usize {
    use zkgpu_limbs::KnownField as K;
    let base = |k: K| {
        k.emulator()
            .program("mul")
            .map_or(0, zkgpu_limbs::Program::count_muls)
    };
    match m {
        FieldModule::Bls12_381Fq => base(K::Bls12_381Fq),
        FieldModule::Bls12_381Fr => base(K::Bls12_381Fr),
        FieldModule::Bls12_377Fq => base(K::Bls12_377Fq),
        FieldModule::Bls12_377Fr => base(K::Bls12_377Fr),
        FieldModule::Bls12_381Fq2 => 3 * base(K::Bls12_381Fq),
        FieldModule::Bls12_377Fq2 => 3 * base(K::Bls12_377Fq),
        FieldModule::Bn254Fq => base(K::Bn254Fq),
        FieldModule::Bn254Fr => base(K::Bn254Fr),
        FieldModule::Bn254Fq2 => 3 * base(K::Bn254Fq),
        FieldModule::EdOnBls12_377Fr => base(K::EdOnBls12_377Fr),
    }
}

/// Runs the GPU chain for field `F`, checks a sample against arkworks, and times arkworks.
fn bench_one<F: Field + LimbEncode + UniformRand>(
    ctx: &GpuContext,
    module: FieldModule,
    n: usize,
    reps: u32,
    runs: usize,
    checks: &[Checks],
) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let mut rng = StdRng::seed_from_u64(0x5eed ^ module.words() as u64);
    let a: Vec<F> = (0..n).map(|_| F::rand(&mut rng)).collect();
    let b: Vec<F> = (0..n).map(|_| F::rand(&mut rng)).collect();
    let (ea, eb) = (encode_slice(&a), encode_slice(&b));
    let k = FieldKernels::new(ctx, module);

    // Correctness first: a sample through the same kernel, against arkworks.
    let sample = n.min(256);
    let w = F::WORDS;
    for &c in checks {
        let out = k.run(
            FieldOp::MulChain { reps },
            &ea[..sample * w],
            &eb[..sample * w],
            c,
        );
        let got = decode_slice::<F>(&pollster::block_on(out)?)?;
        for i in 0..sample {
            if got[i] != a[i] * b[i].pow([u64::from(reps)]) {
                return Err(format!(
                    "{}: GPU result {i} differs from arkworks ({c:?})",
                    module.id()
                )
                .into());
            }
        }
    }

    // arkworks on every CPU core: the same chains over a slice of the same inputs.
    let cpu_n = n.min(1 << 14);
    let start = Instant::now();
    let acc: Vec<F> = (0..cpu_n)
        .into_par_iter()
        .map(|i| {
            let mut x = a[i];
            for _ in 0..reps {
                x *= b[i];
            }
            x
        })
        .collect();
    let cpu_s = start.elapsed().as_secs_f64();
    std::hint::black_box(acc);
    let cpu_rate = cpu_n as f64 * f64::from(reps) / cpu_s;

    let mut rows = Vec::new();
    for &c in checks {
        let r = pollster::block_on(k.bench_mul_chain(&ea, &eb, reps, runs, c))?;
        rows.push(Row {
            field: module.id(),
            limbs: module.words(),
            checks: c,
            pipeline_s: r.pipeline_seconds,
            gpu_s: r.seconds,
            gpu_rate: r.mults_per_second,
            cpu_rate,
            u32_muls_per_op: u32_muls(module),
        });
        eprintln!(
            "  {} {:?}: {:.3e} mul/s",
            module.id(),
            c,
            r.mults_per_second
        );
    }
    Ok(rows)
}

/// `arith field`.
pub fn run(args: &FieldArgs) -> Result<(), Box<dyn std::error::Error>> {
    let ctx = GpuContext::from_env_blocking()?;
    let software = ctx.info().device_type == zkgpu_runtime::wgpu::DeviceType::Cpu;
    let log_n = args.log_n.unwrap_or(if software { 12 } else { 20 });
    if log_n > 26 {
        return Err("--log-n must be at most 26".into());
    }
    let n = 1usize << log_n;
    let reps = args.reps.unwrap_or(if software { 16 } else { 512 });
    if reps == 0 {
        return Err("--reps must be at least 1".into());
    }
    let checks: Vec<Checks> = match args.checks {
        ChecksArg::Default => vec![Checks::Default],
        ChecksArg::Trusted => vec![Checks::TrustedLoops],
        ChecksArg::Both => vec![Checks::Default, Checks::TrustedLoops],
    };
    let fields: Vec<FieldArg> = if args.field.is_empty() {
        FieldArg::value_variants().to_vec()
    } else {
        args.field.clone()
    };
    eprintln!(
        "adapter: {} ({:?}, {:?}); {} elements x {} multiplications; arkworks on {} CPU threads",
        ctx.info().name,
        ctx.info().backend,
        ctx.info().device_type,
        n,
        reps,
        rayon::current_num_threads()
    );
    let mut rows = Vec::new();
    for f in fields {
        let m = module_of(f);
        eprintln!("field {} ...", m.id());
        let r = match f {
            FieldArg::Bls12_381Fq => {
                bench_one::<ark_bls12_381::Fq>(&ctx, m, n, reps, args.runs, &checks)
            }
            FieldArg::Bls12_381Fr => {
                bench_one::<ark_bls12_381::Fr>(&ctx, m, n, reps, args.runs, &checks)
            }
            FieldArg::Bls12_377Fq => {
                bench_one::<ark_bls12_377::Fq>(&ctx, m, n, reps, args.runs, &checks)
            }
            FieldArg::Bls12_377Fr => {
                bench_one::<ark_bls12_377::Fr>(&ctx, m, n, reps, args.runs, &checks)
            }
            FieldArg::Bls12_381Fq2 => {
                bench_one::<ark_bls12_381::Fq2>(&ctx, m, n, reps, args.runs, &checks)
            }
            FieldArg::Bls12_377Fq2 => {
                bench_one::<ark_bls12_377::Fq2>(&ctx, m, n, reps, args.runs, &checks)
            }
            FieldArg::Bn254Fq => bench_one::<ark_bn254::Fq>(&ctx, m, n, reps, args.runs, &checks),
            FieldArg::Bn254Fr => bench_one::<ark_bn254::Fr>(&ctx, m, n, reps, args.runs, &checks),
            FieldArg::Bn254Fq2 => bench_one::<ark_bn254::Fq2>(&ctx, m, n, reps, args.runs, &checks),
            FieldArg::EdOnBls12_377Fr => {
                bench_one::<ark_ed_on_bls12_377::Fr>(&ctx, m, n, reps, args.runs, &checks)
            }
        }?;
        rows.extend(r);
    }
    println!();
    println!("adapter: {} ({:?})", ctx.info().name, ctx.info().backend);
    println!(
        "{:<14} {:>5} {:>8} {:>10} {:>10} {:>11} {:>9} {:>10} {:>11} {:>8}",
        "field",
        "limbs",
        "checks",
        "pipeline",
        "gpu time",
        "gpu mul/s",
        "/8.87e9",
        "u32 ops",
        "cpu mul/s",
        "gpu/cpu"
    );
    for r in &rows {
        let muladds = r.gpu_rate * r.u32_muls_per_op as f64;
        println!(
            "{:<14} {:>5} {:>8} {:>9.3}s {:>9.3}ms {:>11.3e} {:>9.3} {:>9.1}% {:>11.3e} {:>8.1}",
            r.field,
            r.limbs,
            match r.checks {
                Checks::Default => "default",
                Checks::TrustedLoops => "trusted",
            },
            r.pipeline_s,
            r.gpu_s * 1e3,
            r.gpu_rate,
            r.gpu_rate / H100_FQ_CEILING,
            100.0 * muladds / H100_MULADD_PEAK,
            r.cpu_rate,
            r.gpu_rate / r.cpu_rate
        );
    }
    println!(
        "/8.87e9: GPU rate over the H100's measured BLS12-381 Fq ceiling; u32 ops: u32 multiplies issued \
         per second over the H100's 16.45e12 multiply-add peak. All GPU results were checked against arkworks."
    );
    Ok(())
}
