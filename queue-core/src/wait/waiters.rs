//! One class of waiters (getters, putters or joiners): a list of waiters, and a count of
//! the waiters registered in it so that a notification with nobody to wake costs one atomic
//! read-modify-write instead of the list's lock, or nothing at all when the count sits in
//! the ring word the notifier changes anyway. The count sits beside
//! a count of the notifications on their way, so a hand-off for a waiter that already has
//! one coming is skipped too.

#[cfg(target_has_atomic = "ptr")]
use alloc::sync::Arc;
use core::task::{Poll, Waker};

use super::counted::Counted;
#[cfg(target_has_atomic = "ptr")]
use super::deferred::Deferred;
use super::list::{Key, List};
use super::turns::Turns;
pub(crate) use super::wake::Wake;
use crate::sync::{fence, AtomicU64, Ordering};

/// A [`List`] of waiters that knows whether anyone waits.
///
/// The class's waiters are counted in a word of waiter fields ([`Counted`]): a `waiting`
/// count and a `pending` count of notifications on their way. The word is the class's own
/// (`word`), or, on a queue whose buffer is the ring, a ring word (see below).
///
/// `waiting` is never below the number of waiters in the list: a waiter counts itself in
/// before it inserts its node, and out only after the node has left the list (consumed by
/// a wake-up, or discarded).
///
/// No wake-up is lost by skipping a notification. Every access to the word is a
/// read-modify-write, so a notifier's check reads the latest count in its modification
/// order. If it reads no waiter, every waiter that counts itself in later has its
/// increment after the check in that order; the increment (`AcqRel`) then reads from the
/// release sequence headed by the check (`AcqRel`), so the state the notifier published
/// before checking is visible to the attempt the waiter makes after registering. If the
/// check reads a waiter, the notification takes the list's lock, and so does the waiter's
/// insertion: either the insertion came first in the lock's order, and the notification
/// reaches the waiter, or the notification came first, and the waiter's re-check, made
/// after it took the lock the notifier released, sees what the notifier published before.
///
/// Notifying is two steps: `signal_*` marks waiters in the list and takes their wakers out
/// (no user code runs under the list's lock, see `list.rs`), keeping them in the queue's
/// [`Deferred`], and [`wake_deferred`](Class::wake_deferred) then runs them, outside every
/// lock.
/// The `notify_*` methods do both. A caller that changes several things (a shutdown, an
/// ending) signals every class first and wakes once at the end, so a panicking waker can
/// neither skip a class nor interrupt a state change.
///
/// Hand-offs are fair: a hand-off grants the woken waiter its turn ([`Turns`]), which
/// tries and newcomers cannot take from it.
///
/// On a queue whose buffer is the ring, the count of getters, putters (buffered limit) and
/// joiners is a field of the ring word that every put, get or ending changes: that step
/// reads the count in the same instruction, so the notifier needs no check of its own
/// ([`Wake::Counted`]); a retry's ending reads none, and needs none, since it never
/// settles the ring. The argument is the one above, with the claim or ending itself as the
/// check: if it read no waiter, a waiter counted in later reads the claimed ticket (or the
/// ending) and its re-check sees it. The operations live on [`Class`], which pairs the
/// list with wherever its count is.
///
/// A hand-off of one item or slot is skipped while every counted waiter already has a
/// notification coming: a ring claim counts the notification it asks for as pending in the
/// same instruction ([`Wake::Reserved`]), and a notifier whose change was not a ring claim
/// does the same in the class's word after its change ([`Counted::claim`], the check
/// above). A waiter whose listener left notified counts one pending notification out with
/// itself, and a pending notification that reached nobody is withdrawn and replaced by one
/// counted only as it reaches a listener (see [`signal_reserved`](Class::signal_reserved)
/// for why no wake-up is lost). Joiners are all woken at once and keep [`Wake::Counted`].
pub(crate) struct Waiters {
    list: List,
    /// The class's waiter fields where it is not counted in a ring word (see
    /// [`Counted::own`]).
    word: AtomicU64,
    turns: Turns,
    #[cfg(target_has_atomic = "ptr")]
    deferred: Arc<Deferred>,
}

impl Waiters {
    #[cfg(target_has_atomic = "ptr")]
    pub(crate) fn new(deferred: &Arc<Deferred>) -> Self {
        Waiters {
            list: List::new(),
            word: AtomicU64::new(0),
            turns: Turns::new(),
            deferred: Arc::clone(deferred),
        }
    }

    #[cfg(not(target_has_atomic = "ptr"))]
    pub(crate) fn new() -> Self {
        Waiters {
            list: List::new(),
            word: AtomicU64::new(0),
            turns: Turns::new(),
        }
    }

    /// The turns owed to this class's woken waiters, wherever the class is counted: for
    /// the paths that only read or redeem turns, which then need not find the word the
    /// class is counted in.
    #[inline]
    pub(crate) fn turns(&self) -> &Turns {
        &self.turns
    }

    /// The class, counted in its own word.
    #[inline]
    pub(crate) fn own(&self) -> Class<'_> {
        self.counted_in(None)
    }

    /// The class, counted in a ring word if `counted` is given, else in its own word.
    #[inline]
    pub(crate) fn counted_in<'a>(&'a self, counted: Option<Counted<'a>>) -> Class<'a> {
        Class {
            waiters: self,
            counted: counted.unwrap_or(Counted::own(&self.word)),
        }
    }
}

/// One class of waiters with wherever its count is (see [`Waiters`]).
#[derive(Clone, Copy)]
pub(crate) struct Class<'a> {
    waiters: &'a Waiters,
    counted: Counted<'a>,
}

impl<'a> Class<'a> {
    /// Counts a waiter in, then inserts its node into the list, with a waker that unparks
    /// this thread (a blocking wait; see [`listen_with`](Class::listen_with)).
    #[cfg(feature = "std")]
    #[inline]
    pub(crate) fn listen(self) -> Listener<'a> {
        self.counted.count_in();
        let key = super::local::with_unparker(|waker| self.waiters.list.insert_parked(waker));
        // SeqCst: as in `listen_with`.
        fence(Ordering::SeqCst);
        Listener {
            list: &self.waiters.list,
            key,
        }
    }

    /// Counts a waiter in, then inserts its node, with `waker`, into the list.
    ///
    /// The re-check that follows is ordered against a turn redeemed on another thread: a
    /// woken waiter that redeems its turn then looks for an item (slot) left over, and a
    /// registering waiter re-checks with the turns it reads, a store-buffer pattern. With a
    /// `SeqCst` fence on each side (here, and after the redemption, see
    /// `RawQueue::getter_turn_used`), either the re-check reads the redemption, or the
    /// redeemer's look reads this count-in and every change before it, so it sees the item
    /// and notifies this listener. Without them the re-check could read a turn already used
    /// as owed, leave the item alone, and sleep beside it.
    #[inline]
    pub(crate) fn listen_with(self, waker: &Waker) -> Listener<'a> {
        self.counted.count_in();
        let key = self.waiters.list.insert(waker);
        // SeqCst: pairs with the fence after a redemption (see above). The list's lock
        // orders the insertion against notifications, not this count-in and the re-check
        // against a redemption, which takes no lock.
        fence(Ordering::SeqCst);
        Listener {
            list: &self.waiters.list,
            key,
        }
    }

    /// Looks at a registered waiter's node: `Ready` if it was notified (the node has left
    /// the list; count the waiter out with [`left`](Class::left)), else its node keeps a
    /// waker for `waker`'s task.
    #[inline]
    pub(crate) fn poll(self, key: Key, waker: &Waker) -> Poll<()> {
        self.waiters.list.poll(key, waker)
    }

    /// Removes a registered waiter's node; returns whether it had been notified (its
    /// notification is not passed on). Count the waiter out with [`left`](Class::left).
    #[inline]
    pub(crate) fn discard(self, key: Key) -> bool {
        self.waiters.list.discard(key)
    }

    /// Parks the thread until a node inserted by [`listen`](Class::listen) on it is
    /// notified; the node has then left the list.
    #[cfg(feature = "std")]
    #[inline]
    pub(crate) fn wait(self, key: Key) {
        Listener {
            list: &self.waiters.list,
            key,
        }
        .wait();
    }

    /// Counts out a waiter whose listener has already left the list, `notified`
    /// or not.
    #[inline]
    pub(crate) fn left(self, notified: bool) {
        if notified {
            self.counted.count_out_notified();
        } else {
            self.counted.count_out();
        }
    }

    /// The turns owed to this class's woken waiters (see [`Turns`]).
    #[inline]
    pub(crate) fn turns(self) -> &'a Turns {
        &self.waiters.turns
    }

    /// Ends a waiter's registration: removes its node, if any, and passes on the turns
    /// it still holds, `held` plus one if the node had been notified, to the next
    /// waiters (so a dropped or finished waiter does not swallow a hand-off another one
    /// needs), then wakes whoever that woke. A turn the waiter used was already redeemed
    /// by the take that used it.
    #[inline]
    pub(crate) fn settle(self, listener: &mut Option<Key>, held: usize) {
        let mut turns = held;
        if let Some(key) = listener.take() {
            // Discarded, not removed with its notification passed on: that would pass
            // the notification without the turn it carries.
            let notified = self.waiters.list.discard(key);
            turns += usize::from(notified);
            self.left(notified);
        }
        if turns != 0 && self.pass_on(turns) {
            self.wake_deferred();
        }
    }

    /// Hands `n` held turns to as many listeners not yet notified. Returns whether anyone
    /// was notified.
    ///
    /// The turns are revoked first and granted again to each listener reached, so that the
    /// read-modify-write of `anyone` publishes the revocation: a waiter counted in after
    /// it, whom the notification below may miss, then re-checks without counting these
    /// turns as owed. Revoked after the notification, they could still read as owed to that
    /// waiter's re-check, which would leave an item alone for a turn nobody holds and
    /// sleep beside it.
    #[cold]
    fn pass_on(self, n: usize) -> bool {
        self.waiters.turns.revoke(n);
        self.anyone() && self.signal(n, &mut Sink::Deferred)
    }

    /// Whether a listener may be registered, ordered after everything this thread
    /// published before the call.
    #[inline]
    fn anyone(self) -> bool {
        self.counted.anyone()
    }

    /// Hands `n` items or slots to as many waiters not yet notified, granting each one
    /// reached its turn, without running any user code. Returns whether any was reached.
    #[inline]
    pub(crate) fn signal_additional(self, n: usize) -> bool {
        self.signal_additional_into(n, &mut Sink::Deferred)
    }

    /// As [`signal_additional`](Class::signal_additional), the wakers taken out going to
    /// `sink`.
    #[inline]
    fn signal_additional_into(self, n: usize, sink: &mut Sink<'_>) -> bool {
        if n == 1 {
            // One item or slot: claimed in the count as a ring claim would, so a waiter
            // that already has a notification coming is not notified again.
            return self.counted.claim() && self.signal_reserved(1, sink);
        }
        self.anyone() && self.signal(n, sink)
    }

    /// As [`signal_additional`](Class::signal_additional), for a change that says
    /// itself whether to (see [`Wake`]).
    #[inline]
    pub(crate) fn signal_for(self, wake: Wake, n: usize) -> bool {
        self.signal_for_into(wake, n, &mut Sink::Deferred)
    }

    /// As [`signal_for`](Class::signal_for), the wakers taken out going to `sink`.
    #[inline]
    fn signal_for_into(self, wake: Wake, n: usize, sink: &mut Sink<'_>) -> bool {
        match wake {
            Wake::No => false,
            Wake::Counted => self.signal(n, sink),
            Wake::Reserved => self.signal_reserved(n, sink),
            Wake::Check => self.signal_additional_into(n, sink),
        }
    }

    /// As [`signal`](Class::signal), for `n` notifications a ring claim counted as
    /// pending.
    ///
    /// A pending count that no notification stands for would let later claims skip theirs
    /// while a waiter sleeps, so one that reached nobody (every listener was notified
    /// already, or the waiter it counted is between counting itself in and inserting its
    /// listener, or has just left) is withdrawn at once. While it was counted, other
    /// claims may have skipped their notifications because of it: the notification after
    /// the withdrawal stands in for them. It is counted only as it reaches a listener
    /// ([`Counted::raise`]), never ahead of one, so it cannot repeat: if it reaches nobody
    /// either, no listener is waiting un-notified, and a waiter that counted itself in and
    /// has not inserted its listener yet re-checks after inserting it, and then sees every
    /// claim made before the withdrawal: the list takes its lock for every notification
    /// and every insertion, so the insertion comes after this notification,
    /// which comes after the withdrawal, a read-modify-write of the word those claims
    /// wrote earlier in its modification order. (Without `std` it is not counted at all,
    /// see [`notify_uncounted`](Class::notify_uncounted).)
    #[inline]
    fn signal_reserved(self, n: usize, sink: &mut Sink<'_>) -> bool {
        let reached = self.notify(n, || {}, sink);
        if reached == n {
            self.waiters.turns.grant(reached);
            return true;
        }
        self.withdrawn(n - reached, reached, sink)
    }

    /// `missed` pending notifications reached nobody: withdraws them and stands in for
    /// them with as many uncounted ones (see [`signal_reserved`](Class::signal_reserved)).
    #[cold]
    fn withdrawn(self, missed: usize, reached: usize, sink: &mut Sink<'_>) -> bool {
        for _ in 0..missed {
            self.counted.withdraw();
        }
        let again = self.notify_uncounted(missed, sink);
        self.waiters.turns.grant(reached + again);
        reached + again != 0
    }

    /// Notifies up to `n` listeners not yet notified, with notifications no claim counted
    /// pending. On a counting ring, each listener reached is counted pending as it is
    /// reached ([`Counted::raise`], run by the list for each waiter it reaches, under its
    /// lock), so the woken waiter's count-out takes down its own count, not one a claim
    /// counted for another waiter. Returns how many were reached.
    ///
    /// Without `std` the count is not raised: those waiters then count out a pending
    /// notification they were not counted for, and `pending` reads low until the waiters
    /// it counted leave. That costs notifications, never a wake-up.
    #[inline]
    fn notify_uncounted(self, n: usize, sink: &mut Sink<'_>) -> usize {
        #[cfg(feature = "std")]
        {
            let counted = self.counted;
            self.notify(n, move || counted.raise(), sink)
        }
        #[cfg(not(feature = "std"))]
        self.notify(n, || {}, sink)
    }

    /// Notifies up to `n` waiters not yet notified, running `each` for each one reached
    /// under the list's lock, and puts their wakers in `sink`: kept for
    /// [`wake_deferred`](Class::wake_deferred), or in the caller's one slot. Returns how
    /// many were reached.
    ///
    /// Without pointer-sized atomics there is no [`Deferred`]: the wakers are woken as
    /// soon as the list's lock is released.
    #[inline]
    fn notify(self, n: usize, each: impl FnMut(), sink: &mut Sink<'_>) -> usize {
        #[cfg(target_has_atomic = "ptr")]
        {
            let list = &self.waiters.list;
            match sink {
                Sink::Deferred => self
                    .waiters
                    .deferred
                    .keep(|sink| list.notify(n, each, sink)),
                Sink::One(slot) => {
                    debug_assert!(n <= 1 && slot.is_none(), "one slot holds one waker");
                    list.notify(n.min(1), each, |waker| **slot = Some(waker))
                }
            }
        }
        #[cfg(not(target_has_atomic = "ptr"))]
        {
            let _ = sink;
            self.waiters.list.notify_waking(n, each)
        }
    }

    /// Notifies up to `n` listeners not yet notified and grants each one reached a turn.
    #[inline]
    fn signal(self, n: usize, sink: &mut Sink<'_>) -> bool {
        let reached = self.notify_uncounted(n, sink);
        self.waiters.turns.grant(reached);
        reached != 0
    }

    /// Marks every listener notified, without running any user code. Returns whether any
    /// was.
    ///
    /// A notification of `usize::MAX`: it reaches every waiter not yet notified.
    #[inline]
    pub(crate) fn signal_all(self) -> bool {
        self.anyone() && self.signal(usize::MAX, &mut Sink::Deferred)
    }

    /// As [`signal_all`](Class::signal_all), for a change that says itself whether to.
    #[inline]
    pub(crate) fn signal_all_for(self, wake: Wake) -> bool {
        match wake {
            Wake::No => false,
            Wake::Counted => self.signal(usize::MAX, &mut Sink::Deferred),
            // The one pending notification the change counted stands for any listener
            // reached; if none was, it is withdrawn, as for a hand-off.
            Wake::Reserved => {
                self.signal(usize::MAX, &mut Sink::Deferred)
                    || self.withdrawn(1, 0, &mut Sink::Deferred)
            }
            Wake::Check => self.signal_all(),
        }
    }

    /// Runs the user wakers of every async wait signalled so far, outside every lock, even
    /// if some of them panic (the first panic then reaches the caller).
    #[inline]
    pub(crate) fn wake_deferred(self) {
        #[cfg(target_has_atomic = "ptr")]
        self.waiters.deferred.wake_all();
    }

    /// Wakes `n` more listeners (hand-off: one per item or slot made available).
    #[inline]
    pub(crate) fn notify_additional(self, n: usize) {
        self.notify_for(Wake::Check, n);
    }

    /// As [`notify_additional`](Class::notify_additional), for a change that says itself
    /// whether to.
    ///
    /// A hand-off of one item or slot reaches at most one waiter, whose waker waits in a
    /// slot on the stack instead of among the deferred wakers, and is woken as soon as the
    /// list's lock is released: the change is done, and nothing else was signalled by it.
    /// Like every notifier that reached someone, it then wakes whatever is kept.
    ///
    /// A `Check` for one, the hand-off of every put to the growable buffer, is answered by
    /// its claim in the count where it is called: with nobody waiting, that is the whole
    /// notification.
    #[inline]
    pub(crate) fn notify_for(self, wake: Wake, n: usize) {
        if n == 1 {
            let wake = match wake {
                Wake::No => return,
                // As `signal_additional` claims one: a claim made is a reserved hand-off.
                Wake::Check if !self.counted.claim() => return,
                Wake::Check => Wake::Reserved,
                counted_or_reserved => counted_or_reserved,
            };
            self.notify_one(wake);
            return;
        }
        if self.signal_for(wake, n) {
            self.wake_deferred();
        }
    }

    /// [`notify_for`](Class::notify_for) of one `Counted` or `Reserved` hand-off: the one
    /// waker reached waits in a slot on the stack, and is woken once the list's lock is
    /// released.
    #[inline(never)]
    fn notify_one(self, wake: Wake) {
        let mut one = None;
        if self.signal_for_into(wake, 1, &mut Sink::One(&mut one)) {
            if let Some(waker) = one {
                waker.wake();
            }
            self.wake_deferred();
        }
    }

    /// Wakes every listener.
    #[inline]
    pub(crate) fn notify_all(self) {
        if self.signal_all() {
            self.wake_deferred();
        }
    }

    /// The waiters counted in now (a snapshot for tests).
    #[cfg(all(test, not(loom), feature = "std"))]
    fn registered(self) -> usize {
        self.counted.count() as usize
    }

    /// The notifications counted as on their way now (a snapshot for tests).
    #[cfg(all(test, not(loom), feature = "std"))]
    fn pending(self) -> usize {
        self.counted.pending() as usize
    }
}

/// Where the wakers a notification takes out of the list wait until they are woken,
/// outside every lock.
enum Sink<'s> {
    /// The queue's [`Deferred`], for [`wake_deferred`](Class::wake_deferred): a change
    /// that signals several classes, or several waiters, wakes them once it is done.
    Deferred,
    /// The caller's one slot, for a notification of at most one waiter that its caller
    /// wakes at once (see [`notify_for`](Class::notify_for)).
    #[cfg_attr(not(target_has_atomic = "ptr"), allow(dead_code))]
    One(&'s mut Option<Waker>),
}

/// A waiter's node in its class's list, just inserted: kept by its [`Key`] (a blocking
/// wait waits on it here). A handle and nothing more: it removes nothing when dropped.
pub(crate) struct Listener<'a> {
    list: &'a List,
    key: Key,
}

impl Listener<'_> {
    /// The node's key, for a wait that keeps it across polls.
    #[inline]
    pub(crate) fn key(self) -> Key {
        self.key
    }

    /// Removes the node; returns whether it had been notified (its notification is not
    /// passed on). (The waits keep the key and discard through [`Class::discard`]; the
    /// ring's models use this.)
    #[cfg_attr(not(all(test, loom)), allow(dead_code))]
    #[inline]
    pub(crate) fn discard(self) -> bool {
        self.list.discard(self.key)
    }

    /// Parks the thread until the node is notified; the node has then left the list. The
    /// node must have been inserted with this thread's unparker ([`Class::listen`]).
    #[cfg(feature = "std")]
    pub(crate) fn wait(self) {
        super::local::with_unparker(|waker| {
            while self.list.poll(self.key, waker).is_pending() {
                super::local::park();
            }
        });
    }
}

#[cfg(all(test, not(loom), feature = "std"))]
mod tests {
    use core::future::Future;
    use core::pin::pin;
    use core::task::{Context, Poll, Waker};

    use crate::Queue;

    fn counts<T>(queue: &Queue<T>) -> [usize; 3] {
        // Relaxed: read on the only thread.
        [
            queue.steward.raw().getters(),
            queue.steward.raw().putters(),
            queue.steward.raw().joiners(),
        ]
        .map(|class| class.registered())
    }

    /// Every way a listener leaves (woken, cancelled, succeeding after a wake-up) counts
    /// its waiter out, so an idle queue skips every notification.
    #[test]
    fn every_waiter_is_counted_out() {
        let queue = Queue::<u8>::bounded(1).unwrap();
        let mut context = Context::from_waker(Waker::noop());

        let mut get = pin!(queue.get());
        assert!(get.as_mut().poll(&mut context).is_pending());
        assert_eq!(counts(&queue), [1, 0, 0]);
        queue.try_put(1).unwrap();
        let Poll::Ready(Ok(first)) = get.as_mut().poll(&mut context) else {
            panic!("a woken get must take the item");
        };
        assert_eq!(counts(&queue), [0, 0, 0]);

        {
            let mut cancelled = pin!(queue.get());
            assert!(cancelled.as_mut().poll(&mut context).is_pending());
            assert_eq!(counts(&queue), [1, 0, 0]);
        }
        assert_eq!(counts(&queue), [0, 0, 0]);

        queue.try_put(2).unwrap();
        let mut put = pin!(queue.put(3));
        assert!(put.as_mut().poll(&mut context).is_pending());
        let mut join = pin!(queue.join());
        assert!(join.as_mut().poll(&mut context).is_pending());
        assert_eq!(counts(&queue), [0, 1, 1]);

        first.succeed();
        let second = queue.try_get().unwrap();
        assert!(put.as_mut().poll(&mut context).is_ready());
        assert_eq!(counts(&queue), [0, 0, 1]);
        second.succeed();
        queue.try_get().unwrap().succeed();
        let Poll::Ready(ledger) = join.as_mut().poll(&mut context) else {
            panic!("every job has ended");
        };
        assert_eq!(ledger.succeeded, 3);
        assert_eq!(counts(&queue), [0, 0, 0]);
    }

    /// A burst of puts for one sleeping get notifies it once: the first put counts its
    /// notification as pending, the others see the getter covered. With a second getter
    /// asleep, the next put notifies again; at rest nothing is pending.
    #[test]
    fn a_burst_of_puts_notifies_a_sleeping_get_once() {
        burst_of_puts_notifies_a_sleeping_get_once(Queue::bounded(8).unwrap());
    }

    /// As [`a_burst_of_puts_notifies_a_sleeping_get_once`], on the growable buffer, whose
    /// getters are counted in their class's own word: each put claims its notification
    /// there after pushing its item.
    #[test]
    fn a_burst_of_puts_notifies_a_sleeping_get_once_in_its_own_word() {
        burst_of_puts_notifies_a_sleeping_get_once(Queue::unbounded());
    }

    fn burst_of_puts_notifies_a_sleeping_get_once(queue: Queue<u8>) {
        use crate::wait::counting_waker::CountingWaker;

        let (first_task, first_waker) = CountingWaker::new();
        let (second_task, second_waker) = CountingWaker::new();
        let mut first_context = Context::from_waker(&first_waker);
        let mut second_context = Context::from_waker(&second_waker);

        let mut first = pin!(queue.get());
        assert!(first.as_mut().poll(&mut first_context).is_pending());
        for item in 0..3 {
            queue.try_put(item).unwrap();
        }
        assert_eq!(first_task.wakes(), 1, "one wake-up for the burst");
        assert_eq!(
            (
                queue.steward.raw().getters().registered(),
                queue.steward.raw().getters().pending()
            ),
            (1, 1)
        );

        let mut second = pin!(queue.get());
        // Three items buffered, one owed to the first get: the second takes one at once.
        let Poll::Ready(Ok(taken)) = second.as_mut().poll(&mut second_context) else {
            panic!("an item not owed is free for a new get");
        };
        taken.succeed();
        let Poll::Ready(Ok(taken)) = first.as_mut().poll(&mut first_context) else {
            panic!("a woken get must take its item");
        };
        taken.succeed();
        assert_eq!(
            (
                queue.steward.raw().getters().registered(),
                queue.steward.raw().getters().pending()
            ),
            (0, 0)
        );

        queue.try_get().unwrap().succeed();
        let mut first = pin!(queue.get());
        let mut second = pin!(queue.get());
        assert!(first.as_mut().poll(&mut first_context).is_pending());
        assert!(second.as_mut().poll(&mut second_context).is_pending());
        queue.try_put(3).unwrap();
        queue.try_put(4).unwrap();
        assert_eq!(
            (first_task.wakes(), second_task.wakes()),
            (2, 1),
            "one each"
        );
        assert_eq!(
            (
                queue.steward.raw().getters().registered(),
                queue.steward.raw().getters().pending()
            ),
            (2, 2)
        );
        queue.try_put(5).unwrap();
        assert_eq!(
            (first_task.wakes(), second_task.wakes()),
            (2, 1),
            "both covered"
        );
        for get in [first.as_mut(), second.as_mut()] {
            let Poll::Ready(Ok(taken)) = get.poll(&mut Context::from_waker(Waker::noop())) else {
                panic!("a woken get must take its item");
            };
            taken.succeed();
        }
        assert_eq!(
            (
                queue.steward.raw().getters().registered(),
                queue.steward.raw().getters().pending()
            ),
            (0, 0)
        );
    }

    /// Putters of an unfinished-limit queue are counted in their class's own word (an
    /// ending frees their slot): the first ending claims a notification for a sleeping
    /// put, and the next ones, seeing it covered, send none.
    #[test]
    fn a_burst_of_endings_notifies_a_sleeping_put_once() {
        use crate::wait::counting_waker::CountingWaker;

        let queue = Queue::<u8>::with_unfinished_limit(3).unwrap();
        for item in 0..3 {
            queue.try_put(item).unwrap();
        }
        let held: [_; 3] = core::array::from_fn(|_| queue.try_get().unwrap());
        let (task, waker) = CountingWaker::new();
        let mut context = Context::from_waker(&waker);
        let mut put = pin!(queue.put(3));
        assert!(put.as_mut().poll(&mut context).is_pending());
        let counts = || {
            (
                queue.steward.raw().putters().registered(),
                queue.steward.raw().putters().pending(),
            )
        };
        assert_eq!(counts(), (1, 0));
        for delivery in held {
            delivery.succeed();
        }
        assert_eq!(task.wakes(), 1, "one wake-up for the burst");
        assert_eq!(counts(), (1, 1));
        assert!(put.as_mut().poll(&mut context).is_ready());
        assert_eq!(counts(), (0, 0));
    }

    /// A notification no claim counted (here the turn a dropped, woken get passes on)
    /// is counted pending as it reaches its listener, so the waiter it wakes does not
    /// take down the count of a notification another waiter is owed: `pending` keeps
    /// matching the notified waiters, and a put that finds them all covered sends nothing.
    #[test]
    fn a_passed_on_notification_is_counted_pending() {
        use crate::wait::counting_waker::CountingWaker;
        use alloc::boxed::Box;
        use alloc::vec::Vec;

        let queue = Queue::<u8>::bounded(8).unwrap();
        let tasks: Vec<_> = (0..3).map(|_| CountingWaker::new()).collect();
        let mut gets: Vec<_> = (0..3).map(|_| Box::pin(queue.get())).collect();
        for (get, (_, waker)) in gets.iter_mut().zip(&tasks) {
            assert!(get
                .as_mut()
                .poll(&mut Context::from_waker(waker))
                .is_pending());
        }
        let counts = || {
            (
                queue.steward.raw().getters().registered(),
                queue.steward.raw().getters().pending(),
            )
        };
        queue.try_put(1).unwrap();
        assert_eq!(counts(), (3, 1), "the put counted its notification");
        assert_eq!(tasks[0].0.wakes(), 1);

        // The woken first get is dropped: its turn passes to the second, uncounted by any
        // claim, and is counted as it reaches it.
        drop(gets.remove(0));
        assert_eq!(tasks[1].0.wakes(), 1, "the turn was passed on");
        assert_eq!(counts(), (2, 1), "the passed-on notification is counted");

        queue.try_put(2).unwrap();
        assert_eq!(tasks[2].0.wakes(), 1);
        assert_eq!(counts(), (2, 2));
        queue.try_put(3).unwrap();
        assert_eq!(
            counts(),
            (2, 2),
            "both covered: the third put notifies nobody"
        );

        for (get, (_, waker)) in gets.iter_mut().zip(&tasks[1..]) {
            let Poll::Ready(Ok(taken)) = get.as_mut().poll(&mut Context::from_waker(waker)) else {
                panic!("a woken get must take its item");
            };
            taken.succeed();
        }
        assert_eq!(counts(), (0, 0));
        assert_eq!(queue.try_get().map(|taken| taken.succeed()).ok(), Some(3));
    }

    /// A queue dropped with wakers signalled but not yet woken is freed, and so are they:
    /// a kept waker holds no queue, and the thread's next drain wakes and drops it.
    #[test]
    fn a_queue_dropped_before_its_wakers_are_woken_frees_them() {
        use crate::wait::counting_waker::CountingWaker;
        use alloc::sync::Arc;

        let (count, waker) = CountingWaker::new();
        let mut context = Context::from_waker(&waker);
        let queue = Arc::new(Queue::<u8>::unbounded());
        {
            let mut get = pin!(queue.get());
            assert!(get.as_mut().poll(&mut context).is_pending());
            // Signalled, never woken: the waker now sits on this thread's list.
            assert!(queue.steward.raw().getters().signal_all());
        }
        drop(waker);
        assert_eq!(Arc::strong_count(&queue), 1, "a kept waker holds the queue");
        drop(queue);
        assert_eq!(count.wakes(), 0);
        // Any notifier's drain on this thread wakes it.
        let queue = Queue::<u8>::unbounded();
        let mut get = pin!(queue.get());
        assert!(get
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
            .is_pending());
        queue.try_put(1).unwrap();
        assert_eq!(
            count.wakes(),
            1,
            "the next drain woke the waker left behind"
        );
        assert_eq!(Arc::strong_count(&count), 1, "the task waker leaked");
    }

    /// Every deadline form that has returned `Ready` holds no listener, while the future
    /// itself is still alive (pinned in this scope): the counts are back to zero.
    #[test]
    fn finished_deadline_waits_hold_no_listener() {
        use alloc::sync::Arc;
        use core::future::{pending, ready};

        let mut context = Context::from_waker(Waker::noop());
        let queue = Arc::new(Queue::<u8>::bounded(1).unwrap());

        let mut get = pin!(queue.get_until(ready(())));
        assert!(get.as_mut().poll(&mut context).is_ready());
        let mut owned = pin!(queue.get_owned_until(ready(())));
        assert!(owned.as_mut().poll(&mut context).is_ready());
        assert_eq!(counts(&queue), [0, 0, 0]);

        queue.try_put(1).unwrap();
        let mut put = pin!(queue.put_until(2, ready(())));
        assert!(put.as_mut().poll(&mut context).is_ready());
        assert_eq!(counts(&queue), [0, 0, 0]);

        let mut join = pin!(queue.join_until(ready(())));
        assert!(join.as_mut().poll(&mut context).is_ready());
        assert_eq!(counts(&queue), [0, 0, 0]);

        // A wait still pending does hold one, so the counts above could have shown it.
        let mut waiting = pin!(queue.join_until(pending::<()>()));
        assert!(waiting.as_mut().poll(&mut context).is_pending());
        assert_eq!(counts(&queue), [0, 0, 1]);

        let mut closing = pin!(queue.shutdown_until(ready(())));
        assert!(closing.as_mut().poll(&mut context).is_ready());
        assert!(waiting.as_mut().poll(&mut context).is_ready());
        assert_eq!(counts(&queue), [0, 0, 0]);
    }
}

#[cfg(all(test, loom, feature = "std"))]
mod loom_models {
    use alloc::sync::{Arc, Weak};
    use alloc::task::Wake;
    use core::future::Future;
    use core::pin::Pin;
    use core::task::{Context, Poll, Waker};
    use loom::sync::Notify;
    use loom::thread;

    use crate::Queue;

    /// A waker that notifies the thread driving its future (see [`drive`]).
    #[derive(Default)]
    struct Woken(Notify);

    impl Wake for Woken {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }

        fn wake_by_ref(self: &Arc<Self>) {
            self.0.notify();
        }
    }

    /// Polls `future` until it is ready, waiting between polls until `waker` (which must
    /// notify `woken`) runs: a lost wake-up leaves the thread blocked, and loom reports the
    /// model deadlocked.
    fn drive<F: Future + Unpin>(future: &mut F, woken: &Woken, waker: &Waker) -> F::Output {
        loop {
            if let Poll::Ready(out) = Pin::new(&mut *future).poll(&mut Context::from_waker(waker)) {
                return out;
            }
            woken.0.wait();
        }
    }

    fn woken() -> (Arc<Woken>, Waker) {
        let woken = Arc::new(Woken::default());
        (Arc::clone(&woken), Waker::from(woken))
    }

    /// A put's hand-off to an async get on the ring: the get's waker is taken out under
    /// the list's lock and run by the putting thread once the lock is released, with no
    /// deferred list between them. Never lost, whatever the interleaving of the get's
    /// registration and the put.
    #[test]
    fn a_put_wakes_an_async_get_on_the_ring() {
        loom::model(|| {
            let queue = Arc::new(Queue::<u8>::bounded(2).unwrap());
            let producer = {
                let queue = Arc::clone(&queue);
                thread::spawn(move || queue.try_put(4).unwrap())
            };
            let (woken, waker) = woken();
            let mut get = queue.get();
            let got = drive(&mut get, &woken, &waker).unwrap().succeed();
            producer.join().unwrap();
            assert_eq!(got, 4);
            assert!(queue.ledger().is_balanced());
        });
    }

    /// A get's hand-off of a slot to an async put on a full ring, woken the same way.
    #[test]
    fn a_get_wakes_an_async_put_on_a_full_ring() {
        loom::model(|| {
            let queue = Arc::new(Queue::<u8>::bounded(1).unwrap());
            queue.try_put(1).unwrap();
            let consumer = {
                let queue = Arc::clone(&queue);
                thread::spawn(move || queue.try_get().unwrap().succeed())
            };
            let (woken, waker) = woken();
            let mut put = queue.put(2);
            drive(&mut put, &woken, &waker).unwrap();
            assert_eq!(consumer.join().unwrap(), 1);
            assert_eq!(queue.try_get().unwrap().succeed(), 2);
            assert!(queue.ledger().is_balanced());
        });
    }

    /// A waker run by a hand-off re-enters the queue and puts again (a second hand-off,
    /// from inside the first one's wake), while another thread puts too: no deadlock, and
    /// every item is accounted for.
    #[test]
    fn a_woken_waker_puts_into_the_ring_that_wakes_it() {
        struct Reenter(Arc<Woken>, Weak<Queue<u8>>);
        impl Wake for Reenter {
            fn wake(self: Arc<Self>) {
                self.wake_by_ref();
            }
            fn wake_by_ref(self: &Arc<Self>) {
                if let Some(queue) = self.1.upgrade() {
                    let _ = queue.try_put(9);
                }
                self.0.wake_by_ref();
            }
        }
        loom::model(|| {
            let queue = Arc::new(Queue::<u8>::bounded(2).unwrap());
            let woken = Arc::new(Woken::default());
            let waker = Waker::from(Arc::new(Reenter(
                Arc::clone(&woken),
                Arc::downgrade(&queue),
            )));
            let producer = {
                let queue = Arc::clone(&queue);
                thread::spawn(move || queue.try_put(1).unwrap())
            };
            let mut get = queue.get();
            let first = drive(&mut get, &woken, &waker).unwrap().succeed();
            producer.join().unwrap();
            drop(get);
            let mut rest = 0;
            while let Ok(delivery) = queue.try_get() {
                delivery.succeed();
                rest += 1;
            }
            assert!(first == 1 || first == 9);
            let ledger = queue.ledger();
            assert_eq!(ledger.accepted, 1 + rest);
            assert!(ledger.is_balanced());
        });
    }
}
