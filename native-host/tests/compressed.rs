//! A Firefox on a compressed mount (issue 41), for real: a squashfs image made with mksquashfs,
//! its files mapped to image blocks by rdsquashfs, and (as root) loop-mounted the way a Snap is,
//! then `launch --prefetch` of the built binary against it: where the image is readable it reads
//! the traced ranges from the image, raw, and not one page through the mount; where it is not
//! (a Snap's 0600 image, as nobody) it reads nothing and says why. Hostile images (a FIFO, a
//! symlink, another filesystem planted where the image should be) are refused.
//!
//! Needs squashfs-tools and squashfs-tools-ng (.ci/run installs both); the mounting part needs
//! root and is `#[ignore]`d (npm test runs it with --ignored as root).

#[path = "support/executable.rs"]
mod executable;
#[path = "support/install_fixture.rs"]
mod fixture;
#[path = "support/traced_start.rs"]
mod started;

use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use about_startup_host::firefox::compressed::{self, Access, Format, LeftOff, Verdict};
use about_startup_host::firefox::mount::MountEntry;
use about_startup_host::os::sys;
use about_startup_host::pagecache::evict;
use fixture::Fixture;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_about-startup-host");
const PAGE: u64 = 4096;

fn run(cmd: &mut Command) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e} (apt install squashfs-tools squashfs-tools-ng)"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The fixture's install packed as a Snap is: lzo, 128 KiB blocks, no fragments, no xattrs.
fn squash(dir: &Path, image: &Path) {
    run(Command::new("mksquashfs").arg(dir).arg(image).args([
        "-noappend",
        "-quiet",
        "-no-progress",
        "-comp",
        "lzo",
        "-no-fragments",
        "-no-xattrs",
    ]));
    std::fs::File::open(image).unwrap().sync_all().unwrap();
}

#[test]
fn rdsquashfs_maps_a_files_bytes_to_the_image_bytes_that_hold_them() {
    let fx = Fixture::new();
    let image = fx.root.path().join("ff.squashfs");
    squash(&fx.ff, &image);
    let head = std::fs::read(&image).unwrap();
    let sb = compressed::Superblock::parse(&head[..compressed::SUPERBLOCK_BYTES]).unwrap();
    assert_eq!((sb.block_size, sb.compressor_name()), (131_072, "lzo"));
    let libxul = std::fs::read(fx.ff.join("libxul.so")).unwrap();
    let blocks = compressed::file_blocks(&image, Path::new("libxul.so")).unwrap();
    assert_eq!(blocks.file_size, libxul.len() as u64);
    assert_eq!(blocks.blocks.len(), libxul.len().div_ceil(131_072));
    assert!(!blocks.fragment);
    // The fixture's bytes do not compress: each block is stored as is, so the image bytes the
    // map names for a range are the file's own bytes of the blocks around it.
    let (ranges, unmapped) = blocks.image_ranges(300_000, 10, 131_072);
    assert_eq!((ranges.len(), unmapped), (1, 0));
    let (at, len) = ranges[0];
    assert_eq!(len, 131_072);
    let at = usize::try_from(at).unwrap();
    assert_eq!(&head[at..at + 131_072], &libxul[262_144..393_216]);
    // A path that is no regular file in the image is an error, not a guess.
    assert!(compressed::file_blocks(&image, Path::new("browser")).is_err());
    assert!(compressed::file_blocks(&image, Path::new("nothing-here")).is_err());
}

#[test]
fn a_fifo_a_symlink_or_another_filesystem_is_never_taken_for_the_image() {
    let fx = Fixture::new();
    let image = fx.root.path().join("ff.squashfs");
    squash(&fx.ff, &image);
    // A FIFO: refused at once (opened non-blocking: nothing hangs).
    let fifo = fx.root.path().join("fifo.snap");
    fixture::mkfifo(&fifo, 0o644);
    let refused = |path: &Path| match compressed::open_image(path, &fx.ff, Format::Squashfs) {
        Err(Access::Refused { why }) => why,
        other => panic!("{} was not refused: {other:?}", path.display()),
    };
    assert!(refused(&fifo).contains("not a regular file"));
    // A symlink to the real image: the kernel names the file itself, never a link.
    let link = fx.root.path().join("link.snap");
    std::os::unix::fs::symlink(&image, &link).unwrap();
    assert!(refused(&link).contains("symbolic link"));
    // A real squashfs image, but not the filesystem mounted there (here: the fixture's own
    // folder, whose statvfs is the disk's): planted, refused.
    assert!(refused(&image).contains("superblock differs"));
    // Not squashfs at all.
    assert!(refused(&fx.ff.join("libxul.so")).contains("not a squashfs image"));
    // Judged from a mount entry with that image behind it: left off, saying why.
    let sys_block = tempfile::tempdir().unwrap();
    let loop9 = sys_block.path().join("loop9/loop");
    std::fs::create_dir_all(&loop9).unwrap();
    std::fs::write(loop9.join("backing_file"), format!("{}\n", fifo.display())).unwrap();
    let entry = MountEntry {
        mount_point: fx.ff.clone(),
        fs_type: "squashfs".into(),
        source: "/dev/loop9".into(),
    };
    let c = compressed::detect_in(&entry, sys_block.path(), None).unwrap();
    assert_eq!(
        (c.verdict, c.left_off),
        (Verdict::LeftOff, Some(LeftOff::ImageRefused))
    );
    assert!(c.line().contains("left off"), "{}", c.line());
    // A plain filesystem is no compressed install.
    let ext4 = MountEntry {
        fs_type: "ext4".into(),
        ..entry
    };
    assert_eq!(compressed::detect_in(&ext4, sys_block.path(), None), None);
}

/// `pack --status --json` of an install never packed: this machine's traced start, plain and
/// compressed, counted from the trace and the install's own bytes. The fixture's libxul.so is
/// noise but for its first MiB (text, which compresses): the traced pages 0-255 and 512-767 are
/// the 128 KiB blocks 0-7 and 16-23; the estimate must be LZ4 of blocks 0-7 plus blocks 16-23
/// stored as they are (noise does not shrink), and the sentence must say the same figures.
#[test]
fn what_packing_would_save_is_the_traced_blocks_compressed_against_the_plain_bytes() {
    let fx = Fixture::new();
    let libxul = fx.ff.join("libxul.so");
    let text: Vec<u8> = b"the quick brown fox jumps over the lazy dog 0123456789 "
        .iter()
        .copied()
        .cycle()
        .take(1 << 20)
        .collect();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&libxul)
        .unwrap();
    f.write_all_at(&text, 0).unwrap();
    f.sync_all().unwrap();
    let state = fx.root.path().join("state");
    let trace = started::trace(
        &fx.ff,
        vec![started::file(&libxul, vec![[0, 256], [512, 256]])],
        vec![
            started::read(5.0, 0, 512, 256, "sync"),
            started::read(50.0, 0, 0, 256, "sync"),
        ],
    );
    started::save(&state, &trace);
    let status = |json: bool| {
        let mut cmd = Command::new(BIN);
        cmd.args(["pack", "--status", "--firefox", fx.ff.to_str().unwrap()])
            .env("XDG_STATE_HOME", &state);
        if json {
            cmd.arg("--json");
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let reply: Value = serde_json::from_str(&status(true)).unwrap();
    assert_eq!(reply["packed"], Value::Null);
    let s = &reply["saving"];
    let data = std::fs::read(&libxul).unwrap();
    let block = 131_072usize;
    let text_blocks: u64 = (0..8)
        .map(|b| lz4_flex::block::compress(&data[b * block..(b + 1) * block]).len() as u64)
        .sum();
    assert!(
        text_blocks < 8 * 131_072 / 10,
        "text compresses: {text_blocks}"
    );
    assert_eq!(s["basis"], "estimate");
    assert_eq!(
        (s["compressor"].as_str(), s["block_size"].as_u64()),
        (Some("lz4"), Some(131_072))
    );
    assert_eq!(s["build_id"], started::BUILD);
    assert_eq!(s["traces"], 1);
    assert_eq!(s["files"], 1);
    assert_eq!(s["bytes_plain"], 512 * PAGE);
    assert_eq!(s["bytes_blocks"], 16 * 131_072);
    assert_eq!(s["bytes_compressed"], text_blocks + 8 * 131_072);
    assert_eq!(
        (s["bytes_unmapped"].as_u64(), s["bytes_outside"].as_u64()),
        (Some(0), Some(0))
    );
    // The sentence says the same figures (MB rounded as everywhere).
    let said = status(false);
    let mb = |b: u64| format!("{:.1} MB", b as f64 / 1e6);
    for figure in [
        mb(512 * PAGE),
        mb(16 * 131_072),
        mb(text_blocks + 8 * 131_072),
    ] {
        assert!(said.contains(&figure), "{figure} not in: {said}");
    }
    assert!(said.contains("(100% of the bytes it needs"), "{said}");
    // Kept in the state folder for the next look; another trace (another plan) renews it.
    assert!(state.join("about-startup/packing.json").is_file());
    let mut more = trace.clone();
    more.recorded_at_ms = 2;
    started::save(&state, &more);
    let again: Value = serde_json::from_str(&status(true)).unwrap();
    assert_eq!(again["saving"]["traces"], 2, "made anew, not the kept one");
}

// ---- On a real loop mount (root) ----

/// A traced cold start of the mounted install: libxul.so pages 512-767 at 5 ms, 0-255 at 50 ms.
fn store_trace(state: &Path, mnt: &Path) {
    let trace = started::trace(
        mnt,
        vec![started::file(
            &mnt.join("libxul.so"),
            vec![[0, 256], [512, 256]],
        )],
        vec![
            started::read(5.0, 0, 512, 256, "sync"),
            started::read(50.0, 0, 0, 512, "sync"),
        ],
    );
    started::save(state, &trace);
}

fn resident(path: &Path) -> usize {
    let f = std::fs::File::open(path).unwrap();
    let mut core = Vec::new();
    sys::mincore_file(&f, f.metadata().unwrap().len(), &mut core).unwrap();
    core.iter().filter(|b| *b & 1 != 0).count()
}

/// Pages of `path` brought into the page cache since it was last dropped: cached now, or cached
/// and since reclaimed (cachestat counts a page reclaim took out as evicted; the tests' own
/// drop, `POSIX_FADV_DONTNEED`, leaves no such count: tests/prefetch.rs checks the kernel does
/// so). A DAMON kdamond paging out idle cache (CI machines of this kind run one) cannot make a
/// page the prefetch read look unread. Without cachestat (Linux < 6.5), [`resident`].
fn brought_in(path: &Path) -> usize {
    let f = std::fs::File::open(path).unwrap();
    if !sys::cachestat_available() {
        return resident(path);
    }
    let c = sys::cachestat(&f, 0, f.metadata().unwrap().len())
        .unwrap()
        .unwrap();
    usize::try_from(c.cached + c.evicted).unwrap()
}

fn record_of(state: &Path, pid: u32) -> Value {
    let path = state.join("about-startup/last-prefetch.json");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(v) = std::fs::read(&path).map(|b| serde_json::from_slice::<Value>(&b).unwrap()) {
            if v["firefox_pid"] == pid {
                return v;
            }
        }
        assert!(Instant::now() < deadline, "no prefetch record for {pid}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The fixture packed, a fake `firefox` in it, loop-mounted read-only; unmounted on drop.
struct Mounted {
    fx: Fixture,
    image: PathBuf,
    mnt: PathBuf,
    state: PathBuf,
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mnt).status();
    }
}

fn mounted() -> Mounted {
    assert_eq!(sys::geteuid(), 0, "this test needs root");
    let fx = Fixture::new_in(Path::new("/var/tmp"));
    let script = fx.ff.join("firefox");
    std::fs::write(
        &script,
        "#!/bin/sh\necho \"$$ $*\" > \"$FAKE_FIREFOX_OUT\"\nsleep 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let image = fx.root.path().join("ff.snap");
    squash(&fx.ff, &image);
    let mnt = fx.root.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    run(Command::new("mount")
        .args(["-t", "squashfs", "-o", "loop,ro"])
        .arg(&image)
        .arg(&mnt));
    let state = fx.root.path().join("state");
    store_trace(&state, &mnt);
    Mounted {
        fx,
        image,
        mnt,
        state,
    }
}

fn launch(cmd: &mut Command, m: &Mounted, out: &Path) -> Value {
    let status = cmd
        .args(["launch", "--prefetch", "--strategy", "beside", "--firefox"])
        .arg(&m.mnt)
        .env("XDG_STATE_HOME", &m.state)
        .env("FAKE_FIREFOX_OUT", out)
        .status()
        .unwrap();
    assert!(status.success());
    let pid: u32 = std::fs::read_to_string(out)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    record_of(&m.state, pid)
}

fn evict_both(m: &Mounted) {
    let libxul = m.mnt.join("libxul.so");
    let folder = about_startup_host::os::beneath::Folder::open(&m.mnt).unwrap();
    let _ = evict::evict(&folder, std::slice::from_ref(&libxul));
    let image_folder =
        about_startup_host::os::beneath::Folder::open(m.image.parent().unwrap()).unwrap();
    let _ = evict::evict(&image_folder, std::slice::from_ref(&m.image));
    assert_eq!((resident(&libxul), resident(&m.image)), (0, 0), "evicted");
    assert_eq!(
        brought_in(&m.image),
        0,
        "the image's pages left no count behind"
    );
}

#[test]
#[ignore = "needs root (mount -o loop): npm test runs it with --ignored as root"]
fn a_readable_image_is_prefetched_raw_and_nothing_is_read_through_the_mount() {
    let m = mounted();
    let c = compressed::detect(&m.mnt, None).unwrap();
    assert_eq!(
        (c.format, c.verdict, &c.access),
        (Format::Squashfs, Verdict::ImageRanges, &Access::Readable)
    );
    assert_eq!(
        c.image.as_deref(),
        Some(m.image.canonicalize().unwrap().as_path())
    );
    evict_both(&m);
    let out = m.fx.root.path().join("out");
    let record = launch(&mut Command::new(BIN), &m, &out);
    assert_eq!(record["compressed"]["verdict"], "image_ranges", "{record}");
    let read = &record["image_read"];
    assert_eq!(read["files_mapped"], 1, "{record}");
    assert_eq!(read["bytes_files_mapped"], 512 * PAGE, "{record}");
    assert_eq!(read["ended"], "done", "{record}");
    // The used pages 0-255 and 512-767 lie in blocks 0-7 and 16-23 (32 pages a block): 16
    // blocks, stored as is (the fixture's bytes do not compress).
    assert_eq!(read["bytes_image_planned"], 16 * 131_072, "{record}");
    assert_eq!(read["bytes_image_read"], 16 * 131_072, "{record}");
    // Two batches by first use: pages 512-767 (needed at 5 ms) before 0-255 (at 50 ms), though
    // image order has them the other way round; the record's own batches are the image's.
    assert_eq!(
        (&read["batches"], &read["batches_done"]),
        (&2.into(), &2.into()),
        "{record}"
    );
    assert_eq!(
        (&record["batches"], &record["batches_done"]),
        (&2.into(), &2.into()),
        "{record}"
    );
    // The kernel's mount is never warmed through (its one decompressor is Firefox's too).
    assert_eq!(
        (
            &read["bytes_warm_planned"],
            &read["bytes_warmed"],
            &read["warm_ms"]
        ),
        (&0.into(), &0.into(), &Value::Null),
        "{record}"
    );
    // Not one page decompressed through the mount; the image's pages are in the cache.
    assert_eq!(
        resident(&m.mnt.join("libxul.so")),
        0,
        "the prefetch read through the mount"
    );
    assert!(
        brought_in(&m.image) >= 16 * 32,
        "the image's ranges were brought into the cache"
    );
    // The bytes it read are the file's: the mapped blocks of the image hold libxul's pages.
    let img = std::fs::File::open(&m.image).unwrap();
    let blocks = compressed::file_blocks(&m.image, Path::new("libxul.so")).unwrap();
    let mut got = vec![0u8; 4096];
    img.read_exact_at(&mut got, blocks.blocks_start + 16 * 131_072)
        .unwrap();
    let mut want = vec![0u8; 4096];
    std::fs::File::open(m.fx.ff.join("libxul.so"))
        .unwrap()
        .read_exact_at(&mut want, 512 * PAGE)
        .unwrap();
    assert_eq!(got, want);
}

#[test]
#[ignore = "needs root (mount -o loop, setpriv to nobody): npm test runs it with --ignored as root"]
fn a_snaps_unreadable_image_leaves_the_prefetch_off_and_nothing_is_read() {
    let m = mounted();
    // A Snap's image: root's, 0600. nobody reaches the files only through the mount.
    std::fs::set_permissions(&m.image, std::fs::Permissions::from_mode(0o600)).unwrap();
    for dir in [m.fx.root.path().to_path_buf(), m.state.clone()] {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let chown = |p: &Path| std::os::unix::fs::chown(p, Some(65534), Some(65534)).unwrap();
    for p in [
        m.state.clone(),
        m.state.join("about-startup"),
        m.state.join("about-startup/traces"),
    ] {
        chown(&p);
    }
    for entry in std::fs::read_dir(m.state.join("about-startup/traces")).unwrap() {
        chown(&entry.unwrap().path());
    }
    let bin = m.fx.root.path().join("about-startup-host");
    executable::copy_executable(Path::new(BIN), &bin);
    let out = m.fx.root.path().join("out");
    std::fs::write(&out, b"").unwrap();
    chown(&out);
    evict_both(&m);
    let mut cmd = Command::new("setpriv");
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&bin)
        .env("HOME", "/nonexistent");
    let record = launch(&mut cmd, &m, &out);
    assert_eq!(record["compressed"]["verdict"], "left_off", "{record}");
    assert_eq!(
        record["compressed"]["left_off"], "image_not_readable",
        "{record}"
    );
    assert_eq!(
        record["compressed"]["access"]["code"], "not_readable",
        "{record}"
    );
    assert_eq!(record["bytes_read"], 0, "{record}");
    assert!(record.get("image_read").is_none(), "{record}");
    // Nothing was read through the mount: libxul's pages there are still out. (The image's
    // pages are not asserted: starting the fake `firefox` reads its block of the image, and the
    // disk's readahead around it is the machine's.)
    assert_eq!(resident(&m.mnt.join("libxul.so")), 0);
    // The CLI says so, in the words of the issue.
    let said = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&bin)
        .args(["preload", "--plan", "--firefox"])
        .arg(&m.mnt)
        .env("HOME", "/nonexistent")
        .env("XDG_STATE_HOME", &m.state)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&said.stdout);
    assert!(
        said.status.success(),
        "{}",
        String::from_utf8_lossy(&said.stderr)
    );
    assert!(
        text.contains("this install is on a compressed squashfs mount")
            && text
                .contains("a prefetch through the mount would decompress on its one decompressor")
            && text.trim_end().ends_with("left off"),
        "{text}"
    );
    assert_eq!(
        resident(&m.mnt.join("libxul.so")),
        0,
        "the login preload read nothing through the mount"
    );
}

#[test]
#[ignore = "needs root (mount -o loop): npm test runs it with --ignored as root"]
fn a_planted_image_behind_a_real_mount_is_refused() {
    let m = mounted();
    // Another squashfs image, of other files: what someone might leave at a path the host reads.
    let other = m.fx.root.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("x"), b"x").unwrap();
    let planted = m.fx.root.path().join("planted.snap");
    squash(&other, &planted);
    match compressed::open_image(&planted, &m.mnt, Format::Squashfs) {
        Err(Access::Refused { why }) => assert!(why.contains("superblock differs"), "{why}"),
        other => panic!("planted image not refused: {other:?}"),
    }
    // The real one is accepted against the same mount.
    assert!(compressed::open_image(&m.image, &m.mnt, Format::Squashfs).is_ok());
}
