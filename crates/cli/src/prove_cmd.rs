//! `zkgpu prove`: Groth16 proofs of a real circuit on the GPU and with ark-groth16 on the CPU
//! cores, same key, same witness, same `r` and `s`; both verified, the proofs compared, times
//! and the per-stage breakdown printed. Exits non-zero when anything disagrees.

use std::fs;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ark_crypto_primitives::sponge::Absorb;
use ark_ff::UniformRand;
use ark_groth16::r1cs_to_qap::LibsnarkReduction;
use ark_groth16::{Groth16, ProvingKey, prepare_verifying_key};
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use zkgpu_circuits::{AnyCircuit, Family, count_constraints, sized};
use zkgpu_groth16::{GpuPairing, GpuProver, ProofTimings, synthesize};
use zkgpu_runtime::GpuContext;

type BoxError = Box<dyn std::error::Error>;

/// Circuit families.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CircuitArg {
    /// SHA-256 chain (0/1-heavy witness).
    Sha256,
    /// Poseidon Merkle paths of depth 20 (full-size witness).
    Merkle,
}

/// Pairings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PairingArg {
    #[value(name = "bls12-381")]
    Bls12_381,
    #[value(name = "bls12-377")]
    Bls12_377,
}

/// Arguments of `zkgpu prove`.
#[derive(Args, Debug)]
pub struct ProveArgs {
    /// The circuit family.
    #[arg(long, value_enum, default_value = "sha256")]
    circuit: CircuitArg,
    /// log2 of the constraint budget: the circuit is as large as fits a Groth16 domain of
    /// 2^k (constraints plus public inputs), 10..=24.
    #[arg(long, default_value_t = 16)]
    log_constraints: u32,
    /// The pairing.
    #[arg(long, value_enum, default_value = "bls12-381")]
    curve: PairingArg,
    /// Timed GPU proofs after a warm-up one (fresh witness and randomness each); the median
    /// is reported.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Where proving keys are cached [default: $ZKGPU_CACHE, else $XDG_CACHE_HOME/zkgpu,
    /// else ~/.cache/zkgpu].
    #[arg(long)]
    cache_dir: Option<PathBuf>,
    /// Run the setup even when a cached key exists (and do not write one).
    #[arg(long)]
    no_cache: bool,
    /// Run every stage alone (no second host thread): a clean per-stage profile, slower.
    #[arg(long)]
    sequential: bool,
    /// Keep the GPU busy with small NTTs on a second thread during the timed proofs (an
    /// experiment: an idle GPU lowers its clock during synthesis and host phases, and the
    /// proof's first GPU work then runs slow until it is back up).
    #[arg(long)]
    keep_gpu_busy: bool,
    /// Do not run small NTTs during synthesis to keep the GPU's clock up (the prover's
    /// default warm-up, `GpuProver::with_clock_warmup`); the proof's first few hundred
    /// milliseconds then run at whatever clock the idle GPU has dropped to.
    #[arg(long)]
    no_clock_warmup: bool,
    /// Store the proving key's bases without window multiples (`GpuProver::with_folding`):
    /// less GPU memory and a faster upload, slower MSMs.
    #[arg(long)]
    no_fold: bool,
}

/// Runs forward NTTs of 2^16 elements until `stop` is set (see `--keep-gpu-busy`).
fn keep_gpu_busy(ctx: &GpuContext, stop: &std::sync::atomic::AtomicBool) {
    use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
    let ntt = zkgpu_ntt::GpuNtt::<ark_bls12_381::Fr>::new(ctx);
    let Some(domain) = Radix2EvaluationDomain::new(1 << 16) else {
        return;
    };
    let Ok(mut dv) = ntt.zeroed(1 << 16, 1) else {
        return;
    };
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        if ntt
            .transform_blocking(&mut dv, &domain, zkgpu_ntt::Direction::Forward)
            .is_err()
        {
            return;
        }
    }
}

/// Sets the flag when dropped, so the busy thread stops on every exit path.
struct StopOnDrop<'a>(&'a std::sync::atomic::AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

pub fn run(args: &ProveArgs) -> Result<(), BoxError> {
    if !(10..=24).contains(&args.log_constraints) {
        return Err(format!(
            "--log-constraints {} is outside 10..=24",
            args.log_constraints
        )
        .into());
    }
    if args.runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    match args.curve {
        PairingArg::Bls12_381 => prove::<ark_bls12_381::Bls12_381>(args, "bls12-381"),
        PairingArg::Bls12_377 => prove::<ark_bls12_377::Bls12_377>(args, "bls12-377"),
    }
}

/// A spinner with elapsed time on a terminal; plain start and end lines otherwise.
struct Step {
    bar: ProgressBar,
    start: Instant,
    what: String,
}

impl Step {
    fn new(what: impl Into<String>) -> Self {
        let what = what.into();
        let bar = ProgressBar::new_spinner();
        if bar.is_hidden() {
            eprintln!("{what} ...");
        } else {
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.set_message(what.clone());
            bar.enable_steady_tick(Duration::from_millis(120));
        }
        Self {
            bar,
            start: Instant::now(),
            what,
        }
    }

    fn done(self, note: &str) -> f64 {
        let s = self.start.elapsed().as_secs_f64();
        self.bar.finish_and_clear();
        eprintln!("{}: {} {note}", self.what, secs(s));
        s
    }
}

fn secs(s: f64) -> String {
    if s < 1.0 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
    }
}

fn ratio(x: f64) -> String {
    if x < 1.0 {
        format!("{x:.3}x")
    } else {
        format!("{x:.1}x")
    }
}

fn cache_dir(args: &ProveArgs) -> Option<PathBuf> {
    if let Some(d) = &args.cache_dir {
        return Some(d.clone());
    }
    if let Some(d) = std::env::var_os("ZKGPU_CACHE") {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return Some(PathBuf::from(d).join("zkgpu"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("zkgpu"))
}

fn load_key<E: GpuPairing>(path: &Path) -> Option<ProvingKey<E>> {
    let file = fs::File::open(path).ok()?;
    // The cache is ours; the points were checked when the key was made.
    ProvingKey::<E>::deserialize_uncompressed_unchecked(BufReader::new(file)).ok()
}

fn store_key<E: GpuPairing>(path: &Path, pk: &ProvingKey<E>) -> Result<(), BoxError> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    {
        let mut w = BufWriter::new(fs::File::create(&tmp)?);
        pk.serialize_uncompressed(&mut w)?;
    }
    fs::rename(&tmp, path)?;
    Ok(())
}

fn prove<E>(args: &ProveArgs, curve: &str) -> Result<(), BoxError>
where
    E: GpuPairing<ScalarField: Absorb>,
{
    let family = match args.circuit {
        CircuitArg::Sha256 => Family::Sha256,
        CircuitArg::Merkle => Family::Merkle,
    };
    let k = args.log_constraints;
    let circuit_name = format!("{:?}", args.circuit).to_lowercase();
    let ctx = GpuContext::from_env_blocking()?;
    println!(
        "zkgpu prove: {circuit_name}, 2^{k} constraint budget, {curve}; GPU: {} ({:?}); CPU: {} threads",
        ctx.info().name,
        ctx.info().backend,
        rayon::current_num_threads()
    );

    let step = Step::new("sizing the circuit");
    let mut rng = StdRng::seed_from_u64(0);
    let (shape, _) = sized::<E::ScalarField, _>(family, k, &mut rng)?;
    let (constraints, inputs) = count_constraints(shape.clone())?;
    step.done("");
    let what = match &shape {
        AnyCircuit::Sha256(c) => format!("{} chained SHA-256 hashes of 32 bytes", c.hashes),
        AnyCircuit::Merkle(c) => format!(
            "{} Poseidon Merkle paths of depth {}",
            c.paths.len(),
            zkgpu_circuits::MERKLE_DEPTH
        ),
    };
    println!(
        "circuit: {what}: {constraints} constraints, {inputs} instance variables, domain 2^{}",
        (constraints + inputs).next_power_of_two().trailing_zeros()
    );

    // Setup: arkworks' generator from a fixed seed, cached on disk.
    let path = (!args.no_cache)
        .then(|| cache_dir(args))
        .flatten()
        .map(|d| d.join(format!("groth16-{curve}-{circuit_name}-2^{k}-v1.pk")));
    let cached = path.as_deref().and_then(|p| {
        p.exists().then(|| {
            let step = Step::new(format!("loading the proving key from {}", p.display()));
            let pk = load_key::<E>(p);
            step.done(if pk.is_some() {
                ""
            } else {
                "(unreadable: running the setup)"
            });
            pk
        })?
    });
    let pk = match cached {
        Some(pk) => pk,
        None => {
            let step = Step::new(format!(
                "setup (ark-groth16 on {} CPU threads)",
                rayon::current_num_threads()
            ));
            let pk = Groth16::<E>::generate_random_parameters_with_reduction(
                shape.clone(),
                &mut StdRng::seed_from_u64(1),
            )?;
            step.done("");
            if let Some(p) = &path {
                let step = Step::new(format!("caching the proving key in {}", p.display()));
                match store_key(p, &pk) {
                    Ok(()) => step.done(""),
                    Err(e) => step.done(&format!("(failed: {e})")),
                };
            }
            pk
        }
    };
    let pvk = prepare_verifying_key(&pk.vk);

    let step = Step::new("building the GPU prover");
    let prover = GpuProver::<E>::new(&ctx)?
        .with_overlap(!args.sequential)
        .with_clock_warmup(!args.no_clock_warmup)
        .with_folding(!args.no_fold);
    step.done("");
    let step = Step::new(if args.no_fold {
        "uploading the proving key (prepared bases)"
    } else {
        "uploading the proving key (prepared bases and their window multiples)"
    });
    let prepared = prover.prepare(&pk)?;
    let prepare_s = step.done("");

    let fresh = |seed: u64| {
        let mut rng = StdRng::seed_from_u64(seed);
        let (c, public) = shape.fresh(&mut rng);
        let r = E::ScalarField::rand(&mut rng);
        let s = E::ScalarField::rand(&mut rng);
        (c, public, r, s)
    };

    let step = Step::new("warm-up proof on the GPU (pipelines are built here)");
    let (c, public, r, s) = fresh(100);
    let (proof, _) = prover.prove_with_randomness(&prepared, c, r, s)?;
    step.done("");
    if !Groth16::<E>::verify_proof(&pvk, &proof, &public)? {
        return Err("the warm-up GPU proof does not verify".into());
    }

    let mut gpu: Vec<ProofTimings> = Vec::new();
    let mut last = None;
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| -> Result<(), BoxError> {
        let _stop = StopOnDrop(&stop);
        if args.keep_gpu_busy {
            // Its pipeline is built before the timed proofs start.
            zkgpu_ntt::GpuNtt::<ark_bls12_381::Fr>::new(&ctx).warm_up_blocking()?;
            scope.spawn(|| keep_gpu_busy(&ctx, &stop));
        }
        for run in 0..args.runs {
            let step = Step::new(format!("GPU proof {}/{}", run + 1, args.runs));
            let (c, public, r, s) = fresh(200 + run as u64);
            let (proof, t) = prover.prove_with_randomness(&prepared, c.clone(), r, s)?;
            step.done(&format!("(prove {})", secs(t.prove)));
            if !Groth16::<E>::verify_proof(&pvk, &proof, &public)? {
                return Err(format!("GPU proof {run} does not verify").into());
            }
            gpu.push(t);
            last = Some((c, public, r, s, proof));
        }
        Ok(())
    })?;
    let Some((c, public, r, s, gpu_proof)) = last else {
        return Err("no GPU proof".into());
    };

    // ark-groth16 on the same witness and randomness, synthesis excluded as for the GPU.
    let step = Step::new("CPU proof (ark-groth16, synthesis excluded)");
    let syn = synthesize(c)?;
    let t = Instant::now();
    let cpu_proof = Groth16::<E, LibsnarkReduction>::create_proof_with_reduction_and_matrices(
        &pk,
        r,
        s,
        &syn.matrices,
        syn.num_inputs,
        syn.num_constraints,
        &syn.full_assignment,
    )?;
    let cpu_s = t.elapsed().as_secs_f64();
    step.done("");
    let cpu_ok = Groth16::<E>::verify_proof(&pvk, &cpu_proof, &public)?;

    let median = |f: fn(&ProofTimings) -> f64| {
        let mut v: Vec<f64> = gpu.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let prove_s = median(|t| t.prove);
    println!();
    println!(
        "| stage | GPU prover (median of {}; {}; clock warm-up during synthesis: {}) |",
        gpu.len(),
        if args.sequential {
            "stages one at a time"
        } else {
            "two threads overlap, so stages add up to more than the proof"
        },
        if args.no_clock_warmup { "off" } else { "on" }
    );
    println!("|---|---|");
    for (name, f) in [
        (
            "synthesis (excluded below)",
            (|t| t.synthesis) as fn(&ProofTimings) -> f64,
        ),
        (
            "witness map (A z, B z, C z on CPU; 7 NTTs + quotient on GPU)",
            |t| t.witness_map,
        ),
        (
            "- sparse products A z, B z, C z, check, packing into staging (CPU, one pass)",
            |t| t.witness_map_parts.products,
        ),
        ("- 7 NTTs + quotient (GPU, submit to done)", |t| {
            t.witness_map_parts.gpu
        }),
        ("- quotient download", |t| t.witness_map_parts.download),
        ("MSM H (G1, after the witness map)", |t| t.msm_h),
        ("MSM A, B, L (G1, three base sets)", |t| t.msm_a_b_l),
        ("MSM B (G2)", |t| t.msm_b_g2),
        ("self-check (verify)", |t| t.verify),
        ("**prove** (synthesis and self-check excluded)", |t| t.prove),
    ] {
        println!("| {name} | {} |", secs(median(f)));
    }
    println!();
    println!(
        "| | GPU | ark-groth16 (CPU, {} threads) | ratio |",
        rayon::current_num_threads()
    );
    println!("|---|---|---|---|");
    println!(
        "| proof, synthesis excluded | {} | {} | {} |",
        secs(prove_s),
        secs(cpu_s),
        ratio(cpu_s / prove_s)
    );
    println!("| key upload (once per key) | {} | | |", secs(prepare_s));
    let pipes = ctx.pipeline_timings();
    let total: f64 = pipes.iter().map(|p| p.seconds).sum();
    println!(
        "pipelines: {} built in {} ({})",
        pipes.len(),
        secs(total),
        pipes
            .iter()
            .map(|p| format!("{}::{} {}", p.module, p.entry, secs(p.seconds)))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let same = gpu_proof == cpu_proof;
    println!(
        "check: GPU proof verifies: yes; CPU proof verifies: {}; GPU proof == CPU proof (same r, s): {}",
        if cpu_ok { "yes" } else { "NO" },
        if same { "yes" } else { "NO" }
    );
    if !(cpu_ok && same) {
        return Err("the GPU and CPU proofs disagree".into());
    }
    Ok(())
}
