//! The /proc side of a recording: the Firefox tree, the kind of each process, read_bytes and
//! major faults sampled over time, and the paths the tree maps or holds open.

use crate::firefox::process as firefox;
use crate::os::proc;
use crate::os::proc::maps::parse_maps_line;
use crate::os::proc::parse::split_nul;
use crate::trace::model::Sample;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// The kind of a Firefox process from its command line (`-contentproc … tab`, `gpu`, …).
#[must_use]
pub fn process_kind(cmdline: &[String], is_root: bool) -> String {
    if is_root {
        return "parent".into();
    }
    // The fork server rewrites argv into one string ("… browser 3 tab"): its last word is the
    // kind either way.
    let joined = cmdline.join(" ");
    if joined.contains("-contentproc") || joined.contains(" browser ") {
        return joined
            .split_whitespace()
            .last()
            .filter(|k| k.chars().all(|c| c.is_ascii_alphabetic()))
            .map_or_else(|| "content".into(), str::to_owned);
    }
    cmdline
        .first()
        .and_then(|p| Path::new(p).file_name())
        .map_or_else(|| "other".into(), |n| n.to_string_lossy().into_owned())
}

/// The processes of a trace: each the sampler saw (its kind from its command line) and each
/// that caused I/O without being seen (`caused_io`: one that ended between two samples, kind
/// `process`; the root is `parent` whatever), with the program it runs as the sampler read it
/// (`exes`, /proc/<pid>/exe) and its main thread's name as the trace's lines carried it
/// (`comms`). Pure.
#[must_use]
pub fn processes(
    kinds: &BTreeMap<i32, String>,
    exes: &BTreeMap<i32, String>,
    comms: &BTreeMap<i32, String>,
    caused_io: &[i32],
    root: i32,
) -> Vec<crate::trace::model::Process> {
    let mut pids: Vec<i32> = kinds
        .keys()
        .copied()
        .chain(caused_io.iter().copied())
        .collect();
    pids.sort_unstable();
    pids.dedup();
    pids.into_iter()
        .map(|pid| crate::trace::model::Process {
            pid,
            kind: match kinds.get(&pid) {
                Some(kind) => kind.clone(),
                None if pid == root => "parent".into(),
                None => "process".into(),
            },
            exe: exes.get(&pid).cloned(),
            comm: comms.get(&pid).cloned(),
        })
        .collect()
}

fn read_cmdline(pid: i32) -> Vec<String> {
    proc::cmdline(pid)
        .map(|b| {
            split_nul(&b)
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The /proc side of a recording: the tree, its threads, read_bytes and faults per process (the
/// last value seen, so processes that exit keep their share), and the paths they hold.
#[derive(Default)]
pub(super) struct Sampler {
    pub(super) root: i32,
    pub(super) kinds: BTreeMap<i32, String>,
    /// The file name of each process's program (`/proc/<pid>/exe`), the last seen: a forked
    /// helper that then exec'd (crashhelper) is named by what it became.
    pub(super) exes: BTreeMap<i32, String>,
    pub(super) tids: HashMap<i32, i32>,
    pub(super) read_bytes: HashMap<i32, u64>,
    pub(super) majflt: HashMap<i32, u64>,
    pub(super) baseline: HashMap<i32, (u64, u64)>,
    pub(super) paths: HashSet<PathBuf>,
    pub(super) profile: Option<PathBuf>,
    pub(super) samples: Vec<Sample>,
    /// Every mapping seen per process (start address → line): where a faulting instruction
    /// lies (trace/code.rs).
    pub(super) maps: crate::trace::code::Mappings,
}

impl Sampler {
    pub(super) fn sample(&mut self, t_ms: f64, full: bool) {
        let tree = firefox::process_tree(self.root);
        for &pid in &tree {
            if !self.kinds.contains_key(&pid) {
                let cmd = read_cmdline(pid);
                if cmd.is_empty() {
                    continue;
                }
                self.kinds.insert(pid, process_kind(&cmd, pid == self.root));
            }
            if let Some(rb) = proc::read_bytes(pid) {
                self.read_bytes.insert(pid, rb);
            }
            if let Some(st) = proc::stat(pid) {
                self.majflt.insert(pid, st.majflt);
            }
            if full {
                self.scan_tasks_and_paths(pid);
                if let Some(name) = proc::exe(pid).ok().as_deref().and_then(Path::file_name) {
                    self.exes.insert(pid, name.to_string_lossy().into_owned());
                }
            }
        }
        let (rb, mf) = self.totals();
        self.samples.push(Sample {
            t: t_ms,
            read_bytes: rb,
            majflt: mf,
        });
    }

    fn scan_tasks_and_paths(&mut self, pid: i32) {
        for tid in proc::tasks(pid).unwrap_or_default() {
            self.tids.insert(tid, pid);
        }
        if let Ok(maps) = proc::read_maps(pid) {
            let seen = self.maps.entry(pid).or_default();
            for l in maps.split(|b| *b == b'\n') {
                if let Some(m) = parse_maps_line(l) {
                    if let Some(p) = m.path.as_ref().filter(|p| p.is_absolute()) {
                        self.paths.insert(p.clone());
                    }
                    seen.insert(m.start, m);
                }
            }
        }
        let targets = proc::fd_targets(pid);
        // The profile's lock, not Firefox's startup lock in its temporary folder
        // (firefox::process::profile_lock_dir).
        if let Some(profile) = firefox::profile_lock(pid, &targets) {
            self.profile = Some(profile);
        }
        for target in targets {
            if target.is_absolute() {
                self.paths.insert(target);
            }
        }
    }

    /// Tree totals since the baseline.
    pub(super) fn totals(&self) -> (u64, u64) {
        let rb = self
            .read_bytes
            .iter()
            .map(|(p, v)| v.saturating_sub(self.baseline.get(p).map_or(0, |b| b.0)))
            .sum();
        let mf = self
            .majflt
            .iter()
            .map(|(p, v)| v.saturating_sub(self.baseline.get(p).map_or(0, |b| b.1)))
            .sum();
        (rb, mf)
    }
}

#[cfg(test)]
mod tests {
    use super::{process_kind, processes};
    use std::collections::BTreeMap;

    /// Issue 39 #7: three processes the sampler never saw (two crash helpers and glxtest, in
    /// test.profiler.js's cold start) were all "Firefox process" in the Profiler. They are kept,
    /// with the name their main thread's lines carried.
    #[test]
    fn processes_the_sampler_missed_are_kept_with_their_main_threads_name() {
        let kinds = BTreeMap::from([(10, "parent".to_owned()), (11, "tab".to_owned())]);
        let exes = BTreeMap::from([
            (10, "firefox-esr".to_owned()),
            (11, "firefox-esr".to_owned()),
        ]);
        let comms = BTreeMap::from([
            (10, "firefox-esr".to_owned()),
            (12, "crashhelper".to_owned()),
            (13, "glxtest".to_owned()),
        ]);
        let p = processes(&kinds, &exes, &comms, &[10, 12, 13, 14], 10);
        let got: Vec<(i32, &str, Option<&str>, Option<&str>)> = p
            .iter()
            .map(|p| (p.pid, p.kind.as_str(), p.exe.as_deref(), p.comm.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                (10, "parent", Some("firefox-esr"), Some("firefox-esr")),
                (11, "tab", Some("firefox-esr"), None),
                (12, "process", None, Some("crashhelper")),
                (13, "process", None, Some("glxtest")),
                (14, "process", None, None),
            ]
        );
        // The root is the parent even where the sampler never read it.
        assert_eq!(
            processes(&BTreeMap::new(), &exes, &comms, &[10], 10)[0].kind,
            "parent"
        );
    }

    #[test]
    fn kinds_from_cmdline() {
        let s = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(process_kind(&s(&["/ff/firefox-esr"]), true), "parent");
        assert_eq!(
            process_kind(
                &s(&["/ff/firefox-esr", "-contentproc", "-ipcHandle", "0", "tab"]),
                false
            ),
            "tab"
        );
        assert_eq!(
            process_kind(
                &s(&["/ff/firefox-esr", "-contentproc", "{x-y}", "12"]),
                false
            ),
            "content"
        );
        assert_eq!(
            process_kind(&s(&["/ff/crashhelper", "1"]), false),
            "crashhelper"
        );
    }
}
