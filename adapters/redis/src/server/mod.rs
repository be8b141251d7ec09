//! What the queue and the latch share on the server: the connections, the errors of
//! talking to it, reading its replies, the scripts, the name rule, and the maintenance
//! loop.

pub(crate) mod conn;
pub(crate) mod error;
pub(crate) mod maintenance;
pub(crate) mod names;
pub(crate) mod reply;
pub(crate) mod scripts;
