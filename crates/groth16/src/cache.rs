//! Prepared keys on disk: the bases in their GPU form (window multiples included), the
//! key's few CPU-side points and the circuit's matrices, in one file checked block by block
//! as it is read straight into the GPU's upload staging memory.
//!
//! Layout (integers little-endian):
//!
//! ```text
//! magic "ZKGPUPK\x01" | header length u64 | blake3(header) | header | zeros to 4096 | parts
//! ```
//!
//! The header (`layout.rs`'s order) holds the format version, the pairing, the proving
//! key's [`key_hash`], its counts and points, the matrices if known, and for the three base
//! vectors (A, B in G1 and L; B in G2; H) their layout and a blake3 digest of every
//! [`BLOCK`] bytes of every part. Parts follow, each from a multiple of 4096.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

use ark_ec::pairing::Pairing;
use ark_groth16::{ProvingKey, prepare_verifying_key};
use ark_serialize::CanonicalSerialize;
use rayon::prelude::*;
use zkgpu_curves::GpuCurve;
use zkgpu_msm::{BasesLayout, GpuMsm, PreparedBases};

use crate::error::{CacheError, ProveError};
use ark_relations::gr1cs::ConstraintSynthesizer;

use crate::key::{GpuPairing, PreparedProvingKey, check_counts, circuit_matrices};
use crate::matrices::R1csMatrices;
use crate::prover::GpuProver;

mod files;
mod format;

pub use files::{CacheEntry, cache_entries, prune_cache};

use format::{Header, MAGIC, PREFIX};

/// Bytes per checked block of a part.
pub(crate) const BLOCK: usize = 64 << 10;
/// Parts start at multiples of this.
const ALIGN: u64 = 4096;

/// What [`GpuProver::prepare_cached`] did.
#[derive(Debug)]
pub enum CacheOutcome {
    /// The key was loaded from this file.
    Loaded(PathBuf),
    /// No file was there: the key was prepared and written to this file.
    Created(PathBuf),
    /// The file was loaded, then written again with the circuit's matrices it lacked.
    Updated(PathBuf),
    /// The file was refused (why), and the key was prepared and written over it.
    Replaced(PathBuf, CacheError),
    /// The key was prepared, but writing the file failed (why): the next process prepares
    /// it again.
    NotStored(PathBuf, CacheError),
}

/// A blake3 hash of everything in `pk` (its verifying key and every query vector, in
/// arkworks' uncompressed serialization), computed in parallel chunks: what names a key's
/// cache file and what a loaded file must match.
pub fn key_hash<E: Pairing>(pk: &ProvingKey<E>) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(b"zkgpu groth16 proving key, blake3 of 4096-point chunks, v1");
    let mut small = Vec::new();
    // Serializing into a vector cannot fail.
    let _ = (&pk.vk, &pk.beta_g1, &pk.delta_g1).serialize_uncompressed(&mut small);
    h.update(&(small.len() as u64).to_le_bytes());
    h.update(&small);
    hash_points(&mut h, &pk.a_query);
    hash_points(&mut h, &pk.b_g1_query);
    hash_points(&mut h, &pk.b_g2_query);
    hash_points(&mut h, &pk.h_query);
    hash_points(&mut h, &pk.l_query);
    *h.finalize().as_bytes()
}

fn hash_points<P: CanonicalSerialize + Sync>(h: &mut blake3::Hasher, points: &[P]) {
    h.update(&(points.len() as u64).to_le_bytes());
    let chunks: Vec<[u8; 32]> = points
        .par_chunks(4096)
        .map(|c| {
            let mut buf = Vec::with_capacity(c.len() * 200);
            for p in c {
                let _ = p.serialize_uncompressed(&mut buf);
            }
            *blake3::hash(&buf).as_bytes()
        })
        .collect();
    for d in &chunks {
        h.update(d);
    }
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl<E: GpuPairing> GpuProver<E> {
    /// The file [`GpuProver::prepare_cached`] keeps `pk`'s prepared form in under `dir`: its
    /// name holds the pairing, the key's hash, and what shapes the stored layout on this
    /// device (the key layout, the binding limit).
    pub fn cache_file(&self, dir: &Path, key_hash: &[u8; 32]) -> PathBuf {
        dir.join(format!(
            "{}-{}-{}-b{}.zkgpk",
            E::NAME,
            hex(&key_hash[..16]),
            self.key_layout().tag(),
            self.ctx.max_binding_bytes() >> 20
        ))
    }

    /// `pk` prepared, from its cache file under `dir` when one is there and passes every
    /// check, else by [`GpuProver::prepare`] and then written there (atomically: a temporary
    /// file renamed). A refused file is replaced; the outcome says what happened. The
    /// circuit's matrices are stored once a proof has taught them to the key and the key is
    /// saved again ([`GpuProver::save_prepared`]), or use [`GpuProver::prepare_cached_for`].
    pub fn prepare_cached(
        &self,
        pk: &ProvingKey<E>,
        dir: &Path,
    ) -> Result<(PreparedProvingKey<E>, CacheOutcome), ProveError> {
        self.cached(pk, dir, None)
    }

    /// [`GpuProver::prepare_cached`] with the circuit's matrices stored in the file: from
    /// the file when it has them, else from a setup-mode synthesis of `circuit`
    /// ([`GpuProver::prepare_for`]), after which the file is written with them.
    pub fn prepare_cached_for<C>(
        &self,
        pk: &ProvingKey<E>,
        circuit: C,
        dir: &Path,
    ) -> Result<(PreparedProvingKey<E>, CacheOutcome), ProveError>
    where
        C: ConstraintSynthesizer<E::ScalarField>,
    {
        let matrices = move || circuit_matrices::<E>(circuit);
        self.cached(pk, dir, Some(Box::new(matrices)))
    }

    /// A key prepared with its matrices ([`GpuProver::prepare_with_matrices`]), kept under
    /// `dir` by a hash the caller computes from the key's source (`hash`; for instance of a
    /// snarkjs `.zkey`'s bytes, so that a hit reads no key at all): loaded from the file when
    /// it holds matrices and passes every check, else `make` gives the key and its matrices,
    /// which are prepared and written there.
    pub fn prepare_cached_by_hash(
        &self,
        hash: [u8; 32],
        dir: &Path,
        make: impl FnOnce() -> Result<(ProvingKey<E>, R1csMatrices<E::ScalarField>), ProveError>,
    ) -> Result<(PreparedProvingKey<E>, CacheOutcome), ProveError> {
        let path = self.cache_file(dir, &hash);
        let mut refused = None;
        if path.exists() {
            match self.load_prepared(&path, Some(&hash)) {
                Ok(p) if p.matrices().is_some() => {
                    files::touch(&path);
                    return Ok((p, CacheOutcome::Loaded(path)));
                }
                Ok(_) => {}
                Err(ProveError::Cache(e)) => refused = Some(e),
                Err(e) => return Err(e),
            }
        }
        let (pk, m) = make()?;
        let mut prepared = self.prepare_with_matrices(&pk, m)?;
        prepared.key_hash = Some(hash);
        let outcome = match (self.save_prepared(&prepared, &path), refused) {
            (Ok(()), None) => CacheOutcome::Created(path),
            (Ok(()), Some(e)) => CacheOutcome::Replaced(path, e),
            (Err(ProveError::Cache(e)), _) => CacheOutcome::NotStored(path, e),
            (Err(e), _) => return Err(e),
        };
        Ok((prepared, outcome))
    }

    #[allow(clippy::type_complexity)]
    fn cached(
        &self,
        pk: &ProvingKey<E>,
        dir: &Path,
        matrices: Option<
            Box<dyn FnOnce() -> Result<R1csMatrices<E::ScalarField>, ProveError> + '_>,
        >,
    ) -> Result<(PreparedProvingKey<E>, CacheOutcome), ProveError> {
        let hash = key_hash(pk);
        let path = self.cache_file(dir, &hash);
        let mut refused = None;
        let mut loaded = None;
        if path.exists() {
            match self.load_prepared(&path, Some(&hash)) {
                Ok(p) => loaded = Some(p),
                Err(ProveError::Cache(e)) => refused = Some(e),
                Err(e) => return Err(e),
            }
        }
        let updated = loaded.is_some();
        let prepared = match loaded {
            Some(p) if p.matrices().is_some() || matrices.is_none() => {
                files::touch(&path);
                return Ok((p, CacheOutcome::Loaded(path)));
            }
            Some(p) => p,
            None => {
                let mut p = self.prepare(pk)?;
                p.key_hash = Some(hash);
                p
            }
        };
        if let Some(m) = matrices {
            let m = m()?;
            check_counts(&prepared, m.num_inputs, m.num_witness, m.num_constraints)?;
            prepared.learn_matrices(m);
        }
        let outcome = match (self.save_prepared(&prepared, &path), refused) {
            (Ok(()), None) if updated => CacheOutcome::Updated(path),
            (Ok(()), None) => CacheOutcome::Created(path),
            (Ok(()), Some(e)) => CacheOutcome::Replaced(path, e),
            (Err(ProveError::Cache(e)), _) => CacheOutcome::NotStored(path, e),
            (Err(e), _) => return Err(e),
        };
        Ok((prepared, outcome))
    }

    /// Writes `prepared` to `path` (a temporary file beside it, renamed when complete):
    /// its bases read back from the GPU part by part, its matrices if it has them. A key
    /// without a [`PreparedProvingKey::key_hash`] gets the zero hash (it then loads only
    /// where no hash is expected).
    pub fn save_prepared(
        &self,
        prepared: &PreparedProvingKey<E>,
        path: &Path,
    ) -> Result<(), ProveError> {
        prepared.check_context(&self.ctx)?;
        let io = |source| CacheError::Io {
            path: path.to_owned(),
            source,
        };
        let mut header = Header::of(prepared);
        let data_at = header.encode().len() as u64 + PREFIX;
        let data_at = data_at.next_multiple_of(ALIGN);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let result = (|| -> Result<(), ProveError> {
            let file = File::create(&tmp).map_err(io)?;
            let mut at = data_at;
            let mut digests = Vec::new();
            at = write_parts(&self.g1, &prepared.a_b_l, &file, at, &mut digests, path)?;
            at = write_parts(&self.g2, &prepared.b_g2, &file, at, &mut digests, path)?;
            write_parts(&self.g1, &prepared.h, &file, at, &mut digests, path)?;
            header.digests = digests;
            let bytes = header.encode();
            let mut head = Vec::with_capacity(PREFIX as usize + bytes.len());
            head.extend_from_slice(MAGIC);
            head.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            head.extend_from_slice(format::digest(&bytes).as_bytes());
            head.extend_from_slice(&bytes);
            file.write_all_at(&head, 0).map_err(io)?;
            file.set_len(header.data_end(data_at)).map_err(io)?;
            file.sync_all().map_err(io)?;
            std::fs::rename(&tmp, path).map_err(io)?;
            Ok(())
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }

    /// The prepared key stored in `path` by [`GpuProver::save_prepared`], checked whole
    /// before it is used: the header's digest, the format version, the pairing, the key's
    /// hash (when `expect` gives one), the matrices' structure, the layouts against this
    /// device, and every block of every part against its digest as it is uploaded. Any
    /// failure is a [`CacheError`] and nothing of the file is kept.
    pub fn load_prepared(
        &self,
        path: &Path,
        expect: Option<&[u8; 32]>,
    ) -> Result<PreparedProvingKey<E>, ProveError> {
        let io = |source| CacheError::Io {
            path: path.to_owned(),
            source,
        };
        let mut file = File::open(path).map_err(io)?;
        let file_len = file.metadata().map_err(io)?.len();
        let bytes = format::read_header(&mut file, file_len, path)?;
        let header = Header::<E>::decode(&bytes, path)?;
        let foreign = |what: String| CacheError::Foreign {
            path: path.to_owned(),
            what,
        };
        if let Some(want) = expect
            && &header.key_hash != want
        {
            return Err(foreign(format!(
                "it holds the key {}, not {}",
                hex(&header.key_hash[..16]),
                hex(&want[..16])
            ))
            .into());
        }
        let data_at = (PREFIX + bytes.len() as u64).next_multiple_of(ALIGN);
        let need = header.data_end(data_at);
        if need != file_len {
            return Err(CacheError::Corrupt {
                path: path.to_owned(),
                what: format!("{file_len} bytes where the header describes {need}"),
            }
            .into());
        }
        let mut reader = PartReader {
            file: &file,
            path,
            at: data_at,
            digests: &header.digests,
            error: Mutex::new(None),
        };
        let a_b_l = reader.restore(&self.g1, &header.layouts[0])?;
        let b_g2 = reader.restore(&self.g2, &header.layouts[1])?;
        let h = reader.restore(&self.g1, &header.layouts[2])?;
        let matrices = OnceLock::new();
        if let Some(m) = header.matrices {
            let _ = matrices.set(m);
        }
        Ok(PreparedProvingKey {
            a_b_l,
            b_g2,
            b_g2_kept: header.b_g2_kept,
            h,
            pvk: prepare_verifying_key(&header.vk),
            points: header.points,
            num_inputs: header.num_inputs,
            num_witness: header.num_witness,
            domain_size: header.domain_size,
            qap: header.qap,
            key_hash: Some(header.key_hash),
            matrices,
        })
    }
}

/// Reads each part of `bases` back from the GPU and writes it at `at` (then the next
/// multiple of [`ALIGN`]), appending its block digests; returns where the next part goes.
fn write_parts<C: GpuCurve>(
    msm: &GpuMsm<C>,
    bases: &PreparedBases<C>,
    file: &File,
    mut at: u64,
    digests: &mut Vec<[u8; 32]>,
    path: &Path,
) -> Result<u64, ProveError> {
    let layout = bases.layout();
    for k in 0..layout.parts.len() {
        let mut buf = vec![0u8; layout.part_bytes(k) as usize];
        pollster::block_on(msm.read_bases_part(bases, k, &mut buf))?;
        digests.extend(
            buf.par_chunks(BLOCK)
                .map(|b| *format::digest(b).as_bytes())
                .collect::<Vec<_>>(),
        );
        file.write_all_at(&buf, at)
            .map_err(|source| CacheError::Io {
                path: path.to_owned(),
                source,
            })?;
        at = (at + buf.len() as u64).next_multiple_of(ALIGN);
    }
    Ok(at)
}

/// Reads parts from the file into upload staging memory, checking each block's digest.
struct PartReader<'a> {
    file: &'a File,
    path: &'a Path,
    /// Where the next part starts in the file.
    at: u64,
    /// Digests of the blocks not yet read, in order.
    digests: &'a [[u8; 32]],
    /// The first failure of a block (the fill cannot return one).
    error: Mutex<Option<CacheError>>,
}

impl PartReader<'_> {
    fn restore<C: GpuCurve>(
        &mut self,
        msm: &GpuMsm<C>,
        layout: &BasesLayout,
    ) -> Result<PreparedBases<C>, ProveError> {
        let blocks: Vec<usize> = (0..layout.parts.len())
            .map(|k| (layout.part_bytes(k) as usize).div_ceil(BLOCK))
            .collect();
        let mut starts = Vec::with_capacity(blocks.len());
        let (mut at, mut first) = (self.at, 0usize);
        for (k, &n) in blocks.iter().enumerate() {
            starts.push((at, first));
            at = at
                .saturating_add(layout.part_bytes(k))
                .saturating_add(ALIGN - 1)
                / ALIGN
                * ALIGN;
            first += n;
        }
        let (file, path, digests, error) = (self.file, self.path, self.digests, &self.error);
        let fill = |k: usize, off: usize, block: &mut [u8]| {
            let (part_at, first) = starts[k];
            let fail = |e: CacheError| {
                error
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .get_or_insert(e);
            };
            if let Err(source) = file.read_exact_at(block, part_at + off as u64) {
                return fail(CacheError::Io {
                    path: path.to_owned(),
                    source,
                });
            }
            let want = digests.get(first + off / BLOCK);
            if want != Some(format::digest(block).as_bytes()) {
                fail(CacheError::Corrupt {
                    path: path.to_owned(),
                    what: format!("block {} of a {} part", off / BLOCK, layout.curve),
                });
            }
        };
        let bases = msm
            .restore_bases(layout, BLOCK, fill)
            .map_err(|e| match e {
                // A layout this device cannot hold (or that no engine makes).
                zkgpu_msm::MsmError::Config(what) => ProveError::from(CacheError::Foreign {
                    path: path.to_owned(),
                    what,
                }),
                e => ProveError::Msm(e),
            })?;
        if let Some(e) = self
            .error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            return Err(e.into());
        }
        self.at = at;
        self.digests = &self.digests[first..];
        Ok(bases)
    }
}
