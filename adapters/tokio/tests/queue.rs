//! `QueueExt` under a current-thread tokio runtime: the shared suite in `adapters/suite/queue.rs`.

use core::future::Future;

use tally_tokio::QueueExt;

fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime")
        .block_on(future)
}

#[path = "../../suite/queue.rs"]
mod suite;
