//! The cancel flags of the running long commands, by request id, and the bound on how many run.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;

use super::log::lock;
use super::protocol::{Cancelled, ErrorCode, ReplyError};

/// Most long commands running at once. The page and popup run two or three; 3,000 requests in
/// a burst once kept 366 threads alive. Past this a request gets `busy` and runs nothing.
pub(super) const MAX_IN_FLIGHT: usize = 16;

/// Cancel flags of the running long commands, by request id.
#[derive(Default)]
pub(super) struct Running(Mutex<HashMap<u64, Arc<AtomicBool>>>);

impl Running {
    pub(super) fn register(&self, id: u64) -> Result<Arc<AtomicBool>, ReplyError> {
        let mut running = lock(&self.0);
        if running.len() >= MAX_IN_FLIGHT {
            return Err(ReplyError::new(
                ErrorCode::Busy,
                format!("{MAX_IN_FLIGHT} long requests are running already; wait for one to finish, then send it again"),
                json!({ "limit": MAX_IN_FLIGHT }),
            ));
        }
        if running.contains_key(&id) {
            // A second registration would orphan the first one's cancel flag.
            return Err(ReplyError::bad_request(format!(
                "id {id} is already used by a running request; give every request its own id"
            )));
        }
        let flag = Arc::new(AtomicBool::new(false));
        running.insert(id, Arc::clone(&flag));
        Ok(flag)
    }

    pub(super) fn unregister(&self, id: u64) {
        lock(&self.0).remove(&id);
    }

    pub(super) fn cancel(&self, target: u64) -> Result<Cancelled, ReplyError> {
        let Some(flag) = lock(&self.0).get(&target).cloned() else {
            return Err(ReplyError::new(
                ErrorCode::UnknownRequest,
                format!("no request with id {target} is running (it finished already, or was never sent)"),
                json!({ "target": target }),
            ));
        };
        flag.store(true, Ordering::Relaxed);
        Ok(Cancelled { target })
    }

    pub(super) fn cancel_all(&self) {
        for flag in lock(&self.0).values() {
            flag.store(true, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn long_requests_in_flight_are_capped_with_busy() {
        let running = super::Running::default();
        for id in 0..super::MAX_IN_FLIGHT as u64 {
            running.register(id).unwrap();
        }
        let err = running.register(999).unwrap_err();
        assert_eq!(err.code, crate::error::ErrorCode::Busy);
        assert_eq!(err.params, json!({"limit": super::MAX_IN_FLIGHT}));
        running.unregister(3);
        assert!(
            running.register(999).is_ok(),
            "a finished request frees its place"
        );
    }
}
