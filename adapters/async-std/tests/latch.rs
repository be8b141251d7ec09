//! `LatchExt` under `async_std::task::block_on`: the shared suite in `adapters/suite/latch.rs`.

use core::future::Future;

use tally_async_std::LatchExt;

fn block_on<F: Future>(future: F) -> F::Output {
    async_std::task::block_on(future)
}

#[path = "../../suite/latch.rs"]
mod suite;
