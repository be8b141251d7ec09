//! `Duration` timeouts for [`tally_latch`] and [`tally_queue`] on [`embassy_time`].
//!
//! The cores take any future as a deadline; this crate supplies an
//! [`embassy_time::Timer`], so firmware on an embassy executor (or any executor, with an
//! embassy-time driver linked) can write `latch.wait_timeout(Duration::from_millis(50))`.
//!
//! - [`LatchExt`]: `wait_timeout` for every latch; a tracking latch's timeout names the
//!   counters that had not reported.
//! - [`QueueExt`]: `put_timeout` (the item comes back on a timeout), `get_timeout`,
//!   `get_owned_timeout` (for a queue in an `Arc`, on targets with pointer-sized atomics),
//!   `join_timeout` (a timeout carries the ledger), and `shutdown_timeout`, the
//!   drain-or-abort policy.
//! - [`RetryExt`]: `retry_after` and `retry_backoff` (with a
//!   [`Backoff`](tally_queue::Backoff)) on a delivery, a retry held back on an embassy
//!   timer: the item counts as buffered until the delay is over, and the returned future
//!   lets it go then (or at once if dropped, so nothing is lost).
//! - [`RedeliveryExt`] and [`Redeliveries`] (on targets with pointer-sized atomics):
//!   `with_redelivery_backoff`, redeliveries held back on an embassy timer. A delivery
//!   dropped unresolved under [`AbandonPolicy::Redeliver`](tally_queue::AbandonPolicy)
//!   waits, counted buffered, in a `static` table of `N` places that one task of the
//!   application serves with [`Redeliveries::run`]; embassy tasks are static, so there is
//!   no sleep to spawn per item.
//!
//! The names are those of every other adapter (`tally-tokio`, `tally-smol`, ...);
//! `with_redelivery_backoff` takes the table as well as the backoff. For
//! an absolute deadline, give the core's `_until` method an embassy timer:
//! `latch.wait_until(Timer::at(deadline))`, `queue.get_until(Timer::at(deadline))`.
//!
//! The futures and errors are the cores' own (`tally_latch::futures::WaitUntil`,
//! `tally_queue::futures::Until`, `tally_queue::GetTimeoutError`, ...): this crate only
//! supplies the timer.
//!
//! # Features
//!
//! - `std` (default): forwarded to both cores (blocking waits and `Instant` diagnostics
//!   there). The errors here implement `core::error::Error` either way.
//! - `critical-section`, `portable-atomic`: forwarded to both cores, for microcontrollers
//!   (see the cores' docs). Firmware uses `default-features = false, features =
//!   ["critical-section"]`.
//!
//! The application links an embassy-time driver (a HAL's, `embassy-time/std` on a host, or
//! its own) and picks the tick rate with embassy-time's `tick-hz-*` features. A
//! [`Redeliveries`] table locks with a critical section whatever the features, so an
//! application using it links a critical-section implementation too (a HAL's, or
//! `critical-section/std` on a host).
#![no_std]
// A `no_std` crate: name `core` and `alloc` items by their own paths, so the crate builds
// without `std` (the workspace's std-only crates need no such rule).
#![warn(
    clippy::std_instead_of_core,
    clippy::alloc_instead_of_core,
    clippy::std_instead_of_alloc
)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

// The README's examples run as doctests too.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[cfg(target_has_atomic = "ptr")]
extern crate alloc;

/// Declares a `const fn`, except under `cfg(loom)`, whose mutex is not `const`.
macro_rules! const_fn {
    ($(#[$attr:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty $body:block) => {
        #[cfg(not(loom))]
        $(#[$attr])*
        $vis const fn $name($($arg: $ty),*) -> $ret $body

        #[cfg(loom)]
        $(#[$attr])*
        $vis fn $name($($arg: $ty),*) -> $ret $body
    };
}
pub(crate) use const_fn;

mod latch;
#[cfg(target_has_atomic = "ptr")]
mod lock;
mod queue;
#[cfg(target_has_atomic = "ptr")]
mod redelivery;
mod retry;

pub use crate::latch::LatchExt;
pub use crate::queue::QueueExt;
#[cfg(target_has_atomic = "ptr")]
pub use crate::redelivery::{Redeliveries, RedeliveryExt};
pub use crate::retry::RetryExt;
