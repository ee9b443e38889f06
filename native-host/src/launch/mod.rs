//! The launch pipeline, as a library: every way the host starts a Firefox and records its start
//! runs here, in-process, as the user, for the CLI (`launch`, `trace --pid`), the detached
//! `relaunch` of the page's "Restart cold and trace" and anything else that needs it. Root's
//! only part, the kernel's tracing, is reached through the tracer's protocol (tracer/).
//!
//! - [`cold`]: the evict of a cold start and what stayed cached, held by whom (relaunch's too);
//! - [`connect`]: reaching the tracer (the sudo split's socket, root's own child, pkexec), or
//!   why not, and whether the page's pkexec route is ready;
//! - [`traced`]: a recorded start (evict, the held launcher, follow, record, build) and the
//!   recording of a running Firefox;
//! - [`profile`]: Firefox's own startup profile, collected, stored beside the trace, merged;
//! - [`prefetch`]: `launch --prefetch`, Firefox with the prefetcher beside it.

pub mod cold;
pub mod connect;
pub mod prefetch;
pub mod profile;
pub mod traced;
