//! Which code faulted each page in (issue 21, Taras Glek's icegrind question): the instruction
//! pointer of an `exceptions:page_fault_user` event, in the process that faulted, named as the
//! library file it lies in, its offset in that file, the ELF section there and, where the file
//! (or its debug file, found by build id under /usr/lib/debug) has a `.symtab`, the function.
//!
//! Debian's libxul.so is stripped: it has no `.symtab`, and its `.dynsym` names only the few
//! exported functions, so a nearest exported symbol would name the wrong code. Such sites carry
//! the section and the file offset only (`.text+0x2c3f10`), which `addr2line -e <debug file>`
//! resolves wherever the debug symbols are at hand.
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

impl ElfIndex {
    /// Read `path`'s section headers and `.symtab` (or its debug file's); empty for files that
    /// are not ELF or cannot be read.
    #[must_use]
    pub fn read(path: &Path) -> Self {
        let mut index = Self::from_file(path, true);
        if index.symbols.is_empty() {
            if let Some(debug) = debug_file(path) {
                let from_debug = Self::from_file(&debug, false);
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

    fn from_file(path: &Path, sections: bool) -> Self {
        let mut out = Self::default();
        let Ok(file) = File::open(path) else {
            return out;
        };
        let cache = ReadCache::new(file);
        let Ok(obj) = object::File::parse(&cache) else {
            return out;
        };
        if obj.format() != object::BinaryFormat::Elf {
            return out;
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
        out
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

/// The separate debug file of `path` by its GNU build id, where a debug package installed it
/// (`/usr/lib/debug/.build-id/ab/cdef….debug`).
fn debug_file(path: &Path) -> Option<PathBuf> {
    let file = File::open(path).ok()?;
    let cache = ReadCache::new(file);
    let obj = object::File::parse(&cache).ok()?;
    let id = obj.build_id().ok()??;
    let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
    if hex.len() < 3 {
        return None;
    }
    let p = PathBuf::from(format!(
        "/usr/lib/debug/.build-id/{}/{}.debug",
        &hex[..2],
        &hex[2..]
    ));
    p.is_file().then_some(p)
}

/// Name each (process, instruction address) of `sites`: the mapping it lies in gives the file
/// and the offset; `elf` gives the section and the symbol (read once per library, cached in
/// `cache`).
pub fn name_sites(
    sites: &[(i32, u64)],
    maps: &Mappings,
    elf: &mut dyn FnMut(&Path) -> ElfIndex,
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
                    section: None,
                    symbol: None,
                };
            };
            let offset = ip - line.start + line.offset;
            let index = cache.entry(path.clone()).or_insert_with(|| elf(path));
            let (section, symbol) = match index.section_at(offset) {
                Some((name, addr)) => (
                    Some(name.to_owned()),
                    index.symbol_at(addr).map(str::to_owned),
                ),
                None => (None, None),
            };
            CodeSite {
                lib: crate::path_text::display(path),
                offset,
                section,
                symbol,
            }
        })
        .collect()
}

/// A short name for a site: `libxul.so .text+0x2c3f10`, or `libxul.so foo` with a symbol.
#[must_use]
pub fn label(site: &CodeSite) -> String {
    let lib = Path::new(&site.lib)
        .file_name()
        .map_or_else(|| site.lib.clone(), |n| n.to_string_lossy().into_owned());
    match (&site.symbol, &site.section) {
        (Some(sym), _) => format!("{lib} {sym}"),
        (None, Some(sec)) => format!("{lib} {sec}+{:#x}", site.offset),
        (None, None) => format!("{lib} {:#x}", site.offset),
    }
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
        let sites = name_sites(&[(pid, ip), (pid, 8)], &own_maps(), &mut |p| {
            opened.push(p.to_path_buf());
            ElfIndex::read(p)
        });
        assert_eq!(Path::new(&sites[0].lib), exe);
        assert_eq!(sites[0].section.as_deref(), Some(".text"));
        // `cargo test --release` builds this binary stripped (profile.release): then the site is
        // named by section and offset, as for a stripped libxul.so.
        if ElfIndex::read(&exe).has_symbols() {
            let symbol = sites[0].symbol.as_deref().unwrap_or_default();
            assert!(symbol.contains("a_function_to_find"), "{sites:?}");
            assert!(label(&sites[0]).contains("a_function_to_find"));
        } else {
            assert_eq!(sites[0].symbol, None, "{sites:?}");
            assert!(label(&sites[0]).contains(".text+0x"), "{sites:?}");
        }
        // An address nothing maps stays an address.
        assert_eq!(sites[1].lib, "[unknown]");
        assert_eq!(opened.len(), 1, "each library is read once");
    }

    #[test]
    fn a_stripped_file_gives_section_and_offset_only() {
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
        let sites = name_sites(&[(7, 0x7f00_0000_1234)], &maps, &mut |_| index.clone());
        assert_eq!(sites[0].section.as_deref(), Some(".text"));
        assert_eq!(sites[0].symbol, None);
        assert_eq!(sites[0].offset, 0x1234);
        assert_eq!(label(&sites[0]), "libxul.so .text+0x1234");
        assert!(!index.has_symbols());
    }

    #[test]
    fn not_elf_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x");
        std::fs::write(&p, b"\x7fELF garbage").unwrap();
        let index = ElfIndex::read(&p);
        assert!(index.section_at(0).is_none() && !index.has_symbols());
    }
}
