//! The waker cell of one waiter slot: `atomic-waker`'s `AtomicWaker`, or under `cfg(loom)` a
//! stand-in with the same contract that loom can see.
//!
//! The contract the wait loop relies on (`wait.rs`): `register` stores a waker, `take`
//! removes it, and a `wake` (a `take`, then a wake) that follows a `register` either finds
//! that waker, or the `register` comes after it and sees everything the waking thread did
//! before `wake`. `atomic-waker` keeps it without a lock, so a handler that interrupts a
//! `register` never waits for it (it leaves the wake-up for the `register` to deliver). It
//! has no loom support; a loom mutex around an `Option<Waker>` keeps the same contract
//! (every call is atomic with respect to the others), so the models check the queue's
//! protocol against the contract, and `atomic-waker`'s own implementation of it is tested
//! by its authors.

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
    pub(crate) struct AtomicWaker {
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
