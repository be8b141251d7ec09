//! Fault runs over `tally-queue` with id-level accounting.
//!
//! Each run draws its shape from one seed: the queue (bounded, unbounded, or bounded by
//! unfinished work), producers and consumers spread over plain threads with
//! `futures_lite::future::block_on`, plain threads using the blocking forms, and tasks on a
//! shared `async_executor::Executor` run by two threads; producers that meet a full queue;
//! consumers that succeed, reject, mark uncertain, retry, drop the delivery, panic while
//! holding it, or are cancelled while holding it, and consumers that check for a
//! cancellation request or race their work against it; futures cancelled after `k` polls;
//! gets, puts and joins with deadlines; the abandon policy (`Abandon`, `Uncertain`, or `Redeliver` with
//! a limit of 1 to 3 attempts); a `cancel_in_flight` at a random moment; and a graceful,
//! immediate, graceful-then-immediate, abort, or deadline-driven shutdown (with or without
//! a grace period) fired at a random moment.
//!
//! Every queue has a journal that logs every `JobEvent` and feeds a `tally_queue::Record`,
//! which also answers the ids in flight for the shutdown report.
//!
//! Every thread keeps its own record of what it saw. After the run, the records are merged
//! and checked against each other and against the ledger: every accepted `JobId` ended
//! exactly once (resolved with an outcome, abandoned, discarded and returned by the drain,
//! or taken as a dead letter), no id is duplicated or missing, every refused item came
//! back to its producer, no cancelled put was accepted, each id was delivered once per
//! acceptance, retry and redelivery, as an attempt within the limit, and each ledger field
//! equals the test's own tally. Then the journal: each id's events start with `Accepted`
//! and stop at one ending, every id in it is one a put accepted, the `Record` has nothing
//! pending and its final state of each id is the test's conclusion, and the journal never
//! panicked.
//!
//! A seed fixes every choice each thread makes, not the thread schedule. A failing run
//! prints its seed; `STRESS_SEED=<seed>` reruns that seed alone. `STRESS_OPS` sets the
//! total number of queue operations across seeds (default: a CI-sized share);
//! `STRESS_BASE_SEED` moves the whole seed sequence.

mod reliability;

use std::collections::{HashMap, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_executor::Executor;
use async_io::Timer;
use futures_lite::future::{block_on, or, yield_now};
use reliability::ends::{End, Ends};
use reliability::{
    after_polls, cancel_after, derive_seed, env_u64, quiet_injected_panics, scaled, SeedReport,
    INJECTED,
};
use tally_latch::CountDownLatch;
use tally_queue::{
    AbandonPolicy, DeadReason, Delivery, GetTimeoutError, JobEvent, JobId, JobState, Journal,
    Outcome, PutError, PutTimeoutError, Queue, TryGetError, TryPutError,
};

/// A queue item: the tag that names the attempt which produced it (producer and sequence).
type Item = u64;

/// How a producer's attempt to hand over one item ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    /// Accepted under this id.
    Accepted(JobId),
    /// Refused for good (shut down, no workers, or given up after full/timed-out
    /// refusals); the item came back.
    Returned,
    /// The put future was dropped while pending: the item went with it, never accepted.
    Cancelled,
}

/// What one thread or task saw.
#[derive(Default)]
struct Record {
    /// Every item a producer tried to hand over, with its fate.
    fates: Vec<(Item, Fate)>,
    /// Every delivery, as `(id, item, attempt)`: an id appears more than once only after
    /// a retry or a redelivery.
    delivered: Vec<(JobId, Item, u32)>,
    /// Ids that a successful retry put back in the buffer.
    retried: Vec<JobId>,
    /// Under `Redeliver`: ids whose delivery was dropped unresolved (not an ending: it is
    /// redelivered, or dead-lettered at the limit or after an immediate shutdown).
    dropped: Vec<JobId>,
    /// The dead letters taken after the run: `(id, item, attempts, reason)`.
    dead: Vec<(JobId, Item, u32, DeadReason)>,
    /// The ids a deadline-driven shutdown reported still in flight.
    reported_in_flight: Vec<JobId>,
    /// How each id ended, as seen by whoever ended it.
    ended: Vec<(JobId, Item, End)>,
    /// Refusals by kind: full, shut down, no workers, timed out.
    refusals: [u64; 4],
    /// Queue operations issued.
    ops: u64,
}

impl Record {
    fn merge(&mut self, other: Record) {
        self.fates.extend(other.fates);
        self.delivered.extend(other.delivered);
        self.retried.extend(other.retried);
        self.dropped.extend(other.dropped);
        self.dead.extend(other.dead);
        self.reported_in_flight.extend(other.reported_in_flight);
        self.ended.extend(other.ended);
        for (total, n) in self.refusals.iter_mut().zip(other.refusals) {
            *total += n;
        }
        self.ops += other.ops;
    }

    fn discarded(&mut self, drained: Vec<(JobId, Item)>) {
        self.ops += 1;
        self.ended.extend(
            drained
                .into_iter()
                .map(|(id, item)| (id, item, End::Discarded)),
        );
    }
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Bounded(usize),
    Unbounded,
    UnfinishedLimit(usize),
}

#[derive(Clone, Copy, Debug)]
enum Plan {
    Graceful,
    Immediate,
    GracefulThenImmediate,
    Within,
    /// `Queue::abort`: an immediate shutdown plus a cancellation request.
    Abort,
    /// `shutdown_until(deadline).with_grace(later)`.
    WithinGrace,
}

/// Where a producer or consumer runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// Its own thread, driven by `futures_lite::future::block_on`.
    BlockOn,
    /// Its own thread, mixing the `_blocking` forms with `block_on`.
    Blocking,
    /// A task on the shared executor.
    Executor,
}

#[derive(Debug)]
struct Config {
    kind: Kind,
    producers: Vec<Place>,
    consumers: Vec<Place>,
    items_per_producer: u64,
    /// Consumers hold `Worker` guards and may leave early.
    workers: bool,
    plan: Plan,
    /// The shutdown fires once this many puts were accepted (or every producer is done).
    fire_after: u64,
    /// If set, `cancel_in_flight` is called once this many puts were accepted (at most
    /// `fire_after`), before the shutdown plan.
    cancel_at: Option<u64>,
    policy: AbandonPolicy,
    joiner: bool,
}

impl Config {
    fn from_seed(seed: u64) -> Config {
        let mut rng = fastrand::Rng::with_seed(seed);
        let kind = match rng.u8(0..4) {
            0 | 1 => Kind::Bounded(rng.usize(1..=8)),
            2 => Kind::Unbounded,
            _ => Kind::UnfinishedLimit(rng.usize(1..=8)),
        };
        let place = |rng: &mut fastrand::Rng| match rng.u8(0..3) {
            0 => Place::BlockOn,
            1 => Place::Blocking,
            _ => Place::Executor,
        };
        let producers = (0..rng.usize(1..=3)).map(|_| place(&mut rng)).collect();
        let consumers = (0..rng.usize(1..=3))
            .map(|_| place(&mut rng))
            .collect::<Vec<_>>();
        let items_per_producer = scaled(rng.u64(100..=800), 6);
        let plan = match rng.u8(0..6) {
            0 => Plan::Graceful,
            1 => Plan::Immediate,
            2 => Plan::GracefulThenImmediate,
            3 => Plan::Within,
            4 => Plan::Abort,
            _ => Plan::WithinGrace,
        };
        let total = items_per_producer * 3;
        let fire_after = rng.u64(0..=total);
        let cancel_at = rng.bool().then(|| rng.u64(0..=fire_after));
        let policy = match rng.u8(0..4) {
            0 => AbandonPolicy::Abandon,
            1 => AbandonPolicy::Uncertain,
            _ => AbandonPolicy::redeliver(rng.u32(1..=3)).unwrap(),
        };
        Config {
            kind,
            producers,
            consumers,
            items_per_producer,
            workers: rng.bool(),
            plan,
            fire_after,
            cancel_at,
            policy,
            joiner: rng.bool(),
        }
    }

    fn queue(&self, journal: Arc<TestJournal>) -> Queue<Item> {
        let queue = match self.kind {
            Kind::Bounded(n) => Queue::bounded(n).unwrap(),
            Kind::Unbounded => Queue::unbounded(),
            Kind::UnfinishedLimit(n) => Queue::with_unfinished_limit(n).unwrap(),
        };
        queue.with_journal(journal).with_abandon_policy(self.policy)
    }

    fn redelivers(&self) -> bool {
        matches!(self.policy, AbandonPolicy::Redeliver { .. })
    }
}

/// The run's journal: every event goes to a log, in the order the queue recorded it, and
/// to a `tally_queue::Record`, which also answers the ids in flight.
#[derive(Default)]
struct TestJournal {
    log: Mutex<Vec<JobEvent>>,
    record: tally_queue::Record,
}

impl Journal for TestJournal {
    fn record(&self, event: JobEvent) {
        self.log.lock().unwrap().push(event);
        self.record.record(event);
    }

    fn in_flight_ids(&self) -> Option<Vec<JobId>> {
        Some(self.record.in_flight())
    }
}

/// Shared between the threads of one run.
struct Shared<'a> {
    queue: &'a Queue<Item>,
    /// Accepted puts so far: the shutdown fires on a threshold of it.
    accepted: AtomicU64,
    producers_done: AtomicUsize,
    /// Opens when the run's producers and consumers have all finished.
    finished: CountDownLatch,
    /// What each producer (then each consumer) is waiting on, for the hang report.
    waiting_on: Vec<AtomicU64>,
}

impl Shared<'_> {
    fn at(&self, role: usize, what: u64) {
        self.waiting_on[role].store(what, Ordering::Relaxed);
    }
}

fn deadline(rng: &mut fastrand::Rng) -> Timer {
    Timer::after(Duration::from_micros(rng.u64(0..300)))
}

/// A refused put of any form: the kind (0 full, 1 shut down, 2 no workers, 3 timed out),
/// as counted in `Record::refusals`, and the item handed back.
struct Refusal(usize, Item);

impl From<TryPutError<Item>> for Refusal {
    fn from(error: TryPutError<Item>) -> Self {
        match error {
            TryPutError::Full(item) => Refusal(0, item),
            TryPutError::ShutDown(item) => Refusal(1, item),
            TryPutError::NoWorkers(item) => Refusal(2, item),
            other => panic!("a refusal the fault run does not know: {other:?}"),
        }
    }
}

impl From<PutError<Item>> for Refusal {
    fn from(error: PutError<Item>) -> Self {
        Refusal::from(TryPutError::from(error))
    }
}

impl From<PutTimeoutError<Item>> for Refusal {
    fn from(error: PutTimeoutError<Item>) -> Self {
        match error {
            PutTimeoutError::TimedOut(item) => Refusal(3, item),
            PutTimeoutError::ShutDown(item) => Refusal(1, item),
            PutTimeoutError::NoWorkers(item) => Refusal(2, item),
            other => panic!("a refusal the fault run does not know: {other:?}"),
        }
    }
}

async fn produce(shared: &Shared<'_>, place: Place, index: u64, items: u64, seed: u64) -> Record {
    let queue = shared.queue;
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut record = Record::default();
    let mut closed_seen = 0;
    for n in 0..items {
        let tag = (index << 32) | n;
        let mut item = tag;
        let mut bounces = 0;
        let fate = loop {
            record.ops += 1;
            let choice = rng.u8(0..10);
            shared.at(index as usize, 100 + u64::from(choice));
            // `None`: the put future was cancelled while pending.
            // The three forms' refusals, as one error with the `Full` of `try_put` beside the
            // `TimedOut` of the deadline forms.
            let result: Option<Result<JobId, Refusal>> = match choice {
                0..=2 => Some(queue.try_put(item).map_err(Refusal::from)),
                3..=4 if place == Place::Blocking => {
                    Some(queue.put_blocking(item).map_err(Refusal::from))
                }
                3..=5 => Some(queue.put(item).await.map_err(Refusal::from)),
                6..=7 => Some(
                    queue
                        .put_until(item, deadline(&mut rng))
                        .await
                        .map_err(Refusal::from),
                ),
                8 => Some(
                    queue
                        .put_until(item, after_polls(rng.u32(0..3)))
                        .await
                        .map_err(Refusal::from),
                ),
                _ => cancel_after(queue.put(item), rng.u32(0..4))
                    .await
                    .map(|done| done.map_err(Refusal::from)),
            };
            match result {
                Some(Ok(id)) => break Fate::Accepted(id),
                None => break Fate::Cancelled,
                Some(Err(error)) => {
                    let Refusal(kind, back) = error;
                    record.refusals[kind] += 1;
                    assert_eq!(back, tag, "a refused put handed back another item");
                    item = back;
                    if kind == 1 || kind == 2 {
                        closed_seen += 1;
                        break Fate::Returned;
                    }
                    bounces += 1;
                    if bounces > 50 {
                        break Fate::Returned;
                    }
                    shared.at(index as usize, 1);
                    yield_now().await;
                }
            }
        };
        shared.at(index as usize, 0);
        if let Fate::Accepted(_) = fate {
            shared.accepted.fetch_add(1, Ordering::Relaxed);
        }
        record.fates.push((tag, fate));
        // A few more attempts after the queue closed, each of which must refuse.
        if closed_seen >= 3 {
            break;
        }
    }
    shared.producers_done.fetch_add(1, Ordering::Release);
    shared.at(index as usize, 999);
    record
}

/// Ends `delivery` in one of the ways a consumer can, and records how. Under `Redeliver`,
/// a delivery dropped unresolved is recorded in `dropped`, not as an end; under
/// `Uncertain`, it ends uncertain.
async fn handle(
    delivery: Delivery<'_, Item>,
    policy: AbandonPolicy,
    rng: &mut fastrand::Rng,
    record: &mut Record,
) {
    let id = delivery.id();
    let item = *delivery;
    record.delivered.push((id, item, delivery.attempt()));
    record.ops += 1;
    let end = match rng.u8(0..24) {
        0..=5 => {
            assert_eq!(delivery.succeed(), item);
            End::Succeeded
        }
        6..=8 => {
            delivery.reject();
            End::Rejected
        }
        9..=10 => {
            delivery.uncertain();
            End::Uncertain
        }
        11 => {
            let outcome =
                [Outcome::Succeeded, Outcome::Rejected, Outcome::Uncertain][rng.usize(0..3)];
            assert_eq!(delivery.resolve(outcome), item);
            outcome.into()
        }
        12..=13 => {
            drop(delivery);
            End::Abandoned
        }
        14 => {
            // A handler that panics while it holds the delivery: dropped during unwinding.
            let panicked = catch_unwind(AssertUnwindSafe(move || {
                let _held = delivery;
                panic!("{}", INJECTED);
            }));
            assert!(panicked.is_err());
            End::Abandoned
        }
        15..=16 => match delivery.retry() {
            Ok(again) => {
                assert_eq!(again, id, "a retry keeps the id");
                record.retried.push(id);
                return;
            }
            Err(delivery) => {
                delivery.succeed();
                End::Succeeded
            }
        },
        17..=19 => {
            // Held across await points by a future that may be cancelled at any of them.
            let polls = rng.u32(0..4);
            let work = async move {
                yield_now().await;
                yield_now().await;
                delivery.succeed()
            };
            match cancel_after(work, polls).await {
                Some(back) => {
                    assert_eq!(back, item);
                    End::Succeeded
                }
                None => End::Abandoned,
            }
        }
        20..=21 => {
            // A handler that checks for a cancellation request and, if asked, stops with
            // its effect unknown.
            yield_now().await;
            if delivery.is_cancelled() {
                delivery.uncertain();
                End::Uncertain
            } else {
                delivery.succeed();
                End::Succeeded
            }
        }
        _ => {
            // Work raced against the cancellation request.
            let steps = rng.u32(0..20);
            let cancelled = delivery.cancelled();
            let finished = or(
                async {
                    for _ in 0..steps {
                        yield_now().await;
                    }
                    true
                },
                async {
                    cancelled.await;
                    false
                },
            )
            .await;
            if finished {
                delivery.succeed();
                End::Succeeded
            } else {
                assert!(delivery.is_cancelled());
                delivery.uncertain();
                End::Uncertain
            }
        }
    };
    let end = match (end, policy) {
        (End::Abandoned, AbandonPolicy::Redeliver { .. }) => {
            record.dropped.push(id);
            return;
        }
        (End::Abandoned, AbandonPolicy::Uncertain) => End::Uncertain,
        (end, _) => end,
    };
    record.ended.push((id, item, end));
}

async fn consume(
    shared: &Shared<'_>,
    place: Place,
    role: usize,
    workers: bool,
    policy: AbandonPolicy,
    seed: u64,
) -> Record {
    let queue = shared.queue;
    let _worker = workers.then(|| queue.worker());
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut record = Record::default();
    loop {
        record.ops += 1;
        let choice = rng.u8(0..10);
        shared.at(role, 200 + u64::from(choice));
        let delivery = match choice {
            0..=2 => match queue.try_get() {
                Ok(delivery) => delivery,
                Err(TryGetError::ShutDown) => break,
                Err(TryGetError::Empty) => match queue.get().await {
                    Ok(delivery) => delivery,
                    Err(_) => break,
                },
            },
            3..=4 if place == Place::Blocking => match queue.get_blocking() {
                Ok(delivery) => delivery,
                Err(_) => break,
            },
            3..=5 => match queue.get().await {
                Ok(delivery) => delivery,
                Err(_) => break,
            },
            6..=7 => match queue.get_until(deadline(&mut rng)).await {
                Ok(delivery) => delivery,
                Err(GetTimeoutError::TimedOut) => continue,
                Err(GetTimeoutError::ShutDown) => break,
            },
            8 => match queue.get_until(after_polls(rng.u32(0..3))).await {
                Ok(delivery) => delivery,
                Err(GetTimeoutError::TimedOut) => continue,
                Err(GetTimeoutError::ShutDown) => break,
            },
            _ => match cancel_after(queue.get(), rng.u32(0..4)).await {
                Some(Ok(delivery)) => delivery,
                Some(Err(_)) => break,
                None => continue,
            },
        };
        shared.at(role, 300);
        handle(delivery, policy, &mut rng, &mut record).await;
        // With worker guards, a consumer may leave early; when the last one leaves,
        // waiting producers get their items back.
        if workers && rng.u16(0..400) == 0 {
            break;
        }
    }
    shared.at(role, 999);
    record
}

/// Joins with deadlines while the run goes on; each must either see nothing unfinished or
/// time out, and never hang.
async fn join_repeatedly(shared: &Shared<'_>, seed: u64) -> Record {
    let queue = shared.queue;
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut record = Record::default();
    while !shared.finished.is_open() {
        record.ops += 1;
        match rng.u8(0..3) {
            0 => {
                if let Err(timed_out) = queue.join_until(deadline(&mut rng)).await {
                    assert!(timed_out.ledger().accepted > 0);
                }
            }
            1 => {
                // Cancelled after k polls, and bounded by a deadline: an unwoken join is
                // never polled again, so the deadline is what ends it.
                let join = queue.join_until(deadline(&mut rng));
                let _ = cancel_after(join, rng.u32(0..3)).await;
            }
            _ => {
                let _ = queue.join_until(after_polls(rng.u32(0..5))).await;
            }
        }
        Timer::after(Duration::from_micros(rng.u64(0..200))).await;
    }
    record
}

fn control(shared: &Shared<'_>, config: &Config, seed: u64) -> Record {
    let queue = shared.queue;
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut record = Record::default();
    let producers = config.producers.len();
    let wait_for = |threshold: u64| {
        while shared.accepted.load(Ordering::Relaxed) < threshold
            && shared.producers_done.load(Ordering::Acquire) < producers
        {
            std::thread::yield_now();
        }
    };
    if let Some(cancel_at) = config.cancel_at {
        wait_for(cancel_at);
        record.ops += 1;
        assert!(
            queue.cancel_in_flight(),
            "cancellation was already requested"
        );
        assert!(queue.is_cancel_requested());
    }
    wait_for(config.fire_after);
    record.ops += 1;
    match config.plan {
        Plan::Graceful => {
            queue.shutdown();
        }
        Plan::Immediate => record.discarded(queue.shutdown_now()),
        Plan::GracefulThenImmediate => {
            queue.shutdown();
            std::thread::sleep(Duration::from_micros(rng.u64(0..500)));
            record.discarded(queue.shutdown_now());
        }
        Plan::Abort => {
            record.discarded(queue.abort());
            assert!(queue.is_cancel_requested());
        }
        Plan::Within | Plan::WithinGrace => {
            let closed = if let Plan::Within = config.plan {
                block_on(queue.shutdown_until(deadline(&mut rng)))
            } else {
                let drain = Duration::from_micros(rng.u64(0..300));
                let grace = Duration::from_micros(rng.u64(0..300));
                // The grace timer is first polled after the deadline: it ends at the
                // deadline plus the grace period.
                block_on(
                    queue
                        .shutdown_until(Timer::after(drain))
                        .with_grace(Timer::after(drain + grace)),
                )
            };
            let ids = closed
                .in_flight_ids
                .clone()
                .expect("a journal that keeps ids is installed, so the report names them");
            assert!(
                ids.windows(2).all(|w| w[0] < w[1]),
                "in-flight ids not in id order or repeated: {ids:?}"
            );
            let in_flight = closed.ledger.in_flight;
            if in_flight == 0 {
                assert!(
                    ids.is_empty(),
                    "ids in flight {ids:?} with none in the ledger"
                );
            }
            // The ledger is read before the journal is asked, and a job's ending reaches
            // the journal before the ledger, so the journal names no more ids than the
            // ledger counts. Under `Redeliver`, a delivery being abandoned leaves the
            // ledger's in-flight count just before its `Redelivered` event reaches the
            // journal: at most one such delivery per consumer.
            let slack = if config.redelivers() {
                config.consumers.len() as u64
            } else {
                0
            };
            assert!(
                ids.len() as u64 <= in_flight + slack,
                "the report names {} ids in flight, the ledger counts {in_flight}: {ids:?}",
                ids.len()
            );
            record.reported_in_flight.extend(ids);
            if closed.drained_in_time {
                // After a graceful shutdown nothing can be accepted any more, so a drain
                // that finished in time leaves nothing buffered or in flight.
                assert!(closed.returned.is_empty());
                assert_eq!(closed.ledger.unfinished(), 0, "{}", closed.ledger);
                assert_eq!((closed.ledger.buffered, closed.ledger.in_flight), (0, 0));
                assert!(closed.ledger.is_balanced(), "{}", closed.ledger);
            }
            record.discarded(closed.returned);
        }
    }
    record
}

/// One run; returns the number of queue operations it issued.
fn run(seed: u64) -> u64 {
    let _report = SeedReport {
        test: "queue fault run",
        env: "STRESS_SEED",
        seed,
    };
    let config = Config::from_seed(seed);
    if env_u64("STRESS_VERBOSE").is_some() {
        eprintln!("seed {seed:#x}: {config:?}");
    }
    let journal = Arc::new(TestJournal::default());
    let queue = config.queue(Arc::clone(&journal));
    let shared = Shared {
        queue: &queue,
        accepted: AtomicU64::new(0),
        producers_done: AtomicUsize::new(0),
        finished: CountDownLatch::new(1),
        waiting_on: (0..config.producers.len() + config.consumers.len())
            .map(|_| AtomicU64::new(0))
            .collect(),
    };
    let executor = Executor::new();
    let stop = CountDownLatch::new(1);
    let mut record = Record::default();

    std::thread::scope(|s| {
        let shared = &shared;
        let config = &config;
        let executor = &executor;
        for _ in 0..2 {
            s.spawn(|| block_on(executor.run(stop.wait())));
        }
        let mut threads = Vec::new();
        let mut tasks = Vec::new();
        for (p, &place) in config.producers.iter().enumerate() {
            let seed = derive_seed(seed, 100 + p as u64);
            let work = produce(shared, place, p as u64, config.items_per_producer, seed);
            match place {
                Place::Executor => tasks.push(executor.spawn(work)),
                _ => threads.push(s.spawn(move || block_on(work))),
            }
        }
        for (c, &place) in config.consumers.iter().enumerate() {
            let seed = derive_seed(seed, 200 + c as u64);
            let role = config.producers.len() + c;
            let work = consume(shared, place, role, config.workers, config.policy, seed);
            match place {
                Place::Executor => tasks.push(executor.spawn(work)),
                _ => threads.push(s.spawn(move || block_on(work))),
            }
        }
        let joiner = config
            .joiner
            .then(|| executor.spawn(join_repeatedly(shared, derive_seed(seed, 300))));
        let controller = s.spawn(move || control(shared, config, derive_seed(seed, 400)));
        // A hang is a failure too: report what everyone waits on, then abort, since the
        // stuck threads cannot be unwound.
        let stop = &stop;
        s.spawn(move || {
            let limit = Duration::from_secs(env_u64("STRESS_HANG_SECS").unwrap_or(120));
            if stop.wait_blocking_timeout(limit).is_err() {
                let waiting: Vec<u64> = shared
                    .waiting_on
                    .iter()
                    .map(|w| w.load(Ordering::Relaxed))
                    .collect();
                eprintln!(
                    "\nqueue fault run hung for {limit:?} with seed {seed:#x} ({config:?})\n\
                     queue: {:?}\nledger: {}\nproducers then consumers wait at: {waiting:?}\n\
                     rerun with STRESS_SEED={seed:#x}",
                    shared.queue,
                    shared.queue.ledger()
                );
                std::process::abort();
            }
        });

        // The controller first: if one of its checks failed, abort the queue so that
        // everyone else ends, let the run wind down, and report that failure then
        // (rather than leaving the executor threads waiting for `stop`).
        let controlled = controller.join();
        if controlled.is_err() {
            shared.queue.abort();
        }
        for thread in threads {
            record.merge(thread.join().expect("a producer or consumer thread failed"));
        }
        for task in tasks {
            record.merge(block_on(task));
        }
        shared.finished.count_down();
        if let Some(joiner) = joiner {
            record.merge(block_on(joiner));
        }
        stop.count_down();
        match controlled {
            Ok(controlled) => record.merge(controlled),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    });

    // Whatever is still buffered (consumers that left early) comes back here.
    record.discarded(queue.shutdown_now());
    record.ops += 1;
    let ledger = block_on(queue.join_until(Timer::after(Duration::from_secs(10))))
        .unwrap_or_else(|timed_out| panic!("join hung after the run: {}", timed_out.ledger()));
    // After `join`, every dead letter is here.
    record.ops += 1;
    for letter in queue.take_dead_letters() {
        record
            .dead
            .push((letter.id, letter.item, letter.attempts, letter.reason));
    }
    let redeliveries = queue.redeliveries();
    let ends = check(&config, &record, ledger, redeliveries);
    assert_eq!(queue.journal_panics(), 0, "the test journal panicked");
    let log = std::mem::take(&mut *journal.log.lock().unwrap());
    check_journal(&config, &record, &ends, &log, &journal.record);
    record.ops
}

/// The id-level accounting, from the records alone, then against the ledger. Returns how
/// the test concludes each accepted id ended.
fn check(
    config: &Config,
    record: &Record,
    ledger: tally_queue::Ledger,
    redeliveries: u64,
) -> HashMap<JobId, End> {
    // Every attempted item has exactly one fate, and accepted ids are distinct.
    let mut accepted: HashMap<JobId, Item> = HashMap::new();
    let mut tags = HashSet::new();
    let mut cancelled = HashSet::new();
    for &(tag, fate) in &record.fates {
        assert!(tags.insert(tag), "item {tag:#x} has two fates");
        match fate {
            Fate::Accepted(id) => {
                if let Some(other) = accepted.insert(id, tag) {
                    panic!("{id} was issued to {other:#x} and {tag:#x}");
                }
            }
            Fate::Cancelled => {
                cancelled.insert(tag);
            }
            Fate::Returned => {}
        }
    }

    // Every delivery carries the item accepted under its id, as the next attempt: the
    // deliveries of one id are attempts 1, 2, 3, ... (retries and redeliveries alike),
    // each once, within the redelivery policy's limit.
    let max_attempts = config.policy.max_attempts().unwrap_or(u32::MAX);
    let mut deliveries: HashMap<JobId, u64> = HashMap::new();
    let mut attempts: HashMap<JobId, Vec<u32>> = HashMap::new();
    for &(id, item, attempt) in &record.delivered {
        assert!(
            !cancelled.contains(&item),
            "cancelled put {item:#x} was delivered as {id}"
        );
        assert_eq!(
            accepted.get(&id),
            Some(&item),
            "{id} delivered with the wrong item"
        );
        assert!(
            (1..=max_attempts).contains(&attempt),
            "{id} delivered as attempt {attempt} under {:?}",
            config.policy
        );
        *deliveries.entry(id).or_default() += 1;
        attempts.entry(id).or_default().push(attempt);
    }
    for (id, mut attempts) in attempts {
        attempts.sort_unstable();
        let expected: Vec<u32> = (1..=attempts.len() as u32).collect();
        assert_eq!(
            attempts, expected,
            "{id}'s deliveries came as these attempts"
        );
    }
    let mut retries: HashMap<JobId, u64> = HashMap::new();
    for &id in &record.retried {
        *retries.entry(id).or_default() += 1;
    }
    let mut drops: HashMap<JobId, u64> = HashMap::new();
    for &id in &record.dropped {
        assert!(
            config.redelivers(),
            "{id} recorded as dropped under Abandon"
        );
        *drops.entry(id).or_default() += 1;
    }

    // The dead letters end their ids: `Exhausted` at the limit, `ShutDownNow` after an
    // immediate shutdown; each carries its item and was dropped by a consumer, except a
    // put that raced the drain and landed after it (never delivered: 0 attempts, under
    // any policy).
    let mut ended: Vec<(JobId, Item, End)> = record.ended.clone();
    let mut landed_late = HashSet::new();
    for &(id, item, attempts, reason) in &record.dead {
        if attempts == 0 {
            assert_eq!(reason, DeadReason::ShutDownNow, "{id} dead before delivery");
            assert!(
                !deliveries.contains_key(&id),
                "{id} landed late and was delivered"
            );
            landed_late.insert(id);
            ended.push((id, item, End::DeadDiscarded));
            continue;
        }
        assert!(config.redelivers(), "{id} dead-lettered under Abandon");
        assert!(
            drops.contains_key(&id),
            "{id} dead-lettered ({reason:?}) but no consumer dropped it"
        );
        let end = match reason {
            DeadReason::Exhausted { .. } => {
                assert_eq!(
                    attempts, max_attempts,
                    "{id} exhausted after {attempts} of {max_attempts} attempts"
                );
                End::DeadLettered
            }
            DeadReason::ShutDownNow => {
                assert!((1..=max_attempts).contains(&attempts));
                End::DeadDiscarded
            }
        };
        ended.push((id, item, end));
    }

    // Every accepted id ended exactly once; nothing else ended.
    let mut ends: HashMap<JobId, End> = HashMap::new();
    let mut tally = Ends::default();
    for &(id, item, end) in &ended {
        assert_eq!(
            accepted.get(&id),
            Some(&item),
            "{id} ended ({end:?}) with the wrong item or was never accepted"
        );
        if let Some(first) = ends.insert(id, end) {
            panic!("{id} ended twice: {first:?}, then {end:?}");
        }
        tally.record(end);
    }
    let missing: Vec<_> = accepted
        .keys()
        .filter(|id| !ends.contains_key(id))
        .collect();
    assert!(
        missing.is_empty(),
        "accepted ids that never ended: {missing:?}"
    );
    for id in &record.reported_in_flight {
        assert!(
            accepted.contains_key(id),
            "{id} reported in flight but never accepted"
        );
    }

    // Deliveries: once per acceptance, once per retry and once per redelivery (every drop
    // but a dead-lettered id's last), except that an id drained by an immediate shutdown
    // had its last trip through the buffer end in the drain.
    let mut redelivered_total = 0;
    for (&id, &end) in &ends {
        let delivered = deliveries.get(&id).copied().unwrap_or(0);
        if landed_late.contains(&id) {
            assert_eq!(delivered, 0);
            continue;
        }
        let retried = retries.get(&id).copied().unwrap_or(0);
        let dropped = drops.get(&id).copied().unwrap_or(0);
        let redelivered = match end {
            End::DeadLettered | End::DeadDiscarded => dropped - 1,
            _ => dropped,
        };
        redelivered_total += redelivered;
        let expected = 1 + retried + redelivered - u64::from(end == End::Discarded);
        assert_eq!(
            delivered, expected,
            "{id} ({end:?}) delivered {delivered} times after {retried} retries and \
             {redelivered} redeliveries"
        );
    }
    assert_eq!(
        redeliveries, redelivered_total,
        "the queue counts {redeliveries} redeliveries, the records {redelivered_total}"
    );

    // The ledger, field by field, against the independent tally.
    let expected = tally.settled_ledger(accepted.len() as u64);
    assert_eq!(
        ledger, expected,
        "ledger disagrees with the records ({config:?})"
    );
    assert!(ledger.is_balanced(), "{ledger}");
    ends
}

/// The journal against the records: each id's events in a possible order with exactly one
/// ending, every id one a put accepted, and the `Record`'s final state of each id the
/// test's own conclusion.
fn check_journal(
    config: &Config,
    record: &Record,
    ends: &HashMap<JobId, End>,
    log: &[JobEvent],
    journal: &tally_queue::Record,
) {
    let mut events: HashMap<JobId, Vec<JobEvent>> = HashMap::new();
    for &event in log {
        events.entry(event.id()).or_default().push(event);
    }
    let mut seen: HashMap<JobId, usize> = HashMap::new();
    for &(id, _, _) in &record.delivered {
        *seen.entry(id).or_default() += 1;
    }
    let dead: HashMap<JobId, u32> = record.dead.iter().map(|d| (d.0, d.2)).collect();
    let abandon_is_final = config.policy == AbandonPolicy::Abandon;
    let is_final = |event: &JobEvent| {
        event.is_final() || (abandon_is_final && matches!(event, JobEvent::Abandoned { .. }))
    };

    // (a) Every id in the journal is one a put accepted: a put either draws its id and is
    // accepted, or is refused without one.
    for (&id, events) in &events {
        assert!(
            matches!(events[0], JobEvent::Accepted(_)),
            "{id}'s first event is {:?}",
            events[0]
        );
        assert!(
            ends.contains_key(&id),
            "{id} is in the journal but no put accepted it: {events:?}"
        );
    }

    for (&id, &end) in ends {
        let Some(events) = events.get(&id) else {
            panic!("accepted {id} ({end:?}) has no event in the journal");
        };
        // (b) Nothing after the ending; a `Discarded` may be followed only by the
        // `DeadLettered` of a delivery abandoned after an immediate shutdown.
        let mut finals = 0;
        for (n, event) in events.iter().enumerate() {
            if n > 0 && is_final(&events[n - 1]) {
                panic!(
                    "{id}: {event:?} after the final {:?}: {events:?}",
                    events[n - 1]
                );
            }
            if n > 0 && matches!(events[n - 1], JobEvent::Discarded(_)) {
                assert!(
                    matches!(event, JobEvent::DeadLettered { .. }),
                    "{id}: {event:?} after Discarded: {events:?}"
                );
                continue;
            }
            if is_final(event) || matches!(event, JobEvent::Discarded(_)) {
                finals += 1;
            }
        }
        assert_eq!(finals, 1, "{id} ({end:?}) has {finals} endings: {events:?}");
        let last = events.last().unwrap();
        assert!(
            is_final(last) || matches!(last, JobEvent::Discarded(_)),
            "{id}'s last event {last:?} is not an ending"
        );
        // The deliveries the journal saw are those the consumers saw.
        let delivered = events
            .iter()
            .filter(|e| matches!(e, JobEvent::Delivered { .. }))
            .count();
        let seen = seen.get(&id).copied().unwrap_or(0);
        assert_eq!(
            delivered, seen,
            "{id}: the journal saw {delivered} deliveries, the consumers {seen}: {events:?}"
        );

        // (d) The Record's final state is the test's conclusion.
        let state = journal.state(id);
        let agrees = match (end, state) {
            (End::Succeeded, Some(JobState::Ended(Outcome::Succeeded)))
            | (End::Rejected, Some(JobState::Ended(Outcome::Rejected)))
            | (End::Uncertain, Some(JobState::Ended(Outcome::Uncertain)))
            | (End::Abandoned, Some(JobState::Abandoned { .. }))
            | (End::Discarded | End::DeadDiscarded, Some(JobState::Discarded)) => true,
            (End::DeadLettered, Some(JobState::DeadLettered { attempts })) => {
                dead.get(&id) == Some(&attempts)
            }
            _ => false,
        };
        assert!(
            agrees,
            "{id}: the test concluded {end:?}, the journal's record says {state:?} \
             ({events:?})"
        );
    }

    // (c) Nothing is left pending.
    let pending = journal.pending();
    assert!(
        pending.is_empty(),
        "ids still pending in the record: {pending:?}"
    );
}

/// The seeds to run, and the total budget of queue operations they spend.
fn seeds_and_budget() -> (Box<dyn Iterator<Item = u64>>, u64) {
    if let Some(seed) = env_u64("STRESS_SEED") {
        return (Box::new(std::iter::once(seed)), 0);
    }
    // CI's share under `cargo test` (a debug build); a longer run sets STRESS_OPS.
    let default = if cfg!(debug_assertions) {
        2_000_000
    } else {
        10_000_000
    };
    let budget = scaled(env_u64("STRESS_OPS").unwrap_or(default), 200);
    let base = env_u64("STRESS_BASE_SEED").unwrap_or(0x5EED_F0FA);
    (Box::new((0..).map(move |i| derive_seed(base, i))), budget)
}

#[test]
fn fault_runs_account_for_every_id() {
    quiet_injected_panics();
    let started = Instant::now();
    let (seeds, budget) = seeds_and_budget();
    let (mut ops, mut runs) = (0, 0);
    for seed in seeds {
        ops += run(seed);
        runs += 1;
        if ops >= budget {
            break;
        }
    }
    eprintln!(
        "queue fault runs: {runs} seeds, {ops} operations in {:.1?}",
        started.elapsed()
    );
    assert!(ops > 0);
}
