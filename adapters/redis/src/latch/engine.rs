//! The machinery behind [`TrackingLatch`](crate::TrackingLatch) and
//! [`Counter`](crate::Counter): one handle's connection, the scripts' calls, and the local
//! bookkeeping the maintenance future works from.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use redis::Value;

use crate::latch::event::LatchEvent;
use crate::latch::keys::LatchKeys;
use crate::latch::options::LatchOptions;
use crate::latch::reason::Reason;
use crate::latch::snapshot::{failure_of, Snapshot};
use crate::server::conn::{args, Conn, Hello};
use crate::server::error::Error;
use crate::server::reply::{self, Reply};
use crate::server::scripts::LatchScripts;
use crate::server::waits::Waits;
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
    /// Claims whose replies were lost: (name, holder). The next claim of the name on this
    /// handle uses the holder id again (so a claim that landed late is recognized as its
    /// own); the maintenance future gives up the others.
    pub(crate) unknown: Vec<(String, String)>,
}

/// The answer of the CLAIM script.
pub(crate) enum Claimed {
    Ok,
    Unknown,
    Failed(Failure<Reason>),
    Reported,
    Held,
    /// This holder id was given up by its handle (a claim that landed after that).
    Void,
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
    waits: Waits,
    scripts: LatchScripts,
    local: Mutex<Local>,
    /// Wakes the maintenance future when a handle is dropped unreported.
    pub(crate) wake: event_listener::Event,
    /// This handle's id in the clock samples.
    id: String,
    /// The origin of this handle's monotonic clock, as the server's scripts see it.
    origin: Instant,
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

/// An id unique to one latch handle.
fn handle_id() -> String {
    static HANDLES: AtomicU64 = AtomicU64::new(0);
    // Relaxed: only uniqueness matters.
    let n = HANDLES.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("l{}-{:x}-{n}", std::process::id(), nanos)
}

impl LatchEngine {
    pub(crate) fn new(
        client: redis::Client,
        name: &str,
        names: Vec<String>,
        options: LatchOptions,
    ) -> Self {
        let keys = LatchKeys::new(name);
        let hello = Hello {
            key: keys.spec.clone(),
            best_effort: options.best_effort,
        };
        LatchEngine {
            name: name.to_string(),
            names,
            conn: Conn::new(client, options.response_timeout, options.poll, hello),
            waits: Waits::new(),
            keys,
            options,
            scripts: LatchScripts::new(),
            local: Mutex::new(Local::default()),
            wake: event_listener::Event::new(),
            id: handle_id(),
            origin: Instant::now(),
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
        let mono = self.origin.elapsed().as_millis() as u64;
        let mut all = args![self.keys.lease_prefix, self.id, mono];
        all.extend(args);
        let keys = [
            self.keys.spec.as_str(),
            &self.keys.events,
            &self.keys.clock,
            &self.keys.void,
        ];
        let value = self.conn.script(script, &keys, &all).await?;
        Reply::parse(value)
    }

    /// CREATE: makes the latch, or checks the stored one. The reply status and the rest.
    pub(crate) async fn create(&self) -> Result<Reply, Error> {
        self.conn.connect().await?;
        let mut sorted = self.names.clone();
        sorted.sort_unstable();
        let args = args![
            self.names.join(","),
            sorted.join(","),
            self.lease_ms(),
            self.options.on_expiry.word(),
            self.names.len(),
            self.conn.run_id()
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
            "void" => Claimed::Void,
            _ => return Err(reply.unexpected()),
        })
    }

    /// RELEASE: gives up a claim whose reply was lost; whether it had landed.
    pub(crate) async fn release_unknown(&self, name: &str, holder: &str) -> Result<bool, Error> {
        let reply = self.run(&self.scripts.release, args![name, holder]).await?;
        match reply.status.as_str() {
            "released" => Ok(true),
            "ok" => Ok(false),
            _ => Err(reply.unexpected()),
        }
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

    /// Blocks on the event stream after `last` for up to one poll interval (shared with
    /// this handle's other waits). Whatever wakes it, the caller re-reads the state: the
    /// stream is a wake-up, not the truth.
    pub(crate) async fn wait_for_event(&self, last: &str) -> Result<(), Error> {
        self.waits
            .wait_after(&self.conn, &self.keys.events, last)
            .await
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
