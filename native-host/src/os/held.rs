//! A process created *held*: forked now, kept waiting on a pipe, and only then turned into the
//! program (exec) when [`Held::release`] writes to that pipe. A traced start needs it: the
//! tracer is told to follow the process's pid between the fork and the exec, so the kernel
//! records the program's first read and nothing before it is missed.
//!
//! Not `std::process::Command` with a `pre_exec` that waits: `spawn` itself waits until the
//! child has exec'd, so it would never return. Everything the child needs (the path, argv,
//! environment, working folder, `/dev/null`) is made before the fork; between fork and exec the
//! child calls only async-signal-safe functions (the parent may have threads).

use std::ffi::{CString, OsString};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;

/// What to run.
#[derive(Debug, Clone)]
pub struct Program {
    pub path: PathBuf,
    /// argv, argv[0] included.
    pub argv: Vec<OsString>,
    /// The whole environment.
    pub env: Vec<(OsString, OsString)>,
    /// The working folder (`None`: this process's).
    pub cwd: Option<PathBuf>,
    /// A session of its own (it must not end with this process's terminal or session).
    pub setsid: bool,
    /// Where its standard error goes (a file the caller reads back: what the program said when
    /// it failed); `None`: as stdin and stdout, `/dev/null`. Not this process's own: a program
    /// left running would hold the caller's pipe open, and break on it once the caller is gone.
    pub stderr: Option<std::sync::Arc<OwnedFd>>,
}

/// A forked child waiting for [`Held::release`]. Dropped unreleased, it exits without running
/// anything (its end of the pipe sees end-of-file).
#[derive(Debug)]
pub struct Held {
    pid: i32,
    release: Option<File>,
    errors: Option<File>,
    cwd: Option<PathBuf>,
}

/// A released child: the program runs (or ran) as `pid`.
#[derive(Debug)]
pub struct Running {
    pub pid: i32,
    done: Option<ExitStatus>,
}

fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte"))
}

fn pipe() -> io::Result<(File, File)> {
    let (r, w) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    Ok((File::from(r), File::from(w)))
}

/// Fork `program`, held. The returned [`Held`] knows its pid.
pub fn spawn(program: &Program) -> io::Result<Held> {
    let path = cstring(program.path.as_os_str().as_bytes())?;
    let argv: Vec<CString> = program
        .argv
        .iter()
        .map(|a| cstring(a.as_bytes()))
        .collect::<io::Result<_>>()?;
    let env: Vec<CString> = program
        .env
        .iter()
        .map(|(k, v)| {
            let mut kv = k.as_bytes().to_vec();
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            cstring(&kv)
        })
        .collect::<io::Result<_>>()?;
    let cwd = program
        .cwd
        .as_deref()
        .map(|c| cstring(c.as_os_str().as_bytes()))
        .transpose()?;
    let mut argv_ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_ptrs.push(std::ptr::null());
    let mut env_ptrs: Vec<*const libc::c_char> = env.iter().map(|e| e.as_ptr()).collect();
    env_ptrs.push(std::ptr::null());
    let null = OwnedFd::from(
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(Path::new("/dev/null"))?,
    );
    let stderr_fd = program.stderr.as_ref().map(|f| f.as_raw_fd());
    let (go_r, go_w) = pipe()?;
    let (err_r, err_w) = pipe()?;
    let (go_rfd, go_wfd, err_rfd, err_wfd, null_fd) = (
        go_r.as_raw_fd(),
        go_w.as_raw_fd(),
        err_r.as_raw_fd(),
        err_w.as_raw_fd(),
        null.as_raw_fd(),
    );
    // SAFETY: fork; the child below calls only async-signal-safe functions on memory made
    // before the fork, and ends in execve or _exit.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: the child. close, signal, sigprocmask, setsid, dup2, read, chdir, execve,
        // write and _exit are async-signal-safe; every pointer was made before the fork.
        unsafe {
            libc::close(go_wfd);
            libc::close(err_rfd);
            // Rust ignores SIGPIPE; an ignored signal stays ignored across exec.
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            if program.setsid {
                libc::setsid();
            }
            for fd in 0..3 {
                libc::dup2(
                    if fd == 2 {
                        stderr_fd.unwrap_or(null_fd)
                    } else {
                        null_fd
                    },
                    fd,
                );
            }
            let mut byte = 0u8;
            let got = loop {
                let n = libc::read(go_rfd, std::ptr::addr_of_mut!(byte).cast(), 1);
                if n < 0 && *libc::__errno_location() == libc::EINTR {
                    continue;
                }
                break n;
            };
            if got != 1 {
                // The parent went away, or let it go unreleased: run nothing.
                libc::_exit(126);
            }
            // Which step failed (STEP_CHDIR, STEP_EXEC), then its errno: the error then names
            // the working folder rather than the program (issue 30 #7).
            if let Some(dir) = &cwd {
                if libc::chdir(dir.as_ptr()) != 0 {
                    let mut report = [STEP_CHDIR, 0, 0, 0, 0];
                    report[1..].copy_from_slice(&(*libc::__errno_location()).to_ne_bytes());
                    libc::write(err_wfd, report.as_ptr().cast(), 5);
                    libc::_exit(127);
                }
            }
            libc::execve(path.as_ptr(), argv_ptrs.as_ptr(), env_ptrs.as_ptr());
            let mut report = [STEP_EXEC, 0, 0, 0, 0];
            report[1..].copy_from_slice(&(*libc::__errno_location()).to_ne_bytes());
            libc::write(err_wfd, report.as_ptr().cast(), 5);
            libc::_exit(127);
        }
    }
    drop(go_r);
    drop(err_w);
    drop(null);
    Ok(Held {
        pid,
        release: Some(go_w),
        errors: Some(err_r),
        cwd: program.cwd.clone(),
    })
}

/// The child's report of a failed step: entering the working folder…
const STEP_CHDIR: u8 = 1;
/// …or the exec.
const STEP_EXEC: u8 = 2;

impl Held {
    #[must_use]
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Let it run: it execs the program. `Err` if the exec (or the working folder) failed.
    pub fn release(mut self) -> io::Result<Running> {
        let mut go = self.release.take().expect("released once");
        go.write_all(&[1])?;
        drop(go);
        let mut report = [0u8; 5];
        let mut errors = self.errors.take().expect("released once");
        let mut got = 0;
        while got < 5 {
            match errors.read(&mut report[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let mut running = Running {
            pid: self.pid,
            done: None,
        };
        if got == 5 {
            let _ = running.wait();
            let errno = i32::from_ne_bytes([report[1], report[2], report[3], report[4]]);
            let e = io::Error::from_raw_os_error(errno);
            return Err(match (report[0], &self.cwd) {
                (STEP_CHDIR, Some(dir)) => io::Error::new(
                    e.kind(),
                    format!("entering its working folder {}: {e}", dir.display()),
                ),
                _ => e,
            });
        }
        Ok(running)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if self.release.take().is_some() {
            // Unreleased: it sees end-of-file and exits; reap it.
            let mut status = 0;
            // SAFETY: waitpid on our own child with an out-parameter.
            unsafe {
                libc::waitpid(self.pid, &mut status, 0);
            }
        }
    }
}

impl Running {
    /// Its exit status once it has exited (reaped then), `None` while it runs.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if self.done.is_some() {
            return Ok(self.done);
        }
        let mut status = 0;
        // SAFETY: waitpid on our own child with an out-parameter.
        let rc = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
        match rc {
            0 => Ok(None),
            r if r == self.pid => {
                self.done = Some(ExitStatus::from_raw(status));
                Ok(self.done)
            }
            _ => Err(io::Error::last_os_error()),
        }
    }

    /// Wait for it to exit.
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        loop {
            if let Some(s) = self.done {
                return Ok(s);
            }
            let mut status = 0;
            // SAFETY: waitpid on our own child with an out-parameter.
            let rc = unsafe { libc::waitpid(self.pid, &mut status, 0) };
            if rc == self.pid {
                self.done = Some(ExitStatus::from_raw(status));
            } else {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, cwd: Option<&Path>) -> Program {
        Program {
            path: PathBuf::from("/bin/sh"),
            argv: vec!["sh".into(), "-c".into(), script.into()],
            env: vec![("HELD".into(), "yes".into())],
            cwd: cwd.map(Path::to_path_buf),
            setsid: false,
            stderr: None,
        }
    }

    #[test]
    fn a_held_child_runs_nothing_until_released() {
        let tmp = tempfile::tempdir().unwrap();
        let mark = tmp.path().join("ran");
        let held = spawn(&sh(
            &format!("echo \"$HELD $(pwd)\" > {}", mark.display()),
            Some(tmp.path()),
        ))
        .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(!mark.exists(), "ran before the release");
        // Still our own (held) binary: it has not exec'd.
        let exe = std::fs::read_link(format!("/proc/{}/exe", held.pid())).unwrap();
        assert_eq!(exe, std::env::current_exe().unwrap());
        let mut running = held.release().unwrap();
        assert!(running.wait().unwrap().success());
        let text = std::fs::read_to_string(&mark).unwrap();
        assert_eq!(
            text.trim(),
            format!("yes {}", tmp.path().canonicalize().unwrap().display())
        );
    }

    #[test]
    fn a_held_child_let_go_runs_nothing_and_a_missing_program_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let mark = tmp.path().join("ran");
        let held = spawn(&sh(&format!("touch {}", mark.display()), None)).unwrap();
        drop(held);
        assert!(!mark.exists());
        let mut missing = sh("true", None);
        missing.path = tmp.path().join("no-such-program");
        let err = spawn(&missing).unwrap().release().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }

    /// Issue 30 #7: a working folder that cannot be entered read "starting …/firefox-esr:
    /// Permission denied", as if the binary were at fault. The error names the folder.
    #[test]
    fn a_working_folder_that_cannot_be_entered_is_named() {
        let tmp = tempfile::tempdir().unwrap();
        let gone = tmp.path().join("gone");
        let err = spawn(&sh("true", Some(&gone)))
            .unwrap()
            .release()
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert!(
            err.to_string()
                .contains(&format!("working folder {}", gone.display())),
            "{err}"
        );
    }
}
