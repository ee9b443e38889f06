//! What the loop's parts share: the [`Shared`] state of one connection and the shapes of a long
//! command ([`LongRunner`], [`Emit`]).

use std::sync::atomic::AtomicBool;
use std::sync::{Mutex, PoisonError, RwLock};

use super::context::Context;
use super::protocol::{Command, Event, Reply, ReplyError};
use super::running::Running;
use super::writer::Writer;

/// Sends one event of a long command. When an event cannot be sent the host raises the command's
/// cancel flag, so the command stops at its next check.
pub type Emit<'a> = dyn FnMut(Event) + 'a;

/// What a long command (`residency`, `preload`, `evict`) does. The real one is [`run_long`];
/// tests pass fakes to exercise threads, cancel and panics without touching the kernel.
pub type LongRunner = dyn Fn(&Context, &Command, &AtomicBool, &mut Emit<'_>) -> Result<Reply, ReplyError>
    + Send
    + Sync;

/// State shared by the reader loop and the workers.
pub(super) struct Shared<W> {
    pub(super) out: Writer<W>,
    pub(super) running: Running,
    /// Written only by `hello` when it matches the served Firefox (parent not Firefox); every
    /// long command works on a copy taken when it starts.
    pub(super) ctx: RwLock<Context>,
    pub(super) runner: Box<LongRunner>,
    /// Imported traces and the redacted text being fetched (quick commands only).
    pub(super) imports: Mutex<super::imports::Imports>,
}

impl<W> Shared<W> {
    /// A copy of the context (a poisoned lock still holds a whole context: it is replaced in
    /// one assignment).
    pub(super) fn ctx(&self) -> Context {
        self.ctx
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}
