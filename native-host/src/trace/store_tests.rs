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
    crate::os::mkfifo(&dir.path_of("9-9-9.meta.json"));
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

/// Issue 39 #4: `truncate -s 500 traces/<id>.json` left the trace in `trace list`, made `trace
/// show` say there was no such trace, and `plan --source trace` skip it in silence. Now every
/// reader that reports sets it aside (with its meta) and says so, once, as for the other state
/// files; the silent readers (the launch prefetch) leave it for them.
#[test]
fn a_truncated_trace_is_set_aside_and_said_by_list_show_and_plan() {
    let tmp = tempfile::tempdir().unwrap();
    let state = StateDir::create_at(&tmp.path().join("state")).unwrap();
    let dir = in_state(&state).unwrap();
    let whole = fake();
    let mut cut = fake();
    cut.recorded_at_ms = 5;
    let (whole_id, _) = save(&dir, &whole).unwrap();
    let (cut_id, cut_path) = save(&dir, &cut).unwrap();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&cut_path)
        .unwrap();
    file.set_len(500).unwrap();
    drop(file);

    // The silent readers: absent, left where it is.
    assert!(read(&dir, &cut_id).is_none());
    assert!(crate::trace::plan_source::load(&state, tmp.path(), MAX_TRACES).is_empty());
    assert!(dir.exists(&format!("{cut_id}.json")));
    assert_eq!(list(&dir).len(), 2, "the unchecked list still names it");

    // The list (CLI `trace list`, the page's `trace_list`): left out, set aside, said once.
    let listed = listing(&dir, None);
    assert_eq!(
        listed
            .traces
            .iter()
            .map(|m| m.id.as_str())
            .collect::<Vec<_>>(),
        [whole_id.as_str()]
    );
    assert_eq!(listed.note_codes.len(), 1, "{listed:?}");
    let note = &listed.note_codes[0];
    assert_eq!(note.code, crate::note::STATE_FILE_SET_ASIDE);
    assert_eq!(note.params["file"], format!("{cut_id}.json"));
    let moved = note.params["moved_to"].as_str().unwrap().to_owned();
    assert!(
        moved.starts_with(&format!("{cut_id}.json.corrupt.")),
        "{moved}"
    );
    assert_eq!(
        std::fs::metadata(dir.path_of(&moved)).unwrap().len(),
        500,
        "kept as it was, never deleted"
    );
    assert!(!dir.exists(&format!("{cut_id}.json")));
    assert!(
        !dir.exists(&format!("{cut_id}.meta.json")),
        "its meta went aside with it"
    );
    assert!(listing(&dir, None).note_codes.is_empty(), "said once");
    let wire = serde_json::to_value(&listed).unwrap();
    assert_eq!(wire["note_codes"][0]["code"], "state_file_set_aside");

    // `trace show` of it now: no such trace; of one cut again: damaged, with the note's words.
    cut.recorded_at_ms = 6;
    let (again, _) = save(&dir, &cut).unwrap();
    std::fs::write(dir.path_of(&format!("{again}.json")), b"{\"version\":").unwrap();
    let (trace, note) = read_or_set_aside(&dir, &again);
    assert!(trace.is_none());
    let words = unread_error(&dir, &again, note.as_ref());
    assert!(
        words.starts_with(&format!("trace {again} cannot be read: {again}.json in "))
            && words.contains("set aside as"),
        "{words}"
    );
    assert!(unread_error(&dir, &again, None).starts_with(&format!("no stored trace {again}")));

    // The plan (`plan --source trace`, the page's plan_status): said, not skipped in silence.
    cut.recorded_at_ms = 7;
    let (again, _) = save(&dir, &cut).unwrap();
    std::fs::write(dir.path_of(&format!("{again}.json")), b"[1, 2").unwrap();
    let (traces, notes) = crate::trace::plan_source::load_reporting(&state, tmp.path(), MAX_TRACES);
    assert!(traces.is_empty(), "/ff is not this install");
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0].params["file"], format!("{again}.json"));

    // JSON that is no trace of this host's (another version's) is not damaged: left, unsaid.
    cut.recorded_at_ms = 8;
    let (other, _) = save(&dir, &cut).unwrap();
    std::fs::write(dir.path_of(&format!("{other}.json")), b"{\"version\": 99}").unwrap();
    assert!(matches!(read_or_set_aside(&dir, &other), (None, None)));
    assert!(dir.exists(&format!("{other}.json")));
    assert!(read_or_set_aside(&dir, &whole_id).0.is_some());
}

/// The page's command names the install the page runs from, as one shell word, after the
/// arguments every record command has.
#[test]
fn the_pages_record_command_names_its_install() {
    let plain = record_command();
    let command = record_command_for(std::path::Path::new("/var/tmp/my ff"));
    assert_eq!(command, format!("{plain} --firefox '/var/tmp/my ff'"));
    assert!(plain.ends_with(RECORD_ARGS), "{plain}");
    assert_eq!(
        record_command_for(std::path::Path::new("/usr/lib/firefox-esr")),
        format!("{plain} --firefox /usr/lib/firefox-esr")
    );
}
