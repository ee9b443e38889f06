//! The Firefox the host serves: found at start from the parent process or, when the parent is
//! not Firefox (a Snap or Flatpak starts hosts through the desktop portal), matched from what
//! the extension says in `hello` (firefox/served.rs). Read by every command.

use std::path::PathBuf;

use super::guard::guarded;
use super::log::log;
use crate::firefox::install::{self, Install};
use crate::firefox::process;
use crate::firefox::served::{self, BrowserHint, Found, Outcome, ProcEntry};
use crate::host::protocol::{FirefoxFound, ReplyError};
use crate::Error;

/// The Firefox the host works on.
#[derive(Debug, Clone)]
pub struct Context {
    /// The served Firefox's main process: the parent, or the one matched from `hello`.
    pub firefox_pid: Option<i32>,
    /// Its install folder, or the error every command needing it replies with.
    pub install: Result<Install, ReplyError>,
    /// Where `bench_record` writes: `$ABOUT_STARTUP_BENCH_OUT`, set only by the benchmark.
    pub bench_out: Option<PathBuf>,
    /// How `firefox_pid` was found, or why it was not (`hello`'s `firefox_found`).
    pub found: FirefoxFound,
}

/// The detail of every command's `firefox_not_found` before the extension said anything.
const NOT_FIREFOX: &str = "the host's parent process is not Firefox (a Snap or Flatpak starts \
     hosts through the desktop portal; by hand, use the command-line interface); send hello with \
     \"browser\": {\"version\", \"build_id\", \"profile\"} to find the Firefox to serve";

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
                found: found_as(Found::NoHint, None, None, Vec::new()),
            }
        });
        Context {
            bench_out: crate::host::bench::out_from_env(),
            ..found
        }
    }

    fn for_pid(pid: Option<i32>) -> Self {
        match pid {
            Some(pid) => Context {
                firefox_pid: Some(pid),
                install: install::locate(None, Some(pid)).map_err(ReplyError::from),
                bench_out: None,
                found: found_as(Found::Parent, None, None, Vec::new()),
            },
            None => Context {
                firefox_pid: None,
                install: Err(ReplyError::from(Error::FirefoxNotFound(NOT_FIREFOX.into()))),
                bench_out: None,
                found: found_as(Found::NoHint, Some(NOT_FIREFOX.into()), None, Vec::new()),
            },
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
            found: found_as(Found::NoHint, Some(detail.to_owned()), None, Vec::new()),
        }
    }

    /// Whether `hello`'s hint should be matched: the parent is not Firefox and no earlier hint
    /// found one (a later `hello` may come after the user started the right Firefox).
    #[must_use]
    pub fn wants_match(&self) -> bool {
        !matches!(self.found.how, Found::Parent | Found::Matched)
    }

    /// Match `hint` against `procs` (this user's, `uid`) and serve what it finds; when nothing
    /// matches, every command needing Firefox says why (`firefox_not_found`, the detail).
    pub fn match_hint(&mut self, hint: &BrowserHint, procs: &[ProcEntry], uid: u32) {
        let Outcome {
            found,
            pid,
            detail,
            pids,
            candidates,
        } = served::match_served(procs, hint, uid);
        log(&detail);
        self.found = found_as(found, Some(detail.clone()), Some(candidates), pids);
        match pid {
            Some(pid) => {
                self.firefox_pid = Some(pid);
                self.install = install::locate(None, Some(pid))
                    .map(|mut i| {
                        i.found_by = format!("matched process {pid}");
                        i
                    })
                    .map_err(ReplyError::from);
            }
            None => {
                self.firefox_pid = None;
                self.install = Err(ReplyError::from(Error::FirefoxNotFound(detail)));
            }
        }
    }

    pub(super) fn install(&self) -> Result<&Install, ReplyError> {
        self.install.as_ref().map_err(Clone::clone)
    }
}

fn found_as(
    how: Found,
    detail: Option<String>,
    candidates: Option<usize>,
    pids: Vec<i32>,
) -> FirefoxFound {
    FirefoxFound {
        how,
        detail,
        candidates,
        pids,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hint_that_matches_serves_that_firefox_and_one_that_does_not_says_why() {
        let me = std::process::id() as i32;
        // This test process stands in for a Firefox main process: the match only needs the
        // table; locate() then reads its real executable's folder.
        let procs = vec![ProcEntry {
            pid: me,
            ppid: 1,
            uid: 1000,
            firefox: true,
            version: Some("153.7.0".into()),
            build_id: Some("20261103151912".into()),
            profile: None,
            child_process: false,
        }];
        let mut ctx = Context::without_firefox("test");
        assert!(ctx.wants_match());
        let miss = BrowserHint {
            build_id: Some("1".into()),
            ..BrowserHint::default()
        };
        ctx.match_hint(&miss, &procs, 1000);
        assert_eq!(ctx.found.how, Found::NoMatch);
        assert!(ctx.found.pids.is_empty());
        let err = ctx.install().unwrap_err();
        assert!(err.message.contains("build 1"), "{}", err.message);
        assert!(ctx.wants_match());
        let hit = BrowserHint {
            build_id: Some("20261103151912".into()),
            ..BrowserHint::default()
        };
        ctx.match_hint(&hit, &procs, 1000);
        assert_eq!((ctx.found.how, ctx.firefox_pid), (Found::Matched, Some(me)));
        assert_eq!(ctx.found.candidates, Some(1));
        assert_eq!(ctx.found.pids, [me]);
        assert!(!ctx.wants_match());
    }
}
