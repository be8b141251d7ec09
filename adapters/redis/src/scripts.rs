//! The server-side scripts. Every state change is one script, so the counters it moves
//! and the stream it changes move together.

use redis::Script;

macro_rules! script {
    ($file:literal) => {
        concat!(
            include_str!("lua/prelude.lua"),
            "\n",
            include_str!(concat!("lua/", $file))
        )
    };
}

/// The compiled scripts (their SHA-1s); `invoke_async` loads a script the server lost.
#[derive(Debug)]
pub(crate) struct Scripts {
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

impl Scripts {
    pub(crate) fn new() -> Self {
        Scripts {
            open: Script::new(script!("open.lua")),
            put: Script::new(script!("put.lua")),
            get: Script::new(script!("get.lua")),
            resolve: Script::new(script!("resolve.lua")),
            retry: Script::new(script!("retry.lua")),
            hold: Script::new(script!("hold.lua")),
            sweep: Script::new(script!("sweep.lua")),
            shutdown: Script::new(script!("shutdown.lua")),
            ledger: Script::new(script!("ledger.lua")),
            worker: Script::new(script!("worker.lua")),
        }
    }
}
