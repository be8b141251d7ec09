//! The machinery behind [`Queue`](crate::Queue): one handle's connection, identity and
//! local bookkeeping, and the calls that run each script.

use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use redis::Value;
use tally_queue::{JobEvent, JobId, Ledger};

use crate::codec::Codec;
use crate::queue::drained::Drained;
use crate::queue::error::PutError;
use crate::queue::journal::Journaled;
use crate::queue::keys::Keys;
use crate::queue::options::Options;
use crate::queue::record::{Record, Records};
use crate::queue::status::{State, Status};
use crate::server::conn::{args, Conn};
use crate::server::error::Error;
use crate::server::reply::{self, Reply};
use crate::server::scripts::QueueScripts;

/// How many `XAUTOCLAIM` steps one get may spend on expired leases.
const RECLAIM_BUDGET: u64 = 4;
/// Entries moved per `shutdown_now` step.
const DRAIN_CHUNK: u64 = 256;
/// Expired deliveries ended per sweep step.
const SWEEP_CHUNK: u64 = 64;

/// A delivery dropped unresolved, waiting for the maintenance future.
#[derive(Debug)]
pub(crate) struct Dropped {
    pub(crate) entry: String,
    pub(crate) id: JobId,
    pub(crate) attempt: u64,
}

/// What this handle knows that the server does not.
#[derive(Debug, Default)]
pub(crate) struct Local {
    /// Entries held by live `Delivery` values of this handle (or dropped and not yet
    /// released): never handed out twice by orphan recovery.
    pub(crate) held: BTreeSet<String>,
    pub(crate) dropped: Vec<Dropped>,
    pub(crate) workers: Vec<String>,
    pub(crate) retired: Vec<String>,
    /// A get was cancelled after its command may have run: an entry may sit in this
    /// consumer's pending list with no `Delivery`.
    pub(crate) orphans: bool,
    /// The last entry a `shutdown_now` returned, not yet confirmed to the server.
    pub(crate) drain_confirm: Option<String>,
}

/// What a get step found.
pub(crate) enum Found<T> {
    Item {
        entry: String,
        id: JobId,
        attempt: u64,
        item: T,
    },
    Empty,
    ShutDown,
}

/// A script's ending word for a delivery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum How {
    Succeeded,
    Rejected,
    Uncertain,
    Abandoned,
}

impl How {
    pub(crate) fn word(self) -> &'static str {
        match self {
            How::Succeeded => "succeeded",
            How::Rejected => "rejected",
            How::Uncertain => "uncertain",
            How::Abandoned => "abandoned",
        }
    }
}

/// The answer of the RESOLVE script.
pub(crate) enum Resolved {
    Counted,
    /// A repeat: this attempt was already resolved, with this word.
    Repeat(String),
    Stale,
}

/// The answer of the RETRY script.
pub(crate) enum Retried {
    /// Back in the stream under its id (now, or by the attempt's earlier call).
    Done,
    /// This attempt no longer holds the job (or ended it another way).
    Stale,
    /// Refused: the queue is shut down; nothing changed.
    ShutDown,
    /// Refused: the bounded buffer is full; nothing changed.
    Full,
}

#[derive(Debug)]
pub(crate) struct Engine<C: Codec> {
    pub(crate) codec: C,
    pub(crate) name: String,
    pub(crate) keys: Keys,
    pub(crate) options: Options,
    pub(crate) consumer: String,
    pub(crate) conn: Conn,
    pub(crate) scripts: QueueScripts,
    pub(crate) local: Mutex<Local>,
    /// Serializes this handle's gets, so orphan recovery cannot race a get in progress.
    pub(crate) getting: async_lock::Mutex<()>,
    /// Wakes the maintenance future when a delivery or worker is dropped.
    pub(crate) wake: event_listener::Event,
    /// The journal of this handle and its clones, if one was installed.
    pub(crate) journal: Journaled,
    next_worker: AtomicU64,
}

/// A consumer name unique to this handle: process id, clock, and a per-process counter.
fn consumer_name() -> String {
    static HANDLES: AtomicU64 = AtomicU64::new(0);
    // Relaxed: only uniqueness matters.
    let n = HANDLES.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("c{}-{:x}-{n}", std::process::id(), nanos)
}

impl<C: Codec> Engine<C> {
    pub(crate) fn new(client: redis::Client, name: &str, codec: C, options: Options) -> Self {
        Engine {
            codec,
            name: name.to_string(),
            keys: Keys::new(name),
            consumer: consumer_name(),
            conn: Conn::new(client, options.response_timeout, options.poll),
            options,
            scripts: QueueScripts::new(),
            local: Mutex::new(Local::default()),
            getting: async_lock::Mutex::new(()),
            wake: event_listener::Event::new(),
            journal: Journaled::default(),
            next_worker: AtomicU64::new(0),
        }
    }

    pub(crate) fn local(&self) -> MutexGuard<'_, Local> {
        // A panic while holding this lock cannot leave the plain data half-updated.
        self.local.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn lease_ms(&self) -> u64 {
        self.options.lease.as_millis() as u64
    }

    /// OPEN: creates the group and meta, or checks the stored settings.
    pub(crate) async fn open(&self, stored: [i64; 3]) -> Result<(), crate::OpenError> {
        let value = self
            .conn
            .script(
                &self.scripts.open,
                &self.keys.fixed,
                None,
                &args![stored[0], stored[1], stored[2]],
            )
            .await?;
        let mut reply = Reply::parse(value)?;
        match reply.status.as_str() {
            "created" | "ok" => Ok(()),
            "mismatch" => {
                let field = reply.text()?;
                let stored_value = reply.text()?;
                let given = match field.as_str() {
                    "cap" => stored[0].to_string(),
                    "lease_ms" => stored[1].to_string(),
                    "max_att" => stored[2].to_string(),
                    _ => "1".to_string(),
                };
                Err(crate::OpenError::Mismatch {
                    field,
                    stored: stored_value,
                    given,
                })
            }
            _ => Err(reply.unexpected().into()),
        }
    }

    /// PUT once: accepted, or refused with the item back.
    pub(crate) async fn put_once(
        &self,
        item: C::Item,
        key: Option<&str>,
    ) -> Result<JobId, PutError<C::Item>> {
        let bytes = match self.codec.encode(&item) {
            Ok(bytes) => bytes,
            Err(error) => return Err(PutError::Encode { item, error }),
        };
        if bytes.len() > self.options.max_item_bytes {
            return Err(PutError::TooLarge {
                item,
                size: bytes.len(),
                limit: self.options.max_item_bytes,
            });
        }
        let key = key.map(|key| self.keys.idempotency(key));
        let window = self.options.repeat_window.as_millis() as u64;
        let value = match self
            .conn
            .script(
                &self.scripts.put,
                &self.keys.fixed,
                key.as_deref(),
                &args![bytes, window],
            )
            .await
        {
            Ok(value) => value,
            Err(error) => return Err(PutError::from_redis(item, error)),
        };
        let mut reply = match Reply::parse(value) {
            Ok(reply) => reply,
            Err(error) => return Err(PutError::Failed { item, error }),
        };
        match reply.status.as_str() {
            "ok" => match reply.int() {
                Ok(id) => {
                    let id = JobId::from_raw(id);
                    // 1: a keyed put the server had already accepted, under this id.
                    if reply.int().map_or(true, |repeat| repeat == 0) {
                        self.journal.note(|| JobEvent::Accepted(id));
                    }
                    Ok(id)
                }
                Err(error) => Err(PutError::Unknown { item, error }),
            },
            "shutdown" => Err(PutError::ShutDown(item)),
            "noworkers" => Err(PutError::NoWorkers(item)),
            "full" => Err(PutError::Full(item)),
            _ => {
                let error = reply.unexpected();
                Err(PutError::Failed { item, error })
            }
        }
    }

    /// Turns an entry handed to this consumer into a found item, marking it held. An
    /// entry the codec cannot decode is dead-lettered with its bytes and `None` returned.
    async fn take(
        &self,
        entry: String,
        id: JobId,
        attempt: u64,
        bytes: Vec<u8>,
    ) -> Result<Option<Found<C::Item>>, Error> {
        self.local().held.insert(entry.clone());
        match self.codec.decode(&bytes) {
            Ok(item) => Ok(Some(Found::Item {
                entry,
                id,
                attempt,
                item,
            })),
            Err(error) => {
                let reason = format!("undecodable: {error}");
                let result = self.resolve(&entry, attempt, How::Abandoned, &reason).await;
                self.local().held.remove(&entry);
                result.map(|_| None)
            }
        }
    }

    /// One non-blocking get step (reclaim, then read). Call with `getting` held.
    pub(crate) async fn get_step(&self) -> Result<Found<C::Item>, Error> {
        loop {
            if self.local().orphans {
                if let Some(found) = self.recover_orphan().await? {
                    return Ok(found);
                }
            }
            let value = self
                .conn
                .script(
                    &self.scripts.get,
                    &self.keys.fixed,
                    None,
                    &args![self.consumer, RECLAIM_BUDGET],
                )
                .await?;
            let mut reply = Reply::parse(value)?;
            match reply.status.as_str() {
                "item" => {
                    let entry = reply.text()?;
                    let id = JobId::from_raw(reply.int()?);
                    let attempt = reply.int()?;
                    let bytes = reply.bytes()?;
                    if let Some(found) = self.take(entry, id, attempt, bytes).await? {
                        return Ok(found);
                    }
                }
                "empty" => return Ok(Found::Empty),
                "shutdown" => return Ok(Found::ShutDown),
                _ => return Err(reply.unexpected()),
            }
        }
    }

    /// Blocks on the stream for up to one poll interval for a new entry. Call with
    /// `getting` held.
    pub(crate) async fn get_blocking_step(&self) -> Result<Found<C::Item>, Error> {
        let mut cmd = redis::cmd("XREADGROUP");
        cmd.arg("GROUP")
            .arg("g")
            .arg(&self.consumer)
            .arg("COUNT")
            .arg(1)
            .arg("BLOCK")
            .arg(self.options.poll.as_millis() as u64)
            .arg("STREAMS")
            .arg(self.keys.stream())
            .arg(">");
        let value = self.conn.blocking(&cmd).await?;
        for (entry, fields) in reply::read_reply(value)? {
            let (id, bytes) = job_fields(fields)?;
            if let Some(found) = self.take(entry, id, 1, bytes).await? {
                return Ok(found);
            }
        }
        Ok(Found::Empty)
    }

    /// Delivers an entry of this consumer's pending list that no `Delivery` holds (left by
    /// a cancelled get). Call with `getting` held: then no get is between the server and
    /// `held`, so such an entry is an orphan for sure.
    async fn recover_orphan(&self) -> Result<Option<Found<C::Item>>, Error> {
        let mut cmd = redis::cmd("XPENDING");
        cmd.arg(self.keys.stream())
            .arg("g")
            .arg("-")
            .arg("+")
            .arg(1000)
            .arg(&self.consumer);
        let Value::Array(rows) = self.conn.command(&cmd).await? else {
            return Err(Error::Protocol("XPENDING: expected an array".into()));
        };
        for row in rows {
            let Value::Array(cells) = row else { continue };
            let mut cells = cells.into_iter();
            let entry = reply::text(cells.next().unwrap_or_default())?;
            let attempt = match cells.nth(2) {
                Some(Value::Int(n)) if n > 0 => n as u64,
                _ => continue,
            };
            if self.local().held.contains(&entry) {
                continue;
            }
            let mut range = redis::cmd("XRANGE");
            range.arg(self.keys.stream()).arg(&entry).arg(&entry);
            let Value::Array(entries) = self.conn.command(&range).await? else {
                continue;
            };
            let Some(found) = entries.into_iter().next() else {
                continue;
            };
            let (_, fields) = reply::entry(found)?;
            let (id, bytes) = job_fields(fields)?;
            if let Some(found) = self.take(entry, id, attempt, bytes).await? {
                return Ok(Some(found));
            }
        }
        self.local().orphans = false;
        Ok(None)
    }

    /// RESOLVE: fenced by (consumer, attempt); a repeat of a counted resolve is recognized.
    pub(crate) async fn resolve(
        &self,
        entry: &str,
        attempt: u64,
        how: How,
        reason: &str,
    ) -> Result<Resolved, Error> {
        let window = self.options.repeat_window.as_millis() as u64;
        let done_key = self.keys.resolved(entry);
        let value = self
            .conn
            .script(
                &self.scripts.resolve,
                &self.keys.fixed,
                Some(&done_key),
                &args![self.consumer, entry, attempt, how.word(), window, reason],
            )
            .await?;
        let mut reply = Reply::parse(value)?;
        let resolved = match reply.status.as_str() {
            "ok" => Resolved::Counted,
            "done" => Resolved::Repeat(reply.text()?),
            "stale" => Resolved::Stale,
            _ => return Err(reply.unexpected()),
        };
        self.local().held.remove(entry);
        Ok(resolved)
    }

    /// RETRY: fenced as a resolve; puts the job back under its id as a new entry.
    pub(crate) async fn retry(&self, entry: &str, attempt: u64) -> Result<Retried, Error> {
        let window = self.options.repeat_window.as_millis() as u64;
        let done_key = self.keys.resolved(entry);
        let value = self
            .conn
            .script(
                &self.scripts.retry,
                &self.keys.fixed,
                Some(&done_key),
                &args![self.consumer, entry, attempt, window],
            )
            .await?;
        let mut reply = Reply::parse(value)?;
        let status = core::mem::take(&mut reply.status);
        let retried = match status.as_str() {
            "ok" => Retried::Done,
            "done" if reply.text()? == "retried" => Retried::Done,
            "done" | "stale" => Retried::Stale,
            "shutdown" => return Ok(Retried::ShutDown),
            "full" => return Ok(Retried::Full),
            _ => {
                reply.status = status;
                return Err(reply.unexpected());
            }
        };
        self.local().held.remove(entry);
        Ok(retried)
    }

    /// HOLD: `keep` resets the lease, `release` makes the entry reclaimable now. `false`
    /// if the fence refused (stale).
    pub(crate) async fn hold(&self, entry: &str, attempt: u64, keep: bool) -> Result<bool, Error> {
        let what = if keep { "keep" } else { "release" };
        let value = self
            .conn
            .script(
                &self.scripts.hold,
                &self.keys.fixed,
                None,
                &args![self.consumer, entry, attempt, what],
            )
            .await?;
        let reply = Reply::parse(value)?;
        match reply.status.as_str() {
            "ok" => Ok(true),
            "stale" => Ok(false),
            _ => Err(reply.unexpected()),
        }
    }

    /// LEDGER: one atomic snapshot, and the last wake-up id for a following block.
    pub(crate) async fn status(&self) -> Result<(Status, String), Error> {
        let value = self
            .conn
            .script(&self.scripts.ledger, &self.keys.fixed, None, &[])
            .await?;
        let mut reply = Reply::parse(value)?;
        if reply.status != "ok" || reply.left() < 14 {
            return Err(reply.unexpected());
        }
        let state = match reply.text()?.as_str() {
            "open" => State::Open,
            "draining" => State::Draining,
            "closed" => State::Closed,
            other => return Err(Error::Protocol(format!("unknown state {other:?}"))),
        };
        let last = reply.text()?;
        let length = reply.int()?;
        let pending = reply.int()?;
        let workers = reply.int()?;
        let mut next = || reply.int();
        let ledger = {
            let mut ledger = Ledger::default();
            ledger.accepted = next()?;
            ledger.buffered = length.saturating_sub(pending);
            ledger.in_flight = pending;
            ledger.succeeded = next()?;
            ledger.rejected = next()?;
            ledger.uncertain = next()?;
            ledger.abandoned = next()?;
            ledger.discarded = next()?;
            ledger
        };
        let status = Status {
            state,
            ledger,
            redelivered: next()?,
            stale: next()?,
            dead_lettered: next()?,
            workers,
        };
        Ok((status, last))
    }

    /// Blocks on the wake-up stream after `last` for up to one poll interval.
    pub(crate) async fn wait_for_wake(&self, last: &str) -> Result<(), Error> {
        let mut cmd = redis::cmd("XREAD");
        cmd.arg("COUNT")
            .arg(1)
            .arg("BLOCK")
            .arg(self.options.poll.as_millis() as u64)
            .arg("STREAMS")
            .arg(self.keys.ends())
            .arg(last);
        self.conn.blocking(&cmd).await.map(drop)
    }

    /// SHUTDOWN graceful. Whether this call moved the queue from open to draining.
    pub(crate) async fn shutdown(&self) -> Result<bool, Error> {
        let value = self
            .conn
            .script(
                &self.scripts.shutdown,
                &self.keys.fixed,
                None,
                &args!["graceful", 0u64, ""],
            )
            .await?;
        let reply = Reply::parse(value)?;
        match reply.status.as_str() {
            "ok" => Ok(true),
            "already" => Ok(false),
            _ => Err(reply.unexpected()),
        }
    }

    /// One SHUTDOWN now step: confirms what the last step returned, moves a chunk of
    /// undelivered entries out, and returns them.
    pub(crate) async fn drain_step(&self) -> Result<Vec<(JobId, Drained<C::Item>)>, Error> {
        let confirm = self.local().drain_confirm.clone().unwrap_or_default();
        let mine = self.keys.drained(&self.consumer);
        let value = self
            .conn
            .script(
                &self.scripts.shutdown,
                &self.keys.fixed,
                Some(&mine),
                &args!["now", DRAIN_CHUNK, confirm],
            )
            .await?;
        let mut reply = Reply::parse(value)?;
        if reply.status != "ok" {
            return Err(reply.unexpected());
        }
        self.local().drain_confirm = None;
        let mut out = Vec::with_capacity(reply.left() / 3);
        let mut last = None;
        while reply.left() >= 3 {
            let entry = reply.text()?;
            let id = JobId::from_raw(reply.int()?);
            let bytes = reply.bytes()?;
            let item = match self.codec.decode(&bytes) {
                Ok(item) => Drained::Item(item),
                Err(error) => Drained::Undecodable { bytes, error },
            };
            out.push((id, item));
            last = Some(entry);
        }
        if last.is_some() {
            self.local().drain_confirm = last;
        }
        Ok(out)
    }

    /// SWEEP: ends expired deliveries that will not be delivered again. How many it ended.
    pub(crate) async fn sweep(&self) -> Result<u64, Error> {
        let value = self
            .conn
            .script(
                &self.scripts.sweep,
                &self.keys.fixed,
                None,
                &args![self.consumer, SWEEP_CHUNK, 2 * self.lease_ms()],
            )
            .await?;
        let mut reply = Reply::parse(value)?;
        if reply.status != "ok" {
            return Err(reply.unexpected());
        }
        reply.int()
    }

    /// A fresh worker member name.
    pub(crate) fn worker_member(&self) -> String {
        // Relaxed: only uniqueness matters.
        let n = self.next_worker.fetch_add(1, Ordering::Relaxed);
        format!("{}/{n}", self.consumer)
    }

    /// WORKER add (with a heartbeat lifetime of one lease) or remove.
    pub(crate) async fn workers(&self, add: bool, members: &[String]) -> Result<(), Error> {
        if members.is_empty() {
            return Ok(());
        }
        let what = if add { "add" } else { "remove" };
        let lease = self.lease_ms();
        let mut args = args![what, lease];
        args.extend(members.iter().map(|member| member.as_bytes().to_vec()));
        let value = self
            .conn
            .script(&self.scripts.worker, &self.keys.fixed, None, &args)
            .await?;
        let reply = Reply::parse(value)?;
        if reply.status != "ok" {
            return Err(reply.unexpected());
        }
        Ok(())
    }

    /// Records from one list, after `after` (exclusive), at most `count`.
    pub(crate) async fn records(
        &self,
        which: Records,
        after: Option<&str>,
        count: usize,
    ) -> Result<Vec<Record>, Error> {
        let key = match which {
            Records::Uncertain => self.keys.uncertain(),
            Records::Dead => self.keys.dead(),
        };
        let start = match after {
            Some(after) => format!("({after}"),
            None => "-".to_string(),
        };
        let mut cmd = redis::cmd("XRANGE");
        cmd.arg(key).arg(start).arg("+").arg("COUNT").arg(count);
        let Value::Array(entries) = self.conn.command(&cmd).await? else {
            return Err(Error::Protocol("XRANGE: expected an array".into()));
        };
        let mut out = Vec::with_capacity(entries.len());
        for entry in entries {
            let (key, fields) = reply::entry(entry)?;
            let mut record = Record {
                key,
                job: JobId::from_raw(0),
                attempt: 0,
                consumer: String::new(),
                reason: String::new(),
                at_ms: 0,
                bytes: Vec::new(),
            };
            for (name, value) in fields {
                let text = || String::from_utf8_lossy(&value).into_owned();
                match name.as_str() {
                    "j" => record.job = JobId::from_raw(text().parse().unwrap_or(0)),
                    "a" => record.attempt = text().parse().unwrap_or(0),
                    "c" => record.consumer = text(),
                    "why" => record.reason = text(),
                    "t" => record.at_ms = text().parse().unwrap_or(0),
                    "p" => record.bytes = value,
                    _ => {}
                }
            }
            out.push(record);
        }
        Ok(out)
    }

    /// Removes one record; whether it was there.
    pub(crate) async fn remove_record(&self, which: Records, key: &str) -> Result<bool, Error> {
        let list = match which {
            Records::Uncertain => self.keys.uncertain(),
            Records::Dead => self.keys.dead(),
        };
        let mut cmd = redis::cmd("XDEL");
        cmd.arg(list).arg(key);
        match self.conn.command(&cmd).await? {
            Value::Int(n) => Ok(n > 0),
            other => Err(Error::Protocol(format!("XDEL: {other:?}"))),
        }
    }
}

/// The job id and payload of an entry's fields.
fn job_fields(fields: Vec<(String, Vec<u8>)>) -> Result<(JobId, Vec<u8>), Error> {
    let mut id = None;
    let mut bytes = None;
    for (name, value) in fields {
        match name.as_str() {
            "j" => {
                id = core::str::from_utf8(&value)
                    .ok()
                    .and_then(|text| text.parse().ok())
            }
            "p" => bytes = Some(value),
            _ => {}
        }
    }
    match (id, bytes) {
        (Some(id), Some(bytes)) => Ok((JobId::from_raw(id), bytes)),
        _ => Err(Error::Protocol(
            "a stream entry without a job id or payload".into(),
        )),
    }
}
