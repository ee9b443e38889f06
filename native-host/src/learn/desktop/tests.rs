use std::os::unix::fs::PermissionsExt;

use super::*;

/// A fake install (`ff/firefox-esr`, `ff/application.ini`), a system applications folder with
/// Debian's entry for it and another program's entry, and an empty user data folder.
struct World {
    _root: tempfile::TempDir,
    dirs: Dirs,
    install: PathBuf,
    system_entry: PathBuf,
    system_text: String,
}

const ENTRY: &str = "[Desktop Entry]\nName=Firefox ESR\nName[fr]=Firefox ESR\nExec=@FF@ %u\nType=Application\nIcon=firefox-esr\nMimeType=text/html;x-scheme-handler/http;x-scheme-handler/https;\nStartupWMClass=firefox-esr\nActions=new-private-window;\n\n[Desktop Action new-private-window]\nName=New Private Window\nExec=@FF@ --private-window %u\n";

fn world(exec: Option<&str>) -> World {
    let root = tempfile::tempdir().unwrap();
    let base = root.path().canonicalize().unwrap();
    let install = base.join("ff");
    std::fs::create_dir_all(&install).unwrap();
    std::fs::write(install.join("application.ini"), "[App]\nBuildID=1\n").unwrap();
    let binary = install.join("firefox-esr");
    std::fs::write(&binary, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
    let apps = base.join("share/applications");
    std::fs::create_dir_all(&apps).unwrap();
    let system_text = ENTRY.replace("@FF@", exec.unwrap_or(binary.to_str().unwrap()));
    let system_entry = apps.join("firefox-esr.desktop");
    std::fs::write(&system_entry, &system_text).unwrap();
    std::fs::write(
        apps.join("vim.desktop"),
        "[Desktop Entry]\nName=Vim\nExec=vim %F\n",
    )
    .unwrap();
    let bin = base.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(&binary, bin.join("firefox-esr")).unwrap();
    World {
        dirs: Dirs {
            data_home: base.join("home/.local/share"),
            data_dirs: vec![base.join("nothing-here"), base.join("share")],
            path: vec![bin],
        },
        install,
        system_entry,
        system_text,
        _root: root,
    }
}

/// A host binary no other user can replace (root's, below root's folders).
const GOOD_HOST: &str = "/usr/bin/env";

/// `path` judged as the CLI and the host judge it (os/binary.rs's rule).
fn host_binary(path: &Path) -> HostBinary {
    HostBinary {
        path: path.to_path_buf(),
        problem: crate::os::binary::user_binary_problem(path),
    }
}

#[test]
fn enable_writes_the_copy_and_disable_removes_exactly_it() {
    let w = world(None);
    let host = &host_binary(Path::new(GOOD_HOST));
    let before = status(&w.dirs, &w.install, host, None);
    assert!(!before.enabled && before.problem.is_none(), "{before:?}");
    assert_eq!(
        before.system_entry.as_deref(),
        Some(w.system_entry.as_path())
    );
    let target = w.dirs.user_apps().join("firefox-esr.desktop");
    assert_eq!(before.entry.as_deref(), Some(target.as_path()));

    let after = enable(&w.dirs, &w.install, host, None).unwrap();
    assert!(after.enabled && !after.outdated, "{after:?}");
    let written = std::fs::read_to_string(&target).unwrap();
    let ff = w.install.join("firefox-esr");
    assert_eq!(
        entry::value(&written, "Desktop Entry", "Exec"),
        Some(
            format!(
                "/usr/bin/env launch --prefetch --firefox {} -- %u",
                ff.display()
            )
            .as_str()
        )
    );
    assert_eq!(
        entry::value(&written, "Desktop Action new-private-window", "Exec"),
        Some(
            format!(
                "/usr/bin/env launch --prefetch --firefox {} -- --private-window %u",
                ff.display()
            )
            .as_str()
        )
    );
    for key in [
        "Name",
        "Name[fr]",
        "Icon",
        "MimeType",
        "StartupWMClass",
        "Actions",
        "Type",
    ] {
        assert_eq!(
            entry::value(&written, "Desktop Entry", key),
            entry::value(&w.system_text, "Desktop Entry", key),
            "{key}"
        );
    }
    // The system entry is exactly as it was; the other program's entry was never copied.
    assert_eq!(
        std::fs::read_to_string(&w.system_entry).unwrap(),
        w.system_text
    );
    let listed: Vec<_> = std::fs::read_dir(w.dirs.user_apps())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(listed, ["firefox-esr.desktop"]);

    // Enabling again rewrites the same file (idempotent).
    enable(&w.dirs, &w.install, host, None).unwrap();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), written);

    let removed = disable(&w.dirs, &w.install).unwrap();
    assert_eq!(removed.len(), 1);
    assert_eq!(removed[0], target);
    assert!(!target.exists());
    assert_eq!(
        std::fs::read_to_string(&w.system_entry).unwrap(),
        w.system_text
    );
    assert!(!status(&w.dirs, &w.install, host, None).enabled);
    assert_eq!(
        disable(&w.dirs, &w.install).unwrap(),
        Vec::<PathBuf>::new(),
        "nothing left to remove"
    );
}

#[test]
fn an_exec_without_a_folder_is_found_on_path() {
    let w = world(Some("firefox-esr"));
    let found = system_entry(&w.dirs, &w.install).unwrap();
    assert_eq!(found.2, w.install.join("firefox-esr"));
}

#[test]
fn a_users_own_entry_is_never_replaced_nor_removed() {
    let w = world(None);
    let target = w.dirs.user_apps().join("firefox-esr.desktop");
    std::fs::create_dir_all(w.dirs.user_apps()).unwrap();
    let own = "[Desktop Entry]\nName=My Firefox\nExec=/somewhere/firefox %u\n";
    std::fs::write(&target, own).unwrap();
    let refused = enable(
        &w.dirs,
        &w.install,
        &host_binary(Path::new(GOOD_HOST)),
        None,
    )
    .unwrap_err();
    assert_eq!(refused.code, "foreign_entry", "{refused:?}");
    assert_eq!(disable(&w.dirs, &w.install).unwrap(), Vec::<PathBuf>::new());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), own);
}

#[test]
fn a_host_binary_others_could_replace_is_refused() {
    let w = world(None);
    let open = tempfile::tempdir().unwrap();
    std::fs::set_permissions(open.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let host = open.path().join("about-startup-host");
    std::fs::write(&host, "x").unwrap();
    let refused = enable(&w.dirs, &w.install, &host_binary(&host), None).unwrap_err();
    assert_eq!(refused.code, "host_replaceable");
    assert!(
        refused.message.contains("writable by every user"),
        "{}",
        refused.message
    );
    assert!(!w.dirs.user_apps().join("firefox-esr.desktop").exists());
    assert_eq!(
        crate::os::binary::user_binary_problem(Path::new(GOOD_HOST)),
        None
    );
}

#[test]
fn without_a_system_entry_for_this_firefox_there_is_nothing_to_copy() {
    let w = world(Some("/usr/bin/other-browser"));
    let s = status(
        &w.dirs,
        &w.install,
        &host_binary(Path::new(GOOD_HOST)),
        None,
    );
    assert_eq!(s.problem.map(|p| p.code), Some("no_system_entry"));
    assert!(s.entry.is_none() && s.system_entry.is_none());
}

#[test]
fn an_entry_written_by_a_host_that_moved_is_outdated() {
    let w = world(None);
    enable(
        &w.dirs,
        &w.install,
        &host_binary(Path::new(GOOD_HOST)),
        None,
    )
    .unwrap();
    let moved = status(
        &w.dirs,
        &w.install,
        &host_binary(Path::new("/usr/bin/true")),
        None,
    );
    assert!(moved.enabled && moved.outdated, "{moved:?}");
}

/// Issue 29 #5: `apt remove about-startup` removes the package's host, not the entries users
/// wrote in their home folders; their Firefox launcher then runs a binary that is gone. The
/// status of any other host names it and says so.
#[test]
fn an_entry_whose_host_is_gone_is_said() {
    let w = world(None);
    let packaged = w
        .install
        .parent()
        .unwrap()
        .join("usr-lib/about-startup-host");
    std::fs::create_dir_all(packaged.parent().unwrap()).unwrap();
    std::fs::copy(GOOD_HOST, &packaged).unwrap();
    let written = enable(&w.dirs, &w.install, &host_binary(&packaged), None).unwrap();
    assert!(
        written.enabled && !written.entry_host_missing,
        "{written:?}"
    );
    assert_eq!(written.entry_host.as_deref(), Some(packaged.as_path()));
    std::fs::remove_file(&packaged).unwrap();
    let other = status(
        &w.dirs,
        &w.install,
        &host_binary(Path::new(GOOD_HOST)),
        None,
    );
    assert!(other.enabled && other.outdated, "{other:?}");
    assert!(other.entry_host_missing, "{other:?}");
    assert_eq!(other.entry_host.as_deref(), Some(packaged.as_path()));
}
