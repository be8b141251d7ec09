//! Unit tests of the ring, single-threaded unless named otherwise; Miri runs them all.

extern crate std;

use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize as StdAtomicUsize, Ordering as StdOrdering};

use super::*;
use crate::wait::waiters::Wake;

fn taken<T>(ring: &BoxedRing<T>) -> (u64, T) {
    let taken = ring.try_get(|| 0).expect("an item");
    (taken.id.get(), taken.item)
}

/// A heap ring's slot for a `u64` is 12 bytes: a 32-bit stamp and the item, in arrays of
/// their own (the id is the ticket, derived, not stored). Side by side, as in an inline
/// ring, they pad to 16.
#[test]
fn a_heap_slot_for_a_u64_is_twelve_bytes() {
    let ring = BoxedRing::<u64>::new(Bound::Buffered(1024));
    let Columns { stamps, items } = &ring.slots;
    assert_eq!(stamps.len(), 1024);
    assert_eq!(items.len(), 1024);
    assert_eq!(core::mem::size_of_val::<[_]>(stamps), 4 * 1024);
    assert_eq!(core::mem::size_of_val::<[_]>(items), 8 * 1024);
    assert_eq!(core::mem::size_of::<Slot<u64>>(), 16);
    assert_eq!(core::mem::size_of::<Slot<u32>>(), 8);
}

#[test]
fn items_come_out_in_order_with_contiguous_ids() {
    let ring = Ring::new(Bound::Buffered(4));
    for n in 0..4u64 {
        let accepted = ring.try_put(n * 10, 0).unwrap();
        assert_eq!(accepted, (JobId::new(n), Wake::No));
    }
    assert_eq!(ring.try_put(99, 0), Err(PutRefused::Full(99)));
    assert_eq!(ring.len(), 4);
    for n in 0..4u64 {
        assert_eq!(taken(&ring), (n, n * 10));
    }
    assert_eq!(ring.try_get(|| 0).unwrap_err(), Nothing::Empty);
    assert_eq!(ring.progress(), (4, 4));
    assert_eq!(ring.len(), 0);
}

#[test]
fn a_bound_that_is_not_a_power_of_two_is_exact() {
    let ring = Ring::new(Bound::Buffered(3));
    assert_eq!(ring.slots.len(), 4);
    assert!(!ring.stamp_bound);
    for n in 0..3 {
        ring.try_put(n, 0).unwrap();
    }
    assert_eq!(ring.try_put(3, 0), Err(PutRefused::Full(3)));
    // Laps around the ring keep the bound exact.
    for lap in 0..10 {
        assert_eq!(taken(&ring).1, lap);
        ring.try_put(lap + 3, 0).unwrap();
        assert_eq!(ring.try_put(-1, 0), Err(PutRefused::Full(-1)));
    }
}

/// A ring bound at its slot count checks room by the stamps: the bound stays exact lap
/// after lap, and slots owed to woken putters are still left alone (that check reads the
/// bound itself).
#[test]
fn a_bound_at_the_slot_count_is_exact_by_the_stamps() {
    let ring = Ring::new(Bound::Buffered(4));
    assert!(ring.stamp_bound);
    for n in 0..4 {
        ring.try_put(n, 0).unwrap();
    }
    assert_eq!(ring.try_put(4, 0), Err(PutRefused::Full(4)));
    for lap in 0..10 {
        assert_eq!(taken(&ring).1, lap);
        assert_eq!(ring.try_put(-1, 1), Err(PutRefused::Full(-1)));
        ring.try_put(lap + 4, 0).unwrap();
        assert_eq!(ring.try_put(-1, 0), Err(PutRefused::Full(-1)));
        assert_eq!(ring.len(), 4);
    }
    assert!(!BoxedRing::<u8>::new(Bound::Unfinished(4)).stamp_bound);
}

/// With slots owed, a ring bound at its slot count reads room off the stamp of the slot
/// that many tickets ahead: exactly as the bound says, for every number owed, lap after
/// lap and across the 39-bit wrap.
#[test]
fn owed_slots_are_left_alone_by_the_stamp_ahead_across_the_wrap() {
    for start in [0, TICKET_MASK - 9] {
        let ring = Ring::starting_at(Bound::Buffered(4), start);
        assert!(ring.stamp_bound);
        let mut next = 0;
        for lap in 0..12u64 {
            let buffered = ring.len();
            for owed in 1..=5i64 {
                let room = 4u64.saturating_sub(owed as u64) > buffered;
                match ring.try_put(next, owed) {
                    Ok(_) => {
                        assert!(room, "lap {lap}: {buffered} buffered, {owed} owed");
                        next += 1;
                        // Taken back out, so that each number owed meets the same count.
                        taken(&ring);
                        ring.end(1, false);
                    }
                    Err(PutRefused::Full(_)) => assert!(!room, "lap {lap}: {owed} owed"),
                    Err(PutRefused::Closed(_)) => unreachable!(),
                }
            }
            // One more buffered each lap (up to full, then drained), so every count meets
            // every number owed.
            if buffered < 4 {
                ring.try_put(next, 0).unwrap();
                next += 1;
            } else {
                while ring.len() > 0 {
                    taken(&ring);
                }
            }
        }
    }
}

#[test]
#[should_panic(expected = "a ring bound is between 1 and")]
fn a_zero_bound_is_refused() {
    let _ = BoxedRing::<u8>::new(Bound::Buffered(0));
}

#[test]
fn a_closed_ring_refuses_puts_and_drains_what_it_holds() {
    let ring = Ring::new(Bound::Buffered(4));
    ring.try_put('a', 0).unwrap();
    ring.try_put('b', 0).unwrap();
    ring.try_put('c', 0).unwrap();
    assert!(ring.close());
    assert!(!ring.close());
    assert!(ring.is_closed());
    assert_eq!(ring.try_put('x', 0), Err(PutRefused::Closed('x')));
    assert_eq!(taken(&ring), (0, 'a'));
    assert_eq!(ring.drain(), [(1, 'b'), (2, 'c')]);
    assert_eq!(ring.try_get(|| 0).unwrap_err(), Nothing::Closed);
    assert!(ring.drain().is_empty());
}

#[test]
fn an_unfinished_bound_is_freed_by_endings_not_gets() {
    let ring = Ring::new(Bound::Unfinished(2));
    ring.try_put(1, 0).unwrap();
    ring.try_put(2, 0).unwrap();
    assert_eq!(ring.try_put(3, 0), Err(PutRefused::Full(3)));
    taken(&ring);
    assert_eq!(ring.try_put(3, 0), Err(PutRefused::Full(3)));
    taken(&ring);
    assert_eq!(ring.end(1, true), (false, false));
    assert_eq!(ring.unfinished(), 1);
    assert_eq!(ring.try_put(3, 0).unwrap().0.get(), 2);
    // No putter counts live in `head` for this bound.
    assert!(ring.try_get(|| 0).unwrap().putters != Wake::Reserved);
}

#[test]
fn the_last_ending_settles_and_reports_registered_joiners() {
    let ring = Ring::new(Bound::Buffered(2));
    assert_eq!(ring.unfinished(), 0);
    ring.try_put((), 0).unwrap();
    ring.try_put((), 0).unwrap();
    assert_eq!(ring.unfinished(), 2);
    taken(&ring);
    taken(&ring);
    assert_eq!(ring.end(1, true), (false, false));
    let joiners = ring.counted(Kind::Joiners);
    joiners.count_in();
    assert_eq!(ring.end(1, false), (true, true), "looked at for the joiner");
    assert_eq!(ring.unfinished(), 0);
    joiners.count_out();
    ring.try_put((), 0).unwrap();
    taken(&ring);
    assert_eq!(ring.end(1, false), (false, false), "nobody asked to look");
    assert_eq!(ring.unfinished(), 0);
}

#[test]
fn a_watched_ring_looks_at_settling_on_every_ending() {
    let mut ring = Ring::new(Bound::Buffered(4));
    ring.try_put((), 0).unwrap();
    ring.try_put((), 0).unwrap();
    taken(&ring);
    taken(&ring);
    assert_eq!(ring.end_watched(1), None, "not watched: nobody to tell");
    ring.try_put((), 0).unwrap();
    taken(&ring);
    ring.watch_settled(true);
    assert_eq!(ring.end_watched(1), Some((false, false)));
    assert_eq!(
        ring.end_watched(1),
        Some((true, false)),
        "the last one settles"
    );
    assert_eq!(ring.unfinished(), 0);
    assert_eq!(ring.ended(), 3, "the flag is no ending");
    ring.watch_settled(false);
    ring.try_put((), 0).unwrap();
    taken(&ring);
    assert_eq!(ring.end_watched(1), None);
    assert_eq!(ring.ended(), 4);
}

#[test]
#[cfg(feature = "std")]
fn a_put_counts_a_notification_for_a_waiting_getter_once() {
    let ring = Ring::new(Bound::Buffered(4));
    let getters = ring.counted(Kind::Getters);
    getters.count_in();
    assert!(ring.try_put(1, 0).unwrap().1 == Wake::Reserved);
    assert!(
        ring.try_put(2, 0).unwrap().1 != Wake::Reserved,
        "one coming already"
    );
    getters.count_out_notified();
    assert!(
        ring.try_put(3, 0).unwrap().1 != Wake::Reserved,
        "nobody waits"
    );
    assert_eq!(
        (getters.count(), getters.pending()),
        (0, 0),
        "the fields leave the ticket alone"
    );
    assert_eq!(taken(&ring), (0, 1));
}

#[test]
#[cfg(feature = "std")]
fn a_get_counts_a_notification_for_a_waiting_putter_once() {
    let ring = Ring::new(Bound::Buffered(1));
    ring.try_put(1, 0).unwrap();
    let putters = ring.counted(Kind::Putters);
    putters.count_in();
    assert_eq!(ring.try_put(2, 0), Err(PutRefused::Full(2)));
    assert!(ring.try_get(|| 0).unwrap().putters == Wake::Reserved);
    ring.try_put(2, 0).unwrap();
    assert!(
        ring.try_get(|| 0).unwrap().putters != Wake::Reserved,
        "one coming already"
    );
    putters.count_out_notified();
    assert_eq!((putters.count(), putters.pending()), (0, 0));
}

#[test]
#[cfg(feature = "std")]
fn the_drain_tells_no_putter() {
    let ring = Ring::new(Bound::Buffered(2));
    ring.try_put(1, 0).unwrap();
    ring.counted(Kind::Putters).count_in();
    assert_eq!(ring.drain(), [(0, 1)]);
    assert_eq!(ring.counted(Kind::Putters).pending(), 0);
}

#[test]
fn tickets_and_ids_cross_the_39_bit_wrap() {
    let start = TICKET_MASK - 5;
    let ring = Ring::starting_at(Bound::Buffered(3), start);
    for n in 0..20 {
        let id = ring.try_put(n, 0).unwrap().0.get();
        assert_eq!(id, start + n);
        if n % 2 == 1 {
            assert_eq!(taken(&ring).0, start + n - 1);
            assert_eq!(taken(&ring).0, start + n);
        }
        assert_eq!(ring.progress().1, start + n + 1);
    }
    assert_eq!(ring.len(), 0);
    assert_eq!(ring.unfinished(), 20);
    assert_eq!(ring.ended(), start);
    assert_eq!(ring.end(20, true), (true, false));
    assert_eq!(ring.ended(), start + 20);
    assert!(ring.progress().1 > TICKET_MASK + 1);
}

#[test]
fn widen_finds_the_nearest_full_value() {
    assert_eq!(widen(5, 3), 5);
    assert_eq!(widen(TICKET_MASK, TICKET_MASK + 3), TICKET_MASK);
    assert_eq!(widen(2, TICKET_MASK - 1), TICKET_MASK + 3);
    let far = 7 * (TICKET_MASK + 1) + 10;
    assert_eq!(widen(12, far), far + 2);
    assert_eq!(widen(8, far), far - 2);
}

#[test]
fn a_stamp_is_a_ticket_modulo_2_to_the_32() {
    let lap = TICKET_MASK + 1;
    assert_eq!(stamp_of(5), 5);
    assert_eq!(stamp_of(3 * lap + 5), stamp_of(5));
    assert_ne!(stamp_of(3 * lap + 5), stamp_of(6));
    assert_ne!(stamp_of((1 << 31) + 5), stamp_of(5));
    // The last ticket before the words' wrap is one stamp before the first after it.
    assert_eq!(stamp_of(TICKET_MASK).wrapping_add(1), stamp_of(0));
    assert!(moves_base(0) && moves_base(1 << 32) && moves_base(lap));
    assert!(!moves_base(1) && !moves_base((1 << 32) - 1));
}

/// `base` lags the tickets by 2^37 and the put of every multiple of 2^32 moves it up: a
/// ring whose `base` is left as far behind as it can be still widens, and the put of the
/// multiple of 2^32 brings `base` back, so the tickets after it (too far from the old
/// `base` to widen right) keep exact ids.
#[test]
fn the_put_of_a_multiple_of_2_to_the_32_moves_the_base() {
    let mark = 100 << 32;
    let start = mark - 3;
    let ring = Ring::starting_at(Bound::Buffered(4), start);
    assert_eq!(ring.base.load(Ordering::Relaxed), start - BASE_LAG);
    // As far behind as a `base` can be: up to its step and the lag behind.
    let oldest = mark - (1 << 32) - BASE_LAG;
    ring.base.store(oldest, Ordering::Relaxed);
    for n in 0..3 {
        assert_eq!(ring.try_put(n, 0).unwrap().0.get(), start + n);
        assert_eq!(ring.base.load(Ordering::Relaxed), oldest);
        assert_eq!(taken(&ring).0, start + n);
    }
    assert_eq!(ring.try_put(3, 0).unwrap().0.get(), mark);
    assert_eq!(ring.base.load(Ordering::Relaxed), mark - BASE_LAG);
    // A ticket 2^39 past `oldest`, which the old `base` would widen to `oldest + 1`,
    // widens right from the new one.
    let far = oldest + (1 << 39) + 1;
    assert_eq!(ring.full(far & TICKET_MASK), far);
    assert_eq!(taken(&ring).0, mark);
    assert_eq!(ring.progress(), (mark + 1, mark + 1));
}

/// A batch put whose tickets include a multiple of 2^32 moves `base` too.
#[test]
fn a_batch_across_a_multiple_of_2_to_the_32_moves_the_base() {
    let mark = 100 << 32;
    let ring = Ring::starting_at(Bound::Buffered(8), mark - 2);
    let mut items: Vec<u64> = (0..5).collect();
    let mut ids = Vec::with_capacity(5);
    assert_eq!(ring.try_put_many(&mut items, 0, &mut ids), Ok((5, 0)));
    let ids: Vec<u64> = ids.into_iter().map(JobId::get).collect();
    assert_eq!(ids, (mark - 2..mark + 3).collect::<Vec<_>>());
    assert_eq!(ring.base.load(Ordering::Relaxed), mark - 2 - BASE_LAG);
}

struct Noisy<'a> {
    value: u32,
    panics_at: u32,
    dropped: &'a StdAtomicUsize,
}

impl Drop for Noisy<'_> {
    fn drop(&mut self) {
        // Relaxed: a count read on the same thread.
        self.dropped.fetch_add(1, StdOrdering::Relaxed);
        assert!(
            self.value != self.panics_at,
            "item {} panics in drop",
            self.value
        );
    }
}

#[test]
fn dropping_the_ring_drops_every_buffered_item_even_if_one_panics() {
    let dropped = StdAtomicUsize::new(0);
    let ring = Ring::new(Bound::Buffered(8));
    for value in 0..6 {
        ring.try_put(
            Noisy {
                value,
                panics_at: 2,
                dropped: &dropped,
            },
            0,
        )
        .ok()
        .unwrap();
    }
    // One item left the ring already; it is the caller's.
    drop(ring.try_get(|| 0).unwrap());
    // Relaxed: the drops ran on this thread.
    assert_eq!(dropped.load(StdOrdering::Relaxed), 1);
    let unwound = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| drop(ring)));
    assert!(unwound.is_err());
    // Relaxed: the drops ran on this thread.
    assert_eq!(dropped.load(StdOrdering::Relaxed), 6);
}

#[test]
fn dropping_a_wrapped_ring_drops_exactly_the_buffered_items() {
    let dropped = StdAtomicUsize::new(0);
    let ring = Ring::starting_at(Bound::Buffered(4), TICKET_MASK - 1);
    for value in 0..7 {
        ring.try_put(
            Noisy {
                value,
                panics_at: u32::MAX,
                dropped: &dropped,
            },
            0,
        )
        .ok()
        .unwrap();
        if value < 4 {
            drop(ring.try_get(|| 0).unwrap());
        }
    }
    drop(ring);
    // Relaxed: the drops ran on this thread.
    assert_eq!(dropped.load(StdOrdering::Relaxed), 7);
}

#[test]
fn producers_and_consumers_on_threads_lose_and_duplicate_nothing() {
    let per_producer: u64 = if cfg!(miri) { 40 } else { 20_000 };
    let ring = Ring::new(Bound::Buffered(4));
    let producers = 2;
    let got: Vec<(u64, u64)> = std::thread::scope(|s| {
        let consumers: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let mut got = Vec::new();
                    loop {
                        match ring.try_get(|| 0) {
                            Ok(taken) => got.push((taken.id.get(), taken.item)),
                            Err(Nothing::Closed) => return got,
                            Err(Nothing::Empty) => std::thread::yield_now(),
                        }
                    }
                })
            })
            .collect();
        let puts: Vec<_> = (0..producers)
            .map(|p| {
                let ring = &ring;
                s.spawn(move || {
                    for n in 0..per_producer {
                        let mut item = p * per_producer + n;
                        loop {
                            match ring.try_put(item, 0) {
                                Ok(_) => break,
                                Err(PutRefused::Full(back)) => {
                                    item = back;
                                    std::thread::yield_now();
                                }
                                Err(PutRefused::Closed(_)) => unreachable!("closed after puts"),
                            }
                        }
                    }
                })
            })
            .collect();
        for put in puts {
            put.join().unwrap();
        }
        ring.close();
        consumers
            .into_iter()
            .flat_map(|c| c.join().unwrap())
            .collect()
    });
    let total = producers * per_producer;
    let mut ids: Vec<u64> = got.iter().map(|&(id, _)| id).collect();
    let mut items: Vec<u64> = got.iter().map(|&(_, item)| item).collect();
    ids.sort_unstable();
    items.sort_unstable();
    assert_eq!(
        ids,
        (0..total).collect::<Vec<_>>(),
        "contiguous ids, each once"
    );
    assert_eq!(items, (0..total).collect::<Vec<_>>(), "every item once");
    assert_eq!(ring.end(total, true), (true, false));
}

/// The floor, for the instruction counters: `OPS` rounds (default 1 000) of put + get +
/// ending on a counting ring bound at 128 (the kind the queue builds) with nobody
/// waiting, the queue's cheapest path.
/// `benches/floor.sh` runs it under `locked-per-op` at `OPS=N` and `OPS=0`, beside the
/// peers' floors.
#[test]
fn floor_ops_from_env() {
    let ops: u64 = match std::env::var("OPS") {
        Ok(value) => value.trim().parse().expect("OPS must be a number"),
        Err(_) => 1_000,
    };
    let ring = Ring::new(Bound::Buffered(128));
    let ring = core::hint::black_box(&ring);
    for n in 0..ops {
        let accepted = ring.try_put(n, 0).ok().unwrap();
        let taken = ring.try_get(|| 0).ok().unwrap();
        let (_, notify_joiners) = ring.end(1, false);
        // The peers' floors check the item and keep it; this one also checks the id and
        // that nobody needed a notification.
        assert!(accepted == (taken.id, Wake::No) && taken.putters == Wake::No);
        assert!(!notify_joiners);
        core::hint::black_box(taken.item);
    }
    assert_eq!(ring.progress().1, ops);
    assert_eq!(ring.unfinished(), 0);
}
