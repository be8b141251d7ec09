//! [`Counter`]: the handle through which one named counter reports, or fails the latch by
//! being dropped.

use core::fmt;

use crate::error::Failure;
use crate::tracking::TrackingLatch;

/// The handle for one named counter of a [`TrackingLatch`].
///
/// [`report`](Self::report) counts it down; [`fail`](Self::fail) fails the latch naming it.
/// Dropped without either (its task returned early, or panicked and unwound), it fails the
/// latch with [`Failure::Abandoned`] naming this counter, so waiters never hang on a dead
/// counter. A drop after the latch opened or failed changes nothing.
///
/// Borrowed handles come from [`TrackingLatch::counter`]; `Counter<'static, E>` handles for
/// spawned tasks from [`TrackingLatch::counter_owned`].
///
/// # Examples
///
/// ```
/// use latch_core::{Failure, TrackingLatch};
///
/// let latch = TrackingLatch::<()>::new(["consumer", "http"]).unwrap();
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
/// assert!(matches!(failure, Failure::Abandoned { counter, panicking: true } if counter == "http"));
/// ```
pub struct Counter<'a, E> {
    latch: LatchRef<'a, E>,
    index: usize,
    /// Set once the handle has reported or failed, so dropping it does nothing.
    done: bool,
}

enum LatchRef<'a, E> {
    Borrowed(&'a TrackingLatch<E>),
    #[cfg(target_has_atomic = "ptr")]
    Owned(alloc::sync::Arc<TrackingLatch<E>>),
}

impl<'a, E> Counter<'a, E> {
    pub(crate) fn borrowed(latch: &'a TrackingLatch<E>, index: usize) -> Self {
        Self {
            latch: LatchRef::Borrowed(latch),
            index,
            done: false,
        }
    }

    #[cfg(target_has_atomic = "ptr")]
    pub(crate) fn owned(latch: alloc::sync::Arc<TrackingLatch<E>>, index: usize) -> Self {
        Self {
            latch: LatchRef::Owned(latch),
            index,
            done: false,
        }
    }

    fn latch(&self) -> &TrackingLatch<E> {
        match &self.latch {
            LatchRef::Borrowed(latch) => latch,
            #[cfg(target_has_atomic = "ptr")]
            LatchRef::Owned(latch) => latch,
        }
    }

    /// This counter's name.
    ///
    /// # Examples
    ///
    /// ```
    /// # use latch_core::TrackingLatch;
    /// let latch = TrackingLatch::<()>::new(["cache"]).unwrap();
    /// assert_eq!(latch.counter("cache").unwrap().name(), "cache");
    /// ```
    pub fn name(&self) -> &str {
        self.latch().name(self.index)
    }

    /// Reports: counts the latch down for this name. Returns whether it counted (`false` if
    /// the name had already reported through
    /// [`count_down_for`](TrackingLatch::count_down_for), or the latch failed).
    ///
    /// # Examples
    ///
    /// ```
    /// # use latch_core::TrackingLatch;
    /// let latch = TrackingLatch::<()>::new(["a"]).unwrap();
    /// assert!(latch.counter("a").unwrap().report());
    /// assert!(latch.is_open());
    /// ```
    pub fn report(mut self) -> bool {
        self.done = true;
        self.latch().report(self.index)
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
    /// # use latch_core::TrackingLatch;
    /// let latch = TrackingLatch::new(["db", "cache"]).unwrap();
    /// latch.counter("db").unwrap().fail("connection refused").unwrap();
    /// assert_eq!(
    ///     latch.failure().unwrap().to_string(),
    ///     "counter `db` failed: connection refused"
    /// );
    /// ```
    pub fn fail(mut self, error: E) -> Result<(), E> {
        self.done = true;
        let latch = self.latch();
        latch
            .fail_because(Failure::Failed {
                counter: Some(latch.name(self.index).clone()),
                error,
            })
            .map_err(Failure::into_error)
    }
}

impl<E> Drop for Counter<'_, E> {
    fn drop(&mut self) {
        let latch = self.latch();
        if self.done || latch.has_reported(self.index) {
            return;
        }
        #[cfg(feature = "std")]
        let panicking = std::thread::panicking();
        #[cfg(not(feature = "std"))]
        let panicking = false;
        // Refused if the latch already ended: then nobody is waiting on this counter.
        let _ = latch.fail_because(Failure::Abandoned {
            counter: latch.name(self.index).clone(),
            panicking,
        });
    }
}

impl<E> fmt::Debug for Counter<'_, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Counter")
            .field("name", &self.name())
            .finish_non_exhaustive()
    }
}
