//! [`QueueExt`]: `Duration` timeouts for a [`Queue`].

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use embassy_time::{Duration, Instant, Timer};
use pin_project_lite::pin_project;
use queue_core::futures::{Get, Join};
use queue_core::{Delivery, GetError, Ledger, Queue};

use crate::race::race;

/// Timed `get` and `join` on a [`Queue`], with an [`embassy_time::Timer`] as the deadline.
///
/// A timed put is not offered yet: `queue_core::futures::Put` owns the item, so a put
/// abandoned at its deadline would drop the item instead of handing it back. Use
/// [`Queue::try_put`] (it never waits) or an untimed [`Queue::put`].
///
/// # Examples
///
/// ```
/// use adapter_embassy::{GetTimeoutError, QueueExt};
/// use embassy_time::Duration;
/// use queue_core::Queue;
///
/// futures_lite::future::block_on(async {
///     let queue = Queue::bounded(2).unwrap();
///     assert_eq!(
///         queue.get_timeout(Duration::from_millis(5)).await.unwrap_err(),
///         GetTimeoutError::TimedOut
///     );
///     queue.try_put("job").unwrap();
///     let delivery = queue.get_timeout(Duration::from_millis(5)).await.unwrap();
///     delivery.succeed();
///     let ledger = queue.join_timeout(Duration::from_millis(5)).await.unwrap();
///     assert_eq!(ledger.succeeded, 1);
/// });
/// ```
pub trait QueueExt<T> {
    /// Waits for an item for at most `timeout`.
    ///
    /// # Errors
    ///
    /// [`GetTimeoutError::ShutDown`] if the queue is shut down and empty,
    /// [`GetTimeoutError::TimedOut`] if no item came in time.
    ///
    /// # Cancel safety
    ///
    /// As for [`Queue::get`]: a get that times out or is dropped never loses an item.
    fn get_timeout(&self, timeout: Duration) -> GetTimeout<'_, T>;

    /// Like [`get_timeout`](QueueExt::get_timeout), until the clock reaches `deadline`.
    fn get_deadline(&self, deadline: Instant) -> GetTimeout<'_, T>;

    /// Waits for at most `timeout` until every accepted item has ended, and returns the
    /// ledger.
    ///
    /// # Errors
    ///
    /// [`JoinTimedOut`] holding a ledger snapshot taken at the deadline, whose
    /// `buffered` and `in_flight` say what was still unfinished.
    fn join_timeout(&self, timeout: Duration) -> JoinTimeout<'_, T>;

    /// Like [`join_timeout`](QueueExt::join_timeout), until the clock reaches `deadline`.
    fn join_deadline(&self, deadline: Instant) -> JoinTimeout<'_, T>;
}

impl<T> QueueExt<T> for Queue<T> {
    fn get_timeout(&self, timeout: Duration) -> GetTimeout<'_, T> {
        self.get_deadline(Instant::now() + timeout)
    }

    fn get_deadline(&self, deadline: Instant) -> GetTimeout<'_, T> {
        GetTimeout {
            get: self.get(),
            timer: Timer::at(deadline),
        }
    }

    fn join_timeout(&self, timeout: Duration) -> JoinTimeout<'_, T> {
        self.join_deadline(Instant::now() + timeout)
    }

    fn join_deadline(&self, deadline: Instant) -> JoinTimeout<'_, T> {
        JoinTimeout {
            queue: self,
            join: self.join(),
            timer: Timer::at(deadline),
        }
    }
}

/// Why a [`QueueExt::get_timeout`] ended without an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GetTimeoutError {
    /// The queue is shut down and its buffer is empty: nothing will ever arrive.
    ShutDown,
    /// No item arrived before the deadline.
    TimedOut,
}

impl From<GetError> for GetTimeoutError {
    fn from(error: GetError) -> Self {
        match error {
            GetError::ShutDown => Self::ShutDown,
        }
    }
}

impl fmt::Display for GetTimeoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::ShutDown => "queue is shut down and empty",
            Self::TimedOut => "timed out waiting for an item",
        })
    }
}

impl core::error::Error for GetTimeoutError {}

/// A [`QueueExt::join_timeout`] reached its deadline with items unfinished.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct JoinTimedOut {
    /// The ledger at the deadline.
    pub ledger: Ledger,
}

impl fmt::Display for JoinTimedOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "timed out joining the queue, unfinished items: {}",
            self.ledger.unfinished()
        )
    }
}

impl core::error::Error for JoinTimedOut {}

pin_project! {
    /// The future returned by [`QueueExt::get_timeout`] and [`QueueExt::get_deadline`].
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct GetTimeout<'a, T> {
        #[pin]
        get: Get<'a, T>,
        #[pin]
        timer: Timer,
    }
}

impl<'a, T> Future for GetTimeout<'a, T> {
    type Output = Result<Delivery<'a, T>, GetTimeoutError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        race(this.get, this.timer, cx).map(|done| match done {
            Some(result) => result.map_err(GetTimeoutError::from),
            None => Err(GetTimeoutError::TimedOut),
        })
    }
}

impl<T> fmt::Debug for GetTimeout<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("GetTimeout { .. }")
    }
}

pin_project! {
    /// The future returned by [`QueueExt::join_timeout`] and [`QueueExt::join_deadline`].
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct JoinTimeout<'a, T> {
        queue: &'a Queue<T>,
        #[pin]
        join: Join<'a, T>,
        #[pin]
        timer: Timer,
    }
}

impl<T> Future for JoinTimeout<'_, T> {
    type Output = Result<Ledger, JoinTimedOut>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let queue: &Queue<T> = this.queue;
        race(this.join, this.timer, cx).map(|done| match done {
            Some(ledger) => Ok(ledger),
            None => Err(JoinTimedOut {
                ledger: queue.ledger(),
            }),
        })
    }
}

impl<T> fmt::Debug for JoinTimeout<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JoinTimeout { .. }")
    }
}
