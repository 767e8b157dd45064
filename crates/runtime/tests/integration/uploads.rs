//! Parallel uploads (`GpuContext::write_par`, `write_par_zip`) read back from the GPU: small
//! writes through wgpu's queue, large ones through the pooled staging buffers (reused after
//! the first write's copies complete), several regions at once, and refused writes.

#![allow(clippy::unwrap_used)]

use zkgpu_testing::shared_context as ctx;

/// The word a fill writes at index `i` of a region for `seed`.
fn word(seed: u32, i: usize) -> u32 {
    (i as u32).wrapping_mul(0x9e37_79b9) ^ seed
}

fn read(ctx: &zkgpu_runtime::GpuContext, buffer: &zkgpu_runtime::wgpu::Buffer) -> Vec<u32> {
    pollster::block_on(ctx.read_back::<u32>(buffer, buffer.size())).unwrap()
}

#[test]
fn large_and_small_writes_land_where_asked() {
    // A context of its own: its staging pool is counted below, and other tests of this
    // binary write through the shared context's pool at the same time.
    let ctx = &zkgpu_testing::new_context();
    // 9 MiB + 40 bytes: two full pooled pieces and a partial one, from byte 16.
    let words = (9 << 18) + 10;
    let buffer = ctx
        .storage_zeroed("upload test", 16 + 4 * words as u64 + 8)
        .unwrap();
    for seed in [1u32, 2, 3] {
        ctx.write_par(&buffer, 16, 4 * words as u64, 8, |at, block| {
            assert_eq!(at % 8, 0, "blocks start at multiples of align");
            let out: &mut [u32] = bytemuck::cast_slice_mut(block);
            for (k, o) in out.iter_mut().enumerate() {
                *o = word(seed, at / 4 + k);
            }
        })
        .unwrap();
        let got = read(ctx, &buffer);
        // The read polled the device: the copies are done and their buffers pooled again.
        assert!(
            ctx.pooled_upload_buffers() > 0,
            "seed {seed}: nothing pooled"
        );
        assert_eq!(&got[..4], &[0; 4], "seed {seed}: bytes before the offset");
        assert_eq!(
            &got[4 + words..],
            &[0; 2],
            "seed {seed}: bytes after the range"
        );
        let bad = (0..words).find(|&i| got[4 + i] != word(seed, i));
        assert_eq!(bad, None, "seed {seed}: first wrong word");
    }
    // A small write (wgpu's queue) over the start of the same range.
    ctx.write_par(&buffer, 16, 64, 4, |at, block| {
        let out: &mut [u32] = bytemuck::cast_slice_mut(block);
        for (k, o) in out.iter_mut().enumerate() {
            *o = word(7, at / 4 + k);
        }
    })
    .unwrap();
    let got = read(ctx, &buffer);
    assert!((0..16).all(|i| got[4 + i] == word(7, i)));
    assert_eq!(got[4 + 16], word(3, 16));
}

#[test]
fn zipped_regions_are_filled_together() {
    let ctx = ctx();
    let words = (5 << 18) + 6;
    let a = ctx.storage_zeroed("upload a", 4 * words as u64).unwrap();
    let b = ctx
        .storage_zeroed("upload b", 8 + 4 * words as u64)
        .unwrap();
    ctx.write_par_zip(&[(&a, 0), (&b, 8)], words as u64, 2, |at, blocks| {
        for (v, block) in blocks.iter_mut().enumerate() {
            for (k, o) in block.iter_mut().enumerate() {
                *o = word(10 + v as u32, at + k);
            }
        }
    })
    .unwrap();
    let (ga, gb) = (read(ctx, &a), read(ctx, &b));
    assert_eq!((0..words).find(|&i| ga[i] != word(10, i)), None);
    assert_eq!(&gb[..2], &[0, 0]);
    assert_eq!((0..words).find(|&i| gb[2 + i] != word(11, i)), None);
}

#[test]
fn writes_past_the_end_are_errors() {
    let ctx = ctx();
    let buffer = ctx.storage_zeroed("upload small", 1 << 20).unwrap();
    for bytes in [(1u64 << 20) + 4, 8 << 20] {
        let r = ctx.write_par(&buffer, 0, bytes, 4, |_, block| block.fill(1));
        assert!(r.is_err(), "{bytes} bytes into 1 MiB");
    }
    let r = ctx.write_par(&buffer, 0, 6, 4, |_, block| block.fill(1));
    assert!(r.is_err(), "6 bytes: not a multiple of 4");
}

/// A write of several rounds (32 MiB of staging per region each, two in flight): every word
/// lands, in two regions at once, and the write used at most two rounds of staging buffers
/// (a context of its own, so that the pool counts only these).
#[test]
fn writes_of_many_rounds_reuse_two_rounds_of_staging() {
    let ctx = &zkgpu_testing::new_context();
    // Three and a half rounds of 8 Mi words (32 MiB) per region.
    let words = 3 * (8 << 20) + (4 << 20) + 6;
    let a = ctx
        .storage_zeroed("upload rounds a", 4 * words as u64)
        .unwrap();
    let b = ctx
        .storage_zeroed("upload rounds b", 4 + 4 * words as u64)
        .unwrap();
    ctx.write_par_zip(&[(&a, 0), (&b, 4)], words as u64, 2, |at, blocks| {
        for (v, block) in blocks.iter_mut().enumerate() {
            for (k, o) in block.iter_mut().enumerate() {
                *o = word(20 + v as u32, at + k);
            }
        }
    })
    .unwrap();
    let (ga, gb) = (read(ctx, &a), read(ctx, &b));
    assert_eq!((0..words).find(|&i| ga[i] != word(20, i)), None);
    assert_eq!(gb[0], 0);
    assert_eq!((0..words).find(|&i| gb[1 + i] != word(21, i)), None);
    let pooled = ctx.pooled_upload_buffers();
    assert!(
        (1..=2 * 8 * 2).contains(&pooled),
        "{pooled} staging buffers: two rounds of 8 per region at most"
    );
}
