//! One proof's GPU work: the witness map and the five MSMs on two host threads sharing the
//! GPU queue, then the proof's few group operations on the CPU.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use zkgpu_msm::{MsmOutput, MsmRequest};
use zkgpu_runtime::BlockOn;

use ark_ec::CurveGroup;
use ark_ff::Zero;
use ark_groth16::Proof;
use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use zkgpu_msm::{MsmConfig, MsmError, PreparedScalars};
use zkgpu_ntt::Direction;

use crate::ProofTimings;
use crate::error::ProveError;
use crate::key::{GpuPairing, PreparedProvingKey};
use crate::matrices::ConstraintRows;
use crate::prover::GpuProver;
use crate::qap::{WitnessMapTimings, witness_map_rows_timed};

impl<E: GpuPairing> GpuProver<E> {
    /// The witness map and the five MSMs (two host threads sharing the GPU queue, so one
    /// thread's host work overlaps the other's GPU work), then the proof's few group
    /// operations on the CPU.
    pub(crate) fn assemble(
        &self,
        pk: &PreparedProvingKey<E>,
        rows: &impl ConstraintRows<E::ScalarField>,
        full: &[E::ScalarField],
        r: E::ScalarField,
        s: E::ScalarField,
        timings: &mut ProofTimings,
    ) -> Result<Proof<E>, ProveError> {
        let num_inputs = pk.num_inputs;
        let cfg = MsmConfig::default();
        let quotient = || -> Result<_, ProveError> {
            let t = Instant::now();
            let mut parts = WitnessMapTimings::default();
            let mut map = || {
                pollster::block_on(witness_map_rows_timed(
                    &self.ntt, rows, num_inputs, full, &mut parts,
                ))
            };
            let h = match (&self.products_pool, self.overlap) {
                (Some(pool), true) => pool.install(map),
                _ => map(),
            }?;
            let wm = t.elapsed().as_secs_f64();
            let (h_acc, th) = timed(|| {
                self.g1
                    .run(MsmRequest::new(&pk.h, &h).config(cfg))
                    .block_on()
                    .and_then(MsmOutput::sum)
            })?;
            Ok((h_acc, wm, parts, th))
        };
        let others = || -> Result<_, ProveError> {
            // One conversion of the assignment for A, B (G1 and G2) and L; its time is
            // counted in MSM B in G2.
            let t = Instant::now();
            let assignment = PreparedScalars::new(&full[1..]);
            let convert = t.elapsed().as_secs_f64();
            // B in G2 first: the longest MSM runs while the other thread computes the sparse
            // products on the CPU, and the witness map's transforms, submitted when those
            // end, queue behind it rather than behind the G1 MSMs too (the queue is FIFO); H
            // then overlaps the G1 MSMs.
            let (b2, tb2) = timed(|| {
                self.g2
                    .run(MsmRequest::new(&pk.b_g2, assignment.all()).config(cfg))
                    .block_on()
                    .and_then(MsmOutput::sum)
            })?;
            let tb2 = tb2 + convert;
            // Then A, B in G1 and L as one MSM over three base sets: one upload of the
            // scalars, one digit decomposition and bucket sort, and each later stage once
            // for all three (arkworks skips B in G1 when r = 0; its sum is then unused).
            let (sums, tabl) = timed(|| {
                self.g1
                    .run(MsmRequest::new(&pk.a_b_l, assignment.all()).config(cfg))
                    .block_on()
                    .map(MsmOutput::into_sums)
            })?;
            let [a, b1, l]: [E::G1; 3] = sums
                .try_into()
                .map_err(|_| ProveError::Msm(MsmError::Config("expected three sums".into())))?;
            Ok(((a, b1, b2, l), (tabl, tb2)))
        };
        let (quotient, others) = if self.overlap {
            // Both threads use the G1 pipelines: build them first, once.
            pollster::block_on(self.g1.build_pipelines())?;
            std::thread::scope(|scope| {
                let quotient = scope.spawn(quotient);
                let others = others();
                // A panic on the witness-map thread is a bug of ours: pass it on.
                match quotient.join() {
                    Ok(q) => (q, others),
                    Err(p) => std::panic::resume_unwind(p),
                }
            })
        } else {
            (quotient(), others())
        };
        let (h_acc, wm, wm_parts, th) = quotient?;
        let ((a_acc, b1_acc, b2_acc, l_acc), (tabl, tb2)) = others?;
        timings.witness_map = wm;
        timings.witness_map_parts = wm_parts;
        timings.msm_h = th;
        timings.msm_a_b_l = tabl;
        timings.msm_b_g2 = tb2;

        // Groth16::create_proof_with_assignment, term for term.
        let g_a: E::G1 = pk.points.delta_g1 * r + pk.points.a0 + a_acc + pk.pvk.vk.alpha_g1;
        let g1_b: E::G1 = if r.is_zero() {
            E::G1::zero()
        } else {
            pk.points.delta_g1 * s + pk.points.b_g1_0 + b1_acc + pk.points.beta_g1
        };
        let g2_b: E::G2 = pk.pvk.vk.delta_g2 * s + pk.points.b_g2_0 + b2_acc + pk.pvk.vk.beta_g2;
        let g_c: E::G1 = g_a * s + g1_b * r - pk.points.delta_g1 * (r * s) + l_acc + h_acc;
        Ok(Proof {
            a: g_a.into_affine(),
            b: g2_b.into_affine(),
            c: g_c.into_affine(),
        })
    }

    /// Small NTTs, eight per submission (about a millisecond of GPU work), until `stop` is
    /// set; a failure ends the warm-up quietly (the proof reports GPU errors itself).
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

/// `f()` and its wall time in seconds.
fn timed<T>(f: impl FnOnce() -> Result<T, MsmError>) -> Result<(T, f64), MsmError> {
    let t = Instant::now();
    let v = f()?;
    Ok((v, t.elapsed().as_secs_f64()))
}
