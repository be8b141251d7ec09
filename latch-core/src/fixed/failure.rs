//! [`RawFailable`]: a fixed latch with a slot for its first error, stored in place.
//!
//! This is the one module of the crate with `unsafe` code. Without a heap the error cannot
//! go into a `OnceBox`, and waiters are lent `&E`, so it lives in an `UnsafeCell` written
//! once. The state word's protocol makes that sound: only the caller whose
//! [`claim_failure`](super::raw::Raw::claim_failure) succeeded writes the cell, once,
//! before it publishes `FAILED` with Release; the cell is read only by callers that have
//! seen `FAILED` with Acquire, and never written again; it is dropped with the latch.

use core::mem::MaybeUninit;

use super::raw::{Raw, RawFixed, Status};
use super::waker::AtomicWaker;

/// A fixed latch and the first error it failed with.
pub(crate) struct RawFailable<E, const W: usize> {
    /// Initialised exactly when the state word has `FAILED` (or, during the one `fail` call
    /// that claimed the failure, between its write and its publish).
    error: UnsafeCell<MaybeUninit<E>>,
    raw: RawFixed<[AtomicWaker; W]>,
}

// SAFETY: the cell is written once, by the one caller that claimed the failure, and only
// read (as `&E`, possibly from several threads at once) after that write is published; so
// sharing the latch moves an `E` across threads (`E: Send`) and shares `&E` (`E: Sync`).
unsafe impl<E: Send + Sync, const W: usize> Sync for RawFailable<E, W> {}

impl<E, const W: usize> RawFailable<E, W> {
    crate::sync::const_fn! {
        /// A failable latch with `pending` outstanding; the caller has checked the bound.
        pub(crate) fn new(pending: usize) -> Self {
            Self {
                error: UnsafeCell::new(MaybeUninit::uninit()),
                raw: RawFixed::new(pending),
            }
        }
    }

    /// The state machine underneath.
    #[inline]
    pub(crate) fn raw(&self) -> &Raw {
        &self.raw
    }

    /// Fails the latch with `error` unless it has already opened or a failure was claimed;
    /// hands `error` back if so.
    pub(crate) fn fail(&self, error: E) -> Result<(), E> {
        if !self.raw().claim_failure() {
            return Err(error);
        }
        self.error.with_mut(|cell| {
            // SAFETY: this call claimed the failure, so it is the only writer there will
            // ever be, and no reader looks at the cell before `publish_failure` below.
            unsafe { (*cell).write(error) };
        });
        self.raw().publish_failure();
        Ok(())
    }

    /// The error, once the failure is published.
    pub(crate) fn error(&self) -> Option<&E> {
        match self.raw().status() {
            Status::Failed => Some(self.failed_error()),
            _ => None,
        }
    }

    /// The error of a latch that has been seen failed (with an Acquire load of the state).
    ///
    /// # Panics
    ///
    /// If the latch has not failed: a bug in the caller, checked again here.
    pub(crate) fn failed_error(&self) -> &E {
        assert_eq!(
            self.raw().status(),
            Status::Failed,
            "only a failed latch has an error"
        );
        self.error.with(|cell| {
            // SAFETY: `FAILED` is set (just read with Acquire), so the claimant's write
            // happened-before this read and nothing writes the cell again; the reference
            // lives as long as `&self`, and the value is dropped only by `drop` (`&mut`).
            unsafe { (*cell).assume_init_ref() }
        })
    }
}

impl<E, const W: usize> Drop for RawFailable<E, W> {
    fn drop(&mut self) {
        // `&mut self`: no `fail` is in flight, so the cell is initialised iff `FAILED`.
        if self.raw().status() == Status::Failed {
            self.error.with_mut(|cell| {
                // SAFETY: initialised (see above), and dropped only here, once.
                unsafe { (*cell).assume_init_drop() };
            });
        }
    }
}

/// `core::cell::UnsafeCell`, or loom's (which checks the accesses) under `cfg(loom)`, behind
/// loom's closure interface.
#[cfg(not(loom))]
struct UnsafeCell<T>(core::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    const fn new(value: T) -> Self {
        Self(core::cell::UnsafeCell::new(value))
    }

    fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

#[cfg(loom)]
use loom::cell::UnsafeCell;
