//! Configuration calls (`with_abandon_policy`, `with_journal`) on a queue that already
//! holds items: every item is kept, delivered, and counted.

mod common;

use std::sync::Arc;
use std::time::Duration;

use tally_queue::{AbandonPolicy, JobId, Queue, Record};

/// A configuration call, by name.
type Configure = (&'static str, fn(Queue<&'static str>) -> Queue<&'static str>);

fn configurations() -> Vec<Configure> {
    vec![
        ("with_abandon_policy(Abandon)", |q| {
            q.with_abandon_policy(AbandonPolicy::Abandon)
        }),
        ("with_abandon_policy(Uncertain)", |q| {
            q.with_abandon_policy(AbandonPolicy::Uncertain)
        }),
        ("with_abandon_policy(redeliver(2))", |q| {
            q.with_abandon_policy(AbandonPolicy::redeliver(2).unwrap())
        }),
        ("with_abandon_policy(redeliver(5))", |q| {
            q.with_abandon_policy(AbandonPolicy::redeliver(5).unwrap())
        }),
        ("with_journal(Record)", |q| {
            q.with_journal(Arc::new(Record::new()))
        }),
    ]
}

/// Issue 31, finding 3 (loss): a queue under `Redeliver` holding a buffered item and a
/// redelivered one (a delivery dropped), then configured again. Both items stay: the ledger
/// counts both buffered and balances, both are delivered, and `join` returns once they end.
/// Every kind of queue, every configuration call.
#[test]
fn a_configuration_call_on_a_queue_holding_items_keeps_every_item() {
    let mut failures = Vec::new();
    for (call, configure) in configurations() {
        let kinds = common::every_kind::<&'static str>(AbandonPolicy::redeliver(3).unwrap());
        for (kind, queue) in kinds {
            let redelivered = queue.try_put("redelivered").unwrap();
            drop(queue.try_get().unwrap());
            let buffered = queue.try_put("buffered").unwrap();
            let queue = configure(queue);
            let case = format!("{kind}, then {call}");
            let ledger = queue.ledger();
            if (ledger.accepted, ledger.buffered, queue.len()) != (2, 2, 2) || !ledger.is_balanced()
            {
                failures.push(format!(
                    "{case}: after the call, len {} and ledger {ledger}",
                    queue.len()
                ));
            }
            let mut delivered: Vec<JobId> = std::iter::from_fn(|| queue.try_get().ok())
                .map(|job| {
                    let id = job.id();
                    job.succeed();
                    id
                })
                .collect();
            delivered.sort();
            if delivered != [redelivered, buffered] {
                failures.push(format!(
                    "{case}: delivered {delivered:?}, expected {:?}",
                    [redelivered, buffered]
                ));
            }
            match queue.join_blocking_timeout(Duration::from_millis(50)) {
                Ok(ledger) if ledger.succeeded == 2 && ledger.is_balanced() => {}
                Ok(ledger) => failures.push(format!("{case}: joined with {ledger}")),
                Err(late) => failures.push(format!("{case}: join timed out: {}", late.ledger())),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
