//! `arith vm`: the cost of each curve-VM instruction, in BLS12-381 Fq multiplications,
//! from synthetic programs run through the same interpreter (`shaders/kernels/curve_vm.wgsl`).

use ark_ff::UniformRand;
use ark_std::rand::{SeedableRng, rngs::StdRng};
use clap::Args;
use zkgpu_curves::Bls12_381G1;
use zkgpu_curves::vm::{Asm, Program, Reg};
use zkgpu_kernels::curve::{CurveVm, VmJob};
use zkgpu_limbs::encode_slice;
use zkgpu_runtime::{Checks, GpuContext};

type Fq = ark_bls12_381::Fq;

/// Arguments of `arith vm`.
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
    // 10 x MUL: against 20 x MUL, the fixed cost of a program run.
    a.entry("mul10");
    for _ in 0..10 {
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

/// `arith vm`.
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
    let run = 2.0 * time("mul10")? - base;
    println!(
        "run    {:>12.1} {:>16.3}",
        run / (n as f64 * f64::from(args.steps)) * 1e12,
        run / per_mul
    );
    println!(
        "(cost of one instruction of each kind per invocation, from 10 x (MUL; instr) against 20 x MUL;\n\
         `run`: the fixed cost of one program run (fetch to HALT, the kernel's loop), from 10 x MUL)"
    );
    Ok(())
}
