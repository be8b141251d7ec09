//! `RetryExt` on async-std: the shared suite in `adapters/suite/retry.rs`.

use core::future::Future;

use tally_async_std::RetryExt;

fn block_on<F: Future>(future: F) -> F::Output {
    async_std::task::block_on(future)
}

#[path = "../../suite/retry.rs"]
mod suite;
