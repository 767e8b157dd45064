//! [`PreparedProvingKey`]: a proving key's bases on the GPU and its circuit's matrices,
//! built once and reused by every proof.

use std::sync::{Arc, OnceLock};

use ark_ec::pairing::Pairing;
use ark_groth16::PreparedVerifyingKey;
use ark_relations::gr1cs::ConstraintSynthesizer;
use zkgpu_curves::GpuCurve;
use zkgpu_msm::PreparedBases;
use zkgpu_ntt::NttField;

use crate::error::ProveError;
use crate::matrices::{Qap, R1csMatrices};
use crate::synth::synthesize_matrices;

/// A pairing whose groups and scalar field the GPU engines support: BLS12-381, BLS12-377 and BN254.
pub trait GpuPairing: Pairing<ScalarField: NttField> {
    /// The pairing's name (`bls12-381`), recorded in prepared-key cache files.
    const NAME: &'static str;
    /// G1 on the GPU.
    type GpuG1: GpuCurve<Affine = Self::G1Affine, Projective = Self::G1, Scalar = Self::ScalarField>;
    /// G2 on the GPU.
    type GpuG2: GpuCurve<Affine = Self::G2Affine, Projective = Self::G2, Scalar = Self::ScalarField>;
}

/// Every pairing of the registry (`zkgpu_shaders::Pairing`) is a [`GpuPairing`].
macro_rules! gpu_pairings {
    (; $(($p:ident, $id:ident, $g1:ident, $g2:ident, $ark:path, $fr:path))*) => {$(
        impl GpuPairing for $ark {
            const NAME: &'static str = zkgpu_shaders::Pairing::$p.name();
            type GpuG1 = zkgpu_curves::$g1;
            type GpuG2 = zkgpu_curves::$g2;
        }
    )*};
}

zkgpu_shaders::for_each_pairing!(gpu_pairings);

/// Runs `$body` with `$E` the arkworks pairing of the `zkgpu_shaders::Pairing` value
/// `$pairing` (a choice made at run time: the command line's `--curve`).
#[macro_export]
macro_rules! with_pairing {
    ($pairing:expr, $E:ident => $body:expr) => {
        $crate::for_each_pairing!($crate::__with_pairing_match, $pairing, $E, $body)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __with_pairing_match {
    ($pairing:expr, $E:ident, $body:expr ; $(($p:ident, $id:ident, $g1:ident, $g2:ident, $ark:path, $fr:path))*) => {
        match $pairing {
            $($crate::Pairing::$p => {
                type $E = $ark;
                $body
            })*
        }
    };
}

/// The points of a proving key that the proof's assembly uses on the CPU (besides the
/// verifying key's, kept in `PreparedProvingKey::pvk`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct KeyPoints<E: Pairing> {
    pub(crate) a0: E::G1Affine,
    pub(crate) b_g1_0: E::G1Affine,
    pub(crate) b_g2_0: E::G2Affine,
    pub(crate) beta_g1: E::G1Affine,
    pub(crate) delta_g1: E::G1Affine,
}

/// A proving key with its five base vectors on the GPU, reusable across proofs, and its
/// circuit's R1CS matrices once known.
///
/// The matrices come from [`GpuProver::prepare_for`] (a setup-mode synthesis), from a cache
/// file ([`GpuProver::prepare_cached`]), or else from the first proof whose synthesis built
/// them and whose proof verified; every proof after that synthesizes the witness alone.
#[derive(Debug)]
pub struct PreparedProvingKey<E: GpuPairing> {
    /// The A and B-in-G1 queries past their first element, and the L query behind
    /// `num_inputs - 1` identities, as three base sets: all three pair with the assignment
    /// `full[1..]`.
    pub(crate) a_b_l: PreparedBases<E::GpuG1>,
    pub(crate) b_g2: PreparedBases<E::GpuG2>,
    pub(crate) h: PreparedBases<E::GpuG1>,
    pub(crate) points: KeyPoints<E>,
    pub(crate) pvk: PreparedVerifyingKey<E>,
    pub(crate) num_inputs: usize,
    pub(crate) num_witness: usize,
    pub(crate) domain_size: usize,
    /// The QAP reduction the key was made for (its H query's length tells them apart).
    pub(crate) qap: Qap,
    /// [`crate::key_hash`] of the proving key, where it was computed (caching).
    pub(crate) key_hash: Option<[u8; 32]>,
    pub(crate) matrices: OnceLock<Arc<R1csMatrices<E::ScalarField>>>,
}

impl<E: GpuPairing> PreparedProvingKey<E> {
    /// Public inputs including the constant one (the key's `gamma_abc_g1` length).
    pub fn num_instance_variables(&self) -> usize {
        self.num_inputs
    }

    /// Witness variables (the key's `l_query` length).
    pub fn num_witness_variables(&self) -> usize {
        self.num_witness
    }

    /// Size of the evaluation domain (the key's `h_query` length plus one, or its length for
    /// [`Qap::Circom`]).
    pub fn domain_size(&self) -> usize {
        self.domain_size
    }

    /// The QAP reduction the key was made for.
    pub fn qap(&self) -> Qap {
        self.qap
    }

    /// The verifying key, prepared for pairings.
    pub fn verifying_key(&self) -> &PreparedVerifyingKey<E> {
        &self.pvk
    }

    /// The circuit's matrices, once known: proofs then synthesize the witness alone.
    pub fn matrices(&self) -> Option<&R1csMatrices<E::ScalarField>> {
        self.matrices.get().map(|m| &**m)
    }

    /// [`crate::key_hash`] of the proving key it was prepared from, where known (keys
    /// prepared or loaded through the cache).
    pub fn key_hash(&self) -> Option<[u8; 32]> {
        self.key_hash
    }

    /// Window-multiple levels of the G1 bases (A, B in G1, L; H), 1 where not folded.
    pub fn folds(&self) -> (u32, u32) {
        (self.a_b_l.folds(), self.h.folds())
    }

    /// `Ok` when the key's bases live on `ctx`'s device: a prover of another context refuses
    /// the key before recording anything.
    pub(crate) fn check_context(&self, ctx: &zkgpu_runtime::GpuContext) -> Result<(), ProveError> {
        Ok(self
            .a_b_l
            .context()
            .check(ctx.id(), "this prepared proving key's bases")?)
    }

    /// Bytes of GPU memory its bases take.
    pub fn gpu_bytes(&self) -> u64 {
        self.a_b_l.layout().bytes() + self.b_g2.layout().bytes() + self.h.layout().bytes()
    }

    /// Stores `m` as the key's matrices if it has none and they fit the key's counts and
    /// reduction.
    pub(crate) fn learn_matrices(&self, m: R1csMatrices<E::ScalarField>) {
        if m.num_inputs == self.num_inputs && m.num_witness == self.num_witness && m.qap == self.qap
        {
            let _ = self.matrices.set(Arc::new(m));
        }
    }
}

/// How a prepared key stores its base vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyLayout {
    /// The bases as given: no window multiples.
    Plain,
    /// Each base vector in the layout the MSM planner chooses for its size on this device
    /// ([`zkgpu_msm::GpuMsm::plan`]: plain unless a folded one is predicted faster).
    Planned,
    /// Every base vector with these window multiples, whatever the planner would choose (a
    /// layout measured elsewhere; tests of the folded paths).
    Folded(zkgpu_msm::Fold),
}

impl KeyLayout {
    /// A short name for file names: `plain`, `planned`, `f{levels}w{bits}`.
    pub fn tag(self) -> String {
        match self {
            KeyLayout::Plain => "plain".into(),
            KeyLayout::Planned => "planned".into(),
            KeyLayout::Folded(f) => format!("f{}w{}", f.folds, f.window_bits.unwrap_or(0)),
        }
    }
}

/// The compact matrices of `circuit` from a setup-mode synthesis.
pub(crate) fn circuit_matrices<E: GpuPairing>(
    circuit: impl ConstraintSynthesizer<E::ScalarField>,
) -> Result<R1csMatrices<E::ScalarField>, ProveError> {
    let (matrices, num_inputs, num_witness) =
        synthesize_matrices(circuit).map_err(ProveError::Synthesis)?;
    let num_constraints = matrices.first().map_or(0, Vec::len);
    Ok(R1csMatrices::from_arkworks(
        &matrices,
        num_inputs,
        num_witness,
        num_constraints,
    )?)
}

/// The key's instance and witness counts and domain against a circuit's:
/// [`ProveError::KeyMismatch`] on the first that differs.
pub(crate) fn check_counts<E: GpuPairing>(
    pk: &PreparedProvingKey<E>,
    num_inputs: usize,
    num_witness: usize,
    num_constraints: usize,
) -> Result<(), ProveError> {
    for (what, key, circuit) in [
        ("instance variables", pk.num_inputs, num_inputs),
        ("witness variables", pk.num_witness, num_witness),
        (
            "domain elements",
            pk.domain_size,
            (num_constraints + num_inputs).next_power_of_two(),
        ),
    ] {
        if key != circuit {
            return Err(ProveError::KeyMismatch { what, key, circuit });
        }
    }
    Ok(())
}
