//! A 64-bit atomic built on critical sections, for targets with compare-and-swap but
//! without native 64-bit atomics (thumbv7em) under the `critical-section` feature.
//!
//! portable-atomic's 64-bit fallback on those targets is a table of spinning sequence
//! locks: an interrupt handler that touches a word whose lock the code it interrupted
//! holds spins forever (an interrupt storm over a queue hangs within a few hundred
//! interrupts). Its interrupt-safe alternatives are opt-ins for the final binary
//! (`unsafe-assume-single-core`, `unsafe-assume-privileged`) that refuse to build beside
//! its own `critical-section` feature, which covers only targets without compare-and-swap.
//! So where the user gives this crate a critical section, the word is a `Cell` behind it.
//!
//! Every operation runs inside one critical section. Critical sections are ordered among
//! themselves (each one acquires what the one before released), and every access to the
//! word takes one, so each operation is at least as strong as the ordering it is given:
//! the orderings are accepted for the interface and not needed.

use core::cell::Cell;
use core::sync::atomic::Ordering;

use critical_section::Mutex;

#[derive(Debug)]
pub(crate) struct AtomicU64(Mutex<Cell<u64>>);

impl AtomicU64 {
    pub(crate) const fn new(value: u64) -> Self {
        AtomicU64(Mutex::new(Cell::new(value)))
    }

    /// Runs `f` on the value inside a critical section.
    #[inline]
    fn with<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R {
        critical_section::with(|cs| f(self.0.borrow(cs)))
    }

    /// Replaces the value with `f(value)` and returns the old one.
    #[inline]
    fn update(&self, f: impl FnOnce(u64) -> u64) -> u64 {
        self.with(|cell| {
            let old = cell.get();
            cell.set(f(old));
            old
        })
    }

    #[inline]
    pub(crate) fn load(&self, _: Ordering) -> u64 {
        self.with(Cell::get)
    }

    #[inline]
    pub(crate) fn store(&self, value: u64, _: Ordering) {
        self.with(|cell| cell.set(value));
    }

    #[inline]
    pub(crate) fn fetch_add(&self, value: u64, _: Ordering) -> u64 {
        self.update(|old| old.wrapping_add(value))
    }

    /// The count of retries held back until due (`fate/holding.rs`, a heap-queue part).
    #[cfg(feature = "alloc")]
    #[inline]
    pub(crate) fn fetch_sub(&self, value: u64, _: Ordering) -> u64 {
        self.update(|old| old.wrapping_sub(value))
    }

    #[inline]
    pub(crate) fn fetch_or(&self, value: u64, _: Ordering) -> u64 {
        self.update(|old| old | value)
    }

    #[inline]
    pub(crate) fn fetch_max(&self, value: u64, _: Ordering) -> u64 {
        self.update(|old| old.max(value))
    }

    #[inline]
    pub(crate) fn compare_exchange(
        &self,
        current: u64,
        new: u64,
        _: Ordering,
        _: Ordering,
    ) -> Result<u64, u64> {
        self.with(|cell| {
            let old = cell.get();
            if old == current {
                cell.set(new);
                Ok(old)
            } else {
                Err(old)
            }
        })
    }

    /// As [`compare_exchange`](AtomicU64::compare_exchange): it never fails spuriously.
    #[inline]
    pub(crate) fn compare_exchange_weak(
        &self,
        current: u64,
        new: u64,
        success: Ordering,
        failure: Ordering,
    ) -> Result<u64, u64> {
        self.compare_exchange(current, new, success, failure)
    }
}
