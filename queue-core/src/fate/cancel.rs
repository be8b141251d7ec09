//! Cooperative cancellation of in-flight work: a sticky request flag and the waiters of
//! [`Cancelled`].
//!
//! A request is a fact about the queue, not about particular deliveries: once made, it
//! holds for the rest of the queue's life, so every delivery sees it, the ones in flight
//! when it was made and the ones handed out afterwards (from items still buffered after a
//! graceful shutdown, or from retries). That is what lets a delivery handed out after the
//! request see it at once, with no race between "handed out" and "requested": there is
//! nothing per delivery to miss.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use crate::sync::{AtomicUsize, Ordering};
use crate::wait::registration::{Sleep, Wait};
use crate::wait::waiters::{Class, Waiters};

/// `requested` value once cancellation was requested (it never goes back to 0).
const REQUESTED: usize = 1;

/// The queue's cancellation state: whether it was requested, and the [`Cancelled`] futures
/// waiting for it.
pub(crate) struct Cancellation {
    /// 0 until the first request, then [`REQUESTED`] for ever.
    requested: AtomicUsize,
    /// Waiting [`Cancelled`] futures; all woken by the first request.
    waiters: Waiters,
}

impl Cancellation {
    pub(crate) fn new(waiters: Waiters) -> Self {
        Cancellation {
            requested: AtomicUsize::new(0),
            waiters,
        }
    }

    /// Whether cancellation was requested.
    #[inline]
    pub(crate) fn is_requested(&self) -> bool {
        // Acquire: pairs with the AcqRel swap in `request`, so a handler that sees the
        // request also sees what the requester did before it.
        self.requested.load(Ordering::Acquire) == REQUESTED
    }

    /// Records the request and marks every waiting [`Cancelled`] notified, without running
    /// any user code. Returns `(first, signalled)`: whether this call made the request, and
    /// whether any waiter needs waking (the caller then runs the deferred wakers).
    #[inline]
    pub(crate) fn request(&self) -> (bool, bool) {
        // AcqRel: release the request (and the requester's earlier work) to handlers that
        // acquire it; acquire an earlier request so only one caller reports it as first.
        let before = self.requested.swap(REQUESTED, Ordering::AcqRel);
        // Terminal for this class: every waiter, whatever the counts say.
        let signalled = self.waiters.own().signal_all();
        (before != REQUESTED, signalled)
    }

    pub(crate) fn waiters(&self) -> Class<'_> {
        self.waiters.own()
    }
}

impl fmt::Debug for Cancellation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cancellation")
            .field("requested", &self.is_requested())
            .finish()
    }
}

/// The future returned by [`Delivery::cancelled`](crate::Delivery::cancelled) and
/// [`OwnedDelivery::cancelled`](crate::OwnedDelivery::cancelled): resolves once
/// cancellation of the queue's in-flight work was requested
/// ([`Queue::cancel_in_flight`](crate::Queue::cancel_in_flight) or
/// [`Queue::abort`](crate::Queue::abort)).
///
/// Made for `select!`: race it against the handler's work, and resolve the delivery as the
/// handler sees fit when it wins. It needs no runtime. Creating it allocates nothing; a
/// poll that finds cancellation already requested returns at once, allocating nothing; only
/// a poll that has to wait registers a listener.
///
/// # Cancel safety
///
/// Dropping it changes nothing (its registration, if any, is given up).
///
/// # Examples
///
/// ```
/// use futures_lite::future::{block_on, or};
/// use tally_queue::Queue;
///
/// let queue = Queue::unbounded();
/// queue.try_put(1).unwrap();
/// let job = queue.try_get().unwrap();
/// queue.cancel_in_flight();
/// let stopped = block_on(or(
///     async { job.cancelled().await; true },
///     async { std::future::pending::<bool>().await },
/// ));
/// assert!(stopped);
/// job.uncertain();
/// ```
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Cancelled<'a> {
    cancellation: &'a Cancellation,
    wait: Wait,
}

impl<'a> Cancelled<'a> {
    pub(crate) fn new(cancellation: &'a Cancellation) -> Self {
        Cancelled {
            cancellation,
            wait: Wait::default(),
        }
    }

    #[inline]
    fn poll_with(&mut self, sleep: &mut Sleep<'_, '_>) -> Poll<()> {
        let cancellation = self.cancellation;
        // Level-triggered: the flag itself is checked after every wake-up.
        self.wait.poll(cancellation.waiters(), sleep, |turn| {
            // An attempt uses its turn up (see `Registration::poll`).
            turn.redeem(cancellation.waiters().turns());
            cancellation.is_requested().then_some(())
        })
    }

    /// Blocks the thread until cancellation is requested.
    #[cfg(feature = "std")]
    pub(crate) fn wait(mut self) {
        while self.poll_with(&mut Sleep::Thread).is_pending() {}
    }
}

impl Future for Cancelled<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<()> {
        self.get_mut().poll_with(&mut Sleep::Task(context))
    }
}

// A future dropped while it waits counts its waiter out.
impl Drop for Cancelled<'_> {
    fn drop(&mut self) {
        self.wait.release(|| self.cancellation.waiters());
    }
}

impl fmt::Debug for Cancelled<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Cancelled { .. }")
    }
}

#[cfg(all(test, not(loom), feature = "std"))]
mod tests {
    use core::future::Future;
    use core::pin::pin;
    use core::task::{Context, Poll, Waker};

    use crate::Queue;

    #[test]
    fn the_first_request_counts_and_the_flag_stays() {
        let queue = Queue::<u8>::unbounded();
        let cancellation = queue.steward.cancellation();
        assert!(!cancellation.is_requested());
        assert_eq!(cancellation.request(), (true, false));
        assert!(cancellation.is_requested());
        assert_eq!(cancellation.request(), (false, false));
        assert!(cancellation.is_requested());
    }

    #[test]
    fn a_waiting_future_is_woken_and_counted_out() {
        let queue = Queue::<u8>::unbounded();
        let mut context = Context::from_waker(Waker::noop());
        let mut waiting = pin!(super::Cancelled::new(queue.steward.cancellation()));
        assert!(waiting.as_mut().poll(&mut context).is_pending());
        let (first, signalled) = queue.steward.cancellation().request();
        assert!(first && signalled);
        assert_eq!(waiting.as_mut().poll(&mut context), Poll::Ready(()));
        // Nobody is registered any more: a second request signals nobody.
        assert_eq!(queue.steward.cancellation().request(), (false, false));
    }

    #[test]
    fn the_blocking_form_returns_once_requested() {
        let queue = Queue::<u8>::unbounded();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| super::Cancelled::new(queue.steward.cancellation()).wait());
            queue.steward.cancellation().request();
            queue.steward.raw().wake_signalled();
            waiter.join().unwrap();
        });
    }
}
