//! Host encode/decode between arkworks field elements and the GPU's 13-bit Montgomery limbs.
//!
//! An arkworks `Fp` stores `a R_ark mod p` with `R_ark = 2^(64 N)`; the GPU stores
//! `a R mod p` with `R = 2^(13 n)`. Encoding multiplies once by the constant
//! `f = R / R_ark` (one arkworks multiplication), after which the internal representation *is*
//! `a R mod p`, and splits its bits into limbs; decoding reverses both. No arkworks type is
//! transmuted: only the documented public representation `Fp.0` is read.

use ark_ff::{BigInt, Field, Fp, Fp2, Fp2Config, MontBackend, MontConfig, PrimeField};
use rayon::prelude::*;

use crate::params::{LIMB_BITS, LIMB_MASK};

/// Why limbs could not be decoded into a field element.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The word count is not a multiple of the element size.
    #[error("expected a multiple of {per_element} u32 words, got {got}")]
    Length {
        /// Words per element.
        per_element: usize,
        /// Words given.
        got: usize,
    },
    /// A limb has bits above the 13-bit limb width.
    #[error("element {index}: limb {limb} is {value:#x}, wider than 13 bits")]
    LimbRange {
        /// Element index.
        index: usize,
        /// Limb index within the element.
        limb: usize,
        /// The offending limb.
        value: u32,
    },
    /// The limbs encode a value that is not below the modulus.
    #[error("element {index} is not canonical: its value is not below the modulus")]
    NotCanonical {
        /// Element index.
        index: usize,
    },
}

/// A prime field stored in arkworks' Montgomery form, `x 2^(64 N) mod p` (`Fp.0`): its raw
/// words, read without a conversion. The MSM uploads scalars so and converts them on the GPU.
pub trait RawMontgomery: PrimeField {
    /// The stored words of `self`: `self 2^(64 N) mod p`, little-endian, fully reduced.
    fn raw_montgomery(&self) -> &[u64];
}

impl<P: MontConfig<N>, const N: usize> RawMontgomery for Fp<MontBackend<P, N>, N> {
    #[inline]
    fn raw_montgomery(&self) -> &[u64] {
        &(self.0).0
    }
}

/// A field whose elements the GPU stores as 13-bit Montgomery limbs.
pub trait LimbEncode: Field + Copy + Send + Sync {
    /// `u32` words (limbs) per element on the GPU.
    const WORDS: usize;
    /// Constants computed once per batch.
    type Ctx: Send + Sync;
    /// Computes the batch constants.
    fn ctx() -> Self::Ctx;
    /// Writes the limbs of `x` into `out` (`out.len() == WORDS`).
    fn encode_with(ctx: &Self::Ctx, x: &Self, out: &mut [u32]);
    /// Reads an element from its limbs (`words.len() == WORDS`); `index` only labels errors.
    fn decode_with(ctx: &Self::Ctx, words: &[u32], index: usize) -> Result<Self, DecodeError>;
}

/// Limb count of a prime field with a `bits`-bit modulus: the least `n` with `4p < 2^(13 n)`.
pub const fn limb_count(bits: u32) -> usize {
    (bits + 2).div_ceil(LIMB_BITS) as usize
}

impl<P: MontConfig<N>, const N: usize> LimbEncode for Fp<MontBackend<P, N>, N> {
    const WORDS: usize = limb_count(P::MODULUS.const_num_bits());
    type Ctx = (Self, Self);

    fn ctx() -> (Self, Self) {
        // f = 2^(13 n) / R_ark as a field element; R_ark mod p is P::R.
        let r_ark = Self::from_bigint(P::R).expect("R_ark mod p is below p");
        let r_gpu = Self::from(2u64).pow([(LIMB_BITS as usize * Self::WORDS) as u64]);
        let f = r_gpu * r_ark.inverse().expect("R_ark is invertible");
        (f, f.inverse().expect("f is invertible"))
    }

    #[inline]
    fn encode_with(ctx: &Self::Ctx, x: &Self, out: &mut [u32]) {
        let y = *x * ctx.0;
        split_limbs(&(y.0).0, out);
    }

    #[inline]
    fn decode_with(ctx: &Self::Ctx, words: &[u32], index: usize) -> Result<Self, DecodeError> {
        let big = BigInt::<N>(join_limbs::<N>(words, index)?);
        if big >= P::MODULUS {
            return Err(DecodeError::NotCanonical { index });
        }
        Ok(Self::new_unchecked(big) * ctx.1)
    }
}

impl<P: Fp2Config> LimbEncode for Fp2<P>
where
    P::Fp: LimbEncode,
{
    const WORDS: usize = 2 * <P::Fp as LimbEncode>::WORDS;
    type Ctx = <P::Fp as LimbEncode>::Ctx;

    fn ctx() -> Self::Ctx {
        P::Fp::ctx()
    }

    fn encode_with(ctx: &Self::Ctx, x: &Self, out: &mut [u32]) {
        let (o0, o1) = out.split_at_mut(<P::Fp as LimbEncode>::WORDS);
        P::Fp::encode_with(ctx, &x.c0, o0);
        P::Fp::encode_with(ctx, &x.c1, o1);
    }

    fn decode_with(ctx: &Self::Ctx, words: &[u32], index: usize) -> Result<Self, DecodeError> {
        let (w0, w1) = words.split_at(<P::Fp as LimbEncode>::WORDS);
        Ok(Self::new(
            P::Fp::decode_with(ctx, w0, index)?,
            P::Fp::decode_with(ctx, w1, index)?,
        ))
    }
}

/// Splits little-endian 64-bit words into 13-bit limbs, filling `out`.
#[inline]
pub fn split_limbs(words: &[u64], out: &mut [u32]) {
    for (k, o) in out.iter_mut().enumerate() {
        let bit = LIMB_BITS as usize * k;
        let (w, s) = (bit / 64, bit % 64);
        let mut v = words.get(w).copied().unwrap_or(0) >> s;
        if s > 64 - LIMB_BITS as usize {
            v |= words.get(w + 1).copied().unwrap_or(0) << (64 - s);
        }
        *o = (v as u32) & LIMB_MASK;
    }
}

/// Joins 13-bit limbs into `N` little-endian 64-bit words; errors on a limb wider than 13 bits
/// or a value that does not fit in `64 N` bits.
#[inline]
pub fn join_limbs<const N: usize>(limbs: &[u32], index: usize) -> Result<[u64; N], DecodeError> {
    let mut out = [0u64; N];
    for (k, &l) in limbs.iter().enumerate() {
        if l > LIMB_MASK {
            return Err(DecodeError::LimbRange {
                index,
                limb: k,
                value: l,
            });
        }
        let bit = LIMB_BITS as usize * k;
        let (w, s) = (bit / 64, bit % 64);
        let v = u64::from(l);
        if w >= N {
            if v != 0 {
                return Err(DecodeError::NotCanonical { index });
            }
            continue;
        }
        out[w] |= v << s;
        if s > 64 - LIMB_BITS as usize {
            let high = v >> (64 - s);
            if w + 1 < N {
                out[w + 1] |= high;
            } else if high != 0 {
                return Err(DecodeError::NotCanonical { index });
            }
        }
    }
    Ok(out)
}

/// Elements per rayon task when encoding or decoding in parallel.
const PAR_CHUNK: usize = 1 << 12;

/// The limbs of one element.
pub fn encode<F: LimbEncode>(x: &F) -> Vec<u32> {
    let mut out = vec![0; F::WORDS];
    F::encode_with(&F::ctx(), x, &mut out);
    out
}

/// One element from its limbs.
pub fn decode<F: LimbEncode>(words: &[u32]) -> Result<F, DecodeError> {
    if words.len() != F::WORDS {
        return Err(DecodeError::Length {
            per_element: F::WORDS,
            got: words.len(),
        });
    }
    F::decode_with(&F::ctx(), words, 0)
}

/// Encodes `xs` into `out` (`out.len() == xs.len() * F::WORDS`), in parallel for large inputs.
///
/// # Panics
/// If `out` has the wrong length.
pub fn encode_into<F: LimbEncode>(xs: &[F], out: &mut [u32]) {
    assert_eq!(out.len(), xs.len() * F::WORDS, "encode_into: output length");
    let ctx = F::ctx();
    xs.par_chunks(PAR_CHUNK)
        .zip(out.par_chunks_mut(PAR_CHUNK * F::WORDS))
        .for_each(|(xs, out)| {
            for (x, o) in xs.iter().zip(out.chunks_exact_mut(F::WORDS)) {
                F::encode_with(&ctx, x, o);
            }
        });
}

/// Encodes `xs` into a new vector of `xs.len() * F::WORDS` limbs.
pub fn encode_slice<F: LimbEncode>(xs: &[F]) -> Vec<u32> {
    let mut out = vec![0; xs.len() * F::WORDS];
    encode_into(xs, &mut out);
    out
}

/// `n` copies of `value` in a new vector, written by the host's threads. Fresh memory is
/// faulted in page by page on first write; on the H100 machine one thread took about 18 ms for
/// 32 MiB and 300 ms for 512 MiB (`vec![x; n]`), which showed up as slow downloads.
pub fn filled_par<T: Clone + Send + Sync>(n: usize, value: T) -> Vec<T> {
    let mut v = Vec::with_capacity(n);
    v.par_extend(rayon::iter::repeat_n(value, n));
    v
}

/// 32-bit words that hold a canonical element of a `bits`-bit prime field.
pub const fn packed_limb_words(bits: u32) -> usize {
    bits.div_ceil(32) as usize
}

/// Packs the canonical 13-bit limbs of one element (a little-endian base-`2^13` integer) into
/// `out`, little-endian 32-bit words: the layout of the shaders' `{prefix}_pack`.
///
/// # Panics
/// In debug builds, if a limb is wider than 13 bits or the value does not fit in `out`.
pub fn pack_limbs(limbs: &[u32], out: &mut [u32]) {
    out.fill(0);
    for (i, &l) in limbs.iter().enumerate() {
        debug_assert!(l < 1 << LIMB_BITS, "limb {i} is wider than 13 bits");
        let bit = LIMB_BITS as usize * i;
        let (w, sh) = (bit / 32, bit % 32);
        if w < out.len() {
            out[w] |= l << sh;
        } else {
            debug_assert_eq!(l, 0, "value wider than {} words", out.len());
        }
        if sh + LIMB_BITS as usize > 32 {
            if w + 1 < out.len() {
                out[w + 1] |= l >> (32 - sh);
            } else {
                debug_assert_eq!(l >> (32 - sh), 0, "value wider than {} words", out.len());
            }
        }
    }
}

/// [`pack_limbs`] over consecutive elements of `per` limbs each, into `words` words each, in
/// parallel.
///
/// # Panics
/// If `limbs.len()` is not a multiple of `per`.
pub fn pack_limb_slice(limbs: &[u32], per: usize, words: usize) -> Vec<u32> {
    assert!(
        per > 0 && limbs.len().is_multiple_of(per),
        "pack_limb_slice: length"
    );
    let mut out = vec![0u32; limbs.len() / per * words];
    out.par_chunks_mut(words * PAR_CHUNK)
        .zip(limbs.par_chunks(per * PAR_CHUNK))
        .for_each(|(o, l)| {
            for (o, l) in o.chunks_exact_mut(words).zip(l.chunks_exact(per)) {
                pack_limbs(l, o);
            }
        });
    out
}

/// The 13-bit limbs of one element packed by [`pack_limbs`]: `words` little-endian 32-bit
/// words into `out.len()` limbs (bits past the limbs are ignored; the decoder checks the
/// value).
pub fn unpack_limbs(words: &[u32], out: &mut [u32]) {
    let mask = (1u32 << LIMB_BITS) - 1;
    for (i, l) in out.iter_mut().enumerate() {
        let bit = LIMB_BITS as usize * i;
        let (w, sh) = (bit / 32, bit % 32);
        let lo = words.get(w).map_or(0, |&x| x >> sh);
        let hi = if sh + LIMB_BITS as usize > 32 {
            words.get(w + 1).map_or(0, |&x| x << (32 - sh))
        } else {
            0
        };
        *l = (lo | hi) & mask;
    }
}

/// [`unpack_limbs`] over consecutive elements of `words` words each, into `per` limbs each, in
/// parallel.
///
/// # Panics
/// If `packed.len()` is not a multiple of `words`.
pub fn unpack_limb_slice(packed: &[u32], words: usize, per: usize) -> Vec<u32> {
    assert!(
        words > 0 && packed.len().is_multiple_of(words),
        "unpack_limb_slice: length"
    );
    let mut out = vec![0u32; packed.len() / words * per];
    out.par_chunks_mut(per * PAR_CHUNK)
        .zip(packed.par_chunks(words * PAR_CHUNK))
        .for_each(|(o, w)| {
            for (o, w) in o.chunks_exact_mut(per).zip(w.chunks_exact(words)) {
                unpack_limbs(w, o);
            }
        });
    out
}

/// Decodes consecutive elements; the first bad element's error is returned.
pub fn decode_slice<F: LimbEncode>(words: &[u32]) -> Result<Vec<F>, DecodeError> {
    if !words.len().is_multiple_of(F::WORDS) {
        return Err(DecodeError::Length {
            per_element: F::WORDS,
            got: words.len(),
        });
    }
    let ctx = F::ctx();
    words
        .par_chunks(PAR_CHUNK * F::WORDS)
        .enumerate()
        .map(|(c, chunk)| {
            chunk
                .chunks_exact(F::WORDS)
                .enumerate()
                .map(|(i, w)| F::decode_with(&ctx, w, c * PAR_CHUNK + i))
                .collect::<Result<Vec<F>, _>>()
        })
        .collect::<Result<Vec<Vec<F>>, _>>()
        .map(|v| v.concat())
}

/// arkworks' own representation of a prime-field element as little-endian `u32` words: the
/// Montgomery form `x 2^(64 N) mod p` that `Fp` stores. Moving elements this way costs no
/// arithmetic on the host; a shader unpacks them with `{prefix}_unpack` (and one
/// multiplication by `2^(13 n - 64 N)`'s Montgomery image, or none, depending on the use).
pub trait PackedWords: PrimeField {
    /// Words per element (`2 N`).
    const PACKED_WORDS: usize;

    /// Appends the words of `self` to `out`.
    fn write_packed(&self, out: &mut [u32]);

    /// The element with these words, or `NotCanonical` when they are not below the modulus.
    fn read_packed(words: &[u32], index: usize) -> Result<Self, DecodeError>;
}

impl<P: MontConfig<N>, const N: usize> PackedWords for Fp<MontBackend<P, N>, N> {
    const PACKED_WORDS: usize = 2 * N;

    #[inline]
    fn write_packed(&self, out: &mut [u32]) {
        for (k, w) in (self.0).0.iter().enumerate() {
            out[2 * k] = *w as u32;
            out[2 * k + 1] = (*w >> 32) as u32;
        }
    }

    #[inline]
    fn read_packed(words: &[u32], index: usize) -> Result<Self, DecodeError> {
        let mut big = [0u64; N];
        for (k, b) in big.iter_mut().enumerate() {
            *b = u64::from(words[2 * k]) | (u64::from(words[2 * k + 1]) << 32);
        }
        let big = BigInt::<N>(big);
        if big >= P::MODULUS {
            return Err(DecodeError::NotCanonical { index });
        }
        Ok(Self::new_unchecked(big))
    }
}

/// The packed words of `xs` (see [`PackedWords`]), in parallel.
pub fn pack_slice<F: PackedWords>(xs: &[F]) -> Vec<u32> {
    let w = F::PACKED_WORDS;
    let mut out = vec![0u32; xs.len() * w];
    out.par_chunks_mut(w * PAR_CHUNK)
        .zip(xs.par_chunks(PAR_CHUNK))
        .for_each(|(o, x)| {
            for (o, x) in o.chunks_exact_mut(w).zip(x) {
                x.write_packed(o);
            }
        });
    out
}

/// Reads packed words back into elements, in parallel; every element must be canonical.
pub fn unpack_slice<F: PackedWords>(words: &[u32]) -> Result<Vec<F>, DecodeError> {
    let w = F::PACKED_WORDS;
    if !words.len().is_multiple_of(w) {
        return Err(DecodeError::Length {
            per_element: w,
            got: words.len(),
        });
    }
    let mut out = filled_par(words.len() / w, F::zero());
    unpack_into(words, &mut out, 0)?;
    Ok(out)
}

/// Reads `out.len()` elements from packed words, in parallel; every element must be
/// canonical. Errors name element indices from `first`.
pub fn unpack_into<F: PackedWords>(
    words: &[u32],
    out: &mut [F],
    first: usize,
) -> Result<(), DecodeError> {
    let w = F::PACKED_WORDS;
    if words.len() != out.len() * w {
        return Err(DecodeError::Length {
            per_element: w,
            got: words.len(),
        });
    }
    out.par_chunks_mut(PAR_CHUNK)
        .zip(words.par_chunks(w * PAR_CHUNK))
        .enumerate()
        .try_for_each(|(c, (o, ws))| {
            for (i, (o, ws)) in o.iter_mut().zip(ws.chunks_exact(w)).enumerate() {
                *o = F::read_packed(ws, first + c * PAR_CHUNK + i)?;
            }
            Ok(())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_montgomery_is_x_times_2_to_the_256() {
        use ark_ff::UniformRand;
        type Fr = ark_bls12_381::Fr;
        let r_ark = Fr::from(2u64).pow([256u64]);
        let mut rng = ark_std::test_rng();
        for x in [Fr::from(0u64), Fr::ONE, -Fr::ONE, Fr::rand(&mut rng)] {
            let expected = (x * r_ark).into_bigint();
            assert_eq!(x.raw_montgomery(), expected.as_ref());
        }
    }

    #[test]
    fn packed_limbs_are_the_integer() {
        use ark_ff::UniformRand;
        use ark_std::rand::{SeedableRng, rngs::StdRng};
        type Fq = ark_bls12_381::Fq;
        let mut rng = StdRng::seed_from_u64(9);
        let words = packed_limb_words(381);
        assert_eq!(words, 12);
        for x in [
            Fq::from(0u64),
            Fq::from(1u64),
            -Fq::from(1u64),
            Fq::rand(&mut rng),
        ] {
            let limbs = encode(&x);
            // The limbs' integer, from the limbs one bit at a time.
            let mut want = vec![0u32; words];
            for (i, l) in limbs.iter().enumerate() {
                for b in 0..13 {
                    if (l >> b) & 1 == 1 {
                        let bit = 13 * i + b;
                        want[bit / 32] |= 1 << (bit % 32);
                    }
                }
            }
            let mut got = vec![0u32; words];
            pack_limbs(&limbs, &mut got);
            assert_eq!(got, want);
            let slice = pack_limb_slice(&[limbs.clone(), limbs.clone()].concat(), Fq::WORDS, words);
            assert_eq!(slice, [want.clone(), want.clone()].concat());
            // And back.
            let mut back = vec![0u32; Fq::WORDS];
            unpack_limbs(&want, &mut back);
            assert_eq!(back, limbs);
            assert_eq!(
                unpack_limb_slice(&slice, words, Fq::WORDS),
                [limbs.clone(), limbs].concat()
            );
        }
    }

    #[test]
    fn split_join_round_trip() {
        let words = [u64::MAX, 0x1234_5678_9abc_def0, 7];
        let mut limbs = [0u32; 15];
        split_limbs(&words, &mut limbs);
        assert_eq!(join_limbs::<3>(&limbs, 0), Ok(words));
    }

    #[test]
    fn join_rejects_wide_limbs() {
        assert!(matches!(
            join_limbs::<1>(&[0x2000], 0),
            Err(DecodeError::LimbRange { .. })
        ));
        // Five 13-bit limbs are 65 bits: the top bit does not fit in one u64.
        assert!(matches!(
            join_limbs::<1>(&[0, 0, 0, 0, 0x1000], 0),
            Err(DecodeError::NotCanonical { .. })
        ));
    }
}
