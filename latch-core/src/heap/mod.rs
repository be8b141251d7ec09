//! The heap tier: [`CountDownLatch`], [`FailableLatch`] and [`TrackingLatch`], on
//! event-listener, for any number of waiters. Built with the `alloc` feature.

#[cfg(feature = "std")]
mod blocking;
mod count_down;
mod counter;
mod diagnostics;
mod error;
mod failable;
pub mod futures;
mod latch;
mod notify;
mod raw;
#[cfg(feature = "tracing")]
mod trace;
mod tracking;

pub use count_down::CountDownLatch;
pub use counter::Counter;
#[cfg(target_has_atomic = "ptr")]
pub use counter::OwnedCounter;
pub use diagnostics::CountDownEvent;
pub use error::{CountTooLarge, Failure, NameError, StillPending, TimedOut};
pub use failable::FailableLatch;
pub use latch::Latch;
pub use raw::MAX_COUNT;
pub use tracking::TrackingLatch;

/// Compile-time proof of the auto traits the docs promise.
#[allow(dead_code)]
fn assert_auto_traits() {
    use alloc::string::String;

    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<CountDownLatch>();
    send_sync::<FailableLatch<String>>();
    send_sync::<TrackingLatch<String>>();
    send_sync::<Counter<'static, String>>();
    #[cfg(target_has_atomic = "ptr")]
    send_sync::<OwnedCounter<String>>();
    #[cfg(target_has_atomic = "ptr")]
    send_sync::<futures::WaitOwned<TrackingLatch<String>>>();
    send_sync::<futures::Wait<'static, CountDownLatch>>();
    send_sync::<futures::Wait<'static, TrackingLatch<String>>>();
    send::<futures::WaitUntil<'static, FailableLatch<()>, core::future::Ready<()>>>();
    send_sync::<Failure<String>>();
    send_sync::<TimedOut>();
    send_sync::<NameError>();
    send_sync::<StillPending>();
}
