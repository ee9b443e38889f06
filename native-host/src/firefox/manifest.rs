//! The native-messaging manifest: render it from `manifests/about_startup.json`, install it
//! where Firefox looks (per user or system-wide), remove it.
//!
//! The template is parsed as JSON and its fields set, so paths are never pasted into text and
//! any character in them is escaped correctly.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _};
use serde_json::{json, Value};

use crate::os::binary::{check_user_binary, host_binary, system_binary_problem};
use crate::{EXTENSION_ID, HOST_NAME};

/// The manifest template, embedded so the installed binary needs no source tree.
const TEMPLATE: &str = include_str!("../../../manifests/about_startup.json");

/// Where Firefox looks for system-wide manifests on Linux (`/usr/lib64/…` on some distributions
/// is also read, but `/usr/lib` works everywhere).
pub const SYSTEM_DIR: &str = "/usr/lib/mozilla/native-messaging-hosts";

/// The per-user folder, under `$HOME` (so tests and sandboxed Firefoxes can redirect it).
const USER_SUBDIR: &str = ".mozilla/native-messaging-hosts";

/// The manifest for `binary` (an absolute path) allowing `extension_id`, as pretty JSON.
pub fn render(binary: &Path, extension_id: &str) -> anyhow::Result<String> {
    check_extension_id(extension_id)?;
    if !binary.is_absolute() {
        bail!(
            "the host path {} is not absolute; Firefox needs an absolute path",
            binary.display()
        );
    }
    let Some(binary) = binary.to_str() else {
        bail!(
            "the host path {} is not UTF-8, which a JSON manifest cannot hold; move the binary \
             to a folder with a plain name",
            binary.display()
        );
    };
    let mut manifest: Value =
        serde_json::from_str(TEMPLATE).context("the embedded manifest template is not JSON")?;
    let fields = manifest
        .as_object_mut()
        .context("the manifest template is not an object")?;
    fields.insert("name".into(), json!(HOST_NAME));
    fields.insert("path".into(), json!(binary));
    fields.insert("allowed_extensions".into(), json!([extension_id]));
    let mut text = serde_json::to_string_pretty(&manifest)?;
    text.push('\n');
    Ok(text)
}

/// Firefox add-on ids are `name@domain` or a `{GUID}`; anything else would never match.
fn check_extension_id(id: &str) -> anyhow::Result<()> {
    let guid = id.starts_with('{') && id.ends_with('}') && id.len() > 2;
    let email = id
        .split_once('@')
        .is_some_and(|(a, b)| !b.is_empty() && !a.contains('@') && !b.contains('@'));
    let plain = !id.is_empty() && !id.chars().any(|c| c.is_whitespace() || c.is_control());
    if plain && (guid || email) {
        return Ok(());
    }
    bail!(
        "{id:?} is not a Firefox add-on id; pass the extension's browser_specific_settings.gecko.id, \
         such as {EXTENSION_ID} or {{01234567-89ab-cdef-0123-456789abcdef}}"
    )
}

/// Where the manifest goes: `$HOME/.mozilla/native-messaging-hosts/about_startup.json`, or the
/// system folder.
pub fn manifest_path(system: bool) -> anyhow::Result<PathBuf> {
    let dir = if system {
        PathBuf::from(SYSTEM_DIR)
    } else {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .context("HOME is not set; set it to your home folder, or install with --system")?;
        Path::new(&home).join(USER_SUBDIR)
    };
    Ok(dir.join(format!("{HOST_NAME}.json")))
}

/// What `install` did.
#[derive(Debug)]
pub struct Installed {
    pub manifest: PathBuf,
    pub binary: PathBuf,
}

/// Write the manifest for this binary. Replaces an older one atomically.
pub fn install(system: bool, extension_id: &str) -> anyhow::Result<Installed> {
    let binary = host_binary()?;
    if system {
        if let Some(problem) = system_binary_problem(&binary) {
            anyhow::bail!(
                "refusing a system-wide manifest for {}: {problem}. Every user's Firefox would run \
                 it; copy the binary to a root-owned folder first (e.g. sudo install -m 0755 {} \
                 /usr/local/lib/about-startup/) and run install --system from there",
                binary.display(),
                binary.display()
            );
        }
    } else {
        check_user_binary(&binary, "manifest")?;
    }
    let text = render(&binary, extension_id)?;
    let manifest = manifest_path(system)?;
    let dir = manifest.parent().expect("the manifest path has a folder");
    if system {
        // 0755 whatever the umask: every user's Firefox must read it, nobody else write it.
        use std::os::unix::fs::DirBuilderExt;
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o755)
            .create(dir)
            .with_context(|| format!("creating {} (run as root for --system)", dir.display()))?;
        fs::set_permissions(dir, fs::Permissions::from_mode(0o755))
            .with_context(|| format!("setting {} to 0755", dir.display()))?;
    }
    fs::create_dir_all(dir).with_context(|| {
        format!(
            "creating {}{}",
            dir.display(),
            if system {
                " (run as root for --system)"
            } else {
                ""
            }
        )
    })?;
    // A unique temporary file renamed over the manifest: Firefox never reads half of one, and a
    // planted symlink is replaced, not written through. 0644 whatever the umask.
    let mut tmp = tempfile::Builder::new()
        .prefix(".about-startup-")
        .tempfile_in(dir)
        .with_context(|| format!("writing in {}", dir.display()))?;
    std::io::Write::write_all(&mut tmp, text.as_bytes())
        .with_context(|| format!("writing {}", tmp.path().display()))?;
    fs::set_permissions(tmp.path(), fs::Permissions::from_mode(0o644))
        .with_context(|| format!("setting {} to 0644", tmp.path().display()))?;
    tmp.persist(&manifest)
        .with_context(|| format!("replacing {}", manifest.display()))?;
    Ok(Installed { manifest, binary })
}

/// Remove the manifest. `Ok(None)` if it was not installed there (not an error).
pub fn uninstall(system: bool) -> anyhow::Result<(PathBuf, bool)> {
    let manifest = manifest_path(system)?;
    match fs::remove_file(&manifest) {
        Ok(()) => Ok((manifest, true)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((manifest, false)),
        Err(e) => Err(e).with_context(|| {
            format!(
                "removing {}{}",
                manifest.display(),
                if system {
                    " (run as root for --system)"
                } else {
                    ""
                }
            )
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_has_the_fields_render_sets() {
        let template: Value = serde_json::from_str(TEMPLATE).unwrap();
        for field in ["name", "description", "path", "type", "allowed_extensions"] {
            assert!(template.get(field).is_some(), "{field}");
        }
        assert_eq!(template["type"], "stdio");
    }

    #[test]
    fn render_sets_path_and_id_with_json_escaping() {
        let text = render(Path::new("/opt/a \"quoted\" dir/host"), "x@example.org").unwrap();
        let manifest: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(manifest["path"], "/opt/a \"quoted\" dir/host");
        assert_eq!(manifest["allowed_extensions"], json!(["x@example.org"]));
        assert_eq!(manifest["name"], HOST_NAME);
        assert_eq!(manifest["type"], "stdio");
    }

    #[test]
    fn render_refuses_relative_paths_and_bad_ids() {
        assert!(render(Path::new("host"), EXTENSION_ID).is_err());
        for id in ["", "no-at-sign", "a b@c", "@", "x@", "a@b@c", "{}"] {
            assert!(render(Path::new("/h"), id).is_err(), "{id:?}");
        }
        assert!(render(Path::new("/h"), "{01234567-89ab-cdef-0123-456789abcdef}").is_ok());
    }
}
