//! What the queue and the latch share on the server: the shared connection and the
//! blocking one with its waits, the errors of talking to the server, reading its replies,
//! the scripts, the name rule, and the maintenance loop.

pub(crate) mod conn;
pub(crate) mod error;
pub(crate) mod maintenance;
pub(crate) mod names;
pub(crate) mod reply;
pub(crate) mod scripts;
pub(crate) mod waits;
