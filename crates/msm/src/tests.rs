//! Unit tests of the MSM's shape arithmetic and defaults (no GPU).

use super::*;
use crate::bases::part_len;
use crate::shape::{HOST_SUMS, RowLayout, Shape};
use zkgpu_curves::Bls12_381G1;
use zkgpu_curves::GpuCurve;

#[test]
fn default_segments_and_chunks() {
    // About 16,384 segments in all, at least 4 buckets each.
    assert_eq!(default_reduce_segments(1 << 15, 1), 8192);
    assert_eq!(default_reduce_segments(1 << 19, 1), 16_384);
    assert_eq!(default_reduce_segments(1 << 15, 16), 1024);
    // Seven 20-bit bucket windows: 32 buckets a segment, not 256.
    assert_eq!(default_reduce_segments(1 << 19, 7), 16_384);
    assert_eq!(default_reduce_segments(1 << 17, 16), 4096);
    assert_eq!(default_reduce_segments(1 << 12, 20), 512);
    assert_eq!(default_reduce_segments(8, 1), 2);
    assert_eq!(default_reduce_segments(2, 1), 1);
    // Four times the mean bucket, floored by entries / 2^18 within 16..=48, at most 192:
    // 2^16 and 2^20 G1 points folded (16 and 13 levels), 2^24 unfolded (16 windows).
    assert_eq!(default_chunk(1 << 16, 16, 1 << 20), 16);
    assert_eq!(default_chunk(1 << 20, 20, 13 << 20), 48);
    assert_eq!(default_chunk(1 << 20, 16, 16 << 20), 128);
    assert_eq!(default_chunk(1 << 24, 16, 16 << 24), MAX_DEFAULT_CHUNK);
    assert_eq!(default_chunk(1000, 8, 32_000), 32);
}

#[test]
fn unfolded_default_window_is_wide_from_2_24_points() {
    use zkgpu_curves::{Bls12_381G2, Bn254G1};
    assert_eq!(default_unfolded_window_bits::<Bls12_381G1>(1 << 20), 16);
    assert_eq!(
        default_unfolded_window_bits::<Bls12_381G1>((1 << 24) - 1),
        16
    );
    assert_eq!(default_unfolded_window_bits::<Bls12_381G1>(1 << 24), 20);
    assert_eq!(default_unfolded_window_bits::<Bn254G1>(1 << 25), 20);
    assert_eq!(default_unfolded_window_bits::<Bls12_381G2>(1 << 24), 16);
    // The shape narrows it where its buffers would not fit: 2^24 points in 1 GiB bindings.
    let shape =
        Shape::new::<Bls12_381G1>(1 << 24, (1, 1 << 24), None, MsmConfig::default(), 1 << 30)
            .unwrap();
    assert!(
        shape.c < 20 && shape.largest_buffer::<Bls12_381G1>() <= 1 << 30,
        "{shape:?}"
    );
    let shape =
        Shape::new::<Bls12_381G1>(1 << 24, (1, 1 << 24), None, MsmConfig::default(), 2 << 30)
            .unwrap();
    assert_eq!(shape.c, 20);
}

#[test]
fn parts_fit_the_binding_limit() {
    fn check_sets<C: GpuCurve>(max_binding: u64, sets: usize, expect: usize) {
        let len = part_len::<C>(max_binding, sets);
        assert_eq!(len, expect, "{} x {sets} in {max_binding} bytes", C::ID);
        let layout = (sets as u32, len as u32);
        let shape = Shape::new::<C>(len, layout, None, MsmConfig::default(), max_binding).unwrap();
        assert!(shape.largest_buffer::<C>() <= max_binding, "{shape:?}");
        assert_eq!(shape.windows, sets as u32 * shape.digit_windows);
        assert_eq!(shape.set_windows, shape.digit_windows);
        let bytes = (sets * len) as u64 * C::affine_packed_words() as u64 * 4;
        assert!(bytes <= max_binding);
    }
    fn check<C: GpuCurve>(max_binding: u64, expect: usize) {
        check_sets::<C>(max_binding, 1, expect);
    }
    // WebGPU's default 128 MiB: packed points of 96 bytes (G1 and ed-on-bls12-377's three
    // coordinates) and 192 (G2); BN254 G1's 64.
    check::<Bls12_381G1>(128 << 20, 1_398_101);
    check::<zkgpu_curves::Bls12_381G2>(128 << 20, 699_050);
    check::<zkgpu_curves::EdOnBls12_377>(128 << 20, 1_398_101);
    check::<zkgpu_curves::Bn254G1>(128 << 20, 2_097_152);
    // 32 MiB: for BN254 G1 (64-byte points) a working buffer reaches the limit before the
    // bases; ed-on-bls12-377's bases reach it first.
    check::<zkgpu_curves::Bn254G1>(32 << 20, 262_144);
    check::<zkgpu_curves::EdOnBls12_377>(32 << 20, 349_525);
    // 4 GiB bindings: 2^26 G1 points in two parts.
    check::<Bls12_381G1>(4 << 30, 44_739_242);
    // The u32 index bound.
    assert_eq!(part_len::<Bls12_381G1>(u64::MAX, 1), 1 << 31);
    // Three sets (Groth16's A, B in G1, L): a third of the points per part, the entries
    // of 3 x 16 windows within the limit.
    check_sets::<Bls12_381G1>(128 << 20, 3, 466_033);
    check_sets::<Bls12_381G1>(4 << 30, 3, 14_913_080);
}

#[test]
fn sets_share_a_part_only_where_they_fit_one_together() {
    use crate::bases::part_plan;
    type G1 = Bls12_381G1;
    let webgpu = 128 << 20;
    // Three sets of 2^18 fit one 128 MiB part together; three of 2^20 do not, and each set
    // then takes its own part (one of 2^20 points fits).
    assert_eq!(
        part_plan::<G1>(1 << 18, 3, None, webgpu, None),
        (3, 466_033)
    );
    assert_eq!(
        part_plan::<G1>(1 << 20, 3, None, webgpu, None),
        (1, 1_398_101)
    );
    // One set, or bases within every part: unchanged.
    assert_eq!(
        part_plan::<G1>(1 << 22, 1, None, webgpu, None),
        (1, 1_398_101)
    );
    assert_eq!(
        part_plan::<G1>(1 << 20, 3, None, 4 << 30, None),
        (3, 14_913_080)
    );
    // A cap below the bases (`with_max_part`) splits the sets too; one above them does not.
    assert_eq!(part_plan::<G1>(50, 3, None, webgpu, Some(16)), (1, 16));
    assert_eq!(part_plan::<G1>(50, 3, None, webgpu, Some(64)), (3, 64));
    // Zero bases: one part plan of all sets (no part is made).
    assert_eq!(part_plan::<G1>(0, 3, None, webgpu, None).0, 3);
}

#[test]
fn folded_default_window_is_about_log2_n_when_every_window_folds() {
    type G1 = Bls12_381G1;
    let big = 1u64 << 40;
    // 2^20 points, all 13 windows of 20 bits folded: c = 20; fewer levels: the plain width.
    assert_eq!(default_folded_window_bits::<G1>(1 << 20, 32, 1, big), 20);
    assert_eq!(default_folded_window_bits::<G1>(1 << 20, 13, 3, big), 20);
    assert_eq!(
        default_folded_window_bits::<G1>(1 << 20, 12, 1, big),
        default_window_bits(1 << 20)
    );
    assert_eq!(default_folded_window_bits::<G1>(1 << 16, 32, 1, big), 16);
    assert_eq!(default_folded_window_bits::<G1>(1 << 26, 32, 1, big), 20);
    assert_eq!(default_folded_window_bits::<G1>(20, 32, 1, big), 3);
    // From 2^21 points, two levels or more keep the wide width (several bucket windows);
    // one level (not folded) or fewer points get the plain width. G2 gets the wide width
    // from 2^20 points where at most two bucket windows are left.
    assert_eq!(default_folded_window_bits::<G1>(1 << 21, 7, 1, big), 20);
    assert_eq!(default_folded_window_bits::<G1>(1 << 22, 4, 1, big), 20);
    assert_eq!(default_folded_window_bits::<G1>(1 << 24, 2, 1, big), 20);
    assert_eq!(
        default_folded_window_bits::<G1>(1 << 24, 1, 1, big),
        default_window_bits(1 << 24)
    );
    assert_eq!(
        default_folded_window_bits::<G1>(1 << 20, 4, 1, big),
        default_window_bits(1 << 20)
    );
    type G2 = zkgpu_curves::Bls12_381G2;
    assert_eq!(
        default_folded_window_bits::<G2>(1 << 22, 4, 1, big),
        default_window_bits(1 << 22)
    );
    assert_eq!(default_folded_window_bits::<G2>(1 << 20, 7, 1, big), 20);
    assert_eq!(
        default_folded_window_bits::<G2>(1 << 20, 6, 1, big),
        default_window_bits(1 << 20)
    );
    assert_eq!(
        default_folded_window_bits::<G2>(1 << 19, 7, 1, big),
        default_window_bits(1 << 19)
    );
    // A 64 MiB binding cannot hold the 2^19 + 1 G1 bucket sums of c = 20 (192 bytes each).
    let small = 64 << 20;
    let c = default_folded_window_bits::<G1>(1 << 20, 32, 1, small);
    assert!(c < 20, "{c}");
    assert!(((1u64 << (c - 1)) + 1) * G1::acc_packed_words() as u64 * 4 <= small);
}

#[test]
fn reduction_rows_fit_small_bindings() {
    use zkgpu_curves::{Bls12_381G2, EdOnBls12_377};
    fn check<C: GpuCurve>() {
        let limit = 128 << 20;
        for log_n in [5, 10, 16, 20, 22] {
            for sets in [1, 3] {
                for (c, segments) in [(None, None), (Some(4), None), (Some(6), Some(2))] {
                    let config = MsmConfig {
                        window_bits: c,
                        reduce_segments: segments,
                        ..MsmConfig::default()
                    };
                    let shape =
                        Shape::new::<C>(1 << log_n, (sets, 1 << log_n), None, config, limit)
                            .unwrap();
                    assert!(shape.seg_out_bytes::<C>() <= limit, "{shape:?}");
                    assert!(shape.segments >= 1 && shape.segments.is_power_of_two());
                    if let Some(k) = segments {
                        assert_eq!(shape.segments, k);
                    }
                }
            }
        }
    }
    check::<Bls12_381G1>();
    check::<Bls12_381G2>();
    check::<EdOnBls12_377>();
    // Three G2 sets of 2^16 points: under 32 MiB the default segment count halves (60
    // windows of 512 segments would need 65 MB of rows); without a limit it does not.
    let n = 1 << 16;
    let shape = |limit| {
        Shape::new::<Bls12_381G2>(n, (3, n as u32), None, MsmConfig::default(), limit).unwrap()
    };
    let (small, wide) = (shape(32 << 20), shape(u64::MAX));
    assert!(small.segments < wide.segments, "{small:?} {wide:?}");
    assert!(small.seg_out_bytes::<Bls12_381G2>() <= 32 << 20);
    // Row 0 holds every segment's sum, then one row per bit of the segment index.
    let rows = RowLayout::new(16, 1, HOST_SUMS);
    assert_eq!(rows.rows, [16, 8, 8, 8, 8]);
    assert_eq!(rows.block(), 48);
    assert_eq!(rows.target, HOST_SUMS / 5);
    assert_eq!(RowLayout::new(1, 2, HOST_SUMS).rows, [1]);
    // Many windows: the host's share stays near HOST_SUMS (one sum per row at least).
    assert_eq!(
        RowLayout::new(1024, 16, HOST_SUMS).target,
        HOST_SUMS / (16 * 11)
    );
    assert_eq!(RowLayout::new(1024, 48, HOST_SUMS).target, 1);
}

#[test]
fn default_windows_narrow_to_fit_small_bindings() {
    let n = 1 << 18;
    let wide = Shape::new::<Bls12_381G1>(n, (1, 0), None, MsmConfig::default(), u64::MAX).unwrap();
    let limit = 32 << 20;
    let narrow = Shape::new::<Bls12_381G1>(n, (1, 0), None, MsmConfig::default(), limit).unwrap();
    assert!(wide.largest_buffer::<Bls12_381G1>() > limit, "{wide:?}");
    assert!(narrow.c < wide.c, "{narrow:?}");
    assert!(
        narrow.largest_buffer::<Bls12_381G1>() <= limit,
        "{narrow:?}"
    );
    // A configured width is kept (the allocation then reports BufferTooLarge).
    let fixed = MsmConfig {
        window_bits: Some(wide.c),
        ..MsmConfig::default()
    };
    assert_eq!(
        Shape::new::<Bls12_381G1>(n, (1, 0), None, fixed, limit)
            .unwrap()
            .c,
        wide.c
    );
}

/// The prover's and the plain MSM's buffer plans of every group at every size 2^1..2^24 (and
/// one point more) under WebGPU's default 128 MiB binding: one set unfolded (what a software
/// adapter such as lavapipe runs, and `GpuMsm::msm`), and three sets folded as the prover
/// folds them on a GPU (`folds_in_one_part`), and one set folded (the prover's H).
#[test]
fn every_buffer_plan_fits_webgpu_default_limits() {
    let max = zkgpu_runtime::wgpu::Limits::default().max_storage_buffer_binding_size;
    assert_eq!(max, 128 << 20);
    let mut failures = Vec::new();
    for &g in zkgpu_curves::Group::ALL {
        zkgpu_curves::with_group!(g, C => {
            for log in 1..=24u32 {
                for len in [1usize << log, (1 << log) + 1] {
                    for sets in [1usize, 3] {
                        let plain = crate::buffer_plan::<C>(len, sets, false, max);
                        let folded = crate::buffer_plan::<C>(len, sets, true, max);
                        for (what, r) in [("plain", plain), ("folded", folded)] {
                            match r {
                                Err(e) => failures.push(format!("{} {len} x {sets} {what}: {e}", C::ID)),
                                Ok(plan) => failures.extend(
                                    plan.iter().filter(|(_, bytes)| *bytes > max).map(|(name, bytes)| {
                                        format!("{} {len} x {sets} {what}: {name} {bytes} bytes", C::ID)
                                    }),
                                ),
                            }
                        }
                    }
                }
            }
        });
    }
    assert!(
        failures.is_empty(),
        "{} plans over the limit:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A part shorter than the one its bases were planned for gets shorter default chunks, so
/// more chunk sums: the chunks lengthen where those would not fit one binding (2^16 G2
/// points folded into 5 levels of 15-bit windows: 16-entry chunks need 54.5 MB of sums, over
/// a 32 MiB binding).
#[test]
fn chunks_lengthen_where_their_sums_would_not_fit() {
    type G2 = zkgpu_curves::Bls12_381G2;
    let max = 32u64 << 20;
    let fold = crate::bases::fold_layout::<G2>(
        69_905,
        Fold {
            folds: 5,
            window_bits: Some(15),
        },
    )
    .unwrap();
    let short = MsmConfig {
        chunk: Some(16),
        ..MsmConfig::default()
    };
    let fixed = Shape::new::<G2>(61_168, (1, 69_905), fold, short, max).unwrap();
    assert!(fixed.buffer_bytes::<G2>().partials > max, "{fixed:?}");
    let shape = Shape::new::<G2>(61_168, (1, 69_905), fold, MsmConfig::default(), max).unwrap();
    assert!(shape.chunk > 16, "{shape:?}");
    assert!(shape.largest_buffer::<G2>() <= max, "{shape:?}");
}

#[test]
fn host_sums_are_fewer_where_tree_levels_are_cheap() {
    use crate::shape::{FEW_HOST_SUMS, host_sums};
    use zkgpu_curves::{Bls12_381G2, Bn254G1, Bn254G2};
    assert_eq!(host_sums::<Bn254G1>(), FEW_HOST_SUMS);
    assert_eq!(host_sums::<Bls12_381G1>(), HOST_SUMS);
    assert_eq!(host_sums::<Bls12_381G2>(), HOST_SUMS);
    assert_eq!(host_sums::<Bn254G2>(), HOST_SUMS);
    // BN254 G1 at 2^20 (one folded window of 15 rows): 32 sums, added on the calling thread.
    let rows = RowLayout::new(16384, 1, FEW_HOST_SUMS);
    assert_eq!(rows.target, 8);
    let mut runs = rows.rows.clone();
    while runs.iter().any(|&len| len > rows.target) {
        runs = runs.iter().map(|len| len.div_ceil(4)).collect();
    }
    let left: u32 = runs.iter().sum();
    assert_eq!(left, 4 + 14 * 2);
    assert!(left as usize <= crate::combine::SEQUENTIAL_SUMS);
}

#[test]
fn digit_words_keep_ranks_where_buckets_are_crowded() {
    use crate::shape::default_rank_cap;
    let shaped = |log_n: u32, config: MsmConfig| {
        let n = 1usize << log_n;
        Shape::new::<Bls12_381G1>(n, (1, n as u32), None, config, u64::MAX).unwrap()
    };
    let shape = |log_n: u32| shaped(log_n, MsmConfig::default());
    // 2^24 points, 16-bit windows: 512 digits a bucket.
    let config = MsmConfig {
        window_bits: Some(16),
        ..MsmConfig::default()
    };
    let big = shaped(24, config);
    assert_eq!(default_rank_cap(&big), u32::MAX);
    // Its default 20-bit windows: 32 a bucket, no ranks.
    let wide = shape(24);
    assert_eq!((wide.c, default_rank_cap(&wide)), (20, 0));
    // 2^16 points, 13-bit windows (about 16 a bucket): no ranks.
    let small = shape(16);
    assert_eq!(default_rank_cap(&small), 0, "{small:?}");
}

/// Large buckets: the threshold is the larger of `chunk x chunk_group` and eight mean buckets
/// (a folded window's mean bucket is above the former), the default length a half (G1) or a
/// quarter (G2) of the chunk, at least 16; where the shorter chunks' sums would not fit a
/// binding, every chunk has the one length, and the window is what it was without them.
#[test]
fn large_buckets_get_shorter_chunks_where_they_fit() {
    use crate::shape::large_bucket_entries;
    type G2 = zkgpu_curves::Bls12_381G2;
    assert_eq!(large_bucket_entries(128, 4, 1 << 20, 1 << 15), 512);
    assert_eq!(large_bucket_entries(32, 4, 19 << 16, 1 << 13), 8 * 152);
    assert_eq!(default_large_chunk(128, 1), 64);
    assert_eq!(default_large_chunk(128, 2), 32);
    assert_eq!(default_large_chunk(24, 1), 16);
    assert_eq!(default_large_chunk(12, 2), 12);
    let big = Shape::new::<G2>(1 << 20, (1, 1 << 20), None, MsmConfig::default(), 1 << 34).unwrap();
    assert_eq!(
        (big.chunk, big.large_chunk, big.large_at),
        (128, 32, 512),
        "{big:?}"
    );
    let len = part_len::<G2>(128 << 20, 1);
    let small =
        Shape::new::<G2>(len, (1, len as u32), None, MsmConfig::default(), 128 << 20).unwrap();
    let one = MsmConfig {
        chunk: Some(small.chunk),
        large_chunk: Some(small.chunk),
        ..MsmConfig::default()
    };
    let without = Shape::new::<G2>(len, (1, len as u32), None, one, 128 << 20).unwrap();
    assert_eq!(small.large_chunk, small.chunk, "{small:?}");
    assert_eq!((small.c, small.cap), (without.c, without.cap), "{small:?}");
}
