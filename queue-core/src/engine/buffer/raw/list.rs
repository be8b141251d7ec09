//! The buffer engine of an unbounded queue: a linked list of blocks of slots, whose three
//! words carry what the ring's carry (the id sequence, the closed flag, the ending count
//! and the waiter counts), so that a put, a get and an ending each cost one locked
//! instruction when nobody waits, as on the ring.
//!
//! Hand-rolled rather than concurrent-queue's unbounded queue (which the growable buffer
//! runs on): that queue publishes and retires a slot with a read-modify-write each (two
//! more locked instructions per message), its `len` and its pops read with sequentially
//! consistent fences, and its indices have no room for the closed flag, the ids or the
//! waiter fields, so the buffer around it needs an id counter and a check of the getters'
//! word of its own (three more). Here a slot is published and retired by plain stores,
//! and a block is freed by the get of its last slot once every other get of the block is
//! done (see "Blocks").
//!
//! This module and the ring's are the only ones of the crate with `unsafe` code (`lib.rs`
//! denies it elsewhere): a slot's value is a `MaybeUninit` that only the thread that
//! claimed the slot touches, and a block is a raw pointer freed by exactly one get.
//!
//! # The words
//!
//! ```text
//! bit     63 ............ 26 | 25     | 24 ...... 13 | 12 ........ 1 | 0
//! tail    put ticket         | MOVING | pending gets | waiting gets  | CLOSED
//! head    get ticket         | MOVING | -            | -             | -
//! ended   endings            | -      | -            | waiting joins | WATCHED
//! ```
//!
//! A **ticket** is a 38-bit wrapping count of items, so a ticket is also the low bits of
//! the item's id; ticket `t` lives in slot `t % CAP` of its block. `tail` and the tail
//! block are the producers' (a cache line of their own); `head`, the head block and
//! `ended` the consumers', as on the ring.
//!
//! - A **put** is one compare-exchange on `tail`: it claims the next ticket, fails once
//!   `CLOSED` is set, and reads the getter counts in the same instruction (see the ring's
//!   module docs: a getter registers with a read-modify-write of the same word). It then
//!   writes the slot and publishes it with a Release store of the slot's state.
//! - A **get** is one compare-exchange on `head`, after reading `tail` to see that a put
//!   claimed the ticket; a ticket claimed but not yet written is waited for (see
//!   "Progress"), so a getter that registered after a put's claim, and was not counted by
//!   it, finds the item on its re-check.
//! - An **ending** is one `fetch_add` on `ended`, which reads the joiner count; the queue
//!   is settled when the ending count equals the put ticket.
//!
//! # Blocks
//!
//! A block holds [`CAP`] slots, the full id of its first slot, and the link to the next
//! block. The put that claims a block's last slot links a new block (allocated before its
//! claim) and moves the tail block onto it; the get that claims that slot moves the head
//! block onto it. Each sets `MOVING` in its claim and clears it once the block pointer
//! is stored, and nobody claims in that word while it is set: so a thread that read the
//! word without `MOVING` and then the block pointer holds the block of its ticket whenever
//! its compare-exchange succeeds (the pointer changes only after the ticket has moved on,
//! which fails the compare-exchange). The block is dereferenced only after the claim:
//! the claimed slot is not retired yet, so the block is alive.
//!
//! A get retires its slot with a Release store of the slot's state, and the get of a
//! block's last slot waits until every other slot of the block is retired, then frees
//! the block: no other thread touches a block after retiring its slot (a put reads the
//! block's first id before publishing, and the linking put links before it writes).
//!
//! # Progress
//!
//! As on the ring (see its module docs), a get waits for a put between its claim and its
//! publication, the get of a block's last slot for the gets of the block's other slots,
//! and a claim for a block move; each window holds no lock, runs no user code and is a
//! few instructions long (the linking put allocates its block before it claims), and the
//! wait spins briefly and then yields ([`back_off`]). With the `critical-section`
//! feature each put and get is one critical section ([`uninterrupted`]).

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::mem::MaybeUninit;
use core::ptr;

use super::ring::{line_aligned, set_watched, Kind, WATCHED};
use crate::engine::buffer::moves::{Nothing, PutRefused, Taken};
use crate::job_id::JobId;
use crate::sync::{back_off, uninterrupted, AtomicPtr, AtomicU64, AtomicU8, Cell, Ordering};
use crate::unwind::each_despite_panics;
use crate::wait::counted::{anyone_in, with_notification, Counted, FIELDS_END};
use crate::wait::wake::Wake;

/// `tail`: no put succeeds once set.
const CLOSED: u64 = 1;
/// `tail` and `head`: a block move is under way; nobody claims until it is cleared.
const MOVING: u64 = 1 << FIELDS_END;
const TICKET_SHIFT: u32 = FIELDS_END + 1;
/// One ticket.
const TICKET: u64 = 1 << TICKET_SHIFT;
/// The tickets' modulus minus one: tickets are 38 bits.
const TICKET_MASK: u64 = u64::MAX >> TICKET_SHIFT;

/// Slots per block: a power of two, so that a slot's index survives the tickets' wrap.
/// Two under loom, so that models cross block boundaries in a few puts.
#[cfg(not(loom))]
pub(crate) const CAP: usize = 32;
#[cfg(loom)]
pub(crate) const CAP: usize = 2;

/// A slot's states.
const EMPTY: u8 = 0;
const WRITTEN: u8 = 1;
const RETIRED: u8 = 2;

#[inline(always)]
const fn ticket_of(word: u64) -> u64 {
    word >> TICKET_SHIFT
}

/// `a - b` on tickets.
#[inline(always)]
const fn distance(a: u64, b: u64) -> u64 {
    a.wrapping_sub(b) & TICKET_MASK
}

/// Whether a distance is really negative: `a` was read stale, behind `b`.
#[inline(always)]
const fn behind(distance: u64) -> bool {
    distance > TICKET_MASK / 2
}

/// The full 64-bit value whose low 38 bits are `low`, nearest to the full value `near`.
#[inline]
const fn widen(low: u64, near: u64) -> u64 {
    let up = distance(low, near);
    if behind(up) {
        near.wrapping_sub(TICKET_MASK + 1 - up)
    } else {
        near.wrapping_add(up)
    }
}

/// The slot of `ticket` in its block.
#[inline(always)]
const fn index_of(ticket: u64) -> usize {
    (ticket % CAP as u64) as usize
}

/// A block of slots; see "Blocks" in the module docs. The states are apart from the items,
/// so that a slot of a `u64` costs 9 bytes, not 16.
struct Block<T> {
    /// The next block, linked by the put of this block's last slot.
    next: AtomicPtr<Block<T>>,
    /// The full id of the first slot.
    start: u64,
    states: [AtomicU8; CAP],
    /// Initialized exactly while the slot's state is `WRITTEN`.
    items: [Cell<MaybeUninit<T>>; CAP],
}

impl<T> Block<T> {
    fn boxed(start: u64) -> Box<Self> {
        Box::new(Block {
            next: AtomicPtr::new(ptr::null_mut()),
            start,
            states: core::array::from_fn(|_| AtomicU8::new(EMPTY)),
            items: core::array::from_fn(|_| Cell::new(MaybeUninit::uninit())),
        })
    }
}

line_aligned! {
    /// The producers' word and block, on a cache line of their own.
    struct Producers<T> {
        tail: AtomicU64,
        block: AtomicPtr<Block<T>>,
    }
}

line_aligned! {
    /// The consumers' words and block, on a line of their own (see the ring's `Consumers`).
    struct Consumers<T> {
        head: AtomicU64,
        block: AtomicPtr<Block<T>>,
        /// The full id of the head block's first slot, for observers to widen `head`.
        base: AtomicU64,
        ended: AtomicU64,
    }
}

/// Who is getting.
enum Claim<O> {
    /// A get, which leaves the items owed to woken getters alone.
    Get(O),
    /// The drain of an immediate shutdown (and the list's own `Drop`).
    Drain,
}

/// The block list; see the module docs.
pub(crate) struct List<T> {
    producers: Producers<T>,
    consumers: Consumers<T>,
}

// SAFETY: the list moves `T`s between threads (so `T: Send`) and never hands out shared
// references to them; each item is accessed only by the thread whose compare-exchange
// claimed its slot, and the slot states order those accesses (see `put_unguarded` and
// `take_unguarded`). Blocks are reached only through the list.
unsafe impl<T: Send> Send for List<T> {}
// SAFETY: as above; `&List<T>` only lets a thread move items in and out.
unsafe impl<T: Send> Sync for List<T> {}

impl<T> List<T> {
    pub(crate) fn new() -> Self {
        Self::starting_at(0)
    }

    /// A list whose first id is `start` (tests start near the wrap).
    fn starting_at(start: u64) -> Self {
        let index = index_of(start);
        let first = Block::boxed(start - index as u64);
        // The slots before the first id count as retired, so the get of the block's last
        // slot does not wait for them.
        for state in &first.states[..index] {
            // Relaxed: not shared yet.
            state.store(RETIRED, Ordering::Relaxed);
        }
        let base = first.start;
        let block = Box::into_raw(first);
        let word = (start & TICKET_MASK) << TICKET_SHIFT;
        List {
            producers: Producers {
                tail: AtomicU64::new(word),
                block: AtomicPtr::new(block),
            },
            consumers: Consumers {
                head: AtomicU64::new(word),
                block: AtomicPtr::new(block),
                base: AtomicU64::new(base),
                ended: AtomicU64::new(word),
            },
        }
    }

    // ------------------------------------------------------------------------ puts

    /// Buffers `item` under a fresh id. Returns the id and whether to wake a getter.
    #[inline]
    pub(crate) fn try_put(&self, item: T) -> Result<(JobId, Wake), PutRefused<T>> {
        uninterrupted(|| self.put_unguarded(item))
    }

    #[inline(always)]
    fn put_unguarded(&self, item: T) -> Result<(JobId, Wake), PutRefused<T>> {
        let mut waited = 0;
        // The next block, for the put of a block's last slot: allocated before the claim.
        let mut spare: Option<Box<Block<T>>> = None;
        // Acquire: pairs with the Release that ends a block move, so the block read below
        // is at least this ticket's.
        let mut tail = self.producers.tail.load(Ordering::Acquire);
        loop {
            if tail & CLOSED != 0 {
                return Err(PutRefused::Closed(item));
            }
            if tail & MOVING != 0 {
                waited = back_off(waited);
                // Acquire: as above.
                tail = self.producers.tail.load(Ordering::Acquire);
                continue;
            }
            let ticket = ticket_of(tail);
            let index = index_of(ticket);
            let links = index == CAP - 1;
            if links && spare.is_none() {
                spare = Some(Block::boxed(0));
            }
            // Acquire: pairs with the Release store of the put that linked it, so its
            // fields are initialized.
            let block = self.producers.block.load(Ordering::Acquire);
            let claimed = tail.wrapping_add(TICKET) | if links { MOVING } else { 0 };
            let (next, notify_getter) = with_notification(claimed);
            // AcqRel: acquires as the load above (a failed claim reloads the word); releases
            // what came before the claim to the gets that read `tail` before theirs (the
            // turns a get's `owed` reads, see `try_get`). A getter counted here counted
            // itself in with a read-modify-write of this word (see the ring's `put`).
            match self.producers.tail.compare_exchange_weak(
                tail,
                next,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    // SAFETY: the claim succeeded with a word read without `MOVING` before
                    // the block pointer, so the block is this ticket's (module docs,
                    // "Blocks"); its slot `index` is claimed and not retired, so no get
                    // has freed or can free the block before the state store below.
                    let block = unsafe { &*block };
                    let id = block.start.wrapping_add(index as u64);
                    if links {
                        let mut new = spare.take().expect("allocated for the last slot");
                        new.start = id.wrapping_add(1);
                        let new = Box::into_raw(new);
                        // Release (both): publish the new block's fields to the get that
                        // moves onto it and to the puts that read the tail block.
                        block.next.store(new, Ordering::Release);
                        self.producers.block.store(new, Ordering::Release);
                        // Release: ends the move (pairs with the claims' Acquire loads).
                        // A subtraction clears the flag: only this put set it.
                        self.producers.tail.fetch_sub(MOVING, Ordering::Release);
                    }
                    block.items[index].with_mut(|cell| {
                        // SAFETY: the claim gave this thread the slot, which is empty
                        // (each ticket is claimed once, and the block is fresh for it);
                        // no other thread touches the item until the store below.
                        unsafe { cell.write(MaybeUninit::new(item)) };
                    });
                    // Release: publishes the item to the get that acquires this state.
                    // The block is not touched after it.
                    block.states[index].store(WRITTEN, Ordering::Release);
                    return Ok((JobId::new(id), Wake::reserved_if(notify_getter)));
                }
                Err(now) => tail = now,
            }
        }
    }

    // ------------------------------------------------------------------------ gets

    /// Takes the oldest item, leaving `owed()` items alone: the items the getter turns
    /// (`turns.rs`) keep for woken getters. `owed` is read after the ticket count that
    /// shows the item, which sees every turn granted before the item's claim (the claim
    /// is a release, and `tail` is acquired).
    ///
    /// A ticket claimed by a put that has not written its slot yet is waited for, not
    /// reported empty (see the module docs).
    #[inline]
    pub(crate) fn try_get(&self, owed: impl Fn() -> i64) -> Result<Taken<T>, Nothing> {
        uninterrupted(|| self.take_unguarded(Claim::Get(owed)))
    }

    /// Closes the list and takes every buffered item in ticket order. Returns the items
    /// with their ids.
    pub(crate) fn drain(&self) -> Vec<(u64, T)> {
        self.close();
        let mut drained = Vec::new();
        while let Ok(taken) = self.take_drained() {
            drained.push((taken.id.get(), taken.item));
        }
        drained
    }

    /// One step of a drain: takes the oldest item as a get would, leaving no item to woken
    /// getters.
    fn take_drained(&self) -> Result<Taken<T>, Nothing> {
        uninterrupted(|| self.take_unguarded(Claim::<fn() -> i64>::Drain))
    }

    #[inline(always)]
    fn take_unguarded(&self, claim: Claim<impl Fn() -> i64>) -> Result<Taken<T>, Nothing> {
        let mut waited = 0;
        // Acquire: pairs with the Release that ends a block move, so the block read below
        // is at least this ticket's; and with the claims before it (AcqRel), so the `tail`
        // read below is not behind it.
        let mut head = self.consumers.head.load(Ordering::Acquire);
        loop {
            if head & MOVING != 0 {
                waited = back_off(waited);
                // Acquire: as above.
                head = self.consumers.head.load(Ordering::Acquire);
                continue;
            }
            let ticket = ticket_of(head);
            // Acquire: pairs with the close, so a closed, empty list is final here, and
            // with the puts' claims (see `try_get`).
            let tail = self.producers.tail.load(Ordering::Acquire);
            let buffered = distance(ticket_of(tail), ticket);
            if buffered == 0 {
                return Err(if tail & CLOSED != 0 {
                    Nothing::Closed
                } else {
                    Nothing::Empty
                });
            }
            if behind(buffered) {
                // `head` moved on since it was read.
                waited = back_off(waited);
                // Acquire: as above.
                head = self.consumers.head.load(Ordering::Acquire);
                continue;
            }
            if let Claim::Get(owed) = &claim {
                let owed = owed();
                if owed > 0 && buffered <= owed as u64 {
                    return Err(Nothing::Empty);
                }
            }
            let index = index_of(ticket);
            let moves = index == CAP - 1;
            // Acquire: pairs with the Release store of the get that moved onto it.
            let block_ptr = self.consumers.block.load(Ordering::Acquire);
            let next = head.wrapping_add(TICKET) | if moves { MOVING } else { 0 };
            // AcqRel: acquires as the load above; releases this get's read of `tail` to the
            // gets that acquire `head` after it (so theirs is not behind it).
            match self.consumers.head.compare_exchange_weak(
                head,
                next,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    // SAFETY: as in `put_unguarded`: the block is this ticket's, and its
                    // slot `index` is claimed by this thread and not retired, so the
                    // block is alive until this get retires it or frees it.
                    let block = unsafe { &*block_ptr };
                    if moves {
                        self.move_head(block, next);
                    }
                    let state = &block.states[index];
                    // Acquire: pairs with the put's Release store, so the item is written.
                    while state.load(Ordering::Acquire) != WRITTEN {
                        waited = back_off(waited);
                    }
                    let item = block.items[index].with(|cell| {
                        // SAFETY: the claim gave this thread the slot, whose put wrote the
                        // item before the Release store acquired above; nobody else reads
                        // it, so it is read out exactly once.
                        unsafe { (*cell).assume_init_read() }
                    });
                    let id = block.start.wrapping_add(index as u64);
                    if moves {
                        // The pointer as loaded, not one derived from `block`: the
                        // free owns the whole block again.
                        Self::free(block_ptr);
                    } else {
                        // Release: the get of the block's last slot frees the block after
                        // it acquires this store. The block is not touched after it.
                        state.store(RETIRED, Ordering::Release);
                    }
                    return Ok(Taken {
                        id: JobId::new(id),
                        item,
                        putters: Wake::No,
                        last: false,
                    });
                }
                Err(now) => head = now,
            }
        }
    }

    /// Moves the head block onto the next one, for the get that claimed `block`'s last
    /// slot; `claimed` is the word its claim wrote (with `MOVING`).
    #[inline(never)]
    fn move_head(&self, block: &Block<T>, claimed: u64) {
        let mut waited = 0;
        // Acquire: pairs with the linking put's Release store, so the new block's fields
        // are initialized. That put claimed its ticket (the get saw it in `tail`) and
        // links before it writes its slot, so the wait is short.
        let next = loop {
            let next = block.next.load(Ordering::Acquire);
            if !next.is_null() {
                break next;
            }
            waited = back_off(waited);
        };
        // Relaxed: read by observers only, each ordered by its read of `head` below.
        self.consumers
            .base
            .store(block.start.wrapping_add(CAP as u64), Ordering::Relaxed);
        // Release: the gets that read `head` without `MOVING` find the new block.
        self.consumers.block.store(next, Ordering::Release);
        // Release: ends the move (pairs with the claims' Acquire loads). A store: nobody
        // claims while `MOVING` is set.
        self.consumers
            .head
            .store(claimed & !MOVING, Ordering::Release);
    }

    /// Frees `block` once the get of its last slot has read its item: waits for the gets
    /// of the other slots to retire theirs.
    #[inline(never)]
    fn free(block_ptr: *mut Block<T>) {
        {
            // SAFETY: this get claimed the block's last slot, so the block is alive until
            // it frees it below; the reference ends before the free.
            let block = unsafe { &*block_ptr };
            let mut waited = 0;
            for state in &block.states[..CAP - 1] {
                // Acquire: pairs with the retiring get's Release store, so its read of the
                // item comes before the block is freed.
                while state.load(Ordering::Acquire) != RETIRED {
                    waited = back_off(waited);
                }
            }
            #[cfg(loom)]
            {
                // Under loom the block is kept, and the free writes each of its items:
                // loom then reports an access to an item not ordered before the free (a
                // use after the free) as a race.
                for item in &block.items {
                    item.with_mut(|_| ());
                }
            }
        }
        // SAFETY: the block came from `Box::into_raw`, and `block_ptr` is that pointer as
        // loaded from the list; every slot is retired, no thread touches a block after
        // retiring its slot, and the head and tail blocks have both moved on (the linking
        // put moved the tail, this get the head), so nothing refers to it any more; only
        // the get of the last slot frees it, once.
        #[cfg(not(loom))]
        drop(unsafe { Box::from_raw(block_ptr) });
    }

    // --------------------------------------------------------------------- endings

    /// Whether every ending looks at settling ([`end`](Self::end)). Only for a list not
    /// shared yet.
    pub(crate) fn watch_settled(&mut self, watch: bool) {
        set_watched(&self.consumers.ended, watch);
    }

    /// Records `n` endings (resolutions, abandonments or discards). `None`: they concern
    /// nobody (no joiner registered, settling not watched, see
    /// [`watch_settled`](Self::watch_settled)); otherwise whether they settled the list
    /// and whether joiners were registered. Settling is looked at only then: the look
    /// reads `tail`, the producers' cache line.
    #[inline(always)]
    pub(crate) fn end(&self, n: u64) -> Option<(bool, bool)> {
        // AcqRel: releases this ending (and the work before it) to joiners that acquire
        // `ended`; acquires the earlier endings, so the `tail` read below sees the claim
        // of every item they ended.
        let before = self
            .consumers
            .ended
            .fetch_add(n << TICKET_SHIFT, Ordering::AcqRel);
        let joiners = anyone_in(before);
        // The flag rides in the word the `fetch_add` read: one test with the joiners'.
        if !(joiners || before & WATCHED != 0) {
            return None;
        }
        // Relaxed: ordered by the acquire above.
        let tail = self.producers.tail.load(Ordering::Relaxed);
        let settled = distance(ticket_of(tail), ticket_of(before) + n) == 0;
        Some((settled, joiners))
    }

    /// Unfinished items: buffered or delivered, not ended.
    pub(crate) fn unfinished(&self) -> u64 {
        // Acquire: pairs with the endings' AcqRel, so a zero here also shows the work that
        // ended, and the `tail` read below sees every claim those endings counted.
        let ended = self.consumers.ended.load(Ordering::Acquire);
        // Relaxed: ordered by the acquire above.
        let tail = self.producers.tail.load(Ordering::Relaxed);
        distance(ticket_of(tail), ticket_of(ended))
    }

    // ----------------------------------------------------------------- observation

    /// Buffered items (a snapshot).
    pub(crate) fn len(&self) -> u64 {
        // Relaxed (both): a snapshot; a `tail` read behind `head` reads as empty.
        let head = self.consumers.head.load(Ordering::Relaxed);
        let tail = self.producers.tail.load(Ordering::Relaxed);
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
        let taken = self.taken();
        // Endings never pass takes: widened below the takes read now.
        widen(ended, taken).min(taken)
    }

    /// Items taken out and tickets claimed (items accepted), as full 64-bit counts, read
    /// in that order; `accepted` is never read below `taken`.
    pub(crate) fn progress(&self) -> (u64, u64) {
        let taken = self.taken();
        // Acquire: the claims of the items taken are not missed.
        let tail = ticket_of(self.producers.tail.load(Ordering::Acquire));
        (taken, widen(tail, taken).max(taken))
    }

    /// Items taken out so far, as a full 64-bit count.
    fn taken(&self) -> u64 {
        // Acquire: pairs with the Release that ends a block move, so `base` (stored before
        // it) is within a block of the ticket read here.
        let head = ticket_of(self.consumers.head.load(Ordering::Acquire));
        // Relaxed: see above; only its value is used, to widen.
        let base = self.consumers.base.load(Ordering::Relaxed);
        widen(head, base)
    }

    /// Closes the list: no put succeeds from now on. Returns whether this call closed it.
    pub(crate) fn close(&self) -> bool {
        // AcqRel: releases the close to the gets that acquire `tail` and find it empty;
        // acquires the claims before it (a drain that follows takes them).
        self.producers.tail.fetch_or(CLOSED, Ordering::AcqRel) & CLOSED == 0
    }

    /// Whether the list is closed.
    pub(crate) fn is_closed(&self) -> bool {
        // Acquire: an observer.
        self.producers.tail.load(Ordering::Acquire) & CLOSED != 0
    }

    // --------------------------------------------------------------------- waiters

    /// Where the waiters of `kind` are counted: getters in `tail`, joiners in `ended`.
    /// Puts never wait on an unbounded list.
    pub(crate) fn counted(&self, kind: Kind) -> Counted<'_> {
        match kind {
            Kind::Getters => Counted::own(&self.producers.tail),
            Kind::Putters => unreachable!("an unbounded list has no waiting putters"),
            Kind::Joiners => Counted::in_word(&self.consumers.ended, false),
        }
    }
}

impl<T> Default for List<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Drop for List<T> {
    /// Drops every buffered item, even if some item's `Drop` panics (the first panic then
    /// propagates), and frees the blocks.
    fn drop(&mut self) {
        /// Frees the blocks left once the items are taken out, also while unwinding (an
        /// item's `Drop` that panicked).
        struct Blocks<'a, T>(&'a List<T>);
        impl<T> Drop for Blocks<'_, T> {
            fn drop(&mut self) {
                // Relaxed: `&mut List` excludes other threads.
                let mut block = self.0.consumers.block.load(Ordering::Relaxed);
                while !block.is_null() {
                    // SAFETY: `&mut List` excludes every other thread; the blocks from the
                    // head block on are linked from it, were never freed (their last slot
                    // was not taken), and each is freed once, here.
                    let owned = unsafe { Box::from_raw(block) };
                    // Relaxed: no other thread.
                    block = owned.next.load(Ordering::Relaxed);
                }
            }
        }
        let _blocks = Blocks(self);
        // Taken out as gets take them, so the blocks they empty are freed as gets free
        // them; the head block and its successors are left to `_blocks`.
        each_despite_panics(
            || _blocks.0.take_drained().ok().map(|taken| taken.item),
            drop,
        );
    }
}

impl<T> core::fmt::Debug for List<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("List")
            .field("len", &self.len())
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests;

#[cfg(all(test, loom))]
mod loom_models;
