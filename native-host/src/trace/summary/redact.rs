//! A trace as it may leave this machine (the page's JSON export, the Firefox Profiler's
//! markers): every file of the user's profile named by its part and an add-on's name only
//! ("profile: session store", "profile: add-on Dark Reader (addon@darkreader.org)"), never by
//! its path, which can carry a site's name (`storage/default/https+++bank.example/…`); the
//! profile's folder and the paths' exact bytes left out. A file neither in the install folder
//! nor in the system's folders (`/usr`, `/etc`, …) nor in the profile goes by
//! [`OTHER_FILE`]: such a file is the user's (a `file://` page a restored tab shows, named after
//! its title; a cache in the home folder). Nothing of a URL, a title or history is in a trace
//! otherwise: the host never reads those files' contents into it.

use crate::firefox::profile_parts::Part;
use crate::trace::model::{Trace, TraceProfile};

/// The name, outside this machine, of a file neither of the install, the system nor the profile.
pub const OTHER_FILE: &str = "a file outside the install folder, the system and the profile";

/// Folders of the system's own files, named by path in an export (libraries, fonts, config).
const SYSTEM: [&str; 10] = [
    "/usr/",
    "/lib/",
    "/lib64/",
    "/lib32/",
    "/etc/",
    "/opt/",
    "/snap/",
    "/var/lib/flatpak/",
    "/nix/store/",
    "/sys/",
];

/// Whether `path` may leave named as it is: in the install folder or the system's folders, or
/// not a path at all (an unresolved "unnamed file (dev 254:0 inode 1234, …)", "[anon]").
fn named_as_is(path: &str, install_dir: &str) -> bool {
    !path.starts_with('/')
        || (!install_dir.is_empty()
            && path
                .strip_prefix(install_dir)
                .is_some_and(|r| r.starts_with('/')))
        || SYSTEM.iter().any(|s| path.starts_with(s))
}

/// The name a profile file goes by outside this machine.
#[must_use]
pub fn exported_name(part: &Part) -> String {
    format!("profile: {}", part.label())
}

/// `t` with its profile's files named by `parts` (parallel to `t.files`); the parts kept in
/// `profile.parts`, so a summary of the copy still tells them apart.
#[must_use]
pub fn redacted(t: &Trace, parts: &[Option<Part>]) -> Trace {
    let mut out = t.clone();
    let mut kept = Vec::with_capacity(out.files.len());
    for (i, file) in out.files.iter_mut().enumerate() {
        let part = parts.get(i).cloned().flatten();
        if let Some(part) = &part {
            file.path = exported_name(part);
            file.path_b64 = None;
        } else if !named_as_is(&file.path, &t.install_dir) {
            OTHER_FILE.clone_into(&mut file.path);
            file.path_b64 = None;
        }
        kept.push(part);
    }
    for site in &mut out.code {
        if !named_as_is(&site.lib, &t.install_dir) {
            OTHER_FILE.clone_into(&mut site.lib);
        }
    }
    let any = kept.iter().any(Option::is_some);
    out.profile = any.then_some(TraceProfile {
        dir: None,
        parts: Some(kept),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::model::tests::fake;

    #[test]
    fn profile_files_go_by_their_part_and_the_folder_stays_here() {
        let mut t = fake();
        t.files[1].path = "/home/a/p/storage/default/https+++bank.example/idb/1.sqlite".into();
        t.files[1].path_b64 = Some("AAAA".into());
        t.profile = Some(TraceProfile {
            dir: Some("/home/a/p".into()),
            parts: None,
        });
        let parts = vec![None, Some(Part::Storage), None];
        let out = redacted(&t, &parts);
        assert_eq!(
            out.files[1].path,
            "profile: site storage (IndexedDB, localStorage)"
        );
        assert_eq!(out.files[1].path_b64, None);
        assert_eq!(
            out.files[0].path, t.files[0].path,
            "install files keep their paths"
        );
        let json = serde_json::to_string(&out).unwrap();
        assert!(
            !json.contains("bank.example") && !json.contains("/home/a/p"),
            "{json}"
        );
        assert_eq!(out.profile.unwrap().parts.unwrap(), parts);
        // Without a profile file nothing is added.
        assert_eq!(redacted(&fake(), &[]).profile, None);
    }
}
