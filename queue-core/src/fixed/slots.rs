//! [`SlotBits`]: which of a class's waiter slots are claimed, which hold a notification,
//! and where the next hand-off looks first.

use crate::sync::{AtomicUsize, Ordering};

/// The most waiter slots a [`FixedQueue`](super::FixedQueue) has for each kind of waiter
/// (getters, putters, joiners): a class's claim bits and notification bits share one
/// 32-bit word.
///
/// # Examples
///
/// ```
/// use tally_queue::fixed::{FixedQueue, MAX_WAITERS};
///
/// assert_eq!(MAX_WAITERS, 16);
/// static WIDE: FixedQueue<u8, 4, MAX_WAITERS> = FixedQueue::new();
/// assert!(WIDE.is_empty());
/// ```
pub const MAX_WAITERS: usize = 16;

/// Where a class's notification bits start.
const NOTIFIED_SHIFT: u32 = 16;
/// Every claim bit.
const CLAIMS: usize = (1 << NOTIFIED_SHIFT) - 1;

// Both halves fit in a `usize`.
const _: () = assert!(usize::BITS >= 2 * NOTIFIED_SHIFT);

/// Refuses `W` outside `1..=MAX_WAITERS` when a queue type is instantiated.
pub(crate) struct CheckWaiters<const W: usize>;

impl<const W: usize> CheckWaiters<W> {
    /// Evaluated at compile time by the constructor.
    pub(crate) const OK: () = assert!(
        W >= 1 && W <= MAX_WAITERS,
        "a fixed queue has between 1 and tally_queue::fixed::MAX_WAITERS waiter slots"
    );
}

/// The state of one class's waiter slots, in one word, so that a slot's claim, its
/// notification and its release are each one atomic step.
///
/// ```text
/// bit    31 ............. 16 | 15 ............... 0
///        notified (slot i)   | claimed (slot i)
/// ```
///
/// A wait claims a slot on its first attempt that fails and holds it until it returns or
/// is dropped. A hand-off marks one claimed slot that holds no notification yet
/// ([`notify`](SlotBits::notify)), going round the slots from where the last hand-off
/// stopped; the slot's wait takes the mark on its next poll
/// ([`take_notification`](SlotBits::take_notification)), or gives it up with the slot
/// ([`release`](SlotBits::release)), which clears both bits in one step. A notification bit
/// is set only while its claim bit is.
#[derive(Debug)]
pub(crate) struct SlotBits {
    bits: AtomicUsize,
    /// The slot the next hand-off looks at first: one past the last one marked. Advisory:
    /// two hand-offs that race may both start from the same slot.
    next: AtomicUsize,
}

impl SlotBits {
    crate::const_fn! {
        /// No slot claimed.
        pub(crate) fn new() -> Self {
            SlotBits {
                bits: AtomicUsize::new(0),
                next: AtomicUsize::new(0),
            }
        }
    }

    /// Claims the lowest free one of `slots` slots, or `None` if every one is taken.
    pub(crate) fn claim(&self, slots: usize) -> Option<usize> {
        let all = CLAIMS >> (MAX_WAITERS - slots);
        // Relaxed: a first guess for the compare-exchange, which re-reads the word.
        let mut bits = self.bits.load(Ordering::Relaxed);
        loop {
            let free = !bits & all;
            if free == 0 {
                return None;
            }
            let slot = free.trailing_zeros() as usize;
            // AcqRel: the acquire half pairs with the release of the slot's last owner, so
            // its `take` of the waker cell happens-before the `register` of this claim, and
            // with every notifier's step on this word (see `notify` and `touch`); the
            // release half lets a notifier's later step see what this wait did before.
            match self.bits.compare_exchange_weak(
                bits,
                bits | 1 << slot,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(slot),
                Err(now) => bits = now,
            }
        }
    }

    /// Gives `slot`, which the caller holds, back; returns whether it held a notification
    /// its wait had not taken.
    pub(crate) fn release(&self, slot: usize) -> bool {
        let mine = 1 << slot | 1 << (slot + NOTIFIED_SHIFT as usize);
        // AcqRel: the release half orders this wait's `take` of its waker cell before the
        // next claimant's `register`; the acquire half pairs with the notifier that marked
        // the slot.
        let before = self.bits.fetch_and(!mine, Ordering::AcqRel);
        debug_assert!(
            before & 1 << slot != 0,
            "a slot released that was not claimed"
        );
        before & 1 << (slot + NOTIFIED_SHIFT as usize) != 0
    }

    /// Whether `slot`, which the caller holds, holds a notification.
    pub(crate) fn is_notified(&self, slot: usize) -> bool {
        // Acquire: pairs with the notifier's mark, which comes before its wake-up.
        self.bits.load(Ordering::Acquire) & 1 << (slot + NOTIFIED_SHIFT as usize) != 0
    }

    /// Takes the notification `slot` (which the caller holds) holds, if any; returns
    /// whether there was one.
    pub(crate) fn take_notification(&self, slot: usize) -> bool {
        if !self.is_notified(slot) {
            return false;
        }
        // Acquire: as in `is_notified`. Only this wait clears its bit while it holds the
        // slot, so the bit is still set.
        self.bits
            .fetch_and(!(1 << (slot + NOTIFIED_SHIFT as usize)), Ordering::Acquire);
        true
    }

    /// Marks one of `slots` slots that is claimed and holds no notification yet, the first
    /// such at or after the one the last hand-off stopped at; returns it, or `None` if
    /// every claimed slot already holds one (or none is claimed).
    ///
    /// Always a read-modify-write of the word, even when it marks nothing: a wait that
    /// claims its slot afterwards then reads from it, and sees everything the notifier did
    /// before (see `waiters.rs`).
    pub(crate) fn notify(&self, slots: usize) -> Option<usize> {
        // Relaxed: advisory, see the field.
        let start = self.next.load(Ordering::Relaxed) % slots;
        // Relaxed: a first guess for the compare-exchange, which re-reads the word.
        let mut bits = self.bits.load(Ordering::Relaxed);
        loop {
            let ready = bits & CLAIMS & !(bits >> NOTIFIED_SHIFT);
            // The candidates at or after `start` first, then the rest.
            let after = ready & (CLAIMS << start);
            let pick = if after != 0 { after } else { ready };
            let (next, slot) = if pick == 0 {
                (bits, None)
            } else {
                let slot = pick.trailing_zeros() as usize;
                (bits | 1 << (slot + NOTIFIED_SHIFT as usize), Some(slot))
            };
            // AcqRel: the release half publishes the notifier's change (an item, a slot,
            // the end) to the wait that reads the mark or claims a slot after it; the
            // acquire half reads the claims made before.
            match self
                .bits
                .compare_exchange_weak(bits, next, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => {
                    if let Some(slot) = slot {
                        // Relaxed: advisory.
                        self.next.store(slot + 1, Ordering::Relaxed);
                    }
                    return slot;
                }
                Err(now) => bits = now,
            }
        }
    }

    /// For a wake-up of every wait: a read-modify-write of the word (so a wait that claims
    /// a slot afterwards sees what the caller did before, as for [`notify`]
    /// (SlotBits::notify)); returns the claimed slots as a bit set.
    pub(crate) fn touch(&self) -> usize {
        // AcqRel: see `notify`.
        self.bits.fetch_or(0, Ordering::AcqRel) & CLAIMS
    }

    /// How many slots are claimed now (a snapshot).
    pub(crate) fn claimed(&self) -> usize {
        // Relaxed: a snapshot; nothing is read on the strength of it.
        (self.bits.load(Ordering::Relaxed) & CLAIMS).count_ones() as usize
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn claims_the_lowest_free_slot_until_all_are_taken() {
        let bits = SlotBits::new();
        assert_eq!(bits.claim(3), Some(0));
        assert_eq!(bits.claim(3), Some(1));
        assert_eq!(bits.claim(3), Some(2));
        assert_eq!(bits.claim(3), None);
        assert_eq!(bits.claimed(), 3);
        assert!(!bits.release(1));
        assert_eq!(bits.claim(3), Some(1));
    }

    #[test]
    fn every_one_of_the_most_slots_can_be_claimed() {
        let bits = SlotBits::new();
        for slot in 0..MAX_WAITERS {
            assert_eq!(bits.claim(MAX_WAITERS), Some(slot));
        }
        assert_eq!(bits.claim(MAX_WAITERS), None);
        assert_eq!(bits.touch().count_ones() as usize, MAX_WAITERS);
        for slot in 0..MAX_WAITERS {
            assert_eq!(bits.notify(MAX_WAITERS), Some(slot));
        }
        assert_eq!(bits.notify(MAX_WAITERS), None);
    }

    #[test]
    fn a_notification_marks_a_claimed_slot_once_and_is_taken_once() {
        let bits = SlotBits::new();
        assert_eq!(bits.notify(2), None, "no slot claimed");
        let slot = bits.claim(2).unwrap();
        assert_eq!(bits.notify(2), Some(slot));
        assert_eq!(
            bits.notify(2),
            None,
            "the only claimed slot holds one already"
        );
        assert!(bits.is_notified(slot));
        assert!(bits.take_notification(slot));
        assert!(!bits.take_notification(slot));
        assert_eq!(bits.notify(2), Some(slot));
        assert!(bits.release(slot), "released with its notification");
        assert_eq!(bits.touch(), 0);
    }

    /// Hand-offs go round the slots: a waiter that re-registers in the lowest slot after
    /// each item does not keep the others from their turn.
    #[test]
    fn hand_offs_go_round_the_slots() {
        let bits = SlotBits::new();
        for _ in 0..3 {
            bits.claim(3).unwrap();
        }
        let mut order = [0; 6];
        for pick in &mut order {
            let slot = bits.notify(3).unwrap();
            assert!(bits.take_notification(slot));
            *pick = slot;
        }
        assert_eq!(order, [0, 1, 2, 0, 1, 2]);
        // A mark not yet taken keeps its slot out of the round until it is.
        assert_eq!(bits.notify(3), Some(0));
        assert_eq!(bits.notify(3), Some(1));
        assert!(bits.take_notification(0));
        assert_eq!(bits.notify(3), Some(2));
        assert_eq!(bits.notify(3), Some(0));
        assert_eq!(bits.notify(3), None);
    }
}
