//! The rest of a put batch while a call or a future works through it: a batch larger
//! than the room there is moves in steps, each the size of the room the queue reports,
//! and its rest is kept in the caller's vector back to front, so that a step takes its
//! items off the end. A step moves what it places and at most a room's worth more,
//! whatever is left behind it: a million items through a ring of 64 is linear, where
//! taking each step off the front would move the whole rest every time.
//!
//! A small batch, or one that fits in the room, is put straight from the vector as it is,
//! in one step.
//! The vector is back in order whenever the caller can see it again: when the call
//! returns, and when the future completes or is dropped (also by a panic in a step).

use alloc::vec::Vec;

use crate::error::TryPutError;
use crate::fate::Steward;
use crate::job_id::JobId;
use crate::wait::turn::Turn;

/// A batch of at most this many items is put straight from the caller's vector, without
/// asking for the room: whatever a call or a poll moves of it is bounded by this anyway.
const SMALL: usize = 64;

/// The caller's vector and the step in hand.
pub(super) struct Rest<'v, T> {
    /// The items not placed yet: in order, or back to front once `reversed`.
    items: &'v mut Vec<T>,
    /// The items of the step in hand, in order; empty between steps.
    step: Vec<T>,
    reversed: bool,
}

// Nothing of a batch is pinned: its items move in and out of vectors freely.
impl<T> Unpin for Rest<'_, T> {}

impl<'v, T> Rest<'v, T> {
    pub(super) fn new(items: &'v mut Vec<T>) -> Self {
        Rest {
            items,
            step: Vec::new(),
            reversed: false,
        }
    }

    /// How many items are left (the step in hand excepted).
    pub(super) fn len(&self) -> usize {
        self.items.len()
    }

    /// Puts items until none is left or one is refused, as
    /// [`Steward::put_many`] does for a whole vector (`turn` goes to the first item).
    /// The refused item is taken out; the items after it stay.
    pub(super) fn put(
        &mut self,
        steward: &Steward<T>,
        turn: &mut Turn<'_>,
        ids: &mut Vec<JobId>,
    ) -> Result<(), TryPutError<T>> {
        if !self.reversed {
            let len = self.items.len();
            if len <= SMALL || len <= steward.raw().room_hint() {
                // Small, or fits as far as the queue can tell: one step, from the vector as
                // it is.
                return steward.put_many(turn, self.items, ids);
            }
            self.items.reverse();
            self.reversed = true;
        }
        loop {
            let size = match self.items.len() {
                // Nothing left: the step is empty, which passes a turn on.
                0 => 0,
                left => steward.raw().room_hint().clamp(1, left),
            };
            let from = self.items.len() - size;
            self.step.extend(self.items.drain(from..).rev());
            // The first step uses the turn up; the next ones have none.
            let put = steward.put_many(turn, &mut self.step, ids);
            // What the step did not place goes back, in front of the rest.
            self.items.extend(self.step.drain(..).rev());
            match put {
                Ok(()) if self.items.is_empty() => return Ok(()),
                Ok(()) => {}
                Err(refused) => return Err(refused),
            }
        }
    }

    /// Takes the item in front of the rest out (the item a batch that gives up hands back).
    pub(super) fn take_first(&mut self) -> Option<T> {
        if self.reversed {
            self.items.pop()
        } else if self.items.is_empty() {
            None
        } else {
            Some(self.items.remove(0))
        }
    }

    /// Puts `item` back in front of the rest (a refused item the batch waits with).
    pub(super) fn put_back(&mut self, item: T) {
        if !self.reversed {
            // Cold: a batch that fit the room it saw and found the queue full meanwhile
            // goes on in steps.
            self.items.reverse();
            self.reversed = true;
        }
        self.items.push(item);
    }
}

// The vector is handed back in order, with any step in hand in front of the rest.
impl<T> Drop for Rest<'_, T> {
    fn drop(&mut self) {
        if self.reversed {
            self.items.extend(self.step.drain(..).rev());
            self.items.reverse();
        }
    }
}
