//! Traces the page holds but the host does not store: an about:startup export the person
//! imported, sent in pages (`trace_upload`) so the host can summarize it (`trace_summary`) like
//! a stored one; and the one stored trace being fetched without its profile's paths
//! (`trace_fetch` with `redact`), kept whole while its pages are fetched so every page is cut
//! from the same text. Both live in memory for one connection and are bounded.

use std::collections::VecDeque;
use std::sync::Arc;

use serde::Serialize;
use serde_json::json;

use crate::error::ErrorCode;
use crate::host::protocol::ReplyError;
use crate::trace::model::Trace;

/// The largest imported trace (the store keeps traces of at most this size too).
pub const MAX_UPLOAD: u64 = 256 * 1024 * 1024;
/// Imported traces kept (the page shows one at a time; a few imports side by side).
const KEEP: usize = 4;

/// `trace_upload`'s reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Uploaded {
    /// The upload's id: the next page names it; once `complete`, `trace_summary` takes it.
    pub upload: String,
    pub received: u64,
    pub total: u64,
    pub complete: bool,
}

/// The connection's imports and its redacted text.
#[derive(Debug, Default)]
pub struct Imports {
    next: u64,
    /// The upload under way: (id, bytes so far, total).
    partial: Option<(String, Vec<u8>, u64)>,
    done: VecDeque<(String, Arc<Trace>)>,
    /// The last redacted text fetched: (trace id, text).
    redacted: Option<(String, Arc<Vec<u8>>)>,
}

fn bad(message: String) -> ReplyError {
    ReplyError::new(ErrorCode::BadRequest, message, json!({}))
}

impl Imports {
    /// Take one page of an upload: `upload` names the one under way (`None` starts a new one,
    /// dropping any unfinished); pages come in order, `offset` being the bytes sent so far.
    pub fn put(
        &mut self,
        upload: Option<&str>,
        offset: u64,
        total: u64,
        data: &str,
    ) -> Result<Uploaded, ReplyError> {
        if total > MAX_UPLOAD {
            return Err(bad(format!(
                "a trace of {total} bytes is more than the {MAX_UPLOAD} this host takes"
            )));
        }
        let (id, mut bytes, want) = match (upload, self.partial.take()) {
            (None, _) => {
                self.next += 1;
                (format!("upload-{}", self.next), Vec::new(), total)
            }
            (Some(u), Some(p)) if p.0 == u => p,
            (Some(u), _) => {
                return Err(bad(format!(
                    "no upload {u} under way: start again without \"upload\""
                )))
            }
        };
        if offset != bytes.len() as u64 || want != total {
            return Err(bad(format!(
                "upload {id}: page at byte {offset} of {total}, expected byte {} of {want}: start again",
                bytes.len()
            )));
        }
        bytes.extend_from_slice(data.as_bytes());
        let received = bytes.len() as u64;
        if received > total {
            return Err(bad(format!(
                "upload {id}: {received} bytes sent, more than the {total} announced"
            )));
        }
        if received < total {
            self.partial = Some((id.clone(), bytes, total));
            return Ok(Uploaded {
                upload: id,
                received,
                total,
                complete: false,
            });
        }
        let trace = parse(&bytes).map_err(|why| bad(format!("upload {id}: {why}")))?;
        self.done.push_back((id.clone(), Arc::new(trace)));
        while self.done.len() > KEEP {
            self.done.pop_front();
        }
        Ok(Uploaded {
            upload: id,
            received,
            total,
            complete: true,
        })
    }

    /// A completed upload.
    #[must_use]
    pub fn get(&self, id: &str) -> Option<Arc<Trace>> {
        self.done
            .iter()
            .find(|(i, _)| i == id)
            .map(|(_, t)| Arc::clone(t))
    }

    /// The redacted text of trace `id`, made by `make` unless it is the one kept.
    pub fn redacted(
        &mut self,
        id: &str,
        make: impl FnOnce() -> Result<Vec<u8>, ReplyError>,
    ) -> Result<Arc<Vec<u8>>, ReplyError> {
        if let Some((kept, text)) = &self.redacted {
            if kept == id {
                return Ok(Arc::clone(text));
            }
        }
        let text = Arc::new(make()?);
        self.redacted = Some((id.to_owned(), Arc::clone(&text)));
        Ok(text)
    }
}

/// A trace from the JSON text of one (the `trace` of an about:startup export).
fn parse(bytes: &[u8]) -> Result<Trace, String> {
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
    let version = value.get("version").and_then(serde_json::Value::as_u64);
    if version != Some(u64::from(crate::trace::TRACE_VERSION)) {
        return Err(format!(
            "a trace of version {version:?}; this host reads version {}",
            crate::trace::TRACE_VERSION
        ));
    }
    serde_json::from_value(value).map_err(|e| format!("not an about:startup trace: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text() -> String {
        serde_json::to_string(&crate::trace::model::tests::fake()).unwrap()
    }

    #[test]
    fn a_trace_in_pages_becomes_one_the_summary_takes() {
        let mut imports = Imports::default();
        let text = text();
        let total = text.len() as u64;
        let (a, b) = text.split_at(100);
        let first = imports.put(None, 0, total, a).unwrap();
        assert!(!first.complete);
        assert!(imports.get(&first.upload).is_none());
        let last = imports.put(Some(&first.upload), 100, total, b).unwrap();
        assert!(last.complete);
        assert_eq!(imports.get(&last.upload).unwrap().files.len(), 3);
    }

    #[test]
    fn pages_out_of_order_or_too_many_bytes_are_refused_by_name() {
        let mut imports = Imports::default();
        let text = text();
        let total = text.len() as u64;
        let first = imports.put(None, 0, total, &text[..10]).unwrap();
        let e = imports
            .put(Some(&first.upload), 20, total, &text[20..])
            .unwrap_err();
        assert!(e.message.contains("expected byte 10"), "{}", e.message);
        let e = imports
            .put(Some(&first.upload), 10, total, "x")
            .unwrap_err();
        assert!(
            e.message.contains("no upload"),
            "the broken upload is gone: {}",
            e.message
        );
        assert!(imports
            .put(None, 0, 3, "abcd")
            .unwrap_err()
            .message
            .contains("more than the 3"));
        assert!(imports
            .put(None, 0, 2, "{}")
            .unwrap_err()
            .message
            .contains("version"));
        assert!(imports.put(None, 0, MAX_UPLOAD + 1, "").is_err());
    }

    #[test]
    fn a_few_imports_are_kept() {
        let mut imports = Imports::default();
        let text = text();
        let ids: Vec<String> = (0..5)
            .map(|_| {
                imports
                    .put(None, 0, text.len() as u64, &text)
                    .unwrap()
                    .upload
            })
            .collect();
        assert!(imports.get(&ids[0]).is_none(), "the oldest is dropped");
        assert!(imports.get(&ids[4]).is_some());
    }
}
