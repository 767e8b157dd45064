//! [`PreparedProvingKey`]: a proving key's bases on the GPU and its circuit's matrices,
//! built once and reused by every proof.

use std::sync::{Arc, OnceLock};
#[cfg(not(target_arch = "wasm32"))]
use zkgpu_runtime::BlockOn;

use ark_ec::AffineRepr;
use ark_ec::pairing::Pairing;
use ark_groth16::{PreparedVerifyingKey, ProvingKey, prepare_verifying_key};
use ark_relations::gr1cs::ConstraintSynthesizer;
use zkgpu_curves::GpuCurve;
use zkgpu_msm::{Fold, GpuMsm, PreparedBases};
use zkgpu_ntt::NttField;

use crate::error::ProveError;
use crate::matrices::{Qap, R1csMatrices};
use crate::prover::{GpuProver, KeyLayout};
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

/// The checks of a proving key's vectors against each other and the reduction `qap`:
/// `(num_inputs, domain_size)`.
fn check_key<E: Pairing>(pk: &ProvingKey<E>, qap: Qap) -> Result<(usize, usize), ProveError> {
    let vars = pk.a_query.len();
    let num_inputs = pk.vk.gamma_abc_g1.len();
    let malformed = |what: String| Err(ProveError::MalformedKey(what));
    if vars == 0 || num_inputs == 0 {
        return malformed("empty a_query or gamma_abc_g1".into());
    }
    if pk.b_g1_query.len() != vars || pk.b_g2_query.len() != vars {
        return malformed(format!(
            "a_query has {vars} elements, b_g1_query {} and b_g2_query {}",
            pk.b_g1_query.len(),
            pk.b_g2_query.len()
        ));
    }
    if pk.l_query.len() + num_inputs != vars {
        return malformed(format!(
            "l_query ({}) and gamma_abc_g1 ({num_inputs}) do not add up to a_query ({vars})",
            pk.l_query.len()
        ));
    }
    let h = pk.h_query.len();
    let domain_size = match qap {
        Qap::Libsnark => h + 1,
        Qap::Circom => h,
    };
    if !domain_size.is_power_of_two() || qap.h_query_len(domain_size) != h {
        let shape = match qap {
            Qap::Libsnark => "a power of two minus one",
            Qap::Circom => "a power of two (circom's reduction)",
        };
        return malformed(format!("h_query has {h} elements, not {shape}"));
    }
    Ok((num_inputs, domain_size))
}

/// The layout of base sets of `msm` under `layout`: plain, the planner's choice
/// ([`GpuMsm::plan`]), or the one given.
fn fold_for<C: GpuCurve>(layout: KeyLayout, msm: &GpuMsm<C>, sets: &[&[C::Affine]]) -> Fold {
    let len = sets.iter().map(|s| s.len()).max().unwrap_or(0);
    match layout {
        KeyLayout::Plain => Fold {
            folds: 1,
            window_bits: None,
        },
        KeyLayout::Planned => msm.plan(len, sets.len()).fold(),
        KeyLayout::Folded(fold) => fold,
    }
}

impl<E: GpuPairing> GpuProver<E> {
    /// Checks `pk` and uploads its five base vectors (with window multiples unless
    /// [`GpuProver::with_folding`] turned them off). The circuit's matrices are learned from
    /// the first proof (or use [`GpuProver::prepare_for`]).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn prepare(&self, pk: &ProvingKey<E>) -> Result<PreparedProvingKey<E>, ProveError> {
        self.prepare_async(pk).block_on()
    }

    /// [`GpuProver::prepare`] without a blocking wait (in a browser, the only way).
    pub async fn prepare_async(
        &self,
        pk: &ProvingKey<E>,
    ) -> Result<PreparedProvingKey<E>, ProveError> {
        self.prepare_qap(pk, Qap::Libsnark).await
    }

    /// [`GpuProver::prepare`] with the circuit's matrices known (for instance read from a
    /// snarkjs key with them): every proof synthesizes the witness alone, and the key's
    /// reduction is the matrices' ([`R1csMatrices::qap`]). The matrices are trusted to be the
    /// key's: other constraints of the same shape make every proof
    /// `ProveError::ProofRejected`, never a wrong proof.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn prepare_with_matrices(
        &self,
        pk: &ProvingKey<E>,
        matrices: R1csMatrices<E::ScalarField>,
    ) -> Result<PreparedProvingKey<E>, ProveError> {
        self.prepare_with_matrices_async(pk, matrices).block_on()
    }

    /// [`GpuProver::prepare_with_matrices`] without a blocking wait.
    pub async fn prepare_with_matrices_async(
        &self,
        pk: &ProvingKey<E>,
        m: R1csMatrices<E::ScalarField>,
    ) -> Result<PreparedProvingKey<E>, ProveError> {
        let prepared = self.prepare_qap(pk, m.qap).await?;
        check_counts(&prepared, m.num_inputs, m.num_witness, m.num_constraints)?;
        prepared.learn_matrices(m);
        Ok(prepared)
    }

    /// Checks `pk` for the reduction `qap` and uploads its bases.
    async fn prepare_qap(
        &self,
        pk: &ProvingKey<E>,
        qap: Qap,
    ) -> Result<PreparedProvingKey<E>, ProveError> {
        let (num_inputs, domain_size) = check_key(pk, qap)?;
        // The witness map's batch of three transforms must fit this device's bindings: a key
        // too large for them is refused here, before its bases are uploaded.
        zkgpu_ntt::buffer_plan(
            domain_size.trailing_zeros(),
            crate::qap::WITNESS_MAP_BATCH,
            self.ctx.max_binding_bytes(),
        )?;
        // L pairs with the witness part of the assignment full[1..], which starts at
        // num_inputs - 1: identities in front align it with A and B.
        let l_aligned: Vec<E::G1Affine> = std::iter::repeat_n(E::G1Affine::zero(), num_inputs - 1)
            .chain(pk.l_query.iter().copied())
            .collect();
        let a_b_l: [&[E::G1Affine]; 3] = [&pk.a_query[1..], &pk.b_g1_query[1..], &l_aligned];
        let b_g2: [&[E::G2Affine]; 1] = [&pk.b_g2_query[1..]];
        let h: [&[E::G1Affine]; 1] = [&pk.h_query];
        let fold = self.key_layout();
        Ok(PreparedProvingKey {
            a_b_l: self
                .g1
                .prepare_sets_folded(&a_b_l, fold_for(fold, &self.g1, &a_b_l))
                .await?,
            // G2 stays unfolded: its folded bases made the accumulation's gathers slower by
            // more than the reduction saved (docs/log/2026-11.md).
            b_g2: self
                .g2
                .prepare_sets_folded(&b_g2, fold_for(fold, &self.g2, &b_g2))
                .await?,
            h: self
                .g1
                .prepare_sets_folded(&h, fold_for(fold, &self.g1, &h))
                .await?,
            points: KeyPoints {
                a0: pk.a_query[0],
                b_g1_0: pk.b_g1_query[0],
                b_g2_0: pk.b_g2_query[0],
                beta_g1: pk.beta_g1,
                delta_g1: pk.delta_g1,
            },
            pvk: prepare_verifying_key(&pk.vk),
            num_inputs,
            num_witness: pk.l_query.len(),
            domain_size,
            qap,
            key_hash: None,
            matrices: OnceLock::new(),
        })
    }

    /// [`GpuProver::prepare`], with the circuit's matrices from a synthesis of `circuit` in
    /// setup mode (its witness values are not read), so that even the first proof
    /// synthesizes the witness alone. The matrices are trusted to be the key's: a circuit of
    /// the same shape but other constraints makes every proof `ProveError::ProofRejected`
    /// (or `Unsatisfied`), never a wrong proof.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn prepare_for<C>(
        &self,
        pk: &ProvingKey<E>,
        circuit: C,
    ) -> Result<PreparedProvingKey<E>, ProveError>
    where
        C: ConstraintSynthesizer<E::ScalarField>,
    {
        self.prepare_for_async(pk, circuit).block_on()
    }

    /// [`GpuProver::prepare_for`] without a blocking wait (in a browser, the only way).
    pub async fn prepare_for_async<C>(
        &self,
        pk: &ProvingKey<E>,
        circuit: C,
    ) -> Result<PreparedProvingKey<E>, ProveError>
    where
        C: ConstraintSynthesizer<E::ScalarField>,
    {
        let prepared = self.prepare_async(pk).await?;
        let m = circuit_matrices::<E>(circuit)?;
        check_counts(&prepared, m.num_inputs, m.num_witness, m.num_constraints)?;
        prepared.learn_matrices(m);
        Ok(prepared)
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
