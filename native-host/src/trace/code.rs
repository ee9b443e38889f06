//! Which code faulted each page in (issue 21, Taras Glek's icegrind question): the instruction
//! pointer of an `exceptions:page_fault_user` event, in the process that faulted, named as the
//! library file it lies in, its offset in that file, the ELF section there and, where the file
//! (or its debug file, found by build id under /usr/lib/debug) has a `.symtab`, the function.
//!
//! Debian's libxul.so is stripped: it has no `.symtab`, and its `.dynsym` names only the few
//! exported functions, so a nearest exported symbol would name the wrong code. Such sites carry
//! the address and the section holding it (`libxul.so 0x33640d4 (.init)`): the ELF virtual
//! address, which `nm`, `readelf -S` and `addr2line -e <debug file>` read, not the file offset
//! (they differ: libxul.so's `.text` starts at file offset 0x3363100, address 0x3364100), and
//! never written as `section+offset`, which would read as an offset into the section.
//!
//! The ELF parsing goes through the `object` crate over a read cache (bounded, no panics on a
//! hostile file in a user-owned install); [`name_sites`] is pure over [`Mappings`] and an
//! [`ElfIndex`] per library, so the tests feed the test binary itself.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::path::{Path, PathBuf};

use object::read::ReadCache;
use object::{Object, ObjectSection, ObjectSymbol, SymbolKind};

use super::model::CodeSite;
use crate::os::proc::maps::MapsLine;

/// The mappings seen per process (start address → line), from /proc/<pid>/maps.
pub type Mappings = HashMap<i32, BTreeMap<u64, MapsLine>>;

/// What one library file tells about its code: sections with their file ranges and virtual
/// addresses, and function symbols (from `.symtab`) sorted by address.
#[derive(Debug, Default, Clone)]
pub struct ElfIndex {
    /// (name, file offset, size, virtual address)
    sections: Vec<(String, u64, u64, u64)>,
    /// (address, size, name), sorted by address.
    symbols: Vec<(u64, u64, String)>,
    /// Where the symbols came from: the file itself or its debug file.
    pub symbols_from: Option<PathBuf>,
}

/// Symbols beyond this many are left out: a hostile file cannot make the host hold millions of
/// names (a full libxul.so `.symtab` has about 900,000).
const MAX_SYMBOLS: usize = 2_000_000;

/// The file a mapping names: its device (major, minor) and inode, as /proc/<pid>/maps gives them.
pub type FileId = (u32, u32, u64);

impl ElfIndex {
    /// Read the section headers and `.symtab` (or its debug file's) of the library at `path`, if
    /// it is still the file `id` the process mapped; empty for files that are not ELF, cannot be
    /// read, or are not that file any more. The library is opened once, beneath `/` with no
    /// symlink on its path, without blocking (a FIFO put in its place) and as a regular file;
    /// its name is the user's to change (issue 29: a FIFO hung, a link named a root-only file).
    #[must_use]
    pub fn read(path: &Path, id: Option<FileId>) -> Self {
        let Some(file) = open_mapped(path, id) else {
            return Self::default();
        };
        let (mut index, build_id) = Self::from_file(file, true);
        if index.symbols.is_empty() {
            if let Some((debug, file)) = build_id.and_then(|b| debug_file(&b)) {
                let (from_debug, _) = Self::from_file(file, false);
                if !from_debug.symbols.is_empty() {
                    index.symbols = from_debug.symbols;
                    index.symbols_from = Some(debug);
                }
            }
        } else {
            index.symbols_from = Some(path.to_path_buf());
        }
        index
    }

    /// The index of an open file, and its GNU build id.
    fn from_file(file: File, sections: bool) -> (Self, Option<Vec<u8>>) {
        let mut out = Self::default();
        let cache = ReadCache::new(file);
        let Ok(obj) = object::File::parse(&cache) else {
            return (out, None);
        };
        if obj.format() != object::BinaryFormat::Elf {
            return (out, None);
        }
        if sections {
            out.sections = obj
                .sections()
                .filter_map(|s| {
                    let (offset, size) = s.file_range()?;
                    let name = s.name().ok()?.to_owned();
                    (size > 0 && !name.is_empty()).then_some((name, offset, size, s.address()))
                })
                .collect();
        }
        // `.symtab` only (`symbols()`; empty for a stripped file): see the module docs on why
        // `.dynsym` would mislead.
        out.symbols = obj
            .symbols()
            .filter(|s| s.kind() == SymbolKind::Text && s.size() > 0)
            .take(MAX_SYMBOLS)
            .filter_map(|s| Some((s.address(), s.size(), s.name().ok()?.to_owned())))
            .collect();
        out.symbols.sort_unstable_by_key(|s| s.0);
        let build_id = obj.build_id().ok().flatten().map(<[u8]>::to_vec);
        (out, build_id)
    }

    /// The section holding file offset `offset`, and the virtual address there.
    #[must_use]
    pub fn section_at(&self, offset: u64) -> Option<(&str, u64)> {
        self.sections
            .iter()
            .find(|(_, off, size, _)| offset >= *off && offset - off < *size)
            .map(|(name, off, _, addr)| (name.as_str(), addr + (offset - off)))
    }

    /// The function symbol covering virtual address `addr`.
    #[must_use]
    pub fn symbol_at(&self, addr: u64) -> Option<&str> {
        let i = self
            .symbols
            .partition_point(|s| s.0 <= addr)
            .checked_sub(1)?;
        let (start, size, name) = &self.symbols[i];
        (addr - start < *size).then_some(name.as_str())
    }

    /// Whether symbols were found at all (a stripped file without its debug file: no).
    #[must_use]
    pub fn has_symbols(&self) -> bool {
        !self.symbols.is_empty()
    }
}

/// Open the mapped library `path` (see [`ElfIndex::read`]); `None` unless it is the file `id`.
fn open_mapped(path: &Path, id: Option<FileId>) -> Option<File> {
    use std::os::unix::fs::MetadataExt;
    let root = crate::os::beneath::Folder::open(Path::new("/")).ok()?;
    let (file, meta) = root.open_file(path).ok()?;
    let dev = meta.dev();
    let same = id.is_none_or(|(major, minor, ino)| {
        (libc::major(dev), libc::minor(dev), meta.ino()) == (major, minor, ino)
    });
    same.then_some(file)
}

/// The separate debug file of build id `id`, where a debug package installed it
/// (`/usr/lib/debug/.build-id/ab/cdef….debug`, root's folder; its links are followed), opened
/// without blocking and only if it is a regular file.
fn debug_file(id: &[u8]) -> Option<(PathBuf, File)> {
    use std::os::unix::fs::OpenOptionsExt;
    let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
    if hex.len() < 3 {
        return None;
    }
    let p = PathBuf::from(format!(
        "/usr/lib/debug/.build-id/{}/{}.debug",
        &hex[..2],
        &hex[2..]
    ));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&p)
        .ok()?;
    file.metadata().ok()?.is_file().then_some((p, file))
}

/// Name each (process, instruction address) of `sites`: the mapping it lies in gives the file
/// and the offset; `elf` gives the section and the symbol of a file (its path, and the device
/// and inode mapped), read once per library, cached in `cache`.
pub fn name_sites(
    sites: &[(i32, u64)],
    maps: &Mappings,
    elf: &mut dyn FnMut(&Path, FileId) -> ElfIndex,
) -> Vec<CodeSite> {
    let mut cache: HashMap<PathBuf, ElfIndex> = HashMap::new();
    sites
        .iter()
        .map(|&(pid, ip)| {
            let mapping = maps.get(&pid).and_then(|m| {
                m.range(..=ip)
                    .next_back()
                    .map(|(_, l)| l)
                    .filter(|l| ip < l.end)
            });
            let Some(line) = mapping else {
                return CodeSite {
                    lib: "[unknown]".into(),
                    offset: ip,
                    address: None,
                    section: None,
                    symbol: None,
                };
            };
            let Some(path) = line.path.as_ref().filter(|p| p.is_absolute()) else {
                // JIT code and other anonymous memory: the address is all there is.
                return CodeSite {
                    lib: line
                        .path
                        .as_ref()
                        .map_or_else(|| "[anon]".into(), |p| p.to_string_lossy().into_owned()),
                    offset: ip,
                    address: None,
                    section: None,
                    symbol: None,
                };
            };
            let offset = ip - line.start + line.offset;
            let id = (line.major, line.minor, line.inode);
            let index = cache.entry(path.clone()).or_insert_with(|| elf(path, id));
            let (section, address, symbol) = match index.section_at(offset) {
                Some((name, addr)) => (
                    Some(name.to_owned()),
                    Some(addr),
                    index.symbol_at(addr).map(str::to_owned),
                ),
                None => (None, None, None),
            };
            CodeSite {
                lib: crate::path_text::display(path),
                offset,
                address,
                section,
                symbol,
            }
        })
        .collect()
}

fn lib_name(site: &CodeSite) -> String {
    Path::new(&site.lib)
        .file_name()
        .map_or_else(|| site.lib.clone(), |n| n.to_string_lossy().into_owned())
}

/// Where a site is, without its symbol: the address (`0x33640d4`), else, in a trace of an older
/// host, the file offset said as such (`file offset 0x33630d4`), else the bare address of
/// anonymous memory.
fn place(site: &CodeSite, at: u64) -> String {
    match (site.address, &site.section) {
        (None, Some(_)) => format!("file offset {at:#x}"),
        _ => format!("{at:#x}"),
    }
}

/// A short name for a site: `libxul.so foo` with a symbol, else `libxul.so 0x33640d4 (.init)`
/// (its address and the section holding it), else `[anon] 0x7f…`.
#[must_use]
pub fn label(site: &CodeSite) -> String {
    let lib = lib_name(site);
    let at = place(site, site.address.unwrap_or(site.offset));
    match (&site.symbol, &site.section) {
        (Some(sym), _) => format!("{lib} {sym}"),
        (None, Some(sec)) => format!("{lib} {at} ({sec})"),
        (None, None) => format!("{lib} {at}"),
    }
}

/// The `block`-byte block (a power of two) of the code a site lies in, for a stripped library
/// that has nothing finer: `libxul.so 0x3360000–0x336ffff (64 KiB block)`, by address where
/// known. No section is named: a block may hold several (libxul.so's `.init`, `.fini` and the
/// start of `.text` share one).
#[must_use]
pub fn block_label(site: &CodeSite, block: u64) -> String {
    let start = site.address.unwrap_or(site.offset) & !(block - 1);
    format!(
        "{} {}–{:#x} ({} KiB block)",
        lib_name(site),
        place(site, start),
        start + block - 1,
        block / 1024
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::os::proc::maps::parse_maps_line;

    #[inline(never)]
    fn a_function_to_find(x: u64) -> u64 {
        x.wrapping_mul(31).rotate_left(7)
    }

    fn own_maps() -> Mappings {
        let pid = i32::try_from(std::process::id()).unwrap();
        let text = std::fs::read("/proc/self/maps").unwrap();
        let lines = text
            .split(|b| *b == b'\n')
            .filter_map(parse_maps_line)
            .map(|l| (l.start, l))
            .collect();
        HashMap::from([(pid, lines)])
    }

    #[test]
    fn an_instruction_of_this_test_binary_is_named_by_file_section_and_symbol() {
        std::hint::black_box(a_function_to_find(3));
        let ip = a_function_to_find as *const () as u64 + 1;
        let pid = i32::try_from(std::process::id()).unwrap();
        let exe = std::env::current_exe().unwrap().canonicalize().unwrap();
        let mut opened = Vec::new();
        let sites = name_sites(&[(pid, ip), (pid, 8)], &own_maps(), &mut |p, id| {
            opened.push(p.to_path_buf());
            ElfIndex::read(p, Some(id))
        });
        assert_eq!(Path::new(&sites[0].lib), exe);
        assert_eq!(sites[0].section.as_deref(), Some(".text"));
        // The address is the one binutils give, not the file offset: inside `.text` as
        // `readelf -SW` lists it (an independent reading of the section headers).
        let address = sites[0]
            .address
            .expect("an address where the section is known");
        let (start, size) = readelf_section(&exe, ".text");
        assert!(
            address >= start && address < start + size,
            "{address:#x} outside .text {start:#x}+{size:#x}"
        );
        // `cargo test --release` builds this binary stripped (profile.release): then the site is
        // named by section and offset, as for a stripped libxul.so.
        if ElfIndex::read(&exe, None).has_symbols() {
            let symbol = sites[0].symbol.as_deref().unwrap_or_default();
            assert!(symbol.contains("a_function_to_find"), "{sites:?}");
            assert!(label(&sites[0]).contains("a_function_to_find"));
            // And it is the function's own address as `nm` prints it, plus the 1 added above.
            let nm = std::process::Command::new("nm").arg(&exe).output().unwrap();
            let listed = String::from_utf8_lossy(&nm.stdout)
                .lines()
                .find(|l| l.contains("a_function_to_find"))
                .and_then(|l| u64::from_str_radix(l.split(' ').next()?, 16).ok())
                .expect("nm lists the function");
            assert_eq!(address, listed + 1);
        } else {
            assert_eq!(sites[0].symbol, None, "{sites:?}");
            assert_eq!(
                label(&sites[0]),
                format!(
                    "{} {address:#x} (.text)",
                    exe.file_name().unwrap().to_string_lossy()
                )
            );
        }
        // An address nothing maps stays an address.
        assert_eq!(sites[1].lib, "[unknown]");
        assert_eq!(opened.len(), 1, "each library is read once");
    }

    /// A section's address and size as `readelf -SW` prints them (binutils, not the `object`
    /// crate the code reads them with).
    fn readelf_section(file: &Path, name: &str) -> (u64, u64) {
        let out = std::process::Command::new("readelf")
            .arg("-SW")
            .arg(file)
            .output()
            .expect("readelf (binutils) runs");
        let text = String::from_utf8_lossy(&out.stdout);
        // "  [16] .text  PROGBITS  0000000000052000 052000 23d48b0 00 AX 0 0 64"
        let row: Vec<&str> = text
            .lines()
            .map(|l| l.split(']').nth(1).unwrap_or_default())
            .find(|l| l.split_whitespace().next() == Some(name))
            .expect("the section is listed")
            .split_whitespace()
            .collect();
        let hex = |s: &str| u64::from_str_radix(s, 16).unwrap();
        (hex(row[2]), hex(row[4]))
    }

    #[test]
    fn a_stripped_file_gives_its_address_and_the_section_holding_it() {
        // The index of a file without .symtab: sections, no symbols, so no symbol is guessed.
        let index = ElfIndex {
            sections: vec![(".text".into(), 0x1000, 0x5000, 0x2000)],
            symbols: vec![],
            symbols_from: None,
        };
        let mut line = parse_maps_line(
            b"7f0000000000-7f0000010000 r-xp 00000000 fe:00 12 /usr/lib/firefox-esr/libxul.so",
        )
        .unwrap();
        line.offset = 0;
        let maps = HashMap::from([(7, BTreeMap::from([(line.start, line)]))]);
        let sites = name_sites(&[(7, 0x7f00_0000_1234)], &maps, &mut |_, _| index.clone());
        assert_eq!(sites[0].section.as_deref(), Some(".text"));
        assert_eq!(sites[0].symbol, None);
        assert_eq!(sites[0].offset, 0x1234);
        // File offset 0x1234 is 0x234 into .text, which starts at address 0x2000.
        assert_eq!(sites[0].address, Some(0x2234));
        assert_eq!(label(&sites[0]), "libxul.so 0x2234 (.text)");
        assert_eq!(
            block_label(&sites[0], 0x1000),
            "libxul.so 0x2000–0x2fff (4 KiB block)"
        );
        // A site from an older host's trace: no address, so the file offset, said as such.
        let old = CodeSite {
            address: None,
            ..sites[0].clone()
        };
        assert_eq!(label(&old), "libxul.so file offset 0x1234 (.text)");
        assert!(!index.has_symbols());
    }

    #[test]
    fn not_elf_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x");
        std::fs::write(&p, b"\x7fELF garbage").unwrap();
        let index = ElfIndex::read(&p, None);
        assert!(index.section_at(0).is_none() && !index.has_symbols());
    }

    /// Issue 29: the library a process mapped, swapped for a FIFO (a plain open blocked for
    /// ever), a symlink (to a file the user may not name) or another file: nothing is read.
    #[test]
    fn a_swapped_library_gives_nothing_and_never_blocks() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().canonicalize().unwrap().join("lib.so");
        std::fs::copy(std::env::current_exe().unwrap(), &lib).unwrap();
        let m = std::fs::metadata(&lib).unwrap();
        let id = (libc::major(m.dev()), libc::minor(m.dev()), m.ino());
        assert!(!ElfIndex::read(&lib, Some(id)).sections.is_empty());
        // Another name keeps the mapped inode alive, so no new file can take its number.
        std::fs::hard_link(&lib, dir.path().join("kept")).unwrap();
        std::fs::remove_file(&lib).unwrap();
        std::os::unix::fs::symlink(std::env::current_exe().unwrap(), &lib).unwrap();
        assert!(
            ElfIndex::read(&lib, Some(id)).sections.is_empty(),
            "a symlink"
        );
        assert!(ElfIndex::read(&lib, None).sections.is_empty(), "a symlink");
        std::fs::remove_file(&lib).unwrap();
        std::fs::copy(std::env::current_exe().unwrap(), &lib).unwrap();
        assert!(
            ElfIndex::read(&lib, Some(id)).sections.is_empty(),
            "another inode"
        );
        std::fs::remove_file(&lib).unwrap();
        crate::os::mkfifo(&lib);
        // Returns at once (a blocking open would wait for a writer for ever).
        assert!(ElfIndex::read(&lib, Some(id)).sections.is_empty(), "a FIFO");
        assert!(ElfIndex::read(&lib, None).sections.is_empty(), "a FIFO");
    }
}
