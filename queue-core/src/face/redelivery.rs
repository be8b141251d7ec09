//! [`Queue::with_redelivery_delay`]: redeliveries that wait for the caller's schedule (see
//! `fate/redelay.rs`).

use alloc::boxed::Box;
use alloc::sync::{Arc, Weak};

use crate::fate::redelay::{Redelay, Redelivery, Release};
use crate::queue::Queue;

impl<T: Send + 'static> Queue<T> {
    /// Makes redeliveries wait: under [`AbandonPolicy::Redeliver`](crate::AbandonPolicy),
    /// each delivery dropped unresolved (that has attempts left) holds its item back and
    /// calls `schedule` with a [`Redelivery`], the claim that lets the item go when it is
    /// released or dropped. Returns the queue in an `Arc`, which the claims point back to.
    ///
    /// The queue takes no time of its own: `schedule` decides when, typically by spawning
    /// a sleep on the runtime's timer that releases the claim (the adapters'
    /// `with_redelivery_backoff` do this with a [`Backoff`](crate::Backoff)). While held,
    /// the item:
    /// - counts as buffered in the [`ledger`](Queue::ledger) and in [`len`](Queue::len),
    ///   and [`join`](Queue::join) waits for it, as for any unfinished job;
    /// - keeps its attempt: its next delivery is the abandoned one's number plus one, and
    ///   `max_attempts` bounds them as without a delay (the last allowed delivery,
    ///   abandoned, becomes a dead letter at once, with no delay);
    /// - is handed back by [`shutdown_now`](Queue::shutdown_now) with the buffered items
    ///   (a claim released afterwards does nothing); a graceful
    ///   [`shutdown`](Queue::shutdown) keeps it held until its claim lets it go, and the
    ///   drain then delivers it, as redeliveries go on after a graceful shutdown under
    ///   this policy;
    /// - is never stranded: a claim dropped unreleased (a cancelled timer task, a runtime
    ///   shutting down, a `schedule` that panics or drops it) lets the item go at once.
    ///   Once the queue itself is dropped, held items are dropped with it, as buffered
    ///   items are.
    ///
    /// `schedule` runs on the thread that dropped the delivery, after the item is held and
    /// counted, with no lock of the queue held; it may release the claim at once. It runs
    /// inside the delivery's drop, also when a worker's panic unwinds it, so it should not
    /// panic: a panic there while another unwinds aborts the process, as any panic in a
    /// drop does then (outside an unwinding, the claim it held lets the item go). Under
    /// any other policy it is never called. Set the policy first: this consumes the queue.
    ///
    /// # Examples
    ///
    /// A schedule that waits on a thread (a runtime adapter spawns a timer task instead):
    ///
    /// ```
    /// use std::time::Duration;
    /// use tally_queue::{AbandonPolicy, Queue};
    ///
    /// let queue = Queue::unbounded()
    ///     .with_abandon_policy(AbandonPolicy::redeliver(3).unwrap())
    ///     .with_redelivery_delay(|redelivery| {
    ///         std::thread::spawn(move || {
    ///             std::thread::sleep(Duration::from_millis(5));
    ///             redelivery.release();
    ///         });
    ///     });
    /// queue.try_put("flaky").unwrap();
    /// drop(queue.get_blocking().unwrap()); // abandoned: back in 5 ms
    /// assert_eq!(queue.ledger().buffered, 1);
    /// let again = queue.get_blocking().unwrap();
    /// assert_eq!(again.attempt(), 2);
    /// again.succeed();
    /// queue.shutdown();
    /// assert!(queue.join_blocking().is_balanced());
    /// ```
    #[must_use = "the queue is returned in an `Arc`"]
    pub fn with_redelivery_delay(
        self,
        schedule: impl Fn(Redelivery) + Send + Sync + 'static,
    ) -> Arc<Self> {
        let mut queue = self;
        Arc::new_cyclic(move |weak: &Weak<Self>| {
            let weak = weak.clone();
            let release: Release = Arc::new(move |ticket| {
                if let Some(queue) = weak.upgrade() {
                    queue.steward.release(ticket);
                }
            });
            queue.steward.set_redelay(Redelay {
                release,
                schedule: Box::new(schedule),
            });
            queue
        })
    }
}
