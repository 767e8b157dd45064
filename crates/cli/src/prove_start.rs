//! The start of `zkgpu prove`: the circuit sized (and the first witness synthesized) on
//! another thread while the prepared key loads from its cache, else the arkworks key (file or
//! setup) prepared and cached, pipelines built meanwhile.

use std::path::Path;
use std::time::Instant;

use ark_crypto_primitives::sponge::Absorb;
use ark_ff::UniformRand;
use ark_groth16::{Groth16, ProvingKey};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use zkgpu_circuits::{AnyCircuit, Family, sized};
use zkgpu_groth16::{
    CacheOutcome, GpuPairing, GpuProver, PreparedProvingKey, Witness, key_hash, synthesize_witness,
};

use crate::prove_keys::{KeyFiles, hex};
use crate::prove_report::{Report, Step};

type BoxError = Box<dyn std::error::Error>;

/// A fresh circuit of `shape`'s size, its public inputs and a seeded generator for `r`, `s`.
pub(crate) fn fresh<E: GpuPairing<ScalarField: Absorb>>(
    shape: &AnyCircuit<E::ScalarField>,
    seed: u64,
) -> (AnyCircuit<E::ScalarField>, Vec<E::ScalarField>, StdRng) {
    let mut rng = StdRng::seed_from_u64(seed);
    let (c, public) = shape.fresh(&mut rng);
    (c, public, StdRng::seed_from_u64(seed ^ 0x5eed))
}

/// What the start leaves: the circuit's size, the prepared key, the arkworks key where it
/// was loaded or made, and the first circuit.
pub(crate) struct Started<E: GpuPairing> {
    pub shape: AnyCircuit<E::ScalarField>,
    pub prepared: PreparedProvingKey<E>,
    pub pk: Option<ProvingKey<E>>,
    pub first: FirstCircuit<E>,
}

/// The first circuit, its public inputs, `r` and `s`.
pub(crate) type FirstCircuit<E> = (
    First<E>,
    Vec<<E as ark_ec::pairing::Pairing>::ScalarField>,
    <E as ark_ec::pairing::Pairing>::ScalarField,
    <E as ark_ec::pairing::Pairing>::ScalarField,
);

/// The start: with a cached key, the circuit is sized and the first circuit's witness
/// synthesized on another thread while the key loads, as a user's process would build its
/// first witness while the key loads.
pub(crate) fn start<E: GpuPairing<ScalarField: Absorb>>(
    prover: &GpuProver<E>,
    (family, log_constraints): (Family, u32),
    dir: Option<&Path>,
    files: Option<&KeyFiles>,
    report: &mut Report,
) -> Result<Started<E>, BoxError> {
    let cached = files
        .and_then(KeyFiles::hash)
        .zip(dir)
        .is_some_and(|(h, d)| prover.cache_file(d, &h).exists());
    let (early, fast) = std::thread::scope(|s| {
        let early = s.spawn(|| early_work::<E>(family, log_constraints, cached));
        let fast = fast_start(prover, dir, files, report);
        (early.join(), fast)
    });
    let early = early.map_err(|_| "sizing the circuit panicked")??;
    let shape = early.shape;
    eprintln!(
        "sizing the circuit: {}",
        crate::prove_report::secs(early.sizing)
    );
    let (prepared, pk) = match fast {
        Some(prepared) => {
            report.cost("(sizing the circuit, beside the key)", early.sizing);
            (prepared, None)
        }
        None => {
            report.cost("sizing the circuit", early.sizing);
            let (prepared, pk) = slow_start(prover, &shape, dir, files, report)?;
            (prepared, Some(pk))
        }
    };
    Ok(Started {
        shape,
        prepared,
        pk,
        first: early.first,
    })
}

/// The first circuit to prove: synthesized already (its seconds), or not.
pub(crate) enum First<E: GpuPairing> {
    Witness(Witness<E::ScalarField>, f64),
    Circuit(AnyCircuit<E::ScalarField>),
}

/// What runs beside the key's load: the circuit's size, and the first circuit (its witness
/// synthesized when `synthesize`) with its public inputs, `r` and `s`.
struct Early<E: GpuPairing> {
    shape: AnyCircuit<E::ScalarField>,
    sizing: f64,
    first: FirstCircuit<E>,
}

fn early_work<E: GpuPairing<ScalarField: Absorb>>(
    family: Family,
    log_constraints: u32,
    synthesize: bool,
) -> Result<Early<E>, ark_relations::gr1cs::SynthesisError> {
    let t = Instant::now();
    let (shape, _) =
        sized::<E::ScalarField, _>(family, log_constraints, &mut StdRng::seed_from_u64(0))?;
    let sizing = t.elapsed().as_secs_f64();
    let (c, public, mut rng) = fresh::<E>(&shape, 100);
    let (r, s) = (
        E::ScalarField::rand(&mut rng),
        E::ScalarField::rand(&mut rng),
    );
    let first = if synthesize {
        let t = Instant::now();
        let w = synthesize_witness(c)?;
        First::Witness(w, t.elapsed().as_secs_f64())
    } else {
        First::Circuit(c)
    };
    Ok(Early {
        shape,
        sizing,
        first: (first, public, r, s),
    })
}

/// The prepared key from its cache file, named by the key hash recorded beside the
/// arkworks key, with the pipelines built meanwhile on another thread; None when there is no
/// such file or it is refused (said on stderr).
fn fast_start<E: GpuPairing>(
    prover: &GpuProver<E>,
    dir: Option<&Path>,
    files: Option<&KeyFiles>,
    report: &mut Report,
) -> Option<PreparedProvingKey<E>> {
    let hash = files?.hash()?;
    let path = prover.cache_file(dir?, &hash);
    if !path.exists() {
        return None;
    }
    let step = Step::new(format!(
        "loading the prepared key from {} (pipelines built meanwhile)",
        path.display()
    ));
    let (loaded, pipes) = with_pipelines(prover, || prover.load_prepared(&path, Some(&hash)));
    match loaded {
        Ok(p) => {
            let s = step.done(&format!("({:.2} GB)", p.gpu_bytes() as f64 / 1e9));
            report.cost("prepared key from its cache (pipelines beside it)", s);
            report.pipelines_beside(pipes.ok()?);
            Some(p)
        }
        Err(e) => {
            step.done(&format!("(refused: {e})"));
            None
        }
    }
}

/// The arkworks key (from its file, else the setup), then its prepared form (from the cache
/// when it is there, else prepared and cached), pipelines built meanwhile.
fn slow_start<E: GpuPairing<ScalarField: Absorb>>(
    prover: &GpuProver<E>,
    shape: &AnyCircuit<E::ScalarField>,
    dir: Option<&Path>,
    files: Option<&KeyFiles>,
    report: &mut Report,
) -> Result<(PreparedProvingKey<E>, ProvingKey<E>), BoxError> {
    let loaded = files.and_then(|f| {
        f.key.exists().then(|| {
            let step = Step::new(format!("loading the proving key from {}", f.key.display()));
            let pk = f.load::<E>();
            report.cost(
                "proving key from disk",
                step.done(if pk.is_some() { "" } else { "(unreadable)" }),
            );
            pk
        })?
    });
    let pk = match loaded {
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
            report.cost("setup", step.done(""));
            if let Some(f) = files
                && let Err(e) = f.store(&pk, &key_hash(&pk))
            {
                eprintln!("caching the proving key in {} failed: {e}", f.key.display());
            }
            pk
        }
    };
    let step = Step::new(
        "preparing the key: bases to the GPU, the circuit's matrices (pipelines built meanwhile)",
    );
    let (prepared, pipes) = with_pipelines(prover, || match dir {
        Some(d) => prover
            .prepare_cached_for(&pk, shape.clone(), d)
            .map(|(p, o)| (p, Some(o))),
        None => prover.prepare_for(&pk, shape.clone()).map(|p| (p, None)),
    });
    let (prepared, outcome) = prepared?;
    let note = match &outcome {
        None => "(--no-cache: not stored)".to_owned(),
        Some(CacheOutcome::Loaded(p)) => format!("(loaded from {})", p.display()),
        Some(CacheOutcome::Created(p) | CacheOutcome::Updated(p)) => {
            format!("(cached in {})", p.display())
        }
        Some(CacheOutcome::Replaced(p, e)) => {
            format!("(cache refused, {e}; rewritten in {})", p.display())
        }
        Some(CacheOutcome::NotStored(_, e)) => format!("(not cached: {e})"),
    };
    report.cost("prepared key (pipelines beside it)", step.done(&note));
    report.pipelines_beside(pipes?);
    if let (Some(f), Some(h)) = (files, prepared.key_hash()) {
        let _ = f.store_hash(&h);
    }
    Ok((prepared, pk))
}

/// `f()` on this thread while another builds every pipeline of the prover; the pipelines'
/// wall time.
pub(crate) fn with_pipelines<E: GpuPairing, T>(
    prover: &GpuProver<E>,
    f: impl FnOnce() -> T,
) -> (T, Result<f64, BoxError>) {
    std::thread::scope(|s| {
        let pipes = s.spawn(|| {
            let t = Instant::now();
            prover.build_pipelines().map(|()| t.elapsed().as_secs_f64())
        });
        let v = f();
        let pipes = match pipes.join() {
            Ok(r) => r.map_err(BoxError::from),
            Err(_) => Err("building the pipelines panicked".into()),
        };
        (v, pipes)
    })
}

/// The arkworks key for the reference proofs (after a fast start), checked against the
/// prepared key's hash.
pub(crate) fn reference_key<E: GpuPairing>(
    files: Option<&KeyFiles>,
    prepared: &PreparedProvingKey<E>,
) -> Result<ProvingKey<E>, BoxError> {
    let files = files.ok_or("no key files")?;
    let step = Step::new(format!(
        "loading the proving key for ark-groth16 from {}",
        files.key.display()
    ));
    let pk = files
        .load::<E>()
        .ok_or("the proving key file is unreadable")?;
    let hash = key_hash(&pk);
    step.done("");
    if prepared.key_hash() != Some(hash) {
        return Err(format!(
            "the cached prepared key is not the proving key's (hash {})",
            hex(&hash[..8])
        )
        .into());
    }
    Ok(pk)
}

pub(crate) fn describe<F: ark_ff::PrimeField + Absorb, E: GpuPairing<ScalarField = F>>(
    shape: &AnyCircuit<F>,
    prepared: &PreparedProvingKey<E>,
) {
    let what = match shape {
        AnyCircuit::Sha256(c) => format!("{} chained SHA-256 hashes of 32 bytes", c.hashes),
        AnyCircuit::Merkle(c) => format!(
            "{} Poseidon Merkle paths of depth {}",
            c.paths.len(),
            zkgpu_circuits::MERKLE_DEPTH
        ),
    };
    let constraints = prepared.matrices().map_or(0, |m| m.num_constraints());
    println!(
        "circuit: {what}: {constraints} constraints, {} instance variables, domain 2^{}; \
         prepared key {:.2} GB on the GPU (G1 window multiples: {:?})",
        prepared.num_instance_variables(),
        prepared.domain_size().trailing_zeros(),
        prepared.gpu_bytes() as f64 / 1e9,
        prepared.folds()
    );
}
