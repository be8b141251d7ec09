//! Blocking waits: the shared wait loop driven with a thread-parking strategy that can give
//! up at a deadline.

use core::pin::Pin;
use core::task::Poll;
use std::time::Instant;

use event_listener::{EventListener, Listener};
use event_listener_strategy::{EventListenerFuture, Strategy};

use crate::heap::raw::{RawHandle, RawWait, Terminal};

/// Parks the thread on the listener until it is notified or `deadline` passes; a passed
/// deadline surfaces as `Poll::Pending` from the wait loop. (Waits without a deadline use
/// event-listener-strategy's own `Blocking`.)
struct Until {
    deadline: Instant,
}

impl Strategy<'_> for Until {
    type Context = ();
    type Future = core::future::Ready<()>;

    fn poll<T, L: Listener<T> + Unpin>(&mut self, listener: &mut Option<L>, _: &mut ()) -> Poll<T> {
        let listener = listener
            .take()
            .expect("the wait loop always registers a listener before parking");
        match listener.wait_deadline(self.deadline) {
            Some(notified) => Poll::Ready(notified),
            None => Poll::Pending,
        }
    }

    fn wait(&mut self, listener: EventListener) -> Self::Future {
        listener.wait_deadline(self.deadline);
        core::future::ready(())
    }
}

/// Blocks until the latch ends (`Some`) or `deadline` passes (`None`). A latch that ended
/// exactly at the deadline reports how it ended.
pub(crate) fn block_until<H: RawHandle>(
    wait: &mut RawWait<H>,
    deadline: Instant,
) -> Option<Terminal> {
    let mut strategy = Until { deadline };
    match Pin::new(&mut *wait).poll_with_strategy(&mut strategy, &mut ()) {
        Poll::Ready(terminal) => Some(terminal),
        Poll::Pending => wait.latch().terminal(),
    }
}
