//! loom models of the block list. Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test --release -p tally-queue --lib`.
//!
//! Blocks hold two slots under loom ([`CAP`]), so three items cross a block boundary: the
//! put of a block's last slot links the next block, the get of it moves the head and
//! frees the block. The items are loom `UnsafeCell`s (`crate::sync::Cell`), so every model
//! also checks that no item is read and written concurrently; a freed block is kept under
//! loom and its items written by the free, so an access after the free is such a race.

extern crate std;

use alloc::sync::Arc;
use alloc::vec::Vec;

use loom::thread;

use super::*;

/// Takes with no item owed to anyone, yielding to the model on `Empty` until an item or
/// `Closed`.
fn get_spinning<T>(list: &List<T>) -> Option<(u64, T)> {
    loop {
        match list.try_get(|| 0) {
            Ok(taken) => return Some((taken.id.get(), taken.item)),
            Err(Nothing::Closed) => return None,
            Err(Nothing::Empty) => thread::yield_now(),
        }
    }
}

/// A producer crossing a block boundary against a consumer: the consumer waits for the
/// link (its get of the block's last slot moves the head) and frees the first block while
/// the producer writes into the second. Items come out in order under contiguous ids.
#[test]
fn put_and_get_across_a_block_boundary() {
    loom::model(|| {
        let list = Arc::new(List::new());
        let producer = {
            let list = Arc::clone(&list);
            thread::spawn(move || {
                (0..3u32)
                    .map(|item| list.try_put(item).ok().unwrap().0.get())
                    .collect::<Vec<_>>()
            })
        };
        let got: Vec<_> = (0..3).map(|_| get_spinning(&list).unwrap()).collect();
        assert_eq!(got, [(0, 0), (1, 1), (2, 2)]);
        assert_eq!(producer.join().unwrap(), [0, 1, 2]);
        assert_eq!(list.progress(), (3, 3));
    });
}

/// Two getters over one block: the one that takes the block's last slot frees the block
/// only after the other has read its item out (loom checks the cells), and each item is
/// taken once.
#[test]
fn two_gets_and_the_free_of_their_block() {
    loom::model(|| {
        let list = Arc::new(List::new());
        for item in [10u32, 20, 30] {
            list.try_put(item).ok().unwrap();
        }
        let other = {
            let list = Arc::clone(&list);
            thread::spawn(move || list.try_get(|| 0).ok().map(|t| (t.id.get(), t.item)))
        };
        let mine = list.try_get(|| 0).ok().map(|t| (t.id.get(), t.item));
        let theirs = other.join().unwrap();
        let mut both = [mine.unwrap(), theirs.unwrap()];
        both.sort_unstable();
        assert_eq!(both, [(0, 10), (1, 20)]);
        assert_eq!(get_spinning(&list), Some((2, 30)));
    });
}

/// Two puts racing for a block's last slot and the first of the next: the put that takes
/// the last slot links the next block while the other waits for the move, and a get
/// takes both in ticket order.
#[test]
fn two_puts_across_a_block_boundary() {
    loom::model(|| {
        let list = Arc::new(List::new());
        list.try_put(0u32).ok().unwrap();
        let producers: Vec<_> = [1u32, 2]
            .into_iter()
            .map(|item| {
                let list = Arc::clone(&list);
                thread::spawn(move || list.try_put(item).ok().unwrap().0.get())
            })
            .collect();
        assert_eq!(get_spinning(&list), Some((0, 0)));
        let first = get_spinning(&list).unwrap();
        let second = get_spinning(&list).unwrap();
        let mut ids: Vec<u64> = producers.into_iter().map(|p| p.join().unwrap()).collect();
        ids.sort_unstable();
        assert_eq!(ids, [1, 2]);
        assert_eq!((first.0, second.0), (1, 2));
        assert_eq!(first.1 + second.1, 3);
    });
}

/// put vs close vs get at a block boundary: an accepted item is delivered, a refused one
/// comes back, and the getter sees `Closed` only once nothing accepted is left; a put
/// that claimed its ticket before the close is waited for.
#[test]
fn put_vs_close_vs_get_at_a_block_boundary() {
    loom::model(|| {
        let list = Arc::new(List::new());
        list.try_put(0u32).ok().unwrap();
        let producer = {
            let list = Arc::clone(&list);
            thread::spawn(move || list.try_put(1).is_ok())
        };
        let closer = {
            let list = Arc::clone(&list);
            thread::spawn(move || list.close())
        };
        let mut got = Vec::new();
        while let Some((id, item)) = get_spinning(&list) {
            got.push((id, item));
        }
        let accepted = producer.join().unwrap();
        assert!(closer.join().unwrap());
        let expected: &[(u64, u32)] = if accepted {
            &[(0, 0), (1, 1)]
        } else {
            &[(0, 0)]
        };
        assert_eq!(got, expected);
        assert_eq!(list.try_put(2), Err(PutRefused::Closed(2)));
    });
}

/// A get that registers to wait against a put: either the put counts the getter in its
/// claim (and tells its caller to notify), or the getter's re-check after registering
/// finds the item; never neither.
#[test]
fn registering_getter_vs_put() {
    loom::model(|| {
        let list = Arc::new(List::new());
        list.try_put(0u32).ok().unwrap();
        assert_eq!(get_spinning(&list), Some((0, 0)));
        let producer = {
            let list = Arc::clone(&list);
            thread::spawn(move || list.try_put(1).ok().unwrap().1)
        };
        let getters = list.counted(Kind::Getters);
        getters.count_in();
        let rechecked = list.try_get(|| 0).ok().map(|t| t.item);
        let wake = producer.join().unwrap();
        assert!(
            rechecked == Some(1) || wake == Wake::Reserved,
            "the item is seen or the getter is notified"
        );
    });
}

/// Two endings on a list that watches for settling, with no joiner: each reads the flag in
/// its own `fetch_add`, so both look at settling, and exactly one (the last in the word's
/// order) reads the list settled.
#[test]
fn watched_endings_settle_once() {
    loom::model(|| {
        let mut list = List::new();
        list.watch_settled(true);
        list.try_put(1u8).unwrap();
        list.try_put(2u8).unwrap();
        get_spinning(&list).unwrap();
        get_spinning(&list).unwrap();
        let list = Arc::new(list);
        let other = {
            let list = Arc::clone(&list);
            thread::spawn(move || list.end(1))
        };
        let mine = list.end(1).expect("watched");
        let theirs = other.join().unwrap().expect("watched");
        assert_eq!((mine.1, theirs.1), (false, false), "no joiner");
        assert!(
            mine.0 ^ theirs.0,
            "settled exactly once: {mine:?} {theirs:?}"
        );
        assert_eq!(list.unfinished(), 0);
        assert_eq!(list.ended(), 2, "the flag is no ending");
    });
}

/// A watched ending vs a put: whichever way the ending read `tail` (settled or not, both
/// are right for their order), the counts after both are one ending and one unfinished
/// item, and the put's item's own ending then settles the list.
#[test]
fn watched_ending_vs_put() {
    loom::model(|| {
        let mut list = List::new();
        list.watch_settled(true);
        list.try_put(1u8).unwrap();
        get_spinning(&list).unwrap();
        let list = Arc::new(list);
        let putter = {
            let list = Arc::clone(&list);
            thread::spawn(move || list.try_put(2u8).is_ok())
        };
        let (_, joiners) = list.end(1).expect("watched");
        assert!(!joiners);
        assert!(putter.join().unwrap());
        assert_eq!(list.unfinished(), 1);
        assert_eq!(list.ended(), 1);
        assert_eq!(get_spinning(&list).map(|(_, item)| item), Some(2));
        assert_eq!(list.end(1), Some((true, false)), "the last ending settles");
    });
}
