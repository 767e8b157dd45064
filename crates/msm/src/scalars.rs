//! Scalars as the GPU reads them: canonical words converted on the host, or arkworks'
//! Montgomery form converted on the GPU.

use ark_ff::PrimeField;
use rayon::prelude::*;
use zkgpu_limbs::RawMontgomery;
use zkgpu_runtime::{GpuContext, wgpu};

/// Scalars converted once on the host to the words the GPU reads (canonical, 8 little-endian
/// u32 words each), for several MSMs with the same scalars that would each convert them on
/// the host: a `MsmConfig::scalar_bits` below the field's (the width is checked there) or a
/// scalar field without a GPU module. Elsewhere field elements cost the host nothing: the GPU
/// converts them (`msm_digits_from_montgomery`). A tail serves an MSM over the later scalars
/// ([`PreparedScalars::tail`]).
#[derive(Clone, Debug)]
pub struct PreparedScalars<F> {
    pub(crate) words: Vec<u32>,
    pub(crate) _field: std::marker::PhantomData<F>,
}

impl<F: PrimeField> PreparedScalars<F> {
    /// Converts `scalars` (on the host's threads).
    pub fn new(scalars: &[F]) -> Self {
        Self {
            words: scalar_words(scalars),
            _field: std::marker::PhantomData,
        }
    }

    /// Number of scalars.
    pub fn len(&self) -> usize {
        self.words.len() / 8
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// All of them.
    pub fn all(&self) -> ScalarSlice<'_, F> {
        self.tail(0)
    }

    /// The scalars from index `skip` on (none when `skip >= len`).
    pub fn tail(&self, skip: usize) -> ScalarSlice<'_, F> {
        let at = (8 * skip).min(self.words.len());
        ScalarSlice {
            words: &self.words[at..],
            _field: std::marker::PhantomData,
        }
    }
}

/// A run of [`PreparedScalars`].
#[derive(Clone, Copy, Debug)]
pub struct ScalarSlice<'a, F> {
    pub(crate) words: &'a [u32],
    pub(crate) _field: std::marker::PhantomData<F>,
}

/// Scalars as given to one MSM.
#[derive(Clone, Copy)]
pub(crate) enum Scalars<'a, F> {
    Field(&'a [F]),
    Words(&'a [u32]),
}

impl<'a, F: PrimeField> Scalars<'a, F> {
    pub(crate) fn len(&self) -> usize {
        match self {
            Self::Field(f) => f.len(),
            Self::Words(w) => w.len() / 8,
        }
    }

    /// Scalars `start..end`.
    pub(crate) fn range(self, start: usize, end: usize) -> Self {
        match self {
            Self::Field(f) => Self::Field(&f[start..end]),
            Self::Words(w) => Self::Words(&w[8 * start..8 * end]),
        }
    }

    /// The words of scalars `first..` into `out` (32 bytes a scalar): canonical, 8
    /// little-endian u32 words each.
    pub(crate) fn write_words(&self, first: usize, out: &mut [u8]) {
        let count = out.len() / 32;
        match self {
            Self::Field(f) => {
                for (o, s) in out
                    .as_chunks_mut::<32>()
                    .0
                    .iter_mut()
                    .zip(&f[first..first + count])
                {
                    put_u64s(o, s.into_bigint().as_ref());
                }
            }
            Self::Words(w) => {
                out.copy_from_slice(bytemuck::cast_slice(&w[8 * first..8 * (first + count)]));
            }
        }
    }
}

impl<F: RawMontgomery> Scalars<'_, F> {
    /// The words of scalars `first..` into `out` (32 bytes a scalar) as the field stores them
    /// (arkworks' Montgomery form), for `msm_digits_from_montgomery`; canonical words are
    /// copied as they are.
    pub(crate) fn write_montgomery(&self, first: usize, out: &mut [u8]) {
        let count = out.len() / 32;
        match self {
            Self::Field(f) => {
                for (o, s) in out
                    .as_chunks_mut::<32>()
                    .0
                    .iter_mut()
                    .zip(&f[first..first + count])
                {
                    put_u64s(o, s.raw_montgomery());
                }
            }
            Self::Words(_) => self.write_words(first, out),
        }
    }
}

/// One scalar's 32 bytes from its little-endian u64 limbs (zero above them).
pub(crate) fn put_u64s(out: &mut [u8], limbs: &[u64]) {
    out.fill(0);
    for (o, l) in out.as_chunks_mut::<8>().0.iter_mut().zip(limbs) {
        *o = l.to_le_bytes();
    }
}

/// Bit length of a scalar given as 8 little-endian u32 words.
pub(crate) fn scalar_bits(words: &[u32]) -> u32 {
    words
        .iter()
        .rposition(|&w| w != 0)
        .map_or(0, |k| 32 * k as u32 + 32 - words[k].leading_zeros())
}

/// Canonical scalars as 8 little-endian u32 words each (scalar fields of at most 256 bits).
pub(crate) fn scalar_words<F: PrimeField>(scalars: &[F]) -> Vec<u32> {
    let mut out = vec![0u32; scalars.len() * 8];
    out.par_chunks_mut(8 * 1024)
        .zip(scalars.par_chunks(1024))
        .for_each(|(o, s)| {
            Scalars::Field(s).write_words(0, bytemuck::cast_slice_mut(o));
        });
    out
}

/// Writes `scalars` into `buffer` on the host's threads, straight into the upload's staging
/// memory: as the field stores them (Montgomery form, for `msm_digits_from_montgomery`)
/// where `montgomery`, else as canonical words, checking each against `limit` bits. Returns
/// the first scalar found wider than `limit` (its index and bit length), if any.
pub(crate) fn write_scalars<F: PrimeField + RawMontgomery>(
    ctx: &GpuContext,
    buffer: &wgpu::Buffer,
    scalars: Scalars<'_, F>,
    montgomery: bool,
    limit: u32,
) -> zkgpu_runtime::Result<Option<(usize, u32)>> {
    let too_wide = std::sync::Mutex::new(None);
    ctx.write_par(buffer, 0, 32 * scalars.len() as u64, 32, |at, block| {
        if montgomery {
            scalars.write_montgomery(at / 32, block);
            return;
        }
        scalars.write_words(at / 32, block);
        if limit < 256 {
            let words: &[u32] = bytemuck::cast_slice(block);
            for (k, w) in words.as_chunks::<8>().0.iter().enumerate() {
                let bits = scalar_bits(w);
                if bits > limit {
                    let mut first = too_wide.lock().unwrap_or_else(|e| e.into_inner());
                    first.get_or_insert((at / 32 + k, bits));
                    break;
                }
            }
        }
    })?;
    Ok(too_wide.into_inner().unwrap_or_else(|e| e.into_inner()))
}
