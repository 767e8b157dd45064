//! The key store: each registered `.zkey` (BN254 or BLS12-381) as `keys/<id>.zkey` under the
//! data directory, its id the hex of its hash, so the same key uploaded twice is stored once.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use ark_bls12_381::Bls12_381;
use ark_bn254::Bn254;
use zkgpu_circom::{CircomCurve, CircomError, Curve};

use crate::db::KeyInfo;
use crate::error::{ErrorCode, Result, ServiceError};
use crate::ids::{check_key_id, hex};

/// The `.zkey` files of the registered keys.
#[derive(Clone, Debug)]
pub struct KeyStore {
    dir: PathBuf,
}

impl KeyStore {
    /// The store under `data` (its `keys` folder, made if missing).
    pub fn open(data: &Path) -> Result<Self> {
        let dir = data.join("keys");
        std::fs::create_dir_all(&dir).map_err(|e| {
            ServiceError::new(
                ErrorCode::Internal,
                format!("cannot make {}: {e}", dir.display()),
            )
        })?;
        // Uploads an earlier API process was killed in the middle of.
        let gone = sweep_parts(&dir, STALE_PART, |n| {
            n.starts_with("upload.") && n.ends_with(".part")
        });
        if gone > 0 {
            tracing::info!(dir = %dir.display(), "removed {gone} unfinished uploads");
        }
        Ok(Self { dir })
    }

    /// The id a `.zkey` is registered under: the hex of its hash.
    pub fn id_of(zkey: &[u8]) -> String {
        hex(&zkgpu_circom::zkey_hash(zkey))
    }

    fn path(&self, id: &str) -> Result<PathBuf> {
        check_key_id(id)?;
        Ok(self.dir.join(format!("{id}.zkey")))
    }

    /// A new part file for an upload, removed when dropped unless it became a key.
    pub(crate) fn part(&self) -> PartFile {
        PartFile::new(
            self.dir
                .join(format!("upload.{}.part", crate::ids::random_id())),
        )
    }

    /// Registers the uploaded part file `part`, whose hash is `id`: the `.zkey` is read one
    /// section at a time and checked (every point and length, as the prover will), then
    /// renamed to the key's file unless it is there, so a reader never sees half a key. A
    /// refused key's part is removed.
    pub(crate) fn add_part(&self, part: PartFile, id: &str) -> Result<KeyInfo> {
        let path = self.path(id)?;
        let curve = zkgpu_circom::zkey_file_curve(&part.path).map_err(ServiceError::of_key)?;
        let counts = match curve {
            Curve::Bn254 => counts::<Bn254>(&part.path),
            Curve::Bls12_381 => counts::<Bls12_381>(&part.path),
        }
        .map_err(ServiceError::of_key)?;
        let bytes = std::fs::metadata(&part.path)
            .map_err(|e| internal("cannot store the key", &e))?
            .len();
        if !path.exists() {
            std::fs::rename(&part.path, &path).map_err(|e| internal("cannot store the key", &e))?;
        }
        let [constraints, signals, public_signals] = counts.map(|n| n as i64);
        Ok(KeyInfo {
            id: id.to_owned(),
            curve: curve.name().into(),
            bytes: bytes as i64,
            constraints,
            signals,
            public_signals,
        })
    }

    /// The file of the `.zkey` of `id` (which must be there).
    pub fn file(&self, id: &str) -> Result<PathBuf> {
        let path = self.path(id)?;
        if !path.is_file() {
            return Err(ServiceError::new(
                ErrorCode::UnknownKey,
                format!("key {id}: no file {}", path.display()),
            ));
        }
        Ok(path)
    }
}

/// The key at `path` read over `E` (every point and length checked): its constraints,
/// signals and public signals.
fn counts<E: CircomCurve>(path: &Path) -> Result<[usize; 3], CircomError> {
    let key = zkgpu_circom::read_zkey_file::<E>(path)?;
    Ok([key.num_constraints(), key.num_variables, key.num_public])
}

fn internal(what: &str, e: &std::io::Error) -> ServiceError {
    ServiceError::new(ErrorCode::Internal, format!("{what}: {e}"))
}

/// How long a part file goes unwritten before a starting store or worker takes it for the
/// remains of a killed process and removes it (a live upload or download writes to it all
/// along).
pub(crate) const STALE_PART: Duration = Duration::from_secs(3600);

/// Removes the files of `dir` whose names `is_part` accepts and that nothing has written to
/// for `age`; returns how many. A folder that cannot be listed, or a file that cannot be
/// removed, is left as it is (the next start tries again).
pub(crate) fn sweep_parts(dir: &Path, age: Duration, is_part: impl Fn(&str) -> bool) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let now = SystemTime::now();
    let mut gone = 0;
    for entry in entries.flatten() {
        if !is_part(&entry.file_name().to_string_lossy()) {
            continue;
        }
        let idle = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok());
        if idle.is_some_and(|d| d >= age) {
            gone += usize::from(std::fs::remove_file(entry.path()).is_ok());
        }
    }
    gone
}

/// A file being written (an upload, a download), removed when dropped (after a rename
/// there is nothing left to remove).
#[derive(Debug)]
pub(crate) struct PartFile {
    path: PathBuf,
}

impl PartFile {
    pub(crate) fn new(path: PathBuf) -> Self {
        Self { path }
    }

    /// The file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for PartFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_parts_are_swept_and_live_ones_kept() {
        let dir = std::env::temp_dir().join(format!("zkgpu-parts-{}", crate::ids::random_id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = |name: &str, idle: Duration| {
            let path = dir.join(name);
            std::fs::write(&path, b"x").unwrap();
            let f = std::fs::File::options().write(true).open(&path).unwrap();
            f.set_modified(SystemTime::now() - idle).unwrap();
            path
        };
        let hour = Duration::from_secs(3600);
        let stale = file("upload.a.part", 2 * hour);
        let live = file("upload.b.part", Duration::ZERO);
        let key = file("0123.zkey", 2 * hour);
        let is_upload = |n: &str| n.starts_with("upload.") && n.ends_with(".part");
        assert_eq!(sweep_parts(&dir, hour, is_upload), 1);
        assert!(!stale.exists() && live.exists() && key.exists());
        // A store opened over the folder's parent sweeps the same way.
        let data = std::env::temp_dir().join(format!("zkgpu-keys-{}", crate::ids::random_id()));
        std::fs::create_dir_all(&data).unwrap();
        std::fs::rename(&dir, data.join("keys")).unwrap();
        let old = data.join("keys").join("upload.c.part");
        std::fs::write(&old, b"x").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&old)
            .unwrap()
            .set_modified(SystemTime::now() - 2 * hour)
            .unwrap();
        KeyStore::open(&data).unwrap();
        assert!(!old.exists());
        assert!(data.join("keys").join("upload.b.part").exists());
        assert_eq!(sweep_parts(&data.join("missing"), hour, is_upload), 0);
        std::fs::remove_dir_all(&data).unwrap();
    }
}
