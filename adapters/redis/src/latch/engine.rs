//! The machinery behind [`TrackingLatch`](crate::TrackingLatch) and
//! [`Counter`](crate::Counter): one handle's connection, the scripts' calls, and the local
//! bookkeeping the maintenance future works from.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use redis::Value;

use crate::latch::event::LatchEvent;
use crate::latch::keys::LatchKeys;
use crate::latch::options::LatchOptions;
use crate::latch::reason::Reason;
use crate::latch::snapshot::{failure_of, Snapshot};
use crate::server::conn::{args, Conn};
use crate::server::error::Error;
use crate::server::reply::{self, Reply};
use crate::server::scripts::LatchScripts;
use tally_latch::Failure;

/// A counter handle dropped unreported, waiting for the maintenance future to fail the
/// latch naming it.
#[derive(Debug)]
pub(crate) struct Dropped {
    pub(crate) name: String,
    pub(crate) holder: String,
    pub(crate) panicking: bool,
}

/// What this handle knows that the server does not.
#[derive(Debug, Default)]
pub(crate) struct Local {
    /// Counters held by live handles: (name, holder), renewed by the maintenance future.
    pub(crate) held: Vec<(String, String)>,
    pub(crate) dropped: Vec<Dropped>,
}

/// The answer of the CLAIM script.
pub(crate) enum Claimed {
    Ok,
    Unknown,
    Failed(Failure<Reason>),
    Reported,
    Held,
}

/// The answer of the REPORT and FAIL scripts.
pub(crate) enum Outcome {
    /// Counted (report: the counters left; fail: 1 if this call failed the latch).
    Counted(u64),
    /// A repeat of a report that counted (the counters left).
    Repeat(u64),
    /// The handle no longer holds the counter.
    Stale,
    /// A report refused: the latch had failed first.
    Failed(Failure<Reason>),
    /// A fail refused: the latch had already ended (opened or failed).
    Ended,
}

#[derive(Debug)]
pub(crate) struct LatchEngine {
    pub(crate) name: String,
    pub(crate) names: Vec<String>,
    pub(crate) keys: LatchKeys,
    pub(crate) options: LatchOptions,
    pub(crate) conn: Conn,
    scripts: LatchScripts,
    local: Mutex<Local>,
    /// Wakes the maintenance future when a handle is dropped unreported.
    pub(crate) wake: event_listener::Event,
}

/// A holder id unique to one claim: process id, clock, and a per-process counter.
pub(crate) fn holder_id() -> String {
    static CLAIMS: AtomicU64 = AtomicU64::new(0);
    // Relaxed: only uniqueness matters.
    let n = CLAIMS.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("h{}-{:x}-{n}", std::process::id(), nanos)
}

impl LatchEngine {
    pub(crate) fn new(
        client: redis::Client,
        name: &str,
        names: Vec<String>,
        options: LatchOptions,
    ) -> Self {
        LatchEngine {
            name: name.to_string(),
            names,
            keys: LatchKeys::new(name),
            conn: Conn::new(client, options.response_timeout, options.poll),
            options,
            scripts: LatchScripts::new(),
            local: Mutex::new(Local::default()),
            wake: event_listener::Event::new(),
        }
    }

    pub(crate) fn local(&self) -> MutexGuard<'_, Local> {
        // A panic while holding this lock cannot leave the plain data half-updated.
        self.local.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn lease_ms(&self) -> u64 {
        self.options.lease.as_millis() as u64
    }

    async fn run(&self, script: &redis::Script, args: Vec<Vec<u8>>) -> Result<Reply, Error> {
        let mut all = args![self.keys.lease_prefix];
        all.extend(args);
        let value = self
            .conn
            .script_with(script, &[&self.keys.spec, &self.keys.events], &all)
            .await?;
        Reply::parse(value)
    }

    /// CREATE: makes the latch, or checks the stored one. The reply status and the rest.
    pub(crate) async fn create(&self) -> Result<Reply, Error> {
        let mut sorted = self.names.clone();
        sorted.sort_unstable();
        let args = args![
            self.names.join(","),
            sorted.join(","),
            self.lease_ms(),
            self.options.on_expiry.word(),
            self.names.len()
        ];
        self.run(&self.scripts.create, args).await
    }

    /// CLAIM: takes `name` for `holder` on a lease (`SET NX PX`), after a sweep.
    pub(crate) async fn claim(&self, name: &str, holder: &str) -> Result<Claimed, Error> {
        let mut reply = self.run(&self.scripts.claim, args![name, holder]).await?;
        Ok(match reply.status.as_str() {
            "ok" => {
                self.local()
                    .held
                    .push((name.to_string(), holder.to_string()));
                Claimed::Ok
            }
            "unknown" => Claimed::Unknown,
            "failed" => Claimed::Failed(failure_of(&mut reply)?),
            "reported" => Claimed::Reported,
            "claimed" => Claimed::Held,
            _ => return Err(reply.unexpected()),
        })
    }

    /// Forgets a held counter (reported, failed, stale or dropped).
    pub(crate) fn release(&self, name: &str, holder: &str) {
        self.local()
            .held
            .retain(|(n, h)| !(n == name && h == holder));
    }

    /// REPORT, fenced by the holder.
    pub(crate) async fn report(&self, name: &str, holder: &str) -> Result<Outcome, Error> {
        let mut reply = self.run(&self.scripts.report, args![name, holder]).await?;
        Ok(match reply.status.as_str() {
            "ok" => Outcome::Counted(reply.int()?),
            "repeat" => Outcome::Repeat(reply.int()?),
            "stale" => Outcome::Stale,
            "failed" => Outcome::Failed(failure_of(&mut reply)?),
            _ => return Err(reply.unexpected()),
        })
    }

    /// FAIL: through a counter (`name`, fenced by `holder`) or by the owner (`name` empty).
    pub(crate) async fn fail(
        &self,
        name: &str,
        holder: &str,
        kind: &str,
        message: &str,
        panicking: bool,
    ) -> Result<Outcome, Error> {
        let panicking = if panicking { "1" } else { "0" };
        let reply = self
            .run(
                &self.scripts.fail,
                args![name, holder, kind, message, panicking],
            )
            .await?;
        Ok(match reply.status.as_str() {
            "ok" => Outcome::Counted(1),
            "stale" => Outcome::Stale,
            "ended" => Outcome::Ended,
            "unknown" => Outcome::Stale,
            _ => return Err(reply.unexpected()),
        })
    }

    /// HEARTBEAT: renews the leases of `held`; the names whose lease was lost.
    pub(crate) async fn heartbeat(&self, held: &[(String, String)]) -> Result<Vec<String>, Error> {
        if held.is_empty() {
            return Ok(Vec::new());
        }
        let mut args = args![self.lease_ms()];
        for (name, holder) in held {
            args.extend(args![name, holder]);
        }
        let mut reply = self.run(&self.scripts.heartbeat, args).await?;
        if reply.status != "ok" {
            return Err(reply.unexpected());
        }
        let mut lost = Vec::with_capacity(reply.left());
        while reply.left() > 0 {
            lost.push(reply.text()?);
        }
        Ok(lost)
    }

    /// STATE: sweeps expired leases, then one atomic snapshot.
    pub(crate) async fn state(&self) -> Result<Snapshot, Error> {
        let reply = self.run(&self.scripts.state, Vec::new()).await?;
        Snapshot::parse(reply)
    }

    /// Blocks on the event stream after `last` for up to one poll interval. Whatever
    /// wakes it, the caller re-reads the state: the stream is a wake-up, not the truth.
    pub(crate) async fn wait_for_event(&self, last: &str) -> Result<(), Error> {
        let mut cmd = redis::cmd("XREAD");
        cmd.arg("COUNT")
            .arg(1)
            .arg("BLOCK")
            .arg(self.options.poll.as_millis() as u64)
            .arg("STREAMS")
            .arg(&self.keys.events)
            .arg(last);
        self.conn.blocking(&cmd).await.map(drop)
    }

    /// Events after `after` (exclusive; `None`: from the start), at most `count`.
    pub(crate) async fn events(
        &self,
        after: Option<&str>,
        count: usize,
    ) -> Result<Vec<LatchEvent>, Error> {
        let start = match after {
            Some(after) => format!("({after}"),
            None => "-".to_string(),
        };
        let mut cmd = redis::cmd("XRANGE");
        cmd.arg(&self.keys.events)
            .arg(start)
            .arg("+")
            .arg("COUNT")
            .arg(count);
        let Value::Array(entries) = self.conn.command(&cmd).await? else {
            return Err(Error::Protocol("XRANGE: expected an array".into()));
        };
        entries
            .into_iter()
            .map(|entry| LatchEvent::parse(reply::entry(entry)?))
            .collect()
    }
}
