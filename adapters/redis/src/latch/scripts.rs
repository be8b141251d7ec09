//! The latch's server-side scripts: every state change is one script.

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
            create: Script::new(script!("create.lua")),
            claim: Script::new(script!("claim.lua")),
            report: Script::new(script!("report.lua")),
            fail: Script::new(script!("fail.lua")),
            heartbeat: Script::new(script!("heartbeat.lua")),
            state: Script::new(script!("state.lua")),
        }
    }
}
