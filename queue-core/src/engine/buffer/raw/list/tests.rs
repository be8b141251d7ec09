//! Unit tests of the block list, single-threaded unless named otherwise; Miri runs them
//! all.

extern crate std;

use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize as StdAtomicUsize, Ordering as StdOrdering};

use super::*;

fn taken<T>(list: &List<T>) -> (u64, T) {
    let taken = list.try_get(|| 0).expect("an item");
    assert_eq!(taken.putters, Wake::No);
    assert!(!taken.last);
    (taken.id.get(), taken.item)
}

#[test]
fn a_block_of_u64_costs_under_ten_bytes_a_slot() {
    let size = core::mem::size_of::<Block<u64>>();
    assert!(size * 10 <= CAP * 100, "{size} bytes for {CAP} slots");
}

#[test]
fn items_come_out_in_order_with_contiguous_ids_across_blocks() {
    let list = List::new();
    let n = 3 * CAP as u64 + 5;
    for i in 0..n {
        assert_eq!(list.try_put(i * 10).unwrap(), (JobId::new(i), Wake::No));
    }
    assert_eq!(list.len(), n);
    assert_eq!(list.progress(), (0, n));
    for i in 0..n {
        assert_eq!(taken(&list), (i, i * 10));
    }
    assert_eq!(list.try_get(|| 0).unwrap_err(), Nothing::Empty);
    assert_eq!(list.progress(), (n, n));
    assert_eq!(list.len(), 0);
}

#[test]
fn puts_and_gets_interleaved_cross_blocks_one_item_at_a_time() {
    let list = List::new();
    for i in 0..4 * CAP as u64 {
        list.try_put(i).unwrap();
        assert_eq!(taken(&list), (i, i));
        assert_eq!(list.try_get(|| 0).unwrap_err(), Nothing::Empty);
    }
}

#[test]
fn a_closed_list_refuses_puts_and_drains_in_order() {
    let list = List::new();
    for i in 0..CAP as u64 + 2 {
        list.try_put(i).unwrap();
    }
    taken(&list);
    let drained = list.drain();
    assert_eq!(drained.len(), CAP + 1);
    assert!(drained
        .iter()
        .enumerate()
        .all(|(i, &(id, item))| id == i as u64 + 1 && item == id));
    assert_eq!(list.try_put(7), Err(PutRefused::Closed(7)));
    assert_eq!(list.try_get(|| 0).unwrap_err(), Nothing::Closed);
    assert!(list.is_closed());
    assert!(!list.close(), "already closed");
    assert_eq!(list.progress(), (CAP as u64 + 2, CAP as u64 + 2));
}

#[test]
fn items_owed_to_woken_getters_are_left_alone() {
    let list = List::new();
    list.try_put('a').unwrap();
    assert_eq!(list.try_get(|| 1).unwrap_err(), Nothing::Empty);
    list.try_put('b').unwrap();
    assert_eq!(
        list.try_get(|| 1).unwrap().item,
        'a',
        "two buffered, one owed"
    );
    assert_eq!(list.try_get(|| 1).unwrap_err(), Nothing::Empty);
    assert_eq!(list.try_get(|| 0).unwrap().item, 'b');
}

#[test]
fn a_put_tells_its_caller_to_wake_a_counted_getter_once() {
    let list = List::new();
    let getters = list.counted(Kind::Getters);
    getters.count_in();
    assert_eq!(list.try_put(1).unwrap().1, Wake::Reserved);
    assert_eq!(
        list.try_put(2).unwrap().1,
        Wake::No,
        "one notification is coming"
    );
    getters.count_out_notified();
    assert_eq!(list.try_put(3).unwrap().1, Wake::No);
}

#[test]
fn endings_settle_and_read_the_joiners() {
    let list = List::new();
    for i in 0..3 {
        list.try_put(i).unwrap();
        taken(&list);
    }
    assert_eq!(list.unfinished(), 3);
    assert_eq!(list.end(1), None, "nobody to tell");
    let joiners = list.counted(Kind::Joiners);
    joiners.count_in();
    assert_eq!(list.end(1), Some((false, true)));
    assert_eq!(list.end(1), Some((true, true)));
    joiners.count_out();
    assert_eq!(list.unfinished(), 0);
    assert_eq!(list.ended(), 3);
}

#[test]
fn a_watched_list_looks_at_settling_on_every_ending() {
    let mut list = List::new();
    for i in 0..3 {
        list.try_put(i).unwrap();
        taken(&list);
    }
    assert_eq!(list.end(1), None, "not watched: nobody to tell");
    list.watch_settled(true);
    assert_eq!(list.end(1), Some((false, false)));
    assert_eq!(list.end(1), Some((true, false)), "the last one settles");
    assert_eq!(list.ended(), 3, "the flag is no ending");
    list.watch_settled(false);
    list.try_put(3).unwrap();
    taken(&list);
    assert_eq!(list.end(1), None);
    assert_eq!(list.unfinished(), 0);
}

#[test]
fn counts_are_full_64_bit_across_the_wrap() {
    let start = TICKET_MASK - CAP as u64 - 3;
    let list = List::starting_at(start);
    let n = 2 * CAP as u64 + 9;
    for i in 0..n {
        assert_eq!(list.try_put(i).unwrap().0, JobId::new(start + i));
    }
    assert_eq!(list.progress(), (start, start + n));
    for i in 0..n {
        assert_eq!(taken(&list), (start + i, i));
        assert_eq!(list.progress(), (start + i + 1, start + n));
    }
    list.end(n);
    assert_eq!(list.ended(), start + n);
    assert_eq!(list.unfinished(), 0);
}

#[test]
fn dropping_the_list_drops_every_buffered_item_once() {
    static DROPS: StdAtomicUsize = StdAtomicUsize::new(0);
    struct Counted;
    impl Drop for Counted {
        fn drop(&mut self) {
            DROPS.fetch_add(1, StdOrdering::Relaxed);
        }
    }
    let list = List::new();
    for _ in 0..2 * CAP + 3 {
        assert!(list.try_put(Counted).is_ok());
    }
    for _ in 0..CAP + 1 {
        assert!(list.try_get(|| 0).is_ok());
    }
    assert_eq!(DROPS.load(StdOrdering::Relaxed), CAP + 1);
    drop(list);
    assert_eq!(DROPS.load(StdOrdering::Relaxed), 2 * CAP + 3);
}

#[test]
fn a_panicking_drop_leaves_the_other_items_dropped() {
    static DROPS: StdAtomicUsize = StdAtomicUsize::new(0);
    struct Bomb(bool);
    impl Drop for Bomb {
        fn drop(&mut self) {
            DROPS.fetch_add(1, StdOrdering::Relaxed);
            assert!(!self.0, "boom");
        }
    }
    let list = List::new();
    for i in 0..CAP + 2 {
        assert!(list.try_put(Bomb(i == 1)).is_ok());
    }
    let outcome = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| drop(list)));
    assert!(outcome.is_err());
    assert_eq!(DROPS.load(StdOrdering::Relaxed), CAP + 2);
}

#[test]
fn racing_producers_and_consumers_move_every_item_once() {
    let list = List::new();
    let per = if cfg!(miri) { 40 } else { 20_000 };
    let producers = 2;
    let sums: Vec<(u64, u64)> = std::thread::scope(|s| {
        for p in 0..producers {
            let list = &list;
            s.spawn(move || {
                for i in 0..per {
                    list.try_put(p * per + i).unwrap();
                }
            });
        }
        let consumers: Vec<_> = (0..2)
            .map(|_| {
                let list = &list;
                s.spawn(move || {
                    let (mut count, mut sum) = (0u64, 0u64);
                    let mut last_seen = [None::<u64>; 2];
                    while count < per {
                        if let Ok(taken) = list.try_get(|| 0) {
                            // Each producer's items come out in its order.
                            let p = (taken.item / per) as usize;
                            assert!(last_seen[p].is_none_or(|last| last < taken.item));
                            last_seen[p] = Some(taken.item);
                            count += 1;
                            sum += taken.item;
                        } else {
                            std::thread::yield_now();
                        }
                    }
                    (count, sum)
                })
            })
            .collect();
        consumers.into_iter().map(|c| c.join().unwrap()).collect()
    });
    let total = producers * per;
    assert_eq!(sums.iter().map(|s| s.0).sum::<u64>(), total);
    assert_eq!(
        sums.iter().map(|s| s.1).sum::<u64>(),
        total * (total - 1) / 2
    );
    assert_eq!(list.progress(), (total, total));
}
