//! What the server must promise, against real servers started with the settings in
//! question: persistence, eviction, `maxmemory`, restarts, passwords and connections.
//! Each test runs on tokio and on smol.

mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::{after, options, sleep, Rt, Server};
use tally_redis::{
    Bytes, CreateError, Error, LatchOptions, OpenError, PutError, Queue, TrackingLatch,
};

/// Child processes enter here (see `roles`); outside a child this does nothing.
#[test]
fn child_role_entry() {
    common::roles::run_if_child();
}

/// Redis's stock persistence (RDB snapshots, no AOF) rewinds on a restart. `open` refuses
/// it unless the caller opts into best-effort mode; then a restart is reported as
/// `Error::Gone`, and the ids issued since the snapshot are never issued again.
async fn rdb_only_server_is_refused_and_its_rewind_reported(_rt: Rt) {
    let mut server = server!("appendonly" => "no", "save" => "3600 1");
    match Queue::open(server.client(), "jobs", Bytes, options()).await {
        Err(OpenError::Redis(error @ Error::UnsafeServer { .. })) => {
            let text = error.to_string();
            assert!(text.contains("appendonly"), "{text}");
            assert!(text.contains("best_effort"), "{text}");
        }
        other => panic!("expected UnsafeServer, got {other:?}"),
    }
    match TrackingLatch::open(server.client(), "boot", ["a"], LatchOptions::new()).await {
        Err(CreateError::Redis(Error::UnsafeServer { .. })) => {}
        other => panic!("expected UnsafeServer, got {other:?}"),
    }
    let best_effort = options().best_effort(true);
    let queue = Queue::open(server.client(), "jobs", Bytes, best_effort)
        .await
        .unwrap();
    for n in 0..5u8 {
        queue.try_put(vec![n]).await.unwrap();
    }
    let _: () = server.query(&redis::cmd("SAVE"));
    assert_eq!(queue.try_put(vec![5]).await.unwrap().get(), 5);
    server.kill9();
    server.restart();
    // Id 5 went with the restart (the snapshot has ids 0 to 4): the next put must not be
    // given it again.
    let start = Instant::now();
    loop {
        match queue.try_put(vec![6]).await {
            Err(PutError::Failed {
                error: Error::Gone, ..
            }) => break,
            Err(
                PutError::Failed {
                    error: Error::Unavailable(_),
                    ..
                }
                | PutError::Unknown { .. },
            ) if start.elapsed() < Duration::from_secs(5) => {}
            Ok(id) => panic!("id {id} issued after the server rewound"),
            Err(other) => panic!("expected Gone, got {other:?}"),
        }
    }
    assert!(matches!(queue.ledger().await, Err(Error::Gone)));
    match Queue::open(server.client(), "jobs", Bytes, best_effort).await {
        Err(OpenError::Redis(Error::Gone)) => {}
        other => panic!("expected Gone, got {other:?}"),
    }
}

/// Any eviction policy other than `noeviction` can evict the queue's keys: `open`
/// refuses each, unless opted into best-effort mode.
async fn evicting_servers_are_refused(_rt: Rt) {
    for policy in ["volatile-lru", "allkeys-lru", "allkeys-lfu", "volatile-ttl"] {
        let Some(server) = Server::start_with(&[("maxmemory-policy", policy)]) else {
            return;
        };
        match Queue::open(server.client(), "jobs", Bytes, options()).await {
            Err(OpenError::Redis(error @ Error::UnsafeServer { .. })) => {
                let text = error.to_string();
                assert!(text.contains("maxmemory-policy"), "{text}");
                assert!(text.contains(policy), "{text}");
            }
            other => panic!("{policy}: expected UnsafeServer, got {other:?}"),
        }
        let latch = TrackingLatch::open(server.client(), "boot", ["a"], LatchOptions::new()).await;
        assert!(
            matches!(latch, Err(CreateError::Redis(Error::UnsafeServer { .. }))),
            "{policy}: {latch:?}"
        );
        let queue = Queue::open(server.client(), "jobs", Bytes, options().best_effort(true))
            .await
            .unwrap();
        assert_eq!(queue.try_put(vec![1]).await.unwrap().get(), 0);
    }
}

/// In best-effort mode on an evicting server, evictions may take the queue, but an id is
/// never issued twice: a put after one of its keys was evicted is refused as `Gone`.
/// First each key is removed by hand, as an eviction would; then a server evicts at
/// random under its limit.
async fn eviction_never_reissues_ids(_rt: Rt) {
    let server = server!("maxmemory" => "3mb", "maxmemory-policy" => "allkeys-random");
    for key in ["ledger", "meta", "s"] {
        let name = format!("evicted-{key}");
        let queue = Queue::open(server.client(), &name, Bytes, options().best_effort(true))
            .await
            .unwrap();
        for n in 0..3u8 {
            queue.try_put(vec![n]).await.unwrap();
        }
        let _: () = server.query(redis::cmd("DEL").arg(format!("{{{name}}}:{key}")));
        match queue.try_put(vec![3]).await {
            Err(PutError::Failed {
                error: Error::Gone, ..
            }) => {}
            Ok(id) => panic!("{key} evicted: id {id} issued"),
            Err(other) => panic!("{key} evicted: expected Gone, got {other:?}"),
        }
        assert!(matches!(queue.ledger().await, Err(Error::Gone)), "{key}");
    }
    let queue = Queue::open(server.client(), "jobs", Bytes, options().best_effort(true))
        .await
        .unwrap();
    // Other keys for the eviction to choose among, too.
    for n in 0..200 {
        let _: () = server.query(
            redis::cmd("SET")
                .arg(format!("other:{n}"))
                .arg(vec![0u8; 2048]),
        );
    }
    let mut issued = BTreeSet::new();
    for _ in 0..20_000 {
        match queue.try_put(vec![0; 512]).await {
            Ok(id) => assert!(issued.insert(id.get()), "id {id} issued twice"),
            Err(PutError::Failed {
                error: Error::Gone, ..
            }) => return,
            Err(other) => panic!("{other}"),
        }
    }
    panic!("nothing was evicted in 20,000 puts of 512 bytes under 3 MB");
}

/// Under `maxmemory` with `noeviction`, a put past the limit is refused by the server
/// (scripts that add work declare themselves, so the server checks before they run),
/// the memory stays at the limit, and consumers can still drain the queue, which makes
/// room again.
async fn maxmemory_refuses_puts_and_lets_consumers_drain(_rt: Rt) {
    let server = server!("maxmemory" => "2mb");
    let queue = common::open(&server, "full", options()).await;
    let mut accepted = 0u64;
    let refusal = loop {
        match queue.try_put(vec![0; 1024]).await {
            Ok(_) => accepted += 1,
            Err(PutError::Failed { error, item }) => {
                assert_eq!(item.len(), 1024);
                break error;
            }
            Err(other) => panic!("{other}"),
        }
        assert!(
            accepted < 8_000,
            "8,000 puts of 1 KiB accepted under a 2 MB limit"
        );
    };
    assert!(refusal.to_string().contains("OOM"), "{refusal}");
    let used: u64 = server.info_field("used_memory").parse().unwrap();
    assert!(
        used < (2 << 20) + (64 << 10),
        "{used} bytes used under a limit of 2 MiB"
    );
    let ledger = queue.ledger().await.unwrap();
    assert_eq!((ledger.accepted, ledger.buffered), (accepted, accepted));
    // Consumers still drain it, and their resolves free room for puts.
    let mut drained = 0;
    let room = loop {
        let job = queue.get().await.unwrap();
        job.succeed().await.unwrap();
        drained += 1;
        if let Ok(id) = queue.try_put(vec![0; 1024]).await {
            break id;
        }
        assert!(drained < accepted, "no room after every job was drained");
    };
    assert_eq!(room.get(), accepted);
    assert!(queue.ledger().await.unwrap().is_balanced());
}

/// After a server restart, the handle's old connection is dead: the next call dials
/// again and runs, instead of reporting that it may or may not have run.
async fn first_call_after_a_restart_is_not_unknown(_rt: Rt) {
    let mut server = server!();
    let queue = common::open(&server, "jobs", options()).await;
    queue.try_put(vec![0]).await.unwrap();
    let job = queue.get().await.unwrap();
    let latch = TrackingLatch::open(
        server.client(),
        "boot",
        ["a"],
        common::latch_roles::latch_options(),
    )
    .await
    .unwrap();
    latch.snapshot().await.unwrap();
    server.kill9();
    server.restart();
    // Let the client notice the connections closed.
    sleep(Duration::from_millis(100)).await;
    match queue.try_put(vec![1]).await {
        Ok(id) => assert_eq!(id.get(), 1),
        Err(other) => panic!("expected the put to run on a new connection, got {other:?}"),
    }
    match job.succeed().await {
        Ok(item) => assert_eq!(item, vec![0]),
        Err(other) => panic!("{other:?}"),
    }
    latch.snapshot().await.expect("a new connection");
}

/// A server that needs a password says so, in words that name the password.
async fn missing_password_is_said_plainly(_rt: Rt) {
    let server = server!("requirepass" => "secret");
    match Queue::open(server.client(), "jobs", Bytes, options()).await {
        Err(OpenError::Redis(error)) => {
            assert!(error.to_string().contains("password"), "{error}");
            assert!(!error.is_unknown());
        }
        other => panic!("expected an error, got {other:?}"),
    }
    match TrackingLatch::open(server.client(), "boot", ["a"], LatchOptions::new()).await {
        Err(CreateError::Redis(error)) => {
            assert!(error.to_string().contains("password"), "{error}")
        }
        other => panic!("expected an error, got {other:?}"),
    }
    let with = redis::Client::open(format!("{}?pass=secret", server.url())).unwrap();
    let queue = Queue::open(with, "jobs", Bytes, options()).await.unwrap();
    assert_eq!(queue.try_put(vec![1]).await.unwrap().get(), 0);
}

/// Waiters share one blocking connection per handle: 150 joiners and 150 latch waiters
/// on two handles under `maxclients 64` all wait, and all return once the work is done.
async fn waiters_share_one_connection(_rt: Rt) {
    let server = server!("maxclients" => "64");
    let queue = common::open(&server, "jobs", options()).await;
    queue.try_put(vec![1]).await.unwrap();
    let latch = TrackingLatch::open(
        server.client(),
        "boot",
        ["a"],
        common::latch_roles::latch_options(),
    )
    .await
    .unwrap();
    let joins: Vec<_> = (0..150).map(|_| queue.join()).collect();
    let waits: Vec<_> = (0..150).map(|_| latch.wait()).collect();
    let work = async {
        sleep(Duration::from_millis(400)).await;
        let clients: u64 = server.info_field("connected_clients").parse().unwrap();
        queue.get().await.unwrap().succeed().await.unwrap();
        latch.claim("a").await.unwrap().report().await.unwrap();
        clients
    };
    let everything = async {
        let joined = futures_lite::future::zip(
            join_all(joins),
            futures_lite::future::zip(join_all(waits), work),
        )
        .await;
        Some(joined)
    };
    let limit = async {
        after(Duration::from_secs(10)).await;
        None
    };
    let (joined, (waited, clients)) = futures_lite::future::or(everything, limit)
        .await
        .expect("every waiter returns");
    assert!(clients <= 8, "{clients} connections for 300 waiters");
    for ledger in joined {
        assert_eq!(ledger.unwrap().succeeded, 1);
    }
    for wait in waited {
        wait.unwrap();
    }
}

/// A handle that is given an id not above one it saw before it sent the put knows the
/// server went back (here the ledger is set back by hand, as a lost tail of the
/// append-only file would): the put is refused as `Gone`, and the keys are marked rewound
/// for every handle. Many puts in flight at once on one handle, whose replies are read in
/// any order, are not mistaken for that.
async fn ids_seen_going_back_mark_the_queue_rewound(rt: Rt) {
    let server = server!();
    let queue = common::open(&server, "back", options()).await;
    let tasks: Vec<_> = (0..64u8)
        .map(|n| {
            let queue = queue.clone();
            rt.spawn(async move { queue.try_put(vec![n]).await.map(|id| id.get()) })
        })
        .collect();
    let mut ids = BTreeSet::new();
    for task in tasks {
        assert!(ids.insert(
            task.await
                .expect("no rewind seen in puts in flight together")
        ));
    }
    assert_eq!(ids, (0..64).collect());
    let _: () = server.query(
        redis::cmd("HSET")
            .arg("{back}:ledger")
            .arg("accepted")
            .arg(10),
    );
    match queue.try_put(vec![0]).await {
        Err(PutError::Failed {
            error: Error::Gone, ..
        }) => {}
        other => panic!("expected Gone, got {other:?}"),
    }
    let other = Queue::open(server.client(), "back", Bytes, options()).await;
    assert!(
        matches!(other, Err(OpenError::Redis(Error::Gone))),
        "{other:?}"
    );
}

/// Polls every future to completion, concurrently, on the current task.
async fn join_all<F: core::future::Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut futures: Vec<_> = futures.into_iter().map(Box::pin).collect();
    let mut out: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    core::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, slot) in futures.iter_mut().zip(out.iter_mut()) {
            if slot.is_none() {
                match future.as_mut().poll(cx) {
                    core::task::Poll::Ready(value) => *slot = Some(value),
                    core::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            core::task::Poll::Pending
        } else {
            core::task::Poll::Ready(())
        }
    })
    .await;
    out.into_iter().map(Option::unwrap).collect()
}

on_both!(
    rdb_only_server_is_refused_and_its_rewind_reported,
    evicting_servers_are_refused,
    eviction_never_reissues_ids,
    maxmemory_refuses_puts_and_lets_consumers_drain,
    first_call_after_a_restart_is_not_unknown,
    missing_password_is_said_plainly,
    waiters_share_one_connection,
    ids_seen_going_back_mark_the_queue_rewound,
);
