//! [`ShutdownUntil`]: drain or abort, decided by a deadline.

use alloc::vec::Vec;
use core::fmt;
use core::future::{Future, Ready};
use core::pin::Pin;
use core::task::{Context, Poll};

use pin_project_lite::pin_project;

use crate::face::join::Join;
use crate::fate::Steward;
use crate::job_id::JobId;
use crate::ledger::Ledger;
use crate::queue::Queue;

impl<T> Queue<T> {
    /// Drain or abort, decided by a deadline: shuts down gracefully, waits for every
    /// accepted item to end, and if `deadline` (any future) completes first, shuts down
    /// immediately, hands the drained items back and requests cancellation of the work in
    /// flight ([`abort`](Queue::abort)). With a grace period
    /// ([`with_grace`](ShutdownUntil::with_grace)), it then waits for that work to end
    /// until the grace period is over; without one it reports at once. The report
    /// ([`Closed`](crate::Closed)) names the ids still in flight, if a journal keeps them.
    ///
    /// The graceful shutdown happens on the first poll. Cancellation is a request: work
    /// still in flight when the report is made shows as `in_flight` in its ledger and
    /// must still end.
    ///
    /// # Cancel safety
    ///
    /// Dropped after its first poll, the queue stays shut down gracefully.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tally_queue::{Queue, Record};
    ///
    /// let record = Arc::new(Record::new());
    /// let queue = Queue::unbounded().with_journal(Arc::clone(&record));
    /// queue.try_put(1).unwrap();
    /// queue.try_get().unwrap().succeed();
    /// let closed = futures_lite::future::block_on(queue.shutdown_until(std::future::pending::<()>()));
    /// assert!(closed.drained_in_time);
    /// assert_eq!(closed.ledger.succeeded, 1);
    ///
    /// // Past the deadline, a handler that ignores cancellation is named in the report.
    /// let queue = Queue::unbounded().with_journal(Arc::clone(&record));
    /// let stuck = queue.try_put(2).unwrap();
    /// let job = queue.try_get().unwrap();
    /// let closed = futures_lite::future::block_on(queue.shutdown_until(async {}));
    /// assert!(!closed.drained_in_time && job.is_cancelled());
    /// assert_eq!(closed.in_flight_ids, Some(vec![stuck]));
    /// job.uncertain();
    /// ```
    pub fn shutdown_until<D: Future>(&self, deadline: D) -> ShutdownUntil<'_, T, D> {
        ShutdownUntil::new(&self.steward, deadline)
    }
}

/// How [`Queue::shutdown_until`](crate::Queue::shutdown_until) ended.
///
/// # Examples
///
/// ```
/// use tally_queue::Queue;
///
/// let queue = Queue::unbounded();
/// queue.try_put("never taken").unwrap();
/// let closed = futures_lite::future::block_on(queue.shutdown_until(async {}));
/// assert!(!closed.drained_in_time);
/// assert_eq!(closed.returned.len(), 1);
/// assert_eq!(closed.ledger.discarded, 1);
/// assert_eq!(closed.in_flight_ids, Some(vec![]));
/// ```
#[non_exhaustive]
pub struct Closed<T> {
    /// The ledger when the policy finished: settled if the drain finished in time;
    /// otherwise deliveries still in flight at the end of the grace period show as
    /// `in_flight`, and must still end.
    pub ledger: Ledger,
    /// The items the immediate shutdown drained and handed back, with their ids; empty if
    /// the drain finished in time.
    pub returned: Vec<(JobId, T)>,
    /// Whether every accepted item ended before the deadline. When `false`, cancellation
    /// of the work in flight was requested at the deadline.
    pub drained_in_time: bool,
    /// The ids of the deliveries still in flight when the policy finished, in id order:
    /// empty if none was. The queue keeps no per-job state of its own (it would cost every
    /// get), so the ids come from its [`Journal`](crate::Journal)'s
    /// [`in_flight_ids`](crate::Journal::in_flight_ids), which [`Record`](crate::Record) answers.
    /// `None` if work was still in flight and no installed journal keeps ids; the ledger's
    /// `in_flight` then says how many.
    pub in_flight_ids: Option<Vec<JobId>>,
}

impl<T> fmt::Debug for Closed<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Closed")
            .field("ledger", &self.ledger)
            .field("returned", &self.returned.len())
            .field("drained_in_time", &self.drained_in_time)
            .field("in_flight_ids", &self.in_flight_ids)
            .finish()
    }
}

pin_project! {
    /// The future returned by [`Queue::shutdown_until`](crate::Queue::shutdown_until):
    /// drain until the deadline; then discard the buffer and request cancellation of the
    /// work in flight; then wait out the grace period ([`with_grace`](Self::with_grace);
    /// none by default) for that work to end; then report what is still in flight, by id.
    ///
    /// # Cancel safety
    ///
    /// Dropped after its first poll, the queue stays shut down gracefully (and, past the
    /// deadline, shut down immediately with cancellation requested); dropped before, it
    /// changes nothing. Items drained by the immediate shutdown are dropped with it.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::<u8>::unbounded();
    /// let closing = queue.shutdown_until(async {});
    /// assert_eq!(format!("{closing:?}"), "ShutdownUntil { .. }");
    /// assert!(futures_lite::future::block_on(closing).drained_in_time);
    /// ```
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct ShutdownUntil<'a, T, D, G = Ready<()>> {
        join: Join<'a, T>,
        stage: Stage<T>,
        #[pin]
        deadline: D,
        #[pin]
        grace: G,
    }
}

/// Where the policy is.
enum Stage<T> {
    /// Not polled yet: nothing has changed.
    Idle,
    /// Shut down gracefully; draining until the deadline.
    Draining,
    /// Past the deadline: the buffer was discarded and cancellation requested; waiting
    /// out the grace period. Holds the discarded items until the report.
    Grace(Vec<(JobId, T)>),
    /// The report was handed out.
    Done,
}

impl<'a, T, D> ShutdownUntil<'a, T, D> {
    pub(crate) fn new(steward: &'a Steward<T>, deadline: D) -> Self {
        Self {
            join: Join::new(steward),
            stage: Stage::Idle,
            deadline,
            grace: core::future::ready(()),
        }
    }
}

impl<'a, T, D, G> ShutdownUntil<'a, T, D, G> {
    /// Sets the grace period: once the deadline has passed, the buffer is discarded and
    /// cancellation requested, the policy waits until `grace` (any future) completes for
    /// the work in flight to end, then reports what is still in flight.
    ///
    /// `grace` is first polled only after the deadline. A timer that starts when it is
    /// created should therefore end at the deadline plus the grace period (the adapters'
    /// `shutdown_timeout_with_grace` does that); an `async` block starts its timer only
    /// when first polled.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_lite::future::block_on;
    /// use tally_queue::Queue;
    ///
    /// let queue = Queue::unbounded();
    /// queue.try_put("running").unwrap();
    /// let running = queue.try_get().unwrap();
    /// let closing = queue.shutdown_until(async {}).with_grace(async {
    ///     // The handler sees the request during the grace period, and ends.
    ///     assert!(running.is_cancelled());
    ///     running.uncertain();
    /// });
    /// let closed = block_on(closing);
    /// assert!(!closed.drained_in_time);
    /// assert_eq!(closed.ledger.uncertain, 1);
    /// assert_eq!(closed.in_flight_ids, Some(vec![]));
    /// ```
    pub fn with_grace<G2: Future>(self, grace: G2) -> ShutdownUntil<'a, T, D, G2> {
        ShutdownUntil {
            join: self.join,
            stage: self.stage,
            deadline: self.deadline,
            grace,
        }
    }
}

impl<T, D: Future, G: Future> Future for ShutdownUntil<'_, T, D, G> {
    type Output = Closed<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Closed<T>> {
        let mut this = self.project();
        let steward = this.join.steward();
        if let Stage::Idle = this.stage {
            *this.stage = Stage::Draining;
            steward.shutdown();
        }
        if let Stage::Draining = this.stage {
            if let Poll::Ready(ledger) = Pin::new(&mut *this.join).poll(cx) {
                *this.stage = Stage::Done;
                return Poll::Ready(Closed::in_time(ledger));
            }
            if this.deadline.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            // The deadline's poll may have ended the last job: check once more (this also
            // gives the join's registration up).
            if let Ok(ledger) = this.join.last_try() {
                *this.stage = Stage::Done;
                return Poll::Ready(Closed::in_time(ledger));
            }
            let returned = steward.shutdown_now();
            steward.cancel_in_flight();
            *this.stage = Stage::Grace(returned);
        }
        let Stage::Grace(_) = this.stage else {
            panic!("`ShutdownUntil` polled after it completed");
        };
        // The grace period: the cancelled work may end at any time, the join sees it.
        if Pin::new(&mut *this.join).poll(cx).is_pending() {
            if this.grace.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            // As above: the grace's poll may have ended the last job. The report below
            // reads the queue as it is now either way.
            let _ = this.join.last_try();
        }
        let Stage::Grace(returned) = core::mem::replace(this.stage, Stage::Done) else {
            unreachable!("checked above");
        };
        // A drain that the abort itself finished (nothing was in flight) still counts as
        // not in time: the returned items were never processed. The report's ids agree
        // with its ledger (see `Steward::report`).
        let (ledger, in_flight_ids) = steward.report();
        Poll::Ready(Closed {
            ledger,
            returned,
            drained_in_time: false,
            in_flight_ids,
        })
    }
}

impl<T> Closed<T> {
    fn in_time(ledger: Ledger) -> Self {
        Closed {
            ledger,
            returned: Vec::new(),
            drained_in_time: true,
            in_flight_ids: Some(Vec::new()),
        }
    }
}

impl<T, D, G> fmt::Debug for ShutdownUntil<'_, T, D, G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ShutdownUntil { .. }")
    }
}
