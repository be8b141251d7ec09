//! Queue and channel flavors and the drivers that run them.
//!
//! Every workload moves `n` messages (`u64`) from `producers` tasks to `consumers` tasks.
//! The peers are async-channel, flume, kanal, tokio mpsc (alone and with a `TaskTracker`)
//! and, for plain threads, crossbeam-channel.
//! Our queue does put + get + resolve (`Delivery::succeed`) for each message and a `join`
//! at the end; the channels do send + recv, and the tracked tokio flavor also carries a
//! `TaskTracker` token with each message and waits on the tracker at the end.

use std::future::Future;
use std::hint::black_box;
use std::sync::{Arc, OnceLock};

use async_executor::{Executor, LocalExecutor, Task};
use futures_lite::future;
use futures_lite::StreamExt as _;
use tally_queue::{OwnedDeliveries, OwnedProducer, Queue};
use tokio_util::task::task_tracker::TaskTrackerToken;
use tokio_util::task::TaskTracker;

/// A queue or channel as the async drivers use it (a marker type, hence `'static`).
pub trait Flavor: 'static {
    /// Short name used in benchmark ids and tables.
    const NAME: &'static str;
    /// The producers' handle; one clone per producer task.
    type Producer: Clone + Send + Sync + 'static;
    /// The consumers' handle.
    type Consumer: Send + 'static;

    /// A queue of `capacity` (`None`: unbounded) with one producer handle and `consumers`
    /// consumer handles.
    fn new(capacity: Option<usize>, consumers: usize) -> (Self::Producer, Vec<Self::Consumer>);
    /// Sends one message, waiting for room.
    fn send(producer: &Self::Producer, value: u64) -> impl Future<Output = ()> + Send + '_;
    /// Receives (and, for our queue, resolves) one message; `false` once the queue is
    /// closed and drained.
    fn recv(consumer: &mut Self::Consumer) -> impl Future<Output = bool> + Send + '_;
    /// Called once every producer is done: close the queue and wait for what must be waited
    /// for (our `join`, the tracker's `wait`).
    fn finish(producer: Self::Producer) -> impl Future<Output = ()> + Send;
}

/// `tally-queue`: put + get + `succeed`, then `shutdown` + `join`.
#[derive(Debug)]
pub enum Ours {}

fn our_queue(capacity: Option<usize>) -> Queue<u64> {
    match capacity {
        Some(capacity) => Queue::bounded(capacity).expect("non-zero capacity"),
        None => Queue::unbounded(),
    }
}

impl Flavor for Ours {
    const NAME: &'static str = "ours";
    type Producer = Arc<Queue<u64>>;
    type Consumer = Arc<Queue<u64>>;

    fn new(capacity: Option<usize>, consumers: usize) -> (Self::Producer, Vec<Self::Consumer>) {
        let queue = Arc::new(our_queue(capacity));
        (Arc::clone(&queue), vec![queue; consumers])
    }
    async fn send(producer: &Self::Producer, value: u64) {
        producer.put(value).await.expect("queue is open");
    }
    async fn recv(consumer: &mut Self::Consumer) -> bool {
        match consumer.get().await {
            Ok(delivery) => {
                black_box(delivery.succeed());
                true
            }
            Err(_) => false,
        }
    }
    async fn finish(producer: Self::Producer) {
        producer.shutdown();
        let ledger = producer.join().await;
        debug_assert!(ledger.is_balanced());
    }
}

/// `tally-queue` through its handles: producer guards (the last one gone shuts the queue
/// down) and consumers iterating [`deliveries_owned`](Queue::deliveries_owned) as a
/// `Stream`; the same work as [`Ours`], so the two rows show what the handle and stream
/// layer costs.
#[derive(Debug)]
pub enum OursHandles {}

impl Flavor for OursHandles {
    const NAME: &'static str = "ours-handles";
    type Producer = OwnedProducer<u64>;
    type Consumer = OwnedDeliveries<u64>;

    fn new(capacity: Option<usize>, consumers: usize) -> (Self::Producer, Vec<Self::Consumer>) {
        let queue = Arc::new(our_queue(capacity));
        let deliveries = (0..consumers).map(|_| queue.deliveries_owned()).collect();
        (queue.producer_owned(), deliveries)
    }
    async fn send(producer: &Self::Producer, value: u64) {
        producer.queue().put(value).await.expect("queue is open");
    }
    async fn recv(consumer: &mut Self::Consumer) -> bool {
        match consumer.next().await {
            Some(delivery) => {
                black_box(delivery.succeed());
                true
            }
            None => false,
        }
    }
    async fn finish(producer: Self::Producer) {
        // The producer tasks' clones are gone: dropping the last guard shuts down.
        let queue = Arc::clone(producer.queue());
        drop(producer);
        let ledger = queue.join().await;
        debug_assert!(ledger.is_balanced() && queue.is_shut_down());
    }
}

/// `async-channel`: send + recv.
#[derive(Debug)]
pub enum AsyncChannel {}

impl Flavor for AsyncChannel {
    const NAME: &'static str = "async-channel";
    type Producer = async_channel::Sender<u64>;
    type Consumer = async_channel::Receiver<u64>;

    fn new(capacity: Option<usize>, consumers: usize) -> (Self::Producer, Vec<Self::Consumer>) {
        let (tx, rx) = match capacity {
            Some(capacity) => async_channel::bounded(capacity),
            None => async_channel::unbounded(),
        };
        (tx, vec![rx; consumers])
    }
    async fn send(producer: &Self::Producer, value: u64) {
        producer.send(value).await.expect("channel is open");
    }
    async fn recv(consumer: &mut Self::Consumer) -> bool {
        consumer.recv().await.map(black_box).is_ok()
    }
    async fn finish(producer: Self::Producer) {
        drop(producer);
    }
}

/// `flume`: `send_async` + `recv_async`.
#[derive(Debug)]
pub enum Flume {}

impl Flavor for Flume {
    const NAME: &'static str = "flume";
    type Producer = flume::Sender<u64>;
    type Consumer = flume::Receiver<u64>;

    fn new(capacity: Option<usize>, consumers: usize) -> (Self::Producer, Vec<Self::Consumer>) {
        let (tx, rx) = match capacity {
            Some(capacity) => flume::bounded(capacity),
            None => flume::unbounded(),
        };
        (tx, vec![rx; consumers])
    }
    async fn send(producer: &Self::Producer, value: u64) {
        producer.send_async(value).await.expect("channel is open");
    }
    async fn recv(consumer: &mut Self::Consumer) -> bool {
        consumer.recv_async().await.map(black_box).is_ok()
    }
    async fn finish(producer: Self::Producer) {
        drop(producer);
    }
}

/// `kanal`: the async sender and receiver, `send` + `recv`.
#[derive(Debug)]
pub enum Kanal {}

impl Flavor for Kanal {
    const NAME: &'static str = "kanal";
    type Producer = kanal::AsyncSender<u64>;
    type Consumer = kanal::AsyncReceiver<u64>;

    fn new(capacity: Option<usize>, consumers: usize) -> (Self::Producer, Vec<Self::Consumer>) {
        let (tx, rx) = match capacity {
            Some(capacity) => kanal::bounded_async(capacity),
            None => kanal::unbounded_async(),
        };
        (tx, vec![rx; consumers])
    }
    async fn send(producer: &Self::Producer, value: u64) {
        producer.send(value).await.expect("channel is open");
    }
    async fn recv(consumer: &mut Self::Consumer) -> bool {
        consumer.recv().await.map(black_box).is_ok()
    }
    async fn finish(producer: Self::Producer) {
        drop(producer);
    }
}

/// A tokio mpsc sender, bounded or not.
#[derive(Debug)]
pub enum TokioSender<T> {
    /// `tokio::sync::mpsc::channel`.
    Bounded(tokio::sync::mpsc::Sender<T>),
    /// `tokio::sync::mpsc::unbounded_channel`.
    Unbounded(tokio::sync::mpsc::UnboundedSender<T>),
}

impl<T> Clone for TokioSender<T> {
    fn clone(&self) -> Self {
        match self {
            Self::Bounded(tx) => Self::Bounded(tx.clone()),
            Self::Unbounded(tx) => Self::Unbounded(tx.clone()),
        }
    }
}

impl<T: Send> TokioSender<T> {
    async fn send(&self, value: T) {
        let sent = match self {
            Self::Bounded(tx) => tx.send(value).await.is_ok(),
            Self::Unbounded(tx) => tx.send(value).is_ok(),
        };
        assert!(sent, "channel is open");
    }
}

/// A tokio mpsc receiver, bounded or not.
#[derive(Debug)]
pub enum TokioReceiver<T> {
    /// `tokio::sync::mpsc::channel`.
    Bounded(tokio::sync::mpsc::Receiver<T>),
    /// `tokio::sync::mpsc::unbounded_channel`.
    Unbounded(tokio::sync::mpsc::UnboundedReceiver<T>),
}

impl<T: Send> TokioReceiver<T> {
    async fn recv(&mut self) -> Option<T> {
        match self {
            Self::Bounded(rx) => rx.recv().await,
            Self::Unbounded(rx) => rx.recv().await,
        }
    }
}

fn tokio_channel<T>(
    capacity: Option<usize>,
    consumers: usize,
) -> (TokioSender<T>, TokioReceiver<T>) {
    assert_eq!(consumers, 1, "tokio mpsc has a single consumer");
    match capacity {
        Some(capacity) => {
            let (tx, rx) = tokio::sync::mpsc::channel(capacity);
            (TokioSender::Bounded(tx), TokioReceiver::Bounded(rx))
        }
        None => {
            let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
            (TokioSender::Unbounded(tx), TokioReceiver::Unbounded(rx))
        }
    }
}

/// tokio mpsc: send + recv (one consumer only). Runs on any executor: tokio's channels need
/// no tokio runtime.
#[derive(Debug)]
pub enum TokioMpsc {}

impl Flavor for TokioMpsc {
    const NAME: &'static str = "tokio-mpsc";
    type Producer = TokioSender<u64>;
    type Consumer = TokioReceiver<u64>;

    fn new(capacity: Option<usize>, consumers: usize) -> (Self::Producer, Vec<Self::Consumer>) {
        let (tx, rx) = tokio_channel(capacity, consumers);
        (tx, vec![rx])
    }
    async fn send(producer: &Self::Producer, value: u64) {
        producer.send(value).await;
    }
    async fn recv(consumer: &mut Self::Consumer) -> bool {
        consumer.recv().await.map(black_box).is_some()
    }
    async fn finish(producer: Self::Producer) {
        drop(producer);
    }
}

/// What tokio users assemble for "did every job finish": an mpsc channel carrying a
/// `TaskTracker` token with each message, dropped once the message is handled, and a
/// `close` + `wait` on the tracker at the end.
#[derive(Debug)]
pub enum TokioTracked {}

impl Flavor for TokioTracked {
    const NAME: &'static str = "tokio-mpsc+tracker";
    type Producer = (TokioSender<(u64, TaskTrackerToken)>, TaskTracker);
    type Consumer = TokioReceiver<(u64, TaskTrackerToken)>;

    fn new(capacity: Option<usize>, consumers: usize) -> (Self::Producer, Vec<Self::Consumer>) {
        let (tx, rx) = tokio_channel(capacity, consumers);
        ((tx, TaskTracker::new()), vec![rx])
    }
    async fn send((tx, tracker): &Self::Producer, value: u64) {
        tx.send((value, tracker.token())).await;
    }
    async fn recv(consumer: &mut Self::Consumer) -> bool {
        match consumer.recv().await {
            Some((value, token)) => {
                black_box(value);
                drop(token);
                true
            }
            None => false,
        }
    }
    async fn finish((tx, tracker): Self::Producer) {
        drop(tx);
        tracker.close();
        tracker.wait().await;
    }
}

/// How many of `n` messages producer `index` of `producers` sends.
fn share(n: u64, producers: usize, index: usize) -> u64 {
    let producers = producers as u64;
    n / producers + u64::from((index as u64) < n % producers)
}

/// An executor the async drivers spawn their tasks on.
trait Spawn {
    fn spawn_task<T: Send + 'static>(
        &self,
        future: impl Future<Output = T> + Send + 'static,
    ) -> Task<T>;
}

impl Spawn for LocalExecutor<'static> {
    fn spawn_task<T: Send + 'static>(
        &self,
        future: impl Future<Output = T> + Send + 'static,
    ) -> Task<T> {
        self.spawn(future)
    }
}

impl Spawn for Executor<'static> {
    fn spawn_task<T: Send + 'static>(
        &self,
        future: impl Future<Output = T> + Send + 'static,
    ) -> Task<T> {
        self.spawn(future)
    }
}

/// The workload itself, on any executor: `consumers` tasks receive, `producers` tasks send
/// their share of `n`, then the flavor finishes. Returns the messages received.
async fn workload<F: Flavor, S: Spawn>(
    executor: &S,
    n: u64,
    producers: usize,
    consumers: usize,
    capacity: Option<usize>,
) -> u64 {
    let (producer, consumer_handles) = F::new(capacity, consumers);
    let consumer_tasks: Vec<_> = consumer_handles
        .into_iter()
        .map(|mut consumer| {
            executor.spawn_task(async move {
                let mut count = 0u64;
                while F::recv(&mut consumer).await {
                    count += 1;
                }
                count
            })
        })
        .collect();
    let producer_tasks: Vec<_> = (0..producers)
        .map(|index| {
            let producer = producer.clone();
            executor.spawn_task(async move {
                for value in 0..share(n, producers, index) {
                    F::send(&producer, value).await;
                }
            })
        })
        .collect();
    for task in producer_tasks {
        task.await;
    }
    F::finish(producer).await;
    let mut received = 0;
    for task in consumer_tasks {
        received += task.await;
    }
    received
}

/// Runs the workload on a single-thread executor (`async-executor`'s `LocalExecutor` under
/// `futures_lite::future::block_on`).
///
/// # Panics
///
/// If a message is lost or duplicated.
pub fn run_local<F: Flavor>(n: u64, producers: usize, consumers: usize, capacity: Option<usize>) {
    let executor = LocalExecutor::new();
    let received = future::block_on(executor.run(workload::<F, _>(
        &executor, n, producers, consumers, capacity,
    )));
    assert_eq!(received, n, "every message is received once");
}

/// The shared two-thread smol executor: two threads run it for the life of the process.
fn smol_executor() -> &'static Executor<'static> {
    static EXECUTOR: OnceLock<&'static Executor<'static>> = OnceLock::new();
    EXECUTOR.get_or_init(|| {
        let executor: &'static Executor<'static> = Box::leak(Box::new(Executor::new()));
        for index in 0..2 {
            std::thread::Builder::new()
                .name(format!("smol-{index}"))
                .spawn(move || future::block_on(executor.run(future::pending::<()>())))
                .expect("spawn an executor thread");
        }
        executor
    })
}

/// Runs the workload on a smol `Executor` driven by two threads; the calling thread only
/// waits for the result.
///
/// # Panics
///
/// If a message is lost or duplicated.
pub fn run_smol<F: Flavor>(n: u64, producers: usize, consumers: usize, capacity: Option<usize>) {
    let executor = smol_executor();
    let received = future::block_on(executor.spawn(workload::<F, _>(
        executor, n, producers, consumers, capacity,
    )));
    assert_eq!(received, n, "every message is received once");
}

/// A queue or channel as the blocking driver uses it.
pub trait Blocking {
    /// Short name used in benchmark ids and tables.
    const NAME: &'static str;
    /// The producers' handle.
    type Producer: Clone + Send + Sync;
    /// The consumers' handle.
    type Consumer: Send;

    /// As [`Flavor::new`].
    fn new(capacity: Option<usize>, consumers: usize) -> (Self::Producer, Vec<Self::Consumer>);
    /// Sends one message, blocking while there is no room.
    fn send(producer: &Self::Producer, value: u64);
    /// Receives (and resolves) one message; `false` once closed and drained.
    fn recv(consumer: &mut Self::Consumer) -> bool;
    /// Called once every producer is done.
    fn finish(producer: Self::Producer);
}

impl Blocking for Ours {
    const NAME: &'static str = "ours";
    type Producer = Arc<Queue<u64>>;
    type Consumer = Arc<Queue<u64>>;

    fn new(capacity: Option<usize>, consumers: usize) -> (Self::Producer, Vec<Self::Consumer>) {
        <Self as Flavor>::new(capacity, consumers)
    }
    fn send(producer: &Self::Producer, value: u64) {
        producer.put_blocking(value).expect("queue is open");
    }
    fn recv(consumer: &mut Self::Consumer) -> bool {
        match consumer.get_blocking() {
            Ok(delivery) => {
                black_box(delivery.succeed());
                true
            }
            Err(_) => false,
        }
    }
    fn finish(producer: Self::Producer) {
        producer.shutdown();
        let ledger = producer.join_blocking();
        debug_assert!(ledger.is_balanced());
    }
}

impl Blocking for AsyncChannel {
    const NAME: &'static str = "async-channel";
    type Producer = async_channel::Sender<u64>;
    type Consumer = async_channel::Receiver<u64>;

    fn new(capacity: Option<usize>, consumers: usize) -> (Self::Producer, Vec<Self::Consumer>) {
        <Self as Flavor>::new(capacity, consumers)
    }
    fn send(producer: &Self::Producer, value: u64) {
        producer.send_blocking(value).expect("channel is open");
    }
    fn recv(consumer: &mut Self::Consumer) -> bool {
        consumer.recv_blocking().map(black_box).is_ok()
    }
    fn finish(producer: Self::Producer) {
        drop(producer);
    }
}

impl Blocking for Flume {
    const NAME: &'static str = "flume";
    type Producer = flume::Sender<u64>;
    type Consumer = flume::Receiver<u64>;

    fn new(capacity: Option<usize>, consumers: usize) -> (Self::Producer, Vec<Self::Consumer>) {
        <Self as Flavor>::new(capacity, consumers)
    }
    fn send(producer: &Self::Producer, value: u64) {
        producer.send(value).expect("channel is open");
    }
    fn recv(consumer: &mut Self::Consumer) -> bool {
        consumer.recv().map(black_box).is_ok()
    }
    fn finish(producer: Self::Producer) {
        drop(producer);
    }
}

impl Blocking for Kanal {
    const NAME: &'static str = "kanal";
    type Producer = kanal::Sender<u64>;
    type Consumer = kanal::Receiver<u64>;

    fn new(capacity: Option<usize>, consumers: usize) -> (Self::Producer, Vec<Self::Consumer>) {
        let (tx, rx) = match capacity {
            Some(capacity) => kanal::bounded(capacity),
            None => kanal::unbounded(),
        };
        (tx, vec![rx; consumers])
    }
    fn send(producer: &Self::Producer, value: u64) {
        producer.send(value).expect("channel is open");
    }
    fn recv(consumer: &mut Self::Consumer) -> bool {
        consumer.recv().map(black_box).is_ok()
    }
    fn finish(producer: Self::Producer) {
        drop(producer);
    }
}

/// `crossbeam-channel`: send + recv, blocking only.
#[derive(Debug)]
pub enum Crossbeam {}

impl Blocking for Crossbeam {
    const NAME: &'static str = "crossbeam-channel";
    type Producer = crossbeam_channel::Sender<u64>;
    type Consumer = crossbeam_channel::Receiver<u64>;

    fn new(capacity: Option<usize>, consumers: usize) -> (Self::Producer, Vec<Self::Consumer>) {
        let (tx, rx) = match capacity {
            Some(capacity) => crossbeam_channel::bounded(capacity),
            None => crossbeam_channel::unbounded(),
        };
        (tx, vec![rx; consumers])
    }
    fn send(producer: &Self::Producer, value: u64) {
        producer.send(value).expect("channel is open");
    }
    fn recv(consumer: &mut Self::Consumer) -> bool {
        consumer.recv().map(black_box).is_ok()
    }
    fn finish(producer: Self::Producer) {
        drop(producer);
    }
}

/// Runs the workload on plain threads: one per producer and one per consumer.
///
/// # Panics
///
/// If a message is lost or duplicated.
pub fn run_blocking<B: Blocking>(
    n: u64,
    producers: usize,
    consumers: usize,
    capacity: Option<usize>,
) {
    let (producer, consumer_handles) = B::new(capacity, consumers);
    let received: u64 = std::thread::scope(|scope| {
        let consumer_threads: Vec<_> = consumer_handles
            .into_iter()
            .map(|mut consumer| {
                scope.spawn(move || {
                    let mut count = 0u64;
                    while B::recv(&mut consumer) {
                        count += 1;
                    }
                    count
                })
            })
            .collect();
        let producer_threads: Vec<_> = (0..producers)
            .map(|index| {
                let producer = producer.clone();
                scope.spawn(move || {
                    for value in 0..share(n, producers, index) {
                        B::send(&producer, value);
                    }
                })
            })
            .collect();
        for thread in producer_threads {
            thread.join().expect("producer finished");
        }
        B::finish(producer);
        consumer_threads
            .into_iter()
            .map(|thread| thread.join().expect("consumer finished"))
            .sum()
    });
    assert_eq!(received, n, "every message is received once");
}

/// The floor: put, get and resolve in turn on one thread, nobody ever waiting, bounded(128)
/// (the shape of CPython's one-task `asyncio.Queue` baseline). Ours: `try_put` +
/// `try_get` + `succeed`.
///
/// # Panics
///
/// Never, unless the queue breaks.
pub fn floor_ours(queue: &Queue<u64>, n: u64) {
    for value in 0..n {
        queue.try_put(value).expect("room");
        black_box(queue.try_get().expect("an item").succeed());
    }
}

/// The floor on `async-channel`: `try_send` + `try_recv`.
///
/// # Panics
///
/// Never, unless the channel breaks.
pub fn floor_async_channel(
    (tx, rx): &(async_channel::Sender<u64>, async_channel::Receiver<u64>),
    n: u64,
) {
    for value in 0..n {
        tx.try_send(value).expect("room");
        black_box(rx.try_recv().expect("an item"));
    }
}

/// The floor on `flume`: `try_send` + `try_recv`.
///
/// # Panics
///
/// Never, unless the channel breaks.
pub fn floor_flume((tx, rx): &(flume::Sender<u64>, flume::Receiver<u64>), n: u64) {
    for value in 0..n {
        tx.try_send(value).expect("room");
        black_box(rx.try_recv().expect("an item"));
    }
}

/// The floor on `kanal`: `try_send` + `try_recv` (kanal reports a full channel as
/// `Ok(false)` and an empty one as `Ok(None)`).
///
/// # Panics
///
/// Never, unless the channel breaks.
pub fn floor_kanal((tx, rx): &(kanal::Sender<u64>, kanal::Receiver<u64>), n: u64) {
    for value in 0..n {
        assert!(tx.try_send(value).expect("channel is open"), "room");
        black_box(rx.try_recv().expect("channel is open").expect("an item"));
    }
}
