//! A claimed counter: the across-processes form of [`tally_latch::Counter`].

pub(crate) mod error;

use alloc::boxed::Box;
use alloc::string::String;
use alloc::sync::Arc;
use core::fmt;

use crate::latch::counter::error::ReportError;
use crate::latch::engine::{Dropped, LatchEngine, Outcome};
use crate::server::error::Error;

/// One counter of a [`TrackingLatch`](crate::TrackingLatch), claimed by this process on a
/// lease, from [`TrackingLatch::claim`](crate::TrackingLatch::claim).
///
/// While the handle lives, the maintenance future
/// ([`TrackingLatch::maintain`](crate::TrackingLatch::maintain)) renews its lease, and no
/// other process can claim the counter. It ends in one of three ways:
///
/// - [`report`](Counter::report) counts the counter once; the last report opens the latch;
/// - [`fail`](Counter::fail) fails the latch naming it (the first failure wins);
/// - dropped unreported (an early return, a panic), it fails the latch naming itself, as
///   [`Failure::Abandoned`](tally_latch::Failure::Abandoned): `Drop` cannot await, so the
///   maintenance future sends it. If the process dies instead, nothing runs: once the
///   lease expires, the next sweep (by any waiter, or any maintenance future) fails the
///   latch naming the counter, or makes it claimable again, by the
///   [`OnExpiry`](crate::OnExpiry) policy.
///
/// # Examples
///
/// ```no_run
/// # async fn demo(latch: tally_redis::TrackingLatch) -> Result<(), Box<dyn std::error::Error>> {
/// let counter = latch.claim("migration").await?;
/// // ... run the migration ...
/// let left = counter.report().await?;
/// println!("{left} counters left");
/// # Ok(()) }
/// ```
#[must_use = "a counter dropped without reporting fails the latch"]
pub struct Counter {
    pub(crate) engine: Arc<LatchEngine>,
    pub(crate) name: String,
    pub(crate) holder: String,
    /// Cleared once the handle reported, failed, or handed itself back inside an error.
    pub(crate) armed: bool,
}

impl Counter {
    /// The counter's name.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(latch: tally_redis::TrackingLatch) {
    /// assert_eq!(latch.claim("db").await.unwrap().name(), "db");
    /// # }
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// This claim's holder id (process id, clock and a sequence number), as events and
    /// [`Reason::LeaseExpired`](crate::Reason::LeaseExpired) name it.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(latch: tally_redis::TrackingLatch) {
    /// println!("held by {}", latch.claim("db").await.unwrap().holder());
    /// # }
    /// ```
    pub fn holder(&self) -> &str {
        &self.holder
    }

    /// Reports: counts the counter once. Returns how many counters are left (0: this
    /// report opened the latch).
    ///
    /// A report from a handle whose lease expired still counts if no sweep has acted on
    /// the expiry yet (nobody has seen the counter fail); after a sweep it is refused as
    /// [`ReportError::Stale`].
    ///
    /// # Errors
    ///
    /// [`ReportError::Failed`] if the latch had failed (not counted),
    /// [`ReportError::Stale`] if this handle lost its lease, [`ReportError::Gone`] if the
    /// latch's keys are gone, or [`ReportError::Redis`] with the handle back: reporting
    /// again is safe.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(latch: tally_redis::TrackingLatch) {
    /// let mut counter = latch.claim("db").await.unwrap();
    /// loop {
    ///     match counter.report().await {
    ///         Ok(_) => break,
    ///         Err(tally_redis::ReportError::Redis { counter: back, .. }) => counter = *back,
    ///         Err(other) => panic!("{other}"),
    ///     }
    /// }
    /// # }
    /// ```
    pub async fn report(mut self) -> Result<u64, ReportError> {
        match self.engine.report(&self.name, &self.holder).await {
            Ok(ended) => {
                self.armed = false;
                self.engine.release(&self.name, &self.holder);
                match ended {
                    Outcome::Counted(left) | Outcome::Repeat(left) => Ok(left),
                    Outcome::Stale => Err(ReportError::Stale),
                    Outcome::Failed(failure) => Err(ReportError::Failed(failure)),
                    Outcome::Ended => Err(ReportError::Stale),
                }
            }
            Err(Error::Gone) => {
                self.armed = false;
                self.engine.release(&self.name, &self.holder);
                Err(ReportError::Gone)
            }
            Err(error) => Err(ReportError::Redis {
                counter: Box::new(self),
                error,
            }),
        }
    }

    /// Fails the latch naming this counter, with `message`. Whether this was the first
    /// failure (`false`: the latch had already failed or opened).
    ///
    /// # Errors
    ///
    /// [`ReportError::Stale`] if this handle lost its lease, or [`ReportError::Redis`]
    /// with the handle back.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(latch: tally_redis::TrackingLatch) {
    /// let counter = latch.claim("cache").await.unwrap();
    /// assert!(counter.fail("cold cache").await.unwrap());
    /// # }
    /// ```
    pub async fn fail(mut self, message: &str) -> Result<bool, ReportError> {
        match self
            .engine
            .fail(&self.name, &self.holder, "error", message, false)
            .await
        {
            Ok(ended) => {
                self.armed = false;
                self.engine.release(&self.name, &self.holder);
                match ended {
                    Outcome::Counted(_) => Ok(true),
                    Outcome::Ended | Outcome::Failed(_) | Outcome::Repeat(_) => Ok(false),
                    Outcome::Stale => Err(ReportError::Stale),
                }
            }
            Err(Error::Gone) => {
                self.armed = false;
                self.engine.release(&self.name, &self.holder);
                Err(ReportError::Gone)
            }
            Err(error) => Err(ReportError::Redis {
                counter: Box::new(self),
                error,
            }),
        }
    }
}

impl Drop for Counter {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        self.engine.release(&self.name, &self.holder);
        self.engine.local().dropped.push(Dropped {
            name: core::mem::take(&mut self.name),
            holder: core::mem::take(&mut self.holder),
            panicking: std::thread::panicking(),
        });
        self.engine.wake.notify(1);
    }
}

impl fmt::Debug for Counter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Counter")
            .field("name", &self.name)
            .field("holder", &self.holder)
            .finish_non_exhaustive()
    }
}
