//! `pack`: the user's Firefox install packed into a compressed read-only image (mksquashfs),
//! mounted with the least privilege that works (squashfuse as the user where FUSE is open to
//! them, else, for root only, the kernel's squashfs on a loop device), and started from there by
//! `launch --prefetch` (the desktop entry's command) while the image is of the install's build.
//!
//! Everything lives in the state folder's `pack/` (a real 0700 folder of the user, state/dir.rs):
//! `firefox.squashfs`, `pack.json` (what was packed, of which build, at what cost) and `mnt/`.
//! `unpack` unmounts and removes all three: the install itself is never touched.
//!
//! Never a stale image: at every launch the install's build id (its application.ini) must equal
//! the one packed, and the mounted image's own application.ini must say the same; else the plain
//! install starts and the launch says why (docs/design/compressed.md).

use std::fs::File;
use std::os::unix::fs::MetadataExt as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context as _};
use serde::Serialize;

use crate::firefox::{app_ini, compressed, mount};
use crate::state::StateDir;

mod mksquashfs;
pub use mksquashfs::{default_level, levels, sort_lines, Options, COMPRESSORS, ZSTD_LEVEL};

pub use crate::firefox::packed::{folder, image_for, read, Packed, FOLDER, IMAGE, MOUNT, RECORD};

/// Why a packed image is not used for a launch (the plain install starts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotUsed {
    /// The install's build changed since it was packed (a Firefox update).
    Stale {
        packed: Option<String>,
        now: Option<String>,
    },
    /// The image file is missing, replaced or no regular file.
    Image(String),
    /// Mounting failed.
    Mount(String),
    /// The launch names no profile and the host cannot tell which profile the plain install
    /// starts (Firefox keys its default profile by the install's path).
    Profile(String),
}

impl std::fmt::Display for NotUsed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotUsed::Stale { packed, now } => write!(
                f,
                "the packed image is of build {}, the install is now build {} (an update): starting the plain install; `about-startup-host pack` renews the image",
                packed.as_deref().unwrap_or("unknown"),
                now.as_deref().unwrap_or("unknown")
            ),
            NotUsed::Image(why) => write!(f, "the packed image is not usable ({why}): starting the plain install"),
            NotUsed::Mount(why) => write!(f, "the packed image could not be mounted ({why}): starting the plain install"),
            NotUsed::Profile(why) => write!(f, "{why}: starting the plain install"),
        }
    }
}

/// Whether the packed image may be used for a launch of `install_dir`: same build now as
/// packed, and the image file the one made. Pure but for reading application.ini and the image's
/// metadata.
pub fn check(packed: &Packed, install_dir: &Path) -> Result<(), NotUsed> {
    let (_, now) = app_ini::read(install_dir);
    if now.is_none() || now != packed.build_id {
        return Err(NotUsed::Stale {
            packed: packed.build_id.clone(),
            now,
        });
    }
    let meta = std::fs::symlink_metadata(&packed.image)
        .map_err(|e| NotUsed::Image(format!("{}: {e}", packed.image.display())))?;
    if !meta.file_type().is_file() {
        return Err(NotUsed::Image(format!(
            "{} is not a regular file",
            packed.image.display()
        )));
    }
    if meta.ino() != packed.image_ino || meta.len() != packed.bytes_image {
        return Err(NotUsed::Image(format!(
            "{} was replaced since it was packed",
            packed.image.display()
        )));
    }
    Ok(())
}

/// The first-use order of `install_dir`'s files from the stored traces of `build_id`.
fn traced_order(
    state: &StateDir,
    install_dir: &Path,
    build_id: Option<&str>,
) -> Vec<(String, f64)> {
    use crate::trace::plan_source::{self, Pages};
    let traces = plan_source::load(state, install_dir, crate::trace::store::MAX_TRACES);
    let picked = plan_source::of_build(&traces, build_id, Pages::Used);
    crate::trace::first_use::first_use(&picked)
        .into_iter()
        .filter_map(|f| {
            let rel = f.path.strip_prefix(install_dir).ok()?.to_str()?.to_owned();
            let t = f.pieces.iter().map(|p| p.t).fold(f64::INFINITY, f64::min);
            Some((rel, t))
        })
        .collect()
}

/// Bytes of the regular files under `dir` (not following symlinks).
fn bytes_under(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            match e.metadata() {
                Ok(m) if m.is_dir() => stack.push(e.path()),
                Ok(m) if m.is_file() => total += m.len(),
                _ => {}
            }
        }
    }
    total
}

/// Pack `install_dir` (canonical, a Firefox install) into the state folder's image; an image
/// mounted now is unmounted first, and the old one replaced only once the new one is complete.
pub fn pack(state: &StateDir, install_dir: &Path, opts: &Options) -> anyhow::Result<Packed> {
    opts.check()?;
    if !crate::firefox::install::looks_like_firefox(install_dir) {
        bail!(
            "{} is not a Firefox install folder (no application.ini)",
            install_dir.display()
        );
    }
    if compressed::detect(install_dir, None).is_some() {
        bail!(
            "{} is on a compressed mount already (a Snap, or a packed image): nothing to pack",
            install_dir.display()
        );
    }
    let (version, build_id) = app_ini::read(install_dir);
    let pack = folder(state, true)?.context("no pack folder")?;
    let _ = pack.sub(MOUNT, true)?;
    // As mountinfo names it (no symlink on the way), so that a mount there is recognised.
    let mount_point = pack
        .path_of(MOUNT)
        .canonicalize()
        .context("the pack folder's mount folder")?;
    if is_mounted_at(&mount_point) {
        unmount(&mount_point)?;
    }
    let order = if opts.sort {
        traced_order(state, install_dir, build_id.as_deref())
    } else {
        Vec::new()
    };
    let sorted_files = order.len() as u64;
    let sort_name = "sort.txt";
    let tmp_name = format!("{IMAGE}.new");
    pack.write(sort_name, sort_lines(order).as_bytes())?;
    let _ = pack.remove(&tmp_name);
    let tmp = pack.path_of(&tmp_name);
    let begun = Instant::now();
    let out = Command::new("mksquashfs")
        .args(opts.argv(install_dir, &tmp, &pack.path_of(sort_name)))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .output()
        .context("mksquashfs could not be run (apt install squashfs-tools)")?;
    let build_ms = u64::try_from(begun.elapsed().as_millis()).unwrap_or(u64::MAX);
    let _ = pack.remove(sort_name);
    if !out.status.success() {
        let _ = pack.remove(&tmp_name);
        bail!(
            "mksquashfs failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    // On disk before it replaces the old image (dirty pages cannot be evicted, and a crash must
    // not leave half an image under the real name).
    File::open(&tmp)
        .and_then(|f| f.sync_all())
        .context("syncing the new image")?;
    std::fs::rename(&tmp, pack.path_of(IMAGE)).context("renaming the new image")?;
    let image = pack.path_of(IMAGE);
    let meta = std::fs::symlink_metadata(&image)?;
    let packed = Packed {
        install_dir: install_dir.to_path_buf(),
        version,
        build_id,
        image,
        mount_point,
        image_ino: meta.ino(),
        compressor: opts.compressor.clone(),
        level: opts.level,
        block_size: opts.block_size,
        sorted_files,
        bytes_install: bytes_under(install_dir),
        bytes_image: meta.len(),
        build_ms,
        built_at_ms: crate::os::clock::now_ms(),
    };
    pack.write(RECORD, &serde_json::to_vec_pretty(&packed)?)?;
    Ok(packed)
}

/// Whether something is mounted exactly at `mount_point`.
#[must_use]
pub fn is_mounted_at(mount_point: &Path) -> bool {
    mount::find(mount_point).is_some_and(|m| m.mount_point == mount_point)
}

/// How the image was mounted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum How {
    /// It was mounted already (by an earlier launch).
    Already,
    /// squashfuse_ll (or squashfuse where it is missing), as the user.
    Squashfuse,
    /// The kernel's squashfs on a loop device (root only).
    Loop,
}

/// Mount the packed image at its mount point (if not mounted already), checking that what is
/// mounted there is this image and of the install's build. The mount point must be the state
/// folder's real `mnt` folder (a symlink there is refused by the state folder's rules).
pub fn mount_image(state: &StateDir, packed: &Packed) -> Result<How, NotUsed> {
    let pack = folder(state, false)
        .ok()
        .flatten()
        .ok_or_else(|| NotUsed::Image("no pack folder".to_owned()))?;
    // A real folder, made if missing, never a symlink (state/dir.rs refuses one).
    pack.sub(MOUNT, true)
        .map_err(|e| NotUsed::Mount(e.to_string()))?
        .ok_or_else(|| NotUsed::Mount("no mount folder".to_owned()))?;
    let mount_point = pack
        .path_of(MOUNT)
        .canonicalize()
        .map_err(|e| NotUsed::Mount(e.to_string()))?;
    if mount_point != packed.mount_point {
        return Err(NotUsed::Mount(format!(
            "the record names another mount point, {}",
            packed.mount_point.display()
        )));
    }
    let how = if is_mounted_at(&mount_point) {
        How::Already
    } else {
        mount_now(&packed.image, &mount_point).map_err(NotUsed::Mount)?
    };
    // What is mounted must be this image: squashfs there, the same build as packed.
    let mounted = mount::find(&mount_point).filter(|m| m.mount_point == mount_point);
    let fs_ok = mounted
        .as_ref()
        .and_then(|m| compressed::Format::of_fs_type(&m.fs_type))
        .is_some_and(compressed::Format::is_squashfs);
    let (_, build) = app_ini::read(&mount_point);
    if !fs_ok || build != packed.build_id {
        return Err(NotUsed::Mount(format!(
            "{} does not hold the packed image of build {}",
            mount_point.display(),
            packed.build_id.as_deref().unwrap_or("unknown")
        )));
    }
    Ok(how)
}

/// The FUSE programs `pack` mounts its image with, in the order tried
/// ([`mount_image`]): squashfuse_ll, whose inode numbers stay the same from one mount to the next.
pub const FUSE_PROGRAMS: [&str; 2] = ["squashfuse_ll", "squashfuse"];

/// The arguments of a [`FUSE_PROGRAMS`] program that mount `image` read-only at `mount_point`
/// (it returns once mounted, its daemon left running until the unmount). Pure.
#[must_use]
pub fn fuse_argv(image: &Path, mount_point: &Path) -> Vec<std::ffi::OsString> {
    vec![
        "-o".into(),
        "ro".into(),
        image.as_os_str().to_owned(),
        mount_point.as_os_str().to_owned(),
    ]
}

fn mount_now(image: &Path, mount_point: &Path) -> Result<How, String> {
    // The image must be a regular file reached without a symlink (a FIFO would hang the mount).
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(image)
        .map_err(|e| format!("{}: {e}", image.display()))?;
    if !f.metadata().is_ok_and(|m| m.file_type().is_file()) {
        return Err(format!("{} is not a regular file", image.display()));
    }
    drop(f);
    // squashfuse_ll first: its inode numbers are the image's own inode ids, the same at every
    // mount of an image, where high-level squashfuse numbers files in lookup order, anew at each
    // mount (a traced plan matches files by inode and size, learn/plan/traced.rs). Both come in
    // Debian's squashfuse package; squashfuse alone is used where squashfuse_ll is missing.
    let mut why = None;
    for program in FUSE_PROGRAMS {
        match Command::new(program)
            .args(fuse_argv(image, mount_point))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .output()
        {
            Ok(out) if out.status.success() => return Ok(How::Squashfuse),
            Ok(out) => {
                why = Some(format!(
                    "{program}: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                why = Some(format!("{program} could not be run ({e})"));
                break;
            }
        }
    }
    if crate::os::sys::geteuid() != 0 {
        return Err(why.unwrap_or_else(|| {
            "squashfuse_ll and squashfuse are missing (apt install squashfuse)".to_owned()
        }));
    }
    let out = Command::new("mount")
        .args(["-t", "squashfs", "-o", "loop,ro,nodev,nosuid"])
        .arg(image)
        .arg(mount_point)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .output()
        .map_err(|e| format!("mount: {e}"))?;
    if out.status.success() {
        Ok(How::Loop)
    } else {
        Err(format!(
            "mount: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Unmount `mount_point` (FUSE as the user, else umount).
pub fn unmount(mount_point: &Path) -> anyhow::Result<()> {
    let fuse = mount::find(mount_point).is_some_and(|m| m.fs_type.starts_with("fuse"));
    // fuse3's fusermount3 (what Debian 12's squashfuse brings), fuse 2's fusermount, else
    // umount (root).
    let status = if fuse {
        Command::new("fusermount3")
            .arg("-u")
            .arg(mount_point)
            .status()
            .or_else(|_| {
                Command::new("fusermount")
                    .arg("-u")
                    .arg(mount_point)
                    .status()
            })
            .or_else(|_| Command::new("umount").arg(mount_point).status())
    } else {
        Command::new("umount").arg(mount_point).status()
    }
    .with_context(|| format!("unmounting {}", mount_point.display()))?;
    if !status.success() || is_mounted_at(mount_point) {
        bail!(
            "{} is still mounted (is Firefox still running from it? quit it first)",
            mount_point.display()
        );
    }
    Ok(())
}

/// What `unpack` removed.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Unpacked {
    pub unmounted: bool,
    pub bytes_freed: u64,
    pub removed: Vec<String>,
}

/// Unmount and remove the image, the record and the mount folder: the system as before `pack`.
pub fn unpack(state: &StateDir) -> anyhow::Result<Unpacked> {
    let mut done = Unpacked::default();
    let Some(pack) = folder(state, false)? else {
        return Ok(done);
    };
    let named = pack.path_of(MOUNT);
    let real = named.canonicalize().unwrap_or_else(|_| named.clone());
    if std::fs::symlink_metadata(&named).is_ok_and(|m| m.is_dir()) && is_mounted_at(&real) {
        unmount(&real)?;
        done.unmounted = true;
    }
    let mount_point = named;
    for name in [IMAGE, &format!("{IMAGE}.new"), RECORD, "sort.txt"] {
        let size = std::fs::symlink_metadata(pack.path_of(name))
            .map(|m| m.len())
            .unwrap_or(0);
        if pack.remove(name)? {
            done.bytes_freed += size;
            done.removed.push(pack.path_of(name).display().to_string());
        }
    }
    // A symlink put where the mount folder was is removed as a name, never followed.
    if std::fs::symlink_metadata(&mount_point).is_ok_and(|m| m.file_type().is_symlink())
        && pack.remove(MOUNT)?
    {
        done.removed.push(mount_point.display().to_string());
    }
    for dir in [mount_point, pack.path().to_path_buf()] {
        match std::fs::remove_dir(&dir) {
            Ok(()) => done.removed.push(dir.display().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => bail!("{} was left: {e}", dir.display()),
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packed(dir: &Path, image: &Path, build: &str) -> Packed {
        let meta = std::fs::metadata(image).unwrap();
        Packed {
            install_dir: dir.into(),
            version: Some("153.0".into()),
            build_id: Some(build.into()),
            image: image.into(),
            mount_point: "/nonexistent/mnt".into(),
            image_ino: meta.ino(),
            compressor: "zstd".into(),
            level: Some(19),
            block_size: 131_072,
            sorted_files: 0,
            bytes_install: 10,
            bytes_image: meta.len(),
            build_ms: 1,
            built_at_ms: 1,
        }
    }

    #[test]
    fn an_image_of_another_build_or_a_replaced_image_is_never_used() {
        let dir = tempfile::tempdir().unwrap();
        let ini = |build: &str| {
            std::fs::write(
                dir.path().join("application.ini"),
                format!("[App]\nVersion=153.0\nBuildID={build}\n"),
            )
            .unwrap();
        };
        ini("20261101000000");
        let image = dir.path().join("img");
        std::fs::write(&image, b"hsqs-and-more").unwrap();
        let p = packed(dir.path(), &image, "20261101000000");
        assert_eq!(check(&p, dir.path()), Ok(()));
        // A Firefox update: the install's build changed.
        ini("20261201000000");
        let stale = check(&p, dir.path()).unwrap_err();
        assert_eq!(
            stale,
            NotUsed::Stale {
                packed: Some("20261101000000".into()),
                now: Some("20261201000000".into())
            }
        );
        assert!(
            stale.to_string().contains("starting the plain install"),
            "{stale}"
        );
        ini("20261101000000");
        // The image swapped for another file of the same name (a new inode).
        std::fs::remove_file(&image).unwrap();
        std::fs::write(&image, b"hsqs-and-more").unwrap();
        let swapped = std::fs::metadata(&image).unwrap().ino();
        if swapped != p.image_ino {
            assert!(matches!(check(&p, dir.path()), Err(NotUsed::Image(_))));
        }
        // A FIFO where the image was.
        std::fs::remove_file(&image).unwrap();
        crate::os::mkfifo(&image);
        assert!(
            matches!(check(&p, dir.path()), Err(NotUsed::Image(why)) if why.contains("not a regular file"))
        );
        // A symlink to a good image: refused too (the record names the file itself).
        std::fs::remove_file(&image).unwrap();
        let real = dir.path().join("real");
        std::fs::write(&real, b"hsqs-and-more").unwrap();
        std::os::unix::fs::symlink(&real, &image).unwrap();
        assert!(matches!(check(&p, dir.path()), Err(NotUsed::Image(_))));
        // No build id at all in the install: never taken as a match.
        std::fs::write(dir.path().join("application.ini"), "[App]\nVersion=153.0\n").unwrap();
        assert!(matches!(
            check(
                &Packed {
                    build_id: None,
                    ..p.clone()
                },
                dir.path()
            ),
            Err(NotUsed::Stale { .. })
        ));
    }

    #[test]
    fn bad_options_or_no_firefox_are_refused_before_anything_runs() {
        // Each option's check: mksquashfs.rs. Here: pack() checks them before it makes anything.
        let state_dir = tempfile::tempdir().unwrap();
        let state = StateDir::create_at(state_dir.path()).unwrap();
        let bad = Options {
            compressor: "-e /etc".into(),
            ..Options::default()
        };
        assert!(pack(&state, Path::new("/nonexistent"), &bad)
            .unwrap_err()
            .to_string()
            .contains("unknown compressor"));
        assert!(pack(&state, state_dir.path(), &Options::default())
            .unwrap_err()
            .to_string()
            .contains("not a Firefox install"));
        assert!(
            !state_dir.path().join(FOLDER).exists(),
            "nothing made for a refused pack"
        );
    }
}
