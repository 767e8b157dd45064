//! `arith mix`: whether the GPU's integer and float pipes multiply faster together than
//! either alone. One module holds a prime field's packed multiplication in both the f64
//! and the int64 arithmetic (the same Montgomery form and packed words, so both give the
//! same bits); each warp runs one of them (`--int-eighths k`: k of every 8 warps run
//! int64), or each invocation runs one chain in each (`pair`), so the scheduler can issue
//! float and integer work side by side. Every result is compared with the int64 chain's
//! (which `arith field` checks against arkworks).

use clap::Args;
use zkgpu_kernels::chain::PackedChain;
use zkgpu_runtime::{Arith, Checks, GpuContext, grid};
use zkgpu_shaders::contract::arith_check::{self as chk, ArithParams};
use zkgpu_shaders::{Composed, FieldModule, Part, arith_check};

/// Arguments of `arith mix`.
#[derive(Args, Debug)]
pub struct MixArgs {
    /// Prime fields to run (repeatable); BLS12-381 Fq and Fr by default.
    #[arg(long, value_parser = parse_field)]
    field: Vec<FieldModule>,
    /// log2 of the number of chains.
    #[arg(long, default_value_t = 20)]
    log_n: u32,
    /// Dependent multiplications per chain.
    #[arg(long, default_value_t = 512)]
    reps: u32,
    /// Timed runs after one warm-up; the median is reported.
    #[arg(long, default_value_t = 5)]
    runs: usize,
}

fn parse_field(name: &str) -> Result<FieldModule, String> {
    FieldModule::from_name(name).ok_or_else(|| format!("unknown field {name:?}"))
}

const WG: u32 = 64;
const KERNEL: &str = r"
override INT_EIGHTHS: u32;
override PAIR: bool;

@compute @workgroup_size(WORKGROUP_SIZE)
fn arith_mix_chain(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * check.row_stride;
    if (i >= check.count) {
        return;
    }
    var x: array<u32, FE_PACKED>;
    var y: array<u32, FE_PACKED>;
    for (var j = 0u; j < FE_PACKED; j++) {
        x[j] = check_a[i * FE_PACKED + j];
        y[j] = check_b[i * FE_PACKED + j];
    }
    if (PAIR) {
        var z = x;
        for (var k = 0u; k < check.reps; k++) {
            x = fe_mul_packed(x, y);
            z = fe_imul_packed(z, y);
        }
        var same = true;
        for (var j = 0u; j < FE_PACKED; j++) {
            same = same && x[j] == z[j];
        }
        if (!same) {
            x = z;
            x[0] = x[0] ^ 1u;
        }
    } else if ((i / 32u) % 8u < INT_EIGHTHS) {
        for (var k = 0u; k < check.reps; k++) {
            x = fe_imul_packed(x, y);
        }
    } else {
        for (var k = 0u; k < check.reps; k++) {
            x = fe_mul_packed(x, y);
        }
    }
    for (var j = 0u; j < FE_PACKED; j++) {
        check_out[i * FE_PACKED + j] = x[j];
    }
}
";

const NATIVE_KERNEL: &str = r"
override INT_EIGHTHS: u32;
override PAIR: bool;

@compute @workgroup_size(WORKGROUP_SIZE)
fn arith_mix_chain(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * check.row_stride;
    if (i >= check.count) {
        return;
    }
    var x: array<u32, 8>;
    var y: array<u32, 8>;
    for (var j = 0u; j < 8u; j++) {
        x[j] = check_a[i * 8u + j];
        y[j] = check_b[i * 8u + j];
    }
    if (PAIR) {
        var xf = NF_unpack(x);
        let yf = NF_unpack(y);
        var xi = NI_unpack(x);
        let yi = NI_unpack(y);
        for (var k = 0u; k < check.reps; k++) {
            xf = NF_mul_lazy(xf, yf);
            xi = NI_mul_lazy(xi, yi);
        }
        x = NF_pack(NF_reduce(xf));
        let z = NI_pack(NI_reduce(xi));
        var same = true;
        for (var j = 0u; j < 8u; j++) {
            same = same && x[j] == z[j];
        }
        if (!same) {
            x[0] = x[0] ^ 1u;
        }
    } else if ((i / 32u) % 8u < INT_EIGHTHS) {
        var xi = NI_unpack(x);
        let yi = NI_unpack(y);
        for (var k = 0u; k < check.reps; k++) {
            xi = NI_mul_lazy(xi, yi);
        }
        x = NI_pack(NI_reduce(xi));
    } else {
        var xf = NF_unpack(x);
        let yf = NF_unpack(y);
        for (var k = 0u; k < check.reps; k++) {
            xf = NF_mul_lazy(xf, yf);
        }
        x = NF_pack(NF_reduce(xf));
    }
    for (var j = 0u; j < 8u; j++) {
        check_out[i * 8u + j] = x[j];
    }
}
";

/// `arith_check`'s f64 module, the scalar field's native-form modules (what the NTT
/// multiplies with) in f64 and int64 (renamed `<pre>_ni_...`) and a chain of `n_mul_lazy`
/// in either.
fn native_module(f: FieldModule) -> Option<Composed> {
    if !zkgpu_shaders::ntt_fields().contains(&f) {
        return None;
    }
    let (pre, _) = f.prefix_and_type();
    let native = |arith| {
        zkgpu_shaders::ntt(f, arith)
            .parts
            .into_iter()
            .find(|p| p.origin.contains("_native_"))
    };
    let (fl, int) = (native(Arith::F64)?, native(Arith::Int64)?);
    let int = Part {
        origin: "<int64 native renamed>".into(),
        text: int
            .text
            .replace(&format!("{pre}_n_"), &format!("{pre}_ni_")),
    };
    let kernel = NATIVE_KERNEL
        .replace("NF_", &format!("{pre}_n_"))
        .replace("NI_", &format!("{pre}_ni_"));
    let kernel = Part {
        origin: "<native mix kernel>".into(),
        text: kernel,
    };
    let mut parts = arith_check(f, Arith::F64).parts;
    parts.extend([fl, int, kernel]);
    Some(Composed {
        name: format!("arith_mix_native/{}@f64", f.id()),
        parts,
        arith: Arith::F64,
    })
}

/// `arith_check`'s f64 module (its bindings and `ArithParams`, the contract's), the int64
/// multiplications renamed (`<pre>_i...`), and the mixed kernel.
fn module(f: FieldModule) -> Composed {
    let (pre, _) = f.prefix_and_type();
    let f64m = arith_check(f, Arith::F64);
    let int = arith_check(f, Arith::Int64);
    let mut parts = f64m.parts;
    let int_mul = int
        .parts
        .into_iter()
        .find(|p| p.origin.contains("_mul_int64"))
        .expect("the int64 module has its multiplications");
    let mut text = int_mul.text;
    for name in ["mul_packed", "mul", "square"] {
        text = text
            .replace(&format!("fn {pre}_{name}("), &format!("fn {pre}_i{name}("))
            .replace(&format!(" {pre}_{name}("), &format!(" {pre}_i{name}("));
    }
    parts.push(Part {
        origin: "<int64 renamed>".into(),
        text,
    });
    let pw = f.packed_words();
    parts.push(Part {
        origin: "<mix kernel>".into(),
        text: format!(
            "fn fe_imul_packed(a: array<u32, {pw}>, b: array<u32, {pw}>) -> array<u32, {pw}> {{\n    \
             return {pre}_imul_packed(a, b);\n}}\n{KERNEL}"
        ),
    });
    Composed {
        name: format!("arith_mix/{}@f64", f.id()),
        parts,
        arith: Arith::F64,
    }
}

/// Random packed elements below `2^(32 (words - 1))`, so below any of the moduli.
fn inputs(n: usize, words: usize, seed: u64) -> Vec<u32> {
    let mut s = seed | 1;
    let mut v = vec![0u32; n * words];
    for (i, w) in v.iter_mut().enumerate() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        *w = if i % words == words - 1 { 0 } else { s as u32 };
    }
    v
}

/// One variant's median seconds and whether its output equals `want`.
async fn variant(
    ctx: &GpuContext,
    m: &Composed,
    (a, b, want): (&[u32], &[u32], &[u32]),
    (eighths, pair): (u32, bool),
    (words, reps, runs): (usize, u32, usize),
) -> Result<(f64, bool), Box<dyn std::error::Error>> {
    let consts = [
        ("INT_EIGHTHS", f64::from(eighths)),
        ("PAIR", if pair { 1.0 } else { 0.0 }),
        ("WORKGROUP_SIZE", f64::from(WG)),
    ];
    let entry = "arith_mix_chain";
    let p = ctx
        .pipeline(m, entry, Checks::TrustedLoops, &consts)
        .await?;
    let count = (a.len() / words) as u32;
    let (x, y, row_stride) = grid(count, WG, ctx.limits().max_compute_workgroups_per_dimension);
    let (ba, bb) = (ctx.storage_buffer("a", a)?, ctx.storage_buffer("b", b)?);
    let out = ctx.storage_zeroed("out", (a.len() * 4) as u64)?;
    let params = ctx.uniform_buffer(
        "params",
        &ArithParams {
            count,
            reps,
            row_stride,
            ..ArithParams::default()
        },
    );
    let bg = ctx.bind_group(
        &p,
        &[
            (chk::CHECK_A, &ba),
            (chk::CHECK_B, &bb),
            (chk::CHECK_OUT, &out),
            (chk::CHECK, &params),
        ],
    );
    let mut times = Vec::new();
    for i in 0..=runs {
        let t = ctx
            .timed_pass(entry, |pass| {
                pass.set_pipeline(&p.pipeline);
                pass.set_bind_group(0, &bg, &[]);
                pass.dispatch_workgroups(x, y, 1);
            })
            .await?;
        if i > 0 {
            times.push(t);
        }
    }
    times.sort_by(f64::total_cmp);
    let got: Vec<u32> = ctx.read_back(&out, (a.len() * 4) as u64).await?;
    Ok((times[times.len() / 2], got == want))
}

/// `arith mix`.
pub fn run(args: &MixArgs) -> Result<(), Box<dyn std::error::Error>> {
    let ctx = GpuContext::from_env_blocking()?;
    ctx.check_arith(Arith::Int64)?;
    if let Err(e) = ctx.check_arith(Arith::F64) {
        println!("f64 refused here ({e}): its rows will not be equal");
    }
    let fields = if args.field.is_empty() {
        vec![FieldModule::Bls12_381Fq, FieldModule::Bls12_381Fr]
    } else {
        args.field.clone()
    };
    let n = 1usize << args.log_n;
    println!(
        "adapter: {}; {n} chains x {} multiplications",
        ctx.info().name,
        args.reps
    );
    println!("field           variant        ms     mul/s   x f64  equal");
    for f in fields {
        let words = f.packed_words() as usize;
        let (a, b) = (inputs(n, words, 7), inputs(n, words, 11));
        let chain = PackedChain::new(&ctx, f, Arith::Int64)?;
        let want = pollster::block_on(chain.run(&a, &b, args.reps))?;
        let modules = [("packed", Some(module(f))), ("native", native_module(f))];
        for (form, m) in modules {
            let Some(m) = m else { continue };
            let t = std::time::Instant::now();
            let mut base = 0.0;
            let variants = [
                (0, false),
                (8, false),
                (1, false),
                (2, false),
                (3, false),
                (4, false),
                (0, true),
            ];
            for (eighths, pair) in variants {
                let sizes = (words, args.reps, args.runs);
                let (s, ok) =
                    pollster::block_on(variant(&ctx, &m, (&a, &b, &want), (eighths, pair), sizes))?;
                let rate = n as f64 * f64::from(args.reps) * if pair { 2.0 } else { 1.0 } / s;
                if eighths == 0 && !pair {
                    base = rate;
                }
                let name = if pair {
                    "pair".to_owned()
                } else {
                    format!("int {eighths}/8")
                };
                println!(
                    "{:<15} {form:<7} {name:<10} {:>8.3} {rate:>9.3e} {:>7.2}  {ok}",
                    f.id(),
                    s * 1e3,
                    rate / base
                );
            }
            println!("  ({:.1} s with pipelines)", t.elapsed().as_secs_f64());
        }
    }
    Ok(())
}
