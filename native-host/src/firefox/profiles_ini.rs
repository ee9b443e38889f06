//! Which profile a plain launch of Firefox starts, from `~/.mozilla/firefox/profiles.ini`:
//! needed when the same Firefox starts from another folder (a packed image's mount,
//! learn/pack/), because Firefox keys its default profile by the install's path and would
//! otherwise make a new, empty one. Pure parser ([`default_of`]) and a bounded read.

use std::path::{Path, PathBuf};

/// The most of profiles.ini that is read.
const MAX_BYTES: u64 = 1024 * 1024;

/// The default profile folder profiles.ini names: the one install section's `Default`, else the
/// profile marked `Default=1`, else the only profile. `Ok(None)` for no profile at all; `Err`
/// (in English) when the file names several installs' defaults and which applies is not known.
pub fn default_of(text: &str, base: &Path) -> Result<Option<PathBuf>, String> {
    let mut installs: Vec<String> = Vec::new();
    let mut profiles: Vec<(Option<String>, bool, bool)> = Vec::new(); // path, relative, default
    let mut section = String::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.to_owned();
            if section.starts_with("Profile") {
                profiles.push((None, true, false));
            }
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if section.starts_with("Install") && key == "Default" {
            if !installs.iter().any(|i| i == value) {
                installs.push(value.to_owned());
            }
        } else if section.starts_with("Profile") {
            if let Some(p) = profiles.last_mut() {
                match key {
                    "Path" => p.0 = Some(value.to_owned()),
                    "IsRelative" => p.1 = value == "1",
                    "Default" => p.2 = value == "1",
                    _ => {}
                }
            }
        }
    }
    let resolve = |path: &str, relative: bool| {
        if relative {
            base.join(path)
        } else {
            PathBuf::from(path)
        }
    };
    match installs.len() {
        1 => return Ok(Some(resolve(&installs[0], !installs[0].starts_with('/')))),
        0 => {}
        n => {
            return Err(format!(
                "profiles.ini names the default profiles of {n} Firefox installs, and which one this Firefox starts is not known here; name one with -profile"
            ))
        }
    }
    let with_path: Vec<_> = profiles
        .iter()
        .filter_map(|(p, r, d)| Some((p.as_deref()?, *r, *d)))
        .collect();
    if let Some((p, r, _)) = with_path.iter().find(|(_, _, d)| *d) {
        return Ok(Some(resolve(p, *r)));
    }
    match with_path[..] {
        [] => Ok(None),
        [(p, r, _)] => Ok(Some(resolve(p, r))),
        _ => Err(
            "profiles.ini names several profiles and none is the default; name one with -profile"
                .to_owned(),
        ),
    }
}

/// [`default_of`] the user's `~/.mozilla/firefox/profiles.ini` (`HOME` of this process).
pub fn default_profile() -> Result<Option<PathBuf>, String> {
    let Some(home) = std::env::var_os("HOME").map(PathBuf::from) else {
        return Err("HOME is not set".to_owned());
    };
    let base = home.join(".mozilla/firefox");
    let ini = base.join("profiles.ini");
    let text = match std::fs::File::open(&ini) {
        Ok(f) => {
            let mut buf = String::new();
            std::io::Read::read_to_string(&mut std::io::Read::take(f, MAX_BYTES), &mut buf)
                .map_err(|e| format!("{}: {e}", ini.display()))?;
            buf
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", ini.display())),
    };
    default_of(&text, &base)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "/home/ann/.mozilla/firefox";

    #[test]
    fn the_install_default_wins_then_the_marked_profile() {
        let ini = "[Install3B6073811A6ABF12]\nDefault=abc.default-esr\nLocked=1\n\n[Profile1]\nName=default\nIsRelative=1\nPath=old.default\nDefault=1\n\n[Profile0]\nName=default-esr\nIsRelative=1\nPath=abc.default-esr\n";
        assert_eq!(
            default_of(ini, Path::new(BASE)),
            Ok(Some(PathBuf::from(BASE).join("abc.default-esr")))
        );
        let legacy = "[General]\nStartWithLastProfile=1\n\n[Profile0]\nName=x\nIsRelative=0\nPath=/srv/p\n\n[Profile1]\nPath=q\nDefault=1\n";
        assert_eq!(
            default_of(legacy, Path::new(BASE)),
            Ok(Some(PathBuf::from(BASE).join("q")))
        );
        let only = "[Profile0]\nName=x\nIsRelative=0\nPath=/srv/p\n";
        assert_eq!(
            default_of(only, Path::new(BASE)),
            Ok(Some(PathBuf::from("/srv/p")))
        );
        assert_eq!(
            default_of("[General]\nVersion=2\n", Path::new(BASE)),
            Ok(None)
        );
    }

    #[test]
    fn several_installs_or_no_default_are_not_guessed() {
        let two = "[InstallA]\nDefault=a\n[InstallB]\nDefault=b\n";
        assert!(default_of(two, Path::new(BASE))
            .unwrap_err()
            .contains("2 Firefox installs"));
        let same = "[InstallA]\nDefault=a\n[InstallB]\nDefault=a\n";
        assert_eq!(
            default_of(same, Path::new(BASE)),
            Ok(Some(PathBuf::from(BASE).join("a")))
        );
        let two_profiles = "[Profile0]\nPath=a\n[Profile1]\nPath=b\n";
        assert!(default_of(two_profiles, Path::new(BASE)).is_err());
    }
}
