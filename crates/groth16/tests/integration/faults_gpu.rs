//! Out of GPU memory: a buffer beyond the device's limits is refused with a typed error; with
//! the device's memory filled (an ignored test, for hardware GPUs: `cargo test -p
//! zkgpu-groth16 --test integration faults_gpu:: -- --ignored`; on a software adapter the
//! "device memory" is the host's), an MSM and a proof give a typed error or a correct result, never a wrong
//! one, and once the memory is freed the same context proves correctly.

#![allow(clippy::unwrap_used)]

use crate::common;

use ark_bls12_381::{Fr, G1Affine, G1Projective};
use ark_ec::{CurveGroup, VariableBaseMSM};
use ark_ff::UniformRand;
use ark_groth16::Groth16;
use ark_std::rand::{SeedableRng, rngs::StdRng};
use common::Chain;
use zkgpu_groth16::{GpuProver, ProveError, ProveRequest};
use zkgpu_msm::{GpuMsm, MsmError};
use zkgpu_runtime::{GpuContext, GpuError};

type E = ark_bls12_381::Bls12_381;

fn oom<T: std::fmt::Debug>(r: &Result<T, GpuError>) -> bool {
    matches!(r, Err(GpuError::OutOfMemory { .. }))
}

/// A context, its engines, a prepared key and the expected results on small inputs.
struct Fixture {
    ctx: GpuContext,
    msm: GpuMsm<zkgpu_curves::Bls12_381G1>,
    prover: GpuProver<E>,
    bases: Vec<G1Affine>,
    scalars: Vec<Fr>,
    want: G1Projective,
    circuit: Chain<Fr>,
    prepared: zkgpu_groth16::PreparedProvingKey<E>,
    r: Fr,
    s: Fr,
    want_proof: ark_groth16::Proof<E>,
}

fn fixture() -> Fixture {
    let ctx = GpuContext::from_env_blocking().unwrap();
    let msm = GpuMsm::<zkgpu_curves::Bls12_381G1>::new(&ctx).unwrap();
    let prover = GpuProver::<E>::new(&ctx).unwrap();
    let mut rng = StdRng::seed_from_u64(81);
    let n = 1 << 12;
    let bases: Vec<G1Affine> = (0..n)
        .map(|_| G1Projective::rand(&mut rng).into_affine())
        .collect();
    let scalars: Vec<Fr> = (0..n).map(|_| Fr::rand(&mut rng)).collect();
    let want = G1Projective::msm(&bases, &scalars).unwrap();
    let circuit = Chain::new(Fr::rand(&mut rng), 300, vec![]);
    let pk =
        Groth16::<E>::generate_random_parameters_with_reduction(circuit.clone(), &mut rng).unwrap();
    let prepared = prover.prepare_for(&pk, circuit.clone()).unwrap();
    let (r, s) = (Fr::rand(&mut rng), Fr::rand(&mut rng));
    let want_proof = Groth16::<E>::create_proof_with_reduction(circuit.clone(), &pk, r, s).unwrap();

    Fixture {
        ctx,
        msm,
        prover,
        bases,
        scalars,
        want,
        circuit,
        prepared,
        r,
        s,
        want_proof,
    }
}

#[test]
fn beyond_the_binding_limit_is_typed() {
    let Fixture {
        ctx,
        msm,
        bases,
        scalars,
        want,
        ..
    } = fixture();
    // Beyond the binding limit: refused before the device sees it.
    let max = ctx.max_binding_bytes();
    assert!(matches!(
        ctx.storage_zeroed("too large", max + 4),
        Err(GpuError::BufferTooLarge { .. })
    ));
    assert_eq!(msm.msm(&bases, &scalars).unwrap(), want);
}

#[test]
#[ignore = "fills the GPU's memory: run with --ignored on a hardware GPU"]
fn out_of_memory_is_typed_and_recoverable() {
    let Fixture {
        ctx,
        msm,
        prover,
        bases,
        scalars,
        want,
        circuit,
        prepared,
        r,
        s,
        want_proof,
    } = fixture();
    assert!(
        !ctx.is_software(),
        "a software adapter's device memory is the host's: this test needs a hardware GPU"
    );
    let max = ctx.max_binding_bytes();
    // Fill the device with the largest buffers it binds until one is refused (less than one
    // such buffer stays free).
    let mut filler = Vec::new();
    loop {
        let b = ctx.storage_zeroed("filler", max);
        if oom(&b) {
            break;
        }
        filler.push(b.unwrap());
        assert!(filler.len() < 1 << 16, "the device never ran out of memory");
    }
    eprintln!("device filled with {} buffers of {max} bytes", filler.len());
    // An MSM larger than what is left: 2^24 terms over one point (arkworks' sum is then the
    // point times the sum of the scalars).
    let big = 1usize << 24;
    let point = bases[0];
    let big_bases = vec![point; big];
    let big_scalars: Vec<Fr> = (0..big as u64).map(|i| Fr::from(i * 7 + 1)).collect();
    match msm.msm(&big_bases, &big_scalars) {
        Err(MsmError::Gpu(GpuError::OutOfMemory { context })) => {
            eprintln!("2^24 MSM on a full device: out of memory ({context})");
        }
        Ok(sum) => {
            let total: Fr = big_scalars.iter().sum();
            assert_eq!(
                sum,
                point * total,
                "an MSM on a full device gave a wrong sum"
            );
            eprintln!("2^24 MSM on a full device: fitted, and equals arkworks'");
        }
        Err(e) => panic!("expected OutOfMemory, got {e}"),
    }
    drop((big_bases, big_scalars));
    match prover.run(ProveRequest::circuit(&prepared, circuit.clone(), (r, s))) {
        Err(ProveError::Msm(MsmError::Gpu(GpuError::OutOfMemory { .. })))
        | Err(ProveError::Ntt(zkgpu_ntt::NttError::Gpu(GpuError::OutOfMemory { .. })))
        | Err(ProveError::Gpu(GpuError::OutOfMemory { .. })) => {
            eprintln!("proof on a full device: out of memory");
        }
        Ok((p, _)) => {
            assert!(p == want_proof, "a proof on a full device is wrong");
            eprintln!("proof on a full device: fitted, and equals ark-groth16's");
        }
        Err(e) => panic!("expected OutOfMemory, got {e}"),
    }
    drop(filler);
    ctx.check_device().unwrap();
    assert_eq!(msm.msm(&bases, &scalars).unwrap(), want);
    let (p, _) = prover
        .run(ProveRequest::circuit(&prepared, circuit, (r, s)))
        .unwrap();
    assert!(p == want_proof);
}

/// A lost device (wgpu's `Device::destroy`): every call on it is a typed error, never a panic
/// or a wrong result, and a new context in the same process proves correctly.
#[test]
fn lost_device_is_typed_and_a_new_context_proves() {
    let mut rng = StdRng::seed_from_u64(82);
    let circuit = Chain::new(Fr::rand(&mut rng), 100, vec![]);
    let pk =
        Groth16::<E>::generate_random_parameters_with_reduction(circuit.clone(), &mut rng).unwrap();
    let (r, s) = (Fr::rand(&mut rng), Fr::rand(&mut rng));
    let want = Groth16::<E>::create_proof_with_reduction(circuit.clone(), &pk, r, s).unwrap();
    let bases: Vec<G1Affine> = (0..64)
        .map(|_| G1Projective::rand(&mut rng).into_affine())
        .collect();
    let scalars: Vec<Fr> = (0..64).map(|_| Fr::rand(&mut rng)).collect();
    {
        let ctx = GpuContext::from_env_blocking().unwrap();
        let prover = GpuProver::<E>::new(&ctx).unwrap();
        let prepared = prover.prepare_for(&pk, circuit.clone()).unwrap();
        let msm = GpuMsm::<zkgpu_curves::Bls12_381G1>::new(&ctx).unwrap();
        ctx.device().destroy();
        let got = prover.run(ProveRequest::circuit(&prepared, circuit.clone(), (r, s)));
        assert!(got.is_err(), "a proof on a lost device: {got:?}");
        eprintln!(
            "proof on a lost device: {}",
            got.err().map(|e| e.to_string()).unwrap_or_default()
        );
        let got = msm.msm(&bases, &scalars);
        assert!(got.is_err(), "an MSM on a lost device: {got:?}");
        assert!(ctx.check_device().is_err());
    }
    let ctx = GpuContext::from_env_blocking().unwrap();
    let prover = GpuProver::<E>::new(&ctx).unwrap();
    let prepared = prover.prepare(&pk).unwrap();
    let (got, _) = prover
        .run(ProveRequest::circuit(&prepared, circuit, (r, s)))
        .unwrap();
    assert!(got == want);
}
