//! [`GpuProver::prepare`] and its variants: a proving key checked and its base vectors
//! uploaded, in the layout the prover's [`KeyLayout`] asks for.

use std::sync::OnceLock;
#[cfg(not(target_arch = "wasm32"))]
use zkgpu_runtime::BlockOn;

use ark_ec::AffineRepr;
use ark_ec::pairing::Pairing;
use ark_groth16::{ProvingKey, prepare_verifying_key};
use ark_relations::gr1cs::ConstraintSynthesizer;
use zkgpu_curves::GpuCurve;
use zkgpu_msm::{Fold, GpuMsm};

use crate::error::ProveError;
use crate::key::{
    GpuPairing, KeyLayout, KeyPoints, PreparedProvingKey, check_counts, circuit_matrices,
    kept_bases,
};
use crate::matrices::{Qap, R1csMatrices};
use crate::prover::GpuProver;

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
        let b_g2_kept = kept_bases(&pk.b_g2_query[1..]);
        let b_g2: [&[E::G2Affine]; 1] = [b_g2_kept
            .as_ref()
            .map_or(&pk.b_g2_query[1..], |(_, points)| points)];
        let h: [&[E::G1Affine]; 1] = [&pk.h_query];
        let fold = self.key_layout();
        Ok(PreparedProvingKey {
            a_b_l: self
                .g1
                .prepare_sets_folded(&a_b_l, fold_for(fold, &self.g1, &a_b_l))
                .await?,
            // B in G2 without its identities where they are many (`kept_bases`), laid out as
            // the planner chooses for the points kept, like every base vector here.
            b_g2: self
                .g2
                .prepare_sets_folded(&b_g2, fold_for(fold, &self.g2, &b_g2))
                .await?,
            b_g2_kept: b_g2_kept.map(|(kept, _)| kept.into()),
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
