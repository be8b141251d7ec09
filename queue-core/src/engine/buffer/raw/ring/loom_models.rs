//! loom models of the ring. Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test --release -p tally-queue --lib`.
//!
//! The slots' entries are loom `UnsafeCell`s (`crate::sync::Cell`), so every model also
//! checks that no entry is read and written concurrently.
//!
//! The waiter models run the classes that ship ([`Class`], in `wait/waiters.rs`) over the
//! ring's words, with the waiter lists under loom's lock, in the steps the engine takes: a waiter
//! counts itself in and inserts its listener ([`Class::listen`]), checks again, sleeps;
//! a put, a get or an ending notifies as its claim says. A lost wake-up shows as a
//! deadlock.

extern crate std;

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::cell::Cell as Seen;

use loom::thread;

use super::*;
use crate::wait::deferred::Deferred;
use crate::wait::turns::Turns;
use crate::wait::waiters::{Class, Waiters, Wake};

/// Takes with no item owed to anyone, spinning on `Empty` (yielding to the model) until an
/// item or `Closed`.
fn get_spinning<T>(ring: &BoxedRing<T>) -> Option<(u64, T)> {
    loop {
        match ring.try_get(|| 0) {
            Ok(taken) => return Some((taken.id.get(), taken.item)),
            Err(Nothing::Closed) => return None,
            Err(Nothing::Empty) => thread::yield_now(),
        }
    }
}

/// Puts with no slot owed to anyone, spinning on `Full` until the put lands; returns its
/// id.
fn put_spinning<T>(ring: &BoxedRing<T>, mut item: T) -> u64 {
    loop {
        match ring.try_put(item, 0) {
            Ok((id, _)) => return id.get(),
            Err(PutRefused::Full(back)) => {
                item = back;
                thread::yield_now();
            }
            Err(PutRefused::Closed(_)) => unreachable!("nothing closes the ring"),
        }
    }
}

/// The waiter fields of a ring word: zero once every waiter has left and every
/// notification was taken.
fn waiter_fields(word: &AtomicU64) -> u64 {
    // Relaxed: read after every thread was joined.
    word.load(Ordering::Relaxed) & ((1 << FIELDS_END) - 1) & !CLOSED
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
                thread::spawn(move || ring.try_put(item, 0).ok().unwrap().0.get())
            })
            .collect();
        let first = get_spinning(&ring).unwrap();
        let second = get_spinning(&ring).unwrap();
        let mut ids: Vec<u64> = producers.into_iter().map(|p| p.join().unwrap()).collect();
        ids.sort_unstable();
        assert_eq!(ids, [0, 1]);
        assert_eq!((first.0, second.0), (0, 1));
        assert_eq!(first.1 + second.1, 30);
        assert_eq!(ring.progress(), (2, 2));
    });
}

/// Two racing puts across the 39-bit wrap of the words, the second ticket a multiple of
/// 2^32 whose put moves `base` while the other put and the gets widen from it: the ids
/// are exact whichever value of `base` each reads, and `base` ends moved.
#[test]
fn puts_that_move_the_base_keep_ids_exact() {
    loom::model(|| {
        let mark = TICKET_MASK + 1;
        let ring = Arc::new(Ring::starting_at(Bound::Buffered(2), mark - 1));
        let producers: Vec<_> = [10u32, 20]
            .into_iter()
            .map(|item| {
                let ring = Arc::clone(&ring);
                thread::spawn(move || ring.try_put(item, 0).ok().unwrap().0.get())
            })
            .collect();
        let first = get_spinning(&ring).unwrap();
        let second = get_spinning(&ring).unwrap();
        let mut ids: Vec<u64> = producers.into_iter().map(|p| p.join().unwrap()).collect();
        ids.sort_unstable();
        assert_eq!(ids, [mark - 1, mark]);
        assert_eq!((first.0, second.0), (mark - 1, mark));
        assert_eq!(first.1 + second.1, 30);
        // Relaxed: read after every thread was joined.
        assert_eq!(ring.base.load(Ordering::Relaxed), mark - BASE_LAG);
        assert_eq!(ring.progress(), (mark + 1, mark + 1));
    });
}

/// A full ring under a bound of one (two slots, the bound read from `head`): the put that
/// waits for room writes its slot only after the get has read the old item out (loom
/// checks the entry's accesses).
#[test]
fn slot_reuse_across_threads() {
    loom::model(|| {
        let ring = Arc::new(Ring::new(Bound::Buffered(1)));
        ring.try_put(1u32, 0).ok().unwrap();
        let producer = {
            let ring = Arc::clone(&ring);
            thread::spawn(move || put_spinning(&ring, 2u32))
        };
        assert_eq!(get_spinning(&ring), Some((0, 1)));
        assert_eq!(get_spinning(&ring), Some((1, 2)));
        assert_eq!(producer.join().unwrap(), 1);
    });
}

/// A ring bound at its slot count checks room by the slot's stamp alone: a put racing the
/// gets that free its slot writes it only after the get of the item one lap back has read
/// it out (loom checks the entry's accesses), and never buffers more than the bound.
#[test]
fn stamp_bound_slot_reuse() {
    loom::model(|| {
        let ring = Arc::new(Ring::new(Bound::Buffered(2)));
        assert!(ring.stamp_bound);
        ring.try_put(1u32, 0).ok().unwrap();
        ring.try_put(2u32, 0).ok().unwrap();
        assert!(matches!(ring.try_put(9, 0), Err(PutRefused::Full(9))));
        let producer = {
            let ring = Arc::clone(&ring);
            thread::spawn(move || put_spinning(&ring, 3u32))
        };
        assert_eq!(get_spinning(&ring), Some((0, 1)));
        assert!(ring.len() <= 2);
        assert_eq!(get_spinning(&ring), Some((1, 2)));
        assert_eq!(get_spinning(&ring), Some((2, 3)));
        assert_eq!(producer.join().unwrap(), 2);
    });
}

/// put vs close vs get: an accepted item is delivered; a refused one comes back, and the
/// getter then sees `Closed`. A put that drew its ticket before the close is waited for,
/// never reported as the end.
#[test]
fn put_vs_close_vs_get() {
    loom::model(|| {
        let ring = Arc::new(Ring::new(Bound::Buffered(2)));
        let producer = {
            let ring = Arc::clone(&ring);
            thread::spawn(move || ring.try_put(7u32, 0).is_ok())
        };
        let getter = {
            let ring = Arc::clone(&ring);
            thread::spawn(move || get_spinning(&ring))
        };
        assert!(ring.close());
        let accepted = producer.join().unwrap();
        let got = getter.join().unwrap();
        assert_eq!(got.map(|(_, item)| item), accepted.then_some(7));
        assert_eq!(ring.progress().1, u64::from(accepted));
    });
}

/// The drain of an immediate shutdown vs a get: each buffered item leaves exactly once,
/// and the ring counts both as taken.
#[test]
fn drain_vs_get() {
    loom::model(|| {
        let ring = Arc::new(Ring::new(Bound::Buffered(2)));
        ring.try_put(1u32, 0).ok().unwrap();
        ring.try_put(2u32, 0).ok().unwrap();
        let getter = {
            let ring = Arc::clone(&ring);
            thread::spawn(move || ring.try_get(|| 0).ok().map(|taken| taken.item))
        };
        let drained: u32 = ring.drain().into_iter().map(|(_, item)| item).sum();
        let got = getter.join().unwrap().unwrap_or(0);
        assert_eq!(drained + got, 3);
        assert_eq!(ring.progress(), (2, 2));
        assert!(matches!(ring.try_get(|| 0), Err(Nothing::Closed)));
    });
}

/// A ring with the three classes of waiters whose fields it keeps, as the engine pairs
/// them.
struct Waited {
    ring: BoxedRing<u32>,
    getters: Waiters,
    putters: Waiters,
    joiners: Waiters,
}

impl Waited {
    fn new(bound: Bound) -> Arc<Self> {
        let deferred = Deferred::new();
        Arc::new(Waited {
            ring: Ring::new(bound),
            getters: Waiters::new(&deferred),
            putters: Waiters::new(&deferred),
            joiners: Waiters::new(&deferred),
        })
    }

    fn getters(&self) -> Class<'_> {
        self.getters
            .counted_in(Some(self.ring.counted(Kind::Getters)))
    }

    fn putters(&self) -> Class<'_> {
        self.putters
            .counted_in(Some(self.ring.counted(Kind::Putters)))
    }

    fn joiners(&self) -> Class<'_> {
        self.joiners
            .counted_in(Some(self.ring.counted(Kind::Joiners)))
    }

    /// A put, notifying a getter if its claim says so.
    fn put(&self, item: u32) -> u64 {
        let (id, getters) = self.ring.try_put(item, 0).ok().unwrap();
        self.getters().notify_for(getters, 1);
        id.get()
    }

    /// A get, notifying a putter if its claim says so.
    fn get(&self) -> u32 {
        let taken = self.ring.try_get(|| 0).ok().unwrap();
        self.putters().notify_for(taken.putters, 1);
        taken.item
    }

    /// An ending, waking the joiners if it settled the ring while they were counted.
    fn end(&self) {
        let (settled, joiners) = self.ring.end(1, false);
        let joiners = Wake::counted_if(settled && joiners);
        if self.joiners().signal_all_for(joiners) {
            self.joiners().wake_deferred();
        }
    }

    /// Waits on `class` until `attempt` succeeds: counts itself in and inserts its
    /// listener, checks again, then sleeps; counts itself out as its listener leaves.
    fn wait<R>(&self, class: Class<'_>, mut attempt: impl FnMut() -> Option<R>) -> R {
        if let Some(done) = attempt() {
            return done;
        }
        loop {
            let listener = class.listen();
            if let Some(done) = attempt() {
                // The only waiter of its class here: a notification it took is nobody
                // else's.
                let notified = listener.discard();
                class.left(notified);
                return done;
            }
            listener.wait();
            class.left(true);
            if let Some(done) = attempt() {
                return done;
            }
        }
    }
}

/// A getter that counts itself in, checks again and sleeps, against two puts that notify
/// as their claims say: no wake-up is lost (a lost one deadlocks the model), and at rest
/// no waiter or notification is left counted in `tail`.
#[test]
fn getter_registration_vs_puts() {
    loom::model(|| {
        let waited = Waited::new(Bound::Buffered(2));
        let getter = {
            let waited = Arc::clone(&waited);
            thread::spawn(move || {
                waited.wait(waited.getters(), || {
                    waited.ring.try_get(|| 0).ok().map(|taken| taken.item)
                })
            })
        };
        assert_eq!(waited.put(1), 0);
        assert_eq!(waited.put(2), 1);
        let got = getter.join().unwrap();
        assert_eq!(got, 1, "the getter gets the oldest item");
        assert_eq!(waited.ring.drain(), [(1, 2)]);
        assert_eq!(waiter_fields(&waited.ring.tail.0), 0);
    });
}

/// A putter waiting for room on a full ring against the get that frees it: the get's
/// claim counts the putter and notifies it, or the putter's check after counting itself
/// in finds the room. At a bound of one the put reads the bound from `head`; at the slot
/// count, from its slot's stamp.
fn putter_registration_vs_get(bound: u64) {
    loom::model(move || {
        let waited = Waited::new(Bound::Buffered(bound));
        for item in 0..bound {
            waited.put(item as u32);
        }
        let putter = {
            let waited = Arc::clone(&waited);
            thread::spawn(move || {
                let mut item = Some(9u32);
                waited.wait(waited.putters(), || {
                    match waited.ring.try_put(item.take().unwrap(), 0) {
                        Ok((id, _)) => Some(id.get()),
                        Err(PutRefused::Full(back)) => {
                            item = Some(back);
                            None
                        }
                        Err(PutRefused::Closed(_)) => unreachable!("nothing closes the ring"),
                    }
                })
            })
        };
        assert_eq!(waited.get(), 0);
        assert_eq!(
            putter.join().unwrap(),
            bound,
            "the putter was woken and landed"
        );
        let rest: Vec<u32> = waited.ring.drain().into_iter().map(|e| e.1).collect();
        assert_eq!(rest.last(), Some(&9));
        assert_eq!(waiter_fields(&waited.ring.consumers.head), 0);
    });
}

/// [`putter_registration_vs_get`] at a bound of one, where the put reads the bound from
/// `head`.
#[test]
fn putter_registration_vs_get_reading_head() {
    putter_registration_vs_get(1);
}

/// [`putter_registration_vs_get`] at the slot count, where the put reads the bound from its
/// slot's stamp.
#[test]
fn putter_registration_vs_get_by_stamp() {
    putter_registration_vs_get(2);
}

/// Two endings vs a joiner that counts itself in, checks again and sleeps: the ending that
/// settles the ring reads the joiner in its own `fetch_add` and wakes it, or the joiner's
/// check sees the ring settled.
#[test]
fn endings_vs_joiner() {
    loom::model(|| {
        let waited = Waited::new(Bound::Buffered(2));
        waited.put(1);
        waited.put(2);
        waited.get();
        waited.get();
        let joiner = {
            let waited = Arc::clone(&waited);
            thread::spawn(move || {
                waited.wait(waited.joiners(), || {
                    (waited.ring.unfinished() == 0).then_some(())
                })
            })
        };
        let ender = {
            let waited = Arc::clone(&waited);
            thread::spawn(move || waited.end())
        };
        waited.end();
        ender.join().unwrap();
        joiner.join().unwrap();
        assert_eq!(waited.ring.unfinished(), 0);
        assert_eq!(waited.ring.ended(), 2);
        assert_eq!(waiter_fields(&waited.ring.consumers.ended), 0);
    });
}

/// Two endings on a ring that watches for settling, with no joiner: each reads the flag in
/// its own `fetch_add`, so both look, and exactly one (the last in the word's order) reads
/// the ring settled.
#[test]
fn watched_endings_settle_once() {
    loom::model(|| {
        let mut ring = Ring::new(Bound::Buffered(2));
        ring.watch_settled(true);
        ring.try_put(1, 0).unwrap();
        ring.try_put(2, 0).unwrap();
        get_spinning(&ring).unwrap();
        get_spinning(&ring).unwrap();
        let ring = Arc::new(ring);
        let other = {
            let ring = Arc::clone(&ring);
            thread::spawn(move || ring.end_watched(1))
        };
        let mine = ring.end_watched(1);
        let theirs = other.join().unwrap();
        let (mine, theirs) = (mine.expect("watched"), theirs.expect("watched"));
        assert_eq!((mine.1, theirs.1), (false, false), "no joiner");
        assert!(
            mine.0 ^ theirs.0,
            "settled exactly once: {mine:?} {theirs:?}"
        );
        assert_eq!(ring.unfinished(), 0);
    });
}

/// The owed gate vs a put. A getter is counted in; a putter puts #1 (its claim counts the
/// getter and says to notify), grants the woken getter its turn, and puts #2. A barging
/// thread's two `try_get`s, gated by the turns owed (read after the item's stamp is
/// acquired), take at most one item, and never #2: #2 was published after the grant, so
/// a get that acquired its stamp sees the turn, and the turn covers the newest item. (The
/// barger may take #1 having seen the turn, once #2 is buffered too: with one turn owed and
/// two items, the older one is free.) The woken getter then finds its item.
#[test]
fn owed_gate_vs_put() {
    loom::model(|| {
        let ring = Arc::new(Ring::new(Bound::Buffered(2)));
        let turns = Arc::new(Turns::new());
        ring.counted(Kind::Getters).count_in();
        let putter = {
            let (ring, turns) = (Arc::clone(&ring), Arc::clone(&turns));
            thread::spawn(move || {
                let (_, first) = ring.try_put(1u32, 0).ok().unwrap();
                assert_eq!(first, Wake::Reserved, "the put counted the getter");
                turns.grant(1);
                let (_, second) = ring.try_put(2u32, 0).ok().unwrap();
                assert_eq!(second, Wake::No, "the getter has a notification coming");
            })
        };
        let barger = {
            let (ring, turns) = (Arc::clone(&ring), Arc::clone(&turns));
            thread::spawn(move || {
                let mut taken = Vec::new();
                for _ in 0..2 {
                    let seen = Seen::new(0);
                    let gate = || {
                        seen.set(turns.owed() as i64);
                        seen.get()
                    };
                    if let Ok(got) = ring.try_get(gate) {
                        taken.push((got.item, seen.get()));
                    }
                }
                taken
            })
        };
        putter.join().unwrap();
        let barged = barger.join().unwrap();
        assert!(barged.len() <= 1, "the barger took {barged:?}");
        assert!(
            barged.iter().all(|&(item, _)| item == 1),
            "the barger took the item the turn was granted for: {barged:?}"
        );
        // The woken getter, holding its turn, takes its item and redeems the turn.
        let woken = ring.try_get(|| 0).ok().map(|taken| taken.item);
        turns.redeem();
        let expected = if barged.is_empty() { 1 } else { 2 };
        assert_eq!(woken, Some(expected));
        let rest: u32 = ring.drain().into_iter().map(|e| e.1).sum();
        assert_eq!(barged.len() as u32 + 1 + u32::from(rest != 0), 2);
        assert_eq!(turns.owed(), 0);
    });
}
