//! `zkgpu`: adapter information, Groth16 proofs, and MSMs and NTTs checked against arkworks.
//! The developer benchmarks of the arithmetic are the `arith` binary of `zkgpu-benches`.

#![allow(clippy::print_stdout)]

mod circom_bench;
mod circom_cmd;
mod msm_cmd;
mod ntt_cmd;
mod prove_cmd;
mod prove_devices;
mod prove_keys;
mod prove_report;
mod prove_start;
mod serve_cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use zkgpu_runtime::GpuContext;

#[derive(Parser, Debug)]
#[command(
    name = "zkgpu",
    version,
    about = "Zero-knowledge proving on any GPU (WGSL through wgpu)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List the adapters wgpu sees, their backends and limits, and the one zkgpu would pick.
    Info,
    /// A Groth16 proof of a real circuit (SHA-256 chain or Poseidon Merkle paths) on the GPU
    /// and with ark-groth16 on the CPU: same key, witness and randomness; both verified and
    /// compared, with times and the per-stage breakdown.
    Prove(prove_cmd::ProveArgs),
    /// One MSM on the GPU and with arkworks on the CPU, checked, with a per-stage breakdown.
    Msm(msm_cmd::MsmArgs),
    /// NTTs (forward, inverse, coset) on the GPU and with ark-poly on the CPU, checked.
    Ntt(ntt_cmd::NttArgs),
    /// rapidsnark's command on the GPU: prove a snarkjs .zkey and .wtns, write snarkjs'
    /// proof.json and public.json.
    ProveCircom(circom_cmd::CircomArgs),
    /// A Groth16 key for a circom .r1cs with ark-groth16's generator and circom's reduction,
    /// written as a snarkjs .zkey (a single party's key, for tests and benchmarks).
    CircomSetup(circom_cmd::SetupArgs),
    /// A snarkjs key and witness of one of `zkgpu prove`'s benchmark circuits (BN254), at
    /// any size: benchmarks of prove-circom and the service.
    CircomBenchKey(circom_bench::BenchKeyArgs),
    /// The proving service: an HTTP API for snarkjs keys and witnesses, a job queue in
    /// SQLite or PostgreSQL, and a worker lane per GPU (docs/service.md).
    Serve(serve_cmd::ServeArgs),
    /// Worker lanes alone (no API), claiming jobs from the service's database: the other
    /// machines of a service.
    Worker(serve_cmd::WorkerArgs),
    /// Prove through a service, with rapidsnark's arguments: register the .zkey, queue the
    /// witness, wait, write proof.json and public.json.
    Submit(serve_cmd::SubmitArgs),
    /// Wait for a service's job and write its proof.json and public.json.
    Fetch(serve_cmd::FetchArgs),
    /// Load a service: jobs from concurrent clients, every proof verified; throughput and
    /// latency percentiles.
    Load(serve_cmd::LoadArgs),
    /// The prepared-key cache: list its files, or prune it to a size (least recently used
    /// first).
    Cache(serve_cmd::CacheArgs),
}

fn main() -> ExitCode {
    let started = std::time::Instant::now();
    let cli = Cli::parse();
    // The service's processes say what they do unless told otherwise; the rest warn only.
    let quiet = !matches!(cli.command, Command::Serve(_) | Command::Worker(_));
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("ZKGPU_LOG")
                .unwrap_or_else(|_| if quiet { "warn" } else { "info" }.into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let result = match cli.command {
        Command::Info => info(),
        Command::Prove(args) => prove_cmd::run(&args, started),
        Command::Msm(args) => msm_cmd::run(&args),
        Command::Ntt(args) => ntt_cmd::run(&args),
        Command::ProveCircom(args) => circom_cmd::run(&args, started),
        Command::CircomSetup(args) => circom_cmd::setup(&args),
        Command::CircomBenchKey(args) => circom_bench::run(&args),
        Command::Serve(args) => serve_cmd::serve(&args),
        Command::Worker(args) => serve_cmd::worker(&args),
        Command::Submit(args) => serve_cmd::submit(&args),
        Command::Fetch(args) => serve_cmd::fetch(&args),
        Command::Load(args) => serve_cmd::load(&args),
        Command::Cache(args) => serve_cmd::cache(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn info() -> Result<(), Box<dyn std::error::Error>> {
    let opts = zkgpu_runtime::ContextOptions::from_env()?;
    let adapters = pollster::block_on(GpuContext::adapters(opts.backends));
    if adapters.is_empty() {
        println!("no adapters found on backends {:?}", opts.backends);
    }
    for (i, (a, l)) in adapters.iter().enumerate() {
        println!("adapter {i}: {}", a.name);
        println!(
            "  backend {:?}, type {:?}, vendor {:#06x}, device {:#06x}",
            a.backend, a.device_type, a.vendor, a.device
        );
        println!("  driver: {} {}", a.driver, a.driver_info);
        println!(
            "  limits: storage binding {} MiB, buffer {} MiB, workgroup memory {} KiB, {} invocations/workgroup, {} workgroups/dimension, {} storage buffers/stage",
            l.max_storage_buffer_binding_size >> 20,
            l.max_buffer_size >> 20,
            l.max_compute_workgroup_storage_size >> 10,
            l.max_compute_invocations_per_workgroup,
            l.max_compute_workgroups_per_dimension,
            l.max_storage_buffers_per_shader_stage
        );
    }
    let ctx = GpuContext::new_blocking(opts.clone())?;
    println!(
        "zkgpu would use: {} ({:?}), timestamps {}, arithmetic {}",
        ctx.info().name,
        ctx.info().backend,
        if ctx.has_timestamps() { "yes" } else { "no" },
        ctx.arith()
    );
    print_arithmetics(&ctx, &opts);
    Ok(())
}

/// Each field arithmetic on the chosen adapter: usable (and its measured rate), or why not.
/// Arithmetics the automatic choice did not check (on a software adapter) are checked here.
fn print_arithmetics(ctx: &GpuContext, opts: &zkgpu_runtime::ContextOptions) {
    for r in ctx.arith_reports() {
        let status = match (&r.usable, r.rate) {
            (Ok(()), Some(rate)) => format!("usable, {rate:.3e} BLS12-381 Fq mul/s"),
            (Ok(()), None) => "usable".to_owned(),
            (Err(why), _) if why.starts_with("not checked") => {
                let fixed = zkgpu_runtime::ContextOptions {
                    arith: zkgpu_runtime::ArithChoice::Fixed(r.arith),
                    ..opts.clone()
                };
                match GpuContext::new_blocking(fixed) {
                    Ok(_) => "usable (when asked for: ZKGPU_ARITH)".to_owned(),
                    Err(e) => format!("not usable: {e}"),
                }
            }
            (Err(why), _) => format!("not usable: {why}"),
        };
        println!("  arithmetic {}: {status}", r.arith);
    }
}
