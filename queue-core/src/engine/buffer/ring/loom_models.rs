//! loom models of the ring. Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test --release -p tally-queue --lib`.
//!
//! The slots' entries are loom `UnsafeCell`s (`crate::sync::Cell`), so every model also
//! checks that no entry is read and written concurrently. A stand-in for event-listener
//! (a flag plus `park`/`unpark`) plays the notification, so a lost wake-up shows as a
//! deadlock.

extern crate std;

use alloc::sync::Arc;
use alloc::vec::Vec;

use loom::sync::{Condvar, Mutex};
use loom::thread;

use super::*;

/// Spins on `try_get` (yielding to the model) until an item or `Closed`.
fn get_spinning<T>(ring: &BoxedRing<T>) -> Option<(u64, T)> {
    loop {
        match ring.try_get() {
            Ok(taken) => return Some((taken.id, taken.item)),
            Err(Nothing::Closed) => return None,
            Err(Nothing::Empty) => thread::yield_now(),
        }
    }
}

/// Two racing puts and a get: each item is delivered once, ids are the two first tickets,
/// and they come out in ticket order.
#[test]
fn two_puts_and_a_get() {
    loom::model(|| {
        let ring = Arc::new(Ring::new(Bound::Buffered(2)));
        let producers: Vec<_> = [10u32, 20]
            .into_iter()
            .map(|item| {
                let ring = Arc::clone(&ring);
                thread::spawn(move || ring.try_put(item).ok().unwrap().id)
            })
            .collect();
        let first = get_spinning(&ring).unwrap();
        let second = get_spinning(&ring).unwrap();
        let mut ids: Vec<u64> = producers.into_iter().map(|p| p.join().unwrap()).collect();
        ids.sort_unstable();
        assert_eq!(ids, [0, 1]);
        assert_eq!((first.0, second.0), (0, 1));
        assert_eq!(first.1 + second.1, 30);
    });
}

/// A full ring of one slot: the put that waits for the slot writes it only after the get
/// has read it out (loom checks the entry's accesses).
#[test]
fn slot_reuse_across_threads() {
    loom::model(|| {
        let ring = Arc::new(Ring::new(Bound::Buffered(1)));
        ring.try_put(1u32).ok().unwrap();
        let producer = {
            let ring = Arc::clone(&ring);
            thread::spawn(move || {
                let mut item = 2u32;
                loop {
                    match ring.try_put(item) {
                        Ok(accepted) => return accepted.id,
                        Err(Refused::Full(back)) => {
                            item = back;
                            thread::yield_now();
                        }
                        Err(Refused::Closed(_)) => unreachable!(),
                    }
                }
            })
        };
        assert_eq!(get_spinning(&ring), Some((0, 1)));
        assert_eq!(get_spinning(&ring), Some((1, 2)));
        assert_eq!(producer.join().unwrap(), 1);
    });
}

/// A counting ring bound at its slot count checks room by the slot's stamp alone: a put
/// racing the gets that free its slot writes it only after the get of the item one lap
/// back has read it out (loom checks the entry's accesses), and never buffers more than
/// the bound.
#[test]
fn stamp_bound_slot_reuse() {
    loom::model(|| {
        let ring = Arc::new(Ring::counting(Bound::Buffered(2)));
        ring.try_put(1u32).ok().unwrap();
        ring.try_put(2u32).ok().unwrap();
        assert!(matches!(ring.try_put(9), Err(Refused::Full(9))));
        let producer = {
            let ring = Arc::clone(&ring);
            thread::spawn(move || {
                let mut item = 3u32;
                loop {
                    match ring.try_put(item) {
                        Ok(accepted) => return accepted.id,
                        Err(Refused::Full(back)) => {
                            item = back;
                            thread::yield_now();
                        }
                        Err(Refused::Closed(_)) => unreachable!(),
                    }
                }
            })
        };
        assert_eq!(get_spinning(&ring), Some((0, 1)));
        assert!(ring.len() <= 2);
        assert_eq!(get_spinning(&ring), Some((1, 2)));
        assert_eq!(get_spinning(&ring), Some((2, 3)));
        assert_eq!(producer.join().unwrap(), 2);
    });
}

/// put vs close vs get: an accepted item is delivered; a refused one comes back, and the
/// getter then sees `Closed`.
#[test]
fn put_vs_close_vs_get() {
    loom::model(|| {
        let ring = Arc::new(Ring::new(Bound::Buffered(2)));
        let producer = {
            let ring = Arc::clone(&ring);
            thread::spawn(move || ring.try_put(7u32).is_ok())
        };
        let getter = {
            let ring = Arc::clone(&ring);
            thread::spawn(move || get_spinning(&ring))
        };
        ring.close();
        let accepted = producer.join().unwrap();
        let got = getter.join().unwrap();
        assert_eq!(got.map(|(_, item)| item), accepted.then_some(7));
        assert_eq!(ring.tickets(), u64::from(accepted));
    });
}

/// The drain of an immediate shutdown vs a get: each buffered item leaves exactly once.
#[test]
fn drain_vs_get() {
    loom::model(|| {
        let ring = Arc::new(Ring::new(Bound::Buffered(2)));
        ring.try_put(1u32).ok().unwrap();
        ring.try_put(2u32).ok().unwrap();
        let getter = {
            let ring = Arc::clone(&ring);
            thread::spawn(move || ring.try_get().ok().map(|taken| taken.item))
        };
        let drained: u32 = ring.drain().into_iter().map(|(_, item)| item).sum();
        let got = getter.join().unwrap().unwrap_or(0);
        assert_eq!(drained + got, 3);
    });
}

/// A notification as event-listener gives it to a registered listener: stored if the
/// waiter is not asleep yet, never spurious (a flag under a mutex, and a condition
/// variable, as the `parking` crate builds its parker under loom).
struct Bell {
    rung: Mutex<bool>,
    cvar: Condvar,
}

impl Bell {
    fn new() -> Self {
        Bell {
            rung: Mutex::new(false),
            cvar: Condvar::new(),
        }
    }

    fn ring(&self) {
        *self.rung.lock().unwrap() = true;
        self.cvar.notify_one();
    }

    fn wait(&self) {
        let mut rung = self.rung.lock().unwrap();
        while !*rung {
            rung = self.cvar.wait(rung).unwrap();
        }
        *rung = false;
    }
}

/// A getter that registers, re-checks and sleeps, against two puts: no wake-up is lost (a
/// lost one deadlocks the model), and a woken getter always finds the item reserved for it.
#[test]
fn registration_vs_puts() {
    loom::model(|| {
        let ring = Arc::new(Ring::new(Bound::Buffered(2)));
        let bell = Arc::new(Bell::new());
        let waiter = {
            let (ring, bell) = (Arc::clone(&ring), Arc::clone(&bell));
            thread::spawn(move || {
                if let Ok(taken) = ring.try_get() {
                    return taken.item;
                }
                ring.register_getter();
                if let Ok(taken) = ring.try_get() {
                    ring.unregister_getter();
                    return taken.item;
                }
                bell.wait();
                ring.get_reserved()
                    .expect("a woken getter finds its reserved item")
                    .item
            })
        };
        for item in [1u32, 2] {
            if ring.try_put(item).ok().unwrap().notify_getter {
                bell.ring();
            }
        }
        let got = waiter.join().unwrap();
        let left: u32 = ring.drain().into_iter().map(|(_, item)| item).sum();
        assert_eq!(got + left, 3);
        assert_eq!(got, 1, "the waiter gets the oldest item");
    });
}

/// A woken getter against a barging get: the barger never takes the reserved item, and the
/// woken getter always finds it. (The puts run before the threads start:
/// two threads spinning on a put that the model never schedules are a livelock of the
/// model, not of the ring; `registration_vs_puts` covers puts racing a waiter.)
#[test]
fn woken_getter_vs_barging_get() {
    loom::model(|| {
        let ring = Arc::new(Ring::new(Bound::Buffered(2)));
        // A registered getter, then two puts: the first reserves its item and notifies.
        ring.register_getter();
        assert!(ring.try_put(1u32).ok().unwrap().notify_getter);
        assert!(!ring.try_put(2u32).ok().unwrap().notify_getter);
        let woken = {
            let ring = Arc::clone(&ring);
            thread::spawn(move || {
                ring.get_reserved()
                    .expect("a woken getter finds its reserved item")
                    .item
            })
        };
        let barger = {
            let ring = Arc::clone(&ring);
            thread::spawn(move || ring.try_get().ok().map(|taken| taken.item))
        };
        let barged = barger.join().unwrap();
        let got = woken.join().unwrap();
        // The barger may find nothing only while the woken getter is between its claim
        // and its count-out (see `Ring::get_reserved`); the item then stays buffered.
        let left: u32 = ring.drain().into_iter().map(|(_, item)| item).sum();
        assert_eq!(barged.unwrap_or(0) + got + left, 3);
        assert_eq!(barged.is_none(), left > 0);
    });
}

/// A putter waiting for a slot on a full ring against a get: the get's claim either counts
/// the putter (and reserves the slot for it) or the putter's re-check finds the slot.
#[test]
fn putter_registration_vs_get() {
    loom::model(|| {
        let ring = Arc::new(Ring::new(Bound::Buffered(1)));
        ring.try_put(1u32).ok().unwrap();
        let bell = Arc::new(Bell::new());
        let putter = {
            let (ring, bell) = (Arc::clone(&ring), Arc::clone(&bell));
            thread::spawn(move || {
                let item = match ring.try_put(2u32) {
                    Ok(accepted) => return accepted.id,
                    Err(Refused::Full(item)) => item,
                    Err(Refused::Closed(_)) => unreachable!(),
                };
                ring.register_putter();
                let item = match ring.try_put(item) {
                    Ok(accepted) => {
                        ring.unregister_putter();
                        return accepted.id;
                    }
                    Err(Refused::Full(item)) => item,
                    Err(Refused::Closed(_)) => unreachable!(),
                };
                bell.wait();
                ring.put_reserved(item)
                    .expect("a woken putter finds its reserved slot")
                    .id
            })
        };
        let taken = ring.try_get().unwrap();
        if taken.notify_putter {
            bell.ring();
        }
        assert_eq!(putter.join().unwrap(), 1);
        assert_eq!(get_spinning(&ring), Some((1, 2)));
    });
}

/// Two endings vs a joiner that registers, re-checks and sleeps: the ending that settles
/// the ring sees the joiner, or the joiner's re-check sees it settled.
#[test]
fn endings_vs_joiner() {
    loom::model(|| {
        let ring = Arc::new(Ring::new(Bound::Buffered(2)));
        ring.try_put(1u32).ok().unwrap();
        ring.try_put(2u32).ok().unwrap();
        ring.try_get().unwrap();
        ring.try_get().unwrap();
        let bell = Arc::new(Bell::new());
        let joiner = {
            let (ring, bell) = (Arc::clone(&ring), Arc::clone(&bell));
            thread::spawn(move || {
                ring.register_joiner();
                if !ring.is_settled() {
                    bell.wait();
                    assert!(ring.is_settled());
                }
                ring.unregister_joiner();
            })
        };
        let ender = {
            let (ring, bell) = (Arc::clone(&ring), Arc::clone(&bell));
            thread::spawn(move || {
                if ring.end(1) {
                    bell.ring();
                }
            })
        };
        if ring.end(1) {
            bell.ring();
        }
        ender.join().unwrap();
        joiner.join().unwrap();
        assert!(ring.is_settled());
    });
}

/// A woken getter that gives up passes its reservation to the other registered (sleeping)
/// getter, against a barging get: the barger never takes the reserved item, and the
/// second getter finds it.
#[test]
fn pass_on_vs_barging_get() {
    loom::model(|| {
        let ring = Arc::new(Ring::new(Bound::Buffered(2)));
        // Two registered getters; the put reserves its item and wakes the first.
        ring.register_getter();
        ring.register_getter();
        assert!(ring.try_put(1u32).ok().unwrap().notify_getter);
        let bell = Arc::new(Bell::new());
        let quitter = {
            let (ring, bell) = (Arc::clone(&ring), Arc::clone(&bell));
            thread::spawn(move || {
                if ring.pass_on_getter() {
                    bell.ring();
                }
            })
        };
        let second = {
            let (ring, bell) = (Arc::clone(&ring), Arc::clone(&bell));
            thread::spawn(move || {
                bell.wait();
                ring.get_reserved()
                    .expect("the inherited reservation holds an item")
                    .item
            })
        };
        let barger = {
            let ring = Arc::clone(&ring);
            thread::spawn(move || ring.try_get().ok().map(|taken| taken.item))
        };
        quitter.join().unwrap();
        assert_eq!(barger.join().unwrap(), None, "the item stays reserved");
        assert_eq!(second.join().unwrap(), 1);
        let word = ring.tail.0.load(Ordering::Relaxed);
        assert_eq!((waiting(word), pending(word)), (0, 0));
    });
}

/// A retry under an unfinished bound vs a getter: the retried item keeps its id, and the
/// ring settles only after it ends.
#[test]
fn requeue_vs_get_and_end() {
    loom::model(|| {
        let ring = Arc::new(Ring::new(Bound::Unfinished(1)));
        ring.try_put(5u32).ok().unwrap();
        let first = ring.try_get().unwrap();
        let retrier = {
            let ring = Arc::clone(&ring);
            thread::spawn(move || ring.try_requeue(first.id, first.item).ok().unwrap().id)
        };
        let (id, item) = get_spinning(&ring).unwrap();
        assert!(!ring.is_settled());
        assert_eq!(retrier.join().unwrap(), 0);
        assert_eq!((id, item), (0, 5));
        assert!(!ring.end(1));
        assert!(ring.is_settled());
        assert_eq!(ring.tickets(), 2);
    });
}

/// As `pass_on_vs_barging_get`, for putters and a slot: a woken putter that gives up
/// passes the reserved slot to the other one, which a barging put cannot take; a
/// notification that reached nobody withdraws its reservation.
#[test]
fn putter_pass_on_vs_barging_put() {
    loom::model(|| {
        let ring = Arc::new(Ring::new(Bound::Buffered(1)));
        ring.try_put(1u32).ok().unwrap();
        ring.register_putter();
        ring.register_putter();
        assert!(ring.try_get().unwrap().notify_putter);
        let bell = Arc::new(Bell::new());
        let quitter = {
            let (ring, bell) = (Arc::clone(&ring), Arc::clone(&bell));
            thread::spawn(move || {
                if ring.pass_on_putter() {
                    bell.ring();
                }
            })
        };
        let second = {
            let (ring, bell) = (Arc::clone(&ring), Arc::clone(&bell));
            thread::spawn(move || {
                bell.wait();
                ring.put_reserved(2u32).expect("the inherited slot").id
            })
        };
        assert_eq!(
            ring.try_put(3u32),
            Err(Refused::Full(3)),
            "the slot is reserved"
        );
        quitter.join().unwrap();
        assert_eq!(second.join().unwrap(), 1);
        // A reservation whose notification reached nobody.
        ring.register_putter();
        assert!(ring.try_get().unwrap().notify_putter);
        ring.unreserve_putter();
        ring.unregister_putter();
        ring.register_getter();
        assert!(ring.try_put(4u32).ok().unwrap().notify_getter);
        ring.unreserve_getter();
        ring.unregister_getter();
        assert_eq!(get_spinning(&ring), Some((2, 4)));
    });
}

/// A retry racing the get and ending of the item it put back (counting ring): whichever
/// thread finishes last, the ending that leaves nothing unfinished reports the ring
/// settled, so the queue wakes its joiners.
#[test]
fn requeue_vs_get_and_end_settles() {
    loom::model(|| {
        let ring = Arc::new(Ring::counting(Bound::Buffered(2)));
        ring.try_put_leaving(5u32, 0).ok().unwrap();
        let first = ring.try_get().ok().unwrap();
        let retrier = {
            let ring = Arc::clone(&ring);
            thread::spawn(move || {
                let accepted = ring.try_requeue_leaving(first.id, first.item, 0);
                accepted.ok().unwrap().id
            })
        };
        let (id, item) = get_spinning(&ring).unwrap();
        let (settled, _) = ring.end_counted(1, true);
        assert_eq!(retrier.join().unwrap(), 0);
        assert_eq!((id, item), (0, 5));
        assert!(settled, "the last ending settles the ring");
        assert_eq!(ring.unfinished(), 0);
    });
}

/// Two retries at once under an unfinished bound the queue is at: neither is refused,
/// since a retried item already holds its place in the bound.
#[test]
fn two_requeues_at_an_unfinished_bound() {
    loom::model(|| {
        let ring = Arc::new(Ring::counting(Bound::Unfinished(2)));
        ring.try_put_leaving(1u32, 0).ok().unwrap();
        ring.try_put_leaving(2u32, 0).ok().unwrap();
        let retriers: Vec<_> = (0..2)
            .map(|_| {
                let taken = ring.try_get().ok().unwrap();
                let ring = Arc::clone(&ring);
                thread::spawn(move || ring.try_requeue_leaving(taken.id, taken.item, 0).is_ok())
            })
            .collect();
        for retrier in retriers {
            assert!(
                retrier.join().unwrap(),
                "a retry within the bound is accepted"
            );
        }
        assert_eq!(ring.unfinished(), 2);
        assert_eq!(ring.len(), 2);
    });
}
