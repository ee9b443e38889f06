//! The Firefox the host serves: found once at start, read by every command.

use std::path::PathBuf;

use super::{guarded, log};
use crate::firefox::install::{self, Install};
use crate::firefox::process;
use crate::host::protocol::ReplyError;
use crate::Error;

/// The Firefox the host works on, found once at start.
#[derive(Debug, Clone)]
pub struct Context {
    /// The parent Firefox, if the parent is one (`hello` reports it either way).
    pub firefox_pid: Option<i32>,
    /// Its install folder, or the error every command needing it replies with.
    pub install: Result<Install, ReplyError>,
    /// Where `bench_record` writes: `$ABOUT_STARTUP_BENCH_OUT`, set only by the benchmark.
    pub bench_out: Option<PathBuf>,
}

impl Context {
    /// The host-mode context: the parent process, if it is a Firefox, and its install folder.
    #[must_use]
    pub fn from_parent() -> Self {
        // A bug in the lookup must not keep `hello` from answering: treat it as "no Firefox".
        let found = guarded(|| {
            let pid = process::parent_firefox();
            Ok(Context::for_pid(pid))
        });
        let found = found.unwrap_or_else(|error| {
            log(&format!(
                "could not look for the parent Firefox: {}",
                error.message
            ));
            Context {
                firefox_pid: None,
                install: Err(error),
                bench_out: None,
            }
        });
        Context {
            bench_out: crate::host::bench::out_from_env(),
            ..found
        }
    }

    fn for_pid(pid: Option<i32>) -> Self {
        let install = match pid {
            Some(pid) => install::locate(None, Some(pid)).map_err(ReplyError::from),
            None => Err(ReplyError::from(Error::FirefoxNotFound(
                "the host's parent process is not Firefox; Firefox starts this host through \
                 native messaging (use the command-line interface to run it by hand)"
                    .into(),
            ))),
        };
        Context {
            firefox_pid: pid,
            install,
            bench_out: None,
        }
    }

    /// A context with no Firefox: every command needing one replies `firefox_not_found`.
    #[must_use]
    pub fn without_firefox(detail: &str) -> Self {
        let error = ReplyError::from(Error::FirefoxNotFound(detail.to_owned()));
        Context {
            firefox_pid: None,
            install: Err(error),
            bench_out: None,
        }
    }

    pub(super) fn install(&self) -> Result<&Install, ReplyError> {
        self.install.as_ref().map_err(Clone::clone)
    }
}
