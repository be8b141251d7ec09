//! chasquimq (Rust) in a child process: the `chasquimq-peer` binary built from
//! `benches/chasquimq/` (a project of its own, outside the workspace), twice: with
//! chasquimq's defaults, and with its events stream off.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use crate::child::Process;
use crate::server::Server;

const METHOD: &str =
    "`Producer::add`; bulk: `Producer::add_bulk` of {batch} jobs (one pipeline of \
     `XADD … IDMP`); a consumer is a `Consumer` with chasquimq's defaults (up to 64 entries a \
     read, 100 handlers, acknowledgements batched into `XACKDEL`) whose handler returns at \
     once; a consume's consumers connect and block before the timed part, which moves the \
     group back to the start and puts the last job, and ends when every handler has run and \
     the stream is empty";

/// Starts the two variants, on `server`.
pub(crate) fn start(binary: &Path, server: &Server) -> Result<Vec<Process>, String> {
    [
        ("chasquimq, defaults", "on", ""),
        ("chasquimq, events off", "off", "; `events_enabled: false`"),
    ]
    .into_iter()
    .map(|(name, events, note)| {
        let mut command = Command::new(binary);
        command.arg(server.sock()).arg(events);
        // Its scripts run only off the hot path (dead letters, delays): nothing nested to
        // tell apart.
        Process::start(name, &format!("{METHOD}{note}"), command, BTreeSet::new())
    })
    .collect()
}
