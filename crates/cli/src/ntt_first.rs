//! `zkgpu ntt --first-call`: what the first transform of a size costs in a fresh context (as in
//! a new process: pipelines loaded from the persistent pipeline cache, twiddle plans built on
//! first use) against the warm figure, and after `GpuNtt::prepare`. Each context is dropped
//! before the next is made, as a new process would have none beside it, and the prepared
//! context's own warm figure is measured too.

use std::time::Instant;

use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use zkgpu_ntt::{GpuNtt, NttField};
use zkgpu_runtime::{ContextOptions, GpuContext};

use super::random_input;

/// One `fft` of `input` over `d` on `ntt`: its seconds, and whether it equals `want`.
fn fft_once<F: NttField>(
    ntt: &GpuNtt<F>,
    d: &Radix2EvaluationDomain<F>,
    input: &[F],
    want: &[F],
) -> Result<(f64, bool), Box<dyn std::error::Error>> {
    let mut v = input.to_vec();
    let t = Instant::now();
    ntt.fft(d, &mut v)?;
    Ok((t.elapsed().as_secs_f64(), v == want))
}

/// The median seconds of `runs` warm `fft`s of `input` on `ntt` (`ok` cleared on a result
/// other than `want`).
fn warm_median<F: NttField>(
    ntt: &GpuNtt<F>,
    d: &Radix2EvaluationDomain<F>,
    input: &[F],
    want: &[F],
    runs: usize,
    ok: &mut bool,
) -> Result<f64, Box<dyn std::error::Error>> {
    let mut warm = Vec::new();
    for _ in 0..runs.max(1) {
        let (t, good) = fft_once(ntt, d, input, want)?;
        *ok &= good;
        warm.push(t);
    }
    warm.sort_by(f64::total_cmp);
    Ok(warm[warm.len() / 2])
}

/// The table of first calls for each size: fresh contexts from `opts`.
pub(super) fn run_first_call<F: NttField>(
    opts: &ContextOptions,
    sizes: &[u32],
    runs: usize,
) -> Result<bool, Box<dyn std::error::Error>> {
    println!(
        "| n | warm fft ms (median) | first fft ms | first / warm | prepare ms (pipelines + tables + transforms) | first after prepare ms | / warm | warm fft ms, prepared context | check |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut ok = true;
    for &log_n in sizes {
        let d = Radix2EvaluationDomain::<F>::new(1 << log_n).ok_or("no domain of that size")?;
        let input: Vec<F> = random_input(1 << log_n, u64::from(log_n));
        let mut want = input.clone();
        d.fft_in_place(&mut want);
        let ntt = GpuNtt::<F>::new(&GpuContext::new_blocking(opts.clone())?);
        let (first, good) = fft_once(&ntt, &d, &input, &want)?;
        ok &= good;
        let warm = warm_median(&ntt, &d, &input, &want, runs, &mut ok)?;
        ntt.context().save_pipeline_cache()?;
        drop(ntt);
        let ntt = GpuNtt::<F>::new(&GpuContext::new_blocking(opts.clone())?);
        let t = Instant::now();
        let parts = ntt.prepare(&d)?;
        let prepare = t.elapsed().as_secs_f64();
        let (prepared, good) = fft_once(&ntt, &d, &input, &want)?;
        ok &= good;
        let warm_prepared = warm_median(&ntt, &d, &input, &want, runs, &mut ok)?;
        drop(ntt);
        println!(
            "| 2^{log_n} | {:.3} | {:.3} | {:.2} | {:.3} ({:.1} + {:.1} + {:.1}) | {:.3} | {:.2} | {:.3} | {} |",
            warm * 1e3,
            first * 1e3,
            first / warm,
            prepare * 1e3,
            parts.pipelines * 1e3,
            parts.tables * 1e3,
            parts.transforms * 1e3,
            prepared * 1e3,
            prepared / warm,
            warm_prepared * 1e3,
            if ok { "ok" } else { "MISMATCH" }
        );
    }
    Ok(ok)
}
