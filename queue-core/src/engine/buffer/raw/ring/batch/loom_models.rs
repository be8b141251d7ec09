//! loom models of the batch claims. Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test --release -p tally-queue --lib`.
//!
//! The slots' entries are loom `UnsafeCell`s, so every model also checks that no entry is
//! read and written concurrently: a batch claim moves several entries between its claim
//! and its last publication.

extern crate std;

use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;

use loom::thread;

use super::super::BoxedRing;
use super::*;

/// Takes a batch of up to `max` with nothing owed, yielding to the model on `Empty`, until
/// it has some (a batch takes the items written so far: the first claimed and unwritten
/// one ends it) or the ring is closed and empty.
fn get_many_spinning<T>(ring: &BoxedRing<T>, max: u64) -> Vec<(u64, T)> {
    loop {
        let mut out = Vec::new();
        match ring.try_get_many(max, || 0, |id, item| out.push((id.get(), item))) {
            Ok(_) => return out,
            Err(Nothing::Closed) => return out,
            Err(Nothing::Empty) => thread::yield_now(),
        }
    }
}

/// Puts the whole vector with nothing owed, yielding on `Full`; returns the ids.
fn put_many_spinning<T>(ring: &BoxedRing<T>, mut items: Vec<T>) -> Vec<u64> {
    let mut ids = Vec::with_capacity(items.len());
    while !items.is_empty() {
        if ring.try_put_many(&mut items, 0, &mut ids).is_err() {
            thread::yield_now();
        }
    }
    ids.into_iter().map(JobId::get).collect()
}

/// A batch put racing a single put, and a batch get: tickets are drawn in one block per
/// claim, every item comes out once, in ticket order.
#[test]
fn batch_put_vs_put_vs_batch_get() {
    loom::model(|| {
        let ring: Arc<BoxedRing<u32>> = Arc::new(Ring::new(Bound::Buffered(4)));
        let batch = {
            let ring = Arc::clone(&ring);
            thread::spawn(move || put_many_spinning(&ring, vec![1, 2]))
        };
        let single = {
            let ring = Arc::clone(&ring);
            thread::spawn(move || ring.try_put(3, 0).ok().unwrap().0.get())
        };
        let mut seen = Vec::new();
        while seen.len() < 3 {
            seen.extend(get_many_spinning(&ring, 3));
        }
        let ids = batch.join().unwrap();
        let lone = single.join().unwrap();
        assert_eq!(ids[1], ids[0] + 1, "one claim, two contiguous tickets");
        assert!(lone == 0 || lone == 2);
        assert_eq!(seen.iter().map(|s| s.0).collect::<Vec<_>>(), [0, 1, 2]);
        let mut items: Vec<u32> = seen.iter().map(|s| s.1).collect();
        items.sort_unstable();
        assert_eq!(items, [1, 2, 3]);
    });
}

/// A full ring of two slots: a batch put of two waits for the batch get that frees both,
/// and writes each slot only after the get has read the old item out (the entries'
/// accesses are checked), lap after lap.
#[test]
fn batch_slot_reuse_across_threads() {
    loom::model(|| {
        let ring: Arc<BoxedRing<u32>> = Arc::new(Ring::new(Bound::Buffered(2)));
        put_many_spinning(&ring, vec![1, 2]);
        let producer = {
            let ring = Arc::clone(&ring);
            thread::spawn(move || put_many_spinning(&ring, vec![3, 4]))
        };
        let mut seen = Vec::new();
        while seen.len() < 4 {
            seen.extend(get_many_spinning(&ring, 2));
            assert!(ring.len() <= 2);
        }
        assert_eq!(producer.join().unwrap(), [2, 3]);
        assert_eq!(seen, [(0, 1), (1, 2), (2, 3), (3, 4)]);
    });
}

/// A batch put vs close vs a batch get: the items of the claim are delivered if it came
/// first, and refused (left with the caller) if the close did; the getter sees `Closed`
/// only once nothing claimed is left.
#[test]
fn batch_put_vs_close_vs_batch_get() {
    loom::model(|| {
        let ring: Arc<BoxedRing<u32>> = Arc::new(Ring::new(Bound::Buffered(4)));
        let producer = {
            let ring = Arc::clone(&ring);
            thread::spawn(move || {
                let mut items = vec![1, 2];
                let mut ids = Vec::with_capacity(2);
                let result = ring.try_put_many(&mut items, 0, &mut ids);
                (result, items)
            })
        };
        let closer = {
            let ring = Arc::clone(&ring);
            thread::spawn(move || {
                ring.close();
            })
        };
        closer.join().unwrap();
        let mut got = Vec::new();
        loop {
            match ring.try_get_many(4, || 0, |id, item| got.push((id.get(), item))) {
                Ok(_) => {}
                Err(Nothing::Closed) => break,
                Err(Nothing::Empty) => unreachable!("the ring is closed"),
            }
        }
        let (result, left) = producer.join().unwrap();
        match result {
            Ok((2, _)) => {
                assert!(left.is_empty());
                assert_eq!(got, [(0, 1), (1, 2)]);
            }
            Err(NoRoom::Closed) => {
                assert_eq!(left, [1, 2]);
                assert!(got.is_empty());
            }
            other => panic!("unexpected {other:?}"),
        }
    });
}
