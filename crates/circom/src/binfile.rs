//! The sectioned binary container of circom's and snarkjs' files (`.zkey`, `.wtns`,
//! `.r1cs`, `.ptau`): a 4-byte magic, a `u32` version, a `u32` section count, then each
//! section as a `u32` type, a `u64` byte length and its bytes. Integers are little-endian.

use crate::error::CircomError;

/// A parsed container: the sections in file order, each a slice of the file.
#[derive(Debug)]
pub(crate) struct BinFile<'a> {
    file: &'static str,
    sections: Vec<(u32, &'a [u8])>,
}

impl<'a> BinFile<'a> {
    /// Parses the container of `bytes`, which must start with `magic` and have one of the
    /// `versions`; `file` names the kind in errors.
    pub(crate) fn parse(
        bytes: &'a [u8],
        magic: &[u8; 4],
        versions: &[u32],
        file: &'static str,
    ) -> Result<Self, CircomError> {
        let mut r = Reader::new(bytes, file, 0);
        let found = r.take(4)?;
        if found != magic {
            return Err(CircomError::format(
                file,
                format!(
                    "not a {} file (it starts with {:?}, not {:?})",
                    file,
                    String::from_utf8_lossy(found),
                    String::from_utf8_lossy(magic)
                ),
            ));
        }
        let version = r.u32()?;
        if !versions.contains(&version) {
            return Err(CircomError::Unsupported {
                file,
                what: format!("format version {version}; this reader knows {versions:?}"),
            });
        }
        let count = r.u32()?;
        let mut sections = Vec::new();
        for _ in 0..count {
            let kind = r.u32()?;
            let len = r.u64()?;
            let len = usize::try_from(len)
                .map_err(|_| CircomError::format(file, format!("section {kind} of {len} bytes")))?;
            sections.push((
                kind,
                r.take(len).map_err(|_| {
                    CircomError::format(
                        file,
                        format!("truncated: section {kind} needs {len} bytes, the file ends first"),
                    )
                })?,
            ));
        }
        Ok(Self { file, sections })
    }

    /// The first section of type `kind`.
    pub(crate) fn section(&self, kind: u32) -> Result<Reader<'a>, CircomError> {
        self.sections
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|&(_, data)| Reader::new(data, self.file, kind))
            .ok_or_else(|| CircomError::format(self.file, format!("section {kind} is missing")))
    }
}

/// Reads a section (or the file's head) front to back.
#[derive(Debug)]
pub(crate) struct Reader<'a> {
    data: &'a [u8],
    at: usize,
    file: &'static str,
    section: u32,
}

impl<'a> Reader<'a> {
    fn new(data: &'a [u8], file: &'static str, section: u32) -> Self {
        Self {
            data,
            at: 0,
            file,
            section,
        }
    }

    /// Bytes not read yet.
    pub(crate) fn remaining(&self) -> usize {
        self.data.len() - self.at
    }

    /// The section's type.
    pub(crate) fn section(&self) -> u32 {
        self.section
    }

    /// The next `n` bytes.
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], CircomError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.data.len());
        let Some(end) = end else {
            return Err(self.error(format!(
                "ends after {} bytes, {} more needed",
                self.data.len(),
                n - (self.data.len() - self.at)
            )));
        };
        let s = &self.data[self.at..end];
        self.at = end;
        Ok(s)
    }

    pub(crate) fn u32(&mut self) -> Result<u32, CircomError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, CircomError> {
        let b = self.take(8)?;
        let mut w = [0u8; 8];
        w.copy_from_slice(b);
        Ok(u64::from_le_bytes(w))
    }

    /// A `u32` count or index as `usize`.
    pub(crate) fn usize(&mut self) -> Result<usize, CircomError> {
        Ok(self.u32()? as usize)
    }

    /// The rest of the section, which must be exactly `count` items of `size` bytes (counts
    /// come from the file: their product is checked, never trusted).
    pub(crate) fn rest_exactly(
        &mut self,
        count: usize,
        size: usize,
    ) -> Result<&'a [u8], CircomError> {
        let left = self.data.len() - self.at;
        match count.checked_mul(size) {
            Some(n) if n == left => self.take(n),
            _ => Err(self.error(format!(
                "holds {left} bytes, not {count} items of {size} bytes"
            ))),
        }
    }

    /// An error about this section.
    pub(crate) fn error(&self, what: String) -> CircomError {
        let place = if self.section == 0 {
            "the header".to_string()
        } else {
            format!("section {}", self.section)
        };
        CircomError::format(self.file, format!("{place} {what}"))
    }
}
