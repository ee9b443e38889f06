//! `launch --prefetch` for real: the built binary, a fake Firefox install on disk whose
//! `firefox` is a shell script that says who it is, a trace stored the way `launch --trace`
//! stores one. Firefox must be this very process (exec), started whatever the prefetch meets;
//! the prefetcher must read exactly the traced pages that are not cached, as an ordinary user
//! too (root-only part `#[ignore]`d: `npm test` runs it as root).

#[path = "support/executable.rs"]
mod executable;
#[path = "support/install_fixture.rs"]
mod fixture;
#[path = "support/traced_start.rs"]
mod started;
#[path = "support/syscalls.rs"]
mod syscalls;

use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use about_startup_host::os::sys;
use about_startup_host::pagecache::evict;
use about_startup_host::trace::model::Trace;
use fixture::Fixture;
use serde_json::Value;
use started::{file, read, save as save_trace, BUILD};

const BIN: &str = env!("CARGO_BIN_EXE_about-startup-host");
const PAGE: u64 = 4096;

/// A `firefox` that writes its pid and arguments to `$FAKE_FIREFOX_OUT`, copies the prefetch
/// record as it finds it on starting to `$FAKE_FIREFOX_OUT.record` (with `--strategy first` the
/// record is there before Firefox runs), waits a little (a start takes time) and exits with
/// `$FAKE_FIREFOX_EXIT`.
fn fake_firefox(dir: &Path) {
    let script = dir.join("firefox");
    std::fs::write(
        &script,
        "#!/bin/sh\necho \"$$ $*\" > \"$FAKE_FIREFOX_OUT\"\ncp \"$XDG_STATE_HOME/about-startup/last-prefetch.json\" \"$FAKE_FIREFOX_OUT.record\" 2>/dev/null\nsleep 1\nexit \"${FAKE_FIREFOX_EXIT:-0}\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A traced cold start of the fixture: libxul.so pages 512-767 needed at 5 ms, 0-255 at 50 ms
/// (pages 256-511 read ahead, never used), omni.ja pages 0-63 asked for by Firefox's own
/// readahead(2) at 1 ms. Stored in `<state>/about-startup/traces` as `launch --trace` would.
fn store_trace(state: &Path, ff: &Path) {
    save_trace(state, &trace_of(ff));
}

/// An update of the fake install's build: application.ini names a build no trace was made on.
fn new_build(ff: &Path) {
    std::fs::write(
        ff.join("application.ini"),
        "[App]\nVersion=153.8.0\nBuildID=20270101000000\n",
    )
    .unwrap();
}

/// The trace [`store_trace`] stores.
fn trace_of(ff: &Path) -> Trace {
    started::trace(
        ff,
        vec![
            file(&ff.join("libxul.so"), vec![[0, 256], [512, 256]]),
            file(&ff.join("browser/omni.ja"), vec![]),
        ],
        vec![
            read(1.0, 1, 0, 64, "forced"),
            read(5.0, 0, 512, 256, "sync"),
            read(50.0, 0, 0, 512, "sync"),
        ],
    )
}

/// Run `launch --prefetch --firefox <ff> -- <args>`; returns (its pid, exit code).
fn launch(cmd: &mut Command, ff: &Path, state: &Path, out: &Path, exit: i32) -> (u32, i32) {
    launch_with(cmd, &[], ff, state, out, exit)
}

/// [`launch`] with more flags for `launch --prefetch`.
fn launch_with(
    cmd: &mut Command,
    flags: &[&str],
    ff: &Path,
    state: &Path,
    out: &Path,
    exit: i32,
) -> (u32, i32) {
    let args = ["--new-window", "about:blank"].map(std::ffi::OsString::from);
    launch_firefox_args(cmd, flags, ff, &args, state, out, exit)
}

/// [`launch_with`], Firefox's own arguments `args` (after `--`).
fn launch_firefox_args(
    cmd: &mut Command,
    flags: &[&str],
    ff: &Path,
    args: &[std::ffi::OsString],
    state: &Path,
    out: &Path,
    exit: i32,
) -> (u32, i32) {
    let mut child = cmd
        .args(["launch", "--prefetch"])
        .args(flags)
        .arg("--firefox")
        .arg(ff)
        .arg("--")
        .args(args)
        .env("XDG_STATE_HOME", state)
        .env("FAKE_FIREFOX_OUT", out)
        .env("FAKE_FIREFOX_EXIT", exit.to_string())
        .spawn()
        .unwrap();
    let pid = child.id();
    let status = child.wait().unwrap();
    (pid, status.code().unwrap_or(-1))
}

/// The prefetcher's record for Firefox `pid`, once written (it outlives the launch by a moment).
/// `cmd` (the host, or a command that ends in it: setpriv, strace) run as `launch --prefetch
/// --strategy beside --firefox <ff> -- <args>`, which must exit 0; the prefetcher's record of
/// that Firefox, whose pid the fake Firefox wrote to `out` (not the child's when a wrapper runs).
fn prefetched(
    cmd: &mut Command,
    ff: &Path,
    args: &[std::ffi::OsString],
    state: &Path,
    out: &Path,
) -> Value {
    let beside = ["--strategy", "beside"];
    let (_, code) = launch_firefox_args(cmd, &beside, ff, args, state, out, 0);
    assert_eq!(code, 0);
    let said = std::fs::read_to_string(out).unwrap();
    let pid: u32 = said.split(' ').next().unwrap().parse().unwrap();
    record_of(state, pid)
}

fn record_of(state: &Path, pid: u32) -> Value {
    let path = state.join("about-startup/last-prefetch.json");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(bytes) = std::fs::read(&path) {
            let v: Value = serde_json::from_slice(&bytes).unwrap();
            if v["firefox_pid"] == pid {
                return v;
            }
        }
        assert!(
            Instant::now() < deadline,
            "no prefetch record for {pid} in {}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn resident_pages(path: &Path) -> Vec<bool> {
    let f = std::fs::File::open(path).unwrap();
    let mut core = Vec::new();
    sys::mincore_file(&f, f.metadata().unwrap().len(), &mut core).unwrap();
    core.iter().map(|b| b & 1 != 0).collect()
}

/// Per page of `path`: whether it came into the page cache since this test last dropped the
/// file ([`evict_checked`], [`Profile::evict`]): cached now, or cached and since taken out by
/// reclaim. What the machine does meanwhile is not the code's doing: a DAMON kdamond paging
/// out idle cache (CI machines of this kind run one from boot), memory pressure. Reclaim leaves
/// a shadow entry that `cachestat(2)` counts as evicted; the tests' own drop
/// (`POSIX_FADV_DONTNEED`) leaves none (the evicts check it, and
/// [`reclaimed_pages_count_as_brought_in_and_dropped_ones_do_not`] checks the kernel does so).
/// So a page the prefetch read counts even if the machine reclaimed it before the look, and a
/// page it never read never counts. Exact for this test's own files only (the kernel answers
/// the owner). Without cachestat (Linux < 6.5) it is mincore's residency alone.
fn brought_in(path: &Path) -> Vec<bool> {
    let f = std::fs::File::open(path).unwrap();
    let pages = f.metadata().unwrap().len().div_ceil(PAGE);
    if !sys::cachestat_available() {
        return resident_pages(path);
    }
    (0..pages)
        .map(|i| {
            let c = sys::cachestat(&f, i * PAGE, PAGE).unwrap().unwrap();
            c.cached + c.evicted > 0
        })
        .collect()
}

/// How many pages of `pages` are set.
fn count(pages: &[bool]) -> usize {
    pages.iter().filter(|p| **p).count()
}

/// Evict `files` and check it took: no page of them is cached any more, and none left a trace
/// of having been (the files are this test's own, so mincore and cachestat are exact). What a
/// launch then brings in, it brought in itself.
fn evict_checked(fx: &Fixture, files: &[PathBuf]) {
    let summary = evict::evict(&fx.folder(), files);
    for f in &summary.files {
        assert!(
            f.problem.is_none(),
            "evict of {}: {:?}",
            f.path.display(),
            f.problem
        );
    }
    for file in files {
        let cached = count(&resident_pages(file));
        assert_eq!(cached, 0, "{} still has pages cached", file.display());
        let seen = count(&brought_in(file));
        assert_eq!(
            seen,
            0,
            "{}: pages still counted as in the cache",
            file.display()
        );
    }
}

/// Pages `ranges` (`[first, count]`) of `path` held in memory while this lives: mapped and
/// locked (mlock), so no reclaim and no other process's evict takes them out. Unlocked and
/// unmapped on drop. A test that needs a hot cache makes it so and keeps it so.
struct Held {
    addr: *mut libc::c_void,
    len: usize,
}

impl Held {
    fn new(path: &Path, ranges: &[[u64; 2]]) -> Held {
        use std::os::fd::AsRawFd;
        let f = std::fs::File::open(path).unwrap();
        let len = usize::try_from(f.metadata().unwrap().len()).unwrap();
        // SAFETY: a fresh shared read-only mapping of a file of this length; the fd may be
        // closed after mmap returns.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        };
        assert_ne!(addr, libc::MAP_FAILED, "mmap {}", path.display());
        let held = Held { addr, len };
        for [first, n] in ranges {
            let (off, bytes) = (
                usize::try_from(first * PAGE).unwrap(),
                usize::try_from(n * PAGE).unwrap(),
            );
            // SAFETY: the range lies inside the mapping made above.
            let rc = unsafe { libc::mlock(addr.cast::<u8>().add(off).cast(), bytes) };
            assert_eq!(
                rc,
                0,
                "mlock pages {first}+{n} of {}: {} (RLIMIT_MEMLOCK?)",
                path.display(),
                std::io::Error::last_os_error()
            );
        }
        held
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once (munmap unlocks it).
        unsafe {
            libc::munmap(self.addr, self.len);
        }
    }
}

/// The kernel behaviour [`brought_in`] rests on (Linux 6.18): a page that reclaim takes out of
/// the cache (here `MADV_PAGEOUT`, as DAMON's pageout does) stays counted by cachestat as
/// evicted; a drop by `POSIX_FADV_DONTNEED` (the tests' evict) clears that count; a page never
/// read is counted in neither.
#[test]
fn reclaimed_pages_count_as_brought_in_and_dropped_ones_do_not() {
    if !sys::cachestat_available() {
        eprintln!("no cachestat here (Linux < 6.5): brought_in is mincore alone, nothing to check");
        return;
    }
    let fx = Fixture::new_in(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let lib = fx.ff.join("libxul.so");
    evict_checked(&fx, std::slice::from_ref(&lib));
    let f = std::fs::File::open(&lib).unwrap();
    sys::fadvise(&f, 0, 0, sys::Advice::Random).unwrap();
    let mut buf = vec![0u8; 64 * PAGE as usize];
    f.read_exact_at(&mut buf, 0).unwrap();
    assert!(brought_in(&lib)[..64].iter().all(|p| *p));
    // Reclaim pages 0-31: mapped, touched, paged out.
    pageout(&lib, 32);
    let cached = resident_pages(&lib);
    assert!(
        count(&cached[..32]) < 32,
        "MADV_PAGEOUT reclaimed nothing: this check proves nothing ({} of 32 cached)",
        count(&cached[..32])
    );
    let seen = brought_in(&lib);
    assert!(seen[..64].iter().all(|p| *p), "reclaimed pages still count");
    assert!(count(&seen[512..]) == 0, "pages never read do not");
    evict_checked(&fx, std::slice::from_ref(&lib));
}

/// Reclaim the first `pages` pages of `path` as the machine's reclaim would: map them, touch
/// them, `MADV_PAGEOUT` (Linux ≥ 5.4; this test's own file, so the kernel lets it).
fn pageout(path: &Path, pages: u64) {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(path).unwrap();
    let len = usize::try_from(pages * PAGE).unwrap();
    // SAFETY: a fresh read-only mapping of the file's first `len` bytes (the file is longer),
    // read through volatile loads and unmapped before returning.
    unsafe {
        let addr = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        );
        assert_ne!(addr, libc::MAP_FAILED);
        for p in 0..usize::try_from(pages).unwrap() {
            std::ptr::read_volatile(addr.cast::<u8>().add(p * PAGE as usize));
        }
        assert_eq!(libc::madvise(addr, len, libc::MADV_PAGEOUT), 0);
        libc::munmap(addr, len);
    }
}

fn fixture_with_trace(parent: &Path) -> (Fixture, PathBuf) {
    let fx = Fixture::new_in(parent);
    fake_firefox(&fx.ff);
    let state = fx.root.path().join("state");
    store_trace(&state, &fx.ff);
    (fx, state)
}

#[test]
fn firefox_is_this_process_and_the_traced_pages_not_cached_are_read() {
    let (fx, state) = fixture_with_trace(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let (libxul, omni) = (fx.ff.join("libxul.so"), fx.ff.join("browser/omni.ja"));
    evict_checked(&fx, &[libxul.clone(), omni.clone()]);
    let out = fx.root.path().join("firefox.out");
    let beside = ["--strategy", "beside"];
    let (pid, code) = launch_with(&mut Command::new(BIN), &beside, &fx.ff, &state, &out, 0);
    assert_eq!(code, 0);
    // Firefox was this very process, with the arguments after `--`.
    let said = std::fs::read_to_string(&out).unwrap();
    assert_eq!(said.trim(), format!("{pid} --new-window about:blank"));

    let record = record_of(&state, pid);
    assert_eq!(record["strategy"], "beside", "{record}");
    assert_eq!(record["plan"]["source"], "trace", "{record}");
    assert_eq!(record["plan"]["traces"], 1);
    assert!(record["plan"]["fallback"].is_null(), "{record}");
    // Used pages of libxul (2 × 256) and Firefox's own readahead of omni.ja (64); not the 256
    // pages read ahead and never used.
    let planned = (512 + 64) * PAGE;
    assert_eq!(record["bytes_planned"], planned);
    assert_eq!(record["ended"], "done", "{record}");
    let (read, cached) = (
        record["bytes_read"].as_u64().unwrap(),
        record["bytes_cached"].as_u64().unwrap(),
    );
    assert_eq!(read + cached, planned, "{record}");
    assert!(
        read >= planned / 2,
        "the files were evicted: most must be read ({record})"
    );
    assert_eq!(
        record["files_exact"], 2,
        "our own files: mincore is exact ({record})"
    );

    // Exactly the planned pages came in: 0-255 and 512-767 of libxul, not 256-511 (cached now,
    // or since reclaimed by the machine: brought_in).
    let pages = brought_in(&libxul);
    assert!(pages[..256].iter().all(|r| *r) && pages[512..768].iter().all(|r| *r));
    assert!(count(&pages[256..512]) < 16, "read beyond the plan");

    // A second launch on a hot cache finds everything cached and reads nothing. The planned
    // pages are held in memory for it (locked: no reclaim of the machine's takes them out
    // meanwhile), so the cache is hot because this test made it so.
    let _hot = [
        Held::new(&libxul, &[[0, 256], [512, 256]]),
        Held::new(&omni, &[[0, 64]]),
    ];
    let (pid2, _) = launch(&mut Command::new(BIN), &fx.ff, &state, &out, 0);
    let hot = record_of(&state, pid2);
    assert_eq!(
        (hot["bytes_read"].as_u64(), hot["bytes_cached"].as_u64()),
        (Some(0), Some(planned)),
        "{hot}"
    );
}

#[test]
fn with_strategy_first_the_plan_is_read_before_firefox_starts() {
    let (fx, state) = fixture_with_trace(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let libxul = fx.ff.join("libxul.so");
    evict_checked(&fx, &[libxul.clone(), fx.ff.join("browser/omni.ja")]);
    let out = fx.root.path().join("firefox.out");
    let first = ["--strategy", "first"];
    let (pid, code) = launch_with(&mut Command::new(BIN), &first, &fx.ff, &state, &out, 0);
    assert_eq!(code, 0);
    let said = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        said.trim(),
        format!("{pid} --new-window about:blank"),
        "Firefox is still this process"
    );
    // What Firefox found on starting: the finished prefetch of its own launch.
    let seen: Value =
        serde_json::from_slice(&std::fs::read(out.with_extension("out.record")).unwrap()).unwrap();
    assert_eq!(seen["firefox_pid"], pid, "{seen}");
    assert_eq!(seen["strategy"], "first", "{seen}");
    assert_eq!(seen["ended"], "done", "{seen}");
    let planned = (512 + 64) * PAGE;
    assert_eq!(seen["bytes_planned"], planned, "{seen}");
    // Issue 33 #7: the bytes it read, not only the pages found cached afterwards. Nothing of
    // the plan was cached before (evict_checked): what was not read, the prefetch's own reads
    // brought in (the disk's readahead), and something was read.
    let (read, cached) = (
        seen["bytes_read"].as_u64().unwrap(),
        seen["bytes_cached"].as_u64().unwrap(),
    );
    assert_eq!(read + cached, planned, "{seen}");
    assert!(
        read > 0,
        "the files were evicted: the plan must be read ({seen})"
    );
    let pages = brought_in(&libxul);
    assert!(pages[..256].iter().all(|r| *r) && pages[512..768].iter().all(|r| *r));
}

/// Issue 39 #11: after a Firefox update every file of the plan is another (new inode, new size,
/// new build id) and a launch said "there was nothing to prefetch" until the user traced
/// again. The first launch after the update reads the same files by name, each by its traced
/// ranges cut to its size now; the record says whose plan it was (the build traced) and why.
#[test]
fn after_an_update_the_same_files_are_prefetched_by_name_and_their_old_ranges() {
    let (fx, state) = fixture_with_trace(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let (libxul, omni) = (fx.ff.join("libxul.so"), fx.ff.join("browser/omni.ja"));
    // The update: each file replaced (a new inode, as dpkg does), libxul shorter (600 pages),
    // omni.ja longer, and a new build in application.ini.
    for (path, pages) in [(&libxul, 600), (&omni, 300)] {
        let new = path.with_extension("new");
        fixture::write_file(&new, pages * PAGE as usize);
        std::fs::rename(&new, path).unwrap();
    }
    new_build(&fx.ff);
    evict_checked(&fx, &[libxul.clone(), omni.clone()]);
    let out = fx.root.path().join("firefox.out");
    let (pid, code) = launch_with(
        &mut Command::new(BIN),
        &["--strategy", "first"],
        &fx.ff,
        &state,
        &out,
        0,
    );
    assert_eq!(code, 0);
    let record = record_of(&state, pid);
    assert_eq!(record["plan"]["source"], "trace", "{record}");
    assert_eq!(record["plan"]["traces"], 1, "{record}");
    assert_eq!(
        record["plan"]["fallback"]["code"], "other_build",
        "{record}"
    );
    assert_eq!(
        record["plan"]["fallback"]["traced_build"], BUILD,
        "{record}"
    );
    // libxul's used pages 0-255 and 512-599 (cut at its new end), omni.ja's forced 0-63.
    let planned = (256 + 88 + 64) * PAGE;
    assert_eq!(record["bytes_planned"], planned, "{record}");
    assert!(
        record["bytes_read"].as_u64().unwrap() > 0,
        "the replaced files were read ({record})"
    );
    // Brought in by the prefetch (cached now, or since reclaimed by the machine: a DAMON
    // kdamond pages idle cache out within seconds), not "cached at this later moment".
    let pages = brought_in(&libxul);
    assert!(pages[..256].iter().all(|r| *r) && pages[512..600].iter().all(|r| *r));
}

#[test]
fn a_failing_prefetch_never_stops_firefox() {
    let (fx, state) = fixture_with_trace(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let out = fx.root.path().join("firefox.out");
    // A trace store full of garbage, and a state folder that is a file: no plan at all.
    let traces = state.join("about-startup/traces");
    for entry in std::fs::read_dir(&traces).unwrap() {
        std::fs::write(entry.unwrap().path(), b"{not json").unwrap();
    }
    let (pid, code) = launch(&mut Command::new(BIN), &fx.ff, &state, &out, 3);
    assert_eq!(code, 3, "the exit status is Firefox's own");
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .starts_with(&format!("{pid} ")));
    let record = record_of(&state, pid);
    assert!(record["plan"]["source"].is_null(), "{record}");
    assert_eq!(record["plan"]["fallback"]["code"], "no_trace", "{record}");

    let file_state = fx.root.path().join("not-a-folder");
    std::fs::write(&file_state, b"").unwrap();
    let (pid, code) = launch(&mut Command::new(BIN), &fx.ff, &file_state, &out, 0);
    assert_eq!(code, 0);
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .starts_with(&format!("{pid} ")));

    // A new build (an update): the traced plan is stale, nothing learned: no prefetch, and
    // the record says why.
    new_build(&fx.ff);
    store_trace(&state, &fx.ff); // again, with the old build id
    let (pid, _) = launch(&mut Command::new(BIN), &fx.ff, &state, &out, 0);
    let record = record_of(&state, pid);
    assert_eq!(
        record["plan"]["fallback"]["code"], "other_build",
        "{record}"
    );
    assert_eq!(
        record["plan"]["fallback"]["traced_build"], BUILD,
        "{record}"
    );

    // What cannot start at all is an error naming it.
    std::fs::remove_file(fx.ff.join("firefox")).unwrap();
    let failed = Command::new(BIN)
        .args(["launch", "--prefetch", "--firefox"])
        .arg(&fx.ff)
        .env("XDG_STATE_HOME", &state)
        .output()
        .unwrap();
    assert_eq!(failed.status.code(), Some(1));
    let err = String::from_utf8_lossy(&failed.stderr);
    assert!(err.contains("no firefox executable"), "{err}");
}

#[test]
#[ignore = "needs root (root-owned files, setpriv to nobody): npm test runs it with --ignored as root"]
fn an_ordinary_user_prefetches_files_whose_cache_state_the_kernel_hides() {
    assert_eq!(sys::geteuid(), 0, "this test needs root");
    let (fx, state) = fixture_with_trace(Path::new("/var/tmp"));
    let bin = fx.root.path().join("about-startup-host");
    executable::copy_executable(Path::new(BIN), &bin);
    // The state folder is nobody's; the install stays root's (mincore would lie to nobody).
    for dir in [
        state.clone(),
        state.join("about-startup"),
        state.join("about-startup/traces"),
    ] {
        std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
    }
    for entry in std::fs::read_dir(state.join("about-startup/traces")).unwrap() {
        std::os::unix::fs::chown(entry.unwrap().path(), Some(65534), Some(65534)).unwrap();
    }
    let out = fx.root.path().join("out");
    std::fs::write(&out, b"").unwrap();
    std::os::unix::fs::chown(&out, Some(65534), Some(65534)).unwrap();
    let libxul = fx.ff.join("libxul.so");
    evict_checked(&fx, &[libxul.clone(), fx.ff.join("browser/omni.ja")]);
    let mut cmd = Command::new("setpriv");
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&bin)
        .env("HOME", "/nonexistent");
    let (pid, code) = launch(&mut cmd, &fx.ff, &state, &out, 0);
    assert_eq!(code, 0);
    // setpriv execs too: the pid is Firefox's, running as nobody.
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .starts_with(&format!("{pid} ")));
    let record = record_of(&state, pid);
    assert_eq!(
        record["files_probed"], 2,
        "root's files are hidden from nobody: probed ({record})"
    );
    assert_eq!(record["files_exact"], 0, "{record}");
    assert!(
        record["bytes_read"].as_u64().unwrap() >= 256 * PAGE,
        "{record}"
    );
    // Root sees what nobody's prefetch read: the used pages, not the unused ones.
    let pages = brought_in(&libxul);
    assert!(pages[512..768].iter().all(|r| *r) && pages[..256].iter().all(|r| *r));
    assert!(count(&pages[256..512]) < 16, "read beyond the plan");
}

// ---- The user's own profile in the plan (issue 31, item 3) ----

/// A profile beside the fixture's install, as a traced start found it: history (places.sqlite,
/// 64 pages, with its write-ahead log), the session, an add-on, prefs. And beside the profile a
/// file that is not the profile's (`elsewhere/history-copy.sqlite`), reached from the profile
/// through a symlink (`favicons.sqlite`).
struct Profile {
    dir: PathBuf,
    elsewhere: PathBuf,
}

impl Profile {
    fn new(root: &Path) -> Profile {
        let dir = root.join("profile");
        let elsewhere = root.join("elsewhere");
        for d in [&dir, &dir.join("extensions"), &elsewhere] {
            std::fs::create_dir_all(d).unwrap();
            fixture::open_up(d);
        }
        for (name, pages) in [
            ("places.sqlite", 64),
            ("places.sqlite-wal", 8),
            ("sessionstore.jsonlz4", 3),
            ("extensions/addon@test.xpi", 16),
            ("prefs.js", 1),
        ] {
            fixture::write_file(&dir.join(name), pages * PAGE as usize);
        }
        fixture::write_file(&elsewhere.join("history-copy.sqlite"), 8 * PAGE as usize);
        std::os::unix::fs::symlink(
            "../elsewhere/history-copy.sqlite",
            dir.join("favicons.sqlite"),
        )
        .unwrap();
        Profile {
            dir: dir.canonicalize().unwrap(),
            elsewhere: elsewhere.canonicalize().unwrap(),
        }
    }

    /// Every file last read two days ago: a read now would move its access time (relatime).
    fn age_access_times(&self) {
        let two_days = std::time::SystemTime::now() - Duration::from_secs(2 * 86_400);
        for f in self.files() {
            std::fs::File::options()
                .write(true)
                .open(&f)
                .unwrap()
                .set_times(std::fs::FileTimes::new().set_accessed(two_days))
                .unwrap();
        }
    }

    /// Every regular file of the profile and beside it.
    fn files(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for dir in [&self.dir, &self.dir.join("extensions"), &self.elsewhere] {
            for e in std::fs::read_dir(dir).unwrap() {
                let e = e.unwrap();
                if e.file_type().unwrap().is_file() {
                    out.push(e.path());
                }
            }
        }
        out.sort();
        out
    }

    /// Per file: sha256sum's digest (coreutils, not this crate). It reads the files: take the
    /// [`Profile::times`] after it.
    fn checksums(&self) -> Vec<String> {
        let sums = Command::new("sha256sum")
            .args(self.files())
            .output()
            .unwrap();
        String::from_utf8_lossy(&sums.stdout)
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// Per file: inode, size, modification and access time, as stat(1) says them.
    fn times(&self) -> Vec<String> {
        let stat = Command::new("stat")
            .args(["-c", "%n %i %s %y %x"])
            .args(self.files())
            .output()
            .unwrap();
        String::from_utf8_lossy(&stat.stdout)
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// Drop every file's pages, and check that it took: none cached, none counted as having
    /// been (cachestat only: mincore's mapping would move the access times the tests compare).
    fn evict(&self) {
        for path in self.files() {
            let f = std::fs::File::open(&path).unwrap();
            sys::fadvise(&f, 0, 0, sys::Advice::DontNeed).unwrap();
            if sys::cachestat_available() {
                let seen = count(&brought_in(&path));
                assert_eq!(seen, 0, "{} still counted as in the cache", path.display());
            }
        }
    }
}

/// The fixture's trace with a start of `profile`: places.sqlite pages 0-7 used at 10 ms, 20-23
/// at 30 ms, 32-47 at 90 ms (after sessionRestored at 80 ms: left to Firefox); its journal, the
/// session, the add-on, prefs; and the file elsewhere, read directly and through the symlink.
fn trace_with_profile(ff: &Path, profile: &Profile) -> Trace {
    let mut t = trace_of(ff);
    let p = |name: &str| profile.dir.join(name);
    let copy = profile.elsewhere.join("history-copy.sqlite");
    let mut link = file(&copy, vec![[0, 8]]);
    link.path = p("favicons.sqlite").to_str().unwrap().into();
    let base = t.files.len() as u32;
    t.files.extend([
        file(&p("places.sqlite"), vec![[0, 8], [20, 4], [32, 16]]),
        file(&p("places.sqlite-wal"), vec![[0, 8]]),
        file(&p("sessionstore.jsonlz4"), vec![[0, 3]]),
        file(&p("extensions/addon@test.xpi"), vec![[0, 16]]),
        file(&p("prefs.js"), vec![[0, 1]]),
        file(&copy, vec![[0, 8]]),
        link,
    ]);
    t.events.extend([
        read(2.0, base + 4, 0, 1, "sync"),
        read(3.0, base + 5, 0, 8, "sync"),
        read(4.0, base + 6, 0, 8, "sync"),
        read(10.0, base, 0, 8, "sync"),
        read(11.0, base + 1, 0, 8, "sync"),
        read(12.0, base + 2, 0, 3, "sync"),
        read(15.0, base + 3, 0, 16, "sync"),
        read(30.0, base, 20, 4, "sync"),
        read(90.0, base, 32, 16, "sync"),
    ]);
    t.note_session_restored(Some(80.0));
    t
}

/// The profile pages the plan reads: places 0-7 and 20-23, the session, the add-on, prefs.
const PROFILE_PAGES: u64 = 8 + 4 + 3 + 16 + 1;

fn profile_args(dir: &Path) -> Vec<std::ffi::OsString> {
    vec!["-profile".into(), dir.into(), "--headless".into()]
}

#[test]
fn the_prefetch_reads_the_traced_profile_and_changes_nothing_of_it() {
    let fx = fixture::Fixture::new();
    fake_firefox(&fx.ff);
    let state = fx.root.path().join("state");
    let profile = Profile::new(fx.root.path());
    save_trace(&state, &trace_with_profile(&fx.ff, &profile));
    let sums = profile.checksums();
    profile.age_access_times();
    let times = profile.times();
    profile.evict();
    let out = fx.root.path().join("firefox.out");
    let args = profile_args(&profile.dir);
    let record = prefetched(&mut Command::new(BIN), &fx.ff, &args, &state, &out);
    assert_eq!(record["ended"], "done", "{record}");
    assert_eq!(record["profile"]["bytes"], PROFILE_PAGES * PAGE, "{record}");
    assert_eq!(record["profile"]["files"], 4, "{record}");
    assert!(record["profile"].get("left_out").is_none(), "{record}");
    assert_eq!(record["bytes_planned"], (512 + 64 + PROFILE_PAGES) * PAGE);
    assert_eq!(
        record["bytes_read_profile"],
        PROFILE_PAGES * PAGE,
        "{record}"
    );
    // Not an inode, a size, a modification or an access time changed (taken before the checks
    // below, whose mincore maps the files: a mapping moves the access time).
    assert_eq!(profile.times(), times);

    // What was read is in the cache now; what the start needed after sessionRestored, the
    // journal and everything outside the profile is not.
    let places = brought_in(&profile.dir.join("places.sqlite"));
    assert!(places[..8].iter().chain(&places[20..24]).all(|r| *r));
    assert!(
        !places[32..48].iter().any(|r| *r),
        "read past sessionRestored"
    );
    assert!(brought_in(&profile.dir.join("prefs.js"))[0]);
    assert!(!brought_in(&profile.dir.join("places.sqlite-wal"))
        .iter()
        .any(|r| *r));
    let copy = brought_in(&profile.elsewhere.join("history-copy.sqlite"));
    assert!(!copy.iter().any(|r| *r), "read outside the profile");

    // Not a byte changed.
    assert_eq!(profile.checksums(), sums);
}

#[test]
fn profile_files_written_since_the_trace_are_skipped_and_said_so() {
    let fx = fixture::Fixture::new();
    fake_firefox(&fx.ff);
    let state = fx.root.path().join("state");
    let profile = Profile::new(fx.root.path());
    save_trace(&state, &trace_with_profile(&fx.ff, &profile));
    // places.sqlite written in place (same inode and size), the session replaced (a new file
    // renamed over it, as Firefox writes it at every quit).
    let places = profile.dir.join("places.sqlite");
    std::fs::File::options()
        .write(true)
        .open(&places)
        .unwrap()
        .write_at(b"x", 5 * PAGE)
        .unwrap();
    let session = profile.dir.join("sessionstore.jsonlz4");
    let tmp = profile.dir.join("sessionstore.jsonlz4.tmp");
    std::fs::copy(&session, &tmp).unwrap();
    std::fs::rename(&tmp, &session).unwrap();
    for f in [&places, &session] {
        std::fs::File::open(f).unwrap().sync_all().unwrap();
    }
    profile.evict();
    let out = fx.root.path().join("firefox.out");
    let args = profile_args(&profile.dir);
    let record = prefetched(&mut Command::new(BIN), &fx.ff, &args, &state, &out);
    assert_eq!(record["profile"]["files"], 2, "{record}");
    assert_eq!(record["profile"]["bytes"], (16 + 1) * PAGE, "{record}");
    let changed = &record["profile"]["changed"];
    assert_eq!(changed.as_array().map(Vec::len), Some(2), "{record}");
    let kinds: Vec<_> = changed
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["part"]["kind"].as_str().unwrap(),
                c["files"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(kinds, [("session", 1), ("places", 1)], "{record}");
    assert!(
        !brought_in(&places).iter().any(|r| *r),
        "a written file was read"
    );
    assert!(
        !brought_in(&session).iter().any(|r| *r),
        "a replaced file was read"
    );

    // Another profile, or one named by name: nothing of the traced profile, and why.
    let other = fx.root.path().join("other-profile");
    std::fs::create_dir(&other).unwrap();
    for (args, why) in [
        (profile_args(&other), "other_profile"),
        (vec!["-P".into(), "work".into()], "unknown_profile"),
    ] {
        let record = prefetched(&mut Command::new(BIN), &fx.ff, &args, &state, &out);
        assert_eq!(record["profile"]["left_out"]["code"], why, "{record}");
        assert_eq!(record["profile"]["bytes"], 0, "{record}");
        assert_eq!(record["bytes_planned"], (512 + 64) * PAGE, "{record}");
    }
}

#[test]
fn the_traced_preload_plan_holds_the_profile_too() {
    let fx = fixture::Fixture::new();
    let state = fx.root.path().join("state");
    let profile = Profile::new(fx.root.path());
    save_trace(&state, &trace_with_profile(&fx.ff, &profile));
    let sums = profile.checksums();
    profile.age_access_times();
    let times = profile.times();
    profile.evict();
    let out = Command::new(BIN)
        .args([
            "preload",
            "--plan",
            "--source",
            "trace",
            "--json",
            "--firefox",
        ])
        .arg(&fx.ff)
        .env("XDG_STATE_HOME", &state)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        summary["bytes_planned_profile"],
        PROFILE_PAGES * PAGE,
        "{summary}"
    );
    assert_eq!(summary["bytes_planned_system"], 0, "{summary}");
    assert_eq!(profile.times(), times);
    let places = brought_in(&profile.dir.join("places.sqlite"));
    assert!(places[..8].iter().all(|r| *r) && !places[32..48].iter().any(|r| *r));
    let copy = brought_in(&profile.elsewhere.join("history-copy.sqlite"));
    assert!(!copy.iter().any(|r| *r), "read outside the profile");
    assert_eq!(profile.checksums(), sums);
    // `plan --source trace` says how much of it is the profile's.
    let plan = Command::new(BIN)
        .args(["plan", "--source", "trace", "--firefox"])
        .arg(&fx.ff)
        .env("XDG_STATE_HOME", &state)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&plan.stdout);
    assert!(text.contains("MB of your profile"), "{text}");
}

#[test]
#[ignore = "needs root (chown to nobody, setpriv): npm test runs it with --ignored as root"]
fn an_ordinary_user_prefetches_their_own_profile_and_root_never_reads_it() {
    assert_eq!(sys::geteuid(), 0, "this test needs root");
    let fx = fixture::Fixture::new_in(Path::new("/var/tmp"));
    fake_firefox(&fx.ff);
    let bin = fx.root.path().join("about-startup-host");
    executable::copy_executable(Path::new(BIN), &bin);
    let profile = Profile::new(fx.root.path());
    let nobody = |path: &Path| {
        let status = Command::new("chown")
            .args(["-R", "65534:65534"])
            .arg(path)
            .status()
            .unwrap();
        assert!(status.success());
    };
    nobody(&profile.dir);
    // The user's state folder holds the trace of their start (traced through the tracer).
    let state = fx.root.path().join("state");
    save_trace(&state, &trace_with_profile(&fx.ff, &profile));
    nobody(&state);
    let out = fx.root.path().join("out");
    std::fs::write(&out, b"").unwrap();
    nobody(&out);
    let sums = profile.checksums();
    profile.age_access_times();
    let times = profile.times();
    profile.evict();
    let args = profile_args(&profile.dir);
    let mut nobody_cmd = Command::new("setpriv");
    nobody_cmd
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&bin)
        .env("HOME", "/nonexistent");
    // Under strace (root's, following setpriv): what nobody's prefetch asked of the kernel.
    let log = fx.root.path().join("nobody.strace");
    let mut cmd = syscalls::under_strace(&nobody_cmd, &log);
    let record = prefetched(&mut cmd, &fx.ff, &args, &state, &out);
    only_reads(&cmd, &log, &profile, "nobody's launch --prefetch");
    assert_eq!(record["profile"]["bytes"], PROFILE_PAGES * PAGE, "{record}");
    assert_eq!(
        record["bytes_read_profile"],
        PROFILE_PAGES * PAGE,
        "{record}"
    );
    assert_eq!(
        profile.times(),
        times,
        "nobody's prefetch touched their profile"
    );
    let places = brought_in(&profile.dir.join("places.sqlite"));
    assert!(
        places[..8].iter().all(|r| *r),
        "nobody's own profile was read"
    );

    // Root launching with that trace (copied into root's state folder) reads nothing of
    // nobody's profile, and says why.
    let root_state = fx.root.path().join("root-state");
    save_trace(&root_state, &trace_with_profile(&fx.ff, &profile));
    profile.evict();
    let times = profile.times();
    let record = prefetched(&mut Command::new(&bin), &fx.ff, &args, &root_state, &out);
    assert_eq!(
        record["profile"]["left_out"]["code"], "not_owned",
        "{record}"
    );
    assert_eq!(record["bytes_read_profile"], 0, "{record}");
    assert_eq!(profile.times(), times);
    let places = brought_in(&profile.dir.join("places.sqlite"));
    assert!(
        !places.iter().any(|r| *r),
        "root read another user's profile"
    );
    assert_eq!(profile.checksums(), sums);
}

/// What the kernel was asked to do to the profile while `cmd` ran: nothing but reading
/// (support/syscalls.rs), and some reading of places.sqlite and the session.
fn only_reads(cmd: &Command, log: &Path, profile: &Profile, what: &str) {
    let text = syscalls::read_log(log);
    let seen = syscalls::judge(&text, profile.dir.to_str().unwrap());
    assert!(
        seen.broken.is_empty(),
        "{what} did more than read the profile:\n{}",
        seen.broken.join("\n")
    );
    for name in ["places.sqlite", "sessionstore.jsonlz4"] {
        let path = profile.dir.join(name);
        assert!(
            seen.reads
                .get(path.to_str().unwrap())
                .is_some_and(|n| *n > 0),
            "{what} ({:?}) read nothing of {name}: {:?}",
            cmd.get_args().collect::<Vec<_>>(),
            seen.reads
        );
    }
}

#[test]
fn a_database_firefox_may_be_writing_is_only_read_never_locked_advised_away_or_written() {
    // Every call the launch prefetch and the traced preload make on a profile file, as strace
    // (the kernel's record, not the host's) shows it: read-only opens with O_NOATIME, reads,
    // RANDOM advice; no lock (SQLite's are fcntl locks), no DONTNEED, no write.
    let fx = fixture::Fixture::new();
    fake_firefox(&fx.ff);
    let state = fx.root.path().join("state");
    let profile = Profile::new(fx.root.path());
    save_trace(&state, &trace_with_profile(&fx.ff, &profile));
    profile.evict();
    let out = fx.root.path().join("firefox.out");
    let log = fx.root.path().join("launch.strace");
    let mut bin = Command::new(BIN);
    bin.env("XDG_STATE_HOME", &state);
    let mut cmd = syscalls::under_strace(&bin, &log);
    let args = profile_args(&profile.dir);
    let record = prefetched(&mut cmd, &fx.ff, &args, &state, &out);
    assert_eq!(
        record["bytes_read_profile"],
        PROFILE_PAGES * PAGE,
        "{record}"
    );
    // The prefetcher outlives the launch by a moment: its record is written last.
    only_reads(&cmd, &log, &profile, "launch --prefetch");

    profile.evict();
    let log = fx.root.path().join("preload.strace");
    let mut preload = Command::new(BIN);
    preload
        .args(["preload", "--plan", "--source", "trace", "--firefox"])
        .arg(&fx.ff)
        .env("XDG_STATE_HOME", &state);
    let mut cmd = syscalls::under_strace(&preload, &log);
    let done = cmd.output().unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    only_reads(&cmd, &log, &profile, "preload --plan --source trace");
}

/// Issue 39 #4, left: `preload --plan --source trace` read a truncated trace as no trace at all
/// and said only "no stored trace of this Firefox", leaving the damaged file where it was. It
/// names the damaged trace, sets it aside as `trace list` does, and fails with that.
#[test]
fn a_damaged_trace_is_named_by_preload_plan_source_trace_not_passed_over() {
    let (fx, state) = fixture_with_trace(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let traces = state
        .join("about-startup")
        .join(about_startup_host::trace::store::FOLDER);
    let stored: Vec<PathBuf> = std::fs::read_dir(&traces)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.to_str().unwrap().ends_with(".json") && !p.to_str().unwrap().ends_with(".meta.json")
        })
        .collect();
    let [trace] = &stored[..] else {
        panic!("one stored trace: {stored:?}")
    };
    let id = trace.file_stem().unwrap().to_str().unwrap().to_owned();
    std::fs::OpenOptions::new()
        .write(true)
        .open(trace)
        .unwrap()
        .set_len(500)
        .unwrap();
    let done = Command::new(BIN)
        .args(["preload", "--plan", "--source", "trace", "--firefox"])
        .arg(&fx.ff)
        .env("XDG_STATE_HOME", &state)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(1), "{said}");
    assert!(said.contains(&id), "the damaged trace is named: {said}");
    assert!(
        said.contains("set aside"),
        "and what was done with it: {said}"
    );
    assert!(
        !traces.join(format!("{id}.json")).exists(),
        "set aside, not left to be passed over again"
    );
}
