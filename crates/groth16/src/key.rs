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
/// The matrices come from [`crate::GpuProver::prepare_for`] (a setup-mode synthesis), from a cache
/// file ([`crate::GpuProver::prepare_cached`]), or else from the first proof whose synthesis built
/// them and whose proof verified; every proof after that synthesizes the witness alone.
#[derive(Debug)]
pub struct PreparedProvingKey<E: GpuPairing> {
    /// The A and B-in-G1 queries past their first element, and the L query behind
    /// `num_inputs - 1` identities, as three base sets: all three pair with the assignment
    /// `full[1..]`.
    pub(crate) a_b_l: PreparedBases<E::GpuG1>,
    /// The B-in-G2 query past its first element, its identities left out where
    /// `b_g2_kept` lists the rest.
    pub(crate) b_g2: PreparedBases<E::GpuG2>,
    /// Where B in G2 has enough identities to leave out ([`kept_bases`]): the indices into
    /// `full[1..]` of the points `b_g2` holds, increasing; `None`: every point, in order.
    pub(crate) b_g2_kept: Option<Arc<[u32]>>,
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

    /// How many B-in-G2 bases are the identity and left out of its MSM (0 where too few are
    /// for leaving them out to pay: fewer than one in 16).
    pub fn identities_left_out(&self) -> usize {
        // B in G2 had a base for each of the assignment's scalars past the first, as each
        // set of A, B in G1 and L has.
        self.b_g2_kept
            .as_ref()
            .map_or(0, |kept| self.a_b_l.len() - kept.len())
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

/// Bases left out of a base vector when at least this share of them is the identity
/// (1/`KEEP_ALL_BELOW` of the points): each left-out point saves a mixed addition in every
/// window of its MSM, and the proof gathers the kept points' scalars on the host (about a
/// millisecond for 2^20 scalars), which a few identities would not repay.
pub(crate) const KEEP_ALL_BELOW: usize = 16;

/// `points` without their identities, and the indices of those kept, where at least
/// 1/[`KEEP_ALL_BELOW`] of them are the identity (B in G2 has one for every variable that no
/// constraint's B side uses: a third of a Poseidon Merkle circuit's); else `None` and
/// every point. The identity adds nothing to an MSM, so leaving it out changes no sum.
pub(crate) fn kept_bases<A: ark_ec::AffineRepr>(points: &[A]) -> Option<(Vec<u32>, Vec<A>)> {
    let identities = points.iter().filter(|p| p.is_zero()).count();
    // None kept would be an MSM of no bases: every point stays instead.
    if identities == 0 || identities == points.len() || identities * KEEP_ALL_BELOW < points.len() {
        return None;
    }
    // Indices are u32: a key of 2^32 variables is beyond any GPU's memory.
    u32::try_from(points.len()).ok()?;
    let (kept, bases) = points
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.is_zero())
        .map(|(i, p)| (i as u32, *p))
        .unzip();
    Some((kept, bases))
}

/// `scalars[kept[j]]` for each `j`: the scalars of the bases [`kept_bases`] kept (on the host's
/// threads natively). Indices past `scalars` are left out, as an MSM over the shorter of its
/// bases and scalars would leave their bases out.
pub(crate) fn gather_kept<F: Copy + Send + Sync>(scalars: &[F], kept: &[u32]) -> Vec<F> {
    let end = kept.partition_point(|&i| (i as usize) < scalars.len());
    let kept = &kept[..end];
    #[cfg(not(target_arch = "wasm32"))]
    {
        use rayon::prelude::*;
        kept.par_iter().map(|&i| scalars[i as usize]).collect()
    }
    #[cfg(target_arch = "wasm32")]
    kept.iter().map(|&i| scalars[i as usize]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_bls12_381::{Fr, G2Affine};
    use ark_ec::AffineRepr;

    #[test]
    fn identities_left_out_only_where_they_pay() {
        let (g, o) = (G2Affine::generator(), G2Affine::zero());
        // 1 identity in 16: left out, the indices of the rest kept in order.
        let mut points = vec![g; 15];
        points.insert(3, o);
        let (kept, bases) = kept_bases(&points).expect("one in 16 is left out");
        assert_eq!(kept, [0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
        assert!(bases.iter().all(|p| !p.is_zero()) && bases.len() == 15);
        // 1 in 17, none, or all of them: every point kept.
        points.push(g);
        assert!(kept_bases(&points).is_none());
        assert!(kept_bases(&[g, g]).is_none());
        assert!(kept_bases(&[o, o]).is_none());
        assert!(kept_bases::<G2Affine>(&[]).is_none());
    }

    #[test]
    fn gathered_scalars_follow_the_kept_indices() {
        let scalars: Vec<Fr> = (0..10u64).map(Fr::from).collect();
        let kept = [1u32, 4, 9, 12];
        // Index 12 is past the scalars: left out, as an MSM over the shorter would.
        assert_eq!(
            gather_kept(&scalars, &kept),
            [Fr::from(1u64), Fr::from(4u64), Fr::from(9u64)]
        );
        assert!(gather_kept(&scalars[..1], &kept).is_empty());
    }
}
