//! Fault runs over `tally-queue` with id-level accounting.
//!
//! Each run draws its shape from one seed: the queue (bounded, unbounded, or bounded by
//! unfinished work), producers and consumers spread over plain threads with
//! `futures_lite::future::block_on`, plain threads using the blocking forms, and tasks on a
//! shared `async_executor::Executor` run by two threads; producers that meet a full queue;
//! consumers that succeed, reject, mark uncertain, retry, drop the delivery, panic while
//! holding it, or are cancelled while holding it; futures cancelled after `k` polls; gets,
//! puts and joins with deadlines; and a graceful, immediate, graceful-then-immediate or
//! deadline-driven shutdown fired at a random moment.
//!
//! Every thread keeps its own record of what it saw. After the run, the records are merged
//! and checked against each other and against the ledger: every accepted `JobId` ended
//! exactly once (resolved with an outcome, abandoned, or discarded and returned by the
//! drain), no id is duplicated or missing, every refused item came back to its producer,
//! no cancelled put was accepted, and each ledger field equals the test's own tally.
//!
//! A seed fixes every choice each thread makes, not the thread schedule. A failing run
//! prints its seed; `STRESS_SEED=<seed>` reruns that seed alone. `STRESS_OPS` sets the
//! total number of queue operations across seeds (default: a CI-sized share);
//! `STRESS_BASE_SEED` moves the whole seed sequence.

mod reliability;

use std::collections::{HashMap, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use async_executor::Executor;
use async_io::Timer;
use futures_lite::future::{block_on, yield_now};
use reliability::{
    after_polls, cancel_after, derive_seed, env_u64, quiet_injected_panics, scaled, SeedReport,
    INJECTED,
};
use tally_latch::CountDownLatch;
use tally_queue::{
    Delivery, GetTimeoutError, JobId, Outcome, PutError, PutTimeoutError, Queue, TryGetError,
    TryPutError,
};

/// A queue item: the tag that names the attempt which produced it (producer and sequence).
type Item = u64;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum End {
    Succeeded,
    Rejected,
    Uncertain,
    Abandoned,
    Discarded,
}

impl From<Outcome> for End {
    fn from(outcome: Outcome) -> Self {
        match outcome {
            Outcome::Succeeded => End::Succeeded,
            Outcome::Rejected => End::Rejected,
            Outcome::Uncertain => End::Uncertain,
        }
    }
}

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
    /// Every delivery, as `(id, item)`: an id appears more than once only after a retry.
    delivered: Vec<(JobId, Item)>,
    /// Ids that a successful retry put back in the buffer.
    retried: Vec<JobId>,
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
        let plan = match rng.u8(0..4) {
            0 => Plan::Graceful,
            1 => Plan::Immediate,
            2 => Plan::GracefulThenImmediate,
            _ => Plan::Within,
        };
        let total = items_per_producer * 3;
        Config {
            kind,
            producers,
            consumers,
            items_per_producer,
            workers: rng.bool(),
            plan,
            fire_after: rng.u64(0..=total),
            joiner: rng.bool(),
        }
    }

    fn queue(&self) -> Queue<Item> {
        match self.kind {
            Kind::Bounded(n) => Queue::bounded(n).unwrap(),
            Kind::Unbounded => Queue::unbounded(),
            Kind::UnfinishedLimit(n) => Queue::with_unfinished_limit(n).unwrap(),
        }
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

/// Ends `delivery` in one of the ways a consumer can, and records how.
async fn handle(delivery: Delivery<'_, Item>, rng: &mut fastrand::Rng, record: &mut Record) {
    let id = delivery.id();
    let item = *delivery;
    record.delivered.push((id, item));
    record.ops += 1;
    let end = match rng.u8(0..20) {
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
        _ => {
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
    };
    record.ended.push((id, item, end));
}

async fn consume(
    shared: &Shared<'_>,
    place: Place,
    role: usize,
    workers: bool,
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
        handle(delivery, &mut rng, &mut record).await;
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
    while shared.accepted.load(Ordering::Relaxed) < config.fire_after
        && shared.producers_done.load(Ordering::Acquire) < producers
    {
        std::thread::yield_now();
    }
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
        Plan::Within => {
            let closed = block_on(queue.shutdown_until(deadline(&mut rng)));
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
    let queue = config.queue();
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
            let work = consume(shared, place, role, config.workers, seed);
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

        for thread in threads {
            record.merge(thread.join().expect("a producer or consumer thread failed"));
        }
        for task in tasks {
            record.merge(block_on(task));
        }
        record.merge(controller.join().expect("the controller failed"));
        shared.finished.count_down();
        if let Some(joiner) = joiner {
            record.merge(block_on(joiner));
        }
        stop.count_down();
    });

    // Whatever is still buffered (consumers that left early) comes back here.
    record.discarded(queue.shutdown_now());
    record.ops += 1;
    let ledger = block_on(queue.join_until(Timer::after(Duration::from_secs(10))))
        .unwrap_or_else(|timed_out| panic!("join hung after the run: {}", timed_out.ledger()));
    check(&config, &record, ledger);
    record.ops
}

/// The id-level accounting, from the records alone, then against the ledger.
fn check(config: &Config, record: &Record, ledger: tally_queue::Ledger) {
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

    // Every delivery carries the item accepted under its id.
    let mut deliveries: HashMap<JobId, u64> = HashMap::new();
    for &(id, item) in &record.delivered {
        assert!(
            !cancelled.contains(&item),
            "cancelled put {item:#x} was delivered as {id}"
        );
        assert_eq!(
            accepted.get(&id),
            Some(&item),
            "{id} delivered with the wrong item"
        );
        *deliveries.entry(id).or_default() += 1;
    }
    let mut retries: HashMap<JobId, u64> = HashMap::new();
    for &id in &record.retried {
        *retries.entry(id).or_default() += 1;
    }

    // Every accepted id ended exactly once; nothing else ended.
    let mut ends: HashMap<JobId, End> = HashMap::new();
    let mut tally: HashMap<End, u64> = HashMap::new();
    for &(id, item, end) in &record.ended {
        assert_eq!(
            accepted.get(&id),
            Some(&item),
            "{id} ended ({end:?}) with the wrong item or was never accepted"
        );
        if let Some(first) = ends.insert(id, end) {
            panic!("{id} ended twice: {first:?}, then {end:?}");
        }
        *tally.entry(end).or_default() += 1;
    }
    let missing: Vec<_> = accepted
        .keys()
        .filter(|id| !ends.contains_key(id))
        .collect();
    assert!(
        missing.is_empty(),
        "accepted ids that never ended: {missing:?}"
    );

    // Deliveries: once per acceptance plus once per retry, except a discarded id, whose
    // last trip through the buffer ended in the drain.
    for (&id, &end) in &ends {
        let delivered = deliveries.get(&id).copied().unwrap_or(0);
        let retried = retries.get(&id).copied().unwrap_or(0);
        let expected = if end == End::Discarded {
            retried
        } else {
            retried + 1
        };
        assert_eq!(
            delivered, expected,
            "{id} ({end:?}) delivered {delivered} times after {retried} retries"
        );
    }

    // The ledger, field by field, against the independent tally.
    let count = |end| tally.get(&end).copied().unwrap_or(0);
    let expected = {
        let mut ledger = tally_queue::Ledger::default();
        ledger.accepted = accepted.len() as u64;
        ledger.buffered = 0;
        ledger.in_flight = 0;
        ledger.succeeded = count(End::Succeeded);
        ledger.rejected = count(End::Rejected);
        ledger.uncertain = count(End::Uncertain);
        ledger.abandoned = count(End::Abandoned);
        ledger.discarded = count(End::Discarded);
        ledger
    };
    assert_eq!(
        ledger, expected,
        "ledger disagrees with the records ({config:?})"
    );
    assert!(ledger.is_balanced(), "{ledger}");
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
