//! The queue against a real `redis-server`, each test on tokio and on smol.
#![allow(clippy::std_instead_of_core, clippy::std_instead_of_alloc)] // a std test program

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use adapter_redis::{
    Bytes, Error, GetError, JoinError, OpenError, PutError, Queue, Records, Redelivery,
    ResolveError, State, TryGetError,
};
use common::{after, open, options, redeliver, sleep, Rt};
use queue_core::{JobId, Outcome};

/// Child processes enter here (see `roles`); outside a child this does nothing.
#[test]
fn child_role_entry() {
    common::roles::run_if_child();
}

async fn round_trip(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "jobs", options()).await;
    for n in 0..4u8 {
        let id = queue.try_put(vec![n]).await.unwrap();
        assert_eq!(id, JobId::from_raw(u64::from(n)));
    }
    let first = queue.get().await.unwrap();
    assert_eq!(
        (first.id().get(), first.attempt(), first.item()),
        (0, 1, &vec![0])
    );
    assert_eq!(first.succeed().await.unwrap(), vec![0]);
    queue.get().await.unwrap().reject().await.unwrap();
    queue.get().await.unwrap().uncertain().await.unwrap();
    let held = queue.get().await.unwrap();
    let ledger = queue.ledger().await.unwrap();
    assert_eq!(ledger.accepted, 4);
    assert_eq!((ledger.buffered, ledger.in_flight), (0, 1));
    assert_eq!(
        (ledger.succeeded, ledger.rejected, ledger.uncertain),
        (1, 1, 1)
    );
    assert!(ledger.is_balanced());
    held.resolve(Outcome::Succeeded).await.unwrap();

    let uncertain = queue.uncertain(None, 10).await.unwrap();
    assert_eq!(uncertain.len(), 1);
    assert_eq!((uncertain[0].job.get(), uncertain[0].attempt), (2, 1));
    assert_eq!(uncertain[0].consumer, queue.consumer());
    assert_eq!(queue.decode(&uncertain[0].bytes).unwrap(), vec![2]);
    assert!(queue
        .remove_record(Records::Uncertain, &uncertain[0].key)
        .await
        .unwrap());
    assert!(queue.uncertain(None, 10).await.unwrap().is_empty());

    assert!(matches!(queue.try_get().await, Err(TryGetError::Empty)));
    assert!(queue.shutdown().await.unwrap());
    assert!(!queue.shutdown().await.unwrap());
    assert!(matches!(queue.get().await, Err(GetError::ShutDown)));
    assert!(matches!(
        queue.try_put(vec![9]).await,
        Err(PutError::ShutDown(item)) if item == vec![9]
    ));
    let ledger = queue.join().await.unwrap();
    assert_eq!((ledger.accepted, ledger.succeeded), (4, 2));
    assert!(ledger.is_balanced());
    let status = queue.status().await.unwrap();
    assert_eq!(status.state, State::Draining);
    assert_eq!((status.redelivered, status.stale), (0, 0));
}

async fn bounded_refuses_when_full(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "small", options().bounded(2)).await;
    queue.try_put(vec![0]).await.unwrap();
    queue.try_put(vec![1]).await.unwrap();
    match queue.try_put(vec![2]).await {
        Err(PutError::Full(item)) => assert_eq!(item, vec![2]),
        other => panic!("expected Full, got {other:?}"),
    }
    // A delivered item frees its room in the buffer.
    let held = queue.get().await.unwrap();
    assert_eq!(queue.try_put(vec![2]).await.unwrap().get(), 2);
    // A waiting put times out with its item back, after a last try.
    match queue
        .put_until(vec![3], after(Duration::from_millis(120)))
        .await
    {
        Err(PutError::TimedOut(item)) => assert_eq!(item, vec![3]),
        other => panic!("expected TimedOut, got {other:?}"),
    }
    // And it goes in once a get makes room.
    let getter = queue.clone();
    let put = queue.put(vec![3]);
    let room = async {
        sleep(Duration::from_millis(60)).await;
        getter.get().await.unwrap()
    };
    let (id, second) = futures_lite::future::zip(put, room).await;
    assert_eq!(id.unwrap().get(), 3);
    held.succeed().await.unwrap();
    second.succeed().await.unwrap();
    let ledger = queue.ledger().await.unwrap();
    assert_eq!(
        (ledger.accepted, ledger.buffered, ledger.succeeded),
        (4, 2, 2)
    );
    assert!(ledger.is_balanced());
}

/// Issue point 2: a reclaimed holder's late resolve returns `Stale` and is not counted.
async fn late_resolve_is_stale(_rt: Rt) {
    let server = server!();
    let a = open(&server, "fenced", redeliver(3)).await;
    let b = open(&server, "fenced", redeliver(3)).await;
    a.try_put(b"job".to_vec()).await.unwrap();
    let first = a.get().await.unwrap();
    assert_eq!(first.attempt(), 1);
    // Not yet expired: nothing to reclaim.
    assert!(matches!(b.try_get().await, Err(TryGetError::Empty)));
    sleep(Duration::from_millis(400)).await;
    let second = b.get().await.unwrap();
    assert_eq!((second.id(), second.attempt()), (first.id(), 2));
    assert!(matches!(
        first.keep_alive().await,
        Err(adapter_redis::KeepAliveError::Stale)
    ));
    match first.succeed().await {
        Err(ResolveError::Stale(item)) => assert_eq!(item, b"job"),
        other => panic!("expected Stale, got {other:?}"),
    }
    let status = a.status().await.unwrap();
    assert_eq!((status.ledger.succeeded, status.ledger.in_flight), (0, 1));
    assert_eq!((status.stale, status.redelivered), (1, 1));
    second.reject().await.unwrap();
    let ledger = a.ledger().await.unwrap();
    assert_eq!(
        (ledger.succeeded, ledger.rejected, ledger.in_flight),
        (0, 1, 0)
    );
    assert!(ledger.is_balanced());
}

async fn keep_alive_holds_the_lease(_rt: Rt) {
    let server = server!();
    let a = open(&server, "long", redeliver(3)).await;
    let b = open(&server, "long", redeliver(3)).await;
    a.try_put(vec![1]).await.unwrap();
    let job = a.get().await.unwrap();
    for _ in 0..5 {
        sleep(Duration::from_millis(120)).await;
        job.keep_alive().await.unwrap();
    }
    // 600 ms held, twice the lease: never reclaimed.
    assert!(matches!(b.try_get().await, Err(TryGetError::Empty)));
    assert_eq!(job.attempt(), 1);
    job.succeed().await.unwrap();
    assert_eq!(b.status().await.unwrap().redelivered, 0);
}

async fn dropped_delivery_is_redelivered(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "drop", redeliver(2)).await;
    queue.try_put(vec![7]).await.unwrap();
    drop(queue.get().await.unwrap());
    queue.maintain_once().await.unwrap();
    let again = queue.get().await.unwrap();
    assert_eq!((again.id().get(), again.attempt()), (0, 2));
    drop(again);
    queue.maintain_once().await.unwrap();
    // Past max_attempts: dead-lettered, counted abandoned, the item kept.
    assert!(matches!(queue.try_get().await, Err(TryGetError::Empty)));
    let status = queue.status().await.unwrap();
    assert_eq!((status.ledger.abandoned, status.dead_lettered), (1, 1));
    assert!(status.ledger.is_balanced());
    let dead = queue.dead_letters(None, 10).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(
        (dead[0].job.get(), dead[0].attempt, dead[0].bytes.clone()),
        (0, 2, vec![7])
    );
    assert!(
        dead[0].reason.starts_with("dead letter"),
        "{}",
        dead[0].reason
    );
}

async fn dropped_delivery_is_abandoned(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "drop", options()).await;
    queue.try_put(vec![7]).await.unwrap();
    drop(queue.get().await.unwrap());
    queue.maintain_once().await.unwrap();
    let ledger = queue.ledger().await.unwrap();
    assert_eq!((ledger.abandoned, ledger.in_flight), (1, 0));
    let dead = queue.dead_letters(None, 10).await.unwrap();
    assert_eq!(dead[0].reason, "abandoned: dropped unresolved");
}

async fn join_until_reports_the_ledger(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "join", options()).await;
    queue.try_put(vec![1]).await.unwrap();
    match queue.join_until(after(Duration::from_millis(100))).await {
        Err(JoinError::TimedOut(ledger)) => {
            assert_eq!((ledger.buffered, ledger.unfinished()), (1, 1))
        }
        other => panic!("expected TimedOut, got {other:?}"),
    }
    let joiner = queue.clone();
    let join = joiner.join();
    let work = async {
        sleep(Duration::from_millis(80)).await;
        queue.get().await.unwrap().succeed().await.unwrap();
    };
    let (ledger, ()) = futures_lite::future::zip(join, work).await;
    assert_eq!(ledger.unwrap().succeeded, 1);
}

/// Issue point 7: bad names and options get clear errors before anything is sent.
async fn bad_names_and_options(_rt: Rt) {
    let server = server!();
    for name in ["", "a{b}", "two words", "tab\t", "ü"] {
        match Queue::open(server.client(), name, Bytes, options()).await {
            Err(OpenError::BadName { why, .. }) => assert!(!why.is_empty()),
            other => panic!("{name:?}: expected BadName, got {other:?}"),
        }
    }
    let bad = [
        options().bounded(0),
        options().lease(Duration::from_millis(1)),
        options().redelivery(Redelivery::Redeliver { max_attempts: 0 }),
        options().max_item_bytes(0),
    ];
    for options in bad {
        assert!(matches!(
            Queue::open(server.client(), "ok", Bytes, options).await,
            Err(OpenError::BadOption(_))
        ));
    }
    // Settings are fixed at creation.
    open(&server, "fixed", options().bounded(5)).await;
    match Queue::open(server.client(), "fixed", Bytes, options().bounded(6)).await {
        Err(error @ OpenError::Mismatch { .. }) => assert_eq!(
            error.to_string(),
            "the queue exists with cap = 5, not 6; settings are fixed at creation"
        ),
        other => panic!("expected Mismatch, got {other:?}"),
    }
    // Nothing was created for the refused names.
    let mut con = server.client().get_connection().unwrap();
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut con).unwrap();
    assert!(
        keys.iter().all(|key| key.starts_with("{fixed}:")),
        "{keys:?}"
    );
}

/// Issue point 7: an item larger than allowed, or one the codec refuses.
async fn oversized_and_unencodable_items(_rt: Rt) {
    let server = server!();
    let queue = open(&server, "sizes", options().max_item_bytes(16)).await;
    match queue.try_put(vec![0; 17]).await {
        Err(PutError::TooLarge { item, size, limit }) => {
            assert_eq!((item.len(), size, limit), (17, 17, 16));
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
    queue.try_put(vec![0; 16]).await.unwrap();

    let json = Queue::open(
        server.client(),
        "json",
        adapter_redis::Json::<std::collections::HashMap<(u8, u8), u8>>::new(),
        options(),
    )
    .await
    .unwrap();
    let map = std::collections::HashMap::from([((1, 2), 3)]);
    match json.try_put(map).await {
        Err(PutError::Encode { item, error }) => {
            assert_eq!(item.len(), 1);
            assert!(error.message().starts_with("json: "), "{error}");
        }
        other => panic!("expected Encode, got {other:?}"),
    }
    assert_eq!(queue.ledger().await.unwrap().accepted, 1);
    assert_eq!(json.ledger().await.unwrap().accepted, 0);
}

/// Issue point 7: bytes that do not decode are dead-lettered with their bytes, and the
/// getter moves on.
async fn undecodable_entries_are_dead_lettered(_rt: Rt) {
    let server = server!();
    let raw = open(&server, "mixed", options()).await;
    let typed = Queue::open(
        server.client(),
        "mixed",
        adapter_redis::Json::<u32>::new(),
        options(),
    )
    .await
    .unwrap();
    raw.try_put(b"not json".to_vec()).await.unwrap();
    typed.try_put(5).await.unwrap();
    let job = typed.get().await.unwrap();
    assert_eq!((job.id().get(), *job), (1, 5));
    job.succeed().await.unwrap();
    let dead = typed.dead_letters(None, 10).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(
        (dead[0].job.get(), dead[0].bytes.as_slice()),
        (0, &b"not json"[..])
    );
    assert!(
        dead[0].reason.starts_with("undecodable: json: "),
        "{}",
        dead[0].reason
    );
    let ledger = typed.ledger().await.unwrap();
    assert_eq!((ledger.abandoned, ledger.succeeded), (1, 1));
    assert!(ledger.is_balanced());
}

/// Issue point 7: no server at start.
async fn server_down_at_start(_rt: Rt) {
    let server = server!();
    let client = redis::Client::open(format!(
        "redis+unix://{}",
        server.dir.join("nobody.sock").display()
    ))
    .unwrap();
    match Queue::open(client, "jobs", Bytes, options()).await {
        Err(OpenError::Redis(error @ Error::Unavailable(_))) => {
            assert!(
                error.to_string().starts_with("redis is unavailable: "),
                "{error}"
            );
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
}

on_both!(
    round_trip,
    bounded_refuses_when_full,
    late_resolve_is_stale,
    keep_alive_holds_the_lease,
    dropped_delivery_is_redelivered,
    dropped_delivery_is_abandoned,
    join_until_reports_the_ledger,
    bad_names_and_options,
    oversized_and_unencodable_items,
    undecodable_entries_are_dead_lettered,
    server_down_at_start,
);

#[allow(dead_code)]
fn ids(range: std::ops::Range<u64>) -> BTreeSet<u64> {
    range.collect()
}
