//! Every shipped module translates to the shading languages of wgpu's other native backends:
//! MSL (Metal) and HLSL (DX12, shader model 6.0 for 64-bit integers), through the same naga
//! wgpu uses there. The portable and int64 modules translate to both; the f64 modules to
//! HLSL, and are not offered to MSL (Metal has no double-precision floats, and naga's MSL
//! writer stops at one: a Metal adapter reports no `SHADER_F64`, so the runtime never
//! chooses f64 there). docs/gpu.md says what is verified
//! on which backend and what is only translated.

use std::borrow::Cow;

use naga::back::{hlsl, msl, pipeline_constants};
use naga::valid::{ValidationFlags, Validator};
use zkgpu_shaders::Arith;

#[path = "../../build/capabilities.rs"]
mod capabilities;
use capabilities::capabilities;

/// The module with its pipeline overrides resolved, and its validation info.
fn prepared(m: &zkgpu_shaders::Composed) -> (naga::Module, naga::valid::ModuleInfo) {
    let module = naga::front::wgsl::parse_str(&m.source())
        .unwrap_or_else(|e| panic!("{}: {}", m.name, e.emit_to_string(&m.source())));
    let info = Validator::new(ValidationFlags::all(), capabilities(m.arith))
        .validate(&module)
        .unwrap_or_else(|e| panic!("{}: {e:?}", m.name));
    // The kernels' one override, the workgroup size, at the runtime's usual value.
    let constants = module
        .overrides
        .iter()
        .filter(|(_, o)| o.init.is_none())
        .filter_map(|(_, o)| o.name.clone())
        .map(|name| (name, 64.0))
        .collect();
    let (module, info) = pipeline_constants::process_overrides(&module, &info, None, &constants)
        .unwrap_or_else(|e| panic!("{}: overrides: {e}", m.name));
    let (module, info): (Cow<'_, _>, Cow<'_, _>) = (module, info);
    (module.into_owned(), info.into_owned())
}

fn to_msl(module: &naga::Module, info: &naga::valid::ModuleInfo) -> Result<String, String> {
    let options = msl::Options {
        lang_version: (2, 4),
        ..Default::default()
    };
    msl::write_string(module, info, &options, &msl::PipelineOptions::default())
        .map(|(text, _)| text)
        .map_err(|e| e.to_string())
}

fn to_hlsl(module: &naga::Module, info: &naga::valid::ModuleInfo) -> Result<String, String> {
    let options = hlsl::Options {
        shader_model: hlsl::ShaderModel::V6_0,
        ..Default::default()
    };
    let pipeline = hlsl::PipelineOptions::default();
    let mut out = String::new();
    hlsl::Writer::new(&mut out, &options, &pipeline)
        .write(module, info, None)
        .map_err(|e| e.to_string())?;
    Ok(out)
}

#[test]
fn every_module_translates_to_msl_and_hlsl() {
    let mut failures = Vec::new();
    let (mut msl_count, mut hlsl_count, mut f64_refused) = (0, 0, 0);
    for m in zkgpu_shaders::all() {
        let (module, info) = prepared(&m);
        // Field libraries have no entry point: they are checked for translating at all.
        let kernels = !module.entry_points.is_empty();
        // Metal has no doubles (naga's MSL writer stops at an f64 scalar): the f64 modules
        // are never offered to it.
        if m.arith == Arith::F64 {
            f64_refused += 1;
        } else {
            match to_msl(&module, &info) {
                Ok(text) => {
                    assert!(
                        !kernels || text.contains("kernel void"),
                        "{}: no MSL kernel",
                        m.name
                    );
                    msl_count += 1;
                }
                Err(e) => failures.push(format!("{} to MSL: {e}", m.name)),
            }
        }
        match to_hlsl(&module, &info) {
            Ok(text) => {
                assert!(
                    !kernels || text.contains("[numthreads("),
                    "{}: no HLSL kernel",
                    m.name
                );
                hlsl_count += 1;
            }
            Err(e) => failures.push(format!("{} to HLSL: {e}", m.name)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let total = zkgpu_shaders::all().len();
    eprintln!(
        "{total} modules: {msl_count} to MSL ({f64_refused} f64 refused), {hlsl_count} to HLSL"
    );
    assert_eq!(hlsl_count, total);
    assert!(msl_count > 0 && f64_refused > 0);
}
