//! `zkgpu prove`'s files: arkworks proving keys (made by the setup from a fixed seed), the
//! hash that names each one's prepared form, and the cache directory.

use std::fs;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};

use ark_groth16::ProvingKey;
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};
use zkgpu_groth16::GpuPairing;

type BoxError = Box<dyn std::error::Error>;

/// Where proving keys are cached: `explicit`, else `$ZKGPU_CACHE`, `$XDG_CACHE_HOME/zkgpu`,
/// `~/.cache/zkgpu`.
pub fn cache_dir(explicit: Option<&Path>) -> Option<PathBuf> {
    if let Some(d) = explicit {
        return Some(d.to_owned());
    }
    if let Some(d) = std::env::var_os("ZKGPU_CACHE") {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return Some(PathBuf::from(d).join("zkgpu"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("zkgpu"))
}

/// Context options from the environment, with wgpu's pipeline cache (and what the engines
/// measure on the device: the arithmetics' rates, the MSM planner's constants) kept under
/// `dir/pipelines` unless `ZKGPU_PIPELINE_CACHE` names another directory.
pub fn context_options(
    dir: Option<&Path>,
) -> Result<zkgpu_runtime::ContextOptions, zkgpu_runtime::GpuError> {
    let mut opts = zkgpu_runtime::ContextOptions::from_env()?;
    if opts.pipeline_cache_dir.is_none() {
        opts.pipeline_cache_dir = dir.map(|d| d.join("pipelines"));
    }
    Ok(opts)
}

/// The files of one benchmark key: the arkworks key and its hash beside it.
#[derive(Debug)]
pub struct KeyFiles {
    pub key: PathBuf,
    hash: PathBuf,
}

impl KeyFiles {
    pub fn new(dir: &Path, curve: &str, circuit: &str, k: u32) -> Self {
        let key = dir.join(format!("groth16-{curve}-{circuit}-2^{k}-v1.pk"));
        let hash = key.with_extension("pk.blake3");
        Self { key, hash }
    }

    /// The arkworks key, if its file is there and reads.
    pub fn load<E: GpuPairing>(&self) -> Option<ProvingKey<E>> {
        let file = fs::File::open(&self.key).ok()?;
        // The cache is ours; the points were checked when the key was made.
        ProvingKey::<E>::deserialize_uncompressed_unchecked(BufReader::new(file)).ok()
    }

    /// Writes the arkworks key and its hash (temporary files renamed).
    pub fn store<E: GpuPairing>(
        &self,
        pk: &ProvingKey<E>,
        hash: &[u8; 32],
    ) -> Result<(), BoxError> {
        if let Some(dir) = self.key.parent() {
            fs::create_dir_all(dir)?;
        }
        let tmp = self
            .key
            .with_extension(format!("tmp{}", std::process::id()));
        {
            let mut w = BufWriter::new(fs::File::create(&tmp)?);
            pk.serialize_uncompressed(&mut w)?;
        }
        fs::rename(&tmp, &self.key)?;
        self.store_hash(hash)
    }

    /// Writes the key's hash (names its prepared form without reading the key).
    pub fn store_hash(&self, hash: &[u8; 32]) -> Result<(), BoxError> {
        fs::write(&self.hash, hex(hash))?;
        Ok(())
    }

    /// The key's hash, if recorded.
    pub fn hash(&self) -> Option<[u8; 32]> {
        let text = fs::read_to_string(&self.hash).ok()?;
        let text = text.trim();
        if text.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, b) in out.iter_mut().enumerate() {
            *b = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
        }
        Some(out)
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
