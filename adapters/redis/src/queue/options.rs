//! A queue's settings.

use core::time::Duration;

use tally_queue::{AbandonPolicy, Backoff, Jitter};

use crate::queue::error::OpenError;

/// A queue's settings. Capacity, lease, redelivery policy, redelivery backoff and repeat
/// window are stored with the queue at creation, and every later
/// [`Queue::open`](crate::Queue::open) must ask for the same; the others are per handle.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use tally_redis::Options;
///
/// let options = Options::new().bounded(100).lease(Duration::from_secs(5));
/// assert_eq!(options.get_capacity(), Some(100));
/// assert_eq!(options.get_lease(), Duration::from_secs(5));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    pub(crate) capacity: Option<u64>,
    pub(crate) lease: Duration,
    pub(crate) abandon_policy: AbandonPolicy,
    pub(crate) redelivery_backoff: Option<Backoff>,
    pub(crate) poll: Duration,
    pub(crate) max_item_bytes: usize,
    pub(crate) repeat_window: Duration,
    pub(crate) response_timeout: Duration,
    pub(crate) best_effort: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options::new()
    }
}

impl Options {
    /// Unbounded, a 30 s lease, [`AbandonPolicy::Abandon`], 1 s polls, items up to 1 MiB,
    /// a 10 min repeat window, a 2 s response timeout, and a server that keeps its
    /// promises (not best-effort).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(tally_redis::Options::new().get_capacity(), None);
    /// ```
    pub const fn new() -> Self {
        Options {
            capacity: None,
            lease: Duration::from_secs(30),
            abandon_policy: AbandonPolicy::Abandon,
            redelivery_backoff: None,
            poll: Duration::from_secs(1),
            max_item_bytes: 1 << 20,
            repeat_window: Duration::from_secs(600),
            response_timeout: Duration::from_secs(2),
            best_effort: false,
        }
    }

    /// At most `capacity` items buffered (delivered items do not count); `try_put` past it
    /// is refused with [`PutError::Full`](crate::PutError::Full), `put` waits.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(tally_redis::Options::new().bounded(8).get_capacity(), Some(8));
    /// ```
    pub const fn bounded(mut self, capacity: u64) -> Self {
        self.capacity = Some(capacity);
        self
    }

    /// How long a delivery is held without a resolve or
    /// [`keep_alive`](crate::Delivery::keep_alive) before it counts as lost (its process
    /// presumed dead) and is reclaimed. Whole milliseconds, at least 100 ms: a shorter
    /// lease declares live holders dead whenever their machine is busy for a moment
    /// (leases under a second are for tests).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// let options = tally_redis::Options::new().lease(Duration::from_millis(300));
    /// assert_eq!(options.get_lease(), Duration::from_millis(300));
    /// ```
    pub const fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// The policy for deliveries that end without an outcome: dropped unresolved in a
    /// live process, or held by a process that died (its lease expired). It is the
    /// in-process queue's [`AbandonPolicy`], so one mental model covers both:
    ///
    /// - [`AbandonPolicy::Abandon`] (the default): counted abandoned at once. Unlike in
    ///   process, the item is kept as a dead-letter record
    ///   ([`Queue::dead_letters`](crate::Queue::dead_letters)) with the reason, since a
    ///   process that died may have done part of the work.
    /// - [`AbandonPolicy::Redeliver`]: delivered again under its id, with
    ///   [`Delivery::attempt`](crate::Delivery::attempt) one higher, up to `max_attempts`
    ///   deliveries in all; after the last one the item is dead-lettered (counted
    ///   abandoned, kept as a record).
    /// - [`AbandonPolicy::Uncertain`]: for effects that must not repeat. Never delivered
    ///   again; counted uncertain and appended to the uncertain records
    ///   ([`Queue::uncertain`](crate::Queue::uncertain)) with the item and a reason that
    ///   tells it from a handler's own uncertain (`"uncertain"`):
    ///   `"abandoned: dropped unresolved, ended uncertain"` or
    ///   `"abandoned: lease expired, ended uncertain"` (the holder crashed or stalled past
    ///   its lease). So also after `shutdown_now`, as in process (where the other
    ///   policies count an expired lease discarded): its effect may have happened.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_redis::{AbandonPolicy, Options};
    /// let policy = AbandonPolicy::redeliver(2).unwrap();
    /// let options = Options::new().abandon_policy(policy);
    /// assert_eq!(options.get_abandon_policy(), policy);
    /// ```
    pub const fn abandon_policy(mut self, policy: AbandonPolicy) -> Self {
        self.abandon_policy = policy;
        self
    }

    /// Under [`AbandonPolicy::Redeliver`], how long a job whose delivery ended without an
    /// outcome (its lease expired, or it was dropped unresolved) waits before it is
    /// delivered again: the delay `backoff` gives after that delivery, as
    /// [`Delivery::retry_backoff`](crate::Delivery::retry_backoff) takes it
    /// ([`Backoff::delay_for`] with the job's attempt and id, rounded up to whole
    /// milliseconds). Without it (the default) such a job is delivered again by the next
    /// get that looks for expired leases.
    ///
    /// Once its lease is found expired (by a get or a maintenance pass), the job waits
    /// among the delayed jobs ([`put_after`](crate::Queue::put_after)), on the server's
    /// clock: counted buffered and redelivered, no longer listed by
    /// [`in_flight`](crate::Queue::in_flight), handed back by
    /// [`shutdown_now`](crate::Queue::shutdown_now), and delivered again as its next
    /// attempt once due. The server draws the delay itself, with the jitter, seed and
    /// ceilings of `backoff`: it is the delay `backoff` gives in process for the same
    /// attempt and id, to the nanosecond, so every process and the server agree on it.
    /// Stored with the queue; each delay must be under 2^53 ns (about 104 days).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use tally_queue::{Backoff, Jitter};
    /// use tally_redis::{AbandonPolicy, Options};
    ///
    /// let backoff = Backoff::exponential(Duration::from_secs(1), Duration::from_secs(60))
    ///     .with_jitter(Jitter::Equal);
    /// let options = Options::new()
    ///     .abandon_policy(AbandonPolicy::redeliver(5).unwrap())
    ///     .redelivery_backoff(backoff);
    /// assert_eq!(options.get_redelivery_backoff(), Some(backoff));
    /// ```
    pub const fn redelivery_backoff(mut self, backoff: Backoff) -> Self {
        self.redelivery_backoff = Some(backoff);
        self
    }

    /// The longest a get, put or join blocks on the server before it re-reads the state
    /// (shutdown, expired leases). Whole milliseconds, from 1 ms to 60 s.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// let options = tally_redis::Options::new().poll(Duration::from_millis(100));
    /// assert_eq!(options.get_poll(), Duration::from_millis(100));
    /// ```
    pub const fn poll(mut self, poll: Duration) -> Self {
        self.poll = poll;
        self
    }

    /// The largest encoded item a put accepts, in bytes (at most 512 MiB, Redis's limit).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(tally_redis::Options::new().max_item_bytes(64).get_max_item_bytes(), 64);
    /// ```
    pub const fn max_item_bytes(mut self, limit: usize) -> Self {
        self.max_item_bytes = limit;
        self
    }

    /// How long the server remembers a put's idempotency key (so a keyed put repeated
    /// within it returns the first one's id), and the record of a resolve whose reply was
    /// lost (so that its repeat is recognized). Stored with the queue: every handle gets
    /// the same window. Each keyed put leaves its key on the server for this long (see the
    /// crate's README for the bytes).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// let options = tally_redis::Options::new().repeat_window(Duration::from_secs(60));
    /// assert_eq!(options.get_repeat_window(), Duration::from_secs(60));
    /// ```
    pub const fn repeat_window(mut self, window: Duration) -> Self {
        self.repeat_window = window;
        self
    }

    /// How long a command waits for its reply before the reply counts as lost
    /// ([`Error::Unknown`](crate::Error::Unknown)); blocking reads wait `poll` longer.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// let options = tally_redis::Options::new().response_timeout(Duration::from_secs(1));
    /// assert_eq!(options.get_response_timeout(), Duration::from_secs(1));
    /// ```
    pub const fn response_timeout(mut self, timeout: Duration) -> Self {
        self.response_timeout = timeout;
        self
    }

    /// Accepts a server whose settings can lose, rewind or evict the queue's keys: without
    /// the append-only file (`appendonly no`: a restart goes back to the last snapshot),
    /// or with a `maxmemory-policy` other than `noeviction` (keys with a time to live,
    /// then any key, can be evicted). Without it, [`Queue::open`](crate::Queue::open) and
    /// every later call refuse such a server with
    /// [`Error::UnsafeServer`](crate::Error::UnsafeServer).
    ///
    /// In best-effort mode the queue works, but what the server loses is lost: after a
    /// restart without the append-only file, or once one of the queue's own keys was
    /// evicted, every call fails with [`Error::Gone`](crate::Error::Gone) (ids are never
    /// issued twice); an evicted idempotency key lets a keyed repeat be accepted again.
    ///
    /// # Examples
    ///
    /// ```
    /// let options = tally_redis::Options::new().best_effort(true);
    /// assert!(options.get_best_effort());
    /// ```
    pub const fn best_effort(mut self, yes: bool) -> Self {
        self.best_effort = yes;
        self
    }

    /// The capacity, `None` if unbounded.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(tally_redis::Options::new().get_capacity(), None);
    /// ```
    pub const fn get_capacity(&self) -> Option<u64> {
        self.capacity
    }

    /// The lease.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(tally_redis::Options::new().get_lease().as_secs(), 30);
    /// ```
    pub const fn get_lease(&self) -> Duration {
        self.lease
    }

    /// The abandon policy.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_redis::{AbandonPolicy, Options};
    /// assert_eq!(Options::new().get_abandon_policy(), AbandonPolicy::Abandon);
    /// ```
    pub const fn get_abandon_policy(&self) -> AbandonPolicy {
        self.abandon_policy
    }

    /// The redelivery backoff, `None` unless set.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(tally_redis::Options::new().get_redelivery_backoff(), None);
    /// ```
    pub const fn get_redelivery_backoff(&self) -> Option<Backoff> {
        self.redelivery_backoff
    }

    /// The poll interval.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(tally_redis::Options::new().get_poll().as_secs(), 1);
    /// ```
    pub const fn get_poll(&self) -> Duration {
        self.poll
    }

    /// The largest encoded item, in bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(tally_redis::Options::new().get_max_item_bytes(), 1 << 20);
    /// ```
    pub const fn get_max_item_bytes(&self) -> usize {
        self.max_item_bytes
    }

    /// The repeat window.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(tally_redis::Options::new().get_repeat_window().as_secs(), 600);
    /// ```
    pub const fn get_repeat_window(&self) -> Duration {
        self.repeat_window
    }

    /// The response timeout.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(tally_redis::Options::new().get_response_timeout().as_secs(), 2);
    /// ```
    pub const fn get_response_timeout(&self) -> Duration {
        self.response_timeout
    }

    /// Whether the handle accepts a server that can lose its keys (see
    /// [`best_effort`](Options::best_effort)).
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(!tally_redis::Options::new().get_best_effort());
    /// ```
    pub const fn get_best_effort(&self) -> bool {
        self.best_effort
    }

    /// The stored form of the settings fixed at creation: capacity (0 = unbounded), lease
    /// ms, max attempts (0 = abandon, -1 = uncertain), repeat window ms.
    pub(crate) fn check(&self) -> Result<[i64; 4], OpenError> {
        let lease = self.lease.as_millis();
        if lease < 100 || !self.lease.subsec_nanos().is_multiple_of(1_000_000) || lease > 1 << 40 {
            return Err(OpenError::BadOption(
                "lease must be whole milliseconds, at least 100 ms",
            ));
        }
        let poll = self.poll.as_millis();
        if poll == 0 || poll > 60_000 || !self.poll.subsec_nanos().is_multiple_of(1_000_000) {
            return Err(OpenError::BadOption(
                "poll must be whole milliseconds, from 1 ms to 60 s",
            ));
        }
        if self.max_item_bytes == 0 || self.max_item_bytes > 512 << 20 {
            return Err(OpenError::BadOption(
                "max_item_bytes must be from 1 byte to 512 MiB",
            ));
        }
        let window = self.repeat_window.as_millis();
        if window < lease
            || window > 1 << 40
            || !self.repeat_window.subsec_nanos().is_multiple_of(1_000_000)
        {
            return Err(OpenError::BadOption(
                "repeat_window must be whole milliseconds, at least the lease",
            ));
        }
        if self.response_timeout.is_zero() {
            return Err(OpenError::BadOption("response_timeout must not be zero"));
        }
        let capacity = match self.capacity {
            Some(0) => {
                return Err(OpenError::BadOption(
                    "capacity must be at least 1 (ask for unbounded by leaving it unset)",
                ))
            }
            Some(capacity) => capacity,
            None => 0,
        };
        // The server's `max_att`: 0 stands for `Abandon`, -1 for `Uncertain`, and a count
        // for `Redeliver` (`max_attempts` is never 0).
        let attempts = match self.abandon_policy {
            AbandonPolicy::Abandon => 0,
            AbandonPolicy::Uncertain => -1,
            AbandonPolicy::Redeliver { max_attempts } => i64::from(max_attempts.get()),
        };
        let capacity = i64::try_from(capacity)
            .map_err(|_| OpenError::BadOption("capacity must be at most i64::MAX"))?;
        self.stored_backoff()?;
        // `lease` and `window` are at most 2^40, checked above.
        Ok([capacity, lease as i64, attempts, window as i64])
    }

    /// The stored form of the redelivery backoff, read by the server's scripts: '' for
    /// none, or the jitter (`n`, `f`, `e`), the seed in 16 hex digits, and the ceilings in
    /// ns for attempts 1, 2, ... up to the one from which they stay the same (attempt 33
    /// at the latest: past 32 doublings every exponential ceiling is its cap).
    pub(crate) fn stored_backoff(&self) -> Result<String, OpenError> {
        let Some(backoff) = self.redelivery_backoff else {
            return Ok(String::new());
        };
        if !matches!(self.abandon_policy, AbandonPolicy::Redeliver { .. }) {
            return Err(OpenError::BadOption(
                "redelivery_backoff needs AbandonPolicy::Redeliver",
            ));
        }
        let mut ceilings = Vec::new();
        for attempt in 1..=33 {
            let ns = backoff.ceiling(attempt).as_nanos();
            if ns >= 1 << 53 {
                return Err(OpenError::BadOption(
                    "redelivery_backoff's delays must be under 2^53 ns (about 104 days)",
                ));
            }
            ceilings.push(ns);
        }
        while ceilings.len() > 1 && ceilings[ceilings.len() - 2] == ceilings[ceilings.len() - 1] {
            ceilings.pop();
        }
        let jitter = match backoff.jitter() {
            Jitter::None => 'n',
            Jitter::Full => 'f',
            Jitter::Equal => 'e',
        };
        let mut stored = format!("{jitter} {:016X}", backoff.seed());
        for ns in ceilings {
            stored.push_str(&format!(" {ns}"));
        }
        Ok(stored)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_options_are_refused() {
        assert!(Options::new().check().is_ok());
        assert!(Options::new().bounded(0).check().is_err());
        assert!(Options::new()
            .lease(Duration::from_millis(99))
            .check()
            .is_err());
        assert!(Options::new()
            .lease(Duration::from_micros(100_500))
            .check()
            .is_err());
        assert!(Options::new().poll(Duration::ZERO).check().is_err());
        assert!(Options::new().max_item_bytes(0).check().is_err());
        assert_eq!(
            Options::new()
                .bounded(4)
                .lease(Duration::from_millis(250))
                .abandon_policy(AbandonPolicy::redeliver(3).unwrap())
                .check()
                .unwrap(),
            [4, 250, 3, 600_000]
        );
        assert_eq!(
            Options::new()
                .abandon_policy(AbandonPolicy::Uncertain)
                .check()
                .unwrap()[2],
            -1
        );
        assert!(Options::new().bounded(u64::MAX).check().is_err());
    }

    #[test]
    fn a_redelivery_backoff_is_stored_as_its_jitter_seed_and_ceilings() {
        let ms = Duration::from_millis;
        let redeliver = Options::new().abandon_policy(AbandonPolicy::redeliver(3).unwrap());
        assert_eq!(redeliver.stored_backoff().unwrap(), "");
        let exponential = Backoff::exponential(ms(100), ms(500))
            .with_jitter(Jitter::Full)
            .with_seed(0xABCD);
        assert_eq!(
            redeliver
                .redelivery_backoff(exponential)
                .stored_backoff()
                .unwrap(),
            "f 000000000000ABCD 100000000 200000000 400000000 500000000"
        );
        let fixed = Backoff::fixed(ms(250));
        assert_eq!(
            redeliver
                .redelivery_backoff(fixed)
                .stored_backoff()
                .unwrap(),
            "n 0000000000000000 250000000"
        );
        // Past 32 doublings the ceiling is the cap: 33 entries at most.
        let tiny = Backoff::exponential(Duration::from_nanos(1), Duration::from_secs(86_400));
        let stored = redeliver.redelivery_backoff(tiny).stored_backoff().unwrap();
        assert_eq!(stored.split(' ').count(), 2 + 33);
        assert!(stored.ends_with(" 2147483648 86400000000000"));
        let long = Backoff::fixed(Duration::from_secs(200 * 86_400));
        assert!(redeliver.redelivery_backoff(long).check().is_err());
        assert!(Options::new().redelivery_backoff(fixed).check().is_err());
    }
}
