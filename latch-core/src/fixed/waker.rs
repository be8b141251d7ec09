//! The waker cell of one waiter slot: `atomic-waker`'s `AtomicWaker`, or under `cfg(loom)` a
//! stand-in with the same contract that loom can see.
//!
//! `atomic-waker` has no loom support. Its contract is what the wait loop relies on:
//! `register` stores a waker, `take` removes it, and a `wake` (a `take` then a wake) that
//! follows a `register` in any interleaving either finds that waker or lets a `register`
//! that overlaps it see the wake-up. A mutex around an `Option<Waker>` keeps that contract
//! (every call is atomic with respect to the others), so the loom models check the latch's
//! protocol against the contract; `atomic-waker`'s own lock-free implementation of it is
//! tested by its authors.

#[cfg(not(loom))]
pub(crate) use atomic_waker::AtomicWaker;

#[cfg(loom)]
pub(crate) use self::model::AtomicWaker;

#[cfg(loom)]
mod model {
    use core::task::Waker;

    use loom::sync::Mutex;

    /// `atomic_waker::AtomicWaker`'s interface, over a loom mutex.
    #[derive(Debug, Default)]
    pub struct AtomicWaker {
        waker: Mutex<Option<Waker>>,
    }

    impl AtomicWaker {
        pub(crate) fn new() -> Self {
            Self::default()
        }

        pub(crate) fn register(&self, waker: &Waker) {
            let mut slot = self.waker.lock().unwrap();
            if !slot.as_ref().is_some_and(|old| old.will_wake(waker)) {
                *slot = Some(waker.clone());
            }
        }

        pub(crate) fn take(&self) -> Option<Waker> {
            self.waker.lock().unwrap().take()
        }

        pub(crate) fn wake(&self) {
            // As in atomic-waker: the waker is taken out first and woken with no lock held.
            if let Some(waker) = self.take() {
                waker.wake();
            }
        }
    }
}
