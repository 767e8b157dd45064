//! The naga capabilities a module is validated with: exactly what its arithmetic needs (none
//! beyond WebGPU's core language for the portable one). Shared by build.rs and the
//! translation test.

use naga::valid::Capabilities;

use super::Arith;

/// The capabilities a module of `arith` is validated with.
pub fn capabilities(arith: Arith) -> Capabilities {
    let mut caps = Capabilities::empty();
    if arith.needs_int64() {
        caps |= Capabilities::SHADER_INT64;
    }
    if arith.needs_f64() {
        caps |= Capabilities::FLOAT64;
    }
    caps
}
