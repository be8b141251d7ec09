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
//! ended   endings            | -            | waiting joins | WATCHED
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
//!   count equals the put ticket: a plain compare of two words.
//!
//! # Ids
//!
//! Every slot has a `stamp`, the low 32 bits of a ticket (Vyukov's sequence number): `t`
//! while the slot waits for the put of ticket `t`, `t + 1` once that put has written it,
//! `t + slots` once a get took the item. A stamp read between a load of `tail` (or `head`)
//! and the compare-exchange that validates it is at most a lap (2^16 tickets) from that
//! ticket, so 32 bits tell its states apart as surely as the 39 of the words: matching is
//! modulo 2^32, and every claim is still decided by the compare-exchange of the 39-bit
//! word.
//!
//! An item's [`JobId`] is its full 64-bit ticket, so ids are contiguous from 0 and follow
//! buffer order for any number of producers, and a slot holds the stamp and the item
//! alone. (An item that comes back for another delivery travels in the engine's lane, not
//! here: see `lane.rs`.) The full value comes from `base`, a word on the ring's read-mostly
//! line: a full ticket [`BASE_LAG`] (2^37) behind one claimed recently. The put of every
//! ticket that is a multiple of 2^32 writes it, so it lags the tickets being claimed by
//! between 2^37 and 2^37 + 2^32, and a ticket `t` widens to `base + (t - base) mod 2^39`
//! ([`Ring::full`]): a load and a few instructions on the put and on the get, and one
//! store per 2^32 puts.
//!
//! Wrapping: ids stay exact across the 39-bit wrap of the words unless one thread is
//! suspended between two loads while about 2^37 (1.4 × 10^11) other puts happen, or that
//! many deliveries are alive at once.
//!
//! [`JobId`]: crate::JobId
//!
//! # Waiter counts and notifications
//!
//! Each word carries the waiter fields of the class its claims notify
//! ([`Counted`], in `wait/counted.rs`): `tail` the getters', `head` the putters' (under a
//! buffered bound) and `ended` the joiners'. A put that finds a getter without a
//! notification coming counts one pending in its own compare-exchange and tells its caller
//! to notify (`Wake::Reserved`); while every registered getter already has one
//! coming, the put tells nothing, so the hand-off costs nothing beyond the put's own
//! instruction. Gets do the same for putters, on `head`, and endings read the joiner count
//! with their `fetch_add`. [`Ring::counted`] lends each word's fields to its class.
//!
//! # Bounds
//!
//! [`Bound::Buffered`]`(n)` counts buffered items (`tail - head`); a get frees a slot.
//! Where `n` is the slot count (a power of two, 128 say), a put checks the bound by its
//! slot's stamp alone: a slot free for its ticket means the get of the item one lap back is
//! done, so fewer than `n` items are buffered; while `k` slots are owed to woken putters,
//! the stamp of the slot `k` tickets ahead tells the same for `n - k`. `head` is read only
//! when that slot is found taken (full, or a get still moving the old item out).
//!
//! [`Bound::Unfinished`]`(n)` counts buffered and delivered items (`tail - ended`); an
//! ending frees a slot. Either way the ring has `n.next_power_of_two()` slots (at least two), since
//! at most `n` items are buffered. With an unfinished bound, puts wait on a slot freed by an
//! ending: the `ended` word has no room for the putter counts, so those putters are
//! counted outside the ring (in their class's own word) and `head`'s putter fields stay
//! zero.
//!
//! # Storage
//!
//! The ring is generic over where its slots are ([`Storage`]): two boxed arrays, the
//! stamps and the items ([`Columns`], so that a `u64` costs 12 bytes, not the 16 a slot of
//! both would pad to), allocated by [`Ring::new`] for a heap queue, or an array of slots
//! inline in the ring, built by the `const fn` [`Ring::inline`] so that a queue with no
//! heap can live in a `static` (`fixed/`; a single array, so that the ring can be
//! unsized). Every operation is written once, over the slots the storage lends, and
//! `&Ring<T, [Slot<T>; N]>` coerces to `&Ring<T, [Slot<T>]>`, so code over the inline
//! ring need not be generic over `N`.
//!
//! Unbounded queues and bounds above [`MAX_SLOTS`] do not use a ring: a ring preallocates
//! its slots. Unbounded queues run on the block list of `list.rs`, whose words are laid
//! out as these; larger bounds on the growable buffer (`growable.rs`).
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

#[cfg(feature = "alloc")]
use alloc::boxed::Box;
#[cfg(feature = "alloc")]
use alloc::vec::Vec;
use core::mem::MaybeUninit;

use crate::engine::buffer::moves::{Nothing, PutRefused, Taken};
use crate::job_id::JobId;
use crate::sync::{back_off, uninterrupted, AtomicU32, AtomicU64, Cell, Ordering};
use crate::wait::counted::{anyone_in, with_notification, Counted, FIELDS_END};
use crate::wait::wake::Wake;

/// `tail`: no put succeeds once set.
const CLOSED: u64 = 1;
/// `ended`: every ending looks at settling (see [`Ring::watch_settled`]). The block list's
/// `ended` word keeps it in the same bit.
pub(in crate::engine::buffer) const WATCHED: u64 = 1;

/// Sets or clears [`WATCHED`] in an `ended` word (the ring's or the block list's) not
/// shared yet, so that every ending looks at settling, or not.
pub(in crate::engine::buffer) fn set_watched(ended: &AtomicU64, watch: bool) {
    // Relaxed: the word is not shared yet (its owner is borrowed `&mut`). A load and a
    // store, not a `fetch_or`: the word's emulation without 64-bit atomics has no
    // `fetch_and`.
    let word = ended.load(Ordering::Relaxed);
    let word = if watch {
        word | WATCHED
    } else {
        word & !WATCHED
    };
    ended.store(word, Ordering::Relaxed);
}
pub(in crate::engine::buffer) const TICKET_SHIFT: u32 = FIELDS_END;
/// One ticket.
const TICKET: u64 = 1 << TICKET_SHIFT;
/// The tickets' modulus minus one: tickets are `64 - TICKET_SHIFT` = 39 bits.
pub(in crate::engine::buffer) const TICKET_MASK: u64 = u64::MAX >> TICKET_SHIFT;
/// The most slots a ring has; larger bounds use a growable buffer.
pub(crate) const MAX_SLOTS: usize = 1 << 16;

#[inline]
pub(in crate::engine::buffer) const fn ticket_of(word: u64) -> u64 {
    word >> TICKET_SHIFT
}

/// `a - b` on tickets.
#[inline]
pub(in crate::engine::buffer) const fn distance(a: u64, b: u64) -> u64 {
    a.wrapping_sub(b) & TICKET_MASK
}

/// The stamp of a ticket: its low 32 bits (see "Ids" in the module docs).
#[inline(always)]
const fn stamp_of(ticket: u64) -> u32 {
    // Truncates on purpose: stamps match modulo 2^32.
    #[allow(clippy::cast_possible_truncation)]
    let stamp = ticket as u32;
    stamp
}

/// How far `base` stays behind the tickets claimed (see "Ids" in the module docs).
const BASE_LAG: u64 = 1 << 37;

/// Whether the put of a ticket writes `base`: once per 2^32 tickets.
#[inline(always)]
const fn moves_base(ticket: u64) -> bool {
    stamp_of(ticket) == 0
}

/// Whether a distance is really negative: `a` was read stale, behind `b`.
#[inline]
const fn behind(distance: u64) -> bool {
    distance > TICKET_MASK / 2
}

/// The full 64-bit value whose low 39 bits are `low`, nearest to the full value `near`.
#[inline]
pub(in crate::engine::buffer) const fn widen(low: u64, near: u64) -> u64 {
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

/// Who is getting.
enum Claim<O> {
    /// A get, which frees a slot for the putters under a buffered bound, and leaves the
    /// items owed to woken getters alone (see [`Ring::try_get`]).
    Get(O),
    /// The drain of an immediate shutdown, which tells no putter (puts fail once closed).
    Drain,
}

/// A slot's item: initialized exactly while the slot's stamp is one past the ticket the
/// slot was written for.
type Item<T> = Cell<MaybeUninit<T>>;

/// One slot of an inline ring: Vyukov's sequence number and the item, side by side.
pub(crate) struct Slot<T> {
    stamp: AtomicU32,
    item: Item<T>,
}

impl<T> Slot<T> {
    crate::const_fn! {
        /// A slot waiting for the put of `ticket`.
        fn waiting_for(ticket: u64) -> Self {
            Slot {
                stamp: AtomicU32::new(stamp_of(ticket)),
                item: Cell::new(MaybeUninit::uninit()),
            }
        }
    }
}

/// The slots of a heap ring: the stamps in one array and the items in another, so that a
/// slot costs 4 bytes plus the item (side by side, a `u64` would pad its slot to 16).
#[cfg(feature = "alloc")]
pub(crate) struct Columns<T> {
    stamps: Box<[AtomicU32]>,
    /// As long as `stamps`.
    items: Box<[Item<T>]>,
}

/// A slot, wherever its stamp and item are: its index, checked when it was made.
pub(crate) struct SlotRef<'a, T, S: ?Sized + Storage<T>> {
    slots: &'a S,
    /// Below `slots.len()`.
    index: usize,
    _items: core::marker::PhantomData<T>,
}

impl<'a, T, S: ?Sized + Storage<T>> SlotRef<'a, T, S> {
    /// The stamp, looked up where it is used (like the item): a reference kept across the
    /// claim costs a register there.
    #[inline(always)]
    fn stamp(&self) -> &'a AtomicU32 {
        // SAFETY: `index` is below `slots.len()` (see the field).
        unsafe { self.slots.stamp(self.index) }
    }

    /// The item, looked up only where it is used: after the claim, so that the heap
    /// ring's second array is not reached for on the way.
    #[inline(always)]
    fn item(&self) -> &'a Item<T> {
        // SAFETY: `index` is below `slots.len()` (see the field).
        unsafe { self.slots.item(self.index) }
    }
}

/// Where a ring's slots are (see "Storage" in the module docs): a power-of-two number of
/// them, at least two. Slots are found by an index the caller keeps below
/// [`len`](Storage::len): the check is the caller's, since the ring masks every index
/// (this skips a bounds check on every put and get).
pub(crate) trait Storage<T> {
    /// The number of slots.
    fn len(&self) -> usize;

    /// The stamp of slot `index`.
    ///
    /// # Safety
    ///
    /// `index < self.len()`.
    unsafe fn stamp(&self, index: usize) -> &AtomicU32;

    /// The item of slot `index`.
    ///
    /// # Safety
    ///
    /// `index < self.len()`.
    unsafe fn item(&self, index: usize) -> &Item<T>;
}

#[cfg(feature = "alloc")]
impl<T> Storage<T> for Columns<T> {
    #[inline(always)]
    fn len(&self) -> usize {
        self.stamps.len()
    }

    #[inline(always)]
    unsafe fn stamp(&self, index: usize) -> &AtomicU32 {
        // SAFETY: the caller keeps `index` below `len()`, the length of `stamps`.
        unsafe { self.stamps.get_unchecked(index) }
    }

    #[inline(always)]
    unsafe fn item(&self, index: usize) -> &Item<T> {
        // SAFETY: the caller keeps `index` below `len()`, which `items` shares.
        unsafe { self.items.get_unchecked(index) }
    }
}

impl<T, const N: usize> Storage<T> for [Slot<T>; N] {
    #[inline(always)]
    fn len(&self) -> usize {
        N
    }

    #[inline(always)]
    unsafe fn stamp(&self, index: usize) -> &AtomicU32 {
        // SAFETY: the caller keeps `index` below `len()`.
        unsafe { self.as_slice().stamp(index) }
    }

    #[inline(always)]
    unsafe fn item(&self, index: usize) -> &Item<T> {
        // SAFETY: the caller keeps `index` below `len()`.
        unsafe { self.as_slice().item(index) }
    }
}

impl<T> Storage<T> for [Slot<T>] {
    #[inline(always)]
    fn len(&self) -> usize {
        <[Slot<T>]>::len(self)
    }

    #[inline(always)]
    unsafe fn stamp(&self, index: usize) -> &AtomicU32 {
        // SAFETY: the caller keeps `index` below `len()`.
        unsafe { &self.get_unchecked(index).stamp }
    }

    #[inline(always)]
    unsafe fn item(&self, index: usize) -> &Item<T> {
        // SAFETY: the caller keeps `index` below `len()`.
        unsafe { &self.get_unchecked(index).item }
    }
}

/// Aligns a type to a cache line: the line's size where the target has data caches worth
/// it (128 bytes on x86-64, whose adjacent-line prefetch pairs lines, and on aarch64 and
/// powerpc64); on 32-bit ARM (Cortex-M has no data cache, Cortex-A lines are 32 or 64
/// bytes) a smaller one, so that a ring in a microcontroller's `static` does not spend RAM
/// on padding.
macro_rules! line_aligned {
    ($(#[$meta:meta])* struct $name:ident $($body:tt)*) => {
        $(#[$meta])*
        #[cfg_attr(
            any(
                target_arch = "x86_64",
                target_arch = "aarch64",
                target_arch = "powerpc64"
            ),
            repr(align(128))
        )]
        #[cfg_attr(target_arch = "arm", repr(align(32)))]
        #[cfg_attr(
            not(any(
                target_arch = "x86_64",
                target_arch = "aarch64",
                target_arch = "powerpc64",
                target_arch = "arm"
            )),
            repr(align(64))
        )]
        struct $name $($body)*
    };
}

// The unbounded list (`list.rs`) lays out its words the same way.
#[cfg_attr(not(feature = "alloc"), allow(unused_imports))]
pub(crate) use line_aligned;

line_aligned! {
    /// A word alone on its cache line, so that producers and consumers do not take each
    /// other's line.
    struct Line(AtomicU64);
}

line_aligned! {
    /// The consumers' two words on one line of their own: a get's claim of `head` is
    /// followed, on the same thread, by the ending of what it took, so the ending finds
    /// the line already held (on separate lines, an ending on a thread other than the last
    /// one's would fetch a second line).
    struct Consumers {
        head: AtomicU64,
        ended: AtomicU64,
    }
}

/// The ring; see the module docs. `S` holds the slots ([`Storage`]); it comes last so that
/// an inline array can be unsized to a slice.
pub(crate) struct Ring<T, S: ?Sized + Storage<T>> {
    tail: Line,
    consumers: Consumers,
    /// `slots.len() - 1`.
    mask: u64,
    /// A full ticket [`BASE_LAG`] behind a recent one, for [`Ring::full`]; on the line of
    /// the fields that are only read, written once per 2^32 puts.
    base: AtomicU64,
    bound: Bound,
    /// The bound is `Buffered(slots.len())`: a slot free for a put's ticket is room for it.
    stamp_bound: bool,
    _items: core::marker::PhantomData<T>,
    slots: S,
}

/// The ring of a heap queue: its slots in a boxed slice.
#[cfg(feature = "alloc")]
pub(crate) type BoxedRing<T> = Ring<T, Columns<T>>;

// SAFETY: the ring moves `T`s between threads (so `T: Send`) and never hands out shared
// references to them; each item is accessed only by the one thread whose compare-exchange
// claimed its slot, and the stamps order those accesses (see `put` and `take`). The
// storage only holds the slots (`Columns` is `Sync` only through the ring).
unsafe impl<T: Send, S: ?Sized + Storage<T>> Send for Ring<T, S> {}
// SAFETY: as above; `&Ring<T, S>` only lets a thread move items in and out.
unsafe impl<T: Send, S: ?Sized + Storage<T>> Sync for Ring<T, S> {}

/// The words of a ring whose first ticket is `start`.
pub(in crate::engine::buffer) const fn word_at(start: u64) -> u64 {
    (start & TICKET_MASK) << TICKET_SHIFT
}

#[cfg(feature = "alloc")]
impl<T> Ring<T, Columns<T>> {
    /// A ring for `bound`, its slots allocated here.
    ///
    /// # Panics
    ///
    /// If the bound is 0 or above [`MAX_SLOTS`].
    pub(crate) fn new(bound: Bound) -> Self {
        Self::starting_at(bound, 0)
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
        let stamps: Vec<AtomicU32> = (0..len)
            // The first ticket at or after `start` that lives in this slot.
            .map(|index| AtomicU32::new(stamp_of(start + (index.wrapping_sub(start) & (len - 1)))))
            .collect();
        let items: Vec<Item<T>> = (0..len).map(|_| Cell::new(MaybeUninit::uninit())).collect();
        let word = word_at(start);
        Ring {
            tail: Line(AtomicU64::new(word)),
            consumers: Consumers {
                head: AtomicU64::new(word),
                ended: AtomicU64::new(word),
            },
            mask: len - 1,
            base: AtomicU64::new(start.wrapping_sub(BASE_LAG)),
            bound,
            stamp_bound: bound == Bound::Buffered(len),
            _items: core::marker::PhantomData,
            slots: Columns {
                stamps: stamps.into_boxed_slice(),
                items: items.into_boxed_slice(),
            },
        }
    }
}

impl<T, const N: usize> Ring<T, [Slot<T>; N]> {
    crate::const_fn! {
        /// A ring bounded at `N` buffered items, its slots inline.
        ///
        /// # Panics
        ///
        /// Unless `N` is a power of two, at least 2 and at most [`MAX_SLOTS`] (at compile
        /// time, in a `static`).
        pub(crate) fn inline() -> Self {
            assert!(
                N.is_power_of_two() && N >= 2 && N <= MAX_SLOTS,
                "an inline ring has a power of two of slots, from 2 to MAX_SLOTS"
            );
            let word = word_at(0);
            Ring {
                tail: Line(AtomicU64::new(word)),
                consumers: Consumers {
                    head: AtomicU64::new(word),
                    ended: AtomicU64::new(word),
                },
                mask: N as u64 - 1,
                base: AtomicU64::new(0u64.wrapping_sub(BASE_LAG)),
                bound: Bound::Buffered(N as u64),
                stamp_bound: true,
                _items: core::marker::PhantomData,
                slots: inline_slots(),
            }
        }
    }
}

/// `N` slots, slot `i` waiting for the put of ticket `i`.
#[cfg(not(loom))]
const fn inline_slots<T, const N: usize>() -> [Slot<T>; N] {
    let mut slots = [const { Slot::waiting_for(0) }; N];
    let mut index = 0;
    while index < N {
        slots[index].stamp = AtomicU32::new(stamp_of(index as u64));
        index += 1;
    }
    slots
}

/// `N` slots, slot `i` waiting for the put of ticket `i` (loom's atomics are not `const`).
#[cfg(loom)]
fn inline_slots<T, const N: usize>() -> [Slot<T>; N] {
    core::array::from_fn(|index| Slot::waiting_for(index as u64))
}

impl<T, S: ?Sized + Storage<T>> Ring<T, S> {
    #[inline]
    fn slot(&self, ticket: u64) -> SlotRef<'_, T, S> {
        let index = (ticket & self.mask) as usize;
        // `mask` is `slots.len() - 1` and `slots.len()` a power of two, so the masked index
        // is in bounds.
        debug_assert!(index < self.slots.len());
        SlotRef {
            slots: &self.slots,
            index,
            _items: core::marker::PhantomData,
        }
    }

    /// The full 64-bit value of `ticket`, a ticket claimed recently (see "Ids" in the
    /// module docs).
    #[inline(always)]
    fn full(&self, ticket: u64) -> u64 {
        // Relaxed: only the value is used, and any value written by a put in the last 2^37
        // widens right (see "Ids" in the module docs).
        let base = self.base.load(Ordering::Relaxed);
        base.wrapping_add(distance(ticket, base))
    }

    /// Moves `base` up to `full`, a ticket just claimed.
    #[cold]
    fn move_base(&self, full: u64) {
        // Relaxed: only the value is used (see `full`); a slower put of an older ticket
        // may store after this one, which only leaves `base` further behind.
        self.base
            .store(full.wrapping_sub(BASE_LAG), Ordering::Relaxed);
    }

    // ------------------------------------------------------------------------ puts

    /// Buffers `item` under a fresh id (its full ticket), leaving `owed` free slots alone:
    /// the slots the putter turns (`turns.rs`) keep for woken putters (zero or less:
    /// none; see `Turns::owed_signed`).
    ///
    /// Runs from its claim to its publication as one step that no interrupt handler can
    /// enter midway (see [`uninterrupted`]).
    #[inline]
    pub(crate) fn try_put(&self, item: T, owed: i64) -> Result<(JobId, Wake), PutRefused<T>> {
        // A slot free for a ticket means the get of the item one lap back is done, so fewer
        // items than slots are buffered: where the bound is the slot count and no slot is
        // owed, the stamp is the bound check, and the bound (on the consumers' line) is
        // read only once the slot is found taken.
        let by_stamp = owed <= 0 && self.stamp_bound;
        uninterrupted(|| self.put_unguarded(item, owed, by_stamp))
    }

    /// As [`try_put`](Ring::try_put) with no slot owed, on a ring whose bound is checked by
    /// the slot's stamp alone ([`puts_by_stamp`](Ring::puts_by_stamp)): the caller knows
    /// both, so the put does not look.
    #[inline]
    pub(crate) fn try_put_by_stamp(&self, item: T) -> Result<(JobId, Wake), PutRefused<T>> {
        debug_assert!(self.stamp_bound, "only where the stamp is the bound check");
        uninterrupted(|| self.put_unguarded(item, 0, true))
    }

    /// Whether the bound is the slot count, so that a put with no slot owed checks it by
    /// the slot's stamp alone.
    pub(crate) fn puts_by_stamp(&self) -> bool {
        self.stamp_bound
    }

    /// A put leaving `owed` slots alone; `by_stamp`: the slot's stamp is the bound check
    /// (see `try_put`).
    #[inline(always)]
    fn put_unguarded(
        &self,
        item: T,
        owed: i64,
        by_stamp: bool,
    ) -> Result<(JobId, Wake), PutRefused<T>> {
        let mut waited = 0;
        // Relaxed: the compare-exchange below validates it.
        let mut tail = self.tail.0.load(Ordering::Relaxed);
        loop {
            if tail & CLOSED != 0 {
                return Err(PutRefused::Closed(item));
            }
            let ticket = ticket_of(tail);
            if !by_stamp && !self.room_past_owed(ticket, owed) {
                match self.room(ticket, owed) {
                    Room::Free => {}
                    Room::Full => return Err(PutRefused::Full(item)),
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
            let stamp = slot.stamp().load(Ordering::Acquire);
            if stamp == stamp_of(ticket) {
                let (next, notify_getter) = with_notification(tail.wrapping_add(TICKET));
                // Acquire: a getter counted here counted itself in with an AcqRel
                // read-modify-write of this word before inserting its listener (a notify
                // that misses the listener is withdrawn and sent again uncounted, see
                // `waiters.rs`). The claim publishes nothing itself: the stamp's Release
                // store below publishes the item, and a getter that counts itself in after
                // this claim sees the new ticket through its own read-modify-write of this
                // word and waits for that stamp.
                match self.tail.0.compare_exchange_weak(
                    tail,
                    next,
                    Ordering::Acquire,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        slot.item().with_mut(|cell| {
                            // SAFETY: the compare-exchange gave this thread the ticket,
                            // and the stamp says the slot is empty for it: no other
                            // thread touches the item until the store below.
                            unsafe { cell.write(MaybeUninit::new(item)) };
                        });
                        // Release: publishes the item to the get that acquires this stamp.
                        slot.stamp().store(stamp.wrapping_add(1), Ordering::Release);
                        let id = self.full(ticket);
                        if moves_base(ticket) {
                            self.move_base(id);
                        }
                        return Ok((JobId::new(id), Wake::reserved_if(notify_getter)));
                    }
                    Err(now) => tail = now,
                }
            } else {
                if by_stamp && self.room(ticket, owed) == Room::Full {
                    return Err(PutRefused::Full(item));
                }
                // Either another put took this ticket (`tail` is stale), or the get of
                // the item one lap back claimed it and is still moving it out.
                waited = back_off(waited);
                // Relaxed: re-read for the loop, which validates it.
                tail = self.tail.0.load(Ordering::Relaxed);
            }
        }
    }

    /// The bound check of a put of `ticket`, leaving `owed` slots alone (zero or less:
    /// none).
    /// What the bound counts as used at `ticket`: the tickets from the last get (a
    /// buffered bound) or the last ending (an unfinished bound) up to it; a value that is
    /// [`behind`] means `ticket` was read stale.
    #[inline(always)]
    pub(super) fn used(&self, ticket: u64) -> u64 {
        match self.bound {
            // Relaxed (both): a bound check; the slot's stamp orders the write after the
            // read of the get (or the ending) that freed the slot.
            Bound::Buffered(_) => distance(
                ticket,
                ticket_of(self.consumers.head.load(Ordering::Relaxed)),
            ),
            Bound::Unfinished(_) => distance(
                ticket,
                ticket_of(self.consumers.ended.load(Ordering::Relaxed)),
            ),
        }
    }

    /// Whether a put of `ticket` has room past the `owed` slots it leaves alone, told by a
    /// stamp where the bound is the slot count: the slot of ticket `ticket + owed` free for
    /// that ticket means the get one lap before it is done, so fewer than `slots - owed`
    /// items are buffered at `ticket`. `false` means "look at the bound" ([`room`]): full,
    /// a get still moving that item out, or `ticket` read stale. Read off a stamp only for
    /// `owed` from one to one less than the slot count.
    ///
    /// [`room`]: Ring::room
    #[inline(always)]
    fn room_past_owed(&self, ticket: u64, owed: i64) -> bool {
        if !(self.stamp_bound && owed > 0 && (owed as u64) <= self.mask) {
            return false;
        }
        // Tickets wrap at a multiple of the slot count and of 2^32, so the slot and the
        // stamp of the wrapped sum are those of the ticket `owed` after `ticket`.
        let ahead = ticket.wrapping_add(owed as u64);
        // Relaxed: a bound check, as `used`'s loads; this put writes its own slot only
        // after the Acquire load of that slot's stamp.
        self.slot(ahead).stamp().load(Ordering::Relaxed) == stamp_of(ahead)
    }

    #[inline]
    fn room(&self, ticket: u64, owed: i64) -> Room {
        let used = self.used(ticket);
        let free = if owed > 0 {
            self.bound.get().saturating_sub(owed as u64)
        } else {
            self.bound.get()
        };
        if used >= free {
            if behind(used) {
                return Room::Stale;
            }
            return Room::Full;
        }
        Room::Free
    }

    // ------------------------------------------------------------------------ gets

    /// Takes the oldest item, leaving `owed()` items alone: the items the getter turns
    /// (`turns.rs`) keep for woken getters. `owed` is read after the item is seen written
    /// and before it is claimed, so it sees every turn granted before its put published
    /// it: a barging get cannot take an item put after a woken getter's turn was granted.
    ///
    /// A ticket claimed by a put that has not written its slot yet is waited for (see
    /// "Progress" in the module docs), not reported empty: a getter that registered after
    /// that put's claim was not counted by it and will not be notified, so its re-check
    /// must see the item.
    #[inline]
    pub(crate) fn try_get(&self, owed: impl Fn() -> i64) -> Result<Taken<T>, Nothing> {
        uninterrupted(|| self.take_unguarded(Claim::Get(owed)))
    }

    /// Closes the ring and takes every buffered item in ticket order. Returns the items
    /// with their ids.
    #[cfg(feature = "alloc")]
    pub(crate) fn drain(&self) -> Vec<(u64, T)> {
        self.close();
        let mut drained = Vec::new();
        while let Ok(taken) = self.take_drained() {
            drained.push((taken.id.get(), taken.item));
        }
        drained
    }

    /// One step of a drain: takes the oldest item as a get would, but leaves no item to
    /// woken getters and frees no slot for putters (puts fail once the ring is closed).
    pub(crate) fn take_drained(&self) -> Result<Taken<T>, Nothing> {
        uninterrupted(|| self.take_unguarded(Claim::<fn() -> i64>::Drain))
    }

    /// A get, from its claim to its publication, as one step that no interrupt handler
    /// can enter midway (the callers run it under [`uninterrupted`]).
    #[inline(always)]
    fn take_unguarded(&self, claim: Claim<impl Fn() -> i64>) -> Result<Taken<T>, Nothing> {
        let mut waited = 0;
        // Relaxed: the compare-exchange below validates it.
        let mut head = self.consumers.head.load(Ordering::Relaxed);
        loop {
            let ticket = ticket_of(head);
            let slot = self.slot(ticket);
            // Acquire: pairs with the put's Release store, so the item is written.
            let stamp = slot.stamp().load(Ordering::Acquire);
            if stamp == stamp_of(ticket).wrapping_add(1) {
                if let Claim::Get(owed) = &claim {
                    let owed = owed();
                    // Relaxed: the put of this item claimed its ticket before the stamp we
                    // acquired, so this read sees at least that ticket.
                    if owed > 0
                        && distance(ticket_of(self.tail.0.load(Ordering::Relaxed)), ticket)
                            <= owed as u64
                    {
                        return Err(Nothing::Empty);
                    }
                }
                // Putters wait here only for a slot a get frees.
                let (next, notify_putter) = match (self.bound, &claim) {
                    (Bound::Buffered(_), Claim::Get(_)) => {
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
                        let item = slot.item().with(|cell| {
                            // SAFETY: the compare-exchange gave this thread ticket
                            // `ticket`, whose put wrote the item before the Release store
                            // of the stamp we acquired; no other thread touches it until
                            // the store below, and the store makes the slot empty again,
                            // so the value is read out exactly once.
                            unsafe { (*cell).assume_init_read() }
                        });
                        // Release: the next put into this slot writes after this read.
                        slot.stamp()
                            .store(stamp.wrapping_add(stamp_of(self.mask)), Ordering::Release);
                        return Ok(Taken {
                            id: JobId::new(self.full(ticket)),
                            item,
                            putters: Wake::reserved_if(notify_putter),
                            last: false,
                        });
                    }
                    Err(now) => head = now,
                }
            } else if stamp == stamp_of(ticket) {
                // The slot waits for the put of this ticket: empty, or that put is
                // between its claim and its stamp.
                if let Some(nothing) = self.nothing_at(ticket) {
                    return Err(nothing);
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

    /// Records `n` endings (resolutions, abandonments or discards). Returns whether they
    /// settled the ring and whether joiners were registered. Settling is looked at only
    /// when joiners are registered or settling is watched (`watch_settled`, or the flag
    /// of [`watch_settled`]), and reads `false` otherwise: the look reads `tail`, the
    /// producers' cache line.
    ///
    /// [`watch_settled`]: Self::watch_settled
    #[inline]
    pub(crate) fn end(&self, n: u64, watch_settled: bool) -> (bool, bool) {
        self.end_looking(n, watch_settled).unwrap_or((false, false))
    }

    /// As [`end`](Self::end), settling looked at as the flag of
    /// [`watch_settled`](Self::watch_settled) says; `None`: the endings concern nobody (no
    /// joiner registered, settling not watched).
    #[inline(always)]
    pub(crate) fn end_watched(&self, n: u64) -> Option<(bool, bool)> {
        self.end_looking(n, false)
    }

    /// Whether every ending looks at settling ([`end_watched`](Self::end_watched)). Only
    /// for a ring not shared yet.
    pub(crate) fn watch_settled(&mut self, watch: bool) {
        set_watched(&self.consumers.ended, watch);
    }

    #[inline(always)]
    fn end_looking(&self, n: u64, watch_settled: bool) -> Option<(bool, bool)> {
        // AcqRel: releases this ending (and the work before it) to joiners that acquire
        // `ended`; acquires the earlier endings, so the `tail` read below sees the claim
        // of every item they ended.
        let before = self
            .consumers
            .ended
            .fetch_add(n << TICKET_SHIFT, Ordering::AcqRel);
        let joiners = anyone_in(before);
        // The flag rides in the word the `fetch_add` read: one test with the joiners'.
        if !(joiners || watch_settled || before & WATCHED != 0) {
            return None;
        }
        // Relaxed: ordered by the acquire above (every ended item's claim happens before).
        let tail = self.tail.0.load(Ordering::Relaxed);
        let settled = distance(ticket_of(tail), ticket_of(before) + n) == 0;
        Some((settled, joiners))
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

    /// Endings so far, as a full 64-bit count; the first read of the ledger's snapshot
    /// (see `tally.rs`).
    pub(crate) fn ended(&self) -> u64 {
        // Acquire: pairs with the endings' AcqRel, so the reads that follow see the take
        // of every item ended.
        let ended = ticket_of(self.consumers.ended.load(Ordering::Acquire));
        // Endings never pass takes: widened below the takes read now.
        widen(ended, self.taken()).min(self.taken())
    }

    /// Items taken out (gets and the drain) and tickets claimed (items accepted), as full
    /// 64-bit counts, read in that order. `tail` can lag behind `head` (a get's claim is
    /// no release): `accepted` is then read as `taken`, the most it can lag to.
    pub(crate) fn progress(&self) -> (u64, u64) {
        let taken = self.taken();
        // Relaxed: a snapshot, clamped below.
        let tail = ticket_of(self.tail.0.load(Ordering::Relaxed));
        (taken, widen(tail, taken).max(taken))
    }

    /// Items taken out so far, as a full 64-bit count.
    fn taken(&self) -> u64 {
        // Relaxed: the caller's earlier acquire orders it.
        let head = ticket_of(self.consumers.head.load(Ordering::Relaxed));
        self.full(head)
    }

    /// Closes the ring: no put succeeds from now on. Returns whether this call closed it.
    pub(crate) fn close(&self) -> bool {
        // AcqRel: releases the close to the gets that acquire `tail` and find it empty;
        // acquires the puts claimed before it (a drain that follows takes them).
        self.tail.0.fetch_or(CLOSED, Ordering::AcqRel) & CLOSED == 0
    }

    /// What a get finds at `ticket`, whose slot waits for the put of that ticket: nothing
    /// to take if no put claimed it yet (empty, or closed for good), `None` if a put has
    /// claimed it and is about to stamp it.
    #[inline(always)]
    fn nothing_at(&self, ticket: u64) -> Option<Nothing> {
        // Acquire: pairs with the close, so a closed, empty ring is final here.
        let tail = self.tail.0.load(Ordering::Acquire);
        (ticket_of(tail) == ticket).then_some(if tail & CLOSED != 0 {
            Nothing::Closed
        } else {
            Nothing::Empty
        })
    }

    /// The number of slots.
    pub(crate) fn slot_count(&self) -> usize {
        self.slots.len()
    }

    /// Whether the ring is closed.
    pub(crate) fn is_closed(&self) -> bool {
        // Acquire: an observer.
        self.tail.0.load(Ordering::Acquire) & CLOSED != 0
    }

    // --------------------------------------------------------------------- waiters

    /// Where the waiters of `kind` are counted (a putter class only under a buffered
    /// bound).
    pub(crate) fn counted(&self, kind: Kind) -> Counted<'_> {
        match kind {
            Kind::Getters => Counted::own(&self.tail.0),
            Kind::Putters => {
                debug_assert!(matches!(self.bound, Bound::Buffered(_)));
                Counted::own(&self.consumers.head)
            }
            Kind::Joiners => Counted::in_word(&self.consumers.ended, false),
        }
    }
}

/// A class of waiters whose registrations the ring keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Counted in `tail`, read by every put's claim.
    Getters,
    /// Counted in `head`, read by every get's claim.
    Putters,
    /// Counted in `ended`, read by every ending.
    Joiners,
}

impl<T, S: ?Sized + Storage<T>> Drop for Ring<T, S> {
    /// Drops every buffered item. If one item's `Drop` panics, the others are still
    /// dropped (a second panic aborts, as for a `Vec`).
    fn drop(&mut self) {
        /// Drops the items of tickets `next..end`, also while unwinding.
        struct Rest<'a, T, S: ?Sized + Storage<T>> {
            ring: &'a Ring<T, S>,
            next: u64,
            end: u64,
        }
        impl<T, S: ?Sized + Storage<T>> Rest<'_, T, S> {
            fn drop_items(&mut self) {
                while self.next != self.end {
                    let ticket = self.next;
                    // Advanced first: if this item's drop panics, the guard goes on from
                    // the next one.
                    self.next = (ticket + 1) & TICKET_MASK;
                    let slot = self.ring.slot(ticket);
                    // Relaxed: `&mut Ring` at the start of the drop excludes other threads.
                    let stamp = slot.stamp().load(Ordering::Relaxed);
                    if stamp == stamp_of(ticket + 1) {
                        slot.item().with_mut(|cell| {
                            // SAFETY: the stamp says the slot holds the item of this
                            // ticket, and no get took it (tickets from `head` on); each
                            // ticket is visited once, so it is dropped once.
                            unsafe { (*cell).assume_init_drop() };
                        });
                    }
                }
            }
        }
        impl<T, S: ?Sized + Storage<T>> Drop for Rest<'_, T, S> {
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

impl<T, S: ?Sized + Storage<T>> core::fmt::Debug for Ring<T, S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Ring")
            .field("bound", &self.bound)
            .field("slots", &self.slots.len())
            .field("len", &self.len())
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

pub(crate) mod batch;

#[cfg(all(test, feature = "alloc", not(loom)))]
mod tests;

#[cfg(all(test, feature = "alloc", loom))]
mod loom_models;
