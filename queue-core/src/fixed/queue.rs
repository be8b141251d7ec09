//! [`FixedQueue`]: the acknowledgement-counting work queue with no heap.

use core::fmt;
use core::future::Future;

use super::delivery::FixedDelivery;
use super::drain::FixedDrain;
use super::futures::{FixedGet, FixedJoin, FixedPut};
use super::raw::{Raw, State};
use super::slots::CheckWaiters;
use super::waker::AtomicWaker;
use crate::engine::buffer::ring::{Ring, Slot};
use crate::error::{TryGetError, TryPutError};
use crate::job_id::JobId;
use crate::ledger::Ledger;
use crate::wait::deadline::Until;
use crate::wait::turn::Turn;

/// A bounded work queue that needs no allocator: `N` slots for items, `W` waiter slots for
/// each kind of waiter (getters, putters, joiners).
///
/// [`new`](FixedQueue::new) is a `const fn`, so the queue lives in a `static`, and the
/// queue is its whole storage. It keeps the heap queue's contract where it applies: a put
/// returns the item's [`JobId`] or hands the item back; a get hands out a
/// [`FixedDelivery`] that must end with an outcome and counts as abandoned if dropped;
/// [`shutdown`](FixedQueue::shutdown) stops admission, and
/// [`shutdown_now`](FixedQueue::shutdown_now) also hands the buffered items back with their
/// ids; [`join`](FixedQueue::join) returns the [`Ledger`] once every accepted item has
/// ended. It runs on the heap queue's engine (the same ring, ledger and waiter counts), so
/// the rules of [`Queue`](crate::Queue) hold here too, except where
/// [the tier's docs](super#what-the-fixed-tier-leaves-out) say otherwise.
///
/// # Limits
///
/// - **Capacity:** `N` items buffered at most; `N` is a power of two from 2 to 65,536
///   (a compile-time error otherwise).
/// - **Waiters:** at most `W` waits of each kind wait at once (1 by default, up to
///   [`MAX_WAITERS`](super::MAX_WAITERS)). One more, when it would have to wait, returns
///   [`NoWaiterSlot`](super::NoWaiterSlot) at once; it never takes another waiter's slot and
///   never hangs. A wait holds its slot only while it waits.
/// - **Interrupts** may call [`try_put`](FixedQueue::try_put),
///   [`shutdown`](FixedQueue::shutdown) and every other method, and end deliveries; with
///   the `critical-section` feature on a single core, none of them waits for a step of the
///   code it interrupted (see [the tier's docs](super#interrupts)).
///
/// # Size
///
/// `size_of::<FixedQueue<u32, 16, 2>>()` is 416 bytes on `thumbv7em-none-eabihf`, where
/// embassy-sync's `Channel<CriticalSectionRawMutex, u32, 16>` is 96, and 896 bytes on
/// x86-64 (128 for the `Channel`), where the ring's words sit on 128-byte lines of their
/// own. The difference buys lock-free puts and gets, ids and the ledger: each item slot
/// carries a 4-byte stamp beside the item (it hands the slot over without a lock), each
/// waiter slot three `atomic-waker` cells, and the ledger five 8-byte counters.
///
/// # Examples
///
/// ```
/// use tally_queue::fixed::FixedQueue;
/// use tally_queue::Outcome;
///
/// static JOBS: FixedQueue<u32, 8, 2> = FixedQueue::new();
///
/// // What a timer interrupt would do:
/// for reading in [3, 0, 7] {
///     JOBS.try_put(reading).unwrap();
/// }
/// JOBS.shutdown();
///
/// futures_lite::future::block_on(async {
///     while let Ok(job) = JOBS.get().await {
///         match *job {
///             0 => job.reject(),
///             _ => job.resolve(Outcome::Succeeded),
///         };
///     }
///     let ledger = JOBS.join().await.unwrap();
///     assert_eq!((ledger.accepted, ledger.succeeded, ledger.rejected), (3, 2, 1));
/// });
/// ```
pub struct FixedQueue<T, const N: usize, const W: usize = 1> {
    ring: Ring<T, [Slot<T>; N]>,
    state: State<[[AtomicWaker; 3]; W]>,
}

impl<T, const N: usize, const W: usize> FixedQueue<T, N, W> {
    crate::const_fn! {
        /// An empty queue with room for `N` items and `W` waiters of each kind.
        ///
        /// # Panics
        ///
        /// Never at run time: `N` not a power of two from 2 to 65,536, or `W` outside
        /// `1..=MAX_WAITERS`, fails to compile where the queue is built in a `static` or a
        /// `const`, and panics here otherwise.
        ///
        /// # Examples
        ///
        /// ```
        /// use tally_queue::fixed::FixedQueue;
        ///
        /// static READINGS: FixedQueue<u16, 16, 2> = FixedQueue::new();
        /// assert_eq!(READINGS.capacity(), 16);
        /// ```
        pub fn new() -> Self {
            let () = CheckWaiters::<W>::OK;
            FixedQueue {
                ring: Ring::inline(),
                state: State::new(),
            }
        }
    }

    #[inline(always)]
    pub(super) fn raw(&self) -> Raw<'_, T> {
        Raw::new(&self.ring, &self.state)
    }

    /// The most items the queue buffers: `N`.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::fixed::FixedQueue::<u8, 4>::new();
    /// assert_eq!(queue.capacity(), 4);
    /// ```
    #[must_use]
    pub fn capacity(&self) -> usize {
        N
    }

    // ------------------------------------------------------------------------ put

    /// Buffers `item` if there is room now, and returns its id.
    ///
    /// Callable from an interrupt handler. A getter waiting for an item is woken (its waker
    /// runs on this call's stack: embedded executors' wakers only mark a task ready).
    ///
    /// # Errors
    ///
    /// The item comes back: [`TryPutError::Full`] if the queue holds `N` items (or the
    /// free slots are kept for waiting puts that were woken for them and have not run yet:
    /// a `try_put` does not overtake a waiting [`put`](FixedQueue::put)), or
    /// [`TryPutError::ShutDown`] once the queue is shut down.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{fixed::FixedQueue, TryPutError};
    ///
    /// let queue = FixedQueue::<&str, 2>::new();
    /// assert_eq!(queue.try_put("a").unwrap().get(), 0);
    /// assert_eq!(queue.try_put("b").unwrap().get(), 1);
    /// assert!(matches!(queue.try_put("c"), Err(TryPutError::Full("c"))));
    /// ```
    #[inline]
    pub fn try_put(&self, item: T) -> Result<JobId, TryPutError<T>> {
        self.raw().put(&mut Turn::none(), item)
    }

    /// Waits for room, buffers `item` and returns its id.
    ///
    /// # Errors
    ///
    /// The item comes back: [`FixedPutError::ShutDown`](super::FixedPutError::ShutDown) once
    /// the queue is shut down (a put waiting on a full queue is woken to be refused), or
    /// [`FixedPutError::NoWaiterSlot`](super::FixedPutError::NoWaiterSlot) if it would have
    /// to wait and every putter slot is taken.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future either accepted the item (it had returned) or not (the item is
    /// dropped with the future); its slot, and a hand-off it was woken for, pass on.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::fixed::FixedQueue;
    ///
    /// let queue = FixedQueue::<u8, 2>::new();
    /// let id = futures_lite::future::block_on(queue.put(7)).unwrap();
    /// assert_eq!(queue.try_get().unwrap().id(), id);
    /// ```
    pub fn put(&self, item: T) -> FixedPut<'_, T> {
        FixedPut::new(self.raw(), item)
    }

    /// As [`put`](FixedQueue::put), giving up when `deadline` (any future: an
    /// `embassy_time::Timer`, a runtime's sleep) completes first. After the deadline fires
    /// the put is tried once more, so room that came in time is used.
    ///
    /// # Errors
    ///
    /// As [`put`](FixedQueue::put), plus
    /// [`FixedPutTimeoutError::TimedOut`](super::FixedPutTimeoutError::TimedOut) with the
    /// item; a timed-out put accepted nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::fixed::{FixedPutTimeoutError, FixedQueue};
    ///
    /// let queue = FixedQueue::<u8, 2>::new();
    /// queue.try_put(1).unwrap();
    /// queue.try_put(2).unwrap();
    /// let late = futures_lite::future::block_on(queue.put_until(3, async {}));
    /// assert!(matches!(late, Err(FixedPutTimeoutError::TimedOut(3))));
    /// ```
    pub fn put_until<D: Future>(&self, item: T, deadline: D) -> Until<FixedPut<'_, T>, D> {
        Until::new(self.put(item), deadline)
    }

    // ------------------------------------------------------------------------ get

    /// Delivers the oldest item if one is buffered now.
    ///
    /// # Errors
    ///
    /// [`TryGetError::Empty`] if the buffer is empty and the queue open, or if every
    /// buffered item is kept for a waiting get that was woken for it and has not run yet;
    /// [`TryGetError::ShutDown`] if it is empty and shut down, or after
    /// [`shutdown_now`](FixedQueue::shutdown_now).
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{fixed::FixedQueue, TryGetError};
    ///
    /// let queue = FixedQueue::<u8, 2>::new();
    /// assert_eq!(queue.try_get().unwrap_err(), TryGetError::Empty);
    /// queue.try_put(1).unwrap();
    /// queue.try_get().unwrap().succeed();
    /// ```
    #[inline]
    pub fn try_get(&self) -> Result<FixedDelivery<'_, T>, TryGetError> {
        let raw = self.raw();
        raw.take(&mut Turn::none(), |id, item| {
            FixedDelivery::new(raw, id, item)
        })
    }

    /// Waits for an item and delivers it.
    ///
    /// # Errors
    ///
    /// [`FixedGetError::ShutDown`](super::FixedGetError::ShutDown) once the queue is shut
    /// down and its buffer is empty (items buffered before a graceful shutdown are still
    /// delivered), or [`FixedGetError::NoWaiterSlot`](super::FixedGetError::NoWaiterSlot)
    /// if it would have to wait and every getter slot is taken.
    ///
    /// # Cancel safety
    ///
    /// The item is taken out of the buffer only in the poll that returns it, so a dropped
    /// get never loses an item; its slot, and a hand-off it was woken for, pass on.
    ///
    /// # Fairness
    ///
    /// A put hands its item to one waiting get, and the item is kept for it: neither
    /// [`try_get`](FixedQueue::try_get) nor a get that has not waited can take it (as on
    /// the heap queue, see [`Queue::get`](crate::Queue::get)). Waiting gets are handed
    /// items in turn round the slots, not in the order they started waiting: each waiting
    /// get is handed one within `W` hand-offs.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_lite::future::block_on;
    /// use tally_queue::fixed::FixedQueue;
    ///
    /// let queue = FixedQueue::<u8, 2>::new();
    /// queue.try_put(42).unwrap();
    /// let job = block_on(queue.get()).unwrap();
    /// assert_eq!(*job, 42);
    /// job.succeed();
    /// ```
    pub fn get(&self) -> FixedGet<'_, T> {
        FixedGet::new(self.raw())
    }

    /// As [`get`](FixedQueue::get), giving up when `deadline` (any future) completes first.
    /// After the deadline fires the get is tried once more.
    ///
    /// # Errors
    ///
    /// As [`get`](FixedQueue::get), plus
    /// [`FixedGetTimeoutError::TimedOut`](super::FixedGetTimeoutError::TimedOut).
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::fixed::{FixedGetTimeoutError, FixedQueue};
    ///
    /// let queue = FixedQueue::<u8, 2>::new();
    /// let waited = futures_lite::future::block_on(queue.get_until(async {}));
    /// assert_eq!(waited.unwrap_err(), FixedGetTimeoutError::TimedOut);
    /// ```
    pub fn get_until<D: Future>(&self, deadline: D) -> Until<FixedGet<'_, T>, D> {
        Until::new(self.get(), deadline)
    }

    // -------------------------------------------------------------------- shutdown

    /// Shuts the queue down gracefully: puts are refused from now on (with their item,
    /// including puts waiting on a full queue, which wake), buffered items stay available,
    /// and gets return `ShutDown` once the buffer is empty. Items in flight still have to
    /// be resolved.
    ///
    /// Callable from an interrupt handler. Idempotent; returns whether this call did the
    /// shutting down.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::fixed::FixedQueue;
    ///
    /// let queue = FixedQueue::<u8, 2>::new();
    /// queue.try_put(1).unwrap();
    /// assert!(queue.shutdown());
    /// assert!(!queue.shutdown());
    /// assert!(queue.try_put(2).unwrap_err().is_shut_down());
    /// assert_eq!(queue.try_get().unwrap().succeed(), 1); // still available
    /// assert!(queue.try_get().is_err());
    /// ```
    pub fn shutdown(&self) -> bool {
        self.raw().shut_down()
    }

    /// Shuts the queue down immediately: as [`shutdown`](FixedQueue::shutdown), and every
    /// get refuses from now on; the buffered items come back through the returned
    /// [`FixedDrain`], with their ids, each counted discarded as it is handed out (dropping
    /// the drain discards the rest). Items in flight are untouched and still have to be
    /// resolved.
    ///
    /// A get racing this call either takes an item (it is then in flight) or the drain
    /// hands it out: each item leaves the buffer exactly once.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::fixed::FixedQueue;
    ///
    /// let queue = FixedQueue::<&str, 4>::new();
    /// let a = queue.try_put("a").unwrap();
    /// let b = queue.try_put("b").unwrap();
    /// assert!(queue.shutdown_now().eq([(a, "a"), (b, "b")]));
    /// assert_eq!(queue.ledger().discarded, 2);
    /// assert!(queue.try_get().unwrap_err() == tally_queue::TryGetError::ShutDown);
    /// assert_eq!(queue.shutdown_now().count(), 0);
    /// ```
    pub fn shutdown_now(&self) -> FixedDrain<'_, T> {
        let raw = self.raw();
        raw.start_drain();
        FixedDrain::new(raw)
    }

    /// Whether the queue was shut down (either way).
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::fixed::FixedQueue::<u8, 2>::new();
    /// assert!(!queue.is_shut_down());
    /// queue.shutdown();
    /// assert!(queue.is_shut_down());
    /// ```
    #[must_use]
    pub fn is_shut_down(&self) -> bool {
        self.raw().is_shut_down()
    }

    // ------------------------------------------------------------------------ join

    /// Waits until every accepted item has ended (resolved, abandoned or discarded), then
    /// returns a ledger snapshot. Level-triggered: at zero it returns on the first poll.
    ///
    /// # Errors
    ///
    /// [`NoWaiterSlot`](super::NoWaiterSlot) if items are unfinished and every joiner slot
    /// is taken.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future gives its slot back and changes nothing else.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_lite::future::block_on;
    /// use tally_queue::fixed::FixedQueue;
    ///
    /// let queue = FixedQueue::<u8, 2>::new();
    /// queue.try_put(1).unwrap();
    /// queue.try_get().unwrap().reject();
    /// let ledger = block_on(queue.join()).unwrap();
    /// assert_eq!((ledger.succeeded, ledger.rejected), (0, 1));
    /// ```
    pub fn join(&self) -> FixedJoin<'_, T> {
        FixedJoin::new(self.raw())
    }

    /// As [`join`](FixedQueue::join), giving up when `deadline` (any future) completes
    /// first. After the deadline fires the count is checked once more.
    ///
    /// # Errors
    ///
    /// [`FixedJoinTimeoutError::TimedOut`](super::FixedJoinTimeoutError::TimedOut) with the
    /// ledger at the deadline, or
    /// [`FixedJoinTimeoutError::NoWaiterSlot`](super::FixedJoinTimeoutError::NoWaiterSlot).
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_lite::future::block_on;
    /// use tally_queue::fixed::{FixedJoinTimeoutError, FixedQueue};
    ///
    /// let queue = FixedQueue::<u8, 2>::new();
    /// queue.try_put(1).unwrap();
    /// let held = queue.try_get().unwrap();
    /// let Err(FixedJoinTimeoutError::TimedOut(late)) = block_on(queue.join_until(async {}))
    /// else {
    ///     unreachable!()
    /// };
    /// assert_eq!(late.ledger().in_flight, 1);
    /// held.succeed();
    /// assert!(block_on(queue.join_until(async {})).is_ok());
    /// ```
    pub fn join_until<D: Future>(&self, deadline: D) -> Until<FixedJoin<'_, T>, D> {
        Until::new(self.join(), deadline)
    }

    // ----------------------------------------------------------------- observation

    /// A snapshot of the queue's accounting; see [`Ledger`] for what it promises.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::fixed::FixedQueue::<u8, 2>::new();
    /// queue.try_put(1).unwrap();
    /// let ledger = queue.ledger();
    /// assert_eq!((ledger.accepted, ledger.buffered), (1, 1));
    /// assert!(ledger.is_balanced());
    /// ```
    #[must_use]
    pub fn ledger(&self) -> Ledger {
        self.raw().ledger()
    }

    /// Items buffered now (a snapshot).
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::fixed::FixedQueue::<u8, 2>::new();
    /// queue.try_put(1).unwrap();
    /// assert_eq!(queue.len(), 1);
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.raw().len()
    }

    /// Whether no item is buffered now (a snapshot).
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::fixed::FixedQueue::<u8, 2>::new();
    /// assert!(queue.is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many gets, puts and joins wait now, each holding one of its kind's `W` slots
    /// (a snapshot).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::future::Future;
    /// use core::pin::pin;
    /// use core::task::{Context, Waker};
    /// use tally_queue::fixed::{FixedQueue, Waiting};
    ///
    /// let queue = FixedQueue::<u8, 2, 2>::new();
    /// let mut get = pin!(queue.get());
    /// assert!(get.as_mut().poll(&mut Context::from_waker(Waker::noop())).is_pending());
    /// assert_eq!(queue.waiting(), Waiting { getters: 1, putters: 0, joiners: 0 });
    /// ```
    #[must_use]
    pub fn waiting(&self) -> Waiting {
        let raw = self.raw();
        Waiting {
            getters: raw.getters().claimed(),
            putters: raw.putters().claimed(),
            joiners: raw.joiners().claimed(),
        }
    }
}

impl<T, const N: usize, const W: usize> Default for FixedQueue<T, N, W> {
    /// As [`FixedQueue::new`].
    ///
    /// # Examples
    ///
    /// ```
    /// let queue: tally_queue::fixed::FixedQueue<u8, 4> = Default::default();
    /// assert!(queue.is_empty());
    /// ```
    fn default() -> Self {
        Self::new()
    }
}

/// How many waits of each kind hold a slot of a [`FixedQueue`]: from
/// [`FixedQueue::waiting`].
///
/// # Examples
///
/// ```
/// let queue = tally_queue::fixed::FixedQueue::<u8, 2>::new();
/// assert_eq!(queue.waiting(), tally_queue::fixed::Waiting::default());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Waiting {
    /// Waiting gets.
    pub getters: usize,
    /// Waiting puts.
    pub putters: usize,
    /// Waiting joins.
    pub joiners: usize,
}

impl<T, const N: usize, const W: usize> fmt::Debug for FixedQueue<T, N, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FixedQueue")
            .field("capacity", &N)
            .field("slots", &W)
            .field("ledger", &self.ledger())
            .field("shut_down", &self.is_shut_down())
            .finish()
    }
}
