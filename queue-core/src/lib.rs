//! An acknowledgement-counting work queue with an outcome ledger.
//!
//! An empty buffer or a returned `join()` proves nothing by itself. This queue answers
//! three questions at every moment: what was accepted, what was discarded, and what
//! actually succeeded.
//!
//! - [`Queue::put`] accepts an item and returns its [`JobId`]; a refused put hands the
//!   item back inside its error, split by form as the get errors are: [`TryPutError`],
//!   [`PutError`], [`PutTimeoutError`].
//! - [`Queue::get`] hands out a [`Delivery`]: the item with its id, which must end exactly
//!   once, by consuming itself, as succeeded, rejected or uncertain ([`Outcome`]). Dropped
//!   unresolved, it counts as abandoned. There is no free-standing `task_done`.
//! - [`Queue::put_many`] and [`Queue::get_many`] move jobs in batches: a `Vec` of items
//!   in, their ids out (what was not accepted stays in the `Vec`), and up to `max`
//!   deliveries at once, each still a full [`Delivery`]; with `try_`, `_blocking` and
//!   `_until` forms and one pass of wake-ups per batch (see [`PutMany`](futures::PutMany) and
//!   [`GetMany`](futures::GetMany)). The no-heap [`FixedQueue`](fixed::FixedQueue) has
//!   `try_put_many` and `try_get_many` over an iterator and a callback.
//! - [`Queue::shutdown`] stops admission and lets consumers drain the buffer;
//!   [`Queue::shutdown_now`] also drains the buffer and returns the items with their ids.
//! - [`Queue::cancel_in_flight`] asks the work in flight to stop: every delivery then
//!   reports [`Delivery::is_cancelled`] and its [`cancelled`](Delivery::cancelled) future
//!   (for `select!`) resolves. A request, never a forced ending; [`Queue::abort`] does it and
//!   [`Queue::shutdown_now`] in one call.
//! - [`Queue::with_abandon_policy`] decides what a delivery dropped unresolved means:
//!   [`AbandonPolicy::Abandon`] (the default: counted abandoned, item dropped),
//!   [`AbandonPolicy::Redeliver`] (back under its id with [`Delivery::attempt`] one higher,
//!   then a [`DeadLetter`] kept for [`Queue::take_dead_letters`]) or
//!   [`AbandonPolicy::Uncertain`] (for effects that must not repeat: never redelivered,
//!   counted uncertain, item dropped).
//! - [`Queue::with_journal`] installs a [`Journal`]: an observer of every [`JobEvent`]
//!   with its [`JobId`], in causal order per id. [`Record`] (std) is a ready one that
//!   answers "which ids ended uncertain or abandoned, and which are still in flight?".
//! - [`Queue::join`] waits until every accepted item has ended and returns the [`Ledger`]:
//!   `accepted == buffered + in_flight + succeeded + rejected + uncertain + abandoned +
//!   discarded`.
//! - [`Queue::worker`] registers a consumer; when the last one is gone, producers waiting
//!   on a full queue get their item back ([`PutError::NoWorkers`]) instead of hanging.
//!   [`Queue::producer`] registers a producer; when the last one is gone (returned or
//!   panicked), the queue shuts down gracefully, so workers drain and stop instead of
//!   waiting for ever. Both guards are `Clone`, each clone one more registration.
//! - [`Delivery::retry_at`] retries after a deadline future of the caller's choosing (the
//!   runtime adapters' `retry_after` and `retry_backoff` use their timer, with a
//!   [`Backoff`]): the item is held back, counted buffered, until the deadline passes.
//! - [`Queue::with_redelivery_delay`] holds redeliveries back the same way: under
//!   [`AbandonPolicy::Redeliver`], an abandoned delivery's item waits, counted buffered,
//!   until its [`Redelivery`] claim is released by the caller's schedule (the runtime
//!   adapters' `with_redelivery_backoff` release it on their timer after a [`Backoff`]'s
//!   delay) or dropped.
//! - [`Queue::deliveries`] is the consumer side as a `Stream` (`futures-core`):
//!   `while let Some(job) = jobs.next().await`. Producers get no `Sink`: a sink's
//!   `start_send` can hand back neither the accepted item's [`JobId`] nor a refused item
//!   with its reason, and those are what a put here is for; `put` stays the producer's verb.
//!
//! [`fixed::FixedQueue`] is the same queue with no heap, for firmware: a `const` queue in a
//! `static` with room for `N` items and `W` waiters of each kind, fed from interrupt
//! handlers, on the same engine (see [`fixed`] for what it keeps and what it leaves out).
//!
//! The verbs follow CPython 3.13's `asyncio.Queue`, and close the holes it leaves: items
//! drained by an immediate shutdown come back to the caller, acknowledgements are tied to
//! deliveries and carry outcomes, `join` is level-triggered, and a getter woken just before
//! an immediate shutdown never loses its item (it gets it, or the drain returns it).
//!
//! No runtime is named: the futures run on any executor, or on none
//! (`futures_lite::future::block_on`), and each waiting verb has a `_blocking` form and a
//! `_blocking_timeout` form under `std`. A timeout is a deadline future of the caller's
//! choosing (a runtime's sleep, an embedded timer): [`Queue::put_until`] (a timed-out put
//! hands its item back), [`Queue::get_until`], [`Queue::join_until`] (a timed-out join
//! reports the ledger at the deadline), and [`Queue::shutdown_until`], the "drain or
//! abort" policy that shuts down gracefully and, if the drain misses the deadline,
//! immediately, returning the ledger and the drained items.
//!
//! # Examples
//!
//! ```
//! use tally_queue::{Outcome, Queue};
//! use futures_lite::future::block_on;
//!
//! let queue = Queue::bounded(2).unwrap();
//! std::thread::scope(|s| {
//!     for _ in 0..2 {
//!         s.spawn(|| {
//!             let _worker = queue.worker();
//!             block_on(async {
//!                 while let Ok(job) = queue.get().await {
//!                     match *job {
//!                         2 => job.reject(),
//!                         7 => job.resolve(Outcome::Uncertain),
//!                         _ => job.succeed(),
//!                     };
//!                 }
//!             })
//!         });
//!     }
//!     block_on(async {
//!         for n in 0..10 {
//!             queue.put(n).await.unwrap();
//!         }
//!     });
//!     queue.shutdown();
//! });
//! let ledger = queue.join_blocking();
//! assert_eq!(ledger.accepted, 10);
//! assert_eq!((ledger.succeeded, ledger.rejected, ledger.uncertain), (8, 1, 1));
//! assert!(ledger.is_balanced());
//! ```
//!
//! # Cancel safety
//!
//! Dropping a [`Get`](futures::Get) never loses an item; dropping a [`Put`](futures::Put)
//! either accepted the item (it had returned) or not (the item is dropped with the
//! future); dropping a [`Join`](futures::Join) changes nothing. A wake-up handed to a
//! dropped waiter passes to the next one.
//!
//! # Wakers
//!
//! A waker registered by a waiting future (`get`, `put`, `join`, ...) is run on the thread
//! that made the change it waits for: the `try_put` that delivered the item, the `get` or
//! resolution that freed the slot, the ending that settled the queue, the `shutdown`.
//! It runs after that change is complete and recorded (buffer, slots, ledger), with no lock
//! of this crate held. So a waker may:
//!
//! - call back into this queue or any other one (`try_put`, `try_get`, resolve a delivery,
//!   `shutdown`), or poll the woken task inline, as some executors do;
//! - panic: every other waiter of that change is still woken, and then the first panic
//!   propagates out of the call that notified (that call's own effect has happened: a
//!   `try_put` that panics this way has accepted its item). Without `std` there is no
//!   `catch_unwind`, so a second waker panicking during the same unwinding aborts.
//!
//! A waker should not block: it runs inside someone else's queue operation, and a blocking
//! wait there (say `get_blocking` on the notifying thread) holds that caller until it
//! returns. Blocking waits (`_blocking`) park and unpark the thread and run no user code.
//!
//! On targets without pointer-sized atomics (thumbv6m, where `alloc::sync::Arc` is
//! missing), a waker runs as soon as the waiter list that held it is unlocked, before the
//! change that notified is finished: there a waker must only schedule its task (as
//! embedded executors' wakers do), and must neither re-enter a queue nor panic.
//!
//! # Features
//!
//! - `std` (default): the `_blocking` methods. (The error types implement
//!   `core::error::Error`, which is `std::error::Error`, with or without `std`.)
//! - `alloc` (default, implied by `std`): [`Queue`] and everything around it. Without it
//!   only the [`fixed`] tier is built, and nothing links the `alloc` crate, so firmware
//!   with no global allocator can use [`fixed::FixedQueue`].
//! - `critical-section`: makes the queue safe to use from interrupt handlers. Embedded
//!   users need it; provide a `critical-section` implementation for the target. With it:
//!   - the waiter lists take a critical section where they would take a spinning lock;
//!   - on targets without native 64-bit atomics (thumbv7em, thumbv6m), each 64-bit
//!     counter operation is a critical section, where portable-atomic's fallback would
//!     take a spinning lock;
//!   - each put into and get from the buffer is one critical section (the claim, a copy
//!     of the item and its publication; no user code), since the buffer makes an
//!     operation wait for one it finds half done.
//!
//!   Without it, any of these waits forever when a handler meets the code it interrupted
//!   halfway (a put, get or resolve in the handler, against one in thread mode).
//! - `portable-atomic`: every atomic comes from `portable-atomic` (for targets without
//!   compare-and-swap, such as thumbv6m; combine with `critical-section`). On such targets
//!   `alloc::sync::Arc` does not exist, so the owned variants ([`Queue::get_owned`],
//!   [`OwnedDelivery`], [`Queue::worker_owned`]) are left out there.
//! - `tracing`: an event for every job and every change of the queue's state, under the
//!   target `tally_queue`, carrying the queue's label (see [the table](#tracing-events)).
//!
//! - `metrics` (implies `std`): [`Queue::record_metrics`][record_metrics] records the ledger through the
//!   [`metrics`](https://docs.rs/metrics) facade, and each delivery's time in flight is
//!   recorded as it ends (see [the names](#metrics)). Off, none of this is compiled.
//!
//! [`Queue`] without `std` needs `alloc` (a global allocator at link time); the [`fixed`]
//! tier needs neither.
//!
//! # Tracing events
//!
//! With the `tracing` feature, the queue emits these events, all under the target
//! `tally_queue`. Every event carries first the field `label`: the queue's name, set with
//! [`Queue::with_label`] (empty if unset), so that the events of several queues can be
//! told apart; the table lists the fields that follow it. Ids are [`JobId::get`] numbers; a subscriber that counts `job ended` by
//! `outcome` rebuilds the [`Ledger`]'s outcome counters, and one that filters on
//! `tally_queue=debug` sees every ending without the per-job `TRACE` traffic.
//!
//! | message | level | fields | when |
//! |---|---|---|---|
//! | `job accepted` | `TRACE` | `id` | a put accepted the job |
//! | `job delivered` | `TRACE` | `id`, `attempt` | a get handed it out (`attempt`: 1, or more when redelivered) |
//! | `job ended` | `DEBUG` | `id`, `outcome` (`succeeded`, `rejected`, `uncertain`) | a delivery was resolved, or, under [`AbandonPolicy::Uncertain`], dropped unresolved (after its `job abandoned`) |
//! | `job abandoned` | `WARN` | `id`, `panicking` | a delivery was dropped unresolved (`panicking`: during a panic) |
//! | `job retried` | `DEBUG` | `id` | [`Delivery::retry`] put it back |
//! | `job redelivered` | `DEBUG` | `id`, `attempt` | under [`AbandonPolicy::Redeliver`], an abandoned delivery went back for delivery `attempt` |
//! | `job dead-lettered` | `WARN` | `id`, `attempts` | under [`AbandonPolicy::Redeliver`], an abandoned delivery became a [`DeadLetter`] (after its `job abandoned`, and after a `job discarded` if an immediate shutdown caused it) |
//! | `job discarded` | `DEBUG` | `id` | [`Queue::shutdown_now`] drained it and handed it back |
//! | `queue drained` | `DEBUG` | `discarded` | after the `job discarded` events of one `shutdown_now` |
//! | `queue shut down` | `DEBUG` | `unfinished` | the first shutdown, either kind |
//! | `last worker left` | `DEBUG` | | the last [`Worker`] guard dropped; puts refuse |
//! | `last producer left` | `DEBUG` | | the last [`Producer`] guard dropped; the queue shuts down |
//!
//! Events for one job are emitted by the threads that move it, so a subscriber on several
//! threads can receive `job delivered` just before the `job accepted` of the same id.
//!
//! A [`fixed::FixedQueue`] emits the events of what it does: `job accepted`, `job
//! delivered` (attempt 1), `job ended`, `job abandoned`, `job discarded` (as its drain
//! hands each item out), `queue drained` and `queue shut down`.
//!
//! # Metrics
//!
//! With the `metrics` feature, through the `metrics` facade, every name carrying the label
//! `queue` (the queue's [`label`](Queue::label), empty if unset). The counters and gauges
//! are set from a [`Ledger`] snapshot by [`Queue::record_metrics`][record_metrics] (call it before a
//! scrape renders them, or on a timer), so they equal the ledger at that instant and cost
//! a job nothing; the histograms are recorded as each item is taken and as each delivery
//! ends (one clock read per put, return, take and ending). The names are constants in
//! [`metric_names`], built with or without the feature.
//!
//! | name | kind | labels | figure |
//! |---|---|---|---|
//! | `tally_queue_accepted_total` | counter | `queue` | [`Ledger::accepted`] |
//! | `tally_queue_ended_total` | counter | `queue`, `outcome` (`succeeded`, `rejected`, `uncertain`, `abandoned`, `discarded`) | the ledger's count of that outcome |
//! | `tally_queue_buffered` | gauge | `queue` | [`Ledger::buffered`] (fresh, returned, and held by [`Delivery::retry_at`] or a [`Redelivery`]) |
//! | `tally_queue_in_flight` | gauge | `queue` | [`Ledger::in_flight`] |
//! | `tally_queue_redelivered_total` | counter | `queue` | [`Queue::redeliveries`] |
//! | `tally_queue_dead_letters` | gauge | `queue` | [`Queue::dead_letters`] (kept, not yet taken) |
//! | `tally_queue_buffered_seconds` | histogram | `queue` | seconds from becoming buffered (accepted, returned, or held by [`Delivery::retry_at`] or a [`Redelivery`]) to being taken; drained items are not recorded |
//! | `tally_queue_in_flight_seconds` | histogram | `queue` | seconds from a delivery to its end (resolved, retried, or dropped) |
//!
//! # Memory and counters
//!
//! A bounded queue with a capacity up to 65 536 allocates its buffer once, when it is
//! built, and then nothing per item; larger capacities, and unbounded queues, allocate
//! the buffer in blocks as items arrive. Counters are `u64` and are not checked for
//! wrapping (2^64 puts do not happen); see [`JobId`] for what ids promise and [`Ledger`]
//! for what a snapshot promises.
//!
//! # Source map
//!
//! Each layer imports only from the layers below it:
//!
//! | folder | owns | may import |
//! |---|---|---|
//! | `queue.rs` | [`Queue`]: the type, its constructors, configuration and observers | `fate/`, `engine/` |
//! | `face/` | each verb family (`put`, `get`, `join`, `shutdown`, the stream, `shutdown_until`) as an `impl Queue` block with its future | `queue.rs`, `handle/`, `fate/`, `engine/`, `wait/` |
//! | `handle/` | [`Delivery`] over a shared lease, the [`Worker`] and [`Producer`] guards | `queue.rs`, `fate/`, `engine/` |
//! | `fate/` | the steward of every job's fate: policy, dead letters, journal, record, cancellation | `engine/`, `wait/` |
//! | `engine/` | the raw queue: every atomic of the queue's state and every place an item can be (buffer, lane, tally, lifecycle); its module docs state the invariants | `wait/`, `sync/` |
//! | `wait/` | waiter classes, their lists, counts and turns, the registration every wait polls through, deadlines | `sync/` |
//! | `sync/` | the atomics (core, portable-atomic, loom), critical sections, backoff, the waiter lists' lock | |
//! | `fixed/` | the no-heap tier: [`fixed::FixedQueue`] and its handles over the ring (inline), the tally and the waiter fields, with waiter slots of its own | `engine/buffer/`, `engine/tally.rs`, `wait/`, `sync/` |
//!
//! `ledger.rs`, `job_id.rs`, `outcome.rs`, `error.rs`, `events.rs` (tracing),
//! `metrics.rs` with `metric_names.rs`, and `unwind.rs` are leaves any layer may use.
//! `unsafe` is allowed in one module only, `engine/buffer/raw/`: the ring (`ring.rs`, with
//! its batch claims in `ring/batch.rs`) and the unbounded block list (`list.rs`), the
//! buffers whose slots are raw memory; each file says why.
//! Without `alloc`, only the parts of `engine/` and `wait/` that `fixed/` uses are built.
//!
#![cfg_attr(feature = "metrics", doc = "[record_metrics]: Queue::record_metrics")]
// Without the feature the method is not built: the link goes to the feature list.
#![cfg_attr(not(feature = "metrics"), doc = "[record_metrics]: #features")]
#![no_std]
// A `no_std` crate: name `core` and `alloc` items by their own paths, so the crate builds
// without `std` (the workspace's std-only crates need no such rule).
#![warn(
    clippy::std_instead_of_core,
    clippy::alloc_instead_of_core,
    clippy::std_instead_of_alloc
)]
// `unsafe` lives in one module, `engine::buffer::raw` (the slots of the ring and of the
// unbounded list, and the list's blocks), which alone allows it; everywhere else it is an
// error.
#![deny(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(docsrs, doc(auto_cfg(hide(loom))))]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

/// Declares a `const fn`, except under `cfg(loom)`, whose atomics are not `const`.
macro_rules! const_fn {
    ($(#[$attr:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty $body:block) => {
        #[cfg(not(loom))]
        $(#[$attr])*
        $vis const fn $name($($arg: $ty),*) -> $ret $body

        #[cfg(loom)]
        $(#[$attr])*
        $vis fn $name($($arg: $ty),*) -> $ret $body
    };
}
pub(crate) use const_fn;

#[cfg(feature = "alloc")]
mod engine;
/// Without `alloc`: the parts of the engine the fixed tier runs on (the ring and the
/// ledger's counters), from the same files; what only the heap queue uses of them is dead
/// code here.
#[cfg(not(feature = "alloc"))]
#[allow(dead_code)]
mod engine {
    pub(crate) mod buffer {
        pub(crate) mod moves;
        #[allow(unsafe_code)]
        pub(crate) mod raw {
            pub(crate) mod ring;
        }
        pub(crate) use self::raw::ring;
    }
    pub(crate) mod tally;
}
mod error;
// Without `alloc`, the events of the heap queue's policies and guards go unused.
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
mod events;
#[cfg(feature = "alloc")]
mod face;
#[cfg(feature = "alloc")]
mod fate;
pub mod fixed;
#[cfg(feature = "alloc")]
mod handle;
mod job_id;
mod ledger;
pub mod metric_names;
#[cfg(feature = "metrics")]
mod metrics;
mod outcome;
#[cfg(feature = "alloc")]
mod queue;
mod sync;
mod unwind;
#[cfg(feature = "alloc")]
mod wait;
/// Without `alloc`: the parts of `wait/` the fixed tier uses (the waiter fields, the
/// turns and an attempt's turn, the deadline race), from the same files; what only the
/// heap queue uses of them is dead code here.
#[cfg(not(feature = "alloc"))]
#[allow(dead_code)]
mod wait {
    pub(crate) mod counted;
    pub(crate) mod deadline;
    pub(crate) mod turn;
    pub(crate) mod turns;
    pub(crate) mod wake;
}

pub use crate::error::{
    GetError, GetTimeoutError, JoinTimedOut, PutError, PutTimeoutError, TryGetError, TryPutError,
    ZeroCapacity,
};
#[cfg(feature = "alloc")]
pub use crate::face::shutdown_until::Closed;
#[cfg(feature = "alloc")]
pub use crate::face::stream::Deliveries;
#[cfg(all(feature = "alloc", target_has_atomic = "ptr"))]
pub use crate::face::stream::OwnedDeliveries;
#[cfg(feature = "alloc")]
pub use crate::fate::backoff::{Backoff, Jitter};
#[cfg(feature = "alloc")]
pub use crate::fate::dead_letter::{DeadLetter, DeadReason};
#[cfg(feature = "alloc")]
pub use crate::fate::journal::{JobEvent, Journal};
#[cfg(feature = "alloc")]
pub use crate::fate::policy::{AbandonPolicy, ZeroAttempts};
#[cfg(feature = "std")]
pub use crate::fate::record::{JobState, Record};
#[cfg(all(feature = "alloc", target_has_atomic = "ptr"))]
pub use crate::fate::redelay::Redelivery;
#[cfg(feature = "alloc")]
pub use crate::handle::delivery::Delivery;
#[cfg(all(feature = "alloc", target_has_atomic = "ptr"))]
pub use crate::handle::delivery::OwnedDelivery;
#[cfg(all(feature = "alloc", target_has_atomic = "ptr"))]
pub use crate::handle::producer::OwnedProducer;
#[cfg(feature = "alloc")]
pub use crate::handle::producer::Producer;
#[cfg(all(feature = "alloc", target_has_atomic = "ptr"))]
pub use crate::handle::worker::OwnedWorker;
#[cfg(feature = "alloc")]
pub use crate::handle::worker::Worker;
pub use crate::job_id::JobId;
pub use crate::ledger::Ledger;
pub use crate::outcome::Outcome;
#[cfg(feature = "alloc")]
pub use crate::queue::Queue;

/// The named futures returned by [`Queue`]'s waiting methods.
///
/// # Examples
///
/// ```
/// use tally_queue::{futures::Put, Queue};
///
/// let queue = Queue::unbounded();
/// let put: Put<'_, &str> = queue.put("job");
/// assert_eq!(format!("{put:?}"), "Put { .. }");
/// futures_lite::future::block_on(put).unwrap();
/// ```
pub mod futures {
    #[cfg(all(feature = "alloc", target_has_atomic = "ptr"))]
    pub use crate::face::batch::GetManyOwned;
    #[cfg(feature = "alloc")]
    pub use crate::face::batch::{GetMany, PutMany};
    #[cfg(feature = "alloc")]
    pub use crate::face::get::Get;
    #[cfg(all(feature = "alloc", target_has_atomic = "ptr"))]
    pub use crate::face::get::GetOwned;
    #[cfg(feature = "alloc")]
    pub use crate::face::join::Join;
    #[cfg(feature = "alloc")]
    pub use crate::face::put::Put;
    #[cfg(feature = "alloc")]
    pub use crate::face::retry_at::RetryAt;
    #[cfg(all(feature = "alloc", target_has_atomic = "ptr"))]
    pub use crate::face::retry_at::RetryAtOwned;
    #[cfg(feature = "alloc")]
    pub use crate::face::shutdown_until::ShutdownUntil;
    #[cfg(feature = "alloc")]
    pub use crate::fate::cancel::Cancelled;
    pub use crate::wait::deadline::Until;
}

/// Compile-time checks of the documented auto traits.
#[cfg(all(feature = "alloc", not(loom)))]
const _: () = {
    use core::cell::Cell;

    const fn send_sync<X: Send + Sync>() {}
    const fn send<X: Send>() {}

    // `T: Send` is enough for the queue to be shared.
    send_sync::<Queue<u8>>();
    send_sync::<Queue<Cell<u8>>>();
    send::<Delivery<'static, Cell<u8>>>();
    send::<futures::Put<'static, Cell<u8>>>();
    send::<futures::Get<'static, Cell<u8>>>();
    send::<futures::Join<'static, Cell<u8>>>();
    send::<futures::PutMany<'static, 'static, Cell<u8>>>();
    send::<futures::GetMany<'static, 'static, Cell<u8>>>();
    send_sync::<futures::PutMany<'static, 'static, u8>>();
    send_sync::<futures::GetMany<'static, 'static, u8>>();
    send::<Worker<'static, Cell<u8>>>();

    send_sync::<Delivery<'static, u8>>();
    send_sync::<futures::Cancelled<'static>>();
    send_sync::<futures::Put<'static, u8>>();
    send_sync::<futures::Get<'static, u8>>();
    send_sync::<futures::Join<'static, u8>>();
    send_sync::<Worker<'static, u8>>();
    send_sync::<Producer<'static, u8>>();
    send::<Producer<'static, Cell<u8>>>();
    send::<Deliveries<'static, Cell<u8>>>();
    send_sync::<Deliveries<'static, u8>>();
    send_sync::<JobId>();
    send_sync::<Ledger>();
    send_sync::<JobEvent>();
    #[cfg(feature = "std")]
    send_sync::<Record>();
    send_sync::<AbandonPolicy>();
    send_sync::<Backoff>();
    send_sync::<Jitter>();
    send_sync::<ZeroAttempts>();
    send_sync::<DeadReason>();
    send_sync::<DeadLetter<u8>>();
    send::<DeadLetter<Cell<u8>>>();
    send_sync::<Outcome>();
    send_sync::<PutError<u8>>();
    send_sync::<TryPutError<u8>>();
    send_sync::<PutTimeoutError<u8>>();
    send_sync::<TryGetError>();
    send_sync::<GetError>();
    send_sync::<JoinTimedOut>();
    send_sync::<GetTimeoutError>();
    send_sync::<Closed<u8>>();
    send::<futures::Until<futures::Put<'static, Cell<u8>>, core::future::Ready<()>>>();
    send::<futures::ShutdownUntil<'static, Cell<u8>, core::future::Ready<()>>>();
    send::<futures::RetryAt<'static, Cell<u8>, core::future::Ready<()>>>();
    send_sync::<futures::RetryAt<'static, u8, core::future::Ready<()>>>();
    send_sync::<ZeroCapacity>();

    #[cfg(target_has_atomic = "ptr")]
    {
        send_sync::<OwnedDelivery<u8>>();
        send_sync::<OwnedWorker<u8>>();
        send_sync::<OwnedProducer<u8>>();
        send_sync::<OwnedDeliveries<u8>>();
        send::<OwnedDeliveries<Cell<u8>>>();
        send_sync::<futures::GetOwned<u8>>();
        send_sync::<futures::GetManyOwned<'static, u8>>();
        send::<futures::GetManyOwned<'static, Cell<u8>>>();
        send::<OwnedDelivery<Cell<u8>>>();
        send::<futures::GetOwned<Cell<u8>>>();
        send::<futures::RetryAtOwned<Cell<u8>, core::future::Ready<()>>>();
    }
};
