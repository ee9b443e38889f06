//! A cold start's evict, one function for every cold start (`launch --cold`, the page's
//! "Restart cold" and its traced form): drop the install folder's pages, then say what stayed
//! cached and which processes of this user still map the install's files, since the kernel
//! keeps the pages a running process maps (a second Firefox left running made a "cold" start
//! read 52 MB instead of ~190 MB without a word, issue 30 #6). The benchmark's cold check
//! (scripts/bench/cold-check.mjs) applies the same rule to `evict --json`'s reply.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::note::{self, Note};
use crate::os::proc;
use crate::Error;

/// One file whose pages stayed cached after the evict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stayed {
    pub path: String,
    pub pages: u64,
}

/// A running process that maps files of the install folder (so their pages cannot be dropped).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mapper {
    pub pid: i32,
    pub exe: String,
}

/// What the evict did and what stayed cached, and why.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evicted {
    /// Files of the install folder evicted.
    pub files: u64,
    /// Of them, files whose residency this user may see (owned or writable).
    pub exact_files: u64,
    /// Of them, files the kernel hides from this user: evicted, the result not visible.
    pub hidden_files: u64,
    /// Pages dropped, over the exact files only.
    pub pages_dropped: u64,
    /// Exact files with pages still cached afterwards (at most [`MAX_LISTED`]).
    pub stayed: Vec<Stayed>,
    /// Pages still cached afterwards over all exact files (absent in records of an older host).
    #[serde(default)]
    pub stayed_pages: u64,
    /// Files that could not be opened or advised (at most [`MAX_LISTED`]; `failed` counts all).
    pub failed_files: Vec<String>,
    pub failed: u64,
    /// Processes of this user still mapping install files: why pages stayed.
    pub mapped_by: Vec<Mapper>,
    pub elapsed_ms: u64,
}

/// Longest list kept in the status file.
pub const MAX_LISTED: usize = 20;

/// Processes this user may see that map a file of `install_dir` (another Firefox of the same
/// install): the kernel does not drop pages a process maps. Other users' maps are not readable
/// without root, so they are missing here (said on the page).
pub fn mappers(install_dir: &Path) -> Vec<Mapper> {
    let prefix = {
        let mut p = install_dir.as_os_str().as_bytes().to_vec();
        p.push(b'/');
        p
    };
    let me = i32::try_from(std::process::id()).unwrap_or(0);
    let mut out = Vec::new();
    for pid in proc::pids().into_iter().filter(|p| *p != me) {
        let Ok(maps) = proc::read_maps(pid) else {
            continue;
        };
        let maps_install = maps.split(|b| *b == b'\n').any(|line| {
            crate::os::proc::maps::parse_maps_line(line)
                .and_then(|m| m.path)
                .is_some_and(|p| p.as_os_str().as_bytes().starts_with(&prefix))
        });
        if maps_install {
            out.push(Mapper {
                pid,
                exe: proc::exe(pid)
                    .map(|e| e.display().to_string())
                    .unwrap_or_default(),
            });
            if out.len() >= MAX_LISTED {
                break;
            }
        }
    }
    out
}

/// Evict the install folder and say what stayed cached and why.
pub fn evict(install_dir: &Path) -> Result<Evicted, Error> {
    let selected = crate::firefox::install::select(install_dir, &[])?;
    let summary = crate::pagecache::evict::evict(&selected.folder, &selected.files);
    crate::learn::last_preload::forget_here(); // the next start follows no preload
    let mut out = Evicted {
        files: summary.files.len() as u64,
        pages_dropped: summary.pages_dropped,
        elapsed_ms: summary.elapsed_ms,
        ..Evicted::default()
    };
    for file in &summary.files {
        let path = file.path.display().to_string();
        if file.problem.is_some() {
            out.failed += 1;
            if out.failed_files.len() < MAX_LISTED {
                out.failed_files.push(path);
            }
            continue;
        }
        match file.status {
            crate::pagecache::residency::Status::Exact => out.exact_files += 1,
            _ => out.hidden_files += 1,
        }
        if let Some(pages) = file.resident_after.filter(|n| *n > 0) {
            out.stayed_pages += pages;
            if out.stayed.len() < MAX_LISTED {
                out.stayed.push(Stayed { path, pages });
            }
        }
    }
    out.mapped_by = mappers(install_dir);
    Ok(out)
}

impl Evicted {
    /// The trace's note when the start was not cold (pages stayed, or a process maps the
    /// install's files): what stayed (bytes where this user may see them, the largest files)
    /// and who holds it; `None` for a cold start.
    #[must_use]
    pub fn held_note(&self, page_bytes: u64) -> Option<Note> {
        if self.stayed_pages == 0 && self.mapped_by.is_empty() {
            return None;
        }
        let mut files: Vec<&Stayed> = self.stayed.iter().collect();
        files.sort_by(|a, b| b.pages.cmp(&a.pages).then(a.path.cmp(&b.path)));
        let stayed_bytes = (self.hidden_files == 0).then_some(self.stayed_pages * page_bytes);
        Some(
            Note::new(note::COLD_HELD)
                .with("bytes", stayed_bytes)
                .with("hidden_files", self.hidden_files)
                .with(
                    "files",
                    files
                        .iter()
                        .take(5)
                        .map(|f| {
                            serde_json::json!({ "path": f.path, "bytes": f.pages * page_bytes })
                        })
                        .collect::<Vec<_>>(),
                )
                .with(
                    "processes",
                    self.mapped_by
                        .iter()
                        .map(|m| serde_json::json!({ "pid": m.pid, "exe": m.exe }))
                        .collect::<Vec<_>>(),
                ),
        )
    }
}
