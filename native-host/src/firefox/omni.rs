//! The entries of a zip archive (Firefox's `omni.ja` and `browser/omni.ja`) from its central
//! directory: which byte ranges of the file belong to which module or resource (issue 21).
//!
//! A bounded parser, because the archive may sit in a folder another user owns (a tarball in a
//! home folder) and the host may run as root: the end record is looked for only in the last
//! 64 KiB + 22 bytes, the central directory is at most [`MAX_DIRECTORY`] bytes and
//! [`MAX_ENTRIES`] entries, every field is read with bounds checks and no value is trusted to
//! size an allocation. ZIP64 and multi-disk archives are refused (omni.ja is neither). Fuzzed
//! (`native-host/fuzz/fuzz_targets/zip.rs`).
//!
//! An entry's span is from its local header to the next entry's (or the directory): its header,
//! name, data and any data descriptor, i.e. every byte a read of that entry touches. The file
//! itself comes opened from the caller (the trace opens each file once, beneath a held folder).

use thiserror::Error;

/// The central directory may be at most this long (omni.ja's is about 240 KiB).
pub const MAX_DIRECTORY: u64 = 16 * 1024 * 1024;
/// …and hold at most this many entries (omni.ja has about 2,500).
pub const MAX_ENTRIES: usize = 200_000;
/// The end record: 22 bytes plus a comment of at most 65,535.
const EOCD_LEN: usize = 22;
const MAX_TAIL: u64 = EOCD_LEN as u64 + 65_535;

/// One entry of the archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The name as stored (lossy UTF-8): `modules/AppConstants.sys.mjs`.
    pub name: String,
    /// Offset of the local header in the file.
    pub offset: u64,
    /// Bytes from the local header to the next entry (or the directory).
    pub span: u64,
    /// Stored (compressed) and uncompressed sizes.
    pub compressed: u64,
    pub size: u64,
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum ZipError {
    #[error("not a zip archive: no end-of-central-directory record in its last 64 KiB")]
    NoEndRecord,
    #[error("a ZIP64 or multi-disk archive, which omni.ja never is")]
    Unsupported,
    #[error("the central directory ({size} bytes at {offset}) lies outside the {len}-byte file or exceeds the {MAX_DIRECTORY}-byte bound")]
    DirectoryOutOfBounds { offset: u64, size: u64, len: u64 },
    #[error("the central directory holds {0} entries, more than the bound of {MAX_ENTRIES}")]
    TooManyEntries(usize),
    #[error("central directory entry {index} is cut short or malformed")]
    BadEntry { index: usize },
    #[error("entry {index}'s local header offset {offset} lies beyond the directory")]
    EntryOutOfBounds { index: usize, offset: u64 },
    #[error("{0}")]
    Io(String),
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Where the directory is: (offset, size, entry count) from the end record in `tail`, the last
/// bytes of a file of `len` bytes.
pub fn end_record(tail: &[u8], len: u64) -> Result<(u64, u64, usize), ZipError> {
    if tail.len() < EOCD_LEN {
        return Err(ZipError::NoEndRecord);
    }
    // The last signature whose comment length reaches exactly to the end of the file.
    let at = (0..=tail.len() - EOCD_LEN)
        .rev()
        .find(|&i| {
            u32_at(tail, i) == Some(0x0605_4b50)
                && u16_at(tail, i + 20).map(usize::from) == Some(tail.len() - i - EOCD_LEN)
        })
        .ok_or(ZipError::NoEndRecord)?;
    let field16 = |o| u16_at(tail, at + o).ok_or(ZipError::NoEndRecord);
    let field32 = |o| u32_at(tail, at + o).ok_or(ZipError::NoEndRecord);
    let (disk, cd_disk) = (field16(4)?, field16(6)?);
    let (here, total) = (field16(8)?, field16(10)?);
    let (size, offset) = (field32(12)?, field32(16)?);
    if disk != 0 || cd_disk != 0 || here != total || total == 0xFFFF || offset == u32::MAX {
        return Err(ZipError::Unsupported);
    }
    let (offset, size) = (u64::from(offset), u64::from(size));
    if size > MAX_DIRECTORY || offset.checked_add(size).is_none_or(|end| end > len) {
        return Err(ZipError::DirectoryOutOfBounds { offset, size, len });
    }
    Ok((offset, size, usize::from(total)))
}

/// The entries of a central directory `dir` of `count` entries that starts at `dir_offset`,
/// sorted by offset, with spans.
pub fn directory(dir: &[u8], count: usize, dir_offset: u64) -> Result<Vec<Entry>, ZipError> {
    if count > MAX_ENTRIES {
        return Err(ZipError::TooManyEntries(count));
    }
    // 46 bytes per entry at least: a count the bytes cannot hold is malformed, not a reason to
    // reserve memory.
    let mut out = Vec::with_capacity(count.min(dir.len() / 46));
    let mut at = 0usize;
    for index in 0..count {
        let bad = || ZipError::BadEntry { index };
        if u32_at(dir, at) != Some(0x0201_4b50) {
            return Err(bad());
        }
        let compressed = u64::from(u32_at(dir, at + 20).ok_or_else(bad)?);
        let size = u64::from(u32_at(dir, at + 24).ok_or_else(bad)?);
        let name_len = usize::from(u16_at(dir, at + 28).ok_or_else(bad)?);
        let extra_len = usize::from(u16_at(dir, at + 30).ok_or_else(bad)?);
        let comment_len = usize::from(u16_at(dir, at + 32).ok_or_else(bad)?);
        let offset = u64::from(u32_at(dir, at + 42).ok_or_else(bad)?);
        let name = dir.get(at + 46..at + 46 + name_len).ok_or_else(bad)?;
        if offset >= dir_offset {
            return Err(ZipError::EntryOutOfBounds { index, offset });
        }
        out.push(Entry {
            name: String::from_utf8_lossy(name).into_owned(),
            offset,
            span: 0,
            compressed,
            size,
        });
        at += 46 + name_len + extra_len + comment_len;
    }
    out.sort_by_key(|e| e.offset);
    let ends: Vec<u64> = out
        .iter()
        .skip(1)
        .map(|e| e.offset)
        .chain(std::iter::once(dir_offset))
        .collect();
    for (e, end) in out.iter_mut().zip(ends) {
        e.span = end - e.offset;
    }
    Ok(out)
}

/// The entries of a whole archive held in memory (what the fuzz target drives).
pub fn entries(data: &[u8]) -> Result<Vec<Entry>, ZipError> {
    let len = data.len() as u64;
    let tail_start = data
        .len()
        .saturating_sub(usize::try_from(MAX_TAIL).unwrap_or(usize::MAX));
    let (offset, size, count) = end_record(&data[tail_start..], len)?;
    let (start, end) = (
        usize::try_from(offset).map_err(|_| ZipError::Unsupported)?,
        usize::try_from(offset + size).map_err(|_| ZipError::Unsupported)?,
    );
    directory(&data[start..end], count, offset)
}

/// The entries of the archive open as `file` (a descriptor the caller opened and checked: the
/// trace's recording opens each traced file once, beneath a held folder): its tail and its
/// directory only are read.
pub fn entries_of(file: &std::fs::File) -> Result<Vec<Entry>, ZipError> {
    use std::os::unix::fs::FileExt;
    let io = |e: std::io::Error| ZipError::Io(e.to_string());
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(ZipError::Io("not a regular file".into()));
    }
    let len = meta.len();
    let tail_len = len.min(MAX_TAIL);
    let mut tail = vec![0u8; usize::try_from(tail_len).unwrap_or(0)];
    file.read_exact_at(&mut tail, len - tail_len).map_err(io)?;
    let (offset, size, count) = end_record(&tail, len)?;
    let mut dir = vec![0u8; usize::try_from(size).unwrap_or(0)];
    file.read_exact_at(&mut dir, offset).map_err(io)?;
    directory(&dir, count, offset)
}

/// The entry holding byte `offset`, in entries sorted by offset.
#[must_use]
pub fn entry_at(entries: &[Entry], offset: u64) -> Option<usize> {
    let i = entries
        .partition_point(|e| e.offset <= offset)
        .checked_sub(1)?;
    (offset - entries[i].offset < entries[i].span).then_some(i)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A small stored (uncompressed) zip built by hand: names and contents.
    pub(crate) fn zip(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut central = Vec::new();
        for (name, data) in files {
            let offset = u32::try_from(out.len()).unwrap();
            let len = u32::try_from(data.len()).unwrap();
            let name_len = u16::try_from(name.len()).unwrap();
            out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
            out.extend_from_slice(&[10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(&name_len.to_le_bytes());
            out.extend_from_slice(&0u16.to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(data);
            central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
            central.extend_from_slice(&[20, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            central.extend_from_slice(&len.to_le_bytes());
            central.extend_from_slice(&len.to_le_bytes());
            central.extend_from_slice(&name_len.to_le_bytes());
            central.extend_from_slice(&[0; 12]);
            central.extend_from_slice(&offset.to_le_bytes());
            central.extend_from_slice(name.as_bytes());
        }
        let cd_offset = u32::try_from(out.len()).unwrap();
        let cd_size = u32::try_from(central.len()).unwrap();
        let n = u16::try_from(files.len()).unwrap();
        out.extend_from_slice(&central);
        out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
        out.extend_from_slice(&[0, 0, 0, 0]);
        out.extend_from_slice(&n.to_le_bytes());
        out.extend_from_slice(&n.to_le_bytes());
        out.extend_from_slice(&cd_size.to_le_bytes());
        out.extend_from_slice(&cd_offset.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out
    }

    #[test]
    fn entries_with_spans_to_the_next_entry() {
        let data = zip(&[("a.js", b"hello"), ("modules/B.sys.mjs", &[7; 5000])]);
        let e = entries(&data).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(
            (e[0].name.as_str(), e[0].offset, e[0].span),
            ("a.js", 0, 30 + 4 + 5)
        );
        assert_eq!(e[1].offset, 39);
        assert_eq!(e[1].span, 30 + 17 + 5000);
        assert_eq!(e[1].size, 5000);
        assert_eq!(entry_at(&e, 38), Some(0));
        assert_eq!(entry_at(&e, 39 + 4000), Some(1));
        assert_eq!(
            entry_at(&e, 39 + 30 + 17 + 5000),
            None,
            "the directory is no entry"
        );
    }

    #[test]
    fn a_file_on_disk_through_a_bounded_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("omni.ja");
        std::fs::write(&p, zip(&[("x", b"1"), ("y", b"22")])).unwrap();
        let e = entries_of(&std::fs::File::open(&p).unwrap()).unwrap();
        assert_eq!(
            e.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(),
            ["x", "y"]
        );
        // A file cut short after the check: refused, not read past its end.
        std::fs::write(&p, b"PK").unwrap();
        let short = entries_of(&std::fs::File::open(&p).unwrap());
        assert_eq!(short, Err(ZipError::NoEndRecord));
    }

    #[test]
    fn hostile_archives_are_refused_not_trusted() {
        assert_eq!(entries(b"hello"), Err(ZipError::NoEndRecord));
        let good = zip(&[("a", b"1")]);
        // A directory claimed past the end of the file.
        let mut bad = good.clone();
        let n = bad.len();
        bad[n - 6..n - 2].copy_from_slice(&u32::MAX.wrapping_sub(1).to_le_bytes());
        assert!(matches!(
            entries(&bad),
            Err(ZipError::DirectoryOutOfBounds { .. })
        ));
        // More entries claimed than the directory holds.
        let mut bad = good.clone();
        bad[n - 14..n - 12].copy_from_slice(&500u16.to_le_bytes());
        bad[n - 12..n - 10].copy_from_slice(&500u16.to_le_bytes());
        assert_eq!(entries(&bad), Err(ZipError::BadEntry { index: 1 }));
        // ZIP64 markers.
        let mut bad = good.clone();
        bad[n - 14..n - 10].copy_from_slice(&[0xFF; 4]);
        assert_eq!(entries(&bad), Err(ZipError::Unsupported));
        // A local header offset inside the directory.
        let mut bad = good;
        let cd = usize::try_from(u32_at(&bad, n - 6).unwrap()).unwrap();
        bad[cd + 42..cd + 46].copy_from_slice(&u32::try_from(cd).unwrap().to_le_bytes());
        assert!(matches!(
            entries(&bad),
            Err(ZipError::EntryOutOfBounds { .. })
        ));
    }
}
