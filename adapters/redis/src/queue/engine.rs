//! The machinery behind [`Queue`](crate::Queue): one handle's connections, identity and
//! local bookkeeping, and the calls that run each script.
//!
//! # Gets that land late
//!
//! Most gets are a plain `XREADGROUP` (sent in the same round trip as the script of the
//! resolves that go with it): the server hands entries out natively. Every get carries a
//! token, a number of this handle's own. When its reply is lost (or its future dropped
//! after it was sent), the token is kept, and for one repeat window from then every get
//! of the handle first lists its own pending entries: one that no delivery of the handle
//! holds was handed out by a lost get, and is delivered now (same attempt). So a get that
//! lands late, even after later gets, is delivered by the handle's next get within the
//! window; a get that lands later than that is reclaimed when its lease expires. The
//! tokens of lost gets that ran as the STEP script are voided on the server first, so
//! such a get that lands later hands nothing out. Every get of a handle runs under
//! `getting`, so no get is between the server and `held` while this runs.
//!
//! # Resolve records
//!
//! A call that resolves leaves a record on the server (a key of its own, named by the
//! call's token: each entry it counted, with the attempt and the outcome), so that a
//! repeat after a lost reply is recognized and not counted twice. Only this handle can
//! repeat a resolve, and only after a lost reply: a delivery whose resolve reply was lost
//! keeps that call's token, and its repeat looks the record up. Each later call carries
//! the tokens of the calls whose replies came back, and the script deletes their records.
//! What stays on the server per finished job is nothing; per handle, the record of its
//! last call (and, after a lost reply, that call's for the repeat window).
//!
//! # The fence epoch
//!
//! A resolve counts only if this consumer still holds the entry at its attempt. The queue
//! keeps a counter (the fence epoch) that moves before any expired lease is taken, and
//! each delivery remembers the epoch it was handed out under (for a plain get, the one
//! this handle last saw, which the server read before the get ran). Resolves whose
//! deliveries were all handed out under the epoch that still stands are fenced by it: the
//! script does not read their rows of the pending list one by one. Any other resolve (an
//! older epoch, an unknown one, a repeat after a lost reply) reads the rows.

use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use futures_lite::future;
use redis::Value;
use tally_queue::{JobEvent, JobId, Ledger};

use crate::codec::Codec;
use crate::queue::drained::Drained;
use crate::queue::entry_id::EntryKey;
use crate::queue::error::PutError;
use crate::queue::in_flight::InFlight;
use crate::queue::journal::Journaled;
use crate::queue::keys::Keys;
use crate::queue::options::Options;
use crate::queue::record::{Record, Records};
use crate::queue::status::{State, Status};
use crate::server::conn::{args, Conn, Hello};
use crate::server::error::Error;
use crate::server::reply::{self, Reply};
use crate::server::scripts::QueueScripts;
use crate::server::waits::Waits;

/// Bytes one `shutdown_now` step hands back, at most (one item of any size at least).
const DRAIN_BYTES: u64 = 1 << 20;
/// Items one `shutdown_now` step hands back, at most.
const DRAIN_COUNT: u64 = 1000;
/// Expired deliveries ended per sweep.
const SWEEP_CHUNK: u64 = 64;
/// Resolves sent in one script, at most (a longer batch is split).
pub(crate) const RESOLVE_CHUNK: usize = 1000;

/// A delivery dropped unresolved, waiting for the maintenance future.
#[derive(Debug)]
pub(crate) struct Dropped {
    pub(crate) entry: String,
    pub(crate) key: EntryKey,
    pub(crate) id: JobId,
    pub(crate) attempt: u64,
    /// The tokens of calls with its resolve whose replies were lost.
    pub(crate) lost: Vec<u64>,
}

/// What this handle knows that the server does not.
#[derive(Debug, Default)]
pub(crate) struct Local {
    /// Entries held by live `Delivery` values of this handle (or dropped and not yet
    /// released): never handed out twice by the recovery of lost gets. Each with the
    /// fence epoch it was handed out under, if known (see `epoch`).
    pub(crate) held: BTreeMap<EntryKey, Option<u64>>,
    /// The queue's fence epoch as this handle last saw it, read by a script that ran on the
    /// server before any get sent from now on: entries such a get hands out are under it
    /// or a later one. While the epoch stands, none of them changed holder or delivery
    /// count, so their resolves skip the pending list's rows (see `step.lua`).
    epoch: Option<u64>,
    pub(crate) dropped: Vec<Dropped>,
    pub(crate) workers: Vec<String>,
    pub(crate) retired: Vec<String>,
    /// Tokens of gets whose replies were lost (see the module docs).
    lost: Vec<u64>,
    /// Until when each get first looks for entries handed out by lost gets: one repeat
    /// window after the last lost get.
    recover_until: Option<Instant>,
    /// Tokens of calls whose replies came back: their records can go.
    forget: Vec<u64>,
    /// When this handle looks for expired leases next (a quarter of a lease apart).
    next_look: Option<Instant>,
    /// The entries the last `shutdown_now` step returned, not yet confirmed.
    drain_confirm: Vec<String>,
    /// The highest id this handle saw accepted: a put sent later and given one not above
    /// it means the server went back.
    max_id: Option<u64>,
}

/// An entry handed to this consumer.
#[derive(Debug)]
pub(crate) struct Found<T> {
    pub(crate) entry: String,
    pub(crate) key: EntryKey,
    pub(crate) id: JobId,
    /// The entry's delivery count: the fence its resolves carry.
    pub(crate) attempt: u64,
    /// The job's deliveries before this entry (a retry appends a new entry): its attempt
    /// is `earlier + attempt`.
    pub(crate) earlier: u64,
    pub(crate) item: T,
}

/// An entry as a get hands it out: entry id, job id (`None` for an entry something else
/// wrote), delivery count, payload, and the job's deliveries before this entry.
pub(crate) type RawEntry = (String, Option<JobId>, u64, Vec<u8>, u64);

/// A step script's reply: the answers to its resolves, the entries it handed out, what
/// comes next, and the fence epoch the entries were handed out under (if the queue has
/// one).
type StepReply = (Vec<Resolved>, Vec<RawEntry>, Then, Option<u64>);

/// What a get step found besides items.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Then {
    /// Items (or resolves only).
    Items,
    /// Nothing to hand out: wait for the stream past this id.
    Empty(String),
    /// Shut down, and nothing left to deliver.
    ShutDown,
}

/// A script's ending word for a delivery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum How {
    Succeeded,
    Rejected,
    Uncertain,
    Abandoned,
    /// An entry something else wrote to the stream (not counted in the ledger).
    Foreign,
}

impl How {
    pub(crate) fn word(self) -> &'static str {
        match self {
            How::Succeeded => "succeeded",
            How::Rejected => "rejected",
            How::Uncertain => "uncertain",
            How::Abandoned => "abandoned",
            How::Foreign => "foreign",
        }
    }

    /// The letter the step script knows it by.
    fn letter(self) -> &'static str {
        match self {
            How::Succeeded => "s",
            How::Rejected => "r",
            How::Uncertain => "u",
            How::Abandoned => "a",
            How::Foreign => "f",
        }
    }

    /// The word whose capital initial is `letter` (a repeat's answer).
    fn of_initial(letter: char) -> Option<&'static str> {
        Some(match letter {
            'S' => "succeeded",
            'R' => "rejected",
            'U' => "uncertain",
            'A' => "abandoned",
            'F' => "foreign",
            _ => return None,
        })
    }

    pub(crate) fn of(outcome: tally_queue::Outcome) -> How {
        match outcome {
            tally_queue::Outcome::Succeeded => How::Succeeded,
            tally_queue::Outcome::Rejected => How::Rejected,
            tally_queue::Outcome::Uncertain => How::Uncertain,
        }
    }
}

/// One resolve to send.
#[derive(Debug)]
pub(crate) struct Resolve<'a> {
    pub(crate) entry: &'a str,
    /// `entry` as a key of `held`.
    pub(crate) key: &'a EntryKey,
    pub(crate) attempt: u64,
    pub(crate) how: How,
    /// The reason kept in a record (uncertain and abandoned endings; empty: the outcome).
    pub(crate) reason: &'a str,
    /// The tokens of earlier calls with this resolve whose replies were lost.
    pub(crate) lost: &'a [u64],
}

/// The answer to one resolve.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// Refused: the policy allows the job no further attempt; nothing changed.
    Spent,
}

#[derive(Debug)]
pub(crate) struct Engine<C: Codec> {
    pub(crate) codec: C,
    pub(crate) name: String,
    pub(crate) keys: Keys,
    pub(crate) options: Options,
    pub(crate) consumer: String,
    /// The consumer that holds what this handle's `shutdown_now` takes out.
    drainer: String,
    pub(crate) conn: Conn,
    waits: Waits,
    scripts: QueueScripts,
    local: Mutex<Local>,
    /// Serializes this handle's gets (see the module docs).
    pub(crate) getting: async_lock::Mutex<()>,
    /// Wakes the maintenance future when a delivery or worker is dropped.
    pub(crate) wake: event_listener::Event,
    /// The journal of this handle and its clones, if one was installed.
    pub(crate) journal: Journaled,
    next_worker: AtomicU64,
    next_token: AtomicU64,
    /// The origin of this handle's monotonic clock, as the server's scripts see it.
    origin: Instant,
    /// The keys of this queue's histograms.
    #[cfg(feature = "metrics")]
    pub(crate) metrics: crate::queue::metrics::Keys,
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

/// Keeps a get's token as lost unless the call's outcome is known: a reply came back, or
/// the call failed before anything was sent.
struct LostGuard<'a, C: Codec> {
    engine: &'a Engine<C>,
    token: Option<u64>,
}

impl<C: Codec> LostGuard<'_, C> {
    fn settle<T>(mut self, result: &Result<T, Error>) {
        if !matches!(result, Err(error) if error.is_unknown()) {
            self.token = None;
        }
    }
}

impl<C: Codec> Drop for LostGuard<'_, C> {
    fn drop(&mut self) {
        if let Some(token) = self.token {
            let mut local = self.engine.local();
            local.lost.push(token);
            local.recover_until = Some(Instant::now() + self.engine.options.repeat_window);
        }
    }
}

impl<C: Codec> Engine<C> {
    pub(crate) fn new(client: redis::Client, name: &str, codec: C, options: Options) -> Self {
        let consumer = consumer_name();
        let keys = Keys::new(name, &consumer);
        let hello = Hello {
            key: keys.meta().to_string(),
            best_effort: options.best_effort,
        };
        Engine {
            codec,
            name: name.to_string(),
            drainer: format!("{consumer}/drain"),
            conn: Conn::new(client, options.response_timeout, options.poll, hello),
            waits: Waits::new(),
            keys,
            consumer,
            options,
            scripts: QueueScripts::new(),
            local: Mutex::new(Local::default()),
            getting: async_lock::Mutex::new(()),
            wake: event_listener::Event::new(),
            journal: Journaled::default(),
            next_worker: AtomicU64::new(0),
            next_token: AtomicU64::new(0),
            origin: Instant::now(),
            #[cfg(feature = "metrics")]
            metrics: crate::queue::metrics::Keys::new(name),
        }
    }

    pub(crate) fn local(&self) -> MutexGuard<'_, Local> {
        // A panic while holding this lock cannot leave the plain data half-updated.
        self.local.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records that this handle saw the id `top`: an id the server hands out later must be
    /// above it.
    fn saw_id(&self, top: u64) {
        let mut local = self.local();
        local.max_id = Some(local.max_id.map_or(top, |max| max.max(top)));
    }

    pub(crate) fn lease_ms(&self) -> u64 {
        self.options.lease.as_millis() as u64
    }

    /// This handle's monotonic clock, in ms.
    fn mono_ms(&self) -> u64 {
        self.origin.elapsed().as_millis() as u64
    }

    /// Runs a queue script: KEYS the stream, meta and ledger, then `extra`; ARGV the
    /// hash tag, then `args`.
    async fn run<A: AsRef<[u8]>>(
        &self,
        script: &redis::Script,
        extra: &[&str],
        args: Vec<A>,
    ) -> Result<Reply, Error> {
        let mut keys: Vec<&str> = self.keys.first.iter().map(String::as_str).collect();
        keys.extend_from_slice(extra);
        let tag = core::iter::once(self.keys.tag.as_bytes());
        let all = tag.chain(args.iter().map(AsRef::as_ref));
        let value = self.conn.script(script, &keys, all).await?;
        Reply::parse(value)
    }

    /// OPEN: creates the queue, or checks the stored settings (`backoff`: the stored form
    /// of the redelivery backoff).
    pub(crate) async fn open(
        &self,
        stored: [i64; 4],
        backoff: &str,
    ) -> Result<(), crate::OpenError> {
        self.conn.connect().await?;
        let args = args![
            stored[0],
            stored[1],
            stored[2],
            stored[3],
            self.conn.run_id(),
            self.consumer,
            self.mono_ms(),
            backoff
        ];
        let mut reply = self.run(&self.scripts.open, &[], args).await?;
        match reply.status.as_str() {
            "created" | "ok" => Ok(()),
            "mismatch" => {
                let field = reply.text()?;
                let mut stored_value = reply.text()?;
                let none = |form: &str| {
                    if form.is_empty() {
                        "none".to_string()
                    } else {
                        form.to_string()
                    }
                };
                if field == "backoff" {
                    stored_value = none(&stored_value);
                }
                let given = match field.as_str() {
                    "cap" => stored[0].to_string(),
                    "lease_ms" => stored[1].to_string(),
                    "max_att" => stored[2].to_string(),
                    "repeat_ms" => stored[3].to_string(),
                    "backoff" => none(backoff),
                    _ => "2".to_string(),
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

    /// PUT a batch once: every item accepted (ids in order), or all refused with the
    /// items back. `keys`, if given, holds one idempotency key per item.
    pub(crate) async fn put_batch(
        &self,
        items: Vec<C::Item>,
        keys: Option<&[String]>,
    ) -> Result<Vec<JobId>, PutError<Vec<C::Item>>> {
        let mut args = Vec::with_capacity(items.len() + 1);
        args.push(if keys.is_some() {
            b"1".to_vec()
        } else {
            b"0".to_vec()
        });
        let items = self.encode_into(items, &mut args)?;
        let extra: Vec<String> = keys
            .unwrap_or_default()
            .iter()
            .map(|key| self.keys.idempotency(key))
            .collect();
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        // The highest id seen before this put was sent: the server runs it later, so every
        // id it accepts now must be above (replies of puts in flight together may be read
        // in any order, so only what was seen before the send counts).
        let seen = self.local().max_id;
        let mut reply = match self.run(&self.scripts.put, &extra, args).await {
            Ok(reply) => reply,
            Err(error) => return Err(PutError::from_redis(items, error)),
        };
        let items = accepted(&reply, items)?;
        let mut ids = Vec::with_capacity(items.len());
        let mut fresh = Vec::new();
        for _ in 0..items.len() {
            let parsed = reply.int().and_then(|id| Ok((id, reply.int()? == 1)));
            match parsed {
                Ok((id, repeat)) => {
                    ids.push(JobId::from_raw(id));
                    if !repeat {
                        fresh.push(id);
                    }
                }
                Err(error) => return Err(PutError::Unknown { item: items, error }),
            }
        }
        // Ids only go up: one not above an id this handle saw before the send means the
        // server went back.
        let rewound = fresh.iter().any(|id| seen.is_some_and(|max| *id <= max));
        if let Some(&top) = fresh.iter().max() {
            self.saw_id(top);
        }
        if rewound {
            self.conn.mark_rewound().await.ok();
            return Err(PutError::Failed {
                item: items,
                error: Error::Gone,
            });
        }
        for id in fresh {
            self.journal
                .note(|| JobEvent::Accepted(JobId::from_raw(id)));
        }
        Ok(ids)
    }

    /// Appends each item's encoding to `args`; refuses the batch whole, items back, if
    /// one does not encode or is too large.
    fn encode_into(
        &self,
        items: Vec<C::Item>,
        args: &mut Vec<Vec<u8>>,
    ) -> Result<Vec<C::Item>, PutError<Vec<C::Item>>> {
        for item in &items {
            let bytes = match self.codec.encode(item) {
                Ok(bytes) => bytes,
                Err(error) => return Err(PutError::Encode { item: items, error }),
            };
            if bytes.len() > self.options.max_item_bytes {
                let size = bytes.len();
                let limit = self.options.max_item_bytes;
                return Err(PutError::TooLarge {
                    item: items,
                    size,
                    limit,
                });
            }
            args.push(bytes);
        }
        Ok(items)
    }

    /// LATER: accepts a batch of delayed items (ids in order), due `ms` from the server's
    /// clock now (`at` false) or at `ms` since the Unix epoch by it (`at` true). `keys`,
    /// if given, holds one idempotency key per item. Returns the ids and the due time (ms
    /// since the epoch, the server's clock).
    pub(crate) async fn put_later(
        &self,
        items: Vec<C::Item>,
        at: bool,
        ms: u64,
        keys: Option<&[String]>,
    ) -> Result<(Vec<JobId>, u64), PutError<Vec<C::Item>>> {
        let mut args = args![if at { "at" } else { "in" }, ms];
        let items = self.encode_into(items, &mut args)?;
        let extra: Vec<String> = keys
            .unwrap_or_default()
            .iter()
            .map(|key| self.keys.idempotency(key))
            .collect();
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let seen = self.local().max_id;
        let mut reply = match self.run(&self.scripts.later, &extra, args).await {
            Ok(reply) => reply,
            Err(error) => return Err(PutError::from_redis(items, error)),
        };
        let items = accepted(&reply, items)?;
        let parsed = reply.int().and_then(|first| Ok((first, reply.int()?)));
        let (first, due) = match parsed {
            Ok(parsed) => parsed,
            Err(error) => return Err(PutError::Unknown { item: items, error }),
        };
        // Each item's id, and the ids accepted now (not repeats of a key).
        let (ids, fresh) = if keys.is_some() {
            let mut ids = Vec::with_capacity(items.len());
            let mut fresh = Vec::new();
            for _ in 0..items.len() {
                match reply.int().and_then(|id| Ok((id, reply.int()? == 1))) {
                    Ok((id, repeat)) => {
                        ids.push(id);
                        if !repeat {
                            fresh.push(id);
                        }
                    }
                    Err(error) => return Err(PutError::Unknown { item: items, error }),
                }
            }
            (ids, fresh)
        } else {
            let ids: Vec<u64> = (first..first + items.len() as u64).collect();
            (ids.clone(), ids)
        };
        // Ids only go up (see `put_batch`).
        if fresh.iter().any(|id| seen.is_some_and(|max| *id <= max)) {
            self.conn.mark_rewound().await.ok();
            return Err(PutError::Failed {
                item: items,
                error: Error::Gone,
            });
        }
        if let Some(&top) = fresh.iter().max() {
            self.saw_id(top);
        }
        for id in &fresh {
            self.journal
                .note(|| JobEvent::Accepted(JobId::from_raw(*id)));
        }
        Ok((ids.into_iter().map(JobId::from_raw).collect(), due))
    }

    /// One step: resolves `resolves`, then hands out up to `max` entries (0: none). Call
    /// with `getting` held when `max` is not 0. Entries the codec cannot decode are ended
    /// as abandoned (dead letters with their bytes), and entries something else wrote are
    /// dead-lettered as foreign; neither is returned. On an error, the token of the call
    /// comes back: a delivery whose resolve was in a call with an unknown outcome keeps
    /// it, for its repeat.
    pub(crate) async fn step(
        &self,
        resolves: &[Resolve<'_>],
        max: usize,
    ) -> Result<(Vec<Resolved>, Vec<Found<C::Item>>, Then), (Error, u64)> {
        let mut found = Vec::new();
        if max > 0 && self.recovering() {
            found = self.recover().await.map_err(|error| (error, u64::MAX))?;
        }
        let want = max.saturating_sub(found.len());
        if want == 0 && resolves.is_empty() {
            return Ok((Vec::new(), found, Then::Items));
        }
        let (resolved, mut more, then) = self.step_once(resolves, want).await?;
        found.append(&mut more);
        let then = if found.is_empty() { then } else { Then::Items };
        Ok((resolved, found, then))
    }

    async fn step_once(
        &self,
        resolves: &[Resolve<'_>],
        max: usize,
    ) -> Result<(Vec<Resolved>, Vec<Found<C::Item>>, Then), (Error, u64)> {
        // Relaxed: only uniqueness matters.
        let token = self.next_token.fetch_add(1, Ordering::Relaxed);
        let (forget, look) = {
            let mut local = self.local();
            let now = Instant::now();
            let look = max > 0 && local.next_look.is_none_or(|at| now >= at);
            if look {
                local.next_look = Some(now + self.options.lease / 4);
            }
            (core::mem::take(&mut local.forget), look)
        };
        if max > 0 && !look {
            return self.step_plain(resolves, max, token, forget).await;
        }
        self.step_script(resolves, max, token, forget, look).await
    }

    /// The arguments and extra keys of a STEP script.
    fn step_args<'a>(
        &self,
        resolves: &[Resolve<'a>],
        max: usize,
        token: u64,
        forget: &[u64],
        look: bool,
    ) -> (Vec<Cow<'a, [u8]>>, Vec<String>) {
        let extras: Vec<(usize, &Resolve<'_>)> = resolves
            .iter()
            .enumerate()
            .filter(|(_, resolve)| !resolve.reason.is_empty() || !resolve.lost.is_empty())
            .collect();
        let hows: String = resolves
            .iter()
            .map(|resolve| resolve.how.letter())
            .collect();
        let every = match resolves.first() {
            Some(first) if resolves.iter().all(|r| r.attempt == first.attempt) => {
                first.attempt.to_string()
            }
            _ => String::new(),
        };
        // The range of the fence's read: the lowest and the highest entry, as the server
        // orders them. A call fenced by the epoch sends each entry once.
        let mut ids: Option<Vec<_>> = resolves
            .iter()
            .map(|resolve| match *resolve.key {
                EntryKey::Id(ms, seq) => Some(((ms, seq), resolve.entry)),
                EntryKey::Text(_) => None,
            })
            .collect();
        if let Some(ids) = ids.as_mut() {
            ids.sort_unstable();
        }
        let (low, high, distinct) = match ids.as_deref() {
            Some([only]) => (only.1, only.1, true),
            Some(all @ [first, .., last]) => (
                first.1,
                last.1,
                all.windows(2).all(|pair| pair[0].0 != pair[1].0),
            ),
            _ => ("-", "+", false),
        };
        let epoch = match self.epoch_of(resolves) {
            Some(epoch) if distinct => epoch.to_string(),
            _ => String::new(),
        };
        let mut args: Vec<Cow<'a, [u8]>> = args![
            self.consumer,
            token,
            max,
            self.mono_ms(),
            if look { "1" } else { "0" },
            resolves.len(),
            extras.len(),
            hows,
            every,
            low,
            high,
            epoch
        ]
        .into_iter()
        .map(Cow::Owned)
        .collect();
        let per = if every.is_empty() { 2 } else { 1 };
        args.reserve(per * resolves.len() + 3 * extras.len());
        for resolve in resolves {
            args.push(Cow::Borrowed(resolve.entry.as_bytes()));
            if every.is_empty() {
                args.push(Cow::Owned(resolve.attempt.to_string().into_bytes()));
            }
        }
        for (at, resolve) in extras {
            let lost: Vec<String> = resolve.lost.iter().map(u64::to_string).collect();
            args.extend(
                args![at + 1, resolve.reason, lost.join(",")]
                    .into_iter()
                    .map(Cow::Owned),
            );
        }
        let mut extra = Vec::with_capacity(forget.len() + 2);
        extra.push(self.keys.ends().to_string());
        extra.push(self.keys.record(token));
        extra.extend(forget.iter().map(|t| self.keys.record(*t)));
        (args, extra)
    }

    /// The fence epoch every one of `resolves` was handed out under, if it is one known
    /// epoch.
    fn epoch_of(&self, resolves: &[Resolve<'_>]) -> Option<u64> {
        let local = self.local();
        let mut epochs = resolves
            .iter()
            .map(|resolve| local.held.get(resolve.key).copied().flatten());
        let first = epochs.next()??;
        epochs.all(|epoch| epoch == Some(first)).then_some(first)
    }

    /// A step entirely in the STEP script: it looks for expired leases, or it only
    /// resolves.
    async fn step_script(
        &self,
        resolves: &[Resolve<'_>],
        max: usize,
        token: u64,
        forget: Vec<u64>,
        look: bool,
    ) -> Result<(Vec<Resolved>, Vec<Found<C::Item>>, Then), (Error, u64)> {
        let (args, extra) = self.step_args(resolves, max, token, &forget, look);
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let guard = LostGuard {
            engine: self,
            token: (max > 0).then_some(token),
        };
        let result = self.run(&self.scripts.step, &extra, args).await;
        guard.settle(&result);
        let mut reply = match result {
            Ok(reply) => reply,
            Err(error) => {
                self.local().forget.extend(forget);
                return Err((error, token));
            }
        };
        if !resolves.is_empty() {
            self.local().forget.push(token);
        }
        let parsed = self.parse_step(&mut reply, resolves);
        let (resolved, raw, then, epoch) = parsed.map_err(|error| (error, token))?;
        let found = self
            .take(raw, epoch)
            .await
            .map_err(|(error, _)| (error, token))?;
        Ok((resolved, found, then))
    }

    /// A step whose get is a plain `XREADGROUP`, sent together with the STEP script of
    /// its resolves (if any) in one round trip: the server hands entries out natively,
    /// not through Lua. An empty read asks the script (which says what to wait for, or
    /// that the queue is shut down). A read whose reply is lost is recovered as any lost
    /// get (see the module docs).
    async fn step_plain(
        &self,
        resolves: &[Resolve<'_>],
        max: usize,
        token: u64,
        forget: Vec<u64>,
    ) -> Result<(Vec<Resolved>, Vec<Found<C::Item>>, Then), (Error, u64)> {
        let mut read = redis::cmd("XREADGROUP");
        read.arg("GROUP")
            .arg("g")
            .arg(&self.consumer)
            .arg("COUNT")
            .arg(max)
            .arg("STREAMS")
            .arg(self.keys.stream())
            .arg(">");
        let guard = LostGuard {
            engine: self,
            token: Some(token),
        };
        // Read on the server before this read runs there.
        let epoch = self.local().epoch;
        let (script, got) = if resolves.is_empty() {
            // The records to forget go with the next script.
            self.local().forget.extend(forget.iter().copied());
            (None, self.conn.command(&read).await)
        } else {
            let (args, extra) = self.step_args(resolves, 0, token, &forget, false);
            let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
            let (script, got) = future::zip(
                self.run(&self.scripts.step, &extra, args),
                self.conn.command(&read),
            )
            .await;
            (Some(script), got)
        };
        let raw = got.and_then(read_entries);
        // Entries read but not handed out (the resolves failed, or a reply did not parse)
        // stay this consumer's: the guard keeps the token, and the next get recovers them.
        let mut guard = guard;
        if matches!(&raw, Err(error) if !error.is_unknown() && !matches!(error, Error::Protocol(_)))
            || matches!(&raw, Ok(raw) if raw.is_empty())
        {
            // Refused by the server, or nothing read: nothing is this consumer's.
            guard.token = None;
        }
        let resolved = match script {
            None => Vec::new(),
            Some(Err(error)) => {
                self.local().forget.extend(forget);
                return Err((error, token));
            }
            Some(Ok(mut reply)) => {
                self.local().forget.push(token);
                let (resolved, _, _, _) = self
                    .parse_step(&mut reply, resolves)
                    .map_err(|error| (error, token))?;
                resolved
            }
        };
        let raw = match raw {
            Ok(raw) => raw,
            // The resolves counted: their answers come back, and nothing is handed out.
            Err(error) if error.is_unknown() || matches!(error, Error::Protocol(_)) => {
                return if resolves.is_empty() {
                    Err((error, token))
                } else {
                    Ok((resolved, Vec::new(), Then::Items))
                };
            }
            // Refused (the stream is gone, or not a stream): the script says how.
            Err(_) => Vec::new(),
        };
        guard.token = None;
        if raw.is_empty() {
            // Relaxed: only uniqueness matters.
            let token = self.next_token.fetch_add(1, Ordering::Relaxed);
            let forget = core::mem::take(&mut self.local().forget);
            let (_, found, then) = self.step_script(&[], max, token, forget, false).await?;
            return Ok((resolved, found, then));
        }
        let found = self
            .take(raw, epoch)
            .await
            .map_err(|(error, _)| (error, token))?;
        Ok((resolved, found, Then::Items))
    }

    /// A step's reply: the answers to the resolves (each leaves `held`), the entries
    /// handed out, what comes next, and the fence epoch they were handed out under.
    fn parse_step(&self, reply: &mut Reply, resolves: &[Resolve<'_>]) -> Result<StepReply, Error> {
        let after = reply.text()?;
        let then = match reply.status.as_str() {
            "ok" => Then::Items,
            "empty" => Then::Empty(after),
            "shutdown" => Then::ShutDown,
            // Only a call this handle voided answers so, and nobody reads its answer.
            "void" => Then::Empty("$".into()),
            _ => return Err(reply.unexpected()),
        };
        let codes = reply.text()?;
        if codes.len() != resolves.len() {
            return Err(Error::Protocol(format!("step: {codes:?}")));
        }
        let mut resolved = Vec::with_capacity(resolves.len());
        {
            let mut local = self.local();
            for (resolve, code) in resolves.iter().zip(codes.chars()) {
                let answer = match code {
                    'o' => Resolved::Counted,
                    's' => Resolved::Stale,
                    other => match How::of_initial(other) {
                        Some(word) => Resolved::Repeat(word.to_string()),
                        None => return Err(Error::Protocol(format!("step: {codes:?}"))),
                    },
                };
                local.held.remove(resolve.key);
                resolved.push(answer);
            }
        }
        let Value::Array(handed) = reply.value()? else {
            return Err(Error::Protocol("step: entries".into()));
        };
        let mut raw = Vec::with_capacity(handed.len() / 5);
        let mut handed = handed.into_iter();
        while let (Some(entry), Some(id), Some(attempt), Some(bytes), Some(earlier)) = (
            handed.next(),
            handed.next(),
            handed.next(),
            handed.next(),
            handed.next(),
        ) {
            let id = reply::text(id)?;
            let id = if id.is_empty() {
                None
            } else {
                Some(JobId::from_raw(
                    id.parse()
                        .map_err(|_| Error::Protocol(format!("a job id {id:?}")))?,
                ))
            };
            let attempt = match attempt {
                Value::Int(n) if n > 0 => n as u64,
                other => return Err(Error::Protocol(format!("an attempt {other:?}"))),
            };
            let bytes = match bytes {
                Value::BulkString(bytes) => bytes,
                other => reply::text(other)?.into_bytes(),
            };
            let earlier = match earlier {
                Value::Int(n) if n >= 0 => n as u64,
                other => return Err(Error::Protocol(format!("earlier deliveries {other:?}"))),
            };
            raw.push((reply::text(entry)?, id, attempt, bytes, earlier));
        }
        // '' when the queue has no epoch.
        let epoch = if reply.left() > 0 {
            reply.text()?.parse().ok()
        } else {
            None
        };
        if epoch.is_some() {
            self.local().epoch = epoch;
        }
        Ok((resolved, raw, then, epoch))
    }

    /// Turns entries handed to this consumer into found items, marking them held. An
    /// entry the codec cannot decode is ended as abandoned (a dead letter with its bytes),
    /// and one something else wrote as foreign.
    async fn take(
        &self,
        raw: Vec<RawEntry>,
        epoch: Option<u64>,
    ) -> Result<Vec<Found<C::Item>>, (Error, u64)> {
        let mut found = Vec::with_capacity(raw.len());
        let mut bad = Vec::new();
        {
            let mut local = self.local();
            for (entry, id, attempt, bytes, earlier) in raw {
                // An entry this handle holds already (it took its own expired lease):
                // the earlier delivery was handed out under another epoch, so both are
                // fenced by their rows.
                let key = EntryKey::of(&entry);
                local
                    .held
                    .entry(key.clone())
                    .and_modify(|known| *known = None)
                    .or_insert(epoch);
                let Some(id) = id else {
                    bad.push((entry, key, attempt, How::Foreign, String::new()));
                    continue;
                };
                match self.codec.decode_owned(bytes) {
                    Ok(item) => found.push(Found {
                        entry,
                        key,
                        id,
                        attempt,
                        earlier,
                        item,
                    }),
                    Err(error) => bad.push((
                        entry,
                        key,
                        attempt,
                        How::Abandoned,
                        format!("undecodable: {error}"),
                    )),
                }
            }
        }
        if !bad.is_empty() {
            let resolves: Vec<Resolve<'_>> = bad
                .iter()
                .map(|(entry, key, attempt, how, reason)| Resolve {
                    entry,
                    key,
                    attempt: *attempt,
                    how: *how,
                    reason,
                    lost: &[],
                })
                .collect();
            Box::pin(self.step_once(&resolves, 0)).await?;
        }
        Ok(found)
    }

    /// Whether gets look for entries handed out by lost gets first.
    fn recovering(&self) -> bool {
        let mut local = self.local();
        if !local.lost.is_empty() {
            return true;
        }
        match local.recover_until {
            Some(until) if Instant::now() < until => true,
            Some(_) => {
                local.recover_until = None;
                false
            }
            None => false,
        }
    }

    /// Voids the tokens of lost gets and delivers what they handed out before (see the
    /// module docs). Call with `getting` held.
    async fn recover(&self) -> Result<Vec<Found<C::Item>>, Error> {
        let lost = self.local().lost.clone();
        let mut args = args![self.consumer];
        args.extend(lost.iter().map(|t| t.to_string().into_bytes()));
        let mut reply = self.run(&self.scripts.recover, &[], args).await?;
        if reply.status != "ok" {
            return Err(reply.unexpected());
        }
        self.local().lost.retain(|t| !lost.contains(t));
        let mut orphans = Vec::new();
        while reply.left() >= 2 {
            let entry = reply.text()?;
            let attempt = reply.int()?;
            if !self.local().held.contains_key(&EntryKey::of(&entry)) {
                orphans.push((entry, attempt));
            }
        }
        let mut raw = Vec::with_capacity(orphans.len());
        for (entry, attempt) in orphans {
            let mut range = redis::cmd("XRANGE");
            range.arg(self.keys.stream()).arg(&entry).arg(&entry);
            let Value::Array(entries) = self.conn.command(&range).await? else {
                continue;
            };
            let Some(value) = entries.into_iter().next() else {
                continue;
            };
            let (_, fields) = reply::entry(value)?;
            match job_fields(fields) {
                Some((id, bytes, earlier)) => raw.push((entry, Some(id), attempt, bytes, earlier)),
                None => raw.push((entry, None, attempt, Vec::new(), 0)),
            }
        }
        // Under no known epoch: their resolves read the pending list's rows.
        self.take(raw, None).await.map_err(|(error, _)| error)
    }

    /// Blocks until the stream may have an entry after `after`, for up to one poll
    /// interval (shared with this handle's other waits).
    pub(crate) async fn wait_for_entries(&self, after: &str) -> Result<(), Error> {
        self.waits
            .wait_after(&self.conn, self.keys.stream(), after)
            .await
    }

    /// Blocks on the wake-up stream after `last` for up to one poll interval.
    pub(crate) async fn wait_for_wake(&self, last: &str) -> Result<(), Error> {
        self.waits
            .wait_after(&self.conn, self.keys.ends(), last)
            .await
    }

    /// RETRY: fenced as a resolve; puts the job back under its id as a new entry. On an
    /// error, the call's token comes back, as from [`step`](Engine::step).
    pub(crate) async fn retry(
        &self,
        entry: &str,
        attempt: u64,
        lost: &[u64],
        delay_ms: u64,
    ) -> Result<Retried, (Error, u64)> {
        // Relaxed: only uniqueness matters.
        let token = self.next_token.fetch_add(1, Ordering::Relaxed);
        let forget = core::mem::take(&mut self.local().forget);
        let lost: Vec<String> = lost.iter().map(u64::to_string).collect();
        let args = args![self.consumer, entry, attempt, lost.join(","), delay_ms];
        let record = self.keys.record(token);
        let forgotten: Vec<String> = forget.iter().map(|t| self.keys.record(*t)).collect();
        let mut extra: Vec<&str> = vec![&record];
        extra.extend(forgotten.iter().map(String::as_str));
        let mut reply = match self.run(&self.scripts.retry, &extra, args).await {
            Ok(reply) => reply,
            Err(error) => {
                self.local().forget.extend(forget);
                return Err((error, token));
            }
        };
        let status = core::mem::take(&mut reply.status);
        let retried = match status.as_str() {
            "ok" => Retried::Done,
            "done" if reply.text().map_err(|e| (e, token))? == "retried" => Retried::Done,
            "done" | "stale" => Retried::Stale,
            "shutdown" => return Ok(Retried::ShutDown),
            "full" => return Ok(Retried::Full),
            "spent" => return Ok(Retried::Spent),
            _ => {
                reply.status = status;
                return Err((reply.unexpected(), token));
            }
        };
        let mut local = self.local();
        local.held.remove(&EntryKey::of(entry));
        local.forget.push(token);
        Ok(retried)
    }

    /// HOLD: `keep` resets the lease, `release` makes the entry reclaimable now. `false`
    /// if the fence refused (stale).
    pub(crate) async fn hold(&self, entry: &str, attempt: u64, keep: bool) -> Result<bool, Error> {
        let what = if keep { "keep" } else { "release" };
        let args = args![self.consumer, entry, attempt, what, self.mono_ms()];
        let reply = self.run(&self.scripts.hold, &[], args).await?;
        if !keep {
            // The next get of this handle looks at once.
            self.local().next_look = None;
        }
        match reply.status.as_str() {
            "ok" => Ok(true),
            "stale" => Ok(false),
            _ => Err(reply.unexpected()),
        }
    }

    /// LEDGER: one atomic snapshot, and the last wake-up id for a following block.
    pub(crate) async fn status(&self) -> Result<(Status, String), Error> {
        let mut reply = self
            .run(&self.scripts.ledger, &[], Vec::<Vec<u8>>::new())
            .await?;
        if reply.status != "ok" || reply.left() < 16 {
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
            foreign: next()?,
            clock_steps: next()?,
            workers,
        };
        Ok((status, last))
    }

    /// SHUTDOWN graceful. Whether this call moved the queue from open to draining (or
    /// closed, if nothing was left).
    pub(crate) async fn shutdown(&self) -> Result<bool, Error> {
        let reply = self
            .run(&self.scripts.shutdown, &[], args!["graceful"])
            .await?;
        match reply.status.as_str() {
            "ok" => Ok(true),
            "already" => Ok(false),
            _ => Err(reply.unexpected()),
        }
    }

    /// One SHUTDOWN now step: confirms what the last step returned (counted discarded
    /// now), and returns the next items, bounded by bytes.
    pub(crate) async fn drain_step(&self) -> Result<Vec<(JobId, Drained<C::Item>)>, Error> {
        let confirm = self.local().drain_confirm.clone();
        let mut args = args!["now", self.drainer, DRAIN_BYTES, DRAIN_COUNT];
        args.extend(confirm.iter().map(|entry| entry.as_bytes().to_vec()));
        let mut reply = self.run(&self.scripts.shutdown, &[], args).await?;
        if reply.status != "ok" {
            return Err(reply.unexpected());
        }
        let mut out = Vec::with_capacity(reply.left() / 3);
        let mut taken = Vec::with_capacity(reply.left() / 3);
        while reply.left() >= 3 {
            let entry = reply.text()?;
            let id = JobId::from_raw(reply.int()?);
            let bytes = reply.bytes()?;
            let item = match self.codec.decode(&bytes) {
                Ok(item) => Drained::Item(item),
                Err(error) => Drained::Undecodable { bytes, error },
            };
            out.push((id, item));
            taken.push(entry);
        }
        self.local().drain_confirm = taken;
        Ok(out)
    }

    /// SWEEP: ends expired deliveries that will not be delivered again. How many it ended.
    pub(crate) async fn sweep(&self) -> Result<u64, Error> {
        let args = args![
            self.consumer,
            SWEEP_CHUNK,
            2 * self.lease_ms(),
            self.mono_ms()
        ];
        let mut reply = self.run(&self.scripts.sweep, &[], args).await?;
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
        let mut args = args![what, self.lease_ms()];
        args.extend(members.iter().map(|member| member.as_bytes().to_vec()));
        let reply = self.run(&self.scripts.worker, &[], args).await?;
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
        entries
            .into_iter()
            .map(|entry| Ok(Record::from_fields(reply::entry(entry)?)))
            .collect()
    }

    /// Up to `count` jobs in flight after the entry `after` (`-`: from the first).
    pub(crate) async fn in_flight(
        &self,
        after: &str,
        count: usize,
    ) -> Result<Vec<InFlight>, Error> {
        let args = args![after, count, self.lease_ms()];
        let mut reply = self.run(&self.scripts.inflight, &[], args).await?;
        if reply.status != "ok" {
            return Err(reply.unexpected());
        }
        let mut out = Vec::with_capacity(reply.left() / 6);
        while reply.left() >= 6 {
            let entry = reply.text()?;
            let id = reply.text()?;
            let holder = reply.text()?;
            let age = reply.int()?;
            let attempt = reply.int()?;
            let alive = reply.text()? == "1";
            out.push(InFlight {
                id: id.parse().ok().map(JobId::from_raw),
                attempt,
                holder,
                lease_age: core::time::Duration::from_millis(age),
                holder_alive: alive,
                entry,
            });
        }
        Ok(out)
    }

    /// How many dead letters are kept.
    #[cfg(feature = "metrics")]
    pub(crate) async fn dead_kept(&self) -> Result<u64, Error> {
        let mut cmd = redis::cmd("XLEN");
        cmd.arg(self.keys.dead());
        match self.conn.command(&cmd).await? {
            Value::Int(n) => Ok(n.max(0) as u64),
            other => Err(Error::Protocol(format!("XLEN: {other:?}"))),
        }
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

/// Entries handed to this consumer by a plain `XREADGROUP` (RESP3 or RESP2 shape), as the
/// STEP script hands them out: delivery count 1, no id for an entry something else wrote,
/// the earlier deliveries of a retried job from its field `a`.
fn read_entries(value: Value) -> Result<Vec<RawEntry>, Error> {
    let entries = match value {
        Value::Nil => return Ok(Vec::new()),
        Value::Map(streams) => streams.into_iter().next().map(|(_, entries)| entries),
        Value::Array(streams) => match streams.into_iter().next() {
            Some(Value::Array(pair)) => pair.into_iter().nth(1),
            _ => None,
        },
        other => return Err(Error::Protocol(format!("XREADGROUP: {other:?}"))),
    };
    let Some(Value::Array(entries)) = entries else {
        return Err(Error::Protocol("XREADGROUP: no entries".into()));
    };
    entries.into_iter().map(read_entry).collect()
}

/// One entry of an `XREADGROUP` reply. An entry this crate wrote, as the server sends it
/// (bulk strings), is taken apart in place; anything else goes through
/// [`reply::entry`] and [`job_fields`], which say the same of such an entry.
fn read_entry(mut value: Value) -> Result<RawEntry, Error> {
    if let Value::Array(parts) = &mut value {
        if let [Value::BulkString(entry), Value::Array(fields)] = parts.as_mut_slice() {
            if let Some((id, earlier)) = job_numbers(fields) {
                let entry = String::from_utf8(core::mem::take(entry))
                    .map_err(|_| Error::Protocol("expected utf-8 text".into()))?;
                let bytes = match &mut fields[3] {
                    Value::BulkString(bytes) => core::mem::take(bytes),
                    _ => Vec::new(),
                };
                return Ok((entry, Some(id), 1, bytes, earlier));
            }
        }
    }
    let (entry, fields) = reply::entry(value)?;
    Ok(match job_fields(fields) {
        Some((id, bytes, earlier)) => (entry, Some(id), 1, bytes, earlier),
        None => (entry, None, 1, Vec::new(), 0),
    })
}

/// The job id and earlier deliveries of fields that are all bulk strings, as
/// [`job_fields`] reads them; `None` for any other fields.
fn job_numbers(fields: &[Value]) -> Option<(JobId, u64)> {
    let number = |bytes: &[u8]| core::str::from_utf8(bytes).ok()?.parse::<u64>().ok();
    let (id, earlier) = match fields {
        [Value::BulkString(j), Value::BulkString(id), Value::BulkString(p), Value::BulkString(_)]
            if j == b"j" && p == b"p" =>
        {
            (id, None)
        }
        [Value::BulkString(j), Value::BulkString(id), Value::BulkString(p), Value::BulkString(_), Value::BulkString(a), Value::BulkString(count)]
            if j == b"j" && p == b"p" && a == b"a" =>
        {
            (id, Some(count))
        }
        _ => return None,
    };
    let earlier = match earlier {
        None => 0,
        Some(count) => number(count)?,
    };
    Some((JobId::from_raw(number(id)?), earlier))
}

/// The job id, payload and earlier deliveries of an entry's fields, if it is one this
/// crate wrote: exactly the fields `j` (a number) and `p`, in that order, then `a` (a
/// number: the job's deliveries before this entry) after a retry, as the scripts check.
/// An entry without `a` has none.
fn job_fields(fields: Vec<(String, Vec<u8>)>) -> Option<(JobId, Vec<u8>, u64)> {
    let mut fields = fields.into_iter();
    let (Some((j, id)), Some((p, bytes))) = (fields.next(), fields.next()) else {
        return None;
    };
    if j != "j" || p != "p" {
        return None;
    }
    let earlier = match (fields.next(), fields.next()) {
        (None, _) => 0,
        (Some((a, count)), None) if a == "a" => core::str::from_utf8(&count).ok()?.parse().ok()?,
        _ => return None,
    };
    let id = core::str::from_utf8(&id).ok()?.parse().ok()?;
    Some((JobId::from_raw(id), bytes, earlier))
}

/// The items of a put whose script accepted them, or the refusal its reply's status names.
fn accepted<I>(reply: &Reply, items: I) -> Result<I, PutError<I>> {
    match reply.status.as_str() {
        "ok" => Ok(items),
        "shutdown" => Err(PutError::ShutDown(items)),
        "noworkers" => Err(PutError::NoWorkers(items)),
        "full" => Err(PutError::Full(items)),
        _ => Err(PutError::Failed {
            item: items,
            error: reply.unexpected(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(text: &str) -> Value {
        Value::BulkString(text.as_bytes().to_vec())
    }

    fn entry(fields: Vec<Value>) -> Value {
        Value::Array(vec![bulk("1-2"), Value::Array(fields)])
    }

    /// What `read_entry` says of an entry when it goes through `reply::entry` and
    /// `job_fields` only.
    fn by_fields(value: Value) -> Result<RawEntry, Error> {
        let (entry, fields) = reply::entry(value)?;
        Ok(match job_fields(fields) {
            Some((id, bytes, earlier)) => (entry, Some(id), 1, bytes, earlier),
            None => (entry, None, 1, Vec::new(), 0),
        })
    }

    #[test]
    fn an_entry_read_in_place_is_read_as_by_its_fields() {
        let entries = [
            entry(vec![bulk("j"), bulk("7"), bulk("p"), bulk("job")]),
            entry(vec![
                bulk("j"),
                bulk("7"),
                bulk("p"),
                bulk("job"),
                bulk("a"),
                bulk("3"),
            ]),
            entry(vec![bulk("j"), bulk("x"), bulk("p"), bulk("job")]),
            entry(vec![bulk("p"), bulk("job"), bulk("j"), bulk("7")]),
            entry(vec![bulk("j"), bulk("7"), bulk("p"), Value::Int(5)]),
            entry(vec![
                bulk("j"),
                bulk("7"),
                bulk("p"),
                bulk("job"),
                bulk("a"),
                bulk("-1"),
            ]),
            entry(vec![
                bulk("j"),
                bulk("7"),
                bulk("p"),
                bulk("job"),
                bulk("b"),
                bulk("3"),
            ]),
            entry(vec![bulk("j"), bulk("7"), bulk("p")]),
            entry(vec![bulk("anything")]),
            Value::Array(vec![
                Value::BulkString(vec![0xff]),
                Value::Array(vec![bulk("j"), bulk("7"), bulk("p"), bulk("job")]),
            ]),
        ];
        for value in entries {
            let expected = format!("{:?}", by_fields(value.clone()));
            assert_eq!(
                format!("{:?}", read_entry(value.clone())),
                expected,
                "{value:?}"
            );
        }
        let (entry, id, attempt, bytes, earlier) =
            read_entry(entry(vec![bulk("j"), bulk("7"), bulk("p"), bulk("job")])).unwrap();
        assert_eq!(
            (entry.as_str(), id, attempt, bytes.as_slice(), earlier),
            ("1-2", Some(JobId::from_raw(7)), 1, &b"job"[..], 0)
        );
    }
}
