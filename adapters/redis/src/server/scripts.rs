//! The server-side scripts of the queue and of the latch. Every state change is one
//! script, so the counters it moves and the keys it changes move together.
//!
//! Each script declares itself (Redis 7's `#!lua` line): a script without flags may add
//! work, and the server refuses it before it runs while memory is over `maxmemory`; one
//! with `allow-oom` only ends, moves or fences what is there (resolves, gets, sweeps,
//! shutdowns), so consumers can still drain a full server, which frees memory; one with
//! `no-writes` only reads. Every script checks each key it may write, and every
//! precondition, before its first write, so none fails half-way.

use redis::Script;

/// One script: its `#!lua` line with `flags`, its family's prelude, the helpers of the
/// rare paths if it uses them, then its own file.
macro_rules! script {
    ($family:literal, $file:literal, $flags:literal) => {
        Script::new(concat!(
            "#!lua",
            $flags,
            "\n",
            include_str!(concat!("lua/", $family, "/prelude.lua")),
            "\n",
            include_str!(concat!("lua/", $family, "/", $file))
        ))
    };
    ($family:literal, rare, $file:literal, $flags:literal) => {
        Script::new(concat!(
            "#!lua",
            $flags,
            "\n",
            include_str!(concat!("lua/", $family, "/prelude.lua")),
            "\n",
            include_str!(concat!("lua/", $family, "/rare.lua")),
            "\n",
            include_str!(concat!("lua/", $family, "/", $file))
        ))
    };
}

/// May add work: refused under `maxmemory`.
macro_rules! adds {
    ($($part:tt),+) => {
        script!($($part),+, "")
    };
}

/// Ends, moves or fences what is there: runs under `maxmemory` too.
macro_rules! drains {
    ($($part:tt),+) => {
        script!($($part),+, " flags=allow-oom")
    };
}

/// The epoch check shared by the queue and the latch (`lua/epoch.lua`).
pub(crate) fn epoch() -> Script {
    Script::new(concat!(
        "#!lua flags=allow-oom\n",
        include_str!("lua/epoch.lua")
    ))
}

/// The queue's compiled scripts (their SHA-1s); `invoke_async` loads a script the server
/// lost.
#[derive(Debug)]
pub(crate) struct QueueScripts {
    pub(crate) open: Script,
    pub(crate) put: Script,
    pub(crate) step: Script,
    pub(crate) retry: Script,
    pub(crate) hold: Script,
    pub(crate) sweep: Script,
    pub(crate) shutdown: Script,
    pub(crate) ledger: Script,
    pub(crate) worker: Script,
    pub(crate) recover: Script,
    pub(crate) inflight: Script,
    pub(crate) later: Script,
}

impl QueueScripts {
    pub(crate) fn new() -> Self {
        QueueScripts {
            open: adds!("queue", rare, "open.lua"),
            put: adds!("queue", "put.lua"),
            step: drains!("queue", rare, "step.lua"),
            retry: adds!("queue", rare, "retry.lua"),
            hold: drains!("queue", rare, "hold.lua"),
            sweep: drains!("queue", rare, "sweep.lua"),
            shutdown: drains!("queue", rare, "shutdown.lua"),
            ledger: script!("queue", rare, "ledger.lua", " flags=no-writes"),
            worker: adds!("queue", rare, "worker.lua"),
            recover: drains!("queue", "recover.lua"),
            inflight: script!("queue", rare, "inflight.lua", " flags=no-writes"),
            later: adds!("queue", rare, "later.lua"),
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
    pub(crate) release: Script,
}

impl LatchScripts {
    pub(crate) fn new() -> Self {
        LatchScripts {
            create: adds!("latch", "create.lua"),
            claim: adds!("latch", "claim.lua"),
            report: drains!("latch", "report.lua"),
            fail: drains!("latch", "fail.lua"),
            heartbeat: drains!("latch", "heartbeat.lua"),
            state: drains!("latch", "state.lua"),
            release: drains!("latch", "release.lua"),
        }
    }
}
