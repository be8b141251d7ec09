//! The `tracing` events of the crate docs' table, captured by a subscriber of the test's
//! own. Run with `cargo test -p tally-queue --features tracing --test tracing`.
#![cfg(feature = "tracing")]

use std::fmt::Write as _;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Waker};

use tally_queue::{AbandonPolicy, Outcome, Queue};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// Records each event as `LEVEL message field=value ...`.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<String>>>);

struct Line(String);

impl Visit for Line {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, " {value:?}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
}

impl Subscriber for Capture {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target() == "tally_queue"
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut line = Line(event.metadata().level().to_string());
        event.record(&mut line);
        self.0.lock().unwrap().push(line.0);
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(Level::TRACE.into())
    }
}

fn captured(run: impl FnOnce()) -> Vec<String> {
    let capture = Capture::default();
    tracing::subscriber::with_default(capture.clone(), run);
    let lines = capture.0.lock().unwrap().clone();
    lines
}

#[test]
fn every_job_event_of_the_table_is_emitted() {
    let lines = captured(|| {
        let queue = Queue::unbounded().with_label("jobs");
        let worker = queue.worker();
        for n in 0..5 {
            queue.try_put(n).unwrap();
        }
        queue.try_get().unwrap().succeed();
        queue.try_get().unwrap().resolve(Outcome::Uncertain);
        drop(queue.try_get().unwrap());
        queue.try_get().unwrap().retry().unwrap();
        queue.shutdown_now();
        drop(worker);
    });
    let expected = [
        "TRACE job accepted label=\"jobs\" id=0",
        "TRACE job accepted label=\"jobs\" id=1",
        "TRACE job accepted label=\"jobs\" id=2",
        "TRACE job accepted label=\"jobs\" id=3",
        "TRACE job accepted label=\"jobs\" id=4",
        "TRACE job delivered label=\"jobs\" id=0 attempt=1",
        "DEBUG job ended label=\"jobs\" id=0 outcome=succeeded",
        "TRACE job delivered label=\"jobs\" id=1 attempt=1",
        "DEBUG job ended label=\"jobs\" id=1 outcome=uncertain",
        "TRACE job delivered label=\"jobs\" id=2 attempt=1",
        "WARN job abandoned label=\"jobs\" id=2 panicking=false",
        "TRACE job delivered label=\"jobs\" id=3 attempt=1",
        "DEBUG job retried label=\"jobs\" id=3",
        "DEBUG queue shut down label=\"jobs\" unfinished=2",
        "DEBUG job discarded label=\"jobs\" id=4",
        "DEBUG job discarded label=\"jobs\" id=3",
        "DEBUG queue drained label=\"jobs\" discarded=2",
        "DEBUG last worker left label=\"jobs\"",
    ];
    assert_eq!(lines, expected);
}

#[test]
fn the_last_producer_is_reported_before_the_shutdown_it_causes() {
    let lines = captured(|| {
        let queue = Queue::<u8>::unbounded().with_label("jobs");
        drop(queue.producer());
    });
    assert_eq!(
        lines,
        [
            "DEBUG last producer left label=\"jobs\"",
            "DEBUG queue shut down label=\"jobs\" unfinished=0"
        ]
    );
}

#[test]
fn redelivery_events_carry_the_attempt() {
    let lines = captured(|| {
        let queue = Queue::unbounded()
            .with_label("jobs")
            .with_abandon_policy(AbandonPolicy::redeliver(2).unwrap());
        queue.try_put(0).unwrap();
        queue.try_put(1).unwrap();
        drop(queue.try_get().unwrap());
        // The returned item is served before the fresh one.
        drop(queue.try_get().unwrap());
        queue.try_get().unwrap().succeed();
        let held = queue.try_put(2).map(|_| queue.try_get().unwrap()).unwrap();
        queue.shutdown_now();
        drop(held);
    });
    let expected = [
        "TRACE job accepted label=\"jobs\" id=0",
        "TRACE job accepted label=\"jobs\" id=1",
        "TRACE job delivered label=\"jobs\" id=0 attempt=1",
        "WARN job abandoned label=\"jobs\" id=0 panicking=false",
        "DEBUG job redelivered label=\"jobs\" id=0 attempt=2",
        "TRACE job delivered label=\"jobs\" id=0 attempt=2",
        "WARN job abandoned label=\"jobs\" id=0 panicking=false",
        "WARN job dead-lettered label=\"jobs\" id=0 attempts=2",
        "TRACE job delivered label=\"jobs\" id=1 attempt=1",
        "DEBUG job ended label=\"jobs\" id=1 outcome=succeeded",
        "TRACE job accepted label=\"jobs\" id=2",
        "TRACE job delivered label=\"jobs\" id=2 attempt=1",
        "DEBUG queue shut down label=\"jobs\" unfinished=1",
        "DEBUG queue drained label=\"jobs\" discarded=0",
        "WARN job abandoned label=\"jobs\" id=2 panicking=false",
        "DEBUG job discarded label=\"jobs\" id=2",
        "WARN job dead-lettered label=\"jobs\" id=2 attempts=1",
    ];
    assert_eq!(lines, expected);
}

#[test]
fn an_uncertain_abandonment_is_abandoned_then_ended() {
    let lines = captured(|| {
        let queue = Queue::unbounded()
            .with_abandon_policy(AbandonPolicy::Uncertain)
            .with_label("jobs");
        queue.try_put(0).unwrap();
        drop(queue.try_get().unwrap());
        assert_eq!(queue.ledger().uncertain, 1);
    });
    assert_eq!(
        lines,
        [
            "TRACE job accepted label=\"jobs\" id=0",
            "TRACE job delivered label=\"jobs\" id=0 attempt=1",
            "WARN job abandoned label=\"jobs\" id=0 panicking=false",
            "DEBUG job ended label=\"jobs\" id=0 outcome=uncertain",
        ]
    );
}

#[test]
fn each_queue_s_events_carry_its_own_label_and_an_unlabelled_one_an_empty_one() {
    let lines = captured(|| {
        let mail = Queue::unbounded().with_label("mail");
        let thumbnails = Queue::unbounded().with_label("thumbnails");
        let plain = Queue::unbounded();
        mail.try_put("a").unwrap();
        thumbnails.try_put("b").unwrap();
        plain.try_put("c").unwrap();
        thumbnails.try_get().unwrap().reject();
        mail.shutdown();
    });
    assert_eq!(
        lines,
        [
            "TRACE job accepted label=\"mail\" id=0",
            "TRACE job accepted label=\"thumbnails\" id=0",
            "TRACE job accepted label=\"\" id=0",
            "TRACE job delivered label=\"thumbnails\" id=0 attempt=1",
            "DEBUG job ended label=\"thumbnails\" id=0 outcome=rejected",
            "DEBUG queue shut down label=\"mail\" unfinished=1",
        ]
    );
}

/// Panics in the first event whose message is `message`, and records nothing.
struct PanicAt {
    message: &'static str,
    fired: std::sync::atomic::AtomicBool,
}

struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl Subscriber for PanicAt {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target() == "tally_queue"
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut message = Message(String::new());
        event.record(&mut message);
        if message.0 == self.message && !self.fired.swap(true, Ordering::SeqCst) {
            panic!("a subscriber panics at {:?}", self.message);
        }
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(Level::TRACE.into())
    }
}

/// A subscriber that panics midway through a batch get: the slot the batch freed still
/// wakes the waiting put, and the item taken when the panic came is in a delivery, which
/// the unwinding ends as abandoned (the ledger stays exact).
#[test]
fn a_subscriber_panicking_midway_through_a_batch_get_loses_no_wake_up_nor_item() {
    let subscriber = PanicAt {
        message: "job delivered",
        fired: false.into(),
    };
    tracing::subscriber::with_default(subscriber, || {
        let queue = Queue::bounded(2).unwrap();
        queue
            .try_put_many(&mut vec![0, 1], &mut Vec::new())
            .unwrap();
        let woken = Arc::new(AtomicUsize::new(0));
        let waker = Waker::from(Arc::new(Count(woken.clone())));
        let mut put = pin!(queue.put(2));
        assert!(put
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
        let mut batch = Vec::new();
        let unwound = catch_unwind(AssertUnwindSafe(|| queue.try_get_many(&mut batch, 2)));
        assert!(unwound.is_err(), "the subscriber panicked");
        drop(batch);
        assert_eq!(woken.load(Ordering::SeqCst), 1, "the put was woken");
        let ledger = queue.ledger();
        assert_eq!((ledger.in_flight, ledger.abandoned), (0, 1), "{ledger}");
        let waker = Waker::noop();
        assert!(put
            .as_mut()
            .poll(&mut Context::from_waker(waker))
            .is_ready());
        let ledger = queue.ledger();
        assert_eq!((ledger.accepted, ledger.buffered), (3, 2), "{ledger}");
    });
}

struct Count(Arc<AtomicUsize>);

impl std::task::Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A subscriber that panics midway through a batch put: the item accepted before the
/// panic still wakes the waiting get.
#[test]
fn a_subscriber_panicking_midway_through_a_batch_put_loses_no_wake_up() {
    let subscriber = PanicAt {
        message: "job accepted",
        fired: false.into(),
    };
    tracing::subscriber::with_default(subscriber, || {
        let queue = Queue::unbounded();
        let woken = Arc::new(AtomicUsize::new(0));
        let waker = Waker::from(Arc::new(Count(woken.clone())));
        let mut get = pin!(queue.get());
        assert!(get
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
        let mut items = vec![1, 2, 3];
        let unwound = catch_unwind(AssertUnwindSafe(|| {
            queue.try_put_many(&mut items, &mut Vec::new())
        }));
        assert!(unwound.is_err(), "the subscriber panicked");
        assert_eq!(queue.ledger().buffered, 1, "{}", queue.ledger());
        assert_eq!(woken.load(Ordering::SeqCst), 1, "the get was woken");
        let job = match get.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            std::task::Poll::Ready(job) => job.unwrap(),
            std::task::Poll::Pending => panic!("the item is there"),
        };
        assert_eq!(job.succeed(), 1);
    });
}

/// A subscriber that panics in a single get's `job delivered`: the item is in its
/// delivery, which the unwinding ends as abandoned, and the slot it freed wakes the
/// waiting put (on the fresh path and on the path that takes a turn or wakes a putter).
#[test]
fn a_subscriber_panicking_in_a_get_loses_no_wake_up_nor_item() {
    for capacity in [1, 100_000] {
        let subscriber = PanicAt {
            message: "job delivered",
            fired: false.into(),
        };
        tracing::subscriber::with_default(subscriber, || {
            let queue = Queue::bounded(capacity).unwrap();
            for n in 0..capacity.min(2) {
                queue.try_put(n).unwrap();
            }
            let woken = Arc::new(AtomicUsize::new(0));
            let waker = Waker::from(Arc::new(Count(woken.clone())));
            let mut put = pin!(queue.put(9));
            let waits = capacity == 1;
            if waits {
                assert!(put
                    .as_mut()
                    .poll(&mut Context::from_waker(&waker))
                    .is_pending());
            }
            let unwound = catch_unwind(AssertUnwindSafe(|| drop(queue.try_get())));
            assert!(unwound.is_err(), "the subscriber panicked");
            let ledger = queue.ledger();
            assert_eq!((ledger.in_flight, ledger.abandoned), (0, 1), "{ledger}");
            if waits {
                assert_eq!(woken.load(Ordering::SeqCst), 1, "the put was woken");
            }
        });
    }
}

/// A subscriber that panics midway through a batch put on the growable buffer (an
/// unbounded queue, a journaled one, and a batch put in steps on a bound above the ring's):
/// the items not placed yet stay in the caller's vector, in order, and the ledger counts
/// exactly the item placed.
#[test]
fn a_subscriber_panicking_midway_through_a_batch_put_keeps_the_rest_with_the_caller() {
    // Above the ring's largest bound, and a batch one larger than the bound: put in steps.
    let above_ring = (1 << 16) + 1;
    let mut queues = vec![
        ("unbounded", Queue::unbounded(), 3),
        (
            "journaled",
            Queue::bounded(8)
                .unwrap()
                .with_journal(tally_queue::Record::new()),
            3,
        ),
    ];
    if !cfg!(miri) {
        let queue = Queue::bounded(above_ring as usize).unwrap();
        queues.push(("in steps", queue, above_ring + 1));
    }
    for (name, queue, n) in queues {
        let subscriber = PanicAt {
            message: "job accepted",
            fired: false.into(),
        };
        let mut items: Vec<u32> = (1..=n).collect();
        let mut ids = Vec::new();
        tracing::subscriber::with_default(subscriber, || {
            let unwound = catch_unwind(AssertUnwindSafe(|| {
                queue.try_put_many(&mut items, &mut ids)
            }));
            assert!(unwound.is_err(), "{name}: the subscriber panicked");
        });
        assert_eq!(items.len() as u32, n - 1, "{name}: the rest is kept");
        assert!(items.iter().copied().eq(2..=n), "{name}: in order");
        assert_eq!(ids.len(), 1, "{name}: the placed item's id");
        let ledger = queue.ledger();
        assert_eq!(
            (ledger.accepted, ledger.buffered),
            (1, 1),
            "{name}: {ledger}"
        );
        assert_eq!(queue.try_get().unwrap().succeed(), 1, "{name}");
        // The rest goes in afterwards, and every item comes out once, in order.
        queue.try_put_many(&mut items, &mut ids).unwrap();
        let mut next = 2;
        while let Ok(job) = queue.try_get() {
            assert_eq!(job.succeed(), next, "{name}");
            next += 1;
        }
        assert_eq!(next, n + 1, "{name}");
        let ledger = queue.ledger();
        assert_eq!(
            (ledger.accepted, ledger.succeeded),
            (u64::from(n), u64::from(n)),
            "{name}"
        );
    }
}

/// A subscriber that panics in the `job delivered` event of a woken get, which takes with
/// its turn: the turn is given up once, so the next woken get's item is still kept for it
/// (a turn given up twice would read as none owed, and a try would take that item).
#[test]
fn a_subscriber_panicking_in_a_woken_get_gives_its_turn_up_once() {
    let subscriber = PanicAt {
        message: "job delivered",
        fired: false.into(),
    };
    tracing::subscriber::with_default(subscriber, || {
        let queue = Queue::unbounded();
        let woken = Arc::new(AtomicUsize::new(0));
        let waker = Waker::from(Arc::new(Count(woken.clone())));
        {
            let mut get = pin!(queue.get());
            assert!(get
                .as_mut()
                .poll(&mut Context::from_waker(&waker))
                .is_pending());
            queue.try_put(1).unwrap();
            let unwound = catch_unwind(AssertUnwindSafe(|| {
                get.as_mut()
                    .poll(&mut Context::from_waker(&waker))
                    .is_ready()
            }));
            assert!(unwound.is_err(), "the subscriber panicked");
        }
        assert_eq!(queue.ledger().in_flight, 0, "{}", queue.ledger());
        let mut get = pin!(queue.get());
        assert!(get
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
        queue.try_put(2).unwrap();
        assert_eq!(woken.load(Ordering::SeqCst), 2, "the second get was woken");
        assert!(
            queue.try_get().is_err(),
            "the woken get's item is kept for it"
        );
        match get.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            std::task::Poll::Ready(job) => assert_eq!(job.unwrap().succeed(), 2),
            std::task::Poll::Pending => panic!("the item is there"),
        };
    });
}

/// A subscriber that panics in the `job accepted` event of a put while a get waits: the
/// get is woken for the buffered item all the same, on the ring and on the list.
#[test]
fn a_subscriber_panicking_in_a_put_still_wakes_the_waiting_get() {
    for queue in [Queue::bounded(4).unwrap(), Queue::unbounded()] {
        let subscriber = PanicAt {
            message: "job accepted",
            fired: false.into(),
        };
        tracing::subscriber::with_default(subscriber, || {
            let woken = Arc::new(AtomicUsize::new(0));
            let waker = Waker::from(Arc::new(Count(woken.clone())));
            let mut get = pin!(queue.get());
            assert!(get
                .as_mut()
                .poll(&mut Context::from_waker(&waker))
                .is_pending());
            let unwound = catch_unwind(AssertUnwindSafe(|| queue.try_put(1)));
            assert!(unwound.is_err(), "the subscriber panicked");
            assert_eq!(woken.load(Ordering::SeqCst), 1, "the get was woken");
            match get.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
                std::task::Poll::Ready(job) => assert_eq!(job.unwrap().succeed(), 1),
                std::task::Poll::Pending => panic!("the item is there"),
            };
            assert!(queue.ledger().is_balanced(), "{}", queue.ledger());
        });
    }
}

/// A subscriber that panics in the `job delivered` event of a woken batch get, which takes
/// its first item with its turn: the turn is given up once, so the next woken get's item
/// is still kept for it.
#[test]
fn a_subscriber_panicking_in_a_woken_batch_get_gives_its_turn_up_once() {
    let subscriber = PanicAt {
        message: "job delivered",
        fired: false.into(),
    };
    tracing::subscriber::with_default(subscriber, || {
        let queue = Queue::unbounded();
        let woken = Arc::new(AtomicUsize::new(0));
        let waker = Waker::from(Arc::new(Count(woken.clone())));
        {
            let mut deliveries = Vec::new();
            let mut get = pin!(queue.get_many(&mut deliveries, 4));
            assert!(get
                .as_mut()
                .poll(&mut Context::from_waker(&waker))
                .is_pending());
            queue.try_put(1).unwrap();
            let unwound = catch_unwind(AssertUnwindSafe(|| {
                get.as_mut()
                    .poll(&mut Context::from_waker(&waker))
                    .is_ready()
            }));
            assert!(unwound.is_err(), "the subscriber panicked");
        }
        assert_eq!(queue.ledger().in_flight, 0, "{}", queue.ledger());
        let mut get = pin!(queue.get());
        assert!(get
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
        queue.try_put(2).unwrap();
        assert_eq!(woken.load(Ordering::SeqCst), 2, "the second get was woken");
        assert!(
            queue.try_get().is_err(),
            "the woken get's item is kept for it"
        );
        match get.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            std::task::Poll::Ready(job) => assert_eq!(job.unwrap().succeed(), 2),
            std::task::Poll::Pending => panic!("the item is there"),
        };
    });
}

/// A subscriber that panics in the `job accepted` event of a woken batch put, which places
/// its first item with its turn: the turn is given up once, so the slot freed for the next
/// woken put is still kept for it.
#[test]
fn a_subscriber_panicking_in_a_woken_batch_put_gives_its_turn_up_once() {
    let queue = Queue::bounded(1).unwrap();
    queue.try_put(0).unwrap();
    let woken = Arc::new(AtomicUsize::new(0));
    let waker = Waker::from(Arc::new(Count(woken.clone())));
    {
        let mut items = vec![1, 2];
        let mut ids = Vec::new();
        let mut put = pin!(queue.put_many(&mut items, &mut ids));
        assert!(put
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
        assert_eq!(queue.try_get().unwrap().succeed(), 0);
        assert_eq!(woken.load(Ordering::SeqCst), 1, "the put was woken");
        let subscriber = PanicAt {
            message: "job accepted",
            fired: false.into(),
        };
        tracing::subscriber::with_default(subscriber, || {
            let unwound = catch_unwind(AssertUnwindSafe(|| {
                put.as_mut()
                    .poll(&mut Context::from_waker(&waker))
                    .is_ready()
            }));
            assert!(unwound.is_err(), "the subscriber panicked");
        });
    }
    assert_eq!(queue.ledger().buffered, 1, "{}", queue.ledger());
    let mut put = pin!(queue.put(3));
    assert!(put
        .as_mut()
        .poll(&mut Context::from_waker(&waker))
        .is_pending());
    assert_eq!(queue.try_get().unwrap().succeed(), 1);
    assert_eq!(woken.load(Ordering::SeqCst), 2, "the second put was woken");
    assert!(
        queue.try_put(4).is_err(),
        "the woken put's slot is kept for it"
    );
    match put.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        std::task::Poll::Ready(put) => assert!(put.is_ok()),
        std::task::Poll::Pending => panic!("the slot is free"),
    };
}

/// A subscriber that panics in the `job delivered` event of a fixed queue's get, the
/// try's and a woken get's alike: as on the heap queue, the item is in its delivery when
/// user code runs, so the unwinding ends it as abandoned and the queue settles (a bare item
/// dropped by the unwinding would stay in flight for good, and `join` would never return).
/// The woken get's turn is given up once: the next woken get's item is kept for it.
#[test]
fn a_subscriber_panicking_in_a_fixed_queues_get_leaves_no_item_in_flight_for_good() {
    use tally_queue::fixed::FixedQueue;

    for woken in [false, true] {
        let subscriber = PanicAt {
            message: "job delivered",
            fired: false.into(),
        };
        tracing::subscriber::with_default(subscriber, || {
            let queue = FixedQueue::<u32, 2>::new();
            let noop = &mut Context::from_waker(Waker::noop());
            if woken {
                let mut get = pin!(queue.get());
                assert!(get.as_mut().poll(noop).is_pending());
                queue.try_put(1).unwrap();
                let unwound = catch_unwind(AssertUnwindSafe(|| get.as_mut().poll(noop).is_ready()));
                assert!(unwound.is_err(), "the subscriber panicked");
            } else {
                queue.try_put(1).unwrap();
                let unwound = catch_unwind(AssertUnwindSafe(|| drop(queue.try_get())));
                assert!(unwound.is_err(), "the subscriber panicked");
            }
            let ledger = queue.ledger();
            assert_eq!(
                (ledger.buffered, ledger.in_flight, ledger.abandoned),
                (0, 0, 1),
                "woken {woken}: the taken item ends as abandoned: {ledger}"
            );
            assert!(
                pin!(queue.join()).poll(noop).is_ready(),
                "woken {woken}: the queue settles"
            );

            let mut get = pin!(queue.get());
            assert!(get.as_mut().poll(noop).is_pending());
            queue.try_put(2).unwrap();
            assert!(
                queue.try_get().is_err(),
                "woken {woken}: the woken get's item is kept for it"
            );
            match get.as_mut().poll(noop) {
                std::task::Poll::Ready(job) => assert_eq!(job.unwrap().succeed(), 2),
                std::task::Poll::Pending => panic!("the item is there"),
            };
        });
    }
}

/// A subscriber that panics in the event of a job's ending (`job ended` as a delivery is
/// resolved, `job abandoned` as one is dropped, on the heap queue and on the fixed tier):
/// the ending is counted all the same, so the job does not stay in flight for good (a
/// `join` would never return). The event runs before the ledger counts the ending today.
#[test]
fn a_subscriber_panicking_at_a_jobs_ending_leaves_no_job_in_flight_for_good() {
    use tally_queue::fixed::FixedQueue;

    let mut stranded = Vec::new();
    for message in ["job ended", "job abandoned"] {
        for policy in [AbandonPolicy::Abandon, AbandonPolicy::Uncertain] {
            let subscriber = PanicAt {
                message,
                fired: false.into(),
            };
            tracing::subscriber::with_default(subscriber, || {
                let queue = Queue::unbounded().with_abandon_policy(policy);
                queue.try_put(1).unwrap();
                let job = queue.try_get().unwrap();
                let unwound = catch_unwind(AssertUnwindSafe(|| {
                    if message == "job ended" {
                        job.succeed();
                    } else {
                        drop(job);
                    }
                }));
                assert!(unwound.is_err(), "{message}: the subscriber panicked");
                let ledger = queue.ledger();
                if ledger.in_flight != 0 {
                    stranded.push(format!("{message}, {policy:?}: {ledger}"));
                }
            });
        }
        let subscriber = PanicAt {
            message,
            fired: false.into(),
        };
        tracing::subscriber::with_default(subscriber, || {
            let queue = FixedQueue::<u32, 2>::new();
            queue.try_put(1).unwrap();
            let job = queue.try_get().unwrap();
            let unwound = catch_unwind(AssertUnwindSafe(|| {
                if message == "job ended" {
                    job.succeed();
                } else {
                    drop(job);
                }
            }));
            assert!(unwound.is_err(), "{message}: the subscriber panicked");
            let ledger = queue.ledger();
            if ledger.in_flight != 0 {
                stranded.push(format!("fixed, {message}: {ledger}"));
            }
        });
    }
    assert!(stranded.is_empty(), "endings not counted: {stranded:#?}");
}

/// A subscriber that panics in the `job accepted` event of a fixed queue's put while a get
/// waits: as on the heap queue, the item is buffered and the waiting get must still be
/// woken for it (the event runs before the getters are told today, so the get sleeps
/// beside the item).
#[test]
fn a_subscriber_panicking_in_a_fixed_queues_put_still_wakes_the_waiting_get() {
    use tally_queue::fixed::FixedQueue;

    let subscriber = PanicAt {
        message: "job accepted",
        fired: false.into(),
    };
    tracing::subscriber::with_default(subscriber, || {
        let queue = FixedQueue::<u32, 2>::new();
        let woken = Arc::new(AtomicUsize::new(0));
        let waker = Waker::from(Arc::new(Count(woken.clone())));
        let mut get = pin!(queue.get());
        assert!(get
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
        let unwound = catch_unwind(AssertUnwindSafe(|| queue.try_put(1)));
        assert!(unwound.is_err(), "the subscriber panicked");
        assert_eq!(queue.len(), 1, "the item is buffered");
        assert_eq!(woken.load(Ordering::SeqCst), 1, "the waiting get was woken");
        match get.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            std::task::Poll::Ready(job) => assert_eq!(job.unwrap().succeed(), 1),
            std::task::Poll::Pending => panic!("the item is there"),
        };
    });
}
