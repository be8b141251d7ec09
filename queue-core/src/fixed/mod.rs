//! The no-heap tier: [`FixedQueue`], the work queue for `static`s, interrupt handlers and
//! embedded executors, usable with the `alloc` feature off.
//!
//! It answers the same question as [`Queue`](crate::Queue), "the interrupt produced these
//! jobs: did every one finish, and how?", with no allocator: the queue is a `const` value
//! with room for `N` items and `W` waiters of each kind, in a `static`. A put returns the
//! item's [`JobId`](crate::JobId) or hands the item back; a get hands out a
//! [`FixedDelivery`] that must end with an [`Outcome`](crate::Outcome) (dropped, it counts
//! as abandoned); [`shutdown`](FixedQueue::shutdown) stops admission and
//! [`shutdown_now`](FixedQueue::shutdown_now) hands the buffered items back with their ids;
//! [`join`](FixedQueue::join) returns the [`Ledger`](crate::Ledger).
//!
//! | verb | never waits | waits (a future) | with a deadline |
//! |---|---|---|---|
//! | put | [`try_put`](FixedQueue::try_put) | [`put`](FixedQueue::put) | [`put_until`](FixedQueue::put_until) |
//! | get | [`try_get`](FixedQueue::try_get) | [`get`](FixedQueue::get) | [`get_until`](FixedQueue::get_until) |
//! | join | [`ledger`](FixedQueue::ledger) | [`join`](FixedQueue::join) | [`join_until`](FixedQueue::join_until) |
//! | put a batch | [`try_put_many`](FixedQueue::try_put_many) | | |
//! | get a batch | [`try_get_many`](FixedQueue::try_get_many) | | |
//!
//! A deadline is any future: under embassy, `embassy_time::Timer::after_millis(50)`.
//!
//! A batch pulls its items from an iterator the caller keeps and hands each delivery to a
//! callback (there is no vector to lend), one item after another as the single verbs move
//! them.
//!
//! # One engine
//!
//! The tier runs on the heap queue's engine, not a copy of it: the same lock-free ring
//! (its slots inline instead of boxed), whose three words carry the ids, the closed flag,
//! the ending count and the waiter counts; the same ledger counters and snapshot, so a
//! [`Ledger`](crate::Ledger) here promises what it promises there; the same waiter counts
//! in the ring words and the same turns, so a put with no getter waiting touches no waiter
//! state, and an item a waiting get was woken for is kept for it. What differs is where a
//! waiter waits: in one of `W` `atomic-waker` slots per kind instead of a waiter
//! list (`wait/list.rs`), which needs a heap.
//!
//! # Limits, and what an extra waiter gets
//!
//! `N` is a power of two from 2 to 65,536, checked at compile time. Each kind of waiter
//! (getters, putters, joiners) has `W` slots (1 by default, at most [`MAX_WAITERS`]). A
//! wait takes a slot only when it must wait, and gives it back as soon as it returns or is
//! dropped, so `W` bounds the waits of one kind *waiting at the same time*. A wait that
//! must wait and finds all `W` slots taken returns [`NoWaiterSlot`] at once (inside
//! [`FixedGetError`], [`FixedPutError`] or the join's error): it never takes another
//! waiter's slot and never hangs.
//!
//! # Fairness
//!
//! As on the heap queue, a hand-off (a put for a waiting get, a get for a waiting put)
//! wakes one waiter and keeps the item or slot for it: a `try_*` or a wait that was not
//! woken cannot take it, and a woken wait dropped before it ran passes its claim on. The
//! order differs: hand-offs go round the `W` slots, each to the next slot holding a waiter
//! not yet woken, rather than in the order the waits began (a slot does not know when its
//! wait began). So a waiting get (or put) is woken within `W` hand-offs of its kind, and a
//! task that re-enters its wait at once after each item cannot keep the others from theirs.
//!
//! # Interrupts
//!
//! Every method may be called from an interrupt handler, at any priority: `try_put`,
//! `try_get`, ending a delivery, `shutdown`, `shutdown_now`, the observers, polling or
//! dropping a wait. With the `critical-section` feature on a single core, none of them
//! waits for a step of the code it interrupted: the ring's put and get each run as one
//! critical section (a claim, a copy of the item and its publication; no user code), the
//! 64-bit ring words are critical sections on targets without 64-bit atomics (thumbv7em,
//! thumbv6m), and every other change is one atomic operation or a compare-exchange loop
//! that a handler's own change only makes retry. A waker registered by a wait runs on the
//! stack of the call that wakes it (embedded executors' wakers only mark a task ready).
//! Without `critical-section`, a handler that meets a put or get it interrupted halfway
//! waits for it forever, as on the heap queue.
//!
//! # What the fixed tier leaves out
//!
//! - **A journal** ([`Journal`](crate::Journal)): it hears of every acceptance before the
//!   item can be taken, which the heap queue gets by leaving the ring for a growable
//!   buffer; a fixed queue has only its ring. Count outcomes with the ledger, or note them
//!   where each delivery ends.
//! - **Redelivery and retry** ([`AbandonPolicy::Redeliver`](crate::AbandonPolicy),
//!   [`Delivery::retry`](crate::Delivery::retry)): an item that comes back waits in the
//!   lane beside the ring and, after its last attempt, among the dead letters, both of
//!   which grow without bound; a fixed queue would have to refuse returns when full, which
//!   is not a retry a caller can count on. A dropped delivery counts as abandoned and its
//!   item is dropped (the heap queue's default policy).
//! - **Worker and producer guards** ([`Worker`](crate::Worker),
//!   [`Producer`](crate::Producer)): they end waits when the last consumer or producer is
//!   gone, which matters for tasks that come and go; embedded tasks live in `static`s for
//!   the life of the firmware. Call [`shutdown`](FixedQueue::shutdown) where the producer
//!   stops.
//! - **Cancellation of work in flight**, **owned deliveries** (`'static` handles over an
//!   `Arc`; a `&'static FixedQueue` is already one), **blocking waits** and the
//!   **`Stream`** face.
//!
//! # Examples
//!
//! ```
//! use futures_lite::future::block_on;
//! use tally_queue::fixed::FixedQueue;
//! use tally_queue::Outcome;
//!
//! /// Fed by an interrupt, worked by two tasks.
//! static SAMPLES: FixedQueue<u16, 8, 2> = FixedQueue::new();
//!
//! fn on_adc_interrupt(sample: u16) {
//!     if SAMPLES.try_put(sample).is_err() {
//!         // Full or shut down: the sample is handed back; count it as dropped.
//!     }
//! }
//!
//! for sample in [512, 0, 1023] {
//!     on_adc_interrupt(sample);
//! }
//! SAMPLES.shutdown();
//! block_on(async {
//!     while let Ok(job) = SAMPLES.get().await {
//!         let outcome = if *job == 0 { Outcome::Rejected } else { Outcome::Succeeded };
//!         job.resolve(outcome);
//!     }
//! });
//! let ledger = block_on(SAMPLES.join()).unwrap();
//! assert_eq!((ledger.succeeded, ledger.rejected), (2, 1));
//! assert!(ledger.is_balanced());
//! ```

mod batch;
mod delivery;
mod drain;
mod error;
pub mod futures;
mod queue;
mod raw;
mod slots;
mod wait;
mod waiters;
mod waker;

pub use delivery::FixedDelivery;
pub use drain::FixedDrain;
pub use error::{
    FixedGetError, FixedGetTimeoutError, FixedJoinTimeoutError, FixedPutError,
    FixedPutTimeoutError, NoWaiterSlot,
};
pub use queue::{FixedQueue, Waiting};
pub use slots::MAX_WAITERS;

/// Compile-time checks of the documented auto traits: everything is `Send` and `Sync` for
/// `T: Send` (a queue in a `static` needs `Sync`), except what holds an item by value
/// (`Send` only, as `T` is).
#[cfg(not(loom))]
const _: () = {
    use core::cell::Cell;

    const fn send_sync<X: Send + Sync>() {}
    const fn send<X: Send>() {}

    send_sync::<FixedQueue<u8, 2, 2>>();
    send_sync::<FixedQueue<Cell<u8>, 2, 2>>();
    send_sync::<FixedDelivery<'static, u8>>();
    send::<FixedDelivery<'static, Cell<u8>>>();
    send_sync::<FixedDrain<'static, u8>>();
    send_sync::<futures::FixedPut<'static, u8>>();
    send::<futures::FixedPut<'static, Cell<u8>>>();
    send_sync::<futures::FixedGet<'static, u8>>();
    send_sync::<futures::FixedJoin<'static, u8>>();
    send::<crate::futures::Until<futures::FixedGet<'static, u8>, core::future::Ready<()>>>();
    send_sync::<NoWaiterSlot>();
    send_sync::<FixedPutError<u8>>();
    send_sync::<FixedPutTimeoutError<u8>>();
    send_sync::<FixedGetError>();
    send_sync::<FixedGetTimeoutError>();
    send_sync::<FixedJoinTimeoutError>();
    send_sync::<Waiting>();
};
