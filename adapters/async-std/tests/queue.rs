//! `QueueExt` under `async_std::task::block_on`: the shared suite in `adapters/suite/queue.rs`.

use core::future::Future;

use tally_async_std::QueueExt;

fn block_on<F: Future>(future: F) -> F::Output {
    async_std::task::block_on(future)
}

#[path = "../../suite/queue.rs"]
mod suite;
