//! `arith field`: Montgomery multiplication throughput of every field on the GPU in every
//! field arithmetic the device runs, checked against arkworks and compared with the portable
//! arithmetic and with arkworks on all CPU cores, in the same run.

use std::time::Instant;

use ark_ff::{Field, UniformRand};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use clap::Args;
use rayon::prelude::*;
use zkgpu_kernels::chain::PackedChain;
use zkgpu_kernels::field::{ChainBench, FieldKernels, FieldOp};
use zkgpu_limbs::{LimbEncode, decode_slice, encode_slice, pack_limb_slice, unpack_limb_slice};
use zkgpu_runtime::{Arith, Checks, GpuContext};
use zkgpu_shaders::FieldModule;

use crate::ChecksArg;

/// Arguments of `arith field`.
#[derive(Args, Debug)]
pub struct FieldArgs {
    /// Fields to run (repeatable: bls12-381-fq, bn254-fr, ..., every `FieldModule`'s name);
    /// all by default.
    #[arg(long, value_parser = parse_field)]
    field: Vec<FieldModule>,
    /// Arithmetics to run (repeatable: portable, int64, f64); every one the device runs
    /// correctly by default.
    #[arg(long, value_parser = parse_arith)]
    arith: Vec<Arith>,
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
    /// Shader runtime checks of the 13-bit-limb chains (the packed chains run without loop
    /// bounding).
    #[arg(long, value_enum, default_value = "trusted")]
    checks: ChecksArg,
}

fn parse_field(name: &str) -> Result<FieldModule, String> {
    FieldModule::from_name(name).ok_or_else(|| {
        let names: Vec<String> = FieldModule::ALL.iter().map(|f| f.name()).collect();
        format!("unknown field {name:?}; one of {}", names.join(", "))
    })
}

fn parse_arith(name: &str) -> Result<Arith, String> {
    Arith::from_name(name)
        .ok_or_else(|| format!("unknown arithmetic {name:?}; portable, int64 or f64"))
}

/// One measured chain.
struct Row {
    field: &'static str,
    arith: Arith,
    /// `limbs` (13-bit limbs in and out of every multiplication) or `packed` (the curve VM's
    /// registers).
    form: &'static str,
    checks: Checks,
    pipeline_s: f64,
    gpu_s: f64,
    gpu_rate: f64,
    cpu_rate: f64,
}

/// The inputs of one field's chains and arkworks' answers.
struct Inputs<F> {
    a: Vec<F>,
    b: Vec<F>,
    ea: Vec<u32>,
    eb: Vec<u32>,
}

/// Whether the first `got` elements are `a b^reps`.
fn check<F: Field>(what: &str, got: &[F], x: &Inputs<F>, reps: u32) -> Result<(), String> {
    for (i, g) in got.iter().enumerate() {
        if *g != x.a[i] * x.b[i].pow([u64::from(reps)]) {
            return Err(format!("{what}: GPU result {i} differs from arkworks"));
        }
    }
    Ok(())
}

/// The 13-bit-limb chain of `module` in `arith`: checked on a sample, then timed.
fn limbs_rows<F: Field + LimbEncode>(
    ctx: &GpuContext,
    module: FieldModule,
    arith: Arith,
    x: &Inputs<F>,
    (reps, runs): (u32, usize),
    checks: &[Checks],
) -> Result<Vec<(Checks, ChainBench)>, Box<dyn std::error::Error>> {
    let k = FieldKernels::with_arith(ctx, module, arith)?;
    let sample = (x.ea.len() / F::WORDS).min(256) * F::WORDS;
    let mut out = Vec::new();
    for &c in checks {
        let got = pollster::block_on(k.run(
            FieldOp::MulChain { reps },
            &x.ea[..sample],
            &x.eb[..sample],
            c,
        ))?;
        check(module.id(), &decode_slice::<F>(&got)?, x, reps)?;
        out.push((
            c,
            pollster::block_on(k.bench_mul_chain(&x.ea, &x.eb, reps, runs, c))?,
        ));
    }
    Ok(out)
}

/// The packed chain (how the curve VM multiplies) of the prime field `module` in `arith`.
fn packed_row<F: Field + LimbEncode>(
    ctx: &GpuContext,
    module: FieldModule,
    arith: Arith,
    x: &Inputs<F>,
    (reps, runs): (u32, usize),
) -> Result<ChainBench, Box<dyn std::error::Error>> {
    let chain = PackedChain::new(ctx, module, arith)?;
    let (n, w) = (module.words() as usize, module.packed_words() as usize);
    let (pa, pb) = (pack_limb_slice(&x.ea, n, w), pack_limb_slice(&x.eb, n, w));
    let sample = (pa.len() / w).min(256) * w;
    let got = pollster::block_on(chain.run(&pa[..sample], &pb[..sample], reps))?;
    let got = decode_slice::<F>(&unpack_limb_slice(&got, w, n))?;
    check(&format!("{} packed", module.id()), &got, x, reps)?;
    Ok(pollster::block_on(chain.bench(&pa, &pb, reps, runs))?)
}

/// Every chain of field `F` in every arithmetic of `ariths`, and arkworks' rate.
fn bench_one<F: Field + LimbEncode + UniformRand>(
    ctx: &GpuContext,
    module: FieldModule,
    ariths: &[Arith],
    (n, reps, runs): (usize, u32, usize),
    checks: &[Checks],
) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let mut rng = StdRng::seed_from_u64(0x5eed ^ module.words() as u64);
    let a: Vec<F> = (0..n).map(|_| F::rand(&mut rng)).collect();
    let b: Vec<F> = (0..n).map(|_| F::rand(&mut rng)).collect();
    let (ea, eb) = (encode_slice(&a), encode_slice(&b));
    let x = Inputs { a, b, ea, eb };

    // arkworks on every CPU core: the same chains over a slice of the same inputs.
    let cpu_n = n.min(1 << 14);
    let start = Instant::now();
    let acc: Vec<F> = (0..cpu_n)
        .into_par_iter()
        .map(|i| {
            let mut y = x.a[i];
            for _ in 0..reps {
                y *= x.b[i];
            }
            y
        })
        .collect();
    let cpu_s = start.elapsed().as_secs_f64();
    std::hint::black_box(acc);
    let cpu_rate = cpu_n as f64 * f64::from(reps) / cpu_s;

    let mut rows = Vec::new();
    let row = |arith, form, checks, r: ChainBench| Row {
        field: module.id(),
        arith,
        form,
        checks,
        pipeline_s: r.pipeline_seconds,
        gpu_s: r.seconds,
        gpu_rate: r.mults_per_second,
        cpu_rate,
    };
    for &arith in ariths {
        for (c, r) in limbs_rows(ctx, module, arith, &x, (reps, runs), checks)? {
            eprintln!(
                "  {} {arith} limbs: {:.3e} mul/s",
                module.id(),
                r.mults_per_second
            );
            rows.push(row(arith, "limbs", c, r));
        }
        if module.is_prime() {
            let r = packed_row(ctx, module, arith, &x, (reps, runs))?;
            eprintln!(
                "  {} {arith} packed: {:.3e} mul/s",
                module.id(),
                r.mults_per_second
            );
            rows.push(row(arith, "packed", Checks::TrustedLoops, r));
        }
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
    let fields: Vec<FieldModule> = if args.field.is_empty() {
        FieldModule::ALL.to_vec()
    } else {
        args.field.clone()
    };
    let ariths: Vec<Arith> = if args.arith.is_empty() {
        Arith::ALL
            .into_iter()
            .filter(|&a| ctx.check_arith(a).is_ok())
            .collect()
    } else {
        args.arith.clone()
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
    for r in ctx.arith_reports() {
        eprintln!("arithmetic {}: {:?}", r.arith, r.usable);
    }
    let mut rows = Vec::new();
    let sizes = (n, reps, args.runs);
    for m in fields {
        eprintln!("field {} ...", m.id());
        let r = bench_field(&ctx, m, &ariths, sizes, &checks)?;
        rows.extend(r);
    }
    print_rows(&ctx, &rows);
    Ok(())
}

/// Arkworks' type of `m`, from the field registry, and its benchmark.
fn bench_field(
    ctx: &GpuContext,
    m: FieldModule,
    ariths: &[Arith],
    sizes: (usize, u32, usize),
    checks: &[Checks],
) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    macro_rules! dispatch {
        (; prime $(($f:ident, $stem:ident, $ark:path))* ; fq2 $(($q:ident, $fm:ident, $qstem:ident, $base:ident, $qark:path))*) => {
            match m {
                $(FieldModule::$f => bench_one::<$ark>(ctx, m, ariths, sizes, checks),)*
                $(FieldModule::$fm => bench_one::<$qark>(ctx, m, ariths, sizes, checks),)*
            }
        };
    }
    zkgpu_limbs::for_each_field!(dispatch)
}

fn print_rows(ctx: &GpuContext, rows: &[Row]) {
    println!();
    println!("adapter: {} ({:?})", ctx.info().name, ctx.info().backend);
    println!(
        "{:<19} {:<8} {:<6} {:>8} {:>9} {:>10} {:>11} {:>10} {:>11} {:>8}",
        "field",
        "arith",
        "form",
        "checks",
        "pipeline",
        "gpu time",
        "gpu mul/s",
        "x portable",
        "cpu mul/s",
        "gpu/cpu"
    );
    for r in rows {
        let portable = rows
            .iter()
            .find(|p| {
                p.field == r.field
                    && p.form == r.form
                    && p.checks == r.checks
                    && p.arith == Arith::Portable
            })
            .map(|p| r.gpu_rate / p.gpu_rate);
        println!(
            "{:<19} {:<8} {:<6} {:>8} {:>8.3}s {:>8.3}ms {:>11.3e} {:>10} {:>11.3e} {:>8.1}",
            r.field,
            r.arith.name(),
            r.form,
            match r.checks {
                Checks::Default => "default",
                Checks::TrustedLoops => "trusted",
            },
            r.pipeline_s,
            r.gpu_s * 1e3,
            r.gpu_rate,
            portable.map_or("-".to_owned(), |x| format!("{x:.2}")),
            r.cpu_rate,
            r.gpu_rate / r.cpu_rate
        );
    }
    println!(
        "limbs: 13-bit limbs in and out of every multiplication; packed: 32-bit words (the curve \
         VM's registers). x portable: rate over the portable arithmetic's, same field and form, \
         same run. All GPU results were checked against arkworks."
    );
}
