//! `RetryExt` on smol: the shared suite in `adapters/suite/retry.rs`.

use core::future::Future;

use tally_smol::RetryExt;

fn block_on<F: Future>(future: F) -> F::Output {
    futures_lite::future::block_on(future)
}

#[path = "../../suite/retry.rs"]
mod suite;
