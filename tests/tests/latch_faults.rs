//! Fault runs over `tally-latch`: count-downs from many threads racing waiters (async on
//! `block_on`, async on an executor, blocking, and each of them with deadlines), failures
//! racing count-downs, and counter handles dropped unreported or during unwinding.
//!
//! Every waiter must end with the latch's one terminal result, and a timed-out wait on a
//! `TrackingLatch` must name exactly the counters pending at that moment. That is made exact
//! by construction: some counters are stalled (their handles are held by threads parked on
//! a gate), and the deadline is a future that completes only once every other counter has
//! reported, so at the deadline the pending set is the stalled set, no more, no less.
//!
//! Seeds fix the choices, not the schedule; a failure prints its seed, and
//! `LATCH_SEED=<seed>` reruns it alone. `LATCH_RUNS` sets the number of seeds per test.

mod reliability;

use std::collections::BTreeSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_executor::Executor;
use async_io::Timer;
use futures_lite::future::block_on;
use reliability::{derive_seed, env_u64, quiet_injected_panics, scaled, SeedReport, INJECTED};
use tally_latch::{CountDownLatch, FailableLatch, Failure, TrackingLatch};

fn seeds(base: u64, default_runs: u64) -> Vec<u64> {
    if let Some(seed) = env_u64("LATCH_SEED") {
        return vec![seed];
    }
    let runs = scaled(env_u64("LATCH_RUNS").unwrap_or(default_runs), 2);
    (0..runs).map(|i| derive_seed(base, i)).collect()
}

fn short(rng: &mut fastrand::Rng) -> Duration {
    Duration::from_micros(rng.u64(0..2_000))
}

/// How a waiter waits.
#[derive(Clone, Copy, Debug)]
enum Waiter {
    BlockOn,
    Blocking,
    BlockingTimeout,
    Until,
    Executor,
}

const WAITERS: [Waiter; 5] = [
    Waiter::BlockOn,
    Waiter::Blocking,
    Waiter::BlockingTimeout,
    Waiter::Until,
    Waiter::Executor,
];

/// N count-downs spread over threads, racing waiters of every kind. Exactly N count-downs
/// count; extra ones report `false`; every waiter that returns in time sees every write
/// made before every count-down (the marks below).
#[test]
fn count_downs_race_waiters() {
    for seed in seeds(0xC0DE, 200) {
        let _report = SeedReport {
            test: "count_downs_race_waiters",
            env: "LATCH_SEED",
            seed,
        };
        let mut rng = fastrand::Rng::with_seed(seed);
        let threads = rng.usize(1..=6);
        let per_thread = rng.usize(1..=scaled(200, 4) as usize);
        let count = threads * per_thread;
        let latch = CountDownLatch::new(count);
        // One mark per count-down, written before it.
        let marks = AtomicUsize::new(0);
        let counted = AtomicUsize::new(0);
        let executor = Executor::new();
        let stop = CountDownLatch::new(1);
        std::thread::scope(|s| {
            s.spawn(|| block_on(executor.run(stop.wait())));
            let mut waiters = Vec::new();
            for w in 0..rng.usize(1..=8) {
                let kind = WAITERS[rng.usize(0..WAITERS.len())];
                let timeout = short(&mut rng);
                let (latch, marks, executor) = (&latch, &marks, &executor);
                waiters.push(s.spawn(move || {
                    let in_time = match kind {
                        Waiter::BlockOn => {
                            block_on(latch.wait());
                            true
                        }
                        Waiter::Blocking => {
                            latch.wait_blocking();
                            true
                        }
                        Waiter::BlockingTimeout => latch.wait_blocking_timeout(timeout).is_ok(),
                        Waiter::Until => block_on(latch.wait_until(Timer::after(timeout))).is_ok(),
                        Waiter::Executor => {
                            block_on(executor.spawn(latch.wait()));
                            true
                        }
                    };
                    if in_time {
                        assert!(latch.is_open(), "waiter {w} ({kind:?}) released early");
                        // Relaxed: the wait's return must already order every mark.
                        assert_eq!(
                            marks.load(Ordering::Relaxed),
                            count,
                            "waiter {w} ({kind:?})"
                        );
                    }
                }));
            }
            for _ in 0..threads {
                let extra = rng.usize(0..3);
                let (latch, marks, counted) = (&latch, &marks, &counted);
                s.spawn(move || {
                    for _ in 0..per_thread {
                        marks.fetch_add(1, Ordering::Relaxed);
                        if latch.count_down() {
                            counted.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    // Once the latch is open, further count-downs do not count.
                    latch.wait_blocking();
                    for _ in 0..extra {
                        assert!(!latch.count_down(), "a count-down below zero counted");
                    }
                });
            }
            for waiter in waiters {
                waiter.join().expect("a waiter failed");
            }
            stop.count_down();
        });
        assert_eq!(counted.load(Ordering::Relaxed), count);
        assert_eq!(latch.count(), 0);
        assert!(latch.is_open());
    }
}

/// Count-downs racing several failures: exactly one failure wins (its caller gets `Ok`,
/// every other gets its error back), unless the latch opened first (then every failure is
/// refused); every waiter sees that one terminal result, the same stored error.
#[test]
fn failures_race_count_downs() {
    for seed in seeds(0xFA11, 200) {
        let _report = SeedReport {
            test: "failures_race_count_downs",
            env: "LATCH_SEED",
            seed,
        };
        let mut rng = fastrand::Rng::with_seed(seed);
        let count = rng.usize(1..=scaled(64, 4) as usize);
        let latch = FailableLatch::<u64>::new(count);
        let failers = rng.u64(1..=4);
        let winners = AtomicUsize::new(0);
        std::thread::scope(|s| {
            let mut waiters = Vec::new();
            for _ in 0..rng.usize(1..=6) {
                let kind = WAITERS[rng.usize(0..WAITERS.len())];
                let timeout = short(&mut rng);
                let latch = &latch;
                // `None`: timed out (the outer `Err` of a timed wait).
                waiters.push(s.spawn(move || -> Option<Result<(), u64>> {
                    match kind {
                        Waiter::BlockingTimeout => latch.wait_blocking_timeout(timeout).ok(),
                        Waiter::Until => block_on(latch.wait_until(Timer::after(timeout))).ok(),
                        Waiter::Blocking => Some(latch.wait_blocking()),
                        _ => Some(block_on(latch.wait())),
                    }
                }));
            }
            for t in 0..3 {
                let latch = &latch;
                let n = count / 3 + usize::from(t < count % 3);
                s.spawn(move || {
                    for _ in 0..n {
                        latch.count_down();
                    }
                });
            }
            for error in 0..failers {
                let (latch, winners) = (&latch, &winners);
                let delay = rng.u64(0..50);
                s.spawn(move || {
                    std::thread::sleep(Duration::from_micros(delay));
                    match latch.fail(error) {
                        Ok(()) => {
                            winners.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(back) => assert_eq!(back, error, "a refused failure came back changed"),
                    }
                });
            }
            let results: Vec<_> = waiters
                .into_iter()
                .map(|w| w.join().expect("a waiter failed"))
                .collect();
            // Every thread is done only at the end of the scope, but each waiter that
            // returned in time already saw the terminal state, which never changes.
            let expected = block_on(latch.wait());
            for result in results.into_iter().flatten() {
                assert_eq!(result, expected);
            }
        });
        match latch.error() {
            Some(_) => {
                assert_eq!(winners.load(Ordering::Relaxed), 1, "one failure is stored");
                assert!(!latch.is_open());
            }
            None => {
                assert_eq!(
                    winners.load(Ordering::Relaxed),
                    0,
                    "a failure after opening counted"
                );
                assert!(latch.is_open());
            }
        }
    }
}

/// How the stalled counters end once released.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Release {
    /// All report: the latch opens.
    Report,
    /// Some are dropped unreported.
    Drop,
    /// Some are dropped while their thread unwinds from a panic.
    Panic,
    /// Some fail explicitly.
    Fail,
}

/// The exact-timeout run: stalled counters, deadlines tied to everyone else having
/// reported, then the stalled counters released in one of four ways.
#[test]
fn timeouts_name_exactly_the_stalled_counters() {
    quiet_injected_panics();
    for seed in seeds(0x7A11, 200) {
        let _report = SeedReport {
            test: "timeouts_name_exactly_the_stalled_counters",
            env: "LATCH_SEED",
            seed,
        };
        tracking_run(seed);
    }
}

fn tracking_run(seed: u64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let n = rng.usize(1..=scaled(24, 4) as usize);
    let names: Vec<String> = (0..n).map(|i| format!("c{i}")).collect();
    let latch = Arc::new(TrackingLatch::<String>::new_failable(names.clone()).unwrap());
    let stalled: BTreeSet<String> = names
        .iter()
        .filter(|_| rng.u8(0..3) == 0)
        .cloned()
        .collect();
    let running: Vec<String> = names
        .iter()
        .filter(|n| !stalled.contains(*n))
        .cloned()
        .collect();
    let release = [
        Release::Report,
        Release::Drop,
        Release::Panic,
        Release::Fail,
    ][rng.usize(0..4)];
    // Which stalled counters misbehave (for the failing releases); at least one when any.
    let mut bad: BTreeSet<String> = stalled.iter().filter(|_| rng.bool()).cloned().collect();
    if release != Release::Report && bad.is_empty() {
        bad.extend(stalled.iter().next().cloned());
    }
    if release == Release::Report {
        bad.clear();
    }

    // Opens once every running counter has reported: the deadline of the timed waits.
    let reported = CountDownLatch::new(running.len());
    let gate = CountDownLatch::new(1);
    let executor = Executor::new();
    let stop = CountDownLatch::new(1);

    // The stalled counters' handles are claimed now, before anything can time out.
    let stalled_handles: Vec<_> = stalled
        .iter()
        .map(|name| (name.clone(), latch.counter_owned(name).unwrap()))
        .collect();

    std::thread::scope(|s| {
        s.spawn(|| block_on(executor.run(stop.wait())));
        let (latch, reported, gate, executor) = (&latch, &reported, &gate, &executor);

        // Timed waiters: all must time out naming exactly the stalled set.
        let mut timed = Vec::new();
        for w in 0..rng.usize(1..=4) {
            let on_executor = rng.bool();
            timed.push(s.spawn(move || {
                let wait = latch.wait_until(reported.wait());
                let result = if on_executor {
                    // The borrowed latch outlives the executor's run, which stops below.
                    block_on(executor.spawn(wait))
                } else {
                    block_on(wait)
                };
                (w, result)
            }));
        }

        // Untimed waiters: all see the final result.
        let mut untimed = Vec::new();
        for _ in 0..rng.usize(1..=4) {
            let blocking = rng.bool();
            untimed.push(s.spawn(move || {
                if blocking {
                    latch.wait_blocking()
                } else {
                    block_on(latch.wait())
                }
            }));
        }

        // The running counters report from several threads, three ways, with duplicates.
        let chunks: Vec<Vec<String>> = running.chunks(3).map(<[String]>::to_vec).collect();
        for (t, chunk) in chunks.into_iter().enumerate() {
            s.spawn(move || {
                for name in chunk {
                    match t % 3 {
                        0 => assert!(latch.counter(&name).unwrap().report()),
                        1 => {
                            assert!(latch.count_down_for(&name).unwrap());
                            // A duplicate report is harmless.
                            assert!(!latch.count_down_for(&name).unwrap());
                        }
                        _ => assert!(latch.counter_owned(&name).unwrap().report()),
                    }
                    reported.count_down();
                }
            });
        }

        // The stalled counters wait at the gate, then end as planned.
        for (name, handle) in stalled_handles {
            let misbehaves = bad.contains(&name);
            s.spawn(move || {
                gate.wait_blocking();
                match (release, misbehaves) {
                    (Release::Drop, true) => drop(handle),
                    (Release::Panic, true) => {
                        let unwound = catch_unwind(AssertUnwindSafe(move || {
                            let _handle = handle;
                            panic!("{}", INJECTED);
                        }));
                        assert!(unwound.is_err());
                    }
                    (Release::Fail, true) => {
                        let _ = handle.fail(format!("{name} broke"));
                    }
                    // A report that does not count means another counter is failing the
                    // latch (its failure may not be published yet): the latch must end failed.
                    _ => assert!(handle.report() || latch.wait_blocking().is_err()),
                }
            });
        }

        for thread in timed {
            let (w, result) = thread.join().expect("a timed waiter failed");
            if stalled.is_empty() {
                assert_eq!(result, Ok(Ok(())), "timed waiter {w}");
                continue;
            }
            let pending = match result {
                Err(pending) => pending,
                Ok(ended) => panic!("timed waiter {w}: expected a timeout, got {ended:?}"),
            };
            let named: Vec<&str> = pending.names().iter().map(|n| &**n).collect();
            let named_set: BTreeSet<String> = named.iter().map(|n| n.to_string()).collect();
            assert_eq!(named.len(), named_set.len(), "a name repeated: {named:?}");
            assert_eq!(
                named_set, stalled,
                "timed waiter {w} named the wrong counters"
            );
            let display = pending.to_string();
            assert!(display.starts_with("timed out waiting for: "), "{display}");
        }
        let now_pending: BTreeSet<String> = latch.pending().iter().map(|n| n.to_string()).collect();
        assert_eq!(now_pending, stalled);
        assert!(!latch.is_open() || stalled.is_empty());

        gate.count_down();
        let results: Vec<_> = untimed
            .into_iter()
            .map(|t| t.join().expect("an untimed waiter failed"))
            .collect();
        match latch.failure() {
            None => {
                assert!(
                    bad.is_empty(),
                    "{release:?} of {bad:?} did not fail the latch"
                );
                assert!(latch.is_open());
                assert!(results.iter().all(Result::is_ok), "{results:?}");
            }
            Some(failure) => {
                assert!(!bad.is_empty(), "the latch failed with {failure:?}");
                let counter = failure.counter().expect("a stalled counter failed it");
                assert!(
                    bad.contains(counter),
                    "{counter} is not one that misbehaved"
                );
                match (release, failure) {
                    (Release::Drop, Failure::Abandoned { panicking, .. }) => assert!(!panicking),
                    (Release::Panic, Failure::Abandoned { panicking, .. }) => {
                        assert!(panicking);
                        assert_eq!(
                            failure.to_string(),
                            format!("counter `{counter}` panicked before reporting")
                        );
                    }
                    (Release::Fail, Failure::Failed { error, .. }) => {
                        assert_eq!(error, &format!("{counter} broke"));
                    }
                    other => panic!("unexpected failure {other:?}"),
                }
                // Every waiter got this failure, not another one: each waiter owns a clone
                // of the stored failure, and the failures a run can produce all differ (each
                // names its own counter, and a `Fail` error names it too).
                assert!(
                    results.iter().all(|r| r.as_ref() == Err(failure)),
                    "{results:?}"
                );
            }
        }
        stop.count_down();
    });
}

/// A counter handle dropped while its thread unwinds fails the latch naming it, and wakes
/// every waiter, on threads and on the executor.
#[test]
fn handle_dropped_during_unwinding_fails_the_latch() {
    quiet_injected_panics();
    let latch = Arc::new(TrackingLatch::new(["loader", "index", "http"]).unwrap());
    latch.count_down_for("http").unwrap();
    let executor = Executor::new();
    let stop = CountDownLatch::new(1);
    std::thread::scope(|s| {
        s.spawn(|| block_on(executor.run(stop.wait())));
        let waiters: Vec<_> = (0..4)
            .map(|i| {
                let (latch, executor) = (&latch, &executor);
                s.spawn(move || {
                    let failure = if i % 2 == 0 {
                        latch.wait_blocking().unwrap_err()
                    } else {
                        block_on(executor.spawn(latch.wait())).unwrap_err()
                    };
                    failure.to_string()
                })
            })
            .collect();
        let index = latch.counter_owned("index").unwrap();
        let dying = std::thread::spawn(move || {
            let _index = index;
            panic!("{}", INJECTED);
        });
        assert!(dying.join().is_err());
        for waiter in waiters {
            assert_eq!(
                waiter.join().unwrap(),
                "counter `index` panicked before reporting"
            );
        }
        stop.count_down();
    });
    assert_eq!(latch.pending(), ["loader", "index"]);
    assert!(!latch.is_open());
    // A late report changes nothing: the latch ended failed.
    assert!(!latch.counter("loader").unwrap().report());
    assert!(!latch.is_open());
}
