//! The built binary in native-messaging mode, spoken to over pipes exactly as Firefox does.
//! The test process is not Firefox, so commands that need one reply `firefox_not_found`.

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::Duration;

use about_startup_host::framing::{self, ReadOutcome, MAX_INCOMING};
use about_startup_host::host::protocol::{decode_request, Command as Cmd};
use serde_json::{json, Value};

const TIMEOUT: Duration = Duration::from_secs(20);

/// A running host with a thread decoding its stdout into replies.
struct Host {
    child: Child,
    stdin: Option<ChildStdin>,
    replies: Receiver<Value>,
    reader: thread::JoinHandle<()>,
}

impl Host {
    fn start() -> Host {
        Host::start_with_stderr(Stdio::piped())
    }

    fn start_with_stderr(stderr: Stdio) -> Host {
        Host::spawn(Command::new(env!("CARGO_BIN_EXE_about-startup-host")).stderr(stderr))
    }

    /// With `home` as its HOME (its own state folder).
    fn start_in(home: &std::path::Path) -> Host {
        Host::spawn(
            Command::new(env!("CARGO_BIN_EXE_about-startup-host"))
                .env("HOME", home)
                .env_remove("XDG_STATE_HOME")
                .stderr(Stdio::piped()),
        )
    }

    fn spawn(cmd: &mut Command) -> Host {
        let mut child = cmd
            // As Firefox starts it: manifest path, extension id.
            .args([
                "some/path/about_startup.json",
                "about-startup@startup-lab.dev",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the host");
        let mut stdout = child.stdout.take().unwrap();
        let (tx, replies) = mpsc::channel();
        let reader = thread::spawn(move || {
            while let Ok(ReadOutcome::Frame(body)) = framing::read_frame(&mut stdout) {
                let reply: Value = serde_json::from_slice(&body).expect("replies are JSON");
                if tx.send(reply).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Host {
            child,
            stdin,
            replies,
            reader,
        }
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn send_body(&mut self, body: &[u8]) {
        self.send_raw(&framing::encode(body));
    }

    fn send(&mut self, request: &Value) {
        self.send_body(&serde_json::to_vec(request).unwrap());
    }

    fn recv(&self) -> Value {
        self.replies.recv_timeout(TIMEOUT).expect("a reply in time")
    }

    /// Close stdin and wait; returns the exit status and everything written to stderr.
    fn finish(mut self) -> (ExitStatus, String, Vec<Value>) {
        drop(self.stdin.take());
        let mut stderr = String::new();
        if let Some(mut pipe) = self.child.stderr.take() {
            pipe.read_to_string(&mut stderr).unwrap();
        }
        let status = self.child.wait().unwrap();
        // The reader thread ends at the host's end of output: after that, every reply is queued.
        self.reader.join().unwrap();
        let rest = self.replies.try_iter().collect();
        (status, stderr, rest)
    }
}

fn hello_is_served(host: &mut Host, id: u64) {
    host.send(&json!({"id": id, "command": "hello"}));
    let reply = host.recv();
    assert_eq!(reply["id"], json!(id), "{reply}");
    assert_eq!(reply["status"], "ok", "{reply}");
}

#[test]
fn hello_reports_versions_and_no_firefox() {
    let mut host = Host::start();
    host.send(&json!({"id": 1, "command": "hello"}));
    let reply = host.recv();
    assert_eq!(reply["status"], "ok", "{reply}");
    let data = &reply["data"];
    assert_eq!(data["protocol_version"], json!(1));
    assert_eq!(data["host_version"], json!(env!("CARGO_PKG_VERSION")));
    assert_eq!(data["firefox_pid"], Value::Null);
    for field in ["kernel", "euid", "root", "mincore_exact", "cachestat"] {
        assert!(data.get(field).is_some(), "hello lacks {field}: {reply}");
    }
    let (status, _, rest) = host.finish();
    assert!(status.success());
    assert!(rest.is_empty());
}

#[test]
fn a_broken_stderr_does_not_stop_the_host() {
    // A pipe whose reading end is gone: every log line fails with EPIPE (as after Firefox's
    // console went away). The host logs before it answers `hello`; it must answer anyway.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut host = Host::start_with_stderr(Stdio::from(writer));
    hello_is_served(&mut host, 1);
    hello_is_served(&mut host, 2);
    let (status, _, _) = host.finish();
    assert!(status.success(), "{status}");
}

#[test]
fn every_bad_input_gets_its_code_and_the_host_keeps_serving() {
    let huge_body = vec![b' '; MAX_INCOMING as usize + 1];
    let cases: Vec<(&str, Vec<u8>, Value, &str)> = vec![
        (
            "invalid UTF-8",
            b"{\"id\":1,\"command\":\"\xc3\x28\"}".to_vec(),
            Value::Null,
            "bad_utf8",
        ),
        (
            "invalid JSON",
            b"{\"id\": 1, ".to_vec(),
            Value::Null,
            "bad_json",
        ),
        (
            "JSON array",
            b"[{\"id\": 1}]".to_vec(),
            Value::Null,
            "bad_json",
        ),
        (
            "missing id",
            br#"{"command": "hello"}"#.to_vec(),
            Value::Null,
            "bad_request",
        ),
        (
            "string id",
            br#"{"id": "1", "command": "hello"}"#.to_vec(),
            Value::Null,
            "bad_request",
        ),
        (
            "negative id",
            br#"{"id": -1, "command": "hello"}"#.to_vec(),
            Value::Null,
            "bad_request",
        ),
        (
            "float id",
            br#"{"id": 1.5, "command": "hello"}"#.to_vec(),
            Value::Null,
            "bad_request",
        ),
        (
            "id over 2^53-1",
            br#"{"id": 9007199254740992, "command": "hello"}"#.to_vec(),
            Value::Null,
            "bad_request",
        ),
        (
            "unknown command",
            br#"{"id": 3, "command": "shutdown"}"#.to_vec(),
            json!(3),
            "unknown_command",
        ),
        (
            "files of the wrong type",
            br#"{"id": 4, "command": "residency", "files": 5}"#.to_vec(),
            json!(4),
            "bad_request",
        ),
        (
            "jobs out of range",
            br#"{"id": 5, "command": "preload", "jobs": 1000000000000}"#.to_vec(),
            json!(5),
            "bad_request",
        ),
        (
            "cancel of an unknown id",
            br#"{"id": 6, "command": "cancel", "target": 12345}"#.to_vec(),
            json!(6),
            "unknown_request",
        ),
        (
            "frame over 1 MiB",
            huge_body,
            Value::Null,
            "frame_too_large",
        ),
    ];
    let mut host = Host::start();
    for (i, (what, body, id, code)) in cases.into_iter().enumerate() {
        host.send_body(&body);
        let reply = host.recv();
        assert_eq!(reply["status"], "error", "{what}: {reply}");
        assert_eq!(reply["id"], id, "{what}: {reply}");
        assert_eq!(reply["code"], code, "{what}: {reply}");
        assert!(reply["message"].is_string(), "{what}: {reply}");
        assert!(reply["params"].is_object(), "{what}: {reply}");
        hello_is_served(&mut host, 100 + i as u64);
    }
    let (status, _, rest) = host.finish();
    assert!(status.success());
    assert!(rest.is_empty(), "{rest:?}");
}

#[test]
fn commands_needing_firefox_reply_firefox_not_found() {
    let mut host = Host::start();
    let requests = [
        json!({"id": 1, "command": "firefox"}),
        json!({"id": 2, "command": "residency"}),
        json!({"id": 3, "command": "preload", "files": ["libxul.so"], "jobs": 2}),
        json!({"id": 4, "command": "evict", "files": null}),
    ];
    for request in &requests {
        host.send(request);
    }
    let mut replies: Vec<Value> = (0..requests.len()).map(|_| host.recv()).collect();
    replies.sort_by_key(|r| r["id"].as_u64());
    for (i, reply) in replies.iter().enumerate() {
        assert_eq!(reply["id"], json!(i + 1), "{reply}");
        assert_eq!(reply["code"], "firefox_not_found", "{reply}");
        assert!(reply["params"]["detail"].is_string(), "{reply}");
    }
    let (status, _, _) = host.finish();
    assert!(status.success());
}

/// The page prints `relaunch_status`'s `trace_ready.command` for the user to paste into a
/// terminal: it must run as printed. This binary (cargo's target folder) is not on the test's
/// PATH, so the bare `about-startup-host` of a constant would be "command not found"; the
/// shell, not the host's code, judges the command (its launch subcommand and flags, with
/// `--help` added so that nothing starts).
#[test]
fn relaunch_status_trace_command_runs_as_printed() {
    let home = tempfile::tempdir().unwrap();
    let mut host = Host::start_in(home.path());
    host.send(&json!({"id": 1, "command": "relaunch_status"}));
    let reply = host.recv();
    assert_eq!(reply["status"], "ok", "{reply}");
    let command = reply["data"]["trace_ready"]["command"]
        .as_str()
        .unwrap_or_else(|| panic!("no trace_ready.command: {reply}"));
    let ran = Command::new("sh")
        .args(["-c", &format!("{command} --help")])
        .env("HOME", home.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&ran.stdout);
    assert!(
        ran.status.success() && stdout.contains("--cold") && stdout.contains("--trace"),
        "{command} --help: {:?}\n{stdout}{}",
        ran.status,
        String::from_utf8_lossy(&ran.stderr)
    );
    host.finish();
}

#[test]
fn eof_between_frames_exits_0() {
    let (status, stderr, rest) = Host::start().finish();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(rest.is_empty());
}

#[test]
fn truncated_length_exits_1_with_a_message() {
    let mut host = Host::start();
    host.send_raw(&[5, 0]);
    let (status, stderr, rest) = host.finish();
    assert_eq!(status.code(), Some(1));
    assert!(stderr.contains("inside a frame"), "{stderr}");
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0]["code"], "truncated_frame");
    assert_eq!(rest[0]["id"], Value::Null);
}

#[test]
fn truncated_body_exits_1_with_a_message() {
    let mut host = Host::start();
    hello_is_served(&mut host, 1);
    let frame = framing::encode(br#"{"id": 2, "command": "hello"}"#);
    host.send_raw(&frame[..10]);
    let (status, stderr, rest) = host.finish();
    assert_eq!(status.code(), Some(1));
    assert!(stderr.contains("inside a frame"), "{stderr}");
    assert_eq!(
        rest.iter().map(|r| r["code"].clone()).collect::<Vec<_>>(),
        vec![json!("truncated_frame")]
    );
}

#[test]
fn hello_fixture_is_a_framed_hello() {
    let bytes = include_bytes!("fixtures/hello.frame");
    let mut cursor = std::io::Cursor::new(&bytes[..]);
    let ReadOutcome::Frame(body) = framing::read_frame(&mut cursor).unwrap() else {
        panic!("the fixture is not one frame");
    };
    assert_eq!(framing::read_frame(&mut cursor).unwrap(), ReadOutcome::Eof);
    let request = decode_request(&body).unwrap();
    assert_eq!(
        (request.id, request.command),
        (1, Cmd::Hello { browser: None })
    );

    // And piped into the binary by hand, as docs/PROTOCOL.md shows.
    let mut host = Host::start();
    host.send_raw(bytes);
    assert_eq!(host.recv()["id"], json!(1));
    assert!(host.finish().0.success());
}
