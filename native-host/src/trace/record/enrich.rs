//! What a finished recording gains for the Firefox Profiler (issue 21), kept apart from the
//! recording itself: the code behind each fault (the faulting instructions named through the
//! processes' mappings and the libraries' ELF headers and symbols) and the omni.ja entries
//! behind each read (from the archive as finish.rs opened it, once, beneath a held folder).

use super::sampler::Sampler;
use crate::note::{self, Note};
use crate::trace::build::Built;
use crate::trace::code::{name_sites, ElfIndex};
use crate::trace::model::CodeSite;

/// Name the fault sites of `built`.
pub(super) fn code_sites(built: &Built, sampler: &Sampler) -> Vec<CodeSite> {
    name_sites(&built.sites, &sampler.maps, &mut |p, id| {
        ElfIndex::read(p, Some(id))
    })
}

/// Fill the entries of `built.files[i]` if it is an archive, from `file` (the traced file, as
/// opened by finish.rs); a problem goes to `notes`.
pub(super) fn archive_entries(
    built: &mut Built,
    i: usize,
    file: &std::fs::File,
    notes: &mut Vec<Note>,
) {
    let Some(entry) = built.files.get(i) else {
        return;
    };
    if entry.written || !crate::trace::entries::is_archive(&entry.path) {
        return;
    }
    let f = u32::try_from(i).unwrap_or(u32::MAX);
    match crate::trace::entries::of_archive(f, &built.events, file) {
        Ok(read) => built.files[i].entries = Some(read),
        Err(e) => notes.push(
            Note::new(note::ARCHIVE_UNREADABLE)
                .with("path", built.files[i].path.clone())
                .with("detail", e.to_string()),
        ),
    }
}
