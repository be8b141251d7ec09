//! loom models of the table's races: a claim held while the runner releases due ones, a
//! full table releasing a new claim while another thread holds one, a table dropped while
//! an immediate shutdown runs, and the runner's wake-up when a claim due sooner than its
//! sleep arrives. Run with `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test
//! --release -p tally-embassy --lib`.
//!
//! Under `cfg(loom)` the table's lock is a loom mutex (`lock.rs`) and the queue runs on
//! loom's atomics. The models take embassy's clock out: time stands still at `NOW`, the
//! runner plans with [`Redeliveries::next`] and sleeps in [`Redeliveries::sleep`] as
//! [`Redeliveries::run`] does, but with no timer (loom cannot run embassy-time's driver
//! thread), so a claim due after `NOW` stays held. A lost wake-up shows as a deadlock:
//! `block_on` parks its thread until its waker fires.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::future::Pending;

use embassy_time::Instant;
use loom::future::block_on;
use loom::sync::Mutex;
use loom::thread;
use tally_queue::{AbandonPolicy, JobId, Queue, Redelivery};

use super::Redeliveries;

/// The model's clock, which does not move.
const NOW: Instant = Instant::from_ticks(10);
/// Due before `NOW`: the runner releases it on its next pass.
const PAST: Instant = Instant::from_ticks(5);
/// Due after `NOW`: stays held.
const LATER: Instant = Instant::from_ticks(50);
const LATEST: Instant = Instant::from_ticks(100);

/// What one pass of the runner did.
#[derive(Debug, PartialEq)]
enum Pass {
    Released(JobId),
    /// Nothing was due; the runner planned to sleep until this instant (for ever if `None`).
    Planned(Option<Instant>),
}

/// [`Redeliveries::run`]'s loop with the clock at `NOW` and no timer: it sleeps after each
/// plan until a hold wakes it, and returns its passes once `enough` says they are enough.
async fn serve<const N: usize>(
    table: &Redeliveries<N>,
    enough: impl Fn(&[Pass]) -> bool,
) -> Vec<Pass> {
    let mut passes = Vec::new();
    loop {
        let planned = match table.next(NOW) {
            Ok(due) => {
                passes.push(Pass::Released(due.id()));
                due.release();
                false
            }
            Err(next) => {
                passes.push(Pass::Planned(next));
                true
            }
        };
        if enough(&passes) {
            return passes;
        }
        if planned {
            table.sleep(None::<Pending<()>>).await;
        }
    }
}

fn released(passes: &[Pass]) -> usize {
    passes
        .iter()
        .filter(|pass| matches!(pass, Pass::Released(_)))
        .count()
}

/// A queue under `AbandonPolicy::Redeliver` with `items` put, each taken and abandoned
/// once: returns the queue and the claims, in the order of `items`, with their ids.
fn abandoned(items: &[u8]) -> (Arc<Queue<u8>>, Vec<(JobId, Redelivery)>) {
    let claims = Arc::new(Mutex::new(Vec::new()));
    let schedule = Arc::clone(&claims);
    let queue = Queue::unbounded()
        .with_abandon_policy(AbandonPolicy::redeliver(3).unwrap())
        .with_redelivery_delay(move |claim| schedule.lock().unwrap().push(claim));
    let ids: Vec<JobId> = items
        .iter()
        .map(|&item| queue.try_put(item).unwrap())
        .collect();
    for _ in items {
        drop(queue.try_get().unwrap());
    }
    let claims = core::mem::take(&mut *claims.lock().unwrap());
    assert_eq!(claims.len(), items.len());
    let claims: Vec<(JobId, Redelivery)> = ids.into_iter().zip(claims).collect();
    for (id, claim) in &claims {
        assert_eq!((claim.id(), claim.attempt()), (*id, 2));
    }
    assert_eq!(queue.ledger().buffered, items.len() as u64);
    (queue, claims)
}

/// Takes every item the queue has ready: each must be its second delivery.
fn ready(queue: &Queue<u8>) -> Vec<u8> {
    let mut items = Vec::new();
    while let Ok(delivery) = queue.try_get() {
        assert_eq!(delivery.attempt(), 2);
        items.push(delivery.succeed());
    }
    items.sort_unstable();
    items
}

/// Two due claims are held and the runner releases them while another thread holds a
/// third, due too: the runner releases all three, each once, whether the third arrives
/// before a pass, between two, or once the runner sleeps with nothing planned.
#[test]
fn a_claim_held_while_the_runner_releases_due_ones_is_released_too() {
    loom::model(|| {
        let (queue, mut claims) = abandoned(&[1, 2, 3]);
        let table = Arc::new(Redeliveries::<4>::new());
        let (_, third) = claims.pop().unwrap();
        for (_, claim) in claims {
            table.hold(claim, PAST);
        }
        let runner = {
            let table = Arc::clone(&table);
            thread::spawn(move || block_on(serve(&table, |passes| released(passes) == 3)))
        };
        table.hold(third, PAST);
        let passes = runner.join().unwrap();
        assert_eq!(released(&passes), 3);
        assert!(table.is_empty());
        assert_eq!(table.released_at_once(), 0);
        assert_eq!(ready(&queue), [1, 2, 3]);
        let ledger = queue.ledger();
        assert_eq!(
            (ledger.buffered, ledger.in_flight, ledger.succeeded),
            (0, 0, 3)
        );
    });
}

/// A table of one place, and two threads holding a claim each: one claim takes the place,
/// the other is released at once and counted, whichever comes first; dropping the table
/// then releases the held one.
#[test]
fn a_full_table_releases_the_new_claim_while_another_thread_holds() {
    loom::model(|| {
        let (queue, mut claims) = abandoned(&[1, 2]);
        let table = Arc::new(Redeliveries::<1>::new());
        let (_, second) = claims.pop().unwrap();
        let (_, first) = claims.pop().unwrap();
        let holder = {
            let table = Arc::clone(&table);
            thread::spawn(move || table.hold(second, LATER))
        };
        table.hold(first, LATER);
        holder.join().unwrap();
        assert_eq!((table.len(), table.released_at_once()), (1, 1));
        let at_once = ready(&queue);
        assert_eq!(at_once.len(), 1);
        assert_eq!(queue.ledger().buffered, 1);
        drop(table);
        let mut all = at_once;
        all.extend(ready(&queue));
        all.sort_unstable();
        assert_eq!(all, [1, 2]);
        let ledger = queue.ledger();
        assert_eq!(
            (ledger.buffered, ledger.in_flight, ledger.succeeded),
            (0, 0, 2)
        );
    });
}

/// The runner releases a due claim and gives the table up (the last reference may be its,
/// and then it drops the table, releasing the claim not due), while another thread shuts
/// the queue down at once: whatever the order, `shutdown_now` hands back both items, once
/// each, and a release after it does nothing.
#[test]
fn the_table_dropped_while_the_queue_shuts_down_at_once_loses_and_doubles_nothing() {
    loom::model(|| {
        let (queue, claims) = abandoned(&[1, 2]);
        let table = Arc::new(Redeliveries::<2>::new());
        let mut dues = [PAST, LATEST].into_iter();
        for (_, claim) in claims {
            table.hold(claim, dues.next().unwrap());
        }
        let runner = {
            let table = Arc::clone(&table);
            thread::spawn(move || {
                let passes = block_on(serve(&table, |passes| released(passes) == 1));
                drop(table);
                passes
            })
        };
        let mut back: Vec<u8> = queue
            .shutdown_now()
            .into_iter()
            .map(|(_, item)| item)
            .collect();
        drop(table);
        assert_eq!(released(&runner.join().unwrap()), 1);
        back.sort_unstable();
        assert_eq!(back, [1, 2]);
        assert!(queue.try_get().is_err());
        let ledger = queue.ledger();
        assert_eq!(
            (ledger.buffered, ledger.in_flight, ledger.discarded),
            (0, 0, 2)
        );
        assert!(queue.is_settled());
    });
}

/// The runner sleeps until the one claim held is due (`LATEST`); another thread holds a
/// claim due sooner (`LATER`), then one due already (`PAST`). Each wakes the runner: it
/// plans its sleep again to `LATER`, and releases the due claim; the claims not due stay
/// held, and dropping the table releases them.
#[test]
fn a_claim_due_sooner_than_the_runners_sleep_wakes_it() {
    loom::model(|| {
        let (queue, mut claims) = abandoned(&[1, 2, 3]);
        let table = Arc::new(Redeliveries::<4>::new());
        let (_, due) = claims.pop().unwrap();
        let (_, sooner) = claims.pop().unwrap();
        let (_, latest) = claims.pop().unwrap();
        table.hold(latest, LATEST);
        let runner = {
            let table = Arc::clone(&table);
            thread::spawn(move || {
                block_on(serve(&table, |passes| {
                    passes.last() == Some(&Pass::Planned(Some(LATER))) && released(passes) == 1
                }))
            })
        };
        table.hold(sooner, LATER);
        table.hold(due, PAST);
        let passes = runner.join().unwrap();
        assert!(passes.contains(&Pass::Planned(Some(LATER))));
        assert_eq!(table.len(), 2);
        assert_eq!(ready(&queue), [3]);
        drop(table);
        assert_eq!(ready(&queue), [1, 2]);
        let ledger = queue.ledger();
        assert_eq!(
            (ledger.buffered, ledger.in_flight, ledger.succeeded),
            (0, 0, 3)
        );
    });
}
