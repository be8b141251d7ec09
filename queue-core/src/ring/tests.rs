//! Unit tests of the ring, single-threaded unless named otherwise; Miri runs them all.

extern crate std;

use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize as StdAtomicUsize, Ordering as StdOrdering};

use super::*;

fn taken<T>(ring: &Ring<T>) -> (u64, T) {
    let taken = ring.try_get().expect("an item");
    (taken.id, taken.item)
}

#[test]
fn items_come_out_in_order_with_contiguous_ids() {
    let ring = Ring::new(Bound::Buffered(4));
    for n in 0..4u64 {
        let accepted = ring.try_put(n * 10).unwrap();
        assert_eq!(
            accepted,
            Accepted {
                id: n,
                notify_getter: false
            }
        );
    }
    assert_eq!(ring.try_put(99), Err(Refused::Full(99)));
    assert_eq!(ring.len(), 4);
    for n in 0..4u64 {
        assert_eq!(taken(&ring), (n, n * 10));
    }
    assert_eq!(ring.try_get().unwrap_err(), Nothing::Empty);
    assert_eq!(ring.tickets(), 4);
    assert_eq!(ring.len(), 0);
}

#[test]
fn a_bound_that_is_not_a_power_of_two_is_exact() {
    let ring = Ring::new(Bound::Buffered(3));
    assert_eq!(ring.slots.len(), 4);
    for n in 0..3 {
        ring.try_put(n).unwrap();
    }
    assert_eq!(ring.try_put(3), Err(Refused::Full(3)));
    // Laps around the ring keep the bound exact.
    for lap in 0..10 {
        assert_eq!(taken(&ring).1, lap);
        ring.try_put(lap + 3).unwrap();
        assert_eq!(ring.try_put(-1), Err(Refused::Full(-1)));
    }
}

/// A counting ring bound at its slot count checks room by the stamps: the bound stays exact
/// lap after lap, and slots owed to woken putters are still left alone (that check reads
/// the bound itself).
#[test]
fn a_bound_at_the_slot_count_is_exact_by_the_stamps() {
    let ring = Ring::counting(Bound::Buffered(4));
    assert!(ring.stamps_bound());
    for n in 0..4 {
        ring.try_put(n).unwrap();
    }
    assert_eq!(ring.try_put(4), Err(Refused::Full(4)));
    for lap in 0..10 {
        assert_eq!(taken(&ring).1, lap);
        assert_eq!(ring.try_put_leaving(-1, 1), Err(Refused::Full(-1)));
        ring.try_put(lap + 4).unwrap();
        assert_eq!(ring.try_put(-1), Err(Refused::Full(-1)));
        assert_eq!(ring.len(), 4);
    }
    assert!(!Ring::<u8>::counting(Bound::Buffered(3)).stamps_bound());
    assert!(!Ring::<u8>::counting(Bound::Unfinished(4)).stamps_bound());
    assert!(
        !Ring::<u8>::new(Bound::Buffered(4)).stamps_bound(),
        "reserving"
    );
}

#[test]
#[should_panic(expected = "a ring bound is between 1 and")]
fn a_zero_bound_is_refused() {
    let _ = Ring::<u8>::new(Bound::Buffered(0));
}

#[test]
fn a_closed_ring_refuses_puts_and_drains_what_it_holds() {
    let ring = Ring::new(Bound::Buffered(4));
    ring.try_put('a').unwrap();
    ring.try_put('b').unwrap();
    ring.try_put('c').unwrap();
    assert!(ring.close());
    assert!(!ring.close());
    assert!(ring.is_closed());
    assert_eq!(ring.try_put('x'), Err(Refused::Closed('x')));
    assert_eq!(taken(&ring), (0, 'a'));
    assert_eq!(ring.drain(), [(1, 'b'), (2, 'c')]);
    assert_eq!(ring.try_get().unwrap_err(), Nothing::Closed);
    assert!(ring.drain().is_empty());
}

#[test]
fn a_requeued_item_keeps_its_id_and_goes_to_the_back() {
    let ring = Ring::new(Bound::Buffered(4));
    ring.try_put("a").unwrap();
    ring.try_put("b").unwrap();
    let (id, item) = taken(&ring);
    assert_eq!(ring.try_requeue(id, item).unwrap().id, 0);
    // The retry took ticket 2: the next fresh id is 3.
    assert_eq!(ring.try_put("c").unwrap().id, 3);
    assert_eq!(taken(&ring), (1, "b"));
    assert_eq!(taken(&ring), (0, "a"));
    assert_eq!(taken(&ring), (3, "c"));
    // Four tickets, one of them a retry (counted as an ending): three unfinished.
    assert_eq!(ring.tickets(), 4);
    assert_eq!(ring.unfinished(), 3);
    assert!(!ring.end(3));
    assert!(ring.is_settled());
}

#[test]
fn a_requeue_is_refused_like_a_put() {
    let ring = Ring::new(Bound::Buffered(1));
    ring.try_put(1).unwrap();
    let (id, item) = taken(&ring);
    ring.try_put(2).unwrap();
    assert_eq!(ring.try_requeue(id, item), Err(Refused::Full(1)));
    ring.close();
    assert_eq!(ring.try_requeue(id, 1), Err(Refused::Closed(1)));
}

#[test]
fn an_unfinished_bound_is_freed_by_endings_not_gets() {
    let ring = Ring::new(Bound::Unfinished(2));
    ring.try_put(1).unwrap();
    ring.try_put(2).unwrap();
    assert_eq!(ring.try_put(3), Err(Refused::Full(3)));
    let (id, item) = taken(&ring);
    assert_eq!(ring.try_put(3), Err(Refused::Full(3)));
    // A requeue under an unfinished bound is already counted: it fits.
    ring.try_requeue(id, item).unwrap();
    assert_eq!(ring.try_put(3), Err(Refused::Full(3)));
    taken(&ring);
    assert!(!ring.end(1));
    assert!(!ring.is_settled());
    assert_eq!(ring.try_put(3).unwrap().id, 3);
    // No putter counts live in `head` for this bound.
    assert!(!ring.try_get().unwrap().notify_putter);
}

#[test]
fn the_last_ending_settles_and_reports_registered_joiners() {
    let ring = Ring::new(Bound::Buffered(2));
    assert!(ring.is_settled());
    ring.try_put(()).unwrap();
    ring.try_put(()).unwrap();
    assert_eq!(ring.unfinished(), 2);
    taken(&ring);
    taken(&ring);
    assert!(!ring.end(1));
    assert!(!ring.is_settled());
    ring.register_joiner();
    assert!(ring.end(1));
    assert!(ring.is_settled());
    assert!(ring.is_settled());
    ring.unregister_joiner();
    ring.try_put(()).unwrap();
    taken(&ring);
    assert!(!ring.end(1));
    assert!(ring.is_settled());
}

#[test]
fn tickets_and_ids_cross_the_39_bit_wrap() {
    let start = TICKET_MASK - 5;
    let ring = Ring::starting_at(Bound::Buffered(3), start);
    for n in 0..20 {
        let id = ring.try_put(n).unwrap().id;
        assert_eq!(id, start + n);
        if n % 2 == 1 {
            assert_eq!(taken(&ring).0, start + n - 1);
            assert_eq!(taken(&ring).0, start + n);
        }
        assert_eq!(ring.tickets(), start + n + 1);
    }
    assert_eq!(ring.len(), 0);
    assert_eq!(ring.unfinished(), 20);
    assert!(!ring.end(20));
    assert!(ring.is_settled());
    assert!(ring.tickets() > TICKET_MASK + 1);
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
fn a_put_reserves_its_item_for_a_registered_getter() {
    let ring = Ring::new(Bound::Buffered(4));
    assert!(!ring.register_getter());
    // The first put has a getter to tell; the second finds it told already.
    assert!(ring.try_put(1).unwrap().notify_getter);
    assert!(!ring.try_put(2).unwrap().notify_getter);
    // A barging get may take the unreserved item but not the reserved one.
    assert_eq!(taken(&ring).1, 1);
    assert_eq!(ring.try_get().unwrap_err(), Nothing::Empty);
    assert_eq!(ring.len(), 1);
    // The woken getter takes it and is counted out.
    assert_eq!(ring.get_reserved().unwrap().item, 2);
    assert!(!ring.try_put(3).unwrap().notify_getter);
    assert_eq!(taken(&ring).1, 3);
}

#[test]
fn a_woken_getter_that_gives_up_passes_its_reservation_on() {
    let ring = Ring::new(Bound::Buffered(4));
    ring.register_getter();
    ring.register_getter();
    assert!(ring.try_put(1).unwrap().notify_getter);
    // The woken getter gives up; the other registered getter inherits the reservation.
    assert!(ring.pass_on_getter());
    assert_eq!(ring.try_get().unwrap_err(), Nothing::Empty);
    assert_eq!(ring.get_reserved().unwrap().item, 1);
    // The last woken getter giving up releases the reservation: the item is free again.
    ring.register_getter();
    assert!(ring.try_put(2).unwrap().notify_getter);
    assert!(!ring.pass_on_getter());
    assert_eq!(taken(&ring).1, 2);
    assert!(!ring.try_put(3).unwrap().notify_getter);
}

#[test]
fn a_notification_that_reached_nobody_withdraws_its_reservation() {
    let ring = Ring::new(Bound::Buffered(4));
    ring.register_getter();
    assert!(ring.try_put(1).unwrap().notify_getter);
    ring.unreserve_getter();
    ring.unregister_getter();
    assert_eq!(taken(&ring).1, 1);
    // Relaxed: read on the only thread.
    let word = ring.tail.0.load(Ordering::Relaxed);
    assert_eq!((waiting(word), pending(word)), (0, 0));
}

#[test]
fn an_unnotified_getter_counts_out_without_a_trace() {
    let ring = Ring::new(Bound::Buffered(2));
    ring.register_getter();
    ring.unregister_getter();
    assert!(!ring.try_put(1).unwrap().notify_getter);
    assert!(ring.register_getter(), "an unreserved item is buffered");

    let ring = Ring::new(Bound::Buffered(1));
    ring.try_put(1).unwrap();
    ring.register_putter();
    ring.unregister_putter();
    assert!(!ring.try_get().unwrap().notify_putter);
}

#[test]
fn a_get_reserves_the_freed_slot_for_a_registered_putter() {
    let ring = Ring::new(Bound::Buffered(1));
    ring.try_put(1).unwrap();
    ring.register_putter();
    assert_eq!(ring.try_put(2), Err(Refused::Full(2)));
    let got = ring.try_get().unwrap();
    assert!(got.notify_putter);
    // A barging put cannot take the reserved slot; the woken putter can.
    assert_eq!(ring.try_put(3), Err(Refused::Full(3)));
    assert_eq!(ring.put_reserved(2).unwrap().id, 1);
    ring.try_get().unwrap();
    assert_eq!(ring.try_put(4).unwrap().id, 2);
}

#[test]
fn a_woken_putter_that_gives_up_passes_its_slot_on() {
    let ring = Ring::new(Bound::Buffered(1));
    ring.try_put(1).unwrap();
    ring.register_putter();
    ring.register_putter();
    assert!(ring.try_get().unwrap().notify_putter);
    assert!(ring.pass_on_putter());
    assert_eq!(ring.try_put(9), Err(Refused::Full(9)));
    ring.put_reserved(2).unwrap();
    ring.try_get().unwrap();
    ring.try_put(3).unwrap();
    ring.register_putter();
    assert!(ring.try_get().unwrap().notify_putter);
    ring.unreserve_putter();
    ring.unregister_putter();
    // Relaxed: read on the only thread.
    let word = ring.consumers.head.load(Ordering::Relaxed);
    assert_eq!((waiting(word), pending(word)), (0, 0));
    assert_eq!(ring.try_put(4).unwrap().id, 3);
}

#[test]
fn the_drain_takes_reserved_items_too() {
    let ring = Ring::new(Bound::Buffered(2));
    ring.register_getter();
    assert!(ring.try_put(1).unwrap().notify_getter);
    assert_eq!(ring.drain(), [(0, 1)]);
    assert_eq!(ring.get_reserved().unwrap_err(), Nothing::Closed);
    assert!(!ring.pass_on_getter());
}

#[test]
fn more_waiters_than_the_field_holds_always_notify() {
    let ring = Ring::new(Bound::Buffered(4));
    // One reservation made before the field saturates.
    ring.register_getter();
    assert!(ring.try_put(0).unwrap().notify_getter);
    for _ in 0..FIELD_MAX + 3 {
        ring.register_getter();
    }
    for n in 1..4 {
        assert!(ring.try_put(n).unwrap().notify_getter);
    }
    // Saturated: nothing is reserved, not even the earlier reservation, and counting out
    // (in any way) does not undo the saturation or touch the tickets.
    assert_eq!(taken(&ring).1, 0);
    ring.unregister_getter();
    assert_eq!(ring.get_reserved().unwrap().item, 1);
    assert!(ring.pass_on_getter());
    ring.unreserve_getter();
    assert_eq!(taken(&ring).1, 2);
    assert_eq!(taken(&ring).1, 3);
    // Relaxed: read on the only thread.
    let word = ring.tail.0.load(Ordering::Relaxed);
    assert_eq!((waiting(word), pending(word)), (FIELD_MAX, 1));
    assert_eq!(ring.tickets(), 4);
    assert_eq!(ring.try_put(4).unwrap().id, 4);
}

#[test]
fn a_saturated_putter_count_reserves_no_slot() {
    let ring = Ring::new(Bound::Buffered(1));
    ring.try_put(0).unwrap();
    for _ in 0..FIELD_MAX + 1 {
        ring.register_putter();
    }
    assert!(ring.try_get().unwrap().notify_putter);
    // Nothing reserved: a barging put may take the slot; the woken putter counts out
    // without touching the word.
    assert_eq!(ring.try_put(1).unwrap().id, 1);
    ring.try_get().unwrap();
    assert_eq!(ring.put_reserved(2).unwrap().id, 2);
    ring.unreserve_putter();
    // Relaxed: read on the only thread.
    let word = ring.consumers.head.load(Ordering::Relaxed);
    assert_eq!((waiting(word), pending(word)), (FIELD_MAX, 0));
}

/// Counts drops; panics on the drop of the value `panics_at`.
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
        ring.try_put(Noisy {
            value,
            panics_at: 2,
            dropped: &dropped,
        })
        .ok()
        .unwrap();
    }
    // One item left the ring already; it is the caller's.
    drop(ring.try_get().unwrap());
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
        ring.try_put(Noisy {
            value,
            panics_at: u32::MAX,
            dropped: &dropped,
        })
        .ok()
        .unwrap();
        if value < 4 {
            drop(ring.try_get().unwrap());
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
                        match ring.try_get() {
                            Ok(taken) => got.push((taken.id, taken.item)),
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
                            match ring.try_put(item) {
                                Ok(_) => break,
                                Err(Refused::Full(back)) => {
                                    item = back;
                                    std::thread::yield_now();
                                }
                                Err(Refused::Closed(_)) => unreachable!("closed after puts"),
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
    assert!(!ring.end(total));
    assert!(ring.is_settled());
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
    let ring = Ring::counting(Bound::Buffered(128));
    let ring = core::hint::black_box(&ring);
    for n in 0..ops {
        let accepted = ring.try_put(n).ok().unwrap();
        let taken = ring.try_get().ok().unwrap();
        let notify_joiners = ring.end(1);
        // The peers' floors check the item and keep it; this one also checks the id and
        // that nobody needed a notification.
        assert!(accepted.id == taken.id && !(accepted.notify_getter || taken.notify_putter));
        assert!(!notify_joiners);
        core::hint::black_box(taken.item);
    }
    assert_eq!(ring.tickets(), ops);
    assert!(ring.is_settled());
}
