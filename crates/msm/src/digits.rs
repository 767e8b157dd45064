//! The signed-digit decomposition the GPU performs (`msm_digits` in
//! shaders/kernels/msm_buckets.wgsl), in Rust: the reference its tests compare against.

/// Windows of `c` bits needed for scalars below `2^bits` with signed digits: the top window
/// must absorb the last carry, so `c * windows >= bits + 1`.
pub fn window_count(bits: u32, c: u32) -> u32 {
    (bits + 1).div_ceil(c)
}

/// Signed digits `d_w` in `[-2^(c-1), 2^(c-1)]` with `scalar = sum_w d_w 2^(c w)`, for a
/// scalar given as little-endian u32 words.
pub fn signed_digits(words: &[u32], c: u32, windows: u32) -> Vec<i64> {
    let bit = |i: u32| -> u64 {
        let (w, s) = ((i / 32) as usize, i % 32);
        words.get(w).map_or(0, |x| u64::from((x >> s) & 1))
    };
    let half = 1u64 << (c - 1);
    let mut carry = 0u64;
    (0..windows)
        .map(|w| {
            let raw = (0..c).map(|k| bit(w * c + k) << k).sum::<u64>() + carry;
            if raw > half {
                carry = 1;
                raw as i64 - (1i64 << c)
            } else {
                carry = 0;
                raw as i64
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_recompose_the_scalar() {
        let words = [
            0xffff_ffffu32,
            0x8000_0001,
            0x1234_5678,
            0,
            0,
            0,
            0,
            0x7fff_ffff,
        ];
        for c in 2..=crate::MAX_WINDOW_BITS {
            let windows = window_count(255, c);
            let d = signed_digits(&words, c, windows);
            let half = 1i64 << (c - 1);
            assert!(d.iter().all(|&x| (-half..=half).contains(&x)), "c = {c}");
            // Recompose with i128 arithmetic on 32-bit chunks is awkward; check via bits:
            // sum d_w 2^(cw) equals the scalar, compared as little-endian base-2^c limbs.
            let mut limbs = vec![0i128; windows as usize + 1];
            for (w, &x) in d.iter().enumerate() {
                limbs[w] += i128::from(x);
            }
            for w in 0..windows as usize {
                let base = 1i128 << c;
                let q = limbs[w].div_euclid(base);
                limbs[w] -= q * base;
                limbs[w + 1] += q;
            }
            let expect: Vec<i128> = (0..windows)
                .map(|w| {
                    (0..c)
                        .map(|k| {
                            let i = w * c + k;
                            let (wi, s) = ((i / 32) as usize, i % 32);
                            i128::from(words.get(wi).map_or(0, |x| (x >> s) & 1)) << k
                        })
                        .sum()
                })
                .collect();
            assert_eq!(&limbs[..windows as usize], expect.as_slice(), "c = {c}");
            assert_eq!(limbs[windows as usize], 0, "no carry out, c = {c}");
        }
    }
}
