//! Runtime-agnostic countdown latches: "have N things happened yet?"
//!
//! A latch opens once a fixed number of events have happened: N shards loaded, N replicas
//! acknowledged, N components ready. Counters never block; any number of tasks and threads
//! wait; it opens once and stays open.
//!
//! | type | ends when | waiters get |
//! |---|---|---|
//! | [`CountDownLatch`] | the count reaches zero | `()` |
//! | [`FailableLatch<E>`] | zero, or the first [`fail`](FailableLatch::fail) | `Result<(), E>` |
//! | [`TrackingLatch<E>`] | every named counter reported, or one failed or was dropped | `Result<(), Failure<E>>` |
//!
//! Every latch can be awaited with a deadline, which is any future ([`Latch::wait_until`]):
//! the crate names no runtime, and a timed-out wait on a [`TrackingLatch`] names exactly the
//! counters that never reported. Under `std`, every latch also has blocking waits.
//!
//! **Which primitive?** A latch counts events that are not the completion of tasks you own.
//! For "wait for these tasks to finish", use a join set or `tokio_util`'s `TaskTracker`;
//! for "these N tasks wait for each other, phase after phase", use `async_lock::Barrier`;
//! for "did every job I accepted finish, and how?", use the `tally-queue` work queue.
//!
//! # Examples
//!
//! ```
//! # #[cfg(feature = "alloc")] { // the heap tier
//! use tally_latch::TrackingLatch;
//!
//! let ready = TrackingLatch::new(["consumer", "cache-warmer", "http"]).unwrap();
//! ready.count_down_for("consumer").unwrap();
//! ready.counter("http").unwrap().report();
//!
//! // The deadline can be any future: here one that is already done. A timed wait gives
//! // `Ok(how the latch ended)` or `Err(the timeout)`, like `tokio::time::timeout`.
//! let pending = futures_lite::future::block_on(ready.wait_until(async {})).unwrap_err();
//! assert_eq!(pending.names(), ["cache-warmer"]);
//! assert_eq!(pending.to_string(), "timed out waiting for: cache-warmer");
//! # }
//! ```
//!
//! Errors are owned, so `?` carries them into `anyhow::Error` or a boxed error:
//!
//! ```
//! # #[cfg(feature = "alloc")] { // the heap tier
//! use std::error::Error;
//! use tally_latch::TrackingLatch;
//!
//! async fn gate(ready: &TrackingLatch<String>) -> Result<(), Box<dyn Error + Send + Sync>> {
//!     ready.wait_until(async {}).await??; // the timeout, then the failure
//!     Ok(())
//! }
//!
//! let ready = TrackingLatch::new_failable(["db"]).unwrap();
//! ready.fail(String::from("db: connection refused")).unwrap();
//! let error = futures_lite::future::block_on(gate(&ready)).unwrap_err();
//! assert_eq!(error.to_string(), "latch failed: db: connection refused");
//! # }
//! ```
//!
//! Where the latch's error type is itself an error, [`Failure::into_chained`] makes it the
//! failure's [`source`](core::error::Error::source), so that it can be found in the chain
//! by its type.
//!
//! # Wakers, observers and deadlines: what user code may do
//!
//! Wakers run on the notifying thread: the `count_down` that opens a latch, or the `fail`
//! that fails it, takes every parked waker out of the latch's waiter list and wakes them
//! before it returns, with the list's lock released. So a waker:
//!
//! - **may** call back into the latch that is waking it, or into any other latch: a
//!   count-down or failure of the ended latch is refused, a new wait is ready at once, and
//!   ending another latch nests its notification inside this one;
//! - **may** poll the woken task inline from `wake`, with or without `std`;
//! - **may** panic: every other waiter is still woken, the panic then propagates out of
//!   `count_down` or `fail` (without `std`, a second panicking waker in the same
//!   notification aborts, as a panic during unwinding does);
//! - **should not** block: the counting thread waits for it.
//!
//! A waker's `clone` runs under the waiter list's lock (a wait stores a clone as it
//! parks), so it must not wait on that latch; its `wake` and `drop` never do.
//!
//! An [`on_count_down`](TrackingLatch::on_count_down) observer runs on the counting thread
//! before the waiters it releases wake; if it panics on the opening count-down, the waiters
//! are woken as the panic unwinds, and the panic reaches the caller.
//!
//! A deadline future is polled after the latch, and when it completes the latch is checked
//! once more, so work done by the deadline's own poll (or by another thread meanwhile)
//! counts. A wait that has returned, in any form, holds no waker slot and no wake-up.
//!
//! # Features
//!
//! - `std` (default): blocking waits and `Instant`-based diagnostics
//!   ([`TrackingLatch::time_to_open`], [`CountDownEvent::elapsed`]).
//! - `critical-section`: for microcontrollers. Without it (and without `std`), a heap
//!   latch guards its waiter list with a spinlock, which deadlocks if a count-down in an
//!   interrupt handler preempts a thread that holds it; with it, the list is guarded by a
//!   critical section. Embedded users want this feature.
//! - `portable-atomic`: atomics from `portable-atomic`, for targets without compare-and-swap
//!   such as `thumbv6m-none-eabi` (combine with `critical-section`).
//! - `tracing`: every latch emits `tracing` events (target `tally_latch`), carrying the
//!   label set with `with_label` (e.g. [`CountDownLatch::with_label`]):
//!
//!   | event | level | fields |
//!   |---|---|---|
//!   | `latch count-down` | `DEBUG` | `label`, `remaining`; tracking: `counter`, `elapsed_us` |
//!   | `latch opened` | `INFO` | `label`; tracking: `counter`, `time_to_open_us` |
//!   | `latch failed` | `WARN` | `label`, `reason`, `error_type`; tracking: `counter` |
//!
//!   `reason` is `failed`, `counter failed`, `abandoned` (a counter dropped without
//!   reporting) or `panicked` (dropped while its thread panicked). The error value itself
//!   is not formatted: the latches put no `Display` bound on `E` (`error_type` names it).
//!   Events are emitted before the waiters they concern wake.
//! - `metrics` (implies `std`): the latches' figures through the
//!   [`metrics`](https://docs.rs/metrics) facade, each under the label `latch` (the label
//!   set with `with_label`, empty if unset), written by `record_metrics` (e.g.
//!   [`CountDownLatch::record_metrics`][record_metrics]; call it before a scrape renders them), except
//!   the time to open, recorded as a [`TrackingLatch`] opens:
//!
//!   | name | kind | figure |
//!   |---|---|---|
//!   | `tally_latch_pending` | gauge | [`count`](CountDownLatch::count): count-downs still needed (a tracking latch's counters not reported) |
//!   | `tally_latch_open` | gauge | 1 once open, else 0 |
//!   | `tally_latch_failed` | gauge | 1 once failed, else 0 |
//!   | `tally_latch_time_to_open_seconds` | histogram | a [`TrackingLatch`]'s [`time_to_open`](TrackingLatch::time_to_open), recorded as it opens |
//! - `alloc` (default, implied by `std`): the latches above, for any number of waiters.
//!   Without it
//!   (`default-features = false`) the crate needs no global allocator and offers only the
//!   [`fixed`] tier: [`FixedLatch`], [`FixedFailableLatch`] and [`FixedTrackingLatch`], `const`
//!   latches for `static`s and interrupt handlers with a fixed number of waiter slots.
//!
//! With `alloc` but without `std` the crate needs a global allocator: a latch's waiter list
//! grows as waiters park (a wait allocates nothing of its own).
//!
//! The `loom` cfg (`RUSTFLAGS="--cfg loom"`) swaps in loom's atomics for model checking;
//! `new` is not `const` under it.
//!
//! # Source layout
//!
//! Each tier is a folder over one raw core (`raw.rs`: the state word and the one wait loop),
//! and its latch types only call down into it. A folder imports only `sync.rs` from outside
//! itself, and `lib.rs` only declares and re-exports.
//!
//! | path | owns |
//! |---|---|
//! | `lib.rs` | this index: the crate docs, the lints, the modules and the re-exports |
//! | `sync.rs` | what both tiers share: the atomics (loom's, portable-atomic's or core's) and `const_fn!` |
//! | `heap/` | the `alloc` tier, with a growable waiter list: `LatchOf` and its kinds, their futures, the counter handles, the errors and diagnostics |
//! | `fixed/` | the no-heap tier: [`fixed`]'s latches, their waiter slots and the error stored in place (the crate's one `unsafe` module) |
//!
#![cfg_attr(
    feature = "metrics",
    doc = "[record_metrics]: CountDownLatch::record_metrics"
)]
// Without the feature the method is not built: the link goes to the feature list.
#![cfg_attr(not(feature = "metrics"), doc = "[record_metrics]: #features")]
#![no_std]
// A `no_std` crate: name `core` and `alloc` items by their own paths, so the crate builds
// without `std` (the workspace's std-only crates need no such rule).
#![warn(
    clippy::std_instead_of_core,
    clippy::alloc_instead_of_core,
    clippy::std_instead_of_alloc
)]
#![deny(unsafe_code)] // allowed in one module: `fixed/failure.rs`
#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(docsrs, doc(auto_cfg(hide(loom))))]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod fixed;
#[cfg(feature = "alloc")]
mod heap;
mod sync;

pub use fixed::{FixedFailableLatch, FixedLatch, FixedTrackingLatch};
#[cfg(feature = "alloc")]
pub use heap::*;
