//! `Lock`: the lock of [`Redeliveries`](crate::Redeliveries)' table. On a target it is a
//! critical section around a `RefCell`, the lock every embassy target links; under
//! `cfg(loom)` it is a loom mutex, so that the models see each time the table is taken
//! (loom cannot see inside a critical section).

#[cfg(not(loom))]
use core::cell::RefCell;

/// Shared state taken under a lock, for one closure at a time.
pub(crate) struct Lock<T> {
    #[cfg(not(loom))]
    inner: critical_section::Mutex<RefCell<T>>,
    #[cfg(loom)]
    inner: loom::sync::Mutex<T>,
}

impl<T> Lock<T> {
    crate::const_fn! {
        /// `value` behind the lock.
        pub(crate) fn new(value: T) -> Self {
            Lock {
                #[cfg(not(loom))]
                inner: critical_section::Mutex::new(RefCell::new(value)),
                #[cfg(loom)]
                inner: loom::sync::Mutex::new(value),
            }
        }
    }

    /// Runs `f` on the state, under the lock. `f` must not take this lock again (a
    /// `RefCell` would panic, a loom mutex deadlock); whatever may take other locks
    /// (releasing a claim, waking a waker) is done by the caller once `with` returns.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        #[cfg(not(loom))]
        return critical_section::with(|cs| f(&mut self.inner.borrow_ref_mut(cs)));
        #[cfg(loom)]
        return f(&mut self.inner.lock().unwrap());
    }
}
