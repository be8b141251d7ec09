//! Latch peers and the waiter-release workload.

use std::cell::Cell;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use async_executor::LocalExecutor;
use tokio::sync::Notify;
use tokio_util::task::task_tracker::TaskTrackerToken;
use tokio_util::task::TaskTracker;

/// The latch a tokio user writes by hand: a counter and a `Notify`.
///
/// The count is not saturated: a count-down past zero wraps, as in most hand-rolled
/// versions (the benchmarks never do it).
#[derive(Debug)]
pub struct NotifyLatch {
    count: AtomicUsize,
    notify: Notify,
}

impl NotifyLatch {
    /// A latch that opens after `count` count-downs.
    #[must_use]
    pub const fn new(count: usize) -> Self {
        Self {
            count: AtomicUsize::new(count),
            notify: Notify::const_new(),
        }
    }

    /// Counts down; the move to zero wakes every waiter.
    #[inline]
    pub fn count_down(&self) {
        // AcqRel: publish this counter's work, and see the others' before waking.
        if self.count.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.notify.notify_waiters();
        }
    }

    /// Waits until the count is zero.
    pub async fn wait(&self) {
        loop {
            // `notify_waiters` wakes every `Notified` created before it, polled or not, so
            // creating it before the check loses no wake-up.
            let notified = self.notify.notified();
            // Acquire: pairs with the final count-down.
            if self.count.load(Ordering::Acquire) == 0 {
                return;
            }
            notified.await;
        }
    }
}

/// Something `waiters` tasks wait on and one call releases: a latch at one, a task tracker
/// with one live token, a barrier of `waiters + 1`.
pub trait Gate {
    /// A gate that one [`open`](Gate::open) releases, with room for `waiters` waiters.
    fn for_waiters(waiters: usize) -> Self;
    /// Waits until the gate opens.
    fn wait(&self) -> impl Future<Output = ()> + '_;
    /// The one call that releases every waiter.
    fn open(&self);
}

impl Gate for tally_latch::CountDownLatch {
    fn for_waiters(_: usize) -> Self {
        Self::new(1)
    }
    fn wait(&self) -> impl Future<Output = ()> + '_ {
        Self::wait(self)
    }
    fn open(&self) {
        self.count_down();
    }
}

impl Gate for NotifyLatch {
    fn for_waiters(_: usize) -> Self {
        Self::new(1)
    }
    fn wait(&self) -> impl Future<Output = ()> + '_ {
        Self::wait(self)
    }
    fn open(&self) {
        self.count_down();
    }
}

impl Gate for latches::task::Latch {
    fn for_waiters(_: usize) -> Self {
        Self::new(1)
    }
    fn wait(&self) -> impl Future<Output = ()> + '_ {
        Self::wait(self)
    }
    fn open(&self) {
        self.count_down();
    }
}

impl Gate for wg::future::WaitGroup {
    fn for_waiters(_: usize) -> Self {
        let group = Self::new();
        drop(group.add(1));
        group
    }
    fn wait(&self) -> impl Future<Output = ()> + '_ {
        Self::wait(self)
    }
    fn open(&self) {
        self.done();
    }
}

/// A closed `TaskTracker` with one live token: dropping the token releases the waiters.
#[derive(Debug)]
pub struct TrackerGate {
    tracker: TaskTracker,
    token: Mutex<Option<TaskTrackerToken>>,
}

impl Gate for TrackerGate {
    fn for_waiters(_: usize) -> Self {
        let tracker = TaskTracker::new();
        let token = Mutex::new(Some(tracker.token()));
        tracker.close();
        Self { tracker, token }
    }
    fn wait(&self) -> impl Future<Output = ()> + '_ {
        self.tracker.wait()
    }
    fn open(&self) {
        drop(self.token.lock().expect("not poisoned").take());
    }
}

/// An `async_lock::Barrier` of `waiters + 1`: the last arrival releases the others.
#[derive(Debug)]
pub struct BarrierGate(async_lock::Barrier);

impl Gate for BarrierGate {
    fn for_waiters(waiters: usize) -> Self {
        Self(async_lock::Barrier::new(waiters + 1))
    }
    async fn wait(&self) {
        self.0.wait().await;
    }
    fn open(&self) {
        // The last arrival completes on its first poll.
        futures_lite::future::block_on(self.0.wait());
    }
}

/// Spawns `waiters` tasks that wait on a fresh gate on a single-thread executor, runs them
/// until each one has registered, then times the release: the opening call plus running
/// every woken task to completion.
///
/// # Panics
///
/// If a waiter did not finish after the release.
pub fn release<G: Gate>(waiters: usize) -> Duration {
    let gate = G::for_waiters(waiters);
    let released = Cell::new(0usize);
    let executor = LocalExecutor::new();
    for _ in 0..waiters {
        executor
            .spawn(async {
                gate.wait().await;
                released.set(released.get() + 1);
            })
            .detach();
    }
    while executor.try_tick() {}
    assert_eq!(released.get(), 0, "a waiter passed a closed gate");
    let start = Instant::now();
    open_and_run(&gate, &executor);
    let elapsed = start.elapsed();
    assert_eq!(released.get(), waiters, "a waiter was not released");
    elapsed
}

/// The timed part of [`release`]: opens `gate` and runs every woken task to completion.
/// Out of line, so that an instruction profile can count it alone
/// (`TOGGLE='*open_and_run*' locked-per-op icount latch/release1000/ours`).
#[inline(never)]
fn open_and_run<G: Gate>(gate: &G, executor: &LocalExecutor<'_>) {
    gate.open();
    while executor.try_tick() {}
}
