//! A damaged state file is set aside, never deleted, and said (issue 30 #10). A file the host
//! wrote that no longer parses (cut short, edited by hand, a disk error) used to read as "no
//! file": the plan read as "nothing learned yet" and the next `learn` wrote over it. Now the
//! readers that report to someone (`plan_status` and `learn`, the page's `relaunch_status` and
//! `desktop` status, and the same in the CLI) move it to `<name>.corrupt.<ms>` and carry a
//! [`note::STATE_FILE_SET_ASIDE`]; the rest (the login-time `preload --plan`, the launch
//! prefetch: nobody reads their output) read it as absent and leave it for them, so the note
//! reaches a person. A file the folder's rules refuse (a symlink, someone else's, a FIFO)
//! is not damaged but suspicious: it is left where it is, as before.

use std::io;

use super::StateDir;
use crate::note::{self, Note};

/// `name` in `dir` read whole (at most `limit` bytes) and parsed; a file that does not parse
/// (`parse` gives `None`) or is over `limit` is set aside, with the note saying so. No file, or
/// one the folder refuses: `(None, None)`.
pub fn read_or_set_aside<T>(
    dir: &StateDir,
    name: &str,
    limit: u64,
    parse: impl FnOnce(&[u8]) -> Option<T>,
) -> (Option<T>, Option<Note>) {
    let damaged = match dir.read(name, limit) {
        Ok(None) => return (None, None),
        Ok(Some(bytes)) => match parse(&bytes) {
            Some(value) => return (Some(value), None),
            None => true,
        },
        // Past the bound: not a file the host wrote (StateDir::read says InvalidData).
        Err(e) => e.kind() == io::ErrorKind::InvalidData,
    };
    if !damaged {
        return (None, None);
    }
    (None, Some(set_aside(dir, name)))
}

/// Set `name` aside and say so.
fn set_aside(dir: &StateDir, name: &str) -> Note {
    let note = Note::new(note::STATE_FILE_SET_ASIDE)
        .with("file", name)
        .with("folder", dir.path().to_string_lossy().into_owned());
    match dir.set_aside(name) {
        Ok(moved_to) => note.with("moved_to", moved_to),
        Err(e) => note.with("error", e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(bytes: &[u8]) -> Option<u32> {
        serde_json::from_slice(bytes).ok()
    }

    #[test]
    fn a_damaged_file_is_moved_aside_whole_and_said_once() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = StateDir::create_at(tmp.path()).unwrap();
        assert_eq!(read_or_set_aside(&dir, "x.json", 100, parse), (None, None));
        dir.write("x.json", b"7").unwrap();
        assert_eq!(
            read_or_set_aside(&dir, "x.json", 100, parse),
            (Some(7), None)
        );

        dir.write("x.json", b"{\"cut sh").unwrap();
        let (value, note) = read_or_set_aside(&dir, "x.json", 100, parse);
        assert_eq!(value, None);
        let note = note.expect("a note");
        assert_eq!(note.code, "state_file_set_aside");
        assert_eq!(note.params["file"], "x.json");
        let moved = note.params["moved_to"].as_str().unwrap().to_owned();
        assert!(moved.starts_with("x.json.corrupt."), "{moved}");
        // The bytes are kept as they were, under the new name; the old name is free.
        assert_eq!(
            std::fs::read(tmp.path().join(&moved)).unwrap(),
            b"{\"cut sh"
        );
        assert!(!tmp.path().join("x.json").exists());
        assert!(note.english().contains(&format!("set aside as {moved}")));
        // Said once: the next read finds no file.
        assert_eq!(read_or_set_aside(&dir, "x.json", 100, parse), (None, None));

        // Over the bound: damaged too. Two in the same millisecond get two names.
        dir.write("x.json", &[b' '; 200]).unwrap();
        let (_, first) = read_or_set_aside(&dir, "x.json", 100, parse);
        dir.write("x.json", b"[").unwrap();
        let (_, second) = read_or_set_aside(&dir, "x.json", 100, parse);
        assert_ne!(
            first.unwrap().params["moved_to"],
            second.unwrap().params["moved_to"]
        );
        let kept = std::fs::read_dir(tmp.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("x.json.corrupt.")
            })
            .count();
        assert_eq!(kept, 3, "nothing is ever deleted");
    }

    #[test]
    fn a_refused_file_is_left_where_it_is() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = StateDir::create_at(tmp.path()).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", tmp.path().join("x.json")).unwrap();
        assert_eq!(read_or_set_aside(&dir, "x.json", 100, parse), (None, None));
        assert!(tmp.path().join("x.json").symlink_metadata().is_ok());
    }
}
