//! The server-side scripts of the queue and of the latch. Every state change is one
//! script, so the counters it moves and the keys it changes move together.

use redis::Script;

/// One script: its family's prelude, then its own file.
macro_rules! script {
    ($family:literal, $file:literal) => {
        Script::new(concat!(
            include_str!(concat!("lua/", $family, "/prelude.lua")),
            "\n",
            include_str!(concat!("lua/", $family, "/", $file))
        ))
    };
}

/// The queue's compiled scripts (their SHA-1s); `invoke_async` loads a script the server
/// lost.
#[derive(Debug)]
pub(crate) struct QueueScripts {
    pub(crate) open: Script,
    pub(crate) put: Script,
    pub(crate) get: Script,
    pub(crate) resolve: Script,
    pub(crate) retry: Script,
    pub(crate) hold: Script,
    pub(crate) sweep: Script,
    pub(crate) shutdown: Script,
    pub(crate) ledger: Script,
    pub(crate) worker: Script,
}

impl QueueScripts {
    pub(crate) fn new() -> Self {
        QueueScripts {
            open: script!("queue", "open.lua"),
            put: script!("queue", "put.lua"),
            get: script!("queue", "get.lua"),
            resolve: script!("queue", "resolve.lua"),
            retry: script!("queue", "retry.lua"),
            hold: script!("queue", "hold.lua"),
            sweep: script!("queue", "sweep.lua"),
            shutdown: script!("queue", "shutdown.lua"),
            ledger: script!("queue", "ledger.lua"),
            worker: script!("queue", "worker.lua"),
        }
    }
}

/// The latch's compiled scripts.
#[derive(Debug)]
pub(crate) struct LatchScripts {
    pub(crate) create: Script,
    pub(crate) claim: Script,
    pub(crate) report: Script,
    pub(crate) fail: Script,
    pub(crate) heartbeat: Script,
    pub(crate) state: Script,
}

impl LatchScripts {
    pub(crate) fn new() -> Self {
        LatchScripts {
            create: script!("latch", "create.lua"),
            claim: script!("latch", "claim.lua"),
            report: script!("latch", "report.lua"),
            fail: script!("latch", "fail.lua"),
            heartbeat: script!("latch", "heartbeat.lua"),
            state: script!("latch", "state.lua"),
        }
    }
}
