//! The sectioned binary container of circom's and snarkjs' files (`.zkey`, `.wtns`,
//! `.r1cs`, `.ptau`): a 4-byte magic, a `u32` version, a `u32` section count, then each
//! section as a `u32` type, a `u64` byte length and its bytes. Integers are little-endian.

use std::borrow::Cow;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::error::CircomError;

/// Where a container's bytes are: `n` bytes at an offset, the caller having checked the
/// container's length.
type ReadAt<'r> = &'r mut dyn FnMut(u64, &mut [u8]) -> Result<(), CircomError>;

/// Walks the head and the section table of a container of `total` bytes: each section's
/// type, offset and length, in file order, each checked to end within the container.
fn walk(
    total: u64,
    read_at: ReadAt<'_>,
    magic: &[u8; 4],
    versions: &[u32],
    file: &'static str,
) -> Result<Vec<(u32, u64, u64)>, CircomError> {
    let head = |at: u64, n: u64| -> Result<(), CircomError> {
        match (at + n).checked_sub(total) {
            Some(more) if more > 0 => Err(CircomError::format(
                file,
                format!("the header ends after {total} bytes, {more} more needed"),
            )),
            _ => Ok(()),
        }
    };
    let mut word = |at: u64, buf: &mut [u8]| -> Result<(), CircomError> {
        head(at, buf.len() as u64)?;
        read_at(at, buf)
    };
    let mut found = [0u8; 4];
    word(0, &mut found)?;
    if &found != magic {
        return Err(CircomError::format(
            file,
            format!(
                "not a {} file (it starts with {:?}, not {:?})",
                file,
                String::from_utf8_lossy(&found),
                String::from_utf8_lossy(magic)
            ),
        ));
    }
    let mut w4 = [0u8; 4];
    word(4, &mut w4)?;
    let version = u32::from_le_bytes(w4);
    if !versions.contains(&version) {
        return Err(CircomError::Unsupported {
            file,
            what: format!("format version {version}; this reader knows {versions:?}"),
        });
    }
    word(8, &mut w4)?;
    let count = u32::from_le_bytes(w4);
    let mut at = 12u64;
    let mut sections = Vec::new();
    for _ in 0..count {
        let mut entry = [0u8; 12];
        word(at, &mut entry)?;
        let kind = u32::from_le_bytes([entry[0], entry[1], entry[2], entry[3]]);
        let mut l = [0u8; 8];
        l.copy_from_slice(&entry[4..]);
        let len = u64::from_le_bytes(l);
        if usize::try_from(len).is_err() {
            return Err(CircomError::format(
                file,
                format!("section {kind} of {len} bytes"),
            ));
        }
        let start = at + 12;
        match start.checked_add(len) {
            Some(end) if end <= total => at = end,
            _ => {
                return Err(CircomError::format(
                    file,
                    format!("truncated: section {kind} needs {len} bytes, the file ends first"),
                ));
            }
        }
        sections.push((kind, start, len));
    }
    Ok(sections)
}

/// The sections of a container, wherever its bytes are.
pub(crate) trait Sections {
    /// The first section of type `kind`, to be read front to back.
    fn section(&mut self, kind: u32) -> Result<Section<'_>, CircomError>;
}

/// One section's bytes: borrowed from a container in memory, or read from its file.
pub(crate) struct Section<'a> {
    data: Cow<'a, [u8]>,
    file: &'static str,
    kind: u32,
}

impl Section<'_> {
    /// A reader of the section's bytes.
    pub(crate) fn reader(&self) -> Reader<'_> {
        Reader::new(&self.data, self.file, self.kind)
    }
}

fn missing(file: &'static str, kind: u32) -> CircomError {
    CircomError::format(file, format!("section {kind} is missing"))
}

/// A parsed container in memory: the sections in file order, each a slice of the file.
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
        let mut copy = |at: u64, buf: &mut [u8]| {
            let at = at as usize;
            buf.copy_from_slice(&bytes[at..at + buf.len()]);
            Ok(())
        };
        let table = walk(bytes.len() as u64, &mut copy, magic, versions, file)?;
        let sections = table
            .into_iter()
            .map(|(kind, at, len)| (kind, &bytes[at as usize..(at + len) as usize]))
            .collect();
        Ok(Self { file, sections })
    }

    /// The bytes of the first section of type `kind`.
    fn bytes(&self, kind: u32) -> Result<&'a [u8], CircomError> {
        self.sections
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|&(_, data)| data)
            .ok_or_else(|| missing(self.file, kind))
    }

    /// The first section of type `kind`.
    pub(crate) fn section(&self, kind: u32) -> Result<Reader<'a>, CircomError> {
        Ok(Reader::new(self.bytes(kind)?, self.file, kind))
    }
}

impl Sections for BinFile<'_> {
    fn section(&mut self, kind: u32) -> Result<Section<'_>, CircomError> {
        Ok(Section {
            data: Cow::Borrowed(self.bytes(kind)?),
            file: self.file,
            kind,
        })
    }
}

/// A container in a file, read one section at a time: only the section being read is in
/// memory, never the whole file.
#[derive(Debug)]
pub(crate) struct FileSections {
    f: std::fs::File,
    path: PathBuf,
    file: &'static str,
    sections: Vec<(u32, u64, u64)>,
}

impl FileSections {
    /// Opens `path` and reads its section table (see [`BinFile::parse`]).
    pub(crate) fn open(
        path: &Path,
        magic: &[u8; 4],
        versions: &[u32],
        file: &'static str,
    ) -> Result<Self, CircomError> {
        let io = |e| CircomError::io(path, e);
        let mut f = std::fs::File::open(path).map_err(io)?;
        let total = f.metadata().map_err(io)?.len();
        let mut read = |at: u64, buf: &mut [u8]| read_at(&mut f, at, buf).map_err(io);
        let sections = walk(total, &mut read, magic, versions, file)?;
        Ok(Self {
            f,
            path: path.to_owned(),
            file,
            sections,
        })
    }
}

fn read_at(f: &mut std::fs::File, at: u64, buf: &mut [u8]) -> std::io::Result<()> {
    f.seek(SeekFrom::Start(at))?;
    f.read_exact(buf)
}

impl Sections for FileSections {
    fn section(&mut self, kind: u32) -> Result<Section<'_>, CircomError> {
        let &(_, at, len) = self
            .sections
            .iter()
            .find(|(k, ..)| *k == kind)
            .ok_or_else(|| missing(self.file, kind))?;
        // `walk` checked that the length fits a usize and ends within the file. Read into
        // reserved room (no zero fill first): a file that shrank since is an error.
        let io = |e| CircomError::io(&self.path, e);
        let mut data = Vec::new();
        data.try_reserve_exact(len as usize)
            .map_err(|e| io(std::io::Error::other(e)))?;
        self.f.seek(SeekFrom::Start(at)).map_err(io)?;
        let got = (&mut self.f).take(len).read_to_end(&mut data).map_err(io)?;
        if got as u64 != len {
            return Err(io(std::io::ErrorKind::UnexpectedEof.into()));
        }
        Ok(Section {
            data: Cow::Owned(data),
            file: self.file,
            kind,
        })
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
