//! What a finished recording gains for the Firefox Profiler (issue 21), kept apart from the
//! recording itself: the code behind each fault (the faulting instructions named through the
//! processes' mappings and the libraries' ELF headers and symbols) and the omni.ja entries
//! behind each read.

use super::sampler::Sampler;
use crate::note::{self, Note};
use crate::trace::build::Built;
use crate::trace::code::{name_sites, ElfIndex};
use crate::trace::model::CodeSite;

/// Name the fault sites of `built` and fill its archives' entries; problems go to `notes`.
pub(super) fn enrich(built: &mut Built, sampler: &Sampler, notes: &mut Vec<Note>) -> Vec<CodeSite> {
    for (path, detail) in crate::trace::entries::fill(&mut built.files, &built.events) {
        notes.push(
            Note::new(note::ARCHIVE_UNREADABLE)
                .with("path", path)
                .with("detail", detail),
        );
    }
    name_sites(&built.sites, &sampler.maps, &mut |p| ElfIndex::read(p))
}
