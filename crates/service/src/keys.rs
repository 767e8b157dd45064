//! The key store: each registered `.zkey` as `keys/<id>.zkey` under the data directory, its
//! id the hex of its hash, so the same key uploaded twice is stored once.

use std::path::{Path, PathBuf};

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
        let key = zkgpu_circom::read_zkey_file(&part.path).map_err(ServiceError::of_key)?;
        let bytes = std::fs::metadata(&part.path)
            .map_err(|e| internal("cannot store the key", &e))?
            .len();
        if !path.exists() {
            std::fs::rename(&part.path, &path).map_err(|e| internal("cannot store the key", &e))?;
        }
        Ok(KeyInfo {
            id: id.to_owned(),
            curve: "bn254".into(),
            bytes: bytes as i64,
            constraints: key.num_constraints() as i64,
            signals: key.num_variables as i64,
            public_signals: key.num_public as i64,
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

fn internal(what: &str, e: &std::io::Error) -> ServiceError {
    ServiceError::new(ErrorCode::Internal, format!("{what}: {e}"))
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
