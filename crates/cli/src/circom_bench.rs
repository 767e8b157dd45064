//! `zkgpu circom-bench-key --circuit merkle --log-constraints 20 key.zkey witness.wtns`: a
//! snarkjs key and witness of one of `zkgpu prove`'s benchmark circuits (BN254, or
//! BLS12-381 with `--curve bls12-381`), for
//! benchmarks of the circom path and the proving service at sizes no fixture has. The
//! arkworks circuit's constraints are a circom R1CS as they stand (the constant one, the
//! public inputs, then the private wires), so circom's reduction and ark-groth16's generator
//! make the key, as `zkgpu circom-setup` does for a `.r1cs`.

use std::path::PathBuf;

use ark_bls12_381::Bls12_381;
use ark_bn254::Bn254;
use ark_crypto_primitives::sponge::Absorb;
use ark_std::rand::SeedableRng;
use ark_std::rand::rngs::StdRng;
use clap::Args;
use zkgpu_circom::{CircomCurve, CircomR1cs, Curve};
use zkgpu_circuits::{Family, sized};

use crate::prove_cmd::CircuitArg;
use crate::prove_report::Step;

type BoxError = Box<dyn std::error::Error>;

/// Arguments of `zkgpu circom-bench-key`.
#[derive(Args, Debug)]
pub struct BenchKeyArgs {
    /// Where to write the snarkjs key.
    zkey: PathBuf,
    /// Where to write the witness (`.wtns`).
    wtns: PathBuf,
    /// The circuit family.
    #[arg(long, value_enum, default_value = "merkle")]
    circuit: CircuitArg,
    /// log2 of the constraint budget (the circuit fills a Groth16 domain of 2^k).
    #[arg(long, default_value_t = 16)]
    log_constraints: u32,
    /// The circuit's values and the key's toxic waste from this seed (a benchmark key, never
    /// one anyone relies on).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// The curve: bn254 (snarkjs' bn128) or bls12-381.
    #[arg(long, default_value = "bn254", value_parser = parse_curve)]
    curve: Curve,
}

fn parse_curve(s: &str) -> Result<Curve, String> {
    Curve::from_name(s).ok_or_else(|| format!("unknown curve {s:?} (bn254, bls12-381)"))
}

pub fn run(args: &BenchKeyArgs) -> Result<(), BoxError> {
    if !(10..=24).contains(&args.log_constraints) {
        return Err("--log-constraints must be 10..=24".into());
    }
    crate::circom_cmd::check_output(&args.zkey)?;
    crate::circom_cmd::check_output(&args.wtns)?;
    match args.curve {
        Curve::Bn254 => run_as::<Bn254>(args),
        Curve::Bls12_381 => run_as::<Bls12_381>(args),
    }
}

fn run_as<E: CircomCurve<ScalarField: Absorb>>(args: &BenchKeyArgs) -> Result<(), BoxError> {
    let family = match args.circuit {
        CircuitArg::Sha256 => Family::Sha256,
        CircuitArg::Merkle => Family::Merkle,
    };
    let mut rng = StdRng::seed_from_u64(args.seed);
    let (circuit, _) = sized::<E::ScalarField, _>(family, args.log_constraints, &mut rng)?;
    let step = Step::new("the circuit's constraints (arkworks)");
    let (matrices, inputs, witness) = zkgpu_groth16::synthesize_matrices(circuit.clone())?;
    let Ok([a, b, c]) = <[_; 3]>::try_from(matrices) else {
        return Err("the circuit is not an R1CS (not three matrices)".into());
    };
    let r1cs = CircomR1cs {
        num_wires: inputs + witness,
        num_public: inputs - 1,
        matrices: [a, b, c],
    };
    step.done(&crate::circom_cmd::r1cs_summary(&r1cs));
    let step = Step::new(format!(
        "the witness (arkworks), written to {}",
        args.wtns.display()
    ));
    let values = zkgpu_groth16::synthesize_witness(circuit)?.full_assignment;
    std::fs::write(&args.wtns, zkgpu_circom::write_wtns(&values))
        .map_err(|e| format!("{}: {e}", args.wtns.display()))?;
    step.done("");
    crate::circom_cmd::setup_and_write::<E>(&r1cs, &mut rng, &args.zkey)
}
