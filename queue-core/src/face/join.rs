//! The future returned by [`Queue::join`].

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use crate::error::JoinTimedOut;
use crate::fate::Steward;
use crate::ledger::Ledger;
use crate::queue::Queue;
use crate::wait::deadline::{Operation, Until};
use crate::wait::registration::{Sleep, Wait};
use crate::wait::turn::Turn;

impl<T> Queue<T> {
    /// Waits until every accepted item has ended (resolved, abandoned or discarded), then
    /// returns a ledger snapshot.
    ///
    /// Level-triggered: it checks the count itself after every wake-up and returns only
    /// when it saw zero; at zero it returns on the first poll. Puts that land after the
    /// zero may show in the returned ledger.
    ///
    /// A graceful shutdown does not end `join` by itself: items still buffered or in flight
    /// keep it waiting. An immediate shutdown ends it if the drain leaves nothing in flight.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_lite::future::block_on;
    ///
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put(1).unwrap();
    /// queue.try_get().unwrap().reject();
    /// let ledger = block_on(queue.join());
    /// assert_eq!((ledger.succeeded, ledger.rejected), (0, 1));
    /// ```
    pub fn join(&self) -> Join<'_, T> {
        Join::new(&self.steward)
    }

    /// As [`join`](Queue::join), blocking the thread.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put(1).unwrap();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| queue.get_blocking().unwrap().succeed());
    ///     assert_eq!(queue.join_blocking().succeeded, 1);
    /// });
    /// ```
    #[cfg(feature = "std")]
    pub fn join_blocking(&self) -> Ledger {
        self.join().wait()
    }

    /// As [`join_blocking`](Queue::join_blocking), giving up after `timeout`.
    ///
    /// The count is checked once more after the timeout, so work that ended while the
    /// thread slept is reported as settled, not as a timeout.
    ///
    /// # Errors
    ///
    /// [`JoinTimedOut`](crate::JoinTimedOut), holding the ledger at the timeout, if items
    /// were still unfinished then.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put(1).unwrap();
    /// let held = queue.try_get().unwrap();
    /// let late = queue.join_blocking_timeout(Duration::from_millis(10)).unwrap_err();
    /// assert_eq!(late.ledger().in_flight, 1);
    /// held.succeed();
    /// assert_eq!(queue.join_blocking_timeout(Duration::from_millis(10)).unwrap().succeeded, 1);
    /// ```
    #[cfg(feature = "std")]
    pub fn join_blocking_timeout(
        &self,
        timeout: core::time::Duration,
    ) -> Result<Ledger, crate::JoinTimedOut> {
        crate::wait::park::block_for(self.join(), timeout)
    }

    /// Like [`join`](Self::join), but gives up when `deadline` (any future) completes first.
    ///
    /// # Errors
    ///
    /// [`JoinTimedOut`](crate::JoinTimedOut), holding the ledger at the deadline, if items
    /// were still unfinished then.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put(1).unwrap();
    /// let held = queue.try_get().unwrap();
    /// let err = futures_lite::future::block_on(queue.join_until(async {})).unwrap_err();
    /// assert_eq!(err.ledger().in_flight, 1);
    /// held.succeed();
    /// assert!(futures_lite::future::block_on(queue.join_until(async {})).is_ok());
    /// ```
    pub fn join_until<D: Future>(&self, deadline: D) -> Until<Join<'_, T>, D> {
        Until::new(self.join(), deadline)
    }
}

/// The future returned by [`Queue::join`]: resolves to a [`Ledger`] once every
/// accepted item has ended.
///
/// # Examples
///
/// ```
/// let queue = tally_queue::Queue::<u8>::unbounded();
/// let join: tally_queue::futures::Join<'_, u8> = queue.join();
/// assert_eq!(futures_lite::future::block_on(join).accepted, 0);
/// ```
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Join<'a, T> {
    steward: &'a Steward<T>,
    wait: Wait,
}

impl<'a, T> Join<'a, T> {
    pub(crate) fn new(steward: &'a Steward<T>) -> Self {
        Join {
            steward,
            wait: Wait::default(),
        }
    }

    /// The queue this join waits on.
    pub(crate) fn steward(&self) -> &'a Steward<T> {
        self.steward
    }

    #[inline]
    fn poll_with(&mut self, sleep: &mut Sleep<'_, '_>) -> Poll<Ledger> {
        let steward = self.steward;
        // Level-triggered: the count itself is checked after every wake-up.
        self.wait.poll(steward.raw().joiners(), sleep, |turn| {
            settled(steward, turn)
        })
    }

    /// Blocks the thread until every accepted item has ended.
    #[cfg(feature = "std")]
    pub(crate) fn wait(mut self) -> Ledger {
        loop {
            if let Poll::Ready(ledger) = self.poll_with(&mut Sleep::Thread) {
                return ledger;
            }
        }
    }

    /// The deadline fired: checks once more, then gives the registration up.
    ///
    /// `Ok` if nothing is unfinished, or if the ledger read after the failed check already
    /// shows nothing buffered or in flight (the buffer's own count of unfinished items, which
    /// a retry in progress never reads low, unlike `accepted`); otherwise `Err` with that
    /// ledger, which then shows at least one item buffered or in flight.
    pub(crate) fn last_try(&mut self) -> Result<Ledger, Ledger> {
        let steward = self.steward;
        if let Some(ledger) = self
            .wait
            .last_try(steward.raw().joiners(), |turn| settled(steward, turn))
        {
            return Ok(ledger);
        }
        let ledger = steward.ledger();
        if ledger.buffered + ledger.in_flight == 0 {
            Ok(ledger)
        } else {
            Err(ledger)
        }
    }
}

/// The ledger if nothing is unfinished. A joiner woken by the settling notification holds
/// a turn (every notification grants one), which the answer uses up.
#[inline]
fn settled<T>(steward: &Steward<T>, turn: &mut Turn<'_>) -> Option<Ledger> {
    // An attempt uses its turn up, settled or not (see `Registration::poll`).
    turn.redeem(steward.raw().joiners().turns());
    steward.raw().is_settled().then(|| steward.ledger())
}

impl<T> Future for Join<'_, T> {
    type Output = Ledger;

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Ledger> {
        self.get_mut().poll_with(&mut Sleep::Task(context))
    }
}

// A future dropped while it waits counts its waiter out.
impl<T> Drop for Join<'_, T> {
    fn drop(&mut self) {
        self.wait.release(|| self.steward.raw().joiners());
    }
}

impl<T> fmt::Debug for Join<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Join { .. }")
    }
}

impl<T> Operation for Join<'_, T> {
    type Timed = Result<Ledger, JoinTimedOut>;

    fn in_time(output: Ledger) -> Self::Timed {
        Ok(output)
    }

    fn timed_out(&mut self) -> Self::Timed {
        self.last_try().map_err(|ledger| JoinTimedOut { ledger })
    }
}
