//! [`LatchExt`]: `Duration` timeouts for every latch.

use embassy_time::{Duration, Timer};
use tally_latch::futures::WaitUntil;
use tally_latch::Latch;

/// Timed waits on any latch ([`CountDownLatch`](tally_latch::CountDownLatch),
/// [`FailableLatch`](tally_latch::FailableLatch), [`TrackingLatch`](tally_latch::TrackingLatch))
/// with an [`embassy_time::Timer`] as the deadline.
///
/// The futures are the core's [`WaitUntil`]; they resolve to what the latch's `wait_until`
/// resolves to, `Result<L::Output, L::Timeout>`: `Ok` with how the latch ended, `Err` with
/// the timeout. That is `Result<(), TimedOut>` for a `CountDownLatch`,
/// `Result<Result<(), E>, TimedOut>` for a `FailableLatch<E>`, and
/// `Result<Result<(), Failure<E>>, StillPending>` for a `TrackingLatch<E>`, whose timeout
/// names the counters that had not reported.
///
/// # Cancel safety
///
/// Dropping the future changes nothing: the count stays, other waiters still wake.
///
/// # Examples
///
/// ```
/// use tally_embassy::LatchExt;
/// use embassy_time::Duration;
/// use tally_latch::TrackingLatch;
///
/// let latch = TrackingLatch::new(["radio", "sensor"]).unwrap();
/// latch.count_down_for("radio").unwrap();
/// let result = futures_lite::future::block_on(latch.wait_timeout(Duration::from_millis(5)));
/// assert_eq!(result.unwrap_err().names(), ["sensor"]);
/// ```
pub trait LatchExt: Latch + Sized {
    /// Waits until the latch opens (or fails), or until `timeout` has passed: the core's
    /// [`Latch::wait_until`] with [`Timer::after`] as the deadline. For an absolute
    /// deadline, call `wait_until(Timer::at(deadline))` directly.
    fn wait_timeout(&self, timeout: Duration) -> WaitUntil<'_, Self, Timer> {
        self.wait_until(Timer::after(timeout))
    }
}

impl<L: Latch> LatchExt for L {}
