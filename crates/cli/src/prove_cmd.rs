//! `zkgpu prove`: Groth16 proofs of a real circuit on the GPU and with ark-groth16 on the CPU
//! cores, same key, same witness, same `r` and `s`; both verified, the proofs compared, and
//! what a user waits for reported: time to the first proof, each proof's wall time with its
//! synthesis, a stream's proofs per second. Exits non-zero when anything disagrees.

use std::path::Path;
use std::time::Instant;

use ark_crypto_primitives::sponge::Absorb;
use ark_ff::UniformRand;
use ark_groth16::{Groth16, ProvingKey};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use clap::{Args, ValueEnum};
use zkgpu_circuits::{AnyCircuit, Family};
use zkgpu_groth16::{
    GpuPairing, GpuProver, Lane, PreparedProvingKey, ProveRequest, prove_stream_across,
};
use zkgpu_runtime::{BlockOn, DeviceChoice, DeviceSet, GpuContext};

use crate::prove_devices::other_lanes;
use crate::prove_keys::{KeyFiles, cache_dir};
use crate::prove_report::{Report, Step, StreamRun, secs};
use crate::prove_start::{First, FirstCircuit, Started, describe, fresh, reference_key, start};

type BoxError = Box<dyn std::error::Error>;

/// Circuit families.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CircuitArg {
    /// SHA-256 chain (0/1-heavy witness).
    Sha256,
    /// Poseidon Merkle paths of depth 20 (full-size witness).
    Merkle,
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
    /// The pairing: bls12-381, bls12-377 or bn254 (the pairing registry).
    #[arg(long, default_value = "bls12-381", value_parser = zkgpu_groth16::Pairing::from_name)]
    curve: zkgpu_groth16::Pairing,
    /// Timed proofs after the first one, one at a time (fresh witness and randomness each);
    /// medians are reported.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Prove this many fresh circuits through the proving stream (synthesis of the next ones
    /// on CPU threads while the GPU proves) and report proofs per second against
    /// ark-groth16 proving them one after the other.
    #[arg(long, default_value_t = 0)]
    stream: usize,
    /// How many of the stream's circuits ark-groth16 proves for the comparison [default:
    /// all]; its rate is measured on those.
    #[arg(long)]
    cpu_proofs: Option<usize>,
    /// Skip every ark-groth16 proof (quick timing runs): the GPU proofs are still verified,
    /// but not compared with ark-groth16's.
    #[arg(long)]
    no_reference: bool,
    /// Synthesis threads of the stream [default: half the cores, 1 to 8].
    #[arg(long)]
    stream_workers: Option<usize>,
    /// Where proving keys, prepared keys and the pipeline cache are kept [default:
    /// $ZKGPU_CACHE, else $XDG_CACHE_HOME/zkgpu, else ~/.cache/zkgpu].
    #[arg(long)]
    cache_dir: Option<std::path::PathBuf>,
    /// Run the setup and prepare the key even when cached (and write no cache).
    #[arg(long)]
    no_cache: bool,
    /// Run every stage alone (no second host thread): a clean per-stage profile, slower.
    #[arg(long)]
    sequential: bool,
    /// Make the timed proofs with `GpuProver::run` on one thread, its waits yielding
    /// as a browser's do (`GpuContext::set_yielding_waits`), so that the witness map's host
    /// work overlaps the MSMs' GPU work (what a browser runs); with `--sequential`, waits
    /// block and every stage runs alone.
    #[arg(long)]
    single_thread: bool,
    /// Do not run small NTTs during synthesis to keep the GPU's clock up
    /// (`GpuProver::with_clock_warmup`).
    #[arg(long)]
    no_clock_warmup: bool,
    /// Store the proving key's bases without window multiples (`GpuProver::with_folding`):
    /// less GPU memory and a faster first preparation, slower MSMs. Software adapters never
    /// fold.
    #[arg(long)]
    no_fold: bool,
    /// The devices of the stream: `all` suitable adapters, a count, or `adapters:I,J,...`
    /// (numbers of `zkgpu info`). The stream's circuits are proved on the first device alone
    /// and then across all of them (whole proofs fanned out), and both rates are reported.
    /// Needs `--stream`.
    #[arg(long)]
    devices: Option<DeviceChoice>,
}

pub fn run(args: &ProveArgs, started: Instant) -> Result<(), BoxError> {
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
    if args.devices.is_some() && args.stream == 0 {
        return Err("--devices needs --stream N".into());
    }
    zkgpu_groth16::with_pairing!(args.curve, E => prove::<E>(args, started))
}

fn prove<E>(args: &ProveArgs, started: Instant) -> Result<(), BoxError>
where
    E: GpuPairing<ScalarField: Absorb>,
{
    let circuit_name = format!("{:?}", args.circuit).to_lowercase();
    let dir = (!args.no_cache)
        .then(|| cache_dir(args.cache_dir.as_deref()))
        .flatten();
    let mut report = Report::new();
    let (set, prover) = open_gpu::<E>(args, dir.as_deref(), &circuit_name, &mut report)?;
    let ctx = set.contexts()[0].clone();
    let family = match args.circuit {
        CircuitArg::Sha256 => Family::Sha256,
        CircuitArg::Merkle => Family::Merkle,
    };
    let files = dir
        .as_deref()
        .map(|d| KeyFiles::new(d, E::NAME, &circuit_name, args.log_constraints));
    let Started {
        shape,
        prepared,
        pk,
        first,
    } = start::<E>(
        &prover,
        (family, args.log_constraints),
        dir.as_deref(),
        files.as_ref(),
        &mut report,
    )?;
    describe(&shape, &prepared);
    first_proof(&prover, &prepared, &shape, first, started, &mut report)?;
    if let Ok(Some(p)) = ctx.save_pipeline_cache() {
        tracing::info!("pipeline cache written to {}", p.display());
    }
    let (c, seed, gpu_proof) = timed_proofs(args, &prover, &prepared, &shape, &mut report)?;
    let pk = if args.no_reference {
        None
    } else {
        let pk = match pk {
            Some(pk) => pk,
            None => reference_key::<E>(files.as_ref(), &prepared)?,
        };
        reference_proof(&pk, &shape, c, seed, &gpu_proof, &mut report)?;
        Some(pk)
    };
    if args.stream > 0 {
        let step = Step::new(format!("{} fresh circuits", args.stream));
        let circuits: Vec<_> = (0..args.stream)
            .map(|i| fresh::<E>(&shape, 1000 + i as u64))
            .collect();
        step.done("");
        let lane = [(&prover, &prepared)];
        let (run, proofs) = stream::<E>(args, &lane, pk.as_ref(), &circuits)?;
        report.stream(run);
        if args.devices.is_some() {
            let configure =
                |ctx: &GpuContext| configured::<E>(args, ctx).map_err(|e| e.to_string());
            let others = other_lanes(&set, &configure, &prepared, pk.as_ref(), dir.as_deref())?;
            let mut lanes = vec![(&prover, &prepared)];
            lanes.extend(others.iter().map(|(p, k)| (p, k)));
            let (run, across) = stream::<E>(args, &lanes, None, &circuits)?;
            if across != proofs {
                return Err("the proofs across devices differ from one device's".into());
            }
            report.stream_across(lanes.len(), run);
        }
    }
    report.print(
        args.sequential,
        ctx.pipeline_timings(),
        ctx.has_pipeline_cache(),
    );
    println!(
        "check: every GPU proof verifies; GPU proof == ark-groth16 proof (same circuit, r, s): {}",
        if args.no_reference {
            "not run (--no-reference)"
        } else {
            "yes"
        }
    );
    Ok(())
}

/// The GPU context (its pipeline cache in the cache directory unless the environment names
/// one), with the other devices of `--devices` after it, and the prover of the first with
/// the flags' settings.
fn open_gpu<E: GpuPairing>(
    args: &ProveArgs,
    dir: Option<&Path>,
    circuit_name: &str,
    report: &mut Report,
) -> Result<(DeviceSet, GpuProver<E>), BoxError> {
    let step = Step::new("opening the GPU");
    let opts = crate::prove_keys::context_options(dir)?;
    let set = match &args.devices {
        Some(choice) => DeviceSet::open_blocking(opts, choice)?,
        None => DeviceSet::from_contexts(vec![GpuContext::new_blocking(opts)?])?,
    };
    let ctx = &set.contexts()[0];
    report.cost("GPU context", step.done(""));
    println!(
        "zkgpu prove: {circuit_name}, 2^{} constraint budget, {}; GPU: {} ({:?}); CPU: {} threads",
        args.log_constraints,
        E::NAME,
        ctx.info().name,
        ctx.info().backend,
        rayon::current_num_threads()
    );
    if ctx.is_software() {
        println!(
            "note: {} is a software adapter (device type Cpu), hundreds of times slower than a \
             GPU: window multiples are not stored there (they cost more than they save)",
            ctx.info().name
        );
    }
    if set.len() > 1 {
        let names: Vec<&str> = set
            .contexts()
            .iter()
            .map(|c| c.info().name.as_str())
            .collect();
        println!("stream devices: {}", names.join(", "));
    }
    let prover = configured::<E>(args, ctx)?;
    Ok((set, prover))
}

/// The prover on `ctx` with the flags' settings.
pub(crate) fn configured<E: GpuPairing>(
    args: &ProveArgs,
    ctx: &GpuContext,
) -> Result<GpuProver<E>, BoxError> {
    ctx.set_yielding_waits(args.single_thread && !args.sequential);
    let mut prover = GpuProver::<E>::new(ctx)?.with_overlap(!args.sequential);
    if args.no_clock_warmup {
        prover = prover.with_clock_warmup(false);
    }
    if args.no_fold {
        prover = prover.with_folding(false);
    }
    if let Some(w) = args.stream_workers {
        prover = prover.with_stream_workers(w);
    }
    Ok(prover)
}

/// The first proof, what a user waits for after starting the process: proved, timed from
/// `started`, and verified.
fn first_proof<E: GpuPairing<ScalarField: Absorb>>(
    prover: &GpuProver<E>,
    prepared: &PreparedProvingKey<E>,
    shape: &AnyCircuit<E::ScalarField>,
    first: FirstCircuit<E>,
    started: Instant,
    report: &mut Report,
) -> Result<(), BoxError> {
    let step = Step::new("first proof");
    let (public, r, s) = (first.1, first.2, first.3);
    let (proof, t) = match first.0 {
        First::Witness(w, secs_w) if prepared.matrices().is_some() => {
            report.cost("(first witness, synthesized beside the key)", secs_w);
            prover.run(ProveRequest::witness(prepared, w, (r, s)))?
        }
        First::Witness(..) => {
            let (c, _, _) = fresh::<E>(shape, 100);
            prover.run(ProveRequest::circuit(prepared, c, (r, s)))?
        }
        First::Circuit(c) => prover.run(ProveRequest::circuit(prepared, c, (r, s)))?,
    };
    report.cost(
        "first proof",
        step.done(&format!("(GPU part {})", secs(t.prove))),
    );
    report.first_proof(started.elapsed().as_secs_f64());
    if !Groth16::<E>::verify_proof(prepared.verifying_key(), &proof, &public)? {
        return Err("the first GPU proof does not verify".into());
    }
    Ok(())
}

/// `--runs` timed proofs, one at a time, each of a fresh circuit and verified; the last
/// circuit, its seed and its proof.
#[allow(clippy::type_complexity)]
fn timed_proofs<E: GpuPairing<ScalarField: Absorb>>(
    args: &ProveArgs,
    prover: &GpuProver<E>,
    prepared: &PreparedProvingKey<E>,
    shape: &AnyCircuit<E::ScalarField>,
    report: &mut Report,
) -> Result<(AnyCircuit<E::ScalarField>, u64, ark_groth16::Proof<E>), BoxError> {
    let mut last = None;
    for run in 0..args.runs {
        let step = Step::new(format!("GPU proof {}/{}", run + 1, args.runs));
        let seed = 200 + run as u64;
        let (c, public, mut rng) = fresh::<E>(shape, seed);
        let (r, s) = (
            E::ScalarField::rand(&mut rng),
            E::ScalarField::rand(&mut rng),
        );
        let (proof, t) = if args.single_thread {
            prover
                .run_async(ProveRequest::circuit(prepared, c.clone(), (r, s)))
                .block_on()?
        } else {
            prover.run(ProveRequest::circuit(prepared, c.clone(), (r, s)))?
        };
        step.done(&format!(
            "(synthesis {}, GPU part {})",
            secs(t.synthesis),
            secs(t.prove)
        ));
        if !Groth16::<E>::verify_proof(prepared.verifying_key(), &proof, &public)? {
            return Err(format!("GPU proof {run} does not verify").into());
        }
        report.run(t);
        last = Some((c, seed, proof));
    }
    last.ok_or_else(|| "no GPU proof".into())
}

/// ark-groth16's whole proof (synthesis with matrices included) of circuit `c`, with the
/// `r` and `s` of `seed`: timed, and equal to the GPU's.
fn reference_proof<E: GpuPairing<ScalarField: Absorb>>(
    pk: &ProvingKey<E>,
    shape: &AnyCircuit<E::ScalarField>,
    c: AnyCircuit<E::ScalarField>,
    seed: u64,
    gpu_proof: &ark_groth16::Proof<E>,
    report: &mut Report,
) -> Result<(), BoxError> {
    let step = Step::new(format!(
        "ark-groth16 proof on {} CPU threads (synthesis included)",
        rayon::current_num_threads()
    ));
    let mut rng = fresh::<E>(shape, seed).2;
    let cpu_proof = Groth16::<E>::create_random_proof_with_reduction(c, pk, &mut rng)?;
    report.cpu_proof(step.done(""));
    if &cpu_proof != gpu_proof {
        return Err("the GPU and ark-groth16 proofs of the same circuit, r and s differ".into());
    }
    Ok(())
}

/// A stream's circuit: the circuit, its public inputs and its seed's generator.
type Fresh<E> = (
    AnyCircuit<<E as ark_ec::pairing::Pairing>::ScalarField>,
    Vec<<E as ark_ec::pairing::Pairing>::ScalarField>,
    StdRng,
);

/// `--stream N`: the circuits through the proving stream on `lanes` (one device's prover
/// and key, or several: `prove_stream_across`), every proof verified, and ark-groth16
/// proving them (or the first `--cpu-proofs` of them) one after the other with the same
/// generator where `pk` is given. The run and the proofs.
fn stream<E: GpuPairing<ScalarField: Absorb>>(
    args: &ProveArgs,
    lanes: &[Lane<'_, E>],
    pk: Option<&ProvingKey<E>>,
    circuits: &[Fresh<E>],
) -> Result<(StreamRun, Vec<ark_groth16::Proof<E>>), BoxError> {
    let n = circuits.len();
    let step = Step::new(format!(
        "{n} proofs through the proving stream on {} device(s)",
        lanes.len()
    ));
    let t = Instant::now();
    let batch = circuits.iter().map(|(c, ..)| c.clone()).collect::<Vec<_>>();
    let mut stream = prove_stream_across(lanes, batch, StdRng::seed_from_u64(7))?;
    let (mut proofs, mut parts) = (Vec::new(), Vec::new());
    while let Some(p) = stream.next() {
        proofs.push(p?);
        parts.extend(stream.last_timings().map(|t| (t.synthesis, t.prove)));
    }
    let workers = stream.workers();
    drop(stream);
    let gpu = t.elapsed().as_secs_f64();
    let median = |f: fn(&(f64, f64)) -> f64| {
        let mut v: Vec<f64> = parts.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    step.done(&format!("({:.2} proofs/s)", n as f64 / gpu));
    let pvk = lanes[0].1.verifying_key();
    for ((_, public, _), p) in circuits.iter().zip(&proofs) {
        if !Groth16::<E>::verify_proof(pvk, p, public)? {
            return Err("a streamed proof does not verify".into());
        }
    }
    let m = pk.map_or(0, |_| args.cpu_proofs.unwrap_or(n).min(n));
    let mut cpu = 0.0;
    if let (Some(pk), true) = (pk, m > 0) {
        let step = Step::new(format!("{m} ark-groth16 proofs, one after the other"));
        let mut rng = StdRng::seed_from_u64(7);
        let t = Instant::now();
        for ((c, ..), p) in circuits.iter().zip(&proofs).take(m) {
            let want = Groth16::<E>::create_random_proof_with_reduction(c.clone(), pk, &mut rng)?;
            if &want != p {
                return Err("a streamed proof differs from ark-groth16's".into());
            }
        }
        cpu = t.elapsed().as_secs_f64();
        step.done("");
    }
    let run = StreamRun {
        gpu_proofs: n,
        gpu_seconds: gpu,
        workers,
        synthesis: median(|p| p.0),
        gpu_part: median(|p| p.1),
        cpu_proofs: m,
        cpu_seconds: cpu,
    };
    Ok((run, proofs))
}
