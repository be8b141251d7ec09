//! The items the queue gave up delivering, and how often it delivered again.

use alloc::vec::Vec;

use crate::fate::dead_letter::DeadLetter;
use crate::queue::Queue;

impl<T> Queue<T> {
    /// Takes the dead letters kept so far (oldest first): items whose last allowed
    /// delivery was abandoned, or that were abandoned after an immediate shutdown, with
    /// their ids, attempts and reason. Always empty under [`AbandonPolicy::Abandon`].
    ///
    /// [`shutdown_now`](Queue::shutdown_now) returns the buffered items; the dead letters
    /// stay here, for this call (after `join` returns, every one is here).
    ///
    /// Memory: each dead letter holds its item until taken, so the list grows by one entry
    /// per dead-lettered id and is bounded only by the number of accepted ids. Nothing is
    /// dropped or refused past any size: take them regularly (or after `join`). Each take
    /// allocates one `Vec` of the letters taken.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{AbandonPolicy, DeadReason, Queue};
    ///
    /// let queue = Queue::unbounded().with_abandon_policy(AbandonPolicy::redeliver(1).unwrap());
    /// queue.try_put(1).unwrap();
    /// drop(queue.try_get().unwrap());
    /// let dead = queue.take_dead_letters();
    /// assert_eq!(dead.len(), 1);
    /// assert_eq!(dead[0].reason, DeadReason::Exhausted { panicking: false });
    /// assert!(queue.take_dead_letters().is_empty());
    /// assert_eq!(queue.ledger().abandoned, 1);
    /// ```
    ///
    /// [`AbandonPolicy::Abandon`]: crate::AbandonPolicy::Abandon
    pub fn take_dead_letters(&self) -> Vec<DeadLetter<T>> {
        self.steward.take_dead_letters()
    }

    /// How many dead letters wait for [`take_dead_letters`](Queue::take_dead_letters).
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::<u8>::unbounded();
    /// assert_eq!(queue.dead_letters(), 0);
    /// ```
    #[must_use]
    pub fn dead_letters(&self) -> usize {
        self.steward.dead_letters()
    }

    /// How many times an abandoned delivery was put back for another attempt, under
    /// [`AbandonPolicy::Redeliver`]. Outside the [`Ledger`], whose identity counts each id
    /// once.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{AbandonPolicy, Queue};
    ///
    /// let queue = Queue::unbounded().with_abandon_policy(AbandonPolicy::redeliver(3).unwrap());
    /// queue.try_put(()).unwrap();
    /// drop(queue.try_get().unwrap());
    /// drop(queue.try_get().unwrap());
    /// assert_eq!(queue.redeliveries(), 2);
    /// ```
    ///
    /// [`AbandonPolicy::Redeliver`]: crate::AbandonPolicy::Redeliver
    /// [`Ledger`]: crate::Ledger
    #[must_use]
    pub fn redeliveries(&self) -> u64 {
        self.steward.redeliveries()
    }
}
