//! Unit tests of the batch claims; Miri runs them all.

extern crate std;

use alloc::vec;
use alloc::vec::Vec;

#[cfg(feature = "std")]
use super::super::Kind;
use super::super::{BoxedRing, TICKET_MASK};
use super::*;

/// Takes up to `max` items with nothing owed; (id, item) pairs.
fn get_many<T>(ring: &BoxedRing<T>, max: u64) -> Result<Vec<(u64, T)>, Nothing> {
    let mut out = Vec::new();
    ring.try_get_many(max, || 0, |id, item| out.push((id.get(), item)))?;
    Ok(out)
}

fn put_many<T>(ring: &BoxedRing<T>, items: &mut Vec<T>, owed: u64) -> Result<Vec<u64>, NoRoom> {
    let mut ids = Vec::with_capacity(items.len());
    ring.try_put_many(items, owed, &mut ids)?;
    Ok(ids.into_iter().map(JobId::get).collect())
}

#[test]
fn a_batch_takes_what_fits_and_leaves_the_rest() {
    for bound in [Bound::Buffered(3), Bound::Buffered(4), Bound::Unfinished(3)] {
        let ring = Ring::new(bound);
        let n = bound.get();
        let mut items: Vec<u64> = (0..6).collect();
        assert_eq!(
            put_many(&ring, &mut items, 0),
            Ok((0..n).collect()),
            "{bound:?}"
        );
        assert_eq!(items, (n..6).collect::<Vec<_>>(), "{bound:?}");
        assert_eq!(
            put_many(&ring, &mut items, 0),
            Err(NoRoom::Full),
            "{bound:?}"
        );
        assert_eq!(ring.len(), n);
        let taken = get_many(&ring, 2).unwrap();
        assert_eq!(taken, [(0, 0), (1, 1)], "{bound:?}");
        if matches!(bound, Bound::Unfinished(_)) {
            assert_eq!(
                put_many(&ring, &mut items, 0),
                Err(NoRoom::Full),
                "until endings"
            );
            ring.end(2, false);
        }
        assert_eq!(
            put_many(&ring, &mut items, 0),
            Ok(vec![n, n + 1]),
            "{bound:?}"
        );
        let rest = get_many(&ring, 10).unwrap();
        assert_eq!(rest.len() as u64, n, "{bound:?}");
        assert_eq!(get_many(&ring, 10), Err(Nothing::Empty));
        assert_eq!(ring.progress(), (n + 2, n + 2));
    }
}

#[test]
fn owed_slots_and_items_are_left_alone() {
    let ring = Ring::new(Bound::Buffered(4));
    let mut items = vec![1, 2, 3, 4];
    assert_eq!(put_many(&ring, &mut items, 3), Ok(vec![0]));
    assert_eq!(put_many(&ring, &mut items, 4), Err(NoRoom::Full));
    assert_eq!(put_many(&ring, &mut items, 1), Ok(vec![1, 2]));
    assert_eq!(items, [4]);
    let mut out = Vec::new();
    let owed = || 2;
    assert_eq!(
        ring.try_get_many(8, owed, |id, _| out.push(id.get())),
        Ok((1, 0))
    );
    assert_eq!(out, [0], "two left for the woken getters");
    assert_eq!(
        ring.try_get_many(8, owed, |_, _: i32| unreachable!()),
        Err(Nothing::Empty)
    );
}

#[test]
fn a_closed_ring_refuses_a_batch_and_ends_a_batch_get() {
    let ring = Ring::new(Bound::Buffered(4));
    let mut items = vec![1, 2];
    put_many(&ring, &mut items, 0).unwrap();
    ring.close();
    let mut more = vec![3];
    assert_eq!(put_many(&ring, &mut more, 0), Err(NoRoom::Closed));
    assert_eq!(more, [3]);
    assert_eq!(get_many(&ring, 8).unwrap(), [(0, 1), (1, 2)]);
    assert_eq!(get_many(&ring, 8), Err(Nothing::Closed));
}

#[test]
#[cfg(feature = "std")]
fn a_batch_counts_as_many_notifications_as_waiters_without_one() {
    let ring = Ring::new(Bound::Buffered(8));
    let getters = ring.counted(Kind::Getters);
    for _ in 0..3 {
        getters.count_in();
    }
    let mut ids = Vec::with_capacity(2);
    assert_eq!(ring.try_put_many(&mut vec![1, 2], 0, &mut ids), Ok((2, 2)));
    assert_eq!(getters.pending(), 2);
    let mut ids = Vec::with_capacity(4);
    assert_eq!(
        ring.try_put_many(&mut vec![3, 4, 5, 6], 0, &mut ids),
        Ok((4, 1))
    );
    assert_eq!((getters.count(), getters.pending()), (3, 3));
    for _ in 0..3 {
        getters.count_out_notified();
    }
    assert_eq!((getters.count(), getters.pending()), (0, 0));

    let ring = Ring::new(Bound::Buffered(2));
    ring.try_put_many(&mut vec![1, 2], 0, &mut Vec::with_capacity(2))
        .unwrap();
    let putters = ring.counted(Kind::Putters);
    putters.count_in();
    assert_eq!(
        ring.try_get_many(2, || 0, |_, _| {}),
        Ok((2, 1)),
        "one waiter, two slots"
    );
    putters.count_out_notified();
    assert_eq!((putters.count(), putters.pending()), (0, 0));
}

/// Batches across the end of the slot array and across the 39-bit wrap of the tickets.
#[test]
fn batches_cross_the_slot_array_and_the_ticket_wrap() {
    let start = TICKET_MASK - 6;
    let ring = Ring::starting_at(Bound::Buffered(4), start);
    let mut next = 0u64;
    let mut expected = start;
    for round in 0..12 {
        let size = 1 + round % 4;
        let mut items: Vec<u64> = (next..next + size).collect();
        let ids = put_many(&ring, &mut items, 0).unwrap();
        assert_eq!(ids, (0..size).map(|i| expected + i).collect::<Vec<_>>());
        let taken = get_many(&ring, 4).unwrap();
        let want: Vec<_> = (0..size).map(|i| (expected + i, next + i)).collect();
        assert_eq!(taken, want);
        next += size;
        expected += size;
    }
    assert!(ring.progress().1 > TICKET_MASK + 1);
    assert_eq!(ring.len(), 0);
}

/// Dropping a ring after batches drops exactly the items still buffered.
#[test]
fn batch_items_are_dropped_once() {
    use alloc::rc::Rc;
    let counter = Rc::new(());
    let ring = Ring::new(Bound::Buffered(8));
    let mut items: Vec<_> = (0..6).map(|_| Rc::clone(&counter)).collect();
    put_many(&ring, &mut items, 0).unwrap();
    let taken = get_many(&ring, 4).unwrap();
    assert_eq!(Rc::strong_count(&counter), 7);
    drop(taken);
    assert_eq!(Rc::strong_count(&counter), 3);
    drop(ring);
    assert_eq!(Rc::strong_count(&counter), 1);
}

/// Two batch producers and two batch consumers on threads: every item once, ids
/// contiguous.
#[test]
fn batch_producers_and_consumers_on_threads_lose_and_duplicate_nothing() {
    use alloc::sync::Arc;
    let per: u64 = if cfg!(miri) { 40 } else { 20_000 };
    let ring: Arc<BoxedRing<u64>> = Arc::new(Ring::new(Bound::Buffered(8)));
    let producers: Vec<_> = (0..2)
        .map(|p| {
            let ring = Arc::clone(&ring);
            std::thread::spawn(move || {
                let mut items: Vec<u64> = Vec::new();
                let mut ids = Vec::new();
                let mut next = p * per;
                while next < (p + 1) * per || !items.is_empty() {
                    if items.is_empty() {
                        let end = (next + 5).min((p + 1) * per);
                        items.extend(next..end);
                        next = end;
                    }
                    ids.reserve(items.len());
                    if ring.try_put_many(&mut items, 0, &mut ids).is_err() {
                        std::thread::yield_now();
                    }
                }
                ids
            })
        })
        .collect();
    let consumers: Vec<_> = (0..2)
        .map(|_| {
            let ring = Arc::clone(&ring);
            std::thread::spawn(move || {
                let mut seen = Vec::new();
                loop {
                    match ring.try_get_many(3, || 0, |id, item| seen.push((id.get(), item))) {
                        Ok(_) => {}
                        Err(Nothing::Closed) => return seen,
                        Err(Nothing::Empty) => std::thread::yield_now(),
                    }
                }
            })
        })
        .collect();
    let mut ids: Vec<u64> = producers
        .into_iter()
        .flat_map(|p| p.join().unwrap().into_iter().map(JobId::get))
        .collect();
    ring.close();
    let mut seen: Vec<(u64, u64)> = consumers
        .into_iter()
        .flat_map(|c| c.join().unwrap())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..2 * per).collect::<Vec<_>>());
    seen.sort_unstable();
    let items: alloc::collections::BTreeSet<u64> = seen.iter().map(|s| s.1).collect();
    assert_eq!(items.len() as u64, 2 * per);
    assert_eq!(seen.iter().map(|s| s.0).collect::<Vec<_>>(), ids);
}
