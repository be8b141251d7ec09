//! The futures returned by [`Queue::get`] and [`Queue::get_owned`].

use core::fmt;
use core::pin::Pin;
use core::task::Poll;

use event_listener::EventListener;
use event_listener_strategy::{easy_wrapper, EventListenerFuture, Strategy};
use pin_project_lite::pin_project;

#[cfg(target_has_atomic = "ptr")]
use alloc::sync::Arc;

use crate::delivery::Delivery;
use crate::error::{GetError, TryGetError};
use crate::job_id::JobId;
use crate::queue::Queue;
use crate::wait::poll_until;

#[cfg(target_has_atomic = "ptr")]
use crate::delivery::OwnedDelivery;

/// The shared body of both get futures: pop, or wait on the getters' event.
#[inline]
fn poll_pop<'x, T, S: Strategy<'x>>(
    queue: &Queue<T>,
    listener: &mut Option<EventListener>,
    strategy: &mut S,
    context: &mut S::Context,
) -> Poll<Result<(JobId, T), GetError>> {
    poll_until(
        listener,
        queue.getters(),
        strategy,
        context,
        || match queue.pop() {
            Ok(entry) => Some(Ok(entry)),
            Err(TryGetError::ShutDown) => Some(Err(GetError::ShutDown)),
            Err(TryGetError::Empty) => None,
        },
    )
}

easy_wrapper! {
    /// The future returned by [`Queue::get`]: resolves to a [`Delivery`], or to
    /// [`GetError::ShutDown`] once the queue is shut down and empty.
    ///
    /// Cancel-safe: an item leaves the buffer only in the poll that returns it.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = queue_core::Queue::unbounded();
    /// queue.try_put(1).unwrap();
    /// let get: queue_core::futures::Get<'_, i32> = queue.get();
    /// futures_lite::future::block_on(get).unwrap().succeed();
    /// ```
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct Get<'a, T>(GetInner<'a, T> => Result<Delivery<'a, T>, GetError>);
    #[cfg(feature = "std")]
    pub(crate) wait();
}

impl<'a, T> Get<'a, T> {
    pub(crate) fn new(queue: &'a Queue<T>) -> Self {
        Self::_new(GetInner {
            queue,
            listener: None,
        })
    }
}

impl<T> fmt::Debug for Get<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Get { .. }")
    }
}

pin_project! {
    struct GetInner<'a, T> {
        queue: &'a Queue<T>,
        listener: Option<EventListener>,
    }
    // A future dropped while it waits counts its waiter out.
    impl<'a, T> PinnedDrop for GetInner<'a, T> {
        fn drop(this: Pin<&mut Self>) {
            let this = this.project();
            this.queue.getters().forget(this.listener);
        }
    }
}

impl<'a, T> EventListenerFuture for GetInner<'a, T> {
    type Output = Result<Delivery<'a, T>, GetError>;

    fn poll_with_strategy<'x, S: Strategy<'x>>(
        self: Pin<&mut Self>,
        strategy: &mut S,
        context: &mut S::Context,
    ) -> Poll<Self::Output> {
        let this = self.project();
        let queue: &'a Queue<T> = this.queue;
        poll_pop(queue, this.listener, strategy, context)
            .map(|res| res.map(|(id, item)| Delivery::new(queue, id, item)))
    }
}

#[cfg(target_has_atomic = "ptr")]
easy_wrapper! {
    /// The future returned by [`Queue::get_owned`]: as [`Get`], resolving to an
    /// [`OwnedDelivery`] that can move into a `'static` task.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// let queue = Arc::new(queue_core::Queue::unbounded());
    /// queue.try_put(1).unwrap();
    /// let get: queue_core::futures::GetOwned<i32> = queue.get_owned();
    /// futures_lite::future::block_on(get).unwrap().succeed();
    /// ```
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct GetOwned<T>(GetOwnedInner<T> => Result<OwnedDelivery<T>, GetError>);
    #[cfg(feature = "std")]
    pub(crate) wait();
}

#[cfg(target_has_atomic = "ptr")]
impl<T> GetOwned<T> {
    pub(crate) fn new(queue: Arc<Queue<T>>) -> Self {
        Self::_new(GetOwnedInner {
            queue,
            listener: None,
        })
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<T> fmt::Debug for GetOwned<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("GetOwned { .. }")
    }
}

#[cfg(target_has_atomic = "ptr")]
pin_project! {
    struct GetOwnedInner<T> {
        queue: Arc<Queue<T>>,
        listener: Option<EventListener>,
    }
    // A future dropped while it waits counts its waiter out.
    impl<T> PinnedDrop for GetOwnedInner<T> {
        fn drop(this: Pin<&mut Self>) {
            let this = this.project();
            this.queue.getters().forget(this.listener);
        }
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<T> EventListenerFuture for GetOwnedInner<T> {
    type Output = Result<OwnedDelivery<T>, GetError>;

    fn poll_with_strategy<'x, S: Strategy<'x>>(
        self: Pin<&mut Self>,
        strategy: &mut S,
        context: &mut S::Context,
    ) -> Poll<Self::Output> {
        let this = self.project();
        let queue: &Arc<Queue<T>> = this.queue;
        poll_pop(queue, this.listener, strategy, context)
            .map(|res| res.map(|(id, item)| OwnedDelivery::new(Arc::clone(queue), id, item)))
    }
}
