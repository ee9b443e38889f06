//! ELF section headers of a library, for shading the access-pattern chart (seed 000 shades
//! `.rela.dyn`, `.text`, `.rodata`, `.data.rel.ro`, `.data`). Parsed with the `object` crate
//! through a read cache, so libxul.so's 150 MB are not read for a few KiB of headers.

use std::fs::File;

use object::read::ReadCache;
use object::{Object, ObjectSection, SectionKind};

use super::model::Section;

/// The sections that occupy bytes of the open file (not `.bss`), in file order; empty for files
/// that are not ELF or cannot be read. The caller opened the file (once, beneath a held folder,
/// checked to be the traced one: record/finish.rs), so nothing here goes by path.
#[must_use]
pub fn sections(file: &File) -> Vec<Section> {
    let cache = ReadCache::new(file);
    let Ok(obj) = object::File::parse(&cache) else {
        return Vec::new();
    };
    if obj.format() != object::BinaryFormat::Elf {
        return Vec::new();
    }
    let mut out: Vec<Section> = obj
        .sections()
        .filter(|s| {
            !matches!(
                s.kind(),
                SectionKind::UninitializedData | SectionKind::UninitializedTls
            )
        })
        .filter_map(|s| {
            let (offset, size) = s.file_range()?;
            let name = s.name().ok()?.to_owned();
            (size > 0 && !name.is_empty()).then_some(Section { name, offset, size })
        })
        .collect();
    out.sort_by_key(|s| s.offset);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn own_test_binary_has_text() {
        let exe = std::fs::File::open(std::env::current_exe().unwrap()).unwrap();
        let s = super::sections(&exe);
        assert!(s.iter().any(|s| s.name == ".text" && s.size > 0), "{s:?}");
        assert!(s.windows(2).all(|w| w[0].offset <= w[1].offset));
    }

    #[test]
    fn not_elf_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x");
        std::fs::write(&p, b"hello").unwrap();
        assert!(super::sections(&std::fs::File::open(&p).unwrap()).is_empty());
    }
}
