//! The no-heap tier: latches for `static`s and interrupt handlers, with a fixed number of
//! waiter slots, usable with the `alloc` feature off.
//!
//! | type | ends when | waiters get |
//! |---|---|---|
//! | [`FixedLatch<W>`] | the count reaches zero | `Result<(), NoWaiterSlot>` |
//! | [`FixedFailableLatch<E, W>`] | zero, or the first [`fail`](FixedFailableLatch::fail) | `Result<(), FixedWaitError<E>>` |
//! | [`FixedTrackingLatch<N, E, W>`] | all `N` named counters reported, or a failure | `Result<(), FixedWaitError<E>>` |
//!
//! Every constructor is a `const fn` and every latch is its own storage: a state word, a
//! claim word, `W` [`atomic-waker`](https://docs.rs/atomic-waker) cells, and for the
//! failable and tracking latches the error (stored in place, not boxed) and the names.
//! Nothing in the tier allocates; with `default-features = false` the crate does not even
//! link `alloc`.
//!
//! # Limits, and what an extra waiter gets
//!
//! A latch has `W` waiter slots (default 1, at most [`MAX_WAITERS`]). A wait takes a slot
//! on the first poll that finds the latch still counting and gives it back as soon as it
//! returns `Ready` or is dropped, so `W` bounds the waits *parked at the same time*, not
//! the waits over the latch's life. A wait that finds all `W` slots taken returns
//! [`NoWaiterSlot`] at once: it never steals another waiter's slot and never hangs. On a
//! latch that has ended, every wait is ready at once without a slot. Counts are at most
//! [`MAX_COUNT`] and tracking latches have at most [`MAX_COUNTERS`] names, on every target.
//!
//! # Interrupts
//!
//! Every method may be called from an interrupt handler, at any priority: counting down,
//! failing, reading the count, polling or dropping a wait. None takes a lock, so a handler
//! that preempts thread mode in the middle of any of them cannot deadlock. On targets
//! without compare-and-swap (`thumbv6m-none-eabi`, with `portable-atomic` and
//! `critical-section`) each atomic operation is a short critical section. The transition
//! that ends a latch wakes the `W` slots' wakers on the calling context's stack; wakers
//! run after the latch has ended, so a waker that calls back into the latch (or polls the
//! woken task inline) finds it ended and returns.
//!
//! If a waker panics, the slots after it are still woken while the panic unwinds, and the
//! panic then reaches the caller of `count_down` or `fail`; the latch has ended either way.
//!
//! # The wait loop
//!
//! All waits (plain and timed, all three latches) poll one loop, in `raw.rs`: check the
//! state; claim a slot; register the waker in it; check the state again. The transition
//! that ends the latch writes the state word first and wakes every slot after, so either
//! the second check sees the end or the wake finds the registered waker (atomic-waker's
//! `register`/`wake` contract). A timed wait checks the state once more after its deadline
//! fires, so it reports a timeout only for a latch still counting at that moment, and a
//! tracking timeout always names at least one counter.
//!
//! # Examples
//!
//! ```
//! use tally_latch::fixed::{FixedLatch, FixedTrackingLatch, FixedTimedWaitError};
//!
//! static TICKS: FixedLatch = FixedLatch::new(2);
//! static READY: FixedTrackingLatch<2, &str> = FixedTrackingLatch::new(["clock", "sensor"]);
//!
//! // What a timer interrupt would do:
//! TICKS.count_down();
//! TICKS.count_down();
//! READY.count_down_for("clock").unwrap();
//!
//! futures_lite::future::block_on(async {
//!     TICKS.wait().await.unwrap();
//!     // Any future is a deadline: under embassy, `embassy_time::Timer::after_millis(50)`.
//!     match READY.wait_until(async {}).await {
//!         Err(FixedTimedWaitError::TimedOut(pending)) => assert!(pending.names().eq(["sensor"])),
//!         other => panic!("{other:?}"),
//!     }
//! });
//! ```

mod error;
mod failable;
#[allow(unsafe_code)] // the error stored in place; the SAFETY argument is in the module
mod failure;
mod kind;
mod latch;
mod raw;
mod slots;
mod tracking;
mod wait;
mod waker;

pub use error::{
    DuplicateCounter, FixedCountTooLarge, FixedStillPending, FixedTimedOut, FixedTimedWaitError,
    FixedTimeoutError, FixedWaitError, NoWaiterSlot, UnknownCounter,
};
pub use failable::FixedFailableLatch;
pub use kind::FixedKind;
pub use latch::FixedLatch;
pub use raw::MAX_COUNT;
pub use slots::MAX_WAITERS;
pub use tracking::{FixedTrackingLatch, MAX_COUNTERS};
pub use wait::{FixedWait, FixedWaitUntil};

/// Compile-time proof of the auto traits the docs promise.
#[allow(dead_code)]
fn assert_auto_traits() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<FixedLatch<4>>();
    send_sync::<FixedFailableLatch<&'static str, 2>>();
    send_sync::<FixedTrackingLatch<3, u8, 2>>();
    send_sync::<FixedWait<'static, FixedLatch>>();
    send_sync::<FixedWait<'static, FixedTrackingLatch<2, u8>>>();
    send::<FixedWaitUntil<'static, FixedFailableLatch<u8>, core::future::Ready<()>>>();
    send_sync::<FixedStillPending<3>>();
    send_sync::<NoWaiterSlot>();
    send_sync::<FixedTimeoutError>();
    send_sync::<FixedWaitError<'static, u8>>();
}
