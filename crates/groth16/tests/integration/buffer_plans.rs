//! The prover's buffer plans under WebGPU's default limits, walked without a device over
//! every domain 2^1..2^24 for every pairing: the MSMs of a key's five base vectors (A, B in
//! G1 and L as one MSM of three sets, B in G2, H), folded as on a GPU and unfolded as on a
//! software adapter such as lavapipe, and the witness map's batch of three transforms. No
//! buffer may exceed the 128 MiB binding; where a domain cannot be bound at all, the plan is
//! a typed refusal (what `GpuProver::prepare` returns before uploading anything).

#![allow(clippy::unwrap_used)]

use zkgpu_curves::{
    Bls12_377G1, Bls12_377G2, Bls12_381G1, Bls12_381G2, Bn254G1, Bn254G2, GpuCurve,
};
use zkgpu_msm::buffer_plan as msm_plan;

/// The witness map's batch: `A z`, `B z`, `C z`.
const BATCH: usize = 3;

fn walk<G1: GpuCurve, G2: GpuCurve>(max: u64, failures: &mut Vec<String>) -> Vec<u32> {
    let mut refused = Vec::new();
    for log in 1..=24u32 {
        let n = 1usize << log;
        let mut plans = Vec::new();
        for folded in [false, true] {
            plans.push((
                format!("A, B, L folded {folded}"),
                msm_plan::<G1>(n, 3, folded, max),
            ));
            plans.push((
                format!("H folded {folded}"),
                msm_plan::<G1>(n - 1, 1, folded, max),
            ));
        }
        // B in G2 is stored unfolded.
        plans.push(("B in G2".into(), msm_plan::<G2>(n, 1, false, max)));
        for (what, plan) in plans {
            match plan {
                Ok(buffers) => failures.extend(
                    buffers
                        .into_iter()
                        .filter(|(_, bytes)| *bytes > max)
                        .map(|(name, bytes)| format!("{} 2^{log} {what}: {name} {bytes}", G1::ID)),
                ),
                Err(e) => failures.push(format!("{} 2^{log} {what}: {e}", G1::ID)),
            }
        }
        match zkgpu_ntt::buffer_plan(log, BATCH, max) {
            Ok(buffers) => failures.extend(
                buffers
                    .into_iter()
                    .filter(|(_, bytes)| *bytes > max)
                    .map(|(name, bytes)| format!("2^{log} witness map: {name} {bytes}")),
            ),
            Err(e) => {
                assert!(e.to_string().contains("storage bindings"), "{e}");
                refused.push(log);
            }
        }
    }
    refused
}

#[test]
fn every_prover_buffer_plan_fits_webgpu_default_limits() {
    let max = zkgpu_runtime::wgpu::Limits::default().max_storage_buffer_binding_size;
    assert_eq!(max, 128 << 20);
    let mut failures = Vec::new();
    let r381 = walk::<Bls12_381G1, Bls12_381G2>(max, &mut failures);
    let r377 = walk::<Bls12_377G1, Bls12_377G2>(max, &mut failures);
    let rbn = walk::<Bn254G1, Bn254G2>(max, &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Three vectors of 2^23 32-byte elements need six 128 MiB pages; the kernels bind three.
    assert_eq!(r381, vec![23, 24]);
    assert_eq!(r377, vec![23, 24]);
    assert_eq!(rbn, vec![23, 24]);
    // With an H100's binding (the device's 4 GiB buffers cap it lower; any 2 GiB binding
    // will do) nothing is refused.
    let mut big = Vec::new();
    assert!(walk::<Bls12_381G1, Bls12_381G2>(2 << 30, &mut big).is_empty());
    assert!(big.is_empty(), "{}", big.join("\n"));
}
