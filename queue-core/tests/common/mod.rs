//! Helpers shared by the integration tests.
#![allow(dead_code, unreachable_pub)]

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

/// Polls `future` once with a waker that does nothing.
pub fn poll_once<F: Future + Unpin>(future: &mut F) -> Poll<F::Output> {
    let mut cx = Context::from_waker(Waker::noop());
    Pin::new(future).poll(&mut cx)
}

/// Polls once and expects `Pending`.
#[track_caller]
pub fn assert_pending<F: Future + Unpin>(future: &mut F) {
    assert!(
        poll_once(future).is_pending(),
        "expected the future to wait"
    );
}

/// Polls once and expects `Ready`.
#[track_caller]
pub fn expect_ready<F: Future + Unpin>(future: &mut F) -> F::Output {
    match poll_once(future) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("expected the future to be ready"),
    }
}

/// Iteration counts scaled down under Miri.
pub const fn scaled(normal: usize, miri: usize) -> usize {
    if cfg!(miri) {
        miri
    } else {
        normal
    }
}

/// Runs `victim` on its own thread and fails the test if it does not return within
/// `seconds`: a hang becomes a failure instead of a stuck CI job. (The stuck thread is left
/// behind; the test process ends without it.)
#[track_caller]
pub fn within<R: Send + 'static>(seconds: u64, victim: impl FnOnce() -> R + Send + 'static) -> R {
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(victim());
    });
    match result.recv_timeout(std::time::Duration::from_secs(seconds)) {
        Ok(value) => value,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("hang: the victim did not finish within {seconds} s")
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            panic!("the victim panicked")
        }
    }
}

/// A waker that runs `on_wake` each time it is woken (by value or by reference).
pub fn waker_fn(on_wake: impl Fn() + Send + Sync + 'static) -> Waker {
    struct FnWaker<F>(F);
    impl<F: Fn() + Send + Sync + 'static> std::task::Wake for FnWaker<F> {
        fn wake(self: std::sync::Arc<Self>) {
            (self.0)();
        }
        fn wake_by_ref(self: &std::sync::Arc<Self>) {
            (self.0)();
        }
    }
    Waker::from(std::sync::Arc::new(FnWaker(on_wake)))
}

/// A waker that counts its wake-ups.
pub fn counting_waker() -> (Waker, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = count.clone();
    let waker = waker_fn(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    });
    (waker, count)
}

/// A waker whose every wake-up panics (cloning and dropping it do not).
pub fn panicking_waker() -> Waker {
    waker_fn(|| panic!("a waker that panics"))
}

/// Polls `future` once with `waker`.
pub fn poll_with<F: Future + Unpin>(future: &mut F, waker: &Waker) -> Poll<F::Output> {
    Pin::new(future).poll(&mut Context::from_waker(waker))
}

/// Runs `f`, expecting it to panic; the panic's message is not printed twice.
#[track_caller]
pub fn expect_panic<R>(f: impl FnOnce() -> R) {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    assert!(result.is_err(), "expected a panic");
}

/// A journal that keeps every event, in the order the queue recorded them.
#[derive(Default)]
pub struct Log(pub std::sync::Mutex<Vec<tally_queue::JobEvent>>);

impl tally_queue::Journal for Log {
    fn record(&self, event: tally_queue::JobEvent) {
        self.0.lock().unwrap().push(event);
    }
}

impl Log {
    /// The events of `id`, in order.
    pub fn of(&self, id: tally_queue::JobId) -> Vec<tally_queue::JobEvent> {
        let events = self.0.lock().unwrap();
        events.iter().copied().filter(|e| e.id() == id).collect()
    }

    /// Every id's events, in order.
    pub fn by_id(
        &self,
    ) -> std::collections::BTreeMap<tally_queue::JobId, Vec<tally_queue::JobEvent>> {
        let mut by_id = std::collections::BTreeMap::<_, Vec<_>>::new();
        for event in self.0.lock().unwrap().iter() {
            by_id.entry(event.id()).or_default().push(*event);
        }
        by_id
    }
}

/// Succeeds each delivery on its own thread, panicking instead on the item `poison` (so
/// the panic unwinds through the delivery, as in a real worker), until the queue reports
/// `ShutDown`. Returns the
/// (id, attempt) of every delivery seen.
#[cfg(feature = "std")]
pub fn panicking_worker(
    queue: &tally_queue::Queue<u32>,
    poison: u32,
) -> Vec<(tally_queue::JobId, u32)> {
    let mut seen = Vec::new();
    std::thread::scope(|s| loop {
        let job = match queue.get_blocking() {
            Ok(job) => job,
            Err(tally_queue::GetError::ShutDown) => break,
        };
        seen.push((job.id(), job.attempt()));
        let handler = s.spawn(move || {
            if *job == poison {
                panic!("poison item");
            }
            job.succeed();
        });
        let _ = handler.join();
    });
    seen
}

/// Every kind of queue a behaviour must hold on, by name: a small bound (ring), a large
/// bound (growable), unbounded, an unfinished limit, and a journaled queue (a `Record`
/// installed; without `std`, which has no `Record`, a `Log`), each with `policy` installed.
pub fn every_kind<T: 'static>(
    policy: tally_queue::AbandonPolicy,
) -> Vec<(&'static str, tally_queue::Queue<T>)> {
    use tally_queue::Queue;
    #[cfg(feature = "std")]
    let journal = std::sync::Arc::new(tally_queue::Record::new());
    #[cfg(not(feature = "std"))]
    let journal = std::sync::Arc::new(Log::default());
    vec![
        (
            "bounded(4)",
            Queue::bounded(4).unwrap().with_abandon_policy(policy),
        ),
        (
            "bounded(100_000)",
            Queue::bounded(100_000).unwrap().with_abandon_policy(policy),
        ),
        ("unbounded", Queue::unbounded().with_abandon_policy(policy)),
        (
            "with_unfinished_limit(4)",
            Queue::with_unfinished_limit(4)
                .unwrap()
                .with_abandon_policy(policy),
        ),
        (
            "journaled bounded(4)",
            Queue::bounded(4)
                .unwrap()
                .with_abandon_policy(policy)
                .with_journal(journal),
        ),
    ]
}

/// A future polled as an executor would poll it: only when its waker fired since its last
/// poll (and once at the start). A task whose waker never fires is asleep for good.
pub struct Task<F: Future + Unpin> {
    future: F,
    waker: Waker,
    woken: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    seen: usize,
    polled: bool,
}

impl<F: Future + Unpin> Task<F> {
    /// A task not polled yet.
    pub fn new(future: F) -> Self {
        let (waker, woken) = counting_waker();
        Task {
            future,
            waker,
            woken,
            seen: 0,
            polled: false,
        }
    }

    /// How many times the task's waker fired.
    pub fn wake_ups(&self) -> usize {
        self.woken.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Polls the task if it was never polled or its waker fired since its last poll;
    /// `None` if it is asleep (not polled) or still pending.
    pub fn run(&mut self) -> Option<F::Output> {
        let woken = self.wake_ups();
        if self.polled && woken == self.seen {
            return None;
        }
        self.polled = true;
        self.seen = woken;
        match poll_with(&mut self.future, &self.waker) {
            Poll::Ready(out) => Some(out),
            Poll::Pending => None,
        }
    }
}
