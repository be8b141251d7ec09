//! The identity of one accepted item.

use core::fmt;

/// The identity of one accepted item, unique within its [`Queue`](crate::Queue).
///
/// A queue hands out ids from a 64-bit sequence that starts at 0, in the order it accepts
/// items. The id stays with the item for its whole life: through
/// [`Delivery::id`](crate::Delivery::id), a [`retry`](crate::Delivery::retry), and the
/// list returned by [`Queue::shutdown_now`](crate::Queue::shutdown_now).
///
/// Ids are contiguous: the `n`-th accepted item is `n - 1`, whatever the queue's bound,
/// journal or policy, and however many puts raced a shutdown (a refused put draws none).
/// A [`retry`](crate::Delivery::retry) or a redelivery keeps the id and draws no new one.
///
/// Order: on a queue bounded at up to 65,536 items without a journal, a put draws its id
/// and its place in one step, so fresh items come out in id order for any number of
/// producers; elsewhere, with several producers, two puts that race may enter the buffer
/// in the opposite order to their ids. An item that comes back for another attempt is
/// served ahead of the fresh backlog, so from then on a smaller id can come after larger
/// ones.
///
/// The sequence is a `u64`: at one put per nanosecond it would last 584 years, so it is
/// not checked for wrapping.
///
/// # Examples
///
/// ```
/// use tally_queue::Queue;
///
/// let queue = Queue::unbounded();
/// let first = queue.try_put("a").unwrap();
/// let second = queue.try_put("b").unwrap();
/// assert_eq!(first.get(), 0);
/// assert_eq!(second.get(), 1);
/// assert!(first < second);
/// assert_eq!(first.to_string(), "#0");
///
/// // A retried item keeps its id; the next get serves it.
/// queue.try_get().unwrap().retry().unwrap();
/// assert_eq!(queue.try_get().unwrap().id(), first);
/// assert_eq!(queue.try_get().unwrap().id(), second);
/// assert_eq!(queue.try_put("c").unwrap().get(), 2, "no id was used up");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JobId(u64);

impl JobId {
    /// Wraps a raw sequence number.
    #[inline]
    pub(crate) const fn new(raw: u64) -> Self {
        JobId(raw)
    }

    /// The id with sequence number `raw`, for code that keeps ids outside a [`Queue`]
    /// (a journal, a database, another process) and needs them back as `JobId`s.
    ///
    /// An id made this way names an item only in the queue that issued that number.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::JobId;
    ///
    /// let queue = tally_queue::Queue::unbounded();
    /// let id = queue.try_put("a").unwrap();
    /// assert_eq!(JobId::from_raw(id.get()), id);
    /// assert_eq!(JobId::from_raw(7).to_string(), "#7");
    /// ```
    ///
    /// [`Queue`]: crate::Queue
    #[inline]
    #[must_use]
    pub const fn from_raw(raw: u64) -> Self {
        JobId(raw)
    }

    /// The sequence number.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::unbounded();
    /// assert_eq!(queue.try_put(()).unwrap().get(), 0);
    /// ```
    #[inline]
    #[must_use]
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

impl From<JobId> for u64 {
    #[inline]
    fn from(id: JobId) -> u64 {
        id.0
    }
}
