//! What the host's tests share: an in-memory stdout, requests as frames, a typed fake reply.

use std::io::{self, Cursor, Write};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use super::log::lock;
use super::{serve_with, Context, LongRunner};
use crate::framing::{self, encode as frame, ReadOutcome};
use crate::host::protocol::Reply;
use crate::pagecache::evict;

/// A writer the test keeps a handle to.
#[derive(Clone, Default)]
pub(super) struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        lock(&self.0).extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Sink {
    pub(super) fn replies(&self) -> Vec<Value> {
        let bytes = lock(&self.0).clone();
        let mut cursor = Cursor::new(bytes);
        let mut out = Vec::new();
        while let ReadOutcome::Frame(body) = framing::read_frame(&mut cursor).unwrap() {
            out.push(serde_json::from_slice(&body).unwrap());
        }
        out
    }
}

pub(super) fn no_firefox() -> Context {
    Context::without_firefox("test")
}

pub(super) fn run(input: &[u8], runner: Box<LongRunner>) -> (anyhow::Result<()>, Vec<Value>) {
    run_in(no_firefox(), input, runner)
}

/// [`run`] serving `ctx`.
pub(super) fn run_in(
    ctx: Context,
    input: &[u8],
    runner: Box<LongRunner>,
) -> (anyhow::Result<()>, Vec<Value>) {
    let sink = Sink::default();
    let result = serve_with(Cursor::new(input.to_vec()), sink.clone(), ctx, runner);
    (result, sink.replies())
}

pub(super) fn request(value: &Value) -> Vec<u8> {
    frame(&serde_json::to_vec(value).unwrap())
}

pub(super) fn probe(id: u64) -> Vec<u8> {
    // Answered by the host alone, whatever the kernel modules do.
    request(&json!({"id": id, "command": "cancel", "target": 999_999}))
}

/// `evict`'s reply with no files: what the fake long commands answer.
pub(super) fn evicted(elapsed_ms: u64) -> Reply {
    Reply::Evict(evict::Summary {
        files: Vec::new(),
        files_omitted: 0,
        pages_dropped: 0,
        elapsed_ms,
        cache: crate::pagecache::Cache::Files,
    })
}

pub(super) fn codes(replies: &[Value]) -> Vec<(Value, Value)> {
    replies
        .iter()
        .map(|r| (r["id"].clone(), r["code"].clone()))
        .collect()
}
