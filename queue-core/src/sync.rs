//! The atomics the crate is built on, in one place.
//!
//! - under `cfg(loom)`: loom's model-checked atomics;
//! - with the `portable-atomic` feature: `portable_atomic`'s, for targets without
//!   compare-and-swap (thumbv6m), where they use `critical-section`;
//! - otherwise: `core::sync::atomic`.
//!
//! On targets without native 64-bit atomics (thumbv7em, thumbv6m), `AtomicU64` is built on
//! critical sections with the `critical-section` feature (`critical_u64.rs`, which says why
//! not portable-atomic's), and is portable-atomic's fallback without it: a table of
//! spinning locks, which an interrupt handler must not touch.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

// The ring's stamps (`engine/buffer/raw/ring.rs`), which are only loaded and stored: core's
// on every target, thumbv6m included.
#[cfg(not(loom))]
pub(crate) use core::sync::atomic::AtomicU32;

// The block list of an unbounded queue (`engine/buffer/raw/list.rs`): a slot's state byte and
// the links between blocks, which are only loaded and stored.
#[cfg(all(not(loom), feature = "alloc", not(feature = "portable-atomic")))]
pub(crate) use core::sync::atomic::{AtomicPtr, AtomicU8};
#[cfg(all(loom, feature = "alloc"))]
pub(crate) use loom::sync::atomic::{AtomicPtr, AtomicU8};
#[cfg(all(not(loom), feature = "alloc", feature = "portable-atomic"))]
pub(crate) use portable_atomic::{AtomicPtr, AtomicU8};

#[cfg(all(not(loom), feature = "portable-atomic"))]
pub(crate) use portable_atomic::{AtomicUsize, Ordering};

#[cfg(all(not(loom), not(feature = "portable-atomic")))]
pub(crate) use core::sync::atomic::{AtomicUsize, Ordering};

// The fences that order a waiter's re-check against a redeemed turn (`wait/waiters.rs`,
// `engine/mod.rs`).
#[cfg(all(not(loom), feature = "alloc", not(feature = "portable-atomic")))]
pub(crate) use core::sync::atomic::fence;
#[cfg(all(loom, feature = "alloc"))]
pub(crate) use loom::sync::atomic::fence;
#[cfg(all(not(loom), feature = "alloc", feature = "portable-atomic"))]
pub(crate) use portable_atomic::fence;

#[cfg(all(not(loom), target_has_atomic = "64"))]
pub(crate) use core::sync::atomic::AtomicU64;

/// A lock for data that no user code touches while it is held (the waiter lists of
/// `wait/list.rs`): a critical section holds it for a few loads and stores.
///
/// - under `cfg(loom)`: loom's model-checked mutex;
/// - with `std`: `std::sync::Mutex`, which parks a thread that finds it taken;
/// - without `std`, with the `critical-section` feature: a critical section, so an
///   interrupt handler never finds the lock taken on its own core;
/// - without either: a spinning lock (the `spin` crate). Like the buffer's steps (see
///   [`uninterrupted`]), it then waits forever if an interrupt handler takes it while the
///   code it interrupted holds it; the crate docs tell such users to turn
///   `critical-section` on.
#[cfg(feature = "alloc")]
pub(crate) struct Lock<T> {
    #[cfg(loom)]
    inner: loom::sync::Mutex<T>,
    #[cfg(all(not(loom), feature = "std"))]
    inner: std::sync::Mutex<T>,
    #[cfg(all(not(loom), not(feature = "std"), feature = "critical-section"))]
    inner: critical_section::Mutex<core::cell::RefCell<T>>,
    #[cfg(all(not(loom), not(feature = "std"), not(feature = "critical-section")))]
    inner: spin::mutex::SpinMutex<T>,
}

#[cfg(feature = "alloc")]
impl<T> Lock<T> {
    pub(crate) fn new(value: T) -> Self {
        Lock {
            #[cfg(loom)]
            inner: loom::sync::Mutex::new(value),
            #[cfg(all(not(loom), feature = "std"))]
            inner: std::sync::Mutex::new(value),
            #[cfg(all(not(loom), not(feature = "std"), feature = "critical-section"))]
            inner: critical_section::Mutex::new(core::cell::RefCell::new(value)),
            #[cfg(all(not(loom), not(feature = "std"), not(feature = "critical-section")))]
            inner: spin::mutex::SpinMutex::new(value),
        }
    }

    /// Runs `f` with the data, the lock held. `f` must run no user code (no waker, no
    /// `Drop` of a user type): one that re-entered would take the lock again.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        #[cfg(loom)]
        {
            f(&mut self.inner.lock().expect("no user code runs under the lock"))
        }
        #[cfg(all(not(loom), feature = "std"))]
        {
            // A panic under the lock (a failed allocation) leaves the data consistent:
            // every step that holds it writes each link before the next, so a poisoned
            // lock is used as it is.
            let mut guard = self
                .inner
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            f(&mut guard)
        }
        #[cfg(all(not(loom), not(feature = "std"), feature = "critical-section"))]
        {
            critical_section::with(|section| f(&mut self.inner.borrow_ref_mut(section)))
        }
        #[cfg(all(not(loom), not(feature = "std"), not(feature = "critical-section")))]
        {
            f(&mut self.inner.lock())
        }
    }
}

#[cfg(all(not(loom), not(target_has_atomic = "64"), feature = "critical-section"))]
mod critical_u64;

#[cfg(all(not(loom), not(target_has_atomic = "64"), feature = "critical-section"))]
pub(crate) use critical_u64::AtomicU64;

#[cfg(all(
    not(loom),
    not(target_has_atomic = "64"),
    not(feature = "critical-section")
))]
pub(crate) use portable_atomic::AtomicU64;

/// Runs one buffer operation (a ring's put or get, from its claim to its publication; a
/// push or pop of the growable buffer) so that nothing else can enter the buffer midway.
///
/// Each buffer makes an operation that finds a step of another one half done wait for it.
/// Between threads that is a short wait (see [`back_off`]); but an interrupt handler that
/// finds a step of the code it interrupted half done would wait forever, since that code
/// runs again only once the handler returns. So with the `critical-section` feature the
/// whole operation is one critical section: nothing on this core runs inside it, and
/// another core waits at most for one operation. The operation runs no user code. Without
/// the feature it is a plain call.
#[cfg(all(not(loom), feature = "critical-section"))]
#[inline(always)]
pub(crate) fn uninterrupted<R>(operation: impl FnOnce() -> R) -> R {
    critical_section::with(|_| operation())
}

/// See the `critical-section` variant above: without the feature, a plain call.
#[cfg(any(loom, not(feature = "critical-section")))]
#[inline(always)]
pub(crate) fn uninterrupted<R>(operation: impl FnOnce() -> R) -> R {
    operation()
}

// The items below serve the ring.

/// What a thread does while another finishes a step that takes no lock and runs no user
/// code (a put between claiming a slot and publishing it): a spin hint, or under loom a
/// yield, so the model explores the other thread.
///
/// Under loom, a thread's spins past the first [`FAIR_SPINS`] in one execution stop the
/// model from branching for the rest of that execution: it then runs the thread that
/// yielded least, the one still inside its step. Without this, two threads spinning on
/// the same unfinished step could be scheduled against each other forever (a yield is not
/// a preemption, so the preemption bound does not end it), and the model would report
/// its own unfair schedule as exceeding its branch limit. Like the preemption bound, this
/// bounds the search: a spin only reads and discards, so a path cut here differs from one
/// the model explores (where the step's thread runs within the first spins) in when those
/// discarded reads happened, but once a thread has spun twice the rest of that execution
/// is explored along one schedule only.
#[cfg(loom)]
pub(crate) fn spin_loop() {
    loom::thread_local! {
        static SPINS: core::cell::Cell<u32> = core::cell::Cell::new(0);
    }
    let spins = SPINS.with(|spins| {
        spins.set(spins.get() + 1);
        spins.get()
    });
    if spins > FAIR_SPINS {
        loom::skip_branch();
    }
    loom::hint::spin_loop();
}

/// The spins a thread makes, in one loom execution, while the model still branches.
#[cfg(loom)]
const FAIR_SPINS: u32 = 2;

#[cfg(not(loom))]
pub(crate) use core::hint::spin_loop;

/// How the ring waits for another thread's step (see [`spin_loop`]): an exponential
/// backoff that spins 1, 2, ... 64 hints and then, with `std`, yields the thread at each
/// further call, as crossbeam's `Backoff::snooze` does. The thread waited for may have been
/// preempted mid-step, and with more runnable threads than cores only a yield lets it run
/// again: a spin would last the rest of the waiter's time slice. Without `std` it keeps
/// spinning. Under loom, each call is a [`spin_loop`].
///
/// Takes the step reached so far (0 at first) and returns the next. Written here rather
/// than taken from crossbeam-utils: its `snooze` is inlined into the callers' hot loops,
/// and enabling its `std` feature changes how concurrent-queue's copy compiles too; this
/// one is out of line, where only a waiting thread reaches it, and its step stays in a
/// register.
#[cold]
#[inline(never)]
#[must_use = "the next call takes the step returned"]
pub(crate) fn back_off(step: u32) -> u32 {
    #[cfg(not(loom))]
    {
        /// The steps that spin; the later ones yield (with `std`).
        const SPIN_STEPS: u32 = 6;
        #[cfg(feature = "std")]
        if step > SPIN_STEPS {
            std::thread::yield_now();
            return step;
        }
        for _ in 0..1u32 << step.min(SPIN_STEPS) {
            spin_loop();
        }
        step.min(SPIN_STEPS) + 1
    }
    #[cfg(loom)]
    {
        spin_loop();
        step
    }
}

/// An `UnsafeCell` with loom's interface, so the one module that holds `unsafe` code is
/// checked by loom's cell tracking under `cfg(loom)` and compiles to a plain
/// `core::cell::UnsafeCell` otherwise. Creating the raw pointers is safe; using them is
/// the caller's `unsafe`.
#[cfg(loom)]
#[derive(Debug)]
pub(crate) struct Cell<T>(loom::cell::UnsafeCell<T>);

#[cfg(loom)]
impl<T> Cell<T> {
    pub(crate) fn new(value: T) -> Self {
        Cell(loom::cell::UnsafeCell::new(value))
    }

    /// Runs `f` with a pointer for reading.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        self.0.with(f)
    }

    /// Runs `f` with a pointer for writing.
    #[inline]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        self.0.with_mut(f)
    }
}

#[cfg(not(loom))]
#[derive(Debug)]
pub(crate) struct Cell<T>(core::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> Cell<T> {
    pub(crate) const fn new(value: T) -> Self {
        Cell(core::cell::UnsafeCell::new(value))
    }

    /// Runs `f` with a pointer for reading.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Runs `f` with a pointer for writing.
    #[inline]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::back_off;

    #[test]
    fn back_off_spins_longer_each_step_then_stays_at_the_last() {
        let mut step = 0;
        for expected in 1..=7 {
            step = back_off(step);
            assert_eq!(step, expected);
        }
        // Past the spinning steps: yields (with `std`) or spins the longest pause, and
        // stays there.
        for _ in 0..3 {
            step = back_off(step);
            assert_eq!(step, 7);
        }
    }
}
