//! `R1CSToQAP` with the NTTs and the quotient on the GPU.
//!
//! `R1CSToQAP`'s functions take no receiver and are generic over every `PrimeField`, so a
//! reduction given to ark-groth16 as a type parameter can only reach a GPU through process
//! state and can only tell its field by `TypeId`. That state is one slot here: a context
//! handle (the caller's, through [`GpuReduction::use_context`], or one made from the
//! environment on first use) with an NTT engine per supported field.

#[cfg(not(target_arch = "wasm32"))]
use std::any::{Any, TypeId};
use std::sync::atomic::{AtomicUsize, Ordering};
#[cfg(not(target_arch = "wasm32"))]
use std::sync::{Arc, Mutex, PoisonError};

static GPU_RUNS: AtomicUsize = AtomicUsize::new(0);

/// How many witness maps of this process ran on the GPU (the rest took the CPU path).
pub fn gpu_witness_maps() -> usize {
    GPU_RUNS.load(Ordering::Relaxed)
}

use ark_ff::PrimeField;
use ark_groth16::r1cs_to_qap::{LibsnarkReduction, R1CSToQAP};
use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use ark_relations::gr1cs::{ConstraintSystemRef, Matrix, SynthesisError};
use zkgpu_ntt::{Direction, Elementwise, GpuNtt, NttError, NttField};
#[cfg(not(target_arch = "wasm32"))]
use zkgpu_runtime::GpuContext;

use crate::matrices::{ArkRows, ConstraintRows, Qap};

#[cfg(not(target_arch = "wasm32"))]
/// The reduction's NTT engines, all on one context: one per field, made on first use.
#[derive(Debug)]
struct Engines {
    ctx: GpuContext,
    ntts: Mutex<std::collections::HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
}

#[cfg(not(target_arch = "wasm32"))]
impl Engines {
    fn on(ctx: &GpuContext) -> Arc<Self> {
        Arc::new(Self {
            ctx: ctx.clone(),
            ntts: Mutex::default(),
        })
    }

    /// The engine of field `G` (made on first use).
    fn ntt<G: NttField>(&self) -> Arc<GpuNtt<G>> {
        let mut ntts = self.ntts.lock().unwrap_or_else(PoisonError::into_inner);
        let any = ntts
            .entry(TypeId::of::<G>())
            .or_insert_with(|| Arc::new(GpuNtt::<G>::new(&self.ctx)))
            .clone();
        any.downcast::<GpuNtt<G>>()
            .unwrap_or_else(|_| unreachable!("engines are keyed by their field's type"))
    }
}

/// The slot: empty until first use; `Err` holds why no context could be made.
#[cfg(not(target_arch = "wasm32"))]
static ENGINES: Mutex<Option<Result<Arc<Engines>, String>>> = Mutex::new(None);

#[cfg(not(target_arch = "wasm32"))]
fn engines() -> Result<Arc<Engines>, String> {
    let mut slot = ENGINES.lock().unwrap_or_else(PoisonError::into_inner);
    slot.get_or_insert_with(|| {
        GpuContext::from_env_blocking()
            .map(|ctx| Engines::on(&ctx))
            .map_err(|e| e.to_string())
    })
    .clone()
}

/// The GPU context [`GpuReduction`] runs on: the one given to [`GpuReduction::use_context`],
/// else the adapter `ZKGPU_ADAPTER` / `ZKGPU_BACKEND` select (see
/// `zkgpu_runtime::ContextOptions::from_env`), created on first use. `Err` holds why there
/// is none.
#[cfg(not(target_arch = "wasm32"))]
pub fn gpu_context() -> Result<GpuContext, String> {
    engines().map(|e| e.ctx.clone())
}

/// `xs` as a slice of `G` when `F` is `G`, without copying.
#[cfg(not(target_arch = "wasm32"))]
#[allow(unsafe_code)]
fn same_type<F: 'static, G: 'static>(xs: &[F]) -> Option<&[G]> {
    (TypeId::of::<F>() == TypeId::of::<G>()).then(|| {
        // SAFETY: equal `TypeId`s: `F` and `G` are one type, so this is `xs` itself.
        unsafe { std::slice::from_raw_parts(xs.as_ptr().cast::<G>(), xs.len()) }
    })
}

/// The libsnark reduction of ark-groth16 with the witness map on the GPU.
///
/// For the scalar fields of BLS12-381, BLS12-377 and BN254 the NTTs and the quotient run on
/// the GPU; other fields, a machine where no GPU context can be created, and a GPU failure
/// (logged as an error) take ark-groth16's CPU path, whose output is the same, so a proof is
/// always produced and always the same.
#[derive(Clone, Copy, Debug, Default)]
pub struct GpuReduction;

#[cfg(not(target_arch = "wasm32"))]
impl GpuReduction {
    /// Runs this process's reductions on `ctx` from now on (a clone of the handle is kept),
    /// instead of a context of their own made from the environment: one device and one set
    /// of pipelines for the reduction and the caller's other engines.
    pub fn use_context(ctx: &GpuContext) {
        *ENGINES.lock().unwrap_or_else(PoisonError::into_inner) = Some(Ok(Engines::on(ctx)));
    }
}

impl R1CSToQAP for GpuReduction {
    #[allow(clippy::type_complexity)]
    fn instance_map_with_evaluation<F: PrimeField, D: EvaluationDomain<F>>(
        cs: ConstraintSystemRef<F>,
        t: &F,
    ) -> Result<(Vec<F>, Vec<F>, Vec<F>, F, usize, usize), SynthesisError> {
        LibsnarkReduction::instance_map_with_evaluation::<F, D>(cs, t)
    }

    fn witness_map_from_matrices<F: PrimeField, D: EvaluationDomain<F>>(
        matrices: &[Matrix<F>],
        num_inputs: usize,
        num_constraints: usize,
        full_assignment: &[F],
    ) -> Result<Vec<F>, SynthesisError> {
        // The first pairing's scalar field that `F` is (the registry: zkgpu_shaders::Pairing).
        macro_rules! first_field {
            (; $(($p:ident, $id:ident, $g1:ident, $g2:ident, $ark:path, $fr:path))*) => {
                None$(.or_else(|| {
                    dispatch::<F, $fr>(matrices, num_inputs, num_constraints, full_assignment)
                }))*
            };
        }
        let on_gpu = crate::for_each_pairing!(first_field);
        match on_gpu {
            Some(h) => h,
            None => LibsnarkReduction::witness_map_from_matrices::<F, D>(
                matrices,
                num_inputs,
                num_constraints,
                full_assignment,
            ),
        }
    }

    fn h_query_scalars<F: PrimeField, D: EvaluationDomain<F>>(
        max_power: usize,
        t: F,
        zt: F,
        delta_inverse: F,
    ) -> Result<Vec<F>, SynthesisError> {
        LibsnarkReduction::h_query_scalars::<F, D>(max_power, t, zt, delta_inverse)
    }
}

/// Runs the GPU witness map when `F` is `G` and a GPU is there; `None` otherwise (the caller
/// then runs the CPU reduction). An unsatisfied constraint system is an error
/// (`SynthesisError::Unsatisfiable`), where ark-groth16's reduction would go on to a proof
/// that does not verify.
#[cfg(not(target_arch = "wasm32"))]
fn dispatch<F: PrimeField, G: NttField>(
    matrices: &[Matrix<F>],
    num_inputs: usize,
    num_constraints: usize,
    full_assignment: &[F],
) -> Option<Result<Vec<F>, SynthesisError>> {
    let matrices: &[Matrix<G>] = same_type(matrices)?;
    let assignment: &[G] = same_type(full_assignment)?;
    let engines = match engines() {
        Ok(e) => e,
        Err(why) => {
            tracing::warn!("no GPU context ({why}): the witness map runs on the CPU");
            return None;
        }
    };
    let ntt = engines.ntt::<G>();
    let matrices: Vec<&Matrix<G>> = matrices.iter().collect();
    let run = witness_map_gpu(&ntt, &matrices, num_inputs, num_constraints, assignment);
    match pollster::block_on(run) {
        Ok(h) => {
            GPU_RUNS.fetch_add(1, Ordering::Relaxed);
            let boxed: Box<dyn Any> = Box::new(h);
            boxed.downcast::<Vec<F>>().ok().map(|h| Ok(*h))
        }
        Err(WitnessMapError::Unsatisfied { constraint }) => {
            tracing::error!("constraint {constraint} is not satisfied");
            Some(Err(SynthesisError::Unsatisfiable))
        }
        Err(e) => {
            tracing::error!("GPU witness map failed, running it on the CPU: {e}");
            None
        }
    }
}

/// In the browser there is no blocking wait: the reduction runs on the CPU there (a page
/// proves on the GPU through `GpuProver::run`).
#[cfg(target_arch = "wasm32")]
#[allow(clippy::extra_unused_type_parameters)] // the native dispatch's signature
fn dispatch<F: PrimeField, G: NttField>(
    _matrices: &[Matrix<F>],
    _num_inputs: usize,
    _num_constraints: usize,
    _full_assignment: &[F],
) -> Option<Result<Vec<F>, SynthesisError>> {
    None
}

/// Errors of [`witness_map_gpu`].
#[derive(Debug, thiserror::Error)]
pub enum WitnessMapError {
    /// The constraint system is malformed or too large for a radix-2 domain.
    #[error("{0}")]
    Synthesis(SynthesisError),
    /// The assignment does not satisfy constraint `constraint` (the first such).
    #[error("the assignment does not satisfy constraint {constraint}")]
    Unsatisfied {
        /// Index of the first unsatisfied constraint.
        constraint: usize,
    },
    /// The GPU failed.
    #[error(transparent)]
    Ntt(#[from] NttError),
}

/// The vectors the witness map transforms as one batch: `A z`, `B z`, `C z`.
pub(crate) const WITNESS_MAP_BATCH: usize = 3;

/// `LibsnarkReduction::witness_map_from_matrices` with the transforms and the quotient on the
/// GPU: the sparse products `A z`, `B z`, `C z` on the CPU cores, written straight into the
/// upload's staging memory, then seven NTTs and one elementwise kernel on the GPU, and one
/// download.
///
/// It also checks `(A z)_i (B z)_i = (C z)_i` for every constraint (one multiplication each,
/// on the CPU cores as the row's products are computed) and returns
/// [`WitnessMapError::Unsatisfied`] with the first failing index instead of a quotient that
/// is not one.
pub async fn witness_map_gpu<F: NttField>(
    ntt: &GpuNtt<F>,
    matrices: &[&Matrix<F>],
    num_inputs: usize,
    num_constraints: usize,
    full_assignment: &[F],
) -> Result<Vec<F>, WitnessMapError> {
    let mut timings = WitnessMapTimings::default();
    witness_map_gpu_timed(
        ntt,
        matrices,
        num_inputs,
        num_constraints,
        full_assignment,
        &mut timings,
    )
    .await
}

/// Where the time of one [`witness_map_gpu`] went (seconds, wall clock on the host).
#[derive(Clone, Copy, Debug, Default)]
pub struct WitnessMapTimings {
    /// One pass on the CPU cores: the sparse products `A z`, `B z`, `C z`, the satisfaction
    /// check `(A z)_i (B z)_i = (C z)_i`, and packing the three into the upload's staging
    /// memory.
    pub products: f64,
    /// Recording and running the seven NTTs and the quotient, submit to done.
    pub gpu: f64,
    /// Reading the quotient back and unpacking it.
    pub download: f64,
}

/// [`witness_map_gpu`], also reporting where the time went.
pub async fn witness_map_gpu_timed<F: NttField>(
    ntt: &GpuNtt<F>,
    matrices: &[&Matrix<F>],
    num_inputs: usize,
    num_constraints: usize,
    full_assignment: &[F],
    timings: &mut WitnessMapTimings,
) -> Result<Vec<F>, WitnessMapError> {
    let [a, b, c] = matrices else {
        return Err(WitnessMapError::Synthesis(SynthesisError::Unsatisfiable));
    };
    if a.len() < num_constraints || b.len() < num_constraints || c.len() < num_constraints {
        return Err(WitnessMapError::Synthesis(SynthesisError::Unsatisfiable));
    }
    let rows = ArkRows {
        m: [a, b, c],
        num_constraints,
        // Matrices from a synthesis index only the variables of their own constraint
        // system, whose assignment this is.
        num_variables: full_assignment.len(),
    };
    witness_map_rows_timed(ntt, &rows, num_inputs, full_assignment, timings).await
}

/// The witness map over any [`ConstraintRows`] (the compact matrices a prepared key holds,
/// or arkworks' own), reporting where the time went. `full_assignment` must hold the rows'
/// variables, the instance first (`num_inputs` of them, the constant one included).
pub async fn witness_map_rows_timed<F: NttField>(
    ntt: &GpuNtt<F>,
    rows: &impl ConstraintRows<F>,
    num_inputs: usize,
    full_assignment: &[F],
    timings: &mut WitnessMapTimings,
) -> Result<Vec<F>, WitnessMapError> {
    let clock = web_time::Instant::now;
    let num_constraints = rows.num_constraints();
    let domain =
        rows.qap()
            .domain::<F>(num_constraints + num_inputs)
            .ok_or(WitnessMapError::Synthesis(
                SynthesisError::PolynomialDegreeTooLarge,
            ))?;
    let n = domain.size();
    if full_assignment.len() < num_inputs.max(rows.num_variables()) {
        return Err(WitnessMapError::Synthesis(SynthesisError::Unsatisfiable));
    }
    // One pass over the rows on the CPU cores: the sparse products (A z)_i, (B z)_i, (C z)_i,
    // the satisfaction check, and the packed words written straight into the upload's staging
    // memory (no vectors on the host). Row n_c + j of A z is the instance's z_j, as in
    // ark-groth16.
    let t = clock();
    let mut dv = ntt.zeroed(n, WITNESS_MAP_BATCH)?;
    let unsatisfied = AtomicUsize::new(usize::MAX);
    let zero = F::zero();
    ntt.write_rows(&dv, |row, blocks| {
        let [a, b, c] = blocks else {
            unreachable!("three vectors");
        };
        // The block's constraint rows at once (rows that repeat are evaluated once).
        let in_block = (a.len() / 8).min(num_constraints.saturating_sub(row));
        let mut products = vec![(zero, zero, zero); in_block];
        rows.eval_rows(row, full_assignment, &mut products);
        for (j, ((wa, wb), wc)) in a
            .as_chunks_mut::<8>()
            .0
            .iter_mut()
            .zip(b.as_chunks_mut::<8>().0)
            .zip(c.as_chunks_mut::<8>().0)
            .enumerate()
        {
            let i = row + j;
            let (x, y, z) = if let Some(&(x, y, z)) = products.get(j) {
                if x * y != z {
                    unsatisfied.fetch_min(i, Ordering::Relaxed);
                }
                (x, y, z)
            } else if i < num_constraints + num_inputs {
                (full_assignment[i - num_constraints], zero, zero)
            } else {
                (zero, zero, zero)
            };
            x.write_packed(wa);
            y.write_packed(wb);
            z.write_packed(wc);
        }
    })?;
    timings.products = t.elapsed().as_secs_f64();
    tracing::debug!(n, "witness map: sparse products written");
    let constraint = unsatisfied.into_inner();
    if constraint != usize::MAX {
        return Err(WitnessMapError::Unsatisfied { constraint });
    }
    let t = clock();
    let mut enc = ntt.encoder();
    record_quotient(ntt, &mut enc, &mut dv, &domain, rows.qap()).await?;
    // The quotient's download rides in the transforms' submission: a separate one would
    // queue behind whatever MSM the prover's other thread submitted meanwhile.
    let download = ntt.record_download(&mut enc, &dv, 0)?;
    let (_, submission) = ntt.submit_indexed(enc)?;
    timings.gpu = t.elapsed().as_secs_f64();
    tracing::debug!(n, "witness map: transforms submitted");
    let t = clock();
    let h = ntt.finish_download(download, submission).await?;
    timings.download = t.elapsed().as_secs_f64();
    tracing::debug!(n, "witness map: quotient downloaded");
    Ok(h)
}

/// Records the transforms and the elementwise step that turn `A z`, `B z`, `C z` (vectors 0,
/// 1, 2 of `dv`, on `domain`) into the H query's scalars in vector 0, for the reduction `qap`.
async fn record_quotient<F: NttField>(
    ntt: &GpuNtt<F>,
    enc: &mut zkgpu_ntt::NttEncoder,
    dv: &mut zkgpu_ntt::DeviceVec<F>,
    domain: &Radix2EvaluationDomain<F>,
    qap: Qap,
) -> Result<(), WitnessMapError> {
    let no_domain = || WitnessMapError::Synthesis(SynthesisError::PolynomialDegreeTooLarge);
    // The offset of the coset the quotient is evaluated on, and the constant it is scaled by.
    let (offset, c) = match qap {
        // LibsnarkReduction: the coset g H, divided by Z(g), then interpolated back.
        Qap::Libsnark => {
            let z_inv = domain
                .evaluate_vanishing_polynomial(F::GENERATOR)
                .inverse()
                .ok_or(WitnessMapError::Synthesis(SynthesisError::DivisionByZero))?;
            (F::GENERATOR, z_inv)
        }
        // circom's: `a b - c` on the coset w H of a 2n-th root of unity w, left there.
        Qap::Circom => {
            let double = qap.domain::<F>(2 * domain.size()).ok_or_else(no_domain)?;
            (double.group_gen(), F::one())
        }
    };
    let coset = domain.get_coset(offset).ok_or_else(no_domain)?;
    ntt.record_transform(enc, dv, domain, Direction::Inverse, None)
        .await?;
    ntt.record_transform(enc, dv, &coset, Direction::Forward, None)
        .await?;
    let step = Elementwise::MulSubScale {
        a: 0,
        b: 1,
        d: 2,
        c,
    };
    ntt.record_elementwise(enc, dv, step).await?;
    if qap == Qap::Libsnark {
        ntt.record_transform(enc, dv, &coset, Direction::Inverse, Some(1))
            .await?;
    }
    Ok(())
}
