//! The 64-bit arithmetics (docs/limbs.md, "The 64-bit arithmetics"): Montgomery
//! multiplications on a GPU's 64-bit integer or floating-point pipes, beside the portable
//! 13-bit one and in its Montgomery form, so data is the same whichever runs.
//!
//! Each is built once as a [`WideProgram`], printed as WGSL (`<field>_<arith>.wgsl`, composed
//! after the field's portable module) and run by the same statements on the CPU
//! ([`WideEmulator`]).

mod bits;
mod emulate;
pub mod ir;
mod layout;
mod mont;
mod native;

pub use emulate::WideFault;
pub use ir::WideProgram;
pub use layout::{Arith, Chains, WideLayout};
pub use native::native_words;

use crate::params::FieldParams;
use mont::{Finish, Form, mont_mul};

/// The multiplications of field `p` in the wide arithmetic `l`: `mul` (13-bit limbs in, `a b <
/// R p`, canonical out) and `mul_packed` (the same over packed words), which take the names
/// of the portable functions they stand in for, and where `lazy` (the NTT's scalar fields)
/// the native form's functions (`n_*`, docs/limbs.md, "The native form").
pub fn wide_programs(l: &WideLayout, lazy: bool) -> Vec<WideProgram> {
    let mut v = vec![
        mont_mul(l, "mul", Form::Limbs13, Finish::Canonical),
        mont_mul(l, "mul_packed", Form::Packed, Finish::Canonical),
    ];
    if lazy {
        v.extend(native::native_programs(l));
    }
    v
}

/// The comment lines that head a wide module of field `p`.
pub fn wide_header(p: &FieldParams, l: &WideLayout) -> Vec<String> {
    let chains = match l.chains {
        Chains::None => String::new(),
        c => format!(
            "; products summed in f64 chains of {} ({c:?})",
            l.chain_cap()
        ),
    };
    vec![
        format!(
            "{} limbs of {} bits; the first operand enters shifted up by {} bits; -p^-1 mod 2^{} = {}{chains}",
            l.limbs, l.limb_bits, l.shift, l.limb_bits, l.minv
        ),
        format!(
            "same Montgomery form as the portable arithmetic (R = 2^{}); needs {}",
            13 * p.n_limbs,
            if l.arith.needs_f64() {
                "64-bit integers and floats (SHADER_INT64, SHADER_F64) and a fused fma"
            } else {
                "64-bit integers (SHADER_INT64)"
            }
        ),
    ]
}

/// Runs the wide functions of one field in one arithmetic on the CPU.
#[derive(Debug)]
pub struct WideEmulator {
    layout: WideLayout,
    programs: Vec<WideProgram>,
}

impl WideEmulator {
    /// The emulator of field `p` in the wide arithmetic `l`.
    pub fn new(l: &WideLayout, lazy: bool) -> Self {
        Self {
            layout: l.clone(),
            programs: wide_programs(l, lazy),
        }
    }

    /// The layout.
    pub fn layout(&self) -> &WideLayout {
        &self.layout
    }

    /// The program called `name`.
    pub fn program(&self, name: &str) -> Option<&WideProgram> {
        self.programs.iter().find(|p| p.name == name)
    }

    /// Runs program `name` (`mul`, `mul_packed`, `n_*`) on `args`.
    ///
    /// # Panics
    /// If no program has that name.
    pub fn run(&self, name: &str, args: &[&[u32]]) -> Result<Vec<u32>, WideFault> {
        self.program(name)
            .unwrap_or_else(|| panic!("no wide program `{name}`"))
            .eval(args)
    }
}
