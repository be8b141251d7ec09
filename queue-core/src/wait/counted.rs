//! The waiter fields of one class of waiters: `waiting` (registered waiters) and
//! `pending` (notifications on their way), two 12-bit fields in one `u64` word.
//!
//! The word is the class's own ([`Counted::own`], in [`Waiters`](super::waiters::Waiters)),
//! or a word of the buffer that every notifier of the class writes anyway: the ring's
//! `tail` for getters (every put claims it), `head` for putters under a buffered bound
//! (every get claims it) and `ended` for joiners (every ending adds to it). The ring keeps
//! its own bits above [`FIELDS_END`]; bit 0 is free for a flag of the word's owner.
//!
//! ```text
//! bit    63 ..... 25 | 24 ...... 13 | 12 ........ 1 | 0
//!        owner's     | pending      | waiting       | owner's flag
//! ```
//!
//! # The protocol
//!
//! A claim of a ring word that finds `waiting > pending` raises `pending` in the same
//! compare-exchange and tells its caller to notify one waiter ([`with_notification`]);
//! while every counted waiter already has a notification coming it tells nothing, so a
//! burst of puts for one sleeping getter takes the waiter list's lock once. A notifier whose own
//! change was elsewhere does the same after its change with [`Counted::claim`]. Then:
//!
//! - a waiter counts itself in (an AcqRel read-modify-write, [`Counted::count_in`])
//!   *before* inserting its listener, as `waiters.rs` documents;
//! - a waiter whose listener left notified counts itself out with
//!   [`Counted::count_out_notified`] (one waiting, one pending), one whose listener left
//!   without a notification with [`Counted::count_out`];
//! - a notification that reached nobody (the waiter it counted had not inserted its
//!   listener yet, or had just left) is withdrawn with [`Counted::withdraw`], and the
//!   caller sends one notification no claim counts in its place; `waiters.rs` argues why
//!   that loses no wake-up;
//! - a notification no claim counted (that replacement, a turn passed on, a wake-all) is
//!   counted with [`Counted::raise`] as it reaches each listener, under the waiter list's
//!   lock (`list.rs`), so every notified waiter is counted pending before it can count itself out;
//! - a notifier that changed something other than this word checks the field with
//!   [`Counted::anyone`].
//!
//! A pending notification reserves nothing: the turns of `turns.rs` keep a woken waiter's
//! item or slot for it. The fields only spare notifications.
//!
//! `pending` reads high only between a notify that reached nobody and its withdrawal, a
//! window the notification after the withdrawal covers. It can read low only without
//! `std`, where the notifiers do not raise it (see `waiters.rs`):
//! a waiter woken by a notification nobody counted then counts out one another waiter was
//! owed, which costs a notification later, never a wake-up.
//!
//! More than 4 094 waiters of one class at once saturate `waiting`: it stays at 4 095 for
//! the life of the word, and from then on every claim tells its caller to notify. That is
//! correct (a notification nobody needs is harmless) and only slower. `pending` is raised
//! only while it is below `waiting` and `waiting` is not saturated, so it never exceeds
//! 4 094: a saturated `waiting` always reads above it.

use crate::sync::{AtomicU64, Ordering};

/// Width of a waiter field.
const FIELD_BITS: u32 = 12;
/// The largest value of a waiter field; `waiting` sticks there once reached.
const FIELD_MAX: u64 = (1 << FIELD_BITS) - 1;
const WAITING_SHIFT: u32 = 1;
/// One registered waiter.
const WAITING: u64 = 1 << WAITING_SHIFT;
const PENDING_SHIFT: u32 = WAITING_SHIFT + FIELD_BITS;
/// One pending notification.
const PENDING: u64 = 1 << PENDING_SHIFT;
/// The first bit above the fields: a host word keeps its own count from here.
pub(crate) const FIELDS_END: u32 = PENDING_SHIFT + FIELD_BITS;

/// The registered waiters in `word`.
#[inline]
const fn waiting(word: u64) -> u64 {
    (word >> WAITING_SHIFT) & FIELD_MAX
}

/// The pending notifications in `word`.
#[inline]
const fn pending(word: u64) -> u64 {
    (word >> PENDING_SHIFT) & FIELD_MAX
}

/// Whether `word` counts any registered waiter.
#[inline]
pub(crate) const fn anyone_in(word: u64) -> bool {
    word & (FIELD_MAX << WAITING_SHIFT) != 0
}

/// `word` with one more pending notification if a registered waiter has none coming, and
/// whether the caller must notify. A saturated `waiting` always notifies and counts
/// nothing.
#[inline]
pub(crate) const fn with_notification(word: u64) -> (u64, bool) {
    if !anyone_in(word) {
        // Nobody waits: the common case, one test.
        return (word, false);
    }
    let waiting = waiting(word);
    // `pending` stays below `FIELD_MAX` (see the module docs), so a saturated `waiting` is
    // above it: the saturation is looked at only once a notification is due, and the next
    // common case (every waiter has one coming) is one compare.
    debug_assert!(
        pending(word) < FIELD_MAX,
        "pending is raised only below waiting"
    );
    if waiting <= pending(word) {
        return (word, false);
    }
    if waiting == FIELD_MAX {
        (word, true)
    } else {
        (word + PENDING, true)
    }
}

/// As [`with_notification`], for a claim of `n` items or slots at once: `word` with one
/// more pending notification for each registered waiter without one coming, up to `n`,
/// and how many waiters the caller must notify. A saturated `waiting` notifies `n` and
/// counts nothing.
#[inline]
pub(crate) const fn with_notifications(word: u64, n: u64) -> (u64, u64) {
    if !anyone_in(word) {
        return (word, 0);
    }
    let waiting = waiting(word);
    if waiting == FIELD_MAX {
        return (word, n);
    }
    let pending = pending(word);
    let notify = if waiting > pending {
        let short = waiting - pending;
        if short < n {
            short
        } else {
            n
        }
    } else {
        0
    };
    (word + notify * PENDING, notify)
}

/// The waiter fields of one class, in whichever word holds them (see the module docs).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Counted<'a> {
    word: &'a AtomicU64,
    /// Whether the word has a `pending` field (every class but the joiners, whom every
    /// settling ending wakes at once). Read only by [`raise`](Counted::raise), which
    /// needs `std`.
    #[cfg(feature = "std")]
    pending: bool,
}

impl<'a> Counted<'a> {
    /// The fields of a word of their own, or of a host word whose class has a `pending`
    /// field.
    #[inline]
    pub(crate) fn own(word: &'a AtomicU64) -> Self {
        Self::in_word(word, true)
    }

    /// The fields in `word`, with or without the use of `pending` (joiners: without).
    #[inline]
    pub(crate) fn in_word(word: &'a AtomicU64, with_pending: bool) -> Self {
        #[cfg(not(feature = "std"))]
        let _ = with_pending;
        Counted {
            word,
            #[cfg(feature = "std")]
            pending: with_pending,
        }
    }

    /// For a notifier whose change was not a claim of this word, after that change: what
    /// a claim's [`with_notification`] decides, as one read-modify-write of the word.
    /// Counts one notification pending if a registered waiter has none coming, and
    /// returns whether to notify one waiter.
    #[inline]
    pub(crate) fn claim(self) -> bool {
        // AcqRel, as `anyone`'s: the release half heads the sequence a later count-in
        // acquires from, so a waiter counted in after this claim sees the change made
        // before it; the read is of the latest count, as for every read-modify-write. An
        // add of nothing, not a compare-exchange: the common case (nobody waits, or every
        // waiter has a notification coming) is then one instruction that takes the line
        // at once, instead of a load that shares it and a compare-exchange that takes it.
        let mut now = self.word.fetch_add(0, Ordering::AcqRel);
        loop {
            let (next, notify) = with_notification(now);
            if next == now {
                return notify;
            }
            // Relaxed: the add above was the claim's synchronizing step; this only counts
            // the notification pending (as `raise` does).
            match self
                .word
                .compare_exchange_weak(now, next, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(seen) => now = seen,
            }
        }
    }

    /// Counts a waiter in (sticking at the maximum), before its re-check.
    #[inline]
    pub(crate) fn count_in(self) {
        // Relaxed: the compare-exchange below validates it.
        let mut now = self.word.load(Ordering::Relaxed);
        loop {
            if waiting(now) == FIELD_MAX {
                return;
            }
            // AcqRel: the acquire half reads from the release sequence of every earlier
            // `anyone` or `claim`, so what a notifier published before a skipped
            // notification is visible to the re-check that follows; the ring's claims and
            // endings are read-modify-writes of this word, so a later count-in sees their
            // tickets.
            match self.word.compare_exchange_weak(
                now,
                now + WAITING,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(seen) => now = seen,
            }
        }
    }

    /// Counts a waiter out (unless saturated): one whose listener left without a
    /// notification.
    #[inline]
    pub(crate) fn count_out(self) {
        // Relaxed: the compare-exchange below validates it.
        let mut now = self.word.load(Ordering::Relaxed);
        loop {
            let count = waiting(now);
            debug_assert!(count > 0, "a waiter counted out more often than in");
            if count == FIELD_MAX || count == 0 {
                return;
            }
            // Relaxed: a count.
            match self.word.compare_exchange_weak(
                now,
                now - WAITING,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(seen) => now = seen,
            }
        }
    }

    /// Counts out a waiter whose listener left notified, with one pending notification
    /// (none if none is left: one counted for this waiter may already have been taken by
    /// a waiter woken by a notification no claim counted, which only makes a later claim
    /// notify once more than needed).
    #[inline]
    pub(crate) fn count_out_notified(self) {
        // Relaxed: the compare-exchange below validates it.
        let mut now = self.word.load(Ordering::Relaxed);
        loop {
            let waiting = waiting(now);
            if waiting == FIELD_MAX {
                return;
            }
            debug_assert!(waiting > 0, "a waiter counted out more often than in");
            let mut next = now.saturating_sub(WAITING);
            if pending(now) > 0 {
                next -= PENDING;
            }
            // Relaxed: a count; the waiter is done waiting.
            match self
                .word
                .compare_exchange_weak(now, next, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(seen) => now = seen,
            }
        }
    }

    /// Counts pending a notification no claim counted, as it reaches a listener: called
    /// under the waiter list's lock, before that listener can leave, so the count
    /// goes up before the woken waiter's [`count_out_notified`](Counted::count_out_notified)
    /// takes it down, and `pending` never reads high. Nothing for the joiners, whose word
    /// has no `pending` field in use, or once `waiting` is saturated.
    #[cfg(feature = "std")]
    #[inline]
    pub(crate) fn raise(self) {
        if !self.pending {
            return;
        }
        // Relaxed: the compare-exchange below validates it.
        let mut now = self.word.load(Ordering::Relaxed);
        loop {
            let waiting = waiting(now);
            if waiting == FIELD_MAX || pending(now) >= waiting {
                return;
            }
            // Relaxed: a count; the notification itself is what wakes the waiter, and
            // the waiter list's lock orders this before the waiter's count-out.
            match self.word.compare_exchange_weak(
                now,
                now + PENDING,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(seen) => now = seen,
            }
        }
    }

    /// Withdraws one pending notification a claim counted, after its notification reached
    /// nobody (nothing if none is left, or once saturated).
    ///
    /// Always a read-modify-write, even when nothing is left to withdraw, and an acquiring
    /// one: every claim that skipped its notification because of the pending count
    /// withdrawn here comes earlier in the word's modification order, so this acquires
    /// what those notifiers published before claiming, and the notification the caller
    /// sends next (or the listener inserted after it, through the waiter list's lock)
    /// carries it to the waiter's re-check. On a ring word the claims are the puts and
    /// gets themselves, and the re-check reads the word, so coherence alone would do; in a
    /// class's own word the published change is elsewhere.
    #[cold]
    pub(crate) fn withdraw(self) {
        // Relaxed: the compare-exchange below validates it.
        let mut now = self.word.load(Ordering::Relaxed);
        loop {
            let next = if waiting(now) == FIELD_MAX || pending(now) == 0 {
                now
            } else {
                now - PENDING
            };
            // Acquire: see above.
            match self
                .word
                .compare_exchange_weak(now, next, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(seen) => now = seen,
            }
        }
    }

    /// The waiters counted (a snapshot for tests).
    #[cfg(all(test, not(loom), feature = "std"))]
    pub(crate) fn count(self) -> u64 {
        // Relaxed: a snapshot.
        waiting(self.word.load(Ordering::Relaxed))
    }

    /// The notifications counted as on their way (a snapshot for tests).
    #[cfg(all(test, not(loom), feature = "std"))]
    pub(crate) fn pending(self) -> u64 {
        // Relaxed: a snapshot.
        pending(self.word.load(Ordering::Relaxed))
    }

    /// Whether a waiter may be counted, ordered after everything this thread published
    /// before the call (for notifiers whose own change was not a claim of this word).
    #[inline]
    pub(crate) fn anyone(self) -> bool {
        // AcqRel: the release half heads the sequence a later count-in acquires from; the
        // read is of the latest value, as for every read-modify-write.
        anyone_in(self.word.fetch_add(0, Ordering::AcqRel))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_claim_counts_one_notification_per_waiter_without_one() {
        let word = AtomicU64::new(0);
        let counted = Counted::own(&word);
        assert!(!counted.claim(), "nobody waits");
        counted.count_in();
        counted.count_in();
        assert!(counted.claim());
        assert!(counted.claim());
        assert!(!counted.claim(), "both waiters have a notification coming");
        counted.count_out_notified();
        assert!(!counted.claim(), "one waiter left, with its notification");
        counted.withdraw();
        assert!(counted.claim(), "a withdrawn notification is owed again");
    }

    #[test]
    fn a_claim_of_several_counts_one_notification_per_waiter_without_one_up_to_n() {
        let word = 3 * WAITING + PENDING;
        assert_eq!(with_notifications(0, 5), (0, 0), "nobody waits");
        assert_eq!(with_notifications(word, 5), (word + 2 * PENDING, 2));
        assert_eq!(with_notifications(word, 1), (word + PENDING, 1));
        assert_eq!(with_notifications(word + 2 * PENDING, 4).1, 0);
        let saturated = FIELD_MAX << WAITING_SHIFT;
        assert_eq!(with_notifications(saturated, 7), (saturated, 7));
        for n in 0..6 {
            let (mut one_by_one, mut notified) = (word, 0);
            for _ in 0..n {
                let (next, notify) = with_notification(one_by_one);
                one_by_one = next;
                notified += u64::from(notify);
            }
            assert_eq!(
                with_notifications(word, n),
                (one_by_one, notified),
                "as n claims"
            );
        }
    }

    /// The decision as first stated: saturation, then `waiting > pending`.
    const fn reference(word: u64) -> (u64, bool) {
        if !anyone_in(word) {
            return (word, false);
        }
        let waiting = waiting(word);
        if waiting == FIELD_MAX {
            (word, true)
        } else if waiting > pending(word) {
            (word + PENDING, true)
        } else {
            (word, false)
        }
    }

    #[test]
    fn a_claim_decides_as_the_reference_for_every_reachable_word() {
        // Every `waiting`, and every `pending` below `FIELD_MAX` (the reachable ones; a
        // stride under Miri), with host bits around them.
        let step = if cfg!(miri) { 97 } else { 1 };
        for waiting in (0..=FIELD_MAX).step_by(step) {
            for pending in (0..FIELD_MAX).step_by(step) {
                let word =
                    (5 << FIELDS_END) | 1 | (pending << PENDING_SHIFT) | (waiting << WAITING_SHIFT);
                assert_eq!(
                    with_notification(word),
                    reference(word),
                    "waiting {waiting}, pending {pending}"
                );
            }
        }
    }

    #[test]
    fn a_saturated_field_always_notifies_and_sticks() {
        let word = AtomicU64::new(FIELD_MAX << WAITING_SHIFT);
        let counted = Counted::own(&word);
        counted.count_in();
        counted.count_out();
        assert_eq!(waiting(word.load(Ordering::Relaxed)), FIELD_MAX);
        assert!(counted.claim());
        assert!(counted.claim());
        assert_eq!(pending(word.load(Ordering::Relaxed)), 0);
    }

    #[test]
    fn the_fields_leave_the_host_bits_alone() {
        let host = (7 << FIELDS_END) | 1;
        let word = AtomicU64::new(host);
        let counted = Counted::own(&word);
        counted.count_in();
        assert!(counted.claim());
        counted.count_out_notified();
        assert_eq!(word.load(Ordering::Relaxed), host);
    }
}
