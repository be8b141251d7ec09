//! [`Turn`]: the turn one attempt of a woken waiter holds, used up where it is redeemed.

use super::turns::Turns;

/// The turn an attempt holds, if any (see `turns.rs`): a borrow of its waiter's count of
/// turns held, which the attempt lowers at the instant it [redeems](Turn::redeem) the turn
/// in its class's [`Turns`].
///
/// So the waiter's count is right whatever panics in the attempt (a waker, the journal, a
/// subscriber, a metrics recorder), before the redemption or after it: the waiter's
/// release then passes on exactly the turns it still holds. A turn not redeemed yet goes
/// to the next waiter; one redeemed is not passed on a second time. A count lowered by
/// the waiter once its attempt returned was never lowered when a panic came after the
/// redemption, and the release passed that turn on a second time.
pub(crate) struct Turn<'a> {
    held: Option<&'a mut usize>,
}

impl<'a> Turn<'a> {
    /// No turn: a try, or a wait's attempt made before it was woken.
    #[inline(always)]
    pub(crate) fn none() -> Self {
        Turn { held: None }
    }

    /// One of the `*held` turns a waiter holds, or none if it holds none.
    #[inline(always)]
    pub(crate) fn of(held: &'a mut usize) -> Self {
        Turn {
            held: if *held == 0 { None } else { Some(held) },
        }
    }

    /// Whether the attempt holds a turn it has not redeemed yet: it may take an item (a
    /// slot) owed to woken waiters.
    #[inline(always)]
    pub(crate) fn is_held(&self) -> bool {
        self.held.is_some()
    }

    /// The turn, if the attempt holds one: what a hot path passes to a function it keeps
    /// out of line. A caller that holds none then passes a constant `None`, where a
    /// reference to its `Turn` would make it store one on its stack for every attempt.
    #[inline(always)]
    pub(crate) fn if_held(&mut self) -> Option<&mut Self> {
        if self.is_held() {
            Some(self)
        } else {
            None
        }
    }

    /// Uses the turn up, if the attempt holds one: the waiter stops holding it, and
    /// `turns` counts it redeemed, in one step with no user code between. Returns whether
    /// a turn was redeemed (the caller then looks for a waiter it kept from an item, as
    /// `turns.rs` describes).
    #[inline(always)]
    pub(crate) fn redeem(&mut self, turns: &Turns) -> bool {
        match self.held.take() {
            Some(held) => {
                *held -= 1;
                turns.redeem();
                true
            }
            None => false,
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::{Turn, Turns};

    #[test]
    fn a_redeemed_turn_leaves_the_waiter_and_the_count_at_once() {
        let turns = Turns::new();
        turns.grant(1);
        let mut held = 1;
        let mut turn = Turn::of(&mut held);
        assert!(turn.is_held());
        assert!(turn.redeem(&turns));
        assert!(!turn.is_held());
        assert!(!turn.redeem(&turns), "a turn is redeemed once");
        assert_eq!(held, 0);
        assert_eq!(turns.owed(), 0);
    }

    #[test]
    fn a_waiter_holding_none_attempts_without_a_turn() {
        let turns = Turns::new();
        let mut held = 0;
        let mut turn = Turn::of(&mut held);
        assert!(!turn.is_held());
        assert!(!turn.redeem(&turns));
        assert!(!Turn::none().is_held());
        assert_eq!(turns.owed_signed(), 0);
    }
}
