//! `zkgpu prove-circom circuit.zkey witness.wtns proof.json public.json`: rapidsnark's
//! command on the GPU. Reads a snarkjs key and witness, proves with circom's reduction,
//! writes snarkjs' `proof.json` and `public.json`, and reports what a user waits for. With
//! `--verify verification_key.json` the proof is checked against it before anything is
//! written; with `--compare` the same proof is made on the CPU cores (ark-groth16 with
//! circom's reduction, ark-circom's prover) for the same `r` and `s` and compared.

use std::path::{Path, PathBuf};
use std::time::Instant;

use ark_bls12_381::Bls12_381;
use ark_bn254::Bn254;
use ark_ff::{PrimeField, UniformRand};
use ark_groth16::VerifyingKey;
use ark_std::rand::{SeedableRng, rngs::StdRng};
use clap::Args;
use zkgpu_circom::{
    CircomCurve, CircomKey, CircomProof, CircomR1cs, Curve, read_verifying_key_json, read_wtns,
};
use zkgpu_groth16::{CacheOutcome, GpuProver, PreparedProvingKey};
use zkgpu_runtime::{ContextOptions, GpuContext};

use crate::prove_keys::cache_dir;
use crate::prove_report::{Step, secs};
use crate::prove_start::with_pipelines;

type BoxError = Box<dyn std::error::Error>;

/// Arguments of `zkgpu prove-circom` (rapidsnark's order).
#[derive(Args, Debug)]
pub struct CircomArgs {
    /// The snarkjs Groth16 key (BN254 or BLS12-381: its header tells which).
    zkey: PathBuf,
    /// The witness (`snarkjs wtns calculate`, or circom's generated witness calculator).
    wtns: PathBuf,
    /// Where to write the proof (snarkjs' proof.json).
    proof: PathBuf,
    /// Where to write the public signals (snarkjs' public.json).
    public: PathBuf,
    /// Verify the proof against this verification_key.json before writing anything.
    #[arg(long)]
    verify: Option<PathBuf>,
    /// Also prove on the CPU cores (ark-groth16 with circom's reduction: ark-circom's
    /// prover) with the same r and s; fail unless the proofs are equal, and report its time.
    #[arg(long)]
    compare: bool,
    /// Timed proofs after the first (the same witness, fresh randomness); medians reported.
    #[arg(long, default_value_t = 0)]
    runs: usize,
    /// Seed r and s from this number instead of the operating system's randomness
    /// (reproducible proofs for tests; never for real use: r and s must be secret).
    #[arg(long)]
    seed: Option<u64>,
    /// Where prepared keys and the pipeline cache are kept [default: $ZKGPU_CACHE, else
    /// $XDG_CACHE_HOME/zkgpu, else ~/.cache/zkgpu]: a key seen before loads in its GPU form
    /// without parsing the .zkey (it is only hashed).
    #[arg(long)]
    cache_dir: Option<PathBuf>,
    /// Read and prepare the key even when cached, and write no cache.
    #[arg(long)]
    no_cache: bool,
    /// Print nothing on success (as rapidsnark): errors only, on stderr.
    #[arg(long, conflicts_with = "json")]
    quiet: bool,
    /// Print one JSON object on stdout (the files written, the checks, every step's and the
    /// timed proofs' seconds) and nothing else.
    #[arg(long)]
    json: bool,
}

fn read(path: &Path) -> Result<Vec<u8>, BoxError> {
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()).into())
}

/// The generator of `r` and `s`: the operating system's randomness unless `seed` is given.
fn randomness(seed: Option<u64>) -> Result<StdRng, BoxError> {
    if let Some(s) = seed {
        return Ok(StdRng::seed_from_u64(s));
    }
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness for r and s: {e}"))?;
    Ok(StdRng::from_seed(bytes))
}

/// The key's hash (what its prepared form is cached under; `None` without a cache), the
/// witness and the verifying key read, with the seconds of the first two. The `.zkey` itself
/// is read one section at a time when it is prepared, never whole.
struct Inputs<E: CircomCurve> {
    hash: Option<[u8; 32]>,
    values: Vec<E::ScalarField>,
    vk: Option<VerifyingKey<E>>,
    seconds: (f64, f64),
}

fn read_inputs<E: CircomCurve>(args: &CircomArgs, cached: bool) -> Result<Inputs<E>, BoxError> {
    let verb = if cached { "hashing" } else { "opening" };
    let step = Step::new(format!("{verb} {}", args.zkey.display()));
    let hash = if cached {
        Some(zkgpu_circom::zkey_file_hash(&args.zkey)?)
    } else {
        // Opened here all the same: a missing key is reported before the GPU is opened.
        std::fs::File::open(&args.zkey).map_err(|e| format!("{}: {e}", args.zkey.display()))?;
        None
    };
    let bytes = std::fs::metadata(&args.zkey).map_or(0, |m| m.len());
    let t_zkey = step.done(&format!("({bytes} bytes)"));
    let step = Step::new(format!("reading {}", args.wtns.display()));
    let values =
        read_wtns(&read(&args.wtns)?).map_err(|e| format!("{}: {e}", args.wtns.display()))?;
    let t_wtns = step.done(&format!("({} values)", values.len()));
    let vk = match &args.verify {
        Some(p) => Some(
            read_verifying_key_json::<E>(&String::from_utf8_lossy(&read(p)?))
                .map_err(|e| format!("{}: {e}", p.display()))?,
        ),
        None => None,
    };
    Ok(Inputs {
        hash,
        values,
        vk,
        seconds: (t_zkey, t_wtns),
    })
}

/// The `.zkey` read one section at a time (its errors named with its path).
fn parse_zkey<E: CircomCurve>(args: &CircomArgs) -> Result<CircomKey<E>, BoxError> {
    zkgpu_circom::read_zkey_file::<E>(&args.zkey)
        .map_err(|e| format!("{}: {e}", args.zkey.display()).into())
}

/// The key prepared (from the cache under `dir` when there), pipelines built beside it, and
/// what happened.
fn prepare<E: CircomCurve>(
    args: &CircomArgs,
    prover: &GpuProver<E>,
    cache: Option<(&Path, [u8; 32])>,
) -> Result<(PreparedProvingKey<E>, String), BoxError> {
    let (prepared, pipes) = with_pipelines(prover, || -> Result<_, BoxError> {
        Ok(match cache {
            Some((d, hash)) => {
                let (p, o) = zkgpu_circom::prepare_cached_file(prover, &args.zkey, hash, d)
                    .map_err(|e| format!("{}: {e}", args.zkey.display()))?;
                (p, Some(o))
            }
            None => (parse_zkey::<E>(args)?.prepare(prover)?, None),
        })
    });
    let (prepared, outcome) = prepared?;
    pipes?;
    let note = match outcome {
        None => "(--no-cache: read, not stored)".to_owned(),
        Some(CacheOutcome::Loaded(p)) => {
            format!(
                "(loaded from {}; the .zkey hashed, not parsed)",
                p.display()
            )
        }
        Some(CacheOutcome::Created(p) | CacheOutcome::Updated(p)) => {
            format!("(read and cached in {})", p.display())
        }
        Some(CacheOutcome::Replaced(p, e)) => {
            format!("(cache refused, {e}; rewritten in {})", p.display())
        }
        Some(CacheOutcome::NotStored(_, e)) => format!("(not cached: {e})"),
    };
    Ok((prepared, note))
}

pub fn run(args: &CircomArgs, started: Instant) -> Result<(), BoxError> {
    crate::prove_report::set_quiet(args.quiet || args.json);
    check_output(&args.proof)?;
    check_output(&args.public)?;
    // The key's header names its curve (a missing or foreign file fails here, before the GPU
    // is opened).
    let curve = zkgpu_circom::zkey_file_curve(&args.zkey)
        .map_err(|e| format!("{}: {e}", args.zkey.display()))?;
    match curve {
        Curve::Bn254 => run_as::<Bn254>(args, started),
        Curve::Bls12_381 => run_as::<Bls12_381>(args, started),
    }
}

fn run_as<E: CircomCurve>(args: &CircomArgs, started: Instant) -> Result<(), BoxError> {
    let dir = (!args.no_cache)
        .then(|| cache_dir(args.cache_dir.as_deref()))
        .flatten();
    let Inputs {
        hash,
        values,
        vk,
        seconds: (t_zkey, t_wtns),
    } = read_inputs::<E>(args, dir.is_some())?;
    let step = Step::new("opening the GPU");
    let mut opts = ContextOptions::from_env()?;
    if opts.pipeline_cache_dir.is_none() {
        opts.pipeline_cache_dir = dir.as_ref().map(|d| d.join("pipelines"));
    }
    let ctx = GpuContext::new_blocking(opts)?;
    let t_ctx = step.done("");
    let prover = GpuProver::<E>::new(&ctx)?;
    let step = Step::new("preparing the key: bases and matrices to the GPU (pipelines beside)");
    let (prepared, note) = prepare(args, &prover, dir.as_deref().zip(hash))?;
    let t_prepare = step.done(&note);
    let loud = !(args.quiet || args.json);
    if loud {
        println!(
            "zkgpu prove-circom: {} constraints, {} signals, {} public ({}, circom's reduction, \
         domain 2^{}); GPU: {} ({:?}); CPU: {} threads",
            prepared.matrices().map_or(0, |m| m.num_constraints()),
            prepared.num_instance_variables() + prepared.num_witness_variables(),
            prepared.num_instance_variables() - 1,
            E::CURVE,
            prepared.domain_size().trailing_zeros(),
            ctx.info().name,
            ctx.info().backend,
            rayon::current_num_threads()
        );
    }
    let mut rng = randomness(args.seed)?;
    let (r, s) = (
        E::ScalarField::rand(&mut rng),
        E::ScalarField::rand(&mut rng),
    );
    let step = Step::new("first proof");
    let first = zkgpu_circom::prove_with_randomness(&prover, &prepared, values.clone(), r, s)?;
    let t_first = step.done("");
    if let Ok(Some(p)) = ctx.save_pipeline_cache() {
        tracing::info!("pipeline cache written to {}", p.display());
    }
    if let Some(vk) = &vk
        && !zkgpu_circom::verify(vk, &first.proof, &first.public_signals)?
    {
        return Err(format!(
            "the proof does not verify against {}: is it this key's verification key?",
            args.verify.as_deref().unwrap_or(Path::new("")).display()
        )
        .into());
    }
    let cpu = if args.compare {
        Some(compare(&parse_zkey::<E>(args)?, &values, (r, s), &first)?)
    } else {
        None
    };
    write(&args.proof, &zkgpu_circom::proof_json(&first.proof))?;
    write(
        &args.public,
        &zkgpu_circom::public_json(&first.public_signals),
    )?;
    let to_written = started.elapsed().as_secs_f64();
    let mut runs = Vec::new();
    for _ in 0..args.runs {
        let (r, s) = (
            E::ScalarField::rand(&mut rng),
            E::ScalarField::rand(&mut rng),
        );
        runs.push(
            zkgpu_circom::prove_with_randomness(&prover, &prepared, values.clone(), r, s)?.timings,
        );
    }
    let steps = [
        ("hash the .zkey (read in pieces)", t_zkey),
        ("read the .wtns", t_wtns),
        ("GPU context", t_ctx),
        (
            "prepare the key (cached: load it; else parse, check, upload)",
            t_prepare,
        ),
        ("first proof", t_first),
        ("**process start to proof.json written**", to_written),
    ];
    if args.json {
        println!("{}", json_report(args, &steps, &runs, cpu, vk.is_some()));
    } else if loud {
        print_steps(&steps);
        report(args, &mut runs, cpu, vk.is_some());
    }
    Ok(())
}

/// `--json`'s object: the files, the checks, the steps' seconds (keys from their names),
/// and each timed proof's seconds.
fn json_report(
    args: &CircomArgs,
    steps: &[(&str, f64)],
    runs: &[zkgpu_groth16::ProofTimings],
    cpu: Option<f64>,
    verified: bool,
) -> String {
    let text = |p: &Path| format!("{:?}", p.display().to_string());
    let key = |name: &str| {
        name.chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == ' ')
            .collect::<String>()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join("_")
            .to_lowercase()
    };
    let steps: Vec<String> = steps
        .iter()
        .map(|(name, s)| format!("{:?}: {s}", key(name)))
        .collect();
    let proofs: Vec<String> = runs.iter().map(|t| t.total.to_string()).collect();
    format!(
        "{{\"proof\": {}, \"public\": {}, \"verified\": {verified}, \"cpu_compared\": {}, \"cpu_seconds\": {}, \"steps_seconds\": {{{}}}, \"timed_proofs_seconds\": [{}]}}",
        text(&args.proof),
        text(&args.public),
        cpu.is_some(),
        cpu.map_or("null".to_owned(), |c| c.to_string()),
        steps.join(", "),
        proofs.join(", ")
    )
}

/// The timed proofs' medians and the closing check line.
fn report(
    args: &CircomArgs,
    runs: &mut [zkgpu_groth16::ProofTimings],
    cpu: Option<f64>,
    verified: bool,
) {
    if !runs.is_empty() {
        report_runs(runs, cpu);
    } else if let Some(c) = cpu {
        println!(
            "| CPU proof (ark-groth16, circom's reduction, {} threads) | {} |",
            rayon::current_num_threads(),
            secs(c)
        );
    }
    println!(
        "check: proof written to {} and {}; verified against the verification key: {}; equal to the CPU proof: {}",
        args.proof.display(),
        args.public.display(),
        if verified {
            "yes"
        } else {
            "not asked (--verify)"
        },
        if cpu.is_some() {
            "yes"
        } else {
            "not asked (--compare)"
        }
    );
}

fn print_steps(steps: &[(&str, f64)]) {
    println!();
    println!("| step | time |");
    println!("|---|---|");
    for (what, t) in steps {
        println!("| {what} | {} |", secs(*t));
    }
}

/// The CPU proof for the same `r` and `s`, which must equal the GPU's; its seconds.
fn compare<E: CircomCurve>(
    key: &CircomKey<E>,
    values: &[E::ScalarField],
    rs: (E::ScalarField, E::ScalarField),
    gpu: &CircomProof<E>,
) -> Result<f64, BoxError> {
    let step = Step::new("the same proof on the CPU (ark-groth16, circom's reduction)");
    let cpu = zkgpu_circom::reference_proof(key, values, rs.0, rs.1)?;
    let t = step.done("");
    if cpu != gpu.proof {
        return Err("the GPU proof differs from the CPU proof for the same r and s".into());
    }
    Ok(t)
}

/// Median timings of the timed proofs, beside the CPU proof's time.
fn report_runs(runs: &mut [zkgpu_groth16::ProofTimings], cpu: Option<f64>) {
    let median = |f: fn(&zkgpu_groth16::ProofTimings) -> f64,
                  runs: &mut [zkgpu_groth16::ProofTimings]| {
        runs.sort_by(|a, b| f(a).total_cmp(&f(b)));
        f(&runs[runs.len() / 2])
    };
    let total = median(|t| t.total, runs);
    println!();
    println!(
        "| per proof (median of {}) | zkgpu | CPU, {} threads | ratio |",
        runs.len(),
        rayon::current_num_threads()
    );
    println!("|---|---|---|---|");
    match cpu {
        Some(c) => println!(
            "| **proof** | **{}** | {} | **{:.1}x** |",
            secs(total),
            secs(c),
            c / total
        ),
        None => println!(
            "| **proof** | **{}** | not run (--compare) | |",
            secs(total)
        ),
    }
    for (what, f) in [
        (
            "GPU part: witness map and five MSMs",
            (|t| t.prove) as fn(&zkgpu_groth16::ProofTimings) -> f64,
        ),
        ("- witness map (6 NTTs, a b - c)", |t| t.witness_map),
        ("- MSM H", |t| t.msm_h),
        ("- MSM B in G2", |t| t.msm_b_g2),
        ("- MSM A, B in G1, L", |t| t.msm_a_b_l),
        ("self-check (verify)", |t| t.verify),
    ] {
        println!("| {what} | {} | | |", secs(median(f, runs)));
    }
}

/// Checks that `path` can be written (its folder exists, it is not a folder, a file can be
/// made beside it) before the work whose result goes there.
pub(crate) fn check_output(path: &Path) -> Result<(), BoxError> {
    if path.is_dir() {
        return Err(format!("{}: is a directory, not a file to write", path.display()).into());
    }
    let tmp = path.with_extension("zkgpu-tmp");
    std::fs::write(&tmp, b"")
        .and_then(|()| std::fs::remove_file(&tmp))
        .map_err(|e| format!("{}: cannot be written: {e}", path.display()).into())
}

/// Writes `text` to `path` whole (a temporary file renamed), so that a failure leaves none.
pub(crate) fn write(path: &Path, text: &str) -> Result<(), BoxError> {
    let tmp = path.with_extension("zkgpu-tmp");
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            format!("{}: {e}", path.display()).into()
        })
}

/// Arguments of `zkgpu circom-setup`.
#[derive(Args, Debug)]
pub struct SetupArgs {
    /// The circuit, as circom compiled it (`circom --r1cs`).
    r1cs: PathBuf,
    /// Where to write the snarkjs Groth16 key.
    zkey: PathBuf,
    /// Seed the toxic waste from this number (reproducible keys for tests and benchmarks;
    /// never for a key anyone else relies on).
    #[arg(long)]
    seed: Option<u64>,
}

/// `zkgpu circom-setup circuit.r1cs circuit.zkey`: a Groth16 key with circom's reduction from
/// ark-groth16's generator on the CPU cores (a single party's key, for tests and benchmarks:
/// snarkjs' setup of a large circuit takes hours), written as a `.zkey` that
/// `prove-circom`, snarkjs and rapidsnark read.
pub fn setup(args: &SetupArgs) -> Result<(), BoxError> {
    let bytes = read(&args.r1cs)?;
    let named = |e: zkgpu_circom::CircomError| format!("{}: {e}", args.r1cs.display());
    match zkgpu_circom::r1cs_curve(&bytes).map_err(named)? {
        Curve::Bn254 => setup_as::<Bn254>(args, &bytes),
        Curve::Bls12_381 => setup_as::<Bls12_381>(args, &bytes),
    }
}

fn setup_as<E: CircomCurve>(args: &SetupArgs, bytes: &[u8]) -> Result<(), BoxError> {
    let step = Step::new(format!("reading {}", args.r1cs.display()));
    let r1cs = zkgpu_circom::read_r1cs::<E::ScalarField>(bytes)
        .map_err(|e| format!("{}: {e}", args.r1cs.display()))?;
    step.done(&r1cs_summary(&r1cs));
    setup_and_write::<E>(&r1cs, &mut randomness(args.seed)?, &args.zkey)
}

/// A circuit's counts, as the steps print them.
pub(crate) fn r1cs_summary<F: PrimeField>(r1cs: &CircomR1cs<F>) -> String {
    format!(
        "({} constraints, {} wires, {} public)",
        r1cs.num_constraints(),
        r1cs.num_wires,
        r1cs.num_public
    )
}

/// The key of `r1cs` from ark-groth16's generator with circom's reduction, written to `path`
/// as a `.zkey`; both steps timed.
pub(crate) fn setup_and_write<E: CircomCurve>(
    r1cs: &CircomR1cs<E::ScalarField>,
    rng: &mut StdRng,
    path: &Path,
) -> Result<(), BoxError> {
    let step = Step::new(format!(
        "ark-groth16's generator, circom's reduction ({} threads)",
        rayon::current_num_threads()
    ));
    let key = zkgpu_circom::setup::<E>(r1cs, rng)?;
    step.done(&format!(
        "(domain 2^{})",
        key.domain_size().trailing_zeros()
    ));
    let step = Step::new(format!("writing {}", path.display()));
    let bytes = zkgpu_circom::write_zkey(&key);
    let len = bytes.len();
    std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    step.done(&format!("({len} bytes)"));
    Ok(())
}
