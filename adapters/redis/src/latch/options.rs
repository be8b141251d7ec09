//! A latch's settings.

use core::time::Duration;

use crate::latch::error::CreateError;

/// What happens to a counter whose holder stopped renewing its lease (its process died or
/// stalled past the lease) before it reported.
///
/// # Examples
///
/// ```
/// use tally_redis::{LatchOptions, OnExpiry};
///
/// assert_eq!(LatchOptions::new().get_on_expiry(), OnExpiry::Fail);
/// let options = LatchOptions::new().on_expiry(OnExpiry::Reclaim);
/// assert_eq!(options.get_on_expiry(), OnExpiry::Reclaim);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OnExpiry {
    /// The latch fails, naming the counter (the first failure wins), as a counter handle
    /// dropped unreported does in process.
    Fail,
    /// The counter becomes claimable again, so a restarted replica can take it over.
    Reclaim,
}

impl OnExpiry {
    pub(crate) fn word(self) -> &'static str {
        match self {
            OnExpiry::Fail => "fail",
            OnExpiry::Reclaim => "reclaim",
        }
    }
}

/// A latch's settings. The lease and the [`OnExpiry`] policy are stored with the latch at
/// creation, and every later [`TrackingLatch::open`](crate::TrackingLatch::open) must ask
/// for the same; the others are per handle.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use tally_redis::LatchOptions;
///
/// let options = LatchOptions::new().lease(Duration::from_secs(5)).poll(Duration::from_millis(200));
/// assert_eq!(options.get_lease(), Duration::from_secs(5));
/// assert_eq!(options.get_poll(), Duration::from_millis(200));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LatchOptions {
    pub(crate) lease: Duration,
    pub(crate) on_expiry: OnExpiry,
    pub(crate) poll: Duration,
    pub(crate) response_timeout: Duration,
    pub(crate) best_effort: bool,
}

impl Default for LatchOptions {
    fn default() -> Self {
        LatchOptions::new()
    }
}

impl LatchOptions {
    /// A 10 s lease, [`OnExpiry::Fail`], 1 s polls, a 2 s response timeout, and a server
    /// that keeps its promises (not best-effort).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(tally_redis::LatchOptions::new().get_lease().as_secs(), 10);
    /// ```
    pub const fn new() -> Self {
        LatchOptions {
            lease: Duration::from_secs(10),
            on_expiry: OnExpiry::Fail,
            poll: Duration::from_secs(1),
            response_timeout: Duration::from_secs(2),
            best_effort: false,
        }
    }

    /// How long a claimed counter stays held without a heartbeat from
    /// [`TrackingLatch::maintain`](crate::TrackingLatch::maintain) before its holder is
    /// presumed dead. Whole milliseconds, at least 100 ms: a shorter lease declares live
    /// holders dead whenever their machine is busy for a moment.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// let options = tally_redis::LatchOptions::new().lease(Duration::from_millis(300));
    /// assert_eq!(options.get_lease().as_millis(), 300);
    /// ```
    pub const fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// The policy for a counter whose lease expired unreported.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_redis::{LatchOptions, OnExpiry};
    /// let options = LatchOptions::new().on_expiry(OnExpiry::Reclaim);
    /// assert_eq!(options.get_on_expiry(), OnExpiry::Reclaim);
    /// ```
    pub const fn on_expiry(mut self, policy: OnExpiry) -> Self {
        self.on_expiry = policy;
        self
    }

    /// The longest a wait blocks on the server before it sweeps expired leases and
    /// re-reads the state. Whole milliseconds, from 1 ms to 60 s.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// let options = tally_redis::LatchOptions::new().poll(Duration::from_millis(50));
    /// assert_eq!(options.get_poll().as_millis(), 50);
    /// ```
    pub const fn poll(mut self, poll: Duration) -> Self {
        self.poll = poll;
        self
    }

    /// How long a command waits for its reply before the reply counts as lost
    /// ([`Error::Unknown`](crate::Error::Unknown)).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// let options = tally_redis::LatchOptions::new().response_timeout(Duration::from_secs(1));
    /// assert_eq!(options.get_response_timeout().as_secs(), 1);
    /// ```
    pub const fn response_timeout(mut self, timeout: Duration) -> Self {
        self.response_timeout = timeout;
        self
    }

    /// Accepts a server whose settings can lose, rewind or evict the latch's keys (no
    /// append-only file, or a `maxmemory-policy` other than `noeviction`), as
    /// [`Options::best_effort`](crate::Options::best_effort) does for a queue: without it,
    /// such a server is refused with [`Error::UnsafeServer`](crate::Error::UnsafeServer);
    /// with it, a latch the server lost or rewound reports [`Error::Gone`](crate::Error::Gone).
    ///
    /// # Examples
    ///
    /// ```
    /// let options = tally_redis::LatchOptions::new().best_effort(true);
    /// assert!(options.get_best_effort());
    /// ```
    pub const fn best_effort(mut self, yes: bool) -> Self {
        self.best_effort = yes;
        self
    }

    /// The lease.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(tally_redis::LatchOptions::new().get_lease().as_secs(), 10);
    /// ```
    pub const fn get_lease(&self) -> Duration {
        self.lease
    }

    /// The expiry policy.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_redis::{LatchOptions, OnExpiry};
    /// assert_eq!(LatchOptions::new().get_on_expiry(), OnExpiry::Fail);
    /// ```
    pub const fn get_on_expiry(&self) -> OnExpiry {
        self.on_expiry
    }

    /// The poll interval.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(tally_redis::LatchOptions::new().get_poll().as_secs(), 1);
    /// ```
    pub const fn get_poll(&self) -> Duration {
        self.poll
    }

    /// The response timeout.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(tally_redis::LatchOptions::new().get_response_timeout().as_secs(), 2);
    /// ```
    pub const fn get_response_timeout(&self) -> Duration {
        self.response_timeout
    }

    /// Whether the handle accepts a server that can lose its keys (see
    /// [`best_effort`](LatchOptions::best_effort)).
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(!tally_redis::LatchOptions::new().get_best_effort());
    /// ```
    pub const fn get_best_effort(&self) -> bool {
        self.best_effort
    }

    /// The lease in whole milliseconds, or why an option is out of range.
    pub(crate) fn check(&self) -> Result<u64, CreateError> {
        let lease = self.lease.as_millis();
        if lease < 100 || !self.lease.subsec_nanos().is_multiple_of(1_000_000) || lease > 1 << 40 {
            return Err(CreateError::BadOption(
                "lease must be whole milliseconds, at least 100 ms",
            ));
        }
        let poll = self.poll.as_millis();
        if poll == 0 || poll > 60_000 || !self.poll.subsec_nanos().is_multiple_of(1_000_000) {
            return Err(CreateError::BadOption(
                "poll must be whole milliseconds, from 1 ms to 60 s",
            ));
        }
        if self.response_timeout.is_zero() {
            return Err(CreateError::BadOption("response_timeout must not be zero"));
        }
        Ok(lease as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_options_are_refused() {
        assert_eq!(LatchOptions::new().check().unwrap(), 10_000);
        assert!(LatchOptions::new()
            .lease(Duration::from_millis(99))
            .check()
            .is_err());
        assert!(LatchOptions::new().poll(Duration::ZERO).check().is_err());
        assert!(LatchOptions::new()
            .response_timeout(Duration::ZERO)
            .check()
            .is_err());
    }
}
