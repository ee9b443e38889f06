//! `launch --prefetch`: Firefox at once, the prefetcher beside it (learn/prefetch/launch.rs),
//! as the user. Only what is needed to name the binary happens before Firefox starts: no
//! residency scan, no plan, no dpkg lookup when the binary is given.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context as _};

use crate::firefox::install as files;
use crate::learn::pack;
use crate::learn::prefetch::{launch, strategy, Knobs};
use crate::os::binary::firefox_binary;
use crate::state;

/// The install folder, the executable to run, and how it was found (`--firefox`, or
/// [`files::to_launch`]'s "PATH: firefox-esr", "usual folder"): `given` names either (an
/// executable is run as named: the desktop entry's own binary), else the installed Firefox the
/// user starts by name, never a running one's install (another session's copy).
pub fn firefox_of(given: Option<&Path>) -> anyhow::Result<(PathBuf, PathBuf, String)> {
    let Some(given) = given else {
        let install = files::to_launch(None)?;
        let binary = firefox_binary(&install.dir).with_context(|| {
            format!(
                "no firefox executable in {}; name it with --firefox",
                install.dir.display()
            )
        })?;
        return Ok((install.dir, binary, install.found_by));
    };
    let real = given
        .canonicalize()
        .with_context(|| format!("--firefox {}", given.display()))?;
    let (dir, binary) = if real.is_file() {
        let dir = real.parent().map(Path::to_path_buf).unwrap_or_default();
        (dir, real)
    } else {
        let binary = firefox_binary(&real)
            .with_context(|| format!("no firefox executable in {}", real.display()))?;
        (real, binary)
    };
    if !files::looks_like_firefox(&dir) {
        bail!(
            "{} is not in a Firefox install folder (no application.ini beside it); name the folder \
             Firefox is installed in, or its executable there (not a wrapper script in /usr/bin)",
            given.display()
        );
    }
    Ok((dir, binary, "--firefox".to_owned()))
}

/// What to start, prefetched how.
#[derive(Debug, Clone)]
pub struct Request {
    pub dir: PathBuf,
    pub binary: PathBuf,
    pub args: Vec<std::ffi::OsString>,
    pub cold: bool,
    pub strategy: strategy::Choice,
    pub paced: bool,
    pub knobs: Knobs,
}

/// Evict if cold, then become Firefox with the prefetcher beside it. Returns only when Firefox
/// could not be started.
pub fn run(req: &Request) -> anyhow::Error {
    if req.cold {
        match files::select(&req.dir, &[]) {
            Ok(selected) => {
                let summary = crate::pagecache::evict::evict(&selected.folder, &selected.files);
                crate::learn::last_preload::forget_here();
                eprintln!(
                    "evicted {} pages of {} files (a cold start)",
                    summary.pages_dropped,
                    selected.files.len()
                );
            }
            Err(e) => return e.into(),
        }
    }
    let (dir, binary, args) = packed_or_plain(req);
    let mut firefox = Command::new(&binary);
    firefox.args(&args);
    let state_dir = match state::locate() {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("about-startup-host: no prefetch ({e}); starting Firefox without it");
            let err = std::os::unix::process::CommandExt::exec(&mut firefox);
            return anyhow::anyhow!("could not start {}: {err}", req.binary.display());
        }
    };
    let read_ahead_kb = strategy::window_kb(&binary);
    // A compressed mount (mountinfo only: nothing is read before Firefox starts).
    let compressed = crate::firefox::mount::find(&dir)
        .is_some_and(|m| crate::firefox::compressed::Format::of_fs_type(&m.fs_type).is_some());
    let (strategy, reason) = strategy::decide_for(req.strategy, read_ahead_kb, compressed);
    let cwd = std::env::current_dir().unwrap_or_default();
    let p = launch::Prefetch {
        strategy,
        reason,
        read_ahead_kb,
        launched: crate::learn::plan::profile::launched(&req.args, &cwd),
        install_dir: dir.clone(),
        state_dir,
        paced: req.paced,
        knobs: req.knobs,
        verbose: true,
        known_image: crate::learn::pack::image_for(&dir),
    };
    let err = launch::exec_beside(firefox, &p);
    anyhow::anyhow!("could not start {}: {err}", binary.display())
}

/// The folder, executable and arguments to start: the packed image's (learn/pack/) when the
/// user packed this install and the image is of its build now, mounted; else the plain install,
/// saying why on stderr (a desktop launch's stderr is the session log).
fn packed_or_plain(req: &Request) -> (PathBuf, PathBuf, Vec<std::ffi::OsString>) {
    let plain = || (req.dir.clone(), req.binary.clone(), req.args.clone());
    let Ok(state) = state::open() else {
        return plain();
    };
    let Some(packed) = pack::read(&state).filter(|p| p.install_dir == req.dir) else {
        return plain();
    };
    let said = |why: &dyn std::fmt::Display| {
        eprintln!("about-startup-host: {why}");
        plain()
    };
    if let Err(why) = pack::check(&packed, &req.dir) {
        return said(&why);
    }
    // Firefox keys its default profile by the install's path: from the mount it would make a
    // new one. The launch names the profile the plain install starts, or starts the plain one.
    let mut args = req.args.clone();
    if crate::learn::plan::profile::launched(&req.args, Path::new("/"))
        == crate::learn::plan::profile::Launched::Default
    {
        match crate::firefox::profiles_ini::default_profile() {
            Ok(Some(profile)) => {
                args.splice(
                    0..0,
                    [
                        std::ffi::OsString::from("-profile"),
                        profile.into_os_string(),
                    ],
                );
            }
            Ok(None) => {} // no profiles yet: the first start makes one either way
            Err(why) => return said(&pack::NotUsed::Profile(why)),
        }
    }
    if let Err(why) = pack::mount_image(&state, &packed) {
        return said(&why);
    }
    let Some(name) = req.binary.file_name() else {
        return plain();
    };
    eprintln!(
        "about-startup-host: starting Firefox from the packed image (build {}) mounted on {}",
        packed.build_id.as_deref().unwrap_or("unknown"),
        packed.mount_point.display()
    );
    (
        packed.mount_point.clone(),
        packed.mount_point.join(name),
        args,
    )
}
