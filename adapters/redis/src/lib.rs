//! The acknowledgement-counting work queue and the tracking latch across processes, on
//! Redis Streams with consumer groups (Redis ≥ 7.0, or Valkey).
//!
//! The vocabulary is [`tally_queue`]'s: a put returns a [`JobId`](tally_queue::JobId) or
//! hands the item back inside a [`PutError`]; a [`Delivery`] ends exactly once as
//! succeeded, rejected or uncertain ([`Outcome`](tally_queue::Outcome)); `join` returns
//! the [`Ledger`](tally_queue::Ledger); `shutdown_now` returns the undelivered items with
//! their ids. What is new across processes:
//!
//! - **A crash is not a drop.** A process that dies runs no `Drop`. Each delivery is held
//!   on a *lease* (its idle time in the consumer group's pending list); once it expires,
//!   the job is reclaimed by the [`AbandonPolicy`]: delivered again as attempt 2, 3,
//!   … up to `max_attempts` and then dead-lettered, abandoned at once, or (for effects
//!   that must not repeat) ended uncertain at once, kept as an uncertain record.
//! - **Resolves are fenced.** A resolve counts only from the consumer that holds the
//!   current attempt; a late one from a reclaimed attempt returns
//!   [`ResolveError::Stale`] and is not counted. A repeat after a lost reply is
//!   recognized and not counted twice.
//! - **Lost replies are said plainly.** Every transport failure is an [`Error`];
//!   [`Error::Unknown`] means the command may have run. A put whose reply was lost
//!   returns [`PutError::Unknown`] with the item, unless it had an idempotency key
//!   ([`Queue::put_keyed`]).
//! - **Records for reconciliation.** Uncertain outcomes and dead letters are kept on the
//!   server with their items ([`Queue::uncertain`], [`Queue::dead_letters`]) until removed.
//!
//! Every state change is one Lua script, so on one primary the ledger is exact at every
//! instant: `buffered` is the stream's length minus its pending list, `in_flight` the
//! pending list.
//!
//! # Batching
//!
//! Each step has a batch form, one command or script for the batch: [`Queue::put_many`]
//! (ids contiguous, the ledger moved once), [`Queue::get_many`] (up to `n` leases, each
//! its own fenced [`Delivery`]; a plain `XREADGROUP`), [`Queue::resolve_many`], and
//! [`Queue::resolve_and_get`] ("these are done, give me the next" in one round trip).
//!
//! # Delays, who holds what, metrics
//!
//! [`Queue::put_after`], [`Queue::put_at`] (with their batch forms
//! [`Queue::put_many_after`], [`Queue::put_many_at`], and keyed forms
//! [`Queue::put_keyed_after`], [`Queue::put_keyed_at`]) and [`Delivery::retry_after`] hold
//! a job back until its due time on the server's clock, counted buffered;
//! [`Delivery::retry_backoff`] takes the delay from a [`tally_queue::Backoff`] for the
//! attempt that failed (a retry counts toward the attempts, as in process), and
//! [`Options::redelivery_backoff`] gives a job whose lease expired (or that was dropped
//! unresolved) the same kind of wait before it is delivered again.
//! [`Queue::in_flight`] lists each job in flight with its holder, attempt, lease age and
//! whether the holder is alive.
//! With the `metrics` feature, `Queue::record_metrics` records the ledger under
//! `tally-queue`'s metric names.
//!
//! # What the server must promise
//!
//! The ids and the ledger are only as durable as the server. Every new connection checks
//! its settings: without the append-only file, or with a `maxmemory-policy` other than
//! `noeviction`, calls fail with [`Error::UnsafeServer`] unless the handle was opened with
//! [`Options::best_effort`]. A restart that may have lost data, an evicted key, or an id
//! seen going back makes every call fail with [`Error::Gone`]: ids are never issued twice.
//! Under `maxmemory`, puts are refused before they change anything, while gets and
//! resolves still drain the queue. A step of the server's clock never takes a job from a
//! holder that renews its lease (see the README).

//! # The tracking latch
//!
//! [`TrackingLatch`] is [`tally_latch::TrackingLatch`] across processes: named counters
//! that any process can [`claim`](TrackingLatch::claim) on a lease, report to and wait on,
//! with tally-latch's [`Failure`](tally_latch::Failure),
//! [`StillPending`](tally_latch::StillPending) and [`NameError`](tally_latch::NameError). A
//! handle dropped unreported fails the latch naming itself; a holder process that dies
//! fails it naming its counter once its lease expires (or, by [`OnExpiry::Reclaim`], frees
//! the counter for another process). Its keys live under `{latch:NAME}`.
//!
//! # Keys
//!
//! A queue named `q` uses keys under the hash tag `{q}` (one cluster slot): `{q}:s` (the
//! stream, group `g`), `{q}:meta`, `{q}:ledger`, `{q}:workers`, `{q}:ends` (wake-ups,
//! capped), `{q}:dead`, `{q}:uncertain`, `{q}:later` and `{q}:later:items` (delayed
//! jobs), `{q}:clock` (each handle's last look at the server's clock), short-lived
//! `{q}:done:*` (each handle's last resolving call, for repeats) and `{q}:k:*`
//! (idempotency keys, for the repeat window).

//! # Background work
//!
//! The crate spawns nothing. [`Queue::maintain`] (and [`TrackingLatch::maintain`], which
//! renews counter leases and sends the failures of dropped handles) is a future to run on
//! your runtime: it refreshes worker heartbeats, ends deliveries dropped unresolved, and
//! sweeps expired leases. It always sleeps between passes, and backs off after a failed
//! one. Without it, a dropped delivery still ends when its lease expires, and a
//! [`Worker`] expires one lease after its last heartbeat. (The `redis` client drives each
//! connection with a task of its own on the runtime its feature selects.)
//!
//! # Limits
//!
//! - **At-least-once effects.** A job whose holder was slow, not dead, can run twice: the
//!   second run's resolve counts, the first's is refused as stale. [`Delivery::keep_alive`]
//!   makes this rare; effects must still be idempotent or reconciled.
//! - **Durability is the server's.** With `appendonly yes` and `appendfsync always`, the
//!   ledger survives `kill -9` of the server exactly. With `everysec`, up to a second of
//!   operations can vanish, each script whole (a script is one unit in the AOF), so the
//!   ledger stays balanced but can go back in time. A server that can lose or evict keys
//!   is refused unless opted into ([`Options::best_effort`]); then a restart that lost data
//!   is reported as [`Error::Gone`].
//! - **No failover.** Under asynchronous replication a promoted replica can miss recent
//!   writes: the ledger can go back in time and ids can repeat. Not covered.
//! - **Wake-ups are latency, not truth.** Waits re-read the state after every wake-up and
//!   at least once per [poll interval](Options::poll).
//!
//! # Features
//!
//! - `tokio` (default), `smol`: the runtimes the `redis` client can run on. With
//!   both, it picks tokio inside a tokio runtime and smol elsewhere.
//! - `json` (default): the [`Json`] codec through serde.
//! - `metrics`: `Queue::record_metrics` records the ledger through the
//!   [`metrics`](https://docs.rs/metrics) facade under `tally-queue`'s metric names (the
//!   same table: `tally_queue_accepted_total`, `tally_queue_ended_total` by `outcome`,
//!   `tally_queue_buffered`, `tally_queue_in_flight`, `tally_queue_redelivered_total`,
//!   `tally_queue_dead_letters`, and the histograms `tally_queue_buffered_seconds` and
//!   `tally_queue_in_flight_seconds`), with the label `queue` = the queue's name.
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;

mod codec;
mod latch;
mod queue;
mod server;

#[cfg(feature = "json")]
pub use crate::codec::Json;
pub use crate::codec::{Bytes, Codec, CodecError};
pub use crate::latch::counter::error::ReportError;
pub use crate::latch::counter::Counter;
pub use crate::latch::error::{ClaimError, CreateError, LatchWaitError};
pub use crate::latch::event::{EventKind, LatchEvent};
pub use crate::latch::options::{LatchOptions, OnExpiry};
pub use crate::latch::reason::Reason;
pub use crate::latch::snapshot::{CounterState, LatchState, Snapshot};
pub use crate::latch::TrackingLatch;
pub use crate::queue::delivery::error::{
    KeepAliveError, ResolveError, ResolveManyError, RetryError,
};
pub use crate::queue::delivery::Delivery;
pub use crate::queue::drained::{Drained, ShutdownNowError};
pub use crate::queue::error::{GetError, JoinError, OpenError, PutError, TryGetError};
pub use crate::queue::in_flight::InFlight;
pub use crate::queue::options::Options;
pub use crate::queue::record::{Record, Records};
pub use crate::queue::status::{State, Status};
pub use crate::queue::worker::Worker;
pub use crate::queue::Queue;
pub use crate::server::error::Error;
pub use redis;
pub use tally_queue::AbandonPolicy;

/// Compile-time checks of the auto traits.
const _: () = {
    const fn send_sync<X: Send + Sync>() {}
    send_sync::<Queue<Bytes>>();
    send_sync::<Delivery<Bytes>>();
    send_sync::<Worker<Bytes>>();
    send_sync::<Error>();
    send_sync::<PutError<Vec<u8>>>();
    send_sync::<ResolveError<Bytes>>();
    send_sync::<RetryError<Bytes>>();
    send_sync::<ResolveManyError<Bytes>>();
    send_sync::<TrackingLatch>();
    send_sync::<Counter>();
    send_sync::<LatchWaitError>();
    send_sync::<ReportError>();
};
