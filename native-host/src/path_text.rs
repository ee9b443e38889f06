//! File paths as JSON text, the one encoding of every path the host writes or reads: protocol
//! replies, events and requests, `--json` output, state files and traces (docs/PROTOCOL.md,
//! "Paths that are not UTF-8").
//!
//! A Linux file name is bytes; JSON text is Unicode. So:
//! - a path whose bytes are UTF-8 (every path on a sane system) is its JSON string, as before;
//! - a path that is not is written as its *display* string (each invalid sequence replaced by
//!   U+FFFD, for people and for pages that only show it) **plus** a sibling member named like
//!   the path's with `_b64` appended: the exact bytes in standard base64 (RFC 4648, padded).
//!   For a list of paths the sibling is a list of the same length, `null` where the entry is
//!   UTF-8. The sibling is absent when every path is UTF-8, so nothing changes for them;
//! - a reader takes the `_b64` member over the display string wherever it is present (a request
//!   may name such a file by copying `path` and `path_b64` of its `file` event).
//!
//! Each path field names its key once, through a module made by [`path_key!`], and is marked
//! `#[serde(flatten, with = "crate::path_text::<key>")]`: the module writes (and reads) the key
//! and its sibling together. The Rust type stays `PathBuf` (or `Option`, `Vec` of it).
//! Depends on nothing in the crate, like `error`, so every folder may use it.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// The display string of `path`: lossless for UTF-8, U+FFFD for each invalid sequence.
#[must_use]
pub fn display(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// The exact bytes of `path` in base64, or `None` when the path is UTF-8 (the display string
/// is then the path itself).
#[must_use]
pub fn b64(path: &Path) -> Option<String> {
    path.to_str()
        .is_none()
        .then(|| STANDARD.encode(path.as_os_str().as_bytes()))
}

/// The path a display string and an optional `_b64` member stand for.
pub fn from_text(text: String, b64: Option<&str>) -> Result<PathBuf, String> {
    match b64 {
        None => Ok(PathBuf::from(text)),
        Some(b64) => STANDARD
            .decode(b64)
            .map(|bytes| PathBuf::from(OsString::from_vec(bytes)))
            .map_err(|e| format!("a path's _b64 member is not base64: {e}")),
    }
}

/// The shapes a path field takes: one path, an optional one, a list, an optional list.
pub trait PathValue: Sized {
    /// The display part.
    type Text: Serialize + DeserializeOwned;
    /// The `_b64` part.
    type B64: Serialize + DeserializeOwned;
    fn text(&self) -> Self::Text;
    /// `None` when every path in the value is UTF-8 (the sibling member is then left out).
    fn b64(&self) -> Option<Self::B64>;
    /// `text` is `None` when the key is absent.
    fn from_parts(text: Option<Self::Text>, b64: Option<Self::B64>) -> Result<Self, String>;
}

impl PathValue for PathBuf {
    type Text = String;
    type B64 = String;
    fn text(&self) -> String {
        display(self)
    }
    fn b64(&self) -> Option<String> {
        b64(self)
    }
    fn from_parts(text: Option<String>, b64: Option<String>) -> Result<Self, String> {
        let text = text.ok_or("a path is missing")?;
        from_text(text, b64.as_deref())
    }
}

impl PathValue for Option<PathBuf> {
    type Text = Option<String>;
    type B64 = String;
    fn text(&self) -> Option<String> {
        self.as_deref().map(display)
    }
    fn b64(&self) -> Option<String> {
        self.as_deref().and_then(b64)
    }
    fn from_parts(text: Option<Option<String>>, b64: Option<String>) -> Result<Self, String> {
        text.flatten()
            .map(|t| from_text(t, b64.as_deref()))
            .transpose()
    }
}

impl PathValue for Vec<PathBuf> {
    type Text = Vec<String>;
    type B64 = Vec<Option<String>>;
    fn text(&self) -> Vec<String> {
        self.iter().map(|p| display(p)).collect()
    }
    fn b64(&self) -> Option<Vec<Option<String>>> {
        let all: Vec<Option<String>> = self.iter().map(|p| b64(p)).collect();
        all.iter().any(Option::is_some).then_some(all)
    }
    fn from_parts(
        text: Option<Vec<String>>,
        b64: Option<Vec<Option<String>>>,
    ) -> Result<Self, String> {
        let text = text.ok_or("a list of paths is missing")?;
        list_from_parts(text, b64)
    }
}

impl PathValue for Option<Vec<PathBuf>> {
    type Text = Option<Vec<String>>;
    type B64 = Vec<Option<String>>;
    fn text(&self) -> Option<Vec<String>> {
        self.as_ref().map(PathValue::text)
    }
    fn b64(&self) -> Option<Vec<Option<String>>> {
        self.as_ref().and_then(PathValue::b64)
    }
    fn from_parts(
        text: Option<Option<Vec<String>>>,
        b64: Option<Vec<Option<String>>>,
    ) -> Result<Self, String> {
        text.flatten().map(|t| list_from_parts(t, b64)).transpose()
    }
}

fn list_from_parts(
    text: Vec<String>,
    b64: Option<Vec<Option<String>>>,
) -> Result<Vec<PathBuf>, String> {
    let b64 = b64.unwrap_or_default();
    if b64.len() > text.len() {
        return Err(format!(
            "a _b64 list has {} entries for {} paths",
            b64.len(),
            text.len()
        ));
    }
    text.into_iter()
        .enumerate()
        .map(|(i, t)| from_text(t, b64.get(i).and_then(Option::as_deref)))
        .collect()
}

/// A module for one path key: `path_key!(install_dir, "install_dir", "install_dir_b64")`
/// makes `path_text::install_dir::{serialize, deserialize}` for
/// `#[serde(flatten, with = "crate::path_text::install_dir")]`.
macro_rules! path_key {
    ($module:ident, $key:literal, $key_b64:literal) => {
        #[doc = concat!("The `", $key, "` key and its `", $key_b64, "` sibling.")]
        pub mod $module {
            use super::PathValue;
            use serde::ser::SerializeMap;
            use serde::{Deserialize, Deserializer, Serializer};

            pub fn serialize<T: PathValue, S: Serializer>(
                value: &T,
                serializer: S,
            ) -> Result<S::Ok, S::Error> {
                let b64 = value.b64();
                let mut map = serializer.serialize_map(Some(1 + usize::from(b64.is_some())))?;
                map.serialize_entry($key, &value.text())?;
                if let Some(b64) = b64 {
                    map.serialize_entry($key_b64, &b64)?;
                }
                map.end()
            }

            pub fn deserialize<'de, T: PathValue, D: Deserializer<'de>>(
                deserializer: D,
            ) -> Result<T, D::Error> {
                #[derive(Deserialize)]
                #[serde(bound = "")]
                struct Parts<T: PathValue> {
                    #[serde(rename = $key, default = "Option::default")]
                    text: Option<T::Text>,
                    #[serde(rename = $key_b64, default = "Option::default")]
                    b64: Option<T::B64>,
                }
                let parts = Parts::<T>::deserialize(deserializer)?;
                T::from_parts(parts.text, parts.b64).map_err(serde::de::Error::custom)
            }
        }
    };
}

path_key!(path, "path", "path_b64");
path_key!(files, "files", "files_b64");
path_key!(install_dir, "install_dir", "install_dir_b64");
path_key!(current_file, "current_file", "current_file_b64");
path_key!(changed_files, "changed_files", "changed_files_b64");
path_key!(state_file, "state_file", "state_file_b64");
path_key!(dir, "dir", "dir_b64");
path_key!(exe, "exe", "exe_b64");
path_key!(config, "config", "config_b64");
path_key!(state, "state", "state_b64");
path_key!(file, "file", "file_b64");
path_key!(manifest, "manifest", "manifest_b64");
path_key!(binary, "binary", "binary_b64");
path_key!(profile, "profile", "profile_b64");
path_key!(loop_device, "loop_device", "loop_device_b64");
path_key!(image, "image", "image_b64");
path_key!(mount_point, "mount_point", "mount_point_b64");

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct One {
        #[serde(flatten, with = "crate::path_text::path")]
        path: PathBuf,
        size: u64,
        #[serde(flatten, with = "crate::path_text::current_file")]
        current_file: Option<PathBuf>,
        #[serde(flatten, with = "crate::path_text::files")]
        files: Vec<PathBuf>,
    }

    fn bad() -> PathBuf {
        PathBuf::from(OsString::from_vec(b"/ff/lib\xff.so".to_vec()))
    }

    #[test]
    fn utf8_paths_are_plain_strings_as_before() {
        let one = One {
            path: "/ff/libxul.so".into(),
            size: 3,
            current_file: None,
            files: vec!["/a".into(), "/é".into()],
        };
        let v = serde_json::to_value(&one).unwrap();
        assert_eq!(
            v,
            json!({"path": "/ff/libxul.so", "size": 3, "current_file": null, "files": ["/a", "/é"]})
        );
        assert_eq!(serde_json::from_value::<One>(v).unwrap(), one);
        // Key order as declared.
        let text = serde_json::to_string(&one).unwrap();
        assert!(
            text.starts_with(r#"{"path":"/ff/libxul.so","size":3,"#),
            "{text}"
        );
    }

    #[test]
    fn other_paths_carry_display_text_and_exact_bytes() {
        let one = One {
            path: bad(),
            size: 3,
            current_file: Some(bad()),
            files: vec!["/a".into(), bad()],
        };
        let text = serde_json::to_string(&one).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["path"], "/ff/lib\u{fffd}.so");
        assert_eq!(v["path_b64"], "L2ZmL2xpYv8uc28=");
        assert_eq!(v["current_file_b64"], "L2ZmL2xpYv8uc28=");
        assert_eq!(v["files"], json!(["/a", "/ff/lib\u{fffd}.so"]));
        assert_eq!(v["files_b64"], json!([null, "L2ZmL2xpYv8uc28="]));
        let back: One = serde_json::from_str(&text).unwrap();
        assert_eq!(back, one);
        assert_eq!(back.path.as_os_str().as_bytes(), b"/ff/lib\xff.so");
    }

    #[test]
    fn bad_b64_and_missing_paths_are_errors() {
        let err = serde_json::from_value::<One>(
            json!({"path": "x", "path_b64": "%%", "size": 1, "files": []}),
        )
        .unwrap_err();
        assert!(err.to_string().contains("not base64"), "{err}");
        let err = serde_json::from_value::<One>(json!({"size": 1, "files": []})).unwrap_err();
        assert!(err.to_string().contains("missing"), "{err}");
        let err = serde_json::from_value::<One>(
            json!({"path": "x", "size": 1, "files": [], "files_b64": [null, null]}),
        )
        .unwrap_err();
        assert!(err.to_string().contains("2 entries for 0 paths"), "{err}");
    }
}
