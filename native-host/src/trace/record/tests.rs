//! A tracer that ends its session before the start is over (as the sudo split's does: it keeps
//! its socket open while it waits for the user's side to end): the recording ends at once
//! with an error that says why, and nothing waits for the tracer.

use std::os::unix::net::UnixStream;
use std::sync::mpsc;
use std::time::Duration;

use super::{Link, Recorder, Stop};
use crate::framing::{read_frame, write_frame, ReadOutcome};
use crate::tracer::protocol::{self, Ended, Reply};

/// How long the recording may take before it counts as hung (a liveness bound: a run past it
/// has hung, it is not slow; the old user's side waited for good).
const HUNG: Duration = Duration::from_secs(60);

/// A tracer that says `Ready`, arms the `Follow`, hands over a line, ends its session as
/// `ended`, and keeps its end of the socket open until the test is over.
fn early_tracer(ended: Ended) -> (UnixStream, mpsc::Sender<()>) {
    let (ours, mut theirs) = UnixStream::pair().unwrap();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        let mut send = |r: &Reply| write_frame(&mut theirs, &protocol::encode(r)).unwrap();
        send(&Reply::Ready {
            version: protocol::VERSION,
        });
        let mut reader = theirs.try_clone().unwrap();
        assert!(matches!(read_frame(&mut reader), Ok(ReadOutcome::Frame(_))));
        let mut send = |r: &Reply| write_frame(&mut theirs, &protocol::encode(r)).unwrap();
        send(&Reply::Armed);
        send(&Reply::Done {
            lost_events: 3,
            ended,
        });
        // Held open, as the sudo split's tracer held it while it waited for its child.
        let _ = done_rx.recv();
        drop(reader);
    });
    (ours, done_tx)
}

fn install() -> (tempfile::TempDir, crate::firefox::install::Install) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    std::fs::write(dir.join("application.ini"), "[App]\nVersion=153.8.0esr\n").unwrap();
    std::fs::write(dir.join("firefox"), "").unwrap();
    let install = crate::firefox::install::locate(Some(&dir), None).unwrap();
    (tmp, install)
}

/// Record this test's own process with the tracer `ended` early; the error, or "hung".
fn record_with(ended: Ended) -> String {
    let (socket, hold) = early_tracer(ended);
    let (_tmp, install) = install();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let link = Link::open(socket.try_clone().unwrap(), socket, None)
            .map_err(|e| (crate::note::NO_TRACE_IO, e.to_string()));
        let pid = i32::try_from(std::process::id()).unwrap();
        let mut recorder = Recorder::follow(link, pid, false, &install.dir);
        assert!(recorder.traced(), "the fake tracer armed the Follow");
        let stop = Stop {
            seconds: None,
            quiet_ms: 60_000,
        };
        let ended_by = recorder.run(&mut || None, 0, stop, &None);
        let result = recorder.finish(&install, (0, "zero".into()), ended_by, Vec::new(), false);
        let _ = tx.send(result.map(|_| ()).map_err(|e| format!("{e:#}")));
    });
    let outcome = rx.recv_timeout(HUNG);
    drop(hold);
    match outcome {
        Ok(Err(message)) => message,
        Ok(Ok(())) => "a trace was made".into(),
        Err(_) => "hung".into(),
    }
}

#[test]
fn a_tracer_that_ends_before_the_start_ends_the_recording_with_why() {
    let message = record_with(Ended::Lost);
    assert!(
        message.contains("the tracer ended its session before the start was over"),
        "{message}"
    );
    assert!(message.contains("ring buffer lost events"), "{message}");
    let message = record_with(Ended::Limit);
    assert!(message.contains("hard limit"), "{message}");
}
