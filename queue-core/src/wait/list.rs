//! A list of waiters: the wakers of one class's registered waiters, in arrival order, and
//! which of them have been notified.
//!
//! A lock over a slab of nodes: a `Vec` whose free nodes are chained into a free list,
//! and whose waiting nodes are linked by index in arrival order. A notification takes the
//! oldest waiting node off that chain, marks it notified and takes its waker out; the
//! node stays allocated, notified, until its waiter looks at it ([`List::poll`]) or leaves
//! ([`List::discard`], [`List::remove`]). The chain therefore holds exactly the waiters not
//! yet notified, and a notification costs what it reaches.
//!
//! Each node carries a generation, bumped whenever it is freed, and a [`Key`] names a node
//! and its generation: a key whose node was freed since finds nothing, so a stale key is
//! harmless (a poll with it reads `Ready`, a removal with it does nothing and reports no
//! notification).
//!
//! No user code runs under the lock: a waker is cloned before the lock is taken, a waker
//! taken out by a notification is handed to the caller's `sink` (which only stores it) and
//! woken after the lock is released, and a waker replaced or left by a departing waiter is
//! dropped after the release. (A blocking wait's waker, which only unparks its thread, is
//! woken under the lock, see [`List::insert_parked`].) So a waker may re-enter the list (notify, insert), panic or
//! block in its `Drop` without deadlocking it or leaving it half changed.
//!
//! The slab never shrinks: it keeps as many nodes as the most waiters the class ever had
//! at once, and a wait reuses a free node, so a wait allocates nothing once the slab has
//! grown to its load.

use alloc::vec::Vec;
use core::task::{Poll, Waker};

use crate::sync::Lock;

/// The end of a chain.
const NIL: u32 = u32::MAX;

/// The wakers [`List::notify_waking`] wakes between two trips through the lock.
#[cfg(any(test, not(target_has_atomic = "ptr")))]
const CHUNK: usize = 16;

/// A waiter's node in a [`List`]: its index and the generation it was inserted in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Key {
    index: u32,
    generation: u32,
}

/// What a node holds.
#[derive(Debug)]
enum Slot {
    /// Free, chained to the next free node.
    Free { next: u32 },
    /// A waiter not yet notified, with its waker, linked to its neighbours in arrival
    /// order. `parks`: the waker only unparks a thread (see [`List::insert_parked`]).
    Waiting {
        waker: Waker,
        parks: bool,
        prev: u32,
        next: u32,
    },
    /// A waiter notified (its waker taken), off the chain, until it looks or leaves.
    Notified,
}

#[derive(Debug)]
struct Node {
    /// Bumped (wrapping) whenever the node is freed.
    generation: u32,
    slot: Slot,
}

/// The data under the lock.
#[derive(Debug)]
struct Slab {
    nodes: Vec<Node>,
    /// The first free node, or `NIL`.
    free: u32,
    /// The oldest waiting node, or `NIL`.
    head: u32,
    /// The newest waiting node, or `NIL`.
    tail: u32,
    /// The waiting nodes: those on the chain from `head` to `tail`.
    waiting: usize,
}

/// A list of waiters (see the module docs).
pub(crate) struct List {
    slab: Lock<Slab>,
}

/// What [`Slab::poll`] found.
enum Looked {
    /// The waiter was notified; its node is freed.
    Notified,
    /// Still waiting, with a waker that wakes the same task.
    Kept,
    /// Still waiting, with a waker for another task: the caller clones the new one outside
    /// the lock and swaps it in.
    Changed,
}

impl Slab {
    const fn new() -> Self {
        Slab {
            nodes: Vec::new(),
            free: NIL,
            head: NIL,
            tail: NIL,
            waiting: 0,
        }
    }

    /// The node `key` names, if it is still the one inserted under that key.
    fn node(&mut self, key: Key) -> Option<&mut Node> {
        self.nodes.get_mut(key.index as usize).filter(|node| {
            node.generation == key.generation && !matches!(node.slot, Slot::Free { .. })
        })
    }

    #[inline]
    fn insert(&mut self, waker: Waker, parks: bool) -> Key {
        let slot = Slot::Waiting {
            waker,
            parks,
            prev: self.tail,
            next: NIL,
        };
        let index = if self.free == NIL {
            let index = u32::try_from(self.nodes.len())
                .ok()
                .filter(|&index| index != NIL)
                .expect("fewer than 2^32 - 1 waiters of one class at once");
            self.nodes.push(Node {
                generation: 0,
                slot,
            });
            index
        } else {
            let index = self.free;
            let node = &mut self.nodes[index as usize];
            let Slot::Free { next } = node.slot else {
                unreachable!("the free list holds free nodes")
            };
            self.free = next;
            node.slot = slot;
            index
        };
        match self.tail {
            NIL => self.head = index,
            tail => self.set_next(tail, index),
        }
        self.tail = index;
        self.waiting += 1;
        Key {
            index,
            generation: self.nodes[index as usize].generation,
        }
    }

    fn set_next(&mut self, index: u32, to: u32) {
        if let Slot::Waiting { next, .. } = &mut self.nodes[index as usize].slot {
            *next = to;
        }
    }

    fn set_prev(&mut self, index: u32, to: u32) {
        if let Slot::Waiting { prev, .. } = &mut self.nodes[index as usize].slot {
            *prev = to;
        }
    }

    /// Takes the waiting node `index` off the chain, marked notified, and returns its
    /// waker and whether it only unparks a thread.
    #[inline]
    fn unlink(&mut self, index: u32) -> (Waker, bool) {
        let slot = core::mem::replace(&mut self.nodes[index as usize].slot, Slot::Notified);
        let Slot::Waiting {
            waker,
            parks,
            prev,
            next,
        } = slot
        else {
            unreachable!("only waiting nodes are chained")
        };
        match prev {
            NIL => self.head = next,
            prev => self.set_next(prev, next),
        }
        match next {
            NIL => self.tail = prev,
            next => self.set_prev(next, prev),
        }
        self.waiting -= 1;
        (waker, parks)
    }

    fn free(&mut self, index: u32) {
        let node = &mut self.nodes[index as usize];
        node.generation = node.generation.wrapping_add(1);
        node.slot = Slot::Free { next: self.free };
        self.free = index;
    }

    /// Notifies the oldest waiting node: `each` runs for it and `sink` takes its waker,
    /// or, if the waker only unparks a thread, it is woken here, before the waiter can see
    /// its notification. Returns whether there was one.
    fn notify_one(&mut self, each: &mut impl FnMut(), sink: &mut impl FnMut(Waker)) -> bool {
        if self.head == NIL {
            return false;
        }
        let (waker, parks) = self.unlink(self.head);
        each();
        if parks {
            waker.wake();
        } else {
            sink(waker);
        }
        true
    }

    /// Removes `key`'s node. Returns whether it had been notified, and its waker if it had
    /// not (for the caller to drop after the lock is released).
    fn remove(&mut self, key: Key) -> (bool, Option<Waker>) {
        let Some(node) = self.node(key) else {
            // Stale: removed already, by a poll that took its notification.
            return (false, None);
        };
        let waker = match node.slot {
            Slot::Notified => None,
            _ => Some(self.unlink(key.index).0),
        };
        self.free(key.index);
        (waker.is_none(), waker)
    }

    fn poll(&mut self, key: Key, waker: &Waker) -> Looked {
        let Some(node) = self.node(key) else {
            return Looked::Notified;
        };
        match &node.slot {
            Slot::Waiting { waker: kept, .. } if kept.will_wake(waker) => Looked::Kept,
            Slot::Waiting { .. } => Looked::Changed,
            _ => {
                self.free(key.index);
                Looked::Notified
            }
        }
    }

    /// Stores `new` in `key`'s node if it still waits, returning the waker it replaces;
    /// if it was notified meanwhile, frees it and hands `new` back.
    fn replace(&mut self, key: Key, new: Waker) -> Result<Waker, Waker> {
        let Some(node) = self.node(key) else {
            return Err(new);
        };
        match &mut node.slot {
            Slot::Waiting { waker, .. } => Ok(core::mem::replace(waker, new)),
            _ => {
                self.free(key.index);
                Err(new)
            }
        }
    }
}

impl List {
    pub(crate) fn new() -> Self {
        List {
            slab: Lock::new(Slab::new()),
        }
    }

    /// Inserts a waiter at the back of the list, not notified, with a clone of `waker`
    /// (made before the lock is taken).
    #[inline]
    pub(crate) fn insert(&self, waker: &Waker) -> Key {
        let waker = waker.clone();
        self.slab.with(|slab| slab.insert(waker, false))
    }

    /// As [`insert`](List::insert), for a waker that only unparks a thread and runs no
    /// user code (a blocking wait's): a notification wakes it under the lock, so the
    /// thread is unparked before it can see its notification and go on. Woken after the
    /// lock, the unpark could reach the thread once it has gone on to wait for something
    /// else (harmless with `std`'s parking, whose unparks may be spurious, but not under
    /// loom, whose unpark ends any wait).
    #[cfg(feature = "std")]
    #[inline]
    pub(crate) fn insert_parked(&self, waker: &Waker) -> Key {
        let waker = waker.clone();
        self.slab.with(|slab| slab.insert(waker, true))
    }

    /// Looks at a waiter: `Ready` if it was notified, and then its node is removed (in the
    /// same trip through the lock); otherwise its node is left holding a waker for
    /// `waker`'s task. A waker that [`will_wake`](Waker::will_wake) the one held is not
    /// cloned; another one is cloned outside the lock and swapped in, and the one it
    /// replaces is dropped after the lock is released.
    #[inline]
    pub(crate) fn poll(&self, key: Key, waker: &Waker) -> Poll<()> {
        match self.slab.with(|slab| slab.poll(key, waker)) {
            Looked::Notified => Poll::Ready(()),
            Looked::Kept => Poll::Pending,
            Looked::Changed => self.swap_waker(key, waker),
        }
    }

    #[cold]
    fn swap_waker(&self, key: Key, waker: &Waker) -> Poll<()> {
        let new = waker.clone();
        match self.slab.with(|slab| slab.replace(key, new)) {
            Ok(replaced) => {
                drop(replaced);
                Poll::Pending
            }
            Err(unused) => {
                drop(unused);
                Poll::Ready(())
            }
        }
    }

    /// Removes a waiter's node, in one trip through the lock, and returns whether it had
    /// been notified: a notification it held is not passed on (the caller passes on what
    /// it stood for, or used it). Its waker is dropped after the lock is released.
    #[inline]
    pub(crate) fn discard(&self, key: Key) -> bool {
        let (notified, waker) = self.slab.with(|slab| slab.remove(key));
        drop(waker);
        notified
    }

    /// Removes a waiter's node; a notification it held passes, in the same trip through
    /// the lock, to the oldest waiter not yet notified (`each` runs for it under the lock,
    /// as in [`notify`](List::notify)), whose waker is woken after the release. Returns
    /// whether the removed node had been notified.
    ///
    /// The queue never drops a notification this way: a waiter that leaves passes on the
    /// turn its notification carried along with it
    /// ([`Class::settle`](super::waiters::Class::settle)). This is the plain pass-on the
    /// list's own models check it can do.
    #[cfg(test)]
    pub(crate) fn remove(&self, key: Key, mut each: impl FnMut()) -> bool {
        let mut passed = None;
        let (notified, waker) = self.slab.with(|slab| {
            let removed = slab.remove(key);
            if removed.0 {
                slab.notify_one(&mut each, &mut |waker| passed = Some(waker));
            }
            removed
        });
        drop(waker);
        if let Some(passed) = passed {
            passed.wake();
        }
        notified
    }

    /// Notifies up to `n` waiters not yet notified, oldest first, in one trip through the
    /// lock, and returns how many were reached. For each one reached, under the lock,
    /// `each` runs and `sink` takes its waker: neither may run user code (in particular
    /// `sink` only stores the waker, for the caller to wake once this has returned).
    #[cfg(any(test, target_has_atomic = "ptr"))]
    #[inline]
    pub(crate) fn notify(&self, n: usize, each: impl FnMut(), sink: impl FnMut(Waker)) -> usize {
        if n == 0 {
            return 0;
        }
        self.notify_counting(n, each, sink).0
    }

    /// As [`notify`](List::notify); also returns how many waiters were waiting, not
    /// notified, when the lock was taken.
    #[inline]
    fn notify_counting(
        &self,
        n: usize,
        mut each: impl FnMut(),
        mut sink: impl FnMut(Waker),
    ) -> (usize, usize) {
        self.slab.with(|slab| {
            let waiting = slab.waiting;
            let mut reached = 0;
            while reached < n && slab.notify_one(&mut each, &mut sink) {
                reached += 1;
            }
            (reached, waiting)
        })
    }

    /// As [`notify`](List::notify), and wakes the waiters reached: up to [`CHUNK`] are
    /// notified per trip through the lock, into an array on the stack, and woken after the
    /// lock is released, so a notification of any number allocates nothing. Every waker
    /// reached is woken even if some panic; the first panic then reaches the caller (see
    /// [`each_despite_panics`](crate::unwind::each_despite_panics)).
    ///
    /// A notification of more than one chunk is several notifications: a waiter inserted
    /// between two chunks may be reached by a later one. Their total is bounded by the
    /// waiters waiting when the first chunk was taken, so a notify-all ends even while
    /// waiters keep arriving (a woken waker that registers again, other threads).
    ///
    /// The queue's classes keep the wakers until their notifier is done instead
    /// (`deferred.rs`), except on targets without pointer-sized atomics.
    #[cfg(any(test, not(target_has_atomic = "ptr")))]
    pub(crate) fn notify_waking(&self, n: usize, mut each: impl FnMut()) -> usize {
        let mut chunk: [Option<Waker>; CHUNK] = Default::default();
        let (mut at, mut len, mut reached) = (0, 0, 0);
        let (mut more, mut bound) = (n != 0, n);
        let next = || {
            if at == len {
                if !more {
                    return None;
                }
                let wanted = (bound - reached).min(CHUNK);
                let mut filled = 0;
                let (_, waiting) = self.notify_counting(wanted, &mut each, |waker| {
                    chunk[filled] = Some(waker);
                    filled += 1;
                });
                if reached == 0 {
                    bound = bound.min(waiting);
                }
                reached += filled;
                more = filled == CHUNK && reached < bound;
                (at, len) = (0, filled);
                if len == 0 {
                    return None;
                }
            }
            at += 1;
            chunk[at - 1].take()
        };
        crate::unwind::each_despite_panics(next, Waker::wake);
        reached
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    // Threads and `catch_unwind` for the tests, also without the `std` feature (then the
    // list's lock is the spinning one).
    #[cfg(not(feature = "std"))]
    extern crate std;

    use super::*;
    use alloc::sync::Arc;
    use alloc::task::Wake;
    use core::sync::atomic::{AtomicUsize, Ordering};

    /// A waker that counts its wake-ups and runs `also` at each.
    struct Counting<F: Fn() + Send + Sync> {
        wakes: AtomicUsize,
        also: F,
    }

    impl<F: Fn() + Send + Sync> Wake for Counting<F> {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }

        fn wake_by_ref(self: &Arc<Self>) {
            // Relaxed: a count read on the same thread.
            self.wakes.fetch_add(1, Ordering::Relaxed);
            (self.also)();
        }
    }

    fn counting() -> (Arc<Counting<impl Fn() + Send + Sync>>, Waker) {
        counting_with(|| {})
    }

    fn counting_with<F: Fn() + Send + Sync + 'static>(also: F) -> (Arc<Counting<F>>, Waker) {
        let task = Arc::new(Counting {
            wakes: AtomicUsize::new(0),
            also,
        });
        (Arc::clone(&task), Waker::from(task))
    }

    fn wakes<F: Fn() + Send + Sync>(task: &Arc<Counting<F>>) -> usize {
        // Relaxed: read on the thread that woke.
        task.wakes.load(Ordering::Relaxed)
    }

    #[test]
    fn notifications_reach_waiters_oldest_first_once_each() {
        let list = List::new();
        let tasks: Vec<_> = (0..3).map(|_| counting()).collect();
        let keys: Vec<_> = tasks.iter().map(|(_, waker)| list.insert(waker)).collect();
        assert_eq!(list.notify_waking(1, || {}), 1);
        let woken: Vec<_> = tasks.iter().map(|(task, _)| wakes(task)).collect();
        assert_eq!(woken, [1, 0, 0]);
        // A notification reaches only waiters not yet notified.
        assert_eq!(list.notify_waking(1, || {}), 1);
        let woken: Vec<_> = tasks.iter().map(|(task, _)| wakes(task)).collect();
        assert_eq!(woken, [1, 1, 0]);
        assert_eq!(list.notify_waking(5, || {}), 1, "one waiter was left");
        assert_eq!(list.notify_waking(5, || {}), 0);
        for (key, (_, waker)) in keys.iter().zip(&tasks) {
            assert_eq!(list.poll(*key, waker), Poll::Ready(()));
        }
    }

    #[test]
    fn each_runs_once_per_waiter_reached() {
        let list = List::new();
        let (_, waker) = counting();
        let _keys: Vec<_> = (0..3).map(|_| list.insert(&waker)).collect();
        let mut ran = 0;
        assert_eq!(list.notify_waking(2, || ran += 1), 2);
        assert_eq!(ran, 2);
        let mut taken = Vec::new();
        assert_eq!(
            list.notify(usize::MAX, || ran += 1, |waker| taken.push(waker)),
            1
        );
        assert_eq!((ran, taken.len()), (3, 1));
    }

    #[test]
    fn a_poll_that_finds_its_notification_removes_the_node() {
        let list = List::new();
        let (task, waker) = counting();
        let key = list.insert(&waker);
        assert_eq!(list.poll(key, &waker), Poll::Pending);
        list.notify_waking(1, || {});
        assert_eq!(wakes(&task), 1);
        assert_eq!(list.poll(key, &waker), Poll::Ready(()));
        // The node is free: a stale key finds nothing, and reads as done.
        assert!(!list.discard(key));
        let again = list.insert(&waker);
        assert_eq!(again.index, key.index, "the freed node is reused");
        assert_ne!(again, key, "under a new generation");
        assert_eq!(list.poll(key, &waker), Poll::Ready(()));
        assert_eq!(
            list.poll(again, &waker),
            Poll::Pending,
            "the stale key left it alone"
        );
    }

    #[test]
    fn discard_says_whether_the_waiter_was_notified_and_passes_nothing_on() {
        let list = List::new();
        let (first, first_waker) = counting();
        let (second, second_waker) = counting();
        let a = list.insert(&first_waker);
        let b = list.insert(&second_waker);
        assert!(!list.discard(a));
        list.notify_waking(1, || {});
        assert_eq!((wakes(&first), wakes(&second)), (0, 1));
        let c = list.insert(&first_waker);
        assert!(list.discard(b));
        assert_eq!(
            wakes(&first),
            0,
            "a discarded notification is not passed on"
        );
        assert_eq!(list.poll(c, &first_waker), Poll::Pending);
    }

    #[test]
    fn a_removed_notified_waiter_passes_its_notification_on() {
        let list = List::new();
        let tasks: Vec<_> = (0..3).map(|_| counting()).collect();
        let keys: Vec<_> = tasks.iter().map(|(_, waker)| list.insert(waker)).collect();
        list.notify_waking(1, || {});
        let mut passed = 0;
        // Not notified: nothing to pass on.
        assert!(!list.remove(keys[1], || passed += 1));
        assert_eq!(passed, 0);
        assert!(list.remove(keys[0], || passed += 1));
        assert_eq!(passed, 1);
        let woken: Vec<_> = tasks.iter().map(|(task, _)| wakes(task)).collect();
        assert_eq!(
            woken,
            [1, 0, 1],
            "passed to the oldest waiter not yet notified"
        );
        assert_eq!(list.poll(keys[2], &tasks[2].1), Poll::Ready(()));
    }

    #[test]
    fn a_new_waker_replaces_the_old_and_the_same_task_is_not_cloned() {
        let list = List::new();
        let (first, first_waker) = counting();
        let (second, second_waker) = counting();
        let key = list.insert(&first_waker);
        let held = Arc::strong_count(&first);
        assert_eq!(list.poll(key, &first_waker), Poll::Pending);
        // `will_wake` compares vtable addresses, which Miri does not keep unique.
        if !cfg!(miri) {
            assert_eq!(
                Arc::strong_count(&first),
                held,
                "no clone for the same task"
            );
        }
        assert_eq!(list.poll(key, &second_waker), Poll::Pending);
        assert_eq!(
            Arc::strong_count(&first),
            held - 1,
            "the replaced waker was dropped"
        );
        list.notify_waking(1, || {});
        assert_eq!((wakes(&first), wakes(&second)), (0, 1));
    }

    /// A waker run by a notification re-enters the list (notifies again, inserts): it runs
    /// after the lock is released, so neither deadlocks.
    #[test]
    fn a_waker_may_re_enter_the_list() {
        let list = Arc::new(List::new());
        let (later, later_waker) = counting();
        let later_waker = Arc::new(later_waker);
        let (_, re_entering) = counting_with({
            let list = Arc::clone(&list);
            let later_waker = Arc::clone(&later_waker);
            move || {
                let _key = list.insert(&later_waker);
                list.notify_waking(1, || {});
            }
        });
        let _key = list.insert(&re_entering);
        assert_eq!(list.notify_waking(1, || {}), 1);
        assert_eq!(
            wakes(&later),
            1,
            "the re-entrant notification reached the new waiter"
        );
    }

    /// A waker whose drop re-enters the list, replaced or discarded, is dropped after the
    /// lock is released.
    #[test]
    fn a_waker_dropped_by_the_list_may_re_enter_it() {
        struct Reentrant(Arc<List>);
        impl Wake for Reentrant {
            fn wake(self: Arc<Self>) {}
        }
        impl Drop for Reentrant {
            fn drop(&mut self) {
                self.0.notify_waking(usize::MAX, || {});
            }
        }
        let list = Arc::new(List::new());
        let (other, other_waker) = counting();
        let reentrant = Waker::from(Arc::new(Reentrant(Arc::clone(&list))));
        let key = list.insert(&reentrant);
        let bystander = list.insert(&other_waker);
        drop(reentrant);
        // Replaced: the list held the last reference, and its drop notifies both nodes,
        // which now hold `other_waker`.
        assert_eq!(list.poll(key, &other_waker), Poll::Pending);
        assert_eq!(wakes(&other), 2, "its drop notified both waiters");
        assert_eq!(list.poll(key, &other_waker), Poll::Ready(()));
        assert_eq!(list.poll(bystander, &other_waker), Poll::Ready(()));

        let reentrant = Waker::from(Arc::new(Reentrant(Arc::clone(&list))));
        let key = list.insert(&reentrant);
        drop(reentrant);
        let bystander = list.insert(&other_waker);
        assert!(!list.discard(key));
        assert_eq!(wakes(&other), 3, "its drop notified the bystander");
        assert_eq!(list.poll(bystander, &other_waker), Poll::Ready(()));
    }

    /// A notify-all of more waiters than one chunk reaches every one, oldest first, and a
    /// panicking waker among them does not stop the others; its panic then reaches the
    /// notifier.
    #[cfg(feature = "std")]
    #[test]
    fn a_notify_all_wakes_every_waiter_in_chunks_despite_panics() {
        let list = List::new();
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let count = 3 * CHUNK + 5;
        let tasks: Vec<_> = (0..count)
            .map(|index| {
                let order = Arc::clone(&order);
                counting_with(move || {
                    order.lock().unwrap().push(index);
                    if index % CHUNK == 3 {
                        std::panic::panic_any(index);
                    }
                })
            })
            .collect();
        let keys: Vec<_> = tasks.iter().map(|(_, waker)| list.insert(waker)).collect();
        let mut ran = 0;
        let result = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| {
            list.notify_waking(usize::MAX, || ran += 1)
        }));
        assert_eq!(*result.unwrap_err().downcast::<usize>().unwrap(), 3);
        assert_eq!(ran, count);
        assert_eq!(*order.lock().unwrap(), (0..count).collect::<Vec<_>>());
        for (key, (_, waker)) in keys.iter().zip(&tasks) {
            assert_eq!(list.poll(*key, waker), Poll::Ready(()));
        }
    }

    /// A blocking wait's waker is woken by the notification itself, under the lock; a
    /// task's goes to the sink.
    #[cfg(feature = "std")]
    #[test]
    fn a_parked_waiter_is_woken_before_its_notification_shows() {
        let list = List::new();
        let (parked, parked_waker) = counting();
        let (task, task_waker) = counting();
        let blocking = list.insert_parked(&parked_waker);
        let waiting = list.insert(&task_waker);
        let mut taken = Vec::new();
        assert_eq!(list.notify(2, || {}, |waker| taken.push(waker)), 2);
        assert_eq!((wakes(&parked), wakes(&task), taken.len()), (1, 0, 1));
        assert_eq!(list.poll(blocking, &parked_waker), Poll::Ready(()));
        taken.into_iter().for_each(Waker::wake);
        assert_eq!(wakes(&task), 1);
        assert_eq!(list.poll(waiting, &task_waker), Poll::Ready(()));
    }

    /// A notify-all whose woken waiters each register again as they are woken (a task
    /// that re-registers from its waker) ends: it is bounded by the waiters it found, not
    /// carried on chunk after chunk by the newcomers. The wakers stop re-registering after
    /// `LIMIT` wake-ups, so a notify-all that would run for ever fails here instead.
    #[test]
    fn a_notify_all_ends_though_each_woken_waiter_registers_again() {
        const LIMIT: usize = 100 * CHUNK;
        /// Registers a clone of itself in the list at each wake-up, `LIMIT` times in all.
        struct Rejoin {
            list: alloc::sync::Weak<List>,
            wakes: AtomicUsize,
        }
        impl Wake for Rejoin {
            fn wake(self: Arc<Self>) {
                self.wake_by_ref();
            }
            fn wake_by_ref(self: &Arc<Self>) {
                // Relaxed: a count read on the same thread.
                if self.wakes.fetch_add(1, Ordering::Relaxed) < LIMIT {
                    if let Some(list) = self.list.upgrade() {
                        let _key = list.insert(&Waker::from(Arc::clone(self)));
                    }
                }
            }
        }
        let list = Arc::new(List::new());
        let task = Arc::new(Rejoin {
            list: Arc::downgrade(&list),
            wakes: AtomicUsize::new(0),
        });
        let waker = Waker::from(Arc::clone(&task));
        for _ in 0..CHUNK {
            let _key = list.insert(&waker);
        }
        let reached = list.notify_waking(usize::MAX, || {});
        assert!(
            reached < LIMIT,
            "the notify-all reached {reached} waiters, ending only because the wakers \
             stopped registering again ({CHUNK} were waiting when it began)"
        );
    }

    /// The blocking path: threads that park until their waker unparks them, against
    /// notifiers on other threads, one notification per wait; every waiter finishes its
    /// waits, so none slept through its notification. Run with a time limit, so a lost
    /// wake-up fails.
    /// Without `std` this runs over the spinning lock.
    #[test]
    fn parked_threads_are_woken_by_notifications_from_other_threads() {
        use core::time::Duration;
        use std::{sync::mpsc, thread};
        const WAITERS: usize = 2;
        const ROUNDS: usize = if cfg!(miri) { 2 } else { 200 };
        let (done, finished) = mpsc::channel();
        thread::spawn(move || {
            let list = Arc::new(List::new());
            let waiters: Vec<_> = (0..WAITERS)
                .map(|_| {
                    let list = Arc::clone(&list);
                    thread::spawn(move || {
                        let waker = Waker::from(Arc::new(Unpark(thread::current())));
                        for _ in 0..ROUNDS {
                            let key = list.insert(&waker);
                            while list.poll(key, &waker).is_pending() {
                                thread::park();
                            }
                        }
                    })
                })
                .collect();
            let notifiers: Vec<_> = (0..2)
                .map(|_| {
                    let list = Arc::clone(&list);
                    thread::spawn(move || {
                        let mut reached = 0;
                        while reached < WAITERS * ROUNDS / 2 {
                            reached += list.notify_waking(1, || {});
                            thread::yield_now();
                        }
                    })
                })
                .collect();
            for thread in waiters.into_iter().chain(notifiers) {
                thread.join().unwrap();
            }
            done.send(()).unwrap();
        });
        let limit = Duration::from_secs(if cfg!(miri) { 600 } else { 30 });
        assert!(
            finished.recv_timeout(limit).is_ok(),
            "a parked waiter was never woken"
        );
    }

    struct Unpark(std::thread::Thread);

    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }

    /// Without `std` (as on targets without pointer-sized atomics, where the queue uses
    /// this notify-all): a waker that panics in the first chunk does not stop the rest,
    /// in that chunk or the later ones, which are woken while the panic unwinds to the
    /// notifier. (A second panic during that unwinding aborts, so there is one here.)
    #[cfg(not(feature = "std"))]
    #[test]
    fn without_std_a_panicking_waker_does_not_stop_a_notify_all() {
        let list = List::new();
        let count = 2 * CHUNK + 1;
        let woken = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..count)
            .map(|index| {
                let woken = Arc::clone(&woken);
                counting_with(move || {
                    // Relaxed: read after the notify-all, on this thread.
                    woken.fetch_add(1, Ordering::Relaxed);
                    if index == 3 {
                        std::panic::panic_any(index);
                    }
                })
            })
            .collect();
        let keys: Vec<_> = tasks.iter().map(|(_, waker)| list.insert(waker)).collect();
        let mut ran = 0;
        let result = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| {
            list.notify_waking(usize::MAX, || ran += 1)
        }));
        assert_eq!(*result.unwrap_err().downcast::<usize>().unwrap(), 3);
        assert_eq!((ran, woken.load(Ordering::Relaxed)), (count, count));
        for (key, (_, waker)) in keys.iter().zip(&tasks) {
            assert_eq!(list.poll(*key, waker), Poll::Ready(()));
        }
    }

    /// Freed nodes are reused: waits in steady state allocate nothing.
    #[test]
    fn the_slab_grows_to_the_most_waiters_at_once() {
        let list = List::new();
        let (_, waker) = counting();
        for _ in 0..100 {
            let keys: Vec<_> = (0..4).map(|_| list.insert(&waker)).collect();
            list.notify_waking(2, || {});
            for key in keys {
                list.discard(key);
            }
        }
        assert_eq!(list.slab.with(|slab| slab.nodes.len()), 4);
    }
}

#[cfg(all(test, loom))]
mod loom_models {
    use super::*;
    use alloc::sync::Arc;
    use alloc::task::Wake;
    use loom::sync::atomic::{AtomicUsize, Ordering};
    use loom::thread;

    /// Wakes a loom thread.
    struct Unpark(thread::Thread);

    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }

    fn unparker() -> Waker {
        Waker::from(Arc::new(Unpark(thread::current())))
    }

    /// The protocol the queue's classes run over the list, reduced to tokens: a notifier
    /// publishes a token, then notifies one waiter; a waiter inserts its node, then
    /// re-checks for a token, and parks only if it found none and is not notified. A
    /// waiter that takes a token after a notification it did not use passes that
    /// notification on (as a turn is passed on).
    fn wait_for_token(list: &List, tokens: &AtomicUsize) {
        let waker = unparker();
        loop {
            let key = list.insert(&waker);
            loop {
                // AcqRel: takes the token its notifier published.
                let taken = tokens
                    .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
                    .is_ok();
                if taken {
                    // A notification this waiter holds stood for a token another waiter
                    // may need.
                    list.remove(key, || {});
                    return;
                }
                if list.poll(key, &waker).is_ready() {
                    break;
                }
                thread::park();
            }
        }
    }

    fn put_token(list: &List, tokens: &AtomicUsize) {
        // AcqRel: publishes the token before the notification (the list's lock orders the
        // notification against the waiter's insertion).
        tokens.fetch_add(1, Ordering::AcqRel);
        list.notify_waking(1, || {});
    }

    /// As [`wait_for_token`], with the pass-on the queue makes: a waiter that takes a
    /// token discards its node and, if the discard says it had been notified, notifies the
    /// next waiter itself.
    fn wait_for_token_discarding(list: &List, tokens: &AtomicUsize) {
        let waker = unparker();
        loop {
            let key = list.insert(&waker);
            loop {
                // AcqRel: takes the token its notifier published.
                let taken = tokens
                    .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
                    .is_ok();
                if taken {
                    if list.discard(key) {
                        list.notify_waking(1, || {});
                    }
                    return;
                }
                if list.poll(key, &waker).is_ready() {
                    break;
                }
                thread::park();
            }
        }
    }

    /// Two notifiers against two waiters that pass a notification on by discarding and
    /// notifying again: both waiters get a token, in every order.
    #[test]
    fn two_notifiers_vs_two_discarding_waiters() {
        loom::model(|| {
            let list = Arc::new(List::new());
            let tokens = Arc::new(AtomicUsize::new(0));
            let threads: Vec<_> = (0..2)
                .map(|_| {
                    let (list, tokens) = (Arc::clone(&list), Arc::clone(&tokens));
                    thread::spawn(move || put_token(&list, &tokens))
                })
                .collect();
            let waiter = {
                let (list, tokens) = (Arc::clone(&list), Arc::clone(&tokens));
                thread::spawn(move || wait_for_token_discarding(&list, &tokens))
            };
            wait_for_token_discarding(&list, &tokens);
            waiter.join().unwrap();
            for thread in threads {
                thread.join().unwrap();
            }
            // Relaxed: every thread has been joined.
            assert_eq!(tokens.load(Ordering::Relaxed), 0);
        });
    }

    /// Two notifiers against two waiters: both waiters get a token, in every order (a lost
    /// wake-up leaves a waiter parked for ever, which loom reports as a deadlock).
    #[test]
    fn two_notifiers_vs_two_waiters() {
        loom::model(|| {
            let list = Arc::new(List::new());
            let tokens = Arc::new(AtomicUsize::new(0));
            let threads: Vec<_> = (0..2)
                .map(|_| {
                    let (list, tokens) = (Arc::clone(&list), Arc::clone(&tokens));
                    thread::spawn(move || put_token(&list, &tokens))
                })
                .collect();
            let waiter = {
                let (list, tokens) = (Arc::clone(&list), Arc::clone(&tokens));
                thread::spawn(move || wait_for_token(&list, &tokens))
            };
            wait_for_token(&list, &tokens);
            waiter.join().unwrap();
            for thread in threads {
                thread.join().unwrap();
            }
            // Relaxed: every thread has been joined.
            assert_eq!(tokens.load(Ordering::Relaxed), 0);
        });
    }

    /// A notified waiter removed (dropped) passes its notification to the next waiter,
    /// whichever of the notification and the removal comes first: the second waiter is
    /// notified exactly once.
    #[test]
    fn a_notified_waiter_dropped_passes_it_on() {
        loom::model(|| {
            let list = Arc::new(List::new());
            let dropped = list.insert(Waker::noop());
            let (count, waker) = counted();
            let next = list.insert(&waker);
            let notifier = {
                let list = Arc::clone(&list);
                thread::spawn(move || list.notify_waking(1, || {}))
            };
            list.remove(dropped, || {});
            assert_eq!(notifier.join().unwrap(), 1);
            // Relaxed: the notifier has been joined.
            assert_eq!(count.load(Ordering::Relaxed), 1);
            assert_eq!(list.poll(next, &waker), Poll::Ready(()));
        });
    }

    /// `discard` says whether the waiter was notified: exactly when the notification
    /// reached it.
    #[test]
    fn discard_returns_notified() {
        loom::model(|| {
            let list = Arc::new(List::new());
            let key = list.insert(Waker::noop());
            let notifier = {
                let list = Arc::clone(&list);
                thread::spawn(move || list.notify_waking(1, || {}))
            };
            let notified = list.discard(key);
            let reached = notifier.join().unwrap();
            assert_eq!(reached == 1, notified);
            assert!(!list.discard(list.insert(Waker::noop())));
        });
    }

    /// A notify-all against an insertion: the waiter there before is notified, and the
    /// newcomer is notified exactly when the notify-all counted it.
    #[test]
    fn notify_all_vs_insert() {
        loom::model(|| {
            let list = Arc::new(List::new());
            let (first_count, first) = counted();
            let old = list.insert(&first);
            let notifier = {
                let list = Arc::clone(&list);
                thread::spawn(move || list.notify_waking(usize::MAX, || {}))
            };
            let (count, waker) = counted();
            let new = list.insert(&waker);
            let reached = notifier.join().unwrap();
            // Relaxed: the notifier has been joined.
            assert_eq!(first_count.load(Ordering::Relaxed), 1);
            assert_eq!(list.poll(old, &first), Poll::Ready(()));
            let newcomer = list.poll(new, &waker).is_ready();
            assert_eq!(newcomer, reached == 2);
            assert_eq!(count.load(Ordering::Relaxed), usize::from(newcomer));
        });
    }

    /// A waker that, woken, notifies the next waiter (re-entering the list from the
    /// notifier's thread), against a removal of its own waiter: the second waiter is
    /// notified exactly once either way, and nothing deadlocks.
    #[test]
    fn a_re_entrant_waker_vs_its_waiters_discard() {
        struct Relay(alloc::sync::Weak<List>);
        impl Wake for Relay {
            fn wake(self: Arc<Self>) {
                if let Some(list) = self.0.upgrade() {
                    list.notify_waking(1, || {});
                }
            }
        }
        loom::model(|| {
            let list = Arc::new(List::new());
            let relay = Waker::from(Arc::new(Relay(Arc::downgrade(&list))));
            let first = list.insert(&relay);
            drop(relay);
            let (count, waker) = counted();
            let second = list.insert(&waker);
            let notifier = {
                let list = Arc::clone(&list);
                thread::spawn(move || list.notify_waking(1, || {}))
            };
            let notified = list.discard(first);
            assert_eq!(notifier.join().unwrap(), 1);
            // Relaxed: the notifier has been joined.
            assert_eq!(
                count.load(Ordering::Relaxed),
                1,
                "first notified: {notified}"
            );
            assert_eq!(list.poll(second, &waker), Poll::Ready(()));
        });
    }

    /// A waker that, woken, registers a new waiter, against a notifier of two: the new
    /// waiter is notified exactly when the notifier counted it.
    #[test]
    fn a_waker_that_inserts_vs_a_second_notifier() {
        struct Rejoin(
            alloc::sync::Weak<List>,
            Waker,
            loom::sync::Mutex<Option<Key>>,
        );
        impl Wake for Rejoin {
            fn wake(self: Arc<Self>) {
                if let Some(list) = self.0.upgrade() {
                    *self.2.lock().unwrap() = Some(list.insert(&self.1));
                }
            }
        }
        loom::model(|| {
            let list = Arc::new(List::new());
            let (count, waker) = counted();
            let rejoin = Arc::new(Rejoin(
                Arc::downgrade(&list),
                waker.clone(),
                loom::sync::Mutex::new(None),
            ));
            let _first = list.insert(&Waker::from(Arc::clone(&rejoin)));
            let notifier = {
                let list = Arc::clone(&list);
                thread::spawn(move || list.notify_waking(1, || {}))
            };
            let reached = list.notify_waking(1, || {});
            let other = notifier.join().unwrap();
            assert!(
                (1..=2).contains(&(reached + other)),
                "the first waiter is reached"
            );
            let key = rejoin
                .2
                .lock()
                .unwrap()
                .expect("the woken waker registered");
            let newcomer = list.poll(key, &waker).is_ready();
            assert_eq!(newcomer, reached + other == 2);
            // Relaxed: every thread has been joined.
            assert_eq!(count.load(Ordering::Relaxed), usize::from(newcomer));
        });
    }

    /// A stale key, used while its node is reused by another waiter and a notifier runs,
    /// finds nothing: it reads as done and leaves the new waiter's notification alone.
    #[test]
    fn a_stale_key_leaves_the_reused_node_alone() {
        loom::model(|| {
            let list = Arc::new(List::new());
            let old = list.insert(Waker::noop());
            let notifier = {
                let list = Arc::clone(&list);
                thread::spawn(move || list.notify_waking(1, || {}))
            };
            let old_notified = list.discard(old);
            let (count, waker) = counted();
            let new = list.insert(&waker);
            assert_eq!(new.index, old.index, "the freed node is reused");
            assert!(!list.discard(old), "a stale key removes nothing");
            assert_eq!(list.poll(old, &waker), Poll::Ready(()));
            let reached = notifier.join().unwrap();
            let new_notified = list.poll(new, &waker).is_ready();
            assert!(
                !(old_notified && new_notified),
                "one notification, reached once"
            );
            assert_eq!(reached, usize::from(old_notified || new_notified));
            // Relaxed: the notifier has been joined.
            assert_eq!(count.load(Ordering::Relaxed), usize::from(new_notified));
        });
    }

    /// A notify-all of more than one chunk against an insertion and the discard of the
    /// last waiter of the first chunk's reach: every waiter there before is notified (the
    /// discarded one exactly when its discard says so), each once, and the newcomer exactly
    /// when the notify-all counted it.
    #[test]
    fn a_notify_all_in_chunks_vs_insert_and_discard() {
        loom::model(|| {
            let list = Arc::new(List::new());
            let (old_count, old_waker) = counted();
            let old: Vec<_> = (0..CHUNK).map(|_| list.insert(&old_waker)).collect();
            let (last_count, last_waker) = counted();
            let last = list.insert(&last_waker);
            let notifier = {
                let list = Arc::clone(&list);
                thread::spawn(move || list.notify_waking(usize::MAX, || {}))
            };
            let (new_count, new_waker) = counted();
            let new = list.insert(&new_waker);
            let last_notified = list.discard(last);
            let reached = notifier.join().unwrap();
            // Relaxed (all three): the notifier has been joined.
            assert_eq!(old_count.load(Ordering::Relaxed), CHUNK);
            for key in old {
                assert_eq!(list.poll(key, &old_waker), Poll::Ready(()));
            }
            assert_eq!(
                last_count.load(Ordering::Relaxed),
                usize::from(last_notified)
            );
            let newcomer = list.poll(new, &new_waker).is_ready();
            assert_eq!(new_count.load(Ordering::Relaxed), usize::from(newcomer));
            assert_eq!(
                reached,
                CHUNK + usize::from(last_notified) + usize::from(newcomer)
            );
        });
    }

    /// A poll with a waker for another task (swapped in over two trips through the lock)
    /// against a notification: a poll that reads `Pending` has registered the new waker,
    /// which the notification then wakes, once; the old one is not woken.
    #[test]
    fn a_changed_waker_vs_a_notification() {
        loom::model(|| {
            let list = Arc::new(List::new());
            let (old_count, old_waker) = counted();
            let key = list.insert(&old_waker);
            let notifier = {
                let list = Arc::clone(&list);
                thread::spawn(move || list.notify_waking(1, || {}))
            };
            let (new_count, new_waker) = counted();
            let pending = list.poll(key, &new_waker).is_pending();
            assert_eq!(notifier.join().unwrap(), 1);
            // Relaxed (both): the notifier has been joined.
            let woken = (
                old_count.load(Ordering::Relaxed),
                new_count.load(Ordering::Relaxed),
            );
            if pending {
                assert_eq!(woken, (0, 1), "the registered waker is the one woken");
            } else {
                assert_eq!(woken.0 + woken.1, 1);
            }
            assert_eq!(list.poll(key, &new_waker), Poll::Ready(()));
        });
    }

    struct Count(Arc<AtomicUsize>);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            // Relaxed: read after a join.
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn counted() -> (Arc<AtomicUsize>, Waker) {
        let count = Arc::new(AtomicUsize::new(0));
        (Arc::clone(&count), Waker::from(Arc::new(Count(count))))
    }
}
