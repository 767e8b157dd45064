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

/// The kernel over either form: `IN_F`/`IN_I` take packed words to a multiplication's
/// operands, `MUL_F`/`MUL_I` multiply, `OUT_F(x)`/`OUT_I(z)` give packed words back (each
/// form's replacements in [`Form::replacements`]).
const KERNEL: &str = r"
override INT_EIGHTHS: u32;
override PAIR: bool;

@compute @workgroup_size(WORKGROUP_SIZE)
fn arith_mix_chain(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * check.row_stride;
    if (i >= check.count) {
        return;
    }
    var a: array<u32, FE_PACKED>;
    var b: array<u32, FE_PACKED>;
    for (var j = 0u; j < FE_PACKED; j++) {
        a[j] = check_a[i * FE_PACKED + j];
        b[j] = check_b[i * FE_PACKED + j];
    }
    var out: array<u32, FE_PACKED>;
    if (PAIR) {
        var x = IN_F(a);
        var z = IN_I(a);
        let bf = IN_F(b);
        let bi = IN_I(b);
        for (var k = 0u; k < check.reps; k++) {
            x = MUL_F(x, bf);
            z = MUL_I(z, bi);
        }
        out = OUT_F(x);
        let other = OUT_I(z);
        // Both chains' bits, or a wrong answer where they differ.
        for (var j = 0u; j < FE_PACKED; j++) {
            if (out[j] != other[j]) {
                out[0] = out[0] ^ 1u;
                break;
            }
        }
    } else if ((i / 32u) % 8u < INT_EIGHTHS) {
        var z = IN_I(a);
        let bi = IN_I(b);
        for (var k = 0u; k < check.reps; k++) {
            z = MUL_I(z, bi);
        }
        out = OUT_I(z);
    } else {
        var x = IN_F(a);
        let bf = IN_F(b);
        for (var k = 0u; k < check.reps; k++) {
            x = MUL_F(x, bf);
        }
        out = OUT_F(x);
    }
    for (var j = 0u; j < FE_PACKED; j++) {
        check_out[i * FE_PACKED + j] = out[j];
    }
}
";

/// Which multiplication the chains run.
#[derive(Clone, Copy)]
enum Form {
    /// `<pre>_mul_packed` over packed words: the curve VM's.
    Packed,
    /// `<pre>_n_mul_lazy` over the arithmetic's native limbs: the NTT's.
    Native,
}

impl Form {
    fn name(self) -> &'static str {
        match self {
            Self::Packed => "packed",
            Self::Native => "native",
        }
    }

    /// The kernel's placeholders, for field prefix `pre` (int64's functions renamed with
    /// an `i`: [`Form::int64_part`]).
    fn replacements(self, pre: &str) -> [(&'static str, String); 6] {
        match self {
            Self::Packed => [
                ("IN_F", String::new()),
                ("IN_I", String::new()),
                ("MUL_F", format!("{pre}_mul_packed")),
                ("MUL_I", format!("{pre}_imul_packed")),
                ("OUT_F(x)", "x".into()),
                ("OUT_I(z)", "z".into()),
            ],
            Self::Native => [
                ("IN_F", format!("{pre}_n_unpack")),
                ("IN_I", format!("{pre}_ni_unpack")),
                ("MUL_F", format!("{pre}_n_mul_lazy")),
                ("MUL_I", format!("{pre}_ni_mul_lazy")),
                ("OUT_F(x)", format!("{pre}_n_pack({pre}_n_reduce(x))")),
                ("OUT_I(z)", format!("{pre}_ni_pack({pre}_ni_reduce(z))")),
            ],
        }
    }

    /// The part of `module` holding this form's multiplication in `arith` (the packed
    /// multiplications, or the native form's module).
    fn part(self, module: Composed) -> Option<Part> {
        let tag = match (self, module.arith) {
            (Self::Packed, Arith::Int64) => "_mul_int64",
            (Self::Packed, _) => "_mul_f64",
            (Self::Native, _) => "_native_",
        };
        module.parts.into_iter().find(|p| p.origin.contains(tag))
    }

    /// The module over `f` in arithmetic `arith` that holds this form.
    fn source(self, f: FieldModule, arith: Arith) -> Composed {
        match self {
            Self::Packed => arith_check(f, arith),
            Self::Native => zkgpu_shaders::ntt(f, arith),
        }
    }

    /// The int64 multiplication of this form over `f`, its functions renamed (`<pre>_i...`,
    /// `<pre>_ni_...`) beside the f64 ones.
    fn int64_part(self, f: FieldModule) -> Option<Part> {
        let (pre, _) = f.prefix_and_type();
        let mut text = self.part(self.source(f, Arith::Int64))?.text;
        match self {
            Self::Packed => {
                for name in ["mul_packed", "mul", "square"] {
                    text = text
                        .replace(&format!("fn {pre}_{name}("), &format!("fn {pre}_i{name}("))
                        .replace(&format!(" {pre}_{name}("), &format!(" {pre}_i{name}("));
                }
            }
            Self::Native => text = text.replace(&format!("{pre}_n_"), &format!("{pre}_ni_")),
        }
        Some(Part {
            origin: format!("<int64 {} renamed>", self.name()),
            text,
        })
    }

    /// `arith_check`'s f64 module (its bindings and `ArithParams`, the contract's), this
    /// form's f64 module where it is another, the int64 multiplication renamed, the kernel;
    /// None where `f` has no such form (the native form is the NTT fields').
    fn module(self, f: FieldModule) -> Option<Composed> {
        if matches!(self, Self::Native) && !zkgpu_shaders::ntt_fields().contains(&f) {
            return None;
        }
        let (pre, _) = f.prefix_and_type();
        let mut parts = arith_check(f, Arith::F64).parts;
        if matches!(self, Self::Native) {
            parts.push(self.part(self.source(f, Arith::F64))?);
        }
        parts.push(self.int64_part(f)?);
        let mut kernel = KERNEL.to_owned();
        for (from, to) in self.replacements(pre) {
            kernel = kernel.replace(from, &to);
        }
        parts.push(Part {
            origin: "<mix kernel>".into(),
            text: kernel,
        });
        Some(Composed {
            name: format!("arith_mix_{}/{}@f64", self.name(), f.id()),
            parts,
            arith: Arith::F64,
        })
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

/// One field's chains on the GPU: operands, output and parameters, shared by every
/// variant.
struct Buffers {
    a: zkgpu_runtime::wgpu::Buffer,
    b: zkgpu_runtime::wgpu::Buffer,
    out: zkgpu_runtime::wgpu::Buffer,
    params: zkgpu_runtime::wgpu::Buffer,
    bytes: u64,
    grid: (u32, u32),
}

impl Buffers {
    fn new(
        ctx: &GpuContext,
        (a, b): (&[u32], &[u32]),
        words: usize,
        reps: u32,
    ) -> Result<Self, Box<dyn std::error::Error>> {
        let count = (a.len() / words) as u32;
        let (x, y, row_stride) = grid(count, WG, ctx.limits().max_compute_workgroups_per_dimension);
        let bytes = (a.len() * 4) as u64;
        Ok(Self {
            a: ctx.storage_buffer("mix a", a)?,
            b: ctx.storage_buffer("mix b", b)?,
            out: ctx.storage_zeroed("mix out", bytes)?,
            params: ctx.uniform_buffer(
                "mix params",
                &ArithParams {
                    count,
                    reps,
                    row_stride,
                    ..ArithParams::default()
                },
            ),
            bytes,
            grid: (x, y),
        })
    }
}

/// One variant's median seconds and its output words.
async fn variant(
    ctx: &GpuContext,
    m: &Composed,
    bufs: &Buffers,
    (eighths, pair): (u32, bool),
    runs: usize,
) -> Result<(f64, Vec<u32>), Box<dyn std::error::Error>> {
    let consts = [
        ("INT_EIGHTHS", f64::from(eighths)),
        ("PAIR", if pair { 1.0 } else { 0.0 }),
        ("WORKGROUP_SIZE", f64::from(WG)),
    ];
    let entry = "arith_mix_chain";
    let p = ctx
        .pipeline(m, entry, Checks::TrustedLoops, &consts)
        .await?;
    let bg = ctx.bind_group(
        &p,
        &[
            (chk::CHECK_A, &bufs.a),
            (chk::CHECK_B, &bufs.b),
            (chk::CHECK_OUT, &bufs.out),
            (chk::CHECK, &bufs.params),
        ],
    );
    let mut times = Vec::new();
    for i in 0..=runs.max(1) {
        let t = ctx
            .timed_pass(entry, |pass| {
                pass.set_pipeline(&p.pipeline);
                pass.set_bind_group(0, &bg, &[]);
                pass.dispatch_workgroups(bufs.grid.0, bufs.grid.1, 1);
            })
            .await?;
        if i > 0 {
            times.push(t);
        }
    }
    times.sort_by(f64::total_cmp);
    let got = ctx.read_back(&bufs.out, bufs.bytes).await?;
    Ok((times[times.len() / 2], got))
}

/// `(int64 eighths, pair)` of each row: f64 alone, int64 alone, mixes by warp, one chain
/// of each per invocation.
const VARIANTS: [(u32, bool); 7] = [
    (0, false),
    (8, false),
    (1, false),
    (2, false),
    (3, false),
    (4, false),
    (0, true),
];

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
        "adapter: {}; {n} chains x {} multiplications (pair: two chains an invocation, both counted)",
        ctx.info().name,
        args.reps
    );
    println!("field           form    variant        ms     mul/s   x f64  equal");
    for f in fields {
        let words = f.packed_words() as usize;
        let (a, b) = (inputs(n, words, 7), inputs(n, words, 11));
        let chain = PackedChain::new(&ctx, f, Arith::Int64)?;
        let want = pollster::block_on(chain.run(&a, &b, args.reps))?;
        let bufs = Buffers::new(&ctx, (&a, &b), words, args.reps)?;
        for form in [Form::Packed, Form::Native] {
            let Some(m) = form.module(f) else { continue };
            let t = std::time::Instant::now();
            let mut base = 0.0;
            for (eighths, pair) in VARIANTS {
                let (s, got) =
                    pollster::block_on(variant(&ctx, &m, &bufs, (eighths, pair), args.runs))?;
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
                    "{:<15} {:<7} {name:<10} {:>8.3} {rate:>9.3e} {:>7.2}  {}",
                    f.id(),
                    form.name(),
                    s * 1e3,
                    rate / base,
                    got == want
                );
            }
            println!("  ({:.1} s with pipelines)", t.elapsed().as_secs_f64());
        }
    }
    Ok(())
}
