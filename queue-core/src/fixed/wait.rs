//! [`FixedWait`]: the one wait loop every future of the fixed tier polls, and the slot it
//! holds.

use core::task::{Poll, Waker};

use super::error::NoWaiterSlot;
use super::waiters::Class;
use crate::wait::turn::Turn;

/// One wait: nothing until its first attempt fails, then a slot of its class, held until
/// the wait returns or is dropped ([`release`](FixedWait::release)), and the turns it was
/// woken for and has not used.
///
/// Invariant: once the wait has returned `Ready` (in any form), it holds no slot and no
/// turn, so a finished future kept alive keeps no other waiter from a slot or a hand-off.
#[derive(Debug, Default)]
pub(crate) struct FixedWait {
    slot: Option<usize>,
    /// Notifications taken and not yet used by an attempt (see `turns.rs`).
    held: usize,
    /// Counted in the class's waiters: from the claim of the slot until the wait takes a
    /// notification, and again once it must wait once more.
    counted: bool,
}

impl FixedWait {
    pub(crate) const fn new() -> Self {
        FixedWait {
            slot: None,
            held: 0,
            counted: false,
        }
    }

    /// Tries `attempt` (given whether it holds a turn); while it has nothing, waits in a
    /// slot of `class` and tries again on every poll.
    ///
    /// The order is the one `waiters.rs` argues loses no wake-up: count in and claim a
    /// slot, register the waker, try, look at the slot's mark; sleep only if the try
    /// failed and no mark is there. The waker is registered before the try, so a wake-up of
    /// every waiter (a shutdown, the queue settling), which marks nothing, either finds it
    /// or is seen by the try. Level-triggered: any wake-up only means "try again". A mark
    /// taken is a turn, used by the next attempt whatever it finds (the attempt redeems
    /// it); that attempt comes first, before the waker is registered again, and only if it
    /// fails does the wait count itself in and register again as above.
    ///
    /// With every slot of the class taken, the wait tries once more and then returns
    /// [`NoWaiterSlot`] at once: it never takes another waiter's slot and never hangs.
    pub(crate) fn poll<R>(
        &mut self,
        class: Class<'_>,
        waker: &Waker,
        mut attempt: impl FnMut(&mut Turn<'_>) -> Option<R>,
    ) -> Poll<Result<R, NoWaiterSlot>> {
        loop {
            if let Some(slot) = self.slot {
                if self.counted && class.take_notification(slot) {
                    self.counted = false;
                    self.held += 1;
                    // A turn was handed over: try with it before registering again (it
                    // usually finds its item or slot).
                    if let Some(ready) = self.try_once(&mut attempt) {
                        self.release(class);
                        return Poll::Ready(Ok(ready));
                    }
                }
                if !self.counted {
                    class.count_in();
                    self.counted = true;
                }
                class.register(slot, waker);
            }
            if let Some(ready) = self.try_once(&mut attempt) {
                self.release(class);
                return Poll::Ready(Ok(ready));
            }
            match self.slot {
                None => match class.claim() {
                    // Registered next, then tried again before sleeping.
                    Some(slot) => {
                        self.slot = Some(slot);
                        self.counted = true;
                    }
                    None => {
                        // Every slot is taken; the queue may have moved meanwhile.
                        let last = self.try_once(&mut attempt);
                        self.release(class);
                        return Poll::Ready(last.ok_or(NoWaiterSlot {
                            slots: class.slots(),
                        }));
                    }
                },
                Some(slot) => {
                    if !class.is_notified(slot) {
                        return Poll::Pending;
                    }
                }
            }
        }
    }

    /// One attempt, with a turn if the wait holds one. The attempt uses it up, whatever it
    /// finds, through the [`Turn`], which lowers `held` as it redeems the turn (so a panic
    /// in the attempt leaves `held` right, see `turn.rs`).
    #[inline]
    fn try_once<R>(&mut self, attempt: &mut impl FnMut(&mut Turn<'_>) -> Option<R>) -> Option<R> {
        let mut turn = Turn::of(&mut self.held);
        let done = attempt(&mut turn);
        debug_assert!(!turn.is_held(), "an attempt uses its turn up");
        done
    }

    /// One last attempt, for a wait whose deadline has fired (a mark that arrived since the
    /// last poll lends it its turn); the wait then gives everything up, whatever the attempt
    /// found.
    pub(crate) fn last_try<R>(
        &mut self,
        class: Class<'_>,
        mut attempt: impl FnMut(&mut Turn<'_>) -> Option<R>,
    ) -> Option<R> {
        if let Some(slot) = self.slot {
            if self.counted && class.take_notification(slot) {
                self.counted = false;
                self.held += 1;
            }
        }
        let done = self.try_once(&mut attempt);
        self.release(class);
        done
    }

    /// Gives the slot back, if the wait holds one, and passes the turns it holds on.
    #[inline]
    pub(crate) fn release(&mut self, class: Class<'_>) {
        let turns = core::mem::take(&mut self.held);
        let counted = core::mem::take(&mut self.counted);
        match self.slot.take() {
            Some(slot) => class.release(slot, turns, counted),
            None => class.pass_on(turns),
        }
    }

    /// Whether the wait holds nothing: a drop then has nothing to give back.
    #[inline]
    pub(crate) fn is_idle(&self) -> bool {
        self.slot.is_none() && self.held == 0
    }
}
