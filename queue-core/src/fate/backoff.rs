//! [`Backoff`]: how long a job waits before its next attempt, as pure data.

use core::time::Duration;

/// A retry delay policy: how long a job whose delivery number `attempt` failed waits
/// before it is delivered again. Fixed, or exponential up to a cap, with optional
/// [`Jitter`].
///
/// Pure data: no clock, no runtime, no state. [`delay`](Backoff::delay) is a function of
/// the policy and its arguments alone, so the same policy gives the same delays in a
/// test, on a microcontroller and on every process of a deployment. A queue takes the
/// delay it gives to the timer of the caller's runtime (the adapters' `retry_backoff`,
/// or [`Delivery::retry_at`](crate::Delivery::retry_at) with any deadline future).
///
/// `attempt` is the number of the delivery that failed, as
/// [`Delivery::attempt`](crate::Delivery::attempt) reports it: 1 for the first. 0 is read
/// as 1.
///
/// | policy | delay after delivery `attempt` failed (before jitter) |
/// |---|---|
/// | [`fixed(d)`](Backoff::fixed) | `d` |
/// | [`exponential(first, cap)`](Backoff::exponential) | `first × 2^(attempt − 1)`, at most `cap` |
///
/// Jitter only shortens a delay (see [`Jitter`]): the delay before jitter,
/// [`ceiling`](Backoff::ceiling), is the most a job waits.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use tally_queue::{Backoff, Jitter};
///
/// let ms = Duration::from_millis;
/// let backoff = Backoff::exponential(ms(100), ms(1_000));
/// let delays: Vec<_> = (1..=6).map(|attempt| backoff.delay(attempt)).collect();
/// assert_eq!(delays, [ms(100), ms(200), ms(400), ms(800), ms(1_000), ms(1_000)]);
///
/// // With full jitter each delay is drawn from [0, ceiling): spread by the job's id.
/// let spread = backoff.with_jitter(Jitter::Full);
/// let first = spread.delay_for(3, 17);
/// assert!(first < ms(400));
/// assert_eq!(first, spread.delay_for(3, 17)); // the same inputs, the same delay
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Backoff {
    /// The delay after the first failed delivery.
    first: Duration,
    /// The longest delay; equal to `first` for a fixed policy.
    cap: Duration,
    /// Whether each further failed delivery doubles the delay (up to `cap`).
    doubling: bool,
    jitter: Jitter,
    /// Mixed into every jitter draw (see [`Backoff::with_seed`]).
    seed: u64,
}

/// How much of a [`Backoff`] delay is drawn at random, to spread the retries of jobs that
/// failed together (a dependency that went down) instead of sending them back together.
///
/// The draw is a hash of the policy's seed, the key given to
/// [`delay_for`](Backoff::delay_for) (a job's id) and the attempt: deterministic, and
/// spread evenly across keys and attempts. It is not a source of secrets.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use tally_queue::{Backoff, Jitter};
///
/// let second = Duration::from_secs(1);
/// let equal = Backoff::fixed(second).with_jitter(Jitter::Equal);
/// for id in 0..100 {
///     let delay = equal.delay_for(1, id);
///     assert!(delay >= second / 2 && delay <= second);
/// }
/// assert_eq!(Backoff::fixed(second).jitter(), Jitter::None);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Jitter {
    /// The delay is the ceiling itself.
    #[default]
    None,
    /// The delay is drawn evenly from zero up to the ceiling ("full jitter"): the widest
    /// spread, and the shortest mean wait.
    Full,
    /// The delay is half the ceiling plus a draw from zero up to the other half ("equal
    /// jitter"): every job waits at least half the ceiling.
    Equal,
}

impl Backoff {
    /// The same delay after every failed delivery.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tally_queue::Backoff;
    ///
    /// let backoff = Backoff::fixed(Duration::from_secs(5));
    /// assert_eq!(backoff.delay(1), Duration::from_secs(5));
    /// assert_eq!(backoff.delay(40), Duration::from_secs(5));
    /// ```
    #[must_use]
    pub const fn fixed(delay: Duration) -> Backoff {
        Backoff {
            first: delay,
            cap: delay,
            doubling: false,
            jitter: Jitter::None,
            seed: 0,
        }
    }

    /// `first` after the first failed delivery, twice as long after each further one, and
    /// never longer than `cap` (a `cap` below `first` makes every delay `cap`).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tally_queue::Backoff;
    ///
    /// let backoff = Backoff::exponential(Duration::from_secs(1), Duration::from_secs(60));
    /// assert_eq!(backoff.delay(1), Duration::from_secs(1));
    /// assert_eq!(backoff.delay(4), Duration::from_secs(8));
    /// assert_eq!(backoff.delay(7), Duration::from_secs(60));
    /// assert_eq!(backoff.delay(u32::MAX), Duration::from_secs(60)); // no overflow
    /// ```
    #[must_use]
    pub const fn exponential(first: Duration, cap: Duration) -> Backoff {
        Backoff {
            first,
            cap,
            doubling: true,
            jitter: Jitter::None,
            seed: 0,
        }
    }

    /// The same policy with `jitter`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tally_queue::{Backoff, Jitter};
    ///
    /// let backoff = Backoff::fixed(Duration::from_secs(2)).with_jitter(Jitter::Full);
    /// assert_eq!(backoff.jitter(), Jitter::Full);
    /// assert!(backoff.delay(1) < Duration::from_secs(2));
    /// ```
    #[must_use]
    pub const fn with_jitter(mut self, jitter: Jitter) -> Backoff {
        self.jitter = jitter;
        self
    }

    /// The same policy with `seed` mixed into every jitter draw (0 unless set). Two
    /// policies that differ only in their seed jitter the same job differently: give each
    /// process or queue its own, if their jobs' keys can be equal.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tally_queue::{Backoff, Jitter};
    ///
    /// let backoff = Backoff::fixed(Duration::from_secs(10)).with_jitter(Jitter::Full);
    /// let draws = |seed| (0..8).map(|id| backoff.with_seed(seed).delay_for(1, id)).collect::<Vec<_>>();
    /// assert_eq!(draws(1), draws(1));
    /// assert_ne!(draws(1), draws(2));
    /// ```
    #[must_use]
    pub const fn with_seed(mut self, seed: u64) -> Backoff {
        self.seed = seed;
        self
    }

    /// The jitter set with [`with_jitter`](Backoff::with_jitter); [`Jitter::None`] unless
    /// set.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tally_queue::{Backoff, Jitter};
    ///
    /// assert_eq!(Backoff::fixed(Duration::ZERO).jitter(), Jitter::None);
    /// ```
    #[must_use]
    pub const fn jitter(&self) -> Jitter {
        self.jitter
    }

    /// The seed set with [`with_seed`](Backoff::with_seed); 0 unless set.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tally_queue::Backoff;
    ///
    /// let backoff = Backoff::fixed(Duration::from_secs(1));
    /// assert_eq!(backoff.seed(), 0);
    /// assert_eq!(backoff.with_seed(7).seed(), 7);
    /// ```
    #[must_use]
    pub const fn seed(&self) -> u64 {
        self.seed
    }

    /// The delay after delivery number `attempt` failed, before jitter: the most a job
    /// waits.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tally_queue::{Backoff, Jitter};
    ///
    /// let ms = Duration::from_millis;
    /// let backoff = Backoff::exponential(ms(10), ms(50)).with_jitter(Jitter::Full);
    /// assert_eq!([backoff.ceiling(1), backoff.ceiling(3), backoff.ceiling(9)], [ms(10), ms(40), ms(50)]);
    /// assert!(backoff.delay(3) <= backoff.ceiling(3));
    /// ```
    #[must_use]
    pub fn ceiling(&self, attempt: u32) -> Duration {
        if !self.doubling {
            return self.first;
        }
        let doublings = attempt.max(1) - 1;
        let grown = 2u32
            .checked_pow(doublings)
            .and_then(|factor| self.first.checked_mul(factor));
        match grown {
            Some(delay) => delay.min(self.cap),
            None => self.cap,
        }
    }

    /// The delay after delivery number `attempt` failed, jittered with the policy's own
    /// seed alone: every job that fails its `attempt` waits the same. Where many jobs share
    /// the policy, [`delay_for`](Backoff::delay_for) with each job's id spreads them.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tally_queue::Backoff;
    ///
    /// let backoff = Backoff::exponential(Duration::from_millis(50), Duration::from_secs(1));
    /// assert_eq!(backoff.delay(2), Duration::from_millis(100));
    /// ```
    #[must_use]
    pub fn delay(&self, attempt: u32) -> Duration {
        self.delay_for(attempt, 0)
    }

    /// The delay after delivery number `attempt` of the job known by `key` failed: its
    /// jitter is drawn from the seed, the key and the attempt. The queues give a job's
    /// [`JobId::get`](crate::JobId::get) as the key, so jobs that failed together come back
    /// spread out, and one job's successive delays are drawn independently.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tally_queue::{Backoff, Jitter};
    ///
    /// let backoff = Backoff::fixed(Duration::from_secs(1)).with_jitter(Jitter::Full);
    /// let delays: std::collections::HashSet<_> = (0..50).map(|id| backoff.delay_for(1, id)).collect();
    /// assert!(delays.len() > 45, "50 jobs that failed together come back spread out");
    /// ```
    #[must_use]
    pub fn delay_for(&self, attempt: u32, key: u64) -> Duration {
        let ceiling = self.ceiling(attempt);
        let draw = || draw(self.seed, key, attempt.max(1));
        match self.jitter {
            Jitter::None => ceiling,
            Jitter::Full => fraction(ceiling, draw()),
            Jitter::Equal => {
                let half = ceiling / 2;
                half + fraction(ceiling - half, draw())
            }
        }
    }
}

/// A uniform 64-bit draw for (`seed`, `key`, `attempt`): SplitMix64's output function
/// over their mix. Each input goes through a multiplication by an odd constant first, so
/// that neighbouring keys and attempts land far apart.
fn draw(seed: u64, key: u64, attempt: u32) -> u64 {
    let mixed = seed
        ^ key.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ u64::from(attempt).wrapping_mul(0xD1B5_4A32_D192_ED03);
    let mut z = mixed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `of × draw / 2^64`: a duration from zero up to (not including) `of`, for a nonzero
/// `of`.
fn fraction(of: Duration, draw: u64) -> Duration {
    // `of` has at most 94 bits of nanoseconds: split at bit 64 so that no product
    // overflows.
    let whole = of.as_nanos();
    let (high, low) = (whole >> 64, whole & u128::from(u64::MAX));
    let nanos = high * u128::from(draw) + ((low * u128::from(draw)) >> 64);
    // At most `of`'s nanoseconds, so the seconds fit as `of`'s do.
    Duration::new(
        (nanos / 1_000_000_000) as u64,
        (nanos % 1_000_000_000) as u32,
    )
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_fraction_never_reaches_its_whole_even_for_the_longest_duration() {
        assert_eq!(fraction(Duration::MAX, 0), Duration::ZERO);
        assert!(fraction(Duration::MAX, u64::MAX) < Duration::MAX);
        assert_eq!(fraction(Duration::ZERO, u64::MAX), Duration::ZERO);
        let second = Duration::from_secs(1);
        assert_eq!(fraction(second, 1 << 63), second / 2);
    }

    #[test]
    fn draws_differ_by_seed_key_and_attempt() {
        let base = draw(0, 0, 1);
        assert_ne!(base, draw(1, 0, 1));
        assert_ne!(base, draw(0, 1, 1));
        assert_ne!(base, draw(0, 0, 2));
    }
}
