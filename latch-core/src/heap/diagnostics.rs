//! [`CountDownEvent`]: what a tracking latch reports about each count-down.

/// One count-down of a [`TrackingLatch`](crate::TrackingLatch), as seen by its
/// [`on_count_down`](crate::TrackingLatch::on_count_down) observer and, under the `tracing`
/// feature, as a `tracing` event (`DEBUG` per count-down, `INFO` when the latch opens,
/// target `tally_latch`).
///
/// Logged across deploys, these show which component dominates startup; a time-to-open
/// that drifts upward warns that a dependency is getting slower to come up.
///
/// # Examples
///
/// ```
/// use tally_latch::TrackingLatch;
///
/// let latch = TrackingLatch::new(["only"]).unwrap().on_count_down(|event| {
///     assert_eq!(event.counter(), "only");
///     assert_eq!(event.remaining(), 0);
///     assert!(event.opened());
/// });
/// latch.count_down_for("only").unwrap();
/// ```
#[derive(Clone, Copy, Debug)]
pub struct CountDownEvent<'a> {
    pub(crate) counter: &'a str,
    pub(crate) remaining: usize,
    #[cfg(feature = "std")]
    pub(crate) elapsed: core::time::Duration,
}

impl CountDownEvent<'_> {
    /// The counter that reported.
    ///
    /// # Examples
    ///
    /// ```
    /// # use tally_latch::TrackingLatch;
    /// let latch = TrackingLatch::new(["db"]).unwrap()
    ///     .on_count_down(|event| assert_eq!(event.counter(), "db"));
    /// latch.count_down_for("db").unwrap();
    /// ```
    pub fn counter(&self) -> &str {
        self.counter
    }

    /// The count left after this count-down.
    ///
    /// # Examples
    ///
    /// ```
    /// # use tally_latch::TrackingLatch;
    /// let latch = TrackingLatch::new(["a", "b"]).unwrap()
    ///     .on_count_down(|event| assert_eq!(event.remaining(), 1));
    /// latch.count_down_for("a").unwrap();
    /// ```
    pub fn remaining(&self) -> usize {
        self.remaining
    }

    /// Whether this count-down opened the latch.
    ///
    /// # Examples
    ///
    /// ```
    /// # use tally_latch::TrackingLatch;
    /// let latch = TrackingLatch::new(["a", "b"]).unwrap()
    ///     .on_count_down(|event| assert_eq!(event.opened(), event.counter() == "b"));
    /// latch.count_down_for("a").unwrap();
    /// latch.count_down_for("b").unwrap();
    /// ```
    pub fn opened(&self) -> bool {
        self.remaining == 0
    }

    /// The time since the latch was built; for the count-down that opened the latch, the
    /// time-to-open.
    ///
    /// # Examples
    ///
    /// ```
    /// # use tally_latch::TrackingLatch;
    /// use std::time::Duration;
    /// let latch = TrackingLatch::new(["a"]).unwrap()
    ///     .on_count_down(|event| assert!(event.elapsed() < Duration::from_secs(60)));
    /// latch.count_down_for("a").unwrap();
    /// ```
    #[cfg(feature = "std")]
    pub fn elapsed(&self) -> core::time::Duration {
        self.elapsed
    }

    /// Emits this count-down as a `tracing` event of the latch called `label`.
    #[cfg(feature = "tracing")]
    pub(crate) fn trace(&self, label: &'static str) {
        #[cfg(feature = "std")]
        let elapsed_us = u64::try_from(self.elapsed.as_micros()).unwrap_or(u64::MAX);
        #[cfg(not(feature = "std"))]
        let elapsed_us: Option<u64> = None;
        tracing::debug!(
            target: "tally_latch",
            label,
            counter = self.counter,
            remaining = self.remaining,
            elapsed_us,
            "latch count-down"
        );
        if self.opened() {
            tracing::info!(
                target: "tally_latch",
                label,
                counter = self.counter,
                time_to_open_us = elapsed_us,
                "latch opened"
            );
        }
    }
}
