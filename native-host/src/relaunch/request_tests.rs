//! Each refusal of the threat model (docs/design/pkexec.md), as root would meet it: the checks
//! are plain permission and identity logic, so a `User` made by hand stands for the user pkexec
//! names, and no test needs root.

use std::os::unix::fs::PermissionsExt;

use super::*;
use crate::state::Via;

fn me() -> u32 {
    crate::os::sys::geteuid()
}

fn user(uid: u32, home: &Path, state_home: &Path) -> User {
    User {
        uid,
        gid: if uid == me() {
            unsafe { libc::getegid() }
        } else {
            54321
        },
        name: format!("user{uid}"),
        home: home.to_path_buf(),
        groups: Vec::new(),
        state_home: Some(state_home.to_path_buf()),
        via: Via::Pkexec,
    }
}

/// A folder that passes for a Firefox install, readable by everyone, with a profile folder of
/// the current user beside it.
struct Stage {
    _root: tempfile::TempDir,
    install: PathBuf,
    profile: PathBuf,
    state: PathBuf,
}

fn stage() -> Stage {
    let root = tempfile::tempdir().unwrap();
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let install = root.path().join("firefox");
    std::fs::create_dir(&install).unwrap();
    std::fs::write(
        install.join("application.ini"),
        "[App]\nName=Firefox\nVersion=153.0\nBuildID=1\n",
    )
    .unwrap();
    std::fs::copy("/bin/true", install.join("firefox")).unwrap();
    let profile = root.path().join("profile");
    std::fs::create_dir(&profile).unwrap();
    let state = root.path().join("state");
    std::fs::create_dir(&state).unwrap();
    Stage {
        install: install.canonicalize().unwrap(),
        profile,
        state,
        _root: root,
    }
}

fn request(s: &Stage) -> LaunchRequest {
    let b = |p: &Path| p.as_os_str().as_bytes().to_vec();
    LaunchRequest {
        version: 1,
        exe: b(&s.install.join("firefox")),
        argv: vec![
            b(&s.install.join("firefox")),
            b"-profile".to_vec(),
            b(&s.profile),
        ],
        env: vec![(b"HOME".to_vec(), b"/home/u".to_vec())],
        cwd: Some(b(&s.install)),
        install_dir: b(&s.install),
        profile: Some(b(&s.profile)),
    }
}

fn refused(result: Result<Accepted, Error>, why: &str) {
    let message = result.expect_err("must be refused").to_string();
    assert!(
        message.contains("refusing") && message.contains(why),
        "{message}"
    );
}

#[test]
fn a_request_for_the_users_own_firefox_is_accepted_with_its_arguments_and_environment() {
    let s = stage();
    let u = user(me(), &s.state, &s.state);
    let ok = check(&request(&s), &u).unwrap();
    assert_eq!(ok.binary, s.install.join("firefox"));
    assert_eq!(
        ok.args,
        ["-profile".into(), s.profile.clone().into_os_string()]
    );
    assert_eq!(ok.env, [("HOME".into(), "/home/u".into())]);
    assert_eq!(ok.cwd, s.install);
}

#[test]
fn another_program_than_the_installs_firefox_is_refused() {
    let s = stage();
    let u = user(me(), &s.state, &s.state);
    let mut req = request(&s);
    req.exe = b"/bin/sh".to_vec();
    refused(check(&req, &u), "is not the Firefox executable");
    // A folder that is no Firefox install at all.
    let mut req = request(&s);
    req.install_dir = s.state.as_os_str().as_bytes().to_vec();
    refused(check(&req, &u), "refusing");
}

#[test]
fn an_install_folder_the_user_may_not_open_is_refused() {
    let s = stage();
    std::fs::set_permissions(&s.install, std::fs::Permissions::from_mode(0o700)).unwrap();
    // Another uid: the folder's owner bits are not theirs, the others bits are 0.
    let other = user(me() + 4242, &s.state, &s.state);
    refused(check(&request(&s), &other), "is not a folder");
    assert!(!user_may_enter(&s.install, &other, true));
    std::fs::set_permissions(&s.install, std::fs::Permissions::from_mode(0o711)).unwrap();
    assert!(user_may_enter(&s.install, &other, false), "searchable");
    assert!(
        !user_may_enter(&s.install, &other, true),
        "but not listable"
    );
}

#[test]
fn a_symlink_to_an_install_behind_a_folder_the_user_may_not_pass_is_refused() {
    let s = stage();
    // The install moved into a 0700 folder; a link to it from a folder everyone may read.
    let locked = s.state.join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::rename(&s.install, locked.join("firefox")).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::set_permissions(&s.state, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink(locked.join("firefox"), &s.install).unwrap();
    let other = user(me() + 4242, &s.state, &s.state);
    let mut req = request(&s);
    req.profile = None;
    req.argv.truncate(1);
    refused(check(&req, &other), "is not a folder");
}

#[test]
fn a_profile_the_user_does_not_own_is_refused_named_or_in_the_arguments() {
    let s = stage();
    let other = user(me() + 4242, &s.state, &s.state);
    refused(check(&request(&s), &other), "is not a folder user");
    let mine = user(me(), &s.state, &s.state);
    let mut req = request(&s);
    req.profile = None;
    req.argv[2] = b"/".to_vec(); // root's folder, named only in the arguments
    if me() != 0 {
        refused(check(&req, &mine), "the profile / is not a folder");
    } else {
        // As root "/" is root's own: a user's request is what matters.
        refused(check(&req, &other), "refusing");
    }
}

#[test]
fn take_reads_the_request_once_from_the_users_own_state_folder_and_refuses_a_symlink() {
    let s = stage();
    let u = user(me(), &s.state, &s.state);
    let folder = crate::state::locate(Some(&u)).unwrap();
    write(&folder, &request(&s)).unwrap();
    assert_eq!(take(&u).unwrap(), request(&s));
    assert!(take(&u).is_err(), "one launch per request");
    std::os::unix::fs::symlink("/etc/passwd", folder.join(REQUEST_FILE)).unwrap();
    assert!(take(&u).is_err(), "a symlink is not a request");
    // Another user's state folder (not owned by the uid pkexec names) is not read.
    let other = user(me() + 4242, &s.state, &s.state);
    assert!(take(&other).is_err());
}
