//! `zkgpu ntt`: NTTs on the GPU against ark-poly on the CPU cores, same inputs, checked.
//! Exits non-zero when any result differs.

use std::time::Instant;
use zkgpu_runtime::BlockOn;

use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use ark_std::rand::{Rng, SeedableRng, rngs::StdRng};
use clap::Args;
use rayon::prelude::*;
use zkgpu_ntt::{Direction, GpuNtt, NttField};
use zkgpu_runtime::GpuContext;

#[path = "ntt_first.rs"]
mod first;

/// Arguments of `zkgpu ntt`.
#[derive(Args, Debug)]
pub struct NttArgs {
    /// The scalar field, by its curve: bls12-381, bls12-377 or bn254 (snarkjs' bn128);
    /// `--curve` as `prove` spells it.
    #[arg(long, alias = "curve", default_value = "bls12-381", value_parser = zkgpu_groth16::Pairing::from_name)]
    field: zkgpu_groth16::Pairing,
    /// log2 of the transform size; repeat for several sizes.
    #[arg(long, default_values_t = [16u32])]
    log_n: Vec<u32>,
    /// Timed GPU runs after a warm-up; the median is reported.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Largest pass in bits (1..=8); repeat to compare [default: the engine's].
    #[arg(long)]
    max_pass_bits: Vec<u32>,
    /// Most elements per storage binding, log2 (data is paged across up to three bindings)
    /// [default: what the device's binding limit allows].
    #[arg(long)]
    max_page_log: Option<u32>,
    /// Largest transform (log2) given a table of all its twists; repeat to compare (0: every
    /// twist from two small tables) [default: the engine's].
    #[arg(long)]
    max_twist_log: Vec<u32>,
    /// Allocate the device buffers once per size and overwrite them for every transform and
    /// run (default: a fresh upload, hence fresh buffers, per run).
    #[arg(long)]
    reuse_buffers: bool,
    /// Also time this many transforms back to back on resident data, with no host work in
    /// between, and report their median as "busy kernels ms" (the GPU lowers its clocks while
    /// it waits on the host, and the per-run timings include that) [default: 0, off].
    #[arg(long, default_value_t = 0)]
    back_to_back: usize,
    /// Also time this many same-size forward transforms as one batch in one submission (the
    /// witness map's seven), on resident data after a second of untimed batches brings the
    /// clock up; `--back-to-back` timed runs (at least 3) [default: 0, off].
    #[arg(long, default_value_t = 0)]
    batch: usize,
    /// Where the pipeline cache is kept (`pipelines/` below it) [default: `$ZKGPU_CACHE`, else
    /// ~/.cache/zkgpu; `ZKGPU_PIPELINE_CACHE` names the pipeline cache itself].
    #[arg(long)]
    cache_dir: Option<std::path::PathBuf>,
    /// Instead of the tables above: the first `fft` of each size in a fresh context (as in a
    /// new process, the pipeline cache warm) against the warm figure, and after
    /// `GpuNtt::prepare`.
    #[arg(long)]
    first_call: bool,
    /// Keep the GPU busy this long before the timed runs (`GpuNtt::warm_clock`), so that they
    /// start at the working clock, and with the transform itself before each
    /// `--back-to-back` series [default: 0, off].
    #[arg(long, default_value_t = 0)]
    clock_warmup_ms: u64,
}

pub fn run(args: &NttArgs) -> Result<(), Box<dyn std::error::Error>> {
    let label = format!("{} Fr", args.field.name().to_uppercase());
    zkgpu_groth16::with_pairing!(args.field, E => {
        run_field::<<E as ark_ec::pairing::Pairing>::ScalarField>(args, &label)
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One engine per pair of `--max-pass-bits` and `--max-twist-log` (the defaults where none is
/// given), each with its label.
fn engines_of<F: NttField>(ctx: &GpuContext, args: &NttArgs) -> Vec<(String, GpuNtt<F>)> {
    let or_default = |v: &[u32], d: u32| if v.is_empty() { vec![d] } else { v.to_vec() };
    let bits = or_default(&args.max_pass_bits, zkgpu_ntt::DEFAULT_MAX_PASS_BITS);
    let twists = or_default(&args.max_twist_log, zkgpu_ntt::DEFAULT_MAX_TWIST_LOG);
    bits.iter()
        .flat_map(|&b| twists.iter().map(move |&t| (b, t)))
        .map(|(b, t)| {
            let e = GpuNtt::<F>::new(ctx)
                .with_max_pass_bits(b)
                .with_max_twist_log(t);
            let e = match args.max_page_log {
                Some(p) => e.with_max_page_log(p),
                None => e,
            };
            (format!("{b}, twist table to 2^{t}"), e)
        })
        .collect()
}

/// `n` random elements, generated in parallel from `seed`.
fn random_input<F: NttField>(n: usize, seed: u64) -> Vec<F> {
    let mut rng = StdRng::seed_from_u64(seed);
    let chunk = 1usize << 14;
    let seeds: Vec<u64> = (0..n.div_ceil(chunk)).map(|_| rng.r#gen()).collect();
    seeds
        .par_iter()
        .enumerate()
        .flat_map_iter(|(k, &seed)| {
            let mut r = StdRng::seed_from_u64(seed);
            let len = chunk.min(n - k * chunk);
            (0..len).map(move |_| F::rand(&mut r))
        })
        .collect()
}

/// Medians of one engine's timed transforms (seconds).
struct Measured {
    kernels: f64,
    upload: f64,
    download: f64,
    e2e: f64,
    /// `GpuNtt::fft`/`ifft` on an arkworks vector: what a caller of the host API waits for.
    vec: f64,
    ok: bool,
}

/// A warm-up (plan and pipelines), then `--runs` timed transforms of `input`, each uploaded
/// (into `shared` where `--reuse-buffers`), transformed and downloaded, checked against
/// `want`.
fn measure<F: NttField>(
    ntt: &GpuNtt<F>,
    shared: &mut Option<zkgpu_ntt::DeviceVec<F>>,
    (input, want): (&[F], &[F]),
    d: &Radix2EvaluationDomain<F>,
    dir: Direction,
    runs: usize,
) -> Result<Measured, Box<dyn std::error::Error>> {
    let (mut kernels, mut e2e, mut ups, mut downs) = (vec![], vec![], vec![], vec![]);
    let mut ok = true;
    for run in 0..=runs.max(1) {
        let t = Instant::now();
        let mut fresh;
        let dv = match shared.as_mut() {
            Some(dv) => {
                ntt.write(dv, 0, input)?;
                dv
            }
            None => {
                fresh = ntt.upload(input)?;
                &mut fresh
            }
        };
        // The upload is flushed by the transform's first submit: its time is up to the
        // transform's start (host packing into staging, buffers).
        let up = t.elapsed().as_secs_f64();
        let k = ntt.transform_timed(dv, d, dir).block_on()?;
        let t_down = Instant::now();
        let got = ntt.download(dv, 0).block_on()?;
        let down = t_down.elapsed().as_secs_f64();
        let total = t.elapsed().as_secs_f64();
        ok &= got == want;
        if run > 0 {
            e2e.push(total);
            kernels.push(k);
            ups.push(up);
            downs.push(down);
        }
    }
    let mut vec = Vec::new();
    for run in 0..=runs.max(1) {
        let mut v = input.to_vec();
        let t = Instant::now();
        match dir {
            Direction::Forward => ntt.fft(d, &mut v)?,
            Direction::Inverse => ntt.ifft(d, &mut v)?,
        }
        if run > 0 {
            vec.push(t.elapsed().as_secs_f64());
        }
        ok &= v == want;
    }
    Ok(Measured {
        kernels: median(kernels),
        upload: median(ups),
        download: median(downs),
        e2e: median(e2e),
        vec: median(vec),
        ok,
    })
}

/// `--back-to-back` transforms on resident data, median milliseconds, or "-" (what they
/// compute is not checked: the same kernels' results were checked by [`measure`]); first
/// the same transform untimed for `warmup` (the clock fell while the host ran ark-poly).
fn back_to_back<F: NttField>(
    ntt: &GpuNtt<F>,
    input: &[F],
    (d, dir): (&Radix2EvaluationDomain<F>, Direction),
    times: usize,
    warmup: std::time::Duration,
) -> Result<String, Box<dyn std::error::Error>> {
    if times == 0 {
        return Ok("-".to_string());
    }
    let mut dv = ntt.upload(input)?;
    let t = Instant::now();
    while t.elapsed() < warmup {
        ntt.transform(&mut dv, d, dir).block_on()?;
    }
    let mut busy = Vec::new();
    for _ in 0..times {
        busy.push(ntt.transform_timed(&mut dv, d, dir).block_on()?);
    }
    Ok(format!("{:.3}", median(busy) * 1e3))
}

/// `--batch K`: K copies of `input` transformed forward as one batch, one submission,
/// timed (at least 3 runs) after a second of untimed batches; the median GPU seconds,
/// checked against `want` (ark-poly's transform of `input`) for every vector.
fn batch<F: NttField>(
    ntt: &GpuNtt<F>,
    (input, want): (&[F], &[F]),
    d: &Radix2EvaluationDomain<F>,
    (k, runs): (usize, usize),
) -> Result<(f64, bool), Box<dyn std::error::Error>> {
    let mut dv = ntt.zeroed(input.len(), k)?;
    // A second of untimed batches: the clock of a GPU that waited on the host is down.
    let t = Instant::now();
    while t.elapsed().as_secs_f64() < 1.0 {
        ntt.transform(&mut dv, d, Direction::Forward).block_on()?;
    }
    let mut times = Vec::new();
    let mut ok = true;
    for _ in 0..runs.max(3) {
        for i in 0..k {
            ntt.write(&dv, i, input)?;
        }
        times.push(
            ntt.transform_timed(&mut dv, d, Direction::Forward)
                .block_on()?,
        );
        ok &= ntt.download(&dv, k - 1).block_on()? == want;
    }
    ok &= (0..k).all(|i| ntt.download(&dv, i).block_on().is_ok_and(|g| g == want));
    Ok((median(times), ok))
}

fn run_field<F: NttField>(args: &NttArgs, name: &str) -> Result<(), Box<dyn std::error::Error>> {
    let opts = crate::prove_keys::context_options(
        crate::prove_keys::cache_dir(args.cache_dir.as_deref()).as_deref(),
    )?;
    if args.first_call {
        return if first::run_first_call::<F>(&opts, &args.log_n, args.runs)? {
            Ok(())
        } else {
            Err("a GPU result differs from ark-poly".into())
        };
    }
    let ctx = GpuContext::new_blocking(opts)?;
    println!(
        "device: {} ({:?}); CPU: ark-poly on {} threads",
        ctx.info().name,
        ctx.info().backend,
        rayon::current_num_threads()
    );
    let engines = engines_of::<F>(&ctx, args);
    let ntt = &engines[0].1;
    println!("data pages: up to 2^{} elements each", ntt.page_log());
    let t = Instant::now();
    for (entry, s) in ntt.warm_up().block_on()? {
        println!("pipeline {entry}: {:.3} s", s);
    }
    println!("pipelines total: {:.3} s", t.elapsed().as_secs_f64());
    ctx.save_pipeline_cache()?;
    if args.clock_warmup_ms > 0 {
        ntt.warm_clock(std::time::Duration::from_millis(args.clock_warmup_ms))
            .block_on()?;
    }
    println!(
        "| field | n | transform | max pass bits, twists | GPU kernels ms | busy kernels ms | upload ms | download ms | GPU end to end ms | fft(&mut Vec) ms | ark-poly ms | ratio (kernels) | ratio (e2e) | check |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut failed = false;
    let mut batches = Vec::new();
    for &log_n in &args.log_n {
        let n = 1usize << log_n;
        let domain = Radix2EvaluationDomain::<F>::new(n)
            .ok_or_else(|| format!("no domain of size 2^{log_n} in {name}"))?;
        eprintln!("generating 2^{log_n} random elements...");
        let input: Vec<F> = random_input(n, u64::from(log_n));
        let coset = domain.get_coset(F::GENERATOR).ok_or("no coset")?;
        let mut shared = if args.reuse_buffers {
            Some(ntt.zeroed(n, 1)?)
        } else {
            None
        };
        for (label, d, dir) in [
            ("fft", domain, Direction::Forward),
            ("ifft", domain, Direction::Inverse),
            ("coset fft", coset, Direction::Forward),
            ("coset ifft", coset, Direction::Inverse),
        ] {
            eprintln!("2^{log_n} {label}: ark-poly...");
            let mut want = input.clone();
            let t = Instant::now();
            match dir {
                Direction::Forward => d.fft_in_place(&mut want),
                Direction::Inverse => d.ifft_in_place(&mut want),
            }
            let cpu = t.elapsed().as_secs_f64();
            if args.batch > 0 && label == "fft" {
                let what = format!(
                    "| {name} | 2^{log_n} | {} x fft, one submission |",
                    args.batch
                );
                match batch(ntt, (&input, &want), &d, (args.batch, args.back_to_back)) {
                    Ok((secs, ok)) => {
                        failed |= !ok;
                        batches.push(format!(
                            "{what} {:.3} | {:.3} | {} |",
                            secs * 1e3,
                            secs * 1e3 / args.batch as f64,
                            if ok { "ok" } else { "MISMATCH" }
                        ));
                    }
                    Err(e) => batches.push(format!("{what} not run: {e} | | |")),
                }
            }
            for (b, ntt) in &engines {
                eprintln!("2^{log_n} {label}: GPU, passes of at most {b}...");
                let m = measure(ntt, &mut shared, (&input, &want), &d, dir, args.runs)?;
                failed |= !m.ok;
                let warmup = std::time::Duration::from_millis(args.clock_warmup_ms);
                let busy = back_to_back(ntt, &input, (&d, dir), args.back_to_back, warmup)?;
                println!(
                    "| {name} | 2^{log_n} | {label} | {b} | {:.3} | {busy} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.0}x | {:.1}x | {} |",
                    m.kernels * 1e3,
                    m.upload * 1e3,
                    m.download * 1e3,
                    m.e2e * 1e3,
                    m.vec * 1e3,
                    cpu * 1e3,
                    cpu / m.kernels,
                    cpu / m.e2e,
                    if m.ok { "ok" } else { "MISMATCH" }
                );
            }
        }
    }
    if !batches.is_empty() {
        println!();
        println!("| field | n | batch | GPU ms (median) | ms per transform | check |");
        println!("|---|---|---|---|---|---|");
        for line in &batches {
            println!("{line}");
        }
    }
    if failed {
        return Err("a GPU result differs from ark-poly".into());
    }
    Ok(())
}
