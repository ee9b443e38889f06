//! The state folder (see `user.rs` for whom).

pub mod user;
