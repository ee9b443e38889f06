//! Tests of the trace store.

use std::os::unix::fs::{symlink, PermissionsExt};

use super::*;
use crate::trace::model::tests::fake;

fn traces_in(tmp: &std::path::Path) -> StateDir {
    in_state(&StateDir::create_at(&tmp.join("state")).unwrap()).unwrap()
}

fn id_of(t: &Trace) -> String {
    format!("{}-{}-{}", t.recorded_at_ms, t.pid, t.process_start_ticks)
}

#[test]
fn a_symlink_planted_at_the_traces_name_is_replaced_not_written_through() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = traces_in(tmp.path());
    let victim = tmp.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let trace = fake();
    let id = id_of(&trace);
    for name in [format!("{id}.json"), format!("{id}.meta.json")] {
        symlink(&victim, dir.path_of(&name)).unwrap();
    }
    let (saved_id, path) = save(&dir, &trace).unwrap();
    assert_eq!(saved_id, id);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    for p in [path, dir.path_of(&format!("{id}.meta.json"))] {
        assert!(
            std::fs::symlink_metadata(&p).unwrap().is_file(),
            "{}",
            p.display()
        );
    }
}

#[test]
fn the_recorded_marker_names_pid_and_process_start() {
    let tmp = tempfile::tempdir().unwrap();
    let state = StateDir::create_at(tmp.path()).unwrap();
    let pid = i32::try_from(std::process::id()).unwrap();
    let ticks = process_start(pid).unwrap();
    let dir = in_state(&state).unwrap();
    assert!(!dir.exists(&recorded_marker(pid, ticks)));
    mark_recorded(&state, pid, Some(4977.5));
    assert!(dir.exists(&recorded_marker(pid, ticks)));
    assert!(!dir.exists(&recorded_marker(pid, ticks + 1)));
    // The trace takes it: its sessionRestored, and the marker is gone.
    assert_eq!(take_recorded(&dir, pid, ticks), Some(4977.5));
    assert!(!dir.exists(&recorded_marker(pid, ticks)));
    assert_eq!(take_recorded(&dir, pid, ticks), None);
}

#[test]
fn a_marker_without_a_sensible_session_restored_gives_none() {
    let tmp = tempfile::tempdir().unwrap();
    let state = StateDir::create_at(tmp.path()).unwrap();
    let dir = in_state(&state).unwrap();
    // An older host's empty marker, nonsense, a negative or missing time: none, and removed.
    for (n, text) in ["", "{", "[]", r#"{"session_restored_ms":-3}"#, "{}"]
        .iter()
        .enumerate()
    {
        let ticks = 100 + n as u64;
        dir.write(&recorded_marker(7, ticks), text.as_bytes())
            .unwrap();
        assert_eq!(take_recorded(&dir, 7, ticks), None, "{text:?}");
        assert!(!dir.exists(&recorded_marker(7, ticks)));
    }
    // An extension that sends no time leaves a marker that still stops a trace.
    let pid = i32::try_from(std::process::id()).unwrap();
    mark_recorded(&state, pid, None);
    let ticks = process_start(pid).unwrap();
    assert!(dir.exists(&recorded_marker(pid, ticks)));
    assert_eq!(take_recorded(&dir, pid, ticks), None);
}

#[test]
fn markers_of_ended_processes_are_removed() {
    let names: Vec<String> = [
        "recorded-10-500",
        "recorded-11-600",
        "recorded-12-x",
        "recorded-+13-7",
        "1700000000000-10-500.json",
        "recorded-10-500.meta.json",
    ]
    .map(String::from)
    .to_vec();
    // Only pid 11 still runs the process that left its marker.
    let stale = stale_markers(&names, |pid, ticks| (pid, ticks) == (11, 600));
    assert_eq!(stale, ["recorded-10-500"]);
    // Marking a start leaves its own marker and drops one of a process long gone.
    let tmp = tempfile::tempdir().unwrap();
    let state = StateDir::create_at(tmp.path()).unwrap();
    let dir = in_state(&state).unwrap();
    dir.touch("recorded-999999999-1").unwrap();
    let pid = i32::try_from(std::process::id()).unwrap();
    mark_recorded(&state, pid, None);
    assert!(dir.exists(&recorded_marker(pid, process_start(pid).unwrap())));
    assert!(!dir.exists("recorded-999999999-1"));
}

#[test]
fn save_list_fetch_and_prune() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = traces_in(tmp.path());
    let mut t = fake();
    t.notes.push("é".repeat(CHUNK)); // multi-byte text across a page boundary
    let (id, _) = save(&dir, &t).unwrap();
    let l = list(&dir);
    assert_eq!(l.len(), 1);
    assert_eq!(l[0].id, id);
    let mut text = String::new();
    let mut off = 0;
    let mut pages = 0;
    loop {
        let c = fetch(&dir, &id, off).unwrap();
        assert!(c.data.len() <= CHUNK);
        text.push_str(&c.data);
        pages += 1;
        match c.next_offset {
            Some(n) => off = n,
            None => break,
        }
    }
    assert!(pages >= 3);
    let back: Trace = serde_json::from_str(&text).unwrap();
    assert_eq!(back.notes, t.notes);
    assert_eq!(read(&dir, &id).unwrap().notes, t.notes);
    assert!(fetch(&dir, "../x", 0).is_err());
    for i in 0..3 {
        let mut t = fake();
        t.recorded_at_ms = 10 + i;
        save(&dir, &t).unwrap();
    }
    prune(&dir, 2, u64::MAX);
    let l = list(&dir);
    assert_eq!(l.len(), 2);
    assert_eq!(l[0].recorded_at_ms, 12);
}

/// Issue 20 #7: a trace file of bytes that are not UTF-8 was answered with an empty page that
/// pointed at itself, and the page asked for it forever.
#[test]
fn a_trace_that_is_not_utf8_is_an_error_not_an_endless_empty_page() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = traces_in(tmp.path());
    dir.write("1-2-3.json", &[0x80; 1000]).unwrap();
    let err = fetch(&dir, "1-2-3", 0).unwrap_err();
    assert!(
        err.to_string().contains("not UTF-8 text at byte 0"),
        "{err}"
    );
    let mut mixed = b"{\"a\": \"".to_vec();
    mixed.extend([0xff, 0xfe]);
    dir.write("1-2-4.json", &mixed).unwrap();
    let err = fetch(&dir, "1-2-4", 0).unwrap_err();
    assert!(err.to_string().contains("at byte 7"), "{err}");
    // A character cut by the page's end is carried to the next page, not an error.
    let c = chunk("x", "aé".as_bytes().get(..2).unwrap(), 0, 3).unwrap();
    assert_eq!((c.data.as_str(), c.next_offset), ("a", Some(1)));
    // Every page moves forward or is an error.
    for (buf, start, total) in [(&b""[..], 5u64, 10u64), (&[0xc3][..], 0, 2)] {
        if let Ok(c) = chunk("x", buf, start, total) {
            assert!(c.next_offset.is_none_or(|n| n > start), "{c:?}");
        }
    }
}

/// Issue 20 #3: a FIFO or a symlink to /dev/zero among the meta files hung the listing (root's
/// and the user's own host) or grew it to gigabytes. They are left out at once.
#[test]
fn planted_fifos_devices_and_oversized_meta_files_are_left_out_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = traces_in(tmp.path());
    save(&dir, &fake()).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        dir.path_of("9-9-9.meta.json"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    symlink("/dev/zero", dir.path_of("8-8-8.meta.json")).unwrap();
    dir.write("7-7-7.meta.json", &vec![b' '; MAX_META_BYTES as usize + 1])
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let d = dir.clone();
    std::thread::spawn(move || tx.send(list(&d)));
    let listed = rx
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("the listing blocked");
    assert_eq!(listed.len(), 1);
}

/// Issue 20 #1: prune built the paths it removes from the `id` inside each meta file, which the
/// user writes: a planted meta file made a root `launch` delete a root-owned file in a 0700
/// root folder. Now a meta file names only its own trace, and removal is beneath the folder.
#[test]
fn a_planted_meta_file_cannot_make_prune_delete_anything_else() {
    let tmp = tempfile::tempdir().unwrap();
    let secret = tmp.path().join("root-only");
    std::fs::create_dir(&secret).unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o700)).unwrap();
    let policies = secret.join("policies.json");
    std::fs::write(&policies, "{}").unwrap();
    let dir = traces_in(tmp.path());
    let rel = format!(
        "{}/policies",
        std::iter::repeat_n("..", 12).collect::<Vec<_>>().join("/")
    );
    let target = format!("{}{}", rel, secret.display());
    let planted = format!(
        r#"{{"id":"{target}","pid":1,"process_start_ticks":1,"firefox_version":null,"build_id":null,"recorded_at_ms":1,"source":"tracefs","traced_read_bytes":0,"tree_read_bytes":null,"lost_events":0,"bytes":1}}"#
    );
    std::fs::write(dir.path_of("0-0-0.meta.json"), &planted).unwrap();
    // Twenty newer traces push the planted one out: prune runs over it.
    for i in 0..MAX_TRACES as u64 + 1 {
        let mut t = fake();
        t.recorded_at_ms = 100 + i;
        save(&dir, &t).unwrap();
    }
    assert!(policies.exists(), "prune deleted {}", policies.display());
    assert_eq!(list(&dir).len(), MAX_TRACES);
}
