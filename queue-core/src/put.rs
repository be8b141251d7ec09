//! The future returned by [`Queue::put`].

use core::fmt;
use core::pin::Pin;
use core::task::Poll;

use event_listener::EventListener;
use event_listener_strategy::{easy_wrapper, EventListenerFuture, Strategy};
use pin_project_lite::pin_project;

use crate::error::PutError;
use crate::job_id::JobId;
use crate::queue::Queue;
use crate::wait::poll_until;

easy_wrapper! {
    /// The future returned by [`Queue::put`]: resolves to the item's [`JobId`] once
    /// accepted, or to a [`PutError`] holding the item.
    ///
    /// Owns the item until it is accepted: dropping the future unresolved drops the item
    /// and accepts nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = queue_core::Queue::bounded(1).unwrap();
    /// let put: queue_core::futures::Put<'_, u8> = queue.put(1);
    /// assert_eq!(futures_lite::future::block_on(put).unwrap().get(), 0);
    /// ```
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct Put<'a, T>(PutInner<'a, T> => Result<JobId, PutError<T>>);
    #[cfg(feature = "std")]
    pub(crate) wait();
}

impl<'a, T> Put<'a, T> {
    pub(crate) fn new(queue: &'a Queue<T>, item: T) -> Self {
        Self::_new(PutInner {
            queue,
            item: Some(item),
            listener: None,
        })
    }

    /// Takes the item back out of a put that has not resolved; `None` once it has.
    pub(crate) fn take_item(&mut self) -> Option<T> {
        self._inner.get_mut().item.take()
    }
}

impl<T> fmt::Debug for Put<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Put { .. }")
    }
}

pin_project! {
    struct PutInner<'a, T> {
        queue: &'a Queue<T>,
        // `None` once the future has resolved.
        item: Option<T>,
        listener: Option<EventListener>,
    }
    // A future dropped while it waits counts its waiter out.
    impl<'a, T> PinnedDrop for PutInner<'a, T> {
        fn drop(this: Pin<&mut Self>) {
            let this = this.project();
            this.queue.putters().forget(this.listener);
        }
    }
}

impl<T> EventListenerFuture for PutInner<'_, T> {
    type Output = Result<JobId, PutError<T>>;

    fn poll_with_strategy<'x, S: Strategy<'x>>(
        self: Pin<&mut Self>,
        strategy: &mut S,
        context: &mut S::Context,
    ) -> Poll<Self::Output> {
        let this = self.project();
        let queue: &Queue<T> = this.queue;
        let item = this.item;
        poll_until(this.listener, queue.putters(), strategy, context, || {
            let value = item.take().expect("`Put` polled after it completed");
            match queue.try_put(value) {
                Err(PutError::Full(value)) => {
                    *item = Some(value);
                    None
                }
                done => Some(done),
            }
        })
    }
}
