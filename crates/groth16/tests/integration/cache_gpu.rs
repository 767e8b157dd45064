//! The prepared-key cache: a key written and read back proves as the original (folded and
//! plain bases, with and without matrices); corrupt, truncated and foreign files are typed
//! errors and never a proof, and the prover still proves correctly after each.

#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::{Path, PathBuf};
use zkgpu_testing::new_context as context;

use ark_ff::UniformRand;
use ark_groth16::{Groth16, ProvingKey};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use common::{Chain, layout};
use zkgpu_groth16::{
    CacheError, CacheOutcome, GpuPairing, GpuProver, ProveError, ProveRequest, key_hash,
};

/// A fresh directory under the system's temporary one, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("zkgpu-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn setup<E: GpuPairing>(circuit: &Chain<E::ScalarField>, rng: &mut StdRng) -> ProvingKey<E> {
    Groth16::<E>::generate_random_parameters_with_reduction(circuit.clone(), rng).unwrap()
}

/// The proof of `circuit` with `prepared` equals ark-groth16's for the same `r` and `s`.
fn proves<E: GpuPairing>(
    prover: &GpuProver<E>,
    prepared: &zkgpu_groth16::PreparedProvingKey<E>,
    pk: &ProvingKey<E>,
    circuit: &Chain<E::ScalarField>,
    rng: &mut StdRng,
) -> bool {
    let (r, s) = (E::ScalarField::rand(rng), E::ScalarField::rand(rng));
    let (got, _) = prover
        .run(ProveRequest::circuit(prepared, circuit.clone(), (r, s)))
        .unwrap();
    got == Groth16::<E>::create_proof_with_reduction(circuit.clone(), pk, r, s).unwrap()
}

fn flip_byte(path: &Path, at: u64) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[at as usize] ^= 0x5a;
    std::fs::write(path, bytes).unwrap();
}

fn round_trip<E: GpuPairing>(seed: u64, fold: bool) {
    let ctx = context();
    let prover = GpuProver::<E>::new(&ctx)
        .unwrap()
        .with_key_layout(layout(fold));
    let mut rng = StdRng::seed_from_u64(seed);
    // With 10 extra inputs, 12 of B in G2's 162 bases are the identity, left out of its MSM
    // (and the file); with 1, 3 of 153, kept.
    let extra = if fold { 10 } else { 1 };
    let circuit = Chain::new(
        E::ScalarField::rand(&mut rng),
        150,
        (0..extra).map(|_| E::ScalarField::rand(&mut rng)).collect(),
    );
    let pk = setup::<E>(&circuit, &mut rng);
    let dir = TempDir::new(&format!("cache-{}-{fold}", E::NAME));

    // Created (no matrices asked for), then loaded: the same layout, no matrices.
    let (first, outcome) = prover.prepare_cached(&pk, &dir.0).unwrap();
    let CacheOutcome::Created(path) = outcome else {
        panic!("expected Created, got {outcome:?}");
    };
    assert_eq!(first.key_hash(), Some(key_hash(&pk)));
    assert_eq!(first.folds().0 > 1, fold);
    let (loaded, outcome) = prover.prepare_cached(&pk, &dir.0).unwrap();
    assert!(matches!(outcome, CacheOutcome::Loaded(ref p) if *p == path));
    assert!(loaded.matrices().is_none());
    assert_eq!(loaded.folds(), first.folds());
    assert_eq!(loaded.gpu_bytes(), first.gpu_bytes());
    assert_eq!(first.identities_left_out(), if fold { 12 } else { 0 });
    assert_eq!(loaded.identities_left_out(), first.identities_left_out());
    assert!(proves(&prover, &loaded, &pk, &circuit, &mut rng));

    // Asked for with the circuit: the file is written again with the matrices, and a load
    // then proves witness-only from its first proof.
    let (_, outcome) = prover
        .prepare_cached_for(&pk, circuit.clone(), &dir.0)
        .unwrap();
    assert!(matches!(outcome, CacheOutcome::Updated(_)), "{outcome:?}");
    let with_m = prover.load_prepared(&path, Some(&key_hash(&pk))).unwrap();
    assert!(with_m.matrices().is_some());
    let (_, t) = prover
        .run(ProveRequest::circuit(
            &with_m,
            circuit.clone(),
            (1u64.into(), 2u64.into()),
        ))
        .unwrap();
    assert!(!t.built_matrices);
    assert!(proves(&prover, &with_m, &pk, &circuit, &mut rng));
    // Saved by hand from a key that learned its matrices from a proof.
    assert!(proves(&prover, &first, &pk, &circuit, &mut rng));
    let again = dir.0.join("learned.zkgpk");
    prover.save_prepared(&first, &again).unwrap();
    let learned = prover.load_prepared(&again, None).unwrap();
    assert!(learned.matrices() == with_m.matrices());
    assert!(proves(&prover, &learned, &pk, &circuit, &mut rng));
}

#[test]
fn bls12_381_round_trip_folded() {
    round_trip::<ark_bls12_381::Bls12_381>(41, true);
}

#[test]
fn bls12_381_round_trip_plain() {
    round_trip::<ark_bls12_381::Bls12_381>(42, false);
}

#[test]
fn bls12_377_round_trip_folded() {
    round_trip::<ark_bls12_377::Bls12_377>(43, true);
}

/// Damaged and foreign files: typed errors, and the prover proves correctly after each.
#[test]
fn bad_files_are_refused() {
    type E = ark_bls12_381::Bls12_381;
    let ctx = context();
    let prover = GpuProver::<E>::new(&ctx)
        .unwrap()
        .with_key_layout(layout(true));
    let mut rng = StdRng::seed_from_u64(44);
    let circuit = Chain::new(ark_bls12_381::Fr::rand(&mut rng), 100, vec![]);
    let pk = setup::<E>(&circuit, &mut rng);
    let hash = key_hash(&pk);
    let dir = TempDir::new("cache-bad");
    let (good, _) = prover
        .prepare_cached_for(&pk, circuit.clone(), &dir.0)
        .unwrap();
    let path = prover.cache_file(&dir.0, &hash);
    let len = std::fs::metadata(&path).unwrap().len();
    let copy = |name: &str| {
        let p = dir.0.join(name);
        std::fs::copy(&path, &p).unwrap();
        p
    };
    let corrupt = |p: &Path| match prover.load_prepared(p, Some(&hash)) {
        Err(ProveError::Cache(CacheError::Corrupt { .. })) => {}
        other => panic!("{}: expected Corrupt, got {other:?}", p.display()),
    };
    let foreign = |p: &Path, expect: Option<&[u8; 32]>| match prover.load_prepared(p, expect) {
        Err(ProveError::Cache(CacheError::Foreign { .. })) => {}
        other => panic!("{}: expected Foreign, got {other:?}", p.display()),
    };

    // A byte of the last part's data, of the first part's (parts start at the first
    // multiple of 4096 after the header), of the header; a truncated file; one byte too many.
    let bytes = std::fs::read(&path).unwrap();
    let header_len = u64::from_le_bytes(bytes[8..16].try_into().unwrap());
    let data_at = (48 + header_len).next_multiple_of(4096);
    for (name, at) in [("tail", len - 1), ("data", data_at + 5), ("header", 60)] {
        let p = copy(name);
        flip_byte(&p, at);
        corrupt(&p);
    }
    let p = copy("short");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(len - 100)
        .unwrap();
    corrupt(&p);
    let p = copy("long");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(len + 1)
        .unwrap();
    corrupt(&p);
    let p = dir.0.join("empty");
    std::fs::write(&p, b"").unwrap();
    corrupt(&p);

    // Another key's hash expected; not a cache file at all; a key of BLS12-377.
    foreign(&path, Some(&[7; 32]));
    let p = dir.0.join("text");
    std::fs::write(&p, vec![b'x'; 4096]).unwrap();
    foreign(&p, None);
    let ctx377 = &ctx;
    let prover377 = GpuProver::<ark_bls12_377::Bls12_377>::new(ctx377).unwrap();
    let c377 = Chain::new(ark_bls12_377::Fr::rand(&mut rng), 100, vec![]);
    let pk377: ProvingKey<ark_bls12_377::Bls12_377> = setup(&c377, &mut rng);
    let (_, outcome) = prover377.prepare_cached(&pk377, &dir.0).unwrap();
    let CacheOutcome::Created(p377) = outcome else {
        panic!("expected Created, got {outcome:?}");
    };
    foreign(&p377, None);
    // A missing file is an I/O error.
    assert!(matches!(
        prover.load_prepared(&dir.0.join("missing"), None),
        Err(ProveError::Cache(CacheError::Io { .. }))
    ));

    // The prover and the good key still prove correctly.
    assert!(proves(&prover, &good, &pk, &circuit, &mut rng));
    // prepare_cached replaces a damaged file and proves correctly from the new one.
    flip_byte(&path, len - 1);
    let (replaced, outcome) = prover.prepare_cached(&pk, &dir.0).unwrap();
    assert!(
        matches!(
            outcome,
            CacheOutcome::Replaced(_, CacheError::Corrupt { .. })
        ),
        "{outcome:?}"
    );
    assert!(proves(&prover, &replaced, &pk, &circuit, &mut rng));
    let (_, outcome) = prover.prepare_cached(&pk, &dir.0).unwrap();
    assert!(matches!(outcome, CacheOutcome::Loaded(_)), "{outcome:?}");
}
