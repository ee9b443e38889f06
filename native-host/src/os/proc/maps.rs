//! One line of `/proc/<pid>/maps`: which file, which device and inode, which offset at which
//! address. A pure parser over the kernel's bytes (a mapped file's name need not be UTF-8, so the
//! file is read as bytes and the path kept as bytes), tested on literal samples; the residency
//! scan, the working set and the trace read the lines of a process (`os::proc::maps`) through it.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// One line of /proc/<pid>/maps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapsLine {
    pub start: u64,
    pub end: u64,
    /// Offset in the file of `start`, in bytes.
    pub offset: u64,
    pub major: u32,
    pub minor: u32,
    pub inode: u64,
    /// The mapped path or pseudo name (`[heap]`, `/memfd:x (deleted)`), byte for byte; `None`
    /// for anonymous.
    pub path: Option<PathBuf>,
}

/// Parse `start-end perms offset major:minor inode   path`. The first five fields are separated
/// by single spaces (and are ASCII); the path follows padding and may itself contain spaces and
/// bytes that are not UTF-8.
#[must_use]
pub fn parse_maps_line(line: &[u8]) -> Option<MapsLine> {
    let mut parts = line.splitn(6, |b| *b == b' ');
    let mut field = || std::str::from_utf8(parts.next()?).ok();
    let (start, end) = field()?.split_once('-')?;
    let _perms = field()?;
    let offset = field()?;
    let (major, minor) = field()?.split_once(':')?;
    let inode = field()?;
    let path = parts
        .next()
        .map(<[u8]>::trim_ascii_start)
        .filter(|p| !p.is_empty())
        .map(|p| PathBuf::from(OsStr::from_bytes(p)));
    Some(MapsLine {
        start: u64::from_str_radix(start, 16).ok()?,
        end: u64::from_str_radix(end, 16).ok()?,
        offset: u64::from_str_radix(offset, 16).ok()?,
        major: u32::from_str_radix(major, 16).ok()?,
        minor: u32::from_str_radix(minor, 16).ok()?,
        inode: inode.parse().ok()?,
        path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn maps_lines() {
        let l = "7f1c2a000000-7f1c2b000000 r-xp 00a3f000 fe:00 1048602                    /usr/lib/firefox-esr/libxul.so";
        assert_eq!(
            parse_maps_line(l.as_bytes()).unwrap(),
            MapsLine {
                start: 0x7f1c_2a00_0000,
                end: 0x7f1c_2b00_0000,
                offset: 0xa3_f000,
                major: 0xfe,
                minor: 0,
                inode: 1_048_602,
                path: Some("/usr/lib/firefox-esr/libxul.so".into()),
            }
        );
        let anon = parse_maps_line(b"7ffd1000-7ffd2000 rw-p 00000000 00:00 0 ").unwrap();
        assert_eq!(anon.path, None);
        let spaced =
            parse_maps_line(b"1000-2000 r--s 00001000 103:02 99   /a b/c d (deleted)").unwrap();
        assert_eq!(
            spaced.path.as_deref(),
            Some(Path::new("/a b/c d (deleted)"))
        );
        assert_eq!(
            (spaced.major, spaced.minor, spaced.offset),
            (0x103, 2, 0x1000)
        );
        let heap = parse_maps_line(b"55d0-55e0 rw-p 00000000 00:00 0          [heap]").unwrap();
        assert_eq!(heap.path.as_deref(), Some(Path::new("[heap]")));
        assert_eq!(parse_maps_line(b"garbage"), None);
        // A file name that is not UTF-8 is kept byte for byte.
        let raw = parse_maps_line(b"1000-2000 r--p 00000000 fe:00 7   /ff/lib\xff.so").unwrap();
        assert_eq!(raw.path.unwrap().as_os_str().as_bytes(), b"/ff/lib\xff.so");
    }
}
