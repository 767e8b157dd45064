//! The header of a prepared-key file: encoding, decoding, and the checks a decoded one
//! passes before anything in it is used.

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use ark_ff::PrimeField;
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};
use zkgpu_msm::{BasesLayout, StoredFold};

use super::BLOCK;
use crate::error::CacheError;
use crate::key::{GpuPairing, KeyPoints, PreparedProvingKey};
use crate::matrices::{Qap, R1csMatrices, SparseRows};

/// The file's first bytes.
pub(super) const MAGIC: &[u8; 8] = b"ZKGPUPK\x01";
/// Magic, header length, header digest.
pub(super) const PREFIX: u64 = 8 + 8 + 32;
/// The header's format version (4: BLS12-377 G1 bases stored in its twisted Edwards form,
/// three registers a point; the layout's point size also tells them apart. 5: B in G2's
/// kept indices, where its identities are left out).
const VERSION: u32 = 5;

/// blake3 of `bytes` (on the host's threads when large).
pub(super) fn digest(bytes: &[u8]) -> blake3::Hash {
    let mut h = blake3::Hasher::new();
    if bytes.len() >= 1 << 20 {
        h.update_rayon(bytes);
    } else {
        h.update(bytes);
    }
    h.finalize()
}

/// The header's bytes from `file`, its magic, length and digest checked.
pub(super) fn read_header(
    file: &mut File,
    file_len: u64,
    path: &Path,
) -> Result<Vec<u8>, CacheError> {
    let corrupt = |what: String| CacheError::Corrupt {
        path: path.to_owned(),
        what,
    };
    let io = |source| CacheError::Io {
        path: path.to_owned(),
        source,
    };
    if file_len < PREFIX {
        return Err(corrupt(format!(
            "{file_len} bytes, shorter than any header"
        )));
    }
    let mut prefix = [0u8; PREFIX as usize];
    file.read_exact(&mut prefix).map_err(io)?;
    if &prefix[..8] != MAGIC {
        return Err(CacheError::Foreign {
            path: path.to_owned(),
            what: "not a zkgpu prepared-key file (or another format version)".into(),
        });
    }
    let len = u64::from_le_bytes(prefix[8..16].try_into().unwrap_or_default());
    if len > file_len - PREFIX {
        return Err(corrupt(format!(
            "a header of {len} bytes in a file of {file_len}"
        )));
    }
    let mut bytes = vec![0u8; len as usize];
    file.read_exact(&mut bytes).map_err(io)?;
    if digest(&bytes).as_bytes() != &prefix[16..48] {
        return Err(corrupt("the header does not match its digest".into()));
    }
    Ok(bytes)
}

/// A prepared key's header.
pub(super) struct Header<E: GpuPairing> {
    pub(super) key_hash: [u8; 32],
    pub(super) num_inputs: usize,
    pub(super) num_witness: usize,
    pub(super) domain_size: usize,
    /// The reduction the key was made for (format version 2).
    pub(super) qap: Qap,
    pub(super) points: KeyPoints<E>,
    pub(super) vk: ark_groth16::VerifyingKey<E>,
    pub(super) matrices: Option<Arc<R1csMatrices<E::ScalarField>>>,
    /// A, B in G1 and L; B in G2; H.
    pub(super) layouts: [BasesLayout; 3],
    /// The indices of the B-in-G2 bases stored, where its identities are left out.
    pub(super) b_g2_kept: Option<Arc<[u32]>>,
    /// Every block of every part, in file order.
    pub(super) digests: Vec<[u8; 32]>,
}

impl<E: GpuPairing> Header<E> {
    /// The header of `p`, with zero digests (of the right count, so the length is final).
    pub(super) fn of(p: &PreparedProvingKey<E>) -> Self {
        let layouts = [p.a_b_l.layout(), p.b_g2.layout(), p.h.layout()];
        let blocks = layouts
            .iter()
            .flat_map(|l| (0..l.parts.len()).map(|k| (l.part_bytes(k) as usize).div_ceil(BLOCK)))
            .sum();
        Self {
            key_hash: p.key_hash.unwrap_or_default(),
            num_inputs: p.num_inputs,
            num_witness: p.num_witness,
            domain_size: p.domain_size,
            qap: p.qap,
            points: p.points.clone(),
            vk: p.pvk.vk.clone(),
            matrices: p.matrices.get().cloned(),
            layouts,
            b_g2_kept: p.b_g2_kept.clone(),
            digests: vec![[0; 32]; blocks],
        }
    }

    /// Where the last part ends when parts start at `data_at`, each at a multiple of 4096.
    pub(super) fn data_end(&self, data_at: u64) -> u64 {
        let (mut at, mut end) = (data_at, data_at);
        for l in &self.layouts {
            for k in 0..l.parts.len() {
                end = at.saturating_add(l.part_bytes(k));
                at = end.saturating_add(4095) / 4096 * 4096;
            }
        }
        end
    }

    pub(super) fn encode(&self) -> Vec<u8> {
        let mut w = Vec::new();
        put_u64(&mut w, VERSION.into());
        put_bytes(&mut w, E::NAME.as_bytes());
        w.extend_from_slice(&self.key_hash);
        for n in [self.num_inputs, self.num_witness, self.domain_size] {
            put_u64(&mut w, n as u64);
        }
        put_u64(&mut w, u64::from(self.qap == Qap::Circom));
        let p = &self.points;
        let mut points = Vec::new();
        let _ = (&p.a0, &p.b_g1_0, &p.b_g2_0).serialize_uncompressed(&mut points);
        let _ = (&p.beta_g1, &p.delta_g1, &self.vk).serialize_uncompressed(&mut points);
        put_bytes(&mut w, &points);
        match &self.matrices {
            None => put_u64(&mut w, 0),
            Some(m) => {
                put_u64(&mut w, 1);
                encode_matrices(&mut w, m);
            }
        }
        for l in &self.layouts {
            encode_layout(&mut w, l);
        }
        match &self.b_g2_kept {
            None => put_u64(&mut w, 0),
            Some(kept) => {
                put_u64(&mut w, 1);
                put_u32s(&mut w, kept);
            }
        }
        put_u64(&mut w, self.digests.len() as u64);
        for d in &self.digests {
            w.extend_from_slice(d);
        }
        w
    }

    /// Decodes and checks a header read by [`read_header`].
    pub(super) fn decode(bytes: &[u8], path: &Path) -> Result<Self, CacheError> {
        let mut r = Reader { bytes, path };
        let foreign = |what: String| CacheError::Foreign {
            path: path.to_owned(),
            what,
        };
        let version = r.u64()?;
        if version != u64::from(VERSION) {
            return Err(foreign(format!("format version {version}, not {VERSION}")));
        }
        let name = r.bytes()?;
        if name != E::NAME.as_bytes() {
            return Err(foreign(format!(
                "a key of {}, not {}",
                String::from_utf8_lossy(name),
                E::NAME
            )));
        }
        let key_hash: [u8; 32] = r.take(32)?.try_into().map_err(|_| r.corrupt("hash"))?;
        let (num_inputs, num_witness, domain_size) = (r.usize()?, r.usize()?, r.usize()?);
        let qap = match r.u64()? {
            0 => Qap::Libsnark,
            1 => Qap::Circom,
            x => return Err(r.corrupt(&format!("reduction {x}"))),
        };
        let mut points = r.bytes()?;
        let bad = |e: ark_serialize::SerializationError| CacheError::Corrupt {
            path: path.to_owned(),
            what: format!("header: key points: {e}"),
        };
        let (a0, b_g1_0, b_g2_0) =
            <(E::G1Affine, E::G1Affine, E::G2Affine)>::deserialize_uncompressed(&mut points)
                .map_err(bad)?;
        let (beta_g1, delta_g1, vk) =
            <(E::G1Affine, E::G1Affine, ark_groth16::VerifyingKey<E>)>::deserialize_uncompressed(
                &mut points,
            )
            .map_err(bad)?;
        let matrices = match r.u64()? {
            0 => None,
            1 => Some(Arc::new(decode_matrices(&mut r, qap)?)),
            x => return Err(r.corrupt(&format!("matrices flag {x}"))),
        };
        let layouts = [
            decode_layout(&mut r)?,
            decode_layout(&mut r)?,
            decode_layout(&mut r)?,
        ];
        let b_g2_kept = match r.u64()? {
            0 => None,
            1 => Some(r.u32s()?.into()),
            x => return Err(r.corrupt(&format!("kept-bases flag {x}"))),
        };
        let count = r.usize()?;
        let raw = r.take(count.checked_mul(32).ok_or_else(|| r.corrupt("digests"))?)?;
        let digests = raw.as_chunks::<32>().0.to_vec();
        if !r.bytes.is_empty() {
            return Err(r.corrupt("bytes after the header's end"));
        }
        let header = Self {
            key_hash,
            num_inputs,
            num_witness,
            domain_size,
            qap,
            points: KeyPoints {
                a0,
                b_g1_0,
                b_g2_0,
                beta_g1,
                delta_g1,
            },
            vk,
            matrices,
            layouts,
            b_g2_kept,
            digests,
        };
        header.check(&r)?;
        Ok(header)
    }

    /// The decoded counts against each other: what the prover relies on.
    fn check(&self, r: &Reader<'_>) -> Result<(), CacheError> {
        let blocks: usize = self
            .layouts
            .iter()
            .flat_map(|l| (0..l.parts.len()).map(|k| (l.part_bytes(k) as usize).div_ceil(BLOCK)))
            .sum();
        if blocks != self.digests.len() {
            return Err(r.corrupt("digest count"));
        }
        let vars = self.num_inputs + self.num_witness;
        let [abl, bg2, h] = &self.layouts;
        let ok = self.num_inputs >= 1
            && self.domain_size.is_power_of_two()
            && self.vk.gamma_abc_g1.len() == self.num_inputs
            && abl.sets == 3
            && abl.len == vars - 1
            && bg2.sets == 1
            && kept_fits(self.b_g2_kept.as_deref(), bg2.len, vars - 1)
            && h.sets == 1
            && h.len == self.qap.h_query_len(self.domain_size);
        if !ok {
            return Err(r.corrupt("counts that disagree with each other"));
        }
        if let Some(m) = &self.matrices {
            if m.num_inputs != self.num_inputs
                || m.num_witness != self.num_witness
                || (m.num_constraints + m.num_inputs).next_power_of_two() != self.domain_size
            {
                return Err(r.corrupt("matrices of other counts than the key's"));
            }
            m.check()
                .map_err(|e| r.corrupt(&format!("matrices: {e}")))?;
        }
        Ok(())
    }
}

/// Whether `kept` (B in G2's kept indices, if any) agrees with its layout's `stored` points
/// out of `all`: increasing indices below `all`, one a stored point; without them, every point.
fn kept_fits(kept: Option<&[u32]>, stored: usize, all: usize) -> bool {
    match kept {
        None => stored == all,
        Some(kept) => {
            kept.len() == stored
                && kept.windows(2).all(|w| w[0] < w[1])
                && kept.last().is_none_or(|&i| (i as usize) < all)
        }
    }
}

fn put_u64(w: &mut Vec<u8>, x: u64) {
    w.extend_from_slice(&x.to_le_bytes());
}

fn put_bytes(w: &mut Vec<u8>, b: &[u8]) {
    put_u64(w, b.len() as u64);
    w.extend_from_slice(b);
}

fn put_u32s(w: &mut Vec<u8>, v: &[u32]) {
    put_u64(w, v.len() as u64);
    w.reserve(4 * v.len());
    for x in v {
        w.extend_from_slice(&x.to_le_bytes());
    }
}

fn encode_matrices<F: PrimeField>(w: &mut Vec<u8>, m: &R1csMatrices<F>) {
    for n in [m.num_inputs, m.num_witness, m.num_constraints] {
        put_u64(w, n as u64);
    }
    for (rows, repeats) in m.m.iter().zip(&m.repeats) {
        for v in [
            &rows.starts,
            &rows.units,
            &rows.negs,
            &rows.cstarts,
            &rows.cols,
        ] {
            put_u32s(w, v);
        }
        let mut coeffs = Vec::new();
        let _ = rows.coeffs.serialize_uncompressed(&mut coeffs);
        put_bytes(w, &coeffs);
        put_bytes(w, repeats);
    }
}

fn encode_layout(w: &mut Vec<u8>, l: &BasesLayout) {
    put_bytes(w, l.curve.as_bytes());
    for n in [
        l.point_bytes,
        l.len as u64,
        l.sets as u64,
        l.sets_per_part as u64,
    ] {
        put_u64(w, n);
    }
    match l.fold {
        None => put_u64(w, 0),
        Some(f) => {
            put_u64(w, 1);
            for n in [f.window_bits, f.folds, f.fold_windows] {
                put_u64(w, n.into());
            }
        }
    }
    put_u64(w, l.parts.len() as u64);
    for &(start, len) in &l.parts {
        put_u64(w, start as u64);
        put_u64(w, len as u64);
    }
}

/// Bounds-checked reads from a header.
struct Reader<'a> {
    bytes: &'a [u8],
    path: &'a Path,
}

impl<'a> Reader<'a> {
    fn corrupt(&self, what: &str) -> CacheError {
        CacheError::Corrupt {
            path: self.path.to_owned(),
            what: format!("header: {what}"),
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], CacheError> {
        if n > self.bytes.len() {
            return Err(self.corrupt("ends early"));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn u64(&mut self) -> Result<u64, CacheError> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(b.try_into().unwrap_or_default()))
    }

    fn usize(&mut self) -> Result<usize, CacheError> {
        let x = self.u64()?;
        usize::try_from(x).map_err(|_| self.corrupt("a count past usize"))
    }

    fn u32(&mut self) -> Result<u32, CacheError> {
        let x = self.u64()?;
        u32::try_from(x).map_err(|_| self.corrupt("a value past u32"))
    }

    fn bytes(&mut self) -> Result<&'a [u8], CacheError> {
        let n = self.usize()?;
        self.take(n)
    }

    fn u32s(&mut self) -> Result<Vec<u32>, CacheError> {
        let n = self.usize()?;
        let raw = self.take(n.checked_mul(4).ok_or_else(|| self.corrupt("length"))?)?;
        Ok(raw
            .as_chunks::<4>()
            .0
            .iter()
            .map(|&c| u32::from_le_bytes(c))
            .collect())
    }
}

fn decode_matrices<F: PrimeField>(
    r: &mut Reader<'_>,
    qap: Qap,
) -> Result<R1csMatrices<F>, CacheError> {
    let (num_inputs, num_witness, num_constraints) = (r.usize()?, r.usize()?, r.usize()?);
    let mut rows = || -> Result<(SparseRows<F>, Vec<u8>), CacheError> {
        let (starts, units, negs, cstarts, cols) =
            (r.u32s()?, r.u32s()?, r.u32s()?, r.u32s()?, r.u32s()?);
        let mut raw = r.bytes()?;
        let coeffs = Vec::<F>::deserialize_uncompressed(&mut raw)
            .map_err(|e| r.corrupt(&format!("coefficients: {e}")))?;
        let repeats = r.bytes()?.to_vec();
        let rows = SparseRows {
            starts,
            units,
            negs,
            cstarts,
            cols,
            coeffs,
        };
        Ok((rows, repeats))
    };
    let ((a, ra), (b, rb), (c, rc)) = (rows()?, rows()?, rows()?);
    Ok(R1csMatrices {
        m: [a, b, c],
        repeats: [ra, rb, rc],
        num_inputs,
        num_witness,
        num_constraints,
        qap,
    })
}

fn decode_layout(r: &mut Reader<'_>) -> Result<BasesLayout, CacheError> {
    let curve = String::from_utf8_lossy(r.bytes()?).into_owned();
    let (point_bytes, len, sets, sets_per_part) = (r.u64()?, r.usize()?, r.usize()?, r.usize()?);
    let fold = match r.u64()? {
        0 => None,
        1 => Some(StoredFold {
            window_bits: r.u32()?,
            folds: r.u32()?,
            fold_windows: r.u32()?,
        }),
        x => return Err(r.corrupt(&format!("fold flag {x}"))),
    };
    let n = r.usize()?;
    if n > r.bytes.len() / 16 {
        return Err(r.corrupt("part count"));
    }
    let parts = (0..n)
        .map(|_| Ok((r.usize()?, r.usize()?)))
        .collect::<Result<_, CacheError>>()?;
    Ok(BasesLayout {
        curve,
        point_bytes,
        len,
        sets,
        sets_per_part,
        fold,
        parts,
    })
}

#[cfg(test)]
mod tests {
    use super::kept_fits;

    #[test]
    fn kept_indices_must_fit_their_layout() {
        assert!(kept_fits(None, 5, 5));
        assert!(!kept_fits(None, 4, 5));
        assert!(kept_fits(Some(&[0, 2, 4]), 3, 5));
        assert!(kept_fits(Some(&[]), 0, 5));
        // Another count than stored, not increasing, or past the key's variables.
        assert!(!kept_fits(Some(&[0, 2, 4]), 4, 5));
        assert!(!kept_fits(Some(&[0, 2, 2]), 3, 5));
        assert!(!kept_fits(Some(&[2, 0, 4]), 3, 5));
        assert!(!kept_fits(Some(&[0, 2, 5]), 3, 5));
    }
}
