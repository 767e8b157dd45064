//! One proof's GPU work: the witness map and the five MSMs (natively on two host threads
//! sharing the GPU queue; two joined futures on one thread, as in a browser), then the proof's
//! few group operations on the CPU.

#[cfg(not(target_arch = "wasm32"))]
use std::sync::atomic::{AtomicBool, Ordering};
use web_time::Instant;
use zkgpu_msm::{MsmOutput, MsmRequest};
#[cfg(not(target_arch = "wasm32"))]
use zkgpu_runtime::BlockOn;

use ark_ec::CurveGroup;
use ark_ec::pairing::Pairing;
use ark_ff::Zero;
use ark_groth16::Proof;
#[cfg(not(target_arch = "wasm32"))]
use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use zkgpu_msm::{MsmConfig, MsmError};
#[cfg(not(target_arch = "wasm32"))]
use zkgpu_ntt::Direction;

use crate::ProofTimings;
use crate::error::ProveError;
use crate::key::{GpuPairing, PreparedProvingKey, gather_kept};
use crate::matrices::ConstraintRows;
use crate::prover::GpuProver;
use crate::qap::{WitnessMapTimings, witness_map_rows_timed};

/// The five MSMs' sums of one proof.
struct Sums<E: GpuPairing> {
    a: E::G1,
    b1: E::G1,
    b2: E::G2,
    l: E::G1,
    h: E::G1,
}

/// A, B in G1 and L from the one MSM over their three base sets.
fn split_a_b_l<E: GpuPairing>(sums: Vec<E::G1>) -> Result<[E::G1; 3], ProveError> {
    sums.try_into()
        .map_err(|_| ProveError::Msm(MsmError::Config("expected three sums".into())))
}

impl<E: GpuPairing> GpuProver<E> {
    /// The witness map and the five MSMs, then the proof's few group operations on the CPU.
    /// The work is two halves: the witness map then MSM H, and MSM B in G2 then A, B in G1
    /// and L. Natively with `overlap` (the prover's default) each half runs on a host thread
    /// of its own, sharing the GPU queue, so one half's host work (the sparse products,
    /// scalar conversion, window sums) overlaps the other's GPU work; else the halves are
    /// two futures joined on this thread (the only way in a browser), which overlap the
    /// same way where waits yield (a browser; natively with
    /// [`zkgpu_runtime::GpuContext::set_yielding_waits`]) and run one after the other,
    /// each stage alone, where they block.
    pub(crate) async fn assemble(
        &self,
        pk: &PreparedProvingKey<E>,
        rows: &impl ConstraintRows<E::ScalarField>,
        full: &[E::ScalarField],
        (r, s): (E::ScalarField, E::ScalarField),
        overlap: bool,
        timings: &mut ProofTimings,
    ) -> Result<Proof<E>, ProveError> {
        tracing::debug!("proof: GPU work begins");
        // Both halves use the G1 pipelines: build them first, once.
        self.g1.build_pipelines().await?;
        #[cfg(not(target_arch = "wasm32"))]
        if overlap {
            let (quotient, others) = std::thread::scope(|scope| {
                let quotient = scope.spawn(|| self.quotient_half(pk, rows, full, true).block_on());
                let others = self.others_half(pk, full).block_on();
                // A panic on the witness-map thread is a bug of ours: pass it on.
                match quotient.join() {
                    Ok(q) => (q, others),
                    Err(p) => std::panic::resume_unwind(p),
                }
            });
            return Ok(combine(pk, gather(quotient, others, timings)?, r, s));
        }
        #[cfg(target_arch = "wasm32")]
        let _ = overlap;
        // B in G2 first, as on two threads: the longest MSM is on the GPU while the witness
        // map's sparse products run on the CPU.
        let (others, quotient) = futures_util::future::join(
            self.others_half(pk, full),
            self.quotient_half(pk, rows, full, false),
        )
        .await;
        Ok(combine(pk, gather(quotient, others, timings)?, r, s))
    }

    /// The witness map, then MSM H. `pooled`: the sparse products on the prover's own
    /// thread pool (natively, where this half has a host thread of its own).
    async fn quotient_half(
        &self,
        pk: &PreparedProvingKey<E>,
        rows: &impl ConstraintRows<E::ScalarField>,
        full: &[E::ScalarField],
        pooled: bool,
    ) -> Result<QuotientHalf<E>, ProveError> {
        let t = Instant::now();
        let mut parts = WitnessMapTimings::default();
        let map = witness_map_rows_timed(&self.ntt, rows, pk.num_inputs, full, &mut parts);
        #[cfg(not(target_arch = "wasm32"))]
        let h = match (&self.products_pool, pooled) {
            (Some(pool), true) => pool.install(|| map.block_on()),
            _ => map.await,
        }?;
        #[cfg(target_arch = "wasm32")]
        let h = {
            let _ = pooled;
            map.await?
        };
        let wm = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let h_acc = self
            .g1
            .run_async(MsmRequest::new(&pk.h, &h).config(MsmConfig::default()))
            .await
            .and_then(MsmOutput::sum)?;
        Ok((h_acc, wm, parts, t.elapsed().as_secs_f64()))
    }

    /// MSM B in G2 (over the scalars of the bases it keeps), then A, B in G1 and L as one MSM
    /// over three base sets: one upload of the assignment as scalars, one digit decomposition
    /// and bucket sort, and each later stage once for all three (arkworks skips B in G1 when
    /// r = 0; its sum is then unused). B in G2 first: the longest MSM runs while the other
    /// half computes the sparse products on the CPU, and the witness map's transforms,
    /// submitted when those end, queue behind it rather than behind the G1 MSMs too (the
    /// queue is FIFO); H then overlaps the G1 MSMs.
    async fn others_half(
        &self,
        pk: &PreparedProvingKey<E>,
        full: &[E::ScalarField],
    ) -> Result<OthersHalf<E>, ProveError> {
        let cfg = MsmConfig::default();
        let t = Instant::now();
        // Field elements as the circuit gave them: each MSM converts them on the GPU.
        let assignment = &full[1..];
        let gathered = pk
            .b_g2_kept
            .as_ref()
            .map(|kept| gather_kept(assignment, kept));
        tracing::debug!(
            gathered = gathered.is_some(),
            "proof: B in G2's scalars ready"
        );
        let b2 = self
            .g2
            .run_async(
                MsmRequest::new(&pk.b_g2, gathered.as_deref().unwrap_or(assignment)).config(cfg),
            )
            .await
            .and_then(MsmOutput::sum)?;
        let tb2 = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let sums = self
            .g1
            .run_async(MsmRequest::new(&pk.a_b_l, assignment).config(cfg))
            .await
            .map(MsmOutput::into_sums)?;
        let [a, b1, l] = split_a_b_l::<E>(sums)?;
        Ok(((a, b1, b2, l), (t.elapsed().as_secs_f64(), tb2)))
    }

    /// Small NTTs, eight per submission (about a millisecond of GPU work), until `stop` is
    /// set; a failure ends the warm-up quietly (the proof reports GPU errors itself).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn warm_clock_until(&self, stop: &AtomicBool) {
        const LOG: usize = 14;
        let Some(domain) = Radix2EvaluationDomain::<E::ScalarField>::new(1 << LOG) else {
            return;
        };
        let Ok(mut dv) = self.ntt.zeroed(1 << LOG, 1) else {
            return;
        };
        while !stop.load(Ordering::Relaxed) {
            let mut enc = self.ntt.encoder();
            for _ in 0..8 {
                let rec =
                    self.ntt
                        .record_transform(&mut enc, &mut dv, &domain, Direction::Forward, None);
                if pollster::block_on(rec).is_err() {
                    return;
                }
            }
            if self.ntt.submit(enc).is_err() {
                return;
            }
        }
    }
}

/// What the witness map's half of a proof's GPU work returns: MSM H's sum, the witness map's
/// seconds and parts, MSM H's seconds.
type QuotientHalf<E> = (<E as Pairing>::G1, f64, WitnessMapTimings, f64);
/// What the other half returns: A, B in G1, B in G2 and L, then the seconds of A, B, L and
/// of B in G2.
type OthersHalf<E> = (
    (
        <E as Pairing>::G1,
        <E as Pairing>::G1,
        <E as Pairing>::G2,
        <E as Pairing>::G1,
    ),
    (f64, f64),
);

/// The five sums of the two halves, their times into `timings` (joined on one thread or
/// run on two).
fn gather<E: GpuPairing>(
    quotient: Result<QuotientHalf<E>, ProveError>,
    others: Result<OthersHalf<E>, ProveError>,
    timings: &mut ProofTimings,
) -> Result<Sums<E>, ProveError> {
    let (h, wm, wm_parts, th) = quotient?;
    let ((a, b1, b2, l), (tabl, tb2)) = others?;
    timings.witness_map = wm;
    timings.witness_map_parts = wm_parts;
    timings.msm_h = th;
    timings.msm_a_b_l = tabl;
    timings.msm_b_g2 = tb2;
    Ok(Sums { a, b1, b2, l, h })
}

/// Groth16::create_proof_with_assignment's group operations, term for term.
fn combine<E: GpuPairing>(
    pk: &PreparedProvingKey<E>,
    sums: Sums<E>,
    r: E::ScalarField,
    s: E::ScalarField,
) -> Proof<E> {
    let g_a: E::G1 = pk.points.delta_g1 * r + pk.points.a0 + sums.a + pk.pvk.vk.alpha_g1;
    let g1_b: E::G1 = if r.is_zero() {
        E::G1::zero()
    } else {
        pk.points.delta_g1 * s + pk.points.b_g1_0 + sums.b1 + pk.points.beta_g1
    };
    let g2_b: E::G2 = pk.pvk.vk.delta_g2 * s + pk.points.b_g2_0 + sums.b2 + pk.pvk.vk.beta_g2;
    let g_c: E::G1 = g_a * s + g1_b * r - pk.points.delta_g1 * (r * s) + sums.l + sums.h;
    Proof {
        a: g_a.into_affine(),
        b: g2_b.into_affine(),
        c: g_c.into_affine(),
    }
}
