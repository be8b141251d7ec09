//! The heap tier: [`CountDownLatch`], [`FailableLatch`] and [`TrackingLatch`], for any
//! number of waiters. Built with the `alloc` feature.
//!
//! The three latches are one type, [`LatchOf<K>`], over one raw core; the kind `K` is what
//! sets them apart. Each row imports only from the rows above it (and `crate::sync`):
//!
//! | files | own |
//! |---|---|
//! | `error.rs`, `waiters.rs`, `trace.rs`, `diagnostics.rs` | errors; the waiter list and the terminal notification, hardened against user wakers; `tracing` events; the count-down event |
//! | `raw.rs`, `blocking.rs`, `names.rs` | the engine: the state word and the one wait loop, its thread-parking driver; the tracking latch's table of names |
//! | `latch.rs`, `futures.rs` | the [`Latch`] trait and the futures it names (they name each other) |
//! | `latch_of.rs` | [`LatchOf`]: what every latch has, written once (reads, label, waits, `Debug`), and the hooks a kind supplies |
//! | `count_down.rs`, `failable.rs`, `tracking.rs`, `counter.rs` | each latch's kind, type alias, constructors and own verbs; the counter handles (a tracking latch and its guards name each other) |

#[cfg(feature = "std")]
mod blocking;
mod count_down;
mod counter;
mod diagnostics;
mod error;
mod failable;
pub mod futures;
mod latch;
mod latch_of;
#[cfg(feature = "metrics")]
mod metrics;
mod names;
mod raw;
#[cfg(feature = "tracing")]
mod trace;
mod tracking;
mod waiters;

pub use count_down::CountDownLatch;
pub use counter::Counter;
#[cfg(target_has_atomic = "ptr")]
pub use counter::OwnedCounter;
pub use diagnostics::CountDownEvent;
pub use error::{ChainedFailure, CountTooLarge, Failure, NameError, StillPending, TimedOut};
pub use failable::FailableLatch;
pub use latch::Latch;
pub use latch_of::LatchOf;
pub use raw::MAX_COUNT;
pub use tracking::TrackingLatch;

/// The kinds of [`LatchOf`]: the parameter that makes it a [`CountDownLatch`]
/// (`LatchOf<CountDown>`), a [`FailableLatch<E>`] (`LatchOf<Failable<E>>`) or a
/// [`TrackingLatch<E>`] (`LatchOf<Tracking<E>>`). Code names the latch types; the kinds show
/// in their definitions, and [`Kind`](kind::Kind) bounds code generic over every latch.
pub mod kind {
    pub use super::count_down::CountDown;
    pub use super::failable::Failable;
    pub use super::latch_of::Kind;
    pub use super::tracking::Tracking;
}

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
    send_sync::<ChainedFailure<String>>();
    send_sync::<TimedOut>();
    send_sync::<NameError>();
    send_sync::<StillPending>();
}
