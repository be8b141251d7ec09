//! `RetryExt` on tokio: the shared suite in `adapters/suite/retry.rs`, and what only a
//! runtime with spawned tasks shows: an aborted task, and a runtime shut down while a
//! retry waits, lose nothing.

use core::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tally_queue::{Queue, TryGetError};
use tally_tokio::RetryExt;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime")
}

fn block_on<F: Future>(future: F) -> F::Output {
    runtime().block_on(future)
}

#[path = "../../suite/retry.rs"]
mod suite;

#[test]
fn a_runtime_shut_down_while_a_retry_waits_loses_nothing() {
    let queue = Arc::new(Queue::unbounded());
    let id = queue.try_put("job").unwrap();
    let runtime = runtime();
    runtime.block_on(async {
        let job = queue.try_get_owned().unwrap();
        tokio::spawn(job.retry_after(Duration::from_secs(3600)).unwrap());
        tokio::task::yield_now().await; // the task starts and waits on the timer
        assert_eq!(queue.try_get().unwrap_err(), TryGetError::Empty);
    });
    drop(runtime); // drops the waiting task
    let again = queue.try_get().unwrap();
    assert_eq!((again.id(), again.attempt()), (id, 2));
    again.succeed();
}

#[test]
fn an_aborted_retry_task_lets_the_item_go_at_once() {
    let queue = Arc::new(Queue::unbounded());
    queue.try_put(9).unwrap();
    block_on(async {
        let job = queue.try_get_owned().unwrap();
        let task = tokio::spawn(job.retry_after(Duration::from_secs(3600)).unwrap());
        tokio::task::yield_now().await;
        task.abort();
        assert!(task.await.unwrap_err().is_cancelled());
        let again = queue.get().await.unwrap();
        assert_eq!(again.attempt(), 2);
        again.succeed();
    });
}

#[tokio::test(start_paused = true)]
async fn spawned_retries_come_back_in_the_order_of_their_delays() {
    let queue = Arc::new(Queue::unbounded());
    for delay in [3_u64, 1, 2] {
        queue.try_put(delay).unwrap();
        let job = queue.try_get_owned().unwrap();
        let delay = Duration::from_secs(*job);
        tokio::spawn(job.retry_after(delay).unwrap());
    }
    let mut order = Vec::new();
    for _ in 0..3 {
        order.push(queue.get().await.unwrap().succeed());
    }
    assert_eq!(order, [1, 2, 3]);
}
