//! The cross-runtime demo (`examples/cross_runtime`): every accepted id ends exactly once,
//! whichever runtime put it and whichever consumer took it.

#[path = "../examples/cross_runtime/scenario.rs"]
mod scenario;

use std::collections::BTreeMap;

use tally_queue::JobId;

#[test]
fn every_id_ends_exactly_once_across_runtimes() {
    let per_producer = 300;
    let report = scenario::run(per_producer);
    let total = per_producer as usize * scenario::PRODUCERS.len();

    let accepted: BTreeMap<JobId, scenario::Item> = report.accepted.iter().cloned().collect();
    assert_eq!(
        accepted.len(),
        total,
        "every put was accepted, under a unique id"
    );
    for producer in scenario::PRODUCERS {
        let seqs: Vec<u32> = report
            .accepted
            .iter()
            .filter(|(_, item)| item.producer == producer)
            .map(|(_, item)| item.seq)
            .collect();
        assert_eq!(seqs, (0..per_producer).collect::<Vec<_>>(), "{producer}");
    }

    let mut ended = BTreeMap::new();
    for (id, item, consumer) in &report.ended {
        assert!(
            ended.insert(*id, item.clone()).is_none(),
            "{id} ended twice ({consumer})"
        );
    }
    assert_eq!(
        ended, accepted,
        "each id ended once, with the item it was accepted with"
    );

    let closed = &report.closed;
    assert!(closed.drained_in_time);
    assert!(closed.returned.is_empty());
    assert_eq!(closed.ledger.accepted, total as u64);
    assert_eq!(closed.ledger.succeeded, total as u64);
    assert_eq!(closed.ledger.unfinished(), 0);
    assert!(closed.ledger.is_balanced());
}
