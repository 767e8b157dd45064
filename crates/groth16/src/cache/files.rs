//! The prepared-key files of a cache directory: listed, and pruned to a size by least
//! recent use (a file's modification time is set each time it is loaded).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// One prepared-key file.
#[derive(Clone, Debug)]
pub struct CacheEntry {
    /// Its path.
    pub path: PathBuf,
    /// Its size.
    pub bytes: u64,
    /// When it was last written or loaded.
    pub last_used: SystemTime,
}

/// The prepared-key files (`*.zkgpk`) under `dir`, most recently used first; none when the
/// directory does not exist.
pub fn cache_entries(dir: &Path) -> std::io::Result<Vec<CacheEntry>> {
    let read = match std::fs::read_dir(dir) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for entry in read {
        let entry = entry?;
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "zkgpk") {
            continue;
        }
        let meta = entry.metadata()?;
        if meta.is_file() {
            out.push(CacheEntry {
                path,
                bytes: meta.len(),
                last_used: meta.modified()?,
            });
        }
    }
    out.sort_by_key(|e| std::cmp::Reverse(e.last_used));
    Ok(out)
}

/// Deletes the least recently used prepared-key files under `dir` until the rest take at
/// most `max_bytes`; returns the deleted ones.
pub fn prune_cache(dir: &Path, max_bytes: u64) -> std::io::Result<Vec<CacheEntry>> {
    let entries = cache_entries(dir)?;
    let mut kept = 0u64;
    let mut removed = Vec::new();
    for e in entries {
        if kept + e.bytes <= max_bytes {
            kept += e.bytes;
            continue;
        }
        match std::fs::remove_file(&e.path) {
            Ok(()) => removed.push(e),
            // Pruned by another process meanwhile.
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => return Err(err),
        }
    }
    Ok(removed)
}

/// Marks a file used now (best effort: a read-only cache still loads).
pub(crate) fn touch(path: &Path) {
    if let Ok(f) = std::fs::File::options().write(true).open(path) {
        let _ = f.set_modified(SystemTime::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::unwrap_used)]
    fn prunes_least_recently_used() {
        let dir = std::env::temp_dir().join(format!("zkgpu-cache-prune-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let t0 = SystemTime::now() - std::time::Duration::from_secs(100);
        for (i, name) in ["a.zkgpk", "b.zkgpk", "c.zkgpk", "other.txt"]
            .iter()
            .enumerate()
        {
            let p = dir.join(name);
            std::fs::write(&p, vec![0u8; 1000]).unwrap();
            let f = std::fs::File::options().write(true).open(&p).unwrap();
            f.set_modified(t0 + std::time::Duration::from_secs(10 * i as u64))
                .unwrap();
        }
        // a is the oldest; using it makes b the oldest.
        touch(&dir.join("a.zkgpk"));
        let listed: Vec<_> = cache_entries(&dir)
            .unwrap()
            .into_iter()
            .map(|e| e.path)
            .collect();
        assert_eq!(
            listed,
            ["a", "c", "b"].map(|n| dir.join(format!("{n}.zkgpk")))
        );
        let removed = prune_cache(&dir, 2500).unwrap();
        assert_eq!(removed.len(), 1);
        assert_eq!(removed[0].path, dir.join("b.zkgpk"));
        assert!(dir.join("other.txt").exists() && dir.join("a.zkgpk").exists());
        assert_eq!(prune_cache(&dir, 0).unwrap().len(), 2);
        assert!(cache_entries(&dir).unwrap().is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
