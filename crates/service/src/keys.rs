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

    /// Reads and checks a `.zkey` (every point and length, as the prover will), writes it
    /// under its id unless it is there, and returns its description.
    pub fn add(&self, zkey: &[u8]) -> Result<KeyInfo> {
        let key = zkgpu_circom::read_zkey(zkey).map_err(ServiceError::of_key)?;
        let id = Self::id_of(zkey);
        let path = self.path(&id)?;
        if !path.exists() {
            // Written beside, then renamed: a reader never sees half a key.
            let tmp = self
                .dir
                .join(format!("{id}.{}.part", crate::ids::random_id()));
            std::fs::write(&tmp, zkey)
                .and_then(|()| std::fs::rename(&tmp, &path))
                .map_err(|e| {
                    let _ = std::fs::remove_file(&tmp);
                    ServiceError::new(ErrorCode::Internal, format!("cannot store the key: {e}"))
                })?;
        }
        Ok(KeyInfo {
            id,
            curve: "bn254".into(),
            bytes: zkey.len() as i64,
            constraints: key.num_constraints() as i64,
            signals: key.num_variables as i64,
            public_signals: key.num_public as i64,
        })
    }

    /// The `.zkey` of `id`.
    pub fn read(&self, id: &str) -> Result<Vec<u8>> {
        let path = self.path(id)?;
        std::fs::read(&path).map_err(|e| {
            let code = if e.kind() == std::io::ErrorKind::NotFound {
                ErrorCode::UnknownKey
            } else {
                ErrorCode::Internal
            };
            ServiceError::new(code, format!("key {id}: {e}"))
        })
    }
}
