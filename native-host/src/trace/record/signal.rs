//! Ctrl-C, SIGTERM and SIGHUP during a recording: the first stops it and keeps what it has
//! (the tracer, told `Stop`, hands over the rest), a second ends the host at once, and so does
//! the first one's [`GRACE`] running out. The tracer ends by itself when this process's end of
//! the link closes, and removes its instances.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// How long the first signal leaves the recording to wind down and store what it has before
/// the host ends anyway: `timeout` and most service managers send one SIGTERM, and a host that
/// only sets a flag must not outlive it (issue 20).
pub const GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// What a signal does, by how many came before it. Pure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnSignal {
    /// The first: stop recording, keep what it has, end within [`GRACE`].
    WindDown,
    /// A second SIGINT or SIGTERM: end now.
    Exit,
}

#[must_use]
pub fn on_signal(already: bool) -> OnSignal {
    if already {
        OnSignal::Exit
    } else {
        OnSignal::WindDown
    }
}

/// Set by Ctrl-C/SIGTERM/SIGHUP: the recording stops and keeps what it has. A second signal
/// ends the host at once, and so does the first one's [`GRACE`] running out.
#[must_use]
pub fn interrupted() -> Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let f = Arc::clone(&flag);
        let _ = ctrlc::set_handler(move || match on_signal(f.swap(true, Ordering::SeqCst)) {
            OnSignal::Exit => std::process::exit(130),
            OnSignal::WindDown => {
                // ctrlc runs this on its own thread, not in the signal handler: a thread may
                // be started here.
                let _ = std::thread::Builder::new()
                    .name("signal grace".into())
                    .spawn(|| {
                        std::thread::sleep(GRACE);
                        let _ = writeln!(
                            io::stderr(),
                            "about-startup-host: still running {} s after the signal; ending",
                            GRACE.as_secs()
                        );
                        std::process::exit(130);
                    });
            }
        });
        flag
    })
    .clone()
}

#[cfg(test)]
mod tests {
    use super::{on_signal, OnSignal};

    #[test]
    fn the_first_signal_winds_down_and_a_second_ends() {
        assert_eq!(on_signal(false), OnSignal::WindDown);
        assert_eq!(on_signal(true), OnSignal::Exit);
    }
}
