//! `arith`: the developer benchmarks of zkgpu's arithmetic on the GPU (field multiplications,
//! curve formulas on the VM, the VM's instructions), each checked against arkworks and
//! printed beside the H100's measured ceilings (docs/gpu.md). Run as
//! `cargo run --release -p zkgpu-benches --bin arith -- field|curve|vm [ARGS]`.

#![allow(clippy::print_stdout)]

mod curve;
mod field;
mod mix;
mod vm;

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use zkgpu_curves::Group;

#[derive(Parser, Debug)]
#[command(
    name = "arith",
    about = "zkgpu's arithmetic on the GPU, checked against arkworks"
)]
struct Cli {
    #[command(subcommand)]
    what: What,
}

#[derive(Subcommand, Debug)]
enum What {
    /// Montgomery multiplications per second of each field, beside the H100 ceiling and
    /// arkworks on this machine's CPU cores.
    Field(field::FieldArgs),
    /// Mixed additions and doublings per second of each group, beside the base field's
    /// multiplication rate and arkworks on this machine's CPU cores.
    Curve(curve::CurveArgs),
    /// The cost of each curve-VM instruction, measured in field multiplications.
    Vm(vm::VmArgs),
    /// The f64 and int64 multiplications side by side (an experiment on the pipes).
    Mix(mix::MixArgs),
}

/// Shader runtime checks to benchmark with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ChecksArg {
    /// wgpu's default checks (loop bounding on).
    Default,
    /// Loop bounding off (bounds checks on).
    Trusted,
    /// Both, one row each.
    Both,
}

/// A group by its name (`zkgpu_curves::Group::name`), for clap.
pub fn parse_group(name: &str) -> Result<Group, String> {
    Group::from_name(name)
}

fn main() -> ExitCode {
    let result = match Cli::parse().what {
        What::Field(args) => field::run(&args),
        What::Curve(args) => curve::run(&args),
        What::Vm(args) => vm::run(&args),
        What::Mix(args) => mix::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
