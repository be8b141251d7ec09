//! Shutting down: graceful, immediate (the drained items come back), and asking the work
//! in flight to stop.

use alloc::vec::Vec;

use crate::job_id::JobId;
use crate::queue::Queue;

impl<T> Queue<T> {
    /// Shuts the queue down gracefully: puts are refused from now on (with their item,
    /// including puts waiting on a full queue, which wake), buffered items stay available,
    /// and gets return [`GetError::ShutDown`](crate::GetError::ShutDown) once the buffer is
    /// empty. Items in flight still have to be resolved.
    ///
    /// Idempotent; returns whether this call did the shutting down.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::Queue;
    ///
    /// let queue = Queue::unbounded();
    /// queue.try_put(1).unwrap();
    /// assert!(queue.shutdown());
    /// assert!(!queue.shutdown());
    /// assert!(queue.try_put(2).unwrap_err().is_shut_down());
    /// assert_eq!(queue.try_get().unwrap().succeed(), 1); // still available
    /// assert!(queue.try_get().is_err());
    /// ```
    pub fn shutdown(&self) -> bool {
        self.steward.shutdown()
    }

    /// Shuts the queue down immediately: as [`shutdown`](Queue::shutdown), and also drains
    /// the buffer, returning the drained items with their ids. Each is recorded as
    /// discarded. Items in flight are untouched and still have to be resolved.
    ///
    /// A getter racing the drain either takes an item (it is then in flight) or the drain
    /// returns it: each item leaves the buffer exactly once. Calling it after a graceful
    /// shutdown still drains.
    ///
    /// (CPython's `shutdown(immediate=True)` drops the drained items; they come back here
    /// so the caller can reconcile them.)
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::Queue;
    ///
    /// let queue = Queue::unbounded();
    /// let a = queue.try_put("a").unwrap();
    /// let b = queue.try_put("b").unwrap();
    /// assert_eq!(queue.shutdown_now(), vec![(a, "a"), (b, "b")]);
    /// assert_eq!(queue.ledger().discarded, 2);
    /// assert!(queue.shutdown_now().is_empty());
    /// ```
    pub fn shutdown_now(&self) -> Vec<(JobId, T)> {
        self.steward.shutdown_now()
    }

    /// Aborts all work: shuts down immediately, draining the buffer as
    /// [`shutdown_now`](Queue::shutdown_now) does (and returning the same thing: the
    /// drained items with their ids, each recorded as discarded), then requests
    /// cancellation of the deliveries in flight as
    /// [`cancel_in_flight`](Queue::cancel_in_flight) does.
    ///
    /// In-flight deliveries still have to end; [`join`](Queue::join) waits for them, and
    /// their handlers see [`Delivery::is_cancelled`].
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_lite::future::block_on;
    /// use tally_queue::Queue;
    ///
    /// let queue = Queue::unbounded();
    /// queue.try_put("running").unwrap();
    /// let waiting = queue.try_put("waiting").unwrap();
    /// let running = queue.try_get().unwrap();
    /// assert_eq!(queue.abort(), vec![(waiting, "waiting")]);
    /// block_on(running.cancelled());
    /// running.uncertain();
    /// let ledger = block_on(queue.join());
    /// assert_eq!((ledger.uncertain, ledger.discarded), (1, 1));
    /// ```
    ///
    /// [`Delivery::is_cancelled`]: crate::Delivery::is_cancelled
    pub fn abort(&self) -> Vec<(JobId, T)> {
        let drained = self.shutdown_now();
        self.cancel_in_flight();
        drained
    }

    /// Requests cooperative cancellation of the work in flight: every [`Delivery`] (and
    /// [`OwnedDelivery`]) then reports
    /// [`is_cancelled`](crate::Delivery::is_cancelled), and its
    /// [`cancelled`](crate::Delivery::cancelled) future resolves.
    ///
    /// A request, never a forced ending: each delivery still ends as its handler decides
    /// (typically [`uncertain`](crate::Delivery::uncertain) or
    /// [`reject`](crate::Delivery::reject), or a [`retry`](crate::Delivery::retry)), and
    /// until then counts as in flight. The buffer and admission are untouched: this is not
    /// a shutdown (for both at once, see [`abort`](Queue::abort)).
    ///
    /// The request is permanent: it covers the deliveries in flight now and every delivery
    /// handed out later (an item still buffered, a retried one), which see it at once.
    /// Every waiting `cancelled` future is woken, even if some waker panics (the first
    /// panic then propagates, after every waiter was woken).
    ///
    /// Idempotent; returns whether this call made the request.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put("running").unwrap();
    /// queue.try_put("later").unwrap();
    /// let running = queue.try_get().unwrap();
    /// assert!(!running.is_cancelled());
    /// assert!(queue.cancel_in_flight());
    /// assert!(!queue.cancel_in_flight());
    /// assert!(running.is_cancelled());
    /// // Handed out after the request: it sees it at once.
    /// assert!(queue.try_get().unwrap().is_cancelled());
    /// assert!(!queue.is_shut_down());
    /// ```
    ///
    /// [`Delivery`]: crate::Delivery
    /// [`OwnedDelivery`]: crate::OwnedDelivery
    pub fn cancel_in_flight(&self) -> bool {
        self.steward.cancel_in_flight()
    }

    /// Whether cancellation of in-flight work was requested
    /// ([`cancel_in_flight`](Queue::cancel_in_flight) or [`abort`](Queue::abort)).
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::<u8>::unbounded();
    /// assert!(!queue.is_cancel_requested());
    /// queue.cancel_in_flight();
    /// assert!(queue.is_cancel_requested());
    /// ```
    #[must_use]
    pub fn is_cancel_requested(&self) -> bool {
        self.steward.cancellation().is_requested()
    }

    /// Whether the queue was shut down (either way).
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::<u8>::unbounded();
    /// assert!(!queue.is_shut_down());
    /// queue.shutdown();
    /// assert!(queue.is_shut_down());
    /// ```
    #[must_use]
    pub fn is_shut_down(&self) -> bool {
        self.steward.raw().is_shut_down()
    }
}
