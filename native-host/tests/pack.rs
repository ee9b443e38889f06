//! `pack`, the packed launch and `unpack`, for real (issue 41): the built binary packs a fake
//! Firefox install with mksquashfs, `launch --prefetch` (the desktop entry's command) starts the
//! `firefox` in the mounted image while the image is of the install's build, and the plain one
//! as soon as the build changed (a Firefox update) or the mount point was tampered with;
//! `unpack` leaves nothing behind. Mounting needs squashfuse with /dev/fuse or root (a loop
//! mount): `#[ignore]`d, npm test runs it with --ignored as root.

#[path = "support/install_fixture.rs"]
mod fixture;
#[path = "support/traced_start.rs"]
mod started;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use about_startup_host::os::sys;
use fixture::{Fixture, APP_INI};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_about-startup-host");

struct Env {
    fx: Fixture,
    state: PathBuf,
    home: PathBuf,
    out: PathBuf,
}

impl Env {
    fn new() -> Env {
        assert_eq!(sys::geteuid(), 0, "this test needs root");
        let fx = Fixture::new_in(Path::new("/var/tmp"));
        // A `firefox` that says where it was started from.
        let script = fx.ff.join("firefox");
        std::fs::write(
            &script,
            "#!/bin/sh\necho \"$0 $*\" > \"$FAKE_FIREFOX_OUT\"\n",
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let (state, home) = (fx.root.path().join("state"), fx.root.path().join("home"));
        std::fs::create_dir_all(&home).unwrap();
        let out = fx.root.path().join("out");
        Env {
            fx,
            state,
            home,
            out,
        }
    }

    fn host(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .args(args)
            .env("XDG_STATE_HOME", &self.state)
            .env("HOME", &self.home)
            .env("FAKE_FIREFOX_OUT", &self.out)
            .output()
            .unwrap()
    }

    /// `pack --firefox <fixture>`, which must succeed.
    fn pack_ok(&self) {
        let packed = self.host(&["pack", "--firefox", self.fx.ff.to_str().unwrap()]);
        assert!(
            packed.status.success(),
            "{}",
            String::from_utf8_lossy(&packed.stderr)
        );
    }

    fn pack_dir(&self) -> PathBuf {
        self.state.join("about-startup/pack")
    }

    /// `launch --prefetch --firefox <ff>/firefox -- --new-window`: which `firefox` ran, and stderr.
    fn launch(&self) -> (String, String) {
        let _ = std::fs::remove_file(&self.out);
        let binary = self.fx.ff.join("firefox");
        let out = self.host(&[
            "launch",
            "--prefetch",
            "--firefox",
            binary.to_str().unwrap(),
            "--",
            "--new-window",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let ran = std::fs::read_to_string(&self.out).unwrap();
        (
            ran.trim().to_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn set_build(&self, build: &str) {
        std::fs::write(
            self.fx.ff.join("application.ini"),
            APP_INI.replace("20261103151912", build),
        )
        .unwrap();
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = self.host(&["unpack"]);
    }
}

/// The file system type mounted exactly at `mnt`, the last mount there.
fn fs_type_at(mnt: &Path) -> Option<String> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter(|l| l.split(' ').nth(4) == Some(mnt.to_str().unwrap()))
        .filter_map(|l| l.split(" - ").nth(1)?.split(' ').next().map(str::to_owned))
        .next_back()
}

fn mounted(mnt: &Path) -> bool {
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .any(|l| l.split(' ').nth(4) == Some(mnt.to_str().unwrap()))
}

#[test]
#[ignore = "needs root (a FUSE or loop mount): npm test runs it with --ignored as root"]
fn a_packed_firefox_starts_from_its_image_and_never_once_the_build_changed() {
    let env = Env::new();
    let packed = env.host(&["pack", "--json", "--firefox", env.fx.ff.to_str().unwrap()]);
    assert!(
        packed.status.success(),
        "{}",
        String::from_utf8_lossy(&packed.stderr)
    );
    let reply: Value = serde_json::from_slice(&packed.stdout).unwrap();
    let mnt = env.pack_dir().join("mnt");
    assert_eq!(reply["packed"]["build_id"], "20261103151912");
    assert_eq!(reply["packed"]["mount_point"], mnt.to_str().unwrap());
    assert!(reply["packed"]["bytes_image"].as_u64().unwrap() > 0);
    assert!(env.pack_dir().join("firefox.squashfs").is_file());
    // zstd at pack's level, as the image itself says (its stored compressor options).
    assert_eq!(reply["packed"]["compressor"], "zstd");
    assert_eq!(reply["packed"]["level"], 19);
    let stat = Command::new("unsquashfs")
        .arg("-s")
        .arg(env.pack_dir().join("firefox.squashfs"))
        .output()
        .unwrap();
    let stat = String::from_utf8_lossy(&stat.stdout);
    assert!(stat.contains("compression-level 19"), "{stat}");

    // The same build: Firefox starts from the image, through the desktop entry's command.
    let (ran, said) = env.launch();
    assert_eq!(
        ran,
        format!("{} --new-window", mnt.join("firefox").display()),
        "{said}"
    );
    assert!(
        said.contains("starting Firefox from the packed image"),
        "{said}"
    );
    assert!(mounted(&mnt));

    // A Firefox update: the install's build is not the image's. The plain install starts, and
    // the launch says why (the image stays mounted; it is never used).
    env.set_build("20261201000000");
    let (ran, said) = env.launch();
    assert_eq!(
        ran,
        format!("{} --new-window", env.fx.ff.join("firefox").display()),
        "{said}"
    );
    assert!(
        said.contains(
            "the packed image is of build 20261103151912, the install is now build 20261201000000"
        ),
        "{said}"
    );
    let status: Value =
        serde_json::from_slice(&env.host(&["pack", "--status", "--json"]).stdout).unwrap();
    assert_eq!(status["current"], false, "{status}");

    // Packing again renews it: the new build starts from the image again.
    let again = env.host(&["pack", "--json", "--firefox", env.fx.ff.to_str().unwrap()]);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let (ran, said) = env.launch();
    assert_eq!(
        ran,
        format!("{} --new-window", mnt.join("firefox").display()),
        "{said}"
    );

    // unpack: unmounted, the image, its record and the folders gone.
    let gone = env.host(&["unpack", "--json"]);
    assert!(
        gone.status.success(),
        "{}",
        String::from_utf8_lossy(&gone.stderr)
    );
    let gone: Value = serde_json::from_slice(&gone.stdout).unwrap();
    assert_eq!(gone["unmounted"], true, "{gone}");
    assert!(!mounted(&mnt));
    assert!(
        !env.pack_dir().exists(),
        "unpack left {}",
        env.pack_dir().display()
    );
    let (ran, _) = env.launch();
    assert_eq!(
        ran,
        format!("{} --new-window", env.fx.ff.join("firefox").display())
    );
}

#[test]
#[ignore = "needs root (a FUSE or loop mount): npm test runs it with --ignored as root"]
fn a_symlinked_mount_point_or_a_swapped_image_is_refused_and_the_plain_install_starts() {
    let env = Env::new();
    env.pack_ok();
    let mnt = env.pack_dir().join("mnt");
    // The mount point swapped for a symlink to a folder of someone's choosing.
    let elsewhere = env.fx.root.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::remove_dir(&mnt).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &mnt).unwrap();
    let (ran, said) = env.launch();
    assert_eq!(
        ran,
        format!("{} --new-window", env.fx.ff.join("firefox").display()),
        "{said}"
    );
    assert!(said.contains("could not be mounted"), "{said}");
    assert!(!mounted(&mnt) && !mounted(&elsewhere));
    std::fs::remove_file(&mnt).unwrap();
    std::fs::create_dir(&mnt).unwrap();
    // The image replaced by a FIFO: never opened for the mount (nothing hangs).
    let image = env.pack_dir().join("firefox.squashfs");
    std::fs::remove_file(&image).unwrap();
    fixture::mkfifo(&image, 0o600);
    let (ran, said) = env.launch();
    assert_eq!(
        ran,
        format!("{} --new-window", env.fx.ff.join("firefox").display()),
        "{said}"
    );
    assert!(said.contains("not a regular file"), "{said}");
    assert!(!mounted(&mnt));
    // A pack of a folder that is no Firefox, or with a compressor mksquashfs would take as an
    // option, is refused before anything runs.
    let bad = env.host(&[
        "pack",
        "--comp=-e",
        "--firefox",
        env.fx.ff.to_str().unwrap(),
    ]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown compressor"));
}

#[test]
#[ignore = "needs root (a FUSE mount): npm test runs it with --ignored as root"]
fn a_plan_traced_on_the_packed_mount_still_matches_after_the_image_is_mounted_again() {
    // pack mounts with squashfuse_ll where it is present: here it must be, or this test
    // would test the kernel's loop mount instead.
    assert!(
        Command::new("squashfuse_ll").arg("--help").output().is_ok(),
        "squashfuse_ll is missing: apt install squashfuse (pack mounts its image with it)"
    );
    let env = Env::new();
    env.pack_ok();
    let mnt = env.pack_dir().join("mnt");
    let (_, said) = env.launch();
    assert_eq!(
        fs_type_at(&mnt).as_deref(),
        Some("fuse.squashfuse_ll"),
        "{said}"
    );
    // A start traced on this mount: libxul.so's first 256 pages (1 MiB of its 4 MiB) used.
    let libxul = mnt.join("libxul.so");
    let ino = std::fs::metadata(&libxul).unwrap().ino();
    started::save(
        &env.state,
        &started::trace(&mnt, vec![started::file(&libxul, vec![[0, 256]])], vec![]),
    );
    let plan = || -> Value {
        let out = env.host(&[
            "plan",
            "--source",
            "trace",
            "--firefox",
            mnt.to_str().unwrap(),
            "--json",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let before = plan();
    assert_eq!(before["changed_files"], Value::Array(vec![]), "{before}");
    assert_eq!(before["planned_install_bytes"], 256 * 4096, "{before}");

    // Unmounted (a logout, a reboot) and mounted again by the next launch: the same inode
    // numbers, so the traced pages are still planned, not the whole file.
    let umount = Command::new("umount").arg(&mnt).status().unwrap();
    assert!(umount.success() && !mounted(&mnt));
    let (_, said) = env.launch();
    assert_eq!(
        fs_type_at(&mnt).as_deref(),
        Some("fuse.squashfuse_ll"),
        "{said}"
    );
    // Other files looked up first this time (high-level squashfuse numbers files in lookup
    // order, so libxul.so would get another number).
    for other in ["browser/omni.ja", "dependentlibs.list", "empty"] {
        std::fs::metadata(mnt.join(other)).unwrap();
    }
    assert_eq!(std::fs::metadata(&libxul).unwrap().ino(), ino);
    let after = plan();
    assert_eq!(after["changed_files"], Value::Array(vec![]), "{after}");
    assert_eq!(after["planned_install_bytes"], 256 * 4096, "{after}");
}

#[test]
#[ignore = "needs root (a FUSE mount): npm test runs it with --ignored as root"]
fn on_the_packed_fuse_mount_the_prefetch_decompresses_the_planned_blocks_ahead() {
    assert!(
        Command::new("squashfuse_ll").arg("--help").output().is_ok(),
        "squashfuse_ll is missing: apt install squashfuse (pack mounts its image with it)"
    );
    let env = Env::new();
    // A `firefox` that says its pid and runs until the test has the prefetch's record (the
    // prefetch stops when Firefox exits; the warming thread is SCHED_IDLE, slow on a busy
    // machine), at most a minute: written before `pack`, so the image holds it.
    std::fs::write(
        env.fx.ff.join("firefox"),
        "#!/bin/sh\necho \"$$ $0\" > \"$FAKE_FIREFOX_OUT\"\n\
         for i in $(seq 600); do [ -e \"$FAKE_FIREFOX_OUT.done\" ] && exit; sleep 0.1; done\n",
    )
    .unwrap();
    env.pack_ok();
    let mnt = env.pack_dir().join("mnt");
    // The first launch mounts the image; its `firefox` leaves at once.
    let done = env.out.with_extension("done");
    std::fs::write(&done, "").unwrap();
    let (_, said) = env.launch();
    std::fs::remove_file(&done).unwrap();
    assert_eq!(
        fs_type_at(&mnt).as_deref(),
        Some("fuse.squashfuse_ll"),
        "{said}"
    );
    // A start traced on this mount: libxul.so's first 256 pages (1 MiB of its 4 MiB) read.
    let libxul = mnt.join("libxul.so");
    started::save(
        &env.state,
        &started::trace(
            &mnt,
            vec![started::file(&libxul, vec![[0, 256]])],
            vec![started::read(5.0, 0, 0, 256, "sync")],
        ),
    );
    let cached = || {
        let f = std::fs::File::open(&libxul).unwrap();
        let mut core = Vec::new();
        sys::mincore_file(&f, f.metadata().unwrap().len(), &mut core).unwrap();
        core.iter().map(|b| b & 1).collect::<Vec<u8>>()
    };
    let f = std::fs::File::open(&libxul).unwrap();
    sys::fadvise(&f, 0, 0, sys::Advice::DontNeed).unwrap();
    assert!(cached().iter().all(|&c| c == 0), "evicted");

    // This one runs until told: `launch` becomes that `firefox`.
    let _ = std::fs::remove_file(&env.out);
    let mut launched = Command::new(BIN)
        .args(["launch", "--prefetch", "--firefox"])
        .arg(env.fx.ff.join("firefox"))
        .env("XDG_STATE_HOME", &env.state)
        .env("HOME", &env.home)
        .env("FAKE_FIREFOX_OUT", &env.out)
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(55);
    let pid: u32 = loop {
        if let Some(pid) = std::fs::read_to_string(&env.out)
            .ok()
            .and_then(|ran| ran.split(' ').next()?.parse().ok())
        {
            break pid;
        }
        assert!(std::time::Instant::now() < deadline, "firefox never ran");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let path = env.state.join("about-startup/last-prefetch.json");
    let record = loop {
        if let Ok(v) = std::fs::read(&path).map(|b| serde_json::from_slice::<Value>(&b).unwrap()) {
            if v["firefox_pid"] == pid {
                break v;
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no prefetch record for {pid}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    std::fs::write(&done, "").unwrap();
    assert!(launched.wait().unwrap().success());
    assert_eq!(record["compressed"]["format"], "squashfuse", "{record}");
    let read = &record["image_read"];
    assert_eq!(read["ended"], "done", "{record}");
    // The traced MiB, whole blocks of it, read through the mount once its image blocks were in.
    assert_eq!(read["bytes_warm_planned"], 256 * 4096, "{record}");
    assert_eq!(read["bytes_warmed"], 256 * 4096, "{record}");
    assert!(read["warm_ms"].is_u64(), "{record}");
    assert!(read["warm_ended"].is_null(), "{record}");
    // Decompressed into the mount's page cache: the traced pages, and nothing past them.
    let pages = cached();
    assert!(pages[..256].iter().all(|&c| c == 1), "{:?}", &pages[..256]);
    assert!(pages[256..].iter().all(|&c| c == 0), "read past the plan");
}
