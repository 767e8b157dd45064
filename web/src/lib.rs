//! zkgpu in the browser. [`run_suite`] runs a BLS12-381 G1 MSM, BLS12-381 Fr NTTs (forward,
//! inverse, and forward on a coset) and a Groth16 proof ([`prove::prove_merkle`]) on a GPU
//! context, repeats each on the CPU with arkworks, and reports times and whether the results
//! agree. In a wasm32 build the page
//! (`web/index.html`, driven by `scripts/web.sh`) calls it through the exported `run`, on the
//! browser's WebGPU, with arkworks compiled into the same module; natively, the tests run the
//! same suite on whatever adapter wgpu finds.

use ark_ec::{CurveGroup, PrimeGroup, VariableBaseMSM};
use ark_ff::UniformRand;
use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use web_time::Instant;
use zkgpu_curves::{Bls12_381G1, GpuCurve};
use zkgpu_msm::GpuMsm;
use zkgpu_msm::{MsmOutput, MsmRequest};
use zkgpu_ntt::GpuNtt;
use zkgpu_runtime::GpuContext;

pub mod api;
pub mod circom;
pub mod error;
pub mod prove;

type G1 = <Bls12_381G1 as GpuCurve>::Projective;
type Fr = ark_bls12_381::Fr;

/// One computation, done on the GPU and with arkworks on the CPU.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Row {
    /// What was computed.
    pub what: String,
    /// Its size.
    pub n: usize,
    /// The first GPU call (pipeline creation included), milliseconds.
    pub first_ms: f64,
    /// A second GPU call on the same inputs, milliseconds.
    pub gpu_ms: f64,
    /// arkworks on the CPU, milliseconds.
    pub cpu_ms: f64,
    /// Whether both GPU results equal arkworks' result.
    pub ok: bool,
}

/// What [`run_suite`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// The adapter's name as the platform reports it.
    pub adapter: String,
    /// Its backend (`BrowserWebGpu` in a browser).
    pub backend: String,
    /// One row per computation.
    pub rows: Vec<Row>,
}

impl Report {
    /// Whether every computation ran and agreed with arkworks.
    pub fn ok(&self) -> bool {
        !self.rows.is_empty() && self.rows.iter().all(|r| r.ok)
    }

    /// The report as JSON (what the page receives): the adapter, the backend, whether every
    /// row agreed, and the rows.
    pub fn to_json(&self) -> String {
        #[derive(serde::Serialize)]
        struct Wire<'a> {
            adapter: &'a str,
            backend: &'a str,
            ok: bool,
            rows: &'a [Row],
        }
        let wire = Wire {
            adapter: &self.adapter,
            backend: &self.backend,
            ok: self.ok(),
            rows: &self.rows,
        };
        // Strings, integers, finite floats and booleans only: serializing cannot fail; a
        // non-finite time (never measured) becomes null.
        serde_json::to_string(&wire).unwrap_or_else(|e| {
            format!(r#"{{"error":{}}}"#, serde_json::Value::from(e.to_string()))
        })
    }
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// What [`run_suite`] runs: an MSM of `2^msm` points, NTTs of `2^ntt` elements, and a Groth16
/// proof of Merkle paths of depth `depth` in `2^prove` constraints (none when `prove` is 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// log2 of the MSM's points.
    pub msm: u32,
    /// log2 of the NTTs' elements.
    pub ntt: u32,
    /// log2 of the proof's constraint budget, 0 for no proof.
    pub prove: u32,
    /// The Merkle paths' depth.
    pub depth: usize,
}

/// Runs an MSM of random BLS12-381 G1 points, NTTs of random BLS12-381 Fr elements and a
/// Groth16 proof on `ctx` as `sizes` asks, each checked against arkworks on the same inputs
/// (fixed seed). Errors of the GPU are returned as text.
pub async fn run_suite(ctx: &GpuContext, sizes: Sizes) -> Result<Report, String> {
    let Sizes {
        msm: log_msm,
        ntt: log_ntt,
        ..
    } = sizes;
    if log_msm > 20 || log_ntt > 22 {
        return Err(format!(
            "sizes 2^{log_msm} and 2^{log_ntt} are beyond this page (at most 2^20 and 2^22)"
        ));
    }
    let mut rng = StdRng::seed_from_u64(0x2b9e_0c11);
    let mut rows = Vec::new();

    // MSM: distinct bases as runs of consecutive multiples of the generator.
    let n = 1usize << log_msm;
    let g = G1::generator();
    let mut p = G1::rand(&mut rng);
    let points: Vec<G1> = (0..n)
        .map(|_| {
            p += g;
            p
        })
        .collect();
    let bases = G1::normalize_batch(&points);
    let scalars: Vec<Fr> = (0..n).map(|_| Fr::rand(&mut rng)).collect();
    let msm = GpuMsm::<Bls12_381G1>::new(ctx).map_err(|e| e.to_string())?;
    let prepared = msm.prepare(&bases).map_err(|e| e.to_string())?;
    let t = Instant::now();
    let first = msm
        .run_async(MsmRequest::new(&prepared, &scalars))
        .await
        .and_then(MsmOutput::sum)
        .map_err(|e| e.to_string())?;
    let first_ms = ms(t);
    let t = Instant::now();
    let second = msm
        .run_async(MsmRequest::new(&prepared, &scalars))
        .await
        .and_then(MsmOutput::sum)
        .map_err(|e| e.to_string())?;
    let gpu_ms = ms(t);
    let t = Instant::now();
    let want = G1::msm(&bases, &scalars).map_err(|e| format!("arkworks: {e}"))?;
    let cpu_ms = ms(t);
    rows.push(Row {
        what: "MSM, BLS12-381 G1".into(),
        n,
        first_ms,
        gpu_ms,
        cpu_ms,
        ok: first == want && second == want,
    });

    // NTTs: forward, inverse, and forward on a coset (a domain with an offset).
    let n = 1usize << log_ntt;
    let ntt = GpuNtt::<Fr>::new(ctx);
    let plain = Radix2EvaluationDomain::<Fr>::new(n).ok_or("no radix-2 domain of that size")?;
    let coset = plain
        .get_coset(Fr::from(7u64))
        .ok_or("no coset of that domain")?;
    let values: Vec<Fr> = (0..n).map(|_| Fr::rand(&mut rng)).collect();
    for (what, domain, inverse) in [
        ("NTT (fft), BLS12-381 Fr", plain, false),
        ("inverse NTT (ifft), BLS12-381 Fr", plain, true),
        ("coset NTT (fft), BLS12-381 Fr", coset, false),
    ] {
        let mut times = [0.0; 2];
        let mut results = Vec::new();
        for time in &mut times {
            let mut v = values.clone();
            let t = Instant::now();
            if inverse {
                ntt.ifft_async(&domain, &mut v).await
            } else {
                ntt.fft_async(&domain, &mut v).await
            }
            .map_err(|e| e.to_string())?;
            *time = ms(t);
            results.push(v);
        }
        let mut want = values.clone();
        let t = Instant::now();
        if inverse {
            domain.ifft_in_place(&mut want);
        } else {
            domain.fft_in_place(&mut want);
        }
        let cpu_ms = ms(t);
        rows.push(Row {
            what: what.into(),
            n,
            first_ms: times[0],
            gpu_ms: times[1],
            cpu_ms,
            ok: results.iter().all(|r| *r == want),
        });
    }
    if sizes.prove > 0 {
        rows.push(prove::prove_merkle(ctx, sizes.prove, sizes.depth).await?);
    }
    let info = ctx.info();
    Ok(Report {
        adapter: info.name.clone(),
        backend: format!("{:?}", info.backend),
        rows,
    })
}

/// The page's entry points.
#[cfg(target_arch = "wasm32")]
mod page;
