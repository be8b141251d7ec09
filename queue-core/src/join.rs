//! The future returned by [`Queue::join`].

use core::fmt;
use core::pin::Pin;
use core::task::Poll;

use event_listener::EventListener;
use event_listener_strategy::{easy_wrapper, EventListenerFuture, Strategy};
use pin_project_lite::pin_project;

use crate::ledger::Ledger;
use crate::queue::Queue;
use crate::wait::poll_until;

easy_wrapper! {
    /// The future returned by [`Queue::join`]: resolves to a [`Ledger`] once every
    /// accepted item has ended.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = queue_core::Queue::<u8>::unbounded();
    /// let join: queue_core::futures::Join<'_, u8> = queue.join();
    /// assert_eq!(futures_lite::future::block_on(join).accepted, 0);
    /// ```
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct Join<'a, T>(JoinInner<'a, T> => Ledger);
    #[cfg(feature = "std")]
    pub(crate) wait();
}

impl<'a, T> Join<'a, T> {
    pub(crate) fn new(queue: &'a Queue<T>) -> Self {
        Self::_new(JoinInner {
            queue,
            listener: None,
        })
    }

    /// The queue this join waits on.
    pub(crate) fn queue(&self) -> &'a Queue<T> {
        self._inner.get_ref().queue
    }
}

impl<T> fmt::Debug for Join<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Join { .. }")
    }
}

pin_project! {
    struct JoinInner<'a, T> {
        queue: &'a Queue<T>,
        listener: Option<EventListener>,
    }
    // A future dropped while it waits counts its waiter out.
    impl<'a, T> PinnedDrop for JoinInner<'a, T> {
        fn drop(this: Pin<&mut Self>) {
            let this = this.project();
            this.queue.joiners().forget(this.listener);
        }
    }
}

impl<T> EventListenerFuture for JoinInner<'_, T> {
    type Output = Ledger;

    fn poll_with_strategy<'x, S: Strategy<'x>>(
        self: Pin<&mut Self>,
        strategy: &mut S,
        context: &mut S::Context,
    ) -> Poll<Self::Output> {
        let this = self.project();
        let queue: &Queue<T> = this.queue;
        // Level-triggered: the count itself is checked after every wake-up.
        poll_until(this.listener, queue.joiners(), strategy, context, || {
            queue.is_settled().then(|| queue.ledger())
        })
    }
}
