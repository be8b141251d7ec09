//! The waiters of a fixed queue: `W` slots for each of its three classes (getters,
//! putters, joiners), each slot an `atomic-waker` cell, and the notifications that pass
//! between the queue and them.
//!
//! # Counts and marks
//!
//! Each class is counted in the ring word its notifiers write anyway, as on the heap
//! queue ([`Counted`], `wait/counted.rs`): getters in `tail` (every put claims it),
//! putters in `head` (every get claims it), joiners in `ended` (every ending adds to it).
//! A claim that finds a waiter without a notification coming counts one pending and tells
//! its caller to hand one off ([`Wake::Reserved`]); the hand-off marks one claimed slot
//! ([`SlotBits::notify`]) and wakes its cell. A waiter is counted in while it waits: it
//! counts itself in before it claims a slot and out after it gave it back; a waiter that
//! takes a mark counts itself out with that notification, tries with the turn it brings,
//! and counts itself in again only if it must wait once more (a mark that reaches its
//! slot in between is withdrawn from the count when it leaves, or taken like any other).
//! A mark that found no slot to mark (the waiter it was counted for has just left, or has
//! counted itself in and not claimed its slot yet) is withdrawn, and the hand-off looks
//! once more, uncounted, as `waiters.rs` of the heap queue does with its waiter list.
//!
//! # No lost wake-up
//!
//! A waiter counts itself in (a read-modify-write of the ring word), claims a slot,
//! registers its waker in the slot's cell, tries, and looks at its mark; it sleeps only if
//! the try failed and no mark is there. A notifier makes its change, then marks a slot (or
//! touches the slot word, for a wake-up of every waiter) with a read-modify-write, then
//! wakes the slot's cell. So:
//!
//! - a change claimed in the ring word before the waiter counted itself in is seen by the
//!   waiter's try, which reads the word after its own read-modify-write of it;
//! - a change claimed after that reads the count; its notifier marks this waiter's slot or
//!   another waiter's (who then takes the item or slot), or, if the count was covered by a
//!   notification on its way, that one reaches a waiter; a mark is seen by the waiter's
//!   look after `register` or wakes the cell (atomic-waker's contract: a `wake` either
//!   finds the waker, or the `register` after it sees what came before the `wake`);
//! - a mark that found no slot because the waiter had not claimed one yet is followed by a
//!   withdrawal and a second look; if that finds no slot either, the waiter's claim comes
//!   after it in the slot word's order and acquires it, so the waiter's try sees every
//!   claim made before the withdrawal, which itself follows every claim that skipped its
//!   notification because of the withdrawn count.
//!
//! Wake-ups of every waiter (a shutdown, the queue settling for the joiners) mark nothing:
//! they touch the slot word, for the same reason (a waiter that claims its slot after the
//! touch sees the shutdown or the settling in its try), and wake the cells of the slots
//! claimed before it, whose waiters registered their wakers before their tries: the wake
//! finds the waker, or the try after the `register` sees the change.
//!
//! # Turns
//!
//! A hand-off grants the woken getter or putter a turn ([`Turns`], as on the heap queue):
//! the item or slot it was woken for is kept for it, and neither a `try_*` nor a waiter
//! that was not woken can take it. A waiter that gives its slot back with a mark it did
//! not take, or with a turn it did not use, passes them to the next marked waiter, or
//! revokes them if there is none.

use core::task::Waker;

use super::slots::SlotBits;
use super::waker::AtomicWaker;
use crate::unwind::each_despite_panics;
use crate::wait::counted::Counted;
use crate::wait::turns::Turns;
use crate::wait::wake::Wake;

/// Which class a slot's cell belongs to, as an index into a slot's three cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Getters = 0,
    Putters = 1,
    Joiners = 2,
}

/// The state of one class: its slots and the turns owed to its woken waiters.
#[derive(Debug)]
struct ClassState {
    bits: SlotBits,
    turns: Turns,
}

impl ClassState {
    crate::const_fn! {
        fn new() -> Self {
            ClassState {
                bits: SlotBits::new(),
                turns: Turns::new(),
            }
        }
    }
}

/// The three classes of a queue and their waker cells: `cells[i][kind]` is slot `i` of
/// class `kind`. Generic over the cells so that `Waiters<[[AtomicWaker; 3]; W]>` coerces to
/// the `W`-free `Waiters<[[AtomicWaker; 3]]>` the code is written over.
pub(crate) struct Waiters<S: ?Sized> {
    classes: [ClassState; 3],
    cells: S,
}

impl<const W: usize> Waiters<[[AtomicWaker; 3]; W]> {
    crate::const_fn! {
        /// `W` free slots per class.
        pub(crate) fn new() -> Self {
            Waiters {
                classes: new_classes(),
                cells: new_cells(),
            }
        }
    }
}

#[cfg(not(loom))]
const fn new_classes() -> [ClassState; 3] {
    [const { ClassState::new() }; 3]
}

#[cfg(loom)]
fn new_classes() -> [ClassState; 3] {
    core::array::from_fn(|_| ClassState::new())
}

#[cfg(not(loom))]
const fn new_cells<const W: usize>() -> [[AtomicWaker; 3]; W] {
    [const { [const { AtomicWaker::new() }; 3] }; W]
}

#[cfg(loom)]
fn new_cells<const W: usize>() -> [[AtomicWaker; 3]; W] {
    core::array::from_fn(|_| core::array::from_fn(|_| AtomicWaker::new()))
}

impl Waiters<[[AtomicWaker; 3]]> {
    /// Class `kind`, counted in `counted` (a ring word).
    #[inline]
    pub(crate) fn class<'a>(&'a self, kind: Kind, counted: Counted<'a>) -> Class<'a> {
        let state = &self.classes[kind as usize];
        Class {
            bits: &state.bits,
            turns: &state.turns,
            cells: &self.cells,
            kind,
            counted,
        }
    }
}

/// One class of waiters with the ring word it is counted in; see the module docs.
#[derive(Clone, Copy)]
pub(crate) struct Class<'a> {
    bits: &'a SlotBits,
    turns: &'a Turns,
    cells: &'a [[AtomicWaker; 3]],
    kind: Kind,
    counted: Counted<'a>,
}

impl<'a> Class<'a> {
    /// The turns owed to this class's woken waiters.
    #[inline]
    pub(crate) fn turns(self) -> &'a Turns {
        self.turns
    }

    /// The slot count of the class.
    #[inline]
    pub(crate) fn slots(self) -> usize {
        self.cells.len()
    }

    /// How many waits hold a slot of the class now (a snapshot).
    pub(crate) fn claimed(self) -> usize {
        self.bits.claimed()
    }

    fn cell(self, slot: usize) -> &'a AtomicWaker {
        &self.cells[slot][self.kind as usize]
    }

    // ---------------------------------------------------------------- the waiter's side

    /// Counts a waiter in, then claims a slot for it; `None` (counted out again) if every
    /// slot is taken.
    pub(crate) fn claim(self) -> Option<usize> {
        self.counted.count_in();
        let slot = self.bits.claim(self.slots());
        if slot.is_none() {
            self.counted.count_out();
        }
        slot
    }

    /// Stores `waker` in `slot`, which the caller holds.
    #[inline]
    pub(crate) fn register(self, slot: usize, waker: &Waker) {
        self.cell(slot).register(waker);
    }

    /// Whether `slot` holds a notification (looked at after `register`).
    #[inline]
    pub(crate) fn is_notified(self, slot: usize) -> bool {
        self.bits.is_notified(slot)
    }

    /// Takes the notification `slot` holds, if any, for a waiter counted in: the waiter
    /// is counted out with it (until it counts itself in again to wait once more).
    /// Returns whether there was one.
    #[inline]
    pub(crate) fn take_notification(self, slot: usize) -> bool {
        if !self.bits.take_notification(slot) {
            return false;
        }
        self.counted.count_out_notified();
        true
    }

    /// Counts in again a waiter that took a notification and must wait once more.
    #[inline]
    pub(crate) fn count_in(self) {
        self.counted.count_in();
    }

    /// Gives `slot` back and counts the waiter out (if `counted`); `turns` turns it holds
    /// (plus one for a notification it did not take) pass to the next waiters.
    pub(crate) fn release(self, slot: usize, turns: usize, counted: bool) {
        let waker = self.cell(slot).take();
        let notified = self.bits.release(slot);
        match (counted, notified) {
            (true, true) => self.counted.count_out_notified(),
            (true, false) => self.counted.count_out(),
            // A mark that came while the waiter was counted out (between a notification
            // it took and its next count-in): its pending count goes, the waiter's count
            // went already.
            (false, true) => self.counted.withdraw(),
            (false, false) => {}
        }
        // Dropped once the slot is free: a waker whose drop panics leaves nothing claimed.
        drop(waker);
        self.pass_on(turns + usize::from(notified));
    }

    /// Passes `n` turns held by a waiter that leaves to as many waiters without a mark.
    ///
    /// The turns are revoked first and granted again for each waiter a mark reaches: a
    /// waiter that claims its slot after the marks below is not reached, and its claim
    /// acquires them, so its try then sees the turns gone and takes what they kept (granted
    /// after, a try could see them still owed, leave the item and sleep with nobody left
    /// to wake it).
    pub(crate) fn pass_on(self, n: usize) {
        if n == 0 {
            return;
        }
        self.turns.revoke(n);
        // Marked uncounted: the leaving waiter counted its own notification out.
        for _ in 0..n {
            let Some(slot) = self.bits.notify(self.slots()) else {
                break;
            };
            self.turns.grant(1);
            self.cell(slot).wake();
        }
    }

    // -------------------------------------------------------------- the notifier's side

    /// Hands one item or slot to a waiter, as the change said (see [`Wake`]): marks one
    /// slot, grants its waiter a turn and wakes it.
    #[inline]
    pub(crate) fn hand_off(self, wake: Wake) {
        match wake {
            Wake::No => {}
            Wake::Reserved => self.hand_off_reserved(),
            Wake::Check => {
                if self.counted.claim() {
                    self.hand_off_reserved();
                }
            }
            Wake::Counted => self.mark_uncounted(),
        }
    }

    /// A hand-off whose notification is counted pending: marks a slot, or withdraws the
    /// count and looks once more (see the module docs).
    #[cold]
    fn hand_off_reserved(self) {
        if let Some(slot) = self.bits.notify(self.slots()) {
            self.turns.grant(1);
            self.cell(slot).wake();
            return;
        }
        self.counted.withdraw();
        self.mark_uncounted();
    }

    /// A hand-off counted nowhere: marks a slot if one is waiting for a mark.
    fn mark_uncounted(self) {
        if let Some(slot) = self.bits.notify(self.slots()) {
            self.turns.grant(1);
            self.cell(slot).wake();
        }
    }

    /// Wakes every waiter of the class (a shutdown; the queue settled, for the joiners),
    /// even if some wakers panic (the first panic then reaches the caller). Grants no
    /// turn: a woken waiter tries again like any other.
    #[cold]
    pub(crate) fn wake_all(self) {
        let mut claimed = self.bits.touch();
        each_despite_panics(
            || {
                if claimed == 0 {
                    return None;
                }
                let slot = claimed.trailing_zeros() as usize;
                claimed &= claimed - 1;
                Some(slot)
            },
            |slot| self.cell(slot).wake(),
        );
    }
}

#[cfg(all(test, not(loom), feature = "std"))]
mod tests {
    use alloc::sync::Arc;
    use alloc::task::Wake as TaskWake;
    use alloc::vec::Vec;
    use core::sync::atomic::{AtomicUsize, Ordering};
    use core::task::Waker;

    use super::*;
    use crate::sync::AtomicU64;

    /// A waker that counts its wake-ups.
    struct Counter(AtomicUsize);

    impl TaskWake for Counter {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn counter() -> (Arc<Counter>, Waker) {
        let counter = Arc::new(Counter(AtomicUsize::new(0)));
        (counter.clone(), Waker::from(counter))
    }

    fn wakes(counter: &Counter) -> usize {
        counter.0.load(Ordering::Relaxed)
    }

    #[test]
    fn a_reserved_hand_off_marks_a_waiter_and_grants_its_turn() {
        let word = AtomicU64::new(0);
        let waiters = Waiters::<[[AtomicWaker; 3]; 2]>::new();
        let waiters: &Waiters<[[AtomicWaker; 3]]> = &waiters;
        let class = waiters.class(Kind::Getters, Counted::own(&word));
        let slot = class.claim().unwrap();
        let (task, waker) = counter();
        class.register(slot, &waker);
        assert!(
            Counted::own(&word).claim(),
            "a counted waiter without a notification"
        );
        class.hand_off(Wake::Reserved);
        assert_eq!(wakes(&task), 1);
        assert_eq!(class.turns().owed(), 1);
        assert!(class.is_notified(slot));
        assert!(
            !Counted::own(&word).claim(),
            "its notification is on its way"
        );
        assert!(class.take_notification(slot));
        assert!(!class.is_notified(slot));
        class.turns().redeem();
        class.release(slot, 0, false);
        assert_eq!(
            word.load(Ordering::Relaxed),
            0,
            "counted out, nothing pending"
        );
        assert_eq!(class.turns().owed(), 0);
    }

    #[test]
    fn a_reserved_hand_off_that_finds_nobody_withdraws_its_count() {
        let word = AtomicU64::new(0);
        let waiters = Waiters::<[[AtomicWaker; 3]; 1]>::new();
        let waiters: &Waiters<[[AtomicWaker; 3]]> = &waiters;
        let class = waiters.class(Kind::Putters, Counted::own(&word));
        // Counted in, slot not claimed yet.
        Counted::own(&word).count_in();
        assert!(Counted::own(&word).claim());
        class.hand_off(Wake::Reserved);
        assert_eq!(class.turns().owed(), 0, "nobody was reached");
        assert!(
            Counted::own(&word).claim(),
            "the count was withdrawn: the waiter is owed a notification again"
        );
    }

    #[test]
    fn a_waiter_that_leaves_with_a_mark_passes_it_on() {
        let word = AtomicU64::new(0);
        let waiters = Waiters::<[[AtomicWaker; 3]; 2]>::new();
        let waiters: &Waiters<[[AtomicWaker; 3]]> = &waiters;
        let class = waiters.class(Kind::Getters, Counted::own(&word));
        let (first_task, first_waker) = counter();
        let (second_task, second_waker) = counter();
        let first = class.claim().unwrap();
        class.register(first, &first_waker);
        let second = class.claim().unwrap();
        class.register(second, &second_waker);
        class.hand_off(Wake::Check);
        assert_eq!((wakes(&first_task), wakes(&second_task)), (1, 0));
        class.release(first, 0, true);
        assert_eq!(wakes(&second_task), 1, "the mark passed on");
        assert_eq!(class.turns().owed(), 1, "the turn passed with it");
        class.release(second, 0, true);
        assert_eq!(class.turns().owed(), 0, "nobody left to pass it to");
        assert_eq!(word.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn wake_all_wakes_every_claimed_slot_and_grants_nothing() {
        let word = AtomicU64::new(0);
        let waiters = Waiters::<[[AtomicWaker; 3]; 3]>::new();
        let waiters: &Waiters<[[AtomicWaker; 3]]> = &waiters;
        let class = waiters.class(Kind::Joiners, Counted::in_word(&word, false));
        let tasks: Vec<_> = (0..2)
            .map(|_| {
                let (task, waker) = counter();
                let slot = class.claim().unwrap();
                class.register(slot, &waker);
                task
            })
            .collect();
        // Another class's cell in the same slot is not woken.
        let (other, other_waker) = counter();
        waiters
            .class(Kind::Getters, Counted::own(&word))
            .register(0, &other_waker);
        class.wake_all();
        assert!(tasks.iter().all(|task| wakes(task) == 1));
        assert_eq!(wakes(&other), 0);
        assert_eq!(class.turns().owed(), 0);
        assert_eq!(class.claimed(), 2);
    }
}
