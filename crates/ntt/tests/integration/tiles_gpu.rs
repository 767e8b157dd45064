//! Every workgroup tile of the pass (`zkgpu_shaders::NttTile`) in every arithmetic of the run,
//! against ark-poly: sizes below, at and past the tile (one pass with idle columns, one full
//! pass, two and three passes), passes narrower than the tile (several columns a workgroup),
//! plain and coset, forward and inverse; and the typed refusals of tiles that do not exist
//! or that the device cannot hold.

#![allow(clippy::unwrap_used)]

use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use ark_std::rand::{SeedableRng, rngs::StdRng};
use zkgpu_ntt::{GpuNtt, NttError, NttField};
use zkgpu_runtime::{Arith, ContextOptions, GpuContext};
use zkgpu_shaders::NttTile;
use zkgpu_testing::{arith_context, test_ariths_from_env};

/// `fft` and `ifft` of random vectors of `2^log_n` elements, plain and on a coset, equal to
/// ark-poly's.
fn check<F: NttField>(ntt: &GpuNtt<F>, log_n: u32, rng: &mut StdRng, what: &str) {
    let d = Radix2EvaluationDomain::<F>::new(1 << log_n).unwrap();
    for (name, d) in [("plain", d), ("coset", d.get_coset(F::GENERATOR).unwrap())] {
        let v: Vec<F> = (0..1usize << log_n).map(|_| F::rand(rng)).collect();
        let (mut want, mut got) = (v.clone(), v.clone());
        d.fft_in_place(&mut want);
        ntt.fft(&d, &mut got).unwrap();
        assert!(got == want, "fft 2^{log_n} {name}, {what}");
        let (mut want, mut got) = (v.clone(), v);
        d.ifft_in_place(&mut want);
        ntt.ifft(&d, &mut got).unwrap();
        assert!(got == want, "ifft 2^{log_n} {name}, {what}");
    }
}

/// Every tile the device holds in `arith`, at sizes around it; the limits it reports decide
/// which tiles it must accept.
/// `two_full`: also two passes of (almost) the whole tile, `2^(2t - 1)` elements.
fn check_tiles<F: NttField>(ctx: &GpuContext, arith: Arith, seed: u64, two_full: bool) {
    let mut rng = StdRng::seed_from_u64(seed);
    let limits = ctx.limits();
    for tile in NttTile::ALL {
        let fits = tile.workgroup_bytes(F::MODULE, arith)
            <= u64::from(limits.max_compute_workgroup_storage_size)
            && tile.wg <= limits.max_compute_invocations_per_workgroup;
        let engine = GpuNtt::<F>::new(ctx)
            .with_arith(arith)
            .unwrap()
            .with_tile_log(tile.log);
        let ntt = match (fits, engine) {
            (true, Ok(ntt)) => ntt,
            (false, Err(NttError::Tile { log, .. })) => {
                assert_eq!(log, tile.log);
                eprintln!("{arith}: tile 2^{} beyond the device's limits", tile.log);
                continue;
            }
            (fits, e) => panic!(
                "{arith} tile 2^{}: fits {fits}, got {:?}",
                tile.log,
                e.err()
            ),
        };
        assert_eq!(ntt.tile(), tile);
        let t = tile.log;
        let mut sizes = vec![1, t - 1, t, t + 1, 2 * t - 3];
        if two_full {
            sizes.push(2 * t - 1);
        }
        for log_n in sizes {
            check(&ntt, log_n, &mut rng, &format!("{arith}, tile 2^{t}"));
        }
        // Passes narrower than the tile: several columns in each workgroup, three passes.
        let narrow = ntt.with_max_pass_bits(t - 3);
        check(
            &narrow,
            2 * t - 5,
            &mut rng,
            &format!("{arith}, tile 2^{t}, {}-bit passes", t - 3),
        );
    }
}

#[test]
fn every_tile_matches_arkworks() {
    for a in test_ariths_from_env() {
        let ctx = arith_context(a);
        eprintln!(
            "{a}: workgroup memory {} bytes",
            ctx.limits().max_compute_workgroup_storage_size
        );
        check_tiles::<ark_bls12_381::Fr>(ctx, a, 21, true);
        check_tiles::<ark_bn254::Fr>(ctx, a, 22, false);
    }
}

#[test]
fn tiles_are_refused_with_typed_errors() {
    let ctx = arith_context(Arith::Portable);
    for log in [0, 7, 11] {
        let e = GpuNtt::<ark_bls12_381::Fr>::new(ctx).with_tile_log(log);
        assert!(
            matches!(e, Err(NttError::Tile { log: l, .. }) if l == log),
            "2^{log}"
        );
    }
    // WebGPU's default 16 KiB of workgroup memory holds the small tile only.
    let webgpu =
        GpuContext::new_blocking(ContextOptions::webgpu_default_from_env().unwrap()).unwrap();
    for tile in NttTile::ALL {
        let e = GpuNtt::<ark_bls12_381::Fr>::new(&webgpu).with_tile_log(tile.log);
        match e {
            Ok(ntt) => assert_eq!(ntt.tile(), NttTile::SMALL),
            Err(NttError::Tile { reason, .. }) => {
                assert!(tile != NttTile::SMALL, "{reason}");
                assert!(reason.contains("workgroup memory"), "{reason}");
            }
            Err(e) => panic!("{e}"),
        }
    }
}
