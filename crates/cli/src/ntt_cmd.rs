//! `zkgpu ntt`: NTTs on the GPU against ark-poly on the CPU cores, same inputs, checked.
//! Exits non-zero when any result differs.

use std::time::Instant;
use zkgpu_runtime::BlockOn;

use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use ark_std::rand::{Rng, SeedableRng, rngs::StdRng};
use clap::{Args, ValueEnum};
use rayon::prelude::*;
use zkgpu_ntt::{Direction, GpuNtt, NttField};
use zkgpu_runtime::GpuContext;

/// The scalar fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FieldArg {
    /// BLS12-381's scalar field.
    #[value(name = "bls12-381")]
    Bls12_381,
    /// BLS12-377's scalar field.
    #[value(name = "bls12-377")]
    Bls12_377,
}

/// Arguments of `zkgpu ntt`.
#[derive(Args, Debug)]
pub struct NttArgs {
    /// The scalar field.
    #[arg(long, value_enum, default_value = "bls12-381")]
    field: FieldArg,
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
}

pub fn run(args: &NttArgs) -> Result<(), Box<dyn std::error::Error>> {
    match args.field {
        FieldArg::Bls12_381 => run_field::<ark_bls12_381::Fr>(args, "BLS12-381 Fr"),
        FieldArg::Bls12_377 => run_field::<ark_bls12_377::Fr>(args, "BLS12-377 Fr"),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn run_field<F: NttField>(args: &NttArgs, name: &str) -> Result<(), Box<dyn std::error::Error>> {
    let ctx = GpuContext::from_env_blocking()?;
    println!(
        "device: {} ({:?}); CPU: ark-poly on {} threads",
        ctx.info().name,
        ctx.info().backend,
        rayon::current_num_threads()
    );
    let bits = if args.max_pass_bits.is_empty() {
        vec![zkgpu_ntt::DEFAULT_MAX_PASS_BITS]
    } else {
        args.max_pass_bits.clone()
    };
    let twists = if args.max_twist_log.is_empty() {
        vec![zkgpu_ntt::DEFAULT_MAX_TWIST_LOG]
    } else {
        args.max_twist_log.clone()
    };
    let engines: Vec<(String, GpuNtt<F>)> = bits
        .iter()
        .flat_map(|&b| twists.iter().map(move |&t| (b, t)))
        .map(|(b, t)| {
            let e = GpuNtt::<F>::new(&ctx)
                .with_max_pass_bits(b)
                .with_max_twist_log(t);
            let e = match args.max_page_log {
                Some(p) => e.with_max_page_log(p),
                None => e,
            };
            (format!("{b}, twist table to 2^{t}"), e)
        })
        .collect();
    let ntt = &engines[0].1;
    println!("data pages: up to 2^{} elements each", ntt.page_log());
    let t = Instant::now();
    for (entry, s) in ntt.warm_up().block_on()? {
        println!("pipeline {entry}: {:.3} s", s);
    }
    println!("pipelines total: {:.3} s", t.elapsed().as_secs_f64());
    println!(
        "| field | n | transform | max pass bits, twists | GPU kernels ms | busy kernels ms | upload ms | download ms | GPU end to end ms | ark-poly ms | ratio (kernels) | ratio (e2e) | check |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut failed = false;
    for &log_n in &args.log_n {
        let n = 1usize << log_n;
        let domain = Radix2EvaluationDomain::<F>::new(n)
            .ok_or_else(|| format!("no domain of size 2^{log_n} in {name}"))?;
        let mut rng = StdRng::seed_from_u64(u64::from(log_n));
        eprintln!("generating 2^{log_n} random elements...");
        let chunk = 1usize << 14;
        let seeds: Vec<u64> = (0..n.div_ceil(chunk)).map(|_| rng.r#gen()).collect();
        let input: Vec<F> = seeds
            .par_iter()
            .enumerate()
            .flat_map_iter(|(k, &seed)| {
                let mut r = StdRng::seed_from_u64(seed);
                let len = chunk.min(n - k * chunk);
                (0..len).map(move |_| F::rand(&mut r))
            })
            .collect();
        let coset = domain.get_coset(F::GENERATOR).ok_or("no coset")?;
        let mut shared = if args.reuse_buffers {
            Some(engines[0].1.zeroed(n, 1)?)
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
            for (b, ntt) in &engines {
                eprintln!("2^{log_n} {label}: GPU, passes of at most {b}...");
                // Warm-up (plan and pipelines), then the timed runs.
                let mut kernels = Vec::new();
                let mut e2e = Vec::new();
                let (mut ups, mut downs) = (Vec::new(), Vec::new());
                let mut ok = true;
                for run in 0..=args.runs.max(1) {
                    let t = Instant::now();
                    let mut fresh;
                    let dv = match shared.as_mut() {
                        Some(dv) => {
                            ntt.write(dv, 0, &input)?;
                            dv
                        }
                        None => {
                            fresh = ntt.upload(&input)?;
                            &mut fresh
                        }
                    };
                    // The upload is flushed by the transform's first submit: its time is
                    // up to the transform's start (host packing into staging, buffers).
                    let up = t.elapsed().as_secs_f64();
                    let k = ntt.transform_timed(dv, &d, dir).block_on()?;
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
                failed |= !ok;
                // Back to back on resident data (what it computes is not checked: the same
                // kernels' results were checked above).
                let mut busy = Vec::new();
                if args.back_to_back > 0 {
                    let mut dv = ntt.upload(&input)?;
                    for _ in 0..args.back_to_back {
                        busy.push(ntt.transform_timed(&mut dv, &d, dir).block_on()?);
                    }
                }
                let busy = if busy.is_empty() {
                    "-".to_string()
                } else {
                    format!("{:.3}", median(busy) * 1e3)
                };
                let (k, e) = (median(kernels), median(e2e));
                println!(
                    "| {name} | 2^{log_n} | {label} | {b} | {:.3} | {busy} | {:.2} | {:.2} | {:.2} | {:.2} | {:.0}x | {:.1}x | {} |",
                    k * 1e3,
                    median(ups) * 1e3,
                    median(downs) * 1e3,
                    e * 1e3,
                    cpu * 1e3,
                    cpu / k,
                    cpu / e,
                    if ok { "ok" } else { "MISMATCH" }
                );
            }
        }
    }
    if failed {
        return Err("a GPU result differs from ark-poly".into());
    }
    Ok(())
}
