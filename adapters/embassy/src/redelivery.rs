//! [`Redeliveries`] and [`RedeliveryExt`]: redeliveries held back on an embassy timer.
//!
//! Embassy tasks are static, so there is no task to spawn per held item: the claims
//! ([`Redelivery`]) wait in a fixed table of `N` places, and one task, the application's,
//! runs [`Redeliveries::run`], which sleeps on an [`embassy_time::Timer`] until the
//! earliest claim is due and releases it. A claim that comes due earlier than the one
//! slept on wakes the task, which sleeps again on the new earliest.
//!
//! The table sits behind a critical section (`lock.rs`; a loom mutex in the models): the
//! queue's schedule pushes into it from whatever task drops a delivery (on a host, from any
//! thread), and a critical section is the lock every embassy target already links. The
//! waker of the task sleeping on it lives in the same table, under the same lock, so a
//! claim and the wake it may need cannot pass each other. Claims are released, and wakers
//! woken or dropped, outside the critical section: releasing one takes the queue's own
//! locks and wakes its getters. A hold and each pass of the runner scan the `N` places:
//! the table is meant for the handful of redeliveries firmware has pending at once.

use alloc::sync::Arc;
use core::fmt;
use core::future::{poll_fn, Future};
use core::pin::Pin;
use core::task::{Poll, Waker};

use embassy_time::{Instant, Timer};
use tally_queue::{Backoff, Queue, Redelivery};

use crate::lock::Lock;
use crate::retry::embassy_duration;

#[cfg(all(test, loom))]
mod loom_models;

/// A fixed table of `N` held redeliveries, each waiting for its due
/// [`Instant`](embassy_time::Instant), and the task-side loop that releases them:
/// [`RedeliveryExt::with_redelivery_backoff`]'s timer for a queue on embassy.
///
/// Put it in a `static` ([`new`](Redeliveries::new) is `const`), hand it to
/// [`with_redelivery_backoff`](RedeliveryExt::with_redelivery_backoff), and await
/// [`run`](Redeliveries::run) for ever in one embassy task. While a claim waits here its
/// item counts as buffered, and [`shutdown_now`](Queue::shutdown_now) hands it back, as
/// [`Queue::with_redelivery_delay`] says.
///
/// Nothing is lost:
/// - when all `N` places are taken, a new claim is released at once (its item is due
///   without its delay) and counted in
///   [`released_at_once`](Redeliveries::released_at_once); size `N` for the redeliveries
///   that can be pending at one time;
/// - dropping the table releases every claim it holds.
///
/// Until a task runs it, the table only holds: its claims come due but stay held (and
/// [`join`](Queue::join) waits for them), so the task that runs it starts with the
/// application. Run it in one task: the table keeps one waker, so a second runner would be
/// woken only by its own timer.
///
/// The table's lock is a critical section: the application links a `critical-section`
/// implementation (a HAL's, `cortex-m`'s `critical-section-single-core`, or
/// `critical-section/std` on a host).
///
/// # Examples
///
/// ```
/// use core::time::Duration;
///
/// use futures_lite::future;
/// use tally_embassy::{Redeliveries, RedeliveryExt};
/// use tally_queue::{AbandonPolicy, Backoff, Queue};
///
/// static REDELIVERIES: Redeliveries<8> = Redeliveries::new();
///
/// // On an embassy executor, a task of its own runs the table:
/// // #[embassy_executor::task]
/// // async fn redeliver() -> ! { REDELIVERIES.run().await }
/// let runner = async { REDELIVERIES.run().await };
///
/// let queue = Queue::unbounded()
///     .with_abandon_policy(AbandonPolicy::redeliver(3).unwrap())
///     .with_redelivery_backoff(Backoff::fixed(Duration::from_millis(5)), &REDELIVERIES);
/// queue.try_put("flaky").unwrap();
/// drop(queue.try_get().unwrap()); // abandoned: held for 5 ms
/// assert_eq!((REDELIVERIES.len(), queue.ledger().buffered), (1, 1));
/// let again = future::block_on(future::or(runner, queue.get())).unwrap();
/// assert_eq!(again.attempt(), 2);
/// again.succeed();
/// ```
pub struct Redeliveries<const N: usize> {
    table: Lock<Table<N>>,
}

/// The state behind the critical section.
struct Table<const N: usize> {
    places: [Option<Held>; N],
    /// The instant the runner sleeps until; a claim due earlier wakes it.
    /// [`Instant::MAX`] when it waits with nothing held, or has not run yet.
    sleeps_until: Instant,
    /// Set by a claim due before `sleeps_until`; the runner then plans its sleep again.
    woken: bool,
    /// The runner's waker, while it sleeps.
    waker: Option<Waker>,
    /// Claims released at once because every place was taken.
    released_at_once: u64,
}

/// A claim and the instant it is due.
struct Held {
    due: Instant,
    redelivery: Redelivery,
}

/// What [`Redeliveries::hold`] does once out of the critical section.
enum AfterHold {
    Release(Redelivery),
    Wake(Option<Waker>),
}

impl<const N: usize> Redeliveries<N> {
    crate::const_fn! {
        /// An empty table, for a `static`.
        ///
        /// # Examples
        ///
        /// ```
        /// use tally_embassy::Redeliveries;
        ///
        /// static REDELIVERIES: Redeliveries<16> = Redeliveries::new();
        /// assert!(REDELIVERIES.is_empty());
        /// ```
        #[must_use]
        pub fn new() -> Self {
            Redeliveries {
                table: Lock::new(Table {
                    places: [const { None }; N],
                    sleeps_until: Instant::MAX,
                    woken: false,
                    waker: None,
                    released_at_once: 0,
                }),
            }
        }
    }

    /// Holds `redelivery` until `due`, when the task running [`run`](Redeliveries::run)
    /// releases it; with every place taken, releases it at once and counts it in
    /// [`released_at_once`](Redeliveries::released_at_once).
    /// [`with_redelivery_backoff`](RedeliveryExt::with_redelivery_backoff) calls this; a
    /// queue's own schedule ([`Queue::with_redelivery_delay`]) may too.
    ///
    /// # Examples
    ///
    /// ```
    /// use embassy_time::{Duration, Instant};
    /// use futures_lite::future;
    /// use tally_embassy::Redeliveries;
    /// use tally_queue::{AbandonPolicy, Queue};
    ///
    /// static REDELIVERIES: Redeliveries<4> = Redeliveries::new();
    ///
    /// // Due 5 ms after the abandoned delivery, whatever its attempt.
    /// let queue = Queue::unbounded()
    ///     .with_abandon_policy(AbandonPolicy::redeliver(2).unwrap())
    ///     .with_redelivery_delay(|redelivery| {
    ///         REDELIVERIES.hold(redelivery, Instant::now() + Duration::from_millis(5));
    ///     });
    /// queue.try_put(1).unwrap();
    /// drop(queue.try_get().unwrap());
    /// assert_eq!(REDELIVERIES.len(), 1);
    /// let runner = async { REDELIVERIES.run().await };
    /// future::block_on(future::or(runner, queue.get())).unwrap().succeed();
    /// assert!(REDELIVERIES.is_empty());
    /// ```
    pub fn hold(&self, redelivery: Redelivery, due: Instant) {
        let out = self.table.with(|table| {
            let Some(place) = table.places.iter_mut().find(|place| place.is_none()) else {
                table.released_at_once = table.released_at_once.saturating_add(1);
                return AfterHold::Release(redelivery);
            };
            *place = Some(Held { due, redelivery });
            if due < table.sleeps_until {
                table.woken = true;
                AfterHold::Wake(table.waker.take())
            } else {
                AfterHold::Wake(None)
            }
        });
        match out {
            AfterHold::Release(redelivery) => redelivery.release(),
            AfterHold::Wake(Some(waker)) => waker.wake(),
            AfterHold::Wake(None) => {}
        }
    }

    /// Releases each claim when it is due, for ever: the body of the one embassy task that
    /// serves this table. It sleeps on a [`Timer`] until the earliest claim is due, and
    /// wakes early when a claim due sooner arrives.
    ///
    /// Dropped (its task cancelled), it stops releasing; the claims stay held until a task
    /// runs it again or the table is dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    ///
    /// use futures_lite::future;
    /// use tally_embassy::{Redeliveries, RedeliveryExt};
    /// use tally_queue::{AbandonPolicy, Backoff, Queue};
    ///
    /// static REDELIVERIES: Redeliveries<4> = Redeliveries::new();
    ///
    /// let queue = Queue::unbounded()
    ///     .with_abandon_policy(AbandonPolicy::redeliver(2).unwrap())
    ///     .with_redelivery_backoff(Backoff::fixed(Duration::from_millis(2)), &REDELIVERIES);
    /// queue.try_put(1).unwrap();
    /// drop(queue.try_get().unwrap());
    /// future::block_on(future::or(async { REDELIVERIES.run().await }, async {
    ///     queue.get().await.unwrap().succeed();
    /// }));
    /// ```
    pub async fn run(&self) -> ! {
        loop {
            match self.next(Instant::now()) {
                Ok(due) => due.release(),
                Err(next) => self.sleep(next.map(Timer::at)).await,
            }
        }
    }

    /// Takes a claim due at `now`; or, with none due, records the runner's next wake-up
    /// (the earliest claim's instant, if any) and returns it.
    fn next(&self, now: Instant) -> Result<Redelivery, Option<Instant>> {
        self.table.with(|table| {
            let earliest = table
                .places
                .iter_mut()
                .filter_map(|place| Some((place.as_ref()?.due, place)))
                .min_by_key(|(due, _)| *due);
            let next = match earliest {
                Some((due, place)) if due <= now => match place.take() {
                    Some(held) => return Ok(held.redelivery),
                    None => Some(due),
                },
                earliest => earliest.map(|(due, _)| due),
            };
            table.sleeps_until = next.unwrap_or(Instant::MAX);
            table.woken = false;
            Err(next)
        })
    }

    /// Sleeps until `timer` fires (for ever if `None`), or until a claim due sooner than the
    /// instant [`next`](Self::next) planned wakes it. `run` passes a [`Timer`]; the loom
    /// models, whose clock stands still, pass none.
    async fn sleep(&self, mut timer: Option<impl Future<Output = ()> + Unpin>) {
        poll_fn(|cx| {
            if let Some(timer) = &mut timer {
                if Pin::new(timer).poll(cx).is_ready() {
                    return Poll::Ready(());
                }
            }
            let (poll, replaced) = self.table.with(|table| {
                if table.woken {
                    return (Poll::Ready(()), None);
                }
                match &table.waker {
                    Some(waker) if waker.will_wake(cx.waker()) => (Poll::Pending, None),
                    _ => (Poll::Pending, table.waker.replace(cx.waker().clone())),
                }
            });
            drop(replaced);
            poll
        })
        .await;
    }

    /// How many claims the table holds.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_embassy::Redeliveries;
    ///
    /// let redeliveries = Redeliveries::<2>::new();
    /// assert_eq!(redeliveries.len(), 0);
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.table
            .with(|table| table.places.iter().filter(|place| place.is_some()).count())
    }

    /// Whether the table holds no claim.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_embassy::Redeliveries;
    ///
    /// assert!(Redeliveries::<2>::new().is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many claims were released at once, without their delay, because all `N`
    /// places were taken.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    ///
    /// use tally_embassy::{Redeliveries, RedeliveryExt};
    /// use tally_queue::{AbandonPolicy, Backoff, Queue};
    ///
    /// static REDELIVERIES: Redeliveries<1> = Redeliveries::new();
    ///
    /// let queue = Queue::unbounded()
    ///     .with_abandon_policy(AbandonPolicy::redeliver(2).unwrap())
    ///     .with_redelivery_backoff(Backoff::fixed(Duration::from_secs(60)), &REDELIVERIES);
    /// queue.try_put("held").unwrap();
    /// queue.try_put("due at once").unwrap();
    /// drop(queue.try_get().unwrap()); // takes the only place
    /// drop(queue.try_get().unwrap()); // no place left: back in the queue now
    /// assert_eq!(REDELIVERIES.released_at_once(), 1);
    /// assert_eq!(*queue.try_get().unwrap(), "due at once");
    /// ```
    #[must_use]
    pub fn released_at_once(&self) -> u64 {
        self.table.with(|table| table.released_at_once)
    }
}

impl<const N: usize> Default for Redeliveries<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> fmt::Debug for Redeliveries<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redeliveries")
            .field("capacity", &N)
            .field("len", &self.len())
            .field("released_at_once", &self.released_at_once())
            .finish()
    }
}

/// Redeliveries on an embassy timer, for a [`Queue`] under
/// [`AbandonPolicy::Redeliver`](tally_queue::AbandonPolicy): the embassy form of the other
/// adapters' `with_redelivery_backoff`, with a [`Redeliveries`] table in place of a
/// spawned sleep per item.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
///
/// use futures_lite::future;
/// use tally_embassy::{Redeliveries, RedeliveryExt};
/// use tally_queue::{AbandonPolicy, Backoff, Queue};
///
/// static REDELIVERIES: Redeliveries<8> = Redeliveries::new();
///
/// let backoff = Backoff::exponential(Duration::from_millis(2), Duration::from_millis(50));
/// let queue = Queue::unbounded()
///     .with_abandon_policy(AbandonPolicy::redeliver(3).unwrap())
///     .with_redelivery_backoff(backoff, &REDELIVERIES);
/// queue.try_put("flaky").unwrap();
/// drop(queue.try_get().unwrap()); // a worker gave up on it: back in 2 ms
/// assert_eq!(queue.ledger().buffered, 1);
/// assert!(queue.try_get().is_err());
/// let again = future::block_on(future::or(
///     async { REDELIVERIES.run().await },
///     queue.get(),
/// ));
/// assert_eq!(again.unwrap().attempt(), 2);
/// ```
pub trait RedeliveryExt<T> {
    /// Makes each redelivery wait the delay `backoff` gives after the abandoned delivery
    /// (with the job's id as the jitter key, as [`RetryExt::retry_backoff`] does, rounded
    /// up to the next embassy tick), held in `redeliveries` until the task running
    /// [`Redeliveries::run`] releases it; returns the queue in an `Arc`. What the held
    /// item counts as, and what shutdowns do with it, is [`Queue::with_redelivery_delay`]'s
    /// contract; a full table releases at once ([`Redeliveries`]).
    ///
    /// [`RetryExt::retry_backoff`]: crate::RetryExt::retry_backoff
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    ///
    /// use embassy_time::Instant;
    /// use futures_lite::future;
    /// use tally_embassy::{Redeliveries, RedeliveryExt};
    /// use tally_queue::{AbandonPolicy, Backoff, Queue};
    ///
    /// static REDELIVERIES: Redeliveries<4> = Redeliveries::new();
    ///
    /// let queue = Queue::unbounded()
    ///     .with_abandon_policy(AbandonPolicy::redeliver(2).unwrap())
    ///     .with_redelivery_backoff(Backoff::fixed(Duration::from_millis(10)), &REDELIVERIES);
    /// queue.try_put(1).unwrap();
    /// let start = Instant::now();
    /// drop(queue.try_get().unwrap());
    /// future::block_on(future::or(async { REDELIVERIES.run().await }, async {
    ///     queue.get().await.unwrap().succeed();
    /// }));
    /// assert!(start.elapsed() >= embassy_time::Duration::from_millis(10));
    /// ```
    fn with_redelivery_backoff<const N: usize>(
        self,
        backoff: Backoff,
        redeliveries: &'static Redeliveries<N>,
    ) -> Arc<Queue<T>>;
}

impl<T: Send + 'static> RedeliveryExt<T> for Queue<T> {
    fn with_redelivery_backoff<const N: usize>(
        self,
        backoff: Backoff,
        redeliveries: &'static Redeliveries<N>,
    ) -> Arc<Queue<T>> {
        self.with_redelivery_delay(move |redelivery| {
            let delay = embassy_duration(redelivery.delay(&backoff));
            redeliveries.hold(redelivery, Instant::now().saturating_add(delay));
        })
    }
}
