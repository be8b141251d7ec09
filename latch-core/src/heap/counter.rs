//! [`Counter`]: the handle through which one named counter reports, or fails the latch by
//! being dropped.

use core::fmt;
use core::ops::Deref;

use crate::heap::error::Failure;
use crate::heap::tracking::TrackingLatch;

/// The handle for one named counter of a [`TrackingLatch`].
///
/// [`report`](Self::report) counts it down; [`fail`](Self::fail) fails the latch naming it.
/// Dropped without either (its task returned early, or panicked and unwound), it fails the
/// latch with [`Failure::Abandoned`] naming this counter, so waiters never hang on a dead
/// counter. A drop after the latch opened or failed changes nothing.
///
/// Borrowed handles come from [`TrackingLatch::counter`]; for spawned tasks,
/// [`TrackingLatch::counter_owned`] hands out an [`OwnedCounter`] instead.
///
/// # Examples
///
/// ```
/// use tally_latch::{Failure, TrackingLatch};
///
/// let latch = TrackingLatch::new(["consumer", "http"]).unwrap();
/// latch.counter("consumer").unwrap().report();
/// let http = latch.counter("http").unwrap();
/// let outcome = std::thread::scope(|s| {
///     s.spawn(move || {
///         let _http = http;
///         panic!("bind failed");
///     })
///     .join()
/// });
/// assert!(outcome.is_err());
/// let failure = latch.failure().unwrap();
/// # #[cfg(feature = "std")] // without `std`, `panicking` is always `false`
/// assert!(matches!(failure, Failure::Abandoned { counter, panicking: true } if counter == "http"));
/// assert_eq!(failure.counter(), Some("http"));
/// ```
pub struct Counter<'a, E> {
    slot: Slot<&'a TrackingLatch<E>>,
}

/// The handle for one named counter of a [`TrackingLatch`] in an
/// [`Arc`](alloc::sync::Arc): a [`Counter`] that holds a clone of the `Arc`, so it moves
/// into `'static` tasks (the queue's `Owned*` types have the same shape). It reports,
/// fails, and fails the latch when dropped without reporting, exactly as [`Counter`].
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use tally_latch::{Failure, TrackingLatch};
///
/// let latch = Arc::new(TrackingLatch::new(["worker"]).unwrap());
/// let worker = latch.counter_owned("worker").unwrap();
/// let outcome = std::thread::spawn(move || {
///     let _worker = worker;
///     panic!("worker crashed");
/// })
/// .join();
/// assert!(outcome.is_err());
/// # #[cfg(feature = "std")] // without `std`, `panicking` is always `false`
/// assert!(matches!(latch.failure(), Some(Failure::Abandoned { panicking: true, .. })));
/// assert_eq!(latch.failure().unwrap().counter(), Some("worker"));
/// ```
#[cfg(target_has_atomic = "ptr")]
pub struct OwnedCounter<E> {
    slot: Slot<alloc::sync::Arc<TrackingLatch<E>>>,
}

/// What both handles share: the latch (borrowed or in an `Arc`), the counter's index, and
/// whether it has reported or failed.
struct Slot<L>
where
    L: Deref,
    L::Target: Abandon,
{
    latch: L,
    index: usize,
    /// Set once the handle has reported or failed, so dropping it does nothing.
    done: bool,
}

impl<L> Drop for Slot<L>
where
    L: Deref,
    L::Target: Abandon,
{
    fn drop(&mut self) {
        if !self.done {
            self.latch.abandon(self.index);
        }
    }
}

/// Fails the latch for a handle dropped without reporting: a trait, so that `Slot` and its
/// `Drop` can name "a tracking latch of any error type" without an `E` parameter.
pub(crate) trait Abandon {
    fn abandon(&self, index: usize);
}

impl<E> Abandon for TrackingLatch<E> {
    fn abandon(&self, index: usize) {
        if self.has_reported(index) {
            return;
        }
        #[cfg(feature = "std")]
        let panicking = std::thread::panicking();
        #[cfg(not(feature = "std"))]
        let panicking = false;
        // Refused if the latch already ended: then nobody is waiting on this counter.
        let _ = self.fail_because(Failure::Abandoned {
            counter: self.name(index).clone(),
            panicking,
        });
    }
}

impl<'a, E> Counter<'a, E> {
    pub(crate) fn new(latch: &'a TrackingLatch<E>, index: usize) -> Self {
        Self {
            slot: Slot {
                latch,
                index,
                done: false,
            },
        }
    }

    /// This counter's name.
    ///
    /// # Examples
    ///
    /// ```
    /// # use tally_latch::TrackingLatch;
    /// let latch = TrackingLatch::new(["cache"]).unwrap();
    /// assert_eq!(latch.counter("cache").unwrap().name(), "cache");
    /// ```
    pub fn name(&self) -> &str {
        self.slot.latch.name(self.slot.index)
    }

    /// Reports: counts the latch down for this name. Returns whether it counted (`false` if
    /// the name had already reported through
    /// [`count_down_for`](TrackingLatch::count_down_for), or the latch failed).
    ///
    /// # Examples
    ///
    /// ```
    /// # use tally_latch::TrackingLatch;
    /// let latch = TrackingLatch::new(["a"]).unwrap();
    /// assert!(latch.counter("a").unwrap().report());
    /// assert!(latch.is_open());
    /// ```
    pub fn report(mut self) -> bool {
        self.slot.done = true;
        self.slot.latch.report(self.slot.index)
    }

    /// Fails the latch with `error`, naming this counter.
    ///
    /// # Errors
    ///
    /// Hands `error` back if the latch had already opened or failed.
    ///
    /// # Examples
    ///
    /// ```
    /// # use tally_latch::TrackingLatch;
    /// let latch = TrackingLatch::new_failable(["db", "cache"]).unwrap();
    /// latch.counter("db").unwrap().fail("connection refused").unwrap();
    /// assert_eq!(
    ///     latch.failure().unwrap().to_string(),
    ///     "counter `db` failed: connection refused"
    /// );
    /// ```
    pub fn fail(mut self, error: E) -> Result<(), E> {
        self.slot.done = true;
        self.slot.latch.counter_failed(self.slot.index, error)
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<E> OwnedCounter<E> {
    pub(crate) fn new(latch: alloc::sync::Arc<TrackingLatch<E>>, index: usize) -> Self {
        Self {
            slot: Slot {
                latch,
                index,
                done: false,
            },
        }
    }

    /// This counter's name.
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use tally_latch::TrackingLatch;
    /// let latch = Arc::new(TrackingLatch::new(["cache"]).unwrap());
    /// assert_eq!(latch.counter_owned("cache").unwrap().name(), "cache");
    /// ```
    pub fn name(&self) -> &str {
        self.slot.latch.name(self.slot.index)
    }

    /// Reports, as [`Counter::report`].
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use tally_latch::TrackingLatch;
    /// let latch = Arc::new(TrackingLatch::new(["a"]).unwrap());
    /// let a = latch.counter_owned("a").unwrap();
    /// assert!(std::thread::spawn(move || a.report()).join().unwrap());
    /// assert!(latch.is_open());
    /// ```
    pub fn report(mut self) -> bool {
        self.slot.done = true;
        self.slot.latch.report(self.slot.index)
    }

    /// Fails the latch with `error`, naming this counter, as [`Counter::fail`].
    ///
    /// # Errors
    ///
    /// Hands `error` back if the latch had already opened or failed.
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use tally_latch::TrackingLatch;
    /// let latch = Arc::new(TrackingLatch::new_failable(["db"]).unwrap());
    /// let db = latch.counter_owned("db").unwrap();
    /// std::thread::spawn(move || db.fail("refused").unwrap()).join().unwrap();
    /// assert_eq!(latch.failure().unwrap().to_string(), "counter `db` failed: refused");
    /// ```
    pub fn fail(mut self, error: E) -> Result<(), E> {
        self.slot.done = true;
        self.slot.latch.counter_failed(self.slot.index, error)
    }
}

impl<E> fmt::Debug for Counter<'_, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Counter")
            .field("name", &self.name())
            .finish_non_exhaustive()
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<E> fmt::Debug for OwnedCounter<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedCounter")
            .field("name", &self.name())
            .finish_non_exhaustive()
    }
}
