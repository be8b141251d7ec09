//! Hand-off reservations: a woken waiter's item (or slot) is kept for it.

use crate::sync::{AtomicUsize, Ordering};

/// The hand-offs one class of waiters is owed: items (for getters) or slots (for putters)
/// made available *for* a waiter that was woken and has not taken its turn yet.
///
/// The protocol, for either class:
///
/// - Every notification that reaches a listener [`grant`](Turns::grant)s it a turn: a
///   hand-off (a put for the getters, a freed slot for the putters) and a terminal wake-up
///   (shutdown, the last worker leaving) alike, counted right after the waiter list says
///   how many listeners it reached.
/// - A waiter whose listener fired holds that turn for its next attempt, which may take
///   any available item or slot. The attempt [`redeem`](Turns::redeem)s the turn whatever
///   it finds, and only *after* it has taken what it takes, so no try can take the item it
///   is taking. A try refused meanwhile may have gone to sleep with an item left over once
///   the turn is gone: the redeeming waiter then tells one more waiter if more items
///   (slots) are left than turns owed. An attempt that finds nothing (a try took the item
///   an instant before the grant) uses the turn up all the same: a turn kept by a waiter
///   that sleeps again would hold back the next item from everyone but that waiter, which
///   the next hand-off may not reach. A waiter that finishes or is dropped with turns left
///   passes them to the next listeners and [`revoke`](Turns::revoke)s those that reached
///   nobody.
/// - Everyone else (`try_get`, `try_put`, the first try of a new `get` or `put`, a waiter
///   not yet woken) may take only what is not owed: [`lets_pass`](Turns::lets_pass), or
///   the buffers' own checks, made once they see an item and before they claim it, so
///   that they see every turn granted before that item was published.
///
/// So a try or a newcomer cannot take the item a woken waiter was woken for, and that
/// waiter cannot lose it to them, however often they try. The check is not a lock: a try
/// that sees an item published an instant before the grant of the turn it was published
/// for can take that one item, and no more: the next item's hand-off is counted before
/// that item is published. The woken waiter then waits again for the next hand-off.
///
/// The count is exact at rest: each grant is matched by one redeem or revoke. It can read
/// one low per notification in progress: a woken thread may take its item and redeem its
/// turn before its notifier has counted the grant (blocking waits are woken inside the
/// notification), so the count is signed and that instant reads as "nothing owed", never
/// as a turn owed to nobody.
///
/// Cost: a load on the paths that take; read-modify-writes only for notifications that
/// reach a listener, none while nobody waits or every waiter is already woken.
///
/// The word's low bit is a mark its owner may set for good ([`mark`](Turns::mark)): the
/// putters' is set once a put must look further than the turns (the queue is shut down or
/// has lost its workers, or its bound is not checked by the slot alone), so a put reads
/// one word, [`gate`](Turns::gate), to learn that nothing is owed and nothing else needs
/// a look.
#[derive(Debug)]
pub(crate) struct Turns {
    /// Turns granted minus turns redeemed or revoked, as a wrapping `isize`, in the bits
    /// above [`MARKED`].
    owed: AtomicUsize,
}

/// One read of a [`Turns`] word ([`Turns::gate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Gate(usize);

impl Gate {
    /// Nothing owed, and the word unmarked.
    #[inline(always)]
    pub(crate) fn is_clear(self) -> bool {
        self.0 == 0
    }

    /// The word was [marked](Turns::mark).
    #[inline(always)]
    pub(crate) fn is_marked(self) -> bool {
        self.0 & MARKED != 0
    }

    /// The turns owed, as [`Turns::owed_signed`] reads them.
    #[inline(always)]
    pub(crate) fn owed_signed(self) -> i64 {
        owed_in(self.0)
    }
}

/// The low bit of the word: see [`Turns::mark`].
const MARKED: usize = 1;
/// One turn, counted above [`MARKED`].
const TURN: usize = 2;

/// The turns owed in `word`, as the count stands (see [`Turns::owed_signed`]).
#[inline(always)]
const fn owed_in(word: usize) -> i64 {
    // An arithmetic shift: the count is signed, and the mark bit drops out.
    (word as isize >> 1) as i64
}

impl Turns {
    crate::const_fn! {
        pub(crate) fn new() -> Self {
            Turns {
                owed: AtomicUsize::new(0),
            }
        }
    }

    /// Whether someone without a turn may try to take one of `available()` items: always
    /// when nothing is owed (then `available` is not called), otherwise only if more are
    /// available than owed. Nothing available with turns owed is a refusal too: an item
    /// put after that read would be owed to the woken waiter, and the try must not take it.
    #[inline]
    pub(crate) fn lets_pass(&self, available: impl FnOnce() -> usize) -> bool {
        let owed = self.owed_signed();
        owed <= 0 || available() as i64 > owed
    }

    /// The turns owed, reading an instant's negative count as none.
    #[inline]
    pub(crate) fn owed(&self) -> usize {
        self.owed_signed().max(0) as usize
    }

    /// The turns owed as the count stands: zero or less (an instant's negative count)
    /// means none, so its users test it with `> 0`, or clamp it at zero before they use it
    /// as a count. [`owed`] is the clamped count.
    ///
    /// [`owed`]: Turns::owed
    #[inline]
    pub(crate) fn owed_signed(&self) -> i64 {
        // Relaxed: advisory (see the type's documentation); the item or slot itself is
        // claimed through the buffer or the slot counter, which carry the ordering.
        owed_in(self.owed.load(Ordering::Relaxed))
    }

    /// The word as it stands, for a reader that needs both the turns owed and the mark:
    /// one load.
    #[inline(always)]
    pub(crate) fn gate(&self) -> Gate {
        // Relaxed: as in `owed_signed`; a mark is read as `mark` documents.
        Gate(self.owed.load(Ordering::Relaxed))
    }

    /// Marks the word for good, so that a [`gate`](Turns::gate) is never clear again:
    /// the owner's sign that its fast path no longer applies. A reader whose load comes
    /// after the mark in the word's modification order sees it (every later change keeps
    /// the bit), so a caller that marks before the change it announces is publicly done
    /// (a shutdown, the last worker leaving) is seen by every reader that starts after.
    #[inline]
    pub(crate) fn mark(&self) {
        // Relaxed: the caller marks before the change it announces, whose release (the
        // lifecycle's AcqRel) carries the mark to every thread that reads that change.
        self.owed.fetch_or(MARKED, Ordering::Relaxed);
    }

    /// `n` notifications reached a listener.
    #[inline]
    pub(crate) fn grant(&self, n: usize) {
        if n != 0 {
            // Relaxed: advisory, as above. Wrapping: see the type's documentation.
            self.owed.fetch_add(n.wrapping_mul(TURN), Ordering::Relaxed);
        }
    }

    /// `n` held turns were passed on and reached nobody.
    #[inline]
    pub(crate) fn revoke(&self, n: usize) {
        if n != 0 {
            // Relaxed: advisory, as above. Wrapping: see the type's documentation.
            self.owed.fetch_sub(n.wrapping_mul(TURN), Ordering::Relaxed);
        }
    }

    /// A woken waiter used its turn.
    #[inline]
    pub(crate) fn redeem(&self) {
        self.revoke(1);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::Turns;

    #[test]
    fn nothing_owed_lets_everyone_pass_without_counting() {
        let turns = Turns::new();
        assert!(turns.lets_pass(|| unreachable!("not asked when nothing is owed")));
    }

    #[test]
    fn owed_turns_hold_back_only_what_they_cover() {
        let turns = Turns::new();
        turns.grant(2);
        assert!(
            !turns.lets_pass(|| 0),
            "nothing to take now: an item put next is owed"
        );
        assert!(!turns.lets_pass(|| 1));
        assert!(!turns.lets_pass(|| 2));
        assert!(turns.lets_pass(|| 3));
        turns.redeem();
        assert!(turns.lets_pass(|| 2));
        turns.revoke(1);
        assert_eq!(turns.owed(), 0);
    }

    /// A waiter that redeems before its notifier counted the grant makes the count dip
    /// below zero for an instant; that reads as nothing owed, and the grant restores zero.
    #[test]
    fn a_redeem_ahead_of_its_grant_reads_as_nothing_owed() {
        let turns = Turns::new();
        turns.redeem();
        assert_eq!(turns.owed(), 0);
        assert!(turns.lets_pass(|| unreachable!()));
        turns.grant(1);
        assert_eq!(turns.owed(), 0);
        turns.grant(1);
        assert_eq!(turns.owed(), 1);
        turns.revoke(0);
        assert_eq!(turns.owed(), 1);
    }

    #[test]
    fn the_gate_is_clear_only_with_nothing_owed_and_no_mark() {
        let turns = Turns::new();
        let read = |turns: &Turns| {
            let gate = turns.gate();
            (gate.is_clear(), gate.is_marked(), gate.owed_signed())
        };
        assert_eq!(read(&turns), (true, false, 0));
        turns.grant(2);
        assert_eq!(read(&turns), (false, false, 2));
        turns.revoke(3);
        assert_eq!(
            read(&turns),
            (false, false, -1),
            "a negative count is not clear"
        );
        turns.grant(1);
        assert_eq!(read(&turns), (true, false, 0));
        turns.mark();
        assert_eq!(read(&turns), (false, true, 0));
        turns.grant(1);
        assert_eq!((read(&turns), turns.owed()), ((false, true, 1), 1));
        turns.redeem();
        turns.redeem();
        assert_eq!((read(&turns), turns.owed()), ((false, true, -1), 0));
        turns.grant(1);
        assert_eq!(read(&turns), (false, true, 0), "the mark stays");
        assert!(turns.lets_pass(|| unreachable!("nothing owed")));
    }
}
