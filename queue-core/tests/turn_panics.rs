//! The turn rule where user code panics: random runs of waits (gets, puts, their batch
//! forms, with and without deadlines) on every kind of queue and on the fixed tier, some of
//! whose wakers panic once when woken, with tries, endings, abandonments (redelivered),
//! drops, deadlines firing and shutdowns in between. After half the steps the woken futures
//! are polled, in random order, until none is left woken; then no get may wait beside an
//! item waiting to be delivered, and no put beside a free slot of a bounded buffer. A probe
//! step puts an item for a waiting get and checks that a try is refused it. A turn stranded
//! by a panic (owed to nobody) or passed on twice (a woken get's item left open to a try)
//! shows as one of those. At the end of a run every delivery is resolved, and none may be
//! left in flight.
//!
//! With `--features tracing` (or `metrics`) the runs are made again with a subscriber (a
//! recorder) that panics at its next event (sample) whenever a step arms it.
#![cfg(not(loom))]

mod common;

use std::cell::RefCell;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use common::{scaled, waker_fn};
use tally_queue::fixed::{FixedDelivery, FixedQueue};
use tally_queue::{AbandonPolicy, Delivery, Queue};

/// A small deterministic generator (xorshift), so that a failing run can be replayed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// A waiting future, its waker, whether that waker fired, and what it waits for.
struct Task<'q> {
    future: Pin<Box<dyn Future<Output = ()> + 'q>>,
    waker: Waker,
    woken: Arc<AtomicBool>,
    get: bool,
    name: String,
    /// Fires the deadline of a `get_until` or `put_until`.
    deadline: Option<Arc<AtomicBool>>,
}

/// A deadline that fires once `fired` is set.
fn deadline(fired: &Arc<AtomicBool>) -> impl Future<Output = ()> {
    let fired = fired.clone();
    std::future::poll_fn(move |_| {
        if fired.load(Ordering::SeqCst) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
}

/// A waker that marks its task woken, and panics at its first wake-up if `armed` (unless
/// a panic is unwinding already).
fn task_waker(armed: bool) -> (Waker, Arc<AtomicBool>) {
    let woken = Arc::new(AtomicBool::new(false));
    let bomb = AtomicBool::new(armed);
    let mark = woken.clone();
    let waker = waker_fn(move || {
        mark.store(true, Ordering::SeqCst);
        // Not while a panic unwinds: a second panic then aborts, as in any destructor.
        if !std::thread::panicking() && bomb.swap(false, Ordering::SeqCst) {
            panic!("a waker that panics once");
        }
    });
    (waker, woken)
}

/// Runs `step`, swallowing a panic (one of the armed wakers); returns whether it panicked.
fn quietly(step: impl FnOnce()) -> bool {
    caught(catch_unwind(AssertUnwindSafe(step))).is_none()
}

/// What `catch_unwind` returned, `None` for a panic of the test's own user code (a waker,
/// a subscriber, a recorder). Any other panic (an assertion of the queue's, such as "an
/// attempt uses its turn up") goes on unwinding: the test fails.
fn caught<R>(result: std::thread::Result<R>) -> Option<R> {
    match result {
        Ok(value) => Some(value),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            if message.ends_with("that panics once") || message.ends_with("that panics when armed")
            {
                None
            } else {
                std::panic::resume_unwind(payload)
            }
        }
    }
}

/// Polls every woken future, in random order, until none is left woken; a future that
/// panics is dropped.
fn settle(tasks: &mut Vec<Task<'_>>, log: &mut Vec<String>, rng: &mut Rng) {
    for _ in 0..10_000 {
        let woken: Vec<usize> = (0..tasks.len())
            .filter(|&i| tasks[i].woken.load(Ordering::SeqCst))
            .collect();
        if woken.is_empty() {
            break;
        }
        let at = woken[rng.below(woken.len() as u64) as usize];
        tasks[at].woken.store(false, Ordering::SeqCst);
        let task = &mut tasks[at];
        let waker = task.waker.clone();
        let polled = caught(catch_unwind(AssertUnwindSafe(|| {
            task.future.as_mut().poll(&mut Context::from_waker(&waker))
        })));
        match polled {
            Some(Poll::Pending) => {}
            Some(Poll::Ready(())) => {
                let task = tasks.remove(at);
                log.push(format!("{} done", task.name));
            }
            None => {
                let task = tasks.remove(at);
                let p = quietly(|| drop(task.future));
                log.push(format!(
                    "{} panicked, dropped{}",
                    task.name,
                    if p { " (panicked)" } else { "" }
                ));
            }
        }
    }
}

fn run(
    kind: &str,
    queue: &Queue<u32>,
    user_code: &AtomicBool,
    bound: Option<usize>,
    seed: u64,
    steps: usize,
) {
    let held: RefCell<Vec<Delivery<'_, u32>>> = RefCell::new(Vec::new());
    let mut tasks: Vec<Task<'_>> = Vec::new();
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut next = 0u32;
    let mut log: Vec<String> = Vec::new();
    for _ in 0..steps {
        let armed = rng.below(4) == 0;
        let op = rng.below(16);
        next += 2;
        let n = next;
        let held_ref = &held;
        match op {
            0 | 1 => {
                let (waker, woken) = task_waker(armed);
                let future: Pin<Box<dyn Future<Output = ()> + '_>> = if op == 0 {
                    Box::pin(async move {
                        if let Ok(job) = queue.get().await {
                            held_ref.borrow_mut().push(job);
                        }
                    })
                } else {
                    Box::pin(async move {
                        let mut batch = Vec::new();
                        if queue.get_many(&mut batch, 2).await.is_ok() {
                            held_ref.borrow_mut().extend(batch);
                        }
                    })
                };
                let name = format!(
                    "{} {n}{}",
                    ["get", "get_many"][op as usize],
                    if armed { " (armed)" } else { "" }
                );
                woken.store(true, Ordering::SeqCst);
                tasks.push(Task {
                    future,
                    waker,
                    woken,
                    get: true,
                    name,
                    deadline: None,
                });
            }
            2 | 3 => {
                let (waker, woken) = task_waker(armed);
                let future: Pin<Box<dyn Future<Output = ()> + '_>> = if op == 2 {
                    Box::pin(async move {
                        let _ = queue.put(n).await;
                    })
                } else {
                    Box::pin(async move {
                        let mut items = vec![n, n + 1];
                        let _ = queue.put_many(&mut items, &mut Vec::new()).await;
                    })
                };
                let name = format!(
                    "{} {n}{}",
                    ["put", "put_many"][op as usize - 2],
                    if armed { " (armed)" } else { "" }
                );
                woken.store(true, Ordering::SeqCst);
                tasks.push(Task {
                    future,
                    waker,
                    woken,
                    get: false,
                    name,
                    deadline: None,
                });
            }
            4 => {
                let p = quietly(|| {
                    let _ = queue.try_put(n);
                });
                log.push(format!("try_put {n}{}", if p { " panicked" } else { "" }));
            }
            5 => {
                let p = quietly(|| {
                    if let Ok(job) = queue.try_get() {
                        held.borrow_mut().push(job);
                    }
                });
                log.push(format!("try_get{}", if p { " panicked" } else { "" }));
            }
            6 | 7 => {
                let job = {
                    let mut held = held.borrow_mut();
                    if held.is_empty() {
                        None
                    } else {
                        let at = rng.below(held.len() as u64) as usize;
                        Some(held.swap_remove(at))
                    }
                };
                if let Some(job) = job {
                    let succeed = op == 6;
                    let p = quietly(|| {
                        if succeed {
                            job.succeed();
                        } else {
                            drop(job);
                        }
                    });
                    log.push(format!(
                        "{}{}",
                        if succeed { "succeed" } else { "abandon" },
                        if p { " panicked" } else { "" }
                    ));
                }
            }
            8 => {
                if !tasks.is_empty() {
                    let task = tasks.swap_remove(rng.below(tasks.len() as u64) as usize);
                    let p = quietly(|| drop(task.future));
                    log.push(format!(
                        "drop {}{}",
                        task.name,
                        if p { " panicked" } else { "" }
                    ));
                }
            }
            9 => {
                if !tasks.is_empty() {
                    let at = rng.below(tasks.len() as u64) as usize;
                    tasks[at].woken.store(true, Ordering::SeqCst);
                }
            }
            11 | 12 => {
                let (waker, woken) = task_waker(armed);
                let fired = Arc::new(AtomicBool::new(false));
                let until = deadline(&fired);
                let batch = rng.below(2) == 0;
                let future: Pin<Box<dyn Future<Output = ()> + '_>> = match (op, batch) {
                    (11, false) => Box::pin(async move {
                        if let Ok(job) = queue.get_until(until).await {
                            held_ref.borrow_mut().push(job);
                        }
                    }),
                    (11, true) => Box::pin(async move {
                        let mut batch = Vec::new();
                        if queue.get_many_until(&mut batch, 2, until).await.is_ok() {
                            held_ref.borrow_mut().extend(batch);
                        }
                    }),
                    (_, false) => Box::pin(async move {
                        let _ = queue.put_until(n, until).await;
                    }),
                    (_, true) => Box::pin(async move {
                        let mut items = vec![n, n + 1];
                        let _ = queue
                            .put_many_until(&mut items, &mut Vec::new(), until)
                            .await;
                    }),
                };
                let name = format!(
                    "{}{} {n}{}",
                    ["get", "put"][op as usize - 11],
                    if batch { "_many_until" } else { "_until" },
                    if armed { " (armed)" } else { "" }
                );
                woken.store(true, Ordering::SeqCst);
                tasks.push(Task {
                    future,
                    waker,
                    woken,
                    get: op == 11,
                    name,
                    deadline: Some(fired),
                });
            }
            13 => {
                // A deadline fires: its task is polled (as its timer's wake-up would).
                let timed: Vec<usize> = (0..tasks.len())
                    .filter(|&i| tasks[i].deadline.is_some())
                    .collect();
                if !timed.is_empty() {
                    let task = &tasks[timed[rng.below(timed.len() as u64) as usize]];
                    task.deadline
                        .as_ref()
                        .unwrap()
                        .store(true, Ordering::SeqCst);
                    task.woken.store(true, Ordering::SeqCst);
                    log.push(format!("deadline of {}", task.name));
                }
            }
            14 => {
                // The turn rule, probed: with nothing buffered and no woken future left
                // unpolled, an item put now is owed to a waiting get (the probe's own get, or
                // one waiting before it), so a try must be refused it.
                settle(&mut tasks, &mut log, &mut rng);
                if queue.is_empty() && !queue.is_shut_down() {
                    let (waker, woken) = task_waker(false);
                    let future: Pin<Box<dyn Future<Output = ()> + '_>> = Box::pin(async move {
                        if let Ok(job) = queue.get().await {
                            held_ref.borrow_mut().push(job);
                        }
                    });
                    let mut probe = Task {
                        future,
                        waker,
                        woken,
                        get: true,
                        name: format!("probe {n}"),
                        deadline: None,
                    };
                    let waker = probe.waker.clone();
                    let first = probe.future.as_mut().poll(&mut Context::from_waker(&waker));
                    assert!(
                        first.is_pending(),
                        "{kind}, seed {seed}: a get on an empty queue waits"
                    );
                    probe.woken.store(false, Ordering::SeqCst);
                    tasks.push(probe);
                    let put = caught(catch_unwind(AssertUnwindSafe(|| queue.try_put(n))));
                    if let Some(Ok(_)) = put {
                        let taken = caught(catch_unwind(AssertUnwindSafe(|| queue.try_get())));
                        let barged = matches!(taken, Some(Ok(_)));
                        if let Some(Ok(job)) = taken {
                            held.borrow_mut().push(job);
                        }
                        assert!(
                            !barged,
                            "{kind}, seed {seed}: a try took the item put for a waiting get; {}; steps: {log:?}",
                            queue.ledger()
                        );
                    }
                    log.push(format!("probe {n}"));
                }
            }
            15 => {
                // The next subscriber event or recorder sample panics (in the tests that
                // install one).
                user_code.store(true, Ordering::SeqCst);
                log.push("armed".into());
            }
            _ => {
                if rng.below(20) == 0 {
                    let p = quietly(|| {
                        queue.shutdown();
                    });
                    log.push(format!("shutdown{}", if p { " panicked" } else { "" }));
                }
            }
        }
        // Half the steps leave the woken futures unpolled, so that wake-ups, deadlines and
        // the next steps pile up before the futures see them; the others poll every woken
        // future until none is left woken, and look.
        if rng.below(2) == 0 {
            continue;
        }
        settle(&mut tasks, &mut log, &mut rng);
        let len = queue.len();
        let waiting_gets: Vec<&str> = tasks
            .iter()
            .filter(|t| t.get)
            .map(|t| t.name.as_str())
            .collect();
        let waiting_puts: Vec<&str> = tasks
            .iter()
            .filter(|t| !t.get)
            .map(|t| t.name.as_str())
            .collect();
        assert!(
            len == 0 || waiting_gets.is_empty(),
            "{kind}, seed {seed}: {waiting_gets:?} wait beside {len} item(s); {}; steps: {log:?}",
            queue.ledger()
        );
        assert!(
            bound.is_none_or(|bound| len >= bound) || queue.is_shut_down() || waiting_puts.is_empty(),
            "{kind}, seed {seed}: {waiting_puts:?} wait beside a free slot ({len} buffered); {}; steps: {log:?}",
            queue.ledger()
        );
    }
    if std::env::var_os("TURN_PANICS_STATS").is_some() {
        let panicked = log.iter().filter(|l| l.contains("panicked")).count();
        let done = log.iter().filter(|l| l.ends_with("done")).count();
        eprintln!("{kind} seed {seed}: {panicked} panics, {done} waits done");
    }
    user_code.store(false, Ordering::SeqCst);
    for task in tasks.drain(..) {
        quietly(|| drop(task.future));
    }
    for job in held.borrow_mut().drain(..) {
        job.succeed();
    }
    let ledger = queue.ledger();
    assert_eq!(
        ledger.in_flight, 0,
        "{kind}, seed {seed}: every delivery ended, yet {ledger}; steps: {log:?}"
    );
}

fn run_fixed<const N: usize>(
    kind: &str,
    queue: &FixedQueue<u32, N, 4>,
    user_code: &AtomicBool,
    bound: Option<usize>,
    seed: u64,
    steps: usize,
) {
    let held: RefCell<Vec<FixedDelivery<'_, u32>>> = RefCell::new(Vec::new());
    let mut tasks: Vec<Task<'_>> = Vec::new();
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut next = 0u32;
    let mut log: Vec<String> = Vec::new();
    for _ in 0..steps {
        let armed = rng.below(4) == 0;
        let op = rng.below(16);
        next += 2;
        let n = next;
        let held_ref = &held;
        match op {
            0 | 1 => {
                let (waker, woken) = task_waker(armed);
                let future: Pin<Box<dyn Future<Output = ()> + '_>> = if op == 0 {
                    Box::pin(async move {
                        if let Ok(job) = queue.get().await {
                            held_ref.borrow_mut().push(job);
                        }
                    })
                } else {
                    Box::pin(async move {
                        if let Ok(job) = queue.get().await {
                            held_ref.borrow_mut().push(job);
                        }
                    })
                };
                let name = format!(
                    "{} {n}{}",
                    ["get", "get"][op as usize],
                    if armed { " (armed)" } else { "" }
                );
                woken.store(true, Ordering::SeqCst);
                tasks.push(Task {
                    future,
                    waker,
                    woken,
                    get: true,
                    name,
                    deadline: None,
                });
            }
            2 | 3 => {
                let (waker, woken) = task_waker(armed);
                let future: Pin<Box<dyn Future<Output = ()> + '_>> = if op == 2 {
                    Box::pin(async move {
                        let _ = queue.put(n).await;
                    })
                } else {
                    Box::pin(async move {
                        let _ = queue.put(n + 1).await;
                    })
                };
                let name = format!(
                    "{} {n}{}",
                    ["put", "put"][op as usize - 2],
                    if armed { " (armed)" } else { "" }
                );
                woken.store(true, Ordering::SeqCst);
                tasks.push(Task {
                    future,
                    waker,
                    woken,
                    get: false,
                    name,
                    deadline: None,
                });
            }
            4 => {
                let p = quietly(|| {
                    let _ = queue.try_put(n);
                });
                log.push(format!("try_put {n}{}", if p { " panicked" } else { "" }));
            }
            5 => {
                let p = quietly(|| {
                    if let Ok(job) = queue.try_get() {
                        held.borrow_mut().push(job);
                    }
                });
                log.push(format!("try_get{}", if p { " panicked" } else { "" }));
            }
            6 | 7 => {
                let job = {
                    let mut held = held.borrow_mut();
                    if held.is_empty() {
                        None
                    } else {
                        let at = rng.below(held.len() as u64) as usize;
                        Some(held.swap_remove(at))
                    }
                };
                if let Some(job) = job {
                    let succeed = op == 6;
                    let p = quietly(|| {
                        if succeed {
                            job.succeed();
                        } else {
                            drop(job);
                        }
                    });
                    log.push(format!(
                        "{}{}",
                        if succeed { "succeed" } else { "abandon" },
                        if p { " panicked" } else { "" }
                    ));
                }
            }
            8 => {
                if !tasks.is_empty() {
                    let task = tasks.swap_remove(rng.below(tasks.len() as u64) as usize);
                    let p = quietly(|| drop(task.future));
                    log.push(format!(
                        "drop {}{}",
                        task.name,
                        if p { " panicked" } else { "" }
                    ));
                }
            }
            9 => {
                if !tasks.is_empty() {
                    let at = rng.below(tasks.len() as u64) as usize;
                    tasks[at].woken.store(true, Ordering::SeqCst);
                }
            }
            11 | 12 => {
                let (waker, woken) = task_waker(armed);
                let fired = Arc::new(AtomicBool::new(false));
                let until = deadline(&fired);
                let future: Pin<Box<dyn Future<Output = ()> + '_>> = if op == 11 {
                    Box::pin(async move {
                        if let Ok(job) = queue.get_until(until).await {
                            held_ref.borrow_mut().push(job);
                        }
                    })
                } else {
                    Box::pin(async move {
                        let _ = queue.put_until(n, until).await;
                    })
                };
                let name = format!(
                    "{} {n}{}",
                    ["get_until", "put_until"][op as usize - 11],
                    if armed { " (armed)" } else { "" }
                );
                woken.store(true, Ordering::SeqCst);
                tasks.push(Task {
                    future,
                    waker,
                    woken,
                    get: op == 11,
                    name,
                    deadline: Some(fired),
                });
            }
            13 => {
                // A deadline fires: its task is polled (as its timer's wake-up would).
                let timed: Vec<usize> = (0..tasks.len())
                    .filter(|&i| tasks[i].deadline.is_some())
                    .collect();
                if !timed.is_empty() {
                    let task = &tasks[timed[rng.below(timed.len() as u64) as usize]];
                    task.deadline
                        .as_ref()
                        .unwrap()
                        .store(true, Ordering::SeqCst);
                    task.woken.store(true, Ordering::SeqCst);
                    log.push(format!("deadline of {}", task.name));
                }
            }
            14 => {
                // The turn rule, probed: with nothing buffered and no woken future left
                // unpolled, an item put now is owed to a waiting get (the probe's own get, or
                // one waiting before it), so a try must be refused it.
                settle(&mut tasks, &mut log, &mut rng);
                if queue.is_empty()
                    && !queue.is_shut_down()
                    // A waiter slot is free for the probe's get.
                    && tasks.iter().filter(|t| t.get).count() < 4
                {
                    let (waker, woken) = task_waker(false);
                    let future: Pin<Box<dyn Future<Output = ()> + '_>> = Box::pin(async move {
                        if let Ok(job) = queue.get().await {
                            held_ref.borrow_mut().push(job);
                        }
                    });
                    let mut probe = Task {
                        future,
                        waker,
                        woken,
                        get: true,
                        name: format!("probe {n}"),
                        deadline: None,
                    };
                    let waker = probe.waker.clone();
                    let first = probe.future.as_mut().poll(&mut Context::from_waker(&waker));
                    assert!(
                        first.is_pending(),
                        "{kind}, seed {seed}: a get on an empty queue waits"
                    );
                    probe.woken.store(false, Ordering::SeqCst);
                    tasks.push(probe);
                    let put = caught(catch_unwind(AssertUnwindSafe(|| queue.try_put(n))));
                    if let Some(Ok(_)) = put {
                        let taken = caught(catch_unwind(AssertUnwindSafe(|| queue.try_get())));
                        let barged = matches!(taken, Some(Ok(_)));
                        if let Some(Ok(job)) = taken {
                            held.borrow_mut().push(job);
                        }
                        assert!(
                            !barged,
                            "{kind}, seed {seed}: a try took the item put for a waiting get; {}; steps: {log:?}",
                            queue.ledger()
                        );
                    }
                    log.push(format!("probe {n}"));
                }
            }
            15 => {
                // The next subscriber event or recorder sample panics (in the tests that
                // install one).
                user_code.store(true, Ordering::SeqCst);
                log.push("armed".into());
            }
            _ => {
                if rng.below(20) == 0 {
                    let p = quietly(|| {
                        queue.shutdown();
                    });
                    log.push(format!("shutdown{}", if p { " panicked" } else { "" }));
                }
            }
        }
        // Half the steps leave the woken futures unpolled, so that wake-ups, deadlines and
        // the next steps pile up before the futures see them; the others poll every woken
        // future until none is left woken, and look.
        if rng.below(2) == 0 {
            continue;
        }
        settle(&mut tasks, &mut log, &mut rng);
        let len = queue.len();
        let waiting_gets: Vec<&str> = tasks
            .iter()
            .filter(|t| t.get)
            .map(|t| t.name.as_str())
            .collect();
        let waiting_puts: Vec<&str> = tasks
            .iter()
            .filter(|t| !t.get)
            .map(|t| t.name.as_str())
            .collect();
        assert!(
            len == 0 || waiting_gets.is_empty(),
            "{kind}, seed {seed}: {waiting_gets:?} wait beside {len} item(s); {}; steps: {log:?}",
            queue.ledger()
        );
        assert!(
            bound.is_none_or(|bound| len >= bound) || queue.is_shut_down() || waiting_puts.is_empty(),
            "{kind}, seed {seed}: {waiting_puts:?} wait beside a free slot ({len} buffered); {}; steps: {log:?}",
            queue.ledger()
        );
    }
    if std::env::var_os("TURN_PANICS_STATS").is_some() {
        let panicked = log.iter().filter(|l| l.contains("panicked")).count();
        let done = log.iter().filter(|l| l.ends_with("done")).count();
        eprintln!("{kind} seed {seed}: {panicked} panics, {done} waits done");
    }
    user_code.store(false, Ordering::SeqCst);
    for task in tasks.drain(..) {
        quietly(|| drop(task.future));
    }
    for job in held.borrow_mut().drain(..) {
        job.succeed();
    }
    let ledger = queue.ledger();
    assert_eq!(
        ledger.in_flight, 0,
        "{kind}, seed {seed}: every delivery ended, yet {ledger}; steps: {log:?}"
    );
}

/// Every kind of heap queue, `seeds` runs each.
fn heap_runs(armed: &AtomicBool, seeds: u64) {
    let policy = AbandonPolicy::Redeliver {
        max_attempts: core::num::NonZeroU32::new(3).unwrap(),
    };
    for seed in 0..seeds {
        let journal = Arc::new(common::Log::default());
        let kinds = [
            ("bounded(1)", Queue::bounded(1).unwrap(), Some(1)),
            ("bounded(2)", Queue::bounded(2).unwrap(), Some(2)),
            ("unbounded", Queue::unbounded(), None),
            (
                "with_unfinished_limit(2)",
                Queue::with_unfinished_limit(2).unwrap(),
                None,
            ),
            (
                "journaled bounded(2)",
                Queue::bounded(2).unwrap().with_journal(journal),
                Some(2),
            ),
        ];
        for (kind, queue, bound) in kinds {
            let queue = queue.with_abandon_policy(policy);
            run(kind, &queue, armed, bound, seed, scaled(150, 40));
        }
    }
}

/// The fixed tier, `seeds` runs.
fn fixed_runs(armed: &AtomicBool, seeds: u64) {
    for seed in 0..seeds {
        let queue = FixedQueue::<u32, 2, 4>::new();
        run_fixed(
            "fixed <2, 4>",
            &queue,
            armed,
            Some(2),
            seed,
            scaled(150, 40),
        );
    }
}

#[test]
fn panicking_wakers_neither_strand_a_turn_nor_pass_one_on_twice() {
    heap_runs(&AtomicBool::new(false), scaled(400, 4) as u64);
}

/// The same on the fixed tier (no batch waits, no redelivery).
#[test]
fn panicking_wakers_neither_strand_a_turn_nor_pass_one_on_twice_on_the_fixed_tier() {
    fixed_runs(&AtomicBool::new(false), scaled(2000, 4) as u64);
}

/// Panics armed now and then: the next event of the queue's `tracing` subscriber panics.
#[cfg(feature = "tracing")]
struct PanickingSubscriber(Arc<AtomicBool>);

#[cfg(feature = "tracing")]
impl tracing::Subscriber for PanickingSubscriber {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        metadata.target() == "tally_queue"
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {
        if !std::thread::panicking() && self.0.swap(false, Ordering::SeqCst) {
            panic!("a subscriber that panics when armed");
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// As above, with a `tracing` subscriber that panics at the event after each arming too
/// (`--features tracing`).
#[cfg(feature = "tracing")]
#[test]
fn panicking_subscribers_neither_strand_a_turn_nor_lose_an_item() {
    let armed = Arc::new(AtomicBool::new(false));
    tracing::subscriber::with_default(PanickingSubscriber(armed.clone()), || {
        heap_runs(&armed, scaled(200, 2) as u64);
        fixed_runs(&armed, scaled(1000, 2) as u64);
    });
}

/// Panics armed now and then: the next sample of the queue's histograms panics.
#[cfg(feature = "metrics")]
struct PanickingRecorder(Arc<AtomicBool>);

#[cfg(feature = "metrics")]
struct PanickingSample(Arc<AtomicBool>);

#[cfg(feature = "metrics")]
impl metrics::HistogramFn for PanickingSample {
    fn record(&self, _: f64) {
        if !std::thread::panicking() && self.0.swap(false, Ordering::SeqCst) {
            panic!("a recorder that panics when armed");
        }
    }
}

#[cfg(feature = "metrics")]
impl metrics::Recorder for PanickingRecorder {
    fn describe_counter(
        &self,
        _: metrics::KeyName,
        _: Option<metrics::Unit>,
        _: metrics::SharedString,
    ) {
    }
    fn describe_gauge(
        &self,
        _: metrics::KeyName,
        _: Option<metrics::Unit>,
        _: metrics::SharedString,
    ) {
    }
    fn describe_histogram(
        &self,
        _: metrics::KeyName,
        _: Option<metrics::Unit>,
        _: metrics::SharedString,
    ) {
    }
    fn register_counter(&self, _: &metrics::Key, _: &metrics::Metadata<'_>) -> metrics::Counter {
        metrics::Counter::noop()
    }
    fn register_gauge(&self, _: &metrics::Key, _: &metrics::Metadata<'_>) -> metrics::Gauge {
        metrics::Gauge::noop()
    }
    fn register_histogram(
        &self,
        _: &metrics::Key,
        _: &metrics::Metadata<'_>,
    ) -> metrics::Histogram {
        metrics::Histogram::from_arc(Arc::new(PanickingSample(self.0.clone())))
    }
}

/// As above, with a `metrics` recorder whose next sample after each arming panics
/// (`--features metrics`).
#[cfg(feature = "metrics")]
#[test]
fn panicking_recorders_neither_strand_a_turn_nor_lose_an_item() {
    let armed = Arc::new(AtomicBool::new(false));
    let recorder = PanickingRecorder(armed.clone());
    metrics::with_local_recorder(&recorder, || heap_runs(&armed, scaled(200, 2) as u64));
}
