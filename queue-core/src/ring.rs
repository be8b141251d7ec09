//! The buffer engine of a bounded queue: a ring of slots in the style of Vyukov's bounded
//! MPMC queue (crossbeam's `ArrayQueue`), whose three words also carry the id sequence,
//! the closed flag, the ledger's ending count and the waiter counts, so that a put, a get
//! and an ending each cost one locked instruction when nobody waits.
//!
//! This is the only module of the crate with `unsafe` code (`lib.rs` denies it elsewhere):
//! a slot's value is a `MaybeUninit` that only the thread that claimed the slot touches.
//!
//! # The words
//!
//! Each word is a `u64`. `tail`, written by producers, has a cache line of its own; `head`
//! and `ended`, written by consumers (a get claims `head`, and the same thread usually ends
//! what it took), share the other one, so a message costs a consumer one line, not two.
//!
//! ```text
//! bit     63 ............ 25 | 24 ...... 13 | 12 ........ 1 | 0
//! tail    put ticket         | pending gets | waiting gets  | CLOSED
//! head    get ticket         | pending puts | waiting puts  | -
//! ended   endings            | -            | waiting joins | -
//! ```
//!
//! - A **ticket** is a 39-bit wrapping count. The ticket of a put is its position in the
//!   buffer; ticket `t` lives in slot `t % slots`, where `slots` is the bound rounded up to
//!   a power of two (so the slot index survives the wrap).
//! - A **put** is one compare-exchange on `tail`: it claims the next ticket, fails (and
//!   hands the item back) once `CLOSED` is set, and reads the getter counts in the same
//!   instruction. A getter that registers to wait does so with a read-modify-write of the
//!   same word, so the word's modification order decides, for every put, whether that
//!   getter was counted: if not, the registration came later and the getter's re-check
//!   sees the ticket the put claimed (see [`Ring::try_get`] for why it then waits for the
//!   put to write the slot instead of sleeping).
//! - A **get** is one compare-exchange on `head`, which reads the putter counts the same
//!   way.
//! - An **ending** (resolution, abandonment, discard) is one `fetch_add` on `ended`, which
//!   reads the joiner count. The queue is *settled* (nothing unfinished) when the ending
//!   count equals the put ticket: a plain compare of two words. A retry's ending (see
//!   below) is the one that does not read the count: it comes between the retry's claim
//!   and its publication, so it never settles the ring.
//!
//! # Ids
//!
//! Every slot has a `stamp`, a full 64-bit ticket (Vyukov's sequence number): `t` while the
//! slot waits for the put of ticket `t`, `t + 1` once that put has written it, `t + slots`
//! once a get took the item. The 39-bit ticket in `tail` is matched against the stamp's low
//! bits, and the stamp gives back the full 64 bits: a fresh put's [`JobId`] is its full
//! ticket, so ids of fresh puts follow buffer order for any number of producers.
//!
//! A retried item ([`Ring::try_requeue`]) takes a fresh ticket (a place at the back) and
//! keeps its old id, which the slot stores beside the item; the ring counts the retry as
//! one ending, so that `tail - ended` stays the number of unfinished items. Fresh ids
//! therefore skip the tickets that retries took: ids are unique and follow buffer order,
//! and they are contiguous (0, 1, 2, ...) in a queue that never saw a retry.
//!
//! Wrapping: a ticket is matched modulo 2^39 against stamps that are at most one lap away,
//! so the wrap is harmless unless one thread is suspended between two loads while 2^39
//! (about 5.5 × 10^11) other puts happen, or that many deliveries are alive at once.
//!
//! [`JobId`]: crate::JobId
//!
//! # Waiter counts, notifications and reservations
//!
//! Each class of waiter has two 12-bit fields in the word its notifier writes: `waiting`
//! (registered waiters) and `pending` (notifications sent and not yet consumed). A put
//! that finds `waiting > pending` raises `pending` in its own compare-exchange and tells
//! its caller to notify one getter ([`Accepted::notify_getter`]); while every registered
//! getter already has a notification coming, the put tells nothing, so the hand-off costs
//! nothing beyond the put's own instruction. Gets do the same for putters, on `head`.
//!
//! A pending notification is a **reservation**: the item the put just buffered is held for
//! the getter it wakes. A barging [`try_get`](Ring::try_get) takes an item only if more
//! are buffered than reserved (`tail - head > pending`), and a barging
//! [`try_put`](Ring::try_put) only if more slots are free than reserved for woken putters
//! (`bound - (tail - head) > pending`). A woken waiter takes its reserved item with
//! [`Ring::get_reserved`], which also counts it out (one `fetch_sub` on `tail`), and so
//! keeps its place: nobody can take the item it was woken for. A woken waiter that gives
//! up (a dropped future) counts itself out with [`Ring::pass_on_getter`]: its reservation
//! stays for the next registered getter, to whom event-listener passes the notification,
//! or is released if no getter is left. A notification that reached nobody (every
//! listener had left) withdraws its reservation with [`Ring::unreserve_getter`]. The
//! drain of an immediate shutdown ignores reservations, so a woken getter can find its
//! item drained: it then sees the ring closed.
//!
//! For the counts to mean what they say, a waiter of a reserving ring inserts its
//! event-listener listener *before* it counts itself in (the registration is a Release read-modify-write and the
//! put's claim an Acquire one, so a put that counts the waiter also sees its listener),
//! and counts itself out only after its listener has left the list.
//!
//! More than 4 094 waiters of one class at once saturate `waiting`: it stays at 4 095 for
//! the life of the ring, and from then on every put (get) tells its caller to notify and
//! reserves nothing. That is correct (a notification nobody needs is harmless) and only
//! slower.
//!
//! # Counting only
//!
//! The queue builds its rings with [`Ring::counting`]. There a pending notification
//! reserves nothing: the queue's own turns (`turns.rs`) keep a woken waiter's item or slot
//! for it, as on its other buffers, so barging tries never read `pending`. The two fields
//! only spare notifications: a claim that finds `waiting > pending` raises `pending` and
//! tells its caller to notify (`Wake::Reserved` in `waiters.rs`), and while every counted
//! waiter already has a notification coming it tells nothing, so a burst of puts for one
//! sleeping getter pays event-listener once. A counting ring lends its fields through
//! [`Counted`]:
//!
//! - a waiter counts itself in (an AcqRel read-modify-write) *before* inserting its
//!   listener, as `waiters.rs` documents;
//! - a waiter whose listener left notified counts itself out with
//!   [`Counted::count_out_notified`] (one waiting, one pending), one whose listener left
//!   without a notification with [`Counted::count_out`];
//! - a notification that reached nobody (the waiter it counted had not inserted its
//!   listener yet, or had just left) is withdrawn with [`Counted::withdraw`], and the
//!   caller sends one notification no claim counts in its place; `waiters.rs` argues why
//!   that loses no wake-up;
//! - a notification no claim counted (that replacement, a turn passed on, a wake-all) is
//!   counted with [`Counted::raise`] as it reaches each listener, under event-listener's
//!   lock, so every notified waiter is counted pending before it can count itself out;
//! - a notifier that changed something other than this word checks the field with
//!   [`Counted::anyone`].
//!
//! `pending` reads high only between a notify that reached nobody and its withdrawal, a
//! window the notification after the withdrawal covers. It can read low only without
//! `std` (event-listener then has no per-listener hook to raise it from, see `waiters.rs`):
//! a waiter woken by a notification nobody counted then counts out one another waiter was
//! owed, which costs a notification later, never a wake-up. Left low under two threads,
//! every claim would notify nobody, withdraw and notify again until the notified waiters
//! ran.
//!
//! The reserving API (the `*_reserved`, `register_*`, `pass_on_*` and `unreserve_*`
//! methods; `Ring::new` builds a reserving ring) is built and model-checked here and
//! compiled for tests only: the queue's turns keep the hand-offs, and outside tests
//! [`Ring::reserving`] is a constant `false`, so the reservation checks compile away.
//!
//! # Bounds
//!
//! [`Bound::Buffered`]`(n)` counts buffered items (`tail - head`); a get frees a slot.
//! Where `n` is the slot count (a power of two, 128 say), a put checks the bound by its
//! slot's stamp alone: a slot free for its ticket means the get of the item one lap back is
//! done, so fewer than `n` items are buffered; `head` is read only when the slot is found
//! taken (full, or a get still moving the old item out), or while slots are owed to woken
//! putters.
//!
//! [`Bound::Unfinished`]`(n)` counts buffered and delivered items (`tail - ended`); an
//! ending frees a slot. Either way the ring has `n.next_power_of_two()` slots (at least two), since
//! at most `n` items are buffered. With an unfinished bound, puts wait on a slot freed by an
//! ending: the `ended` word has no room for the putter counts, so those putters are
//! counted outside the ring (in `Waiters`' own counter) and `head`'s putter fields stay
//! zero.
//!
//! Unbounded queues and bounds above [`MAX_SLOTS`] do not use a ring: a ring preallocates
//! its slots, and an unbounded Vyukov queue is a list of blocks, which is what
//! concurrent-queue's `unbounded` already is (and async-channel's unbounded channel, the
//! peer to match, runs on it). Writing a second one here would buy only the fused
//! ticket/closed word, at the price of a second `unsafe` module; those queues keep
//! concurrent-queue with the slot counter of `slots.rs` and the ledger's own id counter.
//!
//! # No user code between owners
//!
//! Nothing in this module calls user code: no waker, no `Drop` of `T` (except in the
//! ring's own `Drop`). Between claiming a slot and publishing it, a put or a get only moves
//! bytes; notifications are the caller's, after the item is in the slot or in its new
//! owner's hands.
//!
//! # Progress
//!
//! Like every Vyukov ring this is not lock-free in the strict sense: a get that finds the
//! next ticket claimed but not yet written (and a put that finds its slot still being
//! read) waits until the other thread finishes a few instructions. That window holds no
//! lock and runs no user code, but a thread preempted inside it holds up the others until
//! it runs again; so the wait spins only briefly and then yields the thread
//! ([`back_off`]), or a waiter on a machine with more runnable threads than cores would
//! spin out its time slice while the thread it waits for cannot run. An interrupt handler
//! cannot wait for the code it interrupted at all: with the `critical-section` feature each
//! put and get is one critical section ([`uninterrupted`]), so no handler finds one half
//! done.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::mem::MaybeUninit;

use crate::sync::{back_off, uninterrupted, AtomicU64, Cell, Ordering};

/// `tail`: no put succeeds once set.
const CLOSED: u64 = 1;
/// Width of the waiter fields.
const FIELD_BITS: u32 = 12;
/// The largest value of a waiter field; `waiting` sticks there once reached.
const FIELD_MAX: u64 = (1 << FIELD_BITS) - 1;
const WAITING_SHIFT: u32 = 1;
/// One registered waiter.
const WAITING: u64 = 1 << WAITING_SHIFT;
const PENDING_SHIFT: u32 = WAITING_SHIFT + FIELD_BITS;
/// One pending notification (a reservation).
const PENDING: u64 = 1 << PENDING_SHIFT;
const TICKET_SHIFT: u32 = PENDING_SHIFT + FIELD_BITS;
/// One ticket.
const TICKET: u64 = 1 << TICKET_SHIFT;
/// The tickets' modulus minus one: tickets are `64 - TICKET_SHIFT` = 39 bits.
const TICKET_MASK: u64 = u64::MAX >> TICKET_SHIFT;
/// The most slots a ring has; larger bounds use a growable buffer.
pub(crate) const MAX_SLOTS: usize = 1 << 16;

#[inline]
const fn ticket_of(word: u64) -> u64 {
    word >> TICKET_SHIFT
}

#[inline]
const fn waiting(word: u64) -> u64 {
    (word >> WAITING_SHIFT) & FIELD_MAX
}

#[inline]
const fn pending(word: u64) -> u64 {
    (word >> PENDING_SHIFT) & FIELD_MAX
}

/// `a - b` on tickets.
#[inline]
const fn distance(a: u64, b: u64) -> u64 {
    a.wrapping_sub(b) & TICKET_MASK
}

/// Whether a distance is really negative: `a` was read stale, behind `b`.
#[inline]
const fn behind(distance: u64) -> bool {
    distance > TICKET_MASK / 2
}

/// The full 64-bit value whose low 39 bits are `low`, nearest to the full value `near`.
#[inline]
const fn widen(low: u64, near: u64) -> u64 {
    let up = distance(low, near);
    if behind(up) {
        near.wrapping_sub(TICKET_MASK + 1 - up)
    } else {
        near.wrapping_add(up)
    }
}

/// What the ring bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bound {
    /// At most this many buffered items; a get frees a slot.
    Buffered(u64),
    /// At most this many buffered or delivered items; an ending frees a slot.
    Unfinished(u64),
}

impl Bound {
    fn get(self) -> u64 {
        match self {
            Bound::Buffered(n) | Bound::Unfinished(n) => n,
        }
    }
}

/// A put the ring accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Accepted {
    /// The item's id: the full ticket of a fresh put, the old id of a requeued item.
    pub(crate) id: u64,
    /// This put reserved its item for a waiting getter: notify one.
    pub(crate) notify_getter: bool,
}

/// A put the ring refused; the item comes back.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refused<T> {
    /// The bound is reached (counting slots reserved for woken putters).
    Full(T),
    /// The ring is closed.
    Closed(T),
}

/// An item a get took out of the ring.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Taken<T> {
    pub(crate) id: u64,
    pub(crate) item: T,
    /// This get reserved the slot it freed for a waiting putter: notify one.
    pub(crate) notify_putter: bool,
}

/// Why a get found nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Nothing {
    /// Nothing buffered that is not reserved for a woken getter.
    Empty,
    /// Closed and empty: final.
    Closed,
}

/// What the bound check of a put found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Room {
    /// The bound leaves room for the ticket.
    Free,
    /// The bound is reached.
    Full,
    /// The ticket was read from a stale `tail`: a get (or an ending) already passed it.
    Stale,
}

/// How a get treats reservations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Claim {
    /// Leaves the reserved items alone.
    Barging,
    /// Holds one reservation, which it consumes.
    Reserved,
    /// Ignores reservations (the drain of an immediate shutdown).
    Drain,
}

/// One ring slot: Vyukov's sequence number and the entry.
struct Slot<T> {
    stamp: AtomicU64,
    /// Initialized exactly while `stamp` is one past the ticket the slot was written for.
    entry: Cell<MaybeUninit<(u64, T)>>,
}

/// A word alone on its cache line (128 bytes: x86's adjacent-line prefetch pairs lines).
#[repr(align(128))]
struct Line(AtomicU64);

/// The consumers' two words on one line of their own: a get's claim of `head` is followed,
/// on the same thread, by the ending of what it took, so the ending finds the line
/// already held (on separate lines, an ending on a thread other than the last one's would
/// fetch a second line).
#[repr(align(128))]
struct Consumers {
    head: AtomicU64,
    ended: AtomicU64,
}

/// The ring; see the module docs.
pub(crate) struct Ring<T> {
    tail: Line,
    consumers: Consumers,
    slots: Box<[Slot<T>]>,
    /// `slots.len() - 1`.
    mask: u64,
    bound: Bound,
    /// The bound is `Buffered(slots.len())`: a slot free for a put's ticket is room for it
    /// (see [`stamps_bound`](Ring::stamps_bound)).
    stamp_bound: bool,
    /// Whether notifications reserve (see the module docs); a [`counting`](Ring::counting)
    /// ring only counts its waiters. Reserving rings exist only in tests, so outside them
    /// the field is gone and every ring counts (see [`reserving`](Ring::reserving)).
    #[cfg(test)]
    reserving: bool,
}

// SAFETY: the ring moves `T`s between threads (so `T: Send`) and never hands out shared
// references to them; each entry is accessed only by the one thread whose compare-exchange
// claimed its slot, and the stamps order those accesses (see `try_put` and `take`).
unsafe impl<T: Send> Send for Ring<T> {}
// SAFETY: as above; `&Ring<T>` only lets a thread move items in and out.
unsafe impl<T: Send> Sync for Ring<T> {}

impl<T> Ring<T> {
    /// A ring for `bound`.
    ///
    /// # Panics
    ///
    /// If the bound is 0 or above [`MAX_SLOTS`].
    pub(crate) fn new(bound: Bound) -> Self {
        Self::starting_at(bound, 0)
    }

    /// A ring whose waiter fields only count waiters (see "Counting only" in the module
    /// docs).
    ///
    /// # Panics
    ///
    /// As [`new`](Ring::new).
    pub(crate) fn counting(bound: Bound) -> Self {
        #[cfg(test)]
        {
            let mut ring = Self::new(bound);
            ring.reserving = false;
            ring
        }
        #[cfg(not(test))]
        Self::new(bound)
    }

    /// A ring whose first ticket is `start` (tests start near the wrap).
    fn starting_at(bound: Bound, start: u64) -> Self {
        let n = bound.get();
        assert!(
            n > 0 && n <= MAX_SLOTS as u64,
            "a ring bound is between 1 and {MAX_SLOTS}"
        );
        // At least two slots: with one, "full for ticket t" (stamp t + 1) would read as
        // "empty for ticket t + 1", and a put could write the slot while the get that
        // claimed it still reads it.
        let len = n.next_power_of_two().max(2);
        let slots: Vec<Slot<T>> = (0..len)
            .map(|index| Slot {
                // The first ticket at or after `start` that lives in this slot.
                stamp: AtomicU64::new(start + (index.wrapping_sub(start) & (len - 1))),
                entry: Cell::new(MaybeUninit::uninit()),
            })
            .collect();
        let word = (start & TICKET_MASK) << TICKET_SHIFT;
        Ring {
            tail: Line(AtomicU64::new(word)),
            consumers: Consumers {
                head: AtomicU64::new(word),
                ended: AtomicU64::new(word),
            },
            slots: slots.into_boxed_slice(),
            mask: len - 1,
            bound,
            stamp_bound: bound == Bound::Buffered(len),
            #[cfg(test)]
            reserving: true,
        }
    }

    /// Whether the pending notifications reserve items and slots: never outside tests,
    /// where the queue builds only counting rings, so the reservation checks compile away.
    #[inline]
    fn reserving(&self) -> bool {
        #[cfg(test)]
        return self.reserving;
        #[cfg(not(test))]
        false
    }

    /// Whether a slot free for a put's ticket is room enough, with no slot owed: the
    /// bound is the slot count, and (outside tests, always) no slot is reserved.
    #[inline]
    fn stamps_bound(&self) -> bool {
        self.stamp_bound && !self.reserving()
    }

    #[inline]
    fn slot(&self, ticket: u64) -> &Slot<T> {
        let index = (ticket & self.mask) as usize;
        debug_assert!(index < self.slots.len());
        // SAFETY: `mask` is `slots.len() - 1` and `slots.len()` a power of two, so the
        // masked index is in bounds (this skips a bounds check on every put and get).
        unsafe { self.slots.get_unchecked(index) }
    }

    // ------------------------------------------------------------------------ puts

    /// Buffers `item` under a fresh id (its full ticket).
    #[inline]
    #[cfg(test)]
    pub(crate) fn try_put(&self, item: T) -> Result<Accepted, Refused<T>> {
        self.put(item, None, false, 0)
    }

    /// As [`try_put`](Ring::try_put), leaving `owed` free slots alone: the slots the
    /// queue's putter turns (`turns.rs`) keep for woken putters.
    #[inline]
    pub(crate) fn try_put_leaving(&self, item: T, owed: u64) -> Result<Accepted, Refused<T>> {
        self.put(item, None, false, owed)
    }

    /// As [`try_put`](Ring::try_put), for a putter woken by a notification, which holds
    /// one reserved slot: takes it even if every free slot is reserved, then counts the
    /// putter out (its reservation and its registration).
    #[cfg(test)]
    pub(crate) fn put_reserved(&self, item: T) -> Result<Accepted, Refused<T>> {
        let accepted = self.put(item, None, true, 0)?;
        consume(&self.consumers.head);
        Ok(accepted)
    }

    /// Buffers an in-flight item again, at the back, under its old `id`; counts its
    /// delivery as ended (the new ticket is its new life), so unfinished stays the same.
    #[cfg(test)]
    pub(crate) fn try_requeue(&self, id: u64, item: T) -> Result<Accepted, Refused<T>> {
        self.try_requeue_leaving(id, item, 0)
    }

    /// As [`try_requeue`](Ring::try_requeue), leaving `owed` free slots alone (see
    /// [`try_put_leaving`](Ring::try_put_leaving)).
    pub(crate) fn try_requeue_leaving(
        &self,
        id: u64,
        item: T,
        owed: u64,
    ) -> Result<Accepted, Refused<T>> {
        self.put(item, Some(id), false, owed)
    }

    /// A put, from its claim to its publication, that no interrupt handler can enter
    /// midway (see [`uninterrupted`]).
    #[inline]
    fn put(
        &self,
        item: T,
        id: Option<u64>,
        reserved: bool,
        owed: u64,
    ) -> Result<Accepted, Refused<T>> {
        uninterrupted(|| self.put_unguarded(item, id, reserved, owed))
    }

    #[inline(always)]
    fn put_unguarded(
        &self,
        item: T,
        id: Option<u64>,
        reserved: bool,
        owed: u64,
    ) -> Result<Accepted, Refused<T>> {
        // A requeued item is already unfinished, so under an unfinished bound it needs no
        // room: the ring's slots hold every unfinished item. A woken putter's own
        // reservation counts as used.
        let bounded = id.is_none() || matches!(self.bound, Bound::Buffered(_));
        let allowance = u64::from(reserved);
        // A slot free for a ticket means the get of the item one lap back is done, so fewer
        // items than slots are buffered: where the bound is the slot count and no slot is
        // owed, the stamp is the bound check, and the bound (on the consumers' line) is
        // read only once the slot is found taken.
        let by_stamp = owed == 0 && self.stamps_bound();
        let mut waited = 0;
        // Relaxed: the compare-exchange below validates it.
        let mut tail = self.tail.0.load(Ordering::Relaxed);
        loop {
            if tail & CLOSED != 0 {
                return Err(Refused::Closed(item));
            }
            let ticket = ticket_of(tail);
            if !by_stamp {
                match self.room(ticket, bounded, allowance, owed) {
                    Room::Free => {}
                    Room::Full => return Err(Refused::Full(item)),
                    Room::Stale => {
                        waited = back_off(waited);
                        // Relaxed: re-read for the loop, which validates it.
                        tail = self.tail.0.load(Ordering::Relaxed);
                        continue;
                    }
                }
            }
            let slot = self.slot(ticket);
            // Acquire: pairs with the Release store of the get that emptied the slot, so
            // the write below comes after its read.
            let stamp = slot.stamp.load(Ordering::Acquire);
            if stamp & TICKET_MASK == ticket {
                let (next, notify_getter) = with_notification(tail.wrapping_add(TICKET));
                // Acquire: on a reserving ring, a getter counted here inserted its listener
                // before registering (Release), so the notify that follows finds it (on a
                // counting ring the getter counts in first, and a notify that misses its
                // listener is withdrawn and sent again uncounted, see `waiters.rs`). The
                // claim publishes nothing itself: the stamp's Release store below publishes
                // the item, and a getter that registers after this claim sees the new
                // ticket through its own read-modify-write of this word and waits for
                // that stamp.
                match self.tail.0.compare_exchange_weak(
                    tail,
                    next,
                    Ordering::Acquire,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        if id.is_some() {
                            // A retry ends the item's delivery here, between claiming its
                            // new ticket and publishing it: no get can take it (and end
                            // it) before, and the new ticket keeps it unfinished, so this
                            // ending never settles the ring. Release: an observer that
                            // acquires `ended` then sees the claim above, so `tail -
                            // ended` never reads negative.
                            self.consumers.ended.fetch_add(TICKET, Ordering::Release);
                        }
                        let id = id.unwrap_or(stamp);
                        slot.entry.with_mut(|entry| {
                            // SAFETY: the compare-exchange gave this thread ticket
                            // `stamp`, and the stamp says the slot is empty for it: no
                            // other thread touches the entry until the store below.
                            unsafe { entry.write(MaybeUninit::new((id, item))) };
                        });
                        // Release: publishes the entry to the get that acquires this stamp.
                        slot.stamp.store(stamp.wrapping_add(1), Ordering::Release);
                        return Ok(Accepted { id, notify_getter });
                    }
                    Err(now) => tail = now,
                }
            } else {
                if by_stamp && self.room(ticket, bounded, allowance, owed) == Room::Full {
                    return Err(Refused::Full(item));
                }
                // Either another put took this ticket (`tail` is stale), or the get of
                // the item one lap back claimed it and is still moving it out.
                // Relaxed: re-read for the loop, which validates it.
                waited = back_off(waited);
                tail = self.tail.0.load(Ordering::Relaxed);
            }
        }
    }

    /// The bound check of a put of `ticket`: whether the bound leaves room for it (see
    /// [`put`](Ring::put) for `bounded`, `allowance` and `owed`).
    #[inline]
    fn room(&self, ticket: u64, bounded: bool, allowance: u64, owed: u64) -> Room {
        let (used, pending, counts) = match self.bound {
            // Relaxed (both): a bound check; the slot's stamp orders the write after the
            // read of the get that freed the slot.
            Bound::Buffered(_) => {
                let head = self.consumers.head.load(Ordering::Relaxed);
                let used = distance(ticket, ticket_of(head));
                if self.reserving() {
                    // Slots reserved for woken putters count as used.
                    (used, pending(head), head)
                } else {
                    (used, 0, 0)
                }
            }
            Bound::Unfinished(_) => {
                let ended = self.consumers.ended.load(Ordering::Relaxed);
                (distance(ticket, ticket_of(ended)), 0, 0)
            }
        };
        let limit = (self.bound.get() + allowance).saturating_sub(owed);
        // The raw pending count first (the common case has none); only a ring that looks
        // full checks whether a saturated count voids the reservations.
        if bounded && used + pending >= limit && used + reservations(counts) >= limit {
            if behind(used) {
                return Room::Stale;
            }
            return Room::Full;
        }
        Room::Free
    }

    // ------------------------------------------------------------------------ gets

    /// Takes the oldest item, unless every buffered item is reserved for a woken getter.
    ///
    /// A ticket claimed by a put that has not written its slot yet is waited for (see
    /// "Progress" in the module docs), not reported empty: a getter that registered after
    /// that put's claim was not counted by it and will not be notified, so its re-check
    /// must see the item.
    #[inline]
    pub(crate) fn try_get(&self) -> Result<Taken<T>, Nothing> {
        self.take(Claim::Barging)
    }

    /// As [`try_get`](Ring::try_get), for a getter woken by a notification, which holds
    /// one reservation: takes an item even if all are reserved, then counts the getter
    /// out (its reservation and its registration).
    ///
    /// The claim (on `head`) and the count-out (on `tail`) are two steps: between them, a
    /// barging get counts one reservation too many and may report `Empty` although one
    /// unreserved item is buffered. The window is a few instructions with no user code;
    /// the other order would let bargers take the woken getter's item, which is worse.
    #[cfg(test)]
    pub(crate) fn get_reserved(&self) -> Result<Taken<T>, Nothing> {
        self.take(Claim::Reserved)
    }

    /// Closes the ring and takes every buffered item, reserved or not, in ticket order.
    /// Returns the items with their ids.
    pub(crate) fn drain(&self) -> Vec<(u64, T)> {
        self.close();
        let mut drained = Vec::new();
        while let Ok(taken) = self.take(Claim::Drain) {
            drained.push((taken.id, taken.item));
        }
        drained
    }

    /// A get, from its claim to its publication, that no interrupt handler can enter
    /// midway (see [`uninterrupted`]).
    #[inline]
    fn take(&self, claim: Claim) -> Result<Taken<T>, Nothing> {
        uninterrupted(|| self.take_unguarded(claim))
    }

    #[inline(always)]
    fn take_unguarded(&self, claim: Claim) -> Result<Taken<T>, Nothing> {
        let mut waited = 0;
        // Relaxed: the compare-exchange below validates it.
        let mut head = self.consumers.head.load(Ordering::Relaxed);
        loop {
            let ticket = ticket_of(head);
            let slot = self.slot(ticket);
            // Acquire: pairs with the put's Release store, so the entry is written.
            let stamp = slot.stamp.load(Ordering::Acquire);
            if stamp & TICKET_MASK == (ticket + 1) & TICKET_MASK {
                if claim == Claim::Barging && self.reserving() {
                    // Relaxed: the put of this item claimed its ticket before the stamp we
                    // acquired, so this read sees at least that ticket.
                    let tail = self.tail.0.load(Ordering::Relaxed);
                    if tail & (FIELD_MAX << PENDING_SHIFT) != 0
                        && distance(ticket_of(tail), ticket) <= reservations(tail)
                    {
                        // Every buffered item is reserved for a woken getter.
                        return Err(Nothing::Empty);
                    }
                }
                // Putters wait here only for a slot a get frees; the drain reserves
                // nothing (puts fail once closed).
                let (next, notify_putter) = match (self.bound, claim) {
                    (Bound::Buffered(_), Claim::Barging | Claim::Reserved) => {
                        with_notification(head.wrapping_add(TICKET))
                    }
                    _ => (head.wrapping_add(TICKET), false),
                };
                // Acquire: as for the put's claim, for the putters counted here; the
                // stamp's Release store below hands the slot to the next put.
                match self.consumers.head.compare_exchange_weak(
                    head,
                    next,
                    Ordering::Acquire,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        let (id, item) = slot.entry.with(|entry| {
                            // SAFETY: the compare-exchange gave this thread ticket
                            // `ticket`, whose put wrote the entry before the Release store
                            // of the stamp we acquired; no other thread touches it until
                            // the store below, and the store makes the slot empty again,
                            // so the value is read out exactly once.
                            unsafe { (*entry).assume_init_read() }
                        });
                        // Release: the next put into this slot writes after this read.
                        slot.stamp
                            .store(stamp.wrapping_add(self.mask), Ordering::Release);
                        if claim == Claim::Reserved {
                            consume(&self.tail.0);
                        }
                        return Ok(Taken {
                            id,
                            item,
                            notify_putter,
                        });
                    }
                    Err(now) => head = now,
                }
            } else if stamp & TICKET_MASK == ticket {
                // The slot waits for the put of this ticket: empty, or that put is
                // between its claim and its stamp.
                // Acquire: pairs with the close, so a closed, empty ring is final here.
                let tail = self.tail.0.load(Ordering::Acquire);
                if ticket_of(tail) == ticket {
                    return Err(if tail & CLOSED != 0 {
                        Nothing::Closed
                    } else {
                        Nothing::Empty
                    });
                }
                waited = back_off(waited);
                // Relaxed: re-read for the loop, which validates it.
                head = self.consumers.head.load(Ordering::Relaxed);
            } else {
                // Another get took this ticket: `head` is stale.
                waited = back_off(waited);
                // Relaxed: re-read for the loop.
                head = self.consumers.head.load(Ordering::Relaxed);
            }
        }
    }

    // --------------------------------------------------------------------- endings

    /// Records `n` endings (resolutions, abandonments or discards). Returns whether the
    /// caller must wake the joiners: joiners were registered and these endings settled
    /// the ring.
    #[inline]
    #[cfg(test)]
    pub(crate) fn end(&self, n: u64) -> bool {
        let (settled, joiners) = self.end_counted(n, false);
        settled && joiners
    }

    /// Records `n` endings, as [`end`](Ring::end). Returns whether they settled the ring
    /// and whether joiners were registered. Settling is looked at only when joiners are
    /// registered or the caller asks (`watch_settled`), and reads `false` otherwise: the
    /// look reads `tail`, the producers' cache line.
    #[inline]
    pub(crate) fn end_counted(&self, n: u64, watch_settled: bool) -> (bool, bool) {
        // AcqRel: releases this ending (and the work before it) to joiners that acquire
        // `ended`; acquires the earlier endings, so the `tail` read below sees the claim
        // of every item they ended.
        let before = self
            .consumers
            .ended
            .fetch_add(n << TICKET_SHIFT, Ordering::AcqRel);
        let joiners = before & (FIELD_MAX << WAITING_SHIFT) != 0;
        if !(joiners || watch_settled) {
            return (false, false);
        }
        // Relaxed: ordered by the acquire above (every ended item's claim happens before).
        let tail = self.tail.0.load(Ordering::Relaxed);
        let settled = distance(ticket_of(tail), ticket_of(before) + n) == 0;
        (settled, joiners)
    }

    /// Whether nothing is unfinished: every claimed ticket has ended.
    #[inline]
    #[cfg(test)]
    pub(crate) fn is_settled(&self) -> bool {
        self.unfinished() == 0
    }

    /// Unfinished items: buffered or delivered, not ended.
    pub(crate) fn unfinished(&self) -> u64 {
        // Acquire: pairs with the endings' AcqRel, so a zero here also shows the work
        // that ended, and the `tail` read below sees every claim those endings counted.
        let ended = self.consumers.ended.load(Ordering::Acquire);
        // Relaxed: ordered by the acquire above.
        let tail = self.tail.0.load(Ordering::Relaxed);
        distance(ticket_of(tail), ticket_of(ended))
    }

    // ----------------------------------------------------------------- observation

    /// Buffered items (a snapshot).
    pub(crate) fn len(&self) -> u64 {
        // Relaxed (both): a snapshot. A get's claim of `head` is no release, so `tail` can
        // lag behind it; the check below reads that as empty.
        let head = self.consumers.head.load(Ordering::Relaxed);
        let tail = self.tail.0.load(Ordering::Relaxed);
        let len = distance(ticket_of(tail), ticket_of(head));
        if behind(len) {
            0
        } else {
            len
        }
    }

    /// A snapshot of `(tickets, buffered, delivered)`: tickets claimed so far as a full
    /// 64-bit count (as [`tickets`](Ring::tickets)), items buffered (`tail - head`), and
    /// items taken out and not ended (`head - ended`). Read in the order `ended`, `head`,
    /// `tail`: the Acquire of `ended` shows the take of every item it counts ended, so
    /// `head - ended` is never negative; `tail` can lag behind `head` (a get's claim is no
    /// release), and `buffered` is clamped at zero then.
    pub(crate) fn counts(&self) -> (u64, u64, u64) {
        // Acquire: pairs with the endings' AcqRel, so the `head` read below sees the take
        // of every item ended.
        let ended = ticket_of(self.consumers.ended.load(Ordering::Acquire));
        // Relaxed: a get's claim of `head` is no release, so `tail` (read below) can lag
        // behind it; the clamp keeps `buffered` from reading negative then.
        let head = ticket_of(self.consumers.head.load(Ordering::Relaxed));
        let tickets = self.tickets();
        let clamp = |d: u64| if behind(d) { 0 } else { d };
        (
            tickets,
            clamp(distance(tickets & TICKET_MASK, head)),
            clamp(distance(head, ended)),
        )
    }

    /// Tickets claimed so far, as a full 64-bit count (puts plus requeues).
    pub(crate) fn tickets(&self) -> u64 {
        // Relaxed: a snapshot.
        let tail = self.tail.0.load(Ordering::Relaxed);
        let low = ticket_of(tail);
        // The slot of the next ticket holds a full ticket within a lap of it.
        // Relaxed: only its value is used.
        let near = self.slot(low).stamp.load(Ordering::Relaxed);
        widen(low, near)
    }

    /// Closes the ring: no put succeeds from now on. Returns whether this call closed it.
    pub(crate) fn close(&self) -> bool {
        // AcqRel: releases the close to the gets that acquire `tail` and find it empty;
        // acquires the puts claimed before it (a drain that follows takes them).
        self.tail.0.fetch_or(CLOSED, Ordering::AcqRel) & CLOSED == 0
    }

    /// Whether the ring is closed.
    pub(crate) fn is_closed(&self) -> bool {
        // Acquire: an observer.
        self.tail.0.load(Ordering::Acquire) & CLOSED != 0
    }

    // --------------------------------------------------------------------- waiters

    /// Counts a getter in, before its re-check. Returns whether a put has its item ready
    /// for it in the meantime (an unreserved item is buffered), so the re-check is worth
    /// making at once.
    #[cfg(test)]
    pub(crate) fn register_getter(&self) -> bool {
        let tail = register(&self.tail.0);
        // Relaxed: a hint; the re-check decides.
        let head = self.consumers.head.load(Ordering::Relaxed);
        distance(ticket_of(tail), ticket_of(head)) > reservations(tail)
    }

    /// Counts out a getter that leaves without a notification (it succeeded on its own
    /// attempt, or gave up before being woken).
    #[cfg(test)]
    pub(crate) fn unregister_getter(&self) {
        unregister(&self.tail.0);
    }

    /// Counts out a woken getter that gives up without taking its reserved item (a
    /// dropped future). Returns whether its reservation stays, for another registered
    /// getter: the caller then passes the notification on (event-listener does so when a
    /// notified listener is dropped). With no other getter registered, the reservation is
    /// released with it.
    #[cfg(test)]
    pub(crate) fn pass_on_getter(&self) -> bool {
        pass_on(&self.tail.0)
    }

    /// Withdraws a reservation whose notification reached nobody (every listener had
    /// left); the item is unreserved again.
    #[cfg(test)]
    pub(crate) fn unreserve_getter(&self) {
        unreserve(&self.tail.0);
    }

    /// Counts a putter in (bounded by buffered items only), before its re-check.
    #[cfg(test)]
    pub(crate) fn register_putter(&self) {
        debug_assert!(matches!(self.bound, Bound::Buffered(_)));
        register(&self.consumers.head);
    }

    /// As [`pass_on_getter`](Ring::pass_on_getter), for a woken putter that gives up its
    /// reserved slot.
    #[cfg(test)]
    pub(crate) fn pass_on_putter(&self) -> bool {
        pass_on(&self.consumers.head)
    }

    /// As [`unreserve_getter`](Ring::unreserve_getter), for a slot reserved for putters.
    #[cfg(test)]
    pub(crate) fn unreserve_putter(&self) {
        unreserve(&self.consumers.head);
    }

    /// Counts out a putter that leaves without a notification.
    #[cfg(test)]
    pub(crate) fn unregister_putter(&self) {
        unregister(&self.consumers.head);
    }

    /// Counts a joiner in, before its re-check of [`is_settled`](Ring::is_settled).
    #[cfg(test)]
    pub(crate) fn register_joiner(&self) {
        register(&self.consumers.ended);
    }

    /// Counts a joiner out.
    #[cfg(test)]
    pub(crate) fn unregister_joiner(&self) {
        unregister(&self.consumers.ended);
    }
}

impl<T> Ring<T> {
    /// Where the waiters of `kind` are counted, on a counting ring (a putter class only
    /// under a buffered bound).
    pub(crate) fn counted(&self, kind: Kind) -> Counted<'_> {
        debug_assert!(
            !self.reserving(),
            "only a counting ring lends its waiter fields"
        );
        let word = match kind {
            Kind::Getters => &self.tail.0,
            Kind::Putters => {
                debug_assert!(matches!(self.bound, Bound::Buffered(_)));
                &self.consumers.head
            }
            Kind::Joiners => &self.consumers.ended,
        };
        Counted {
            word,
            #[cfg(feature = "std")]
            pending: kind != Kind::Joiners,
        }
    }
}

/// A class of waiters whose registrations a counting ring keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Counted in `tail`, read by every put's claim.
    Getters,
    /// Counted in `head`, read by every get's claim.
    Putters,
    /// Counted in `ended`, read by every ending.
    Joiners,
}

/// The `waiting` field of one word of a counting ring: the registration count of one
/// class of waiters (see "Counting only" in the module docs).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Counted<'a> {
    word: &'a AtomicU64,
    /// Whether the word has a `pending` field (every class but the joiners). Read only by
    /// [`raise`](Counted::raise), which needs `std`.
    #[cfg(feature = "std")]
    pending: bool,
}

impl<'a> Counted<'a> {
    /// The waiter fields of a word of their own, laid out as in a ring word with no
    /// ticket: where a class of waiters is not counted in a ring (`Waiters` in
    /// `waiters.rs`), and notifiers [`claim`](Counted::claim) their notifications in it
    /// after their own change.
    #[inline]
    pub(crate) fn own(word: &'a AtomicU64) -> Self {
        Counted {
            word,
            #[cfg(feature = "std")]
            pending: true,
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
            // `anyone`, so what a notifier published before a skipped notification is
            // visible to the re-check that follows; the claims and endings themselves are
            // read-modify-writes of this word, so a later count-in sees their tickets.
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
        unregister(self.word);
    }

    /// Counts out a waiter whose listener left notified, with one pending notification
    /// (none if none is left: one counted for this waiter may already have been taken by
    /// a waiter woken by a notification no claim counted, which only makes a later claim
    /// notify once more than needed).
    #[inline]
    pub(crate) fn count_out_notified(self) {
        consume(self.word);
    }

    /// Counts pending a notification no claim counted, as it reaches a listener: called
    /// under event-listener's list lock, before that listener can leave, so the count
    /// goes up before the woken waiter's [`count_out_notified`](Counted::count_out_notified)
    /// takes it down, and `pending` never reads high. Nothing for the joiners, whose word
    /// has no `pending` field, or once `waiting` is saturated.
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
            // event-listener's lock orders this before the waiter's count-out.
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

    /// Withdraws the pending notification a claim counted, after its notification reached
    /// nobody (saturating at zero, as above).
    #[cold]
    pub(crate) fn withdraw(self) {
        withdraw(self.word);
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
        waiting(self.word.fetch_add(0, Ordering::AcqRel)) != 0
    }
}

/// `word` with one more pending notification if a registered waiter has none coming, and
/// whether the caller must notify. A saturated `waiting` always notifies and reserves
/// nothing.
#[inline]
const fn with_notification(word: u64) -> (u64, bool) {
    if word & (FIELD_MAX << WAITING_SHIFT) == 0 {
        // Nobody waits: the common case, one test.
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

/// The reservations `word` holds: its pending notifications, none once `waiting` is
/// saturated (then nothing is reserved, and reservations made before are ignored, so a
/// saturated ring never holds items back from bargers).
#[inline]
const fn reservations(word: u64) -> u64 {
    let pending = pending(word);
    if pending == 0 || waiting(word) == FIELD_MAX {
        0
    } else {
        pending
    }
}

/// Counts out a woken waiter that used its reservation: one registration and one
/// reservation (nothing once saturated).
fn consume(word: &AtomicU64) {
    // Relaxed: the compare-exchange below validates it.
    let mut now = word.load(Ordering::Relaxed);
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
        match word.compare_exchange_weak(now, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return,
            Err(seen) => now = seen,
        }
    }
}

/// Counts a waiter into `word`'s `waiting` field (sticking at the maximum); returns the
/// word after.
#[cfg(test)]
fn register(word: &AtomicU64) -> u64 {
    // Relaxed: the compare-exchange below validates it.
    let mut now = word.load(Ordering::Relaxed);
    loop {
        if waiting(now) == FIELD_MAX {
            return now;
        }
        // Release: publishes the listener the waiter inserted before counting itself in
        // to the notifier whose claim (Acquire) counts it. Being a read-modify-write of
        // the notifier's own word, every claim either counted this waiter or comes
        // earlier in the word's modification order, and then this waiter's re-check
        // reads that claim's ticket (coherence) and waits for its item.
        match word.compare_exchange_weak(now, now + WAITING, Ordering::Release, Ordering::Relaxed) {
            Ok(_) => return now + WAITING,
            Err(seen) => now = seen,
        }
    }
}

/// Counts a waiter out of `word`'s `waiting` field (unless saturated).
fn unregister(word: &AtomicU64) {
    // Relaxed: the compare-exchange below validates it.
    let mut now = word.load(Ordering::Relaxed);
    loop {
        let count = waiting(now);
        debug_assert!(count > 0, "a waiter counted out more often than in");
        if count == FIELD_MAX || count == 0 {
            return;
        }
        // Relaxed: a count.
        match word.compare_exchange_weak(now, now - WAITING, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return,
            Err(seen) => now = seen,
        }
    }
}

/// Counts out a notified waiter that gives up; keeps its reservation for the other
/// registered waiters if any (returns `true`), else releases it.
#[cfg(test)]
fn pass_on(word: &AtomicU64) -> bool {
    // Relaxed: the compare-exchange below validates it.
    let mut now = word.load(Ordering::Relaxed);
    loop {
        let waiting = waiting(now);
        if waiting == FIELD_MAX {
            // Saturated: nothing is reserved; the notification passes on.
            return true;
        }
        if waiting == 0 {
            debug_assert!(false, "a waiter counted out more often than in");
            return false;
        }
        let pending = pending(now);
        // Kept if another registered waiter can hold it.
        let kept = pending > 0 && waiting > pending;
        let mut next = now - WAITING;
        if pending > 0 && !kept {
            next -= PENDING;
        }
        // Relaxed: a count.
        match word.compare_exchange_weak(now, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return kept,
            Err(seen) => now = seen,
        }
    }
}

/// Withdraws one reservation (nothing once saturated: saturated notifications reserve
/// nothing).
#[cfg(test)]
fn unreserve(word: &AtomicU64) {
    debug_assert!(
        waiting(word.load(Ordering::Relaxed)) == FIELD_MAX
            || pending(word.load(Ordering::Relaxed)) != 0,
        "a reservation withdrawn twice"
    );
    withdraw(word);
}

/// Withdraws one pending notification, if any is left (nothing once saturated).
///
/// Always a read-modify-write, even when nothing is left to withdraw, and an acquiring
/// one: every claim that skipped its notification because of the pending count withdrawn
/// here comes earlier in the word's modification order, so this acquires what those
/// notifiers published before claiming, and the notification the caller sends next (or
/// the listener inserted after it, through event-listener's lock) carries it to the
/// waiter's re-check. On a ring word the claims are the puts and gets themselves, and the
/// re-check reads the word, so coherence alone would do; in a class's own word
/// ([`Counted::own`]) the published change is elsewhere.
fn withdraw(word: &AtomicU64) {
    // Relaxed: the compare-exchange below validates it.
    let mut now = word.load(Ordering::Relaxed);
    loop {
        let next = if waiting(now) == FIELD_MAX || pending(now) == 0 {
            now
        } else {
            now - PENDING
        };
        // Acquire: see above.
        match word.compare_exchange_weak(now, next, Ordering::Acquire, Ordering::Relaxed) {
            Ok(_) => return,
            Err(seen) => now = seen,
        }
    }
}

impl<T> Drop for Ring<T> {
    /// Drops every buffered item. If one item's `Drop` panics, the others are still
    /// dropped (a second panic aborts, as for a `Vec`).
    fn drop(&mut self) {
        /// Drops the items of tickets `next..end`, also while unwinding.
        struct Rest<'a, T> {
            ring: &'a Ring<T>,
            next: u64,
            end: u64,
        }
        impl<T> Rest<'_, T> {
            fn drop_items(&mut self) {
                while self.next != self.end {
                    let ticket = self.next;
                    // Advanced first: if this item's drop panics, the guard goes on from
                    // the next one.
                    self.next = (ticket + 1) & TICKET_MASK;
                    let slot = self.ring.slot(ticket);
                    // Relaxed: `&mut Ring` at the start of the drop excludes other threads.
                    let stamp = slot.stamp.load(Ordering::Relaxed);
                    if stamp & TICKET_MASK == (ticket + 1) & TICKET_MASK {
                        slot.entry.with_mut(|entry| {
                            // SAFETY: the stamp says the entry holds the item of this
                            // ticket, and no get took it (tickets from `head` on); each
                            // ticket is visited once, so it is dropped once.
                            unsafe { (*entry).assume_init_drop() };
                        });
                    }
                }
            }
        }
        impl<T> Drop for Rest<'_, T> {
            /// Runs only on unwinding out of `drop_items`: drops the items after the one
            /// that panicked.
            fn drop(&mut self) {
                self.drop_items();
            }
        }
        // Relaxed: `&mut self` excludes other threads.
        let head = ticket_of(self.consumers.head.load(Ordering::Relaxed));
        let tail = ticket_of(self.tail.0.load(Ordering::Relaxed));
        Rest {
            ring: self,
            next: head,
            end: tail,
        }
        .drop_items();
    }
}

impl<T> core::fmt::Debug for Ring<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Ring")
            .field("bound", &self.bound)
            .field("slots", &self.slots.len())
            .field("len", &self.len())
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests;

#[cfg(all(test, loom))]
mod loom_models;
