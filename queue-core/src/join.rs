//! The future returned by [`Queue::join`].

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use crate::ledger::Ledger;
use crate::queue::Queue;
use crate::wait::{Sleep, Wait};

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
    queue: &'a Queue<T>,
    wait: Wait,
}

impl<'a, T> Join<'a, T> {
    pub(crate) fn new(queue: &'a Queue<T>) -> Self {
        Join {
            queue,
            wait: Wait::default(),
        }
    }

    /// The queue this join waits on.
    pub(crate) fn queue(&self) -> &'a Queue<T> {
        self.queue
    }

    #[inline]
    fn poll_with(&mut self, sleep: &mut Sleep<'_, '_>) -> Poll<Ledger> {
        let queue = self.queue;
        // Level-triggered: the count itself is checked after every wake-up.
        self.wait
            .poll(queue.joiners(), sleep, |turn| settled(queue, turn))
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
        let queue = self.queue;
        if let Some(ledger) = self
            .wait
            .last_try(queue.joiners(), |turn| settled(queue, turn))
        {
            return Ok(ledger);
        }
        let ledger = queue.ledger();
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
fn settled<T>(queue: &Queue<T>, turn: bool) -> Option<Ledger> {
    let ledger = queue.is_settled().then(|| queue.ledger());
    if ledger.is_some() && turn {
        queue.joiners().turns().redeem();
    }
    ledger
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
        self.wait.release(|| self.queue.joiners());
    }
}

impl<T> fmt::Debug for Join<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Join { .. }")
    }
}
