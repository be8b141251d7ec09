//! A loom model of the waits' turn-taking (`waits.rs`) over the shipping [`Turns`]: the
//! protocol around it (listen, look at the round, try to lead, read, end the round, hand
//! the turn on) is written again here with loom's primitives, since the shipping one
//! awaits a Redis connection, which loom cannot run. The event is a counter under a mutex
//! with a condition variable (a listener remembers the count it saw), the leader's slot a
//! flag taken with a compare-exchange, and the server's blocking read a wait until the
//! stream has an entry.
//!
//! Checked under every interleaving (preemptions bounded at 3): every waiter returns once
//! an entry is there (no wake-up lost, no waiter left parked with nobody leading), also
//! when a wait is dropped at an await (parked, or leading in the middle of its read); at most one read runs at a time;
//! and every registration is gone at the end.

use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;

use super::{StreamId, Ticket, Turns};

struct Model {
    turns: Mutex<Turns>,
    /// The `done` event: how many times it was notified.
    done: Mutex<u64>,
    done_cv: Condvar,
    /// The leader's slot: taken with a compare-exchange, as `async_lock::Mutex::try_lock`
    /// does (loom's own `try_lock` parks a thread that tries while another holds it).
    leader: AtomicBool,
    /// The server: whether the stream has an entry, and how many reads are blocked.
    entry: Mutex<(bool, u32)>,
    entry_cv: Condvar,
}

const KEY: &str = "s";

impl Model {
    fn new() -> Self {
        Model {
            turns: Mutex::new(Turns::default()),
            done: Mutex::new(0),
            done_cv: Condvar::new(),
            leader: AtomicBool::new(false),
            entry: Mutex::new((false, 0)),
            entry_cv: Condvar::new(),
        }
    }

    fn notify_done(&self) {
        *self.done.lock().unwrap() += 1;
        self.done_cv.notify_all();
    }

    /// `Waits::wait_after`. With `give_up`, the wait is dropped at its first await: parked
    /// on the listener, or as the leader before its read returns.
    fn wait(&self, give_up: bool) {
        let (ticket, interrupt) = self
            .turns
            .lock()
            .unwrap()
            .register(KEY, StreamId::parse("$"));
        // One key: a running read always covers a new wait.
        assert_eq!(interrupt, None);
        loop {
            let listener = *self.done.lock().unwrap();
            if self.ended(ticket) {
                break;
            }
            // Acquire/Release: the slot orders one leader's turn before the next one's.
            if self
                .leader
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                if !self.ended(ticket) {
                    self.lead(give_up);
                }
                // `Slot`'s drop: release, then tell the others.
                self.leader.store(false, Ordering::Release);
                self.notify_done();
                break;
            }
            if give_up {
                // Dropped while parked on the listener.
                break;
            }
            let mut seen = self.done.lock().unwrap();
            while *seen == listener {
                seen = self.done_cv.wait(seen).unwrap();
            }
        }
        self.turns.lock().unwrap().unregister(KEY, ticket.me);
    }

    fn ended(&self, ticket: Ticket) -> bool {
        let turns = self.turns.lock().unwrap();
        turns.ended(ticket)
    }

    fn has_entry(&self) -> bool {
        let server = self.entry.lock().unwrap();
        server.0
    }

    /// `Waits::lead`: one round, or a turn given up mid-read.
    fn lead(&self, give_up: bool) {
        let keys = self.turns.lock().unwrap().start(Some(1));
        assert_eq!(keys.len(), 1);
        let returned = if give_up {
            false
        } else {
            let mut server = self.entry.lock().unwrap();
            server.1 += 1;
            assert_eq!(server.1, 1, "two blocking reads at once");
            while !server.0 {
                server = self.entry_cv.wait(server).unwrap();
            }
            server.1 -= 1;
            true
        };
        self.turns.lock().unwrap().stop(returned);
    }

    /// A waiter goes on until the stream has an entry (it re-reads its state after every
    /// wake-up, as a get does).
    fn wait_for_entry(&self, give_up_first: bool) {
        let mut give_up = give_up_first;
        while !self.has_entry() {
            self.wait(give_up);
            give_up = false;
        }
    }

    fn add_entry(&self) {
        self.entry.lock().unwrap().0 = true;
        self.entry_cv.notify_all();
    }
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(f);
}

#[test]
fn every_waiter_wakes_when_an_entry_arrives() {
    model(|| {
        let m = Arc::new(Model::new());
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                let m = Arc::clone(&m);
                thread::spawn(move || m.wait_for_entry(false))
            })
            .collect();
        m.add_entry();
        for waiter in waiters {
            waiter.join().unwrap();
        }
        assert!(m.turns.lock().unwrap().idle());
    });
}

#[test]
fn a_leader_dropped_mid_read_hands_the_turn_on() {
    model(|| {
        let m = Arc::new(Model::new());
        let dropped = {
            let m = Arc::clone(&m);
            thread::spawn(move || m.wait(true))
        };
        let waiter = {
            let m = Arc::clone(&m);
            thread::spawn(move || m.wait_for_entry(false))
        };
        dropped.join().unwrap();
        m.add_entry();
        waiter.join().unwrap();
        assert!(m.turns.lock().unwrap().idle());
    });
}
